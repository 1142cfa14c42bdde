//! Gmsh ASCII meshes, versions 4.1 and 2.2.
//!
//! Reading: 3-node triangles (element type 2) become the triangles; 2-node lines (type 1)
//! in a physical group become boundary segments tagged with the physical tag (4.1: the first
//! physical tag of the line's curve entity; 2.2: the element's first tag); lines without a
//! physical group (or with physical tag 0), higher-order lines and points are skipped, with
//! a warning that counts them. Every other element type (quadrangles, higher-order
//! triangles, 3D elements, unknown types) is an error naming the line and the type: skipped,
//! it would leave a hole in the mesh. Nodes that no triangle uses
//! (geometry points) are dropped and the rest renumbered compactly in node-tag order; z is
//! ignored. Boundary segments come out in element-tag order. Unknown sections are skipped.
//!
//! Writing: one surface entity (tag 1, physical surface 1 "domain") holding every node and
//! triangle, and for each distinct non-zero boundary tag one curve entity with that physical
//! tag (named `"boundary_<tag>"`). Segments with tag 0 (the default wall) are left out.

use super::{capacity, read_file, show, TextLines};
use crate::mesh::{BoundarySegment, Mesh};
use crate::util::atomic::write_atomic;
use anyhow::{anyhow, bail, Context, Result};
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

/// Which Gmsh ASCII format to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GmshVersion {
    V41,
    V22,
}

const NONE: u32 = u32::MAX;

/// Element types that would make the surface mesh wrong if skipped: 2D elements other than
/// the 3-node triangle. Returns a description for the error message.
fn unsupported_2d(t: u64) -> Option<&'static str> {
    Some(match t {
        3 => "4-node quadrangle",
        9 => "6-node second-order triangle",
        10 => "9-node second-order quadrangle",
        16 => "8-node second-order quadrangle",
        20 => "9-node third-order triangle",
        21 => "10-node third-order triangle",
        22 => "12-node fourth-order triangle",
        23 => "15-node fourth-order triangle",
        24 => "15-node fifth-order triangle",
        25 => "21-node fifth-order triangle",
        42..=47 => "high-order triangle",
        48..=55 => "high-order quadrangle",
        _ => return None,
    })
}

fn unsupported_msg(t: u64, what: &str) -> String {
    format!(
        "element type {t} ({what}) is not supported: pycno needs 3-node triangles \
         (mesh with Mesh.ElementOrder = 1 and without recombination)"
    )
}

/// What an element type means to the reader.
enum Kind {
    Triangle,
    /// The 2-node line: a boundary segment when it has a physical group.
    Line,
    /// Points and higher-order lines: skipped (counted for a warning).
    Skip,
}

/// Classify element type `t`, or the error message for types that would leave a hole or
/// a wrong mesh if skipped: other 2D elements, 3D elements and types pycno does not know.
fn element_kind(t: u64) -> Result<Kind, String> {
    if let Some(what) = unsupported_2d(t) {
        return Err(unsupported_msg(t, what));
    }
    match t {
        2 => Ok(Kind::Triangle),
        1 => Ok(Kind::Line),
        15 | 8 | 26..=28 | 62..=70 => Ok(Kind::Skip),
        4 | 11 | 29..=31 => Err(format!("element type {t} (a tetrahedron) is a 3D element: {NEED_2D}")),
        5 | 12 | 17 | 92 | 93 => Err(format!("element type {t} (a hexahedron) is a 3D element: {NEED_2D}")),
        6 | 13 | 18 => Err(format!("element type {t} (a prism) is a 3D element: {NEED_2D}")),
        7 | 14 | 19 => Err(format!("element type {t} (a pyramid) is a 3D element: {NEED_2D}")),
        _ => Err(format!(
            "element type {t} is not one pycno reads: it reads 3-node triangles (type 2), and skips points (15) \
             and lines (1 and higher-order lines) that are not tagged boundary lines"
        )),
    }
}

const NEED_2D: &str = "pycno needs a 2D surface mesh of 3-node triangles (gmsh -2)";

/// The nodes of a `$Nodes` section, looked up by (possibly sparse) tag.
struct Nodes {
    tags: Vec<u64>,
    xy: Vec<[f64; 2]>,
    /// Positions (indices into `tags`/`xy`) in increasing tag order.
    order: Vec<u32>,
    lookup: Lookup,
}

enum Lookup {
    Dense { min: u64, slot: Vec<u32> },
    Sparse { sorted: Vec<(u64, u32)> },
}

