//! The partition directory: `manifest.json` (what was partitioned, the statistics) and one
//! binary file per rank, `rank_00000.bin`..., so that each rank of a run reads only its own.
//!
//! Rank file, little endian:
//!
//! ```text
//! magic "PYCNOPRT", u32 format version                        (same place in every version)
//! u32 rank, u32 ranks, u64 mesh fingerprint, u32 global cells, u32 global edges,
//! u32 cells, u32 interior, u32 owned, u32 edges, u32 local edges, u32 sends, u32 receives
//! version 2 only: u32 rings, u32 inner edges, u32 processed edges
//! u32 global cell id  x cells
//! u32 global edge id  x edges
//! per send:    u32 rank, u32 runs, (u32 start, u32 len) x runs
//! per receive: u32 rank, u32 start, u32 len
//! u32 CRC-32 of all the bytes before it
//! ```
//!
//! Version 1 is a partition with one ring of receive cells (first order); version 2 adds
//! the rings and the two edge counts of a partition with two (second order,
//! [`super::submesh`]). A one-ring partition is still written as version 1, byte for byte
//! what pycno wrote before version 2 existed, so that partitions for first order made by
//! either read in both; its manifest says version 1 likewise.
//!
//! Every file is written atomically; the old manifest is removed first and the new one
//! written last, so a directory caught mid-write has no manifest and is not taken for a
//! partition.

use super::stats::Stats;
use super::{RecvFrom, Run, SendTo, Submesh};
use crate::mesh::Mesh;
use crate::util::atomic::write_bytes_atomic;
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::fs;
use std::path::{Path, PathBuf};

pub const MAGIC: &[u8; 8] = b"PYCNOPRT";
/// The newest format version, that of a two-ring partition: bump on any change of the rank
/// file layout or of the manifest's meaning. Versions 1 (one ring) and 2 are read.
pub const FORMAT_VERSION: u32 = 2;
pub const MANIFEST: &str = "manifest.json";
/// The header's bytes in format version 1; version 2 adds three words.
const HEADER_BYTES: usize = 8 + 4 + 4 * 2 + 8 + 4 * 9;

/// The format version a submesh is written in: 1 with one ring, 2 with two.
pub fn version_of(rings: u32) -> u32 {
    if rings >= 2 {
        2
    } else {
        1
    }
}

/// Identifies a global mesh, so that a partition is never used with another one: CRC-32 of
/// the vertices (f64 bits) in the high word, of the triangles in the low word, both in the
/// prepared (Hilbert) order that global cell ids refer to.
pub fn mesh_fingerprint(mesh: &Mesh) -> u64 {
    let mut v = crc32fast::Hasher::new();
    for chunk in mesh.vertices.chunks(4096) {
        let bytes: Vec<u8> = chunk.iter().flat_map(|p| p.iter().flat_map(|x| x.to_le_bytes())).collect();
        v.update(&bytes);
    }
    let mut t = crc32fast::Hasher::new();
    for chunk in mesh.triangles.chunks(4096) {
        let bytes: Vec<u8> = chunk.iter().flat_map(|tri| tri.iter().flat_map(|x| x.to_le_bytes())).collect();
        t.update(&bytes);
    }
    (u64::from(v.finalize()) << 32) | u64::from(t.finalize())
}

pub fn fingerprint_hex(f: u64) -> String {
    format!("{f:016x}")
}

pub fn rank_file(dir: &Path, rank: u32) -> PathBuf {
    dir.join(format!("rank_{rank:05}.bin"))
}

/// The rank file's bytes.
pub fn encode(s: &Submesh) -> Vec<u8> {
    let runs: usize = s.sends.iter().map(|d| 2 + 2 * d.runs.len()).sum();
    let words = s.num_cells() + s.num_edges() + runs + 3 * s.recvs.len();
    let mut b = Vec::with_capacity(HEADER_BYTES + 12 + 4 * words + 4);
    let put = |b: &mut Vec<u8>, x: u32| b.extend_from_slice(&x.to_le_bytes());
    let version = version_of(s.rings);
    b.extend_from_slice(MAGIC);
    put(&mut b, version);
    put(&mut b, s.rank);
    put(&mut b, s.ranks);
    b.extend_from_slice(&s.mesh_fingerprint.to_le_bytes());
    for x in [
        s.global_cells as usize,
        s.global_edges as usize,
        s.num_cells(),
        s.n_interior,
        s.n_owned,
        s.num_edges(),
        s.n_local_edges,
        s.sends.len(),
        s.recvs.len(),
    ] {
        put(&mut b, x as u32);
    }
    if version >= 2 {
        for x in [s.rings as usize, s.n_inner_edges, s.n_pass_edges] {
            put(&mut b, x as u32);
        }
    }
    s.global_cell.iter().for_each(|&c| put(&mut b, c));
    s.global_edge.iter().for_each(|&e| put(&mut b, e));
    for d in &s.sends {
        put(&mut b, d.rank);
        put(&mut b, d.runs.len() as u32);
        for r in &d.runs {
            put(&mut b, r.start);
            put(&mut b, r.len);
        }
    }
    for r in &s.recvs {
        put(&mut b, r.rank);
        put(&mut b, r.start);
        put(&mut b, r.len);
    }
    let crc = crc32fast::hash(&b);
    put(&mut b, crc);
    b
}

