//! A dense current down a slope at default settings against an independent solver (issue 43:
//! "a dense current down a slope stops 0.6 m short with 34% less speed" with the dry tolerance
//! fixed at 1e-3 m; done when it is within 3% of its reference with the default tolerance).
//!
//! **The case.** A lab tank: a channel 10 m long, one cell wide (one row of two right
//! triangles per column, walls all round, 250 columns of 4 cm), its bottom sloping down at 3%
//! from 1 m deep at x = 0 to 1.3 m at x = 10 m, r = 0.99 (brine 1% denser than the water
//! above, g' = 0.098 m/s²). A lock of dense water (layer 2) fills x < 1 m below a flat
//! interface at -0.88 m, 0.12 m thick at the back wall and 0.15 m at the gate; light water
//! (layer 1) 0.88 m deep covers it and fills the rest; all at rest under a flat surface. Why
//! these numbers: the lock is thin beside the water (1/7), so the current's shear stays inside
//! the two-layer system's hyperbolic range ((u2 - u1)² at most 0.62 of g'(h1 + h2) in the
//! reference); gravity along the slope (g' s = 3e-3 m/s²) adds up to 0.09 m/s, a third of
//! the front's speed, by the end at 30 s, when the front has run about 6.8 m, short of the far
//! wall; r = 0.99 rather than 0.998 halves the time to run that far (the step is set by the
//! surface wave, √(g H) = 3.6 m/s, 15 times the current). The deepest water is 1.3 m, so the
//! default dry tolerance is 1.3e-5 m, a ten-thousandth of the lock; the issue's 1e-3 m is
//! 1/150 of it.
//!
//! **The reference.** `common/two_layer_1d.rs`: a path-conservative central-upwind scheme,
//! second order, written from the equations and sharing nothing with pycno, extended to a
//! bottom (levels and velocities reconstructed, well-balanced: the first test shows water at
//! rest over the slope stays at rest to 2e-14 m²/s with both layers, with none below, and with
//! a dense pool), on 1000 cells (4 to a column). The tip of a vanishing layer converges slowly:
//! its travel is 6.22, 6.57, 6.805, 6.902 m at 250, 500, 1000, 2000 cells, so the converged
//! travel is likely about 7.0 m, 2 to 3% beyond the reference's; the test checks that it
//! converges (each doubling moves the front less).
//!
//! **Checked**, at default settings (the dry tolerance not given), f64, orders 1 and 2: the
//! dense front, where h2 falls through 1e-3 of the lock's 0.15 m (0.15 mm, 12 default
//! tolerances) at the end of the run of columns (cells for the reference) from the gate on
//! above that level, interpolated between the two centres, at 15 s and 30 s. Its travel from the gate at 30 s within 3% of the
//! reference's; its speed between 15 s and 30 s within 5%; each layer's mass to 1e-13; no
//! thickness negative at any of 30 looks (one a second).
//!
//! **Measured** (2026-11-29; the front interpolated between the two columns where h2 falls
//! through its level, since a whole column is 0.6% of the travel): reference travel 6.808 m,
//! speed 0.2517 m/s. Order 1: travel 6.732 m (-1.1%), speed 0.240 m/s (-4.5%); order 2:
//! 6.915 m (+1.6%), 0.259 m/s (+3.0%), since its velocities take the bottom's steps into
//! account (physics/reconstruct.rs: before, 6.615 m, -2.8%). With `"dry_tolerance": 1e-3`
//! (`slope_current_with_the_old_fixed_tolerance_falls_short`, ignored,
//! `-- --ignored`) the front stops at 4.34 m (travel -51%, speed -53%, both orders): the check
//! fails, the issue's symptom. The test takes 27 s on two busy cores (release).
//!
//! **Under refinement.** At 500 columns against 2000 cells (not in CI, about 2 minutes: set
//! `COLUMNS` to 500): reference travel 6.907 m, speed 0.252 m/s; order 2 6.791 m (-1.7%),
//! 0.250 m/s (-1.1%), within 3% (before the bottom's steps entered its velocities, -4.0%);
//! order 1 6.665 m (-3.5%), 0.241 m/s (-4.3%), not: its front stays put under refinement
//! (6.73 to 6.67 m) while the reference's advances. The cause at order 1 is the tolerance:
//! with `"dry_tolerance": 1e-6` (a tenth of the default) order 1 at 500 columns travels
//! 7.110 m (+3.0%, speed +2.7%), beyond the reference and near its converged 7.0 m. The
//! default scales with the deepest water (1.3 m), but the current is 0.15 m thick and its
//! front is measured at 0.15 mm, just above pycno's `thin` (ten tolerances, 0.13 mm) below
//! which an edge takes the dry flux. A tolerance scaled to the thinner layer is not the cure
//! either (2026-11-29, 500 columns against 2000 cells): at 3.25e-6 and 1.5e-6 m order 1 runs
//! +3.3% (speed +3.0%) and order 2 +6.5% (speed +7.2%) beyond the reference, against -3.5%
//! and -3.8% at the default then; the reference's own travel still grows by about 1% a doubling
//! (extrapolated 6.97 m).

