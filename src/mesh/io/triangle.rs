//! Shewchuk's Triangle files: `base.node` (vertices), `base.ele` (triangles) and, when
//! present, `base.edge` (edges with boundary markers, which become tagged boundary
//! segments; marker 0 means an interior or untagged edge).
//!
//! Numbering starts at 0 or 1, as the first vertex id of the `.node` file says; all indices
//! are translated to 0-based. `#` starts a comment anywhere on a line; blank lines are
//! skipped. Vertex attributes and markers are read over and ignored.

use super::{capacity, read_file, TextLines};
use crate::mesh::{BoundarySegment, Mesh};
use crate::util::atomic::write_atomic;
use anyhow::{bail, Context, Result};
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `path` without a `.node`, `.ele` or `.edge` extension.
fn base_of(path: &Path) -> PathBuf {
    match path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()) {
        Some(e) if e == "node" || e == "ele" || e == "edge" => path.with_extension(""),
        _ => path.to_path_buf(),
    }
}

fn with_suffix(base: &Path, ext: &str) -> PathBuf {
    let mut s = OsString::from(base.as_os_str());
    s.push(".");
    s.push(ext);
    PathBuf::from(s)
}

/// Read `base.node` + `base.ele` (+ `base.edge` if it exists). `path` is any of these files
/// or the base name itself.
pub fn read_triangle(path: &Path) -> Result<Mesh> {
    let base = base_of(path);
    let (node, ele, edge) = (with_suffix(&base, "node"), with_suffix(&base, "ele"), with_suffix(&base, "edge"));
    let node_data = read_file(&node)?;
    let ele_data = read_file(&ele)?;
    let edge_data = if edge.exists() { Some(read_file(&edge)?) } else { None };
    read_triangle_bytes(&base, &node_data, &ele_data, edge_data.as_deref())
}

/// [`read_triangle`] of the files' contents already in memory; `base` (the path without
/// extension) names them in errors.
pub fn read_triangle_bytes(base: &Path, node: &[u8], ele: &[u8], edge: Option<&[u8]>) -> Result<Mesh> {
    let (vertices, first) = read_node(&with_suffix(base, "node"), node)?;
    let triangles = read_ele(&with_suffix(base, "ele"), ele, vertices.len(), first)?;
    let boundary = match edge {
        Some(data) => read_edge(&with_suffix(base, "edge"), data, vertices.len(), first)?,
        None => Vec::new(),
    };
    Ok(Mesh { vertices, triangles, boundary })
}

/// A header field that Triangle lets the file leave out.
fn header_field(r: &TextLines, toks: &[&str], k: usize, default: u64) -> Result<u64> {
    match toks.get(k) {
        Some(t) => r.uint(t, k + 1),
        None => Ok(default),
    }
}

/// The header line, split (at most `max` fields).
fn header<'a>(r: &mut TextLines<'a>, what: &str, max: usize) -> Result<Vec<&'a str>> {
    let line = match r.next()? {
        Some(l) => l,
        None => bail!(r.err(format!("the file is empty: expected the header line `{what}`"))),
    };
    let toks: Vec<&str> = line.split_ascii_whitespace().collect();
    if toks.len() > max {
        bail!(r.err(format!("expected a header of at most {max} fields ({what}), found {}", toks.len())));
    }
    Ok(toks)
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Describe a record's fields, e.g. "id x y, 2 attributes, boundary marker".
fn describe(base: &str, nattr: u64, nmark: u64) -> String {
    let mut s = base.to_string();
    if nattr > 0 {
        s += &format!(", {}", plural(nattr, "attribute", "attributes"));
    }
    if nmark > 0 {
        s += ", boundary marker";
    }
    s
}

/// After the last record: anything more means the header count is too small.
fn expect_eof(r: &mut TextLines, n: u64, what: &str, hline: usize) -> Result<()> {
    if r.next()?.is_some() {
        bail!(r.err(format!(
            "unexpected data after the {n} {what} that the header (line {hline}) announces: is the count in the header wrong?"
        )));
    }
    Ok(())
}

