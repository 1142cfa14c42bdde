//! The max maps in a checkpoint, so that a restart continues them: `maxmap_RRRRR.bin` beside
//! each rank's `rank_RRRRR.bin`, its owned cells by global id, read back on any rank count.
//!
//! File, little endian: magic `PYCNOMAX`, u32 version, u32 width (numbers per cell), u64
//! step, u64 cells, then per cell its u32 global id, then per cell `width` float64 (the
//! records of `physics::extremes`), then the CRC-32 of everything before it.

use crate::physics::extremes::WIDTH;
use crate::util::atomic::write_bytes_atomic;
use crate::util::files::read_regular;
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"PYCNOMAX";
const VERSION: u32 = 1;
const HEADER: usize = 8 + 4 + 4 + 8 + 8;

pub fn file(dir: &Path, rank: usize) -> PathBuf {
    dir.join(format!("maxmap_{rank:05}.bin"))
}

/// Whether `name` is one of these files (checkpoint pruning removes only pycno's files).
pub fn is_file_name(name: &str) -> bool {
    let rank = name.strip_prefix("maxmap_").and_then(|r| r.strip_suffix(".bin"));
    rank.is_some_and(|r| r.len() == 5 && r.bytes().all(|b| b.is_ascii_digit()))
}

/// This rank's maps at checkpoint `dir` (the checkpoint's directory exists: its rank file
/// is written first).
pub fn write_rank(dir: &Path, rank: usize, step: u64, global: &[u32], e: &[[f64; WIDTH]]) -> Result<()> {
    let mut b = Vec::with_capacity(HEADER + global.len() * (4 + 8 * WIDTH) + 4);
    b.extend_from_slice(MAGIC);
    b.extend_from_slice(&VERSION.to_le_bytes());
    b.extend_from_slice(&(WIDTH as u32).to_le_bytes());
    b.extend_from_slice(&step.to_le_bytes());
    b.extend_from_slice(&(global.len() as u64).to_le_bytes());
    for g in global {
        b.extend_from_slice(&g.to_le_bytes());
    }
    for r in e {
        for x in r {
            b.extend_from_slice(&x.to_le_bytes());
        }
    }
    let crc = crc32fast::hash(&b);
    b.extend_from_slice(&crc.to_le_bytes());
    write_bytes_atomic(&file(dir, rank), &b)
}

/// Every cell's maps (by global id) from the `ranks` files of checkpoint `dir` at `step`.
pub fn read_all(dir: &Path, ranks: usize, step: u64, cells: usize) -> Result<Vec<[f64; WIDTH]>> {
    let mut out = vec![[0.0; WIDTH]; cells];
    let mut seen = vec![false; cells];
    for rank in 0..ranks {
        let path = file(dir, rank);
        let b = read_regular(&path).with_context(|| {
            format!("cannot read {} (the scenario keeps max maps, so its checkpoints must hold them)", path.display())
        })?;
        let what = |m: &str| anyhow::anyhow!("max-map file {}: {m}", path.display());
        if b.len() < HEADER + 4 || &b[..8] != MAGIC {
            return Err(what("truncated, or not a pycno max-map file"));
        }
        let (body, tail) = b.split_at(b.len() - 4);
        if crc32fast::hash(body) != u32::from_le_bytes(tail.try_into().unwrap()) {
            return Err(what("checksum mismatch: the file is corrupted or truncated"));
        }
        let u32_at = |o: usize| u32::from_le_bytes(body[o..o + 4].try_into().unwrap());
        let u64_at = |o: usize| u64::from_le_bytes(body[o..o + 8].try_into().unwrap());
        if u32_at(8) != VERSION || u32_at(12) as usize != WIDTH {
            return Err(what("another version of the format"));
        }
        if u64_at(16) != step {
            return Err(what("written at another step than its checkpoint"));
        }
        let n = u64_at(24) as usize;
        if body.len() != HEADER + n * (4 + 8 * WIDTH) {
            return Err(what("wrong size for its cell count"));
        }
        let vals = HEADER + 4 * n;
        for k in 0..n {
            let g = u32_at(HEADER + 4 * k) as usize;
            if g >= cells || seen[g] {
                return Err(what(&format!("cell {g} out of range or written twice")));
            }
            seen[g] = true;
            out[g] = std::array::from_fn(|i| {
                let o = vals + (WIDTH * k + i) * 8;
                f64::from_le_bytes(body[o..o + 8].try_into().unwrap())
            });
        }
    }
    if let Some(g) = seen.iter().position(|s| !s) {
        bail!("checkpoint {}: cell {g} is in no max-map file", dir.display());
    }
    Ok(out)
}