impl Nodes {
    fn build(r: &TextLines, tags: Vec<u64>, xy: Vec<[f64; 2]>, lines: &[usize]) -> Result<Nodes> {
        let n = tags.len();
        let (min, max) = tags.iter().fold((u64::MAX, 0), |(a, b), &t| (a.min(t), b.max(t)));
        let dup = |p: u32, q: u32| {
            let (p, q) = (p.min(q) as usize, p.max(q) as usize);
            r.err_at(lines[q], format!("node tag {} appears twice (first on line {})", tags[q], lines[p]))
        };
        if n == 0 {
            return Ok(Nodes { tags, xy, order: vec![], lookup: Lookup::Sparse { sorted: vec![] } });
        }
        if max - min <= 4 * n as u64 + 1024 {
            let mut slot = vec![NONE; (max - min + 1) as usize];
            for (p, &t) in tags.iter().enumerate() {
                let s = &mut slot[(t - min) as usize];
                if *s != NONE {
                    return Err(dup(*s, p as u32));
                }
                *s = p as u32;
            }
            let order = slot.iter().copied().filter(|&p| p != NONE).collect();
            Ok(Nodes { tags, xy, order, lookup: Lookup::Dense { min, slot } })
        } else {
            let mut sorted: Vec<(u64, u32)> = tags.iter().enumerate().map(|(p, &t)| (t, p as u32)).collect();
            sorted.sort_unstable();
            if let Some(w) = sorted.windows(2).find(|w| w[0].0 == w[1].0) {
                return Err(dup(w[0].1, w[1].1));
            }
            let order = sorted.iter().map(|&(_, p)| p).collect();
            Ok(Nodes { tags, xy, order, lookup: Lookup::Sparse { sorted } })
        }
    }

    fn get(&self, tag: u64) -> Option<u32> {
        match &self.lookup {
            Lookup::Dense { min, slot } => {
                let p = *slot.get(tag.checked_sub(*min)? as usize)?;
                (p != NONE).then_some(p)
            }
            Lookup::Sparse { sorted } => sorted.binary_search_by_key(&tag, |&(t, _)| t).ok().map(|i| sorted[i].1),
        }
    }
}

/// A line element on its way to becoming a boundary segment.
struct RawSeg {
    elem_tag: u64,
    pos: [u32; 2],
    /// 4.1: the curve entity tag (`None` when the block is not on a curve); 2.2: the
    /// physical tag (`None` when the element has no tags).
    key: Option<i64>,
    line: usize,
}

struct Reader<'a> {
    r: TextLines<'a>,
    v41: bool,
    curve_phys: HashMap<i64, i64>,
    nodes: Option<Nodes>,
    triangles: Vec<[u32; 3]>,
    segs: Vec<RawSeg>,
    have_elements: bool,
    /// Points, higher-order lines and untagged lines left out.
    skipped: u64,
}

/// Read a Gmsh ASCII `.msh` file, version 4.1 or 2.2.
pub fn read_gmsh(path: &Path) -> Result<Mesh> {
    read_gmsh_bytes(path, &read_file(path)?)
}

/// [`read_gmsh`] of a file's contents already in memory; `path` names it in errors.
pub fn read_gmsh_bytes(path: &Path, data: &[u8]) -> Result<Mesh> {
    let mut r = TextLines::new(path, data, false);
    let v41 = read_format(&mut r)?;
    let mut rd = Reader {
        r,
        v41,
        curve_phys: HashMap::new(),
        nodes: None,
        triangles: Vec::new(),
        segs: Vec::new(),
        have_elements: false,
        skipped: 0,
    };
    while let Some(line) = rd.r.next()? {
        match line {
            "$Nodes" => {
                if rd.nodes.is_some() {
                    bail!(rd.r.err("a second $Nodes section: pycno reads files with one"));
                }
                rd.nodes = Some(if v41 { rd.nodes41()? } else { rd.nodes22()? });
            }
            "$Elements" => {
                if rd.have_elements {
                    bail!(rd.r.err("a second $Elements section: pycno reads files with one"));
                }
                if rd.nodes.is_none() {
                    bail!(rd.r.err("$Elements comes before $Nodes"));
                }
                rd.have_elements = true;
                if v41 {
                    rd.elements41()?
                } else {
                    rd.elements22()?
                }
            }
            "$Entities" if v41 => rd.entities()?,
            "$PartitionedEntities" => bail!(rd.r.err(
                "partitioned meshes are not supported: save the mesh unpartitioned (Mesh.PartitionSplitMeshFiles = 0 and no partitions)"
            )),
            s if s.starts_with("$End") => bail!(rd.r.err(format!("{} without a matching section start", show(s)))),
            s if s.starts_with('$') => skip_section(&mut rd.r, &s[1..])?,
            s => bail!(rd.r.err(format!("expected a section start such as $Nodes or $Elements, found {}", show(s)))),
        }
    }
    rd.finish()
}

