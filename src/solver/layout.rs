//! The data layout of de la Asunción et al. (2012), section 5, shared by the CPU and CUDA
//! backends: two float4 volume arrays, one int4 and one float2 per edge, six float4
//! accumulators, and the boundary table.
//!
//! - `v1[c] = (d1, q1x, q1y, H)`, `v2[c] = (d2, q2x, q2y, area)`: the paper's records, with
//!   each thickness stored as its deviation from the reference rest state
//!   (`physics/state.rs`: `d1 = h1 - (surface - interface)`, `d2 = h2 - (H + interface)`).
//! - `lo[c] = (d1_lo, d2_lo)`: the low parts of the two deviations (`d + lo` is the stored
//!   value), read and written by the update alone, so that no update is rounded away; the
//!   edge pass never reads them.
//! - `edge_cells[e] = (i, j, slot_i, slot_j)`; on a boundary edge `j = -1` ([`BOUNDARY`])
//!   and the fourth int, which no second cell needs, is the edge's index in `boundaries`.
//! - `edge_normal[e] = n * L`: the unit normal from i to j scaled by the edge length.
//! - accumulator `acc[2 * slot + layer][c]`: `(M1, M2, M3, Z)` for layer 0 (the upper
//!   layer) and `(M4, M5, M6, 0)` for layer 1. Every cell has three edges and every edge
//!   writes its slot of both its cells, so each step overwrites every accumulator word
//!   exactly once: no zeroing, no atomics, and a fixed summation order.
//!
//! Cells `0..n_owned` are updated; cells `n_owned..` are copies of other ranks' cells (the
//! receive block). Edges `0..n_local_edges` need only owned cells (and walls); the rest
//! touch the receive block. At second order on several ranks the receive block has two
//! rings and the first ring's cells have their stencils (`across` pointing at local cells):
//! the rank reconstructs them itself. Edges `0..n_inner_edges` then read only owned cells
//! whose reconstructions read no receive-block cell.

use crate::mesh::{Topology, NO_CELL};
use crate::physics::reconstruct::{Stencil, ACROSS_CORNER, ACROSS_OPEN, ACROSS_WALL};
use crate::physics::{
    Boundaries, Boundary, BoundaryKind, BoundarySpec, CellState, Real, Reference, StoredCell, Viscosity,
};
use anyhow::{bail, Result};
use std::ops::Range;

/// The second cell of a boundary edge.
pub const BOUNDARY: i32 = -1;

#[derive(Clone, Debug)]
pub struct Layout<T> {
    pub v1: Vec<[T; 4]>,
    pub v2: Vec<[T; 4]>,
    /// Low parts of the deviations, every cell (the update uses the owned ones).
    pub lo: Vec<[T; 2]>,
    pub edge_cells: Vec<[i32; 4]>,
    pub edge_normal: Vec<[T; 2]>,
    /// Indexed by a boundary edge's fourth int; entry 0 is a wall. Evaluated at
    /// `boundaries_time` from `specs` ([`Layout::refresh_boundaries`]).
    pub boundaries: Vec<Boundary<T>>,
    /// What each entry of `boundaries` prescribes over time.
    pub specs: Vec<BoundarySpec>,
    pub boundaries_time: f64,
    pub n_owned: usize,
    /// Second order on several ranks: edges `0..n_inner_edges` read only owned cells whose
    /// reconstructions read no receive-block cell (0 where the partition has one ring).
    pub n_inner_edges: usize,
    /// Edges that need no receive-block cell come first: `0..n_local_edges`.
    pub n_local_edges: usize,
    /// Each cell's depth in float64 and the rest state, for the conversions to and from
    /// [`CellState`] (`v1` holds the depth in the run's precision, for the kernels).
    pub depth: Vec<f64>,
    pub reference: Reference,
    /// Each owned cell's Coriolis parameter on a beta-plane (`Model::coriolis_per_cell`);
    /// empty otherwise ([`Layout::set_coriolis`]).
    pub coriolis: Vec<T>,
    /// Second order (`physics/reconstruct.rs`): per cell, what lies across each slot (a local
    /// cell, or `ACROSS_WALL` / `ACROSS_CORNER` / `ACROSS_OPEN` at the boundary; `i32::MIN` where the cell lacks
    /// the edge, as the receive block's outer ring does, which is not reconstructed here),
    /// and its least-squares stencil. Computed from the global mesh's geometry per cell, so
    /// that every partition has the same numbers.
    pub across: Vec<[i32; 3]>,
    pub stencil: Vec<Stencil<T>>,
    /// Each edge's viscous coupling `k = nu L / d` (m²/s, `physics/viscosity.rs`), 0 on the
    /// boundary; empty without viscosity ([`Layout::set_viscosity`]).
    pub edge_viscosity: Vec<T>,
    /// The boundary slots of the edges [`Layout::keep_edges`] dropped (the first ring's, on
    /// several ranks at second order): `(cell, slot, edge)`, `edge` the index in the topology
    /// the layout was made from, so that [`Layout::set_boundaries`] marks the open ones in
    /// `across` as on their owner.
    pub dropped_boundary: Vec<[u32; 3]>,
}

