//! Cell source terms, applied at the end of each cell's update, after the fluxes: each term
//! integrated over the step `dt` on its own (first-order splitting), semi-implicitly where
//! an explicit step could reverse a velocity. `kernels/source.cuh` mirrors this file.
//!
//! Adding a term: its parameter in `physics/model.rs` (and `kernels/model.cuh`), its lines
//! below and in `kernels/source.cuh`, its condition in [`Model::has_sources`], a test.

use super::flux::Side;
use super::{Model, Real};

/// The state of one cell after the source terms act on it for `dt`. `s.depth` is the
/// bottom's depth below the reference; `s.h1(m)`, `s.h2(m)` are the thicknesses. Today's
/// terms change momenta only: a term that changes a thickness must add its increment to the
/// stored deviation and its low part with `add_compensated`, as the update does for the
/// fluxes (`solver/cpu.rs`), or a small increment may be rounded away.
#[inline(always)]
pub fn source<T: Real>(m: &Model<T>, s: &mut Side<T>, dt: T) {
    if m.linear_friction > T::zero() {
        // Linear bottom friction on the lower layer, d(q2)/dt = -k q2 / h2, implicit in q2:
        // the factor lies in (0, 1], so it slows the layer and never turns it around.
        let f = T::one() / (T::one() + dt * m.linear_friction / s.h2(m));
        s.q2 = [s.q2[0] * f, s.q2[1] * f];
    }
}
