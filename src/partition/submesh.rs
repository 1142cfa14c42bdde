//! Every rank's [`Submesh`] from a cell -> rank map: cell blocks (de la Asunción et al. 2012, section 6.1)
//! and edge ranges. All per-rank work runs in parallel; the only sequential step hands each
//! rank's send lists to their receivers.
//!
//! **Rings.** With one ring (first order) a rank receives the other ranks' cells that share
//! an edge with one of its own: what its edges read. With two (second order) it also
//! receives their edge neighbours: the cells within two edge steps of an owned cell. The
//! first ring's cells then have all their neighbours on the rank, so the rank reconstructs
//! them itself, from the same numbers and with the same code as their owner
//! (`physics/reconstruct.rs`): one exchange of states per stage instead of states and then
//! reconstructed edge values. The send block is correspondingly every owned cell within two
//! steps of another rank, each with the set of ranks it goes to (up to nine), ordered by the
//! same shared-cell pair ordering and fallback ([`super::order`]).

use super::order::order_send_block;
use super::{RecvFrom, Run, SendTo, Submesh};
use crate::mesh::{Topology, NO_CELL};
use anyhow::{bail, Result};
use rayon::prelude::*;

/// No rank (an owner not yet known).
pub const NO_RANK: u32 = u32::MAX;

/// The cells across cell `c`'s edges (not the boundary).
fn neighbours(topo: &Topology, c: usize) -> impl Iterator<Item = usize> + '_ {
    topo.cell_edges[c].iter().filter_map(move |&e| {
        let [i, j] = topo.edge_cells[e as usize];
        let other = if i as usize == c { j } else { i };
        (other != NO_CELL).then_some(other as usize)
    })
}

/// Each cell's destinations with `rings` rings of receive cells: the ranks other than its
/// owner that own a cell within `rings` edge steps of it, ascending. A cell with any is a
/// communication cell: it belongs to its owner's send block and to those ranks' receive
/// blocks. Stored compactly (most cells have none): cell `c`'s are
/// `ranks[start[c]..start[c + 1]]`.
pub struct Destinations {
    start: Vec<usize>,
    ranks: Vec<u32>,
}

impl Destinations {
    pub fn new(topo: &Topology, owner: &[u32], rings: u32) -> Destinations {
        const CHUNK: usize = 1 << 14;
        let n = topo.num_cells();
        // The owners of the neighbours (and with two rings of the neighbours' neighbours: at
        // most nine cells), per chunk of cells in parallel, then concatenated.
        let chunks: Vec<(Vec<u8>, Vec<u32>)> = (0..n.div_ceil(CHUNK))
            .into_par_iter()
            .map(|k| {
                let cells = k * CHUNK..((k + 1) * CHUNK).min(n);
                let mut counts = Vec::with_capacity(cells.len());
                let mut flat = Vec::new();
                for c in cells {
                    let p = owner[c];
                    let at = flat.len();
                    let add = |r: u32, flat: &mut Vec<u32>| {
                        if r != p && !flat[at..].contains(&r) {
                            flat.push(r);
                        }
                    };
                    for a in neighbours(topo, c) {
                        add(owner[a], &mut flat);
                        if rings >= 2 {
                            for b in neighbours(topo, a) {
                                add(owner[b], &mut flat);
                            }
                        }
                    }
                    flat[at..].sort_unstable();
                    counts.push((flat.len() - at) as u8);
                }
                (counts, flat)
            })
            .collect();
        let mut start = Vec::with_capacity(n + 1);
        let mut ranks = Vec::with_capacity(chunks.iter().map(|c| c.1.len()).sum());
        start.push(0);
        for (counts, flat) in chunks {
            for k in counts {
                start.push(start[start.len() - 1] + k as usize);
            }
            ranks.extend_from_slice(&flat);
        }
        Destinations { start, ranks }
    }

    /// Cell `c`'s destinations, ascending.
    pub fn of(&self, c: usize) -> &[u32] {
        &self.ranks[self.start[c]..self.start[c + 1]]
    }
}

/// Build the submesh of every rank, with one ring of receive cells (first order).
pub fn build(topo: &Topology, owner: &[u32], ranks: usize, mesh_fingerprint: u64) -> Result<Vec<Submesh>> {
    build_rings(topo, owner, ranks, mesh_fingerprint, 1)
}

