//! Checkpoints: a run's state at one step, written so that a killed job loses at most one
//! checkpoint interval, and read back on any rank count and backend.
//!
//! `DIR/step_NNNNNNNNNN/` holds one `rank_RRRRR.bin` per rank (its owned cells) and
//! `meta.json`, written by rank 0 last, once every rank's file is in place: a directory
//! without `meta.json` is incomplete (a job killed while writing it) and is never read.
//! Every file is written to a temporary name and renamed. Only the newest `keep` complete
//! checkpoints are kept.
//!
//! Rank file, little endian: magic `PYCNOCKP`, u32 version, u32 float bytes (4 or 8),
//! u32 rank, u32 ranks, u64 mesh fingerprint, u64 step, f64 time, u64 cells, then per cell
//! its u32 global id, then per cell the solver's stored numbers `d1, q1x, q1y, d2, q2x, q2y,
//! d1_lo, d2_lo` (`physics::StoredCell`: thickness deviations from the scenario's
//! `physics.reference` rest state, with their low parts) in the run's float type, then the
//! CRC-32 of everything before it. Values are stored exactly as the solver holds them, so a
//! restart continues bit for bit. Version 1 held thicknesses instead: a restart from one
//! could not continue bit for bit, so it is refused with a message that says so.

use crate::physics::StoredCell;
use crate::util::atomic::{write_atomic, write_bytes_atomic};
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::fs;
use std::path::{Path, PathBuf};

pub const MAGIC: &[u8; 8] = b"PYCNOCKP";
pub const VERSION: u32 = 2;
pub const META: &str = "meta.json";
const HEADER: usize = 8 + 4 * 4 + 8 * 4;
/// Numbers per cell (`StoredCell::to_array`).
const VALUES: usize = 8;

/// Why a checkpoint of another version cannot be read.
fn version_error(found: u32) -> String {
    if found < VERSION {
        format!(
            "version {found} was written by an earlier pycno, which stored thicknesses; this pycno stores \
             deviations from a rest state (version {VERSION}) and cannot continue it bit for bit: rerun from the \
             start, or finish the run with the pycno that wrote it"
        )
    } else {
        format!("version {found} was written by a newer pycno; this one reads version {VERSION}")
    }
}

/// What a restart needs besides the cells: the run's scenario (after command-line
/// overrides) and where it stood.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Meta {
    pub format: String,
    pub version: u32,
    pub step: u64,
    pub time: f64,
    pub ranks: usize,
    pub cells: usize,
    pub precision: String,
    pub backend: String,
    pub mesh_fingerprint: String,
    pub scenario: serde_json::Value,
    /// The `.pvd` entries written so far: (time, file).
    pub frames: Vec<(f64, String)>,
    pub dt_min: f64,
    pub dt_max: f64,
    pub mass_layer1_start: f64,
    pub mass_layer2_start: f64,
    pub hyperbolicity_fallbacks: u64,
}

pub fn step_dir(root: &Path, step: u64) -> PathBuf {
    root.join(format!("step_{step:010}"))
}

fn rank_file(dir: &Path, rank: usize) -> PathBuf {
    dir.join(format!("rank_{rank:05}.bin"))
}

/// This rank's part of a checkpoint: its owned cells by global id.
pub fn write_rank(
    dir: &Path,
    rank: usize,
    ranks: usize,
    fingerprint: u64,
    step: u64,
    time: f64,
    float_bytes: usize,
    global: &[u32],
    cells: &[StoredCell],
) -> Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("cannot create checkpoint directory {}", dir.display()))?;
    let n = global.len();
    let mut b = Vec::with_capacity(HEADER + n * (4 + VALUES * float_bytes) + 4);
    b.extend_from_slice(MAGIC);
    for x in [VERSION, float_bytes as u32, rank as u32, ranks as u32] {
        b.extend_from_slice(&x.to_le_bytes());
    }
    b.extend_from_slice(&fingerprint.to_le_bytes());
    b.extend_from_slice(&step.to_le_bytes());
    b.extend_from_slice(&time.to_le_bytes());
    b.extend_from_slice(&(n as u64).to_le_bytes());
    for g in global {
        b.extend_from_slice(&g.to_le_bytes());
    }
    for s in cells {
        for x in s.to_array() {
            if float_bytes == 4 {
                b.extend_from_slice(&(x as f32).to_le_bytes());
            } else {
                b.extend_from_slice(&x.to_le_bytes());
            }
        }
    }
    let crc = crc32fast::hash(&b);
    b.extend_from_slice(&crc.to_le_bytes());
    write_bytes_atomic(&rank_file(dir, rank), &b)
}

/// Rank 0, after every rank wrote its file: the checkpoint becomes complete.
pub fn write_meta(dir: &Path, meta: &Meta) -> Result<()> {
    let text = serde_json::to_string_pretty(meta)?;
    write_atomic(&dir.join(META), |w| {
        use std::io::Write;
        w.write_all(text.as_bytes()).with_context(|| format!("cannot write {}", dir.join(META).display()))
    })
}

/// Complete checkpoints under `root`, oldest first.
pub fn complete(root: &Path) -> Result<Vec<(u64, PathBuf)>> {
    let mut found = Vec::new();
    let entries = match fs::read_dir(root) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(found),
        Err(e) => return Err(e).with_context(|| format!("cannot list checkpoint directory {}", root.display())),
    };
    for e in entries {
        let e = e?;
        let name = e.file_name().to_string_lossy().to_string();
        if let Some(step) = name.strip_prefix("step_").and_then(|s| s.parse::<u64>().ok()) {
            if e.path().join(META).is_file() {
                found.push((step, e.path()));
            }
        }
    }
    found.sort();
    Ok(found)
}

