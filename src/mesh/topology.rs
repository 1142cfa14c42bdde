//! The solver-ready view of a mesh: every edge once, with its two cells, its slot in each,
//! its unit normal and length. The slot of an edge in a cell is the edge's local index in
//! the triangle (edge k joins vertices k and k+1), fixed by the global mesh, and the edge's
//! first cell is always the one with the lower global id: together these make every
//! partition and every rank count produce the same sums in the same order (docs/numerics.md,
//! "determinism").

use super::Mesh;
use anyhow::{bail, Result};
use rayon::prelude::*;
use std::collections::HashMap;

/// Marks the missing second cell of a boundary edge.
pub const NO_CELL: u32 = u32::MAX;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Topology {
    pub cell_area: Vec<f64>,
    pub cell_centroid: Vec<[f64; 2]>,
    /// Edge index for each of the cell's three slots.
    pub cell_edges: Vec<[u32; 3]>,
    /// `[i, j]` with `i < j`; `j == NO_CELL` on the boundary.
    pub edge_cells: Vec<[u32; 2]>,
    /// Slot of the edge in cell i and in cell j (the latter unused on the boundary).
    pub edge_slots: Vec<[u8; 2]>,
    /// Unit normal pointing from i to j (outward from i on the boundary).
    pub edge_normal: Vec<[f64; 2]>,
    pub edge_length: Vec<f64>,
    /// Boundary tag (0 for interior edges and untagged walls).
    pub edge_tag: Vec<u32>,
    pub edge_vertices: Vec<[u32; 2]>,
    /// A boundary edge with an end at a re-entrant corner of the domain, where the water's
    /// angle round the vertex exceeds [`CORNER_ANGLE`] (the mouth of a strait seen from the
    /// basin, a headland's tip). The reconstruction's mirror across a wall stands for the water
    /// beyond a straight wall; at such a corner the water beyond is round the corner
    /// (`physics/reconstruct.rs`). Found on the whole mesh, so that every partition agrees.
    pub edge_corner: Vec<bool>,
}

/// The water's angle round a boundary vertex (radians) above which the vertex is a re-entrant
/// corner ([`Topology::edge_corner`]): the coast turns by more than 20 degrees towards the
/// water there. A coast resolved by a mesh turns by a few degrees a vertex; a corner of a
/// polygon, a strait's mouth or a jetty's tip by 90 to 180.
pub const CORNER_ANGLE: f64 = 200.0 * std::f64::consts::PI / 180.0;

impl Topology {
    pub fn num_cells(&self) -> usize {
        self.cell_area.len()
    }
    pub fn num_edges(&self) -> usize {
        self.edge_cells.len()
    }
    pub fn is_boundary(&self, e: usize) -> bool {
        self.edge_cells[e][1] == NO_CELL
    }

