//! The numerical flux across one edge: the IR-Roe scheme of de la Asunción, Mantas, Castro
//! and Fernández-Nieto (2012), section 2.2, eq. (4). `kernels/flux.cuh` mirrors it.
//!
//! In:  the states of the two cells, `i` (the edge's first cell) and `j`, and the unit normal
//!      `n` pointing from `i` to `j`.
//! Out: what each cell's accumulator receives, `M_i += L * flux.i`, `M_j -= L * flux.j`, and
//!      the largest wave speed, `Z_i += L * speed`, `Z_j += L * speed`.
//!
//! The 1D Roe part works on w = (h1, qn1, h2, qn2). Its jump vector holds the conservative
//! jump, the layer coupling and the bottom term, arranged so that water at rest (flat
//! interface, flat free surface) gives zero: that is the well-balancing. The tangential
//! momenta are transported by the mass flux, upwinded (the paper's HLLC-like treatment).
//! Where the Roe state is not hyperbolic the 1D part falls back to a Rusanov-type
//! fluctuation on (h1, qn1, h2 - H, qn2), which is conservative, well-balanced and never
//! NaN; the caller counts these edges.
//!
//! **Exactly at rest in any precision.** Two terms of the paper's form cancel only in exact
//! arithmetic, and at ocean depths their rounding drives a spurious flow in float32:
//! - The pressure jumps in `b` were differences of thicknesses of hundreds of metres. Here
//!   they are jumps of the stored deviations (`Side`, `physics/edge.rs`): the free surface
//!   `Δη1 = Δd1 + Δd2`, the interface `Δη2 = Δd2` and `Δh1 = Δd1`, each exactly zero at
//!   rest, so `b` and the wave strengths are exactly zero there.
//! - `Phi-` holds cell i's own hydrostatic pressure `g h_i^2/2`, whose sum over the cell's
//!   closed boundary, `g h_i^2/2 Σ L n`, vanishes only in exact arithmetic (at 800 m it is
//!   3e6 times the rounding of the normals). Both sides therefore leave out their own cell's
//!   pressure, which changes nothing in exact arithmetic: cell i receives
//!   `F_adv(w_i) + P- b` in the momentum rows (`F_adv = qn u`, the advective flux), and cell
//!   j receives `Phi+ - P_j = F_adv(w_i) + P- b - G` with `G = P_j - P_i + nc`, which with
//!   arithmetic-mean thicknesses is exactly `(0, g h1 Δη1, 0, g h2 (Δη2 + r Δh1))`: the
//!   pressure part of `b` itself. The mass rows stay in flux form, one number for both
//!   cells, so mass is conserved to rounding of the update alone.
//!
//! At rest every term is then exactly zero, and water at rest stays at rest bit for bit.

use super::edge::{EdgeFlux, Side};
use super::eigen::{eigenvalues, eigenvector, estimates, wave_strengths, Eigenvalues};
use super::wetdry::{dry_flux, needs_dry_flux};
use super::{Model, Real};

/// Share of wave `l` (speed `lambda`) that goes to the left (into cell i), with the
/// Harten-Hyman entropy fix for transonic rarefactions: when the same wave's speed is
/// negative from the left state alone and positive from the right state alone, the wave is
/// split at lambda^- = lambda_L (lambda_R - lambda) / (lambda_R - lambda_L).
#[inline(always)]
fn left_share<T: Real>(lambda: T, lambda_l: T, lambda_r: T, tiny: T) -> T {
    let half = T::c(0.5);
    if lambda_l < T::zero() && T::zero() < lambda_r {
        if lambda.abs() > tiny {
            lambda_l * (lambda_r - lambda) / ((lambda_r - lambda_l) * lambda)
        } else {
            half
        }
    } else if lambda < T::zero() {
        T::one()
    } else if lambda > T::zero() {
        T::zero()
    } else {
        half
    }
}

/// Whether a layer's mass flux `mass` (from i to j) takes more out of its donor cell (i if
/// positive, j if negative, thicknesses `hi`, `hj`) than `cap` times its thickness.
#[inline(always)]
fn escapes<T: Real>(cap: T, mass: T, hi: T, hj: T) -> bool {
    mass > cap * hi || -mass > cap * hj
}