/// Keep the newest `keep` complete checkpoints; remove older ones (their `meta.json`
/// first, so an interrupted removal never leaves something that looks complete) and any
/// incomplete one older than the newest complete one.
pub fn prune(root: &Path, keep: usize) -> Result<()> {
    let done = complete(root)?;
    let Some(&(newest, _)) = done.last() else { return Ok(()) };
    for (_, dir) in done.iter().take(done.len().saturating_sub(keep.max(1))) {
        let _ = fs::remove_file(dir.join(META));
        fs::remove_dir_all(dir).with_context(|| format!("cannot remove old checkpoint {}", dir.display()))?;
    }
    for e in fs::read_dir(root)?.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if let Some(step) = name.strip_prefix("step_").and_then(|s| s.parse::<u64>().ok()) {
            if step < newest && !e.path().join(META).is_file() {
                let _ = fs::remove_dir_all(e.path());
            }
        }
    }
    Ok(())
}

/// The checkpoint to restart from: `path` itself when it holds a `meta.json`, else the
/// newest complete checkpoint under it.
pub fn locate(path: &Path) -> Result<PathBuf> {
    if path.join(META).is_file() {
        return Ok(path.to_path_buf());
    }
    if !path.is_dir() {
        bail!("--restart {}: no such checkpoint directory", path.display());
    }
    match complete(path)?.pop() {
        Some((_, dir)) => Ok(dir),
        None => bail!("--restart {}: no complete checkpoint there (a step_* directory with a {META})", path.display()),
    }
}

pub fn read_meta(dir: &Path) -> Result<Meta> {
    let p = dir.join(META);
    let text = fs::read_to_string(&p).with_context(|| format!("cannot read checkpoint {}", p.display()))?;
    let m: Meta = serde_json::from_str(&text)
        .with_context(|| format!("checkpoint {}: not a valid pycno checkpoint", p.display()))?;
    if m.format != "pycno-checkpoint" {
        bail!("checkpoint {}: format {:?}, but this pycno reads pycno-checkpoint", p.display(), m.format);
    }
    if m.version != VERSION {
        bail!("checkpoint {}: {}", p.display(), version_error(m.version));
    }
    Ok(m)
}

/// The whole state as stored, by global cell id, from every rank file of the checkpoint in
/// `dir`.
pub fn read_state(dir: &Path, meta: &Meta, fingerprint: u64) -> Result<Vec<StoredCell>> {
    let mut state = vec![StoredCell::default(); meta.cells];
    let mut seen = vec![false; meta.cells];
    for rank in 0..meta.ranks {
        let path = rank_file(dir, rank);
        let b = fs::read(&path).with_context(|| format!("cannot read checkpoint file {}", path.display()))?;
        let what = |m: String| anyhow::anyhow!("checkpoint file {}: {m}", path.display());
        if b.len() < HEADER + 4 || &b[..8] != MAGIC {
            return Err(what("truncated, or not a pycno checkpoint file".into()));
        }
        let (body, tail) = b.split_at(b.len() - 4);
        let stored = u32::from_le_bytes(tail.try_into().unwrap());
        if crc32fast::hash(body) != stored {
            return Err(what("checksum mismatch: the file is corrupted or truncated".into()));
        }
        let u32_at = |o: usize| u32::from_le_bytes(body[o..o + 4].try_into().unwrap());
        let u64_at = |o: usize| u64::from_le_bytes(body[o..o + 8].try_into().unwrap());
        let (version, fb, r, ranks) = (u32_at(8), u32_at(12) as usize, u32_at(16) as usize, u32_at(20) as usize);
        if version != VERSION {
            return Err(what(version_error(version)));
        }
        if u64_at(24) != fingerprint {
            return Err(what("made for another mesh than this scenario's".into()));
        }
        if r != rank || ranks != meta.ranks || u64_at(32) != meta.step || f64::from_bits(u64_at(40)) != meta.time {
            return Err(what(format!("does not belong to this checkpoint (rank {r} of {ranks}, step {})", u64_at(32))));
        }
        let want_fb = if meta.precision == "f32" { 4 } else { 8 };
        if fb != want_fb {
            return Err(what(format!("{fb}-byte floats, but the checkpoint says {}", meta.precision)));
        }
        let n = u64_at(48) as usize;
        if body.len() != HEADER + n * (4 + VALUES * fb) {
            return Err(what(format!("{} bytes for {n} cells", b.len())));
        }
        let vals = HEADER + 4 * n;
        for k in 0..n {
            let g = u32_at(HEADER + 4 * k) as usize;
            if g >= meta.cells || seen[g] {
                return Err(what(format!("cell {g} out of range or written twice")));
            }
            seen[g] = true;
            let v = |i: usize| {
                let o = vals + (VALUES * k + i) * fb;
                if fb == 4 {
                    f32::from_le_bytes(body[o..o + 4].try_into().unwrap()) as f64
                } else {
                    f64::from_le_bytes(body[o..o + 8].try_into().unwrap())
                }
            };
            state[g] = StoredCell::from_array(std::array::from_fn(v));
        }
    }
    if let Some(g) = seen.iter().position(|s| !s) {
        bail!("checkpoint {}: cell {g} is in no rank file", dir.display());
    }
    Ok(state)
}