/// Reads little-endian words, failing (never panicking) past the end.
struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8]> {
        match self.b.get(self.at..self.at.saturating_add(n)) {
            Some(s) => {
                self.at += n;
                Ok(s)
            }
            None => bail!("its counts run past the end of the data (inconsistent header)"),
        }
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into()?))
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into()?))
    }
    fn count(&mut self) -> Result<usize> {
        Ok(self.u32()? as usize)
    }
    fn u32s(&mut self, n: usize) -> Result<Vec<u32>> {
        let bytes = self.take(n.checked_mul(4).context("count overflow")?)?;
        Ok(bytes.chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect())
    }
}

/// Parse and check a rank file's bytes: magic, format version, checksum, then the
/// structure ([`Submesh::check`]). Errors say what is wrong, not where the bytes came from.
pub fn decode(bytes: &[u8]) -> Result<Submesh> {
    if bytes.len() < 12 || &bytes[..8] != MAGIC {
        if bytes.len() < 12 && MAGIC.starts_with(&bytes[..bytes.len().min(8)]) {
            bail!("truncated: {} bytes, shorter than the header", bytes.len());
        }
        bail!("not a pycno partition file (no PYCNOPRT magic)");
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into()?);
    if !(1..=FORMAT_VERSION).contains(&version) {
        bail!("partition format version {version}, but this pycno reads versions 1 to {FORMAT_VERSION}: partition the mesh again");
    }
    if bytes.len() < HEADER_BYTES + 4 {
        bail!("truncated: {} bytes, shorter than the header", bytes.len());
    }
    let (body, tail) = bytes.split_at(bytes.len() - 4);
    let stored = u32::from_le_bytes(tail.try_into()?);
    let actual = crc32fast::hash(body);
    if stored != actual {
        bail!("checksum mismatch (stored {stored:08x}, computed {actual:08x}): the file is corrupted or truncated");
    }
    let mut c = Cursor { b: body, at: 12 };
    let rank = c.u32()?;
    let ranks = c.u32()?;
    let mesh_fingerprint = c.u64()?;
    let global_cells = c.u32()?;
    let global_edges = c.u32()?;
    let (n_cells, n_interior, n_owned) = (c.count()?, c.count()?, c.count()?);
    let (n_edges, n_local_edges) = (c.count()?, c.count()?);
    let (n_sends, n_recvs) = (c.count()?, c.count()?);
    let (rings, n_inner_edges, n_pass_edges) =
        if version >= 2 { (c.u32()?, c.count()?, c.count()?) } else { (1, 0, n_edges) };
    let global_cell = c.u32s(n_cells)?;
    let global_edge = c.u32s(n_edges)?;
    let mut sends = Vec::new();
    for _ in 0..n_sends {
        let rank = c.u32()?;
        let n_runs = c.count()?;
        let w = c.u32s(n_runs.checked_mul(2).context("count overflow")?)?;
        let runs = w.chunks_exact(2).map(|p| Run { start: p[0], len: p[1] }).collect();
        sends.push(SendTo { rank, runs });
    }
    let mut recvs = Vec::new();
    for _ in 0..n_recvs {
        recvs.push(RecvFrom { rank: c.u32()?, start: c.u32()?, len: c.u32()? });
    }
    if c.at != body.len() {
        bail!("{} bytes left over after the data its header describes", body.len() - c.at);
    }
    let s = Submesh {
        rank,
        ranks,
        mesh_fingerprint,
        global_cells,
        global_edges,
        global_cell,
        n_interior,
        n_owned,
        global_edge,
        rings,
        n_inner_edges,
        n_local_edges,
        n_pass_edges,
        sends,
        recvs,
    };
    if version_of(s.rings) != version {
        bail!("format version {version} with {} rings of receive cells", s.rings);
    }
    s.check().context("inconsistent submesh")?;
    Ok(s)
}

/// Write one rank's file atomically; returns its size.
pub fn write_rank(dir: &Path, s: &Submesh) -> Result<u64> {
    let bytes = encode(s);
    write_bytes_atomic(&rank_file(dir, s.rank), &bytes)?;
    Ok(bytes.len() as u64)
}

