//! CPU/GPU agreement and the GPU's own invariants. Needs a CUDA GPU: where none is usable
//! (CI) every test prints why and returns. Run them all with `tools/gpu-test.sh`.

mod common;
use common::ocean::{max_speed, moved_levels, ocean, Basin, MASS_REL, U_REST};
use common::{masses, scenario};
use pycno::app::scenario_mesh;
use pycno::comm::Single;
use pycno::physics::CellState;
use pycno::physics::Model;
use pycno::scenario::{initial, Scenario};
use pycno::solver::cuda::{probe, CudaBackend, CudaReal};
use pycno::solver::stepper::{step_loop, LoopStats};
use pycno::solver::{Backend, CpuBackend, Layout};

fn gpu() -> bool {
    match probe() {
        Ok(name) => {
            eprintln!("GPU: {name}");
            true
        }
        Err(e) => {
            common::skip::skipped(&format!("no usable GPU: {e:#}"));
            false
        }
    }
}

fn run_both<T: CudaReal>(
    s: &Scenario,
    steps: u64,
) -> (Vec<CellState>, Vec<CellState>, Vec<CellState>, Vec<f64>, u64, u64) {
    let pm = scenario_mesh(s).unwrap();
    let (depth, start) = initial::evaluate(s, &pm.topo.cell_centroid).unwrap();
    let params = Model::<T>::new(&s.physics).unwrap();
    let mut lay = Layout::<T>::from_topology(&pm.topo, &depth, &start, &s.physics.reference());
    lay.set_boundaries(&pm.topo.edge_tag, &s.boundary_table(&pm.mesh, &pm.topo).unwrap());
    if let Some(v) = &s.physics.viscosity {
        lay.set_viscosity(&pm.topo, v);
    }
    let plan = common::plan(s, Some(steps));
    // At the scenario's physics.order (device-resident steps at either order: common::plan).
    let order = s.physics.order;
    let mut gpu = CudaBackend::new(params, &lay, 0).unwrap().with_order(order, &lay).unwrap();
    let mut cpu = CpuBackend::new(params, lay).unwrap().with_order(order).unwrap();
    let sg = step_loop(&mut gpu, &Single, &plan, &mut |_, _| Ok(())).unwrap();
    let sc = step_loop(&mut cpu, &Single, &plan, &mut |_, _| Ok(())).unwrap();
    assert_eq!(sg.steps, sc.steps);
    (
        cpu.state().unwrap(),
        gpu.state().unwrap(),
        start,
        pm.topo.cell_area.clone(),
        cpu.fallbacks().unwrap(),
        gpu.fallbacks().unwrap(),
    )
}

fn rel_l2(a: &[CellState], b: &[CellState], f: impl Fn(&CellState) -> f64) -> f64 {
    let (mut num, mut den) = (0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        num += (f(x) - f(y)).powi(2);
        den += f(x).powi(2);
    }
    (num / den.max(1e-300)).sqrt()
}

type Field = (&'static str, fn(&CellState) -> f64, f64);

/// Thicknesses at `tol_h` and every momentum at `tol_q`.
fn every_field(tol_h: f64, tol_q: f64) -> [Field; 6] {
    [
        ("h1", |c| c.h1, tol_h),
        ("h2", |c| c.h2, tol_h),
        ("q1x", |c| c.q1[0], tol_q),
        ("q1y", |c| c.q1[1], tol_q),
        ("q2x", |c| c.q2[0], tol_q),
        ("q2y", |c| c.q2[1], tol_q),
    ]
}

/// The CPU's and the GPU's states agree field by field, in relative L2, within each field's
/// tolerance (`what` names the run in the messages).
fn assert_fields_agree<T: CudaReal>(what: &str, cpu: &[CellState], gpu: &[CellState], fields: &[Field]) {
    for &(name, f, tol) in fields {
        let e = rel_l2(cpu, gpu, f);
        eprintln!("{}: {what}, CPU vs GPU relative L2 of {name}: {e:.3e} (tolerance {tol:.0e})", T::NAME);
        assert!(e < tol, "{}: {what}: {name} differs: relative L2 {e:e} >= {tol:e}", T::NAME);
    }
}

/// At first order (the paper's scheme); `agreement_order2` is the default order's.
fn agreement<T: CudaReal>(tol_h: f64, tol_q: f64) {
    let mut s = Scenario::paper_benchmark(16040);
    s.time.end = 0.1;
    s.physics.order = 1;
    let (cpu, gpu, _, area, fc, fg) = run_both::<T>(&s, 1000);
    assert_fields_agree::<T>("paper benchmark", &cpu, &gpu, &every_field(tol_h, tol_q));
    assert_eq!(fc, fg, "fallback counts differ");
    let (c1, c2) = masses(&cpu, &area);
    let (g1, g2) = masses(&gpu, &area);
    assert!(((c1 - g1) / c1).abs() < tol_h && ((c2 - g2) / c2).abs() < tol_h);
}

// float32: the two differ by rounding only (fused multiply-adds, division and square-root
// rounding on the GPU); over ~40 steps of the paper benchmark that stays near 1e-6
// relative in the thicknesses. The momenta start at zero, so their relative error is
// larger.
#[test]
fn cpu_and_gpu_agree_on_the_paper_benchmark_f32() {
    if gpu() {
        agreement::<f32>(1e-5, 1e-3);
    }
}

#[test]
fn cpu_and_gpu_agree_on_the_paper_benchmark_f64() {
    if gpu() {
        agreement::<f64>(1e-12, 1e-9);
    }
}

/// At first order; `rest_order2` is the default order's.
fn rest<T: CudaReal>(tol: f64) {
    let mut s = scenario(
        r#"{ "name": "lake", "domain": { "outer": [[-5,-5],[5,-5],[5,5],[-5,5]] },
             "resolution": { "cells": 8000 },
             "bathymetry": { "type": "gaussian_bump", "depth": 5, "height": 2, "center": [0.5, -0.3], "width": 1.5 },
             "initial": { "type": "at_rest", "interface": -2.0, "surface": 0.0 },
             "time": { "end": 100.0 } }"#,
    );
    s.physics.order = 1;
    let (_, gpu, start, area, _, fg) = run_both::<T>(&s, 150);
    let u = max_speed(&gpu);
    eprintln!("{}: GPU lake at rest, 150 steps: max |u| = {u:.3e}", T::NAME);
    assert!(u <= tol, "water at rest moved on the GPU: {u:e}");
    assert_eq!(fg, 0);
    let (a1, a2) = masses(&start, &area);
    let (b1, b2) = masses(&gpu, &area);
    assert!(((a1 - b1) / a1).abs() < 1e-5 && ((a2 - b2) / a2).abs() < 1e-5);
}

