//! Reading input files safely: only regular files. A path that names a FIFO would block the
//! open (or the read) forever, and a device such as `/dev/zero` would be read until memory
//! runs out; both are refused with an error that names the path.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// What kind of file `t` is, for the error message.
fn kind(t: std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else {
        "not a regular file"
    }
}

/// Open `path` for reading if it is a regular file. The open itself never blocks: it is made
/// with `O_NONBLOCK` (which a FIFO would need to not wait for a writer; a regular file
/// ignores it) and the file type is then taken from the open file, so nothing can be swapped
/// in between the check and the read. The error is an `io::Error` whose text says what the
/// path is instead ("not a regular file: it is a FIFO (named pipe)").
pub fn open_regular(path: &Path) -> std::io::Result<File> {
    let f = OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)?;
    let t = f.metadata()?.file_type();
    if !t.is_file() {
        return Err(std::io::Error::other(format!("not a regular file: it is {}", kind(t))));
    }
    Ok(f)
}

/// The whole of the regular file `path`.
pub fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut f = open_regular(path)?;
    let mut v = Vec::with_capacity(f.metadata().map_or(0, |m| m.len() as usize).min(1 << 30));
    f.read_to_end(&mut v)?;
    Ok(v)
}

/// The whole of the regular file `path` as UTF-8 text.
pub fn read_regular_to_string(path: &Path) -> std::io::Result<String> {
    String::from_utf8(read_regular(path)?)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "stream did not contain valid UTF-8"))
}

/// At most the first 80 characters of `line`, for an error message quoting what a file holds
/// (a garbage line may be megabytes long).
pub fn excerpt(line: &str) -> String {
    match line.char_indices().nth(80) {
        Some((i, _)) => format!("{}...", &line[..i]),
        None => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("pipe.msh");
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: plain libc call with a valid, NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_regular(&p).unwrap_err().to_string();
        assert!(e.contains("not a regular file") && e.contains("FIFO"), "{e}");
    }

    #[test]
    fn directories_and_devices_are_refused_regular_files_read() {
        let d = tempfile::tempdir().unwrap();
        let e = read_regular(d.path()).unwrap_err().to_string();
        assert!(e.contains("directory"), "{e}");
        let e = read_regular(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(e.contains("character device"), "{e}");
        let f = d.path().join("a.txt");
        std::fs::write(&f, "abc").unwrap();
        assert_eq!(read_regular_to_string(&f).unwrap(), "abc");
    }
}

/// The path of `target` relative to the directory `base`, both absolute and free of `.`
/// and `..` (as `canonicalize` returns them): `base/../x` style, for references that must
/// resolve from `base` (a restarted run's `.pvd` listing the frames an earlier run wrote in
/// another directory).
pub fn relative_path(base: &Path, target: &Path) -> std::path::PathBuf {
    let (b, t): (Vec<_>, Vec<_>) = (base.components().collect(), target.components().collect());
    let common = b.iter().zip(&t).take_while(|(x, y)| x == y).count();
    let mut out = std::path::PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &t[common..] {
        out.push(c.as_os_str());
    }
    out
}

#[cfg(test)]
mod relative_tests {
    use super::relative_path;
    use std::path::Path;

    #[test]
    fn relative_paths_resolve_from_the_base() {
        let r = |b: &str, t: &str| relative_path(Path::new(b), Path::new(t)).display().to_string();
        assert_eq!(r("/a/b/new", "/a/b/old/f.vtu"), "../old/f.vtu");
        assert_eq!(r("/a/b", "/a/b/f.vtu"), "f.vtu");
        assert_eq!(r("/x/y/z", "/a/f.vtu"), "../../../a/f.vtu");
        assert_eq!(r("/a/b/c", "/a/b/c/d/e.vtu"), "d/e.vtu");
    }
}
