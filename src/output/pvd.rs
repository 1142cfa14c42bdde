//! `.pvd` time collections: the file ParaView opens to step through a run's outputs.

use super::vtk::xml_escape;
use crate::util::atomic::write_atomic;
use anyhow::{bail, Context, Result};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

/// A list of (time, file) entries; `file` is relative to the `.pvd` itself.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PvdCollection {
    entries: Vec<(f64, String)>,
}

impl PvdCollection {
    pub fn new() -> Self {
        Self::default()
    }

    /// Add one output time; `file` is a path relative to the `.pvd`.
    pub fn push(&mut self, time: f64, file: &str) {
        self.entries.push((time, file.to_owned()));
    }

    /// A collection that goes on from earlier entries (a restarted run).
    pub fn from_entries(entries: Vec<(f64, String)>) -> Self {
        PvdCollection { entries }
    }

    pub fn entries(&self) -> &[(f64, String)] {
        &self.entries
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Write the whole collection atomically.
    pub fn write(&self, path: &Path) -> Result<()> {
        let mut s = String::from(HEAD);
        for (time, file) in &self.entries {
            s.push_str(&dataset_line(path, *time, file)?);
        }
        s.push_str(TAIL);
        write_atomic(path, |w| {
            w.write_all(s.as_bytes()).with_context(|| format!("cannot write {}", path.display()))?;
            Ok(())
        })
    }
}

const HEAD: &str = "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n  <Collection>\n";
/// The closing tags: the only bytes of the file that are ever overwritten.
const TAIL: &str = "  </Collection>\n</VTKFile>\n";

fn dataset_line(path: &Path, time: f64, file: &str) -> Result<String> {
    if !time.is_finite() {
        bail!("cannot write {}: time {time} of {file:?} is not finite", path.display());
    }
    // `{:?}` is the shortest text that reads back to the same f64.
    Ok(format!("    <DataSet timestep=\"{time:?}\" group=\"\" part=\"0\" file=\"{}\"/>\n", xml_escape(file)))
}

/// A `.pvd` on disk that grows by one `DataSet` line per frame at a cost independent of the
/// frames before it: the first [`sync`](Self::sync) writes the whole collection atomically,
/// later ones write the new lines and the closing tags over the old closing tags, in one
/// write, then sync. The bytes before the closing tags are never rewritten, and after every
/// frame (and after a kill between two) the file is complete XML that ParaView opens.
#[derive(Debug, Default)]
pub struct PvdFile {
    open: Option<(File, u64)>,
    /// Entries of the collection already in the file.
    written: usize,
}

impl PvdFile {
    pub fn new() -> Self {
        Self::default()
    }

