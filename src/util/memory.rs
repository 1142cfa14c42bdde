//! How much memory a mesh and a run will take, checked against what the machine has before
//! anything large is allocated: a request for 10^12 cells must end in a message that says
//! what it needs, not in `memory allocation of ... bytes failed` (SIGABRT) minutes later.
//!
//! The bytes per cell come from the data structures and were calibrated by the peak resident
//! set (`/usr/bin/time -v`, release build, 2-core VM) of `pycno mesh --cells 1000000` and
//! `pycno run --cells 1000000 --max-steps 2 --no-vtk --backend cpu` (1,003,474 cells):
//!
//! - meshing peaked at 212 MB (211 B/cell): spade's triangulation during refinement (about
//!   130 B/cell: half-edges, faces and vertices of the DCEL), the pilot mesh, then the
//!   mesh's own copy (vertices 16 B x 0.5 per cell, triangles 12 B).
//! - a run peaked at 499 MB in f32 (497 B/cell) and 667 MB in f64 (665 B/cell): the mesh
//!   (20 B/cell), its topology (cells 36 B, 1.5 edges per cell x 46 B, about 105 B, plus
//!   about 84 B of sort buffers while it is built), the initial state and depth (56 B), and
//!   the backend's layout: two state buffers of two float4 per cell, six float4 accumulator
//!   slots per cell, and per edge an int4 and a float2 normal (about 200 B in f32, twice the
//!   float part in f64).
//!
//! The constants below round those up by about 5% and add a fixed allowance for the program
//! itself; with several ranks on a node, each rank holds the whole mesh and topology
//! ([`RUN_SHARED_BYTES_PER_CELL`]) but only its part of the layout.

use anyhow::{bail, Result};

/// Peak bytes per cell of generating a mesh (spade refinement included).
pub const MESH_BYTES_PER_CELL: f64 = 215.0;
/// Bytes per cell that every rank of a run holds for the whole mesh: mesh, topology, initial
/// state (and the meshing peak before it).
pub const RUN_SHARED_BYTES_PER_CELL: f64 = 310.0;
/// Bytes per cell of the backend's layout, split over the ranks: f32, f64.
pub const RUN_LAYOUT_BYTES_PER_CELL: [f64; 2] = [215.0, 390.0];
/// The program itself, its thread stacks and allocator slack.
pub const BASE_BYTES: f64 = 16e6;

/// This process's peak resident memory so far (`VmHWM` of `/proc/self/status`), in bytes;
/// `None` where it cannot be read (not Linux).
pub fn peak_resident() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

/// CPU seconds (user and system, all threads) this process has used so far, from
/// `/proc/self/stat` (in USER_HZ ticks, 100 per second on Linux); `None` where it cannot be
/// read. On oversubscribed cores it measures a rank's work where wall-clock seconds measure
/// its share of the cores.
pub fn cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name (which may hold spaces) in parentheses.
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let (utime, stime): (u64, u64) = (f.get(11)?.parse().ok()?, f.get(12)?.parse().ok()?);
    Some((utime + stime) as f64 / 100.0)
}

/// Memory the kernel says can still be given to programs without swapping
/// (`MemAvailable` of `/proc/meminfo`), in bytes; `None` where it cannot be read.
pub fn available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_meminfo(&text)
}

fn parse_meminfo(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

/// Bytes that generating a mesh of `cells` triangles takes at its peak.
pub fn mesh_bytes(cells: f64) -> f64 {
    BASE_BYTES + cells * MESH_BYTES_PER_CELL
}

/// Bytes that a run on `cells` cells takes on one node: `float_bytes` 4 or 8, and
/// `ranks_on_node` ranks there (each holds the whole mesh; the layout is split).
pub fn run_bytes(cells: f64, float_bytes: usize, ranks_on_node: usize) -> f64 {
    let layout = RUN_LAYOUT_BYTES_PER_CELL[(float_bytes == 8) as usize];
    let ranks = ranks_on_node.max(1) as f64;
    ranks * BASE_BYTES + cells * (ranks * RUN_SHARED_BYTES_PER_CELL + layout)
}

/// A number of bytes for people: "1.2 GB".
pub fn human(bytes: f64) -> String {
    const UNITS: [&str; 6] = ["B", "kB", "MB", "GB", "TB", "PB"];
    let mut x = bytes;
    let mut u = 0;
    while x >= 1000.0 && u + 1 < UNITS.len() {
        x /= 1000.0;
        u += 1;
    }
    if x.is_finite() {
        format!("{x:.1} {}", UNITS[u])
    } else {
        "an unbounded amount".into()
    }
}

/// Refuse `what` (e.g. "meshing 1e12 cells") when it needs more than `available` bytes.
pub fn check_fits_in(what: &str, need: f64, available: Option<u64>) -> Result<()> {
    if let Some(have) = available {
        if need.is_nan() || need > have as f64 {
            bail!(
                "{what} needs about {} of memory, but this machine has {} available: use fewer cells \
                 (or more ranks on more nodes)",
                human(need),
                human(have as f64)
            );
        }
    }
    Ok(())
}

/// Refuse to read a data file into `need` bytes when this machine has not them available
/// (as [`check_fits`], with advice for data files).
pub fn check_data_fits(what: &str, need: f64) -> Result<()> {
    if let Some(have) = available() {
        if need.is_nan() || need > have as f64 {
            bail!(
                "{what} needs about {} of memory, but this machine has {} available: crop the file to the \
                 domain or coarsen it",
                human(need),
                human(have as f64)
            );
        }
    }
    Ok(())
}

/// [`check_fits_in`] against this machine's [`available`] memory.
pub fn check_fits(what: &str, need: f64) -> Result<()> {
    check_fits_in(what, need, available())
}

/// Check, before the layout and backend are made, that a run of `cells` cells fits:
/// `float_bytes` 4 or 8, `ranks_on_node` ranks sharing this node's memory.
pub fn check_run_fits(cells: usize, float_bytes: usize, ranks_on_node: usize) -> Result<()> {
    let need = run_bytes(cells as f64, float_bytes, ranks_on_node);
    check_fits(
        &format!("a run on {cells} cells ({}-byte floats, {ranks_on_node} ranks on this node)", float_bytes),
        need,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_is_parsed() {
        let t = "MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   23000000 kB\n";
        assert_eq!(parse_meminfo(t), Some(23_000_000 * 1024));
        assert_eq!(parse_meminfo("MemTotal: 1 kB\n"), None);
        assert!(available().is_some(), "Linux has MemAvailable");
    }

    #[test]
    fn estimates_match_the_calibration_runs() {
        // Measured peaks of the calibration runs (1,003,474 cells), within 25%.
        let cells = 1_003_474.0;
        for (est, measured) in
            [(mesh_bytes(cells), 212e6), (run_bytes(cells, 4, 1), 499e6), (run_bytes(cells, 8, 1), 667e6)]
        {
            assert!(est >= measured && est <= 1.25 * measured, "estimate {est} for measured {measured}");
        }
    }

    #[test]
    fn too_much_is_refused_with_both_numbers() {
        let e = check_fits_in("meshing 1e12 cells", mesh_bytes(1e12), Some(8_000_000_000)).unwrap_err().to_string();
        assert!(e.contains("meshing 1e12 cells needs about 215.0 TB") && e.contains("8.0 GB available"), "{e}");
        assert!(check_fits_in("a small mesh", mesh_bytes(1e3), Some(8_000_000_000)).is_ok());
        assert!(check_fits_in("x", f64::INFINITY, Some(1)).is_err());
        assert_eq!(human(f64::INFINITY), "an unbounded amount");
    }
}
