//! The time series of a run: per output time one `.vtu` (one rank) or one `.vtu` piece per
//! rank tied together by a `.pvtu` (several ranks), and a `.pvd` collection of the times that
//! is extended in place after every frame (see [`PvdFile`]), so a run killed mid-way still
//! leaves a series ParaView opens, and a frame costs the same however many came before. With
//! several ranks, rank 0 writes the `.pvtu` and the `.pvd` only once every rank has written
//! its piece.

use super::pvd::{PvdCollection, PvdFile};
use super::vtk::{write_pvtu, write_vtu, CellField, FieldData};
use crate::comm::{agree, Comm};
use crate::mesh::Mesh;
use crate::physics::CellState;
use anyhow::Result;
use std::path::{Path, PathBuf};

pub struct Series {
    dir: PathBuf,
    name: String,
    pvd: PvdCollection,
    /// Rank 0's `.pvd`, extended in place frame by frame.
    pvd_file: PvdFile,
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
        Frame {
            h1: state.iter().map(|s| s.h1).collect(),
            h2: state.iter().map(|s| s.h2).collect(),
            velocity1: state.iter().map(|s| s.velocities().0).collect(),
            velocity2: state.iter().map(|s| s.velocities().1).collect(),
            interface: state.iter().zip(depth).map(|(s, &d)| s.interface_elevation(d)).collect(),
            surface: state.iter().zip(depth).map(|(s, &d)| s.surface_elevation(d)).collect(),
        }
    }
}

/// This rank's cells as the series writes them: their mesh, depth, global ids and owner.
pub struct Piece<'a> {
    pub mesh: &'a Mesh,
    pub depth: &'a [f64],
    pub cell_id: &'a [i64],
    pub rank: &'a [i32],
}

impl Series {
    pub fn new(dir: &Path, name: &str) -> Series {
        Series { dir: dir.to_path_buf(), name: name.to_string(), pvd: PvdCollection::new(), pvd_file: PvdFile::new() }
    }

    /// A series that goes on from the frames of an earlier (checkpointed) run.
    pub fn resume(dir: &Path, name: &str, frames: Vec<(f64, String)>) -> Series {
        Series {
            dir: dir.to_path_buf(),
            name: name.to_string(),
            pvd: PvdCollection::from_entries(frames),
            pvd_file: PvdFile::new(),
        }
    }

    /// The frames written so far: (time, file).
    pub fn frames(&self) -> &[(f64, String)] {
        self.pvd.entries()
    }

    pub fn pvd_path(&self) -> PathBuf {
        self.dir.join(format!("{}.pvd", self.name))
    }

    /// Write frame `index` at `time` (collective when several ranks run). Returns the names
    /// of the files written (relative to the output directory), the `.pvd` last.
    pub fn write(
        &mut self,
        comm: &dyn Comm,
        index: usize,
        time: f64,
        piece: &Piece,
        state: &[CellState],
    ) -> Result<Vec<String>> {
        let stem = format!("{index:05}");
        let file = self.write_grid(comm, &stem, piece, state, None)?;
        self.pvd.push(time, &file);
        let path = self.pvd_path();
        let pvd = if comm.is_root() { self.pvd_file.sync(&self.pvd, &path) } else { Ok(()) };
        agree(comm, pvd)?;
        let mut files = self.grid_files(&stem, comm.size());
        files.push(format!("{}.pvd", self.name));
        Ok(files)
    }

    /// The files of grid `stem` on `ranks` ranks: the `.vtu`, or the pieces and the `.pvtu`.
    pub fn grid_files(&self, stem: &str, ranks: usize) -> Vec<String> {
        if ranks == 1 {
            return vec![format!("{}_{stem}.vtu", self.name)];
        }
        let mut v: Vec<String> = (0..ranks).map(|r| format!("{}_{stem}_p{r:05}.vtu", self.name)).collect();
        v.push(format!("{}_{stem}.pvtu", self.name));
        v
    }

    /// A grid outside the time series, `<name>_<stem>.vtu` (or `.pvtu`), with one extra
    /// integer cell array (e.g. the cells that blew up). Returns the path of the file to open.
    pub fn write_snapshot(
        &self,
        comm: &dyn Comm,
        stem: &str,
        piece: &Piece,
        state: &[CellState],
        extra: (&str, &[i32]),
    ) -> Result<PathBuf> {
        let file = self.write_grid(comm, stem, piece, state, Some(extra))?;
        Ok(self.dir.join(file))
    }

    /// One grid: a `.vtu`, or with several ranks one piece per rank and a `.pvtu`.
    fn write_grid(
        &self,
        comm: &dyn Comm,
        stem: &str,
        piece: &Piece,
        state: &[CellState],
        extra: Option<(&str, &[i32])>,
    ) -> Result<String> {
        let f = Frame::new(state, piece.depth);
        let mut fields = vec![
            CellField { name: "h1", data: FieldData::F64(&f.h1) },
            CellField { name: "h2", data: FieldData::F64(&f.h2) },
            CellField { name: "velocity1", data: FieldData::Vec2F64(&f.velocity1) },
            CellField { name: "velocity2", data: FieldData::Vec2F64(&f.velocity2) },
            CellField { name: "interface_elevation", data: FieldData::F64(&f.interface) },
            CellField { name: "free_surface_elevation", data: FieldData::F64(&f.surface) },
            CellField { name: "bathymetry", data: FieldData::F64(piece.depth) },
            CellField { name: "cell_id", data: FieldData::I64(piece.cell_id) },
            CellField { name: "rank", data: FieldData::I32(piece.rank) },
        ];
        if let Some((name, data)) = extra {
            fields.push(CellField { name, data: FieldData::I32(data) });
        }
        let (mesh, ranks) = (piece.mesh, comm.size());
        Ok(if ranks == 1 {
            let file = format!("{}_{stem}.vtu", self.name);
            agree(comm, write_vtu(&self.dir.join(&file), &mesh.vertices, &mesh.triangles, &fields))?;
            file
        } else {
            let part = |r: usize| format!("{}_{stem}_p{r:05}.vtu", self.name);
            let mine = write_vtu(&self.dir.join(part(comm.rank())), &mesh.vertices, &mesh.triangles, &fields);
            agree(comm, mine)?;
            let file = format!("{}_{stem}.pvtu", self.name);
            let pieces: Vec<String> = (0..ranks).map(part).collect();
            let index = if comm.is_root() { write_pvtu(&self.dir.join(&file), &pieces, &fields) } else { Ok(()) };
            agree(comm, index)?;
            file
        })
    }
}
