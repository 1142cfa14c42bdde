//! Multi-rank runs under a real `mpirun` (Open MPI), against the one-rank run.
//!
//! - N ranks give the one-rank result bit for bit (N = 2, 3, 4, 7; both exchange loops), on
//!   METIS partitions made on the fly and on partition directories whose cell owners force
//!   the gather fallback; the comparison reads the `.pvtu` sets with the real VTK library.
//! - Mass per layer is conserved across ranks.
//! - A partition for another rank count, a missing rank file, a corrupted rank file and a
//!   fault on one rank mid-run end every rank with a message and a non-zero exit, in
//!   bounded time.
//!
//! Needs `mpirun` (Debian's openmpi-bin; `tools/setup.sh` installs it) and `python3` with
//! `vtk`, `numpy` (the project's `.venv`, which `tools/test.sh` puts first on PATH).

use pycno::app::scenario_mesh;
use pycno::scenario::Scenario;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::cli::{expect_ok as ok, pycno_np, stats, text, BIN};

const CELLS: &str = "3000";

fn mpirun(np: usize, args: &[&str], env: &[(&str, &str)]) -> Output {
    pycno_np(np, None, args, env)
}

fn run_args<'a>(out: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec![
        "run",
        "--cells",
        CELLS,
        "--t-end",
        "0.1",
        "--output-interval",
        "0.05",
        "--backend",
        "cpu",
        "-q",
        "--out",
        out,
    ];
    v.extend_from_slice(extra);
    v
}

/// Both series equal bit for bit, read back through VTK (`.pvtu` as one grid).
fn assert_same_series(a: &Path, b: &Path) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/compare_runs.py");
    let o = Command::new("python3")
        .arg(script)
        .arg(a.join("dambreak.pvd"))
        .arg(b.join("dambreak.pvd"))
        .output()
        .expect("cannot run python3 (tools/test.sh puts the project's .venv with vtk first on PATH)");
    assert!(o.status.success(), "{} and {} differ:\n{}", a.display(), b.display(), text(&o));
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.lines().count() >= 3, "expected three frames compared:\n{s}");
    eprint!("{s}");
}

/// Owners that scatter stripes of cells over the ranks: the send blocks then need the pair
/// chain and, for some destinations, the gather fallback.
fn striped_owners(ranks: usize) -> String {
    let pm = scenario_mesh(&Scenario::paper_benchmark(CELLS.parse().unwrap())).unwrap();
    let mut s = String::new();
    for p in &pm.topo.cell_centroid {
        let r = ((((p[0] + 5.0) * 3.0) as i64 + ((p[1] + 5.0) * 2.0) as i64) % ranks as i64) as u32;
        s.push_str(&format!("{r}\n"));
    }
    s
}

fn reference(tmp: &Path) -> PathBuf {
    let one = tmp.join("one");
    ok(mpirun(1, &run_args(one.to_str().unwrap(), &[]), &[]));
    // The one-rank run under mpirun equals the plain run too.
    let plain = tmp.join("plain");
    let o = Command::new(BIN).args(run_args(plain.to_str().unwrap(), &[])).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert_same_series(&plain, &one);
    one
}

#[test]
fn n_ranks_equal_one_rank_bit_for_bit_with_metis_partitions() {
    let tmp = tempfile::tempdir().unwrap();
    let one = reference(tmp.path());
    let s1 = stats(&one);
    for np in [2usize, 3, 4, 7] {
        for mode in ["overlap", "blocking"] {
            let dir = tmp.path().join(format!("metis_{np}_{mode}"));
            ok(mpirun(np, &run_args(dir.to_str().unwrap(), &["--exchange", mode]), &[]));
            assert_same_series(&one, &dir);
            let s = stats(&dir);
            assert_eq!(s["ranks"], np);
            assert_eq!(s["steps"], s1["steps"]);
            assert_eq!(s["state_checksum"], s1["state_checksum"], "{np} ranks, {mode}");
            assert_eq!(s["exchange"], mode);
            assert_eq!(s["phases_per_rank"].as_array().unwrap().len(), np);
            for layer in ["1", "2"] {
                let (a, b) = (
                    s[format!("mass_layer{layer}_start")].as_f64().unwrap(),
                    s[format!("mass_layer{layer}_end")].as_f64().unwrap(),
                );
                assert!(((b - a) / a).abs() < 1e-6, "{np} ranks: layer {layer} mass {a} -> {b}");
                let one_end = s1[format!("mass_layer{layer}_end")].as_f64().unwrap();
                assert!(
                    ((b - one_end) / one_end).abs() < 1e-12,
                    "{np} ranks: layer {layer} mass {b} against {one_end} on one rank"
                );
            }
        }
    }
}

