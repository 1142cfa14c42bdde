//! Every file pycno writes goes through here: a reader (ParaView, a restarted run,
//! another rank) must never see a half-written file, whatever kills the process.
//!
//! The temporary file sits beside its target (same directory, so the rename is atomic) under
//! a name nobody can guess ahead (process id, clock and a counter, mixed), and is created
//! with `O_CREAT | O_EXCL | O_NOFOLLOW`: a file or symlink planted at that name makes the
//! creation fail (and pycno try another name) instead of writing through it.

use anyhow::{Context, Result};
use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Suffix of every temporary file the atomic writer makes: `.<name>.<16 hex>.tmp`.
pub const TEMP_SUFFIX: &str = ".tmp";

/// A fresh 64-bit value, different on every call in this process and unpredictable from
/// outside it (clock, process id, stack address and a counter through splitmix64).
pub fn unique_u64() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    fn mix(mut z: u64) -> u64 {
        z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let local = 0u8;
    let stack = &local as *const u8 as u64;
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    mix(mix(mix(nanos ^ ((std::process::id() as u64) << 32)) ^ stack) ^ n)
}

/// Whether `name` is one of the atomic writer's temporary names (`.<target>.<16 hex>.tmp`),
/// for cleaners that must remove only what pycno wrote.
pub fn is_temp_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix('.').and_then(|r| r.strip_suffix(TEMP_SUFFIX)) else { return false };
    match rest.rsplit_once('.') {
        Some((target, hex)) => !target.is_empty() && hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()),
        None => false,
    }
}

/// Create `path` as a new file: fails if anything (a file, a symlink) is already there, and
/// never follows a symlink.
pub fn create_new_nofollow(path: &Path) -> std::io::Result<File> {
    OpenOptions::new().write(true).create_new(true).custom_flags(libc::O_NOFOLLOW).open(path)
}

/// Create a temporary file beside `path`; returns it and its name.
fn create_temp(path: &Path) -> Result<(File, PathBuf)> {
    let name = path.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let mut last = None;
    // A clash means someone else holds that name (or planted something there): take another.
    for _ in 0..16 {
        let tmp = path.with_file_name(format!(".{name}.{:016x}{TEMP_SUFFIX}", unique_u64()));
        match create_new_nofollow(&tmp) {
            Ok(f) => return Ok((f, tmp)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e).with_context(|| format!("cannot create {}", tmp.display())),
        }
    }
    Err(last.expect("16 tries")).with_context(|| format!("cannot create a temporary file beside {}", path.display()))
}

/// Write `path` through `fill`: to a temporary file first, synced, then renamed.
/// On any error the temporary is removed and `path` is left as it was.
pub fn write_atomic<F>(path: &Path, fill: F) -> Result<()>
where
    F: FnOnce(&mut BufWriter<File>) -> Result<()>,
{
    if let Some(dir) = path.parent() {
        if !dir.as_os_str().is_empty() {
            fs::create_dir_all(dir).with_context(|| format!("cannot create directory {}", dir.display()))?;
        }
    }
    let (file, tmp) = create_temp(path)?;
    let result = (|| -> Result<()> {
        let mut w = BufWriter::with_capacity(1 << 20, file);
        fill(&mut w)?;
        w.flush().with_context(|| format!("cannot write {}", tmp.display()))?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_all().with_context(|| format!("cannot sync {}", tmp.display()))?;
        fs::rename(&tmp, path).with_context(|| format!("cannot rename {} to {}", tmp.display(), path.display()))?;
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Convenience for callers that already hold the whole file in memory.
pub fn write_bytes_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic(path, |w| {
        w.write_all(bytes).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(())
    })
}

/// Check that `dir` can take new files, by creating and removing a probe file there (with a
/// unique name, never through a symlink). Creates `dir` if missing; `what` names it.
pub fn probe_writable(dir: &Path, what: &str) -> Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("cannot create {what} {}", dir.display()))?;
    let probe = dir.join(format!(".pycno-write-test.{:016x}", unique_u64()));
    create_new_nofollow(&probe).with_context(|| format!("{what} {} is not writable", dir.display()))?;
    let _ = fs::remove_file(&probe);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symlink_at_the_old_predictable_temp_name_is_not_followed() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        fs::write(&victim, b"precious").unwrap();
        let target = d.path().join("out.pvd");
        // The name the writer used before: `.<name>.<pid>.tmp`.
        let old = d.path().join(format!(".out.pvd.{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&victim, &old).unwrap();
        write_bytes_atomic(&target, b"new contents").unwrap();
        assert_eq!(fs::read(&victim).unwrap(), b"precious");
        assert_eq!(fs::read(&target).unwrap(), b"new contents");
        assert!(fs::symlink_metadata(&old).unwrap().file_type().is_symlink(), "the planted link is left alone");
    }

    #[test]
    fn temp_files_are_created_without_following_symlinks() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        fs::write(&victim, b"precious").unwrap();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        assert!(create_new_nofollow(&link).is_err());
        let dangling = d.path().join("dangling");
        std::os::unix::fs::symlink(d.path().join("nowhere"), &dangling).unwrap();
        assert!(create_new_nofollow(&dangling).is_err());
        assert!(!d.path().join("nowhere").exists());
        assert_eq!(fs::read(&victim).unwrap(), b"precious");
    }

    #[test]
    fn temp_names_are_unique_and_recognised() {
        let a = unique_u64();
        let b = unique_u64();
        assert_ne!(a, b);
        assert!(is_temp_name(&format!(".rank_00001.bin.{a:016x}.tmp")));
        assert!(!is_temp_name("rank_00001.bin"));
        assert!(!is_temp_name(".x.tmp"));
        assert!(!is_temp_name(".x.12.tmp"));
    }

    #[test]
    fn a_failed_write_leaves_no_temporary() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("f.txt");
        let r = write_atomic(&target, |_| anyhow::bail!("stop"));
        assert!(r.is_err());
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 0);
    }
}