/// A float64 deviation and low part as the run's pair `(hi, lo)`: `hi` the rounded value,
/// `lo` what it could not hold. A pair read back from a run (`d` already a `T`) comes back
/// bit for bit, so a restart continues exactly.
fn split<T: Real>(d: f64, lo: f64) -> (T, T) {
    let hi = T::c(d);
    (hi, T::c((d - hi.f64()) + lo))
}

impl<T: Real> Layout<T> {
    /// The whole mesh on one rank, in global order, every boundary a wall (see
    /// [`Layout::set_boundaries`]), from each cell's state stored relative to `reference`.
    pub fn from_topology(topo: &Topology, depth: &[f64], state: &[CellState], reference: &Reference) -> Layout<T> {
        assert_eq!(depth.len(), state.len());
        let cells: Vec<StoredCell> =
            state.iter().zip(depth).map(|(s, &d)| StoredCell::from_state(s, d, reference)).collect();
        Layout::from_stored(topo, depth, &cells, reference)
    }

    /// The same from the stored cells themselves (a checkpoint's).
    pub fn from_stored(topo: &Topology, depth: &[f64], cells: &[StoredCell], reference: &Reference) -> Layout<T> {
        let n = topo.num_cells();
        assert_eq!(depth.len(), n);
        assert_eq!(cells.len(), n);
        let mut v1 = Vec::with_capacity(n);
        let mut v2 = Vec::with_capacity(n);
        let mut lo = Vec::with_capacity(n);
        for c in 0..n {
            let s = &cells[c];
            let (d1, lo1) = split::<T>(s.d1, s.lo[0]);
            let (d2, lo2) = split::<T>(s.d2, s.lo[1]);
            v1.push([d1, T::c(s.q1[0]), T::c(s.q1[1]), T::c(depth[c])]);
            v2.push([d2, T::c(s.q2[0]), T::c(s.q2[1]), T::c(topo.cell_area[c])]);
            lo.push([lo1, lo2]);
        }
        let ne = topo.num_edges();
        let mut edge_cells = Vec::with_capacity(ne);
        let mut edge_normal = Vec::with_capacity(ne);
        for e in 0..ne {
            let [i, j] = topo.edge_cells[e];
            let [si, sj] = topo.edge_slots[e];
            let j = if j == NO_CELL { BOUNDARY } else { j as i32 };
            edge_cells.push([i as i32, j, si as i32, if j == BOUNDARY { 0 } else { sj as i32 }]);
            let [nx, ny] = topo.edge_normal[e];
            let l = topo.edge_length[e];
            edge_normal.push([T::c(nx * l), T::c(ny * l)]);
        }
        let (across, stencil) = stencils(topo);
        Layout {
            across,
            stencil,
            v1,
            v2,
            lo,
            edge_cells,
            edge_normal,
            boundaries: vec![Boundary::wall()],
            specs: vec![BoundarySpec::wall()],
            boundaries_time: 0.0,
            n_owned: n,
            n_inner_edges: 0,
            n_local_edges: ne,
            depth: depth.to_vec(),
            reference: *reference,
            coriolis: Vec::new(),
            edge_viscosity: Vec::new(),
            dropped_boundary: Vec::new(),
        }
    }

