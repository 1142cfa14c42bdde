//! The `pycno` binary end to end: `run` (default benchmark, scenario files, bad input),
//! `bench --json`, `mesh`, and the example scenarios shipped in `meshes/scenarios/`.
//!
//! Every command runs with a fresh temporary directory as its working directory, so a
//! default `output.dir` ("out") can never land in the repository, and a failed command
//! can be checked to have written nothing.

mod common;

use common::{files_under, patch_top_level};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::cli::{expect_failure, expect_ok, pycno_np};

/// Run `pycno ARGS` in `cwd`.
fn pycno(cwd: &Path, args: &[&str]) -> Output {
    pycno_np(0, Some(cwd), args, &[])
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Describe a finished command for assertion messages.
fn show(args: &[&str], o: &Output) -> String {
    format!("pycno {}\n{}", args.join(" "), common::cli::text(o))
}

/// Run and require exit status 0.
#[track_caller]
fn ok(cwd: &Path, args: &[&str]) -> Output {
    expect_ok(pycno(cwd, args))
}

/// Run and require a clean failure with exit status `code` (never a panic, 101); returns
/// stderr.
#[track_caller]
fn fails(cwd: &Path, args: &[&str], code: i32) -> String {
    expect_failure(&pycno(cwd, args), Some(code), &[])
}

#[track_caller]
fn has(msg: &str, parts: &[&str]) {
    for p in parts {
        assert!(msg.contains(p), "message {msg:?} should contain {p:?}");
    }
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

fn read_json(path: &Path) -> Value {
    let t = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&t).unwrap_or_else(|e| panic!("{} is not JSON: {e}\n{t}", path.display()))
}

const STATS_KEYS: [&str; 13] = [
    "cells",
    "edges",
    "steps",
    "t_end",
    "wall_seconds",
    "cell_updates_per_second",
    "mass_layer1_start",
    "mass_layer1_end",
    "mass_layer2_start",
    "mass_layer2_end",
    "hyperbolicity_fallbacks",
    "backend",
    "ranks",
];

fn num(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key} is not a number in {v:#}"))
}

/// The fields every stats object must have, with sane values. `t_end`: the time the run
/// must have reached; `mass_tol`: relative mass change allowed per layer.
#[track_caller]
fn check_stats(v: &Value, t_end: Option<f64>, mass_tol: f64) {
    for k in STATS_KEYS {
        assert!(v.get(k).is_some(), "stats lack {k}: {v:#}");
    }
    let cells = v["cells"].as_u64().unwrap_or_else(|| panic!("cells: {v:#}"));
    let edges = v["edges"].as_u64().unwrap_or_else(|| panic!("edges: {v:#}"));
    assert!(cells > 0 && edges > cells, "{v:#}");
    let steps = v["steps"].as_u64().unwrap_or_else(|| panic!("steps: {v:#}"));
    assert!(steps > 0, "{v:#}");
    if let Some(t) = t_end {
        assert_eq!(num(v, "t_end"), t, "{v:#}");
    }
    assert!(num(v, "wall_seconds") > 0.0, "{v:#}");
    assert!(num(v, "cell_updates_per_second") > 0.0, "{v:#}");
    for layer in [1, 2] {
        let (a, b) = (num(v, &format!("mass_layer{layer}_start")), num(v, &format!("mass_layer{layer}_end")));
        assert!(a > 0.0 && b > 0.0, "layer {layer}: {v:#}");
        let rel = ((b - a) / a).abs();
        assert!(rel <= mass_tol, "layer {layer} mass changed by {rel:e} > {mass_tol:e}: {v:#}");
    }
    assert!(v["hyperbolicity_fallbacks"].is_u64(), "{v:#}");
    assert_eq!(v["backend"], "cpu", "{v:#}");
    assert_eq!(v["ranks"], 1, "{v:#}");
}

/// The `file="..."` entries of a `.pvd`, with their `timestep="..."`; each must exist
/// beside it and be a non-empty VTK file.
fn check_pvd(pvd: &Path) -> Vec<(f64, String)> {
    let xml = std::fs::read_to_string(pvd).unwrap_or_else(|e| panic!("cannot read {}: {e}", pvd.display()));
    assert!(
        xml.contains("<VTKFile") && xml.contains("type=\"Collection\"") && xml.trim_end().ends_with("</VTKFile>"),
        "{xml}"
    );
    let attr = |tag: &str, name: &str| -> String {
        let key = format!("{name}=\"");
        let i = tag.find(&key).unwrap_or_else(|| panic!("no {name} in {tag}")) + key.len();
        let j = tag[i..].find('"').unwrap() + i;
        tag[i..j].to_string()
    };
    let mut entries = Vec::new();
    for tag in xml.split("<DataSet").skip(1) {
        let tag = &tag[..tag.find("/>").expect("unclosed DataSet")];
        let t: f64 = attr(tag, "timestep").parse().unwrap();
        let file = attr(tag, "file");
        let path = pvd.parent().unwrap().join(&file);
        let meta = std::fs::metadata(&path)
            .unwrap_or_else(|e| panic!("{} lists {file}, which is missing: {e}", pvd.display()));
        assert!(meta.len() > 0, "{file} is empty");
        let head = std::fs::read(&path).unwrap();
        let head = String::from_utf8_lossy(&head[..head.len().min(400)]).into_owned();
        assert!(head.contains("<VTKFile") && head.contains("UnstructuredGrid"), "{file}: {head}");
        entries.push((t, file));
    }
    assert!(!entries.is_empty(), "{xml}");
    entries
}

/// No `.tmp` leftovers of atomic writes.
fn no_temporaries(dir: &Path) {
    for f in files_under(dir) {
        assert!(!f.to_string_lossy().ends_with(".tmp"), "temporary file left: {}", f.display());
    }
}

// ---------------------------------------------------------------------------------------
// pycno run

fn default_run(precision: &str, mass_tol: f64) {
    let d = tempdir();
    let out = d.path().join("res");
    let args =
        ["run", "--cells", "600", "--t-end", "0.02", "--out", out.to_str().unwrap(), "--precision", precision, "-q"];
    let o = ok(d.path(), &args);
    assert!(text(&o.stdout).trim().is_empty(), "-q printed: {}", show(&args, &o));
    let entries = check_pvd(&out.join("dambreak.pvd"));
    assert_eq!(entries.first().map(|e| e.0), Some(0.0), "{entries:?}");
    assert_eq!(entries.last().map(|e| e.0), Some(0.02), "{entries:?}");
    let stats = read_json(&out.join("stats.json"));
    check_stats(&stats, Some(0.02), mass_tol);
    let cells = stats["cells"].as_u64().unwrap();
    assert!((540..=660).contains(&cells), "asked 600 cells, got {cells}");
    assert_eq!(stats["precision"], precision);
    assert_eq!(stats["name"], "dambreak");
    // Nothing but the series, the stats, the resolved scenario and the list of them.
    let mut expected: Vec<PathBuf> = entries.iter().map(|e| PathBuf::from(&e.1)).collect();
    expected.push("dambreak.pvd".into());
    expected.push("stats.json".into());
    expected.push("scenario.json".into());
    expected.push(".pycno-outputs".into());
    expected.sort();
    let found: Vec<PathBuf> = files_under(&out);
    assert_eq!(found, expected);
    // And nothing in the working directory but the output directory.
    assert_eq!(files_under(d.path()).iter().filter(|p| p.components().count() == 1).count(), 1);
}

#[test]
fn run_default_f32_writes_series_and_stats() {
    default_run("f32", 1e-5);
}

#[test]
fn run_default_f64_conserves_mass_to_round_off() {
    default_run("f64", 1e-11);
}

#[test]
fn run_with_output_interval_lists_every_frame() {
    let d = tempdir();
    let args = ["run", "--cells", "500", "--t-end", "0.03", "--output-interval", "0.01", "--out", "o", "-q"];
    ok(d.path(), &args);
    let entries = check_pvd(&d.path().join("o/dambreak.pvd"));
    let times: Vec<f64> = entries.iter().map(|e| e.0).collect();
    assert_eq!(times.len(), 4, "{entries:?}");
    for (t, want) in times.iter().zip([0.0, 0.01, 0.02, 0.03]) {
        assert!((t - want).abs() < 1e-12, "{entries:?}");
    }
    let files: std::collections::HashSet<_> = entries.iter().map(|e| &e.1).collect();
    assert_eq!(files.len(), 4, "frames share a file: {entries:?}");
    let stats = read_json(&d.path().join("o/stats.json"));
    check_stats(&stats, Some(0.03), 1e-5);
    assert_eq!(stats["outputs"], 4);
    no_temporaries(d.path());
}

#[test]
fn run_no_vtk_writes_only_stats() {
    let d = tempdir();
    ok(d.path(), &["run", "--cells", "500", "--t-end", "0.01", "--out", "o", "--no-vtk", "-q"]);
    let want: Vec<PathBuf> = [".pycno-outputs", "scenario.json", "stats.json"].iter().map(PathBuf::from).collect();
    assert_eq!(files_under(&d.path().join("o")), want);
    check_stats(&read_json(&d.path().join("o/stats.json")), Some(0.01), 1e-5);
}

#[test]
fn run_max_steps_stops_early() {
    let d = tempdir();
    ok(d.path(), &["run", "--cells", "500", "--t-end", "10", "--max-steps", "3", "--out", "o", "--no-vtk", "-q"]);
    let stats = read_json(&d.path().join("o/stats.json"));
    check_stats(&stats, None, 1e-5);
    assert_eq!(stats["steps"], 3);
    let t = num(&stats, "t_end");
    assert!(t > 0.0 && t < 10.0, "{stats:#}");
}

#[test]
fn run_without_quiet_prints_a_summary() {
    let d = tempdir();
    let o = ok(d.path(), &["run", "--cells", "500", "--t-end", "0.01", "--out", "o"]);
    let out = text(&o.stdout);
    has(&out, &["cells", "steps", "mass layer 1", "mass layer 2", "dambreak.pvd", "stats.json"]);
}

/// A quasi-1D internal dam break in a channel, from a scenario file whose output
/// directory is absolute.
#[test]
fn run_scenario_file_channel() {
    let d = tempdir();
    let out = d.path().join("channel_out");
    let scenario = format!(
        r#"{{
            "name": "chan",
            "domain": {{ "outer": [[0, 0], [10, 0], [10, 0.5], [0, 0.5]] }},
            "resolution": {{ "cells": 400 }},
            "bathymetry": {{ "type": "constant", "depth": 2 }},
            "initial": {{ "type": "dam_break_x", "x0": 5, "interface_left": -0.5, "interface_right": -1.5 }},
            "physics": {{ "r": 0.98 }},
            "time": {{ "end": 0.05, "output_times": [0.025] }},
            "output": {{ "dir": {} }}
        }}"#,
        serde_json::to_string(out.to_str().unwrap()).unwrap()
    );
    let file = d.path().join("chan.json");
    std::fs::write(&file, scenario).unwrap();
    let cwd = d.path().join("elsewhere");
    std::fs::create_dir(&cwd).unwrap();
    ok(&cwd, &["run", file.to_str().unwrap(), "-q"]);
    let entries = check_pvd(&out.join("chan.pvd"));
    let times: Vec<f64> = entries.iter().map(|e| e.0).collect();
    assert_eq!(times, vec![0.0, 0.025, 0.05]);
    let stats = read_json(&out.join("stats.json"));
    check_stats(&stats, Some(0.05), 1e-5);
    assert_eq!(stats["name"], "chan");
    assert!(files_under(&cwd).is_empty(), "wrote into the working directory: {:?}", files_under(&cwd));
    no_temporaries(d.path());

    // The command line overrides the file.
    ok(&cwd, &["run", file.to_str().unwrap(), "--cells", "300", "--t-end", "0.01", "--out", "o2", "--no-vtk", "-q"]);
    let stats = read_json(&cwd.join("o2/stats.json"));
    check_stats(&stats, Some(0.01), 1e-5);
    assert!(stats["cells"].as_u64().unwrap() < 360, "{stats:#}");
}

