//! Mesh partitioning for multi-rank runs (de la Asunción et al. 2012, sections 6.1-6.2): METIS k-way on the
//! dual graph of the triangles, then one [`Submesh`] per rank with its cells in three
//! blocks (interior, send grouped by destination, receive grouped by source in the sender's
//! order) and its edges in two ranges (no receive-block cell, then communication edges).
//! A partition for second order has two rings of receive cells ([`submesh`]), so that each
//! rank reconstructs the first ring itself: its edges then have two more ranges (the
//! non-communication edges split by whether their cells' reconstructions read the receive
//! block, and after the processed edges the first ring's other edges, for its stencils).
//!
//! - [`metis`]: the dual graph and the METIS call (fixed options, so the same input gives
//!   the same partition).
//! - [`order`]: the shared-cell pair ordering of a rank's send block, on an abstract
//!   "cell -> destination ranks" input, with the per-destination fallback.
//! - [`submesh`]: the per-rank cell and edge orders built from a cell -> rank map.
//! - [`local`]: a rank's local [`Topology`] and solver
//!   [`Layout`](crate::solver::Layout), built from the global topology and its submesh.
//! - [`files`]: the per-rank binary files (format version, mesh fingerprint, CRC-32) and the
//!   JSON manifest, written atomically.
//! - [`stats`]: cells per rank, imbalance, edge cut, neighbours, bytes per step, fallbacks.
//! - [`verify`]: whole-partition checks against the mesh (`pycno partition --check`).
//! - [`view`]: the mesh coloured by rank, block and number of destinations, for ParaView.

pub mod files;
pub mod fit;
pub mod geometry;
pub mod local;
pub mod metis;
pub mod order;
pub mod owners;
pub mod stats;
pub mod submesh;
pub mod verify;
pub mod view;

use crate::mesh::Topology;
use anyhow::{bail, Result};
use std::ops::Range;
use std::time::Instant;

/// A half-open run `start..start + len` of local cell indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Run {
    pub start: u32,
    pub len: u32,
}

impl Run {
    pub fn range(&self) -> Range<usize> {
        self.start as usize..(self.start + self.len) as usize
    }
}

/// The cells a rank sends to one neighbour, as runs of its local indices, in the order the
/// neighbour stores them. One run (the normal case): the message is the slice
/// `start..start + len` of the send block. Several runs (the fallback, where the pair
/// ordering could not make this destination contiguous): the concatenation of the runs,
/// i.e. a gather list stored compactly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SendTo {
    pub rank: u32,
    pub runs: Vec<Run>,
}

impl SendTo {
    pub fn is_contiguous(&self) -> bool {
        self.runs.len() == 1
    }
    /// The contiguous range, when there is one.
    pub fn range(&self) -> Option<Range<usize>> {
        match self.runs.as_slice() {
            [r] => Some(r.range()),
            _ => None,
        }
    }
    /// Number of cells sent.
    pub fn len(&self) -> usize {
        self.runs.iter().map(|r| r.len as usize).sum()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Local indices in send order: the gather list.
    pub fn cells(&self) -> impl Iterator<Item = usize> + '_ {
        self.runs.iter().flat_map(|r| r.range())
    }
}

/// The cells a rank receives from one neighbour: `start..start + len` of its receive block,
/// in exactly the order the neighbour sends them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecvFrom {
    pub rank: u32,
    pub start: u32,
    pub len: u32,
}

impl RecvFrom {
    pub fn range(&self) -> Range<usize> {
        self.start as usize..(self.start + self.len) as usize
    }
}

