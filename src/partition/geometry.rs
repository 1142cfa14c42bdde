//! A rank's geometry file, `rank_00000.geo` beside its `rank_00000.bin`: everything a rank of
//! a run needs of the mesh besides its cell and edge orders, so that `pycno run --partition`
//! never builds the global mesh (issue 22). It holds the rank's local [`Topology`] (owned and
//! receive-block cells; edges in the submesh's order, the first ring's own edges included in
//! a partition for second order, so that the rank makes the first ring's stencils; with the
//! global geometry bit for bit: areas, centroids, normals and lengths computed once from the
//! global mesh), its owned cells
//! as a mesh of their own (the VTK piece), the global length of every boundary tag and the
//! tags the mesh's boundary segments carry (the boundary table), the global mesh fingerprint
//! and an identity of the mesh's source (so that a run can tell, without meshing, that the
//! partition was made for its scenario's mesh). Depth and initial state are not stored: the
//! rank evaluates the scenario at its centroids, as a one-rank run does at every centroid.
//!
//! Little endian:
//!
//! ```text
//! magic "PYCNOGEO", u32 format version
//! u32 rank, u32 ranks, u64 mesh fingerprint, u64 source id, u32 CRC-32 of the rank file's bytes
//! u32 cells, u32 edges, u32 piece vertices, u32 piece triangles, u32 tags, u32 segment tags
//! per cell: f64 area, f64 x2 centroid, u32 x3 cell edges
//! per edge: u32 x2 cells, u8 x2 slots, f64 x2 normal, f64 length, u32 tag, u32 x2 vertices,
//!   u8 corner (0 or 1; version 2, 2026-11-29: `Topology::edge_corner`)
//! per piece vertex: f64 x2;  per piece triangle: u32 x3
//! per tag: u32 tag, f64 length;  u32 segment tag x segment tags
//! u32 CRC-32 of all the bytes before it
//! ```

use super::Submesh;
use crate::mesh::{Mesh, Topology, NO_CELL};
use crate::util::atomic::write_bytes_atomic;
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

pub const MAGIC: &[u8; 8] = b"PYCNOGEO";
pub const FORMAT_VERSION: u32 = 2;

/// One rank's geometry (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct RankGeometry {
    pub rank: u32,
    pub ranks: u32,
    pub mesh_fingerprint: u64,
    /// [`crate::partition::files::Manifest::mesh_source`] as a number.
    pub source_id: u64,
    /// CRC-32 of the rank's `.bin` file (its [`super::files::encode`]d submesh): the two files
    /// of a rank come from one partition.
    pub rank_file_crc: u32,
    /// Local ids: cells in block order, edges in the submesh's order.
    pub topo: Topology,
    /// The owned cells, vertices renumbered in order of first use.
    pub piece: Mesh,
    /// Global length of each boundary tag (tag != 0), in ascending tag order, summed in global
    /// edge order as a one-rank run sums them.
    pub tag_lengths: Vec<(u32, f64)>,
    /// The distinct nonzero tags of the global mesh's boundary segments, ascending.
    pub segment_tags: Vec<u32>,
}

pub fn geometry_file(dir: &Path, rank: u32) -> PathBuf {
    dir.join(format!("rank_{rank:05}.geo"))
}

/// Global length of each boundary tag, in the order [`crate::scenario::Scenario::boundary_table`] sums.
pub fn tag_lengths(topo: &Topology) -> Vec<(u32, f64)> {
    let mut lengths = std::collections::BTreeMap::new();
    for (e, &tag) in topo.edge_tag.iter().enumerate() {
        if tag != 0 && topo.edge_cells[e][1] == NO_CELL {
            *lengths.entry(tag).or_insert(0.0) += topo.edge_length[e];
        }
    }
    lengths.into_iter().collect()
}

/// The distinct nonzero tags of `mesh`'s boundary segments.
pub fn segment_tags(mesh: &Mesh) -> Vec<u32> {
    let mut t: Vec<u32> = mesh.boundary.iter().map(|s| s.tag).filter(|&t| t != 0).collect();
    t.sort_unstable();
    t.dedup();
    t
}

impl RankGeometry {
    /// Rank `sub.rank`'s geometry, cut from the global mesh and topology.
    pub fn build(
        mesh: &Mesh,
        topo: &Topology,
        sub: &Submesh,
        source_id: u64,
        tag_lengths: &[(u32, f64)],
        segment_tags: &[u32],
    ) -> Result<RankGeometry> {
        Ok(RankGeometry {
            rank: sub.rank,
            ranks: sub.ranks,
            mesh_fingerprint: sub.mesh_fingerprint,
            source_id,
            rank_file_crc: crc32fast::hash(&super::files::encode(sub)),
            topo: sub.local_topology(topo)?,
            piece: sub.owned_mesh(mesh),
            tag_lengths: tag_lengths.to_vec(),
            segment_tags: segment_tags.to_vec(),
        })
    }

