//! Mesh file formats: Shewchuk's Triangle (`.node` + `.ele` [+ `.edge`]), Gmsh ASCII
//! (`.msh`, versions 4.1 and 2.2) and pycno's own binary format (`.pmsh`).
//!
//! Readers return the raw [`Mesh`] as the file describes it and do not run
//! [`check::check_and_orient`](super::check::check_and_orient): the caller does. Every error
//! from a text reader names the file and the line (`file:line: what was expected, what was
//! found`). Every writer goes through [`write_atomic`](crate::util::atomic::write_atomic).

pub mod gmsh;
pub mod native;
pub mod triangle;

pub use gmsh::{read_gmsh, read_gmsh_bytes, write_gmsh, GmshVersion};
pub use native::{read_native, read_native_bytes, write_native};
pub use triangle::{read_triangle, read_triangle_bytes, write_triangle};

use super::Mesh;
use anyhow::{anyhow, bail, Result};
use std::fmt::Display;
use std::path::Path;

/// What [`read_mesh`] and [`write_mesh`] understand, for error messages.
pub const SUPPORTED: &str = ".node or .ele (Triangle), .msh (Gmsh ASCII 4.1 or 2.2), .pmsh (pycno native binary)";

fn extension(path: &Path) -> Option<String> {
    path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase())
}

fn unknown_extension(path: &Path) -> anyhow::Error {
    match path.extension() {
        Some(e) => anyhow!(
            "{}: unknown mesh file extension \".{}\": supported are {SUPPORTED}",
            path.display(),
            e.to_string_lossy()
        ),
        None => anyhow!(
            "{}: the file name has no extension, so its format is unknown: supported are {SUPPORTED}",
            path.display()
        ),
    }
}

/// Read a mesh, choosing the format by the extension: `.node`/`.ele` (Triangle: the pair
/// `base.node` + `base.ele`, plus `base.edge` if present), `.msh` (Gmsh ASCII 4.1 or 2.2),
/// `.pmsh` (native).
pub fn read_mesh(path: &Path) -> Result<Mesh> {
    // Before the extension: `mesh: "."` was blamed on its missing extension.
    if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        bail!("{}: is a directory, not a mesh file: give the mesh file's path ({SUPPORTED})", path.display());
    }
    match extension(path).as_deref() {
        Some("node") | Some("ele") => read_triangle(path),
        Some("msh") => read_gmsh(path),
        Some("pmsh") => read_native(path),
        _ => Err(unknown_extension(path)),
    }
}

/// Write a mesh, choosing the format by the extension (`.msh` writes Gmsh 4.1;
/// `.node`/`.ele` write the Triangle files `base.node`, `base.ele` and `base.edge`).
pub fn write_mesh(path: &Path, mesh: &Mesh) -> Result<()> {
    match extension(path).as_deref() {
        Some("node") | Some("ele") => write_triangle(path, mesh),
        Some("msh") => write_gmsh(path, mesh, GmshVersion::V41),
        Some("pmsh") => write_native(path, mesh),
        _ => Err(unknown_extension(path)),
    }
}

// ---------------------------------------------------------------------------------------
// Shared helpers for the text readers.

/// An I/O error's reason without Rust's " (os error N)" suffix.
pub(crate) fn io_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error ") {
        Some(i) if s.ends_with(')') => s[..i].to_string(),
        _ => s,
    }
}

/// The whole file, or "cannot open FILE: reason". Only regular files: a FIFO would block
/// the open forever and a device would be read until memory runs out ("cannot open FILE:
/// not a regular file: it is a FIFO (named pipe)").
pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>> {
    crate::util::files::read_regular(path).map_err(|e| anyhow!("cannot open {}: {}", path.display(), io_reason(&e)))
}