/// A scenario that reads a mesh file, named relative to the scenario file, run from
/// another directory; `--cells` does not apply to it.
#[test]
fn run_scenario_with_relative_mesh_file() {
    let d = tempdir();
    let sdir = d.path().join("case");
    std::fs::create_dir(&sdir).unwrap();
    ok(d.path(), &["mesh", "--cells", "300", "--out", "case/box.msh"]);
    let file = sdir.join("s.json");
    std::fs::write(
        &file,
        r#"{ "name": "boxed", "mesh": "box.msh",
             "initial": { "type": "circular_dam_break", "radius": 2 },
             "time": { "end": 0.01 } }"#,
    )
    .unwrap();
    let cwd = d.path().join("run");
    std::fs::create_dir(&cwd).unwrap();
    ok(&cwd, &["run", file.to_str().unwrap(), "--out", "o", "-q"]);
    check_pvd(&cwd.join("o/boxed.pvd"));
    check_stats(&read_json(&cwd.join("o/stats.json")), Some(0.01), 1e-5);

    let err = fails(&cwd, &["run", file.to_str().unwrap(), "--cells", "500", "--out", "o3", "-q"], 1);
    has(&err, &["--cells", "mesh"]);
    assert!(!cwd.join("o3").exists());
}

// ---------------------------------------------------------------------------------------
// pycno run with bad scenario files

