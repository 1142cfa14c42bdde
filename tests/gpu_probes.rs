//! The CUDA mirror of the physics against `src/physics`, function by function: the probe
//! kernels (`kernels/probe.cu`) evaluate the eigenvalues, the numerical flux, a boundary's
//! ghost state and flux, the source terms and the max maps' extremes on thousands of random states, in float32
//! and float64, and the results must agree with the Rust functions to rounding. The
//! `#[repr(C)]` structs passed to the kernels must have the same size on both sides.
//! Needs a GPU; where none is usable each test prints why and returns.

#[path = "common/physics.rs"]
mod shared;
#[path = "common/skip.rs"]
mod skip;
use shared::*;

use pycno::physics::eigen::eigenvalues;
use pycno::physics::extremes;
use pycno::physics::{
    boundary_flux, ghost, needs_dry_flux, numerical_flux, settle, source, Boundary, BoundaryKind, EdgeFlux, Model,
    Physics, Real, Side,
};
use pycno::solver::cuda::device;
use pycno::solver::cuda::launch::{CudaReal, DeviceArrays};
use pycno::solver::cuda::order2::Order2Device;
use pycno::solver::cuda::probe::Probes;

const SAMPLES: usize = 20_000;

/// Run `f` with the probes of GPU 0 for `model`, or say why not.
fn with_gpu<T: CudaReal>(model: Model<T>, f: impl FnOnce(&Probes<T>)) {
    match device::probe() {
        Ok(name) => eprintln!("GPU: {name}"),
        Err(e) => return skip::skipped(&format!("no usable GPU for the probe test: {e:#}")),
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
            // One state in ten without a lower layer and one without an upper layer (their
            // speed is 0, not 0/0).
            let states: Vec<[T; 6]> = (0..SAMPLES)
                .map(|k| {
                    let n = rng.unit_normal();
                    let s = random_side(&mut rng, n);
                    let mut x = [s.h1(&m64), s.q1[0], s.q1[1], s.h2(&m64), s.q2[0], s.q2[1]];
                    match k % 10 {
                        0 => x[3..].fill(0.0),
                        1 => x[..3].fill(0.0),
                        _ => {}
                    }
                    x.map(T::c)
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
            let [m, b, a, o] = p.struct_sizes().unwrap();
            assert_eq!(m as usize, std::mem::size_of::<Model<T>>(), "Model<{}>", T::NAME);
            assert_eq!(b as usize, std::mem::size_of::<Boundary<T>>(), "Boundary<{}>", T::NAME);
            assert_eq!(a as usize, std::mem::size_of::<DeviceArrays>(), "Arrays<{}>", T::NAME);
            assert_eq!(o as usize, std::mem::size_of::<Order2Device>(), "Order2Arrays<{}>", T::NAME);
        });
    }
    check::<f32>();
    check::<f64>();
}

// ---------------------------------------------------------------------------------------
// Second order (issue 21): kernels/reconstruct.cuh against src/physics/reconstruct.rs.
// ---------------------------------------------------------------------------------------

use pycno::physics::reconstruct::{self, Stencil, ACROSS_OPEN, ACROSS_WALL, VARS};
use pycno::solver::cuda::probe::{BoundaryEdge2, CellInput, Edge2, InteriorInput};

/// The model of the second-order probes: a rest state away from zero, so that every
/// reference term of the conversions counts.
fn model2<T: Real>(r: f64) -> Model<T> {
    let reference = Some(pycno::physics::Reference { surface: 0.0, interface: -2.0 });
    Model::new(&Physics { g: G, r, reference, ..Default::default() }).unwrap()
}

/// Records `(d1, q1x, q1y, H)`, `(d2, q2x, q2y, area)` of a state given by thicknesses and
/// velocities.
fn records<T: Real>(
    m: &Model<T>,
    h1: f64,
    u1: [f64; 2],
    h2: f64,
    u2: [f64; 2],
    depth: f64,
    area: f64,
) -> ([T; 4], [T; 4]) {
    let c = |x: f64| T::c(x);
    let s =
        Side::from_thickness(m, c(h1), [c(h1 * u1[0]), c(h1 * u1[1])], c(h2), [c(h2 * u2[0]), c(h2 * u2[1])], c(depth));
    ([s.d1, s.q1[0], s.q1[1], s.depth], [s.d2, s.q2[0], s.q2[1], c(area)])
}

