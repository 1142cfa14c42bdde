//! One cell's state as everything outside the solver sees it (scenarios, output, gauges,
//! blow-up reports), with the one admissibility rule and the conversions to six numbers,
//! velocities and elevations; and the same state as the solver stores it ([`StoredCell`]),
//! with the conversions between the two. `kernels/state.cuh` mirrors [`is_admissible`].
//!
//! Layer 1 is the upper, lighter layer; `depth` is H, the depth of the bottom below the
//! reference level (positive down), so elevations are measured upwards from that level.
//!
//! **Why the solver stores deviations.** In float32 a thickness of 800 m has an ulp of
//! 6e-5 m: water at rest stored as thicknesses is not exactly flat, and an update smaller
//! than half an ulp is lost (biased where the thickness sits on a power of two). The solver
//! therefore stores, per layer, the deviation from a rest state ([`Reference`]):
//! `d1 = h1 - (surface - interface)` and `d2 = h2 - (H + interface)` (the interface's
//! elevation above the reference interface). Water at rest at the reference levels is
//! stored as exact zeros, and the flux takes its jumps from the stored numbers, so at rest
//! every jump is exactly zero. Each deviation is also kept as a sum of two floats, a high
//! part (what the edge pass reads) and a low part (what the high part could not hold, read
//! and written only by the update), so that no update is ever rounded away: the mass of a
//! layer changes only by the rounding of the fluxes themselves, at the size of the motion.

use super::model::Reference;
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

    /// Velocity of layer 1 and layer 2; zero where a layer is absent (no thickness: the
    /// solver drops the momentum of a layer at or below the dry tolerance).
    pub fn velocities(&self) -> ([f64; 2], [f64; 2]) {
        let v = |q: [f64; 2], h: f64| if h > 0.0 { [q[0] / h, q[1] / h] } else { [0.0; 2] };
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

    /// The one admissibility rule (see [`is_admissible`]), with the slack of a state read
    /// back from a run ([`READ_BACK_SLACK`]).
    pub fn is_admissible(&self) -> bool {
        is_admissible(self.h1, self.q1[0], self.q1[1], self.h2, self.q2[0], self.q2[1], READ_BACK_SLACK)
    }
}

/// A cell as the solver stores it, in float64 (exact for either run precision, whose
/// values it holds): per layer the deviation `d` of the thickness from the [`Reference`]
/// rest state (`d1 = h1 - (surface - interface)`, `d2 = h2 - (H + interface)`) as a high
/// part and a low part (`lo`), and the momenta. The thickness deviation is `d + lo`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StoredCell {
    pub d1: f64,
    pub q1: [f64; 2],
    pub d2: f64,
    pub q2: [f64; 2],
    /// The low parts of `d1` and `d2`.
    pub lo: [f64; 2],
}

impl StoredCell {
    /// `state` over a bottom at depth `depth`, stored relative to `rest`, the deviations in
    /// float64 with no low part yet (the solver's layout splits them). The thicknesses at
    /// rest are subtracted in the form the initial conditions build them (`surface -
    /// interface`, `H + interface`), so water at rest at `rest`'s levels gives exact zeros.
    ///
    /// An absent layer is stored so that its thickness is exactly 0 (`d1 = -(surface -
    /// interface)`; `d2 = -(H + interface)`). Over an absent lower layer, layer 1's deviation
    /// is taken from its surface elevation, `d1 = (h1 - H - surface) - d2`: at rest at the
    /// reference surface it is then exactly `-d2`, so the surface jump `Δd1 + Δd2` against
    /// wet cells at rest is exactly zero (`physics/wetdry.rs`).
    pub fn from_state(s: &CellState, depth: f64, rest: &Reference) -> StoredCell {
        let d2 = s.h2 - (depth + rest.interface);
        let d1 = if s.h2 == 0.0 && s.h1 > 0.0 { ((s.h1 - depth) - rest.surface) - d2 } else { s.h1 - rest.h1() };
        StoredCell { d1, q1: s.q1, d2, q2: s.q2, lo: [0.0; 2] }
    }

    /// The thicknesses and momenta (float64, to the precision of the stored numbers: the
    /// deviations are added to the rest thicknesses once, in float64).
    pub fn state(&self, depth: f64, rest: &Reference) -> CellState {
        CellState {
            h1: rest.h1() + (self.d1 + self.lo[0]),
            q1: self.q1,
            h2: (depth + rest.interface) + (self.d2 + self.lo[1]),
            q2: self.q2,
        }
    }

    /// [`StoredCell::state`] as a run whose floats have machine epsilon `eps` sees it: a
    /// lower layer no thicker than the rounding of an absent one (`4 eps (|H| + |interface|)`,
    /// as `wetdry::rounding`, below which the flux counts it as absent) reads as exactly 0.
    /// In float32 an absent layer's stored zero came back as ±3.6e-15 m (its deviation is
    /// held as two floats that add up to the rest thickness only to about 2^-48 of it), and
    /// was written so to the frames, gauges and NetCDF files (issue 46).
    pub fn state_in(&self, depth: f64, rest: &Reference, eps: f64) -> CellState {
        let mut s = self.state(depth, rest);
        if s.h2.abs() <= 4.0 * eps * (depth.abs() + rest.interface.abs()) {
            s.h2 = 0.0;
        }
        s
    }

    /// The solver's two records `(d1, q1x, q1y, ·)` and `(d2, q2x, q2y, ·)` and the low parts
    /// `(d1_lo, d2_lo)` (host and GPU alike).
    pub fn from_records<T: Real>(a: &[T], b: &[T], lo: &[T]) -> StoredCell {
        StoredCell {
            d1: a[0].f64(),
            q1: [a[1].f64(), a[2].f64()],
            d2: b[0].f64(),
            q2: [b[1].f64(), b[2].f64()],
            lo: [lo[0].f64(), lo[1].f64()],
        }
    }

    /// `(d1, q1x, q1y, d2, q2x, q2y, d1_lo, d2_lo)`: the order of checkpoints.
    pub fn to_array(&self) -> [f64; 8] {
        [self.d1, self.q1[0], self.q1[1], self.d2, self.q2[0], self.q2[1], self.lo[0], self.lo[1]]
    }

    pub fn from_array(x: [f64; 8]) -> StoredCell {
        StoredCell { d1: x[0], q1: [x[1], x[2]], d2: x[3], q2: [x[4], x[5]], lo: [x[6], x[7]] }
    }
}

/// Whether a state can be stepped: every value finite and neither thickness below `-slack`.
/// A layer may be absent (thickness 0, `physics/wetdry.rs`); the update passes the dry
/// tolerance as `slack`, and sets a thickness that rounding left negative within it to
/// exactly 0. A state that is not admissible stops the run with a blow-up report. Written
/// once for every precision, and mirrored by `is_admissible` in `kernels/state.cuh`.
#[inline(always)]
pub fn is_admissible<T: Real>(h1: T, q1x: T, q1y: T, h2: T, q2x: T, q2y: T, slack: T) -> bool {
    h1 >= -slack && h2 >= -slack && [h1, q1x, q1y, h2, q2x, q2y].iter().all(|x| x.is_finite())
}

/// The slack of [`CellState::is_admissible`]: an absent layer read back in float64 is its
/// stored zero plus the rounding of the depth in the run's precision.
pub const READ_BACK_SLACK: f64 = 1e-6;