/// A valid small scenario with `patch` merged into it at the top level (a `null` removes).
fn scenario_with(patch: Value) -> String {
    let mut v = serde_json::json!({
        "name": "bad",
        "domain": { "outer": [[0, 0], [4, 0], [4, 2], [0, 2]] },
        "resolution": { "cells": 300 },
        "initial": { "type": "at_rest", "interface": -2 },
        "physics": { "r": 0.98 },
        "time": { "end": 0.01 }
    });
    patch_top_level(&mut v, &patch);
    serde_json::to_string_pretty(&v).unwrap()
}

/// `pycno run FILE` must exit 1, name the file and every one of `parts` on stderr, and
/// leave nothing behind (with `--out` and with the default output directory).
#[track_caller]
fn bad_scenario(name: &str, contents: Option<&str>, parts: &[&str]) {
    let d = tempdir();
    let file = d.path().join(name);
    if let Some(c) = contents {
        std::fs::write(&file, c).unwrap();
    }
    let before = files_under(d.path());
    for extra in [&["--out", "res"][..], &[][..]] {
        let mut args = vec!["run", file.to_str().unwrap(), "--cells", "300", "-q"];
        args.extend_from_slice(extra);
        let err = fails(d.path(), &args, 1);
        has(&err, &[name]);
        has(&err, parts);
        assert_eq!(files_under(d.path()), before, "pycno {} left files behind", args.join(" "));
    }
}

