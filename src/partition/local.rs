//! A rank's local view of the global mesh: its [`Topology`] in local cell and edge ids and
//! its solver [`Layout`]. Built from the global topology (which every rank can make or
//! read) and the rank's [`Submesh`], checking that the two agree.

use super::Submesh;
use crate::mesh::{Topology, NO_CELL};
use crate::physics::Real;
use crate::physics::{Reference, StoredCell};
use crate::solver::exchange::HaloPlan;
use crate::solver::Layout;
use anyhow::{bail, Result};
use std::collections::HashMap;

impl Submesh {
    /// Who sends what to whom in this rank's halo exchange, in local cell indices.
    pub fn halo_plan(&self) -> HaloPlan {
        HaloPlan {
            send_block: self.send_block(),
            receive_block: self.receive_block(),
            sends: self.sends.iter().map(|d| (d.rank as i32, d.runs.iter().map(|r| r.range()).collect())).collect(),
            recvs: self.recvs.iter().map(|r| (r.rank as i32, r.range())).collect(),
        }
    }

    /// Values of a per-global-cell array for the local cells, in local order.
    pub fn gather<X: Copy>(&self, global: &[X]) -> Result<Vec<X>> {
        if global.len() != self.global_cells as usize {
            bail!("{} values for a mesh of {} cells", global.len(), self.global_cells);
        }
        self.global_cell
            .iter()
            .map(|&g| global.get(g as usize).copied().ok_or_else(|| anyhow::anyhow!("global cell {g} out of range")))
            .collect()
    }

    /// The rank's topology in local ids: cells in block order, edges in range order (the
    /// first ring's own edges last, with two rings). Edges keep their global orientation and
    /// slots: an edge's first cell is the one with the lower *global* id, so on a
    /// communication edge it may be the receive-block cell, with a local id above the
    /// second's. Slots of receive-block cells without a local edge (the outer ring's) hold
    /// `u32::MAX`.
    ///
    /// Fails when the submesh does not belong to `topo`: other counts, a non-communication
    /// edge touching the receive block, a communication edge without exactly one owned cell,
    /// an owned cell missing one of its edges; with two rings, an inner edge whose cells
    /// touch the receive block, a first-ring edge touching an owned cell, or a first-ring
    /// cell missing one of its edges.
    pub fn local_topology(&self, topo: &Topology) -> Result<Topology> {
        if self.global_cells as usize != topo.num_cells() || self.global_edges as usize != topo.num_edges() {
            bail!(
                "rank {}'s submesh was made for a mesh of {} cells and {} edges, this one has {} and {}",
                self.rank,
                self.global_cells,
                self.global_edges,
                topo.num_cells(),
                topo.num_edges()
            );
        }
        self.check()?;
        let local_of: HashMap<u32, u32> = self.global_cell.iter().enumerate().map(|(l, &g)| (g, l as u32)).collect();
        let n = self.num_cells();
        let mut lt = Topology {
            cell_area: self.gather(&topo.cell_area)?,
            cell_centroid: self.gather(&topo.cell_centroid)?,
            cell_edges: vec![[u32::MAX; 3]; n],
            ..Default::default()
        };
        let owned = |l: u32| (l as usize) < self.n_owned;
        for (k, &e) in self.global_edge.iter().enumerate() {
            let e = e as usize;
            let [gi, gj] = topo.edge_cells[e];
            let [si, sj] = topo.edge_slots[e];
            let li = local_of.get(&gi).copied();
            let lj = if gj == NO_CELL { Some(NO_CELL) } else { local_of.get(&gj).copied() };
            let (Some(li), Some(lj)) = (li, lj) else {
                bail!("rank {}: edge {e} joins cells {gi} and {gj}, not both on this rank", self.rank);
            };
            // A wall counts as local: only the owned side of a wall edge exists.
            let (i_owned, j_local) = (owned(li), lj == NO_CELL || owned(lj));
            if k >= self.n_pass_edges {
                // The first ring's: no owned cell (a boundary edge's only cell is `li`).
                if i_owned || (lj != NO_CELL && owned(lj)) {
                    bail!(
                        "rank {}: edge {e} (cells {gi}, {gj}) is in the first ring's range but touches an owned cell",
                        self.rank
                    );
                }
            } else {
                let comm = k >= self.n_local_edges;
                let ok = if comm { lj != NO_CELL && i_owned != j_local } else { i_owned && j_local };
                if !ok {
                    bail!(
                        "rank {}: edge {e} (cells {gi}, {gj}) is in the {} range but {}",
                        self.rank,
                        if comm { "communication" } else { "non-communication" },
                        match (i_owned, j_local) {
                            (true, true) => "needs no receive-block cell",
                            (false, false) => "has no owned cell",
                            _ => "touches the receive block",
                        }
                    );
                }
            }
            lt.cell_edges[li as usize][si as usize] = k as u32;
            if lj != NO_CELL {
                lt.cell_edges[lj as usize][sj as usize] = k as u32;
            }
            lt.edge_cells.push([li, lj]);
            lt.edge_slots.push([si, sj]);
            lt.edge_normal.push(topo.edge_normal[e]);
            lt.edge_length.push(topo.edge_length[e]);
            lt.edge_tag.push(topo.edge_tag[e]);
            lt.edge_vertices.push(topo.edge_vertices[e]);
            lt.edge_corner.push(topo.edge_corner[e]);
        }
        if let Some(l) = (0..self.n_owned).find(|&l| lt.cell_edges[l].contains(&u32::MAX)) {
            bail!("rank {}: owned cell {} (global {}) lacks some of its edges", self.rank, l, self.global_cell[l]);
        }
        if self.rings >= 2 {
            // Owned cells whose reconstruction reads a receive-block cell.
            let beside = |l: usize| {
                lt.cell_edges[l].iter().any(|&k| lt.edge_cells[k as usize].iter().any(|&c| c != NO_CELL && !owned(c)))
            };
            for k in 0..self.n_inner_edges {
                if lt.edge_cells[k].iter().any(|&c| c != NO_CELL && beside(c as usize)) {
                    bail!(
                        "rank {}: edge {} is in the inner range but a cell of it touches the receive block",
                        self.rank,
                        self.global_edge[k]
                    );
                }
            }
            // The first ring: receive-block cells on a communication edge.
            for k in self.n_local_edges..self.n_pass_edges {
                let ring1 = lt.edge_cells[k].into_iter().find(|&c| !owned(c)).expect("a communication edge");
                if lt.cell_edges[ring1 as usize].contains(&u32::MAX) {
                    bail!(
                        "rank {}: receive-block cell {} (global {}) of the first ring lacks some of its edges (its stencil)",
                        self.rank,
                        ring1,
                        self.global_cell[ring1 as usize]
                    );
                }
            }
        }
        Ok(lt)
    }