    /// Keep only edges `0..n`, the ones the edge pass processes; the rest (the first ring's
    /// own edges, which only its stencils read) are dropped, their boundary slots kept in
    /// `dropped_boundary`.
    pub fn keep_edges(&mut self, n: usize) {
        let dropped = n..self.edge_cells.len();
        for (e, ec) in dropped.clone().zip(&self.edge_cells[dropped]) {
            if ec[1] == BOUNDARY {
                self.dropped_boundary.push([ec[0] as u32, ec[2] as u32, e as u32]);
            }
        }
        self.edge_cells.truncate(n);
        self.edge_normal.truncate(n);
        self.edge_viscosity.truncate(n);
    }

    /// Whether this layout carries what `m` reads per cell: an error names what is missing.
    pub fn check_model(&self, m: &crate::physics::Model<T>) -> anyhow::Result<()> {
        if m.coriolis_per_cell != 0 && self.coriolis.len() != self.n_owned {
            anyhow::bail!(
                "a beta-plane needs each owned cell's Coriolis parameter (Layout::set_coriolis): {} given for {} cells",
                self.coriolis.len(),
                self.n_owned
            );
        }
        Ok(())
    }

    /// Each owned cell's Coriolis parameter (1/s, in float64: both backends round the same
    /// values), for a beta-plane.
    pub fn set_coriolis(&mut self, f: &[f64]) {
        assert_eq!(f.len(), self.n_owned);
        self.coriolis = f.iter().map(|&f| T::c(f)).collect();
    }

    /// Each edge's viscous coupling from `v` (`topo` the topology the layout was made from, as
    /// for [`Layout::set_boundaries`]: this layout's edges first). Computed in float64 from the
    /// edge's length and its cells' centroids, which every partition has the same, and rounded
    /// once: every rank count gets the same couplings. A viscosity that does nothing leaves
    /// none.
    pub fn set_viscosity(&mut self, topo: &Topology, v: &Viscosity) {
        self.edge_viscosity = Vec::new();
        if !v.is_active() {
            return;
        }
        let n = self.edge_cells.len();
        assert!(topo.num_edges() >= n, "set_viscosity: the topology has fewer edges than the layout");
        self.edge_viscosity = (0..n)
            .map(|e| {
                let [i, j] = topo.edge_cells[e];
                if j == NO_CELL {
                    return T::zero();
                }
                let (a, b) = (topo.cell_centroid[i as usize], topo.cell_centroid[j as usize]);
                let nn = topo.edge_normal[e];
                let d = ((b[0] - a[0]) * nn[0] + (b[1] - a[1]) * nn[1]).abs();
                T::c(v.coupling(topo.edge_length[e], d))
            })
            .collect();
    }

    /// Point each boundary edge at its tag's entry of `b` (`edge_tag` per edge of the
    /// topology the layout was made from, as `Topology::edge_tag`: this layout's edges first,
    /// then any it dropped).
    pub fn set_boundaries(&mut self, edge_tag: &[u32], b: &Boundaries) {
        assert!(edge_tag.len() >= self.edge_cells.len());
        // A wall keeps what `stencils` found (a corner or not); another kind is open.
        let kind = |tag: u32, was: i32| {
            if b.specs[b.index(tag) as usize].kind == BoundaryKind::Wall {
                if was == ACROSS_OPEN {
                    ACROSS_WALL
                } else {
                    was
                }
            } else {
                ACROSS_OPEN
            }
        };
        for (ec, &tag) in self.edge_cells.iter_mut().zip(edge_tag) {
            if ec[1] == BOUNDARY {
                ec[3] = b.index(tag);
                let a = &mut self.across[ec[0] as usize][ec[2] as usize];
                *a = kind(tag, *a);
            }
        }
        for &[c, slot, e] in &self.dropped_boundary {
            let a = &mut self.across[c as usize][slot as usize];
            *a = kind(edge_tag[e as usize], *a);
        }
        self.specs = b.specs.clone();
        self.boundaries = self.specs.iter().map(|s| s.entry(0.0)).collect();
        self.boundaries_time = 0.0;
    }

