//! VTK XML output for ParaView: one `.vtu` piece per rank and a `.pvtu` index naming them.
//!
//! Layout: points are 3D (z = 0), cells are `VTK_TRIANGLE` (5), every field is cell data;
//! 2-component vectors become 3-component VTK vectors (z = 0) so ParaView can draw glyphs.
//!
//! Encoding: XML format version 1.0, little endian, `header_type="UInt64"`, all arrays in one
//! raw `<AppendedData>` block (`format="appended"`): the layout of VTK's own writer in its
//! default appended mode. [`Compression::Zlib`] compresses each array as VTK's
//! `vtkZLibDataCompressor` does (a header `[blocks, block size, size of the last partial
//! block, compressed size of each block]` of UInt64s, then the zlib streams of 64 KiB blocks,
//! compressed in parallel); [`Compression::None`] writes the values as they are.
//!
//! The XML is written here rather than through `vtkio` (the crate's listed VTK dependency):
//! measured on 10^6 cells with 12 fields, vtkio 0.6 took 4-5 s per file (owned `Vec` copies of
//! every array, byte-by-byte re-encoding, a base64 `String` per array and a serializer that
//! copies each element's children into its parent), against 0.3 s here; vtkio 0.7.0-rc2 was no
//! faster; and neither can write a `.pvtu` (their model-to-XML conversion loads the pieces a
//! `Piece::Source` names instead of referencing them). The files are checked with the real VTK
//! reader by `tests/vtk_output.rs`.

use crate::util::atomic::write_atomic;
use anyhow::{bail, Context, Result};
use std::collections::HashSet;
use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

/// `version` of the `VTKFile` element: 1.0 is the first with `header_type="UInt64"`; offsets
/// hold the end of each cell (no leading 0).
const XML_VERSION: &str = "1.0";
/// VTK_TRIANGLE.
const VTK_TRIANGLE: u8 = 5;
/// Type of the points array, shared by `.vtu` and `.pvtu` (they must agree).
const POINTS_TYPE: &str = "Float64";

