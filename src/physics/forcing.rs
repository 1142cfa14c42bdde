//! Values prescribed over time at open boundaries (and what the boundary table holds at a
//! given time). Evaluated in float64 on the host once per step, at the step's start time:
//! the kernels read the evaluated numbers from the boundary table, so a tide or a time
//! series costs the edge pass nothing, and every backend and rank sees the same numbers.

use super::boundary::{Boundary, BoundaryKind, BOUNDARY_DATA};
use super::Real;

/// One tidal constituent, `amplitude cos(2 pi t / period - phase)` (phase in degrees, the
/// tide tables' convention).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Constituent {
    pub amplitude: f64,
    pub period: f64,
    pub phase: f64,
}

/// A value over time (seconds).
#[derive(Clone, Debug, PartialEq)]
pub enum TimeFunction {
    Constant(f64),
    /// `mean` plus a sum of tidal constituents.
    Tides {
        mean: f64,
        constituents: Vec<Constituent>,
    },
    /// A series `(t, v)` with increasing `t`, interpolated linearly, constant beyond its ends.
    Series {
        t: Vec<f64>,
        v: Vec<f64>,
    },
}

impl TimeFunction {
    pub fn at(&self, time: f64) -> f64 {
        match self {
            TimeFunction::Constant(x) => *x,
            TimeFunction::Tides { mean, constituents } => {
                let two_pi = 2.0 * std::f64::consts::PI;
                // Summed in the order given, so every rank and backend gets the same number.
                constituents
                    .iter()
                    .fold(*mean, |s, c| s + c.amplitude * (two_pi * time / c.period - c.phase.to_radians()).cos())
            }
            TimeFunction::Series { t, v } => {
                let n = t.len();
                if n == 0 {
                    return 0.0;
                }
                if time <= t[0] {
                    return v[0];
                }
                if time >= t[n - 1] {
                    return v[n - 1];
                }
                // The first sample after `time` (t increases strictly).
                let k = t.partition_point(|&s| s <= time);
                let (t0, t1, v0, v1) = (t[k - 1], t[k], v[k - 1], v[k]);
                v0 + (v1 - v0) * ((time - t0) / (t1 - t0))
            }
        }
    }

    pub fn is_constant(&self) -> bool {
        matches!(self, TimeFunction::Constant(_))
    }
}

/// What one entry of the boundary table prescribes, in float64 over time. `values` are the
/// kind's two quantities (an `elevation`: the free surface and the interface elevation; a
/// `discharge`: layer 1's and layer 2's volume flux into the domain, m³/s); `None` leaves
/// that one to the interior (open). The table holds `(value - offset) * scale`: an
/// elevation less the reference level (`offset`; so that an elevation at the reference level
/// is an exact zero in float32, as the stored state is), a discharge times one over the
/// tag's total length (`scale`; so that the table holds m²/s).
#[derive(Clone, Debug, PartialEq)]
pub struct BoundarySpec {
    pub kind: BoundaryKind,
    pub values: [Option<TimeFunction>; 2],
    pub offset: [f64; 2],
    pub scale: f64,
}

impl BoundarySpec {
    pub fn wall() -> BoundarySpec {
        BoundarySpec { kind: BoundaryKind::Wall, values: [None, None], offset: [0.0; 2], scale: 1.0 }
    }

    /// Whether the table entry changes with time (it is then evaluated every step).
    pub fn time_dependent(&self) -> bool {
        self.values.iter().flatten().any(|f| !f.is_constant())
    }

    /// The table entry at time `t`: `data[0..2]` the two values (as above), `data[2..4]` 1 where
    /// the value is given and 0 where it is left open.
    pub fn entry<T: Real>(&self, t: f64) -> Boundary<T> {
        let mut data = [T::zero(); BOUNDARY_DATA];
        for (k, v) in self.values.iter().enumerate() {
            if let Some(f) = v {
                data[k] = T::c((f.at(t) - self.offset[k]) * self.scale);
                data[2 + k] = T::one();
            }
        }
        Boundary { kind: self.kind as i32, reserved: 0, data }
    }
}