    /// Evaluate the boundary table at time `t` (the start of a step), if it changes with time
    /// and was evaluated at another time. Returns whether it changed.
    pub fn refresh_boundaries(&mut self, t: f64) -> bool {
        if t == self.boundaries_time || !self.specs.iter().any(|s| s.time_dependent()) {
            return false;
        }
        self.boundaries = self.specs.iter().map(|s| s.entry(t)).collect();
        self.boundaries_time = t;
        true
    }

    /// The boundary edges through which mass may cross, of owned cells (each counted by
    /// exactly one rank): `(cell, slot, table entry)`, in edge order.
    pub fn open_edges(&self) -> Vec<[i32; 3]> {
        self.edge_cells
            .iter()
            .filter(|ec| {
                ec[1] == BOUNDARY
                    && (ec[0] as usize) < self.n_owned
                    && self.specs.get(ec[3] as usize).is_some_and(|s| s.kind != BoundaryKind::Wall)
            })
            .map(|ec| [ec[0], ec[2], ec[3]])
            .collect()
    }

    pub fn num_cells(&self) -> usize {
        self.v1.len()
    }
    pub fn num_edges(&self) -> usize {
        self.edge_cells.len()
    }

    /// Cell `c` as stored.
    pub fn stored(&self, c: usize) -> StoredCell {
        StoredCell::from_records(&self.v1[c], &self.v2[c], &self.lo[c])
    }

    /// Cell `c`'s thicknesses and momenta.
    pub fn cell_state(&self, c: usize) -> CellState {
        self.stored(c).state_in(self.depth[c], &self.reference, T::EPS.f64())
    }

    /// State of the owned cells in float64.
    pub fn host_state(&self) -> Vec<CellState> {
        (0..self.n_owned).map(|c| self.cell_state(c)).collect()
    }
}

/// Every owned cell's three slots are written by exactly one edge each (what lets both
/// backends' edge passes write the accumulators without atomics), no edge writes
/// a receive-block cell's slot that another edge also writes, and every boundary edge's
/// table index is in the boundary table.
pub fn check_slots<T: Real>(lay: &Layout<T>) -> Result<()> {
    let n = lay.num_cells();
    let mut seen = vec![0u8; n];
    for (e, &[i, j, si, sj]) in lay.edge_cells.iter().enumerate() {
        if j == BOUNDARY && !(0..lay.boundaries.len() as i32).contains(&sj) {
            bail!("boundary edge {e} refers to entry {sj} of a boundary table of {}", lay.boundaries.len());
        }
        for (c, s) in [(i, si), (j, sj)] {
            if c == BOUNDARY {
                continue;
            }
            if c < 0 || c as usize >= n || !(0..3).contains(&s) {
                bail!("edge {e} refers to cell {c} slot {s}, outside the {n} cells");
            }
            let bit = 1u8 << s;
            if seen[c as usize] & bit != 0 {
                bail!("edge {e} writes slot {s} of cell {c}, which another edge also writes");
            }
            seen[c as usize] |= bit;
        }
    }
    if let Some(c) = (0..lay.n_owned).find(|&c| seen[c] != 0b111) {
        bail!("owned cell {c} does not have all three edge slots filled (mask {:03b})", seen[c]);
    }
    Ok(())
}