fn read_node(path: &Path, data: &[u8]) -> Result<(Vec<[f64; 2]>, i64)> {
    let mut r = TextLines::new(path, data, true);
    let toks = header(&mut r, "<#vertices> <dimension> <#attributes> <#boundary markers>", 4)?;
    let hline = r.line();
    let n = header_field(&r, &toks, 0, 0)?;
    let dim = header_field(&r, &toks, 1, 2)?;
    let nattr = header_field(&r, &toks, 2, 0)?;
    let nmark = header_field(&r, &toks, 3, 0)?;
    if dim != 2 {
        bail!(r.err(format!("the dimension (field 2) must be 2, found {dim}: pycno meshes are 2D")));
    }
    if nmark > 1 {
        bail!(r.err(format!("the number of boundary markers (field 4) must be 0 or 1, found {nmark}")));
    }
    if n > u32::MAX as u64 {
        bail!(r.err(format!("{n} vertices are more than pycno supports ({})", u32::MAX)));
    }
    let nfields = 3u64.saturating_add(nattr).saturating_add(nmark);
    let what = describe("id x y", nattr, nmark);
    let mut vertices = Vec::with_capacity(capacity(n, r.remaining(), 6));
    let mut first = 0i64;
    for i in 0..n {
        let line = match r.next()? {
            Some(l) => l,
            None => bail!(r.err(format!("the file ends after {i} vertices, but the header (line {hline}) says {n}"))),
        };
        let [id, x, y] = r.fields::<3>(line, nfields, nfields, &what)?;
        let id = r.int(id, 1)?;
        if i == 0 {
            if id != 0 && id != 1 {
                bail!(r.err(format!("vertex numbering must start at 0 or 1, found first vertex id {id}")));
            }
            first = id;
        } else if id != first + i as i64 {
            bail!(r.err(format!(
                "vertex id {id} is out of sequence: expected {} (ids must be consecutive from {first})",
                first + i as i64
            )));
        }
        vertices.push([r.float(x, 2)?, r.float(y, 3)?]);
    }
    expect_eof(&mut r, n, "vertices", hline)?;
    Ok((vertices, first))
}

/// A vertex index of an `.ele`/`.edge` record, translated to 0-based and range-checked.
fn vertex_index(r: &TextLines, tok: &str, k: usize, nv: usize, first: i64) -> Result<u32> {
    let v = r.int(tok, k)?;
    let i = v.checked_sub(first).unwrap_or(-1);
    if i < 0 || i as u64 >= nv as u64 {
        bail!(r.err(format!("vertex index {v} out of range (the .node file has {nv} vertices, numbered from {first})")));
    }
    Ok(i as u32)
}

fn read_ele(path: &Path, data: &[u8], nv: usize, first: i64) -> Result<Vec<[u32; 3]>> {
    let mut r = TextLines::new(path, data, true);
    let toks = header(&mut r, "<#triangles> <nodes per triangle> <#attributes>", 3)?;
    let hline = r.line();
    let n = header_field(&r, &toks, 0, 0)?;
    let corners = header_field(&r, &toks, 1, 3)?;
    let nattr = header_field(&r, &toks, 2, 0)?;
    if corners != 3 {
        bail!(r.err(format!(
            "the nodes per triangle (field 2) must be 3, found {corners}: pycno needs linear triangles (run Triangle without -o2)"
        )));
    }
    let nfields = 4u64.saturating_add(nattr);
    let what = describe("id v0 v1 v2", nattr, 0);
    let mut triangles = Vec::with_capacity(capacity(n, r.remaining(), 8));
    for i in 0..n {
        let line = match r.next()? {
            Some(l) => l,
            None => bail!(r.err(format!("the file ends after {i} triangles, but the header (line {hline}) says {n}"))),
        };
        let [id, a, b, c] = r.fields::<4>(line, nfields, nfields, &what)?;
        r.int(id, 1)?;
        triangles.push([
            vertex_index(&r, a, 2, nv, first)?,
            vertex_index(&r, b, 3, nv, first)?,
            vertex_index(&r, c, 4, nv, first)?,
        ]);
    }
    expect_eof(&mut r, n, "triangles", hline)?;
    Ok(triangles)
}

