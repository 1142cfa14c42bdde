//! Checkpoints: a run's state at one step, written so that a killed job loses at most one
//! checkpoint interval, and read back on any rank count and backend.
//!
//! `DIR/step_NNNNNNNNNN/` holds the marker `.pycno-checkpoint` (written first), one
//! `rank_RRRRR.bin` per rank (its owned cells) and `meta.json`, written by rank 0 last, once
//! every rank's file is in place: a directory without `meta.json` is incomplete (a job
//! killed while writing it) and is never read. `meta.json` carries a CRC-32 of its own
//! canonical form, so an edited one is refused, and the run id. Every file is written to a
//! temporary name and renamed. Only the newest `keep` complete checkpoints are kept, and
//! pruning removes only directories with the marker and only files pycno writes there.
//!
//! `DIR/.pycno-run` holds the id of the run the directory belongs to ([`claim`]): a second
//! run pointed at it is refused instead of pruning or resuming the first one's checkpoints.
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
use crate::util::atomic::{create_new_nofollow, write_atomic, write_bytes_atomic};
use crate::util::files::{read_regular, read_regular_to_string};
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::fs;
use std::path::{Path, PathBuf};

pub const MAGIC: &[u8; 8] = b"PYCNOCKP";
/// 2: `meta.json` has a checksum and the run id; step directories hold [`MARKER`].
/// 3: cells are stored as the solver holds them (deviations from a rest state and their
/// low parts), no longer as thicknesses.
pub const VERSION: u32 = 3;
pub const META: &str = "meta.json";
/// Written first into every checkpoint directory pycno makes: pruning removes only those.
pub const MARKER: &str = ".pycno-checkpoint";
/// In the checkpoint root: the id of the run whose checkpoints it holds (see [`claim`]).
pub const RUN_FILE: &str = ".pycno-run";
const HEADER: usize = 8 + 4 * 4 + 8 * 4;
/// Numbers per cell (`StoredCell::to_array`).
const VALUES: usize = 8;

/// Why a checkpoint of another version cannot be read.
fn version_error(found: u32) -> String {
    if found < VERSION {
        format!(
            "version {found} was written by an earlier pycno (version 1: no checksum or run id; 2: thicknesses, \
             where this pycno stores deviations from a rest state, version {VERSION}) and cannot be continued bit \
             for bit: rerun from the start, or finish the run with the pycno that wrote it"
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
    /// The smallest step cut short to land on an output time (none: absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dt_min_clipped: Option<f64>,
    #[serde(default)]
    pub clipped_steps: u64,
    pub mass_layer1_start: f64,
    pub mass_layer2_start: f64,
    pub hyperbolicity_fallbacks: u64,
    /// Mass through each boundary table entry so far, `[in1, out1, in2, out2]` (runs with
    /// open boundaries).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub boundary_budget: Vec<[f64; 4]>,
    /// The part of `boundary_budget` that the backends' edge sums in the checkpoint's
    /// `budget_RRRRR.bin` files do not hold (what a restart from a checkpoint without them
    /// carried over); empty for none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub boundary_budget_carried: Vec<[f64; 4]>,
    /// When and by which command the run started (`RunRecord::history`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<String>,
    /// The CRC-32 each rank file ends with, by rank: a rank file of another run or another
    /// checkpoint (same mesh, same step) is refused instead of resumed. Empty in checkpoints
    /// of an earlier pycno, which are read without this check.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rank_checksums: Vec<u32>,
}

pub fn step_dir(root: &Path, step: u64) -> PathBuf {
    root.join(format!("step_{step:010}"))
}

fn rank_file(dir: &Path, rank: usize) -> PathBuf {
    dir.join(format!("rank_{rank:05}.bin"))
}

/// This rank's part of a checkpoint: its owned cells by global id. Returns the file's
/// CRC-32, which `meta.json` records (`Meta::rank_checksums`).
#[allow(clippy::too_many_arguments)] // the rank file's header fields, each from the caller
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
) -> Result<u32> {
    fs::create_dir_all(dir).with_context(|| format!("cannot create checkpoint directory {}", dir.display()))?;
    // The marker first: whatever dies after this, the directory is known to be pycno's.
    match create_new_nofollow(&dir.join(MARKER)) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
            return Err(e).with_context(|| format!("cannot write {}", dir.join(MARKER).display()))
        }
        _ => {}
    }
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
    write_bytes_atomic(&rank_file(dir, rank), &b)?;
    Ok(crc)
}