// Exactly at rest, as on the CPU (tests/validation.rs): every term of the flux is exactly
// zero at rest, and the GPU's faster division and square root keep 0 at 0.
#[test]
fn gpu_lake_at_rest_f32() {
    if gpu() {
        rest::<f32>(0.0);
    }
}

#[test]
fn gpu_lake_at_rest_f64() {
    if gpu() {
        rest::<f64>(0.0);
    }
}

fn mass_and_nan<T: CudaReal>(tol: f64) {
    let mut s = Scenario::paper_benchmark(16040);
    s.time.end = 2.0;
    let (_, gpu, start, area, _, _) = run_both::<T>(&s, 300);
    assert!(gpu.iter().all(|c| [c.h1, c.h2, c.q1[0], c.q1[1], c.q2[0], c.q2[1]].iter().all(|x| x.is_finite())));
    let (a1, a2) = masses(&start, &area);
    let (b1, b2) = masses(&gpu, &area);
    let (r1, r2) = ((b1 - a1) / a1, (b2 - a2) / a2);
    eprintln!("{}: GPU dam break 300 steps: relative mass change {r1:.2e}, {r2:.2e}", T::NAME);
    assert!(r1.abs() < tol && r2.abs() < tol);
}

#[test]
fn gpu_conserves_mass_and_makes_no_nan_f32() {
    if gpu() {
        mass_and_nan::<f32>(3e-6);
    }
}

#[test]
fn gpu_conserves_mass_and_makes_no_nan_f64() {
    if gpu() {
        mass_and_nan::<f64>(1e-13);
    }
}

/// One edge pass over NaN-poisoned accumulators writes every word (or flags its slot quiet:
/// no water on either side of the edge), and the words equal the CPU's edge pass: on the
/// paper's dam break (all wet) and on an island with dry land (issue 17's quiet slots).
fn every_slot_written<T: CudaReal>(tol: f64) {
    let mut paper = Scenario::paper_benchmark(4016);
    paper.time.end = 1.0;
    let island = scenario(
        r#"{ "name": "island", "domain": { "outer": [[-5,-5],[5,-5],[5,5],[-5,5]] },
             "resolution": { "cells": 4000 },
             "bathymetry": { "type": "gaussian_bump", "depth": 5, "height": 8, "center": [0.4, -0.3], "width": 2.5 },
             "initial": { "type": "at_rest", "interface": -2.0, "surface": 0.0 },
             "physics": { "r": 0.9 }, "time": { "end": 1.0 } }"#,
    );
    for (name, s) in [("paper", paper), ("island", island)] {
        let pm = scenario_mesh(&s).unwrap();
        let (depth, mut start) = initial::evaluate(&s, &pm.topo.cell_centroid).unwrap();
        // Non-trivial velocities (where there is water) so that every flux component is exercised.
        for (c, st) in start.iter_mut().enumerate() {
            let p = pm.topo.cell_centroid[c];
            st.q1 = [0.1 * p[1] * st.h1, -0.05 * p[0] * st.h1];
            st.q2 = [0.02 * p[0] * st.h2, 0.03 * st.h2];
        }
        let params = Model::<T>::new(&s.physics).unwrap();
        let lay = Layout::<T>::from_topology(&pm.topo, &depth, &start, &s.physics.reference());
        let mut gpu = CudaBackend::new(params, &lay, 0).unwrap();
        gpu.poison_accumulators().unwrap();
        gpu.process_edges(0..lay.num_edges(), 0.0).unwrap();
        let acc = gpu.accumulators().unwrap();
        let quiet = gpu.quiet_slots().unwrap();
        let n = lay.num_cells();
        let unwritten = acc.iter().filter(|x| !x.is_finite()).count();
        assert_eq!(unwritten, 0, "{name}: {unwritten} of {} accumulator words not written", acc.len());
        if name == "island" {
            assert!(quiet > n / 10, "island: only {quiet} quiet slots of {}", 3 * n);
        } else {
            assert_eq!(quiet, 0, "paper: all wet, yet {quiet} quiet slots");
        }
        // The same pass on the CPU, compared through one full step's state change.
        let mut cpu = CpuBackend::new(params, lay.clone()).unwrap();
        cpu.process_edges(0..lay.num_edges(), 0.0).unwrap();
        let (dtc, _) = cpu.local_dt(0.9).unwrap();
        let (dtg, _) = gpu.local_dt(0.9).unwrap();
        assert!(((dtc - dtg) / dtc).abs() < tol, "{name}: dt differs: cpu {dtc}, gpu {dtg}");
        let cacc = cpu.accumulators();
        assert_eq!(cacc.len(), acc.len());
        let scale = cacc.iter().fold(0.0f64, |m, x| m.max(x.f64().abs()));
        let worst = acc.iter().zip(&cacc).map(|(g, c)| (g.f64() - c.f64()).abs()).fold(0.0f64, f64::max) / scale;
        eprintln!(
            "{}: {name}, one edge pass, {n} cells, {quiet} quiet slots: max |GPU - CPU| / max |acc| = {worst:.3e}",
            T::NAME
        );
        assert!(scale > 0.0 && worst < tol, "{name}: edge pass differs from the CPU: {worst:e}");
    }
}

#[test]
fn gpu_writes_every_accumulator_slot_f32() {
    if gpu() {
        every_slot_written::<f32>(1e-5);
    }
}

#[test]
fn gpu_writes_every_accumulator_slot_f64() {
    if gpu() {
        every_slot_written::<f64>(1e-13);
    }
}

/// A run on the GPU alone (the long ones of issue 16): the state before the first step and
/// after the last, the depths, the areas, the loop's statistics and the fallbacks.
struct GpuRun {
    start: Vec<CellState>,
    end: Vec<CellState>,
    depth: Vec<f64>,
    area: Vec<f64>,
    stats: LoopStats,
    fallbacks: u64,
}

