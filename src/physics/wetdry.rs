//! Vanishing layers and dry land: the flux across an edge where a layer is absent or thin
//! on either side, and what the update does to a cell whose layer vanishes.
//! `kernels/wetdry.cuh` mirrors this file line by line.
//!
//! **Where.** An edge whose four thicknesses are all at least `Model::thin` (ten dry
//! tolerances) takes the IR-Roe flux of `flux.rs`, unchanged bit for bit. Any other edge
//! takes [`dry_flux`]: the IR-Roe machinery (`1/h`, `√(g h)`, the 4×4 eigenstructure)
//! never sees a vanishing thickness.
//!
//! **How.** Each layer is a one-layer shallow-water system over a "bottom" made of what lies
//! beneath it (Castro et al. 2005's splitting of the two-layer system; Audusse et al.'s
//! hydrostatic reconstruction, as in Ersing et al.'s multilayer scheme for TrixiShallowWater.jl):
//! - layer 1 (upper) over the interface `η2 = h2 - H`, with gravity `g`: where layer 2 is
//!   absent its bottom is the sea bed, so this is the one-layer system with gravity `g`;
//! - layer 2 (lower) over `-H + r h1`, the bed plus the upper layer's weight in the lower
//!   layer's head, so its surface is `η2 + r h1`: with layer 1 absent, the one-layer system
//!   with gravity `g`; with both present, the reduced coupling of the two-layer system.
//!
//! Per layer, the reconstructed thicknesses at the edge are `h* = max(0, h - max(0, Δz))`
//! (the bottom's jump towards the other side), and the flux is HLL's between the two
//! reconstructed states, `F = (s_R F_i - s_L F_j + s_L s_R Δw) / (s_R - s_L)` with the bounds
//! clamped to `s_L ≤ 0 ≤ s_R` (so an edge whose waves all run one way is upwind), one pair
//! for both layers, from the cells' own states (`c = √(g H)`, `H = h1 + h2` the water column,
//! the celerity of the barotropic wave, the fastest of the two-layer system, and with one
//! layer that layer's; `u` the slowest present layer's normal velocity for `s_L`, the
//! fastest's for `s_R`):
//! - no water on one side: the other side's `u - c` and the dry-bed front's `u + 2c` (`u - 2c`
//!   and `u + c` mirrored; Toro, *Shock-capturing methods for free-surface shallow flows*,
//!   ch. 10);
//! - water on both sides: Einfeldt's, `s_L = min(u_i - c_i, û - ĉ)`, `s_R = max(u_j + c_j,
//!   û + ĉ)`, `û` each layer's Roe average (√h-weighted), `ĉ = √(g (H_i + H_j)/2)`;
//! - both widened to hold every present layer's velocity on both sides (what the positivity
//!   bound needs);
//! - made symmetric, `±max(-s_L, s_R)` (Rusanov's dissipation), where the reconstruction cuts
//!   a present layer to half its thickness or less (`h ≤ 2 Δz`: a layer thin for the step
//!   between the bottoms, a film on a slope). There the hydrostatic reconstruction misses
//!   most of the gravity along the slope (Delestre, Cordier, Darboux and James 2012, "A
//!   limitation of the hydrostatic reconstruction technique for shallow water equations"),
//!   and the symmetric dissipation is what drains a receding film down the slope: with HLL's
//!   upwinding there (bounds then taken from the reconstructed states), Thacker's receding
//!   shoreline (`tests/thacker.rs`) lagged 6 cells behind at 16000 cells; 2.3 with Rusanov,
//!   2.7 with this rule (3.6 where only a layer cut to nothing took Rusanov's bounds).
//!
//! The bounds come from the cells' states, not the reconstructed ones, which drop what lies
//! below the other side's bottom: at a vanishing layer's tip inside a two-layer flow (a lock
//! exchange's fronts) those left out a layer that is there and its speed, and the smaller
//! dissipation slowed the fronts (the lock-exchange fan's L1 error at r = 0.998,
//! `tests/lock_exchange_fan.rs`, rose from 0.029 to 0.035 H², over its bound). Wider bounds
//! only make HLL more dissipative, and positivity only needs them to hold the velocities of
//! the reconstructed states, which they do.
//!
//! Why HLL: Rusanov's single speed `a = max |u| + c` diffuses every wave at the fastest one's
//! rate. At a front the flow is supercritical (`u > c` everywhere past the dam in Ritter's
//! problem), where HLL is the upwind flux and diffuses nothing across the edge beyond it.
//! Ritter's 1 mm front (16000 cells) lagged 15% of its run-out at first order and 3.8% at
//! second order with Rusanov, 10.6% and 2.6% with HLL (`tests/wetdry.rs`).
//!
//! Each cell's word leaves out its own cell's hydrostatic pressure, as in `flux.rs`: with the
//! reconstruction's correction term, cell i's momentum word is the advective part of HLL's
//! plus `-s_L ΔP / (s_R - s_L)` and cell j's plus `-s_R ΔP / (s_R - s_L)`, with
//! `ΔP = g/2 (h*_i + h*_j) Δh*` the jump of the reconstructed pressures: all of it
//! proportional to the reconstructed jump `Δh*`.
//!
//! A layer's velocity is zero at or below the dry tolerance; its thickness counts as it is
//! (down to the rounding of an absent layer's stored zero), so that a film below the
//! tolerance meets its neighbours' surface at rest.
//!
//! **At rest, exactly (the extended C-property).** Where both reconstructed thicknesses are
//! positive, `Δh*` is the jump of the layer's surface, taken from the stored deviations
//! (`Δd1 + Δd2` for layer 1, `Δd2 + r Δd1` for layer 2) as in `flux.rs`, so water at rest is
//! exactly zero there; where the bottom on one side rises above the other side's surface,
//! both reconstructed thicknesses are 0 and so is every word: no flux from a wet cell into a
//! dry cell whose bottom is above its surface, for each layer.
//!
//! **Positivity.** With every present velocity within `[s_L, s_R]`, HLL's mass flux is
//! `(s_R h*_i (u_i - s_L) + s_L h*_j (s_R - u_j)) / (s_R - s_L)`, so a layer's mass flux
//! out of cell i is at most `S h*_i ≤ S h_i`, `S = max(-s_L, s_R)`, and a step with
//! `dt Σ L S ≤ V` keeps it non-negative. The edge reports `2S` as its speed: the CFL
//! step `dt = 2γ V / Σ L speed` of a cell whose edges all take this flux is then at most
//! `γ V / Σ L S`, within the bound for any γ ≤ 1. The IR-Roe flux of the wet edges keeps
//! each layer's outgoing mass within `speed/2` times the donor's thickness, the same bound,
//! wherever it is well conditioned; where it is not (a thin layer next to nearly repeated
//! internal eigenvalues, or a resonant near-zero eigenvalue over a steep bottom, whose wave
//! strengths explode), `numerical_flux` checks the bound and hands the edge to [`dry_flux`].
//! So every edge keeps it, and with `dt Σ L speed ≤ 2γ V` a cell loses at most `γ h` of each
//! layer in a step, whatever its edges' mix of fluxes. A thickness that rounding still leaves
//! negative (by less than the dry tolerance) is set to exactly 0 by [`settle`], which adds at
//! most that rounding to the layer's mass; a thickness below minus the tolerance is a
//! blow-up (`is_admissible`).