#[test]
fn n_ranks_equal_one_rank_bit_for_bit_with_fallback_partitions() {
    let tmp = tempfile::tempdir().unwrap();
    let one = reference(tmp.path());
    let mut fallbacks = 0;
    for np in [3usize, 4, 7] {
        let owners = tmp.path().join(format!("owners_{np}.txt"));
        std::fs::write(&owners, striped_owners(np)).unwrap();
        let part = tmp.path().join(format!("part_{np}"));
        let o = Command::new(BIN)
            .args(["partition", "--cells", CELLS, "--ranks", &np.to_string(), "--owners"])
            .arg(&owners)
            .arg("--out")
            .arg(&part)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        let m: Value = serde_json::from_str(&std::fs::read_to_string(part.join("manifest.json")).unwrap()).unwrap();
        fallbacks += m["fallback_destinations"].as_u64().unwrap();
        for mode in ["overlap", "blocking"] {
            let dir = tmp.path().join(format!("striped_{np}_{mode}"));
            let p = part.to_str().unwrap();
            ok(mpirun(np, &run_args(dir.to_str().unwrap(), &["--exchange", mode, "--partition", p]), &[]));
            assert_same_series(&one, &dir);
        }
    }
    assert!(fallbacks > 0, "the striped partitions were meant to need gather fallbacks");
}

fn assert_fails_with(o: &Output, words: &[&str]) {
    assert!(!o.status.success(), "expected a failure:\n{}", text(o));
    let err = String::from_utf8_lossy(&o.stderr);
    for w in words {
        assert!(err.contains(w), "stderr lacks {w:?}:\n{}", text(o));
    }
    assert!(!err.contains("panicked"), "a panic:\n{}", text(o));
}

#[test]
fn failures_end_every_rank_with_a_message() {
    let tmp = tempfile::tempdir().unwrap();
    let part = tmp.path().join("part3");
    let o = Command::new(BIN)
        .args(["partition", "--cells", CELLS, "--ranks", "3", "--no-vtk", "--out"])
        .arg(&part)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let p = part.to_str().unwrap().to_string();
    let out = tmp.path().join("out");
    let out = out.to_str().unwrap();

    // A partition for another rank count: every rank sees it; one message.
    let o = mpirun(2, &run_args(out, &["--partition", &p]), &[]);
    assert_fails_with(&o, &["made for 3 ranks", "this run has 2", "mpirun -np 3"]);
    assert_eq!(String::from_utf8_lossy(&o.stderr).matches("error:").count(), 1, "one rank reports:\n{}", text(&o));

    // A missing rank file: only rank 1 sees it, and says so.
    let saved = std::fs::read(part.join("rank_00001.bin")).unwrap();
    std::fs::remove_file(part.join("rank_00001.bin")).unwrap();
    let o = mpirun(3, &run_args(out, &["--partition", &p]), &[]);
    assert_fails_with(&o, &["rank 1 of 3", "rank_00001.bin"]);

    // A corrupted rank file: its checksum.
    let mut bad = saved.clone();
    let k = bad.len() / 2;
    bad[k] ^= 0x40;
    std::fs::write(part.join("rank_00001.bin"), &bad).unwrap();
    let o = mpirun(3, &run_args(out, &["--partition", &p]), &[]);
    assert_fails_with(&o, &["rank 1 of 3", "checksum"]);
    std::fs::write(part.join("rank_00001.bin"), &saved).unwrap();
    ok(mpirun(3, &run_args(out, &["--partition", &p]), &[]));

    // A failure on one rank alone, mid-run: that rank reports and the job is taken down.
    for mode in ["overlap", "blocking"] {
        // --overwrite: the output directory holds the run above's results.
        let a = run_args(out, &["--partition", &p, "--exchange", mode, "--overwrite"]);
        let o = mpirun(3, &a, &[("PYCNO_FAULT", "2:4")]);
        assert_fails_with(&o, &["rank 2 of 3", "injected fault after step 4"]);
    }
}