#[test]
fn bad_scenario_unknown_nested_key() {
    bad_scenario(
        "rr.json",
        Some(&scenario_with(serde_json::json!({ "physics": { "rr": 0.5 } }))),
        &["physics.rr", "unknown field"],
    );
}

#[test]
fn bad_scenario_unknown_top_level_key() {
    bad_scenario(
        "top.json",
        Some(&scenario_with(serde_json::json!({ "physic": { "r": 0.5 } }))),
        &["physic", "unknown field"],
    );
}

#[test]
fn bad_scenario_wrong_type() {
    bad_scenario(
        "type.json",
        Some(&scenario_with(serde_json::json!({ "physics": { "r": "x" } }))),
        &["physics.r", "invalid type"],
    );
    bad_scenario("end.json", Some(&scenario_with(serde_json::json!({ "time": { "end": [1] } }))), &["time.end"]);
}

#[test]
fn bad_scenario_density_ratio() {
    for r in [0.0, 1.0, 1.5] {
        bad_scenario("r.json", Some(&scenario_with(serde_json::json!({ "physics": { "r": r } }))), &["physics.r"]);
    }
}

#[test]
fn bad_scenario_thickness() {
    bad_scenario(
        "h1.json",
        Some(&scenario_with(serde_json::json!({ "initial": { "type": "circular_dam_break", "h1_inside": 0 } }))),
        &["initial.h1_inside", "positive"],
    );
    bad_scenario(
        "layers.json",
        Some(&scenario_with(serde_json::json!({ "initial": { "type": "layers",
            "layer1": { "thickness": -1 }, "layer2": { "thickness": 1 } } }))),
        &["initial.layer1.thickness", ">= 0"],
    );
}

/// With vanishing layers (issue 17) an interface above the free surface is no longer an
/// error (it was before): the upper layer is absent everywhere, and the run goes on.
#[test]
fn at_rest_with_the_interface_above_the_surface_leaves_no_upper_layer() {
    let d = tempdir();
    let file = d.path().join("above.json");
    let s = scenario_with(serde_json::json!({ "initial": { "type": "at_rest", "interface": 1, "surface": 0 } }));
    std::fs::write(&file, s).unwrap();
    ok(d.path(), &["run", file.to_str().unwrap(), "--cells", "300", "--out", "o", "--no-vtk", "-q"]);
    let stats = read_json(&d.path().join("o/stats.json"));
    assert_eq!(stats["mass_layer1_start"].as_f64(), Some(0.0), "{stats}");
    assert!(stats["mass_layer2_start"].as_f64().unwrap() > 0.0, "{stats}");
}

#[test]
fn bad_scenario_domains() {
    bad_scenario(
        "bowtie.json",
        Some(&scenario_with(serde_json::json!({ "domain": { "outer": [[0, 0], [2, 2], [2, 0], [0, 1]] } }))),
        &["domain.outer", "intersects itself"],
    );
    bad_scenario(
        "line.json",
        Some(&scenario_with(serde_json::json!({ "domain": { "outer": [[0, 0], [1, 0], [2, 0]] } }))),
        &["domain.outer"],
    );
    bad_scenario(
        "hole.json",
        Some(&scenario_with(serde_json::json!({ "domain": { "outer": [[0, 0], [4, 0], [4, 2], [0, 2]],
            "holes": [[[5, 5], [6, 5], [6, 6]]] } }))),
        &["domain.holes[0]", "outside"],
    );
    bad_scenario("both.json", Some(&scenario_with(serde_json::json!({ "mesh": "x.msh" }))), &["domain", "mesh"]);
}

