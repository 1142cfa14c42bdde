//! The two-layer shallow-water physics, and nothing else: parameters, the eigenstructure of
//! the projected 4x4 system and the IR-Roe edge flux (seed 001, section 2.2; numerics.md).
//! `kernels/physics.cuh` mirrors this module line for line; tests compare the two.
//!
//! Layer 1 is the upper, lighter layer; layer 2 the lower, denser one. `H` is the depth of
//! the bottom below a fixed reference (positive down).

pub mod eigen;
pub mod flux;
pub mod real;
pub mod state;

pub use flux::{edge_flux, wall_flux, wall_mirror, EdgeFlux, Side};
pub use real::Real;
pub use state::{is_admissible, CellState};

/// Physical parameters. Built through [`Params::new`], which validates them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params<T> {
    /// Gravity.
    pub g: T,
    /// Density ratio rho1/rho2, in (0, 1).
    pub r: T,
}

impl<T: Real> Params<T> {
    pub fn new(g: f64, r: f64) -> anyhow::Result<Self> {
        if !(g.is_finite() && g > 0.0) {
            anyhow::bail!("physics.g: expected a positive gravity, found {g}");
        }
        if !(r > 0.0 && r < 1.0) {
            anyhow::bail!("physics.r: expected a density ratio rho1/rho2 strictly between 0 and 1, found {r}");
        }
        Ok(Params { g: T::c(g), r: T::c(r) })
    }
}