/// Cells to reconstruct: every cell of a mesh of the square [-5, 5]^2 (walls, a third of its
/// boundary slots made open), under four fields: both layers thick, smooth with noise (the
/// limiter clips); the upper layer absent where x < 0 (the interface alone reconstructed);
/// the lower layer absent over a bottom above the interface where x > 1; thin films in a band
/// (first order there). Stencils in the run's precision, as `Layout` rounds them.
fn cells_to_reconstruct<T: Real>(m: &Model<T>) -> Vec<CellInput<T>> {
    let s = pycno::scenario::Scenario::from_json(
        r#"{ "name": "probe", "domain": { "outer": [[-5,-5],[5,-5],[5,5],[-5,5]] }, "resolution": { "cells": 5000 },
             "bathymetry": { "type": "constant", "depth": 5 }, "initial": { "type": "at_rest", "interface": -2, "surface": 0 },
             "time": { "end": 1 } }"#,
    )
    .unwrap();
    let pm = pycno::app::scenario_mesh(&s).unwrap();
    let n = pm.topo.num_cells();
    let lay = pycno::solver::Layout::<T>::from_topology(
        &pm.topo,
        &vec![5.0; n],
        &vec![pycno::physics::CellState::at_rest(2.0, 3.0); n],
        &pycno::physics::Reference { surface: 0.0, interface: -2.0 },
    );
    let mut rng = Rng::new(2121);
    let mut out = Vec::new();
    for field in 0..4 {
        let state: Vec<([T; 4], [T; 4])> = (0..n)
            .map(|c| {
                let [x, y] = pm.topo.cell_centroid[c];
                let noise = |rng: &mut Rng, a: f64| rng.range(-a, a);
                let depth = 5.0 + 0.5 * (0.3 * x).sin();
                let mut h2 = 2.5 + 0.8 * (0.7 * x + 0.4 * y).sin() + noise(&mut rng, 0.2);
                let mut h1 = 3.0 + 0.5 * (0.5 * y).cos() + noise(&mut rng, 0.2);
                let u1 = [0.5 * (0.4 * y).sin() + noise(&mut rng, 0.3), 0.3 * x.cos() + noise(&mut rng, 0.3)];
                let u2 = [0.2 * (0.6 * x).cos() + noise(&mut rng, 0.3), noise(&mut rng, 0.3)];
                let mut d = depth;
                match field {
                    1 if x < 0.0 => {
                        h1 = 0.0;
                        h2 = depth + 0.3 * (0.8 * y).sin() + noise(&mut rng, 0.1);
                    }
                    2 if x > 1.0 => {
                        d = 1.5 + 0.2 * y.sin();
                        h2 = 0.0;
                        h1 = d + noise(&mut rng, 0.1);
                    }
                    3 if x.abs() < 1.5 => h1 = rng.range(0.0, 3.0 * m.thin.f64()),
                    _ => {}
                }
                records(m, h1, u1, h2, u2, d, pm.topo.cell_area[c])
            })
            .collect();
        for c in 0..n {
            let mut across = lay.across[c];
            for o in &mut across {
                if *o == ACROSS_WALL && rng.unit() < 0.33 {
                    *o = ACROSS_OPEN;
                }
            }
            let nb = across.map(|o| state[if o >= 0 { o as usize } else { c }]);
            out.push(CellInput { a: state[c].0, b: state[c].1, across, nb, st: lay.stencil[c] });
        }
    }
    out
}

fn widen4<T: Real>(x: [T; 4]) -> [f64; 4] {
    x.map(|v| v.f64())
}

/// The CPU's reconstruction of `c` in float64 from the same (widened) inputs: the float32
/// reconstruction's own rounding error, which says how sensitive the cell is.
fn cell_f64<T: Real>(m: &Model<f64>, c: &CellInput<T>) -> reconstruct::Reconstruction64 {
    let st = Stencil {
        w: c.st.w.map(|v| v.map(|x| x.f64())),
        r: c.st.r.map(|v| v.map(|x| x.f64())),
        ln: c.st.ln.map(|v| v.map(|x| x.f64())),
    };
    let nb = c.nb.map(|(a, b)| (widen4(a), widen4(b)));
    reconstruct::cell(m, widen4(c.a), widen4(c.b), c.across, &nb, &st)
}