/// Collinear to rounding (shoelace area 2.8e-17, not 0): validation lets it through and
/// mesh generation then fails without naming the file or `domain.outer`.
#[test]
fn bad_scenario_collinear_to_rounding() {
    bad_scenario(
        "sliver.json",
        Some(&scenario_with(serde_json::json!({ "domain": { "outer": [[0.1, 0.72], [0.3, 0.76], [0.7, 0.84]] } }))),
        &["domain.outer"],
    );
}

#[test]
fn bad_scenario_time_and_resolution() {
    bad_scenario("end0.json", Some(&scenario_with(serde_json::json!({ "time": { "end": 0 } }))), &["time.end"]);
    bad_scenario(
        "times.json",
        Some(&scenario_with(serde_json::json!({ "time": { "end": 1, "output_times": [0.5, 0.2] } }))),
        &["time.output_times[1]"],
    );
    bad_scenario(
        "angle.json",
        Some(&scenario_with(serde_json::json!({ "resolution": { "cells": 300, "min_angle": 40 } }))),
        &["resolution.min_angle"],
    );
}

#[test]
fn bad_scenario_not_json_empty_missing_directory() {
    bad_scenario("prose.json", Some("this is not JSON\n"), &["expected"]);
    bad_scenario("empty.json", Some(""), &["EOF"]);
    bad_scenario("truncated.json", Some("{ \"name\": \"x\", \"time\": { \"end\": "), &["EOF"]);
    bad_scenario("missing.json", None, &["cannot read", "No such file"]);
    // A directory where a file was expected.
    let d = tempdir();
    let err = fails(d.path(), &["run", d.path().to_str().unwrap(), "-q"], 1);
    has(&err, &[d.path().to_str().unwrap()]);
    assert!(files_under(d.path()).is_empty());
}

// ---------------------------------------------------------------------------------------
// pycno run with bad command-line values

#[test]
fn bad_cli_values_fail_cleanly() {
    let d = tempdir();
    // Rejected by clap: exit 2.
    for args in [
        &["run", "--precision", "f16"][..],
        &["run", "--t-end", "soon"],
        &["run", "--cells", "-5"],
        &["run", "--cells", "many"],
        &["run", "--max-steps", "-1"],
        &["run", "--backend", "tpu"],
        &["run", "--no-such-flag"],
        &["bench", "--cells", "500,x"],
        &["frobnicate"],
    ] {
        let err = fails(d.path(), args, 2);
        has(&err, &["error"]);
    }
    // Parsed, then rejected by validation: exit 1, naming what was wrong.
    for (args, parts) in [
        (&["run", "--cells", "0", "-q"][..], &["cells"][..]),
        (&["run", "--cells", "1", "-q"], &["cells"]),
        (&["run", "--t-end=-1", "-q"], &["time.end"]),
        (&["run", "--t-end", "-1", "-q"], &["time.end"]),
        (&["run", "--t-end", "0", "-q"], &["time.end"]),
        (&["run", "--t-end", "nan", "-q"], &["time.end"]),
        (&["run", "--t-end", "inf", "-q"], &["time.end"]),
        (&["run", "--output-interval", "0", "-q"], &["output_interval"]),
        (&["bench", "--cells", "1", "--repeat", "1", "--t-end", "0.01", "--json"], &["cells"]),
        (&["bench", "--cells", "500", "--repeat", "1", "--t-end", "0", "--json"], &["time.end"]),
    ] {
        let err = fails(d.path(), args, 1);
        has(&err, parts);
    }
    assert!(files_under(d.path()).is_empty(), "bad command lines wrote {:?}", files_under(d.path()));
}

/// Issue 46, item 10: `--threads` was a global option, so `pycno example --help` (and
/// schema's, plot's) offered it where it means nothing. It stays before the command and on
/// the commands that compute.
#[test]
fn threads_is_offered_only_where_it_means_something() {
    let d = tempdir();
    for cmd in ["example", "schema"] {
        let help = text(&ok(d.path(), &[cmd, "--help"]).stdout);
        assert!(!help.contains("--threads"), "pycno {cmd} --help offers --threads:\n{help}");
        has(&fails(d.path(), &[cmd, "--threads", "2"], 2), &["--threads"]);
    }
    for cmd in ["run", "mesh", "bench", "partition"] {
        let help = text(&ok(d.path(), &[cmd, "--help"]).stdout);
        assert!(help.contains("--threads"), "pycno {cmd} --help lacks --threads:\n{help}");
    }
    assert!(text(&ok(d.path(), &["--help"]).stdout).contains("--threads"));
    for args in [&["--threads", "1", "mesh", "--cells", "200"][..], &["mesh", "--cells", "200", "--threads", "1"]] {
        ok(d.path(), args);
    }
    has(&fails(d.path(), &["mesh", "--threads", "0"], 2), &["--threads"]);
}