/// `$MeshFormat`: returns whether the version is 4.1 (else 2.2).
fn read_format(r: &mut TextLines) -> Result<bool> {
    match r.next()? {
        Some("$MeshFormat") => {}
        Some(s) => bail!(r.err(format!("expected $MeshFormat, found {}: is this a Gmsh .msh file?", show(s)))),
        None => bail!(r.err("the file is empty: expected $MeshFormat")),
    }
    let line = match r.next()? {
        Some(l) if !l.starts_with('$') => l,
        _ => {
            bail!(r.err("expected the format line `version file-type data-size` after $MeshFormat"))
        }
    };
    let [version, file_type, _] = r.fields::<3>(line, 3, 3, "version file-type data-size")?;
    let v = version.parse::<f64>().unwrap_or(f64::NAN);
    if v != 4.1 && v != 2.2 {
        bail!(r.err(format!(
            "Gmsh format version {version} is not supported: pycno reads ASCII versions 4.1 and 2.2 \
             (convert with `gmsh FILE -save -format msh41`)"
        )));
    }
    let v41 = v == 4.1;
    match file_type {
        "0" => {}
        "1" => bail!(r.err(
            "binary .msh files are not supported: pycno reads ASCII (convert with `gmsh FILE -save -format msh41` and Mesh.Binary = 0)"
        )),
        s => bail!(r.err(format!("field 2 (file-type) must be 0 for ASCII, found {}", show(s)))),
    }
    expect_end(r, "MeshFormat", "")?;
    Ok(v41)
}

/// The next line must close section `name`; `after` says what came before, for the error.
fn expect_end(r: &mut TextLines, name: &str, after: &str) -> Result<()> {
    let want = format!("$End{name}");
    match r.next()? {
        Some(l) if l == want => Ok(()),
        Some(l) => bail!(r.err(format!("expected {want}{after}, found {}", show(l)))),
        None => bail!(r.err(format!("the file ends inside ${name}: expected {want}{after}"))),
    }
}

/// Skip an unknown section up to its `$End...` line.
fn skip_section(r: &mut TextLines, name: &str) -> Result<()> {
    let start = r.line();
    let want = format!("$End{name}");
    while let Some(l) = r.next()? {
        if l == want {
            return Ok(());
        }
    }
    bail!(r.err(format!("the file ends inside ${name} (opened on line {start}): no {want}")))
}

/// The next data line of section `name`, where `found` of `expected` records were read.
fn data_line<'a>(r: &mut TextLines<'a>, name: &str, noun: &str, expected: u64, found: u64) -> Result<&'a str> {
    match r.next()? {
        Some(l) if l.starts_with('$') => {
            bail!(r.err(format!("{} inside ${name}: expected {expected} {noun}, found {found}", show(l))))
        }
        Some(l) => Ok(l),
        None => bail!(r.err(format!("the file ends inside ${name}: expected {expected} {noun}, found {found}"))),
    }
}

impl<'a> Reader<'a> {
    fn entities(&mut self) -> Result<()> {
        let r = &mut self.r;
        let line = data_line(r, "Entities", "entities", 4, 0)?;
        let c = r.fields::<4>(line, 4, 4, "numPoints numCurves numSurfaces numVolumes")?;
        let mut counts = [0u64; 4];
        for (k, t) in c.iter().enumerate() {
            counts[k] = r.uint(t, k + 1)?;
        }
        let total = counts.iter().fold(0u64, |a, &b| a.saturating_add(b));
        let mut found = 0u64;
        for (dim, &count) in counts.iter().enumerate() {
            for _ in 0..count {
                let line = data_line(r, "Entities", "entities", total, found)?;
                found += 1;
                if dim != 1 {
                    continue;
                }
                let what = "curveTag minX minY minZ maxX maxY maxZ numPhysicalTags physicalTag... numBoundingPoints pointTag...";
                let [tag, _, _, _, _, _, _, nphys] = r.fields::<8>(line, 9, u64::MAX, what)?;
                let tag = r.int(tag, 1)?;
                let nphys = r.uint(nphys, 8)?;
                let phys = if nphys > 0 {
                    let tok = line.split_ascii_whitespace().nth(8).unwrap_or("");
                    r.int(tok, 9)?
                } else {
                    0
                };
                self.curve_phys.insert(tag, phys);
            }
        }
        expect_end(r, "Entities", &format!(" after the {total} entities of the header"))
    }

