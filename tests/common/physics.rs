//! Shared by the physics tests (`tests/physics_*.rs`): tolerances, a deterministic random
//! generator, independent references (nalgebra's eigen-decomposition of the 4x4 matrix A,
//! the physical flux written out by hand) and random states.
#![allow(dead_code)]

use nalgebra::{Complex, Matrix4};
use pycno::physics::eigen::eigenvalues;
use pycno::physics::{EdgeFlux, Real, Side};

// ---------------------------------------------------------------------------------------
// Tolerances. Every one is stated relative to a named scale, with the reason for its size.
// ---------------------------------------------------------------------------------------

/// Eigenvalues (f64) vs nalgebra, relative to max|lambda|: both sides are backward stable to
/// ~1e-15; 1e-9 is the brief's requirement and leaves room for the conditioning of the
/// separated roots.
pub const EIG_REL_TOL: f64 = 1e-9;
/// Near a double root (the hyperbolicity boundary) a root is only determined to
/// ~eps * L^2 / gap (P'(lambda) ~ gap * L^2 for a quartic of scale L). The absolute tolerance
/// is max(EIG_REL_TOL * L, EIG_GAP_COEF * L^2 / gap); 1e-13 is ~450 f64 epsilons.
pub const EIG_GAP_COEF: f64 = 1e-13;
/// A nalgebra spectrum is classified (real / complex) only if the decision is not within
/// rounding: a complex pair needs |Im| > CLASS_MARGIN * L, a real spectrum needs every gap
/// between sorted roots > CLASS_MARGIN * L. Rounding moves a double root by
/// ~sqrt(eps) * L ~ 1.5e-8 L, so 1e-6 is a 70x margin.
pub const CLASS_MARGIN: f64 = 1e-6;
/// f32 vs f64 eigenvalues (r = 0.998), external roots relative to max|lambda|: a few Newton
/// steps in f32 converge to a few ulps; 16 eps32 ~ 2e-6.
pub const F32_EXT_TOL: f64 = 16.0 * f32::EPSILON as f64;
/// f32 vs f64 internal roots, relative to the internal speed c_int = (l2 - l1)/2 itself.
/// The centre m = u1 + u2 - (lo + hi)/2 carries an absolute error ~ eps32 * L from the
/// cancellation lo + hi, and c_int can be ~L/300 (h1 = 0.05 under h2 = 10): eps32 * 300 ~
/// 4e-5, so 1e-3 of the internal speed leaves a margin of ~25 and still catches an O(1)
/// error of the slow speeds (e.g. evaluating the unscaled quartic in f32).
pub const F32_INT_TOL: f64 = 1e-3;
/// Eigenvector residual |A v - lambda v|_inf / (|A|_inf |v|_inf) in f64.
pub const EVEC_REL_TOL: f64 = 1e-11;
/// Wave-strength residual |K c - b|_inf / (|K|_inf |c|_inf + |b|_inf), in epsilons of the
/// type: the closed-form (Lagrange) solve on the eigenvector nodes stays far below this;
/// a wrong formula or index gives O(1/eps).
pub const STRENGTH_EPS_FACTOR: f64 = 1024.0;
/// Edge fluxes in f64, relative to the flux scale of the two states (see `flux_scale`).
/// The flux goes through an eigen-solve whose conditioning grows near the hyperbolicity
/// boundary (observed worst ~2e-12); 1e-10 is ~5e5 eps.
pub const FLUX_REL_TOL_F64: f64 = 1e-10;
/// Fluxes for equal states in f64: no eigen-solve contributes (b = 0), only a few roundings.
pub const EQUAL_REL_TOL_F64: f64 = 1e-14;
/// Same in f32.
pub const EQUAL_REL_TOL_F32: f64 = 8.0 * f32::EPSILON as f64;
/// Well-balancing, f64: b is zero up to the rounding of h2 = H + z_interface (~eps * H),
/// amplified by the eigen-solve: 1e-12 of the flux scale.
pub const WB_REL_TOL_F64: f64 = 1e-12;
/// Well-balancing, f32: the same argument with eps32 (~1.2e-7), 1e-5 of the flux scale.
pub const WB_REL_TOL_F32: f64 = 1e-5;
/// Exactly representable well-balanced data: b = 0 exactly; the only roundings are the
/// hydrostatic term and Phi+ = Phi- - nc, a few ulps.
pub const WB_EXACT_ULPS: f64 = 8.0;
/// Wall flux: the mass flux (and tangential momentum flux) vanish only up to rounding
/// times the amplification `wall_amplification` (see there), relative to the flux scale:
/// |mass| <= WALL_EPS_FACTOR * eps * amplification * scale.
pub const WALL_EPS_FACTOR: f64 = 16.0;