use super::edge::{EdgeFlux, Side};
use super::{Model, Real};

/// Whether an edge with these four thicknesses takes [`dry_flux`]: one of them is below
/// `Model::thin`. A NaN compares false, so a blown-up state goes on through the IR-Roe flux
/// and is reported as before.
#[inline(always)]
pub fn needs_dry_flux<T: Real>(m: &Model<T>, h1i: T, h2i: T, h1j: T, h2j: T) -> bool {
    h1i < m.thin || h2i < m.thin || h1j < m.thin || h2j < m.thin
}

/// What an absent layer's thickness may read as over a bottom at depth `depth`: the
/// rounding of `(d2 + interface) + H` in the run's precision (layer 2's thickness; layer 1's
/// reads exactly 0).
#[inline(always)]
pub fn rounding<T: Real>(m: &Model<T>, depth: T) -> T {
    T::c(4.0) * T::EPS * (depth.abs() + m.ref_interface.abs())
}

/// A layer's thickness as the dry-aware flux sees it: 0 where it is no more than the
/// rounding of an absent layer. A film below the dry tolerance keeps its thickness (so its
/// surface meets its neighbours' at rest) but not its velocity.
#[inline(always)]
fn present<T: Real>(h: T, slack: T) -> T {
    if h > slack {
        h
    } else {
        T::zero()
    }
}