/// Rank 0, after every rank wrote its file: the checkpoint becomes complete. `meta.json`
/// also gets the run id (that of the checkpoint directory's claim, see [`claim`]; an
/// unclaimed directory is claimed here with a new id) and a checksum over the rest.
pub fn write_meta(dir: &Path, meta: &Meta) -> Result<()> {
    let root = dir.parent().unwrap_or(Path::new("."));
    let run_id = match claimed(root)? {
        Some(id) => id,
        None => {
            let id = new_run_id();
            claim(root, &id)?;
            id
        }
    };
    let mut v = serde_json::to_value(meta)?;
    v["run_id"] = serde_json::Value::String(run_id);
    v["checksum"] = serde_json::Value::String(meta_checksum(&v));
    let text = serde_json::to_string_pretty(&v)?;
    write_atomic(&dir.join(META), |w| {
        use std::io::Write;
        w.write_all(text.as_bytes()).with_context(|| format!("cannot write {}", dir.join(META).display()))
    })
}

/// The `checksum` of a `meta.json` document `v`: the CRC-32 of its canonical form (keys
/// sorted at every level, no spaces) without its top-level `checksum` key, as
/// `crc32:xxxxxxxx`.
pub fn meta_checksum(v: &serde_json::Value) -> String {
    fn canonical(v: &serde_json::Value, out: &mut String) {
        match v {
            serde_json::Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                out.push('{');
                for (i, k) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&serde_json::Value::String(k.clone()).to_string());
                    out.push(':');
                    canonical(&m[k], out);
                }
                out.push('}');
            }
            serde_json::Value::Array(a) => {
                out.push('[');
                for (i, x) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    canonical(x, out);
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut v = v.clone();
    if let Some(m) = v.as_object_mut() {
        m.remove("checksum");
    }
    let mut text = String::new();
    canonical(&v, &mut text);
    format!("crc32:{:08x}", crc32fast::hash(text.as_bytes()))
}

/// A fresh run id: 64 random bits (from the kernel; the process's unique counter where
/// `/dev/urandom` cannot be read), as 16 hex digits.
pub fn new_run_id() -> String {
    let mut b = [0u8; 8];
    let random = std::fs::File::open("/dev/urandom").and_then(|mut f| std::io::Read::read_exact(&mut f, &mut b));
    let x = if random.is_ok() { u64::from_le_bytes(b) } else { crate::util::atomic::unique_u64() };
    format!("{x:016x}")
}