    /// Build from a checked, counter-clockwise mesh. Fails on edges shared by more than two
    /// triangles and on neighbours of opposite orientation.
    pub fn build(mesh: &Mesh) -> Result<Topology> {
        let nt = mesh.triangles.len();
        // Half-edges sorted by their undirected vertex pair: equal keys are one edge.
        let mut half: Vec<(u64, u32)> = Vec::with_capacity(3 * nt);
        for (t, tri) in mesh.triangles.iter().enumerate() {
            for k in 0..3 {
                let (a, b) = (tri[k], tri[(k + 1) % 3]);
                let key = ((a.min(b) as u64) << 32) | a.max(b) as u64;
                half.push((key, (3 * t + k) as u32));
            }
        }
        half.par_sort_unstable();

        let tags: HashMap<u64, u32> = mesh
            .boundary
            .iter()
            .map(|s| {
                let [a, b] = s.v;
                (((a.min(b) as u64) << 32) | a.max(b) as u64, s.tag)
            })
            .collect();

        // (i, j, slot_i, slot_j, key)
        let mut edges: Vec<(u32, u32, u8, u8, u64)> = Vec::with_capacity(3 * nt / 2 + 16);
        let mut s = 0;
        while s < half.len() {
            let key = half[s].0;
            let mut e = s + 1;
            while e < half.len() && half[e].0 == key {
                e += 1;
            }
            let (va, vb) = ((key >> 32) as u32, key as u32);
            match e - s {
                1 => {
                    let h = half[s].1;
                    edges.push((h / 3, NO_CELL, (h % 3) as u8, 0, key));
                }
                2 => {
                    let (h0, h1) = (half[s].1, half[s + 1].1);
                    let (t0, t1) = (h0 / 3, h1 / 3);
                    let dir = |h: u32| mesh.triangles[(h / 3) as usize][(h % 3) as usize];
                    if dir(h0) == dir(h1) {
                        bail!(
                            "triangles {t0} and {t1} share edge ({va}, {vb}) with the same orientation: \
                             one of them is inverted"
                        );
                    }
                    let (i, j, si, sj) = if t0 < t1 { (t0, t1, h0 % 3, h1 % 3) } else { (t1, t0, h1 % 3, h0 % 3) };
                    edges.push((i, j, si as u8, sj as u8, key));
                }
                n => {
                    let ts: Vec<u32> = half[s..e].iter().map(|h| h.1 / 3).collect();
                    bail!("non-manifold edge ({va}, {vb}): shared by {n} triangles {ts:?}, at most 2 allowed");
                }
            }
            s = e;
        }
        // Edges ordered by the cells they touch, for locality in the edge pass.
        edges.par_sort_unstable_by_key(|&(i, j, ..)| ((i as u64) << 32) | j as u64);

        let ne = edges.len();
        let mut topo = Topology {
            cell_area: (0..nt).map(|t| mesh.signed_area(t)).collect(),
            cell_centroid: (0..nt).map(|t| mesh.centroid(t)).collect(),
            cell_edges: vec![[u32::MAX; 3]; nt],
            edge_cells: Vec::with_capacity(ne),
            edge_slots: Vec::with_capacity(ne),
            edge_normal: Vec::with_capacity(ne),
            edge_length: Vec::with_capacity(ne),
            edge_tag: Vec::with_capacity(ne),
            edge_vertices: Vec::with_capacity(ne),
            edge_corner: Vec::with_capacity(ne),
        };
        // The water's angle round each boundary vertex (the only ones `edge_corner` reads): the
        // interior angles of the triangles there. Interior vertices take no arctangent, so
        // that start-up on 10^8 cells does not pay three per triangle.
        let mut on_boundary = vec![false; mesh.vertices.len()];
        for &(_, j, .., key) in &edges {
            if j == NO_CELL {
                on_boundary[(key >> 32) as usize] = true;
                on_boundary[key as u32 as usize] = true;
            }
        }
        let mut angle = vec![0.0f64; mesh.vertices.len()];
        for tri in &mesh.triangles {
            for k in 0..3 {
                if !on_boundary[tri[k] as usize] {
                    continue;
                }
                let p = mesh.vertices[tri[k] as usize];
                let (a, b) = (mesh.vertices[tri[(k + 1) % 3] as usize], mesh.vertices[tri[(k + 2) % 3] as usize]);
                let (u, v) = ([a[0] - p[0], a[1] - p[1]], [b[0] - p[0], b[1] - p[1]]);
                angle[tri[k] as usize] += (u[0] * v[1] - u[1] * v[0]).abs().atan2(u[0] * v[0] + u[1] * v[1]);
            }
        }
        for (e, &(i, j, si, sj, key)) in edges.iter().enumerate() {
            let tri = mesh.triangles[i as usize];
            let (a, b) = (tri[si as usize], tri[(si as usize + 1) % 3]);
            let (pa, pb) = (mesh.vertices[a as usize], mesh.vertices[b as usize]);
            let (dx, dy) = (pb[0] - pa[0], pb[1] - pa[1]);
            let len = (dx * dx + dy * dy).sqrt();
            // Outward normal of a counter-clockwise triangle across edge a->b.
            topo.edge_normal.push([dy / len, -dx / len]);
            topo.edge_length.push(len);
            topo.edge_cells.push([i, j]);
            topo.edge_slots.push([si, sj]);
            topo.edge_vertices.push([a, b]);
            topo.edge_corner
                .push(j == NO_CELL && (angle[a as usize] > CORNER_ANGLE || angle[b as usize] > CORNER_ANGLE));
            topo.edge_tag.push(if j == NO_CELL { tags.get(&key).copied().unwrap_or(0) } else { 0 });
            topo.cell_edges[i as usize][si as usize] = e as u32;
            if j != NO_CELL {
                topo.cell_edges[j as usize][sj as usize] = e as u32;
            }
        }
        Ok(topo)
    }

    /// Number of connected parts of the dual graph (cells joined through edges).
    pub fn connected_parts(&self) -> usize {
        let n = self.num_cells();
        let mut parent: Vec<u32> = (0..n as u32).collect();
        fn find(p: &mut [u32], mut x: u32) -> u32 {
            while p[x as usize] != x {
                p[x as usize] = p[p[x as usize] as usize];
                x = p[x as usize];
            }
            x
        }
        for &[i, j] in &self.edge_cells {
            if j != NO_CELL {
                let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                if a != b {
                    parent[a.max(b) as usize] = a.min(b);
                }
            }
        }
        (0..n as u32).filter(|&x| find(&mut parent, x) == x).count()
    }
}
