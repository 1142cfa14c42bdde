//! A modeller's first hour, trap by trap: `pycno` on the PATH and `--version`; `pycno
//! example` for every example, each then run, and each valid against `pycno schema`
//! (checked by the `jsonschema` Python package) while a wrong scenario is not; a used
//! output directory refused and `--overwrite` removing only pycno's files; `scenario.json`
//! runs again to the same result; `--max-steps` writes a last frame; a restart names its
//! checkpoint and counts only its own steps; `pycno plot` writes real PNGs and refuses
//! bad arguments.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

mod common;
use common::cli::{expect_failure, expect_ok as ok, pycno_np, stats, text};

fn pycno(cwd: &Path, args: &[&str]) -> std::process::Output {
    pycno_np(0, Some(cwd), args, &[])
}

fn files_under(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// The commit of this checkout, as build.rs reads it (`unknown` outside a git checkout).
fn head_commit() -> String {
    Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

#[test]
fn version_names_the_commit_and_the_pycno_on_the_path_is_this_checkouts() {
    let o = ok(pycno(Path::new("."), &["--version"]));
    let version = String::from_utf8_lossy(&o.stdout).trim().to_string();
    // The test build is cargo's dev profile, which cargo calls `debug`.
    let want = format!("pycno {} (commit {}, debug build)", env!("CARGO_PKG_VERSION"), head_commit());
    assert_eq!(version, want);
    // tools/setup.sh (which tools/test.sh and CI run first) installs this checkout's release
    // build into cargo's bin directory with `cargo install`: a copy, which names its commit.
    let found =
        std::env::var_os("PATH").and_then(|p| std::env::split_paths(&p).map(|d| d.join("pycno")).find(|f| f.is_file()));
    match found {
        Some(f) => {
            let o = Command::new(&f).arg("--version").output().unwrap();
            assert!(o.status.success(), "{}", text(&o));
            let v = String::from_utf8_lossy(&o.stdout).trim().to_string();
            eprintln!("pycno on the PATH: {} is {v}", f.display());
            if std::env::var_os("CI").is_some() {
                let want = format!("pycno {} (commit {}, release build)", env!("CARGO_PKG_VERSION"), head_commit());
                assert_eq!(v, want, "the pycno on the PATH ({}) is not this checkout's release build", f.display());
                let link = std::fs::symlink_metadata(&f).unwrap();
                assert!(!link.file_type().is_symlink(), "{} is a link, not an installed copy", f.display());
            }
        }
        None if std::env::var_os("CI").is_some() => panic!("no pycno on the PATH: tools/setup.sh installs it"),
        None => eprintln!("no pycno on the PATH here (tools/setup.sh installs it)"),
    }
}

fn names() -> Vec<String> {
    let o = ok(pycno(Path::new("."), &["example"]));
    let list = String::from_utf8_lossy(&o.stdout).into_owned();
    let v: Vec<String> =
        list.lines().skip(1).filter_map(|l| l.split_whitespace().next()).map(|n| n.to_string()).collect();
    assert!(v.len() >= 5, "{list}");
    v
}

#[test]
fn every_example_is_written_runs_and_validates_against_the_schema() {
    let d = tempfile::tempdir().unwrap();
    let schema = d.path().join("pycno.schema.json");
    let o = ok(pycno(d.path(), &["schema"]));
    std::fs::write(&schema, &o.stdout).unwrap();
    let mut scenarios = Vec::new();
    for name in names() {
        let dir = d.path().join(&name);
        ok(pycno(d.path(), &["example", &name, dir.to_str().unwrap()]));
        let file = dir.join(format!("{name}.json"));
        assert!(file.is_file(), "{}", file.display());
        // From another directory: its paths are relative to the file.
        let meshed =
            serde_json::from_str::<Value>(&std::fs::read_to_string(&file).unwrap()).unwrap().get("mesh").is_some();
        let cells: &[&str] = if meshed { &[] } else { &["--cells", "400"] };
        let mut args = vec!["run", file.to_str().unwrap(), "--t-end", "0.02", "--out", "o", "--no-vtk", "-q"];
        args.extend_from_slice(cells);
        ok(pycno(&dir, &args));
        assert!(stats(&dir.join("o"))["steps"].as_u64().unwrap() > 0);
        scenarios.push(file);
    }
    // A wrong scenario: a misspelt key and a string for a number.
    let bad = d.path().join("bad.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&scenarios[0]).unwrap()).unwrap();
    v["time"]["end"] = Value::String("ten".into());
    v["outptu"] = Value::Object(Default::default());
    std::fs::write(&bad, v.to_string()).unwrap();
    let script = "import json,sys,jsonschema\ns=json.load(open(sys.argv[1]))\nbad=0\n\
        for f in sys.argv[2:]:\n  errs=list(jsonschema.Draft202012Validator(s).iter_errors(json.load(open(f))))\n  \
        print(f, len(errs)); bad+=(len(errs)>0)!=f.endswith('bad.json')\nsys.exit(1 if bad else 0)";
    let o =
        Command::new("python3").args(["-c", script]).arg(&schema).args(&scenarios).arg(&bad).output().expect("python3");
    assert!(o.status.success(), "every example valid, bad.json not:\n{}", text(&o));
    expect_failure(&pycno(d.path(), &["run", bad.to_str().unwrap()]), Some(1), &["bad.json"]);
}

#[test]
fn a_used_output_directory_is_refused_and_overwrite_removes_only_pycnos_files() {
    let d = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let mut a = vec!["run", "--cells", "400", "--t-end", "0.04", "--output-interval", "0.01", "--out", "o", "-q"];
        a.extend_from_slice(extra);
        pycno(d.path(), &a)
    };
    ok(run(&[]));
    let first = files_under(&d.path().join("o"));
    assert!(first.contains(&"dambreak_00004.vtu".to_string()), "{first:?}");
    std::fs::write(d.path().join("o/notes.txt"), "mine").unwrap();
    // A shorter run into the same directory: refused, nothing touched.
    let err = expect_failure(&run(&["--t-end", "0.02"]), Some(1), &["holds the results of another run", "--overwrite"]);
    assert!(err.contains("o"), "{err}");
    let mut with_notes = first.clone();
    with_notes.push("notes.txt".into());
    with_notes.sort();
    assert_eq!(files_under(&d.path().join("o")), with_notes);
    // --overwrite: the earlier frames go (no frame of the longer run is left), notes.txt stays.
    ok(run(&["--t-end", "0.02", "--overwrite"]));
    let now = files_under(&d.path().join("o"));
    assert!(now.contains(&"notes.txt".to_string()), "{now:?}");
    assert!(!now.contains(&"dambreak_00004.vtu".to_string()), "a frame of the earlier run is left: {now:?}");
    assert_eq!(stats(&d.path().join("o"))["outputs"], 3);
}

#[test]
fn scenario_json_runs_again_to_the_same_result_and_max_steps_writes_a_last_frame() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("c.json");
    ok(pycno(d.path(), &["example", "channel_internal_dambreak", d.path().to_str().unwrap()]));
    std::fs::rename(d.path().join("channel_internal_dambreak.json"), &file).unwrap();
    ok(pycno(d.path(), &["run", "c.json", "--cells", "500", "--t-end", "0.3", "--out", "a", "-q"]));
    let saved = d.path().join("a/scenario.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    assert_eq!(v["time"]["end"], 0.3, "the command line's --t-end is in it");
    assert!(Path::new(v["output"]["dir"].as_str().unwrap()).is_absolute());
    // From another directory, into another output directory.
    let elsewhere = tempfile::tempdir().unwrap();
    let b = d.path().join("b");
    ok(pycno(elsewhere.path(), &["run", saved.to_str().unwrap(), "--out", b.to_str().unwrap(), "-q"]));
    assert_eq!(stats(&b)["state_checksum"], stats(&d.path().join("a"))["state_checksum"]);

    // --max-steps: the state it stopped at is the last frame, and outputs counts the frames.
    ok(pycno(d.path(), &["run", "c.json", "--cells", "500", "--t-end", "0.3", "--max-steps", "7", "--out", "m", "-q"]));
    let st = stats(&d.path().join("m"));
    let pvd = std::fs::read_to_string(d.path().join("m/channel_internal_dambreak.pvd")).unwrap();
    let frames: Vec<&str> = pvd.lines().filter(|l| l.contains("<DataSet")).collect();
    assert_eq!(st["outputs"].as_u64().unwrap() as usize, frames.len());
    assert!(frames.last().unwrap().contains(&format!("timestep=\"{}\"", st["t_end"].as_f64().unwrap())), "{pvd}");
    assert_eq!(st["steps"], 7);
}

#[test]
fn a_restart_names_its_checkpoint_and_counts_only_its_own_steps() {
    let d = tempfile::tempdir().unwrap();
    let args =
        ["run", "--cells", "600", "--t-end", "0.2", "--out", "o", "--checkpoint-every", "10", "--backend", "cpu"];
    let o = pycno_np(0, Some(d.path()), &args, &[("PYCNO_KILL", "0:15")]);
    assert!(!o.status.success(), "killed:\n{}", text(&o));
    let o = ok(pycno_np(
        0,
        Some(d.path()),
        &["run", "--restart", "o/checkpoints", "--backend", "cpu"],
        &[("PYCNO_PROGRESS_SECONDS", "0")],
    ));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("resuming from checkpoint") && err.contains("step_0000000010"), "{err}");
    let mut lines = 0;
    for l in err.lines().filter(|l| l.contains(" since the restart)")) {
        // "step S (O since the restart)": O = S - 10.
        let s: u64 = l.split("step ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
        let own: u64 = l.split(" (").nth(2).unwrap().split(' ').next().unwrap().parse().unwrap();
        assert_eq!(own, s - 10, "{l}");
        lines += 1;
    }
    assert!(lines > 0, "no progress lines:\n{err}");
}

fn png_size(p: &Path) -> (u32, u32) {
    let b = std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    assert_eq!(&b[..8], b"\x89PNG\r\n\x1a\n", "{} is not a PNG", p.display());
    let be = |o: usize| u32::from_be_bytes(b[o..o + 4].try_into().unwrap());
    (be(16), be(20))
}

#[test]
fn plot_writes_maps_transects_max_maps_and_gauges_and_refuses_bad_arguments() {
    let d = tempfile::tempdir().unwrap();
    let s = d.path().join("c.json");
    std::fs::write(
        &s,
        r#"{ "name": "c", "domain": { "outer": [[0, 0], [20, 0], [20, 1], [0, 1]] }, "resolution": { "cells": 600 },
  "bathymetry": { "type": "constant", "depth": 2.0 },
  "initial": { "type": "dam_break_x", "x0": 10, "interface_left": -0.6, "interface_right": -1.4, "surface": 0 },
  "time": { "end": 0.3, "output_interval": 0.1 }, "output": { "max_maps": {} },
  "gauges": { "interval": 0.02, "points": [{ "name": "g", "at": [9, 0.5] }] } }"#,
    )
    .unwrap();
    ok(pycno(d.path(), &["run", "c.json", "-q"]));
    let out = d.path().join("out/c");
    let o = out.to_str().unwrap();
    let cases: [(&[&str], &str); 5] = [
        (&["--aspect", "4", "--cmap", "RdBu_r", "--clim", "-1", "-0.4"], "c_interface_last.png"),
        (&["--transect", "0.5,0.5 19.5,0.5", "--time", "0.1"], "c_transect_t0.1.png"),
        (&["--max"], "c_max_surface.png"),
        (&["--max", "--field", "arrival_time"], "c_arrival_time.png"),
        (&["--gauges"], "gauges.png"),
    ];
    for (args, file) in cases {
        let o = ok(pycno(d.path(), &[&["plot", o][..], args].concat()));
        assert!(String::from_utf8_lossy(&o.stdout).contains(file), "{}", text(&o));
        let (w, h) = png_size(&out.join(file));
        assert!(w > 300 && h > 200, "{file}: {w} x {h}");
        if file == "c_interface_last.png" {
            assert!(w > 2 * h, "a long channel gets a wide picture: {w} x {h}");
        }
    }
    let bad: [&[&str]; 6] = [
        &["--clim", "1", "0"],
        &["--cmap", "no_such_map"],
        &["--aspect", "-2"],
        &["--transect", "1,2"],
        &["--transect", "30,30 40,40"],
        &["--field", "nope"],
    ];
    for args in bad {
        let o = pycno(d.path(), &[&["plot", o][..], args].concat());
        let err = expect_failure(&o, None, &[]);
        assert!(!err.contains("Traceback"), "{args:?}: {err}");
    }
    expect_failure(&pycno(d.path(), &["plot", "no/such/dir"]), Some(1), &["no/such/dir"]);
}

/// Issue 46, item 10: the pictures of a long run on a large domain speak in hours and km,
/// a transect shows the signed velocity along it (an exchange flow's two directions) and
/// warns when it lies mostly outside the domain, and a transect of a two-rank run draws
/// (matplotlib refused the pieces' repeated points: "Triangulation is invalid").
/// `tests/python/check_plots.py` reads the figures' texts.
#[test]
fn plots_of_a_long_multi_rank_run_use_hours_km_and_signed_transect_velocities() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("long.json"),
        r#"{ "name": "long", "domain": { "outer": [[0, 0], [100000, 0], [100000, 10000], [0, 10000]] },
  "resolution": { "cells": 400 }, "bathymetry": { "type": "constant", "depth": 200.0 },
  "initial": { "type": "dam_break_x", "x0": 50000, "interface_left": -60, "interface_right": -140, "surface": 0 },
  "time": { "end": 10800, "output_interval": 3600 },
  "gauges": { "interval": 1800, "points": [{ "name": "mid", "at": [50000, 5000] }] } }"#,
    )
    .unwrap();
    ok(pycno_np(2, Some(d.path()), &["run", "long.json", "-q", "--backend", "cpu", "--out", "o"], &[]));
    assert!(d.path().join("o/long_00003.pvtu").is_file(), "two ranks write .pvtu frames");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = Command::new("python3")
        .arg(root.join("tests/python/check_plots.py"))
        .arg(root.join("tools/plot.py"))
        .arg(d.path().join("o"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
}