    pub fn encode(&self) -> Vec<u8> {
        let (t, p) = (&self.topo, &self.piece);
        let (n, m) = (t.num_cells(), t.num_edges());
        let mut b = Vec::with_capacity(64 + n * 36 + m * 47 + p.vertices.len() * 16 + p.triangles.len() * 12);
        let u32s = |b: &mut Vec<u8>, xs: &[u32]| xs.iter().for_each(|x| b.extend_from_slice(&x.to_le_bytes()));
        let f64s = |b: &mut Vec<u8>, xs: &[f64]| xs.iter().for_each(|x| b.extend_from_slice(&x.to_le_bytes()));
        b.extend_from_slice(MAGIC);
        u32s(&mut b, &[FORMAT_VERSION, self.rank, self.ranks]);
        b.extend_from_slice(&self.mesh_fingerprint.to_le_bytes());
        b.extend_from_slice(&self.source_id.to_le_bytes());
        u32s(&mut b, &[self.rank_file_crc]);
        let counts = [n, m, p.vertices.len(), p.triangles.len(), self.tag_lengths.len(), self.segment_tags.len()];
        u32s(&mut b, &counts.map(|c| c as u32));
        for c in 0..n {
            f64s(&mut b, &[t.cell_area[c], t.cell_centroid[c][0], t.cell_centroid[c][1]]);
            u32s(&mut b, &t.cell_edges[c]);
        }
        for e in 0..m {
            u32s(&mut b, &t.edge_cells[e]);
            b.extend_from_slice(&t.edge_slots[e]);
            f64s(&mut b, &[t.edge_normal[e][0], t.edge_normal[e][1], t.edge_length[e]]);
            u32s(&mut b, &[t.edge_tag[e], t.edge_vertices[e][0], t.edge_vertices[e][1]]);
            b.push(u8::from(t.edge_corner[e]));
        }
        p.vertices.iter().for_each(|v| f64s(&mut b, v));
        p.triangles.iter().for_each(|tri| u32s(&mut b, tri));
        for &(tag, len) in &self.tag_lengths {
            u32s(&mut b, &[tag]);
            f64s(&mut b, &[len]);
        }
        u32s(&mut b, &self.segment_tags);
        let crc = crc32fast::hash(&b);
        b.extend_from_slice(&crc.to_le_bytes());
        b
    }

    /// Parse and check a geometry file's bytes: magic, version, checksum, then every local
    /// index in bounds, so that a faulty file cannot make the solver index out of bounds.
    pub fn decode(bytes: &[u8]) -> Result<RankGeometry> {
        if bytes.len() < 12 || &bytes[..8] != MAGIC {
            bail!("not a pycno rank geometry file (no PYCNOGEO magic)");
        }
        let version = u32::from_le_bytes(bytes[8..12].try_into()?);
        if version != FORMAT_VERSION {
            bail!("geometry format version {version}, but this pycno reads version {FORMAT_VERSION}: partition the mesh again");
        }
        let (body, tail) = bytes.split_at(bytes.len().max(16) - 4);
        let stored = u32::from_le_bytes(tail.try_into().context("truncated")?);
        if crc32fast::hash(body) != stored {
            bail!("checksum mismatch: the file is corrupted or truncated");
        }
        let mut c = Reader { b: body, at: 12 };
        let (rank, ranks) = (c.u32()?, c.u32()?);
        let (mesh_fingerprint, source_id, rank_file_crc) = (c.u64()?, c.u64()?, c.u32()?);
        let [n, m, nv, nt, ntags, nseg] = [(); 6].map(|_| c.u32().map(|x| x as usize));
        let (n, m, nv, nt, ntags, nseg) = (n?, m?, nv?, nt?, ntags?, nseg?);
        // Counts are checked against the bytes left before anything is allocated.
        let need =
            n as u128 * 36 + m as u128 * 47 + nv as u128 * 16 + nt as u128 * 12 + ntags as u128 * 12 + nseg as u128 * 4;
        if need != (body.len() - c.at) as u128 {
            bail!("its counts do not match its size (inconsistent header)");
        }
        let mut t = Topology::default();
        for _ in 0..n {
            t.cell_area.push(c.f64()?);
            t.cell_centroid.push([c.f64()?, c.f64()?]);
            t.cell_edges.push([c.u32()?, c.u32()?, c.u32()?]);
        }
        for _ in 0..m {
            t.edge_cells.push([c.u32()?, c.u32()?]);
            let s = c.take(2)?;
            t.edge_slots.push([s[0], s[1]]);
            t.edge_normal.push([c.f64()?, c.f64()?]);
            t.edge_length.push(c.f64()?);
            t.edge_tag.push(c.u32()?);
            t.edge_vertices.push([c.u32()?, c.u32()?]);
            t.edge_corner.push(match c.take(1)?[0] {
                0 => false,
                1 => true,
                x => bail!("edge {}: corner flag {x}, expected 0 or 1", t.edge_corner.len()),
            });
        }
        let mut piece =
            Mesh { vertices: Vec::with_capacity(nv), triangles: Vec::with_capacity(nt), boundary: Vec::new() };
        for _ in 0..nv {
            piece.vertices.push([c.f64()?, c.f64()?]);
        }
        for _ in 0..nt {
            piece.triangles.push([c.u32()?, c.u32()?, c.u32()?]);
        }
        let mut tag_lengths = Vec::with_capacity(ntags);
        for _ in 0..ntags {
            tag_lengths.push((c.u32()?, c.f64()?));
        }
        let segment_tags = (0..nseg).map(|_| c.u32()).collect::<Result<Vec<_>>>()?;
        let g = RankGeometry {
            rank,
            ranks,
            mesh_fingerprint,
            source_id,
            rank_file_crc,
            topo: t,
            piece,
            tag_lengths,
            segment_tags,
        };
        g.check().context("inconsistent geometry")?;
        Ok(g)
    }