    fn nodes41(&mut self) -> Result<Nodes> {
        let r = &mut self.r;
        let line = data_line(r, "Nodes", "nodes", 0, 0)?;
        let hline = r.line();
        let h = r.fields::<4>(line, 4, 4, "numEntityBlocks numNodes minNodeTag maxNodeTag")?;
        let nblocks = r.uint(h[0], 1)?;
        let n = r.uint(h[1], 2)?;
        if n >= u32::MAX as u64 {
            bail!(r.err(format!("{n} nodes are more than pycno supports")));
        }
        let cap = capacity(n, r.remaining(), 8);
        let (mut tags, mut xy, mut lines) = (Vec::with_capacity(cap), Vec::with_capacity(cap), Vec::with_capacity(cap));
        for _ in 0..nblocks {
            let line = data_line(r, "Nodes", "nodes", n, xy.len() as u64)?;
            let b = r.fields::<4>(line, 4, 4, "entityDim entityTag parametric numNodesInBlock")?;
            let dim = r.uint(b[0], 1)?;
            r.int(b[1], 2)?;
            let parametric = r.uint(b[2], 3)?;
            if parametric > 1 {
                bail!(r.err(format!("parametric = {parametric}, expected 0 or 1")));
            }
            // With parametric = 1 each node carries entityDim parametric coordinates after x
            // y z: a block without them was read with the next node's fields as coordinates.
            let coords = 3 + if parametric == 1 { dim.min(3) } else { 0 };
            let what = if coords == 3 {
                "x y z".to_string()
            } else {
                format!("x y z and {} parametric coordinates (parametric = 1, entityDim {dim})", coords - 3)
            };
            let count = r.uint(b[3], 4)?;
            if (tags.len() as u64).saturating_add(count) > n {
                bail!(r.err(format!(
                    "this block of {count} nodes brings the total to {}, but the $Nodes header (line {hline}) says {n}",
                    tags.len() as u64 + count
                )));
            }
            for _ in 0..count {
                let line = data_line(r, "Nodes", "nodes", n, xy.len() as u64)?;
                let [t] = r.fields::<1>(line, 1, 1, "nodeTag")?;
                tags.push(r.uint(t, 1)?);
                lines.push(r.line());
            }
            for _ in 0..count {
                let line = data_line(r, "Nodes", "nodes", n, xy.len() as u64)?;
                let [x, y, z] = r.fields::<3>(line, coords, coords, &what)?;
                xy.push([r.float(x, 1)?, r.float(y, 2)?]);
                r.float(z, 3)?;
            }
        }
        if (xy.len() as u64) != n {
            bail!(r.err(format!(
                "the {nblocks} blocks hold {} nodes, but the $Nodes header (line {hline}) says {n}",
                xy.len()
            )));
        }
        expect_end(r, "Nodes", &format!(" after the {n} nodes of the header (line {hline})"))?;
        Nodes::build(r, tags, xy, &lines)
    }

    fn nodes22(&mut self) -> Result<Nodes> {
        let r = &mut self.r;
        let line = data_line(r, "Nodes", "nodes", 0, 0)?;
        let hline = r.line();
        let [n] = r.fields::<1>(line, 1, 1, "number-of-nodes")?;
        let n = r.uint(n, 1)?;
        if n >= u32::MAX as u64 {
            bail!(r.err(format!("{n} nodes are more than pycno supports")));
        }
        let cap = capacity(n, r.remaining(), 8);
        let (mut tags, mut xy, mut lines) = (Vec::with_capacity(cap), Vec::with_capacity(cap), Vec::with_capacity(cap));
        for _ in 0..n {
            let line = data_line(r, "Nodes", "nodes", n, xy.len() as u64)?;
            let [t, x, y, z] = r.fields::<4>(line, 4, 4, "node-number x y z")?;
            tags.push(r.uint(t, 1)?);
            xy.push([r.float(x, 2)?, r.float(y, 3)?]);
            r.float(z, 4)?;
            lines.push(r.line());
        }
        expect_end(r, "Nodes", &format!(" after the {n} nodes of the header (line {hline})"))?;
        Nodes::build(r, tags, xy, &lines)
    }

    /// The position of the node with tag `tok` (field `k`).
    fn node(&self, tok: &str, k: usize) -> Result<u32> {
        let tag = self.r.uint(tok, k)?;
        let nodes = self.nodes.as_ref().expect("nodes are read before elements");
        nodes.get(tag).ok_or_else(|| self.r.err(format!("node {tag} (field {k}) is not in $Nodes")))
    }

