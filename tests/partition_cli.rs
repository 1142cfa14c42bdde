//! `pycno partition`: writing a partition directory and checking it, one-rank partitions
//! of mesh files, and bad input.

#![allow(unused_imports)]
use pycno::app::{scenario_mesh, PreparedMesh};
use pycno::mesh::NO_CELL;
use pycno::partition::order::{order_send_block, SendOrder};
use pycno::partition::{self, files, submesh, Submesh};
use pycno::physics::Model;
use pycno::scenario::{initial, Scenario};
use pycno::solver::layout::{check_slots, BOUNDARY};
use pycno::solver::{Backend, CpuBackend, Layout, StepContext};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::process::{Command, Output};
mod common;
use common::cli::{expect_failure, expect_ok, pycno_np};

// ------------------------------------------------------------ CLI

fn pycno(cwd: &Path, args: &[&str]) -> Output {
    pycno_np(0, Some(cwd), args, &[])
}

#[track_caller]
fn cli_ok(cwd: &Path, args: &[&str]) -> String {
    String::from_utf8_lossy(&expect_ok(pycno(cwd, args)).stdout).into_owned()
}

#[track_caller]
fn cli_fails(cwd: &Path, args: &[&str], words: &[&str]) {
    expect_failure(&pycno(cwd, args), Some(1), words);
}

#[test]
fn cli_writes_a_partition_directory_and_checks_it() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    let out = cli_ok(cwd, &["partition", "--cells", "2000", "--ranks", "6", "--out", "part"]);
    assert!(out.contains("fallback destinations"), "{out}");
    let m: Value = serde_json::from_str(&std::fs::read_to_string(cwd.join("part/manifest.json")).unwrap()).unwrap();
    for key in [
        "ranks",
        "cells",
        "edge_cut",
        "imbalance",
        "communication_cells",
        "fallback_destinations",
        "seconds",
        "format_version",
        "mesh_fingerprint",
        "bytes_per_step",
        "per_rank",
    ] {
        assert!(m.get(key).is_some(), "manifest lacks {key}: {m}");
    }
    assert_eq!(m["ranks"], 6);
    assert!(m["edge_cut"].as_u64().unwrap() > 0 && m["imbalance"].as_f64().unwrap() >= 1.0);
    let per_rank = m["per_rank"].as_array().unwrap();
    assert_eq!(per_rank.len(), 6);
    for (r, pr) in per_rank.iter().enumerate() {
        for key in ["cells", "neighbours", "bytes_sent", "bytes_received", "fallback_destinations"] {
            assert!(pr.get(key).is_some(), "per_rank lacks {key}");
        }
        let file = files::rank_file(&cwd.join("part"), r as u32);
        assert_eq!(pr["file_bytes"].as_u64().unwrap(), std::fs::metadata(&file).unwrap().len());
    }
    assert!(cwd.join("part/partition.vtu").exists());
    let cells: u64 = per_rank.iter().map(|r| r["cells"].as_u64().unwrap()).sum();
    assert_eq!(cells, m["cells"].as_u64().unwrap());
    cli_ok(cwd, &["partition", "--cells", "2000", "--check", "part"]);

    // Into fewer ranks in the same directory: the old rank files go.
    cli_ok(cwd, &["partition", "--cells", "2000", "--ranks", "2", "--out", "part"]);
    assert!(!files::rank_file(&cwd.join("part"), 2).exists());
    cli_ok(cwd, &["partition", "--cells", "2000", "--check", "part", "--ranks", "2"]);

    // Checking against another mesh, or with a damaged file.
    cli_fails(cwd, &["partition", "--cells", "1000", "--check", "part"], &["another mesh"]);
    let f = files::rank_file(&cwd.join("part"), 1);
    let mut b = std::fs::read(&f).unwrap();
    b.truncate(b.len() - 3);
    std::fs::write(&f, &b).unwrap();
    cli_fails(cwd, &["partition", "--cells", "2000", "--check", "part"], &["rank_00001.bin", "checksum"]);
    cli_fails(cwd, &["partition", "--cells", "2000", "--check", "nowhere"], &["manifest.json"]);
}