/// The flux across an edge: IR-Roe where every layer is wet on both sides and its flux keeps
/// each layer's outgoing mass within `speed/2` times the donor's thickness, else the
/// dry-aware flux (`physics/wetdry.rs`).
#[inline(always)]
pub fn numerical_flux<T: Real>(m: &Model<T>, wi: &Side<T>, wj: &Side<T>, n: [T; 2]) -> EdgeFlux<T> {
    let (h1i, h2i, h1j, h2j) = (wi.h1(m), wi.h2(m), wj.h1(m), wj.h2(m));
    // A layer absent or thin on either side: the dry-aware flux (`physics/wetdry.rs`).
    if needs_dry_flux(m, h1i, h2i, h1j, h2j) {
        return dry_flux(m, wi, wj, n);
    }
    let f = ir_roe_flux(m, wi, wj, n);
    // Positivity (`wetdry.rs`): with `dt Σ L speed ≤ 2γ V`, a cell keeps each layer non-negative
    // if no edge takes more of it out than `speed/2` times its thickness. IR-Roe breaks this
    // where it is ill-conditioned (a thin layer next to nearly repeated internal eigenvalues,
    // a resonant near-zero eigenvalue over a steep bottom: the wave strengths explode), across
    // large jumps, and in fast (supercritical) outflow; such an edge takes the dry-aware flux,
    // which keeps the bound by construction. The paper's benchmark never meets it. A NaN
    // compares false and goes on to be reported.
    let cap = T::c(0.5) * f.speed;
    if escapes(cap, f.i[0], h1i, h1j) || escapes(cap, f.i[3], h2i, h2j) {
        return dry_flux(m, wi, wj, n);
    }
    f
}