/// A layer's velocity: zero at or below the dry tolerance (also the viscosity's,
/// `physics/viscosity.rs`).
#[inline(always)]
pub(super) fn velocity<T: Real>(q: [T; 2], h: T, tol: T) -> [T; 2] {
    if h > tol {
        [q[0] / h, q[1] / h]
    } else {
        [T::zero(), T::zero()]
    }
}

/// The hydrostatic reconstruction of one layer at an edge: the thicknesses `(h*_i, h*_j)`
/// over the higher of the two bottoms (`dz` is the bottom's jump from i to j) and their jump:
/// the surface jump `ds` (from the stored deviations, exact at rest) where both are positive.
#[inline(always)]
fn reconstruct<T: Real>(hi: T, hj: T, dz: T, ds: T) -> (T, T, T) {
    let zero = T::zero();
    let ri = (hi - dz.max(zero)).max(zero);
    let rj = (hj - (-dz).max(zero)).max(zero);
    let dh = if ri > zero && rj > zero { ds } else { rj - ri };
    (ri, rj, dh)
}

/// `min` and `max` as `rt_min` and `rt_max` in `kernels/real.cuh` take them (a compare and a
/// select: the same signed zero in both).
#[inline(always)]
fn lesser<T: Real>(a: T, b: T) -> T {
    if a < b {
        a
    } else {
        b
    }
}
#[inline(always)]
fn greater<T: Real>(a: T, b: T) -> T {
    if a > b {
        a
    } else {
        b
    }
}

/// The slowest and fastest normal velocity of the layers present on one side (a positive
/// thickness); a side with one layer present gives its velocity twice (with none, layer 2's:
/// the caller does not use it).
#[inline(always)]
fn span<T: Real>(h1: T, u1: T, h2: T, u2: T) -> (T, T) {
    if h1 > T::zero() && h2 > T::zero() {
        (lesser(u1, u2), greater(u1, u2))
    } else if h1 > T::zero() {
        (u1, u1)
    } else {
        (u2, u2)
    }
}

/// A layer's Roe-averaged (√h-weighted) velocity between its two sides (0 where it is absent
/// on both: the caller does not use it).
#[inline(always)]
fn roe<T: Real>(hi: T, ui: T, hj: T, uj: T) -> T {
    let (si, sj) = (hi.sqrt(), hj.sqrt());
    let w = si + sj;
    if w > T::zero() {
        (si * ui + sj * uj) / w
    } else {
        T::zero()
    }
}

/// Whether the reconstruction cuts a present layer `h` to half or less (`h* ≤ h/2`): a layer
/// thin for the step between the two sides' bottoms.
#[inline(always)]
fn cut<T: Real>(h: T, r: T) -> bool {
    h > T::zero() && r <= T::c(0.5) * h
}