// ---------------------------------------------------------------------------------------
// pycno bench

#[test]
fn bench_json_reports_each_size() {
    let d = tempdir();
    let args = ["bench", "--cells", "500,1000", "--repeat", "1", "--t-end", "0.01", "--json"];
    let o = ok(d.path(), &args);
    let v: Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e})\n{}", show(&args, &o)));
    let all = v.as_array().unwrap_or_else(|| panic!("not an array: {v:#}"));
    assert_eq!(all.len(), 2, "{v:#}");
    for (s, want) in all.iter().zip([500.0, 1000.0]) {
        check_stats(s, Some(0.01), 1e-5);
        let cells = num(s, "cells");
        assert!((cells - want).abs() <= 0.1 * want, "asked {want} cells, got {cells}");
    }
    assert!(files_under(d.path()).is_empty(), "bench wrote {:?}", files_under(d.path()));
}

/// The study benchmark runs the strait-like channel with its open and elevation ends (their
/// budgets reported), conserves what the budget says, and leaves no file behind (its gauges
/// and max maps go to a temporary folder it removes).
#[test]
fn bench_study_runs_the_channel_with_its_boundaries() {
    let d = tempdir();
    let args = ["bench", "--study", "--cells", "1500", "--repeat", "1", "--t-end", "120", "--json", "--backend", "cpu"];
    let o = ok(d.path(), &args);
    let v: Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e})\n{}", show(&args, &o)));
    let s = &v.as_array().unwrap_or_else(|| panic!("not an array: {v:#}"))[0];
    // The ends move water in and out: the budget below, not the masses, must close.
    check_stats(s, Some(120.0), f64::INFINITY);
    let tags: Vec<&str> = s["boundaries"]
        .as_array()
        .unwrap_or_else(|| panic!("no boundary budget: {s:#}"))
        .iter()
        .filter_map(|b| b["tag"].as_str())
        .collect();
    for want in ["atlantic", "mediterranean"] {
        assert!(tags.contains(&want), "no budget for {want}: {tags:?}");
    }
    for layer in ["mass_balance_layer1", "mass_balance_layer2"] {
        assert!(num(s, layer).abs() < 1e-6 * num(s, "mass_layer1_start"), "{layer}: {s:#}");
    }
    assert!(files_under(d.path()).is_empty(), "bench wrote {:?}", files_under(d.path()));
    let left: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("pycno-bench-study-"))
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "bench --study left {left:?}");
}

#[test]
fn bench_table_has_a_row_per_size() {
    let d = tempdir();
    let o = ok(d.path(), &["bench", "--cells", "500,700", "--repeat", "1", "--t-end", "0.01"]);
    let out = text(&o.stdout);
    has(&out, &["cells", "cell-upd/s"]);
    assert_eq!(out.lines().count(), 4, "{out}");
}

// ---------------------------------------------------------------------------------------
// pycno mesh

fn triangles(stdout: &str) -> u64 {
    let line = stdout.lines().find(|l| l.starts_with("mesh ok:")).unwrap_or_else(|| panic!("no summary in {stdout}"));
    let words: Vec<&str> = line.split([' ', ',']).filter(|w| !w.is_empty()).collect();
    let k = words.iter().position(|w| *w == "triangles").unwrap_or_else(|| panic!("{line}"));
    words[k - 1].parse().unwrap_or_else(|_| panic!("{line}"))
}

#[test]
fn mesh_write_then_read_back() {
    let d = tempdir();
    let m = d.path().join("m.pmsh");
    let o = ok(d.path(), &["mesh", "--cells", "800", "--out", m.to_str().unwrap()]);
    let made = triangles(&text(&o.stdout));
    assert!((720..=880).contains(&made), "asked 800, got {made}");
    assert!(m.metadata().unwrap().len() > 0);
    let o = ok(d.path(), &["mesh", m.to_str().unwrap()]);
    assert_eq!(triangles(&text(&o.stdout)), made);

    // Through the text formats too.
    for ext in ["msh", "node"] {
        let p = d.path().join(format!("m2.{ext}"));
        ok(d.path(), &["mesh", m.to_str().unwrap(), "--out", p.to_str().unwrap()]);
        let o = ok(d.path(), &["mesh", p.to_str().unwrap()]);
        assert_eq!(triangles(&text(&o.stdout)), made, "{ext}");
    }
    no_temporaries(d.path());
}

#[test]
fn mesh_of_a_scenario_file() {
    let d = tempdir();
    let file = d.path().join("s.json");
    std::fs::write(&file, scenario_with(serde_json::json!({}))).unwrap();
    let o = ok(d.path(), &["mesh", file.to_str().unwrap()]);
    let n = triangles(&text(&o.stdout));
    assert!((270..=330).contains(&n), "{n}");
    let o = ok(d.path(), &["mesh", file.to_str().unwrap(), "--cells", "600"]);
    let n = triangles(&text(&o.stdout));
    assert!((540..=660).contains(&n), "{n}");
}