/// The run id `root` is claimed by (its `.pycno-run`), if any.
fn claimed(root: &Path) -> Result<Option<String>> {
    let p = root.join(RUN_FILE);
    match read_regular_to_string(&p) {
        Ok(t) => Ok(Some(t.trim().to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", p.display())),
    }
}

/// Claim the checkpoint directory `root` for the run `run_id` (a new run's [`new_run_id`],
/// or a restart's [`run_id`] of the checkpoint it resumes): fails if it holds checkpoints of
/// another run, so that two runs never prune or resume each other's checkpoints.
pub fn claim(root: &Path, run_id: &str) -> Result<()> {
    let other = match claimed(root)? {
        Some(id) if id == run_id => return Ok(()),
        Some(id) => Some(id),
        None => {
            // Unclaimed, but complete checkpoints there: of an older pycno, or of a run that
            // claimed nothing. Either way not this run's. (An incomplete one holds nothing to
            // resume: it may be this run's own, being completed by `write_meta`.)
            let theirs = step_dirs(root)?.into_iter().any(|(_, d)| d.join(META).is_file());
            if !theirs {
                std::fs::create_dir_all(root)
                    .with_context(|| format!("cannot create checkpoint directory {}", root.display()))?;
                return write_bytes_atomic(&root.join(RUN_FILE), format!("{run_id}\n").as_bytes());
            }
            None
        }
    };
    let name = newest_scenario_name(root).unwrap_or_else(|| "unknown".into());
    bail!(
        "checkpoint directory {} holds checkpoints of another run (run id {}, scenario name {name}); use another \
         --checkpoint-dir or remove them",
        root.display(),
        other.as_deref().unwrap_or("unknown")
    )
}

/// [`claim`] `root` for this run: a restart (`restart`, the `--restart` path, a checkpoint
/// or a directory of them) goes on under the run id of the checkpoint it resumes; a new run
/// under a fresh one. Rank 0 calls it once the checkpoint directory is known.
pub fn claim_for(root: &Path, restart: Option<&Path>) -> Result<()> {
    let id = match restart {
        Some(p) => run_id(&locate(p)?)?,
        None => new_run_id(),
    };
    claim(root, &id)
}

/// The scenario name in the newest `meta.json` under `root` that reads.
fn newest_scenario_name(root: &Path) -> Option<String> {
    let dirs = step_dirs(root).ok()?;
    dirs.iter().rev().find_map(|(_, d)| {
        let text = read_regular_to_string(&d.join(META)).ok()?;
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        v["scenario"]["name"].as_str().map(str::to_string)
    })
}

/// The run id recorded in the checkpoint `dir` (whose `meta.json` is checked first): the id a
/// restart from it claims its checkpoint directory with.
pub fn run_id(dir: &Path) -> Result<String> {
    let (_, id) = read_meta_and_run_id(dir)?;
    Ok(id)
}

/// `step_*` directories directly under `root` (whoever made them), oldest first.
fn step_dirs(root: &Path) -> Result<Vec<(u64, PathBuf)>> {
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
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                found.push((step, e.path()));
            }
        }
    }
    found.sort();
    Ok(found)
}

/// Complete checkpoints under `root`, oldest first: `step_*` directories that pycno made
/// (they hold its marker) with a `meta.json`.
pub fn complete(root: &Path) -> Result<Vec<(u64, PathBuf)>> {
    Ok(step_dirs(root)?.into_iter().filter(|(_, d)| d.join(MARKER).is_file() && d.join(META).is_file()).collect())
}

/// Whether `name` is a file pycno writes into a checkpoint directory.
fn ours(name: &str) -> bool {
    let rank = name.strip_prefix("rank_").and_then(|r| r.strip_suffix(".bin"));
    name == META
        || name == MARKER
        || rank.is_some_and(|r| r.len() == 5 && r.bytes().all(|b| b.is_ascii_digit()))
        || super::extremes::is_file_name(name)
        || super::budget::is_file_name(name)
        || crate::util::atomic::is_temp_name(name)
}

/// Remove the checkpoint directory `dir` if it holds only files pycno writes there (its
/// `meta.json` first, so an interrupted removal never leaves something that looks complete;
/// its marker last). Anything else in it: left alone, with a warning; returns whether removed.
fn remove_checkpoint(dir: &Path) -> Result<bool> {
    // The names in `dir`, or the first that is not pycno's.
    let mut names = Vec::new();
    for e in fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        if !e.file_type().is_ok_and(|t| t.is_file()) || !ours(&name) {
            log::warn!(
                "checkpoint directory {} holds {name:?}, which pycno did not write: not removing it",
                dir.display()
            );
            return Ok(false);
        }
        names.push(name);
    }
    let remove = |name: &str| -> Result<()> {
        let p = dir.join(name);
        match fs::remove_file(&p) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(e).with_context(|| format!("cannot remove old checkpoint file {}", p.display()))
            }
            _ => Ok(()),
        }
    };
    remove(META)?;
    for name in names.iter().filter(|n| *n != META && *n != MARKER) {
        remove(name)?;
    }
    remove(MARKER)?;
    fs::remove_dir(dir).with_context(|| format!("cannot remove old checkpoint {}", dir.display()))?;
    Ok(true)
}

