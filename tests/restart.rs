//! Runs that cannot be lost: checkpoints and restarts (killed with SIGKILL, also while a
//! checkpoint is being written, on 1 and 3 ranks; restarts on other rank counts), blow-up
//! diagnosis, gauges, and the bad inputs of each.
//!
//! Equality is checked twice: the order-independent state checksum of stats.json, and the
//! VTK frames read back through the real VTK library (tests/python/compare_runs.py).
//! Needs `mpirun` and `python3` with `vtk` (tools/test.sh provides both).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

mod common;
use common::cli::{expect_failure, expect_ok as ok, pycno_np, stats, text, BIN};

fn pycno(np: usize, args: &[&str], env: &[(&str, &str)]) -> Output {
    pycno_np(np, None, args, env)
}

#[track_caller]
fn fails(o: &Output, words: &[&str]) {
    expect_failure(o, None, words);
}

fn same_series(a: &Path, b: &Path) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/compare_runs.py");
    let o = Command::new("python3")
        .arg(script)
        .arg(a.join("dambreak.pvd"))
        .arg(b.join("dambreak.pvd"))
        .output()
        .expect("python3");
    assert!(o.status.success(), "{} and {} differ:\n{}", a.display(), b.display(), text(&o));
}

/// The run every test compares against: the paper benchmark, 3000 cells, to t = 0.2.
fn args(out: &Path, extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> =
        ["run", "--cells", "3000", "--t-end", "0.2", "--output-interval", "0.05", "--backend", "cpu", "-q", "--out"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    v.push(out.display().to_string());
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

fn run(np: usize, a: &[String], env: &[(&str, &str)]) -> Output {
    let a: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
    pycno(np, &a, env)
}

fn reference(tmp: &Path) -> (PathBuf, Value) {
    let d = tmp.join("uninterrupted");
    ok(run(0, &args(&d, &[]), &[]));
    let s = stats(&d);
    (d, s)
}

fn killed(o: &Output) {
    assert!(!o.status.success(), "the run should have been killed:\n{}", text(o));
}

fn restart(np: usize, ckpt: &Path, env: &[(&str, &str)]) -> Output {
    let c = ckpt.display().to_string();
    pycno(np, &["run", "--restart", &c, "--backend", "cpu", "-q"], env)
}

fn assert_resumed_equal(dir: &Path, want: &Value, uninterrupted: &Path, from_step: u64) {
    let s = stats(dir);
    assert_eq!(s["state_checksum"], want["state_checksum"], "{}", dir.display());
    assert_eq!(s["steps"], want["steps"]);
    assert_eq!(s["restarted_from"], from_step, "resumed from the newest complete checkpoint");
    same_series(uninterrupted, dir);
}

#[test]
fn a_killed_run_restarts_to_the_uninterrupted_result_on_one_rank() {
    let tmp = tempfile::tempdir().unwrap();
    let (refd, want) = reference(tmp.path());

    // Killed (SIGKILL) after step 23: checkpoints 10 and 20 are complete.
    let d = tmp.path().join("killed");
    killed(&run(0, &args(&d, &["--checkpoint-every", "10"]), &[("PYCNO_KILL", "0:23")]));
    assert!(!d.join("stats.json").exists());
    ok(restart(0, &d.join("checkpoints"), &[]));
    assert_resumed_equal(&d, &want, &refd, 20);

    // Killed while writing checkpoint 20 (its rank file written, not yet complete): the
    // restart takes checkpoint 10 and ignores the incomplete one.
    let d = tmp.path().join("killed_in_checkpoint");
    killed(&run(0, &args(&d, &["--checkpoint-every", "10"]), &[("PYCNO_KILL_IN_CHECKPOINT", "20")]));
    assert!(d.join("checkpoints/step_0000000020/rank_00000.bin").exists());
    assert!(!d.join("checkpoints/step_0000000020/meta.json").exists());
    ok(restart(0, &d.join("checkpoints"), &[]));
    assert_resumed_equal(&d, &want, &refd, 10);

    // Killed from outside (SIGKILL) once its first checkpoint exists: a longer run (about
    // 250 steps), against its own uninterrupted twin.
    let long = |out: &Path, extra: &[&str]| {
        let mut v: Vec<String> = [
            "run",
            "--cells",
            "20000",
            "--t-end",
            "0.5",
            "--output-interval",
            "0.25",
            "--backend",
            "cpu",
            "-q",
            "--out",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        v.push(out.display().to_string());
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let twin = tmp.path().join("long_uninterrupted");
    ok(run(0, &long(&twin, &[]), &[]));
    let d = tmp.path().join("killed_from_outside");
    let mut child =
        Command::new(BIN).args(long(&d, &["--checkpoint-every", "5"])).env("RAYON_NUM_THREADS", "1").spawn().unwrap();
    let first = d.join("checkpoints/step_0000000005/meta.json");
    let deadline = Instant::now() + Duration::from_secs(120);
    while !first.exists() && Instant::now() < deadline && child.try_wait().unwrap().is_none() {
        std::thread::sleep(Duration::from_millis(1));
    }
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    assert!(first.exists(), "no checkpoint within the deadline");
    if status.success() {
        eprintln!("the run finished before the kill arrived; the restart must still agree");
    } else {
        assert!(!d.join("stats.json").exists(), "killed mid-way");
    }
    ok(restart(0, &d.join("checkpoints"), &[]));
    assert_eq!(stats(&d)["state_checksum"], stats(&twin)["state_checksum"]);
    same_series(&twin, &d);
}

#[test]
fn a_killed_three_rank_run_restarts_on_three_two_and_one_ranks() {
    let tmp = tempfile::tempdir().unwrap();
    let (refd, want) = reference(tmp.path());

    // One rank of three dies (SIGKILL) after step 23: the job ends; it restarts on 3 ranks.
    let d = tmp.path().join("three");
    killed(&run(3, &args(&d, &["--checkpoint-every", "10"]), &[("PYCNO_KILL", "1:23")]));
    ok(restart(3, &d.join("checkpoints"), &[]));
    assert_resumed_equal(&d, &want, &refd, 20);

    // Killed while rank 0 writes checkpoint 20, on 3 ranks.
    let d = tmp.path().join("three_in_checkpoint");
    killed(&run(3, &args(&d, &["--checkpoint-every", "10"]), &[("PYCNO_KILL_IN_CHECKPOINT", "20")]));
    ok(restart(3, &d.join("checkpoints"), &[]));
    assert_resumed_equal(&d, &want, &refd, 10);

    // A checkpoint written by 3 ranks resumes on 2 ranks and on 1 rank, bit for bit.
    let src = tmp.path().join("three_complete");
    ok(run(3, &args(&src, &["--checkpoint-every", "15", "--checkpoint-keep", "5"]), &[]));
    let ckpt = src.join("checkpoints/step_0000000015");
    for np in [2usize, 0] {
        let out = tmp.path().join(format!("resumed_on_{np}"));
        let o = out.display().to_string();
        let c = ckpt.display().to_string();
        // The same output times as the run checkpointed: they clip the time step.
        let a = vec!["run", "--restart", c.as_str(), "--backend", "cpu", "-q", "--out", o.as_str()];
        ok(pycno(np, &a, &[]));
        let s = stats(&out);
        assert_eq!(s["state_checksum"], want["state_checksum"], "restarted on {np} ranks");
        assert_eq!(s["restarted_from"], 15);
    }
}

/// A run that blows up within a few steps: the east end draws layer 1 out at 5 m²/s, a
/// thousand times what its 1 mm can give. (It used to be a 1 mm layer leaving the west wall at
/// 40 m/s, which the wall pushed away ever faster until it blew up; the wall no longer pushes
/// a leaving layer harder than one at rest against it, and that run goes through.)
fn blowup_scenario(dir: &Path) -> PathBuf {
    let p = dir.join("blowup.json");
    std::fs::write(
        &p,
        r#"{
  "name": "blowup",
  "domain": { "outer": [[0, 0], [10, 0], [10, 1], [0, 1]], "outer_tags": ["s", "e", "n", "w"] },
  "resolution": { "cells": 800 },
  "bathymetry": { "type": "constant", "depth": 1.0 },
  "initial": { "type": "layers",
               "layer1": { "thickness": 0.001, "velocity": [40, 0] },
               "layer2": { "thickness": 0.999, "velocity": [0, 0] } },
  "boundaries": { "e": { "type": "discharge", "layer1": -5 } },
  "physics": { "g": 9.81, "r": 0.5, "gamma": 0.9, "dry_tolerance": 1e-9 },
  "time": { "end": 2.0 }
}"#,
    )
    .unwrap();
    p
}

#[test]
fn a_blow_up_is_caught_in_its_first_bad_step_with_a_report() {
    let tmp = tempfile::tempdir().unwrap();
    let scen = blowup_scenario(tmp.path());
    let sc = scen.display().to_string();
    for np in [0usize, 2] {
        let out = tmp.path().join(format!("out{np}"));
        let o = out.display().to_string();
        // The health checks (solver/watch.rs) are off, so that nothing but the blow-up stops it.
        let r = pycno(np, &["run", &sc, "--backend", "cpu", "-q", "--no-health-checks", "--out", &o], &[]);
        fails(&r, &["blew up at step", "went unphysical", "first is cell", "h1 = ", "h2 = ", "last good state"]);
        let err = String::from_utf8_lossy(&r.stderr).to_string();
        let step: u64 = err.split("blew up at step ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
        // The step before is healthy: the blow-up was caught in the first bad step.
        let healthy = pycno(
            np,
            // Another directory: this one holds the blown-up run's report.
            &[
                "run",
                &sc,
                "--backend",
                "cpu",
                "-q",
                "--no-health-checks",
                "--no-vtk",
                "--out",
                &format!("{o}_healthy"),
                "--max-steps",
                &(step - 1).to_string(),
            ],
            &[],
        );
        assert!(healthy.status.success(), "{} steps should be healthy:\n{}", step - 1, text(&healthy));
        if np == 2 {
            assert!(err.contains("on rank"), "the report names the rank:\n{err}");
        }
        // The last good state, with the bad cells marked, opens in VTK.
        let snap = out.join(if np == 0 { "blowup_blowup.vtu" } else { "blowup_blowup.pvtu" });
        let check = "import vtk,sys\nr=vtk.vtkXMLPUnstructuredGridReader() if sys.argv[1].endswith('.pvtu') else vtk.vtkXMLUnstructuredGridReader()\n\
             r.SetFileName(sys.argv[1]); r.Update(); a=r.GetOutput().GetCellData().GetArray('blew_up'); h=r.GetOutput().GetCellData().GetArray('h1')\n\
             n=sum(a.GetValue(i) for i in range(a.GetNumberOfTuples()))\n\
             good=all(h.GetValue(i)>0 for i in range(h.GetNumberOfTuples()))\nprint(n, good); sys.exit(0 if n>0 and good else 1)";
        let v = Command::new("python3").args(["-c", check]).arg(&snap).output().unwrap();
        assert!(v.status.success(), "{}: {}", snap.display(), text(&v));
    }
}

fn gauge_scenario(dir: &Path, points: &str) -> PathBuf {
    let p = dir.join("gauges.json");
    std::fs::write(
        &p,
        format!(
            r#"{{
  "name": "dambreak",
  "domain": {{ "outer": [[-5, -5], [5, -5], [5, 5], [-5, 5]] }},
  "resolution": {{ "cells": 3000 }},
  "bathymetry": {{ "type": "constant", "depth": 5.0 }},
  "initial": {{ "type": "circular_dam_break" }},
  "time": {{ "end": 0.2, "output_interval": 0.05 }},
  "gauges": {{ "interval": 0.02, "points": {points} }}
}}"#
        ),
    )
    .unwrap();
    p
}

#[test]
fn gauges_equal_the_vtk_cell_values_on_one_and_two_ranks() {
    let tmp = tempfile::tempdir().unwrap();
    let scen = gauge_scenario(
        tmp.path(),
        r#"[{"name": "centre", "at": [0.1, 0.05]}, {"name": "ring", "at": [1.5, 0]}, {"name": "far", "at": [-4, 3.9]}]"#,
    );
    let sc = scen.display().to_string();
    let mut csv = Vec::new();
    for np in [0usize, 2] {
        let out = tmp.path().join(format!("g{np}"));
        let o = out.display().to_string();
        ok(pycno(np, &["run", &sc, "--backend", "cpu", "-q", "--out", &o], &[]));
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/check_gauges.py");
        let v = Command::new("python3").arg(script).arg(&out).output().unwrap();
        assert!(v.status.success(), "{}", text(&v));
        let text = std::fs::read_to_string(out.join("gauges.csv")).unwrap();
        let rows = text.lines().filter(|l| !l.starts_with('#') && !l.starts_with("time")).count();
        assert!(rows >= 11, "records every 0.02 s and at outputs: {rows} rows");
        csv.push(text);
    }
    assert_eq!(csv[0], csv[1], "rank 0 writes the same gauges.csv on one and two ranks");
}

/// A run with a gauge to its end in `tmp/full`, and the same run killed after step 27 in
/// `tmp/cut` with checkpoints every 10 steps.
fn full_and_killed_gauge_runs(tmp: &Path) -> (PathBuf, PathBuf) {
    let scen = gauge_scenario(tmp, r#"[{"name": "centre", "at": [0.1, 0.05]}]"#);
    let sc = scen.display().to_string();
    let full = tmp.join("full");
    ok(pycno(0, &["run", &sc, "--backend", "cpu", "-q", "--out", &full.display().to_string()], &[]));
    let cut = tmp.join("cut");
    let c = cut.display().to_string();
    killed(&pycno(
        0,
        &["run", &sc, "--backend", "cpu", "-q", "--out", &c, "--checkpoint-every", "10"],
        &[("PYCNO_KILL", "0:27")],
    ));
    (full, cut)
}

#[test]
fn gauges_continue_across_a_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let (full, cut) = full_and_killed_gauge_runs(tmp.path());
    ok(restart(0, &cut.join("checkpoints"), &[]));
    let a = std::fs::read_to_string(full.join("gauges.csv")).unwrap();
    let b = std::fs::read_to_string(cut.join("gauges.csv")).unwrap();
    assert_eq!(a, b, "the restarted run's gauges.csv equals the uninterrupted one");
}

#[test]
fn bad_inputs_are_rejected_with_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    // A gauge outside the domain.
    let scen = gauge_scenario(tmp.path(), r#"[{"name": "inside", "at": [0, 0]}, {"name": "offshore", "at": [7, 0]}]"#);
    let o = pycno(
        0,
        &[
            "run",
            &scen.display().to_string(),
            "--backend",
            "cpu",
            "-q",
            "--out",
            &tmp.path().join("x").display().to_string(),
        ],
        &[],
    );
    fails(&o, &["gauges.points[1]", "offshore", "outside the domain"]);
    let scen = gauge_scenario(tmp.path(), r#"[{"name": "a", "at": [0, 0]}, {"name": "a", "at": [1, 0]}]"#);
    fails(
        &pycno(0, &["run", &scen.display().to_string(), "-q"], &[]),
        &["gauges.points[1].name", "used by another gauge"],
    );

    // A checkpoint directory that cannot be written (a file stands in the way).
    let blocker = tmp.path().join("blocker");
    std::fs::write(&blocker, b"").unwrap();
    let d = tmp.path().join("ck");
    let a = args(&d, &["--checkpoint-every", "5", "--checkpoint-dir", &blocker.join("sub").display().to_string()]);
    fails(&run(0, &a, &[]), &["checkpoint directory", "blocker"]);

    // Checkpoints to damage.
    ok(run(0, &args(&d, &["--checkpoint-every", "10", "--checkpoint-keep", "5"]), &[]));
    let c10 = d.join("checkpoints/step_0000000010");
    let bin = c10.join("rank_00000.bin");
    let good = std::fs::read(&bin).unwrap();

    // Truncated, then corrupted.
    std::fs::write(&bin, &good[..good.len() / 2]).unwrap();
    fails(&restart(0, &c10, &[]), &["rank_00000.bin", "checksum"]);
    let mut bad = good.clone();
    let k = bad.len() / 3;
    bad[k] ^= 1;
    std::fs::write(&bin, &bad).unwrap();
    fails(&restart(0, &c10, &[]), &["rank_00000.bin", "checksum"]);
    std::fs::write(&bin, &good).unwrap();

    // Unreadable meta.json.
    let meta_path = c10.join("meta.json");
    let meta = std::fs::read_to_string(&meta_path).unwrap();
    std::fs::write(&meta_path, &meta[..meta.len() / 2]).unwrap();
    fails(&restart(0, &c10, &[]), &["meta.json", "not a valid pycno checkpoint"]);

    // An edited meta.json: its scenario asks for another resolution.
    let mut m: Value = serde_json::from_str(&meta).unwrap();
    m["scenario"]["resolution"]["cells"] = Value::from(2000);
    std::fs::write(&meta_path, serde_json::to_string(&m).unwrap()).unwrap();
    fails(&restart(0, &c10, &[]), &["meta.json", "modified after it was written (checksum mismatch)"]);
    // The same, sealed again with its checksum: a checkpoint of another mesh.
    m["checksum"] = Value::from(pycno::output::checkpoint::meta_checksum(&m));
    std::fs::write(&meta_path, serde_json::to_string(&m).unwrap()).unwrap();
    fails(&restart(0, &c10, &[]), &["made on another mesh"]);
    std::fs::write(&meta_path, &meta).unwrap();

    // A checkpoint of format version 2 (thicknesses, before the solver stored deviations
    // from a rest state), in meta.json and in the rank file (its checksum made good again):
    // refused, saying why and what to do.
    let mut m: Value = serde_json::from_str(&meta).unwrap();
    m["version"] = Value::from(2);
    std::fs::write(&meta_path, serde_json::to_string(&m).unwrap()).unwrap();
    fails(&restart(0, &c10, &[]), &["meta.json", "version 2", "earlier pycno", "rerun from the start"]);
    std::fs::write(&meta_path, &meta).unwrap();
    let mut old = good[..good.len() - 4].to_vec();
    old[8..12].copy_from_slice(&2u32.to_le_bytes());
    let crc = crc32fast::hash(&old);
    old.extend_from_slice(&crc.to_le_bytes());
    std::fs::write(&bin, &old).unwrap();
    fails(&restart(0, &c10, &[]), &["rank_00000.bin", "version 2", "earlier pycno"]);
    std::fs::write(&bin, &good).unwrap();

    // Another precision; a scenario given with --restart; nothing to restart from.
    fails(
        &pycno(0, &["run", "--restart", &c10.display().to_string(), "--precision", "f64", "-q"], &[]),
        &["holds a f32 run", "--precision f32"],
    );
    fails(
        &pycno(0, &["run", "x.json", "--restart", &c10.display().to_string(), "-q"], &[]),
        &["--restart takes the scenario"],
    );
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    fails(&restart(0, &empty, &[]), &["no complete checkpoint"]);

    // And the intact checkpoint still restarts.
    ok(restart(0, &c10, &[]));
}

#[test]
fn the_picture_tool_renders_maps_animations_and_gauges() {
    let tmp = tempfile::tempdir().unwrap();
    let scen =
        gauge_scenario(tmp.path(), r#"[{"name": "centre", "at": [0.1, 0.05]}, {"name": "ring", "at": [1.5, 0]}]"#);
    let out = tmp.path().join("p");
    ok(pycno(
        0,
        &["run", &scen.display().to_string(), "--backend", "cpu", "-q", "--out", &out.display().to_string()],
        &[],
    ));
    let tool = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/plot.py");
    let plot = |args: &[&str]| Command::new("python3").arg(&tool).arg(&out).args(args).output().unwrap();
    for (args, file, magic) in [
        (&[][..], "dambreak_interface_last.png", &b"\x89PNG"[..]),
        (&["--time", "0.1", "--field", "velocity1"][..], "map.png", &b"\x89PNG"[..]),
        (&["--animate"][..], "dambreak_interface.gif", &b"GIF8"[..]),
        (&["--gauges"][..], "gauges.png", &b"\x89PNG"[..]),
    ] {
        let mut a: Vec<&str> = args.to_vec();
        let target = out.join(file).display().to_string();
        if file == "map.png" {
            a.extend(["--out", &target]);
        }
        let o = plot(&a);
        assert!(o.status.success(), "plot.py {args:?}:\n{}", text(&o));
        let bytes = std::fs::read(out.join(file)).unwrap_or_else(|_| panic!("plot.py {args:?} wrote no {file}"));
        assert!(bytes.starts_with(magic) && bytes.len() > 5000, "{file} is not a picture");
    }
    // Bad input: one line naming what is wrong, status 1.
    let o = plot(&["--field", "nosuch"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("nosuch"));
    let o = plot(&["--time", "99"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
}

#[test]
fn wall_clock_checkpoints_are_written_and_restart() {
    // A microsecond interval makes every step due: deterministic, and no waiting.
    let tmp = tempfile::tempdir().unwrap();
    let (refd, want) = reference(tmp.path());
    let d = tmp.path().join("clock");
    killed(&run(
        0,
        &args(&d, &["--checkpoint-seconds", "0.000001", "--checkpoint-keep", "3"]),
        &[("PYCNO_KILL", "0:23")],
    ));
    let kept: Vec<String> = std::fs::read_dir(d.join("checkpoints"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with("step_"))
        .collect();
    let mut kept = kept;
    kept.sort();
    assert_eq!(
        kept,
        ["step_0000000020", "step_0000000021", "step_0000000022"],
        "the newest 3 of one per step (killed before step 23's)"
    );
    ok(restart(0, &d.join("checkpoints"), &[]));
    assert_resumed_equal(&d, &want, &refd, 22);
    fails(
        &run(0, &args(&tmp.path().join("bad"), &["--checkpoint-seconds", "0"]), &[]),
        &["--checkpoint-seconds", "positive"],
    );
}

/// `--restart CKPT --out NEW`: the new directory's `.pvd` lists every frame, the earlier
/// ones by relative paths into the directory of the run that wrote the checkpoint (so the
/// series opens in VTK as one), and `gauges.csv` continues from the earlier run's rows.
/// Before, the `.pvd` listed files that exist only in the old directory, and a run with
/// gauges failed ("cannot read NEW/gauges.csv").
#[test]
fn a_restart_into_another_output_directory_keeps_the_series_and_the_gauges() {
    let tmp = tempfile::tempdir().unwrap();
    let (full, cut) = full_and_killed_gauge_runs(tmp.path());
    let moved = tmp.path().join("elsewhere").join("new");
    let ck = cut.join("checkpoints").display().to_string();
    ok(pycno(0, &["run", "--restart", &ck, "--backend", "cpu", "-q", "--out", &moved.display().to_string()], &[]));
    // The state and the whole series equal the uninterrupted run's, read through VTK from
    // the new directory's .pvd.
    assert_eq!(stats(&moved)["state_checksum"], stats(&full)["state_checksum"]);
    same_series(&full, &moved);
    let pvd = std::fs::read_to_string(moved.join("dambreak.pvd")).unwrap();
    assert!(pvd.contains("../../cut/dambreak_00000.vtu"), "the earlier frames by relative path:\n{pvd}");
    let a = std::fs::read_to_string(full.join("gauges.csv")).unwrap();
    let b = std::fs::read_to_string(moved.join("gauges.csv")).unwrap();
    assert_eq!(a, b, "the restarted run's gauges.csv continues the earlier rows");
}

/// Restart bit for bit at second order (`physics.order = 2`, SSP-RK2): the paper benchmark
/// at order 2 (a scenario file), killed after step 23 with checkpoints every 10 steps,
/// restarts from step 20 to the uninterrupted run's checksum, step count and frames, on one
/// rank and on three (and from three ranks' checkpoint on two). The checkpoint holds the
/// state only; the reconstruction is recomputed from it each stage.
#[test]
fn a_killed_second_order_run_restarts_to_the_uninterrupted_result() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("dambreak_order2.json");
    std::fs::write(
        &file,
        r#"{
        "name": "dambreak",
        "domain": { "outer": [[-5, -5], [5, -5], [5, 5], [-5, 5]] },
        "resolution": { "cells": 3000 },
        "bathymetry": { "type": "constant", "depth": 5.0 },
        "initial": { "type": "circular_dam_break", "center": [0, 0], "radius": 1.5,
                     "h1_inside": 0.5, "h1_outside": 4.0, "surface": 0.0 },
        "physics": { "r": 0.998, "gamma": 0.9, "order": 2 },
        "time": { "end": 0.1 }
    }"#,
    )
    .unwrap();
    // `pycno run SCENARIO` with `args`.
    let with_file = |scenario: &Path, out: &Path, extra: &[&str]| {
        let mut v = args(out, extra);
        v.insert(1, scenario.display().to_string());
        v
    };
    let refd = tmp.path().join("uninterrupted");
    ok(run(0, &with_file(&file, &refd, &[]), &[]));
    let want = stats(&refd);
    let d = tmp.path().join("killed");
    killed(&run(0, &with_file(&file, &d, &["--checkpoint-every", "10"]), &[("PYCNO_KILL", "0:23")]));
    assert!(!d.join("stats.json").exists());
    ok(restart(0, &d.join("checkpoints"), &[]));
    assert_resumed_equal(&d, &want, &refd, 20);
    // On several ranks (two rings of receive cells, each rank reconstructing the first):
    // killed on 3 ranks, restarted on 3, and on 2 from the 3 ranks' checkpoint.
    let d = tmp.path().join("killed_three");
    killed(&run(3, &with_file(&file, &d, &["--checkpoint-every", "10"]), &[("PYCNO_KILL", "1:23")]));
    ok(restart(3, &d.join("checkpoints"), &[]));
    assert_resumed_equal(&d, &want, &refd, 20);
    let out = tmp.path().join("resumed_on_two");
    let c = d.join("checkpoints/step_0000000020").display().to_string();
    let o = out.display().to_string();
    ok(pycno(2, &["run", "--restart", &c, "--backend", "cpu", "-q", "--out", &o], &[]));
    assert_eq!(stats(&out)["state_checksum"], want["state_checksum"], "order 2 restarted on 2 ranks");
    // The restarted run is second order (its checksum differs from the first order's).
    let first_file = tmp.path().join("first_order.json");
    std::fs::write(&first_file, std::fs::read_to_string(&file).unwrap().replace(r#""order": 2"#, r#""order": 1"#))
        .unwrap();
    let first = tmp.path().join("first_order");
    ok(run(0, &with_file(&first_file, &first, &[]), &[]));
    assert_ne!(stats(&first)["state_checksum"], want["state_checksum"], "order 2 ran at order 1");

    // A checkpoint written while first order was the default (before 2026-11-29) holds
    // `physics.order` only where it was 2: where it has none it restarts at first order, to
    // the uninterrupted first-order run, and not at today's default.
    let d = tmp.path().join("old_default");
    killed(&run(0, &with_file(&first_file, &d, &["--checkpoint-every", "10"]), &[("PYCNO_KILL", "0:23")]));
    let meta_path = d.join("checkpoints/step_0000000020/meta.json");
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&meta_path).unwrap()).unwrap();
    assert_eq!(m["scenario"]["physics"]["order"], 1, "the order is written whatever its value");
    m["scenario"]["physics"].as_object_mut().unwrap().remove("order");
    m["checksum"] = Value::from(pycno::output::checkpoint::meta_checksum(&m));
    std::fs::write(&meta_path, serde_json::to_string(&m).unwrap()).unwrap();
    ok(restart(0, &d.join("checkpoints"), &[]));
    assert_resumed_equal(&d, &stats(&first), &first, 20);
}

/// Every file under `dir` (relative path, bytes): a snapshot to compare before and after.
fn snapshot(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let mut all = std::collections::BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                all.insert(p.strip_prefix(dir).unwrap().to_path_buf(), std::fs::read(&p).unwrap());
            }
        }
    }
    all
}

/// Issue 46, item 1: `cp -a X/ck Y/ck; cd Y; pycno run --restart ck/checkpoints/step_N
/// --checkpoint-every 3 --checkpoint-keep 1` wrote into X's directory (the checkpoint's
/// scenario names it by absolute path) and pruned X's checkpoints. Now the restart goes on in
/// the copy, and X is left byte for byte as it was; pointed at X's checkpoints explicitly,
/// it is refused.
#[test]
fn a_restart_from_a_copied_output_directory_leaves_the_original_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let (full, cut) = full_and_killed_gauge_runs(tmp.path());
    let y = tmp.path().join("y");
    std::fs::create_dir_all(&y).unwrap();
    let cp = Command::new("cp").arg("-a").arg(&cut).arg(y.join("ck")).status().unwrap();
    assert!(cp.success());
    let before = snapshot(&cut);
    assert!(before.contains_key(Path::new("checkpoints/step_0000000020/meta.json")));

    // Into X's checkpoint directory, given explicitly: refused before anything is written.
    let x_ck = cut.join("checkpoints").display().to_string();
    let step10 = ["--restart", "ck/checkpoints/step_0000000010", "--backend", "cpu", "-q"];
    let o = common::cli::pycno_np(
        0,
        Some(&y),
        &[&["run"], &step10[..], &["--checkpoint-every", "3", "--checkpoint-dir", &x_ck]].concat(),
        &[],
    );
    fails(&o, &["would write its checkpoints into", "other checkpoint(s)", "--checkpoint-dir"]);
    assert!(snapshot(&cut) == before, "a refused restart changed the original directory");

    // Without --out: the copy goes on, to the uninterrupted run's end.
    let o = common::cli::pycno_np(
        0,
        Some(&y),
        &[&["run"], &step10[..], &["--checkpoint-every", "3", "--checkpoint-keep", "1"]].concat(),
        &[],
    );
    ok(o);
    assert!(snapshot(&cut) == before, "the restart of the copy changed the original directory");
    let copy = y.join("ck");
    assert_eq!(stats(&copy)["state_checksum"], stats(&full)["state_checksum"]);
    assert_eq!(stats(&copy)["restarted_from"], 10);
    let a = std::fs::read_to_string(full.join("gauges.csv")).unwrap();
    let b = std::fs::read_to_string(copy.join("gauges.csv")).unwrap();
    assert_eq!(a, b, "the copy's gauges.csv continues to the uninterrupted run's");
    let done = std::fs::read_dir(copy.join("checkpoints")).unwrap().count();
    assert!(done >= 2, "the copy's checkpoint directory holds the restart's checkpoints");
}

/// Issue 46, item 5: a rank file of another run (same mesh, same step and time, a valid
/// checksum of its own; made here by changing one value and sealing the file again) copied
/// into a checkpoint was resumed from. `meta.json` now records each rank file's checksum.
#[test]
fn a_rank_file_of_another_run_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("killed");
    killed(&run(0, &args(&d, &["--checkpoint-every", "10"]), &[("PYCNO_KILL", "0:23")]));
    let rank = d.join("checkpoints/step_0000000020/rank_00000.bin");
    let mut b = std::fs::read(&rank).unwrap();
    let n = b.len();
    // The last stored number of the last cell (its d2 low part), as another run might have it.
    b[n - 5] ^= 0x01;
    let crc = crc32fast::hash(&b[..n - 4]);
    b[n - 4..].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(&rank, &b).unwrap();
    let o = restart(0, &d.join("checkpoints/step_0000000020"), &[]);
    fails(&o, &["rank_00000.bin", "not the file this checkpoint was written with", "another run"]);
}

/// Issue 46, item 5: `echo garbage > OUT/gauges.csv` before a restart left a `gauges.csv`
/// without its column line. The file a restart continues must be this run's gauges.
#[test]
fn a_restart_refuses_a_gauges_file_that_is_not_this_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, cut) = full_and_killed_gauge_runs(tmp.path());
    let g = cut.join("gauges.csv");
    let good = std::fs::read_to_string(&g).unwrap();
    std::fs::write(&g, "garbage\n").unwrap();
    let o = restart(0, &cut.join("checkpoints"), &[]);
    fails(&o, &["gauges.csv", "line 1", "garbage"]);
    // Another run's gauges (other columns).
    std::fs::write(&g, good.replace("centre_", "east_")).unwrap();
    let o = restart(0, &cut.join("checkpoints"), &[]);
    fails(&o, &["gauges.csv", "expected this run's column line", "east_h1"]);
    // A row cut short.
    let cut_row: String = good.lines().take(5).collect::<Vec<_>>().join("\n") + "\n0.5,3\n";
    std::fs::write(&g, cut_row).unwrap();
    let o = restart(0, &cut.join("checkpoints"), &[]);
    fails(&o, &["gauges.csv", "expected a row of 10 comma-separated values", "0.5,3"]);
    // Its own file restarts.
    std::fs::write(&g, &good).unwrap();
    ok(restart(0, &cut.join("checkpoints"), &[]));
}

/// Issue 46, item 10: `--max-steps` on a restart counted from the original start, so a
/// limit below the checkpoint's step silently did nothing. It counts this process's steps.
#[test]
fn max_steps_on_a_restart_counts_the_restart_s_own_steps() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("killed");
    killed(&run(0, &args(&d, &["--checkpoint-every", "10"]), &[("PYCNO_KILL", "0:23")]));
    let c = d.join("checkpoints").display().to_string();
    ok(pycno(0, &["run", "--restart", &c, "--backend", "cpu", "-q", "--max-steps", "5"], &[]));
    let s = stats(&d);
    assert_eq!(s["restarted_from"], 20);
    assert_eq!(s["steps"], 25, "5 steps after the checkpoint's 20");
}
