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
//! (the bottom's jump towards the other side), and the flux is Rusanov's between the two
//! reconstructed states with one speed `a` for both layers, `a = max |u·n| + √(g (h1 + h2))`
//! over both sides. Each cell's word leaves out its own cell's hydrostatic pressure, as in
//! `flux.rs`, which with the reconstruction's correction term leaves `g/4 (h*_i + h*_j) Δh*`
//! in the momentum rows: all of it proportional to the reconstructed jump `Δh*`.
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
//! **Positivity.** A layer's mass flux out of cell i is at most `a h*_i ≤ a h_i`, so a step
//! with `dt Σ L a ≤ V` keeps it non-negative. The edge reports `2a` as its speed: the CFL
//! step `dt = 2γ V / Σ L speed` of a cell whose edges all take this flux is then at most
//! `γ V / Σ L a`, within the bound for any γ ≤ 1. The IR-Roe flux of the wet edges keeps
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

/// A layer's velocity: zero at or below the dry tolerance.
#[inline(always)]
fn velocity<T: Real>(q: [T; 2], h: T, tol: T) -> [T; 2] {
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

/// One layer's Rusanov flux between reconstructed states: the mass flux, the normal momentum
/// words of cell i and cell j (each less its own cell's pressure), and the tangential
/// momentum flux (upwinded by the mass flux).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn layer_flux<T: Real>(g: T, a: T, hi: T, hj: T, dh: T, vi: [T; 2], vj: [T; 2], n: [T; 2]) -> [T; 4] {
    let half = T::c(0.5);
    let (uni, unj) = (vi[0] * n[0] + vi[1] * n[1], vj[0] * n[0] + vj[1] * n[1]);
    let (qi, qj) = (hi * uni, hj * unj);
    let mass = half * (qi + qj) - half * a * dh;
    let adv = half * (qi * uni + qj * unj) - half * a * (qj - qi);
    let pressure = T::c(0.25) * g * (hi + hj) * dh;
    let ut = if mass > T::zero() { vi[1] * n[0] - vi[0] * n[1] } else { vj[1] * n[0] - vj[0] * n[1] };
    [mass, adv + pressure, adv - pressure, mass * ut]
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

    let normal = |v: [T; 2]| (v[0] * n[0] + v[1] * n[1]).abs();
    let celerity = |h1: T, h2: T| (g * (h1 + h2)).sqrt();
    let ai = normal(v1i).max(normal(v2i)) + celerity(h1i, h2i);
    let aj = normal(v1j).max(normal(v2j)) + celerity(h1j, h2j);
    let a = ai.max(aj);

    let f1 = layer_flux(g, a, r1i, r1j, dh1, v1i, v1j, n);
    let f2 = layer_flux(g, a, r2i, r2j, dh2, v2i, v2j, n);
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
    EdgeFlux { i: back(f1[1], f2[1]), j: back(f1[2], f2[2]), speed: T::c(2.0) * a, fallback: false }
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