/// Every cell's neighbours across its slots and least-squares stencil (`physics/reconstruct.rs`),
/// in float64 from the cell's own three edges and its neighbours' centroids, rounded once.
/// Every boundary slot starts as a wall, or a wall at a corner (`Topology::edge_corner`);
/// [`Layout::set_boundaries`] marks the open ones.
fn stencils<T: Real>(topo: &Topology) -> (Vec<[i32; 3]>, Vec<Stencil<T>>) {
    let n = topo.num_cells();
    let mut across = vec![[i32::MIN; 3]; n];
    let mut stencil = vec![Stencil::default(); n];
    for c in 0..n {
        let edges = topo.cell_edges[c];
        if edges.contains(&u32::MAX) {
            continue;
        }
        // Outward normals and the edge vectors of the counter-clockwise triangle (edge k runs
        // from vertex k to vertex k + 1): e = L (-n_y, n_x).
        let mut nout = [[0.0; 2]; 3];
        let mut ev = [[0.0; 2]; 3];
        for k in 0..3 {
            let e = edges[k] as usize;
            let s = if topo.edge_cells[e][0] as usize == c { 1.0 } else { -1.0 };
            let nn = topo.edge_normal[e];
            nout[k] = [s * nn[0], s * nn[1]];
            let l = topo.edge_length[e];
            ev[k] = [-l * nout[k][1], l * nout[k][0]];
        }
        // Vertex 0 from the centroid, then each midpoint.
        let mut p = [-(2.0 * ev[0][0] + ev[1][0]) / 3.0, -(2.0 * ev[0][1] + ev[1][1]) / 3.0];
        let mut r = [[0.0; 2]; 3];
        for k in 0..3 {
            r[k] = [p[0] + 0.5 * ev[k][0], p[1] + 0.5 * ev[k][1]];
            p = [p[0] + ev[k][0], p[1] + ev[k][1]];
        }
        let mut d = [[0.0; 2]; 3];
        for k in 0..3 {
            let e = edges[k] as usize;
            let [i, j] = topo.edge_cells[e];
            if j == NO_CELL {
                across[c][k] = if topo.edge_corner[e] { ACROSS_CORNER } else { ACROSS_WALL };
                let rn = 2.0 * (r[k][0] * nout[k][0] + r[k][1] * nout[k][1]);
                d[k] = [rn * nout[k][0], rn * nout[k][1]];
            } else {
                let o = if i as usize == c { j } else { i } as usize;
                across[c][k] = o as i32;
                let (a, b) = (topo.cell_centroid[o], topo.cell_centroid[c]);
                d[k] = [a[0] - b[0], a[1] - b[1]];
            }
        }
        let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
        for dk in &d {
            sxx += dk[0] * dk[0];
            sxy += dk[0] * dk[1];
            syy += dk[1] * dk[1];
        }
        let det = sxx * syy - sxy * sxy;
        let st = &mut stencil[c];
        for k in 0..3 {
            let w = [(syy * d[k][0] - sxy * d[k][1]) / det, (sxx * d[k][1] - sxy * d[k][0]) / det];
            let l = topo.edge_length[edges[k] as usize];
            st.w[k] = [T::c(w[0]), T::c(w[1])];
            st.r[k] = [T::c(r[k][0]), T::c(r[k][1])];
            st.ln[k] = [T::c(l * nout[k][0]), T::c(l * nout[k][1])];
        }
    }
    (across, stencil)
}

/// Second order: an owned cell whose stencil reads no receive-block cell (reconstructed by
/// `Cells::Inner`, `solver/backend.rs`).
pub const INNER: u8 = 1;
/// Second order: a cell with a stencil that reads the receive block (`Cells::Outer`).
pub const OUTER: u8 = 2;

/// Second order: which reconstruction covers each cell of `lay` ([`INNER`], [`OUTER`] or 0:
/// none, the receive block's outer ring) and the cells the `OUTER` ones lie among, for both
/// backends; checks that every cell the edges read has a stencil and that the inner edges read
/// only inner cells.
pub fn reconstruction_sets<T: Real>(lay: &Layout<T>) -> Result<(Vec<u8>, Range<usize>)> {
    let n_owned = lay.n_owned as i32;
    let recon: Vec<u8> = lay
        .across
        .iter()
        .enumerate()
        .map(|(c, a)| {
            if a.contains(&i32::MIN) {
                0
            } else if (c as i32) < n_owned && a.iter().all(|&o| o < n_owned) {
                INNER
            } else {
                OUTER
            }
        })
        .collect();
    for (e, &[i, j, ..]) in lay.edge_cells.iter().enumerate() {
        for c in [i, j].into_iter().filter(|&c| c != BOUNDARY) {
            if recon[c as usize] == 0 {
                bail!(
                    "second order: local cell {c} (on edge {e}) cannot be reconstructed here, not all its neighbours are local: a partition with one ring of receive cells (second order on several ranks needs two: pycno partition --order 2)"
                );
            }
            if e < lay.n_inner_edges && recon[c as usize] != INNER {
                bail!("second order: inner edge {e} reads cell {c}, whose stencil reads the receive block");
            }
        }
    }
    let first = recon.iter().position(|&r| r == OUTER).unwrap_or(0);
    let last = recon.iter().rposition(|&r| r == OUTER).map_or(0, |c| c + 1);
    Ok((recon, first..last.max(first)))
}