fn read_edge(path: &Path, data: &[u8], nv: usize, first: i64) -> Result<Vec<BoundarySegment>> {
    let mut r = TextLines::new(path, data, true);
    let toks = header(&mut r, "<#edges> <#boundary markers>", 2)?;
    let hline = r.line();
    let n = header_field(&r, &toks, 0, 0)?;
    let nmark = header_field(&r, &toks, 1, 0)?;
    if nmark > 1 {
        bail!(r.err(format!("the number of boundary markers (field 2) must be 0 or 1, found {nmark}")));
    }
    let nfields = 3 + nmark;
    let what = describe("id v0 v1", 0, nmark);
    let mut boundary = Vec::new();
    for i in 0..n {
        let line = match r.next()? {
            Some(l) => l,
            None => bail!(r.err(format!("the file ends after {i} edges, but the header (line {hline}) says {n}"))),
        };
        let [id, a, b] = r.fields::<3>(line, nfields, nfields, &what)?;
        r.int(id, 1)?;
        let v = [vertex_index(&r, a, 2, nv, first)?, vertex_index(&r, b, 3, nv, first)?];
        if nmark == 1 {
            let tok = line.split_ascii_whitespace().nth(3).unwrap_or("");
            let m = r.int(tok, 4)?;
            if m < 0 || m > u32::MAX as i64 {
                bail!(r.err(format!("boundary marker {m} is out of range: pycno boundary tags are 0..={}", u32::MAX)));
            }
            if m != 0 {
                boundary.push(BoundarySegment { v, tag: m as u32 });
            }
        }
    }
    expect_eof(&mut r, n, "edges", hline)?;
    Ok(boundary)
}