fn run_gpu<T: CudaReal>(s: &Scenario, steps: Option<u64>) -> GpuRun {
    let pm = scenario_mesh(s).unwrap();
    let (depth, initial) = initial::evaluate(s, &pm.topo.cell_centroid).unwrap();
    let lay = Layout::<T>::from_topology(&pm.topo, &depth, &initial, &s.physics.reference());
    let mut gpu = CudaBackend::new(Model::<T>::new(&s.physics).unwrap(), &lay, 0).unwrap();
    let start = gpu.state().unwrap();
    let stats = step_loop(&mut gpu, &Single, &common::plan(s, steps), &mut |_, _| Ok(())).unwrap();
    GpuRun {
        start,
        end: gpu.state().unwrap(),
        depth,
        area: pm.topo.cell_area.clone(),
        stats,
        fallbacks: gpu.fallbacks().unwrap(),
    }
}

/// Issue 16 on the GPU: the three ocean basins (800 m deep, a 500 m seamount, the interface
/// at -150 m; plain, steep 1:2, at UTM coordinates) at rest for 8 simulated hours in
/// float32: at rest to 1e-9 m/s, the surface and the interface exactly unchanged.
#[test]
fn gpu_ocean_basins_stay_exactly_at_rest_for_8_hours_f32() {
    if !gpu() {
        return;
    }
    for basin in [Basin::Seamount, Basin::Steep, Basin::Utm] {
        let s = ocean(basin, 20_000);
        let r = run_gpu::<f32>(&s, None);
        assert_eq!(r.stats.time, s.time.end, "{basin:?}: the run did not reach 8 h");
        let (u, moved) = (max_speed(&r.end), moved_levels(&r.start, &r.end, &r.depth));
        eprintln!(
            "f32: GPU {basin:?}, {} cells, {} steps to t = {:.0} s: max |u| = {u:.3e} m/s, {moved} cells with moved levels",
            r.start.len(),
            r.stats.steps,
            r.stats.time
        );
        assert!(u <= U_REST, "{basin:?}: water at rest moves at {u:e} m/s on the GPU");
        assert_eq!(moved, 0, "{basin:?}: the surface or the interface moved in {moved} cells on the GPU");
        assert_eq!(r.fallbacks, 0);
    }
}

/// Issue 16 on the GPU: the paper's dam break at 64k cells for 10^5 steps in float32, each
/// layer's relative mass change within 2e-7.
#[test]
fn gpu_dam_break_64k_cells_1e5_steps_keeps_each_layers_mass_f32() {
    if !gpu() {
        return;
    }
    let mut s = Scenario::paper_benchmark(64052);
    s.time.end = 1e6;
    let steps = 100_000;
    let r = run_gpu::<f32>(&s, Some(steps));
    assert_eq!(r.stats.steps, steps);
    assert!(r.end.iter().all(|c| c.is_admissible()), "the run went unphysical");
    assert!(max_speed(&r.end) > 1e-3, "nothing moves: conservation would be trivial");
    let (a1, a2) = masses(&r.start, &r.area);
    let (b1, b2) = masses(&r.end, &r.area);
    let (r1, r2) = ((b1 - a1) / a1, (b2 - a2) / a2);
    eprintln!(
        "f32: GPU dam break, {} cells, {steps} steps (t = {:.1} s): relative mass change {r1:.2e} (layer 1), {r2:.2e} (layer 2)",
        r.start.len(),
        r.stats.time
    );
    assert!(r1.abs() <= MASS_REL && r2.abs() <= MASS_REL, "mass drifts on the GPU: {r1:e}, {r2:e}");
}

/// The device-resident loop (issue 20): many steps per CUDA graph, read back once, give the
/// host-driven loop's state bit for bit, with the same steps, step sizes and output times
/// (a batch ends at each output time), and stop exactly at a step limit inside a batch; at
/// `physics.order` `order` (second order: each step two stages, issue 21, the second stage's
/// tiles finishing the cells whose edges they all hold).
fn device_steps_equal_host_steps<T: CudaReal>(order: u32) {
    let mut s = Scenario::paper_benchmark(16040);
    s.time.end = 0.4;
    s.physics.order = order;
    let pm = scenario_mesh(&s).unwrap();
    let (depth, initial) = initial::evaluate(&s, &pm.topo.cell_centroid).unwrap();
    let lay = Layout::<T>::from_topology(&pm.topo, &depth, &initial, &s.physics.reference());
    let outputs = [0.004, 0.0125, 0.2];
    let run = |k: u64, max_steps: Option<u64>| {
        let mut gpu =
            CudaBackend::new(Model::<T>::new(&s.physics).unwrap(), &lay, 0).unwrap().with_order(order, &lay).unwrap();
        gpu.set_device_steps(k);
        // At order 2 the resident steps' second-stage tiles finish their cells, which the
        // host-driven steps never do (on this mesh only when asked: it is below the size
        // from which they do by default).
        gpu.set_tile_finish(true);
        let plan = pycno::solver::stepper::Schedule {
            outputs: &outputs,
            max_steps,
            device_steps: k,
            watch: pycno::solver::watch::Watch::off(),
            ..common::plan(&s, None)
        };
        let (mut events, mut hit) = (0u64, Vec::new());
        let st = step_loop(&mut gpu, &Single, &plan, &mut |_, ev| {
            match ev {
                pycno::solver::stepper::Event::Step { .. } => events += 1,
                pycno::solver::stepper::Event::Output { time, step, .. } => hit.push((time, step)),
            }
            Ok(())
        })
        .unwrap();
        (gpu.stored_state().unwrap(), st.steps, st.dt_min, st.dt_max, st.time, hit, events)
    };
    let host = run(1, None);
    assert_eq!(host.6, host.1, "the host loop reports every step");
    assert_eq!(host.5.len(), outputs.len());
    for k in [2, 7, 32] {
        let dev = run(k, None);
        assert_eq!(
            (dev.1, dev.2, dev.3, dev.4),
            (host.1, host.2, host.3, host.4),
            "{} order {order}, k = {k}: steps, dt, time",
            T::NAME
        );
        assert_eq!(dev.5, host.5, "{} order {order}, k = {k}: output times and steps", T::NAME);
        assert!(dev.0 == host.0, "{} order {order}, k = {k}: the state differs from the host loop's", T::NAME);
        // A batch ends at its size (graphs of 4 steps and up), an output time or the end.
        let most = dev.1.div_ceil(k.min(4)) + outputs.len() as u64 + 1;
        assert!(dev.6 <= most, "{} order {order}, k = {k}: {} events for {} steps: not batched", T::NAME, dev.6, dev.1);
        eprintln!(
            "{} order {order}, k = {k}: {} steps in {} batches, state bit for bit the host loop's",
            T::NAME,
            dev.1,
            dev.6
        );
    }
    // A step limit that falls inside a batch.
    let limit = host.1 / 2 + 3;
    let (a, b) = (run(1, Some(limit)), run(32, Some(limit)));
    assert_eq!((a.1, b.1), (limit, limit));
    assert!(a.0 == b.0 && a.4 == b.4, "{} order {order}: stopped at step {limit}, the states differ", T::NAME);
}