/// Rank files of two different partitions of the same mesh, each valid alone, in one
/// directory: before the fix the exchange waited for messages that never came (2 ranks: a
/// hang at 100% CPU) or received the wrong sizes (3 ranks: MPI_ERR_TRUNCATE, no pycno
/// message). Now every rank checks the files fit together before the first step.
#[test]
fn rank_files_of_two_partitions_are_refused_not_waited_for() {
    let tmp = tempfile::tempdir().unwrap();
    for np in [2usize, 3] {
        let (metis, striped) = (tmp.path().join(format!("metis{np}")), tmp.path().join(format!("striped{np}")));
        let owners = tmp.path().join(format!("owners{np}.txt"));
        std::fs::write(&owners, striped_owners(np)).unwrap();
        for (dir, extra) in [(&metis, vec![]), (&striped, vec!["--owners", owners.to_str().unwrap()])] {
            let np_s = np.to_string();
            let mut args = vec!["partition", "--cells", CELLS, "--ranks", &np_s, "--no-vtk", "--out"];
            args.push(dir.to_str().unwrap());
            args.extend(extra);
            ok(pycno_np(0, None, &args, &[]));
        }
        // Rank 1's file from the other partition.
        std::fs::copy(striped.join("rank_00001.bin"), metis.join("rank_00001.bin")).unwrap();
        let out = tmp.path().join(format!("out{np}"));
        let o = mpirun(np, &run_args(out.to_str().unwrap(), &["--partition", metis.to_str().unwrap()]), &[]);
        assert_fails_with(&o, &["do not belong to one partition", "pycno partition --check"]);
        assert_eq!(String::from_utf8_lossy(&o.stderr).matches("error:").count(), 1, "one rank reports:\n{}", text(&o));
    }
}

/// A rank that stops answering (here SIGSTOP, as a hung GPU, file system or node would):
/// without `--watchdog` the other ranks wait in the exchange for ever. With it the job ends
/// in bounded time, non-zero, and the ranks next to the silent one name it.
#[test]
fn a_rank_that_stops_answering_ends_the_job_under_the_watchdog() {
    let tmp = tempfile::tempdir().unwrap();
    for mode in ["overlap", "blocking"] {
        let out = tmp.path().join(format!("out-{mode}"));
        let args = run_args(out.to_str().unwrap(), &["--exchange", mode, "--watchdog", "2", "--t-end", "5"]);
        let o = mpirun(3, &args, &[("PYCNO_STOP", "1:3")]);
        assert_fails_with(&o, &["--watchdog", "halo messages of rank 1 never came"]);
        assert!(!String::from_utf8_lossy(&o.stderr).contains("rank 0,"), "{}", text(&o));
    }
    // Its value is checked.
    for bad in ["0", "-1", "nan", "inf"] {
        let o = mpirun(1, &run_args(tmp.path().join("x").to_str().unwrap(), &["--watchdog", bad]), &[]);
        assert_fails_with(&o, &[&format!("--watchdog {}", bad.replace("nan", "NaN"))]);
    }
}

