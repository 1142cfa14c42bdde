//! The CUDA mirror of the physics against `src/physics`, function by function: the probe
//! kernels (`kernels/probe.cu`) evaluate the eigenvalues, the numerical flux, a boundary's
//! ghost state and flux, the source terms and the max maps' extremes on thousands of random states, in float32
//! and float64, and the results must agree with the Rust functions to rounding. The
//! `#[repr(C)]` structs passed to the kernels must have the same size on both sides.
//! Needs a GPU; where none is usable each test prints why and returns.

#[path = "common/physics.rs"]
mod shared;
use shared::*;

use pycno::physics::eigen::eigenvalues;
use pycno::physics::extremes;
use pycno::physics::{
    boundary_flux, ghost, needs_dry_flux, numerical_flux, settle, source, Boundary, BoundaryKind, EdgeFlux, Model,
    Physics, Real, Side,
};
use pycno::solver::cuda::device;
use pycno::solver::cuda::launch::{CudaReal, DeviceArrays};
use pycno::solver::cuda::probe::Probes;

const SAMPLES: usize = 20_000;

/// Run `f` with the probes of GPU 0 for `model`, or say why not.
fn with_gpu<T: CudaReal>(model: Model<T>, f: impl FnOnce(&Probes<T>)) {
    match device::probe() {
        Ok(name) => eprintln!("GPU: {name}"),
        Err(e) => return eprintln!("skipping the GPU probe test: {e:#}"),
    }
    let (ctx, module, _) = device::open(0).unwrap();
    let stream = ctx.default_stream();
    f(&Probes::new(&stream, &module, model));
}

/// Largest difference over the flux's twelve values relative to `scale`, and whether the
/// fallback flags agree.
fn flux_diff<T: Real>(a: &EdgeFlux<T>, b: &EdgeFlux<T>, scale: f64) -> f64 {
    a.i.iter()
        .chain(&a.j)
        .zip(b.i.iter().chain(&b.j))
        .map(|(x, y)| (x.f64() - y.f64()).abs() / scale)
        .fold(0.0, f64::max)
}

fn model<T: Real>(r: f64, linear_friction: f64) -> Model<T> {
    Model::new(&Physics { g: G, r, linear_friction, ..Default::default() }).unwrap()
}

fn eigenvalues_agree<T: CudaReal>(tol: f64) {
    for r in [0.998, 0.9, 0.5] {
        with_gpu(model::<T>(r, 0.0), |p| {
            let mut rng = Rng::new(101);
            let samples: Vec<[T; 4]> = (0..SAMPLES)
                .map(|_| {
                    let (h1, h2) = (rng.thickness(), rng.thickness());
                    [T::c(h1), T::c(rng.range(-UMAX, UMAX)), T::c(h2), T::c(rng.range(-UMAX, UMAX))]
                })
                .collect();
            let gpu = p.eigenvalues(&samples).unwrap();
            let (g, rr) = (T::c(G), T::c(r));
            let (mut worst, mut flag_diff) = (0.0f64, 0);
            for (x, (lam, hyp)) in samples.iter().zip(&gpu) {
                let e = eigenvalues(g, rr, x[0], x[1], x[2], x[3]);
                if e.hyperbolic != *hyp {
                    flag_diff += 1;
                    continue;
                }
                let scale = (G * (x[0].f64() + x[2].f64())).sqrt() + x[1].f64().abs().max(x[3].f64().abs());
                for (a, b) in e.lambda.iter().zip(lam) {
                    worst = worst.max((a.f64() - b.f64()).abs() / scale);
                }
            }
            eprintln!("{} r = {r}: eigenvalues differ by {worst:.2e} of the speed scale; {flag_diff} hyperbolicity flags differ", T::NAME);
            assert!(worst <= tol, "{} r = {r}: eigenvalues differ by {worst:e}", T::NAME);
            // Only states on the hyperbolicity boundary may be classified differently.
            assert!(flag_diff * 1000 <= SAMPLES, "{flag_diff} of {SAMPLES} hyperbolicity flags differ");
        });
    }
}