    /// Local indices in bounds, slots below 3, the piece's triangles on its vertices.
    fn check(&self) -> Result<()> {
        let t = &self.topo;
        let (n, m) = (t.num_cells() as u32, t.num_edges() as u32);
        if self.rank >= self.ranks {
            bail!("rank {} of {} ranks", self.rank, self.ranks);
        }
        for (e, (&[i, j], s)) in t.edge_cells.iter().zip(&t.edge_slots).enumerate() {
            if i >= n || (j >= n && j != NO_CELL) || s[0] > 2 || s[1] > 2 {
                bail!("edge {e}: cells ({i}, {j}) or slots {s:?} out of range for {n} cells");
            }
        }
        if let Some(c) = t.cell_edges.iter().position(|ce| ce.iter().any(|&e| e >= m && e != u32::MAX)) {
            bail!("cell {c}: an edge beyond the {m} edges");
        }
        let nv = self.piece.vertices.len() as u32;
        if self.piece.triangles.iter().flatten().any(|&v| v >= nv) {
            bail!("a piece triangle refers to a vertex beyond the {nv} vertices");
        }
        if self.piece.triangles.len() > t.num_cells() {
            bail!("{} piece triangles for {} local cells", self.piece.triangles.len(), n);
        }
        Ok(())
    }

    /// Whether it fits this submesh: written with it (the rank file's CRC), same rank,
    /// partition and mesh, one piece triangle per owned cell, one local cell and edge per
    /// submesh cell and edge.
    pub fn fits(&self, sub: &Submesh) -> Result<()> {
        if self.rank_file_crc != crc32fast::hash(&super::files::encode(sub))
            || (self.rank, self.ranks, self.mesh_fingerprint) != (sub.rank, sub.ranks, sub.mesh_fingerprint)
            || self.topo.num_cells() != sub.num_cells()
            || self.topo.num_edges() != sub.num_edges()
            || self.piece.triangles.len() != sub.n_owned
        {
            bail!("it and the rank file beside it do not belong to one partition");
        }
        if let Some(l) = (0..sub.n_owned).find(|&l| self.topo.cell_edges[l].contains(&u32::MAX)) {
            bail!("owned cell {l} lacks some of its edges");
        }
        Ok(())
    }
}

/// Write rank `g.rank`'s geometry file atomically; returns its size.
pub fn write_geometry(dir: &Path, g: &RankGeometry) -> Result<u64> {
    let bytes = g.encode();
    write_bytes_atomic(&geometry_file(dir, g.rank), &bytes)?;
    Ok(bytes.len() as u64)
}

/// Read rank `rank`'s geometry file from `dir`.
pub fn read_geometry(dir: &Path, rank: u32) -> Result<RankGeometry> {
    let path = geometry_file(dir, rank);
    let bytes = crate::util::files::read_regular(&path)
        .with_context(|| format!("cannot read partition geometry file {}", path.display()))?;
    let g = RankGeometry::decode(&bytes).with_context(|| format!("partition geometry file {}", path.display()))?;
    if g.rank != rank {
        bail!("partition geometry file {}: holds rank {}, not {rank}", path.display(), g.rank);
    }
    Ok(g)
}

/// Little-endian reader that fails (never panics) past the end.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8]> {
        let s = self.b.get(self.at..self.at + n).context("its counts run past the end of the data")?;
        self.at += n;
        Ok(s)
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into()?))
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into()?))
    }
    fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_bits(self.u64()?))
    }
}
