//! The model: every physical parameter the fluxes, boundaries and source terms read, in one
//! `#[repr(C)]` struct that the GPU kernels receive as one argument (`kernels/model.cuh`
//! mirrors it field for field). It is built from the scenario's `physics` section
//! ([`Physics`]), which lives here because the physics owns its parameters; the scenario
//! only embeds it.
//!
//! Adding a parameter: a field in [`Physics`] (with its default and its check in
//! [`Physics::validate`]), the same field in [`Model`] and in `kernels/model.cuh`, in the
//! same place (`tests/gpu_probes.rs` checks that the two structs have the same size), and
//! for a source term its switch in both `has_sources` (the guide's "Adding physics" lists
//! every place).
//!
//! The solver stores each layer's thickness as its deviation from a rest state, the
//! [`Reference`] (see `physics/state.rs`): the model carries that state's layer-1 thickness
//! and interface elevation in the run's precision, so that every kernel can turn stored
//! deviations back into thicknesses.

use super::{Real, Viscosity};
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

/// The scenario's `physics` section: parameters as a user writes them, in float64.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Physics {
    /// Gravity (m/s²).
    #[serde(default = "default_g")]
    pub g: f64,
    /// Density ratio rho1 / rho2 of the upper to the lower layer, in (0, 1).
    #[serde(default = "default_r")]
    pub r: f64,
    /// CFL number of the time step, in (0, 1].
    #[serde(default = "default_gamma")]
    pub gamma: f64,
    /// Linear bottom friction on the lower layer, `d(q2)/dt = -k q2 / h2` (a drag velocity
    /// k in m/s; 0, the default, is frictionless). The worked example of the guide's
    /// "Adding physics".
    #[serde(default, skip_serializing_if = "is_zero")]
    pub linear_friction: f64,
    /// Manning's coefficient n (s/m^(1/3)) of the bottom, acting on the lower layer:
    /// `d(q2)/dt = -g n² |q2| q2 / h2^(7/3)`, semi-implicit (never reverses the flow). 0: none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub manning: f64,
    /// Quadratic interlayer friction coefficient c (dimensionless): the interface stress on
    /// layer 1 is `-rho1 c |u1 - u2| (u1 - u2)`, and its opposite on layer 2. 0: none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub interlayer_friction: f64,
    /// Coriolis parameter: `{"f0": f}` (1/s, f-plane) or `{"latitude": degrees}`
    /// (f = 2 Omega sin(latitude)), optionally a beta-plane `f0 + beta (y - y0)` with
    /// `"beta"` (1/(m s)) and `"y0"` (m, default 0). None: no rotation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coriolis: Option<Coriolis>,
    /// Uniform wind stress on the upper layer divided by its density (m²/s², the kinematic
    /// stress tau / rho1): `d(q1)/dt = wind_stress`. None: no wind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wind_stress: Option<[f64; 2]>,
    /// The rest state the solver stores deviations from (`physics/state.rs`). A scenario
    /// without one gets its initial condition's rest levels when it is loaded (so that water
    /// at rest is stored as exact zeros); `None` here means both levels at 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<Reference>,
    /// Thickness (m) at or below which a layer counts as absent (`physics/wetdry.rs`): its
    /// velocity is zero, its momentum is dropped, and no mass leaves it; edges where a layer
    /// is thinner than ten times this take the dry-aware flux. Default: scaled to the water,
    /// [`scaled_dry_tolerance`] of the deepest water column at the start (1e-5 of it, at most
    /// 1e-3 m as GeoClaw's), resolved once when a run starts and written into its
    /// `scenario.json` and checkpoints (`Physics::resolve_dry_tolerance`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dry_tolerance: Option<f64>,
    /// Horizontal eddy viscosity of both layers (`physics/viscosity.rs`): `{"constant": nu}`
    /// (m²/s) or `{"time_scale": s}` (grid-scale, `nu = d² / time_scale`). None: the scheme's
    /// own dissipation only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub viscosity: Option<Viscosity>,
    /// The largest shear between the layers, as a multiple `κ` of the two-layer system's
    /// hyperbolicity bound: a cell whose `|u1 - u2|²` passes `κ g (1 - r) (h1 + h2)` gets the
    /// interlayer stress that brings it back to it, keeping its momentum (Castro et al. 2011,
    /// `physics/shear.rs`). Stands for the mixing of a shear instability, which the model does
    /// not resolve. 0: none.
    #[serde(default = "default_shear_limit")]
    pub shear_limit: f64,
    /// Order of accuracy in space and time: 2 (the default: limited piecewise-linear
    /// reconstruction, `physics/reconstruct.rs`, with the path-conservative cell-interior
    /// term, and two-stage SSP-RK2 (Heun) in time, with the same CFL number) or 1 (the
    /// paper's scheme). Written always: a checkpoint's or an output's stored scenario keeps
    /// the order it ran at (a checkpoint written before 2 became the default holds it only
    /// where it was 2, and a restart reads it as 1 where it is missing).
    #[serde(default = "default_order")]
    pub order: u32,
}