/// The GPU's flux against the CPU's in the same precision. Where the wave strengths are
/// ill-conditioned (nearly equal internal eigenvalues), a 1-ulp difference in one division
/// (the GPU's float32 division is within 2 ulp) moves the flux by far more than an ulp; the
/// CPU's own float32 error on that state, measured against float64, says how sensitive the
/// state is. So each sample may differ by `tol` of the flux scale plus `SENSITIVITY` times
/// the CPU's float32 error there.
fn fluxes_agree<T: CudaReal>(tol: f64) {
    const SENSITIVITY: f64 = 20.0;
    for r in [0.998, 0.9, 0.5] {
        with_gpu(model::<T>(r, 0.0), |p| {
            let mut rng = Rng::new(202);
            let samples: Vec<(Side<T>, Side<T>, [T; 2])> = (0..SAMPLES)
                .map(|_| {
                    let n = rng.unit_normal();
                    (to_t(&random_side(&mut rng, n)), to_t(&random_side(&mut rng, n)), [T::c(n[0]), T::c(n[1])])
                })
                .collect();
            let gpu = p.flux(&samples).unwrap();
            let (m, m64) = (model::<T>(r, 0.0), model::<f64>(r, 0.0));
            let (mut worst, mut flag_diff, mut compared) = (0.0f64, 0, 0);
            for ((wi, wj, n), f) in samples.iter().zip(&gpu) {
                let want = numerical_flux(&m, wi, wj, *n);
                if want.fallback != f.fallback {
                    flag_diff += 1;
                    continue;
                }
                compared += 1;
                let (wi64, wj64) = (side_f64(wi), side_f64(wj));
                let scale = flux_scale(G, &wi64, &wj64);
                let exact = numerical_flux(&m64, &wi64, &wj64, [n[0].f64(), n[1].f64()]);
                let sensitivity = flux_diff(&flux_in_f64(&want), &exact, scale);
                let excess = (flux_diff(&want, f, scale) - SENSITIVITY * sensitivity).max(0.0);
                worst = worst.max(excess);
                assert!((want.speed.f64() - f.speed.f64()).abs() <= tol * want.speed.f64().abs().max(1.0));
            }
            eprintln!(
                "{} r = {r}: {compared} fluxes differ by at most {worst:.2e} of the flux scale beyond {SENSITIVITY} times the CPU's own rounding error; {flag_diff} fallback flags differ",
                T::NAME
            );
            assert!(worst <= tol, "{} r = {r}: fluxes differ by {worst:e}", T::NAME);
            assert!(flag_diff * 1000 <= SAMPLES, "{flag_diff} of {SAMPLES} fallback flags differ");
        });
    }
}

fn flux_in_f64<T: Real>(f: &EdgeFlux<T>) -> EdgeFlux<f64> {
    EdgeFlux { i: f.i.map(|x| x.f64()), j: f.j.map(|x| x.f64()), speed: f.speed.f64(), fallback: f.fallback }
}

/// Every boundary kind, with each combination of given and open values (issue 18).
fn boundary_cases<T: Real>() -> Vec<Boundary<T>> {
    let mut cases = vec![Boundary::<T>::wall()];
    let mk = |kind: BoundaryKind, a: f64, b: f64, ga: bool, gb: bool| {
        let mut data = [T::zero(); 8];
        data[0] = T::c(a);
        data[1] = T::c(b);
        data[2] = if ga { T::one() } else { T::zero() };
        data[3] = if gb { T::one() } else { T::zero() };
        Boundary { kind: kind as i32, reserved: 0, data }
    };
    cases.push(mk(BoundaryKind::Open, 0.0, 0.0, false, false));
    for (ga, gb) in [(true, true), (true, false), (false, true)] {
        cases.push(mk(BoundaryKind::Elevation, 0.05, -0.03, ga, gb));
        cases.push(mk(BoundaryKind::Discharge, 0.4, 0.7, ga, gb));
    }
    cases
}

