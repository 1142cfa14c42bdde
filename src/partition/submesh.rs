//! Every rank's [`Submesh`] from a cell -> rank map: cell blocks (de la Asunción et al. 2012, section 6.1)
//! and edge ranges. All per-rank work runs in parallel; the only sequential step hands each
//! rank's send lists to their receivers.

use super::order::order_send_block;
use super::{RecvFrom, Run, SendTo, Submesh};
use crate::mesh::{Topology, NO_CELL};
use anyhow::{bail, Result};
use rayon::prelude::*;

/// Padding of [`destinations`] entries.
pub const NO_RANK: u32 = u32::MAX;

/// For each cell, the ranks other than its owner that own one of its neighbours, ascending,
/// padded with [`NO_RANK`] (a triangle has at most three neighbours). A cell with any is a
/// communication cell: it belongs to its owner's send block and to those ranks' receive
/// blocks.
pub fn destinations(topo: &Topology, owner: &[u32]) -> Vec<[u32; 3]> {
    (0..topo.num_cells())
        .into_par_iter()
        .map(|c| {
            let mut d = [NO_RANK; 3];
            for &e in &topo.cell_edges[c] {
                let [i, j] = topo.edge_cells[e as usize];
                let other = if i as usize == c { j } else { i };
                if other == NO_CELL || owner[other as usize] == owner[c] {
                    continue;
                }
                let r = owner[other as usize];
                if !d.contains(&r) {
                    // Insertion into the sorted, padded array.
                    let mut k = d.iter().position(|&x| x > r).unwrap_or(2);
                    let mut carry = r;
                    while k < 3 {
                        std::mem::swap(&mut d[k], &mut carry);
                        k += 1;
                    }
                }
            }
            d
        })
        .collect()
}

fn dest_slice(d: &[u32; 3]) -> &[u32] {
    &d[..d.iter().position(|&r| r == NO_RANK).unwrap_or(3)]
}

/// Build the submesh of every rank. `owner[c]` is the rank of global cell `c`.
pub fn build(topo: &Topology, owner: &[u32], ranks: usize, mesh_fingerprint: u64) -> Result<Vec<Submesh>> {
    let n = topo.num_cells();
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
    let dest = destinations(topo, owner);

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
            let mut global_cell: Vec<u32> = mine.iter().copied().filter(|&c| dest[c as usize][0] == NO_RANK).collect();
            let n_interior = global_cell.len();
            let comm: Vec<(u32, &[u32])> = mine
                .iter()
                .filter(|&&c| dest[c as usize][0] != NO_RANK)
                .map(|&c| (c, dest_slice(&dest[c as usize])))
                .collect();
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
            let (global_edge, n_local_edges) = rank_edges(topo, owner, p as u32, owned_cells(p));
            Submesh {
                rank: p as u32,
                ranks: ranks as u32,
                mesh_fingerprint,
                global_cells,
                global_edges,
                global_cell,
                n_interior: o.n_interior,
                n_owned,
                global_edge,
                n_local_edges,
                sends: o.sends,
                recvs,
            }
        })
        .collect();
    Ok(subs)
}

/// The edges rank `p` processes: every edge with an owned cell, each taken once (from its
/// first owned cell). Non-communication edges (both cells owned, or a wall) first, then the
/// communication edges; each range in global edge order, which follows the cells' global
/// (Hilbert) order.
fn rank_edges(topo: &Topology, owner: &[u32], p: u32, mine: &[u32]) -> (Vec<u32>, usize) {
    let mut local = Vec::with_capacity(mine.len() * 3 / 2 + 16);
    let mut comm = Vec::new();
    for &c in mine {
        for &e in &topo.cell_edges[c as usize] {
            let [i, j] = topo.edge_cells[e as usize];
            let first_owned = if owner[i as usize] == p { i } else { j };
            if first_owned != c {
                continue;
            }
            if j == NO_CELL || owner[i as usize] == owner[j as usize] {
                local.push(e);
            } else {
                comm.push(e);
            }
        }
    }
    local.sort_unstable();
    comm.sort_unstable();
    let n_local = local.len();
    local.extend_from_slice(&comm);
    (local, n_local)
}
