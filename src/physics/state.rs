//! One cell's state as everything outside the solver sees it (scenarios, output, gauges,
//! checkpoints, blow-up reports), with the one admissibility rule and the conversions to
//! six numbers, velocities and elevations. `kernels/state.cuh` mirrors [`is_admissible`].
//!
//! Layer 1 is the upper, lighter layer; `depth` is H, the depth of the bottom below the
//! reference level (positive down), so elevations are measured upwards from that level.

use super::Real;

/// A cell's state in float64: thickness and momentum (thickness times velocity) per layer.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CellState {
    pub h1: f64,
    pub q1: [f64; 2],
    pub h2: f64,
    pub q2: [f64; 2],
}

/// Names of the six numbers of [`CellState::to_array`], in order.
pub const STATE_NAMES: [&str; 6] = ["h1", "q1x", "q1y", "h2", "q2x", "q2y"];

impl CellState {
    /// Both layers at rest with these thicknesses.
    pub fn at_rest(h1: f64, h2: f64) -> CellState {
        CellState { h1, q1: [0.0; 2], h2, q2: [0.0; 2] }
    }

    /// Thicknesses and velocities (not momenta).
    pub fn with_velocities(h1: f64, u1: [f64; 2], h2: f64, u2: [f64; 2]) -> CellState {
        CellState { h1, q1: [h1 * u1[0], h1 * u1[1]], h2, q2: [h2 * u2[0], h2 * u2[1]] }
    }

    /// `(h1, q1x, q1y, h2, q2x, q2y)`: the order of checkpoints, checksums and the solver's
    /// two float4 records.
    pub fn to_array(&self) -> [f64; 6] {
        [self.h1, self.q1[0], self.q1[1], self.h2, self.q2[0], self.q2[1]]
    }

    pub fn from_array(x: [f64; 6]) -> CellState {
        CellState { h1: x[0], q1: [x[1], x[2]], h2: x[3], q2: [x[4], x[5]] }
    }

    /// The state from the solver's two records `(h1, q1x, q1y, ·)` and `(h2, q2x, q2y, ·)`
    /// (host and GPU alike).
    pub fn from_records<T: Real>(a: &[T], b: &[T]) -> CellState {
        CellState { h1: a[0].f64(), q1: [a[1].f64(), a[2].f64()], h2: b[0].f64(), q2: [b[1].f64(), b[2].f64()] }
    }

    /// Velocity of layer 1 and layer 2.
    pub fn velocities(&self) -> ([f64; 2], [f64; 2]) {
        let v = |q: [f64; 2], h: f64| [q[0] / h, q[1] / h];
        (v(self.q1, self.h1), v(self.q2, self.h2))
    }

    /// Elevation of the interface, `h2 - H`, over a bottom at depth `depth`.
    pub fn interface_elevation(&self, depth: f64) -> f64 {
        self.h2 - depth
    }

    /// Elevation of the free surface, `h1 + h2 - H`.
    pub fn surface_elevation(&self, depth: f64) -> f64 {
        self.h1 + self.h2 - depth
    }

    /// The one admissibility rule (see [`is_admissible`]).
    pub fn is_admissible(&self) -> bool {
        is_admissible(self.h1, self.q1[0], self.q1[1], self.h2, self.q2[0], self.q2[1])
    }
}

/// Whether a state can be stepped: both thicknesses positive and every value finite. A
/// state that is not stops the run with a blow-up report. Written once for every precision,
/// and mirrored by `is_admissible` in `kernels/state.cuh`.
#[inline(always)]
pub fn is_admissible<T: Real>(h1: T, q1x: T, q1y: T, h2: T, q2x: T, q2y: T) -> bool {
    h1 > T::zero() && h2 > T::zero() && [h1, q1x, q1y, h2, q2x, q2y].iter().all(|x| x.is_finite())
}
