//! The interlayer stress that keeps the two-layer system hyperbolic (`physics.shear_limit`):
//! Castro, Fernández-Nieto, González-Vida and Parés, "Numerical treatment of the loss of
//! hyperbolicity of the two-layer shallow-water system", J. Sci. Comput. 48 (2011).
//! `kernels/shear.cuh` mirrors this file.
//!
//! **Why.** The two-layer equations lose hyperbolicity when the shear between the layers is
//! large: to first order in `1 - r` the internal eigenvalues are
//! `U ± √(g' h1 h2 / (h1 + h2) (1 - |u1 - u2|² / (g' (h1 + h2))))`, complex once
//! `|u1 - u2|² > g' (h1 + h2)`, `g' = (1 - r) g`. Real flows mix there (Kelvin-Helmholtz
//! billows), which takes the shear's energy; the model has no such mixing, so its shear goes
//! on growing. On the strait study (`meshes/scenarios/strait_exchange.json`) the dense water
//! spilling down the sill thinned to a few metres under 460 m of Atlantic water at 9 to 12 m/s,
//! beyond what the density difference can give it (`√(2 g' 800 m)` = 5.6 m/s), with 0.3% (order 1)
//! and 1.4% (order 2) of the edge evaluations in the hyperbolicity fallback, and order 2's
//! largest speed 1.3 times order 1's.
//!
//! **What.** Castro et al.'s predictor-corrector: after the scheme's update (the predictor), a
//! cell whose shear is beyond the bound gets the interlayer stress that brings it back to the
//! bound, `|u1 - u2|² = κ g (1 - r) (h1 + h2)` (`κ` = `shear_limit`, `Model::shear_bound` =
//! `κ g (1 - r)`). Their semi-implicit linear friction with the coefficient chosen to reach the
//! bound is this scaling of the shear. The change is shared between the layers as the
//! interlayer friction's (`physics/source.rs`): the total momentum `r q1 + q2` is unchanged,
//! each velocity moves towards the column's mean, and the kinetic energy falls. A cell within
//! the bound is not touched (so water at rest and every flow inside the hyperbolic region
//! keep their bits); a cell where a layer is at or below the dry tolerance neither.

use super::edge::Side;
use super::{Model, Real};

/// Bring the shear of a cell with both layers present (thicknesses `h1`, `h2` above the dry
/// tolerance) back within `m.shear_bound (h1 + h2)`, keeping `r q1 + q2`.
///
/// In products only, so that a cell within the bound (nearly all of them) costs no division:
/// with `e = q1 h2 - q2 h1 = h1 h2 (u1 - u2)`, the shear is past the bound where
/// `|e|² > bound (h1 h2)²`. Then `change = h1 h2 √(bound / |e|²) - 1` scales it back, and
/// `dq1 = w change (u1 - u2) = change e / (r h1 + h2)`, `dq2 = -r dq1` with
/// `w = h1 h2 / (r h1 + h2)` change the shear by `change (u1 - u2)`.
#[inline(always)]
pub fn limit_shear<T: Real>(m: &Model<T>, s: &mut Side<T>, h1: T, h2: T) {
    let e = [s.q1[0] * h2 - s.q2[0] * h1, s.q1[1] * h2 - s.q2[1] * h1];
    let e2 = e[0] * e[0] + e[1] * e[1];
    let hh = h1 * h2;
    let bound = m.shear_bound * (h1 + h2);
    if e2 > bound * (hh * hh) {
        let change = hh * (bound / e2).sqrt() - T::one();
        let k = change / (m.r * h1 + h2);
        let rk = m.r * k;
        s.q1 = [s.q1[0] + k * e[0], s.q1[1] + k * e[1]];
        s.q2 = [s.q2[0] - rk * e[0], s.q2[1] - rk * e[1]];
    }
}