/// A rest state: a flat free surface and a flat interface, as elevations (m) above the
/// reference level (the level `H` is measured down from). The solver stores layer 1's
/// thickness as `h1 - (surface - interface)` and layer 2's as the interface's elevation
/// above `interface`, `h2 - H - interface`: water at rest at these levels is stored as exact
/// zeros, and the jumps the flux needs are jumps of the stored numbers.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    pub surface: f64,
    pub interface: f64,
}

impl Reference {
    /// Layer 1's thickness at rest, `surface - interface`.
    pub fn h1(&self) -> f64 {
        self.surface - self.interface
    }
}

/// The Coriolis parameter, given directly or by latitude (exactly one of the two), and
/// optionally its northward gradient (a beta-plane).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Coriolis {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub f0: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latitude: Option<f64>,
    /// df/dy (1/(m s)): f = f0 + beta (y - y0) at each cell's centroid. On the Earth
    /// beta = 2 Omega cos(latitude) / R (2.3e-11 at 0°, 1.6e-11 at 45°; R = 6.371e6 m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beta: Option<f64>,
    /// The y (m) where f = f0; default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub y0: Option<f64>,
}

/// `physics.shear_limit` when the scenario gives none: the hyperbolicity bound itself.
pub const DEFAULT_SHEAR_LIMIT: f64 = 1.0;
/// `physics.order` where a scenario does not set it: second order, as every peer code
/// defaults to (issue 43: the default once its gates were met on the strait study).
pub const DEFAULT_ORDER: u32 = 2;
/// The largest `physics.shear_limit`: beyond a few times the bound the system is far from
/// hyperbolic and the limit no longer keeps it so.
pub const MAX_SHEAR_LIMIT: f64 = 10.0;

/// The Earth's rotation rate (rad/s, sidereal day).
pub const EARTH_ROTATION: f64 = 7.2921159e-5;

impl Coriolis {
    /// f in 1/s at y = y0.
    pub fn f(&self) -> f64 {
        match (self.f0, self.latitude) {
            (Some(f), _) => f,
            (None, Some(lat)) => 2.0 * EARTH_ROTATION * lat.to_radians().sin(),
            (None, None) => 0.0,
        }
    }

    /// Whether f varies with y (a beta-plane): each cell then gets its own f.
    pub fn varies(&self) -> bool {
        self.beta.is_some_and(|b| b != 0.0)
    }

    /// f in 1/s at northing `y` (m), in float64: both backends take each cell's f from this
    /// one evaluation, rounded once to the run's precision.
    pub fn f_at(&self, y: f64) -> f64 {
        self.f() + self.beta.unwrap_or(0.0) * (y - self.y0.unwrap_or(0.0))
    }

