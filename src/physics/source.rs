//! Cell source terms, applied at the end of each cell's update, after the fluxes: each term
//! integrated over the step `dt` on its own (first-order splitting), semi-implicitly where
//! an explicit step could reverse a velocity. `kernels/source.cuh` mirrors this file.
//!
//! Adding a term: its parameter in `physics/model.rs` (and `kernels/model.cuh`), its lines
//! below and in `kernels/source.cuh`, its condition in [`Model::has_sources`] (and in
//! `kernels/model.cuh`), its bound in `scenario/physics_ranges.rs`, a test: the guide's
//! "Adding physics" walks through one.

use super::edge::Side;
use super::{Model, Real};

/// The state of one cell after the source terms act on it for `dt`. `s.depth` is the
/// bottom's depth below the reference; `s.h1(m)`, `s.h2(m)` are the thicknesses. Today's
/// terms change momenta only: a term that changes a thickness must add its increment to the
/// stored deviation and its low part with `add_compensated`, as the update does for the
/// fluxes (`solver/cpu.rs`), or a small increment may be rounded away.
///
/// The terms in order: wind (explicit, a constant force), linear and Manning bottom friction
/// and interlayer friction (each implicit: a factor in (0, 1] on the velocity it damps, so
/// it never reverses a flow, whatever `dt`), the shear limit (`physics/shear.rs`), then the
/// Coriolis force as the exact
/// rotation of both momenta by the angle `-f dt` (the solution of `dq/dt = -f k x q` over
/// the step), which keeps their magnitude: an inertial oscillation keeps its amplitude.
#[inline(always)]
pub fn source<T: Real>(m: &Model<T>, s: &mut Side<T>, dt: T) {
    source_at(m, s, dt, m.coriolis_f)
}

/// [`source`] with the cell's own Coriolis parameter `f` (a beta-plane: the update passes
/// the layout's per-cell value where `m.coriolis_per_cell` is set, else `m.coriolis_f`).
#[inline(always)]
pub fn source_at<T: Real>(m: &Model<T>, s: &mut Side<T>, dt: T, f: T) {
    let (one, two, four) = (T::one(), T::c(2.0), T::c(4.0));
    // Vanishing layers (physics/wetdry.rs): a layer at or below the dry tolerance is absent.
    // The wind acts on the top wet layer, bottom friction on the lowest wet one (the upper
    // layer where the lower is absent), interlayer friction only where both are present;
    // a cell with no water gets none (an absent layer's 1/h would make a NaN).
    let (h1, h2) = (s.h1(m), s.h2(m));
    let (wet1, wet2) = (h1 > m.dry_tolerance, h2 > m.dry_tolerance);
    if m.wind_x != T::zero() || m.wind_y != T::zero() {
        if wet1 {
            s.q1 = [s.q1[0] + dt * m.wind_x, s.q1[1] + dt * m.wind_y];
        } else if wet2 {
            s.q2 = [s.q2[0] + dt * m.wind_x, s.q2[1] + dt * m.wind_y];
        }
    }
    // The lowest wet layer: its momentum and thickness.
    let (bottom, hb) = if wet2 { (&mut s.q2, h2) } else { (&mut s.q1, h1) };
    if m.linear_friction > T::zero() && (wet1 || wet2) {
        // Linear bottom friction, d(q)/dt = -k q / h, implicit in q: the factor lies in
        // (0, 1], so it slows the layer and never turns it around.
        let f = one / (one + dt * m.linear_friction / hb);
        *bottom = [bottom[0] * f, bottom[1] * f];
    }
    if m.manning > T::zero() && (wet1 || wet2) {
        // d(q)/dt = -K |q| q with K = g n² / h^(7/3) (h^(7/3) as h² cbrt(h), which both
        // backends round alike), implicit in q and its magnitude: |q'| + dt K |q'|² = |q|,
        // so q' = q 2 / (1 + sqrt(1 + 4 dt K |q|)). The factor lies in (0, 1] (never a
        // reversal), and a flow whose friction balances a constant force is a fixed point
        // of force-then-friction for any dt: the normal-depth velocity comes out exact.
        let speed = (bottom[0] * bottom[0] + bottom[1] * bottom[1]).sqrt();
        let k = m.g * m.manning * m.manning / (hb * hb * hb.cbrt());
        let f = two / (one + (one + four * dt * k * speed).sqrt());
        *bottom = [bottom[0] * f, bottom[1] * f];
    }
    if m.interlayer_friction > T::zero() && wet1 && wet2 {
        // The shear du = u1 - u2 obeys d(du)/dt = -c |du| du (1/h1 + r/h2): implicit in du
        // and its magnitude, as Manning above. The change is shared so that the total
        // momentum rho1 q1 + rho2 q2 is unchanged: dq1 = w d(du), dq2 = -r w d(du) with
        // w = h1 h2 / (r h1 + h2).
        let du = [s.q1[0] / h1 - s.q2[0] / h2, s.q1[1] / h1 - s.q2[1] / h2];
        let speed = (du[0] * du[0] + du[1] * du[1]).sqrt();
        let k = m.interlayer_friction * (one / h1 + m.r / h2);
        let change = two / (one + (one + four * dt * k * speed).sqrt()) - one;
        let w = h1 * h2 / (m.r * h1 + h2);
        let (c1, c2) = ([w * change * du[0], w * change * du[1]], [m.r * w * change * du[0], m.r * w * change * du[1]]);
        s.q1 = [s.q1[0] + c1[0], s.q1[1] + c1[1]];
        s.q2 = [s.q2[0] - c2[0], s.q2[1] - c2[1]];
    }
    if m.shear_bound > T::zero() && wet1 && wet2 {
        super::shear::limit_shear(m, s, h1, h2);
    }
    if f != T::zero() {
        let angle = f * dt;
        let (sin, cos) = (angle.sin(), angle.cos());
        let rotate = |q: [T; 2]| [cos * q[0] + sin * q[1], cos * q[1] - sin * q[0]];
        s.q1 = rotate(s.q1);
        s.q2 = rotate(s.q2);
    }
}
