//! The open boundary edges' mass budgets in a checkpoint: `budget_RRRRR.bin` beside each
//! rank's `rank_RRRRR.bin`, so that a restart continues each edge's sum where it stood.
//!
//! Before these files a restart started the sums at zero and added the checkpoint's totals
//! to them: the same volumes to rounding, but the discharge a gauge reports is the step's
//! difference of two such volumes, and that difference lost up to 9e-8 of itself (issue 46,
//! item 9). With every edge's sum restored, the restarted run adds the same numbers in the
//! same order as the uninterrupted one.
//!
//! File, little endian: magic `PYCNOBGT`, u32 version, u32 0, u64 step, u64 edges, then per
//! edge its cell's u32 global id, u32 slot (the cell's side) and u32 boundary table entry,
//! then per edge four float64 `[in1, out1, in2, out2]` (m³), then the CRC-32 of everything
//! before it. Edges are keyed by (global cell, slot, entry), so any rank count reads them.

use crate::util::atomic::write_bytes_atomic;
use crate::util::files::read_regular;
use anyhow::{bail, Context, Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"PYCNOBGT";
const VERSION: u32 = 1;
const HEADER: usize = 8 + 4 + 4 + 8 + 8;

/// An open boundary edge: its cell's global id, the cell's slot and the table entry.
pub type EdgeKey = (u32, u32, u32);

pub fn file(dir: &Path, rank: usize) -> PathBuf {
    dir.join(format!("budget_{rank:05}.bin"))
}

/// Whether `name` is one of these files (checkpoint pruning removes only pycno's files).
pub fn is_file_name(name: &str) -> bool {
    let rank = name.strip_prefix("budget_").and_then(|r| r.strip_suffix(".bin"));
    rank.is_some_and(|r| r.len() == 5 && r.bytes().all(|b| b.is_ascii_digit()))
}

/// This rank's edges at checkpoint `dir` (its directory exists: the rank file is written
/// first).
pub fn write_rank(dir: &Path, rank: usize, step: u64, edges: &[EdgeKey], budget: &[[f64; 4]]) -> Result<()> {
    if edges.len() != budget.len() {
        bail!("{} boundary edges with {} budgets", edges.len(), budget.len());
    }
    let mut b = Vec::with_capacity(HEADER + edges.len() * (12 + 32) + 4);
    b.extend_from_slice(MAGIC);
    b.extend_from_slice(&VERSION.to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes());
    b.extend_from_slice(&step.to_le_bytes());
    b.extend_from_slice(&(edges.len() as u64).to_le_bytes());
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
    let crc = crc32fast::hash(&b);
    b.extend_from_slice(&crc.to_le_bytes());
    write_bytes_atomic(&file(dir, rank), &b)
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
        let path = file(dir, rank);
        let b = read_regular(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let what = |m: &str| anyhow::anyhow!("boundary budget file {}: {m}", path.display());
        if b.len() < HEADER + 4 || &b[..8] != MAGIC {
            return Err(what("truncated, or not a pycno boundary budget file"));
        }
        let (body, tail) = b.split_at(b.len() - 4);
        if crc32fast::hash(body) != u32::from_le_bytes(tail.try_into().unwrap()) {
            return Err(what("checksum mismatch: the file is corrupted or truncated"));
        }
        let u32_at = |o: usize| u32::from_le_bytes(body[o..o + 4].try_into().unwrap());
        let u64_at = |o: usize| u64::from_le_bytes(body[o..o + 8].try_into().unwrap());
        if u32_at(8) != VERSION {
            return Err(what("another version of the format"));
        }
        if u64_at(16) != step {
            return Err(what("written at another step than its checkpoint"));
        }
        let n = u64_at(24);
        if n.checked_mul(12 + 32).and_then(|x| x.checked_add(HEADER as u64)) != Some(body.len() as u64) {
            return Err(what("wrong size for its edge count"));
        }
        let n = n as usize;
        let vals = HEADER + 12 * n;
        for k in 0..n {
            let o = HEADER + 12 * k;
            let key = (u32_at(o), u32_at(o + 4), u32_at(o + 8));
            let v = std::array::from_fn(|i| {
                let o = vals + (4 * k + i) * 8;
                f64::from_le_bytes(body[o..o + 8].try_into().unwrap())
            });
            if out.insert(key, v).is_some() {
                return Err(what(&format!("edge {key:?} written twice")));
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
