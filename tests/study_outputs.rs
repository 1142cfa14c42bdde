//! Study outputs, read back through the tools a modeller uses: frames with the chosen arrays,
//! float type and compression (read by the real VTK library), gauges at the requested times
//! (interpolated in time, compared with frames written at the steps around each time),
//! maximum/minimum maps (against the maximum over every step's frame) and the NetCDF UGRID
//! file (read by netCDF4 and xarray).
//!
//! Needs `python3` with `vtk`, `numpy`, `netCDF4` and `xarray` (tools/test.sh provides them).

use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::cli::{expect_failure, expect_ok as ok, pycno_np, stats, text};

fn pycno(cwd: &Path, args: &[&str]) -> std::process::Output {
    pycno_np(0, Some(cwd), args, &[])
}

fn python(script: &str, args: &[&Path]) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python").join(script);
    let o = Command::new("python3").arg(path).args(args).output().expect("python3");
    assert!(o.status.success(), "{script} failed:\n{}", text(&o));
    String::from_utf8(o.stdout).unwrap()
}

/// One file's cell arrays, read through VTK: name -> (type, components, values).
struct Dump {
    compressed: bool,
    arrays: HashMap<String, (String, usize, Vec<f64>)>,
}

fn dump(files: &[PathBuf]) -> Vec<Dump> {
    let refs: Vec<&Path> = files.iter().map(|p| p.as_path()).collect();
    let v: Value = serde_json::from_str(&python("dump_vtk.py", &refs)).unwrap();
    files
        .iter()
        .map(|f| {
            let d = &v[f.to_str().unwrap()];
            let arrays = d["arrays"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(name, a)| {
                    let values = a["values"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
                    let ty = a["type"].as_str().unwrap().to_string();
                    (name.clone(), (ty, a["components"].as_u64().unwrap() as usize, values))
                })
                .collect();
            Dump { compressed: d["compressed"].as_bool().unwrap(), arrays }
        })
        .collect()
}

/// The frames of a `.pvd`: (time, file).
fn frames(pvd: &Path) -> Vec<(f64, PathBuf)> {
    let text = std::fs::read_to_string(pvd).unwrap();
    text.lines()
        .filter(|l| l.contains("<DataSet"))
        .map(|l| {
            let attr = |k: &str| {
                let at = l.find(&format!("{k}=\"")).unwrap() + k.len() + 2;
                l[at..].split('"').next().unwrap().to_string()
            };
            (attr("timestep").parse().unwrap(), pvd.parent().unwrap().join(attr("file")))
        })
        .collect()
}

/// A small internal dam break: the paper's set-up on [-2, 2]^2, with `extra` JSON keys.
fn scenario(dir: &Path, name: &str, extra: &str) -> PathBuf {
    let p = dir.join(format!("{name}.json"));
    let text = format!(
        r#"{{
  "name": "{name}",
  "domain": {{ "outer": [[-2, -2], [2, -2], [2, 2], [-2, 2]] }},
  "resolution": {{ "cells": 800 }},
  "bathymetry": {{ "type": "constant", "depth": 5.0 }},
  "initial": {{ "type": "circular_dam_break", "radius": 1.0 }},
  "time": {{ "end": 0.1, "output_interval": 0.05 }}{extra}
}}"#
    );
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn frames_hold_the_chosen_arrays_in_float32_compressed_and_read_back_through_vtk() {
    let d = tempfile::tempdir().unwrap();
    let chosen =
        scenario(d.path(), "chosen", r#", "output": { "fields": ["free_surface_elevation", "h1", "velocity2"] }"#);
    let full = scenario(d.path(), "full", r#", "output": { "precision": "float64", "compression": "none" }"#);
    for s in [&chosen, &full] {
        ok(pycno(d.path(), &["run", s.to_str().unwrap(), "--precision", "f32", "--backend", "cpu", "-q"]));
    }
    let a = frames(&d.path().join("out/chosen/chosen.pvd"));
    let b = frames(&d.path().join("out/full/full.pvd"));
    assert_eq!(a.len(), 3);
    assert_eq!(a.iter().map(|x| x.0).collect::<Vec<_>>(), b.iter().map(|x| x.0).collect::<Vec<_>>());
    let files: Vec<PathBuf> = a.iter().chain(&b).map(|x| x.1.clone()).collect();
    let dumps = dump(&files);
    let (da, db) = dumps.split_at(a.len());
    for (k, (x, y)) in da.iter().zip(db).enumerate() {
        // Only the arrays asked for, in the run's float type (float32), zlib-compressed.
        let mut names: Vec<&str> = x.arrays.keys().map(|s| s.as_str()).collect();
        names.sort();
        assert_eq!(names, ["free_surface_elevation", "h1", "velocity2"], "frame {k}");
        assert!(x.compressed && !y.compressed);
        for (name, (ty, nc, values)) in &x.arrays {
            assert_eq!(ty, "Float32", "{name}");
            let (ty64, nc64, full) = &y.arrays[name];
            assert_eq!((ty64.as_str(), nc64), ("Float64", nc));
            // The same values, rounded to float32 once.
            let want: Vec<f64> = full.iter().map(|&v| v as f32 as f64).collect();
            assert_eq!(values, &want, "frame {k}, {name}: float32 values of the float64 frame");
        }
        assert_eq!(y.arrays.len(), 9, "the default is every array");
    }
    // Smaller on disk: float32 and compressed, three arrays of nine.
    let size = |p: &Path| std::fs::metadata(p).unwrap().len();
    assert!(size(&a[2].1) * 4 < size(&b[2].1), "{} vs {} bytes", size(&a[2].1), size(&b[2].1));
}

/// A row of `gauges.csv`: the time as printed, the step, the values.
type Row = (String, u64, Vec<f64>);

/// `gauges.csv`: the gauge cells (from its comments), its header and its rows.
fn gauge_rows(path: &Path) -> (Vec<(String, usize)>, Vec<String>, Vec<Row>) {
    let text = std::fs::read_to_string(path).unwrap();
    let (mut cells, mut header, mut rows) = (Vec::new(), Vec::new(), Vec::new());
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# gauge ") {
            let name = rest.split(' ').next().unwrap().to_string();
            let cell = rest.split(": cell ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
            cells.push((name, cell));
        } else if line.starts_with("time,") {
            header = line.split(',').map(String::from).collect();
        } else if !line.starts_with('#') {
            let v: Vec<&str> = line.split(',').collect();
            rows.push((v[0].to_string(), v[1].parse().unwrap(), v[2..].iter().map(|x| x.parse().unwrap()).collect()));
        }
    }
    (cells, header, rows)
}

/// The values of a gauge cell in a frame, in the order of gauges.csv's columns.
fn gauge_values(d: &Dump, cell: usize) -> [f64; 8] {
    let ids = &d.arrays["cell_id"].2;
    let k = ids.iter().position(|&c| c as usize == cell).unwrap();
    let a = |n: &str, c: usize| {
        let (_, nc, v) = &d.arrays[n];
        v[k * nc + c]
    };
    [
        a("h1", 0),
        a("h2", 0),
        a("velocity1", 0),
        a("velocity1", 1),
        a("velocity2", 0),
        a("velocity2", 1),
        a("interface_elevation", 0),
        a("free_surface_elevation", 0),
    ]
}

#[test]
fn gauges_are_recorded_at_the_requested_times_interpolated_between_the_steps_around_them() {
    let d = tempfile::tempdir().unwrap();
    let gauges = r#", "gauges": { "interval": 0.013, "points": [{"name": "c", "at": [0.95, 0.1]}, {"name": "o", "at": [-1.4, 0.3]}] },
  "output": { "compression": "none" }"#;
    let s = scenario(d.path(), "g", gauges);
    let sc = s.to_str().unwrap();
    let base = ["run", sc, "--precision", "f64", "--backend", "cpu", "-q", "--output-interval", "0.1"];
    ok(pycno(d.path(), &[&base[..], &["--out", "full"]].concat()));
    let (cells, header, rows) = gauge_rows(&d.path().join("full/gauges.csv"));
    assert_eq!(header.len(), 2 + 8 * cells.len());
    // Rows at exactly k * 0.013 (printed as those float64 values), plus 0 and the end.
    let times: Vec<f64> = rows.iter().map(|r| r.0.parse().unwrap()).collect();
    let mut want: Vec<f64> = (0..8).map(|k| k as f64 * 0.013).collect();
    want.push(0.1);
    assert_eq!(times, want, "{rows:?}");
    for (t, r) in times.iter().zip(&rows) {
        assert_eq!(format!("{t:?}"), r.0, "times are printed exactly");
    }
    // Rows between steps (not the start or the end): against frames written by runs stopped
    // (--max-steps) at the step before and the step after the requested time, interpolated.
    for (t, row) in times.iter().zip(&rows).filter(|(t, _)| **t > 0.0 && **t < 0.1).step_by(3) {
        let n = row.1;
        let mut around = Vec::new();
        for m in [n - 1, n] {
            let out = format!("s{m}");
            ok(pycno(d.path(), &[&base[..], &["--out", &out, "--max-steps", &m.to_string()]].concat()));
            let f = frames(&d.path().join(&out).join("g.pvd"));
            around.push(f.last().unwrap().clone());
        }
        let (t0, t1) = (around[0].0, around[1].0);
        assert!(t0 < *t && *t <= t1, "the steps around t = {t}: {t0}, {t1}");
        let dumps = dump(&[around[0].1.clone(), around[1].1.clone()]);
        let w = (t - t0) / (t1 - t0);
        for (g, (_, cell)) in cells.iter().enumerate() {
            let (v0, v1) = (gauge_values(&dumps[0], *cell), gauge_values(&dumps[1], *cell));
            for q in 0..8 {
                let interp = v0[q] + w * (v1[q] - v0[q]);
                let got = row.2[g * 8 + q];
                assert!(
                    (got - interp).abs() <= 1e-12 * (1.0 + interp.abs()),
                    "t = {t}, {}: {got} in gauges.csv, {interp} from the frames at {t0} and {t1}",
                    header[2 + g * 8 + q]
                );
            }
        }
    }
    assert_eq!(stats(&d.path().join("full"))["t_end"], 0.1);
}

#[test]
fn gauges_of_a_float32_run_are_printed_with_float32_digits() {
    let d = tempfile::tempdir().unwrap();
    let gauges = r#", "gauges": { "interval": 0.01, "points": [{"name": "c", "at": [0.95, 0.1]}] }"#;
    let s = scenario(d.path(), "g", gauges);
    ok(pycno(d.path(), &["run", s.to_str().unwrap(), "--precision", "f32", "--backend", "cpu", "-q"]));
    let text = std::fs::read_to_string(d.path().join("out/g/gauges.csv")).unwrap();
    let (_, _, rows) = gauge_rows(&d.path().join("out/g/gauges.csv"));
    assert!(rows.len() >= 10);
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.starts_with("time")) {
        for v in line.split(',').skip(2) {
            let x: f64 = v.parse().unwrap();
            // A float32 value, printed with the fewest digits that read back to it.
            assert_eq!(format!("{:?}", x as f32), v, "{line}");
        }
    }
}