    /// The rank's solver layout: local cells and edges with the global `depth` and stored
    /// `cells` (one value per global cell, stored relative to `reference`) and geometry, cut
    /// to this rank's blocks ([`Submesh::shape_layout`]).
    pub fn layout<T: Real>(
        &self,
        topo: &Topology,
        depth: &[f64],
        cells: &[StoredCell],
        reference: &Reference,
    ) -> Result<Layout<T>> {
        let lt = self.local_topology(topo)?;
        let mut lay = Layout::from_stored(&lt, &self.gather(depth)?, &self.gather(cells)?, reference);
        self.shape_layout(&mut lay);
        Ok(lay)
    }

    /// Cut a layout made from this rank's local topology to its blocks: `n_owned`,
    /// `n_inner_edges` and `n_local_edges` from the blocks, so the step loop updates owned
    /// cells only and can process the inner or non-communication edges while the receive
    /// block is in flight; the first ring's own edges dropped (their stencils are made).
    pub fn shape_layout<T: Real>(&self, lay: &mut Layout<T>) {
        lay.keep_edges(self.n_pass_edges);
        lay.n_owned = self.n_owned;
        lay.n_inner_edges = self.n_inner_edges;
        lay.n_local_edges = self.n_local_edges;
    }
}

impl Submesh {
    /// The owned cells as a mesh of their own (vertices renumbered in order of first use),
    /// for this rank's piece of a parallel VTK output.
    pub fn owned_mesh(&self, mesh: &crate::mesh::Mesh) -> crate::mesh::Mesh {
        let mut local = vec![u32::MAX; mesh.vertices.len()];
        let mut vertices = Vec::new();
        let triangles = self.global_cell[..self.n_owned]
            .iter()
            .map(|&g| {
                mesh.triangles[g as usize].map(|v| {
                    if local[v as usize] == u32::MAX {
                        local[v as usize] = vertices.len() as u32;
                        vertices.push(mesh.vertices[v as usize]);
                    }
                    local[v as usize]
                })
            })
            .collect();
        crate::mesh::Mesh { vertices, triangles, boundary: Vec::new() }
    }
}
