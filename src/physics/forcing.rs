//! Values prescribed over time at open boundaries: constants, tides and time series.
//! Evaluated in float64 on the host once per step, at the step's start time, into the
//! boundary table (`BoundarySpec::entry`, `boundary.rs`): the kernels read the evaluated
//! numbers, so a tide or a time series costs the edge pass nothing, and every backend and
//! rank sees the same numbers.

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