    /// f at each of `centroids` (a beta-plane's per-cell values, `Layout::set_coriolis`).
    pub fn at_centroids<'a>(&self, centroids: impl IntoIterator<Item = &'a [f64; 2]>) -> Vec<f64> {
        centroids.into_iter().map(|p| self.f_at(p[1])).collect()
    }
}

fn default_g() -> f64 {
    9.81
}
fn default_r() -> f64 {
    0.998
}
fn default_gamma() -> f64 {
    0.9
}
/// The smallest `Physics::dry_tolerance` (m).
pub const MIN_DRY_TOLERANCE: f64 = 1e-12;
/// The largest default dry tolerance (m), GeoClaw's: what a sea deeper than 100 m gets, and
/// what a run gets before its tolerance is resolved (or with no water at the start).
pub const MAX_DEFAULT_DRY_TOLERANCE: f64 = 1e-3;
/// The default dry tolerance as a fraction of the deepest water column.
pub const DRY_TOLERANCE_FRACTION: f64 = 1e-5;

/// The default dry tolerance for water at most `deepest` m deep: `1e-5 deepest`, at most
/// 1e-3 m. Why scaled: a layer thinning to its front (a gravity current's tip, a lock
/// exchange's fan, a flood's edge) moves only once its cells pass the tolerance, so a fixed
/// 1e-3 m holds lab-scale fronts back (at H = 1 m a lock exchange's fronts ran at half their
/// speed) while 1e-5 of the depth lets them run within a few per cent of the hydrostatic
/// solution at any scale; 1e-5 stays 40 times above float32's rounding of a thickness
/// (4 eps H), and the 1e-3 m cap keeps the tolerance of seas deeper than 100 m, and a
/// 1 cm slick on them a layer. No water at all (a domain that a boundary fills): 1e-3 m.
pub fn scaled_dry_tolerance(deepest: f64) -> f64 {
    if deepest.is_finite() && deepest > 0.0 {
        (DRY_TOLERANCE_FRACTION * deepest).clamp(MIN_DRY_TOLERANCE, MAX_DEFAULT_DRY_TOLERANCE)
    } else {
        MAX_DEFAULT_DRY_TOLERANCE
    }
}
fn default_shear_limit() -> f64 {
    DEFAULT_SHEAR_LIMIT
}
fn default_order() -> u32 {
    DEFAULT_ORDER
}
fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

impl Default for Physics {
    fn default() -> Self {
        Physics {
            g: default_g(),
            r: default_r(),
            gamma: default_gamma(),
            linear_friction: 0.0,
            reference: None,
            dry_tolerance: None,
            manning: 0.0,
            interlayer_friction: 0.0,
            coriolis: None,
            wind_stress: None,
            viscosity: None,
            shear_limit: default_shear_limit(),
            order: default_order(),
        }
    }
}

impl Physics {
    /// The dry tolerance in force (m): the scenario's or the resolved one; before it is
    /// resolved (a model built outside a run), [`MAX_DEFAULT_DRY_TOLERANCE`].
    pub fn dry_tolerance(&self) -> f64 {
        self.dry_tolerance.unwrap_or(MAX_DEFAULT_DRY_TOLERANCE)
    }

    /// Fix the default dry tolerance from the deepest water column at the start (m, the
    /// largest `h1 + h2` over every rank's cells): [`scaled_dry_tolerance`]. A tolerance the
    /// scenario gives, or one resolved before (a restart's), stays.
    pub fn resolve_dry_tolerance(&mut self, deepest: f64) {
        self.dry_tolerance.get_or_insert(scaled_dry_tolerance(deepest));
    }