/// The largest difference between two reconstructions of a cell: the faces relative to
/// `scale`, the gradients times the largest midpoint offset (the change they make across the
/// cell) relative to it.
fn reconstruction_diff(
    a: &([[f64; 2]; VARS], [[f64; VARS]; 3]),
    b: &([[f64; 2]; VARS], [[f64; VARS]; 3]),
    reach: f64,
    scale: f64,
) -> f64 {
    let g = a.0.iter().flatten().zip(b.0.iter().flatten()).map(|(x, y)| (x - y).abs() * reach);
    let f = a.1.iter().flatten().zip(b.1.iter().flatten()).map(|(x, y)| (x - y).abs());
    g.chain(f).fold(0.0, f64::max) / scale
}

fn widen_rec<T: Real>(r: &([[T; 2]; VARS], [[T; VARS]; 3])) -> ([[f64; 2]; VARS], [[f64; VARS]; 3]) {
    (r.0.map(|v| v.map(|x| x.f64())), r.1.map(|v| v.map(|x| x.f64())))
}

/// One cell's reconstruction (`rc_cell`, which the reconstruction kernel runs) against
/// `reconstruct::cell`: every cell of four fields (cells_to_reconstruct). Each cell may differ
/// by `tol` of its scale plus `SENSITIVITY` times the CPU's own float32 error there (as the
/// flux probe: the limiter's minimum and the first-order switches make the reconstruction
/// discontinuous in its inputs); at most one cell in a thousand beyond that (a switch that a
/// rounding flips). Cells with no gradient hand over their stored numbers bit for bit.
fn reconstructions_agree<T: CudaReal>(tol: f64) {
    const SENSITIVITY: f64 = 20.0;
    let m = model2::<T>(0.9);
    let m64 = model2::<f64>(0.9);
    with_gpu(m, |p| {
        let cells = cells_to_reconstruct(&m);
        let gpu = p.reconstruct(&cells).unwrap();
        let (mut worst, mut beyond, mut flat, mut limited) = (0.0f64, 0, 0, 0);
        for (c, got) in cells.iter().zip(&gpu) {
            let want = reconstruct::cell(&m, c.a, c.b, c.across, &c.nb, &c.st);
            let all = [c.a, c.b].into_iter().chain(c.nb.iter().flat_map(|n| [n.0, n.1]));
            let scale = 1.0 + all.flat_map(|r| r[..3].to_vec()).fold(0.0f64, |s, x| s.max(x.f64().abs()));
            let reach = c.st.r.iter().flatten().fold(0.0f64, |s, x| s.max(x.f64().abs()));
            let (cpu_flat, gpu_flat) =
                (want.0.iter().flatten().all(|&x| x == T::zero()), got.0.iter().flatten().all(|&x| x == T::zero()));
            if cpu_flat && gpu_flat {
                flat += 1;
                let bits = |f: &[T; VARS]| f.map(|x| x.f64().to_bits());
                let stored = [c.a[0], c.a[1], c.a[2], c.b[0], c.b[1], c.b[2]];
                for f in &got.1 {
                    assert_eq!(bits(f), bits(&stored), "{}: a first-order cell changed its numbers: {c:?}", T::NAME);
                }
                continue;
            }
            if cpu_flat != gpu_flat {
                // A first-order switch (a thickness at a midpoint against `thin`) that rounding flips.
                beyond += 1;
                continue;
            }
            limited += 1;
            let sensitivity = reconstruction_diff(&widen_rec(&want), &cell_f64(&m64, c), reach, scale);
            let excess =
                reconstruction_diff(&widen_rec(&want), &widen_rec(got), reach, scale) - SENSITIVITY * sensitivity;
            if excess > tol {
                beyond += 1;
            } else {
                worst = worst.max(excess);
            }
        }
        eprintln!(
            "{}: {} cells ({flat} first order, {limited} reconstructed): GPU and CPU differ by at most {worst:.2e} of the cell's scale beyond {SENSITIVITY} times the CPU's own rounding error; {beyond} beyond {tol:.0e}",
            T::NAME,
            cells.len()
        );
        assert!(
            flat > cells.len() / 20 && limited > cells.len() / 2,
            "the fields test too little: {flat} flat, {limited} reconstructed"
        );
        assert!(beyond * 1000 <= cells.len(), "{}: {beyond} reconstructions differ beyond {tol:e}", T::NAME);
    });
}

#[test]
fn probe_reconstruct_f64() {
    reconstructions_agree::<f64>(1e-12);
}
#[test]
fn probe_reconstruct_f32() {
    reconstructions_agree::<f32>(1e-5);
}