/// Read rank `rank`'s file from `dir`, rejecting a corrupted or truncated file, another
/// format version, a partition of another mesh or into another number of ranks.
pub fn read_rank(dir: &Path, rank: u32, expected_mesh_fingerprint: u64, expected_ranks: u32) -> Result<Submesh> {
    let path = rank_file(dir, rank);
    let bytes = crate::util::files::read_regular(&path)
        .with_context(|| format!("cannot read partition file {}", path.display()))?;
    let s = decode(&bytes).with_context(|| format!("partition file {}", path.display()))?;
    let fail = |what: String| Err(anyhow::anyhow!("partition file {}: {what}", path.display()));
    if s.mesh_fingerprint != expected_mesh_fingerprint {
        return fail(format!(
            "made for another mesh (fingerprint {}, this mesh has {}): partition this mesh again",
            fingerprint_hex(s.mesh_fingerprint),
            fingerprint_hex(expected_mesh_fingerprint)
        ));
    }
    if s.ranks != expected_ranks {
        return fail(format!("a partition into {} ranks, but this run has {expected_ranks}", s.ranks));
    }
    if s.rank != rank {
        return fail(format!("holds rank {}, not {rank}", s.rank));
    }
    Ok(s)
}

/// `DIR/manifest.json`: how the partition was made and its statistics.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always "pycno-partition".
    pub format: String,
    pub format_version: u32,
    /// Hex, as [`fingerprint_hex`].
    pub mesh_fingerprint: String,
    /// The scenario or mesh file partitioned (or "paper benchmark").
    pub source: String,
    pub method: String,
    pub metis_seed: i64,
    /// Whole command, mesh included.
    pub seconds: f64,
    pub timings: Timings,
    /// Whether every rank has a geometry file (`rank_NNNNN.geo`, [`super::geometry`]): a run
    /// then reads only its own two files and never builds the global mesh. Partitions made
    /// before issue 22 have none; a run then builds the global mesh, as it did.
    #[serde(default)]
    pub rank_geometry: bool,
    /// Identity of the mesh's source (`mesh_source_id` of the app module, hex): how a run that
    /// never meshes knows the partition was made for its scenario's mesh.
    #[serde(default)]
    pub mesh_source: String,
    /// Peak resident memory of the `pycno partition` that wrote it (`VmHWM`), bytes; 0 where
    /// it cannot be read.
    #[serde(default)]
    pub peak_memory: u64,
    #[serde(flatten)]
    pub stats: Stats,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Timings {
    pub mesh: f64,
    pub metis: f64,
    pub submeshes: f64,
    pub write: f64,
}

pub const FORMAT_NAME: &str = "pycno-partition";

/// Remove a previous manifest before rewriting a directory (see the module docs).
pub fn begin_write(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("cannot create directory {}", dir.display()))?;
    let m = dir.join(MANIFEST);
    match fs::remove_file(&m) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("cannot remove the old {}", m.display()))
        }
        _ => Ok(()),
    }
}

/// Remove rank files (and geometry files) of an earlier partition into more ranks.
pub fn remove_stale(dir: &Path, ranks: u32) -> Result<()> {
    let entries = fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let index = name
            .strip_prefix("rank_")
            .and_then(|s| s.strip_suffix(".bin").or_else(|| s.strip_suffix(".geo")))
            .and_then(|s| s.parse::<u32>().ok());
        if matches!(index, Some(r) if r >= ranks) {
            fs::remove_file(entry.path()).with_context(|| format!("cannot remove stale {}", entry.path().display()))?;
        }
    }
    Ok(())
}

pub fn write_manifest(dir: &Path, m: &Manifest) -> Result<()> {
    let mut text = serde_json::to_string_pretty(m)?;
    text.push('\n');
    write_bytes_atomic(&dir.join(MANIFEST), text.as_bytes())
}

pub fn read_manifest(dir: &Path) -> Result<Manifest> {
    let path = dir.join(MANIFEST);
    let text = crate::util::files::read_regular_to_string(&path).with_context(|| {
        format!("cannot read {} (not a partition directory, or one still being written)", path.display())
    })?;
    // Format and version first, so a manifest of another version is named as such rather
    // than reported as malformed.
    let value: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not a valid partition manifest", path.display()))?;
    let format = value.get("format").and_then(|v| v.as_str()).unwrap_or("(none)");
    let version = value.get("format_version").and_then(|v| v.as_u64());
    if format != FORMAT_NAME || !version.is_some_and(|v| (1..=u64::from(FORMAT_VERSION)).contains(&v)) {
        bail!(
            "{}: format {format:?} version {}, but this pycno reads {FORMAT_NAME} versions 1 to {FORMAT_VERSION}: partition the mesh again",
            path.display(),
            version.map_or("(none)".to_string(), |v| v.to_string())
        );
    }
    let m: Manifest =
        serde_json::from_value(value).with_context(|| format!("{}: not a valid partition manifest", path.display()))?;
    Ok(m)
}

/// The manifest's fingerprint as a number.
pub fn manifest_fingerprint(m: &Manifest) -> Result<u64> {
    u64::from_str_radix(&m.mesh_fingerprint, 16)
        .with_context(|| format!("bad mesh fingerprint {:?} in the manifest", m.mesh_fingerprint))
}

/// The manifest's mesh source identity as a number (0 in partitions made before issue 22).
pub fn manifest_source(m: &Manifest) -> Result<u64> {
    if m.mesh_source.is_empty() {
        return Ok(0);
    }
    u64::from_str_radix(&m.mesh_source, 16)
        .with_context(|| format!("bad mesh source {:?} in the manifest", m.mesh_source))
}