/// Add one step's boundary mass fluxes to the per-edge budget: `flux[k]` the outward mass
/// fluxes (layer 1, layer 2) times the edge length of open edge `k`, `dt` the step.
pub fn add_to_budget(budget: &mut [[f64; 4]], k: usize, flux: [f64; 2], dt: f64) {
    for (layer, f) in flux.into_iter().enumerate() {
        let v = f * dt;
        if v < 0.0 {
            budget[k][2 * layer] -= v;
        } else {
            budget[k][2 * layer + 1] += v;
        }
    }
}

/// The per-edge budget summed per table entry (`entries` long), in edge order.
pub fn budget_per_entry(open: &[[i32; 3]], per_edge: &[[f64; 4]], entries: usize) -> Vec<[f64; 4]> {
    let mut out = vec![[0.0; 4]; entries];
    for (e, b) in open.iter().zip(per_edge) {
        let o = &mut out[e[2] as usize];
        for k in 0..4 {
            o[k] += b[k];
        }
    }
    out
}

/// Bytes each kernel must move through device memory per launch in this layout, counted by
/// hand (each input read once, each output written once), for cell and edge counts and a
/// float size `s`: the edge pass reads its int4 and scaled normal, each cell's two float4
/// once, and writes two float4 per cell it touches; the time-step pass reads the Z word of
/// three accumulator float4 and the area word of v2, which the interleaved layout makes
/// whole float4 sectors (16 s per cell); the update reads v1, v2, six accumulators and the
/// float2 of low parts, and writes v1, v2 and the low parts. Second order's kernels: below.
pub fn kernel_bytes(kernel: &str, cells: usize, edges: usize, wall_edges: usize, s: usize) -> f64 {
    let (c, e, w) = (cells as f64, edges as f64, wall_edges as f64);
    let s = s as f64;
    match kernel {
        "edge" => e * (16.0 + 2.0 * s) + c * 8.0 * s + (2.0 * (e - w) + w) * 8.0 * s,
        "dt" => c * 16.0 * s,
        // Reads one buffer set, writes the other: (2 + 6 + 2) float4 and 2 float2.
        "update" => c * 44.0 * s,
        // Second order (`kernels/order2.cu`). The reconstruction reads each cell's two float4
        // (its neighbours' come from cache), its three neighbours (three ints), its stencil's
        // weights and midpoint offsets (a float4 per slot; the boundary slots' normals too),
        // and writes six float4 of edge values and the float4 of the interior term.
        "reconstruct" => c * (12.0 + 48.0 * s) + w * 2.0 * s,
        // The edge pass reads its int4 and scaled normal, each cell's six float4 of edge
        // values once and its depth, and writes what the first order's writes.
        "edge2" => e * (16.0 + 2.0 * s) + c * 25.0 * s + (2.0 * (e - w) + w) * 8.0 * s,
        // Both in one kernel over tiles: the reconstruction's reads and interior term, a
        // cell's place in its tile (an int; a cell next to two tiles is read again, from
        // cache), each edge's int4, two places (int2), scaled normal and its cells' depths,
        // and the first order's accumulator words; no edge values.
        "tile2" => c * (16.0 + 25.0 * s) + e * (24.0 + 2.0 * s) + (2.0 * (e - w) + w) * 8.0 * s + w * 2.0 * s,
        // The first order's update and the interior term's float4; the second stage also
        // reads the step's start (two float4 and a float2) from the buffers it writes.
        "stage1" => c * 48.0 * s,
        "stage2" => c * 58.0 * s,
        _ => 0.0,
    }
}