/// One rank's part of the mesh, in the order its solver stores it.
///
/// Local cells: `0..n_interior` interior (in no other rank's receive block),
/// `n_interior..n_owned` the send block, `n_owned..` the receive block (copies of other
/// ranks' cells: with one ring those sharing an edge with an owned cell, with two also their
/// edge neighbours). Local edges: `0..n_local_edges` touch only owned cells (or a wall),
/// `n_local_edges..n_pass_edges` one owned and one receive-block cell; with two rings,
/// `0..n_inner_edges` are the local edges whose cells have no neighbour on another rank, and
/// `n_pass_edges..` the edges of the first ring's cells that no owned cell touches (which no
/// edge pass here processes: only the first ring's stencils read them). Every edge keeps its
/// global orientation and slots, so the sums per cell are those of a one-rank run, bit for
/// bit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Submesh {
    pub rank: u32,
    pub ranks: u32,
    /// Fingerprint of the global mesh ([`files::mesh_fingerprint`]).
    pub mesh_fingerprint: u64,
    pub global_cells: u32,
    pub global_edges: u32,
    /// Global cell id of each local cell.
    pub global_cell: Vec<u32>,
    pub n_interior: usize,
    pub n_owned: usize,
    /// Global edge id of each local edge.
    pub global_edge: Vec<u32>,
    /// Rings of receive cells: 1 (first order) or 2 (second order).
    pub rings: u32,
    /// Two rings: edges `0..n_inner_edges` are what a second-order step processes while the
    /// halo travels. 0 with one ring.
    pub n_inner_edges: usize,
    pub n_local_edges: usize,
    /// Edges `0..n_pass_edges` are processed here; the rest (two rings) are the first ring's,
    /// for its stencils. All edges with one ring.
    pub n_pass_edges: usize,
    /// By ascending neighbour rank.
    pub sends: Vec<SendTo>,
    /// By ascending neighbour rank; the ranges tile the receive block in this order.
    pub recvs: Vec<RecvFrom>,
}

impl Submesh {
    pub fn num_cells(&self) -> usize {
        self.global_cell.len()
    }
    pub fn num_edges(&self) -> usize {
        self.global_edge.len()
    }
    pub fn send_block(&self) -> Range<usize> {
        self.n_interior..self.n_owned
    }
    pub fn receive_block(&self) -> Range<usize> {
        self.n_owned..self.global_cell.len()
    }
    /// The edges processed here (all but the first ring's own, with two rings).
    pub fn pass_edges(&self) -> Range<usize> {
        0..self.n_pass_edges
    }
    /// Destinations whose cells are not one contiguous range (sent through a gather).
    pub fn fallback_destinations(&self) -> usize {
        self.sends.iter().filter(|s| !s.is_contiguous()).count()
    }

