//! The hardening campaign, kept: one case per class of bad input that once hung, aborted,
//! wrote outside the output directory, lost data or was silently accepted, over every input
//! family (scenario files, scenario names and paths, mesh files in every format, checkpoints,
//! the command line).
//!
//! Every case runs the real binary in a fresh directory with a watchdog (a hang fails the
//! test after a minute instead of hanging CI) and checks the exit status, that the message
//! names the file, field or line, that nothing was written outside the output directory and
//! that no temporary file of the atomic writer was left behind.

mod common;

use common::{files_under, patch_top_level, pycno_within};
use pycno::mesh::io::write_native;
use pycno::mesh::{BoundarySegment, Mesh};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

/// A working directory for one case; the output directory is `out` inside it.
struct Case {
    tmp: tempfile::TempDir,
}

impl Case {
    fn new() -> Case {
        let c = Case { tmp: tempfile::tempdir().expect("tempdir") };
        std::fs::create_dir_all(c.work()).unwrap();
        c
    }

    /// The case's root; commands run in `root/work`, so `..` from there is still inside.
    fn root(&self) -> &Path {
        self.tmp.path()
    }

    fn work(&self) -> PathBuf {
        self.root().join("work")
    }

    fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let p = self.work().join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }

    fn run(&self, args: &[&str]) -> Output {
        pycno_within(&self.work(), args, &[], LIMIT)
    }

    /// Run, and require a clean failure with `code` whose message has every part; then
    /// that nothing but `out/` appeared and no temporary is left. Returns stderr.
    #[track_caller]
    fn fails(&self, args: &[&str], code: i32, parts: &[&str]) -> String {
        let before = tree(self.root());
        let o = self.run(args);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        let shown = format!("pycno {}\nexit {:?}\nstderr:\n{err}", args.join(" "), o.status.code());
        assert_eq!(o.status.code(), Some(code), "{shown}");
        assert!(!err.contains("panicked"), "{shown}");
        for p in parts {
            assert!(err.contains(p), "message lacks {p:?}\n{shown}");
        }
        self.only_output_written(&before);
        err
    }

    /// Run, and require success (then the same checks on what was written).
    #[track_caller]
    fn succeeds(&self, args: &[&str]) -> Output {
        let before = tree(self.root());
        let o = self.run(args);
        assert!(o.status.success(), "pycno {} failed:\n{}", args.join(" "), String::from_utf8_lossy(&o.stderr));
        self.only_output_written(&before);
        o
    }

    #[track_caller]
    fn only_output_written(&self, before: &BTreeSet<PathBuf>) {
        let after = tree(self.root());
        let out = Path::new("work/out");
        for p in after.difference(before) {
            assert!(p.starts_with(out), "{} was written outside the output directory", p.display());
        }
        for p in &after {
            let name = p.file_name().unwrap().to_string_lossy();
            let temp = name.ends_with(".tmp") || (name.starts_with('.') && name.contains(".tmp"));
            assert!(!temp, "temporary file left behind: {}", p.display());
        }
    }
}

/// Every path under `root`, relative to it.
fn tree(root: &Path) -> BTreeSet<PathBuf> {
    files_under(root).into_iter().collect()
}

