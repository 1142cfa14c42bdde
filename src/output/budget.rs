//! The open boundary edges' mass budgets in a checkpoint: `budget_RRRRR.bin` beside each
//! rank's `rank_RRRRR.bin`, so that a restart continues each edge's sum where it stood.
//!
//! Before these files a restart started the sums at zero and added the checkpoint's totals
//! to them: the same volumes to rounding, but the discharge a gauge reports is the step's
//! difference of two such volumes, and that difference lost up to 9e-8 of itself (issue 46,
//! item 9). With every edge's sum restored, the restarted run adds the same numbers in the
//! same order as the uninterrupted one.
//!
//! File (framed as `side_file.rs` says): magic `PYCNOBGT`, word 0, then per edge its cell's
//! u32 global id, u32 slot (the cell's side) and u32 boundary table entry, then per edge four
//! float64 `[in1, out1, in2, out2]` (m³). Edges are keyed by (global cell, slot, entry), so any rank count reads them.

use super::side_file::{f64_at, u32_at, Kind, HEADER};
use anyhow::{bail, Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

const KIND: Kind = Kind {
    magic: b"PYCNOBGT",
    version: 1,
    word: 0,
    prefix: "budget",
    noun: "boundary budget",
    item: "edge",
    item_bytes: 12 + 32,
};

/// An open boundary edge: its cell's global id, the cell's slot and the table entry.
pub type EdgeKey = (u32, u32, u32);

pub fn file(dir: &Path, rank: usize) -> PathBuf {
    KIND.file(dir, rank)
}

/// Whether `name` is one of these files (checkpoint pruning removes only pycno's files).
pub fn is_file_name(name: &str) -> bool {
    KIND.is_file_name(name)
}

/// This rank's edges at checkpoint `dir` (its directory exists: the rank file is written
/// first).
pub fn write_rank(dir: &Path, rank: usize, step: u64, edges: &[EdgeKey], budget: &[[f64; 4]]) -> Result<()> {
    if edges.len() != budget.len() {
        bail!("{} boundary edges with {} budgets", edges.len(), budget.len());
    }
    KIND.write(dir, rank, step, edges.len(), |b| {
        for &(g, s, e) in edges {
            for x in [g, s, e] {
                b.extend_from_slice(&x.to_le_bytes());
            }
        }
        for r in budget {
            for x in r {
                b.extend_from_slice(&x.to_le_bytes());
            }
        }
    })
}

/// Every edge's budget from the `ranks` files of checkpoint `dir` at `step`, or `None` when
/// the checkpoint has none of them (written by an earlier pycno, or a run without open
/// boundaries). A damaged or missing file among others is an error.
pub fn read_all(dir: &Path, ranks: usize, step: u64) -> Result<Option<HashMap<EdgeKey, [f64; 4]>>> {
    if (0..ranks).all(|r| !file(dir, r).exists()) {
        return Ok(None);
    }
    let mut out = HashMap::new();
    for rank in 0..ranks {
        let (n, body) = KIND.read(dir, rank, step, "")?;
        let vals = HEADER + 12 * n;
        for k in 0..n {
            let o = HEADER + 12 * k;
            let key = (u32_at(&body, o), u32_at(&body, o + 4), u32_at(&body, o + 8));
            let v = std::array::from_fn(|i| f64_at(&body, vals + (4 * k + i) * 8));
            if out.insert(key, v).is_some() {
                bail!("boundary budget file {}: edge {key:?} written twice", file(dir, rank).display());
            }
        }
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_read_back_by_key_and_damage_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_all(dir.path(), 2, 7).unwrap().is_none(), "no files: nothing to restore");
        write_rank(dir.path(), 0, 7, &[(3, 1, 2)], &[[1.0, 2.0, 3.0, 0.1]]).unwrap();
        write_rank(dir.path(), 1, 7, &[(9, 0, 1), (9, 2, 1)], &[[0.5; 4], [0.25; 4]]).unwrap();
        let all = read_all(dir.path(), 2, 7).unwrap().unwrap();
        assert_eq!(all.len(), 3);
        assert_eq!(all[&(3, 1, 2)], [1.0, 2.0, 3.0, 0.1]);
        assert_eq!(all[&(9, 2, 1)], [0.25; 4]);
        let e = read_all(dir.path(), 2, 8).unwrap_err();
        assert!(format!("{e:#}").contains("another step"), "{e:#}");
        let p = file(dir.path(), 1);
        let mut b = std::fs::read(&p).unwrap();
        b[40] ^= 1;
        std::fs::write(&p, &b).unwrap();
        let e = read_all(dir.path(), 2, 7).unwrap_err();
        assert!(format!("{e:#}").contains("checksum"), "{e:#}");
        std::fs::remove_file(&p).unwrap();
        assert!(read_all(dir.path(), 2, 7).is_err(), "one file of two missing");
    }
}