/// One layer's HLL flux between reconstructed states, with the edge's wave-speed bounds
/// clamped to `sl ≤ 0 ≤ sr` and `d = sr - sl > 0`: the mass flux, the normal momentum words
/// of cell i and cell j (each less its own cell's pressure), and the tangential momentum flux
/// (upwinded by the mass flux).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn layer_flux<T: Real>(g: T, sl: T, sr: T, d: T, hi: T, hj: T, dh: T, vi: [T; 2], vj: [T; 2], n: [T; 2]) -> [T; 4] {
    let (uni, unj) = (vi[0] * n[0] + vi[1] * n[1], vj[0] * n[0] + vj[1] * n[1]);
    let (qi, qj) = (hi * uni, hj * unj);
    let mass = (sr * qi - sl * qj + sl * sr * dh) / d;
    let adv = (sr * (qi * uni) - sl * (qj * unj) + sl * sr * (qj - qi)) / d;
    // The jump of the reconstructed pressures, g/2 (h*_j² - h*_i²), written with Δh*.
    let dp = T::c(0.5) * g * (hi + hj) * dh;
    let ut = if mass > T::zero() { vi[1] * n[0] - vi[0] * n[1] } else { vj[1] * n[0] - vj[0] * n[1] };
    [mass, adv - sl * dp / d, adv - sr * dp / d, mass * ut]
}

/// Whether an interior edge's flux is exactly zero because no layer is present on either side:
/// [`dry_flux`]'s first return. The GPU's edge kernels then write two quiet words instead of
/// four (`dry_edge` in `kernels/wetdry.cuh`, which this mirrors), and no viscous stress
/// crosses (`physics/viscosity.rs`).
#[inline(always)]
pub fn dry_edge<T: Real>(m: &Model<T>, wi: &Side<T>, wj: &Side<T>) -> bool {
    let (h1i, h2i, h1j, h2j) = (wi.h1(m), wi.h2(m), wj.h1(m), wj.h2(m));
    if !needs_dry_flux(m, h1i, h2i, h1j, h2j) {
        return false;
    }
    let (si, sj) = (rounding(m, wi.depth), rounding(m, wj.depth));
    present(h1i, si) + present(h2i, si) + present(h1j, sj) + present(h2j, sj) == T::zero()
}

