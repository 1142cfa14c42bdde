//! Horizontal eddy viscosity: a Laplacian stress on each layer's velocity, a term
//! `div(nu h grad u)` in `d(q)/dt`, the closure ocean models carry for the eddies their meshes
//! cannot resolve. Without it, second order on a coarse mesh of a strait (cells of 2.6 to 5.4 km)
//! lets grid-scale eddies in the jets grow until the free surface leaves its bounds
//! (docs/src/validation.md, on the strait study's coarse meshes); first order's upwinding hides
//! them with numerical viscosity of the same size.
//!
//! Discretised edge by edge inside the edge pass, as a two-point flux between the two cells'
//! mean velocities: across an interior edge of length `L` whose cells' centroids lie `d`
//! apart along its normal, cell i receives `k h_e (u_j - u_i)` per unit time and cell j its
//! opposite, with `k = nu L / d` the edge's coupling (m²/s, from the global geometry in
//! float64, [`Viscosity::coupling`]) and `h_e` the thinner of the two cells' layer thickness.
//! So:
//! - momentum is conserved edge by edge (the same number added to one cell and taken from the
//!   other), whatever the partition;
//! - water at rest stays at rest bit for bit (every velocity difference is an exact zero);
//! - a layer at or below the dry tolerance on either side takes and gives nothing, so no
//!   momentum is pushed into a film or onto dry land;
//! - walls and open ends take no viscous stress (free slip).
//!
//! The two-point flux is the Laplacian exactly where the line between the centroids crosses the
//! edge at a right angle (equilateral cells, and nearly so on Gmsh's meshes); elsewhere it is a
//! dissipation of the same size. Its explicit bound, `dt <= area / (sum of k)` by Gershgorin,
//! joins the CFL's through the edge's speed word: `2 k` is added to `L s`, so that the step
//! `2 gamma area / Z` keeps both (`add_viscosity`).
//!
//! `kernels/viscosity.cuh` mirrors [`add_viscosity`].

use super::wetdry::velocity;
use super::{Model, Real, Side};
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

/// The scenario's `physics.viscosity`: exactly one of a constant eddy viscosity or a
/// grid-scale one.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Viscosity {
    /// A constant eddy viscosity `nu` (m²/s) on both layers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constant: Option<f64>,
    /// A grid-scale eddy viscosity: `nu = d² / time_scale` on each edge (`d` the distance
    /// between the centroids across it, m; the time scale in s). A velocity difference between
    /// neighbouring cells decays over about a quarter of the time scale, whatever the mesh's
    /// size, and a wave of length `lambda` at the rate `(2 pi d / lambda)² / time_scale`: the
    /// viscosity vanishes as the mesh is refined. Ocean models' grid-scale Laplacian viscosity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_scale: Option<f64>,
}

impl Viscosity {
    /// Errors name the field as the scenario spells it.
    pub fn validate(&self) -> Result<()> {
        match (self.constant, self.time_scale) {
            (Some(_), Some(_)) | (None, None) => {
                bail!("physics.viscosity: give either constant (m²/s) or time_scale (s), exactly one")
            }
            (Some(nu), None) if !(nu.is_finite() && nu >= 0.0) => {
                bail!("physics.viscosity.constant: expected an eddy viscosity >= 0 in m²/s, found {nu}")
            }
            (None, Some(t)) if !(t.is_finite() && t > 0.0) => {
                bail!("physics.viscosity.time_scale: expected a time scale > 0 in s, found {t}")
            }
            _ => Ok(()),
        }
    }

    /// Whether it does anything (a constant of 0 does not).
    pub fn is_active(&self) -> bool {
        self.constant != Some(0.0)
    }

    /// An interior edge's coupling `k = nu L / d` (m²/s) from its length `length` and the
    /// distance `distance` between its cells' centroids along its normal (both m, float64).
    pub fn coupling(&self, length: f64, distance: f64) -> f64 {
        match (self.constant, self.time_scale) {
            (Some(nu), _) => nu * length / distance,
            (None, Some(t)) => length * distance / t,
            (None, None) => 0.0,
        }
    }
}

/// What one layer's viscous stress moves from cell j to cell i across an edge of coupling `k`,
/// per unit time: `k h_e (u_j - u_i)` with `h_e = min(h_i, h_j)`, zero where `h_e` is at or
/// below the dry tolerance.
#[inline(always)]
fn layer_transfer<T: Real>(qi: [T; 2], hi: T, qj: [T; 2], hj: T, k: T, tol: T) -> [T; 2] {
    // As rt_min in the kernels (a NaN on i's side gives j's).
    let he = if hi < hj { hi } else { hj };
    if he > tol {
        let (ui, uj) = (velocity(qi, hi, tol), velocity(qj, hj, tol));
        let kh = k * he;
        [kh * (uj[0] - ui[0]), kh * (uj[1] - ui[1])]
    } else {
        [T::zero(), T::zero()]
    }
}

/// Adds the viscous stress across an interior edge of coupling `k` (m²/s) between cells of
/// mean states `wi` and `wj` to the edge's accumulator words, as the edge pass writes them:
/// `words[0]`, `words[1]` cell i's layer-1 and layer-2 words (outflows, `(M1, M2, M3, Z)`),
/// `words[2]`, `words[3]` cell j's. The momentum lanes get the transfer (taken from i's outflow,
/// added to j's), and both Z lanes `2 k`, the explicit bound (module comment). An edge the
/// edge pass writes as quiet (no water on either side, `kernels/solver.cu`) must not come here.
#[inline(always)]
pub fn add_viscosity<T: Real>(m: &Model<T>, wi: &Side<T>, wj: &Side<T>, k: T, words: &mut [[T; 4]; 4]) {
    let tol = m.dry_tolerance;
    let t1 = layer_transfer(wi.q1, wi.h1(m), wj.q1, wj.h1(m), k, tol);
    let t2 = layer_transfer(wi.q2, wi.h2(m), wj.q2, wj.h2(m), k, tol);
    for x in 0..2 {
        words[0][1 + x] = words[0][1 + x] - t1[x];
        words[1][1 + x] = words[1][1 + x] - t2[x];
        words[2][1 + x] = words[2][1 + x] + t1[x];
        words[3][1 + x] = words[3][1 + x] + t2[x];
    }
    let z = T::c(2.0) * k;
    words[0][3] = words[0][3] + z;
    words[2][3] = words[2][3] + z;
}