fn boundaries_agree<T: CudaReal>(tol: f64) {
    let m = model::<T>(0.998, 0.0);
    with_gpu(m, |p| {
        for b in boundary_cases::<T>() {
            let mut rng = Rng::new(303);
            let samples: Vec<(Side<T>, [T; 2], T)> = (0..SAMPLES)
                .map(|_| {
                    let n = rng.unit_normal();
                    (to_t(&random_side(&mut rng, n)), [T::c(n[0]), T::c(n[1])], T::c(rng.range(0.0, 100.0)))
                })
                .collect();
            let gpu = p.boundary(&b, &samples).unwrap();
            let mut worst = 0.0f64;
            for ((w, n, t), (g, f)) in samples.iter().zip(&gpu) {
                let want_ghost = ghost(&m, &b, w, *n, *t);
                let scale = w.h1(&m).f64() + w.h2(&m).f64() + 1.0;
                for (x, y) in [
                    (want_ghost.d1, g.d1),
                    (want_ghost.q1[0], g.q1[0]),
                    (want_ghost.q1[1], g.q1[1]),
                    (want_ghost.d2, g.d2),
                    (want_ghost.q2[0], g.q2[0]),
                    (want_ghost.q2[1], g.q2[1]),
                    (want_ghost.depth, g.depth),
                ] {
                    worst = worst.max((x.f64() - y.f64()).abs() / scale);
                }
                let want = boundary_flux(&m, &b, w, *n, *t);
                if b.kind == BoundaryKind::Wall as i32 {
                    // A wall's mass flux is exactly zero on both sides.
                    assert_eq!((f.i[0].f64(), f.i[3].f64(), f.j[0].f64(), f.j[3].f64()), (0.0, 0.0, 0.0, 0.0));
                }
                if b.kind == BoundaryKind::Discharge as i32 && b.data[2] == T::one() {
                    // A given discharge is exactly the mass flux.
                    assert_eq!(f.i[0], -b.data[0]);
                }
                if want.fallback == f.fallback {
                    let gs = side_f64(&want_ghost);
                    worst = worst.max(flux_diff(&want, f, flux_scale(G, &side_f64(w), &gs)));
                }
            }
            eprintln!("{}: kind {} ghost states and fluxes differ by {worst:.2e}", T::NAME, b.kind);
            assert!(worst <= tol, "{}: kind {}: ghost states or fluxes differ by {worst:e}", T::NAME, b.kind);
        }
    });
}

fn sources_agree<T: CudaReal>(tol: f64) {
    // Every source term of issue 18 on at once, and the linear friction.
    let m = Model::<T>::new(&Physics {
        g: G,
        r: 0.998,
        linear_friction: 0.05,
        manning: 0.03,
        interlayer_friction: 0.01,
        coriolis: Some(pycno::physics::model::Coriolis { f0: Some(0.7), ..Default::default() }),
        wind_stress: Some([1e-3, -2e-3]),
        ..Default::default()
    })
    .unwrap();
    with_gpu(m, |p| {
        let mut rng = Rng::new(404);
        // Half of them with layers absent, at or near the dry tolerance (issue 17): the
        // terms then act on the wet layers only.
        let samples: Vec<(Side<T>, T)> = (0..SAMPLES)
            .map(|k| {
                let n = rng.unit_normal();
                let side = if k % 2 == 0 { to_t(&random_side(&mut rng, n)) } else { wet_dry_side(&m, &mut rng) };
                (side, T::c(rng.range(1e-4, 1.0)))
            })
            .collect();
        let gpu = p.source(&samples).unwrap();
        let mut worst = 0.0f64;
        let mut changed = 0;
        for ((s, dt), g) in samples.iter().zip(&gpu) {
            let mut want = *s;
            source(&m, &mut want, *dt);
            changed += (want.q2 != s.q2) as usize;
            let scale = s.q1[0].f64().abs() + s.q1[1].f64().abs() + s.q2[0].f64().abs() + s.q2[1].f64().abs() + 1e-30;
            for (x, y) in [
                (want.q1[0], g.q1[0]),
                (want.q1[1], g.q1[1]),
                (want.q2[0], g.q2[0]),
                (want.q2[1], g.q2[1]),
                (want.d1, g.d1),
                (want.d2, g.d2),
            ] {
                worst = worst.max((x.f64() - y.f64()).abs() / scale);
            }
        }
        eprintln!("{}: source terms differ by {worst:.2e} of the momentum", T::NAME);
        assert!(changed > SAMPLES / 2, "the friction changed too few states ({changed}): the test tests nothing");
        assert!(worst <= tol, "{}: source terms differ by {worst:e}", T::NAME);
    });
}