    /// Bring the file at `path` up to `pvd` (which only ever grows after the first call).
    pub fn sync(&mut self, pvd: &PvdCollection, path: &Path) -> Result<()> {
        let entries = pvd.entries();
        let Some((file, tail_at)) = self.open.as_mut().filter(|_| self.written <= entries.len()) else {
            pvd.write(path)?;
            let file = OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(path)
                .with_context(|| format!("cannot open {} to extend it", path.display()))?;
            let len = file.metadata().with_context(|| format!("cannot read {}", path.display()))?.len();
            self.open = Some((file, len - TAIL.len() as u64));
            self.written = entries.len();
            return Ok(());
        };
        if self.written == entries.len() {
            return Ok(());
        }
        // Writing through the open file into a `.pvd` that was removed or replaced during the
        // run (by a directory, or with the whole output directory) would end the run "fine"
        // with no `.pvd` at all.
        let on_disk = std::fs::symlink_metadata(path);
        let open = file.metadata().with_context(|| format!("cannot read {}", path.display()))?;
        if !on_disk.as_ref().is_ok_and(|m| m.dev() == open.dev() && m.ino() == open.ino()) {
            let now = match on_disk {
                Ok(m) if m.is_dir() => "a directory now".to_string(),
                Ok(_) => "another file now".to_string(),
                Err(e) => format!("gone: {e}"),
            };
            bail!(
                "cannot extend {}: it was removed or replaced during the run ({now}); the frames written so far are \
                 listed in no .pvd",
                path.display()
            );
        }
        let mut lines = String::new();
        for (time, f) in &entries[self.written..] {
            lines.push_str(&dataset_line(path, *time, f)?);
        }
        let bytes = [lines.as_bytes(), TAIL.as_bytes()].concat();
        let done = file.write_all_at(&bytes, *tail_at).and_then(|_| file.sync_data());
        if let Err(e) = done {
            // Put the closing tags back where they were, so the file stays complete.
            let _ = file.write_all_at(TAIL.as_bytes(), *tail_at);
            let _ = file.set_len(*tail_at + TAIL.len() as u64);
            let _ = file.sync_data();
            return Err(e).with_context(|| format!("cannot extend {}", path.display()));
        }
        *tail_at += lines.len() as u64;
        self.written = entries.len();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pvd_is_extended_in_place_and_stays_complete() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("run.pvd");
        let mut pvd = PvdCollection::new();
        let mut file = PvdFile::new();
        pvd.push(0.0, "run_00000.vtu");
        file.sync(&pvd, &path).unwrap();
        let first = std::fs::read(&path).unwrap();
        let inode = std::fs::metadata(&path).unwrap().ino();
        for k in 1..200 {
            pvd.push(k as f64 * 0.1, &format!("run_{k:05}.vtu"));
            file.sync(&pvd, &path).unwrap();
            let now = std::fs::read(&path).unwrap();
            // Never replaced (the cost of a frame does not grow with the frames before it),
            // never rewritten before the closing tags, and always complete.
            assert_eq!(std::fs::metadata(&path).unwrap().ino(), inode, "frame {k}: the file was replaced");
            assert_eq!(&now[..first.len() - TAIL.len()], &first[..first.len() - TAIL.len()]);
            let mut whole = Vec::new();
            let atomic = d.path().join("atomic.pvd");
            pvd.write(&atomic).unwrap();
            whole.extend(std::fs::read(&atomic).unwrap());
            assert_eq!(now, whole, "frame {k}");
        }
    }

    /// Issue 46: a `.pvd` replaced by a directory, or removed with its directory, during the
    /// run was extended through the open file and the run ended with exit 0 and no `.pvd`.
    #[test]
    fn a_pvd_removed_or_replaced_during_the_run_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("run.pvd");
        let mut pvd = PvdCollection::new();
        let mut file = PvdFile::new();
        pvd.push(0.0, "run_00000.vtu");
        file.sync(&pvd, &path).unwrap();
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        pvd.push(1.0, "run_00001.vtu");
        let e = format!("{:#}", file.sync(&pvd, &path).unwrap_err());
        assert!(e.contains("run.pvd") && e.contains("removed or replaced") && e.contains("a directory now"), "{e}");
        std::fs::remove_dir(&path).unwrap();
        let e = format!("{:#}", file.sync(&pvd, &path).unwrap_err());
        assert!(e.contains("gone"), "{e}");
    }

    #[test]
    fn a_resumed_series_rewrites_once_then_appends() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("run.pvd");
        std::fs::write(&path, "stale").unwrap();
        let mut pvd = PvdCollection::from_entries(vec![(0.0, "a.vtu".into()), (0.5, "b.vtu".into())]);
        let mut file = PvdFile::new();
        pvd.push(1.0, "c.vtu");
        file.sync(&pvd, &path).unwrap();
        pvd.push(1.5, "d&e.vtu");
        file.sync(&pvd, &path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with(HEAD) && text.ends_with(TAIL), "{text}");
        assert_eq!(text.matches("<DataSet").count(), 4, "{text}");
        assert!(text.contains("file=\"d&amp;e.vtu\""), "{text}");
    }
}
