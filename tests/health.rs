//! A run going wrong says so (issue 43, `solver/watch.rs`): a run whose water passes the speed
//! limit stops with the cell, its numbers, the state written out, the likely causes and the
//! opt-outs; `--no-health-checks` lets it run; a collapsing time step stops the loop; an
//! all-dry domain runs (nothing moves) and says that its bathymetry's sign is the likely cause.

mod common;
use common::cli::{expect_failure, expect_ok, pycno_np, text};
use common::scenario;
use pycno::app::scenario_mesh;
use pycno::comm::Single;
use pycno::physics::Model;
use pycno::scenario::initial;
use pycno::solver::watch::{Watch, Watcher, WentWrong};
use pycno::solver::{CpuBackend, Layout};
use std::path::Path;

/// The paper's dam break, small, in `dir`; returns the scenario's path.
fn dam_break(dir: &Path, extra: &str) -> String {
    let path = dir.join("s.json");
    std::fs::write(
        &path,
        format!(
            r#"{{ "name": "db", "domain": {{ "outer": [[-5,-5],[5,-5],[5,5],[-5,5]] }}, "resolution": {{ "cells": 600 }},
            "bathymetry": {{ "type": "constant", "depth": 5.0 }},
            "initial": {{ "type": "circular_dam_break", "center": [0, 0], "radius": 1.5, "h1_inside": 0.5, "h1_outside": 4.0 }},
            "time": {{ "end": 4.0, "output_interval": 4.0 }}, "output": {{ "dir": "out" }} {extra} }}"#
        ),
    )
    .unwrap();
    path.display().to_string()
}

#[test]
fn water_past_the_speed_limit_stops_the_run_and_says_where_and_how_to_opt_out() {
    let dir = tempfile::tempdir().unwrap();
    let s = dam_break(dir.path(), "");
    // The internal dam break moves at tens of cm/s: a limit of 2 cm/s is passed (the speeds
    // are looked at every 200 steps; the run takes about 290).
    let o = pycno_np(0, Some(dir.path()), &["run", &s, "--max-speed", "0.02", "--backend", "cpu"], &[]);
    let err = expect_failure(
        &o,
        Some(1),
        &["went wrong", "--max-speed", "the fastest water is in cell", "--no-health-checks"],
    );
    assert!(dir.path().join("out/db_wentwrong.vtu").is_file(), "no state written:\n{err}");
    // The same run with the checks off, and with the default limit, runs to its end.
    expect_ok(pycno_np(
        0,
        Some(dir.path()),
        &["run", &s, "--max-speed", "0.02", "--no-health-checks", "--overwrite"],
        &[],
    ));
    let o = expect_ok(pycno_np(0, Some(dir.path()), &["run", &s, "--overwrite"], &[]));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("WARN"), "a sound run warned:\n{}", text(&o));
    let o = pycno_np(0, Some(dir.path()), &["run", &s, "--max-speed", "-1"], &[]);
    expect_failure(&o, None, &["--max-speed -1"]);
    assert!(!o.status.success());
}

#[test]
fn an_all_dry_domain_runs_and_names_the_bathymetry_sign() {
    let dir = tempfile::tempdir().unwrap();
    // A sea 5 m deep written as -5: the bed lies 5 m above the surface everywhere.
    let s = dam_break(dir.path(), "");
    let text_of = std::fs::read_to_string(&s).unwrap().replace(r#""depth": 5.0"#, r#""depth": -5.0"#).replace(
        r#"{ "type": "circular_dam_break", "center": [0, 0], "radius": 1.5, "h1_inside": 0.5, "h1_outside": 4.0 }"#,
        r#"{ "type": "at_rest", "interface": -2.0, "surface": 0.0 }"#,
    );
    assert!(text_of.contains("at_rest"));
    std::fs::write(&s, text_of).unwrap();
    let o = expect_ok(pycno_np(0, Some(dir.path()), &["run", &s, "--backend", "cpu"], &[]));
    let err = String::from_utf8_lossy(&o.stderr);
    for w in ["no cell holds water", "5 m above the reference level", "positive down"] {
        assert!(err.contains(w), "missing {w:?}:\n{}", text(&o));
    }
}

/// The loop stops when the CFL step falls below the limit's fraction of the first step, and
/// not while it stays above it; the error names both steps.
#[test]
fn a_collapsing_time_step_stops_the_loop() {
    let s = scenario(
        r#"{ "domain": { "outer": [[0,0],[1,0],[1,1],[0,1]] }, "resolution": { "cells": 50 },
             "bathymetry": { "type": "constant", "depth": 1.0 },
             "initial": { "type": "at_rest", "interface": -0.5, "surface": 0 }, "time": { "end": 1 } }"#,
    );
    let pm = scenario_mesh(&s).unwrap();
    let (depth, init) = initial::evaluate(&s, &pm.topo.cell_centroid).unwrap();
    let lay = Layout::<f64>::from_topology(&pm.topo, &depth, &init, &s.physics.reference());
    let mut b = CpuBackend::new(Model::new(&s.physics).unwrap(), lay).unwrap();
    let mut w = Watcher::new(Watch { dt_fraction: 1e-3, fallback_fraction: 0.0, speed: 0.0 }, 10, 1);
    w.after(&mut b, &Single, 1, 0.1, 0.1).unwrap();
    w.after(&mut b, &Single, 2, 0.2, 2e-4).unwrap();
    let e = w.after(&mut b, &Single, 3, 0.3, 5e-5).unwrap_err();
    let ww = e.downcast_ref::<WentWrong>().expect("a WentWrong");
    assert_eq!(ww.step, 3);
    assert!(ww.what.contains("5.000e-5") && ww.what.contains("1.000e-1"), "{}", ww.what);
    // Off: nothing stops it.
    let mut w = Watcher::new(Watch::off(), 10, 1);
    w.after(&mut b, &Single, 1, 0.1, 0.1).unwrap();
    w.after(&mut b, &Single, 2, 0.2, 1e-12).unwrap();
}

/// An `open` end whose water beyond (at rest at `physics.reference`) lacks a layer that the
/// water inside holds would reflect: the run is refused, naming the boundary, the field to set
/// and the levels found inside; with the reference set it runs.
#[test]
fn an_open_end_without_a_usable_reference_is_refused_with_the_levels_to_set() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let write = |reference: &str| {
        std::fs::write(
            &path,
            format!(
                r#"{{ "name": "o", "domain": {{ "outer": [[0,0],[10,0],[10,1],[0,1]], "outer_tags": ["", "east", "", ""] }},
                "resolution": {{ "cells": 200 }}, "bathymetry": {{ "type": "constant", "depth": 2.0 }},
                "initial": {{ "type": "layers", "layer1": {{ "thickness": 0.5 }}, "layer2": {{ "thickness": 1.5 }} }},
                "boundaries": {{ "east": {{ "type": "open" }} }}, {reference}
                "time": {{ "end": 0.2 }}, "output": {{ "dir": "out" }} }}"#
            ),
        )
        .unwrap();
    };
    let p = path.display().to_string();
    write("");
    let o = pycno_np(0, Some(dir.path()), &["run", &p, "--backend", "cpu"], &[]);
    expect_failure(&o, Some(1), &["boundaries.east", "physics.reference", r#""surface": 0"#, r#""interface": -0.5"#]);
    write(r#""physics": { "reference": { "surface": 0, "interface": -0.5 } },"#);
    expect_ok(pycno_np(0, Some(dir.path()), &["run", &p, "--backend", "cpu", "--overwrite"], &[]));
}