#[test]
fn device_steps_equal_host_steps_f32() {
    if gpu() {
        device_steps_equal_host_steps::<f32>(1);
    }
}

#[test]
fn device_steps_equal_host_steps_f64() {
    if gpu() {
        device_steps_equal_host_steps::<f64>(1);
    }
}

#[test]
fn device_steps_equal_host_steps_at_order_2_f32() {
    if gpu() {
        device_steps_equal_host_steps::<f32>(2);
    }
}

#[test]
fn device_steps_equal_host_steps_at_order_2_f64() {
    if gpu() {
        device_steps_equal_host_steps::<f64>(2);
    }
}

/// A run that goes unphysical (the paper's dam break at twice the stable CFL number: step 28
/// on the CPU) stops in the same step, at the same time, with the same last good state,
/// whether the host drives every step or the device takes them (CUDA graphs of up to 64 or 5
/// steps: the blow-up falls inside a batch).
fn device_steps_catch_a_blow_up_as_the_host<T: CudaReal>() {
    let mut s = Scenario::paper_benchmark(4032);
    s.time.end = 5.0;
    let pm = scenario_mesh(&s).unwrap();
    let (depth, initial) = initial::evaluate(&s, &pm.topo.cell_centroid).unwrap();
    let lay = Layout::<T>::from_topology(&pm.topo, &depth, &initial, &s.physics.reference());
    let run = |k: u64| {
        let mut gpu = CudaBackend::new(Model::<T>::new(&s.physics).unwrap(), &lay, 0).unwrap();
        gpu.set_device_steps(k);
        let plan = pycno::solver::stepper::Schedule { device_steps: k, gamma: 2.0, ..common::plan(&s, None) };
        let err = step_loop(&mut gpu, &Single, &plan, &mut |_, _| Ok(())).expect_err("the run should blow up");
        let b = err.downcast_ref::<pycno::solver::stepper::BlowUp>().expect("a blow-up report");
        (b.step, b.time, gpu.previous_state().unwrap())
    };
    let host = run(1);
    assert!(host.0 > 5, "the blow-up should come after a batch of 5 steps, not in it");
    for k in [64, 5] {
        let dev = run(k);
        assert_eq!((dev.0, dev.1), (host.0, host.1), "{}, k = {k}: step and time of the blow-up", T::NAME);
        assert!(dev.2 == host.2, "{}, k = {k}: the last good state differs from the host loop's", T::NAME);
    }
    eprintln!("{}: blew up at step {} on the host and on the device alike", T::NAME, host.0);
}

#[test]
fn device_steps_catch_a_blow_up_as_the_host_f32() {
    if gpu() {
        device_steps_catch_a_blow_up_as_the_host::<f32>();
    }
}

#[test]
fn device_steps_catch_a_blow_up_as_the_host_f64() {
    if gpu() {
        device_steps_catch_a_blow_up_as_the_host::<f64>();
    }
}

/// The max maps kept on the GPU (the extremes kernel over the device's state every step)
/// equal, bit for bit, the same extremes folded on the host from that state read back
/// after every step.
fn max_maps_on_the_gpu<T: CudaReal>() {
    use pycno::physics::extremes::{self, Arrival, E_ARRIVAL};
    use pycno::solver::stepper::Event;
    if !gpu() {
        return;
    }
    let mut s = Scenario::paper_benchmark(4000);
    s.time.end = 0.3;
    let pm = scenario_mesh(&s).unwrap();
    let (depth, start) = initial::evaluate(&s, &pm.topo.cell_centroid).unwrap();
    let lay = Layout::<T>::from_topology(&pm.topo, &depth, &start, &s.physics.reference());
    let mut b = CudaBackend::new(Model::<T>::new(&s.physics).unwrap(), &lay, 0).unwrap();
    let a = Arrival { threshold: 0.005, surface: false };
    b.extremes_start(a, None).unwrap();
    let st = b.state().unwrap();
    // The frames' thicknesses (the state read back in float64), as the kernel computes them.
    let mut host: Vec<_> =
        st.iter().map(|c| extremes::start(c.h1, c.q1[0], c.q1[1], c.h2, c.q2[0], c.q2[1], a)).collect();
    let plan = pycno::solver::stepper::Schedule { device_steps: 1, ..common::plan(&s, Some(60)) };
    step_loop(&mut b, &Single, &plan, &mut |b, ev| {
        if let Event::Step { time, .. } = ev {
            b.extremes_fold(time)?;
            for (e, c) in host.iter_mut().zip(b.state()?) {
                extremes::fold(e, c.h1, c.q1[0], c.q1[1], c.h2, c.q2[0], c.q2[1], time, a);
            }
        }
        Ok(())
    })
    .unwrap();
    let dev = b.extremes().unwrap();
    assert_eq!(dev.len(), host.len());
    for (k, (d, h)) in dev.iter().zip(&host).enumerate() {
        assert_eq!(d.map(f64::to_bits), h.map(f64::to_bits), "cell {k}: GPU {d:?}, host {h:?}");
    }
    let arrived = host.iter().filter(|e| e[E_ARRIVAL] > 0.0).count();
    assert!(arrived > 0 && arrived < host.len(), "{arrived} of {} cells arrived: the test tests little", host.len());
}

#[test]
fn max_maps_on_the_gpu_f32() {
    max_maps_on_the_gpu::<f32>();
}
#[test]
fn max_maps_on_the_gpu_f64() {
    max_maps_on_the_gpu::<f64>();
}