    /// Check the submesh's own consistency (counts, runs and ranges in bounds, every
    /// send-block cell sent somewhere, receive ranges tiling the receive block), so that a
    /// file that passed its checksum but was written by a faulty tool cannot make a solver
    /// index out of bounds. Agreement with the global mesh is checked by
    /// [`Submesh::local_topology`].
    pub fn check(&self) -> Result<()> {
        let n = self.num_cells();
        if self.rank >= self.ranks {
            bail!("rank {} of {} ranks", self.rank, self.ranks);
        }
        if !(self.n_interior <= self.n_owned && self.n_owned <= n) {
            bail!("block bounds {} <= {} <= {} do not hold", self.n_interior, self.n_owned, n);
        }
        if !(self.rings == 1 || self.rings == 2) {
            bail!("{} rings of receive cells (1 or 2)", self.rings);
        }
        if !(self.n_inner_edges <= self.n_local_edges
            && self.n_local_edges <= self.n_pass_edges
            && self.n_pass_edges <= self.num_edges())
        {
            bail!(
                "edge bounds {} <= {} <= {} <= {} do not hold",
                self.n_inner_edges,
                self.n_local_edges,
                self.n_pass_edges,
                self.num_edges()
            );
        }
        if self.rings == 1 && (self.n_inner_edges != 0 || self.n_pass_edges != self.num_edges()) {
            bail!("one ring of receive cells, but edge ranges of two");
        }
        if let Some(c) = self.global_cell.iter().find(|&&c| c >= self.global_cells) {
            bail!("global cell {c} beyond the mesh's {} cells", self.global_cells);
        }
        if let Some(e) = self.global_edge.iter().find(|&&e| e >= self.global_edges) {
            bail!("global edge {e} beyond the mesh's {} edges", self.global_edges);
        }
        let mut seen = self.global_cell.clone();
        seen.sort_unstable();
        if let Some(w) = seen.windows(2).find(|w| w[0] == w[1]) {
            bail!("global cell {} appears twice", w[0]);
        }
        let mut seen = self.global_edge.clone();
        seen.sort_unstable();
        if let Some(w) = seen.windows(2).find(|w| w[0] == w[1]) {
            bail!("global edge {} appears twice", w[0]);
        }
        let increasing = |ranks: &mut dyn Iterator<Item = u32>| {
            let v: Vec<u32> = ranks.collect();
            v.windows(2).all(|w| w[0] < w[1]) && v.iter().all(|&r| r < self.ranks && r != self.rank)
        };
        if !increasing(&mut self.sends.iter().map(|s| s.rank)) {
            bail!("send neighbours are not distinct other ranks in ascending order");
        }
        if !increasing(&mut self.recvs.iter().map(|r| r.rank)) {
            bail!("receive neighbours are not distinct other ranks in ascending order");
        }
        let block = self.send_block();
        let mut sent = vec![false; block.len()];
        for s in &self.sends {
            if s.runs.is_empty() {
                bail!("nothing sent to rank {}", s.rank);
            }
            for r in &s.runs {
                let range = r.start as usize..r.start as usize + r.len as usize;
                if r.len == 0 || range.start < block.start || range.end > block.end {
                    bail!("send run {range:?} to rank {} outside the send block {block:?}", s.rank);
                }
                range.for_each(|c| sent[c - block.start] = true);
            }
        }
        if let Some(c) = sent.iter().position(|s| !s) {
            bail!("send-block cell {} goes to no rank", c + block.start);
        }
        let mut at = self.n_owned;
        for r in &self.recvs {
            if r.start as usize != at || r.len == 0 {
                bail!("receive range from rank {} does not continue the receive block at {at}", r.rank);
            }
            at += r.len as usize;
        }
        if at != n {
            bail!("receive ranges end at {at}, the receive block at {n}");
        }
        Ok(())
    }
}

/// Everything the partitioning computes for one mesh and rank count.
pub struct Partitioned {
    /// Owning rank of each global cell.
    pub owner: Vec<u32>,
    pub submeshes: Vec<Submesh>,
    pub metis_seconds: f64,
    pub submesh_seconds: f64,
}

/// Rings of receive cells a run at `physics.order = order` needs: 1 at first order, 2 at
/// second (the first ring's reconstruction reads its neighbours).
pub fn rings_for_order(order: u32) -> u32 {
    if order >= 2 {
        2
    } else {
        1
    }
}

/// Partition `topo` into `ranks` parts and build every rank's submesh (one ring).
pub fn partition(topo: &Topology, ranks: usize, mesh_fingerprint: u64) -> Result<Partitioned> {
    partition_with(topo, None, ranks, mesh_fingerprint, 1)
}

/// As [`partition`], with the owners given (`Some`) rather than computed by METIS, and
/// `rings` rings of receive cells ([`rings_for_order`]).
pub fn partition_with(
    topo: &Topology,
    owner: Option<Vec<u32>>,
    ranks: usize,
    mesh_fingerprint: u64,
    rings: u32,
) -> Result<Partitioned> {
    let clock = Instant::now();
    let owner = match owner {
        Some(o) => o,
        None => metis::partition_cells(topo, ranks)?,
    };
    let metis_seconds = clock.elapsed().as_secs_f64();
    let clock = Instant::now();
    let submeshes = submesh::build_rings(topo, &owner, ranks, mesh_fingerprint, rings)?;
    Ok(Partitioned { owner, submeshes, metis_seconds, submesh_seconds: clock.elapsed().as_secs_f64() })
}