/// The IR-Roe flux alone (module comment), for edges where both layers are wet on both
/// sides; [`numerical_flux`] decides where it applies.
#[inline(always)]
pub fn ir_roe_flux<T: Real>(m: &Model<T>, wi: &Side<T>, wj: &Side<T>, n: [T; 2]) -> EdgeFlux<T> {
    let (g, r) = (m.g, m.r);
    let (nx, ny) = (n[0], n[1]);
    let half = T::c(0.5);
    let normal = |q: [T; 2]| q[0] * nx + q[1] * ny;
    let tangent = |q: [T; 2]| q[1] * nx - q[0] * ny;

    let (h1i, h2i, h1j, h2j) = (wi.h1(m), wi.h2(m), wj.h1(m), wj.h2(m));
    let (qn1i, qn2i, qn1j, qn2j) = (normal(wi.q1), normal(wi.q2), normal(wj.q1), normal(wj.q2));
    let (ih1i, ih2i, ih1j, ih2j) = (T::one() / h1i, T::one() / h2i, T::one() / h1j, T::one() / h2j);
    let (u1i, u2i, u1j, u2j) = (qn1i * ih1i, qn2i * ih2i, qn1j * ih1j, qn2j * ih2j);

    // Roe state: arithmetic mean thicknesses, square-root weighted velocities.
    let h1 = half * (h1i + h1j);
    let h2 = half * (h2i + h2j);
    let (s1i, s1j, s2i, s2j) = (h1i.sqrt(), h1j.sqrt(), h2i.sqrt(), h2j.sqrt());
    let u1 = (s1i * u1i + s1j * u1j) / (s1i + s1j);
    let u2 = (s2i * u2i + s2j * u2j) / (s2i + s2j);

    // Jumps of the layer-1 thickness, the interface and the free surface, from the stored
    // deviations: exactly zero at rest, with no depth in them.
    let dh1 = wj.d1 - wi.d1;
    let deta2 = wj.d2 - wi.d2;
    let deta1 = dh1 + deta2;
    // The pressure, layer-coupling and bottom terms of b: the jumps of g h^2/2 written as
    // g h dh (exact for the arithmetic mean) plus the non-conservative products. They are
    // also what cell j's side adds to Phi- once both cells' own pressures are left out.
    let p1 = g * h1 * deta1;
    let p3 = g * h2 * (deta2 + r * dh1);
    let b = [qn1j - qn1i, qn1j * u1j - qn1i * u1i + p1, qn2j - qn2i, qn2j * u2j - qn2i * u2i + p3];

    let eig = eigenvalues(g, r, h1, u1, h2, u2);
    let lam = eig.lambda;
    let mut dm = [T::zero(); 4];
    let speed = lam[0].abs().max(lam[3].abs()).max(lam[1].abs()).max(lam[2].abs());
    // A (nearly) repeated internal eigenvalue leaves A without a usable eigenbasis: the
    // wave strengths would be rounding divided by the gap. Treated like a complex pair.
    let fallback = !(eig.hyperbolic && lam[2] - lam[1] > T::EPS.sqrt() * speed);
    if !fallback {
        let igh1 = T::one() / (g * h1);
        let cols = [
            eigenvector(lam[0], u1, igh1),
            eigenvector(lam[1], u1, igh1),
            eigenvector(lam[2], u1, igh1),
            eigenvector(lam[3], u1, igh1),
        ];
        let c = wave_strengths(&lam, u1, (g * h1).sqrt(), &b);
        // The entropy fix needs each wave's speed from either side alone, but only for
        // waves that may be transonic; closed-form estimates screen out the rest (with a
        // margin far above their error), which saves two eigen-solves on most edges.
        let (el, er) = (estimates(g, r, h1i, u1i, h2i, u2i), estimates(g, r, h1j, u1j, h2j, u2j));
        let mut maybe_transonic = false;
        for l in 0..4 {
            let margin = T::c(0.25) * (el[l].abs() + er[l].abs()) + T::EPS * speed;
            maybe_transonic |= el[l] < margin && er[l] > -margin;
        }
        let (left, right): (Eigenvalues<T>, Eigenvalues<T>) = if maybe_transonic {
            (eigenvalues(g, r, h1i, u1i, h2i, u2i), eigenvalues(g, r, h1j, u1j, h2j, u2j))
        } else {
            // No sign change possible: the Roe speeds give the same upwinding.
            (eig, eig)
        };
        let tiny = T::EPS.sqrt() * speed;
        for l in 0..4 {
            let internal = l == 1 || l == 2;
            let fix_ok = !internal || (left.hyperbolic && right.hyperbolic);
            let w = if fix_ok {
                left_share(lam[l], left.lambda[l], right.lambda[l], tiny)
            } else {
                left_share(lam[l], lam[l], lam[l], tiny)
            };
            let wc = w * c[l];
            for k in 0..4 {
                dm[k] = dm[k] + wc * cols[l][k];
            }
        }
    } else {
        let dv = [dh1, qn1j - qn1i, deta2, qn2j - qn2i];
        for k in 0..4 {
            dm[k] = half * (b[k] - speed * dv[k]);
        }
    }

    // Phi- = F(w_i) + P- b less cell i's own pressure; cell j's side is Phi+ less cell j's
    // own pressure, that is this less (p1, p3) (module comment).
    let phi = [qn1i + dm[0], qn1i * u1i + dm[1], qn2i + dm[2], qn2i * u2i + dm[3]];
    let (m1, m2) = (phi[0], phi[2]);
    let ut1 = if m1 > T::zero() { tangent(wi.q1) * ih1i } else { tangent(wj.q1) * ih1j };
    let ut2 = if m2 > T::zero() { tangent(wi.q2) * ih2i } else { tangent(wj.q2) * ih2j };
    let (s1, s2) = (m1 * ut1, m2 * ut2);

    // Back to x-y: (m, p, s) -> (m, p nx - s ny, p ny + s nx).
    let back = |p1: T, p2: T| [m1, p1 * nx - s1 * ny, p1 * ny + s1 * nx, m2, p2 * nx - s2 * ny, p2 * ny + s2 * nx];
    EdgeFlux { i: back(phi[1], phi[3]), j: back(phi[1] - p1, phi[3] - p3), speed, fallback }
}
