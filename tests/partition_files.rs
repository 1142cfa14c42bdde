//! Partition files (`pycno::partition::files`): written and read back equal, and every
//! corruption rejected with a clear message.

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

/// The paper benchmark's mesh at about `cells` triangles.
fn paper(cells: u64) -> PreparedMesh {
    scenario_mesh(&Scenario::paper_benchmark(cells)).expect("paper mesh")
}

// ------------------------------------------------------------ files

fn written(ranks: usize) -> (tempfile::TempDir, PreparedMesh, Vec<Submesh>, u64) {
    let pm = paper(2000);
    let fp = files::mesh_fingerprint(&pm.mesh);
    let dir = tempfile::tempdir().unwrap();
    let part = partition::partition(&pm.topo, ranks, fp).unwrap();
    for s in &part.submeshes {
        files::write_rank(dir.path(), s).unwrap();
    }
    (dir, pm, part.submeshes, fp)
}

#[track_caller]
fn rejected(dir: &Path, rank: u32, fp: u64, ranks: u32, words: &[&str]) {
    let e = files::read_rank(dir, rank, fp, ranks).expect_err("should be rejected");
    let msg = format!("{e:#}");
    assert!(msg.contains(&format!("rank_{rank:05}.bin")), "the error should name the file: {msg}");
    for w in words {
        assert!(msg.contains(w), "expected {w:?} in: {msg}");
    }
}

#[test]
fn rank_files_read_back_equal() {
    let (dir, _, subs, fp) = written(5);
    for s in &subs {
        assert_eq!(&files::read_rank(dir.path(), s.rank, fp, 5).unwrap(), s);
    }
}

#[test]
fn corrupted_rank_files_are_rejected() {
    let (dir, pm, _, fp) = written(4);
    let path = files::rank_file(dir.path(), 2);
    let good = std::fs::read(&path).unwrap();

    // Any single flipped byte: header, data or the checksum itself.
    for at in [13, 30, 70, good.len() / 2, good.len() - 5, good.len() - 1] {
        let mut b = good.clone();
        b[at] ^= 0x40;
        std::fs::write(&path, &b).unwrap();
        rejected(dir.path(), 2, fp, 4, &["checksum"]);
    }
    // Truncated anywhere.
    for len in [0, 7, 40, good.len() / 2, good.len() - 1] {
        std::fs::write(&path, &good[..len]).unwrap();
        let e = files::read_rank(dir.path(), 2, fp, 4).expect_err("truncated");
        let msg = format!("{e:#}");
        assert!(msg.contains("rank_00002.bin") && (msg.contains("truncated") || msg.contains("checksum")), "{msg}");
    }
    // Another format version, even with a valid checksum.
    let mut b = good.clone();
    b[8..12].copy_from_slice(&(files::FORMAT_VERSION + 1).to_le_bytes());
    let n = b.len();
    let crc = crc32fast::hash(&b[..n - 4]);
    b[n - 4..].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(&path, &b).unwrap();
    rejected(dir.path(), 2, fp, 4, &["version"]);
    // Not a partition file.
    std::fs::write(&path, b"{\"hello\": 1}\n").unwrap();
    rejected(dir.path(), 2, fp, 4, &["not a pycno partition file"]);

    std::fs::write(&path, &good).unwrap();
    files::read_rank(dir.path(), 2, fp, 4).unwrap();
    // Another mesh, another rank count, a missing rank.
    let other = files::mesh_fingerprint(&paper(1000).mesh);
    assert_ne!(other, fp);
    rejected(dir.path(), 2, other, 4, &["another mesh"]);
    rejected(dir.path(), 2, fp, 8, &["4 ranks"]);
    rejected(dir.path(), 7, fp, 8, &["cannot read"]);
    // A file of the right mesh but for the other rank number.
    std::fs::copy(files::rank_file(dir.path(), 1), &path).unwrap();
    rejected(dir.path(), 2, fp, 4, &["holds rank 1"]);
    // A submesh that is not this mesh's is caught when the layout is built.
    let mut s = files::read_rank(dir.path(), 1, fp, 4).unwrap();
    s.global_edges += 1;
    assert!(s.local_topology(&pm.topo).is_err());
}