/// Write `base.node`, `base.ele` and, when the mesh has boundary segments with a non-zero
/// tag, `base.edge` (tag 0 is the default wall, which Triangle's marker 0 cannot express:
/// such segments are left out). 0-based, coordinates in shortest round-trip form.
/// `base_path` may be the base name or end in `.node`/`.ele`/`.edge`. A stale `base.edge`
/// is removed when there is nothing to write to it, so that reading back gives this mesh.
pub fn write_triangle(base_path: &Path, mesh: &Mesh) -> Result<()> {
    let base = base_of(base_path);
    let node = with_suffix(&base, "node");
    write_atomic(&node, |w| {
        (|| -> std::io::Result<()> {
            writeln!(w, "{} 2 0 0", mesh.vertices.len())?;
            for (i, p) in mesh.vertices.iter().enumerate() {
                writeln!(w, "{i} {:?} {:?}", p[0], p[1])?;
            }
            Ok(())
        })()
        .with_context(|| format!("cannot write {}", node.display()))
    })?;
    let ele = with_suffix(&base, "ele");
    write_atomic(&ele, |w| {
        (|| -> std::io::Result<()> {
            writeln!(w, "{} 3 0", mesh.triangles.len())?;
            for (i, t) in mesh.triangles.iter().enumerate() {
                writeln!(w, "{i} {} {} {}", t[0], t[1], t[2])?;
            }
            Ok(())
        })()
        .with_context(|| format!("cannot write {}", ele.display()))
    })?;
    let edge = with_suffix(&base, "edge");
    let tagged = mesh.boundary.iter().filter(|s| s.tag != 0).count();
    if tagged == 0 {
        match std::fs::remove_file(&edge) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("cannot remove the stale {}", edge.display()));
            }
            _ => return Ok(()),
        }
    }
    write_atomic(&edge, |w| {
        (|| -> std::io::Result<()> {
            writeln!(w, "{tagged} 1")?;
            for (i, s) in mesh.boundary.iter().filter(|s| s.tag != 0).enumerate() {
                writeln!(w, "{i} {} {} {}", s.v[0], s.v[1], s.tag)?;
            }
            Ok(())
        })()
        .with_context(|| format!("cannot write {}", edge.display()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn base_name_handling() {
        assert_eq!(base_of(Path::new("a/b.node")), PathBuf::from("a/b"));
        assert_eq!(base_of(Path::new("a/b.1.ele")), PathBuf::from("a/b.1"));
        assert_eq!(base_of(Path::new("a/b.1")), PathBuf::from("a/b.1"));
        assert_eq!(with_suffix(Path::new("a/b.1"), "edge"), PathBuf::from("a/b.1.edge"));
    }

    #[test]
    fn header_defaults_attributes_and_markers() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "m.node", "3\n1 0 0\n2 1 0\n3 0 1\n");
        write(d.path(), "m.ele", "1 3 1\n1 1 2 3 7.5\n");
        write(d.path(), "m.edge", "3 1\n1 1 2 0\n2 2 3 4\n3 3 1 5\n");
        let m = read_triangle(&d.path().join("m.ele")).unwrap();
        assert_eq!(m.vertices, vec![[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]);
        assert_eq!(m.triangles, vec![[0, 1, 2]]);
        assert_eq!(m.boundary, vec![BoundarySegment { v: [1, 2], tag: 4 }, BoundarySegment { v: [2, 0], tag: 5 }]);
    }

    #[test]
    fn edge_without_markers_gives_no_segments() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "m.node", "3 2 0 1\n0 0 0 1\n1 1 0 1\n2 0 1 1\n");
        write(d.path(), "m.ele", "1 3 0\n0 0 1 2\n");
        write(d.path(), "m.edge", "1 0\n0 0 1\n");
        let m = read_triangle(&d.path().join("m.node")).unwrap();
        assert!(m.boundary.is_empty());
    }

    #[test]
    fn errors() {
        let d = tempfile::tempdir().unwrap();
        let cases: &[(&str, &str, &str)] = &[
            ("3 3 0 0\n", "m.node:1: the dimension (field 2) must be 2, found 3", "node"),
            ("3 2 0 0\n5 0 0\n", "m.node:2: vertex numbering must start at 0 or 1, found first vertex id 5", "node"),
            ("3 2 0 0\n0 0 0\n2 0 0\n", "m.node:3: vertex id 2 is out of sequence: expected 1", "node"),
            ("3 2 0 1\n0 0 0\n", "m.node:2: expected 4 fields (id x y, boundary marker), found 3", "node"),
            ("-3 2 0 0\n", "m.node:1: field 1 \"-3\" is not a non-negative integer", "node"),
            ("", "m.node:1: the file is empty", "node"),
        ];
        for (text, want, _) in cases {
            write(d.path(), "m.node", text);
            write(d.path(), "m.ele", "0 3 0\n");
            let e = read_triangle(&d.path().join("m.node")).unwrap_err().to_string();
            assert!(e.contains(want), "{e}\nwanted {want}");
        }
        write(d.path(), "m.node", "3 2 0 0\n0 0 0\n1 1 0\n2 0 1\n");
        write(d.path(), "m.ele", "1 6 0\n");
        let e = read_triangle(&d.path().join("m.node")).unwrap_err().to_string();
        assert!(e.contains("m.ele:1: the nodes per triangle (field 2) must be 3, found 6"), "{e}");
        write(d.path(), "m.ele", "1 3 0\n0 0 1 -1\n");
        let e = read_triangle(&d.path().join("m.node")).unwrap_err().to_string();
        assert!(
            e.contains("m.ele:2: vertex index -1 out of range (the .node file has 3 vertices, numbered from 0)"),
            "{e}"
        );
        write(d.path(), "m.ele", "1 3 0\n0 0 1 2\n");
        write(d.path(), "m.edge", "1 1\n0 0 1 -4\n");
        let e = read_triangle(&d.path().join("m.node")).unwrap_err().to_string();
        assert!(e.contains("m.edge:2: boundary marker -4 is out of range"), "{e}");
    }

    #[test]
    fn stale_edge_file_is_removed() {
        let d = tempfile::tempdir().unwrap();
        let edge = write(d.path(), "m.edge", "1 1\n0 0 1 3\n");
        let mesh =
            Mesh { vertices: vec![[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]], triangles: vec![[0, 1, 2]], boundary: vec![] };
        write_triangle(&d.path().join("m"), &mesh).unwrap();
        assert!(!edge.exists());
        assert_eq!(read_triangle(&d.path().join("m.node")).unwrap(), mesh);
    }
}