#[test]
fn mesh_of_missing_files_names_the_path() {
    let d = tempdir();
    for name in ["nope.pmsh", "nope.msh", "nope.node", "nope.json"] {
        let p = d.path().join("sub").join(name);
        let err = fails(d.path(), &["mesh", p.to_str().unwrap()], 1);
        has(&err, &[p.to_str().unwrap()]);
    }
    let err = fails(d.path(), &["mesh", "mesh.stl"], 1);
    has(&err, &["mesh.stl", ".stl"]);
    // A corrupt mesh is an error, not a panic.
    std::fs::write(d.path().join("junk.pmsh"), b"\x00\x01garbage").unwrap();
    let err = fails(d.path(), &["mesh", "junk.pmsh"], 1);
    has(&err, &["junk.pmsh"]);
    std::fs::write(d.path().join("junk.msh"), b"$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 2\n").unwrap();
    let err = fails(d.path(), &["mesh", "junk.msh"], 1);
    has(&err, &["junk.msh"]);
    // Writing to an unknown format fails before writing anything.
    let err = fails(d.path(), &["mesh", "--cells", "300", "--out", "m.xyz"], 1);
    has(&err, &["m.xyz"]);
    assert!(!d.path().join("m.xyz").exists());
}

// ---------------------------------------------------------------------------------------
// The example scenarios

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("meshes/scenarios").join(name)
}

const EXAMPLES: [&str; 12] = [
    "dambreak_paper.json",
    "channel_internal_dambreak.json",
    "lake_at_rest_bump.json",
    "island_exchange.json",
    "channel_gmsh_mesh.json",
    "lock_exchange.json",
    "thin_slick.json",
    "seamount_piercing.json",
    "dense_current_slope.json",
    "beach_runup.json",
    "strait_sill_from_file.json",
    "strait_exchange.json",
];

#[test]
fn example_scenarios_run() {
    for name in EXAMPLES {
        let d = tempdir();
        let file = example(name);
        assert!(file.exists(), "{} is missing", file.display());
        // A mesh file's cells are what they are: --cells only where a domain is triangulated.
        let meshed = read_json(&file).get("mesh").is_some();
        let cells: &[&str] = if meshed { &[] } else { &["--cells", "400"] };
        let mut args = vec!["run", file.to_str().unwrap(), "--t-end", "0.05", "--out", "o", "--no-vtk", "-q"];
        args.extend_from_slice(cells);
        ok(d.path(), &args);
        let stats = read_json(&d.path().join("o/stats.json"));
        check_stats(&stats, Some(0.05), 1e-5);
        assert_eq!(stats["hyperbolicity_fallbacks"], 0, "{name}: {stats:#}");
    }
}

#[test]
fn example_scenarios_are_documented() {
    let readme = std::fs::read_to_string(example("README.md")).expect("meshes/scenarios/README.md");
    for name in EXAMPLES {
        assert!(readme.contains(name), "README.md does not describe {name}");
    }
    for e in std::fs::read_dir(example("")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            let name = p.file_name().unwrap().to_str().unwrap().to_string();
            assert!(EXAMPLES.contains(&name.as_str()), "{name} is not run by example_scenarios_run");
        }
    }
}

/// A domain with a hole, written as VTK in double precision.
#[test]
fn example_island_writes_a_series() {
    let d = tempdir();
    let file = example("island_exchange.json");
    let args =
        ["run", file.to_str().unwrap(), "--cells", "400", "--t-end", "0.05", "--out", "o", "--precision", "f64", "-q"];
    ok(d.path(), &args);
    let entries = check_pvd(&d.path().join("o/island_exchange.pvd"));
    assert_eq!(entries.first().map(|e| e.0), Some(0.0));
    assert_eq!(entries.last().map(|e| e.0), Some(0.05));
    check_stats(&read_json(&d.path().join("o/stats.json")), Some(0.05), 1e-11);
}

