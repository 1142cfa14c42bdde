//! The max maps in a checkpoint, so that a restart continues them: `maxmap_RRRRR.bin` beside
//! each rank's `rank_RRRRR.bin`, its owned cells by global id, read back on any rank count.
//!
//! File (framed as `side_file.rs` says): magic `PYCNOMAX`, word the width (numbers per
//! cell), then per cell its u32 global id, then per cell `width` float64 (the records of
//! `physics::extremes`).

use super::side_file::{f64_at, u32_at, Kind, HEADER};
use crate::physics::extremes::WIDTH;
use anyhow::{bail, Result};
use std::path::{Path, PathBuf};

const KIND: Kind = Kind {
    magic: b"PYCNOMAX",
    version: 1,
    word: WIDTH as u32,
    prefix: "maxmap",
    noun: "max-map",
    item: "cell",
    item_bytes: 4 + 8 * WIDTH,
};

pub fn file(dir: &Path, rank: usize) -> PathBuf {
    KIND.file(dir, rank)
}

/// Whether `name` is one of these files (checkpoint pruning removes only pycno's files).
pub fn is_file_name(name: &str) -> bool {
    KIND.is_file_name(name)
}

/// This rank's maps at checkpoint `dir` (the checkpoint's directory exists: its rank file
/// is written first).
pub fn write_rank(dir: &Path, rank: usize, step: u64, global: &[u32], e: &[[f64; WIDTH]]) -> Result<()> {
    KIND.write(dir, rank, step, global.len(), |b| {
        for g in global {
            b.extend_from_slice(&g.to_le_bytes());
        }
        for r in e {
            for x in r {
                b.extend_from_slice(&x.to_le_bytes());
            }
        }
    })
}

/// Every cell's maps (by global id) from the `ranks` files of checkpoint `dir` at `step`.
pub fn read_all(dir: &Path, ranks: usize, step: u64, cells: usize) -> Result<Vec<[f64; WIDTH]>> {
    let mut out = vec![[0.0; WIDTH]; cells];
    let mut seen = vec![false; cells];
    for rank in 0..ranks {
        let context = " (the scenario keeps max maps, so its checkpoints must hold them)";
        let (n, body) = KIND.read(dir, rank, step, context)?;
        let vals = HEADER + 4 * n;
        for k in 0..n {
            let g = u32_at(&body, HEADER + 4 * k) as usize;
            if g >= cells || seen[g] {
                bail!("max-map file {}: cell {g} out of range or written twice", file(dir, rank).display());
            }
            seen[g] = true;
            out[g] = std::array::from_fn(|i| f64_at(&body, vals + (WIDTH * k + i) * 8));
        }
    }
    if let Some(g) = seen.iter().position(|s| !s) {
        bail!("checkpoint {}: cell {g} is in no max-map file", dir.display());
    }
    Ok(out)
}