/// Second order (issue 21, `physics.order = 2`): N ranks equal one rank bit for bit, with
/// both exchange loops (each stage exchanges the states of a receive block two rings deep and
/// every rank reconstructs its first ring itself; overlapped, the inner cells and edges run
/// while the messages travel), partitioned on the fly and from a partition directory (each
/// rank reading only its files). A partition made for first order (one ring) is refused with
/// a message naming the file and what to do; a first-order run on a partition for second
/// order gives the first order's result.
#[test]
fn second_order_n_ranks_equal_one_rank_bit_for_bit() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tmp.path().join("order2.json");
    let json = r#"{
        "name": "dambreak",
        "domain": { "outer": [[-5,-5],[5,-5],[5,5],[-5,5]] },
        "resolution": { "cells": 3000 },
        "bathymetry": { "type": "constant", "depth": 5.0 },
        "initial": { "type": "circular_dam_break" },
        "physics": { "order": 2 },
        "time": { "end": 0.1, "output_interval": 0.05 }
    }"#;
    std::fs::write(&scenario, json).unwrap();
    let first = tmp.path().join("order1.json");
    std::fs::write(&first, json.replace(r#""order": 2"#, r#""order": 1"#)).unwrap();
    let (sc, sc1) = (scenario.to_str().unwrap(), first.to_str().unwrap());
    let run = |np: usize, sc: &str, name: &str, extra: &[&str]| {
        let dir = tmp.path().join(name);
        let mut a = vec!["run", sc, "--backend", "cpu", "-q", "--out", dir.to_str().unwrap()];
        a.extend_from_slice(extra);
        ok(mpirun(np, &a, &[]));
        stats(&dir)
    };
    let s1 = run(1, sc, "one", &[]);
    for np in [2usize, 3, 7] {
        for mode in ["overlap", "blocking"] {
            let s = run(np, sc, &format!("ranks_{np}_{mode}"), &["--exchange", mode]);
            assert_eq!(s["ranks"], np);
            assert_eq!(s["exchange"], mode);
            assert_eq!(s["steps"], s1["steps"]);
            assert_eq!(s["state_checksum"], s1["state_checksum"], "order 2, {np} ranks, {mode}");
        }
    }
    eprintln!("order 2: {} steps, state checksum {} on 1, 2, 3 and 7 ranks", s1["steps"], s1["state_checksum"]);

    // From partition directories: the scenario's order gives two rings.
    let part = |name: &str, sc: &str, extra: &[&str]| {
        let dir = tmp.path().join(name);
        let mut a = vec!["partition", sc, "--ranks", "3", "--no-vtk", "--out", dir.to_str().unwrap()];
        a.extend_from_slice(extra);
        let o = ok(mpirun(0, &a, &[]));
        (dir, text(&o))
    };
    let (p2, said) = part("part_order2", sc, &[]);
    assert!(said.contains("rings of receive cells: 2"), "{said}");
    let m: Value = serde_json::from_str(&std::fs::read_to_string(p2.join("manifest.json")).unwrap()).unwrap();
    assert_eq!((m["rings"].as_u64(), m["format_version"].as_u64()), (Some(2), Some(2)));
    let p = p2.to_str().unwrap();
    for mode in ["overlap", "blocking"] {
        let s = run(3, sc, &format!("files_{mode}"), &["--exchange", mode, "--partition", p]);
        assert_eq!(s["state_checksum"], s1["state_checksum"], "order 2 from rank files, {mode}");
    }
    ok(mpirun(0, &["partition", sc, "--check", p], &[]));

    // First order on it: the first order's result (the second ring exchanged for nothing).
    let o1 = run(1, sc1, "one_order1", &["--no-vtk"]);
    assert_ne!(o1["state_checksum"], s1["state_checksum"]);
    let s = run(3, sc1, "order1_on_two_rings", &["--partition", p, "--no-vtk"]);
    assert_eq!(s["state_checksum"], o1["state_checksum"], "order 1 on a partition for order 2");

    // A partition for first order (one ring) at second order: refused, naming the file.
    let (p1, said) = part("part_order1", sc, &["--order", "1"]);
    assert!(said.contains("rings of receive cells: 1"), "{said}");
    let out = tmp.path().join("refused");
    let o = mpirun(
        3,
        &[
            "run",
            sc,
            "--backend",
            "cpu",
            "-q",
            "--no-vtk",
            "--partition",
            p1.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert_fails_with(
        &o,
        &["rank_00000.bin", "one ring of receive cells", "physics.order = 2", "pycno partition", r#""order": 1"#],
    );
}
