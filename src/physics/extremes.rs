//! Per-cell extremes over a run (the max maps of `output.max_maps`: GeoClaw's fgmax,
//! ANUGA's maximum quantities): the highest free surface, the highest and lowest interface,
//! the fastest flow of each layer, and the arrival time of a disturbance. The backends fold
//! every step's state into them on the device that runs the step; `kernels/extremes.cuh`
//! mirrors [`fold`] operation by operation.
//!
//! Everything is computed and kept in float64 whatever the run's precision, and the
//! elevations are kept as thicknesses (`h1 + h2`, `h2`): the depth is subtracted once when
//! the maps are written. Rounding is monotonic, so the map then equals, bit for bit, the
//! maximum of the values the frames hold (`h1 + h2 - H` computed in float64 and rounded to
//! the output's float type), had every step been written.

use super::Real;

/// Numbers per cell; see the `E_*` indices.
pub const WIDTH: usize = 8;
/// Highest `h1 + h2` (free surface + H).
pub const E_SURFACE_MAX: usize = 0;
/// Highest and lowest `h2` (interface + H).
pub const E_INTERFACE_MAX: usize = 1;
pub const E_INTERFACE_MIN: usize = 2;
/// Highest speed `|q / h|` of layer 1 and layer 2.
pub const E_SPEED1_MAX: usize = 3;
pub const E_SPEED2_MAX: usize = 4;
/// First time the followed quantity moved more than the threshold from its initial value
/// (`NOT_ARRIVED` until then).
pub const E_ARRIVAL: usize = 5;
/// The followed quantity at the start (`h2`, or `h1 + h2` when following the surface).
pub const E_REFERENCE: usize = 6;
pub const NOT_ARRIVED: f64 = -1.0;

/// What the arrival time follows, and its threshold (m).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Arrival {
    pub threshold: f64,
    /// Follow the free surface (else the interface).
    pub surface: bool,
}

/// The extremes of a cell at the start of a run, from its state.
pub fn start<T: Real>(h1: T, q1x: T, q1y: T, h2: T, q2x: T, q2y: T, a: Arrival) -> [f64; WIDTH] {
    let (h1, h2) = (h1.f64(), h2.f64());
    let s = h1 + h2;
    let mut e = [0.0; WIDTH];
    e[E_SURFACE_MAX] = s;
    e[E_INTERFACE_MAX] = h2;
    e[E_INTERFACE_MIN] = h2;
    e[E_SPEED1_MAX] = speed(q1x.f64(), q1y.f64(), h1);
    e[E_SPEED2_MAX] = speed(q2x.f64(), q2y.f64(), h2);
    e[E_ARRIVAL] = NOT_ARRIVED;
    e[E_REFERENCE] = if a.surface { s } else { h2 };
    e
}

/// `sqrt(u^2 + v^2)` with `u = qx / h`, as the frames' velocities are computed (no fused
/// multiply-add: the GPU mirror rounds each operation too); 0 where the layer is absent
/// (`h <= 0`), as the frames' velocity there. Not 0/0: a layer absent all run kept a NaN in
/// its map, and one NaN makes every maximum a user takes over the map a NaN.
#[inline(always)]
pub fn speed(qx: f64, qy: f64, h: f64) -> f64 {
    if h <= 0.0 {
        return 0.0;
    }
    let (u, v) = (qx / h, qy / h);
    (u * u + v * v).sqrt()
}

/// Fold the state of a cell at time `t` (the end of a step) into its extremes.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // the six numbers of a cell, as the kernels pass them
pub fn fold<T: Real>(e: &mut [f64; WIDTH], h1: T, q1x: T, q1y: T, h2: T, q2x: T, q2y: T, t: f64, a: Arrival) {
    let (h1, h2) = (h1.f64(), h2.f64());
    let s = h1 + h2;
    e[E_SURFACE_MAX] = e[E_SURFACE_MAX].max(s);
    e[E_INTERFACE_MAX] = e[E_INTERFACE_MAX].max(h2);
    e[E_INTERFACE_MIN] = e[E_INTERFACE_MIN].min(h2);
    e[E_SPEED1_MAX] = e[E_SPEED1_MAX].max(speed(q1x.f64(), q1y.f64(), h1));
    e[E_SPEED2_MAX] = e[E_SPEED2_MAX].max(speed(q2x.f64(), q2y.f64(), h2));
    if e[E_ARRIVAL] < 0.0 {
        let x = if a.surface { s } else { h2 };
        if (x - e[E_REFERENCE]).abs() > a.threshold {
            e[E_ARRIVAL] = t;
        }
    }
}
