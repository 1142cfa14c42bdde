//! Every file pycno writes goes through here: a reader (ParaView, a restarted run,
//! another rank) must never see a half-written file, whatever kills the process.

use anyhow::{Context, Result};
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// The temporary name beside `path` (same directory, so the rename is atomic).
pub fn temp_path(path: &Path) -> PathBuf {
    let name = path.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
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
    let tmp = temp_path(path);
    let result = (|| -> Result<()> {
        let file = File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
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
