//! What float32 guarantees (issue 16): water at rest stays exactly at rest at ocean depths,
//! over steep bottoms and at UTM coordinates, and each layer keeps its mass over long runs.
//!
//! The CI tests run a few thousand steps, which is enough to fail by orders of magnitude on
//! a scheme that stores thicknesses (the spurious velocity grows linearly, and so does the
//! biased mass loss). The full-length checks (8 simulated hours; 10^5 steps at 64k cells)
//! are `#[ignore]`d: `cargo test --release --test precision -- --ignored --nocapture`
//! (minutes on a few cores). `tests/gpu.rs` runs the same scenarios on the GPU.

mod common;
use common::ocean::{max_speed, moved_levels, ocean, Basin, MASS_REL, U_REST};
use common::{masses, run};
use pycno::physics::{add_compensated, Real};
use pycno::scenario::Scenario;

/// Water at rest in `basin` for `steps` steps (all the way to 8 h with `None`): at rest to
/// `U_REST`, the levels exactly unchanged, never a fallback.
fn stays_at_rest<T: Real>(basin: Basin, steps: Option<u64>) {
    let s = ocean(basin, 20_000);
    let out = run::<T>(&s, steps);
    if let Some(n) = steps {
        assert_eq!(out.stats.steps, n, "the run stopped early");
    } else {
        assert_eq!(out.stats.time, s.time.end, "the run did not reach 8 h");
    }
    let (u, moved) = (max_speed(&out.end), moved_levels(&out.start, &out.end, &out.depth));
    eprintln!(
        "{}: {basin:?}, {} cells, {} steps to t = {:.0} s: max |u| = {u:.3e} m/s, {moved} cells with moved levels",
        T::NAME,
        out.pm.topo.num_cells(),
        out.stats.steps,
        out.stats.time
    );
    assert!(u <= U_REST, "{}: {basin:?}: water at rest moves at {u:e} m/s > {U_REST:e}", T::NAME);
    assert_eq!(moved, 0, "{}: {basin:?}: the surface or the interface moved in {moved} cells", T::NAME);
    assert_eq!(out.fallbacks, 0);
}

// A scheme that stores thicknesses and rounds g h^2/2 against the closure of each cell
// reached 2e-4 m/s within these steps (0.35 s each) in float32.
#[test]
fn ocean_seamount_stays_exactly_at_rest_f32() {
    stays_at_rest::<f32>(Basin::Seamount, Some(2000));
}

#[test]
fn ocean_seamount_stays_exactly_at_rest_f64() {
    stays_at_rest::<f64>(Basin::Seamount, Some(500));
}

/// The steep bottom is steep: some pair of neighbouring cells is at least 1:2 apart.
#[test]
fn steep_basin_stays_exactly_at_rest_f32() {
    let s = ocean(Basin::Steep, 20_000);
    let pm = pycno::app::scenario_mesh(&s).unwrap();
    let (depth, _) = pycno::scenario::initial::evaluate(&s, &pm.topo.cell_centroid).unwrap();
    let slope = pm
        .topo
        .edge_cells
        .iter()
        .filter(|[_, j]| *j != pycno::mesh::NO_CELL)
        .map(|&[i, j]| {
            let (p, q) = (pm.topo.cell_centroid[i as usize], pm.topo.cell_centroid[j as usize]);
            (depth[i as usize] - depth[j as usize]).abs() / (p[0] - q[0]).hypot(p[1] - q[1])
        })
        .fold(0.0, f64::max);
    let shallowest = depth.iter().fold(f64::INFINITY, |m, &x| m.min(x));
    eprintln!("steep basin: steepest slope between neighbours {slope:.3}, shallowest bottom {shallowest:.1} m");
    assert!(slope >= 0.5, "the steep basin is not steep: {slope}");
    assert!(shallowest > 150.0, "the bottom reaches the interface: {shallowest}");
    stays_at_rest::<f32>(Basin::Steep, Some(1000));
}

#[test]
fn utm_basin_stays_exactly_at_rest_f32() {
    stays_at_rest::<f32>(Basin::Utm, Some(1000));
}

/// A reference that is not the water's own levels (a user's `physics.reference`): the
/// stored deviations are then equal in every cell, not zero (d1 exactly, d2 to the rounding
/// of H + level in float64, far below float32's ulp), and the water stays at rest all the
/// same.
#[test]
fn ocean_seamount_at_rest_off_the_reference_stays_at_rest_f32() {
    let mut s = ocean(Basin::Seamount, 20_000);
    s.physics.reference = Some(pycno::physics::Reference { surface: 0.25, interface: -140.5 });
    let out = run::<f32>(&s, Some(1000));
    let (u, moved) = (max_speed(&out.end), moved_levels(&out.start, &out.end, &out.depth));
    eprintln!("f32: seamount off the reference, 1000 steps: max |u| = {u:.3e} m/s, {moved} cells with moved levels");
    assert!(u <= U_REST, "water at rest moves at {u:e} m/s > {U_REST:e}");
    assert_eq!(moved, 0, "the surface or the interface moved in {moved} cells");
}

