//! `partition.vtu`: the global mesh with, per cell, what its owner does with it, for a look
//! in ParaView.
//!
//! Cell fields:
//! - `rank`: the owning rank;
//! - `block`: the cell's block on its owner: 0 interior, 1 send block. (Every send-block
//!   cell is also in the receive block of each rank it goes to; `destinations` says how
//!   many.)
//! - `destinations`: the number of other ranks the cell is sent to (0 to 3; up to 9 in a
//!   partition with two rings of receive cells, for second order);
//! - `gathered`: 1 when at least one of those ranks gets it through a gather list (a
//!   fallback destination), else 0;
//! - `local_index`: its index on its owner.

use super::Submesh;
use crate::mesh::Mesh;
use crate::output::vtk::{write_vtu, CellField, FieldData};
use anyhow::Result;
use std::path::Path;

pub const FILE: &str = "partition.vtu";

pub fn write_partition_vtu(path: &Path, mesh: &Mesh, subs: &[Submesh]) -> Result<()> {
    let n = mesh.num_cells();
    let mut rank = vec![0i32; n];
    let mut block = vec![0i32; n];
    let mut destinations = vec![0i32; n];
    let mut gathered = vec![0i32; n];
    let mut local_index = vec![0i32; n];
    for s in subs {
        for (l, &g) in s.global_cell[..s.n_owned].iter().enumerate() {
            rank[g as usize] = s.rank as i32;
            block[g as usize] = i32::from(l >= s.n_interior);
            local_index[g as usize] = l as i32;
        }
        for d in &s.sends {
            for l in d.cells() {
                let g = s.global_cell[l] as usize;
                destinations[g] += 1;
                gathered[g] |= i32::from(!d.is_contiguous());
            }
        }
    }
    write_vtu(
        path,
        &mesh.vertices,
        &mesh.triangles,
        &[
            CellField { name: "rank", data: FieldData::I32(&rank) },
            CellField { name: "block", data: FieldData::I32(&block) },
            CellField { name: "destinations", data: FieldData::I32(&destinations) },
            CellField { name: "gathered", data: FieldData::I32(&gathered) },
            CellField { name: "local_index", data: FieldData::I32(&local_index) },
        ],
    )
}