    /// Errors name the field as the scenario spells it (`physics.r`).
    pub fn validate(&self) -> Result<()> {
        if !(self.g.is_finite() && self.g > 0.0) {
            bail!("physics.g: expected a positive gravity, found {}", self.g);
        }
        if !(self.r > 0.0 && self.r < 1.0) {
            bail!("physics.r: expected a density ratio rho1/rho2 strictly between 0 and 1, found {}", self.r);
        }
        if !(self.gamma > 0.0 && self.gamma <= 1.0) {
            bail!("physics.gamma: expected a CFL number in (0, 1], found {}", self.gamma);
        }
        if !(self.linear_friction.is_finite() && self.linear_friction >= 0.0) {
            bail!("physics.linear_friction: expected a drag velocity >= 0 in m/s, found {}", self.linear_friction);
        }
        for (name, x, what) in [
            ("manning", self.manning, "a Manning coefficient >= 0 in s/m^(1/3)"),
            ("interlayer_friction", self.interlayer_friction, "a drag coefficient >= 0"),
        ] {
            if !(x.is_finite() && x >= 0.0) {
                bail!("physics.{name}: expected {what}, found {x}");
            }
        }
        if let Some(c) = &self.coriolis {
            match (c.f0, c.latitude) {
                (Some(_), Some(_)) | (None, None) => {
                    bail!("physics.coriolis: give either f0 (1/s) or latitude (degrees), exactly one")
                }
                (Some(f), None) if !f.is_finite() => {
                    bail!("physics.coriolis.f0: expected a finite number in 1/s, found {f}")
                }
                (None, Some(l)) if !(-90.0..=90.0).contains(&l) => {
                    bail!("physics.coriolis.latitude: expected degrees in [-90, 90], found {l}")
                }
                _ => {}
            }
            for (name, x, what) in [("beta", c.beta, "1/(m s)"), ("y0", c.y0, "m")] {
                if let Some(x) = x.filter(|x| !x.is_finite()) {
                    bail!("physics.coriolis.{name}: expected a finite number in {what}, found {x}");
                }
            }
        }
        if let Some(w) = &self.wind_stress {
            if !(w[0].is_finite() && w[1].is_finite()) {
                bail!("physics.wind_stress: expected a finite kinematic stress [x, y] in m²/s², found {w:?}");
            }
        }
        // At least a picometre: float32's velocities (q / h above the tolerance) then never
        // divide by a subnormal thickness (the GPU's fast division, kernels/reconstruct.cuh).
        if let Some(tol) = self.dry_tolerance {
            if !(tol.is_finite() && (MIN_DRY_TOLERANCE..1.0).contains(&tol)) {
                bail!("physics.dry_tolerance: expected a thickness in m in [{MIN_DRY_TOLERANCE:e}, 1), found {tol}");
            }
        }
        if let Some(v) = &self.viscosity {
            v.validate()?;
        }
        if !(self.shear_limit.is_finite() && (0.0..=MAX_SHEAR_LIMIT).contains(&self.shear_limit)) {
            bail!(
                "physics.shear_limit: expected a multiple of the hyperbolicity bound in [0, {MAX_SHEAR_LIMIT}] \
                 (1 the bound itself, 0 none), found {}",
                self.shear_limit
            );
        }
        if !(self.order == 1 || self.order == 2) {
            bail!(
                "physics.order: expected 2 (second order in space and time, the default) or 1 (first order, the paper's scheme), found {}",
                self.order
            );
        }
        if let Some(r) = &self.reference {
            for (name, x) in [("surface", r.surface), ("interface", r.interface)] {
                if !x.is_finite() {
                    bail!("physics.reference.{name}: expected a finite elevation in m, found {x}");
                }
            }
        }
        Ok(())
    }

    /// The rest state the solver stores deviations from (both levels 0 when none is set).
    pub fn reference(&self) -> Reference {
        self.reference.unwrap_or_default()
    }
}

