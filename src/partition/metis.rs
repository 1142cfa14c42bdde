//! The dual graph of the triangles (cells joined through interior edges) and its METIS
//! k-way partition.

use crate::mesh::{Topology, NO_CELL};
use anyhow::{bail, Context, Result};
use metis::{option, Graph, Idx};
use std::sync::Mutex;

/// METIS's random seed. Fixed, so that the same mesh and rank count always give the same
/// partition (METIS is otherwise deterministic: it runs on one thread).
pub const SEED: Idx = 1;

/// METIS draws its random numbers from GKlib's Mersenne twister, whose state is one
/// process-wide static (not thread-local): two partitions computed at once in one process
/// race on it, and their results depend on the timing (seen in the tests). One METIS call
/// at a time.
static METIS: Mutex<()> = Mutex::new(());

/// The dual graph in METIS's CSR form: the neighbours of cell `c` are
/// `adjncy[xadj[c]..xadj[c + 1]]`, in the cell's slot order.
pub fn dual_graph(topo: &Topology) -> Result<(Vec<Idx>, Vec<Idx>)> {
    let n = topo.num_cells();
    let interior = topo.edge_cells.iter().filter(|c| c[1] != NO_CELL).count();
    if Idx::try_from(2 * interior).is_err() || Idx::try_from(n).is_err() {
        bail!("the mesh is too large for METIS's 32-bit indices ({n} cells, {interior} interior edges)");
    }
    let mut xadj = Vec::with_capacity(n + 1);
    let mut adjncy = Vec::with_capacity(2 * interior);
    xadj.push(0);
    for c in 0..n {
        for &e in &topo.cell_edges[c] {
            let [i, j] = topo.edge_cells[e as usize];
            let other = if i as usize == c { j } else { i };
            if other != NO_CELL {
                adjncy.push(other as Idx);
            }
        }
        xadj.push(adjncy.len() as Idx);
    }
    Ok((xadj, adjncy))
}

/// The owning rank of every cell: METIS k-way with a fixed seed and default balance
/// (at most 3 % above the mean); one rank owns everything when `ranks == 1`.
pub fn partition_cells(topo: &Topology, ranks: usize) -> Result<Vec<u32>> {
    let n = topo.num_cells();
    if ranks == 0 {
        bail!("the rank count must be at least 1");
    }
    if ranks > n {
        bail!("{ranks} ranks for {n} cells: at most one rank per cell");
    }
    if ranks == 1 {
        return Ok(vec![0; n]);
    }
    let (xadj, adjncy) = dual_graph(topo)?;
    let nparts = Idx::try_from(ranks).context("too many ranks for METIS")?;
    let mut part = vec![0 as Idx; n];
    // A poisoned lock only means another call panicked; the generator is re-seeded anyway.
    let _one_at_a_time = METIS.lock().unwrap_or_else(|e| e.into_inner());
    Graph::new(1, nparts, &xadj, &adjncy)
        .map_err(|e| anyhow::anyhow!("METIS rejected the dual graph: {e}"))?
        .set_option(option::Seed(SEED))
        .part_kway(&mut part)
        .map_err(|e| anyhow::anyhow!("METIS failed to partition {n} cells into {ranks} parts: {e}"))?;
    part.iter()
        .map(|&p| match u32::try_from(p) {
            Ok(p) if (p as usize) < ranks => Ok(p),
            _ => bail!("METIS returned part {p}, outside 0..{ranks}"),
        })
        .collect()
}