/// The cell-interior term on random cells and faces (a layer absent in a tenth of them).
fn interiors_agree<T: CudaReal>(tol: f64) {
    let m = model2::<T>(0.9);
    with_gpu(m, |p| {
        let mut rng = Rng::new(2122);
        let samples: Vec<InteriorInput<T>> = (0..SAMPLES)
            .map(|_| {
                let depth = rng.range(0.5, 10.0);
                let h1 = if rng.unit() < 0.1 { 0.0 } else { rng.thickness() };
                let h2 = if rng.unit() < 0.1 { 0.0 } else { rng.range(0.0, depth) };
                let (d1, d2) = (h1 - m.ref_h1.f64(), h2 - depth - m.ref_interface.f64());
                let mut jitter = |x: f64| std::array::from_fn(|_| T::c(x + rng.range(-0.25, 0.25)));
                let (f1, f2) = (jitter(d1), jitter(d2));
                let ln = std::array::from_fn(|_| [T::c(rng.range(-2.0, 2.0)), T::c(rng.range(-2.0, 2.0))]);
                (T::c(d1), T::c(d2), f1, f2, ln, T::c(depth))
            })
            .collect();
        let gpu = p.interior(&samples).unwrap();
        let mut worst = 0.0f64;
        for ((d1, d2, f1, f2, ln, depth), got) in samples.iter().zip(&gpu) {
            let want = reconstruct::interior(&m, *d1, *d2, *f1, *f2, ln, *depth);
            let scale = G * 20.0 * 2.0 + 1e-30;
            for (x, y) in want.iter().zip(got) {
                worst = worst.max((x.f64() - y.f64()).abs() / scale);
            }
        }
        eprintln!("{}: cell-interior terms differ by {worst:.2e} of their scale", T::NAME);
        assert!(worst <= tol, "{}: cell-interior terms differ by {worst:e}", T::NAME);
    });
}

#[test]
fn probe_interior_f64() {
    interiors_agree::<f64>(1e-13);
}
#[test]
fn probe_interior_f32() {
    interiors_agree::<f32>(1e-5);
}

/// A reconstructed edge value near a cell's mean `c`: its thicknesses scaled by 0.6 to 1.8 (a
/// steep front: the positivity fallback then takes the means) and its momenta perturbed.
fn near<T: Real>(rng: &mut Rng, c: &Side<f64>, m: &Model<T>) -> Side<f64> {
    let mut f = *c;
    let mref = (m.ref_h1.f64(), m.ref_interface.f64());
    let h1 = (c.d1 + mref.0) * rng.range(0.6, 1.8);
    let h2 = ((c.d2 + mref.1) + c.depth) * rng.range(0.6, 1.8);
    f.d1 = h1 - mref.0;
    f.d2 = (h2 - c.depth) - mref.1;
    f.q1 = f.q1.map(|q| q * rng.range(0.5, 1.5));
    f.q2 = f.q2.map(|q| q * rng.range(0.5, 1.5));
    f
}

/// The second-order flux (`edge_flux`: the reconstructed values' flux, or the means' where it
/// would empty the donor) on random edges, as the flux probe compares (sensitivity to the
/// CPU's own float32 error); at most one in a thousand may take the other branch of a
/// decision that rounding flips.
fn edge_fluxes_agree<T: CudaReal>(tol: f64) {
    const SENSITIVITY: f64 = 20.0;
    for r in [0.998, 0.9] {
        let (m, m64) = (model::<T>(r, 0.0), model::<f64>(r, 0.0));
        with_gpu(m, |p| {
            let mut rng = Rng::new(2123);
            let samples: Vec<Edge2<T>> = (0..SAMPLES)
                .map(|_| {
                    let n = rng.unit_normal();
                    let (ci, cj) = (random_side(&mut rng, n), random_side(&mut rng, n));
                    let (fi, fj) = (near(&mut rng, &ci, &m), near(&mut rng, &cj, &m));
                    (to_t(&fi), to_t(&fj), to_t(&ci), to_t(&cj), [T::c(n[0]), T::c(n[1])])
                })
                .collect();
            let gpu = p.edge_flux(&samples).unwrap();
            let (mut worst, mut beyond, mut fell_back) = (0.0f64, 0, 0);
            for ((fi, fj, ci, cj, n), f) in samples.iter().zip(&gpu) {
                let want = reconstruct::edge_flux(&m, fi, fj, ci, cj, *n);
                let faces = numerical_flux(&m, fi, fj, *n);
                fell_back += (want != faces) as usize;
                let w64 = [fi, fj, ci, cj].map(side_f64);
                let exact = reconstruct::edge_flux(&m64, &w64[0], &w64[1], &w64[2], &w64[3], [n[0].f64(), n[1].f64()]);
                let scale = flux_scale(G, &w64[0], &w64[1]).max(flux_scale(G, &w64[2], &w64[3]));
                let sensitivity = flux_diff(&flux_in_f64(&want), &exact, scale);
                let excess = flux_diff(&want, f, scale) - SENSITIVITY * sensitivity;
                if excess > tol || want.fallback != f.fallback {
                    beyond += 1;
                } else {
                    worst = worst.max(excess);
                }
            }
            eprintln!(
                "{} r = {r}: {SAMPLES} second-order fluxes ({fell_back} by the means) differ by at most {worst:.2e} of the flux scale beyond {SENSITIVITY} times the CPU's own rounding error; {beyond} beyond {tol:.0e}",
                T::NAME
            );
            assert!(
                fell_back > SAMPLES / 20 && fell_back < SAMPLES / 2,
                "{fell_back} fallbacks to the means: the test tests little"
            );
            assert!(
                beyond * 1000 <= SAMPLES,
                "{} r = {r}: {beyond} second-order fluxes differ beyond {tol:e}",
                T::NAME
            );
        });
    }
}