/// Build the submesh of every rank with `rings` rings of receive cells (1: first order, 2:
/// second order; module docs). `owner[c]` is the rank of global cell `c`.
pub fn build_rings(
    topo: &Topology,
    owner: &[u32],
    ranks: usize,
    mesh_fingerprint: u64,
    rings: u32,
) -> Result<Vec<Submesh>> {
    let n = topo.num_cells();
    if !(rings == 1 || rings == 2) {
        bail!("{rings} rings of receive cells: expected 1 (first order) or 2 (second order)");
    }
    if owner.len() != n {
        bail!("{} owners for {n} cells", owner.len());
    }
    if let Some(c) = owner.iter().position(|&r| r as usize >= ranks) {
        bail!("cell {c} is owned by rank {}, outside 0..{ranks}", owner[c]);
    }
    let (global_cells, global_edges) = match (u32::try_from(n), u32::try_from(topo.num_edges())) {
        (Ok(c), Ok(e)) if c < NO_CELL && e < u32::MAX => (c, e),
        _ => bail!("the mesh is too large for 32-bit cell and edge ids"),
    };
    let dest = Destinations::new(topo, owner, rings);

    // Each rank's cells in global (Hilbert, hence local) order: a counting sort by owner.
    let mut start = vec![0usize; ranks + 1];
    for &r in owner {
        start[r as usize + 1] += 1;
    }
    for r in 0..ranks {
        start[r + 1] += start[r];
    }
    let mut by_rank = vec![0u32; n];
    let mut fill = start.clone();
    for (c, &r) in owner.iter().enumerate() {
        by_rank[fill[r as usize]] = c as u32;
        fill[r as usize] += 1;
    }
    let owned_cells = |p: usize| &by_rank[start[p]..start[p + 1]];

    // Owned cells: the interior block, then the send block in the pair order.
    struct Owned {
        global_cell: Vec<u32>,
        n_interior: usize,
        sends: Vec<SendTo>,
    }
    let owned: Vec<Owned> = (0..ranks)
        .into_par_iter()
        .map(|p| {
            let mine = owned_cells(p);
            let mut global_cell: Vec<u32> = mine.iter().copied().filter(|&c| dest.of(c as usize).is_empty()).collect();
            let n_interior = global_cell.len();
            let comm: Vec<(u32, &[u32])> =
                mine.iter().filter(|&&c| !dest.of(c as usize).is_empty()).map(|&c| (c, dest.of(c as usize))).collect();
            let so = order_send_block(&comm);
            global_cell.extend_from_slice(&so.order);
            let shift = n_interior as u32;
            let sends = so
                .dests
                .into_iter()
                .map(|(rank, runs)| SendTo {
                    rank,
                    runs: runs.into_iter().map(|r| Run { start: r.start + shift, len: r.len }).collect(),
                })
                .collect();
            Owned { global_cell, n_interior, sends }
        })
        .collect();

    // Receive blocks: rank q gets from each source p, by ascending p, the cells p sends to
    // q in p's send order.
    let mut incoming: Vec<Vec<(u32, Vec<u32>)>> = (0..ranks).map(|_| Vec::new()).collect();
    for (p, o) in owned.iter().enumerate() {
        for s in &o.sends {
            incoming[s.rank as usize].push((p as u32, s.cells().map(|l| o.global_cell[l]).collect()));
        }
    }

    let subs = owned
        .into_par_iter()
        .zip(incoming)
        .enumerate()
        .map(|(p, (o, inc))| {
            let n_owned = o.global_cell.len();
            let mut global_cell = o.global_cell;
            let mut recvs = Vec::with_capacity(inc.len());
            for (rank, ids) in inc {
                recvs.push(RecvFrom { rank, start: global_cell.len() as u32, len: ids.len() as u32 });
                global_cell.extend_from_slice(&ids);
            }
            let edges = rank_edges(topo, owner, p as u32, owned_cells(p), rings, &global_cell[n_owned..]);
            Submesh {
                rank: p as u32,
                ranks: ranks as u32,
                mesh_fingerprint,
                global_cells,
                global_edges,
                global_cell,
                n_interior: o.n_interior,
                n_owned,
                global_edge: edges.global_edge,
                rings,
                n_inner_edges: edges.n_inner,
                n_local_edges: edges.n_local,
                n_pass_edges: edges.n_pass,
                sends: o.sends,
                recvs,
            }
        })
        .collect();
    Ok(subs)
}

/// Rank `p`'s edges ([`Submesh`]'s ranges) and where its ranges end.
struct RankEdges {
    global_edge: Vec<u32>,
    n_inner: usize,
    n_local: usize,
    n_pass: usize,
}

/// The edges rank `p` processes: every edge with an owned cell, each taken once (from its
/// first owned cell). Non-communication edges (both cells owned, or a wall) first, then the
/// communication edges; each range in global edge order, which follows the cells' global
/// (Hilbert) order. With two rings the non-communication edges are split in two, those whose
/// cells have no neighbour on another rank (their reconstructions read no receive-block cell)
/// first; and after the processed edges come the other edges of the first ring's cells
/// (`receive`: the receive block's global ids), in global order, for their stencils.
fn rank_edges(topo: &Topology, owner: &[u32], p: u32, mine: &[u32], rings: u32, receive: &[u32]) -> RankEdges {
    let mut inner = Vec::with_capacity(mine.len() * 3 / 2 + 16);
    let mut outer = Vec::new();
    let mut comm = Vec::new();
    let own = |c: u32| c != NO_CELL && owner[c as usize] == p;
    let beside_other = |c: u32| neighbours(topo, c as usize).any(|o| owner[o] != p);
    for &c in mine {
        for &e in &topo.cell_edges[c as usize] {
            let [i, j] = topo.edge_cells[e as usize];
            let first_owned = if owner[i as usize] == p { i } else { j };
            if first_owned != c {
                continue;
            }
            if j == NO_CELL || owner[i as usize] == owner[j as usize] {
                if rings >= 2 && (beside_other(i) || (j != NO_CELL && beside_other(j))) {
                    outer.push(e);
                } else {
                    inner.push(e);
                }
            } else {
                comm.push(e);
            }
        }
    }
    inner.sort_unstable();
    outer.sort_unstable();
    comm.sort_unstable();
    let n_inner = if rings >= 2 { inner.len() } else { 0 };
    let mut global_edge = inner;
    global_edge.extend_from_slice(&outer);
    let n_local = global_edge.len();
    global_edge.extend_from_slice(&comm);
    let n_pass = global_edge.len();
    if rings >= 2 {
        let mut stencil: Vec<u32> = receive
            .iter()
            .filter(|&&g| neighbours(topo, g as usize).any(|o| own(o as u32)))
            .flat_map(|&g| topo.cell_edges[g as usize])
            .filter(|&e| {
                let [i, j] = topo.edge_cells[e as usize];
                !own(i) && !own(j)
            })
            .collect();
        stencil.sort_unstable();
        stencil.dedup();
        global_edge.extend_from_slice(&stencil);
    }
    RankEdges { global_edge, n_inner, n_local, n_pass }
}
