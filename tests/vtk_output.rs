//! VTK XML output read back by the real VTK library (tests/python/check_vtk.py).
//!
//! Needs `python3` with the `vtk` package (`pip install vtk`); set `PYCNO_SKIP_VTK_PYTHON=1`
//! to skip the read-back where that cannot be installed.

use pycno::output::pvd::PvdCollection;
use pycno::output::vtk::{write_pvtu, write_vtu, CellField, FieldData};
use serde_json::{json, Value};
use std::fs;
use std::path::Path;
use std::process::Command;

/// A small mesh with fields of every kind, all values distinct and not round numbers.
struct Piece {
    vertices: Vec<[f64; 2]>,
    triangles: Vec<[u32; 3]>,
    depth: Vec<f32>,
    eta: Vec<f64>,
    vel: Vec<[f32; 2]>,
    flux: Vec<[f64; 2]>,
    rank: Vec<i32>,
    gid: Vec<i64>,
}

impl Piece {
    /// A strip of `n` triangles over `n + 2` vertices, shifted by `seed`.
    fn new(n: usize, seed: f64) -> Piece {
        let vertices: Vec<[f64; 2]> = (0..n + 2)
            .map(|i| {
                let i = i as f64;
                [seed + 0.5 * i + 1.0 / 3.0, (i % 2.0) * 0.7 - seed * 1e-3 + 1e-9 * i]
            })
            .collect();
        // Alternate orientation so the strip is counter-clockwise throughout.
        let triangles: Vec<[u32; 3]> =
            (0..n as u32).map(|t| if t % 2 == 0 { [t, t + 1, t + 2] } else { [t + 1, t, t + 2] }).collect();
        let f = |t: usize, k: f64| ((t as f64 + 1.0) * k + seed).sin() * 10f64.powi(t as i32 - 2);
        Piece {
            depth: (0..n).map(|t| f(t, 1.1) as f32 + 0.1).collect(),
            eta: (0..n).map(|t| f(t, 2.3) - 1e-12 * t as f64).collect(),
            vel: (0..n).map(|t| [f(t, 0.7) as f32, -f(t, 0.9) as f32 * 3.0]).collect(),
            flux: (0..n).map(|t| [f(t, 1.7) / 7.0, -(t as f64) - std::f64::consts::PI]).collect(),
            rank: (0..n).map(|t| (t as i32 - 2) * 1_000_003 + seed as i32).collect(),
            gid: (0..n).map(|t| (1i64 << 53) + 12_345_678_901 * t as i64 - 7 - seed as i64).collect(),
            vertices,
            triangles,
        }
    }

    fn fields(&self) -> Vec<CellField<'_>> {
        vec![
            CellField { name: "depth", data: FieldData::F32(&self.depth) },
            CellField { name: "eta", data: FieldData::F64(&self.eta) },
            CellField { name: "velocity", data: FieldData::Vec2F32(&self.vel) },
            CellField { name: "flux & <q>", data: FieldData::Vec2F64(&self.flux) },
            CellField { name: "rank", data: FieldData::I32(&self.rank) },
            CellField { name: "global_id", data: FieldData::I64(&self.gid) },
        ]
    }

    /// The expected dataset of several pieces read as one grid (VTK appends them in order).
    fn expected(pieces: &[&Piece], kind: &str) -> Value {
        let mut points = vec![];
        let mut cells = vec![];
        let (mut depth, mut eta, mut vel, mut flux, mut rank, mut gid) =
            (vec![], vec![], vec![], vec![], vec![], vec![]);
        for p in pieces {
            let base = points.len() as u32;
            points.extend(p.vertices.iter().map(|&[x, y]| json!([x, y, 0.0])));
            cells.extend(p.triangles.iter().map(|t| json!(t.map(|v| v + base))));
            depth.extend(p.depth.iter().map(|&v| json!(v)));
            eta.extend(p.eta.iter().map(|&v| json!(v)));
            vel.extend(p.vel.iter().flat_map(|&[x, y]| [json!(x), json!(y), json!(0.0f32)]));
            flux.extend(p.flux.iter().flat_map(|&[x, y]| [json!(x), json!(y), json!(0.0)]));
            rank.extend(p.rank.iter().map(|&v| json!(v)));
            gid.extend(p.gid.iter().map(|&v| json!(v)));
        }
        let arr = |name: &str, ty: &str, nc: u32, values: Vec<Value>| json!({"name": name, "type": ty, "components": nc, "values": values});
        json!({
            "kind": kind,
            "points": points,
            "cells": cells,
            "arrays": [
                arr("depth", "Float32", 1, depth),
                arr("eta", "Float64", 1, eta),
                arr("velocity", "Float32", 3, vel),
                arr("flux & <q>", "Float64", 3, flux),
                arr("rank", "Int32", 1, rank),
                arr("global_id", "Int64", 1, gid),
            ],
        })
    }
}

fn write_piece(path: &Path, p: &Piece) {
    write_vtu(path, &p.vertices, &p.triangles, &p.fields()).unwrap();
}

/// Whether the read-back can run; panics (test failure) when it cannot and skipping is not asked.
fn vtk_python_available() -> bool {
    let ok = Command::new("python3").args(["-c", "import vtk"]).output().map(|o| o.status.success()).unwrap_or(false);
    if ok {
        return true;
    }
    if std::env::var("PYCNO_SKIP_VTK_PYTHON").as_deref() == Ok("1") {
        eprintln!("PYCNO_SKIP_VTK_PYTHON=1: skipping the VTK read-back (python3 -c 'import vtk' fails)");
        return false;
    }
    panic!(
        "`python3 -c \"import vtk\"` fails: the VTK read-back test needs the VTK Python package; \
         run `pip install vtk` (or set PYCNO_SKIP_VTK_PYTHON=1 to skip this check)"
    );
}