/// The extremes (max maps) started from a state and folded with one, on random states and
/// extremes: every operation is rounded on its own on both sides, so they agree bit for bit.
fn extremes_agree<T: CudaReal>() {
    let m64 = model::<f64>(0.998, 0.0);
    with_gpu(model::<T>(0.998, 0.0), |p| {
        let mut rng = Rng::new(505);
        for surface in [false, true] {
            let a = extremes::Arrival { threshold: 0.01, surface };
            let t = 1.25;
            let states: Vec<[T; 6]> = (0..SAMPLES)
                .map(|_| {
                    let n = rng.unit_normal();
                    let s = random_side(&mut rng, n);
                    [s.h1(&m64), s.q1[0], s.q1[1], s.h2(&m64), s.q2[0], s.q2[1]].map(T::c)
                })
                .collect();
            // Extremes around each state, so that about half of every comparison goes each way.
            let ext: Vec<[f64; extremes::WIDTH]> = states
                .iter()
                .map(|x| {
                    let mut e = extremes::start(x[0], x[1], x[2], x[3], x[4], x[5], a);
                    for x in &mut e[..5] {
                        *x *= rng.range(0.97, 1.03);
                    }
                    e[extremes::E_REFERENCE] += rng.range(-0.02, 0.02);
                    e[extremes::E_ARRIVAL] = if rng.unit() < 0.3 { 0.5 } else { extremes::NOT_ARRIVED };
                    e
                })
                .collect();
            let gpu = p.extremes(&states, &ext, t, a).unwrap();
            let mut arrived = 0;
            for ((x, e), (g_start, g_fold)) in states.iter().zip(&ext).zip(&gpu) {
                let start = extremes::start(x[0], x[1], x[2], x[3], x[4], x[5], a);
                let mut fold = *e;
                extremes::fold(&mut fold, x[0], x[1], x[2], x[3], x[4], x[5], t, a);
                assert_eq!(start.map(f64::to_bits), g_start.map(f64::to_bits), "{}: start of {x:?}", T::NAME);
                assert_eq!(fold.map(f64::to_bits), g_fold.map(f64::to_bits), "{}: fold of {x:?} into {e:?}", T::NAME);
                arrived += (fold[extremes::E_ARRIVAL] == t) as usize;
            }
            assert!(arrived > SAMPLES / 10, "too few arrivals ({arrived}): the test tests little");
        }
    });
}

#[test]
fn probe_extremes_f32() {
    extremes_agree::<f32>();
}
#[test]
fn probe_extremes_f64() {
    extremes_agree::<f64>();
}

#[test]
fn probe_eigenvalues_f64() {
    eigenvalues_agree::<f64>(1e-11);
}
#[test]
fn probe_eigenvalues_f32() {
    eigenvalues_agree::<f32>(5e-5);
}
#[test]
fn probe_flux_f64() {
    fluxes_agree::<f64>(1e-9);
}
#[test]
fn probe_flux_f32() {
    fluxes_agree::<f32>(1e-4);
}
#[test]
fn probe_boundary_f64() {
    boundaries_agree::<f64>(1e-9);
}
#[test]
fn probe_boundary_f32() {
    boundaries_agree::<f32>(2e-3);
}
#[test]
fn probe_source_f64() {
    sources_agree::<f64>(1e-13);
}
#[test]
fn probe_source_f32() {
    sources_agree::<f32>(1e-5);
}

/// A side where each layer is absent, below the dry tolerance, thin or thick (issue 17),
/// over a bottom that may be above the reference level, stored as the solver stores it.
fn wet_dry_side<T: Real>(m: &Model<T>, rng: &mut Rng) -> Side<T> {
    let mut h = || match rng.next_u64() % 4 {
        0 => 0.0,
        1 => rng.range(0.0, 1e-3),
        2 => rng.range(1e-3, 1e-2),
        _ => rng.range(0.0, 10.0),
    };
    let (h1, h2) = (h(), h());
    let depth = rng.range(-2.0, 10.0);
    let mut u = || [rng.range(-3.0, 3.0), rng.range(-3.0, 3.0)];
    let (u1, u2) = (u(), u());
    let c = |x: f64| T::c(x);
    let mut s =
        Side::from_thickness(m, c(h1), [c(h1 * u1[0]), c(h1 * u1[1])], c(h2), [c(h2 * u2[0]), c(h2 * u2[1])], c(depth));
    settle(m, &mut s, &mut [T::zero(); 2]);
    s
}