/// A small valid scenario writing to `out`, with `patch` merged in at the top level (a null
/// value removes that key).
fn scenario(patch: Value) -> String {
    let mut s = json!({
        "name": "probe",
        "domain": { "outer": [[0, 0], [2, 0], [2, 1], [0, 1]] },
        "resolution": { "cells": 200 },
        "initial": { "type": "dam_break_x", "x0": 1, "interface_left": -0.6, "interface_right": -1.4 },
        "bathymetry": { "type": "constant", "depth": 2 },
        "time": { "end": 0.02 },
        "output": { "dir": "out" }
    });
    patch_top_level(&mut s, &patch);
    serde_json::to_string_pretty(&s).unwrap()
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: plain libc call with a valid, NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

// ---------------------------------------------------------------------------------------
// Hangs

#[test]
fn fifos_are_refused_not_blocked_on() {
    let c = Case::new();
    let s = c.work().join("pipe.json");
    mkfifo(&s);
    c.fails(&["run", "pipe.json", "-q"], 1, &["pipe.json", "not a regular file", "FIFO"]);
    for name in ["pipe.msh", "pipe.pmsh", "pipe.node"] {
        mkfifo(&c.work().join(name));
        c.fails(&["mesh", name], 1, &[name, "not a regular file"]);
    }
    // A FIFO as a scenario's mesh file.
    c.write("m.json", scenario(json!({ "domain": null, "resolution": null, "mesh": "pipe.msh" })));
    c.fails(&["run", "m.json", "-q"], 1, &["pipe.msh", "not a regular file"]);
}

#[test]
fn absurd_intervals_are_refused_with_the_cap() {
    let c = Case::new();
    c.write(
        "g.json",
        scenario(json!({ "gauges": { "interval": 1e-12, "points": [{ "name": "a", "at": [1, 0.5] }] } })),
    );
    c.fails(&["run", "g.json", "-q"], 1, &["g.json", "gauges.interval", "at most 1000000"]);
    c.write("o.json", scenario(json!({ "time": { "end": 0.05, "output_interval": 1e-7 } })));
    c.fails(
        &["run", "o.json", "-q"],
        1,
        &["time.output_interval", "500001 frames", "at most 10000", "output.max_frames"],
    );
    let times: Vec<f64> = (1..=100_000).map(|k| k as f64 * 1e-7).collect();
    c.write("t.json", scenario(json!({ "time": { "end": 0.05, "output_times": times } })));
    c.fails(&["run", "t.json", "-q"], 1, &["time.output_times", "100000 output times", "at most 10000"]);
    c.fails(&["run", "-q", "--output-interval", "1e-9"], 1, &["time.output_interval", "output.max_frames"]);
}

#[test]
fn a_large_domain_polygon_is_checked_in_bounded_time() {
    // 10^5 vertices on a circle, the last two swapped so that it crosses itself: the old
    // quadratic check (run twice) took minutes here, past the watchdog.
    let c = Case::new();
    let n = 100_000;
    let mut pts: Vec<[f64; 2]> = (0..n)
        .map(|k| {
            let a = k as f64 / n as f64 * std::f64::consts::TAU;
            [a.cos(), a.sin()]
        })
        .collect();
    pts.swap(n - 2, n - 1);
    c.write("big.json", scenario(json!({ "domain": { "outer": pts } })));
    c.fails(&["run", "big.json", "-q"], 1, &["big.json", "domain.outer", "intersects itself: segment 99997"]);
}

// ---------------------------------------------------------------------------------------
// Aborts

#[test]
fn meshes_too_large_for_memory_or_ids_are_refused() {
    let c = Case::new();
    c.fails(&["mesh", "--cells", "4000000000"], 1, &["resolution.cells", "needs about", "available"]);
    c.fails(&["run", "-q", "--cells", "1000000000000"], 1, &["resolution.cells", "more than pycno can number"]);
    c.write("a.json", scenario(json!({ "resolution": { "max_area": 1e-300 } })));
    c.fails(&["mesh", "a.json"], 1, &["a.json", "resolution.max_area", "more than pycno can number"]);
    c.write("b.json", scenario(json!({ "resolution": { "max_area": 2e-9 } })));
    c.fails(&["mesh", "b.json"], 1, &["resolution.max_area", "needs about", "available"]);
}

// ---------------------------------------------------------------------------------------
// Writes outside the output directory

#[test]
fn scenario_names_that_are_paths_are_refused() {
    let c = Case::new();
    let long = "n".repeat(101);
    for name in ["../x", "/abs/x", "", ".", "..", "a\nb", ".hidden", "a/b", long.as_str()] {
        c.write("s.json", scenario(json!({ "name": name })));
        c.fails(&["run", "s.json", "-q"], 1, &["s.json", "name: expected 1 to 100 ASCII letters"]);
    }
    c.write("s.json", scenario(json!({ "name": "ok-name_1.v2" })));
    c.succeeds(&["run", "s.json", "-q", "--max-steps", "1"]);
    assert!(c.work().join("out/ok-name_1.v2.pvd").is_file());
}

#[test]
fn a_checkpoint_cannot_smuggle_in_a_path_or_edited_physics() {
    let c = Case::new();
    c.write("s.json", scenario(json!({ "time": { "end": 0.02 } })));
    c.succeeds(&["run", "s.json", "-q", "--checkpoint-every", "2", "--max-steps", "4", "--backend", "cpu"]);
    let ck = c.work().join("out/checkpoints/step_0000000004");
    let meta = ck.join("meta.json");
    let good = std::fs::read_to_string(&meta).unwrap();
    let mut m: Value = serde_json::from_str(&good).unwrap();
    // Edited without the checksum: refused as modified.
    m["scenario"]["physics"]["r"] = json!(0.5);
    std::fs::write(&meta, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    let ckp = "out/checkpoints/step_0000000004";
    c.fails(&["run", "--restart", ckp, "-q"], 1, &["meta.json", "modified after it was written (checksum mismatch)"]);
    // Sealed again (a tool that knows the checksum), with a name that is a path: the
    // scenario validation still refuses it.
    m["scenario"]["physics"]["r"] = json!(0.998);
    m["scenario"]["name"] = json!("../../escaped");
    m["checksum"] = json!(pycno::output::checkpoint::meta_checksum(&m));
    std::fs::write(&meta, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    c.fails(&["run", "--restart", ckp, "-q"], 1, &["name: expected", "escaped"]);
    std::fs::write(&meta, good).unwrap();
    c.succeeds(&["run", "--restart", ckp, "-q", "--backend", "cpu"]);
}

// ---------------------------------------------------------------------------------------
// Data loss

#[test]
fn pruning_leaves_directories_pycno_did_not_make() {
    let c = Case::new();
    let foreign = c.work().join("out/checkpoints/step_0000000001");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("notes.txt"), "mine").unwrap();
    c.write("s.json", scenario(json!({})));
    c.succeeds(&["run", "s.json", "-q", "--backend", "cpu", "--checkpoint-every", "1", "--checkpoint-keep", "1"]);
    assert_eq!(std::fs::read_to_string(foreign.join("notes.txt")).unwrap(), "mine");
    let kept: Vec<_> = std::fs::read_dir(c.work().join("out/checkpoints"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("step_"))
        .collect();
    assert_eq!(kept.len(), 2, "the foreign directory and the newest checkpoint: {kept:?}");
}

// ---------------------------------------------------------------------------------------
// Silently accepted scenario content

#[test]
fn trailing_content_after_the_scenario_is_refused() {
    let c = Case::new();
    let good = scenario(json!({}));
    for (tail, what) in [("\n{\"name\": \"second\"}\n", "second object"), ("\ngarbage", "garbage"), ("\0\0", "NULs")] {
        c.write("s.json", format!("{good}{tail}"));
        let e = c.fails(&["run", "s.json", "-q"], 1, &["s.json", "unexpected content after the scenario's JSON"]);
        assert!(e.contains("line ") && e.contains("column "), "{what}: {e}");
    }
}

#[test]
fn resolution_and_cells_with_a_mesh_file_are_refused_everywhere() {
    let c = Case::new();
    let mesh = Path::new(env!("CARGO_MANIFEST_DIR")).join("meshes/channel_v41.msh");
    let m = mesh.display().to_string();
    c.write("m.json", scenario(json!({ "domain": null, "mesh": m })));
    c.fails(&["mesh", "m.json"], 1, &["m.json", "resolution: applies to a domain"]);
    let want = ["--cells applies to scenarios that triangulate a domain, not to the mesh file", "channel_v41.msh"];
    c.fails(&["mesh", &m, "--cells", "500"], 1, &want);
    c.fails(&["partition", &m, "--cells", "500", "--ranks", "2", "--out", "out/p"], 1, &want);
}

#[test]
fn thin_and_far_domains_are_accepted() {
    for outer in [
        json!([[0, 0], [1e6, 0], [1e6, 1e-6], [0, 1e-6]]),
        json!([[1e15, 1e15], [1e15 + 1.0, 1e15], [1e15 + 1.0, 1e15 + 1.0], [1e15, 1e15 + 1.0]]),
    ] {
        let s = scenario(json!({ "domain": { "outer": outer } }));
        pycno::scenario::Scenario::from_json(&s).unwrap_or_else(|e| panic!("{outer}: {e:#}"));
    }
}

// ---------------------------------------------------------------------------------------
// Mesh files, every format

/// Triangle files `name.node`/`.ele` of `vertices` and (0-based) `triangles`.
fn triangle_files(c: &Case, name: &str, vertices: &[[f64; 2]], triangles: &[[u32; 3]]) -> String {
    let mut node = format!("{} 2 0 0\n", vertices.len());
    for (i, p) in vertices.iter().enumerate() {
        node += &format!("{i} {} {}\n", p[0], p[1]);
    }
    let mut ele = format!("{} 3 0\n", triangles.len());
    for (i, t) in triangles.iter().enumerate() {
        ele += &format!("{i} {} {} {}\n", t[0], t[1], t[2]);
    }
    c.write(&format!("{name}.node"), node);
    c.write(&format!("{name}.ele"), ele);
    format!("{name}.node")
}

#[test]
fn folded_overlapping_and_non_conforming_meshes_are_refused() {
    let c = Case::new();
    // A fan of twelve triangles turning 720 degrees round vertex 0.
    let mut v = vec![[0.0, 0.0]];
    for k in 0..12 {
        let (a, r) = (k as f64 * std::f64::consts::FRAC_PI_3, if k < 6 { 1.0 } else { 2.0 });
        v.push([r * a.cos(), r * a.sin()]);
    }
    let t: Vec<[u32; 3]> = (0..12).map(|k| [0, k + 1, (k + 1) % 12 + 1]).collect();
    let f = triangle_files(&c, "fold", &v, &t);
    c.fails(&["mesh", &f], 1, &["fold.node", "vertex 0", "720.0 degrees", "folds over itself"]);
    // A hanging vertex: an invisible internal wall.
    let v = [[0.0, 0.0], [2.0, 0.0], [1.0, 1.0], [1.0, 0.0], [1.0, -1.0]];
    let f = triangle_files(&c, "hang", &v, &[[0, 1, 2], [0, 4, 3], [3, 4, 1]]);
    c.fails(&["mesh", &f], 1, &["hang.node", "vertex 3", "lies on edge (0, 1) of triangle 0", "non-conforming"]);
    // Overlapping triangles, in Gmsh 4.1.
    let msh = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 7 1 7\n2 1 0 7\n1\n2\n3\n4\n5\n6\n7\n\
               0 0 0\n1 0 0\n1 1 0\n0 1 0\n0.5 0.25 0\n3 0.2 0\n3 0.4 0\n$EndNodes\n\
               $Elements\n1 3 1 3\n2 1 2 3\n1 1 2 3\n2 1 3 4\n3 5 6 7\n$EndElements\n";
    c.write("over.msh", msh);
    c.fails(&["mesh", "over.msh"], 1, &["over.msh", "vertex 4", "lies inside triangle 0", "overlap"]);
}

#[test]
fn gmsh_elements_that_are_not_triangles_are_refused_with_the_line() {
    let c = Case::new();
    let v22 = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n4\n1 0 0 0\n2 1 0 0\n3 1 1 0\n4 0 1 0\n$EndNodes\n\
               $Elements\n2\n1 2 2 1 1 1 2 3\n2 3 2 1 1 1 2 3 4\n$EndElements\n";
    c.write("quad.msh", v22);
    c.fails(&["mesh", "quad.msh"], 1, &["quad.msh:14:", "element type 3 (4-node quadrangle)"]);
    let v41 = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 4 1 4\n3 1 0 4\n1\n2\n3\n4\n\
               0 0 0\n1 0 0\n0 1 0\n0 0 1\n$EndNodes\n\
               $Elements\n2 2 1 2\n2 1 2 1\n1 1 2 3\n3 1 4 1\n2 1 2 3 4\n$EndElements\n";
    c.write("tet.msh", v41);
    c.fails(&["mesh", "tet.msh"], 1, &["tet.msh:20:", "element type 4 (a tetrahedron) is a 3D element"]);
}

#[test]
fn a_pmsh_boundary_segment_off_the_mesh_edges_is_refused() {
    let c = Case::new();
    let m = Mesh {
        vertices: vec![[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]],
        triangles: vec![[0, 1, 2], [0, 2, 3]],
        boundary: vec![BoundarySegment { v: [1, 3], tag: 4 }],
    };
    write_native(&c.work().join("seg.pmsh"), &m).unwrap();
    c.fails(&["mesh", "seg.pmsh"], 1, &["seg.pmsh", "boundary segment 0 joins vertices 1 and 3, which share no edge"]);
}

// ---------------------------------------------------------------------------------------
// The command line

#[test]
fn command_line_numbers_out_of_range_are_clear() {
    let c = Case::new();
    c.fails(&["--threads", "100000", "mesh"], 2, &["--threads", "expected 1 to", "found 100000"]);
    c.fails(&["bench", "--repeat", "0"], 2, &["--repeat", "expected 1 to 1000"]);
    for args in
        [&["run", "--cells", "-1"][..], &["run", "--max-steps", "-1"], &["partition", "--ranks", "-2", "--out", "p"]]
    {
        let e = c.fails(args, 2, &["negative"]);
        assert!(!e.contains("unexpected argument"), "{e}");
    }
}

/// Issue 46, item 6: finite but absurd values passed and then blew the run up without
/// naming the field: `manning` 1e300, `interlayer_friction`, Coriolis `f0`/`beta`,
/// `wind_stress` at 1e300, a boundary elevation of 1e6 m, a discharge of 1e30. Each is
/// refused before any meshing, naming the field. Issue 45: an unknown boundary type is
/// refused with the list of the known ones.
#[test]
fn absurd_finite_values_are_refused_naming_the_field() {
    let c = Case::new();
    // A domain whose east side is the tag "east", with these boundaries.
    let tagged = |boundaries: Value| {
        json!({
            "domain": { "outer": [[0, 0], [2, 0], [2, 1], [0, 1]], "outer_tags": ["", "east", "", ""] },
            "boundaries": boundaries
        })
    };
    let physics = |extra: Value| {
        let mut p = json!({ "g": 9.81, "r": 0.98, "gamma": 0.9 });
        p.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        json!({ "physics": p })
    };
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (physics(json!({ "manning": 1e300 })), vec!["physics.manning", "1e300"]),
        (physics(json!({ "interlayer_friction": 1e300 })), vec!["physics.interlayer_friction"]),
        (physics(json!({ "coriolis": { "f0": 1e300 } })), vec!["physics.coriolis.f0"]),
        (physics(json!({ "coriolis": { "f0": 1e-4, "beta": 1e300 } })), vec!["physics.coriolis.beta"]),
        (physics(json!({ "wind_stress": [1e300, 0] })), vec!["physics.wind_stress"]),
        (
            tagged(json!({ "east": { "type": "elevation", "surface": 1e6 } })),
            vec!["boundaries.east.surface", "an elevation in m", "1000000"],
        ),
        (
            tagged(
                json!({ "east": { "type": "elevation", "surface": { "tides": [{ "amplitude": 2e4, "period": 3600 }] } } }),
            ),
            vec!["boundaries.east.surface", "an elevation in m"],
        ),
        (
            tagged(json!({ "east": { "type": "discharge", "layer2": 1e30 } })),
            vec!["boundaries.east.layer2", "a discharge in m³/s", "1e30"],
        ),
        (
            tagged(json!({ "east": { "type": "inflow" } })),
            vec!["boundaries.east.type", "\"inflow\"", "wall, open, elevation, discharge"],
        ),
    ];
    for (patch, words) in cases {
        c.write("s.json", scenario(patch.clone()));
        c.fails(&["run", "s.json", "--backend", "cpu"], 1, &words);
    }
    // A time series beyond the bound, read from its file.
    c.write("q.csv", "time,q\n0,1\n10,1e30\n");
    c.write("f.json", scenario(tagged(json!({ "east": { "type": "discharge", "layer1": { "file": "q.csv" } } }))));
    c.fails(&["run", "f.json", "--backend", "cpu"], 1, &["boundaries.east.layer1.file", "1e30"]);
}
