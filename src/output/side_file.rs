//! The frame shared by a checkpoint's per-rank side files (`budget_RRRRR.bin`,
//! `maxmap_RRRRR.bin`), so that both are written and checked one way.
//!
//! Little endian: an 8-byte magic, u32 version, u32 word (the format's own: numbers per item,
//! or 0), u64 step, u64 items, the payload (`items × item_bytes`), then the CRC-32 of
//! everything before it.

use crate::util::atomic::write_bytes_atomic;
use crate::util::files::read_regular;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

pub const HEADER: usize = 8 + 4 + 4 + 8 + 8;

/// One kind of side file.
pub struct Kind {
    pub magic: &'static [u8; 8],
    pub version: u32,
    /// The header's u32 word, checked on reading.
    pub word: u32,
    /// File name prefix (`budget` for `budget_00003.bin`).
    pub prefix: &'static str,
    /// What messages call a file ("boundary budget") and an item ("edge").
    pub noun: &'static str,
    pub item: &'static str,
    /// Bytes per item in the payload.
    pub item_bytes: usize,
}

impl Kind {
    pub fn file(&self, dir: &Path, rank: usize) -> PathBuf {
        dir.join(format!("{}_{rank:05}.bin", self.prefix))
    }

    /// Whether `name` is one of these files (checkpoint pruning removes only pycno's files).
    pub fn is_file_name(&self, name: &str) -> bool {
        let rank =
            name.strip_prefix(self.prefix).and_then(|r| r.strip_prefix('_')).and_then(|r| r.strip_suffix(".bin"));
        rank.is_some_and(|r| r.len() == 5 && r.bytes().all(|b| b.is_ascii_digit()))
    }

    /// Write rank `rank`'s file at `step` with `items` items, `payload` appending their bytes.
    pub fn write(
        &self,
        dir: &Path,
        rank: usize,
        step: u64,
        items: usize,
        payload: impl FnOnce(&mut Vec<u8>),
    ) -> Result<()> {
        let mut b = Vec::with_capacity(HEADER + items * self.item_bytes + 4);
        b.extend_from_slice(self.magic);
        b.extend_from_slice(&self.version.to_le_bytes());
        b.extend_from_slice(&self.word.to_le_bytes());
        b.extend_from_slice(&step.to_le_bytes());
        b.extend_from_slice(&(items as u64).to_le_bytes());
        payload(&mut b);
        let crc = crc32fast::hash(&b);
        b.extend_from_slice(&crc.to_le_bytes());
        write_bytes_atomic(&self.file(dir, rank), &b)
    }

    /// Rank `rank`'s file, checked (magic, checksum, version and word, `step`, size): its
    /// item count and its bytes without the checksum (the payload starts at [`HEADER`]).
    /// `context`: what a file that cannot be read is needed for, for the message.
    pub fn read(&self, dir: &Path, rank: usize, step: u64, context: &str) -> Result<(usize, Vec<u8>)> {
        let path = self.file(dir, rank);
        let mut b = read_regular(&path).with_context(|| format!("cannot read {}{context}", path.display()))?;
        let what = |m: &str| anyhow::anyhow!("{} file {}: {m}", self.noun, path.display());
        if b.len() < HEADER + 4 || &b[..8] != self.magic {
            return Err(what(&format!("truncated, or not a pycno {} file", self.noun)));
        }
        let tail = b.split_off(b.len() - 4);
        if crc32fast::hash(&b) != u32::from_le_bytes(tail[..].try_into().unwrap()) {
            return Err(what("checksum mismatch: the file is corrupted or truncated"));
        }
        if u32_at(&b, 8) != self.version || u32_at(&b, 12) != self.word {
            return Err(what("another version of the format"));
        }
        if u64_at(&b, 16) != step {
            return Err(what("written at another step than its checkpoint"));
        }
        let n = u64_at(&b, 24);
        let size = n.checked_mul(self.item_bytes as u64).and_then(|x| x.checked_add(HEADER as u64));
        if size != Some(b.len() as u64) {
            return Err(what(&format!("wrong size for its {} count", self.item)));
        }
        Ok((n as usize, b))
    }
}

pub fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().unwrap())
}

fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().unwrap())
}

pub fn f64_at(b: &[u8], o: usize) -> f64 {
    f64::from_le_bytes(b[o..o + 8].try_into().unwrap())
}
