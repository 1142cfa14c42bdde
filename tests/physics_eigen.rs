//! The eigenstructure of the projected two-layer matrix (`pycno::physics::eigen`) against
//! nalgebra's decomposition, in f64 and f32: eigenvalues, eigenvectors, wave strengths.
//! Random states come from a deterministic generator, so a failure is reproducible.

#[path = "common/physics.rs"]
mod shared;
#[allow(unused_imports)]
use nalgebra::{Complex, Matrix4, Vector4};
#[allow(unused_imports)]
use pycno::physics::boundary::mirror;
#[allow(unused_imports)]
use pycno::physics::eigen::{eigenvalues, eigenvector, wave_strengths, Eigenvalues};
#[allow(unused_imports)]
use pycno::physics::{numerical_flux, EdgeFlux, Model, Physics, Real, Side};
use shared::*;

// ---------------------------------------------------------------------------------------
// 1. Eigenvalues vs nalgebra (f64), and f32 vs f64.
// ---------------------------------------------------------------------------------------

#[derive(Default, Debug)]
struct EigStats {
    real: usize,
    one_pair: usize,
    two_pairs: usize,
    ambiguous: usize,
    worst_rel: f64,
}

/// Checks one state against nalgebra; Err(description) on a mismatch.
fn check_eig_state(g: f64, r: f64, h1: f64, u1: f64, h2: f64, u2: f64, st: &mut EigStats) -> Result<(), String> {
    let re = ref_eig(&matrix_a(g, r, h1, u1, h2, u2));
    let e: Eigenvalues<f64> = eigenvalues(g, r, h1, u1, h2, u2);
    let l = re.max_abs;
    let ctx = || {
        format!(
            " r={r} h1={h1} u1={u1} h2={h2} u2={u2}:\n    code     {:?} hyperbolic={}\n    nalgebra {:?}",
            e.lambda,
            e.hyperbolic,
            re.all.map(|z| (z.re, z.im))
        )
    };
    let check = |ok: bool, what: String| {
        if ok {
            Ok(())
        } else {
            Err(format!("{what}: {}", ctx()))
        }
    };
    check(e.lambda.iter().all(|x| x.is_finite()), "non-finite eigenvalue".into())?;
    match re.class {
        Class::Real => {
            st.real += 1;
            check(e.hyperbolic, format!("nalgebra: 4 real roots (min gap {:.3e}), code: not hyperbolic", re.min_gap))?;
            let tol = (EIG_REL_TOL * l).max(EIG_GAP_COEF * l * l / re.min_gap);
            for k in 0..4 {
                let err = (e.lambda[k] - re.real[k]).abs();
                st.worst_rel = st.worst_rel.max(err / tol);
                check(err <= tol, format!("lambda[{k}] off by {err:.3e} > tol {tol:.3e}"))?;
            }
        }
        Class::OnePair => {
            st.one_pair += 1;
            check(!e.hyperbolic, "nalgebra: a complex pair, code: hyperbolic".into())?;
            // The two real roots are the external ones, lambda[0] and lambda[3]; lambda[1] ==
            // lambda[2] is documented to be the real part of the complex pair.
            let tol = EIG_REL_TOL * l;
            let pair_re = re.all.iter().find(|z| z.im != 0.0).unwrap().re;
            let errs =
                [(e.lambda[0] - re.real[0]).abs(), (e.lambda[3] - re.real[1]).abs(), (e.lambda[1] - pair_re).abs()];
            for (k, err) in errs.into_iter().enumerate() {
                st.worst_rel = st.worst_rel.max(err / tol);
                check(err <= tol, format!("non-hyperbolic: root {k} (0: lambda[0], 1: lambda[3], 2: Re of the pair) off by {err:.3e} > {tol:.3e}"))?;
            }
            check(e.lambda[1] == e.lambda[2], "non-hyperbolic: lambda[1] != lambda[2]".into())?;
        }
        Class::TwoPairs => {
            st.two_pairs += 1;
            check(!e.hyperbolic, "nalgebra: two complex pairs, code: hyperbolic".into())?;
        }
        Class::Ambiguous => st.ambiguous += 1,
    }
    Ok(())
}