    fn elements41(&mut self) -> Result<()> {
        let line = data_line(&mut self.r, "Elements", "elements", 0, 0)?;
        let hline = self.r.line();
        let h = self.r.fields::<4>(line, 4, 4, "numEntityBlocks numElements minElementTag maxElementTag")?;
        let nblocks = self.r.uint(h[0], 1)?;
        let n = self.r.uint(h[1], 2)?;
        self.triangles.reserve(capacity(n, self.r.remaining(), 8));
        let mut done = 0u64;
        for _ in 0..nblocks {
            let line = data_line(&mut self.r, "Elements", "elements", n, done)?;
            let b = self.r.fields::<4>(line, 4, 4, "entityDim entityTag elementType numElementsInBlock")?;
            let edim = self.r.uint(b[0], 1)?;
            let etag = self.r.int(b[1], 2)?;
            let etype = self.r.uint(b[2], 3)?;
            let count = self.r.uint(b[3], 4)?;
            if done.saturating_add(count) > n {
                bail!(self.r.err(format!(
                    "this block of {count} elements brings the total to {}, but the $Elements header (line {hline}) says {n}",
                    done.saturating_add(count)
                )));
            }
            let kind = element_kind(etype).map_err(|m| self.r.err(m))?;
            for _ in 0..count {
                let line = data_line(&mut self.r, "Elements", "elements", n, done)?;
                done += 1;
                match kind {
                    Kind::Triangle => {
                        let [t, a, b, c] = self.r.fields::<4>(line, 4, 4, "elementTag node1 node2 node3")?;
                        self.r.uint(t, 1)?;
                        let tri = [self.node(a, 2)?, self.node(b, 3)?, self.node(c, 4)?];
                        self.triangles.push(tri);
                    }
                    Kind::Line => {
                        let [t, a, b] = self.r.fields::<3>(line, 3, 3, "elementTag node1 node2")?;
                        let elem_tag = self.r.uint(t, 1)?;
                        let pos = [self.node(a, 2)?, self.node(b, 3)?];
                        let key = (edim == 1).then_some(etag);
                        self.segs.push(RawSeg { elem_tag, pos, key, line: self.r.line() });
                    }
                    Kind::Skip => self.skipped += 1,
                }
            }
        }
        if done != n {
            bail!(self.r.err(format!(
                "the {nblocks} blocks hold {done} elements, but the $Elements header (line {hline}) says {n}"
            )));
        }
        expect_end(&mut self.r, "Elements", &format!(" after the {n} elements of the header (line {hline})"))
    }

    fn elements22(&mut self) -> Result<()> {
        let line = data_line(&mut self.r, "Elements", "elements", 0, 0)?;
        let hline = self.r.line();
        let [n] = self.r.fields::<1>(line, 1, 1, "number-of-elements")?;
        let n = self.r.uint(n, 1)?;
        self.triangles.reserve(capacity(n, self.r.remaining(), 12));
        for i in 0..n {
            let line = data_line(&mut self.r, "Elements", "elements", n, i)?;
            let what = "elm-number elm-type number-of-tags tags... nodes...";
            let [id, etype, ntags] = self.r.fields::<3>(line, 3, u64::MAX, what)?;
            let elem_tag = self.r.uint(id, 1)?;
            let etype = self.r.uint(etype, 2)?;
            let ntags = self.r.uint(ntags, 3)?;
            let nnodes = match element_kind(etype).map_err(|m| self.r.err(m))? {
                Kind::Triangle => 3,
                Kind::Line => 2,
                Kind::Skip => {
                    self.skipped += 1;
                    continue;
                }
            };
            let total = 3u64.saturating_add(ntags).saturating_add(nnodes);
            let what = if nnodes == 3 {
                "elm-number elm-type number-of-tags tags... node1 node2 node3"
            } else {
                "elm-number elm-type number-of-tags tags... node1 node2"
            };
            self.r.fields::<3>(line, total, total, what)?;
            let mut it = line.split_ascii_whitespace().skip(3);
            let phys = if ntags > 0 {
                let tok = it.next().unwrap_or("");
                Some(self.r.int(tok, 4)?)
            } else {
                None
            };
            let mut it = line.split_ascii_whitespace().enumerate().skip(3 + ntags as usize);
            let mut pos = [0u32; 3];
            for p in pos.iter_mut().take(nnodes as usize) {
                let (k, tok) = it.next().unwrap_or((0, ""));
                *p = self.node(tok, k + 1)?;
            }
            if nnodes == 3 {
                self.triangles.push(pos);
            } else {
                self.segs.push(RawSeg { elem_tag, pos: [pos[0], pos[1]], key: phys, line: self.r.line() });
            }
        }
        expect_end(&mut self.r, "Elements", &format!(" after the {n} elements of the header (line {hline})"))
    }