mod common;
#[path = "common/two_layer_1d.rs"]
mod two_layer_1d;
use common::masses;
use common::strip::Strip;
use two_layer_1d::Channel;

const G: f64 = 9.81;
const R: f64 = 0.99;
const LENGTH: f64 = 10.0;
/// Depth at x = 0 (m) and the bottom's slope.
const DEPTH: f64 = 1.0;
const SLOPE: f64 = 0.03;
/// The gate (m), the lock's interface (m, up) and its thickness at the gate (m).
const X0: f64 = 1.0;
const INTERFACE: f64 = -0.88;
const LOCK: f64 = INTERFACE + DEPTH + SLOPE * X0;
const COLUMNS: usize = 250;
/// The reference desingularises velocities below this thickness (m): 1e-4 of the lock, a
/// tenth of the front's threshold.
const THIN: f64 = 1e-4 * LOCK;
/// When the front is measured (s); the state is looked at every second.
const T_MID: f64 = 15.0;
const T_END: f64 = 30.0;

/// The bottom's elevation (m, up).
fn bottom(x: f64) -> f64 {
    -(DEPTH + SLOPE * x)
}

/// The dense front (m): where `h2` falls through 1e-3 of the lock after the run of cells
/// (centred at `x`, increasing) from the gate on in which it is over that level. (The last such cell anywhere would be
/// at the far wall: pycno spreads a film thinner than its dry tolerance, about 2e-6 m here,
/// ahead of the current, and it collects at the wall downslope.)
fn front(x: &[f64], h2: &[f64]) -> f64 {
    let level = 1e-3 * LOCK;
    let gate = x.iter().position(|&x| x > X0).unwrap();
    let beyond = (gate..x.len()).find(|&i| h2[i] <= level).unwrap_or(x.len());
    let last = beyond.max(gate + 1) - 1;
    if beyond == last + 1 && beyond < x.len() {
        // Where h2 falls through the level between the two centres, linearly: a whole
        // column is 0.6% of the travel, a fifth of the bound.
        let f = (h2[last] - level) / (h2[last] - h2[beyond]);
        x[last] + f * (x[beyond] - x[last])
    } else {
        x[last]
    }
}

/// The fronts at `T_MID` and `T_END`.
#[derive(Clone, Copy, Debug)]
struct Fronts {
    mid: f64,
    end: f64,
}

impl Fronts {
    fn travel(&self) -> f64 {
        self.end - X0
    }
    fn speed(&self) -> f64 {
        (self.end - self.mid) / (T_END - T_MID)
    }
}

