//! pycno's native binary mesh format (`.pmsh`), little-endian:
//!
//! | bytes        | content                                   |
//! |--------------|-------------------------------------------|
//! | 8            | magic `b"PYCNOMSH"`                       |
//! | 4            | `u32` format version (1)                  |
//! | 8, 8, 8      | `u64` vertex, triangle, segment counts    |
//! | 16 per vertex| `f64` x, y                                |
//! | 12 per tri   | `u32` v0, v1, v2                          |
//! | 12 per seg   | `u32` v0, v1, tag                         |
//! | 4            | `u32` CRC-32 (crc32fast) of all the above |

use super::{io_reason, read_file};
use crate::mesh::{BoundarySegment, Mesh};
use crate::util::atomic::write_atomic;
use anyhow::{anyhow, bail, Result};
use std::io::Write;
use std::path::Path;

pub const MAGIC: &[u8; 8] = b"PYCNOMSH";
pub const VERSION: u32 = 1;
const HEADER: usize = 8 + 4 + 3 * 8;

/// Buffers bytes, feeding them to the checksum and the writer a block at a time.
struct Summed<'w, W: Write> {
    w: &'w mut W,
    crc: crc32fast::Hasher,
    buf: Vec<u8>,
}

impl<W: Write> Summed<'_, W> {
    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.buf.extend_from_slice(bytes);
        if self.buf.len() >= 1 << 16 {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.crc.update(&self.buf);
        self.w.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }
}

