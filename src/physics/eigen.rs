//! Eigenvalues and eigenvectors of the projected two-layer matrix A (docs/numerics.md):
//!
//! ```text
//!     [ 0            1     0            0    ]
//! A = [ g h1 - u1^2  2 u1  g h1         0    ]
//!     [ 0            0     0            1    ]
//!     [ r g h2       0     g h2 - u2^2  2 u2 ]
//! ```
//!
//! Its eigenvalues are the roots of ((l-u1)^2 - g h1)((l-u2)^2 - g h2) = r g^2 h1 h2. We
//! work with the scaled quartic Q(l) = a + b - a b - (1 - r), a = (l-u1)^2/(g h1),
//! b = (l-u2)^2/(g h2), which equals -P(l)/(g^2 h1 h2): near the slow internal roots a and b
//! are small, so Q is evaluated without the cancellation that ruins P in float32 when r is
//! close to 1. The two external roots come from Newton's method started at
//! Um +- sqrt(g (h1+h2)); the internal pair then follows in closed form from the deflated
//! quartic P(l) = (l - l1)(l - l4)((l - m)^2 - d^2): m from the sum of the roots,
//! 2 (u1 + u2), and d^2 from Q(m). d^2 <= 0 means the system is not hyperbolic here
//! (Kelvin-Helmholtz shear instability).

use super::Real;

/// Eigenvalues in increasing order: external, internal, internal, external.
#[derive(Clone, Copy, Debug)]
pub struct Eigenvalues<T> {
    pub lambda: [T; 4],
    /// False when the internal pair is complex; `lambda[1] == lambda[2]` is then its real part.
    pub hyperbolic: bool,
}

/// Q(l) and Q'(l), see the module comment.
#[inline(always)]
fn scaled_quartic<T: Real>(l: T, u1: T, u2: T, igh1: T, igh2: T, one_minus_r: T) -> (T, T) {
    let (d1, d2) = (l - u1, l - u2);
    let (e1, e2) = (d1 * igh1, d2 * igh2);
    let (a, b) = (d1 * e1, d2 * e2);
    let two = T::c(2.0);
    let q = a + b - a * b - one_minus_r;
    let dq = two * (e1 * (T::one() - b) + e2 * (T::one() - a));
    (q, dq)
}

const NEWTON_MAX: usize = 40;

/// Newton on Q from `l`; also says whether it converged.
#[inline(always)]
fn newton<T: Real>(mut l: T, scale: T, u1: T, u2: T, igh1: T, igh2: T, one_minus_r: T) -> (T, bool) {
    for _ in 0..NEWTON_MAX {
        let (q, dq) = scaled_quartic(l, u1, u2, igh1, igh2, one_minus_r);
        if dq == T::zero() {
            return (l, false);
        }
        let step = q / dq;
        l = l - step;
        if step.abs() <= T::c(4.0) * T::EPS * scale {
            return (l, true);
        }
    }
    (l, false)
}

/// Whether `l` lies beyond both layers' own speeds on the side `dir` (+1: right, -1: left):
/// (l - u_k)^2 > g h_k with l - u_k of sign `dir`, for k = 1, 2. There both factors of
/// ((l-u1)^2 - g h1)((l-u2)^2 - g h2) are positive and monotone, so the quartic has exactly
/// one root there: the extreme one. Both factors vanish inside, where P = -r g^2 h1 h2 < 0,
/// so the extreme roots always lie there.
#[inline(always)]
fn beyond<T: Real>(l: T, dir: T, u1: T, u2: T, igh1: T, igh2: T) -> bool {
    let (d1, d2) = (l - u1, l - u2);
    d1 * dir > T::zero() && d2 * dir > T::zero() && d1 * d1 * igh1 > T::one() && d2 * d2 * igh2 > T::one()
}

/// The extreme root on side `dir`: Newton from the closed-form estimate (fast, and right
/// unless the layers are strongly sheared); if that lands elsewhere, Newton again from
/// max/min(u1, u2) +- sqrt(g (h1 + h2)), beyond which both factors are positive, increasing
/// and convex, so Newton descends monotonically onto the extreme root.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn extreme_root<T: Real>(estimate: T, bound: T, dir: T, scale: T, u1: T, u2: T, igh1: T, igh2: T, one_minus_r: T) -> T {
    let (l, ok) = newton(estimate, scale, u1, u2, igh1, igh2, one_minus_r);
    if ok && beyond(l, dir, u1, u2, igh1, igh2) {
        return l;
    }
    newton(bound, scale, u1, u2, igh1, igh2, one_minus_r).0
}

