//! The time series of a run: per output time one `.vtu` (one rank) or one `.vtu` piece per
//! rank tied together by a `.pvtu` (several ranks), and a `.pvd` collection of the times that
//! is extended in place after every frame (see [`PvdFile`]), so a run killed mid-way still
//! leaves a series ParaView opens, and a frame costs the same however many came before. With
//! several ranks, rank 0 writes the `.pvtu` and the `.pvd` only once every rank has written
//! its piece.

use super::pvd::{PvdCollection, PvdFile};
use super::vtk::{write_pvtu, write_vtu_with, CellField, Compression, FieldData};
use crate::comm::{agree, Comm};
use crate::mesh::Mesh;
use crate::physics::CellState;
use crate::scenario::OutputField;
use anyhow::Result;
use std::path::{Path, PathBuf};

pub struct Series {
    dir: PathBuf,
    name: String,
    pvd: PvdCollection,
    /// Rank 0's `.pvd`, extended in place frame by frame.
    pvd_file: PvdFile,
    format: Format,
}

/// What a frame holds and how it is encoded (the scenario's `output` section).
#[derive(Clone, Debug)]
pub struct Format {
    pub fields: Vec<OutputField>,
    /// Float32 arrays (else Float64).
    pub f32: bool,
    pub compression: Compression,
}

impl Default for Format {
    fn default() -> Self {
        Format { fields: OutputField::ALL.to_vec(), f32: false, compression: Compression::None }
    }
}

/// Owned arrays of one field in the chosen float type.
enum Values {
    F32(Vec<f32>),
    F64(Vec<f64>),
    V32(Vec<[f32; 2]>),
    V64(Vec<[f64; 2]>),
}

impl Values {
    fn scalar(v: Vec<f64>, f32: bool) -> Values {
        if f32 {
            Values::F32(v.into_iter().map(|x| x as f32).collect())
        } else {
            Values::F64(v)
        }
    }
    fn vector(v: Vec<[f64; 2]>, f32: bool) -> Values {
        if f32 {
            Values::V32(v.into_iter().map(|[x, y]| [x as f32, y as f32]).collect())
        } else {
            Values::V64(v)
        }
    }
    fn data(&self) -> FieldData<'_> {
        match self {
            Values::F32(v) => FieldData::F32(v),
            Values::F64(v) => FieldData::F64(v),
            Values::V32(v) => FieldData::Vec2F32(v),
            Values::V64(v) => FieldData::Vec2F64(v),
        }
    }
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
        Series {
            dir: dir.to_path_buf(),
            name: name.to_string(),
            pvd: PvdCollection::new(),
            pvd_file: PvdFile::new(),
            format: Format::default(),
        }
    }

    /// Frames with these arrays, float type and compression.
    pub fn with_format(mut self, format: Format) -> Series {
        self.format = format;
        self
    }

    /// A series that goes on from the frames of an earlier (checkpointed) run.
    pub fn resume(dir: &Path, name: &str, frames: Vec<(f64, String)>) -> Series {
        Series {
            dir: dir.to_path_buf(),
            name: name.to_string(),
            pvd: PvdCollection::from_entries(frames),
            pvd_file: PvdFile::new(),
            format: Format::default(),
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
        let fmt = &self.format;
        let float = |name: OutputField, v: Values| (name, v);
        let mut owned: Vec<(OutputField, Values)> = Vec::new();
        for &field in &fmt.fields {
            let values = match field {
                OutputField::H1 => Values::scalar(f.h1.clone(), fmt.f32),
                OutputField::H2 => Values::scalar(f.h2.clone(), fmt.f32),
                OutputField::Velocity1 => Values::vector(f.velocity1.clone(), fmt.f32),
                OutputField::Velocity2 => Values::vector(f.velocity2.clone(), fmt.f32),
                OutputField::InterfaceElevation => Values::scalar(f.interface.clone(), fmt.f32),
                OutputField::FreeSurfaceElevation => Values::scalar(f.surface.clone(), fmt.f32),
                OutputField::Bathymetry => Values::scalar(piece.depth.to_vec(), fmt.f32),
                OutputField::CellId | OutputField::Rank => continue,
            };
            owned.push(float(field, values));
        }
        let mut fields: Vec<CellField> =
            owned.iter().map(|(name, v)| CellField { name: name.name(), data: v.data() }).collect();
        // The ids the pieces of a multi-rank run need to be put together are always there.
        if fmt.fields.contains(&OutputField::CellId) || comm.size() > 1 {
            fields.push(CellField { name: "cell_id", data: FieldData::I64(piece.cell_id) });
        }
        if fmt.fields.contains(&OutputField::Rank) {
            fields.push(CellField { name: "rank", data: FieldData::I32(piece.rank) });
        }
        if let Some((name, data)) = extra {
            fields.push(CellField { name, data: FieldData::I32(data) });
        }
        self.write_fields(comm, stem, piece, &fields)
    }

    /// A grid of per-cell maps outside the time series, `<name>_<stem>.vtu` (or the pieces
    /// and the `.pvtu`), in the frames' float type and compression, with the global cell ids.
    /// Returns the files written (relative to the output directory).
    pub fn write_maps(
        &self,
        comm: &dyn Comm,
        stem: &str,
        piece: &Piece,
        maps: Vec<(&'static str, Vec<f64>)>,
    ) -> Result<Vec<String>> {
        let owned: Vec<(&str, Values)> =
            maps.into_iter().map(|(name, v)| (name, Values::scalar(v, self.format.f32))).collect();
        let mut fields: Vec<CellField> = owned.iter().map(|(name, v)| CellField { name, data: v.data() }).collect();
        fields.push(CellField { name: "cell_id", data: FieldData::I64(piece.cell_id) });
        self.write_fields(comm, stem, piece, &fields)?;
        Ok(self.grid_files(stem, comm.size()))
    }

    /// One grid of these fields: a `.vtu`, or with several ranks one piece per rank and a
    /// `.pvtu`. Returns the file to open.
    fn write_fields(&self, comm: &dyn Comm, stem: &str, piece: &Piece, fields: &[CellField]) -> Result<String> {
        let fmt = &self.format;
        let (mesh, ranks) = (piece.mesh, comm.size());
        let write_vtu = |path: &Path, fields: &[CellField]| {
            write_vtu_with(path, &mesh.vertices, &mesh.triangles, fields, fmt.compression)
        };
        Ok(if ranks == 1 {
            let file = format!("{}_{stem}.vtu", self.name);
            agree(comm, write_vtu(&self.dir.join(&file), fields))?;
            file
        } else {
            let part = |r: usize| format!("{}_{stem}_p{r:05}.vtu", self.name);
            let mine = write_vtu(&self.dir.join(part(comm.rank())), fields);
            agree(comm, mine)?;
            let file = format!("{}_{stem}.pvtu", self.name);
            let pieces: Vec<String> = (0..ranks).map(part).collect();
            let index = if comm.is_root() { write_pvtu(&self.dir.join(&file), &pieces, fields) } else { Ok(()) };
            agree(comm, index)?;
            file
        })
    }
}
