//! Linear bottom friction on the lower layer (`physics.linear_friction`, the worked example
//! of the guide's "Adding physics"): d(q2)/dt = -k q2 / h2, integrated implicitly in q2 at the end of each update.
//!
//! - On one cell: the factor 1 / (1 + dt k / h2) per step, so the momentum shrinks and never
//!   turns around, whatever the step; many small steps approach exp(-k t / h2).
//! - In a run: a uniform flow in a large basin keeps its upper layer (no friction there) and
//!   loses its lower layer's momentum as exp(-k t / h2) away from the walls; with k = 0 the
//!   lower layer keeps it too.

mod common;
use common::{run, scenario};
use pycno::physics::{source, Model, Physics, Side};

fn cell(m: &Model<f64>, q2: [f64; 2], h2: f64) -> Side<f64> {
    Side::from_thickness(m, 1.0, [0.3, -0.2], h2, q2, 5.0)
}

#[test]
fn one_cell_decays_and_never_reverses() {
    let (k, h2) = (0.05, 4.0);
    // The friction alone: the shear limit (on by default) would also act once a long step
    // has stopped the lower layer under the moving upper one.
    let m = Model::<f64>::new(&Physics { linear_friction: k, shear_limit: 0.0, ..Default::default() }).unwrap();
    // Any step, even one far beyond an explicit scheme's limit h2 / k = 80 s.
    for dt in [1e-3, 1.0, 1e3, 1e6] {
        let mut s = cell(&m, [2.0, -1.0], h2);
        source(&m, &mut s, dt);
        let f = 1.0 / (1.0 + dt * k / h2);
        assert!((s.q2[0] - 2.0 * f).abs() <= 1e-15 && (s.q2[1] + f).abs() <= 1e-15, "dt {dt}: {:?}", s.q2);
        assert!(s.q2[0] > 0.0 && s.q2[1] < 0.0, "dt {dt}: the friction reversed the flow: {:?}", s.q2);
        assert_eq!((s.h1(&m), s.q1, s.h2(&m)), (1.0, [0.3, -0.2], h2), "friction changed what it must not");
    }
    // First order in dt towards exp(-k t / h2): halving the step halves the error.
    let t = 10.0;
    let error = |steps: u32| {
        let mut s = cell(&m, [1.0, 0.0], h2);
        for _ in 0..steps {
            source(&m, &mut s, t / steps as f64);
        }
        (s.q2[0] - (-k * t / h2).exp()).abs()
    };
    let (e1, e2) = (error(100), error(200));
    eprintln!("error after 100 steps {e1:.3e}, after 200 {e2:.3e}");
    assert!(e1 < 1e-4 && (e1 / e2 - 2.0).abs() < 0.05, "not first order: {e1:e}, {e2:e}");
}

#[test]
fn zero_friction_changes_nothing() {
    let m = Model::<f64>::new(&Physics { shear_limit: 0.0, ..Physics::default() }).unwrap();
    assert!(!m.has_sources());
    let mut s = cell(&m, [2.0, -1.0], 4.0);
    source(&m, &mut s, 0.1);
    assert_eq!(s, cell(&m, [2.0, -1.0], 4.0));
}

/// A uniform flow (0.5 m/s in both layers) in a 100 m square basin, run to t = 2 s: the
/// walls' reflections travel about 14 m by then, so the central cells still see a uniform
/// flow. Returns (q1x, q2x) there, averaged over the cells within 5 m of the centre.
fn central_momenta(k: f64) -> (f64, f64) {
    let s = scenario(&format!(
        r#"{{
        "domain": {{ "outer": [[-50, -50], [50, -50], [50, 50], [-50, 50]] }},
        "resolution": {{ "cells": 16000 }},
        "bathymetry": {{ "type": "constant", "depth": 5.0 }},
        "initial": {{ "type": "layers",
            "layer1": {{ "thickness": 1.0, "velocity": [0.5, 0.0] }},
            "layer2": {{ "thickness": 4.0, "velocity": [0.5, 0.0] }} }},
        "physics": {{ "linear_friction": {k} }},
        "time": {{ "end": 2.0 }}
    }}"#
    ));
    let o = run::<f64>(&s, None);
    let (mut q1, mut q2, mut n) = (0.0, 0.0, 0.0);
    for (st, p) in o.end.iter().zip(&o.pm.topo.cell_centroid) {
        if p[0].hypot(p[1]) < 5.0 {
            q1 += st.q1[0];
            q2 += st.q2[0];
            n += 1.0;
        }
    }
    assert!(n > 10.0, "too few central cells");
    (q1 / n, q2 / n)
}

#[test]
fn a_uniform_flow_slows_down_as_the_ode_says() {
    let (k, h2, t) = (0.05, 4.0, 2.0);
    let (q1, q2) = central_momenta(k);
    let want = 4.0 * 0.5 * (-k * t / h2).exp();
    eprintln!("q1x = {q1:.12} (want 0.5), q2x = {q2:.12} (want {want:.12})");
    assert!((q1 - 0.5).abs() < 1e-9, "the upper layer felt the bottom friction: {q1}");
    assert!((q2 - want).abs() < 1e-4 * want, "q2x = {q2}, exp(-k t / h2) gives {want}");
    // The control: without friction the lower layer keeps its momentum.
    let (_, q2_free) = central_momenta(0.0);
    assert!((q2_free - 2.0).abs() < 1e-9, "without friction q2x = {q2_free}");
}

#[test]
fn the_scenario_field_is_checked() {
    for bad in ["-0.1", "1e400", "\"a\""] {
        let text = format!(
            r#"{{ "domain": {{ "outer": [[0, 0], [1, 0], [1, 1]] }}, "resolution": {{ "cells": 10 }},
               "initial": {{ "type": "at_rest", "interface": -1 }}, "time": {{ "end": 1 }},
               "physics": {{ "linear_friction": {bad} }} }}"#
        );
        let e = pycno::scenario::Scenario::from_json(&text).expect_err(bad);
        assert!(format!("{e:#}").contains("physics.linear_friction"), "{bad}: {e:#}");
    }
}