/// A token as shown in an error message: quoted, and clipped when long (binary junk).
pub(crate) fn show(tok: &str) -> String {
    const MAX: usize = 40;
    if tok.chars().count() <= MAX {
        format!("\"{tok}\"")
    } else {
        let clipped: String = tok.chars().take(MAX).collect();
        format!("\"{clipped}...\"")
    }
}

/// A capacity for `count` records announced by a header, capped by what the rest of the
/// file can hold (`min_bytes` per record), so that a bogus count allocates nothing huge.
pub(crate) fn capacity(count: u64, remaining_bytes: usize, min_bytes: usize) -> usize {
    let most = remaining_bytes / min_bytes.max(1) + 1;
    (count.min(most as u64)) as usize
}

/// Lines of a text file held in memory, skipping blank lines (and `#` comments when asked),
/// with the number of the current line for error messages.
pub(crate) struct TextLines<'a> {
    name: String,
    data: &'a [u8],
    pos: usize,
    line: usize,
    hash_comments: bool,
}

impl<'a> TextLines<'a> {
    pub fn new(path: &Path, data: &'a [u8], hash_comments: bool) -> Self {
        TextLines { name: path.display().to_string(), data, pos: 0, line: 0, hash_comments }
    }

    /// The next line with content, trimmed of whitespace (and of a `#` comment); `None` at
    /// the end of the file, where [`line`](Self::line) is the number of the last line.
    pub fn next(&mut self) -> Result<Option<&'a str>> {
        while self.pos < self.data.len() {
            let rest = &self.data[self.pos..];
            let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
            let mut bytes = &rest[..end];
            self.pos += end + 1;
            self.line += 1;
            if self.hash_comments {
                if let Some(c) = bytes.iter().position(|&b| b == b'#') {
                    bytes = &bytes[..c];
                }
            }
            let bytes = bytes.trim_ascii();
            if bytes.is_empty() {
                continue;
            }
            return match std::str::from_utf8(bytes) {
                Ok(s) => Ok(Some(s)),
                Err(_) => Err(self.err("the line is not text (invalid UTF-8): is this a binary file?")),
            };
        }
        Ok(None)
    }

    /// The file's name as errors show it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The number of the line last returned (1-based; at least 1).
    pub fn line(&self) -> usize {
        self.line.max(1)
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }

    /// `FILE:LINE: msg` at the current line.
    pub fn err(&self, msg: impl Display) -> anyhow::Error {
        anyhow!("{}:{}: {}", self.name, self.line(), msg)
    }

    /// `FILE:LINE: msg` at another line.
    pub fn err_at(&self, line: usize, msg: impl Display) -> anyhow::Error {
        anyhow!("{}:{}: {}", self.name, line.max(1), msg)
    }

    /// The first `N` fields of `line`, which must have between `min` and `max` fields
    /// (`N <= min`); `what` names them for the error message.
    pub fn fields<const N: usize>(&self, line: &'a str, min: u64, max: u64, what: &str) -> Result<[&'a str; N]> {
        let mut out = [""; N];
        let mut it = line.split_ascii_whitespace();
        let mut found = 0u64;
        for slot in out.iter_mut() {
            match it.next() {
                Some(t) => {
                    *slot = t;
                    found += 1;
                }
                None => break,
            }
        }
        if found == N as u64 {
            found += it.count() as u64;
        }
        if found < min || found > max || found < N as u64 {
            let want = if min == max {
                format!("{min}")
            } else if max == u64::MAX {
                format!("at least {min}")
            } else {
                format!("{min} to {max}")
            };
            let s = if min == 1 && max == 1 { "" } else { "s" };
            bail!(self.err(format!("expected {want} field{s} ({what}), found {found}")));
        }
        Ok(out)
    }

    /// Field number `k` (1-based) as a non-negative integer.
    pub fn uint(&self, tok: &str, k: usize) -> Result<u64> {
        tok.parse::<u64>().map_err(|_| self.err(format!("field {k} {} is not a non-negative integer", show(tok))))
    }

    /// Field number `k` (1-based) as an integer.
    pub fn int(&self, tok: &str, k: usize) -> Result<i64> {
        tok.parse::<i64>().map_err(|_| self.err(format!("field {k} {} is not an integer", show(tok))))
    }

    /// Field number `k` (1-based) as a floating-point number.
    pub fn float(&self, tok: &str, k: usize) -> Result<f64> {
        tok.parse::<f64>().map_err(|_| self.err(format!("field {k} {} is not a number", show(tok))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn lines_skip_blanks_and_comments_and_count_lines() {
        let data = b"# header comment\n\n  3 2 0 0  # trailing\r\n\n1 0 0\n";
        let p = PathBuf::from("x.node");
        let mut r = TextLines::new(&p, data, true);
        assert_eq!(r.next().unwrap(), Some("3 2 0 0"));
        assert_eq!(r.line(), 3);
        assert_eq!(r.next().unwrap(), Some("1 0 0"));
        assert_eq!(r.line(), 5);
        assert_eq!(r.next().unwrap(), None);
        assert_eq!(r.line(), 5);
    }

    #[test]
    fn hash_is_data_without_comments() {
        let p = PathBuf::from("x.msh");
        let mut r = TextLines::new(&p, b"1 \"a#b\"\n", false);
        assert_eq!(r.next().unwrap(), Some("1 \"a#b\""));
    }

    #[test]
    fn field_count_and_number_errors_name_file_and_line() {
        let p = PathBuf::from("a.ele");
        let mut r = TextLines::new(&p, b"\n\n1 2 3\n", true);
        let l = r.next().unwrap().unwrap();
        let e = r.fields::<4>(l, 4, 4, "id v0 v1 v2").unwrap_err().to_string();
        assert_eq!(e, "a.ele:3: expected 4 fields (id v0 v1 v2), found 3");
        let e = r.float("1.0e", 2).unwrap_err().to_string();
        assert_eq!(e, "a.ele:3: field 2 \"1.0e\" is not a number");
        let e = r.fields::<2>(l, 2, 2, "a b").unwrap_err().to_string();
        assert!(e.contains("expected 2 fields (a b), found 3"), "{e}");
        assert!(r.fields::<2>(l, 2, u64::MAX, "a b").is_ok());
    }

    #[test]
    fn non_utf8_line_is_an_error_not_a_panic() {
        let p = PathBuf::from("b.msh");
        let mut r = TextLines::new(&p, b"ok\n\xff\xfe\x00\n", false);
        assert!(r.next().unwrap().is_some());
        let e = r.next().unwrap_err().to_string();
        assert!(e.starts_with("b.msh:2:"), "{e}");
    }

    #[test]
    fn capacity_is_capped_by_file_size() {
        assert_eq!(capacity(10, 1000, 6), 10);
        assert!(capacity(u64::MAX, 600, 6) <= 101);
    }

    #[test]
    fn a_directory_is_named_as_one() {
        let d = tempfile::tempdir().unwrap();
        for p in [d.path().to_path_buf(), d.path().join("."), d.path().join("m.msh")] {
            std::fs::create_dir_all(&p).unwrap();
            let e = format!("{:#}", read_mesh(&p).unwrap_err());
            assert!(e.contains("is a directory, not a mesh file"), "{e}");
        }
    }

    #[test]
    fn unknown_extension_lists_supported() {
        let e = read_mesh(Path::new("a.stl")).unwrap_err().to_string();
        assert!(e.contains(".stl") && e.contains(".msh") && e.contains(".pmsh") && e.contains(".node"), "{e}");
        let e = write_mesh(Path::new("a"), &Mesh::default()).unwrap_err().to_string();
        assert!(e.contains("no extension"), "{e}");
    }

    #[test]
    fn missing_file_says_cannot_open() {
        let e = read_file(Path::new("/nonexistent/x.node")).unwrap_err().to_string();
        assert_eq!(e, "cannot open /nonexistent/x.node: No such file or directory");
    }
}
