//! `.pvd` time collections: the file ParaView opens to step through a run's outputs.

use super::vtk::xml_escape;
use crate::util::atomic::write_atomic;
use anyhow::{bail, Context, Result};
use std::io::Write;
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

    /// Write the whole collection atomically (rewritten after each output, so a reader always
    /// sees a complete file).
    pub fn write(&self, path: &Path) -> Result<()> {
        let mut s = String::new();
        s.push_str("<?xml version=\"1.0\"?>\n");
        s.push_str("<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n");
        s.push_str("  <Collection>\n");
        for (time, file) in &self.entries {
            if !time.is_finite() {
                bail!("cannot write {}: time {time} of {file:?} is not finite", path.display());
            }
            // `{:?}` is the shortest text that reads back to the same f64.
            s.push_str(&format!(
                "    <DataSet timestep=\"{time:?}\" group=\"\" part=\"0\" file=\"{}\"/>\n",
                xml_escape(file)
            ));
        }
        s.push_str("  </Collection>\n");
        s.push_str("</VTKFile>\n");
        write_atomic(path, |w| {
            w.write_all(s.as_bytes()).with_context(|| format!("cannot write {}", path.display()))?;
            Ok(())
        })
    }
}