/// Issue 17 on the GPU: an island emerging through the free surface and a seamount piercing
/// the interface (both layers, then the lower one, absent there), water at rest for 1000
/// steps: exactly at rest on the GPU as on the CPU (`tests/wetdry.rs`), every layer's mass
/// unchanged.
fn island_at_rest<T: CudaReal>() {
    for height in [7.0, 4.0] {
        let s = scenario(&format!(
            r#"{{ "name": "island", "domain": {{ "outer": [[-5,-5],[5,-5],[5,5],[-5,5]] }},
                 "resolution": {{ "cells": 8000 }},
                 "bathymetry": {{ "type": "gaussian_bump", "depth": 5, "height": {height}, "center": [0.4, -0.3], "width": 2.0 }},
                 "initial": {{ "type": "at_rest", "interface": -2.0, "surface": 0.0 }},
                 "physics": {{ "r": 0.9 }},
                 "time": {{ "end": 1000.0 }} }}"#
        ));
        let (cpu, gpu, start, area, _, _) = run_both::<T>(&s, 1000);
        let absent = start.iter().filter(|c| c.h2 == 0.0).count();
        let u = max_speed(&gpu);
        eprintln!(
            "{}: GPU island (top at {}), {absent} cells without a lower layer, 1000 steps: max |u| = {u:.3e}",
            T::NAME,
            height - 5.0
        );
        assert!(absent > 0);
        assert!(u == 0.0, "water at rest moved on the GPU: {u:e}");
        assert_eq!(masses(&start, &area), masses(&gpu, &area), "mass changed at rest on the GPU");
        assert_eq!(max_speed(&cpu), 0.0);
    }
}

#[test]
fn gpu_island_at_rest_f32() {
    if gpu() {
        island_at_rest::<f32>();
    }
}

#[test]
fn gpu_island_at_rest_f64() {
    if gpu() {
        island_at_rest::<f64>();
    }
}

/// The full-depth lock exchange (`meshes/scenarios/lock_exchange.json`, issue 17): the GPU
/// agrees with the CPU (relative L2 of the thicknesses and momenta), no thickness goes below
/// zero beyond rounding, and each layer's mass is conserved.
fn lock_exchange<T: CudaReal>(tol_h: f64, tol_q: f64) {
    let mut s = Scenario::from_file(&common::repo_root().join("meshes/scenarios/lock_exchange.json")).unwrap();
    // At first order; `lock_exchange_order2` is the default order's.
    s.physics.order = 1;
    let (cpu, gpu, start, area, _, _) = run_both::<T>(&s, 400);
    // Along the channel only: the transverse momenta are rounding-sized there.
    let [h1, h2, q1x, _, q2x, _] = every_field(tol_h, tol_q);
    assert_fields_agree::<T>("lock exchange, 400 steps", &cpu, &gpu, &[h1, h2, q1x, q2x]);
    assert!(gpu.iter().all(|c| c.is_admissible()), "a negative thickness on the GPU");
    let ((a1, a2), (b1, b2)) = (masses(&start, &area), masses(&gpu, &area));
    let bound = if std::mem::size_of::<T>() == 8 { 1e-13 } else { 1e-6 };
    assert!(((a1 - b1) / a1).abs() < bound && ((a2 - b2) / a2).abs() < bound, "mass changed on the GPU");
}

#[test]
fn gpu_lock_exchange_f32() {
    if gpu() {
        lock_exchange::<f32>(1e-4, 1e-2);
    }
}

#[test]
fn gpu_lock_exchange_f64() {
    if gpu() {
        lock_exchange::<f64>(1e-11, 1e-8);
    }
}

/// Issue 18 on the GPU: every boundary kind (a tide, a time-dependent discharge in layer 1
/// with layer 2 open, an open end, a fixed interface) and every source term at once, CPU
/// against GPU; the per-tag mass budgets agree too, and each closes start + in - out = end.
fn forced_agreement<T: CudaReal>(coriolis: &str, tol_h: f64, tol_q: f64, tol_budget: f64) {
    forced_agreement_at::<T>(1, coriolis, tol_h, tol_q, tol_budget)
}

/// The same at `physics.order` `order`.
fn forced_agreement_at<T: CudaReal>(order: u32, coriolis: &str, tol_h: f64, tol_q: f64, tol_budget: f64) {
    forced_agreement_with::<T>(order, coriolis, None, tol_h, tol_q, tol_budget)
}

/// The same with a horizontal viscosity (`physics/viscosity.rs`).
fn forced_agreement_with<T: CudaReal>(
    order: u32,
    coriolis: &str,
    viscosity: Option<pycno::physics::Viscosity>,
    tol_h: f64,
    tol_q: f64,
    tol_budget: f64,
) {
    if !gpu() {
        return;
    }
    let mut s = scenario(
        &r#"{
        "domain": { "outer": [[0, 0], [20, 0], [20, 4], [0, 4]], "outer_tags": ["south", "sea", "", "river"] },
        "resolution": { "cells": 8000 },
        "bathymetry": { "type": "gaussian_bump", "depth": 5, "height": 2, "center": [10, 2], "width": 2 },
        "initial": { "type": "dam_break_x", "x0": 10, "interface_left": -1, "interface_right": -1.5, "surface": 0 },
        "physics": { "manning": 0.03, "interlayer_friction": 0.01, "coriolis": CORIOLIS, "wind_stress": [1e-3, 0] },
        "boundaries": {
            "sea": { "type": "elevation", "surface": { "mean": 0, "tides": [{ "amplitude": 0.05, "period": 0.8, "phase": 30 }] } },
            "river": { "type": "discharge", "layer1": { "mean": 1.0, "tides": [{ "amplitude": 0.5, "period": 0.7 }] } },
            "south": { "type": "elevation", "interface": -1.2 }
        },
        "time": { "end": 1.0 }
    }"#
        .replace("CORIOLIS", coriolis),
    );
    s.physics.order = order;
    s.physics.viscosity = viscosity;
    let pm = scenario_mesh(&s).unwrap();
    let (depth, start) = initial::evaluate(&s, &pm.topo.cell_centroid).unwrap();
    let params = Model::<T>::new(&s.physics).unwrap();
    let mut lay = Layout::<T>::from_topology(&pm.topo, &depth, &start, &s.physics.reference());
    lay.set_boundaries(&pm.topo.edge_tag, &s.boundary_table(&pm.mesh, &pm.topo).unwrap());
    if let Some(c) = s.physics.coriolis.filter(|c| c.varies()) {
        lay.set_coriolis(&c.at_centroids(&pm.topo.cell_centroid));
    }
    if let Some(v) = &s.physics.viscosity {
        lay.set_viscosity(&pm.topo, v);
    }
    let plan = common::plan(&s, None);
    let order = s.physics.order;
    let mut gpu = CudaBackend::new(params, &lay, 0).unwrap().with_order(order, &lay).unwrap();
    let mut cpu = CpuBackend::new(params, lay).unwrap().with_order(order).unwrap();
    let m0 = masses(&cpu.state().unwrap(), &pm.topo.cell_area);
    let sg = step_loop(&mut gpu, &Single, &plan, &mut |_, _| Ok(())).unwrap();
    let sc = step_loop(&mut cpu, &Single, &plan, &mut |_, _| Ok(())).unwrap();
    assert_eq!(sg.steps, sc.steps);
    let (a, b) = (cpu.state().unwrap(), gpu.state().unwrap());
    assert_fields_agree::<T>(&format!("forced run, order {order}"), &a, &b, &every_field(tol_h, tol_q));
    let (bc, bg) = (cpu.boundary_budget().unwrap(), gpu.boundary_budget().unwrap());
    assert_eq!(bc.len(), 4);
    for (k, (x, y)) in bc.iter().zip(&bg).enumerate() {
        for l in 0..4 {
            let e = (x[l] - y[l]).abs() / (x[l].abs() + 1e-12);
            assert!(e < tol_budget, "{}: budget entry {k} word {l}: CPU {} GPU {}", T::NAME, x[l], y[l]);
        }
    }
    let m1 = masses(&b, &pm.topo.cell_area);
    for (layer, (s0, s1)) in [(0, (m0.0, m1.0)), (1, (m0.1, m1.1))] {
        let (i, o) = bg.iter().fold((0.0, 0.0), |(i, o), e| (i + e[2 * layer], o + e[2 * layer + 1]));
        let r = (s0 + i - o - s1) / s0;
        eprintln!("{}: GPU mass balance layer {}: {r:.2e}", T::NAME, layer + 1);
        assert!(r.abs() < 50.0 * T::EPS.f64(), "{}: layer {} budget does not close: {r:e}", T::NAME, layer + 1);
    }
}