/// The dry-aware flux (`physics/wetdry.rs`, `kernels/wetdry.cuh`) on random wet/dry edges,
/// every one of which takes it: the GPU equals the CPU to `tol` of the flux scale
/// (`g h²` of the thickest layer, at least 1) and the speeds agree.
fn dry_fluxes_agree<T: CudaReal>(tol: f64) {
    for r in [0.998, 0.9] {
        let m = model::<T>(r, 0.0);
        with_gpu(m, |p| {
            let mut rng = Rng::new(1717);
            let mut samples = Vec::new();
            while samples.len() < SAMPLES {
                let (wi, wj) = (wet_dry_side(&m, &mut rng), wet_dry_side(&m, &mut rng));
                if needs_dry_flux(&m, wi.h1(&m), wi.h2(&m), wj.h1(&m), wj.h2(&m)) {
                    let n = rng.unit_normal();
                    samples.push((wi, wj, [T::c(n[0]), T::c(n[1])]));
                }
            }
            let gpu = p.flux(&samples).unwrap();
            let mut worst = 0.0f64;
            for ((wi, wj, n), f) in samples.iter().zip(&gpu) {
                let want = numerical_flux(&m, wi, wj, *n);
                let hmax = [wi.h1(&m), wi.h2(&m), wj.h1(&m), wj.h2(&m)].iter().fold(1.0f64, |a, h| a.max(h.f64()));
                let scale = G * hmax * hmax;
                worst = worst.max(flux_diff(&want, f, scale));
                assert!(!f.fallback, "the dry-aware flux never falls back");
                assert!((want.speed.f64() - f.speed.f64()).abs() <= tol * want.speed.f64().abs().max(1.0));
            }
            eprintln!(
                "{} r = {r}: {SAMPLES} dry-aware fluxes differ by at most {worst:.2e} of the flux scale",
                T::NAME
            );
            assert!(worst <= tol, "{} r = {r}: dry-aware fluxes differ by {worst:e}", T::NAME);
        });
    }
}

/// `settle` (momentum dropped at or below the tolerance, rounding clamped to zero, the
/// admissibility flag) on states with thicknesses around zero: the GPU equals the CPU bit
/// for bit (it only compares and copies).
fn settles_agree<T: CudaReal>() {
    let m = model::<T>(0.9, 0.0);
    with_gpu(m, |p| {
        let mut rng = Rng::new(1718);
        let samples: Vec<(Side<T>, [T; 2])> = (0..SAMPLES)
            .map(|_| {
                let h = |rng: &mut Rng| rng.range(-2e-3, 2e-3);
                let (h1, h2, depth) = (h(&mut rng), h(&mut rng), rng.range(-2.0, 10.0));
                let c = |x: f64| T::c(x);
                let s = Side::from_thickness(&m, c(h1), [c(0.1), c(-0.2)], c(h2), [c(0.3), c(0.4)], c(depth));
                (s, [c(1e-9), c(-1e-9)])
            })
            .collect();
        let gpu = p.settle(&samples).unwrap();
        let mut clamped = 0;
        for ((s, lo), (g, glo, gok)) in samples.iter().zip(&gpu) {
            let (mut want, mut wlo) = (*s, *lo);
            let ok = settle(&m, &mut want, &mut wlo);
            clamped += (wlo != *lo) as usize;
            assert_eq!((want, wlo, ok), (*g, *glo, *gok), "settle differs on {s:?}");
        }
        assert!(clamped > SAMPLES / 10, "too few clamped states ({clamped}): the test tests nothing");
    });
}

#[test]
fn probe_dry_flux_f64() {
    dry_fluxes_agree::<f64>(1e-12);
}
#[test]
fn probe_dry_flux_f32() {
    dry_fluxes_agree::<f32>(1e-5);
}
#[test]
fn probe_settle_f64() {
    settles_agree::<f64>();
}
#[test]
fn probe_settle_f32() {
    settles_agree::<f32>();
}

#[test]
fn kernel_structs_have_the_same_size_on_both_sides() {
    fn check<T: CudaReal>() {
        with_gpu(model::<T>(0.998, 0.0), |p| {
            let [m, b, a] = p.struct_sizes().unwrap();
            assert_eq!(m as usize, std::mem::size_of::<Model<T>>(), "Model<{}>", T::NAME);
            assert_eq!(b as usize, std::mem::size_of::<Boundary<T>>(), "Boundary<{}>", T::NAME);
            assert_eq!(a as usize, std::mem::size_of::<DeviceArrays>(), "Arrays<{}>", T::NAME);
        });
    }
    check::<f32>();
    check::<f64>();
}
