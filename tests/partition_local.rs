//! Runs with `--partition` on a directory with rank geometry files (issue 22): each rank
//! reads only its own files and never builds the global mesh, and everything holds as with
//! the global mesh: N ranks equal one rank bit for bit (with open and discharge boundaries,
//! whose per-tag lengths come from the files, and gauges located on the ranks' pieces),
//! restarts across rank counts read the checkpoint's cells by global id, a partition of
//! another mesh is refused by the mesh source's identity. Needs `mpirun`.

mod common;

use common::cli::{expect_failure, expect_ok, pycno_np, stats, text};
use std::path::Path;

/// A channel with a river (discharge) at the west end, an open sea at the east end, a
/// bump, a dam break, a beta-plane (each cell's own f, from the rank's own centroids), the
/// horizontal viscosity (each edge's coupling from the rank's own geometry), a shear limit
/// tight enough to act (0.02: the run's state differs from the default's) and three gauges,
/// one on a vertex shared by several cells. At first order (a partition with one ring);
/// `second_order_from_rank_files_equals_one_rank` runs it at order 2.
fn scenario(dir: &Path) -> String {
    let p = dir.join("channel.json");
    std::fs::write(
        &p,
        r#"{
  "name": "channel",
  "domain": { "outer": [[0, 0], [40, 0], [40, 4], [0, 4]], "outer_tags": ["", "sea", "", "river"] },
  "resolution": { "cells": 3000 },
  "bathymetry": { "type": "gaussian_bump", "depth": 5.0, "height": 2.0, "center": [20, 2], "width": 4 },
  "initial": { "type": "dam_break_x", "x0": 12.0, "interface_left": -2.0, "interface_right": -3.0, "surface": 0.0 },
  "physics": { "r": 0.9, "order": 1, "coriolis": { "f0": 0.5, "beta": 0.05, "y0": 2 }, "viscosity": { "time_scale": 1.0 }, "shear_limit": 0.02 },
  "boundaries": { "river": { "type": "discharge", "layer1": 2.0, "layer2": 0 }, "sea": { "type": "open" } },
  "time": { "end": 0.6, "output_interval": 0.2 },
  "gauges": { "interval": 0.05, "points": [ { "name": "a", "at": [5, 2] }, { "name": "b", "at": [20, 2] }, { "name": "c", "at": [30, 0] } ] }
}"#,
    )
    .unwrap();
    p.to_str().unwrap().to_string()
}

fn s(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

fn run(np: usize, scenario: &str, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut a = vec!["run", scenario, "--backend", "cpu", "-q", "--no-vtk", "--out"];
    let o = s(out);
    a.push(&o);
    a.extend_from_slice(extra);
    pycno_np(np, None, &a, &[])
}

fn partition(scenario: &str, ranks: usize, out: &Path) {
    let r = ranks.to_string();
    expect_ok(pycno_np(0, None, &["partition", scenario, "--ranks", &r, "--no-vtk", "--out", &s(out)], &[]));
}

#[test]
fn n_ranks_from_rank_files_equal_one_rank_with_boundaries_and_gauges() {
    let tmp = tempfile::tempdir().unwrap();
    let sc = scenario(tmp.path());
    let one = tmp.path().join("one");
    expect_ok(run(0, &sc, &one, &[]));
    let want = stats(&one);
    for np in [2, 3] {
        let p = tmp.path().join(format!("p{np}"));
        partition(&sc, np, &p);
        let m: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(p.join("manifest.json")).unwrap()).unwrap();
        assert_eq!(m["rank_geometry"], true);
        let out = tmp.path().join(format!("n{np}"));
        let o = expect_ok(run(np, &sc, &out, &["--partition", &s(&p)]));
        assert!(!text(&o).contains("builds the global mesh"), "{}", text(&o));
        let got = stats(&out);
        assert_eq!(got["state_checksum"], want["state_checksum"], "{np} ranks differ from one rank");
        assert_eq!(got["boundaries"], want["boundaries"], "{np} ranks: another mass budget per tag");
        assert_eq!(got["cells"], want["cells"]);
        assert_eq!(got["edges"], want["edges"]);
        assert_eq!(got["peak_memory_per_rank"].as_array().unwrap().len(), np);
        assert_eq!(got["setup_seconds_per_rank"].as_array().unwrap().len(), np);
        let gauges = |d: &Path| std::fs::read_to_string(d.join("gauges.csv")).unwrap();
        assert_eq!(gauges(&out), gauges(&one), "{np} ranks: other gauge cells or values");
    }
}