/// Keep the newest `keep` complete checkpoints; remove older ones and any incomplete one
/// older than the newest complete one. Only directories pycno made (with its marker) and
/// only the files it writes there are removed: a `step_*` directory of someone else, or
/// one holding other files, is left alone with a warning.
pub fn prune(root: &Path, keep: usize) -> Result<()> {
    let done = complete(root)?;
    let Some(&(newest, _)) = done.last() else { return Ok(()) };
    for (_, dir) in done.iter().take(done.len().saturating_sub(keep.max(1))) {
        remove_checkpoint(dir)?;
    }
    for (step, dir) in step_dirs(root)? {
        if step < newest && !dir.join(META).is_file() {
            if dir.join(MARKER).is_file() {
                remove_checkpoint(&dir)?;
            } else {
                log::warn!("{} was not made by pycno (no {MARKER}): not removing it", dir.display());
            }
        }
    }
    Ok(())
}

/// Remove every checkpoint pycno made under `root` and its claim (`run --overwrite` replacing
/// an earlier run): only directories with the marker and only pycno's files in them, as
/// [`prune`] does. Returns how many checkpoints were removed.
pub fn remove_all(root: &Path) -> Result<usize> {
    let mut n = 0;
    for (_, dir) in step_dirs(root)? {
        if dir.join(MARKER).is_file() && remove_checkpoint(&dir)? {
            n += 1;
        }
    }
    let claim = root.join(RUN_FILE);
    if fs::symlink_metadata(&claim).is_ok() {
        fs::remove_file(&claim).with_context(|| format!("cannot remove {}", claim.display()))?;
    }
    Ok(n)
}

/// The checkpoint to restart from: `path` itself when it holds a `meta.json`, else the
/// newest complete checkpoint under it of the run that claimed that directory.
pub fn locate(path: &Path) -> Result<PathBuf> {
    if path.join(META).is_file() {
        return Ok(path.to_path_buf());
    }
    if !path.is_dir() {
        bail!("--restart {}: no such checkpoint directory", path.display());
    }
    let owner = claimed(path)?;
    let mut all = complete(path)?;
    while let Some((_, dir)) = all.pop() {
        match (&owner, run_id(&dir)) {
            (Some(o), Ok(id)) if *o != id => {
                log::warn!("{} belongs to another run (run id {id}, the directory's is {o}): skipped", dir.display())
            }
            _ => return Ok(dir),
        }
    }
    bail!("--restart {}: no complete checkpoint there (a step_* directory with a {META})", path.display())
}

pub fn read_meta(dir: &Path) -> Result<Meta> {
    Ok(read_meta_and_run_id(dir)?.0)
}