/// Write `mesh` in the native format.
pub fn write_native(path: &Path, mesh: &Mesh) -> Result<()> {
    write_atomic(path, |w| {
        (|| -> std::io::Result<()> {
            let mut s = Summed { w, crc: crc32fast::Hasher::new(), buf: Vec::with_capacity(1 << 17) };
            s.put(MAGIC)?;
            s.put(&VERSION.to_le_bytes())?;
            for n in [mesh.vertices.len(), mesh.triangles.len(), mesh.boundary.len()] {
                s.put(&(n as u64).to_le_bytes())?;
            }
            for p in &mesh.vertices {
                s.put(&p[0].to_le_bytes())?;
                s.put(&p[1].to_le_bytes())?;
            }
            for t in &mesh.triangles {
                for v in t {
                    s.put(&v.to_le_bytes())?;
                }
            }
            for b in &mesh.boundary {
                for v in [b.v[0], b.v[1], b.tag] {
                    s.put(&v.to_le_bytes())?;
                }
            }
            s.flush()?;
            let crc = s.crc.finalize();
            s.w.write_all(&crc.to_le_bytes())
        })()
        .map_err(|e| anyhow!("cannot write {}: {}", path.display(), io_reason(&e)))
    })
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// Read a native mesh, verifying magic, version, size and checksum.
pub fn read_native(path: &Path) -> Result<Mesh> {
    read_native_bytes(path, &read_file(path)?)
}

/// [`read_native`] of a file's contents already in memory; `path` names it in errors.
pub fn read_native_bytes(path: &Path, data: &[u8]) -> Result<Mesh> {
    let name = path.display();
    let len = data.len();
    if len < 8 || &data[..8] != MAGIC {
        let head = &data[..len.min(8)];
        bail!(
            "{name}: not a pycno native mesh: expected the magic bytes \"PYCNOMSH\", found \"{}\"",
            head.escape_ascii()
        );
    }
    if len < 12 {
        bail!(
            "{name}: the file is truncated: expected at least {} bytes (header and checksum), found {len}",
            HEADER + 4
        );
    }
    let version = u32_at(data, 8);
    if version != VERSION {
        bail!("{name}: native mesh format version {version} is not supported: this pycno reads version {VERSION}");
    }
    if len < HEADER + 4 {
        bail!(
            "{name}: the file is truncated: expected at least {} bytes (header and checksum), found {len}",
            HEADER + 4
        );
    }
    let (nv, nt, ns) = (u64_at(data, 12), u64_at(data, 20), u64_at(data, 28));
    let expected = HEADER as u128 + 16 * nv as u128 + 12 * nt as u128 + 12 * ns as u128 + 4;
    if expected != len as u128 {
        let how = if (len as u128) < expected {
            "truncated (or its header is corrupted)"
        } else {
            "longer than its header says"
        };
        bail!(
            "{name}: the file is {how}: the header announces {nv} vertices, {nt} triangles and {ns} boundary \
             segments, which take {expected} bytes, but the file has {len} bytes"
        );
    }
    let body = &data[..len - 4];
    let stored = u32_at(data, len - 4);
    let computed = crc32fast::hash(body);
    if stored != computed {
        bail!("{name}: checksum mismatch: the file is corrupted (stored CRC-32 {stored:08x}, computed {computed:08x})");
    }
    // The size matched, so every count fits in memory as the file did.
    let (nv, nt, ns) = (nv as usize, nt as usize, ns as usize);
    let mut at = HEADER;
    let vbytes = &body[at..at + 16 * nv];
    at += 16 * nv;
    let vertices: Vec<[f64; 2]> = vbytes
        .chunks_exact(16)
        .map(|c| {
            let x = f64::from_le_bytes(c[0..8].try_into().unwrap_or_default());
            let y = f64::from_le_bytes(c[8..16].try_into().unwrap_or_default());
            [x, y]
        })
        .collect();
    let tbytes = &body[at..at + 12 * nt];
    at += 12 * nt;
    let triangles: Vec<[u32; 3]> =
        tbytes.chunks_exact(12).map(|c| [u32_at(c, 0), u32_at(c, 4), u32_at(c, 8)]).collect();
    let sbytes = &body[at..at + 12 * ns];
    let boundary: Vec<BoundarySegment> = sbytes
        .chunks_exact(12)
        .map(|c| BoundarySegment { v: [u32_at(c, 0), u32_at(c, 4)], tag: u32_at(c, 8) })
        .collect();
    if let Some((t, v)) =
        triangles.iter().enumerate().find_map(|(t, tri)| tri.iter().find(|&&v| v as usize >= nv).map(|&v| (t, v)))
    {
        bail!("{name}: triangle {t} refers to vertex {v}, but the file has {nv} vertices");
    }
    if let Some((s, v)) =
        boundary.iter().enumerate().find_map(|(s, seg)| seg.v.iter().find(|&&v| v as usize >= nv).map(|&v| (s, v)))
    {
        bail!("{name}: boundary segment {s} refers to vertex {v}, but the file has {nv} vertices");
    }
    Ok(Mesh { vertices, triangles, boundary })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mesh() -> Mesh {
        Mesh {
            vertices: vec![[0.0, 0.0], [1.0, -0.0], [0.1, f64::MAX]],
            triangles: vec![[0, 1, 2]],
            boundary: vec![BoundarySegment { v: [0, 1], tag: 7 }],
        }
    }

    #[test]
    fn layout_is_as_documented() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("m.pmsh");
        write_native(&p, &mesh()).unwrap();
        let b = std::fs::read(&p).unwrap();
        assert_eq!(b.len(), 36 + 3 * 16 + 12 + 12 + 4);
        assert_eq!(&b[..8], b"PYCNOMSH");
        assert_eq!(u32_at(&b, 8), 1);
        assert_eq!((u64_at(&b, 12), u64_at(&b, 20), u64_at(&b, 28)), (3, 1, 1));
        assert_eq!(u32_at(&b, b.len() - 4), crc32fast::hash(&b[..b.len() - 4]));
        let m = read_native(&p).unwrap();
        assert_eq!(m, mesh());
        assert!(m.vertices[1][1].is_sign_negative());
    }

    #[test]
    fn bad_index_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("m.pmsh");
        let mut m = mesh();
        m.triangles[0][2] = 3;
        write_native(&p, &m).unwrap();
        let e = read_native(&p).unwrap_err().to_string();
        assert!(e.contains("triangle 0 refers to vertex 3, but the file has 3 vertices"), "{e}");
    }

    #[test]
    fn huge_counts_do_not_allocate_or_panic() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("m.pmsh");
        let mut b = Vec::new();
        b.extend_from_slice(MAGIC);
        b.extend_from_slice(&1u32.to_le_bytes());
        for _ in 0..3 {
            b.extend_from_slice(&u64::MAX.to_le_bytes());
        }
        b.extend_from_slice(&[0; 4]);
        std::fs::write(&p, &b).unwrap();
        let e = read_native(&p).unwrap_err().to_string();
        assert!(e.contains("truncated") && e.contains("the file has 40 bytes"), "{e}");
    }

    #[test]
    fn short_files() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("m.pmsh");
        for (bytes, want) in [
            (&b""[..], "found \"\""),
            (&b"PYCNO"[..], "found \"PYCNO\""),
            (&b"PYCNOMSH\x01\x00"[..], "truncated: expected at least 40 bytes"),
            (&b"PYCNOMSH\x01\x00\x00\x00\x00"[..], "truncated: expected at least 40 bytes"),
        ] {
            std::fs::write(&p, bytes).unwrap();
            let e = read_native(&p).unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        }
    }
}