pub const G: f64 = 9.81;
/// Density ratios: the paper's 0.998 and ones far from 1.
pub const RS: [f64; 6] = [0.998, 0.98, 0.9, 0.7, 0.5, 0.2];
pub const HMIN: f64 = 0.05;
pub const HMAX: f64 = 10.0;
pub const UMAX: f64 = 3.0;

// ---------------------------------------------------------------------------------------
// Sides in thickness form. The tests' models have no reference rest state (both levels at
// 0): a side stores d1 = h1 and d2 = h2 - H (the interface elevation), and the flux's
// thicknesses are h1 = d1 and h2 = d2 + H, which `th1` and `th2` compute the same way.
// ---------------------------------------------------------------------------------------

pub trait Thickness<T> {
    fn th1(&self) -> T;
    fn th2(&self) -> T;
}

impl<T: Real> Thickness<T> for Side<T> {
    fn th1(&self) -> T {
        self.d1
    }
    fn th2(&self) -> T {
        self.d2 + self.depth
    }
}

/// A side from thicknesses and momenta, for a model with no reference.
pub fn side<T: Real>(h1: T, q1: [T; 2], h2: T, q2: [T; 2], depth: T) -> Side<T> {
    Side { d1: h1, q1, d2: h2 - depth, q2, depth }
}

/// What the flux leaves out of side `w`'s word (its own hydrostatic pressure, see
/// `physics/flux.rs`) put back: the paper's flux seen from that side, to which the
/// references below apply.
pub fn with_own_pressure(g: f64, f: &[f64; 6], w: &Side<f64>, n: [f64; 2]) -> [f64; 6] {
    let p = hydrostatic(g, w, n);
    std::array::from_fn(|k| f[k] + p[k])
}

// ---------------------------------------------------------------------------------------
// Deterministic PRNG (splitmix64).
// ---------------------------------------------------------------------------------------

pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    pub fn range(&mut self, a: f64, b: f64) -> f64 {
        a + (b - a) * self.unit()
    }
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[(self.next_u64() % xs.len() as u64) as usize]
    }
    pub fn angle(&mut self) -> f64 {
        self.range(0.0, 2.0 * std::f64::consts::PI)
    }
    pub fn unit_normal(&mut self) -> [f64; 2] {
        let a = self.angle();
        [a.cos(), a.sin()]
    }
    /// A thickness in [HMIN, HMAX], half of the draws log-uniform so thin layers are common.
    pub fn thickness(&mut self) -> f64 {
        if self.unit() < 0.5 {
            self.range(HMIN, HMAX)
        } else {
            (self.range(HMIN.ln(), HMAX.ln())).exp()
        }
    }
}

// ---------------------------------------------------------------------------------------
// Independent references.
// ---------------------------------------------------------------------------------------