/// Eigenvalues of A for layer thicknesses `h1, h2 > 0` and normal velocities `u1, u2`.
#[inline(always)]
pub fn eigenvalues<T: Real>(g: T, r: T, h1: T, u1: T, h2: T, u2: T) -> Eigenvalues<T> {
    let (gh1, gh2) = (g * h1, g * h2);
    let (igh1, igh2) = (T::one() / gh1, T::one() / gh2);
    let hs = h1 + h2;
    let one_minus_r = T::one() - r;
    let um = (h1 * u1 + h2 * u2) / hs;
    let ce = (g * hs).sqrt();
    let scale = ce + u1.abs().max(u2.abs());
    let one = T::one();
    let lo = extreme_root(um - ce, u1.min(u2) - ce, -one, scale, u1, u2, igh1, igh2, one_minus_r);
    let hi = extreme_root(um + ce, u1.max(u2) + ce, one, scale, u1, u2, igh1, igh2, one_minus_r);
    let m = u1 + u2 - T::c(0.5) * (lo + hi);
    let (qm, _) = scaled_quartic(m, u1, u2, igh1, igh2, one_minus_r);
    // P(m) = -g^2 h1 h2 Q(m) = (m - lo)(m - hi)(-d^2)
    let d2 = -(gh1 * gh2) * qm / ((m - lo) * (hi - m));
    if d2 > T::zero() {
        let d = d2.sqrt();
        Eigenvalues { lambda: [lo, m - d, m + d, hi], hyperbolic: true }
    } else {
        Eigenvalues { lambda: [lo, m, m, hi], hyperbolic: false }
    }
}

/// Eigenvector of A for eigenvalue `l`: (1, l, a, a l) with a = ((l - u1)^2 - g h1)/(g h1),
/// given `igh1 = 1 / (g h1)`.
#[inline(always)]
pub fn eigenvector<T: Real>(l: T, u1: T, igh1: T) -> [T; 4] {
    let d = l - u1;
    let a = d * d * igh1 - T::one();
    [T::one(), l, a, a * l]
}

/// Wave strengths: the `c` with `K c = b`, K's columns the eigenvectors (1, l, a, a l).
/// With x = (l - u1) / sqrt(g h1) the eigenvector is (1, u1 + s x, x^2 - 1, ...), so the
/// four equations are a Vandermonde system in x for the moments
/// M = (b0, (b1 - u1 b0)/s, b0 + b2, M1 + (b3 - u1 b2)/s), s = sqrt(g h1), and each c_l is
/// the Lagrange basis polynomial of x_l applied to M. No pivoting, one division per wave.
#[inline(always)]
pub fn wave_strengths<T: Real>(lambda: &[T; 4], u1: T, sqrt_gh1: T, b: &[T; 4]) -> [T; 4] {
    let is = T::one() / sqrt_gh1;
    let x = [(lambda[0] - u1) * is, (lambda[1] - u1) * is, (lambda[2] - u1) * is, (lambda[3] - u1) * is];
    let m0 = b[0];
    let m1 = (b[1] - u1 * b[0]) * is;
    let m2 = b[0] + b[2];
    let m3 = m1 + (b[3] - u1 * b[2]) * is;
    let mut c = [T::zero(); 4];
    for l in 0..4 {
        let (p, q, r) = (x[(l + 1) % 4], x[(l + 2) % 4], x[(l + 3) % 4]);
        let e1 = p + q + r;
        let e2 = p * q + p * r + q * r;
        let e3 = p * q * r;
        let den = (x[l] - p) * (x[l] - q) * (x[l] - r);
        c[l] = (m3 - e1 * m2 + e2 * m1 - e3 * m0) / den;
    }
    c
}

/// Closed-form estimates of the eigenvalues for r close to 1 (docs/numerics.md): external
/// Um +- sqrt(g (h1 + h2)), internal Uc +- sqrt(g' h1 h2 / (h1 + h2) (1 - (u1 - u2)^2 /
/// (g' (h1 + h2)))), the internal root clamped at 0 where it is complex. Cheap; used only
/// to decide where the exact values are needed.
#[inline(always)]
pub fn estimates<T: Real>(g: T, r: T, h1: T, u1: T, h2: T, u2: T) -> [T; 4] {
    let hs = h1 + h2;
    let ihs = T::one() / hs;
    let um = (h1 * u1 + h2 * u2) * ihs;
    let uc = (h1 * u2 + h2 * u1) * ihs;
    let ce = (g * hs).sqrt();
    let gp = (T::one() - r) * g;
    let du = u1 - u2;
    let ci = (gp * h1 * h2 * ihs - du * du * h1 * h2 * ihs * ihs).max(T::zero()).sqrt();
    [um - ce, uc - ci, uc + ci, um + ce]
}