/// The current on pycno's CPU backend in f64 at `order`, with `tolerance` as the dry
/// tolerance (None: the default): the column averages of h2 at `T_MID` and `T_END`. Checks
/// each layer's mass and that no thickness goes negative on the way.
fn pycno(order: u32, tolerance: Option<f64>) -> [Vec<f64>; 2] {
    let strip = Strip { columns: COLUMNS, lo: 0.0, hi: LENGTH };
    let dir = tempfile::tempdir().unwrap();
    let node = strip.write(dir.path());
    let tol = tolerance.map(|t| format!(r#", "dry_tolerance": {t:e}"#)).unwrap_or_default();
    let s = common::scenario(&format!(
        r#"{{
        "name": "slope",
        "mesh": {node:?},
        "bathymetry": {{ "type": "slope", "depth": {DEPTH}, "gradient": [{SLOPE}, 0] }},
        "initial": {{ "type": "dam_break_x", "x0": {X0}, "interface_left": {INTERFACE}, "interface_right": -2, "surface": 0 }},
        "physics": {{ "g": {G}, "r": {R}, "order": {order}{tol} }},
        "time": {{ "end": {T_END} }}
    }}"#
    ));
    assert_eq!(s.physics.dry_tolerance, tolerance);
    let looks: Vec<f64> = (1..=T_END as usize).map(|k| k as f64).collect();
    let (mut mid, mut thinnest, mut seen) = (Vec::new(), f64::INFINITY, 0);
    let out = common::run_observed::<f64>(&s, None, &looks, &mut |t, pm, st| {
        seen += 1;
        thinnest = st.iter().map(|c| c.h1.min(c.h2)).fold(thinnest, f64::min);
        if (t - T_MID).abs() < 1e-9 {
            mid = strip.averages(&pm.topo.cell_centroid, &pm.topo.cell_area, &st).1;
        }
    });
    let topo = &out.pm.topo;
    assert_eq!(seen, looks.len());
    assert!(thinnest >= 0.0, "order {order}: a thickness went negative: {thinnest:e}");
    let (m0, m1) = (masses(&out.start, &topo.cell_area), masses(&out.end, &topo.cell_area));
    assert!((m1.0 - m0.0).abs() <= 1e-13 * m0.0 && (m1.1 - m0.1).abs() <= 1e-13 * m0.1, "mass {m0:?} -> {m1:?}");
    [mid, strip.averages(&topo.cell_centroid, &topo.cell_area, &out.end).1]
}

/// The fronts of h2 profiles at `T_MID` and `T_END` on cells centred at `x`.
fn fronts(x: &[f64], h2: &[Vec<f64>; 2]) -> Fronts {
    Fronts { mid: front(x, &h2[0]), end: front(x, &h2[1]) }
}

/// The same current on the reference solver, `cells` cells.
fn reference(cells: usize) -> Fronts {
    let lock = |x: f64| if x < X0 { INTERFACE } else { -2.0 };
    let mut ch = Channel::over_bottom(cells, LENGTH, bottom, 0.0, lock, THIN, R, G);
    let x: Vec<f64> = (0..cells).map(|i| ch.x(i)).collect();
    let mut t = 0.0;
    let mut at = |time: f64| {
        ch.advance(&mut t, time);
        front(&x, &ch.u.iter().map(|c| c[2]).collect::<Vec<_>>())
    };
    Fronts { mid: at(T_MID), end: at(T_END) }
}

/// The travel and speed of `run` off `reference`'s, relative to the reference's.
fn misses(run: Fronts, reference: Fronts) -> (f64, f64) {
    ((run.travel() - reference.travel()) / reference.travel(), (run.speed() - reference.speed()) / reference.speed())
}