#[test]
fn probe_edge_flux_f64() {
    edge_fluxes_agree::<f64>(1e-9);
}
#[test]
fn probe_edge_flux_f32() {
    edge_fluxes_agree::<f32>(1e-4);
}

/// The second-order boundary flux (`edge_boundary_flux`) for every boundary kind, judged as the
/// interior one: against the CPU's own float32 error on each sample (the open and elevation
/// ghosts divide by thicknesses and celerities, so a fixed tolerance fails on thin layers for
/// no fault of the mirror).
fn edge_boundary_fluxes_agree<T: CudaReal>(tol: f64) {
    const SENSITIVITY: f64 = 20.0;
    let (m, m64) = (model::<T>(0.998, 0.0), model::<f64>(0.998, 0.0));
    with_gpu(m, |p| {
        for b in boundary_cases::<T>() {
            let b64 = Boundary { kind: b.kind, reserved: b.reserved, data: b.data.map(|x| x.f64()) };
            let mut rng = Rng::new(2124);
            let samples: Vec<BoundaryEdge2<T>> = (0..SAMPLES)
                .map(|_| {
                    let n = rng.unit_normal();
                    let ci = random_side(&mut rng, n);
                    (to_t(&near(&mut rng, &ci, &m)), to_t(&ci), [T::c(n[0]), T::c(n[1])], T::c(rng.range(0.0, 100.0)))
                })
                .collect();
            let gpu = p.edge_boundary_flux(&b, &samples).unwrap();
            let (mut worst, mut beyond) = (0.0f64, 0);
            for ((fi, ci, n, t), f) in samples.iter().zip(&gpu) {
                let want = reconstruct::edge_boundary_flux(&m, &b, fi, ci, *n, *t);
                let (fi64, ci64) = (side_f64(fi), side_f64(ci));
                let n64 = [n[0].f64(), n[1].f64()];
                let exact = reconstruct::edge_boundary_flux(&m64, &b64, &fi64, &ci64, n64, t.f64());
                let scale = flux_scale(G, &fi64, &ci64);
                let sensitivity = flux_diff(&flux_in_f64(&want), &exact, scale);
                let excess = flux_diff(&want, f, scale) - SENSITIVITY * sensitivity;
                if excess > tol || want.fallback != f.fallback {
                    beyond += 1;
                } else {
                    worst = worst.max(excess);
                }
            }
            eprintln!(
                "{}: boundary kind {}: {SAMPLES} second-order fluxes differ by at most {worst:.2e} beyond {SENSITIVITY} times the CPU's own rounding error; {beyond} beyond {tol:.0e}",
                T::NAME,
                b.kind
            );
            assert!(beyond * 1000 <= SAMPLES, "{}: kind {}: {beyond} fluxes differ beyond {tol:e}", T::NAME, b.kind);
        }
    });
}

#[test]
fn probe_edge_boundary_flux_f64() {
    edge_boundary_fluxes_agree::<f64>(1e-9);
}
#[test]
fn probe_edge_boundary_flux_f32() {
    edge_boundary_fluxes_agree::<f32>(1e-4);
}