#[test]
#[ignore = "8 simulated hours, about 83k steps per basin: minutes"]
fn ocean_basins_stay_exactly_at_rest_for_8_hours_f32() {
    for basin in [Basin::Seamount, Basin::Steep, Basin::Utm] {
        stays_at_rest::<f32>(basin, None);
    }
}

/// The paper's circular dam break at `cells` cells for `steps` steps in precision T: each
/// layer's relative mass change.
fn dam_break_mass<T: Real>(cells: u64, steps: u64) -> (f64, f64) {
    let mut s = Scenario::paper_benchmark(cells);
    s.time.end = 1e6;
    let out = run::<T>(&s, Some(steps));
    assert_eq!(out.stats.steps, steps);
    let area = &out.pm.topo.cell_area;
    let (a1, a2) = masses(&out.start, area);
    let (b1, b2) = masses(&out.end, area);
    let (r1, r2) = ((b1 - a1) / a1, (b2 - a2) / a2);
    eprintln!(
        "{}: dam break, {} cells, {steps} steps (t = {:.1} s): relative mass change {r1:.2e} (layer 1), {r2:.2e} (layer 2)",
        T::NAME,
        out.pm.topo.num_cells(),
        out.stats.time
    );
    assert!(max_speed(&out.end) > 1e-3, "nothing moves: conservation would be trivial");
    (r1, r2)
}

// Storing thicknesses, float32 lost 3.2e-6 of layer 1 here (16 times the bound), and the
// loss grows with the steps.
#[test]
fn dam_break_keeps_each_layers_mass_f32() {
    let (r1, r2) = dam_break_mass::<f32>(4016, 8000);
    assert!(r1.abs() <= MASS_REL && r2.abs() <= MASS_REL, "mass drifts: {r1:e}, {r2:e} (bound {MASS_REL:e})");
}

#[test]
#[ignore = "10^5 steps at 64k cells: about half an hour on two cores"]
fn dam_break_64k_cells_1e5_steps_keeps_each_layers_mass_f32() {
    let (r1, r2) = dam_break_mass::<f32>(64052, 100_000);
    assert!(r1.abs() <= MASS_REL && r2.abs() <= MASS_REL, "mass drifts: {r1:e}, {r2:e} (bound {MASS_REL:e})");
}

/// The compensated sum keeps updates far below half an ulp, in both directions, on a power
/// of two (where a plain sum keeps decreases and loses increases) and off one.
#[test]
fn compensated_sum_keeps_every_small_update() {
    for start in [4.0f32, 800.0, 0.5, 3.3] {
        for x in [1e-9f32, -1e-9, 3.7e-8, -3.7e-8] {
            let (mut hi, mut lo) = (start, 0.0f32);
            let mut plain = start;
            let n = 100_000;
            for _ in 0..n {
                (hi, lo) = add_compensated(hi, lo, x);
                plain += x;
            }
            let exact = start as f64 + n as f64 * x as f64;
            let got = hi as f64 + lo as f64;
            // Only lo + x rounds, by half an ulp of |x| + ulp(hi)/2 at most: eps of the update
            // or eps^2 of the value, never eps of the value.
            let err = (got - exact).abs();
            let per_step = 0.5 * f32::EPSILON as f64 * (x.abs() as f64 + start.abs() as f64 * f32::EPSILON as f64);
            assert!(err <= n as f64 * per_step, "{start} + {n} x {x}: {got} vs {exact}");
            assert!(lo.abs() <= 0.5 * (hi.abs() * f32::EPSILON), "low part not normalized: {hi} {lo}");
            // The plain sum, for contrast, is off by the whole sum of the updates.
            assert!((plain as f64 - exact).abs() > 1e3 * err.max(1e-12));
        }
    }
}

/// Issue 46, item 10: in float32 the thickness of an absent lower layer came back as
/// ±3.6e-15 m instead of 0 (its stored deviation is two floats that cancel the rest
/// thickness only to about 2^-48 of it), and was written so to frames, gauges and NetCDF.
/// Every absent lower layer on the dense current's dry slope must read exactly 0.
#[test]
fn an_absent_lower_layer_reads_exactly_zero_in_f32() {
    let path = common::repo_root().join("meshes/scenarios/dense_current_slope.json");
    let s = Scenario::from_json(&std::fs::read_to_string(path).unwrap()).unwrap();
    let out = run::<f32>(&s, Some(30));
    for (name, st) in [("start", &out.start), ("after 30 steps", &out.end)] {
        let absent = st.iter().filter(|c| c.h2 == 0.0).count();
        let tiny: Vec<f64> = st.iter().map(|c| c.h2).filter(|&h| h != 0.0 && h.abs() < 1e-9).collect();
        assert!(absent > 100, "{name}: {absent} cells without a lower layer (the test needs some)");
        assert!(
            tiny.is_empty(),
            "{name}: {} absent lower layers read as {:?}...",
            tiny.len(),
            &tiny[..tiny.len().min(4)]
        );
    }
}