/// The flux across an edge where a layer is absent or thin on either side (module comment);
/// the same contract as `numerical_flux`, whose first lines call it.
#[inline(always)]
pub fn dry_flux<T: Real>(m: &Model<T>, wi: &Side<T>, wj: &Side<T>, n: [T; 2]) -> EdgeFlux<T> {
    let (g, r) = (m.g, m.r);
    let (si, sj, tol) = (rounding(m, wi.depth), rounding(m, wj.depth), m.dry_tolerance);
    let (h1i, h2i, h1j, h2j) =
        (present(wi.h1(m), si), present(wi.h2(m), si), present(wj.h1(m), sj), present(wj.h2(m), sj));
    // Dry land on both sides (no layer on either): nothing moves across, at no cost (the
    // words below would all be zero; a mostly dry domain's edges mostly end here).
    if h1i + h2i + h1j + h2j == T::zero() {
        return EdgeFlux::default();
    }
    let (v1i, v2i) = (velocity(wi.q1, h1i, tol), velocity(wi.q2, h2i, tol));
    let (v1j, v2j) = (velocity(wj.q1, h1j, tol), velocity(wj.q2, h2j, tol));

    // Jumps of the stored deviations: layer 1's thickness and the interface (exact at rest).
    let dd1 = wj.d1 - wi.d1;
    let dd2 = wj.d2 - wi.d2;
    // Layer 1 over the interface: bottom jump Δη2, surface jump Δη1.
    let (r1i, r1j, dh1) = reconstruct(h1i, h1j, dd2, dd1 + dd2);
    // Layer 2 over the bed plus r h1: surface jump Δη2 + r Δh1, bottom jump that less Δh2.
    let ds2 = dd2 + r * dd1;
    let (r2i, r2j, dh2) = reconstruct(h2i, h2j, ds2 - (h2j - h2i), ds2);

    // HLL bounds, one pair for both layers (module comment), from the cells' own states: the
    // layers present on each side and the celerity of the water column there.
    let un = |v: [T; 2]| v[0] * n[0] + v[1] * n[1];
    let (u1i, u2i, u1j, u2j) = (un(v1i), un(v2i), un(v1j), un(v2j));
    let (hi, hj) = (h1i + h2i, h1j + h2j);
    let (ci, cj) = ((g * hi).sqrt(), (g * hj).sqrt());
    let (loi, hii) = span(h1i, u1i, h2i, u2i);
    let (loj, hij) = span(h1j, u1j, h2j, u2j);
    let two = T::c(2.0);
    let (sl, sr) = if hj == T::zero() {
        // Dry bed at j: the front runs at u + 2c.
        (loi - ci, hii + two * ci)
    } else if hi == T::zero() {
        (loj - two * cj, hij + cj)
    } else {
        // Einfeldt: the sides' characteristic speeds and the Roe average's, widened to hold
        // every present layer's velocity (what the positivity bound needs).
        let c = (g * (T::c(0.5) * (hi + hj))).sqrt();
        let (lo, up) = span(h1i + h1j, roe(h1i, u1i, h1j, u1j), h2i + h2j, roe(h2i, u2i, h2j, u2j));
        (lesser(lesser(loi - ci, lo - c), loj), greater(greater(hij + cj, up + c), hii))
    };
    // Clamped: an edge whose waves all run one way is upwind. `d > 0`: some layer is present.
    let (sl, sr) = (lesser(sl, T::zero()), greater(sr, T::zero()));
    // A step that cuts a present layer to half or less: symmetric bounds (module comment).
    let (sl, sr) = if cut(h1i, r1i) || cut(h1j, r1j) || cut(h2i, r2i) || cut(h2j, r2j) {
        let s = greater(-sl, sr);
        (-s, s)
    } else {
        (sl, sr)
    };
    let d = sr - sl;

    let f1 = layer_flux(g, sl, sr, d, r1i, r1j, dh1, v1i, v1j, n);
    let f2 = layer_flux(g, sl, sr, d, r2i, r2j, dh2, v2i, v2j, n);
    // Back to x-y: (m, p, s) -> (m, p nx - s ny, p ny + s nx).
    let back = |p1: T, p2: T| {
        [
            f1[0],
            p1 * n[0] - f1[3] * n[1],
            p1 * n[1] + f1[3] * n[0],
            f2[0],
            p2 * n[0] - f2[3] * n[1],
            p2 * n[1] + f2[3] * n[0],
        ]
    };
    EdgeFlux { i: back(f1[1], f2[1]), j: back(f1[2], f2[2]), speed: two * greater(-sl, sr), fallback: false }
}

/// A cell after its update (fluxes and sources): a layer at or below the dry tolerance loses
/// its momentum (its velocity is zero); a thickness that rounding left negative, by no more
/// than the tolerance, is set to exactly zero (the deviation of an empty layer, with no low
/// part). An absent lower layer that reads as minus its [`rounding`] is left as stored: it
/// is an exact zero as far as the flux is concerned, and rewriting it would break the
/// relation `d1 = -d2` that keeps the upper layer above it exactly at rest. Returns whether the state was admissible before (`is_admissible`: a layer thinner
/// than minus the tolerance, or a value not finite, is a blow-up).
#[inline(always)]
pub fn settle<T: Real>(m: &Model<T>, s: &mut Side<T>, lo: &mut [T; 2]) -> bool {
    let tol = m.dry_tolerance;
    let (h1, h2) = (s.h1(m), s.h2(m));
    let ok = super::state::is_admissible(h1, s.q1[0], s.q1[1], h2, s.q2[0], s.q2[1], tol);
    if h1 < T::zero() && h1 >= -tol {
        s.d1 = -m.ref_h1;
        lo[0] = T::zero();
    }
    if h2 < -rounding(m, s.depth) && h2 >= -tol {
        s.d2 = (-s.depth) - m.ref_interface;
        lo[1] = T::zero();
    }
    if h1 <= tol {
        s.q1 = [T::zero(); 2];
    }
    if h2 <= tol {
        s.q2 = [T::zero(); 2];
    }
    ok
}
