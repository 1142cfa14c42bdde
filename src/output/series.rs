//! The time series of a run: one `.vtu` per output time, tied together by a `.pvd`
//! collection that is rewritten (atomically) after every frame, so a run killed mid-way
//! still leaves a series ParaView opens.

use super::pvd::PvdCollection;
use super::vtk::{write_vtu, CellField, FieldData};
use crate::mesh::Mesh;
use crate::solver::CellState;
use anyhow::Result;
use std::path::{Path, PathBuf};

pub struct Series {
    dir: PathBuf,
    name: String,
    pvd: PvdCollection,
}

/// Cell fields derived from the state, in the order they are written.
pub struct Frame {
    pub h1: Vec<f64>,
    pub h2: Vec<f64>,
    pub velocity1: Vec<[f64; 2]>,
    pub velocity2: Vec<[f64; 2]>,
    pub interface: Vec<f64>,
    pub surface: Vec<f64>,
}

impl Frame {
    pub fn new(state: &[CellState], depth: &[f64]) -> Frame {
        let vel = |q: [f64; 2], h: f64| [q[0] / h, q[1] / h];
        Frame {
            h1: state.iter().map(|s| s.h1).collect(),
            h2: state.iter().map(|s| s.h2).collect(),
            velocity1: state.iter().map(|s| vel(s.q1, s.h1)).collect(),
            velocity2: state.iter().map(|s| vel(s.q2, s.h2)).collect(),
            interface: state.iter().zip(depth).map(|(s, d)| s.h2 - d).collect(),
            surface: state.iter().zip(depth).map(|(s, d)| s.h1 + s.h2 - d).collect(),
        }
    }
}

impl Series {
    pub fn new(dir: &Path, name: &str) -> Series {
        Series { dir: dir.to_path_buf(), name: name.to_string(), pvd: PvdCollection::new() }
    }

    pub fn pvd_path(&self) -> PathBuf {
        self.dir.join(format!("{}.pvd", self.name))
    }

    /// Write frame `index` at `time`: the `.vtu` of the owned cells, then the `.pvd`.
    #[allow(clippy::too_many_arguments)]
    pub fn write(
        &mut self,
        index: usize,
        time: f64,
        mesh: &Mesh,
        state: &[CellState],
        depth: &[f64],
        cell_id: &[i64],
    ) -> Result<()> {
        let f = Frame::new(state, depth);
        let file = format!("{}_{index:05}.vtu", self.name);
        let fields = [
            CellField { name: "h1", data: FieldData::F64(&f.h1) },
            CellField { name: "h2", data: FieldData::F64(&f.h2) },
            CellField { name: "velocity1", data: FieldData::Vec2F64(&f.velocity1) },
            CellField { name: "velocity2", data: FieldData::Vec2F64(&f.velocity2) },
            CellField { name: "interface_elevation", data: FieldData::F64(&f.interface) },
            CellField { name: "free_surface_elevation", data: FieldData::F64(&f.surface) },
            CellField { name: "bathymetry", data: FieldData::F64(depth) },
            CellField { name: "cell_id", data: FieldData::I64(cell_id) },
        ];
        write_vtu(&self.dir.join(&file), &mesh.vertices, &mesh.triangles, &fields)?;
        self.pvd.push(time, &file);
        self.pvd.write(&self.pvd_path())
    }
}