    fn finish(mut self) -> Result<Mesh> {
        let r = &self.r;
        let nodes = self.nodes.take().ok_or_else(|| r.err("the file has no $Nodes section"))?;
        if !self.have_elements {
            bail!(r.err("the file has no $Elements section"));
        }
        if self.triangles.is_empty() {
            bail!(r.err("the file has no 3-node triangles (element type 2): pycno needs a 2D surface mesh (gmsh -2)"));
        }
        // Keep the nodes that triangles use, renumbered in tag order.
        let mut new = vec![NONE; nodes.xy.len()];
        for t in &self.triangles {
            for &p in t {
                new[p as usize] = 0;
            }
        }
        let mut vertices = Vec::with_capacity(nodes.xy.len());
        for &p in &nodes.order {
            if new[p as usize] != NONE {
                new[p as usize] = vertices.len() as u32;
                vertices.push(nodes.xy[p as usize]);
            }
        }
        let triangles = self.triangles.iter().map(|t| t.map(|p| new[p as usize])).collect();
        self.segs.sort_by_key(|s| s.elem_tag);
        let mut boundary = Vec::new();
        for s in &self.segs {
            let phys = if self.v41 {
                match s.key.and_then(|c| self.curve_phys.get(&c)) {
                    Some(&p) => p,
                    None => 0,
                }
            } else {
                s.key.unwrap_or(0)
            };
            if phys == 0 {
                self.skipped += 1;
                continue;
            }
            if phys < 0 || phys > u32::MAX as i64 {
                bail!(r.err_at(
                    s.line,
                    format!("physical tag {phys} of line element {} is out of range 1..={}", s.elem_tag, u32::MAX)
                ));
            }
            let mut v = [0u32; 2];
            for (k, &p) in s.pos.iter().enumerate() {
                v[k] = new[p as usize];
                if v[k] == NONE {
                    return Err(r.err_at(
                        s.line,
                        format!(
                            "boundary line element {} uses node {}, which no triangle uses",
                            s.elem_tag, nodes.tags[p as usize]
                        ),
                    ));
                }
            }
            boundary.push(BoundarySegment { v, tag: phys as u32 });
        }
        if self.skipped > 0 {
            log::warn!(
                "{}: skipped {} point and line elements that are not tagged boundary lines",
                r.name(),
                self.skipped
            );
        }
        Ok(Mesh { vertices, triangles, boundary })
    }
}

/// The bounding box `[minx, miny, maxx, maxy]` of some vertices (zeros when none).
fn bbox(mesh: &Mesh, vs: impl Iterator<Item = u32>) -> [f64; 4] {
    let mut b = [f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY];
    for v in vs {
        if let Some(p) = mesh.vertices.get(v as usize) {
            b = [b[0].min(p[0]), b[1].min(p[1]), b[2].max(p[0]), b[3].max(p[1])];
        }
    }
    if b[0] > b[2] {
        [0.0; 4]
    } else {
        b
    }
}

/// Write a Gmsh ASCII `.msh` file of the given version.
pub fn write_gmsh(path: &Path, mesh: &Mesh, version: GmshVersion) -> Result<()> {
    let segs: Vec<(usize, &BoundarySegment)> = mesh.boundary.iter().filter(|s| s.tag != 0).enumerate().collect();
    let mut tags: Vec<u32> = segs.iter().map(|(_, s)| s.tag).collect();
    tags.sort_unstable();
    tags.dedup();
    let curve = |tag: u32| tags.binary_search(&tag).map(|i| i + 1).unwrap_or(0);
    write_atomic(path, |w| {
        (|| -> std::io::Result<()> {
            let nv = mesh.vertices.len();
            let nt = mesh.triangles.len();
            let ns = segs.len();
            let v = match version {
                GmshVersion::V41 => "4.1",
                GmshVersion::V22 => "2.2",
            };
            writeln!(w, "$MeshFormat\n{v} 0 8\n$EndMeshFormat")?;
            writeln!(w, "$PhysicalNames\n{}", tags.len() + 1)?;
            for &t in &tags {
                writeln!(w, "1 {t} \"boundary_{t}\"")?;
            }
            writeln!(w, "2 1 \"domain\"\n$EndPhysicalNames")?;
            match version {
                GmshVersion::V41 => {
                    writeln!(w, "$Entities\n0 {} 1 0", tags.len())?;
                    for (i, &t) in tags.iter().enumerate() {
                        let b = bbox(mesh, segs.iter().filter(|(_, s)| s.tag == t).flat_map(|(_, s)| s.v));
                        writeln!(w, "{} {:?} {:?} 0 {:?} {:?} 0 1 {t} 0", i + 1, b[0], b[1], b[2], b[3])?;
                    }
                    let b = bbox(mesh, 0..nv as u32);
                    writeln!(w, "1 {:?} {:?} 0 {:?} {:?} 0 1 1 0", b[0], b[1], b[2], b[3])?;
                    writeln!(w, "$EndEntities")?;
                    writeln!(w, "$Nodes")?;
                    if nv == 0 {
                        writeln!(w, "0 0 0 0")?;
                    } else {
                        writeln!(w, "1 {nv} 1 {nv}\n2 1 0 {nv}")?;
                        for i in 1..=nv {
                            writeln!(w, "{i}")?;
                        }
                        for p in &mesh.vertices {
                            writeln!(w, "{:?} {:?} 0", p[0], p[1])?;
                        }
                    }
                    writeln!(w, "$EndNodes")?;
                    let nblocks = (nt > 0) as usize + tags.len();
                    let ne = nt + ns;
                    writeln!(w, "$Elements\n{nblocks} {ne} {} {ne}", (ne > 0) as usize)?;
                    if nt > 0 {
                        writeln!(w, "2 1 2 {nt}")?;
                        for (i, t) in mesh.triangles.iter().enumerate() {
                            writeln!(w, "{} {} {} {}", i + 1, t[0] + 1, t[1] + 1, t[2] + 1)?;
                        }
                    }
                    for (c, &tag) in tags.iter().enumerate() {
                        let count = segs.iter().filter(|(_, s)| s.tag == tag).count();
                        writeln!(w, "1 {} 1 {count}", c + 1)?;
                        for (i, s) in segs.iter().filter(|(_, s)| s.tag == tag) {
                            writeln!(w, "{} {} {}", nt + i + 1, s.v[0] + 1, s.v[1] + 1)?;
                        }
                    }
                    writeln!(w, "$EndElements")?;
                }
                GmshVersion::V22 => {
                    writeln!(w, "$Nodes\n{nv}")?;
                    for (i, p) in mesh.vertices.iter().enumerate() {
                        writeln!(w, "{} {:?} {:?} 0", i + 1, p[0], p[1])?;
                    }
                    writeln!(w, "$EndNodes")?;
                    writeln!(w, "$Elements\n{}", nt + ns)?;
                    for (i, t) in mesh.triangles.iter().enumerate() {
                        writeln!(w, "{} 2 2 1 1 {} {} {}", i + 1, t[0] + 1, t[1] + 1, t[2] + 1)?;
                    }
                    for (i, s) in &segs {
                        let (id, tag) = (nt + i + 1, s.tag);
                        writeln!(w, "{id} 1 2 {tag} {} {} {}", curve(tag), s.v[0] + 1, s.v[1] + 1)?;
                    }
                    writeln!(w, "$EndElements")?;
                }
            }
            Ok(())
        })()
        .map_err(|e| anyhow!(e))
        .with_context(|| format!("cannot write {}", path.display()))
    })
}