/// Per-cell values by array name and global cell id (all components).
type ByCell = HashMap<String, HashMap<u64, Vec<f64>>>;

/// Per-cell values of a dump, by global cell id: name -> id -> values (all components).
fn by_cell(d: &Dump) -> ByCell {
    let ids: Vec<u64> = d.arrays["cell_id"].2.iter().map(|&x| x as u64).collect();
    d.arrays
        .iter()
        .map(|(name, (_, nc, v))| {
            let m = ids.iter().enumerate().map(|(k, &id)| (id, v[k * nc..(k + 1) * nc].to_vec())).collect();
            (name.clone(), m)
        })
        .collect()
}

/// The max maps from frames: (max surface, max interface, min interface, max speed 1 and 2,
/// arrival time of an interface move of more than `threshold`) per cell id.
fn maps_from_frames(frames: &[(f64, Dump)], threshold: f64) -> HashMap<u64, [f64; 6]> {
    let cells: Vec<_> = frames.iter().map(|(t, d)| (*t, by_cell(d))).collect();
    let (_, first) = &cells[0];
    let mut out = HashMap::new();
    for &id in first["cell_id"].keys() {
        let speed = |v: &Vec<f64>| (v[0] * v[0] + v[1] * v[1]).sqrt();
        let mut m = [f64::NEG_INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY, -1.0];
        let i0 = first["interface_elevation"][&id][0];
        for (t, c) in &cells {
            let i = c["interface_elevation"][&id][0];
            m[0] = m[0].max(c["free_surface_elevation"][&id][0]);
            m[1] = m[1].max(i);
            m[2] = m[2].min(i);
            m[3] = m[3].max(speed(&c["velocity1"][&id]));
            m[4] = m[4].max(speed(&c["velocity2"][&id]));
            if m[5] < 0.0 && (i - i0).abs() > threshold {
                m[5] = *t;
            }
        }
        out.insert(id, m);
    }
    out
}