/// `meta.json` of the checkpoint `dir`, checked (format, version, checksum), and its run id.
fn read_meta_and_run_id(dir: &Path) -> Result<(Meta, String)> {
    let p = dir.join(META);
    let text = read_regular_to_string(&p).with_context(|| format!("cannot read checkpoint {}", p.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("checkpoint {}: not a valid pycno checkpoint", p.display()))?;
    let (format, version) = (v["format"].as_str().unwrap_or(""), v["version"].as_u64().unwrap_or(0));
    if format != "pycno-checkpoint" {
        bail!("checkpoint {}: format {format:?}, but this pycno reads pycno-checkpoint", p.display());
    }
    if version != VERSION as u64 {
        bail!("checkpoint {}: {}", p.display(), version_error(version.min(u32::MAX as u64) as u32));
    }
    if v["checksum"].as_str() != Some(meta_checksum(&v).as_str()) {
        bail!(
            "checkpoint meta.json {} was modified after it was written (checksum mismatch): pycno will not resume \
             from it, since its physics or times may no longer be those of the saved state",
            p.display()
        );
    }
    let id = v["run_id"].as_str().unwrap_or_default().to_string();
    let m: Meta = serde_json::from_value(v)
        .with_context(|| format!("checkpoint {}: not a valid pycno checkpoint", p.display()))?;
    Ok((m, id))
}

/// The whole state as stored, by global cell id, from every rank file of the checkpoint in
/// `dir`.
pub fn read_state(dir: &Path, meta: &Meta, fingerprint: u64) -> Result<Vec<StoredCell>> {
    let mut state = vec![StoredCell::default(); meta.cells];
    let mut seen = vec![false; meta.cells];
    visit_state(dir, meta, fingerprint, &mut |g, cell| {
        if seen[g] {
            bail!("cell {g} written twice");
        }
        seen[g] = true;
        state[g] = cell;
        Ok(())
    })?;
    if let Some(g) = seen.iter().position(|s| !s) {
        bail!("checkpoint {}: cell {g} is in no rank file", dir.display());
    }
    Ok(state)
}

/// The checkpoint's cells `wanted` (global ids), in that order: what one rank of a run that
/// never builds the global mesh needs (issue 22). Every rank file is read, one at a time, so
/// a rank holds one file and its own cells, never the whole state.
pub fn read_state_of(dir: &Path, meta: &Meta, fingerprint: u64, wanted: &[u32]) -> Result<Vec<StoredCell>> {
    let mut index: Vec<(u32, u32)> = wanted.iter().enumerate().map(|(l, &g)| (g, l as u32)).collect();
    index.sort_unstable();
    let mut state = vec![StoredCell::default(); wanted.len()];
    let mut seen = vec![false; wanted.len()];
    visit_state(dir, meta, fingerprint, &mut |g, cell| {
        if let Ok(k) = index.binary_search_by_key(&(g as u32), |p| p.0) {
            let l = index[k].1 as usize;
            if seen[l] {
                bail!("cell {g} written twice");
            }
            seen[l] = true;
            state[l] = cell;
        }
        Ok(())
    })?;
    if let Some(l) = seen.iter().position(|s| !s) {
        bail!("checkpoint {}: cell {} is in no rank file", dir.display(), wanted[l]);
    }
    Ok(state)
}

/// Every cell of every rank file of the checkpoint, checked, to `put(global id, cell)`.
fn visit_state(
    dir: &Path,
    meta: &Meta,
    fingerprint: u64,
    put: &mut dyn FnMut(usize, StoredCell) -> Result<()>,
) -> Result<()> {
    for rank in 0..meta.ranks {
        let path = rank_file(dir, rank);
        let b = read_regular(&path).with_context(|| format!("cannot read checkpoint file {}", path.display()))?;
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
        if meta.rank_checksums.get(rank).is_some_and(|&want| want != stored) {
            return Err(what(format!(
                "not the file this checkpoint was written with (its CRC-32 is {stored:08x}, {} records {:08x}): a \
                 rank file of another run or another checkpoint, copied here?",
                dir.join(META).display(),
                meta.rank_checksums[rank]
            )));
        }
        let n = u64_at(48) as usize;
        if body.len() != HEADER + n * (4 + VALUES * fb) {
            return Err(what(format!("{} bytes for {n} cells", b.len())));
        }
        let vals = HEADER + 4 * n;
        for k in 0..n {
            let g = u32_at(HEADER + 4 * k) as usize;
            if g >= meta.cells {
                return Err(what(format!("cell {g} out of range")));
            }
            let v = |i: usize| {
                let o = vals + (VALUES * k + i) * fb;
                if fb == 4 {
                    f32::from_le_bytes(body[o..o + 4].try_into().unwrap()) as f64
                } else {
                    f64::from_le_bytes(body[o..o + 8].try_into().unwrap())
                }
            };
            put(g, StoredCell::from_array(std::array::from_fn(v))).map_err(|e| what(format!("{e:#}")))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> Meta {
        Meta {
            format: "pycno-checkpoint".into(),
            version: VERSION,
            step: 10,
            time: 0.5,
            ranks: 1,
            cells: 2,
            precision: "f64".into(),
            backend: "cpu".into(),
            mesh_fingerprint: "00000000000000ab".into(),
            scenario: serde_json::json!({ "name": "lake", "physics": { "g": 9.81, "r": 0.998, "gamma": 0.9 } }),
            frames: vec![(0.0, "lake_00000.vtu".into())],
            dt_min: 0.01,
            dt_max: 0.02,
            dt_min_clipped: None,
            clipped_steps: 0,
            mass_layer1_start: 1.0,
            boundary_budget: vec![],
            boundary_budget_carried: vec![],
            history: None,
            mass_layer2_start: 2.0,
            hyperbolicity_fallbacks: 0,
            rank_checksums: vec![],
        }
    }

    /// A complete checkpoint of run `id` at `step` under `root`.
    fn checkpoint(root: &Path, id: &str, step: u64) -> PathBuf {
        claim(root, id).unwrap();
        let dir = step_dir(root, step);
        let state = vec![StoredCell::default(); 2];
        write_rank(&dir, 0, 1, 0xab, step, 0.5, 8, &[0, 1], &state).unwrap();
        write_meta(&dir, &meta()).unwrap();
        dir
    }

    #[test]
    fn pruning_removes_only_what_pycno_wrote() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        // Someone else's directory that happens to be named like a checkpoint.
        let foreign = root.join("step_0000000001");
        fs::create_dir_all(&foreign).unwrap();
        fs::write(foreign.join("notes.txt"), "mine").unwrap();
        let a = checkpoint(root, "aa", 2);
        // A checkpoint of pycno's with a file added by hand.
        let b = checkpoint(root, "aa", 3);
        fs::write(b.join("results.csv"), "keep me").unwrap();
        let c = checkpoint(root, "aa", 4);
        let d5 = checkpoint(root, "aa", 5);
        prune(root, 1).unwrap();
        assert_eq!(fs::read_to_string(foreign.join("notes.txt")).unwrap(), "mine");
        assert!(!a.exists() && !c.exists(), "pycno's old checkpoints are removed");
        assert_eq!(fs::read_to_string(b.join("results.csv")).unwrap(), "keep me");
        assert!(d5.join(META).is_file());
    }

    #[test]
    fn a_directory_of_another_run_cannot_be_claimed() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("ck");
        checkpoint(&root, "1111111111111111", 7);
        claim(&root, "1111111111111111").unwrap();
        let e = claim(&root, "2222222222222222").unwrap_err().to_string();
        assert!(
            e.contains("holds checkpoints of another run (run id 1111111111111111, scenario name lake)")
                && e.contains("--checkpoint-dir"),
            "{e}"
        );
        assert_eq!(run_id(&step_dir(&root, 7)).unwrap(), "1111111111111111");
        // Checkpoints without a claim (an older pycno's) are not anyone's to take over.
        fs::remove_file(root.join(RUN_FILE)).unwrap();
        let e = claim(&root, "3333333333333333").unwrap_err().to_string();
        assert!(e.contains("another run (run id unknown"), "{e}");
        // An empty directory is claimed.
        claim(&d.path().join("fresh"), "4444444444444444").unwrap();
        // A restart from a checkpoint goes on under its run id, here and elsewhere; a new
        // run is refused where another run's checkpoints are.
        let a = d.path().join("a");
        let ck = checkpoint(&a, "5555555555555555", 3);
        claim_for(&a, Some(&ck)).unwrap();
        claim_for(&a, Some(&a)).unwrap();
        claim_for(&d.path().join("b"), Some(&ck)).unwrap();
        assert_eq!(claimed(&d.path().join("b")).unwrap().as_deref(), Some("5555555555555555"));
        assert!(claim_for(&a, None).is_err());
        assert_eq!(new_run_id().len(), 16);
    }

    #[test]
    fn an_edited_meta_json_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let dir = checkpoint(d.path(), "aa", 1);
        assert_eq!(read_meta(&dir).unwrap().step, 10);
        let p = dir.join(META);
        let text = fs::read_to_string(&p).unwrap();
        fs::write(&p, text.replace("0.998", "0.5")).unwrap();
        let e = read_meta(&dir).unwrap_err().to_string();
        assert!(e.contains("was modified after it was written (checksum mismatch)") && e.contains("meta.json"), "{e}");
    }

    #[test]
    fn an_old_version_gets_a_clear_message() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("step_0000000001");
        fs::create_dir_all(&dir).unwrap();
        let mut old = serde_json::to_value(meta()).unwrap();
        old["version"] = 1.into();
        fs::write(dir.join(META), old.to_string()).unwrap();
        let e = read_meta(&dir).unwrap_err().to_string();
        assert!(e.contains("version 1 was written by an earlier pycno") && e.contains("version 3"), "{e}");
    }
}