#[test]
fn cli_partitions_a_mesh_file_into_one_rank() {
    let tmp = tempfile::tempdir().unwrap();
    let mesh = Path::new(env!("CARGO_MANIFEST_DIR")).join("meshes/channel_v41.msh");
    cli_ok(tmp.path(), &["partition", mesh.to_str().unwrap(), "--ranks", "1", "--out", "one", "--no-vtk"]);
    assert!(!tmp.path().join("one/partition.vtu").exists());
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(tmp.path().join("one/manifest.json")).unwrap()).unwrap();
    assert_eq!(
        (m["ranks"].as_u64(), m["edge_cut"].as_u64(), m["fallback_destinations"].as_u64()),
        (Some(1), Some(0), Some(0))
    );
}

#[test]
fn cli_rejects_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    cli_fails(cwd, &["partition", "--cells", "500", "--ranks", "0", "--out", "p"], &["--ranks", "at least 1"]);
    cli_fails(cwd, &["partition", "--cells", "500", "--ranks", "100000", "--out", "p"], &["--ranks 100000", "cells"]);
    cli_fails(cwd, &["partition", "missing.msh", "--ranks", "2", "--out", "p"], &["missing.msh"]);
    let mesh = Path::new(env!("CARGO_MANIFEST_DIR")).join("meshes/channel_v41.msh");
    cli_fails(
        cwd,
        &["partition", mesh.to_str().unwrap(), "--cells", "100", "--ranks", "2", "--out", "p"],
        &["--cells"],
    );
    assert!(!cwd.join("p").exists(), "a failed command wrote a partition");
    // Usage errors are clap's (exit 2).
    let o = pycno(cwd, &["partition", "--cells", "500", "--ranks", "2"]);
    assert_eq!(o.status.code(), Some(2));
}

/// Issue 46, item 5: `pycno partition s2.json --check part` passed a one-ring partition for a
/// second-order scenario, which `run` then refused. The check now asks what the run asks.
#[test]
fn check_refuses_a_one_ring_partition_for_a_second_order_scenario() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    let s2 = serde_json::json!({
        "name": "order2",
        "domain": {"outer": [[-5, -5], [5, -5], [5, 5], [-5, 5]]},
        "resolution": {"cells": 800},
        "bathymetry": {"type": "constant", "depth": 5.0},
        "initial": {"type": "circular_dam_break"},
        "physics": {"g": 9.81, "r": 0.998, "gamma": 0.9, "order": 2},
        "time": {"end": 0.01}
    });
    std::fs::write(cwd.join("s2.json"), s2.to_string()).unwrap();
    cli_ok(cwd, &["partition", "s2.json", "--ranks", "2", "--order", "1", "--no-vtk", "--out", "one"]);
    cli_fails(cwd, &["partition", "s2.json", "--check", "one"], &["one ring", "physics.order = 2", "rank_00000.bin"]);
    // A two-ring one passes.
    cli_ok(cwd, &["partition", "s2.json", "--ranks", "2", "--no-vtk", "--out", "two"]);
    cli_ok(cwd, &["partition", "s2.json", "--check", "two"]);
}

/// Issue 46, item 8: `partition --order -1` got clap's tip to write `-- -1`.
#[test]
fn a_negative_order_is_refused_with_what_is_expected() {
    let tmp = tempfile::tempdir().unwrap();
    for bad in ["-1", "0", "3"] {
        let o = pycno(tmp.path(), &["partition", "--cells", "500", "--ranks", "2", "--out", "p", "--order", bad]);
        let err = expect_failure(&o, Some(2), &["--order", "expected 1 or 2", bad]);
        assert!(!err.contains("-- -1"), "{err}");
    }
}