/// The parameters in the run's precision, as the kernels see them. Built only through
/// [`Model::new`], which validates.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Model<T> {
    /// Gravity.
    pub g: T,
    /// Density ratio rho1/rho2, in (0, 1).
    pub r: T,
    /// Linear bottom friction on the lower layer (m/s); 0 for none.
    pub linear_friction: T,
    /// The reference rest state's free-surface elevation (for ghosts given by elevations).
    pub ref_surface: T,
    /// The reference interface elevation: h2 = (d2 + ref_interface) + H.
    pub ref_interface: T,
    /// Layer 1's thickness in the reference rest state, `Reference::h1` rounded once from
    /// float64: h1 = d1 + ref_h1.
    pub ref_h1: T,
    /// A layer at or below this thickness is absent (`Physics::dry_tolerance`).
    pub dry_tolerance: T,
    /// An edge where any of the four thicknesses is below this takes the dry-aware flux
    /// (`physics/wetdry.rs`): [`THIN_FACTOR`] dry tolerances.
    pub thin: T,
    /// Manning's n of the bottom (lower layer); 0 for none.
    pub manning: T,
    /// Quadratic interlayer friction coefficient; 0 for none.
    pub interlayer_friction: T,
    /// Coriolis parameter f (1/s); 0 for none. On a beta-plane, f at y0.
    pub coriolis_f: T,
    /// 1 on a beta-plane: the update takes each cell's own f from the layout's per-cell
    /// array (`Layout::coriolis`) instead of `coriolis_f`; 0 otherwise.
    pub coriolis_per_cell: i32,
    /// Kinematic wind stress on the upper layer (m²/s²).
    pub wind_x: T,
    pub wind_y: T,
    /// `shear_limit g (1 - r)` (1/s², rounded once from float64): a cell's `|u1 - u2|²` is
    /// kept at most this times `h1 + h2` (`physics/shear.rs`); 0 for none.
    pub shear_bound: T,
}

/// How many dry tolerances thick the thinnest layer of an edge may be for the edge to take
/// the dry-aware flux. The IR-Roe flux is not positivity-preserving: a layer a few
/// tolerances thick next to a thick one could be emptied below zero in one step.
pub const THIN_FACTOR: f64 = 10.0;

impl<T: Real> Model<T> {
    pub fn new(p: &Physics) -> Result<Self> {
        p.validate()?;
        let rest = p.reference();
        Ok(Model {
            g: T::c(p.g),
            r: T::c(p.r),
            linear_friction: T::c(p.linear_friction),
            ref_surface: T::c(rest.surface),
            ref_interface: T::c(rest.interface),
            ref_h1: T::c(rest.h1()),
            dry_tolerance: T::c(p.dry_tolerance()),
            thin: T::c(THIN_FACTOR * p.dry_tolerance()),
            manning: T::c(p.manning),
            interlayer_friction: T::c(p.interlayer_friction),
            coriolis_f: T::c(p.coriolis.map_or(0.0, |c| c.f())),
            coriolis_per_cell: p.coriolis.is_some_and(|c| c.varies()) as i32,
            wind_x: T::c(p.wind_stress.map_or(0.0, |w| w[0])),
            wind_y: T::c(p.wind_stress.map_or(0.0, |w| w[1])),
            shear_bound: T::c(p.shear_limit * p.g * (1.0 - p.r)),
        })
    }

    /// Whether any cell source term is on: the update then calls [`super::source::source`].
    pub fn has_sources(&self) -> bool {
        self.shear_bound > T::zero() || self.has_sources_besides_shear_limit()
    }

    /// Whether a source term other than the shear limit is on. Without one, the GPU's tiles
    /// may finish cells at order 2 (`solver/cuda/order2.rs`): the shear limit is all that
    /// `source` does then, and the tiles apply it (`kernels/shear.cuh`, `shear_source`).
    pub fn has_sources_besides_shear_limit(&self) -> bool {
        self.linear_friction > T::zero()
            || self.manning > T::zero()
            || self.interlayer_friction > T::zero()
            || self.coriolis_f != T::zero()
            || self.coriolis_per_cell != 0
            || self.wind_x != T::zero()
            || self.wind_y != T::zero()
    }
}
