//! Whole-partition checks against the global mesh, for `pycno partition --check` and for
//! a run that wants to trust a partition directory written by another tool or version.

use super::submesh::{Destinations, NO_RANK};
use super::Submesh;
use crate::mesh::{Topology, NO_CELL};
use anyhow::{bail, Result};

/// Every cell owned by exactly one rank; every rank's edges consistent
/// ([`Submesh::local_topology`], which with two rings also checks the inner edges and the
/// first ring's stencil edges); every global edge processed by exactly the ranks that own
/// its cells; each rank's send block holding exactly its cells within one edge step (two,
/// with two rings) of another rank's, sent to exactly those ranks; every receive range
/// equal, cell by cell, to what its source sends; and every rank with the same rings.
pub fn verify(topo: &Topology, subs: &[Submesh]) -> Result<()> {
    let n = topo.num_cells();
    let ranks = subs.len();
    let rings = subs.first().map_or(1, |s| s.rings);
    let mut owner = vec![NO_RANK; n];
    for (p, s) in subs.iter().enumerate() {
        if s.rank as usize != p || s.ranks as usize != ranks {
            bail!("submesh {p} says it is rank {} of {}", s.rank, s.ranks);
        }
        if s.rings != rings {
            bail!("rank {p} has {} rings of receive cells, rank 0 {rings}", s.rings);
        }
        s.local_topology(topo)?;
        for &g in &s.global_cell[..s.n_owned] {
            if owner[g as usize] != NO_RANK {
                bail!("cell {g} is owned by ranks {} and {p}", owner[g as usize]);
            }
            owner[g as usize] = p as u32;
        }
    }
    if let Some(c) = owner.iter().position(|&r| r == NO_RANK) {
        bail!("cell {c} is owned by no rank");
    }

    let mut processed = vec![0u32; topo.num_edges()];
    for s in subs {
        for &e in &s.global_edge[s.pass_edges()] {
            processed[e as usize] += 1;
        }
    }
    for (e, &[i, j]) in topo.edge_cells.iter().enumerate() {
        let want = if j == NO_CELL || owner[i as usize] == owner[j as usize] { 1 } else { 2 };
        if processed[e] != want {
            bail!("edge {e} is processed by {} ranks, {want} own its cells", processed[e]);
        }
    }

    let dest = Destinations::new(topo, &owner, rings);
    for s in subs {
        let mut sent_to: Vec<Vec<u32>> = vec![Vec::new(); s.n_owned];
        for d in &s.sends {
            let sent: Vec<u32> = d.cells().map(|l| s.global_cell[l]).collect();
            d.cells().for_each(|l| sent_to[l].push(d.rank));
            let Some(r) = subs[d.rank as usize].recvs.iter().find(|r| r.rank == s.rank) else {
                bail!("rank {} sends to {}, which receives nothing from it", s.rank, d.rank);
            };
            if subs[d.rank as usize].global_cell[r.range()] != sent[..] {
                bail!("rank {} receives from {} other cells, or in another order, than it sends", d.rank, s.rank);
            }
        }
        for (l, mut to) in sent_to.into_iter().enumerate() {
            to.sort_unstable();
            let g = s.global_cell[l] as usize;
            let want = dest.of(g);
            if to != want {
                bail!(
                    "rank {} sends cell {g} to ranks {to:?}, the ranks within {rings} edge step(s) of it are {want:?}",
                    s.rank
                );
            }
            if (l >= s.n_interior) == want.is_empty() {
                bail!("rank {}: cell {g} is in the wrong block", s.rank);
            }
        }
        for r in &s.recvs {
            if !subs[r.rank as usize].sends.iter().any(|d| d.rank == s.rank) {
                bail!("rank {} receives from {}, which sends it nothing", s.rank, r.rank);
            }
        }
    }
    Ok(())
}
