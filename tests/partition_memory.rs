//! Issue 22: with `--partition`, each rank holds only its part of the mesh. On a 2x10^6-cell
//! mesh over 8 CPU ranks, every rank's peak resident memory (`VmHWM`, reported per rank in
//! stats.json as `peak_memory_per_rank`) is at most a quarter of the one-rank run's, and the
//! eight ranks' state equals the one rank's bit for bit.
//!
//! Before issue 22 every rank built the whole global mesh (its topology, depth and initial
//! state) before keeping its part, so each rank peaked at about the one-rank run's memory.
//!
//! The meshes are too large for a debug build in CI's time: in a debug build the test first
//! builds the release binary (`cargo build --release --bin pycno`, a no-op when it is up to
//! date) and runs that; `PYCNO_TEST_BIN` overrides it as in the other CLI tests. Needs
//! `mpirun` (tools/setup.sh installs it).

mod common;

use common::cli::{expect_ok, pycno_np, stats, BIN};
use std::path::PathBuf;

const CELLS: &str = "2000000";
const RANKS: usize = 8;

/// The binary to measure: a release build (see the module docs).
fn release_bin() -> PathBuf {
    if let Some(b) = std::env::var_os("PYCNO_TEST_BIN") {
        return b.into();
    }
    let bin = PathBuf::from(BIN);
    if !cfg!(debug_assertions) {
        return bin;
    }
    // The cargo that built this test (set at compile time), else the one on PATH.
    let cargo =
        std::env::var("CARGO").ok().or(option_env!("CARGO").map(String::from)).unwrap_or_else(|| "cargo".into());
    let st = std::process::Command::new(cargo)
        .args(["build", "--release", "--bin", "pycno"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("cannot run cargo build --release");
    assert!(st.success(), "cargo build --release failed");
    // target/debug/pycno -> target/release/pycno
    let release = bin.parent().and_then(|d| d.parent()).expect("target directory").join("release").join("pycno");
    assert!(release.exists(), "no release binary at {}", release.display());
    release
}

fn peaks(s: &serde_json::Value) -> Vec<u64> {
    s["peak_memory_per_rank"].as_array().expect("peak_memory_per_rank").iter().map(|v| v.as_u64().unwrap()).collect()
}

#[test]
fn each_rank_peaks_at_most_a_quarter_of_the_one_rank_run() {
    if std::process::Command::new("mpirun").arg("--version").output().is_err() {
        panic!("mpirun not found: install openmpi-bin (tools/setup.sh)");
    }
    // The measured binary, through the common runner.
    std::env::set_var("PYCNO_TEST_BIN", release_bin());
    let tmp = tempfile::tempdir().unwrap();
    let dir = |n: &str| tmp.path().join(n).to_str().unwrap().to_string();
    let (part, one, eight) = (dir("part"), dir("one"), dir("eight"));
    expect_ok(pycno_np(0, None, &["partition", "--cells", CELLS, "--ranks", "8", "--no-vtk", "--out", &part], &[]));
    let run = |out: &str| {
        vec!["run", "--cells", CELLS, "--max-steps", "1", "--backend", "cpu", "--no-vtk", "-q", "--out"]
            .into_iter()
            .chain([out])
            .map(String::from)
            .collect::<Vec<_>>()
    };
    let args_one = run(&one);
    expect_ok(pycno_np(0, None, &args_one.iter().map(|s| s.as_str()).collect::<Vec<_>>(), &[]));
    let mut args_eight = run(&eight);
    args_eight.extend(["--partition".to_string(), part.clone()]);
    expect_ok(pycno_np(RANKS, None, &args_eight.iter().map(|s| s.as_str()).collect::<Vec<_>>(), &[]));

    let (s1, s8) = (stats(one.as_ref()), stats(eight.as_ref()));
    let (p1, p8) = (peaks(&s1), peaks(&s8));
    assert_eq!(p1.len(), 1);
    assert_eq!(p8.len(), RANKS, "one peak per rank");
    let single = p1[0];
    assert!(single > 0, "no VmHWM read on this system");
    eprintln!(
        "peak resident memory: 1 rank {:.0} MB; {RANKS} ranks {:?} MB",
        single as f64 / 1e6,
        p8.iter().map(|&p| (p as f64 / 1e6).round()).collect::<Vec<_>>()
    );
    for (r, &p) in p8.iter().enumerate() {
        assert!(
            4 * p <= single,
            "rank {r} peaked at {p} bytes, more than a quarter of the one-rank run's {single}: it holds more than its part"
        );
    }
    assert_eq!(s1["state_checksum"], s8["state_checksum"], "{RANKS} ranks differ from one rank");
}