/// The matrix A of docs/numerics.md (row-major arguments to `Matrix4::new`).
pub fn matrix_a(g: f64, r: f64, h1: f64, u1: f64, h2: f64, u2: f64) -> Matrix4<f64> {
    Matrix4::new(
        0.0,
        1.0,
        0.0,
        0.0, //
        g * h1 - u1 * u1,
        2.0 * u1,
        g * h1,
        0.0, //
        0.0,
        0.0,
        0.0,
        1.0, //
        r * g * h2,
        0.0,
        g * h2 - u2 * u2,
        2.0 * u2,
    )
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Class {
    /// All four roots real, every gap between sorted roots > CLASS_MARGIN * L.
    Real,
    /// Exactly one complex pair with |Im| > CLASS_MARGIN * L (two real roots).
    OnePair,
    /// Two complex pairs, clearly complex.
    TwoPairs,
    /// Too close to the boundary for the rounding of either side to decide.
    Ambiguous,
}

#[derive(Debug)]
pub struct RefEig {
    pub all: [Complex<f64>; 4],
    /// The real roots (Im == 0 in nalgebra), sorted.
    pub real: Vec<f64>,
    /// Largest modulus (the scale L).
    pub max_abs: f64,
    /// Largest |Re|.
    pub max_abs_re: f64,
    /// Largest |Im|.
    pub max_im: f64,
    /// Smallest gap between consecutive sorted real roots (infinite if < 2 real roots).
    pub min_gap: f64,
    pub class: Class,
}

pub fn ref_eig(a: &Matrix4<f64>) -> RefEig {
    let ev = a.complex_eigenvalues();
    let all = [ev[0], ev[1], ev[2], ev[3]];
    let max_abs = all.iter().map(|z| z.norm()).fold(0.0, f64::max);
    let max_abs_re = all.iter().map(|z| z.re.abs()).fold(0.0, f64::max);
    let mut real: Vec<f64> = all.iter().filter(|z| z.im == 0.0).map(|z| z.re).collect();
    real.sort_by(|x, y| x.partial_cmp(y).unwrap());
    let min_gap = real.windows(2).map(|w| w[1] - w[0]).fold(f64::INFINITY, f64::min);
    let n_cplx = all.iter().filter(|z| z.im != 0.0).count();
    let max_im = all.iter().map(|z| z.im.abs()).fold(0.0, f64::max);
    let min_im = all.iter().filter(|z| z.im != 0.0).map(|z| z.im.abs()).fold(f64::INFINITY, f64::min);
    let m = CLASS_MARGIN * max_abs;
    let class = if n_cplx == 0 && min_gap > m {
        Class::Real
    } else if n_cplx == 2 && max_im > m && min_gap > m {
        Class::OnePair
    } else if n_cplx == 4 && min_im > m {
        Class::TwoPairs
    } else {
        Class::Ambiguous
    };
    RefEig { all, real, max_abs, max_abs_re, max_im, min_gap, class }
}

/// Physical x-y flux F(W).n of one side, written out: per layer k,
/// mass q.n, momentum q (q.n)/h + g h^2/2 n.
pub fn physical_flux(g: f64, w: &Side<f64>, n: [f64; 2]) -> [f64; 6] {
    let layer = |h: f64, q: [f64; 2]| {
        let qn = q[0] * n[0] + q[1] * n[1];
        let p = 0.5 * g * h * h;
        [qn, q[0] * qn / h + p * n[0], q[1] * qn / h + p * n[1]]
    };
    let a = layer(w.th1(), w.q1);
    let b = layer(w.th2(), w.q2);
    [a[0], a[1], a[2], b[0], b[1], b[2]]
}

/// A scale for the fluxes of an edge: the largest |component| of either physical flux, plus
/// g (h1 + h2)^2 / 2 so that states at rest still have a meaningful (pressure) scale.
pub fn flux_scale(g: f64, wi: &Side<f64>, wj: &Side<f64>) -> f64 {
    let mut s: f64 = 0.0;
    for w in [wi, wj] {
        let n0 = [1.0, 0.0];
        let n1 = [0.0, 1.0];
        for f in [physical_flux(g, w, n0), physical_flux(g, w, n1)] {
            for x in f {
                s = s.max(x.abs());
            }
        }
        s = s.max(0.5 * g * (w.th1() + w.th2()).powi(2));
    }
    s
}

/// Roe state of docs/numerics.md, computed here independently: arithmetic-mean thicknesses and
/// sqrt-weighted normal velocities.
pub fn roe_state(wi: &Side<f64>, wj: &Side<f64>, n: [f64; 2]) -> (f64, f64, f64, f64) {
    let qn = |q: [f64; 2]| q[0] * n[0] + q[1] * n[1];
    let avg = |hi: f64, qi: [f64; 2], hj: f64, qj: [f64; 2]| {
        let (si, sj) = (hi.sqrt(), hj.sqrt());
        (0.5 * (hi + hj), (si * qn(qi) / hi + sj * qn(qj) / hj) / (si + sj))
    };
    let (h1, u1) = avg(wi.th1(), wi.q1, wj.th1(), wj.q1);
    let (h2, u2) = avg(wi.th2(), wi.q2, wj.th2(), wj.q2);
    (h1, u1, h2, u2)
}

/// Per-layer eigenvalues of one side's own matrix A, as nalgebra gives them.
pub fn side_ref_eig(g: f64, r: f64, w: &Side<f64>, n: [f64; 2]) -> RefEig {
    let qn = |q: [f64; 2]| q[0] * n[0] + q[1] * n[1];
    ref_eig(&matrix_a(g, r, w.th1(), qn(w.q1) / w.th1(), w.th2(), qn(w.q2) / w.th2()))
}

/// Whether `eigenvalues::<T>` is right (against nalgebra, for the T-rounded data) at this
/// state. The edge-flux tests check properties of the flux *given* a correct spectrum; they
/// skip, count and bound the states where the spectrum itself is wrong, because those are
/// the subject of `eigenvalues_match_nalgebra_random_states` (which fails on them).
/// States too close to the hyperbolicity boundary to classify are also skipped.
pub fn spectrum_ok<T: Real>(r: f64, h1: f64, u1: f64, h2: f64, u2: f64) -> bool {
    let is_f64 = T::EPS.f64() < 1e-10;
    // f32: values to 1e-4 of L (~1000 eps32) and a classification margin of 1e-2 L (a double
    // root moves by ~sqrt(eps32) L ~ 3.5e-4 L under rounding).
    let (rel, gap_coef, margin) = if is_f64 { (EIG_REL_TOL, EIG_GAP_COEF, CLASS_MARGIN) } else { (1e-4, 1e-4, 1e-2) };
    let c = |x: f64| T::c(x);
    // f32 runs the same algorithm: where it is wrong in f64 (e.g. Newton not converged in
    // its 12 steps) the f32 result is no better, so require the f64 one to be right too.
    if !is_f64 && !spectrum_ok::<f64>(c(r).f64(), c(h1).f64(), c(u1).f64(), c(h2).f64(), c(u2).f64()) {
        return false;
    }
    let e = eigenvalues(c(G), c(r), c(h1), c(u1), c(h2), c(u2));
    let lam = e.lambda.map(|x| x.f64());
    let re = ref_eig(&matrix_a(c(G).f64(), c(r).f64(), c(h1).f64(), c(u1).f64(), c(h2).f64(), c(u2).f64()));
    let l = re.max_abs;
    match re.class {
        Class::Real if re.min_gap > margin * l => {
            let tol = (rel * l).max(gap_coef * l * l / re.min_gap);
            e.hyperbolic && (0..4).all(|k| (lam[k] - re.real[k]).abs() <= tol)
        }
        Class::OnePair if re.max_im > margin * l => {
            let pair_re = re.all.iter().find(|z| z.im != 0.0).unwrap().re;
            !e.hyperbolic
                && (lam[0] - re.real[0]).abs() <= rel * l
                && (lam[3] - re.real[1]).abs() <= rel * l
                && lam[1] == lam[2]
                && (lam[1] - pair_re).abs() <= rel * l
        }
        _ => false,
    }
}

/// `spectrum_ok` for the three spectra an edge flux uses: the Roe state's and, for the
/// entropy fix, each side's own.
pub fn edge_spectra_ok<T: Real>(r: f64, wi: &Side<f64>, wj: &Side<f64>, n: [f64; 2]) -> bool {
    let qn = |q: [f64; 2]| q[0] * n[0] + q[1] * n[1];
    let (h1, u1, h2, u2) = roe_state(wi, wj, n);
    spectrum_ok::<T>(r, h1, u1, h2, u2)
        && [wi, wj].iter().all(|w| spectrum_ok::<T>(r, w.th1(), qn(w.q1) / w.th1(), w.th2(), qn(w.q2) / w.th2()))
}

/// At most this fraction of random edges may be skipped by `edge_spectra_ok`, or the flux
/// tests would test too little (observed: 3-9% of random edges, 16% of the strongly sheared
/// non-hyperbolic edges at r = 0.998; mostly thin, strongly sheared layers).
pub const MAX_SKIPPED: f64 = 0.25;

// ---------------------------------------------------------------------------------------
// Random states.
// ---------------------------------------------------------------------------------------

/// q = h (un n + ut t), with un, ut in [-UMAX, UMAX]: normal velocities in [-3, 3].
pub fn momentum(h: f64, un: f64, ut: f64, n: [f64; 2]) -> [f64; 2] {
    let t = [-n[1], n[0]];
    [h * (un * n[0] + ut * t[0]), h * (un * n[1] + ut * t[1])]
}

pub fn random_side(rng: &mut Rng, n: [f64; 2]) -> Side<f64> {
    let (h1, h2) = (rng.thickness(), rng.thickness());
    let (un1, ut1, un2, ut2) =
        (rng.range(-UMAX, UMAX), rng.range(-UMAX, UMAX), rng.range(-UMAX, UMAX), rng.range(-UMAX, UMAX));
    side(h1, momentum(h1, un1, ut1, n), h2, momentum(h2, un2, ut2, n), rng.range(0.0, 20.0))
}

pub fn to_t<T: Real>(w: &Side<f64>) -> Side<T> {
    Side {
        d1: T::c(w.d1),
        q1: [T::c(w.q1[0]), T::c(w.q1[1])],
        d2: T::c(w.d2),
        q2: [T::c(w.q2[0]), T::c(w.q2[1])],
        depth: T::c(w.depth),
    }
}

pub fn flux_f64<T: Real>(f: &EdgeFlux<T>) -> ([f64; 6], [f64; 6]) {
    (f.i.map(|x| x.f64()), f.j.map(|x| x.f64()))
}

pub fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

pub fn all_finite(a: &[f64]) -> bool {
    a.iter().all(|x| x.is_finite())
}

pub fn rot(v: [f64; 2], th: f64) -> [f64; 2] {
    let (s, c) = th.sin_cos();
    [c * v[0] - s * v[1], s * v[0] + c * v[1]]
}

/// Rotate the momentum components (1,2) and (4,5) of an x-y flux by `th`.
pub fn rot_flux(f: [f64; 6], th: f64) -> [f64; 6] {
    let a = rot([f[1], f[2]], th);
    let b = rot([f[4], f[5]], th);
    [f[0], a[0], a[1], f[3], b[0], b[1]]
}

pub fn hydrostatic(g: f64, w: &Side<f64>, n: [f64; 2]) -> [f64; 6] {
    let (p1, p2) = (0.5 * g * w.th1() * w.th1(), 0.5 * g * w.th2() * w.th2());
    [0.0, p1 * n[0], p1 * n[1], 0.0, p2 * n[0], p2 * n[1]]
}

pub fn side_f64<T: Real>(w: &Side<T>) -> Side<f64> {
    Side { d1: w.d1.f64(), q1: w.q1.map(|x| x.f64()), d2: w.d2.f64(), q2: w.q2.map(|x| x.f64()), depth: w.depth.f64() }
}