/// The reference first: water at rest over the slope stays at rest, with both layers
/// everywhere, with no lower layer, and with a dense pool in the deep part whose interface
/// meets the bottom (at a face: where it cuts a cell, the reconstruction of the levels is not
/// exact, as in Kurganov and Petrova's scheme).
#[test]
fn reference_keeps_water_at_rest_over_the_slope() {
    let cells = 400;
    let face = |x: f64| bottom((x * cells as f64 / LENGTH).round() * (LENGTH / cells as f64));
    for (name, level) in [("both layers", -0.45), ("no lower layer", -2.0), ("a pool below x = 6 m", face(6.0))] {
        let mut ch = Channel::over_bottom(cells, LENGTH, bottom, 0.0, |_| level, THIN, R, G);
        let start = ch.u.clone();
        let mut t = 0.0;
        let steps = ch.advance(&mut t, 20.0);
        let (mut speed, mut change): (f64, f64) = (0.0, 0.0);
        for (a, b) in start.iter().zip(&ch.u) {
            speed = speed.max(b[1].abs()).max(b[3].abs());
            change = change.max((a[0] - b[0]).abs()).max((a[2] - b[2]).abs());
        }
        eprintln!("reference at rest, {name}: after {steps} steps, largest |q| {speed:.1e} m²/s, |Δh| {change:.1e} m");
        assert!(speed <= 1e-12 && change <= 1e-12, "{name}: the reference moves water at rest: {speed:e}, {change:e}");
        assert!(start.iter().any(|c| c[2] > 0.0) == (level > bottom(LENGTH)), "{name}: the wrong case");
    }
}

#[test]
fn slope_current_matches_the_reference_at_default_settings() {
    let fine = reference(4 * COLUMNS);
    let (half, quarter) = (reference(2 * COLUMNS), reference(COLUMNS));
    let own = misses(half, fine);
    eprintln!(
        "reference: front at {:.3} and {:.3} m (travel {:.3} m, speed {:.4} m/s); at half its cells {:+.2}% and \
         {:+.2}%, travel {:.3} m at a quarter",
        fine.mid,
        fine.end,
        fine.travel(),
        fine.speed(),
        100.0 * own.0,
        100.0 * own.1,
        quarter.travel()
    );
    // The reference converges: each doubling moves its front less.
    assert!(
        quarter.travel() < half.travel()
            && half.travel() < fine.travel()
            && half.travel() - quarter.travel() > fine.travel() - half.travel(),
        "the reference does not converge: travel {:.3}, {:.3}, {:.3} m",
        quarter.travel(),
        half.travel(),
        fine.travel()
    );
    let mut failed = Vec::new();
    let x = Strip { columns: COLUMNS, lo: 0.0, hi: LENGTH }.centres();
    for order in [1, 2] {
        let run = fronts(&x, &pycno(order, None));
        let (travel, speed) = misses(run, fine);
        eprintln!(
            "order {order}: front at {:.3} and {:.3} m (travel {:.3} m, speed {:.4} m/s): {:+.2}% and {:+.2}% off",
            run.mid,
            run.end,
            run.travel(),
            run.speed(),
            100.0 * travel,
            100.0 * speed
        );
        if travel.abs() > 0.03 || speed.abs() > 0.05 {
            failed.push(format!("order {order}: travel {:+.2}%, speed {:+.2}%", 100.0 * travel, 100.0 * speed));
        }
    }
    assert!(failed.is_empty(), "off the reference: {}", failed.join("; "));
}

/// The issue's symptom, kept to show that the check can fail: with the dry tolerance fixed at
/// 1e-3 m the front falls short (`-- --ignored` to measure it again).
#[test]
#[ignore]
fn slope_current_with_the_old_fixed_tolerance_falls_short() {
    let fine = reference(4 * COLUMNS);
    for order in [1, 2] {
        let run = fronts(&Strip { columns: COLUMNS, lo: 0.0, hi: LENGTH }.centres(), &pycno(order, Some(1e-3)));
        // The default test's bound on the travel, which must fail here (the front short).
        let (travel, speed) = misses(run, fine);
        eprintln!(
            "order {order}, dry tolerance 1e-3 m: front at {:.3} and {:.3} m: travel {:+.2}%, speed {:+.2}% off",
            run.mid,
            run.end,
            100.0 * travel,
            100.0 * speed
        );
        assert!(travel < -0.03, "order {order}: with 1e-3 m the front is within 3%: {:+.2}%", 100.0 * travel);
    }
}