/// A run's frames (time, dump) from `OUT/NAME.pvd` and its max maps by cell id
/// (`OUT/NAME_max.vtu`), read in one `dump` call.
fn frames_and_max_maps(out: &Path, name: &str) -> (Vec<(f64, Dump)>, ByCell) {
    let list = frames(&out.join(format!("{name}.pvd")));
    let mut files: Vec<PathBuf> = list.iter().map(|f| f.1.clone()).collect();
    files.push(out.join(format!("{name}_max.vtu")));
    let mut dumps = dump(&files);
    let maps = by_cell(&dumps.pop().unwrap());
    (list.iter().map(|f| f.0).zip(dumps).collect(), maps)
}

const MAP_NAMES: [&str; 6] = [
    "max_free_surface_elevation",
    "max_interface_elevation",
    "min_interface_elevation",
    "max_speed1",
    "max_speed2",
    "arrival_time",
];

#[test]
fn max_maps_equal_the_maximum_over_every_steps_frame() {
    let d = tempfile::tempdir().unwrap();
    // An output time every 0.0002 s, shorter than a step: every step ends on one and is
    // written, so the frames hold every state the maps fold in.
    let extra = r#", "output": { "max_maps": { "arrival_threshold": 0.002 } }"#;
    let s = scenario(d.path(), "m", extra);
    let sc = s.to_str().unwrap();
    let args = ["run", sc, "--t-end", "0.01", "--output-interval", "0.0002", "--backend", "cpu", "-q"];
    for precision in ["f64", "f32"] {
        let out = d.path().join(precision);
        ok(pycno(d.path(), &[&args[..], &["--precision", precision, "--out", out.to_str().unwrap()]].concat()));
        let st = stats(&out);
        let (frames, maps) = frames_and_max_maps(&out, "m");
        assert_eq!(frames.len() as u64, st["steps"].as_u64().unwrap() + 1, "a frame after every step");
        let want = maps_from_frames(&frames, 0.002);
        let mut arrived = 0;
        for (id, w) in &want {
            for (k, name) in MAP_NAMES.iter().enumerate() {
                let got = maps[*name][id][0];
                let exact = precision == "f64" || k < 3;
                if exact {
                    assert_eq!(got, w[k], "{precision}: cell {id}, {name}");
                } else if k < 5 {
                    // Float32 frames round each velocity component; the map rounds the speed.
                    assert!(
                        (got - w[k]).abs() <= 1e-6 * (1.0 + w[k]),
                        "{precision}: cell {id}, {name}: {got} vs {}",
                        w[k]
                    );
                }
            }
            arrived += (w[5] > 0.0) as usize;
        }
        // The maps test something: some cells were reached, some not.
        assert!(arrived > 10 && arrived < want.len(), "{arrived} of {} cells arrived", want.len());
    }
}