fn run_checker(dir: &Path) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/check_vtk.py");
    let out = Command::new("python3").arg(&script).arg(dir).output().expect("cannot run python3");
    let text = format!(
        "--- stdout ---\n{}\n--- stderr ---\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "check_vtk.py failed ({}):\n{text}", out.status);
    println!("{text}");
}

#[test]
fn vtk_files_read_back_with_vtk() {
    if !vtk_python_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();

    let single = Piece::new(4, 0.0);
    let p0 = Piece::new(3, 5.0);
    let p1 = Piece::new(5, 11.0);

    write_piece(&dir.join("single.vtu"), &single);
    write_piece(&dir.join("par/pieces/p0.vtu"), &p0);
    write_piece(&dir.join("par/pieces/p1.vtu"), &p1);
    let pieces = vec!["pieces/p0.vtu".to_string(), "pieces/p1.vtu".to_string()];
    write_pvtu(&dir.join("par/both.pvtu"), &pieces, &p0.fields()).unwrap();

    let times = [0.1, 1.0 / 3.0];
    let mut pvd = PvdCollection::new();
    pvd.push(times[0], "single.vtu");
    pvd.push(times[1], "par/both.pvtu");
    pvd.write(&dir.join("series.pvd")).unwrap();

    let expected = json!({
        "datasets": {
            "single.vtu": Piece::expected(&[&single], "vtu"),
            "par/both.pvtu": Piece::expected(&[&p0, &p1], "pvtu"),
        },
        "pvd": {
            "file": "series.pvd",
            "entries": [
                {"time": times[0], "file": "single.vtu"},
                {"time": times[1], "file": "par/both.pvtu"},
            ],
        },
    });
    fs::write(dir.join("expected.json"), serde_json::to_string_pretty(&expected).unwrap()).unwrap();

    run_checker(dir);
}

/// Everything in `dir`, recursively, as relative paths.
fn listing(dir: &Path) -> Vec<String> {
    let mut out = vec![];
    for e in fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if e.file_type().unwrap().is_dir() {
            out.extend(listing(&e.path()).into_iter().map(|n| format!("{name}/{n}")));
        } else {
            out.push(name);
        }
    }
    out.sort();
    out
}

#[test]
fn failed_writes_leave_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let p = Piece::new(4, 0.0);
    let short = &p.eta[..3];

    // Mismatched length: an error naming the field, and no file, temporary or final.
    let mut fields = p.fields();
    fields[1] = CellField { name: "eta", data: FieldData::F64(short) };
    let err = write_vtu(&dir.join("bad.vtu"), &p.vertices, &p.triangles, &fields).unwrap_err();
    let msg = format!("{err:#}");
    assert!(msg.contains("\"eta\""), "error does not name the field: {msg}");
    assert!(msg.contains('3') && msg.contains('4'), "error lacks the lengths: {msg}");
    assert_eq!(listing(dir), Vec::<String>::new());

    // A failed rewrite leaves the previous file exactly as it was.
    let good = dir.join("out.vtu");
    write_piece(&good, &p);
    let before = fs::read(&good).unwrap();
    let vel = &p.vel[..5.min(p.vel.len() - 1)];
    let mut fields = p.fields();
    fields[2] = CellField { name: "velocity", data: FieldData::Vec2F32(vel) };
    let err = write_vtu(&good, &p.vertices, &p.triangles, &fields).unwrap_err();
    assert!(format!("{err:#}").contains("\"velocity\""), "{err:#}");
    assert_eq!(fs::read(&good).unwrap(), before);
    assert_eq!(listing(dir), vec!["out.vtu".to_string()]);

    // Other rejected inputs: a vertex index out of range, duplicate names, a NaN time.
    let mut tris = p.triangles.clone();
    tris[2][1] = p.vertices.len() as u32;
    let err = write_vtu(&dir.join("idx.vtu"), &p.vertices, &tris, &p.fields()).unwrap_err();
    assert!(format!("{err:#}").contains("triangle 2"), "{err:#}");
    let mut dup = p.fields();
    dup[0].name = "eta";
    assert!(write_vtu(&dir.join("dup.vtu"), &p.vertices, &p.triangles, &dup).is_err());
    assert!(write_pvtu(&dir.join("dup.pvtu"), &["a.vtu".into()], &dup).is_err());
    let mut pvd = PvdCollection::new();
    pvd.push(0.0, "out.vtu");
    pvd.push(f64::NAN, "out.vtu");
    assert!(pvd.write(&dir.join("s.pvd")).is_err());
    assert_eq!(listing(dir), vec!["out.vtu".to_string()]);
}

#[test]
fn field_data_is_binary_not_ascii() {
    // Independent of VTK: the XML header of a .vtu must declare no ascii data arrays.
    let tmp = tempfile::tempdir().unwrap();
    let p = Piece::new(4, 0.0);
    let path = tmp.path().join("a.vtu");
    write_piece(&path, &p);
    let bytes = fs::read(&path).unwrap();
    let at = bytes.windows(13).position(|w| w == b"<AppendedData").expect("no <AppendedData>");
    let head = String::from_utf8(bytes[..at].to_vec()).unwrap();
    let arrays = head.matches("<DataArray").count();
    // points + connectivity + offsets + types + 6 fields
    assert_eq!(arrays, 10, "{head}");
    assert_eq!(head.matches("format=\"appended\"").count(), arrays, "{head}");
    assert!(!head.contains("format=\"ascii\""), "{head}");
    assert!(bytes.ends_with(b"</AppendedData>\n</VTKFile>\n"));
}