/// Critical shear s* > 0 (u2 = u1 - s*) where nalgebra's spectrum first turns complex,
/// by scanning then bisecting; None if no loss of hyperbolicity below 3 external speeds.
fn critical_shear(g: f64, r: f64, h1: f64, u1: f64, h2: f64) -> Option<f64> {
    let complex = |s: f64| {
        let ev = matrix_a(g, r, h1, u1, h2, u1 - s).complex_eigenvalues();
        ev.iter().any(|z| z.im != 0.0)
    };
    let ce = (g * (h1 + h2)).sqrt();
    let mut lo = 0.0;
    let mut hi = None;
    for k in 1..=600 {
        let s = k as f64 * 0.005 * ce;
        if complex(s) {
            hi = Some(s);
            break;
        }
        lo = s;
    }
    let mut hi = hi?;
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if complex(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(0.5 * (lo + hi))
}

/// Random states over the whole range of the brief: h1, h2 in [0.05, 10], u1, u2 in [-3, 3],
/// every r of RS. Counts the states where the code disagrees with nalgebra and prints the
/// first few, with the fraction per density ratio.
#[test]
fn eigenvalues_match_nalgebra_random_states() {
    let mut rng = Rng::new(1);
    let mut st = EigStats::default();
    let mut fails: Vec<String> = Vec::new();
    let mut per_r = [(0usize, 0usize); RS.len()];
    for _ in 0..60_000 {
        let ir = (rng.next_u64() % RS.len() as u64) as usize;
        let r = RS[ir];
        let (h1, h2) = (rng.thickness(), rng.thickness());
        let (u1, u2) = (rng.range(-UMAX, UMAX), rng.range(-UMAX, UMAX));
        per_r[ir].0 += 1;
        if let Err(e) = check_eig_state(G, r, h1, u1, h2, u2, &mut st) {
            per_r[ir].1 += 1;
            fails.push(e);
        }
    }
    eprintln!("random states: {st:?}");
    for (k, (n, f)) in per_r.iter().enumerate() {
        eprintln!("  r = {}: {f} of {n} states disagree with nalgebra", RS[k]);
    }
    // The draw must exercise both branches, or the test checks nothing on one of them.
    assert!(st.real > 5_000 && st.one_pair > 1_000, "too few states of a class: {st:?}");
    assert!(
        fails.is_empty(),
        "{} of 60000 random states disagree with nalgebra; the first for each r:\n{}",
        fails.len(),
        RS.iter()
            .filter_map(|r| fails.iter().find(|f| f.contains(&format!(" r={r} "))).cloned())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Density ratios for which the near-boundary test passes; r = 0.2 hits the Newton bug
/// above (its critical shear is several m/s, so the layers are strongly sheared there).
const RS_NEAR: [f64; 5] = [0.998, 0.98, 0.9, 0.7, 0.5];

/// States on both sides of the first loss of hyperbolicity (shear increasing from 0), found
/// by bisection on nalgebra's spectrum, offset by 1e-7 .. 1e-1 relative, plus states inside
/// the hyperbolic region below it. This is the regime of the paper's internal dam break.
#[test]
fn eigenvalues_match_nalgebra_near_hyperbolicity_boundary() {
    let mut rng = Rng::new(2);
    let mut st = EigStats::default();
    let mut n_boundaries = 0;
    for _ in 0..4_000 {
        let r = rng.pick(&RS_NEAR);
        let (h1, h2) = (rng.thickness(), rng.thickness());
        let u1 = rng.range(-UMAX, UMAX);
        let Some(sc) = critical_shear(G, r, h1, u1, h2) else {
            continue;
        };
        n_boundaries += 1;
        for k in 0..10 {
            let s = if k < 8 {
                // Relative offset from the boundary, log-uniform in [1e-7, 1e-1], either side.
                let eps = 10f64.powf(rng.range(-7.0, -1.0)) * if rng.unit() < 0.5 { -1.0 } else { 1.0 };
                sc * (1.0 + eps)
            } else {
                sc * rng.unit()
            };
            // Shear in either direction: (u1, u1 - s) or its mirror image (-u1, -u1 + s).
            let (a, b) = if rng.unit() < 0.5 { (u1, u1 - s) } else { (-u1, -u1 + s) };
            check_eig_state(G, r, h1, a, h2, b, &mut st).unwrap_or_else(|e| panic!("{e}"));
        }
    }
    eprintln!("near boundary: {n_boundaries} boundaries, {st:?}");
    assert!(n_boundaries > 1_000, "too few boundaries found: {n_boundaries}");
    assert!(st.real > 3_000 && st.one_pair > 3_000, "too few classified states: {st:?}");
    // Ambiguous states are those within rounding of the boundary; they must stay a minority
    // or the classification above tested little.
    assert!(st.ambiguous * 4 < st.real + st.one_pair, "{st:?}");
}

#[test]
fn eigenvalues_f32_match_f64_paper_density_ratio() {
    let mut rng = Rng::new(3);
    let r64 = 0.998f32 as f64; // the f32 value of r, so that the reference sees the same data
    let g64 = G as f32 as f64;
    let (mut worst_ext, mut worst_int) = (0.0f64, 0.0f64);
    let mut n = 0;
    for k in 0..40_000 {
        let (h1, h2) = (rng.thickness() as f32, rng.thickness() as f32);
        // A quarter at rest, the rest sheared up to half the approximate critical shear
        // sqrt(g' (h1 + h2)), so the f64 state is hyperbolic with a margin.
        let (u1, u2) = if k % 4 == 0 {
            (0.0f32, 0.0f32)
        } else {
            let sc = ((1.0 - r64) * g64 * (h1 + h2) as f64).sqrt();
            let um = rng.range(-UMAX, UMAX);
            let s = rng.range(-0.5, 0.5) * sc;
            ((um + 0.5 * s) as f32, (um - 0.5 * s) as f32)
        };
        let e32: Eigenvalues<f32> = eigenvalues(g64 as f32, r64 as f32, h1, u1, h2, u2);
        let e64: Eigenvalues<f64> = eigenvalues(g64, r64, h1 as f64, u1 as f64, h2 as f64, u2 as f64);
        assert!(e64.hyperbolic, "f64 not hyperbolic at h1={h1} u1={u1} h2={h2} u2={u2}");
        assert!(
            e32.hyperbolic,
            "f32 not hyperbolic at h1={h1} u1={u1} h2={h2} u2={u2}: f32 {:?}, f64 {:?}",
            e32.lambda, e64.lambda
        );
        let l = e64.lambda[0].abs().max(e64.lambda[3].abs());
        let cint = 0.5 * (e64.lambda[2] - e64.lambda[1]);
        for k in [0, 3] {
            let rel = (e32.lambda[k] as f64 - e64.lambda[k]).abs() / l;
            worst_ext = worst_ext.max(rel);
            assert!(
                rel <= F32_EXT_TOL,
                "external lambda[{k}] f32 rel error {rel:.3e} at h1={h1} u1={u1} h2={h2} u2={u2}"
            );
        }
        for k in [1, 2] {
            let rel = (e32.lambda[k] as f64 - e64.lambda[k]).abs() / cint;
            worst_int = worst_int.max(rel);
            assert!(
                rel <= F32_INT_TOL,
                "internal lambda[{k}] f32 error {rel:.3e} of the internal speed {cint:.4e} at h1={h1} u1={u1} h2={h2} u2={u2}: f32 {:?} f64 {:?}",
                e32.lambda,
                e64.lambda
            );
        }
        n += 1;
    }
    eprintln!("f32 vs f64 (r=0.998), {n} states: worst external {worst_ext:.3e} of max|lambda|, worst internal {worst_int:.3e} of c_int");
}

// ---------------------------------------------------------------------------------------
// 2. Eigenvectors.
// ---------------------------------------------------------------------------------------

/// The formula (1, l, a, a l), a = ((l - u1)^2 - g h1)/(g h1), for every root of A. The
/// roots are nalgebra's, so that this tests `eigenvector` itself (the code's own roots are
/// tested against nalgebra above). Half the states lie near the hyperbolicity boundary,
/// where the two internal eigenvectors nearly coincide.
#[test]
fn eigenvectors_satisfy_a_v_equals_lambda_v() {
    let mut rng = Rng::new(4);
    let mut worst = 0.0f64;
    let mut n = 0;
    for k in 0..40_000 {
        let r = rng.pick(&RS);
        let (h1, h2) = (rng.thickness(), rng.thickness());
        let u1 = rng.range(-UMAX, UMAX);
        let u2 = if k % 2 == 0 {
            rng.range(-UMAX, UMAX)
        } else {
            match critical_shear(G, r, h1, u1, h2) {
                Some(sc) => u1 - sc * (1.0 - 10f64.powf(rng.range(-6.0, -1.0))),
                None => continue,
            }
        };
        let re = ref_eig(&matrix_a(G, r, h1, u1, h2, u2));
        if re.class != Class::Real {
            continue;
        }
        let a = matrix_a(G, r, h1, u1, h2, u2);
        let a_norm = (0..4).map(|i| (0..4).map(|j| a[(i, j)].abs()).sum::<f64>()).fold(0.0, f64::max);
        for &lam in &re.real {
            let v = Vector4::from(eigenvector(lam, u1, 1.0 / (G * h1)));
            let res = (a * v - v * lam).amax();
            let rel = res / (a_norm * v.amax());
            worst = worst.max(rel);
            assert!(
                rel <= EVEC_REL_TOL,
                "residual {rel:.3e} for lambda={lam} at r={r} h1={h1} u1={u1} h2={h2} u2={u2}, v={v:?}"
            );
        }
        n += 1;
    }
    eprintln!("eigenvectors: {n} hyperbolic states, worst relative residual {worst:.3e}");
    assert!(n > 20_000, "too few hyperbolic states: {n}");
}

// ---------------------------------------------------------------------------------------
// 3. Wave strengths: K c = b for the eigenvector matrix K, solved in closed form.
// ---------------------------------------------------------------------------------------

/// Residual |K c - b|_inf / (|K|_inf |c|_inf + |b|_inf), in epsilons of T, for the wave
/// strengths of eigenvalues `lam` (data rounded to T first: what the code actually saw).
fn check_strengths<T: Real>(lam: [f64; 4], u1: f64, h1: f64, b: [f64; 4]) -> f64 {
    let (lam_t, u1_t, b_t) = (lam.map(T::c), T::c(u1), b.map(T::c));
    let gh1 = T::c(G) * T::c(h1);
    let c = wave_strengths(&lam_t, u1_t, gh1.sqrt(), &b_t).map(|x: T| x.f64());
    let cols: [[f64; 4]; 4] = std::array::from_fn(|k| eigenvector(lam_t[k], u1_t, T::one() / gh1).map(|x: T| x.f64()));
    let k = Matrix4::from_fn(|i, j| cols[j][i]);
    let bv = Vector4::from(b_t.map(|x| x.f64()));
    let cv = Vector4::from(c);
    assert!(all_finite(&c), "non-finite wave strengths {c:?} for lambda={lam:?}");
    let k_norm = (0..4).map(|i| (0..4).map(|j| k[(i, j)].abs()).sum::<f64>()).fold(0.0, f64::max);
    (k * cv - bv).amax() / ((k_norm * cv.amax() + bv.amax()) * T::EPS.f64())
}

#[test]
fn wave_strengths_solve_the_eigenvector_system() {
    // nalgebra's roots, so that this tests the solve and not the eigenvalue routine.
    let mut rng = Rng::new(7);
    let (mut worst64, mut worst32, mut n) = (0.0f64, 0.0f64, 0);
    for _ in 0..20_000 {
        let r = rng.pick(&RS);
        let (h1, h2) = (rng.thickness(), rng.thickness());
        let (u1, u2) = (rng.range(-UMAX, UMAX), rng.range(-UMAX, UMAX));
        let re = ref_eig(&matrix_a(G, r, h1, u1, h2, u2));
        if re.class != Class::Real {
            continue;
        }
        let lam: [f64; 4] = [re.real[0], re.real[1], re.real[2], re.real[3]];
        let max = lam.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        if lam[2] - lam[1] <= 1e-3 * max {
            continue; // the flux falls back there (nearly repeated internal eigenvalue)
        }
        let b: [f64; 4] = std::array::from_fn(|_| rng.range(-10.0, 10.0));
        let r64 = check_strengths::<f64>(lam, u1, h1, b);
        worst64 = worst64.max(r64);
        assert!(r64 <= STRENGTH_EPS_FACTOR, "f64 residual {r64:.1} eps for lambda={lam:?}");
        if lam[2] - lam[1] > 0.05 * max {
            let r32 = check_strengths::<f32>(lam, u1, h1, b);
            worst32 = worst32.max(r32);
            assert!(r32 <= STRENGTH_EPS_FACTOR, "f32 residual {r32:.1} eps for lambda={lam:?}");
        }
        // Forward error against nalgebra's LU, within the matrix's condition number.
        let cols: [[f64; 4]; 4] = std::array::from_fn(|k| eigenvector(lam[k], u1, 1.0 / (G * h1)));
        let k = Matrix4::from_fn(|i, j| cols[j][i]);
        let sv = k.singular_values();
        let c_ref = k.lu().solve(&Vector4::from(b)).unwrap();
        let c = wave_strengths(&lam, u1, (G * h1).sqrt(), &b);
        let err = (Vector4::from(c) - c_ref).amax() / c_ref.amax();
        assert!(err <= sv[0] / sv[3] * STRENGTH_EPS_FACTOR * f64::EPSILON, "wave strengths off by {err:.3e}");
        n += 1;
    }
    assert!(n > 10_000, "too few hyperbolic states: {n}");
    eprintln!("wave strengths: worst residual f64 {worst64:.2} eps, f32 {worst32:.2} eps over {n} states");
}