/// Where a layer is absent all run (here the lower layer on a seamount that rises through the
/// interface), the max maps give it speed 0, as the frames give it velocity 0, and not the
/// 0/0 of its `q/h`: one NaN in a map makes every maximum taken over it (numpy's, xarray's)
/// a NaN, and the strait study's maps had one on its sill.
#[test]
fn max_maps_give_a_layer_absent_all_run_no_speed() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("a.json");
    let text = r#"{
  "name": "a",
  "domain": { "outer": [[-2, -2], [2, -2], [2, 2], [-2, 2]] },
  "resolution": { "cells": 800 },
  "bathymetry": { "type": "gaussian_bump", "depth": 5.0, "height": 4.8, "center": [1.2, 1.2], "width": 0.5 },
  "initial": { "type": "dam_break_x", "x0": 0.0, "interface_left": -1.0, "interface_right": -4.0, "surface": 0.0 },
  "time": { "end": 0.02, "output_interval": 0.0002 },
  "output": { "max_maps": {} }
}"#;
    std::fs::write(&p, text).unwrap();
    for precision in ["f64", "f32"] {
        let out = d.path().join(precision);
        let args = ["run", p.to_str().unwrap(), "--precision", precision, "--backend", "cpu", "-q", "--out"];
        ok(pycno(d.path(), &[&args[..], &[out.to_str().unwrap()]].concat()));
        let (frames, maps) = frames_and_max_maps(&out, "a");
        let cells: Vec<_> = frames.iter().map(|(_, d)| by_cell(d)).collect();
        let mut absent = 0;
        for (id, v) in &maps["max_speed2"] {
            let (s1, s2) = (maps["max_speed1"][id][0], v[0]);
            assert!(s1.is_finite() && s2.is_finite(), "{precision}: cell {id}: speeds {s1} and {s2}");
            if cells.iter().all(|c| c["h2"][id][0] == 0.0) {
                assert_eq!(s2, 0.0, "{precision}: cell {id} never had a lower layer");
                absent += 1;
            }
        }
        assert!(
            absent > 5 && absent < maps["max_speed2"].len() / 2,
            "{precision}: {absent} cells without a lower layer"
        );
    }
}