/// One cell field's values, one entry per triangle.
#[derive(Clone, Copy, Debug)]
pub enum FieldData<'a> {
    F32(&'a [f32]),
    F64(&'a [f64]),
    /// Written as a 3-component vector with z = 0.
    Vec2F32(&'a [[f32; 2]]),
    /// Written as a 3-component vector with z = 0.
    Vec2F64(&'a [[f64; 2]]),
    I32(&'a [i32]),
    I64(&'a [i64]),
}

impl FieldData<'_> {
    /// Number of tuples (one per cell).
    pub fn len(&self) -> usize {
        match self {
            FieldData::F32(v) => v.len(),
            FieldData::F64(v) => v.len(),
            FieldData::Vec2F32(v) => v.len(),
            FieldData::Vec2F64(v) => v.len(),
            FieldData::I32(v) => v.len(),
            FieldData::I64(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of components in the file (2-vectors are written with 3).
    pub fn num_components(&self) -> usize {
        match self {
            FieldData::Vec2F32(_) | FieldData::Vec2F64(_) => 3,
            _ => 1,
        }
    }

    /// The VTK XML `type` attribute of the array.
    pub fn vtk_type(&self) -> &'static str {
        match self {
            FieldData::F32(_) | FieldData::Vec2F32(_) => "Float32",
            FieldData::F64(_) | FieldData::Vec2F64(_) => "Float64",
            FieldData::I32(_) => "Int32",
            FieldData::I64(_) => "Int64",
        }
    }

    fn scalar_size(&self) -> usize {
        match self {
            FieldData::F32(_) | FieldData::Vec2F32(_) | FieldData::I32(_) => 4,
            FieldData::F64(_) | FieldData::Vec2F64(_) | FieldData::I64(_) => 8,
        }
    }

    /// Size of the array's data in the file, in bytes (without the block header).
    fn num_bytes(&self) -> usize {
        self.len() * self.num_components() * self.scalar_size()
    }

    /// Append the array's little-endian bytes to `out` (block header included).
    fn write_block(&self, out: &mut Chunked<'_, impl Write>) -> std::io::Result<()> {
        out.header(self.num_bytes())?;
        match *self {
            FieldData::F32(v) => out.put(v.iter().map(|x| x.to_le_bytes())),
            FieldData::F64(v) => out.put(v.iter().map(|x| x.to_le_bytes())),
            FieldData::Vec2F32(v) => out.put(v.iter().flat_map(|&[x, y]| [x, y, 0.0].map(f32::to_le_bytes))),
            FieldData::Vec2F64(v) => out.put(v.iter().flat_map(|&[x, y]| [x, y, 0.0].map(f64::to_le_bytes))),
            FieldData::I32(v) => out.put(v.iter().map(|x| x.to_le_bytes())),
            FieldData::I64(v) => out.put(v.iter().map(|x| x.to_le_bytes())),
        }
    }
}

/// A named cell field.
#[derive(Clone, Copy, Debug)]
pub struct CellField<'a> {
    pub name: &'a str,
    pub data: FieldData<'a>,
}

/// Encodes values through a small buffer, so no array is ever copied whole.
struct Chunked<'w, W: Write> {
    w: &'w mut W,
    buf: Vec<u8>,
}

impl<W: Write> Chunked<'_, W> {
    const CHUNK: usize = 1 << 16;

    /// The UInt64 byte count that starts each block of raw appended data.
    fn header(&mut self, num_bytes: usize) -> std::io::Result<()> {
        self.w.write_all(&(num_bytes as u64).to_le_bytes())
    }

    fn put<const N: usize>(&mut self, values: impl Iterator<Item = [u8; N]>) -> std::io::Result<()> {
        self.buf.clear();
        for b in values {
            self.buf.extend_from_slice(&b);
            if self.buf.len() >= Self::CHUNK {
                self.w.write_all(&self.buf)?;
                self.buf.clear();
            }
        }
        self.w.write_all(&self.buf)
    }
}

/// Check the field names: non-empty, unique, no characters XML 1.0 cannot hold.
fn check_names(fields: &[CellField]) -> Result<()> {
    let mut seen = HashSet::new();
    for f in fields {
        if f.name.is_empty() {
            bail!("cell field with an empty name");
        }
        if let Some(c) = f.name.chars().find(|&c| c.is_control()) {
            bail!("cell field {:?}: name contains control character {:?}", f.name, c);
        }
        if !seen.insert(f.name) {
            bail!("cell field {:?} given twice", f.name);
        }
    }
    Ok(())
}

/// Escape text for an XML attribute value in double quotes.
pub(crate) fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

pub use crate::scenario::Compression;

/// Uncompressed bytes per compressed block (VTK's default is 32 KiB; any size reads back).
const BLOCK: usize = 1 << 16;

/// The bytes of one array as VTK's zlib compressor lays them out: the header of UInt64s,
/// then each block's zlib stream.
fn zlib_block(raw: &[u8]) -> Vec<u8> {
    use rayon::prelude::*;
    use std::io::Write as _;
    let streams: Vec<Vec<u8>> = raw
        .par_chunks(BLOCK)
        .map(|chunk| {
            let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
            z.write_all(chunk).expect("writing to memory");
            z.finish().expect("writing to memory")
        })
        .collect();
    let mut out = Vec::with_capacity(8 * (3 + streams.len()) + streams.iter().map(Vec::len).sum::<usize>());
    for x in [streams.len(), BLOCK, raw.len() % BLOCK] {
        out.extend_from_slice(&(x as u64).to_le_bytes());
    }
    for z in &streams {
        out.extend_from_slice(&(z.len() as u64).to_le_bytes());
    }
    for z in &streams {
        out.extend_from_slice(z);
    }
    out
}

/// One triangle mesh piece with cell data, binary-encoded, uncompressed, written atomically.
///
/// Every field must hold exactly one value per triangle and every triangle must name existing
/// vertices; otherwise nothing is written and the error names the culprit.
pub fn write_vtu(path: &Path, vertices: &[[f64; 2]], triangles: &[[u32; 3]], fields: &[CellField]) -> Result<()> {
    write_vtu_with(path, vertices, triangles, fields, Compression::None)
}

/// [`write_vtu`] with a choice of compression.
pub fn write_vtu_with(
    path: &Path,
    vertices: &[[f64; 2]],
    triangles: &[[u32; 3]],
    fields: &[CellField],
    compression: Compression,
) -> Result<()> {
    check_names(fields).with_context(|| format!("cannot write {}", path.display()))?;
    let nt = triangles.len();
    let nv = vertices.len();
    for f in fields {
        if f.data.len() != nt {
            bail!(
                "cannot write {}: cell field {:?} has {} values but the mesh has {} triangles",
                path.display(),
                f.name,
                f.data.len(),
                nt
            );
        }
    }
    if let Some((t, tri)) = triangles.iter().enumerate().find(|(_, tri)| tri.iter().any(|&v| v as usize >= nv)) {
        bail!("cannot write {}: triangle {t} {tri:?} names a vertex beyond the {nv} vertices", path.display());
    }

    // Compressed: every array's bytes, compressed, before the header that points at them.
    let zipped: Option<Vec<Vec<u8>>> = (compression == Compression::Zlib).then(|| {
        let raw = |fill: &dyn Fn(&mut Chunked<'_, Vec<u8>>) -> std::io::Result<()>| -> Vec<u8> {
            let mut v = Vec::new();
            fill(&mut Chunked { w: &mut v, buf: Vec::new() }).expect("writing to memory");
            zlib_block(&v[8..])
        };
        let mut blocks = vec![
            raw(&|out| {
                out.header(0)?;
                out.put(vertices.iter().flat_map(|&[x, y]| [x, y, 0.0].map(f64::to_le_bytes)))
            }),
            raw(&|out| {
                out.header(0)?;
                out.put(triangles.iter().flat_map(|t| t.map(|v| i64::from(v).to_le_bytes())))
            }),
            raw(&|out| {
                out.header(0)?;
                out.put((1..=nt as i64).map(|i| (3 * i).to_le_bytes()))
            }),
            raw(&|out| {
                out.header(0)?;
                out.put(std::iter::repeat_n([VTK_TRIANGLE], nt))
            }),
        ];
        blocks.extend(fields.iter().map(|f| raw(&|out| f.data.write_block(out))));
        blocks
    });
    let mut sizes = zipped.as_ref().map(|z| z.iter().map(Vec::len).collect::<Vec<_>>().into_iter());

    // The XML header: every array points at its block in the appended data, which is the
    // concatenation of (UInt64 byte count, little-endian values) blocks in this order, or of
    // the compressed blocks.
    let mut xml = String::new();
    let mut offset = 0usize;
    let mut array = |xml: &mut String, ty: &str, name: &str, nc: usize, num_bytes: usize| {
        let _ = writeln!(
            xml,
            "        <DataArray type=\"{ty}\" Name=\"{name}\" NumberOfComponents=\"{nc}\" \
             format=\"appended\" offset=\"{offset}\"/>"
        );
        offset += match &mut sizes {
            Some(it) => it.next().expect("one compressed block per array"),
            None => 8 + num_bytes,
        };
    };
    let compressor = if zipped.is_some() { " compressor=\"vtkZLibDataCompressor\"" } else { "" };
    let _ = writeln!(xml, "<?xml version=\"1.0\"?>");
    let _ = writeln!(
        xml,
        "<VTKFile type=\"UnstructuredGrid\" version=\"{XML_VERSION}\" \
         byte_order=\"LittleEndian\" header_type=\"UInt64\"{compressor}>"
    );
    let _ = writeln!(xml, "  <UnstructuredGrid>");
    let _ = writeln!(xml, "    <Piece NumberOfPoints=\"{nv}\" NumberOfCells=\"{nt}\">");
    let _ = writeln!(xml, "      <Points>");
    array(&mut xml, POINTS_TYPE, "Points", 3, nv * 3 * 8);
    let _ = writeln!(xml, "      </Points>");
    let _ = writeln!(xml, "      <Cells>");
    array(&mut xml, "Int64", "connectivity", 1, nt * 3 * 8);
    array(&mut xml, "Int64", "offsets", 1, nt * 8);
    array(&mut xml, "UInt8", "types", 1, nt);
    let _ = writeln!(xml, "      </Cells>");
    let _ = writeln!(xml, "      <CellData>");
    for f in fields {
        let name = xml_escape(f.name);
        array(&mut xml, f.data.vtk_type(), &name, f.data.num_components(), f.data.num_bytes());
    }
    let _ = writeln!(xml, "      </CellData>");
    let _ = writeln!(xml, "    </Piece>");
    let _ = writeln!(xml, "  </UnstructuredGrid>");
    let _ = write!(xml, "  <AppendedData encoding=\"raw\">\n   _");

    write_atomic(path, |w| {
        let io = |e: std::io::Error| anyhow::Error::new(e).context(format!("cannot write {}", path.display()));
        w.write_all(xml.as_bytes()).map_err(io)?;
        if let Some(blocks) = &zipped {
            for b in blocks {
                w.write_all(b).map_err(io)?;
            }
            return w.write_all(b"\n  </AppendedData>\n</VTKFile>\n").map_err(io);
        }
        let mut out = Chunked { w, buf: Vec::with_capacity(Chunked::<std::io::Sink>::CHUNK + 64) };
        (|| -> std::io::Result<()> {
            out.header(nv * 3 * 8)?;
            out.put(vertices.iter().flat_map(|&[x, y]| [x, y, 0.0].map(f64::to_le_bytes)))?;
            out.header(nt * 3 * 8)?;
            out.put(triangles.iter().flat_map(|t| t.map(|v| i64::from(v).to_le_bytes())))?;
            out.header(nt * 8)?;
            out.put((1..=nt as i64).map(|i| (3 * i).to_le_bytes()))?;
            out.header(nt)?;
            out.put(std::iter::repeat_n([VTK_TRIANGLE], nt))?;
            for f in fields {
                f.data.write_block(&mut out)?;
            }
            out.w.write_all(b"\n  </AppendedData>\n</VTKFile>\n")
        })()
        .map_err(io)
    })
}

/// Parallel piece index (`.pvtu`) naming per-rank `.vtu` pieces (paths relative to the
/// `.pvtu`) that share the field schema of `fields`; only names, types and component counts of
/// `fields` are used, not their values.
pub fn write_pvtu(path: &Path, pieces: &[String], fields: &[CellField]) -> Result<()> {
    check_names(fields).with_context(|| format!("cannot write {}", path.display()))?;
    if pieces.is_empty() {
        bail!("cannot write {}: no pieces", path.display());
    }
    let mut s = String::new();
    let _ = writeln!(s, "<?xml version=\"1.0\"?>");
    let _ = writeln!(
        s,
        "<VTKFile type=\"PUnstructuredGrid\" version=\"{XML_VERSION}\" \
         byte_order=\"LittleEndian\" header_type=\"UInt64\">"
    );
    let _ = writeln!(s, "  <PUnstructuredGrid GhostLevel=\"0\">");
    let _ = writeln!(s, "    <PPoints>");
    let _ = writeln!(s, "      <PDataArray type=\"{POINTS_TYPE}\" Name=\"Points\" NumberOfComponents=\"3\"/>");
    let _ = writeln!(s, "    </PPoints>");
    let _ = writeln!(s, "    <PCellData>");
    for f in fields {
        let _ = writeln!(
            s,
            "      <PDataArray type=\"{}\" Name=\"{}\" NumberOfComponents=\"{}\"/>",
            f.data.vtk_type(),
            xml_escape(f.name),
            f.data.num_components()
        );
    }
    let _ = writeln!(s, "    </PCellData>");
    for p in pieces {
        let _ = writeln!(s, "    <Piece Source=\"{}\"/>", xml_escape(p));
    }
    let _ = writeln!(s, "  </PUnstructuredGrid>");
    let _ = writeln!(s, "</VTKFile>");
    write_atomic(path, |w| {
        w.write_all(s.as_bytes()).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(())
    })
}