/// The names of a Gmsh file's physical groups of lines (dimension 1), from its
/// `$PhysicalNames` section: `(physical tag, name)`. A file without one has none.
pub fn physical_line_names(path: &Path) -> Result<Vec<(u32, String)>> {
    let data = crate::util::files::read_regular(path).with_context(|| format!("cannot read {}", path.display()))?;
    let text = String::from_utf8_lossy(&data);
    let mut lines = text.lines().enumerate();
    let mut names = Vec::new();
    while let Some((_, l)) = lines.next() {
        if l.trim() != "$PhysicalNames" {
            continue;
        }
        let bad = |line: usize, what: &str| anyhow::anyhow!("{}:{}: $PhysicalNames: {what}", path.display(), line + 1);
        let (at, count) = lines.next().ok_or_else(|| bad(0, "missing the count"))?;
        let count: usize = count.trim().parse().map_err(|_| bad(at, "expected the number of names"))?;
        for _ in 0..count {
            let (at, l) = lines.next().ok_or_else(|| bad(at, "fewer names than the count says"))?;
            let mut it = l.trim().splitn(3, char::is_whitespace);
            let (dim, tag, name) = (it.next(), it.next(), it.next());
            let (Some(dim), Some(tag), Some(name)) = (dim, tag, name) else {
                return Err(bad(at, "expected `dimension tag \"name\"`"));
            };
            let dim: u32 = dim.parse().map_err(|_| bad(at, "expected a dimension"))?;
            let tag: u32 = tag.parse().map_err(|_| bad(at, "expected a physical tag"))?;
            if dim == 1 {
                names.push((tag, name.trim().trim_matches('"').to_string()));
            }
        }
        break;
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_str(text: &str) -> Result<Mesh> {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.msh");
        std::fs::write(&p, text).unwrap();
        read_gmsh(&p)
    }

    const TRI22: &str = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n3\n1 0 0 0\n2 1 0 0\n3 0 1 0\n$EndNodes\n";

    #[test]
    fn sparse_lookup_is_used_for_huge_tags() {
        let text =
            "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n3\n1000000000000 0 0 0\n5 1 0 0\n7 0 1 0\n$EndNodes\n\
                    $Elements\n2\n1 2 2 0 1 5 7 1000000000000\n2 1 2 3 1 7 5\n$EndElements\n";
        let m = read_str(text).unwrap();
        assert_eq!(m.vertices, vec![[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]);
        assert_eq!(m.triangles, vec![[0, 1, 2]]);
        assert_eq!(m.boundary, vec![BoundarySegment { v: [1, 0], tag: 3 }]);
    }

    #[test]
    fn duplicate_node_tag_is_an_error() {
        let text = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n2\n4 0 0 0\n4 1 0 0\n$EndNodes\n";
        let e = read_str(text).unwrap_err().to_string();
        assert!(e.contains("t.msh:7: node tag 4 appears twice (first on line 6)"), "{e}");
    }

    #[test]
    fn format_errors() {
        let cases = [
            ("$MeshFormat\n4.1 1 8\n$EndMeshFormat\n", "t.msh:2: binary .msh files are not supported"),
            ("$MeshFormat\n3.0 0 8\n$EndMeshFormat\n", "t.msh:2: Gmsh format version 3.0 is not supported"),
            ("$MeshFormat\n4 0 8\n$EndMeshFormat\n", "t.msh:2: Gmsh format version 4 is not supported"),
            ("solid x\n", "t.msh:1: expected $MeshFormat, found \"solid x\""),
            (
                "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Comments\nhi\n",
                "t.msh:5: the file ends inside $Comments (opened on line 4)",
            ),
            (
                "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Elements\n0\n$EndElements\n",
                "t.msh:4: $Elements comes before $Nodes",
            ),
        ];
        for (text, want) in cases {
            let e = read_str(text).unwrap_err().to_string();
            assert!(e.contains(want), "{e}\nwanted {want}");
        }
    }

    #[test]
    fn element_errors() {
        let cases = [
            (
                "$Elements\n1\n1 9 2 1 1 1 2 3 1 2 3\n$EndElements\n",
                "t.msh:12: element type 9 (6-node second-order triangle) is not supported",
            ),
            ("$Elements\n1\n1 3 2 1 1 1 2 3 1\n$EndElements\n", "t.msh:12: element type 3 (4-node quadrangle)"),
            ("$Elements\n1\n1 2 2 1 1 1 2 4\n$EndElements\n", "t.msh:12: node 4 (field 8) is not in $Nodes"),
            ("$Elements\n1\n1 2 2 1 1 1 2\n$EndElements\n", "t.msh:12: expected 8 fields"),
            (
                "$Elements\n2\n1 2 2 1 1 1 2 3\n$EndElements\n",
                "t.msh:13: \"$EndElements\" inside $Elements: expected 2 elements, found 1",
            ),
            (
                "$Elements\n1\n1 2 2 1 1 1 2 3\n2 2 2 1 1 1 2 3\n$EndElements\n",
                "t.msh:13: expected $EndElements after the 1 elements of the header (line 11)",
            ),
            ("$Elements\n1\n1 15 2 1 1 3\n$EndElements\n", "t.msh:13: the file has no 3-node triangles"),
            (
                "$Elements\n2\n1 2 2 1 1 1 2 3\n2 4 2 1 1 1 2 3 1\n$EndElements\n",
                "t.msh:13: element type 4 (a tetrahedron) is a 3D element",
            ),
            ("$Elements\n2\n1 2 2 1 1 1 2 3\n2 99 0 1 2\n$EndElements\n", "t.msh:13: element type 99 is not one pycno"),
        ];
        for (tail, want) in cases {
            let e = read_str(&format!("{TRI22}{tail}")).unwrap_err().to_string();
            assert!(e.contains(want), "{e}\nwanted {want}");
        }
    }

    #[test]
    fn v41_blocks_of_3d_elements_are_errors_and_high_order_lines_are_skipped() {
        let head = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 4 1 4\n2 1 0 4\n1\n2\n3\n4\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n$EndNodes\n";
        let tet = format!("{head}$Elements\n2 2 1 2\n2 1 2 1\n1 1 2 3\n3 1 4 1\n2 1 2 3 4\n$EndElements\n");
        let e = read_str(&tet).unwrap_err().to_string();
        assert!(e.contains("t.msh:20: element type 4 (a tetrahedron) is a 3D element"), "{e}");
        let line3 = format!("{head}$Elements\n2 2 1 2\n2 1 2 1\n1 1 2 3\n1 1 8 1\n2 1 2 3\n$EndElements\n");
        assert_eq!(read_str(&line3).unwrap().triangles.len(), 1);
    }

    #[test]
    fn v41_block_count_errors() {
        let head = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n";
        let text = format!("{head}$Nodes\n1 3 1 3\n2 1 0 4\n1\n2\n3\n4\n");
        let e = read_str(&text).unwrap_err().to_string();
        assert!(
            e.contains("t.msh:6: this block of 4 nodes brings the total to 4, but the $Nodes header (line 5) says 3"),
            "{e}"
        );
        let text = format!("{head}$Nodes\n1 3 1 3\n2 1 0 2\n1\n2\n0 0 0\n1 0 0\n$EndNodes\n");
        let e = read_str(&text).unwrap_err().to_string();
        assert!(e.contains("t.msh:10: the 1 blocks hold 2 nodes, but the $Nodes header (line 5) says 3"), "{e}");
    }
}