#[test]
fn max_maps_continue_across_a_restart_and_are_the_same_on_two_ranks() {
    let d = tempfile::tempdir().unwrap();
    let s = scenario(d.path(), "m", r#", "output": { "max_maps": {}, "compression": "none" }"#);
    let sc = s.to_str().unwrap();
    let args = ["run", sc, "--t-end", "0.2", "--precision", "f64", "--backend", "cpu", "-q"];
    ok(pycno(d.path(), &[&args[..], &["--out", "full"]].concat()));
    // Killed after step 12, resumed from the checkpoint at step 10.
    let cut = d.path().join("cut");
    let o = pycno_np(
        0,
        Some(d.path()),
        &[&args[..], &["--out", "cut", "--checkpoint-every", "5"]].concat(),
        &[("PYCNO_KILL", "0:12")],
    );
    assert!(!o.status.success(), "killed:\n{}", text(&o));
    assert!(cut.join("checkpoints/step_0000000010/maxmap_00000.bin").is_file());
    let ck = cut.join("checkpoints").display().to_string();
    ok(pycno(d.path(), &["run", "--restart", &ck, "--precision", "f64", "--backend", "cpu", "-q"]));
    assert_eq!(stats(&cut)["restarted_from"], 10);
    // Two ranks.
    let o = pycno_np(2, Some(d.path()), &[&args[..], &["--out", "two"]].concat(), &[]);
    ok(o);
    let files = [d.path().join("full/m_max.vtu"), cut.join("m_max.vtu"), d.path().join("two/m_max.pvtu")];
    let dumps = dump(&files);
    let (a, b, c) = (by_cell(&dumps[0]), by_cell(&dumps[1]), by_cell(&dumps[2]));
    for name in MAP_NAMES {
        assert_eq!(a[name], b[name], "{name}: the restarted run's map equals the uninterrupted one");
        assert_eq!(a[name], c[name], "{name}: two ranks equal one");
    }
}

#[test]
fn netcdf_ugrid_file_is_read_by_netcdf4_and_xarray_with_the_frames_values() {
    let d = tempfile::tempdir().unwrap();
    // Issue 46, item 10: the scenario gives the time axis's start date (it was fixed to
    // 2000-01-01), the max maps carry their CF cell_methods and the file its history.
    let extra = r#", "output": { "netcdf": true, "max_maps": {}, "start_date": "2024-06-01T12:00:00" }"#;
    let s = scenario(d.path(), "nc", extra);
    let sc = s.to_str().unwrap();
    for (np, precision) in [(0usize, "f32"), (0, "f64"), (2, "f64")] {
        let out = d.path().join(format!("{precision}_{np}"));
        let o = out.to_str().unwrap();
        ok(pycno_np(
            np,
            Some(d.path()),
            &["run", sc, "--precision", precision, "--backend", "cpu", "-q", "--out", o],
            &[],
        ));
        let listed = std::fs::read_to_string(out.join(".pycno-outputs")).unwrap();
        assert!(listed.lines().any(|l| l == "nc.nc"), "the output list names nc.nc:\n{listed}");
        let report = python("check_netcdf.py", &[&out, Path::new("nc"), Path::new("2024-06-01 12:00:00")]);
        eprintln!("{report}");
    }
    // The same file on one and two ranks (rank 0 gathers in global cell order), but for
    // the history (when, and the command line's --out).
    let (a, b) =
        (std::fs::read(d.path().join("f64_0/nc.nc")).unwrap(), std::fs::read(d.path().join("f64_2/nc.nc")).unwrap());
    assert!(without_history(&a) == without_history(&b), "two ranks write the same NetCDF file as one");
    // A start date that is not one is refused, naming the key.
    let bad = scenario(d.path(), "nc", r#", "output": { "netcdf": true, "start_date": "2024-02-30" }"#);
    let o = pycno_np(0, Some(d.path()), &["run", bad.to_str().unwrap(), "-q", "--out", "bad"], &[]);
    expect_failure(&o, Some(1), &["output.start_date", "2024-02", "no day 30"]);
}

/// A classic NetCDF file with the characters of its `history` attribute zeroed.
fn without_history(b: &[u8]) -> Vec<u8> {
    let mut b = b.to_vec();
    let at = b.windows(7).position(|w| w == b"history").expect("a history attribute");
    let value = at + 8; // the name, padded to 4 bytes, then its type and length
    let n = u32::from_be_bytes(b[value + 4..value + 8].try_into().unwrap()) as usize;
    b[value + 8..value + 8 + n].fill(0);
    b
}