/// Issue 46, item 10: the output's `scenario.json` kept the bathymetry file's path relative
/// (only `mesh` was made absolute), so `pycno run OUT/scenario.json` from another directory
/// failed on the shipped `strait_sill_from_file` example, against the README's promise.
#[test]
fn the_output_scenario_json_runs_from_another_directory() {
    let d = tempdir();
    ok(d.path(), &["example", "strait_sill_from_file", "ex"]);
    let first = ["run", "ex/strait_sill_from_file.json", "--out", "o1", "--max-steps", "2", "--backend", "cpu", "-q"];
    ok(d.path(), &first);
    let saved = read_json(&d.path().join("o1/scenario.json"));
    let path = saved["bathymetry"][0]["path"].as_str().unwrap().to_string();
    assert!(Path::new(&path).is_absolute(), "bathymetry path {path:?} in scenario.json");
    let elsewhere = d.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let again = d.path().join("o1/scenario.json").display().to_string();
    ok(&elsewhere, &["run", &again, "--out", "o2", "--max-steps", "2", "--backend", "cpu", "-q"]);
    assert_eq!(
        read_json(&elsewhere.join("o2/stats.json"))["state_checksum"],
        read_json(&d.path().join("o1/stats.json"))["state_checksum"]
    );
}

/// Issue 46, item 10: `pycno example` offered 7 of the 12 examples that
/// `meshes/scenarios/README.md` documents. Every shipped scenario is offered, and written.
#[test]
fn pycno_example_offers_every_shipped_scenario() {
    let d = tempdir();
    let listing = text(&ok(d.path(), &["example"]).stdout);
    for name in EXAMPLES {
        let stem = name.strip_suffix(".json").unwrap();
        assert!(listing.contains(&format!("  {stem} ")), "pycno example does not offer {stem}:\n{listing}");
        ok(d.path(), &["example", stem, "all"]);
        assert!(d.path().join("all").join(name).is_file(), "{name} not written");
    }
}

/// Issue 46, item 7: `--watchdog 1` on a large mesh ended the run during set-up (meshing
/// 400k cells takes longer than a second) as "no progress". Set-up is not watched.
#[test]
fn the_watchdog_does_not_count_set_up() {
    let d = tempdir();
    let args =
        ["run", "--cells", "400000", "--max-steps", "1", "--watchdog", "1", "--no-vtk", "--backend", "cpu", "-q"];
    ok(d.path(), &args);
    assert_eq!(read_json(&d.path().join("out/dambreak/stats.json"))["steps"], 1);
}

/// Issue 46, item 10: `-q` still printed an INFO line; `--no-vtk` without `--out` wrote no
/// `stats.json`.
#[test]
fn quiet_is_quiet_and_no_vtk_alone_writes_stats() {
    let d = tempdir();
    let o = ok(d.path(), &["run", "--cells", "300", "--t-end", "0.01", "--no-vtk", "-q", "--backend", "cpu"]);
    let err = text(&o.stderr);
    assert!(!err.contains("INFO"), "-q printed:\n{err}");
    assert!(text(&o.stdout).is_empty());
    let dirs: Vec<_> = std::fs::read_dir(d.path().join("out")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    check_stats(&read_json(&dirs[0].join("stats.json")), Some(0.01), 1e-5);
}

/// Issue 46, item 10: Ctrl-C left no stats.json and no max map. The run now stops after its
/// step, writes the state reached as the last frame, the max maps and stats.json marked
/// "interrupted", and exits 1 naming the signal.
#[test]
fn ctrl_c_writes_what_the_run_has_marked_interrupted() {
    let d = tempdir();
    let s = serde_json::json!({
        "name": "long",
        "domain": {"outer": [[-5, -5], [5, -5], [5, 5], [-5, 5]]},
        "resolution": {"cells": 3000},
        "bathymetry": {"type": "constant", "depth": 5.0},
        "initial": {"type": "circular_dam_break"},
        "time": {"end": 400.0, "output_interval": 0.05},
        "output": {"dir": "o", "max_maps": {}}
    });
    std::fs::write(d.path().join("s.json"), s.to_string()).unwrap();
    let mut cmd = common::cli::command(0, Some(d.path()), &["run", "s.json", "--backend", "cpu", "-q"], &[]);
    let child = cmd.stderr(std::process::Stdio::piped()).spawn().unwrap();
    let first = d.path().join("o/long_00001.vtu");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !first.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(first.exists(), "no frame within two minutes");
    // SAFETY: a signal to the child we started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let o = child.wait_with_output().unwrap();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("interrupted by SIGINT (Ctrl-C) after step") && !err.contains("panicked"), "{err}");
    let stats = read_json(&d.path().join("o/stats.json"));
    let why = stats["interrupted"].as_str().unwrap_or_default();
    assert!(why.starts_with("interrupted by SIGINT"), "{stats:#}");
    assert!(stats["t_end"].as_f64().unwrap() < 400.0 && stats["steps"].as_u64().unwrap() > 0, "{stats:#}");
    assert!(d.path().join("o/long_max.vtu").is_file(), "no max map");
    let frames = check_pvd(&d.path().join("o/long.pvd"));
    assert_eq!(frames.last().unwrap().0, stats["t_end"].as_f64().unwrap(), "the last frame is the state reached");
}