/// Second order (issue 21) from rank files: the scenario's `physics.order = 2` makes
/// `pycno partition` give each rank two rings of receive cells (geometry included, so each
/// first-ring cell's stencil, open boundaries and all, is on the rank), and N ranks reading
/// only their files equal one rank bit for bit, gauges and boundary budgets too, in both
/// exchange loops.
#[test]
fn second_order_from_rank_files_equals_one_rank() {
    let tmp = tempfile::tempdir().unwrap();
    let sc1 = scenario(tmp.path());
    let json = std::fs::read_to_string(&sc1).unwrap().replace(r#""order": 1,"#, r#""order": 2,"#);
    assert!(json.contains(r#""order": 2"#));
    let sc = s(&tmp.path().join("channel_order2.json"));
    std::fs::write(&sc, json).unwrap();
    let one = tmp.path().join("one");
    expect_ok(run(0, &sc, &one, &[]));
    let want = stats(&one);
    let first = tmp.path().join("first");
    expect_ok(run(0, &sc1, &first, &[]));
    assert_ne!(stats(&first)["state_checksum"], want["state_checksum"], "order 2 ran at order 1");
    // Also cells dealt out at random: first rings everywhere, along the open boundaries too
    // (whose ghosts must be the owners' open ones), cells sent to many ranks.
    let pm = pycno::app::scenario_mesh(&pycno::scenario::Scenario::from_file(Path::new(&sc)).unwrap()).unwrap();
    let n = pm.topo.num_cells() as u64;
    let hashed: String = (0..n).map(|c| format!("{}\n", (c.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) % 3)).collect();
    let owners = tmp.path().join("hashed.txt");
    std::fs::write(&owners, hashed).unwrap();
    for (np, name) in [(2, "METIS"), (3, "METIS"), (3, "hashed")] {
        let p = tmp.path().join(format!("p{np}_{name}"));
        if name == "hashed" {
            let a = ["partition", &sc, "--ranks", "3", "--no-vtk", "--owners", &s(&owners), "--out", &s(&p)];
            expect_ok(pycno_np(0, None, &a, &[]));
        } else {
            partition(&sc, np, &p);
        }
        let m: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(p.join("manifest.json")).unwrap()).unwrap();
        assert_eq!((m["rank_geometry"].as_bool(), m["rings"].as_u64()), (Some(true), Some(2)));
        for mode in ["overlap", "blocking"] {
            let out = tmp.path().join(format!("n{np}_{name}_{mode}"));
            let o = expect_ok(run(np, &sc, &out, &["--partition", &s(&p), "--exchange", mode]));
            assert!(!text(&o).contains("builds the global mesh"), "{}", text(&o));
            let got = stats(&out);
            assert_eq!(got["state_checksum"], want["state_checksum"], "order 2, {np} ranks, {name}, {mode}");
            assert_eq!(got["boundaries"], want["boundaries"], "order 2, {np} ranks, {name}: another mass budget");
            let gauges = |d: &Path| std::fs::read_to_string(d.join("gauges.csv")).unwrap();
            assert_eq!(gauges(&out), gauges(&one), "order 2, {np} ranks, {name}, {mode}: other gauge values");
        }
    }
}

#[test]
fn a_checkpoint_of_three_ranks_restarts_on_two_from_rank_files() {
    let tmp = tempfile::tempdir().unwrap();
    let sc = scenario(tmp.path());
    let full = tmp.path().join("full");
    expect_ok(run(0, &sc, &full, &[]));
    let (p3, p2) = (tmp.path().join("p3"), tmp.path().join("p2"));
    partition(&sc, 3, &p3);
    partition(&sc, 2, &p2);
    let out = tmp.path().join("out");
    // Stopped after 20 steps with a checkpoint every 10; then resumed on two ranks.
    expect_ok(run(3, &sc, &out, &["--partition", &s(&p3), "--checkpoint-every", "10", "--max-steps", "20"]));
    let ckpt = out.join("checkpoints");
    let o = pycno_np(
        2,
        None,
        &["run", "--restart", &s(&ckpt), "--backend", "cpu", "-q", "--no-vtk", "--partition", &s(&p2)],
        &[],
    );
    expect_ok(o);
    let (want, got) = (stats(&full), stats(&out));
    assert_eq!(got["restarted_from"], 20);
    assert_eq!(
        got["state_checksum"], want["state_checksum"],
        "the restart on 2 ranks differs from the uninterrupted run"
    );
}

#[test]
fn a_partition_of_another_mesh_is_refused_without_meshing() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("p");
    expect_ok(pycno_np(0, None, &["partition", "--cells", "2000", "--ranks", "2", "--no-vtk", "--out", &s(&p)], &[]));
    // Run inside the temporary directory: the default output directory of the repository's
    // root may hold another run's results (CI runs the demo there first).
    let o = pycno_np(
        2,
        Some(tmp.path()),
        &["run", "--cells", "2100", "--max-steps", "1", "--backend", "cpu", "--partition", &s(&p), "--no-vtk", "-q"],
        &[],
    );
    expect_failure(&o, Some(1), &["was made for another mesh", "partition this scenario's mesh again"]);
    // The same mesh runs.
    let o = pycno_np(
        2,
        None,
        &[
            "run",
            "--cells",
            "2000",
            "--max-steps",
            "1",
            "--backend",
            "cpu",
            "--partition",
            &s(&p),
            "--no-vtk",
            "-q",
            "--out",
            &s(&tmp.path().join("o")),
        ],
        &[],
    );
    expect_ok(o);
}