#[test]
fn cpu_and_gpu_agree_with_open_boundaries_and_sources_f64() {
    forced_agreement::<f64>(r#"{ "latitude": 36 }"#, 1e-11, 1e-9, 1e-9);
}
#[test]
fn cpu_and_gpu_agree_with_open_boundaries_and_sources_f32() {
    forced_agreement::<f32>(r#"{ "latitude": 36 }"#, 1e-5, 1e-3, 1e-3);
}
// Each cell's own f (the per-cell array the update reads on a beta-plane).
#[test]
fn cpu_and_gpu_agree_on_a_beta_plane_f64() {
    forced_agreement::<f64>(r#"{ "f0": 0.3, "beta": 0.05, "y0": 2 }"#, 1e-11, 1e-9, 1e-9);
}
#[test]
fn cpu_and_gpu_agree_on_a_beta_plane_f32() {
    forced_agreement::<f32>(r#"{ "f0": 0.3, "beta": 0.05, "y0": 2 }"#, 1e-5, 1e-3, 1e-3);
}

// ---------------------------------------------------------------------------------------
// Second order (issue 21): the GPU's order-2 steps (kernels/order2.cu; device-resident on one rank) against
// the CPU's, and the invariants the CPU's order 2 keeps (tests/second_order.rs, wetdry.rs).
// ---------------------------------------------------------------------------------------

/// The paper's internal dam break at order 2 (16040 cells, to t = 0.1, 38 steps of two
/// stages), CPU against GPU: every field in relative L2, each layer's mass. The first order's
/// tolerances: on the CPU, float32 against float64 differs by as little at order 2 as at order
/// 1 here (h 7e-8 to 2e-7, q 9e-6 to 1.5e-5 in relative L2; the lock exchange: 1.3e-5 and up to
/// 1.5e-3 at order 2, 3.7e-5 and up to 6e-3 at order 1); a wrong term in the mirror (a
/// missing interior term, a wrong stage average) moves the momenta by percents.
fn agreement_order2<T: CudaReal>(tol_h: f64, tol_q: f64) {
    let mut s = Scenario::paper_benchmark(16040);
    s.time.end = 0.1;
    s.physics.order = 2;
    let (cpu, gpu, start, area, fc, fg) = run_both::<T>(&s, 1000);
    assert_fields_agree::<T>("paper benchmark, order 2", &cpu, &gpu, &every_field(tol_h, tol_q));
    eprintln!("{}: order 2, hyperbolicity fallbacks CPU {fc}, GPU {fg}", T::NAME);
    let ((c1, c2), (g1, g2), (s1, s2)) = (masses(&cpu, &area), masses(&gpu, &area), masses(&start, &area));
    eprintln!(
        "{}: order 2, relative mass change CPU {:.2e} {:.2e}, GPU {:.2e} {:.2e}",
        T::NAME,
        (c1 - s1) / s1,
        (c2 - s2) / s2,
        (g1 - s1) / s1,
        (g2 - s2) / s2
    );
    assert!(((c1 - g1) / c1).abs() < tol_h && ((c2 - g2) / c2).abs() < tol_h, "the masses differ");
    assert!(gpu.iter().all(|c| c.is_admissible()), "a negative thickness on the GPU at order 2");
}

#[test]
fn cpu_and_gpu_agree_at_order_2_f32() {
    if gpu() {
        agreement_order2::<f32>(1e-5, 1e-3);
    }
}

#[test]
fn cpu_and_gpu_agree_at_order_2_f64() {
    if gpu() {
        agreement_order2::<f64>(1e-12, 1e-9);
    }
}

/// Water at rest at order 2, 300 steps on the GPU: over a seamount (both layers everywhere),
/// an island (both layers absent on it) and a seamount above the interface (the lower layer
/// absent over it), the scenarios of tests/second_order.rs. Every thickness and momentum keeps
/// its stored number (max |u| = 0, no thickness changed, the masses bit for bit), as on the
/// CPU, in float32 and float64; the stored numbers (deviations, low parts, momenta) compared
/// exactly, the first cells that changed printed.
fn rest_order2<T: CudaReal>() {
    let lake = |height: f64, r: f64| {
        scenario(&format!(
            r#"{{ "name": "lake", "domain": {{ "outer": [[-5,-5],[5,-5],[5,5],[-5,5]] }},
                 "resolution": {{ "cells": 3000 }},
                 "bathymetry": {{ "type": "gaussian_bump", "depth": 5, "height": {height}, "center": [0.4, -0.3], "width": 1.5 }},
                 "initial": {{ "type": "at_rest", "interface": -2.0, "surface": 0.0 }},
                 "physics": {{ "r": {r}, "order": 2 }},
                 "time": {{ "end": 1000.0 }} }}"#
        ))
    };
    for (name, s) in
        [("seamount", lake(2.0, 0.998)), ("island", lake(7.0, 0.9)), ("seamount above the interface", lake(4.0, 0.9))]
    {
        // The stored numbers themselves (deviations, low parts, momenta), before and after.
        let pm = scenario_mesh(&s).unwrap();
        let (depth, init) = initial::evaluate(&s, &pm.topo.cell_centroid).unwrap();
        let lay = Layout::<T>::from_topology(&pm.topo, &depth, &init, &s.physics.reference());
        let mut b =
            CudaBackend::new(Model::<T>::new(&s.physics).unwrap(), &lay, 0).unwrap().with_order(2, &lay).unwrap();
        let before = b.stored_state().unwrap();
        // The thicknesses as the run holds them at the start: float32 cannot hold the
        // scenario's float64 ones exactly (2^-48 m off where a layer is absent over an island),
        // on the CPU as on the GPU, so the run is compared with its own start.
        let start = b.state().unwrap();
        step_loop(&mut b, &Single, &common::plan(&s, Some(300)), &mut |_, _| Ok(())).unwrap();
        let after = b.stored_state().unwrap();
        let changed: Vec<usize> = (0..before.len()).filter(|&c| before[c] != after[c]).collect();
        for &c in changed.iter().take(5) {
            eprintln!("{}: {name}: cell {c} (depth {}) stored {:?} -> {:?}", T::NAME, depth[c], before[c], after[c]);
        }
        let (cpu, gpu, _, area, _, fg) = run_both::<T>(&s, 300);
        let u = max_speed(&gpu);
        let dh = start.iter().zip(&gpu).map(|(a, b)| (a.h1 - b.h1).abs().max((a.h2 - b.h2).abs())).fold(0.0, f64::max);
        let absent = start.iter().filter(|c| c.h2 == 0.0 || c.h1 == 0.0).count();
        eprintln!(
            "{}: GPU order 2, {name} ({absent} cells with a layer absent), 300 steps: max |u| = {u:.3e}, max |dh| = {dh:.3e}",
            T::NAME
        );
        assert!(
            changed.is_empty(),
            "{}: {name}: {} cells changed their stored numbers at rest at order 2",
            T::NAME,
            changed.len()
        );
        assert!(u == 0.0, "{}: {name}: water at rest moved on the GPU at order 2: max |u| = {u:e}", T::NAME);
        assert!(dh == 0.0, "{}: {name}: a thickness changed at rest on the GPU at order 2: {dh:e}", T::NAME);
        assert_eq!(masses(&start, &area), masses(&gpu, &area), "{}: {name}: mass changed at rest", T::NAME);
        assert_eq!(fg, 0);
        assert_eq!(max_speed(&cpu), 0.0, "{}: {name}: the CPU moved", T::NAME);
    }
}

#[test]
fn gpu_lakes_at_rest_at_order_2_f32() {
    if gpu() {
        rest_order2::<f32>();
    }
}

#[test]
fn gpu_lakes_at_rest_at_order_2_f64() {
    if gpu() {
        rest_order2::<f64>();
    }
}

/// A lock exchange with dry cells on the way at order 2 (tests/wetdry.rs: the upper layer
/// absent behind the lock, the lower one ahead), 400 steps: each layer's mass to rounding on
/// the GPU, no thickness negative, and the GPU agrees with the CPU along the channel.
fn lock_exchange_order2<T: CudaReal>(tol_h: f64, tol_q: f64) {
    let s = scenario(
        r#"{ "name": "lock", "domain": { "outer": [[0,0],[10,0],[10,0.25],[0,0.25]] },
             "resolution": { "cells": 2000 },
             "bathymetry": { "type": "constant", "depth": 0.5 },
             "initial": { "type": "dam_break_x", "x0": 5, "interface_left": 1, "interface_right": -1, "surface": 0 },
             "physics": { "r": 0.98, "dry_tolerance": 1e-4, "order": 2 },
             "time": { "end": 3.0 } }"#,
    );
    let (cpu, gpu, start, area, _, _) = run_both::<T>(&s, 400);
    let ((a1, a2), (b1, b2)) = (masses(&start, &area), masses(&gpu, &area));
    let (r1, r2) = ((b1 - a1) / a1, (b2 - a2) / a2);
    eprintln!("{}: GPU order 2 lock exchange, 400 steps: relative mass change {r1:.2e}, {r2:.2e}", T::NAME);
    let bound = if std::mem::size_of::<T>() == 8 { 1e-13 } else { 1e-6 };
    assert!(r1.abs() < bound && r2.abs() < bound, "{}: mass changed on the GPU at order 2", T::NAME);
    assert!(gpu.iter().all(|c| c.is_admissible()), "{}: a negative thickness on the GPU at order 2", T::NAME);
    let [h1, h2, q1x, _, q2x, _] = every_field(tol_h, tol_q);
    assert_fields_agree::<T>("lock exchange, order 2", &cpu, &gpu, &[h1, h2, q1x, q2x]);
}

#[test]
fn gpu_lock_exchange_at_order_2_f32() {
    if gpu() {
        lock_exchange_order2::<f32>(1e-4, 1e-2);
    }
}

#[test]
fn gpu_lock_exchange_at_order_2_f64() {
    if gpu() {
        lock_exchange_order2::<f64>(1e-11, 1e-8);
    }
}

/// Open boundaries (a tide, a discharge, a fixed interface) and every source term at order 2:
/// the boundary edges' second-order flux, the budget's half step per stage (each tag's budget
/// closes), the sources at each stage.
#[test]
fn cpu_and_gpu_agree_with_open_boundaries_and_sources_at_order_2_f64() {
    forced_agreement_at::<f64>(2, r#"{ "latitude": 36 }"#, 1e-11, 1e-9, 1e-9);
}
#[test]
fn cpu_and_gpu_agree_with_open_boundaries_and_sources_at_order_2_f32() {
    forced_agreement_at::<f32>(2, r#"{ "latitude": 36 }"#, 1e-5, 1e-3, 1e-3);
}

/// Horizontal viscosity (`kernels/viscosity.cuh`) on the GPU's edge kernels, with every
/// boundary kind and source term at both orders (the tiles' plain mode in float32 at order 2),
/// and on the paper's dam break at order 2 (no sources: the tiles that sum and finish cells).
fn viscous() -> Option<pycno::physics::Viscosity> {
    Some(pycno::physics::Viscosity { constant: Some(0.02), time_scale: None })
}
#[test]
fn cpu_and_gpu_agree_with_viscosity_f64() {
    for order in [1, 2] {
        forced_agreement_with::<f64>(order, r#"{ "latitude": 36 }"#, viscous(), 1e-11, 1e-9, 1e-9);
    }
}
#[test]
fn cpu_and_gpu_agree_with_viscosity_f32() {
    for order in [1, 2] {
        forced_agreement_with::<f32>(order, r#"{ "latitude": 36 }"#, viscous(), 1e-5, 1e-3, 1e-3);
    }
}
fn viscous_dam_break_order2<T: CudaReal>(tol_h: f64, tol_q: f64) {
    let mut s = Scenario::paper_benchmark(16040);
    s.time.end = 0.1;
    s.physics.order = 2;
    s.physics.viscosity = Some(pycno::physics::Viscosity { constant: None, time_scale: Some(0.05) });
    let (cpu, gpu, _, _, _, _) = run_both::<T>(&s, 1000);
    assert_fields_agree::<T>("paper benchmark, order 2, viscous", &cpu, &gpu, &every_field(tol_h, tol_q));
    // The viscosity did something: the same run without it ends elsewhere.
    s.physics.viscosity = None;
    let (plain, _, _, _, _, _) = run_both::<T>(&s, 1000);
    let moved = rel_l2(&plain, &cpu, |c| c.q1[0]);
    assert!(moved > 10.0 * tol_q, "{}: the viscosity changed q1x by only {moved:e}", T::NAME);
    assert!(gpu.iter().all(|c| c.is_admissible()), "{}: a negative thickness on the GPU", T::NAME);
}
#[test]
fn cpu_and_gpu_agree_on_a_viscous_dam_break_at_order_2_f32() {
    if gpu() {
        viscous_dam_break_order2::<f32>(1e-5, 1e-3);
    }
}
#[test]
fn cpu_and_gpu_agree_on_a_viscous_dam_break_at_order_2_f64() {
    if gpu() {
        viscous_dam_break_order2::<f64>(1e-12, 1e-9);
    }
}

/// One stage at a time at order 2 on the paper's dam break: after the first stage's update
/// and after the whole step, the GPU's state equals the CPU's to rounding (relative L2 over all
/// six fields), and its previous state (the other buffer set) is the CPU's: W_n after the
/// first stage, W* after the step (on the GPU exactly its state after the first stage).
fn stages_order2<T: CudaReal>(tol: f64) {
    use pycno::solver::backend::StepContext;
    let mut s = Scenario::paper_benchmark(4016);
    s.physics.order = 2;
    let pm = scenario_mesh(&s).unwrap();
    let (depth, start) = initial::evaluate(&s, &pm.topo.cell_centroid).unwrap();
    let params = Model::<T>::new(&s.physics).unwrap();
    let lay = Layout::<T>::from_topology(&pm.topo, &depth, &start, &s.physics.reference());
    let mut gpu = CudaBackend::new(params, &lay, 0).unwrap().with_order(2, &lay).unwrap();
    let mut cpu = CpuBackend::new(params, lay).unwrap().with_order(2).unwrap();
    let values = |c: &CellState| [c.h1, c.h2, c.q1[0], c.q1[1], c.q2[0], c.q2[1]];
    let rel = |a: &[CellState], b: &[CellState]| {
        let (mut num, mut den) = (0.0, 0.0);
        for (x, y) in a.iter().zip(b) {
            for (u, v) in values(x).iter().zip(values(y)) {
                num += (u - v).powi(2);
                den += u.powi(2);
            }
        }
        (num / den).sqrt()
    };
    let mut t = 0.0;
    for step in 0..5 {
        let mut dts = [0.0; 2];
        for (k, b) in [&mut gpu as &mut dyn Backend, &mut cpu].into_iter().enumerate() {
            b.reconstruct(pycno::solver::Cells::All).unwrap();
            b.process_edges(0..b.num_edges(), t).unwrap();
            dts[k] = b.local_dt(0.9).unwrap().0;
        }
        let dt = dts[1];
        assert!((dts[0] - dts[1]).abs() <= tol * dt, "{}: step {step}: dt GPU {} CPU {}", T::NAME, dts[0], dts[1]);
        for b in [&mut gpu as &mut dyn Backend, &mut cpu] {
            b.update(StepContext { t, dt }).unwrap();
        }
        let (sg, sc) = (gpu.state().unwrap(), cpu.state().unwrap());
        let (pg, pc) = (gpu.previous_state().unwrap(), cpu.previous_state().unwrap());
        let (d1, p1) = (rel(&sc, &sg), rel(&pc, &pg));
        for b in [&mut gpu as &mut dyn Backend, &mut cpu] {
            b.reconstruct(pycno::solver::Cells::All).unwrap();
            b.process_edges(0..b.num_edges(), t + dt).unwrap();
            b.second_stage(StepContext { t, dt }).unwrap();
        }
        let (sg2, sc2) = (gpu.state().unwrap(), cpu.state().unwrap());
        let (pg2, pc2) = (gpu.previous_state().unwrap(), cpu.previous_state().unwrap());
        let (d2, p2) = (rel(&sc2, &sg2), rel(&pc2, &pg2));
        eprintln!(
            "{} step {step}: GPU against CPU (relative L2) after stage 1 {d1:.2e} (previous state {p1:.2e}), after the step {d2:.2e} (previous state {p2:.2e})",
            T::NAME
        );
        assert!(d1 <= tol && p1 <= tol && d2 <= tol && p2 <= tol, "{}: step {step}: the stages differ", T::NAME);
        // The previous state after the step is the first stage's result, the same buffer.
        assert!(pg2 == sg, "{}: step {step}: the previous state after the step is not W*", T::NAME);
        assert_eq!(gpu.health().unwrap(), pycno::solver::Health::Ok);
        t += dt;
    }
}

#[test]
fn gpu_stages_at_order_2_f32() {
    if gpu() {
        stages_order2::<f32>(1e-5);
    }
}

#[test]
fn gpu_stages_at_order_2_f64() {
    if gpu() {
        stages_order2::<f64>(1e-12);
    }
}
