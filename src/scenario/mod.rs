//! Scenario files (JSON): the domain or a mesh file, the resolution, the bathymetry, the
//! initial state of both layers, the physics, the times and the output. Unknown keys,
//! wrong types and physically invalid values are rejected with the field's path.

pub mod boundaries;
pub mod data;
pub mod initial;
mod physics_ranges;
mod tagged;

pub use crate::mesh::domain::Domain;
pub use crate::mesh::generate::Resolution;
pub use crate::physics::{Physics, Reference};

use anyhow::{anyhow, bail, Context, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A pycno scenario: where (a domain to triangulate or a mesh file), the bottom, the initial
/// state of both layers, the physics, the times and what to write. `pycno schema` prints this
/// format as a JSON Schema; `pycno example NAME` writes a complete one to start from.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// The JSON Schema this file follows (`pycno schema > pycno.schema.json`), for editors'
    /// completion and checks; pycno ignores it.
    #[serde(default, rename = "$schema", skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Names the output files (`<name>.pvd`, `<name>_00000.vtu`, ...): ASCII letters, digits,
    /// `_`, `-` and `.` (not first), at most 100 characters.
    #[serde(default = "default_name")]
    pub name: String,
    /// The domain to triangulate; exactly one of `domain` and `mesh`.
    #[serde(default)]
    pub domain: Option<Domain>,
    /// A mesh file (.msh, .node/.ele, .pmsh), relative to the scenario file.
    #[serde(default)]
    pub mesh: Option<PathBuf>,
    /// How fine the triangulation of `domain` is.
    #[serde(default)]
    pub resolution: Resolution,
    /// Depth of the bottom below the reference level, H(x, y), positive down (m): a shape,
    /// a data file, or a list of them whose depths add.
    #[serde(default)]
    pub bathymetry: Bathymetry,
    /// The state at t = 0.
    pub initial: Initial,
    /// Gravity, density ratio, CFL number, friction.
    #[serde(default)]
    pub physics: Physics,
    /// A boundary condition per boundary tag (`scenario/boundaries.rs`); tags not listed
    /// are walls.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub boundaries: BTreeMap<String, boundaries::Condition>,
    /// End time and output times (s).
    pub time: Time,
    /// What the run writes, and where.
    #[serde(default)]
    pub output: Output,
    /// Points whose state is recorded over time into `gauges.csv`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gauges: Option<Gauges>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Gauges {
    /// Points whose cell's state is recorded.
    #[serde(default)]
    pub points: Vec<GaugePoint>,
    /// Boundary tags (entries of `boundaries` that are not walls) whose discharge is
    /// recorded: per layer, the net volume flux into the domain over the step that ends at
    /// or after the row's time (m³/s, `TAG_Q1`, `TAG_Q2`) and the net volume that has come
    /// in since the start (m³, `TAG_V1`, `TAG_V2`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub boundaries: Vec<String>,
    /// Seconds of simulated time between records (default: every step). Output times are
    /// always recorded too.
    #[serde(default)]
    pub interval: Option<f64>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GaugePoint {
    pub name: String,
    pub at: [f64; 2],
}

fn default_name() -> String {
    "scenario".into()
}

/// Depth of the bottom below the reference level, H(x, y) (positive down).
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Bathymetry {
    Constant {
        depth: f64,
    },
    /// H = depth - height * exp(-|x - center|^2 / width^2): a smooth seamount.
    GaussianBump {
        depth: f64,
        height: f64,
        center: [f64; 2],
        width: f64,
    },
    /// H = depth + gradient . x
    Slope {
        depth: f64,
        gradient: [f64; 2],
    },
    /// A ridge across the domain: H = depth - height * exp(-(x - x0)^2 / width^2) (or of
    /// y - y0 with `y0`, a ridge along x). `depth` defaults to 0, to add to other shapes.
    Sill {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        x0: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        y0: Option<f64>,
        height: f64,
        width: f64,
        #[serde(default)]
        depth: f64,
    },
    /// Read from a file (ESRI ASCII grid, GeoTIFF, NetCDF, XYZ points), sampled at cell
    /// centroids.
    #[serde(untagged)]
    File(data::DataFile),
    /// A list of shapes and files whose depths add: H = H_1 + H_2 + ..., so that bottom
    /// elevations (-H) add too, and a shape with depth 0 raises (height > 0) or lowers the
    /// bottom of the others.
    #[serde(untagged)]
    Sum(Vec<Bathymetry>),
}
impl Default for Bathymetry {
    fn default() -> Self {
        Bathymetry::Constant { depth: 5.0 }
    }
}

/// Initial state. Elevations (`surface`, `interface`) are measured upwards from the
/// reference level, so a layer's thickness is the difference of the elevations around it.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Initial {
    /// The paper's internal dam break: h1 = h1_inside within `radius` of `center`, else
    /// h1_outside; h2 fills the rest up to a flat free surface at `surface`.
    CircularDamBreak {
        #[serde(default)]
        center: [f64; 2],
        #[serde(default = "paper_radius")]
        radius: f64,
        #[serde(default = "paper_h1_inside")]
        h1_inside: f64,
        #[serde(default = "paper_h1_outside")]
        h1_outside: f64,
        #[serde(default)]
        surface: f64,
    },
    /// A straight internal dam at x = x0: interface elevation `interface_left` for x < x0,
    /// `interface_right` beyond; flat free surface.
    DamBreakX {
        x0: f64,
        interface_left: f64,
        interface_right: f64,
        #[serde(default)]
        surface: f64,
    },
    /// Water at rest: flat free surface; the interface flat too, or its elevation read from
    /// a file (then not at rest).
    AtRest {
        interface: Level,
        #[serde(default)]
        surface: f64,
    },
    /// Each layer's thickness and velocity given directly.
    Layers { layer1: Layer, layer2: Layer },
}
/// An elevation (m, positive up): a number, or read from a data file and sampled at cell
/// centroids.
#[derive(Clone, Debug, Serialize, JsonSchema, PartialEq)]
#[serde(untagged)]
pub enum Level {
    Number(f64),
    File(data::DataFile),
}

fn paper_radius() -> f64 {
    1.5
}
fn paper_h1_inside() -> f64 {
    0.5
}
fn paper_h1_outside() -> f64 {
    4.0
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Layer {
    /// Thickness (m): a number, or a shape.
    pub thickness: Field,
    /// Velocity [u, v] (m/s), the same everywhere.
    #[serde(default)]
    pub velocity: [f64; 2],
}

/// A scalar field: a constant, or a piecewise-constant shape.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Field {
    Constant(f64),
    Shape(Shape),
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Shape {
    Circle { center: [f64; 2], radius: f64, inside: f64, outside: f64 },
    StepX { x0: f64, left: f64, right: f64 },
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Time {
    pub end: f64,
    /// Write output every `output_interval` (and at 0 and at the end).
    #[serde(default)]
    pub output_interval: Option<f64>,
    /// Or at these times (plus 0).
    #[serde(default)]
    pub output_times: Option<Vec<f64>>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Output {
    /// Output directory, relative to the working directory (default `out/<name>`). A run
    /// refuses a directory that holds another run's results unless `--overwrite`.
    #[serde(default, skip_serializing_if = "is_empty_path")]
    pub dir: PathBuf,
    /// Most output frames a run may write (default 10000): a guard against an interval
    /// typed in the wrong unit filling the disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_frames: Option<u64>,
    /// Write the VTK series (`.vtu`/`.pvtu` frames and the `.pvd`); default true.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub vtk: bool,
    /// Cell arrays of each VTK frame and of the NetCDF file (default: all of them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fields: Option<Vec<OutputField>>,
    /// Float type of the written arrays (default: the run's, so float32 for an f32 run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<OutputPrecision>,
    /// Compression of the `.vtu` arrays: `zlib` (default; ParaView and VTK read it) or `none`.
    #[serde(default, skip_serializing_if = "is_default")]
    pub compression: Compression,
    /// Also write `<name>.nc`: NetCDF (64-bit offset) in the UGRID-1.0 and CF-1.8
    /// conventions, one file per run with a time dimension (xarray, ParaView, QGIS).
    #[serde(default, skip_serializing_if = "is_false")]
    pub netcdf: bool,
    /// Maximum/minimum maps over the run and an arrival time, per cell, written to
    /// `<name>_max.vtu` (and into the NetCDF file) at the end of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_maps: Option<MaxMaps>,
    /// Date and time (UTC) of the run's t = 0, for the NetCDF time axis (`units = "seconds
    /// since START"`): `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM:SS` (default 2000-01-01).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_date: Option<String>,
}
fn yes() -> bool {
    true
}
fn is_true(b: &bool) -> bool {
    *b
}
fn is_false(b: &bool) -> bool {
    !*b
}
fn is_default<T: Default + PartialEq>(x: &T) -> bool {
    *x == T::default()
}
fn is_empty_path(p: &Path) -> bool {
    p.as_os_str().is_empty()
}
impl Default for Output {
    fn default() -> Self {
        Output {
            dir: PathBuf::new(),
            max_frames: None,
            vtk: true,
            fields: None,
            precision: None,
            compression: Compression::default(),
            netcdf: false,
            max_maps: None,
            start_date: None,
        }
    }
}

/// A cell array a run can write.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum OutputField {
    /// Thickness of the upper layer (m).
    H1,
    /// Thickness of the lower layer (m).
    H2,
    /// Velocity of the upper layer (m/s).
    Velocity1,
    /// Velocity of the lower layer (m/s).
    Velocity2,
    /// Elevation of the interface above the reference level, h2 - H (m).
    InterfaceElevation,
    /// Elevation of the free surface above the reference level, h1 + h2 - H (m).
    FreeSurfaceElevation,
    /// Depth of the bottom below the reference level, H (m, positive down).
    Bathymetry,
    /// Global cell id.
    CellId,
    /// The rank that owns the cell.
    Rank,
}

impl OutputField {
    pub const ALL: [OutputField; 9] = [
        OutputField::H1,
        OutputField::H2,
        OutputField::Velocity1,
        OutputField::Velocity2,
        OutputField::InterfaceElevation,
        OutputField::FreeSurfaceElevation,
        OutputField::Bathymetry,
        OutputField::CellId,
        OutputField::Rank,
    ];
    /// The array's name in the files.
    pub fn name(self) -> &'static str {
        match self {
            OutputField::H1 => "h1",
            OutputField::H2 => "h2",
            OutputField::Velocity1 => "velocity1",
            OutputField::Velocity2 => "velocity2",
            OutputField::InterfaceElevation => "interface_elevation",
            OutputField::FreeSurfaceElevation => "free_surface_elevation",
            OutputField::Bathymetry => "bathymetry",
            OutputField::CellId => "cell_id",
            OutputField::Rank => "rank",
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum OutputPrecision {
    Float32,
    Float64,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Compression {
    /// zlib (`vtkZLibDataCompressor`), in blocks of 64 KiB.
    #[default]
    Zlib,
    None,
}

/// Per-cell extremes over the run (GeoClaw's fgmax, ANUGA's max quantities), updated after
/// every step on the device that runs it.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MaxMaps {
    /// Arrival time: the first time a cell's displacement from its initial state (of the
    /// quantity `arrival_of`) exceeds this many metres; -1 where it never does. Default 0.01.
    #[serde(default = "default_arrival_threshold")]
    pub arrival_threshold: f64,
    /// Whose displacement the arrival time follows: `interface` (default) or `surface`.
    #[serde(default)]
    pub arrival_of: ArrivalOf,
}
fn default_arrival_threshold() -> f64 {
    0.01
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ArrivalOf {
    #[default]
    Interface,
    Surface,
}

/// Default most output frames (`output.max_frames` raises it).
pub const MAX_FRAMES: u64 = 10_000;
/// The most `output.max_frames` may raise the cap to.
pub const MAX_FRAMES_LIMIT: u64 = 10_000_000;
/// Most gauge records (rows of `gauges.csv`) that a `gauges.interval` may ask for.
pub const MAX_GAUGE_RECORDS: f64 = 1e6;
/// Longest scenario name (it names the output files).
pub const MAX_NAME_LEN: usize = 100;
/// Most triangles pycno can number (cell and vertex ids are 32-bit).
pub const MAX_CELLS: u64 = u32::MAX as u64;

/// Check a scenario name: it becomes file names in the output directory, so it must be a
/// plain file name (no `/`, no `..`, no leading dot, no control characters).
pub fn check_name(name: &str) -> Result<()> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.';
    if name.is_empty() || name.len() > MAX_NAME_LEN || name.starts_with('.') || !name.chars().all(ok_char) {
        bail!(
            "name: expected 1 to {MAX_NAME_LEN} ASCII letters, digits, '_', '-' or '.' (not first), \
             found {name:?}: the name becomes the output file names"
        );
    }
    Ok(())
}

/// The paper's cell counts (de la Asunción et al. 2012, Tables 1-2).
pub const PAPER_CELLS: [u64; 7] = [4016, 16040, 64052, 256576, 1001898, 2000608, 3000948];

impl Scenario {
    /// The paper's benchmark (de la Asunción et al. 2012, sections 4 and 7): circular internal dam break on
    /// [-5, 5]^2, H = 5, r = 0.998, gamma = 0.9, walls, t in [0, 0.1].
    pub fn paper_benchmark(cells: u64) -> Scenario {
        let mut s = Scenario {
            name: "dambreak".into(),
            domain: Some(Domain {
                outer: vec![[-5.0, -5.0], [5.0, -5.0], [5.0, 5.0], [-5.0, 5.0]],
                ..Default::default()
            }),
            mesh: None,
            resolution: Resolution { cells: Some(cells), ..Default::default() },
            bathymetry: Bathymetry::Constant { depth: 5.0 },
            initial: Initial::CircularDamBreak {
                center: [0.0, 0.0],
                radius: paper_radius(),
                h1_inside: paper_h1_inside(),
                h1_outside: paper_h1_outside(),
                surface: 0.0,
            },
            physics: Physics::default(),
            boundaries: BTreeMap::new(),
            time: Time { end: 0.1, output_interval: None, output_times: None },
            output: Output { dir: PathBuf::from("out/dambreak"), ..Output::default() },
            gauges: None,
            schema: None,
        };
        s.physics.reference = Some(s.initial.rest_levels());
        s
    }

    /// The study benchmark (`pycno bench --study`, issue 44): a strait-like channel 170 km by
    /// 20 km at `cells` cells with what a modeller's study has and the paper's benchmark has
    /// not: a sill, a tide at an `elevation` end, an `open` end, Manning and interlayer
    /// friction, Coriolis, two gauges and boundary discharge gauges every minute, and max
    /// maps. Its speed is the one users see. Outputs go to `dir`.
    pub fn study_benchmark(cells: u64, dir: &Path) -> Result<Scenario> {
        // A JSON string, whatever characters the temporary folder's path holds.
        let dir = serde_json::to_string(dir)?;
        let text = format!(
            r#"{{
  "name": "study",
  "domain": {{ "outer": [[0, -10000], [170000, -10000], [170000, 10000], [0, 10000]],
              "outer_tags": ["coast", "mediterranean", "coast", "atlantic"] }},
  "resolution": {{ "cells": {cells} }},
  "bathymetry": [{{ "type": "constant", "depth": 800 }}, {{ "type": "sill", "x0": 85000, "height": 500, "width": 8000 }}],
  "initial": {{ "type": "dam_break_x", "x0": 85000, "interface_left": -650, "interface_right": -150, "surface": 0 }},
  "physics": {{ "r": 0.998, "manning": 0.02, "interlayer_friction": 3e-4, "coriolis": {{ "latitude": 36 }},
               "reference": {{ "surface": 0, "interface": -150 }} }},
  "boundaries": {{
    "atlantic": {{ "type": "elevation", "surface": {{ "mean": 0, "tides": [{{ "amplitude": 0.5, "period": 44714, "phase": 0 }}] }}, "interface": -650 }},
    "mediterranean": {{ "type": "open" }},
    "coast": {{ "type": "wall" }}
  }},
  "gauges": {{ "interval": 60, "points": [{{ "name": "narrows", "at": [85000, 0] }}, {{ "name": "west", "at": [62000, 0] }}],
              "boundaries": ["atlantic", "mediterranean"] }},
  "time": {{ "end": 600 }},
  "output": {{ "dir": {dir}, "max_maps": {{}} }}
}}"#
        );
        Self::from_json(&text)
    }

    /// Parse and validate a scenario file. Errors name the file and the field.
    pub fn from_file(path: &Path) -> Result<Scenario> {
        let text = crate::util::files::read_regular_to_string(path)
            .with_context(|| format!("cannot read scenario {}", path.display()))?;
        let mut s = Self::from_json(&text).map_err(|e| anyhow!("{}: {e:#}", path.display()))?;
        let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        if let Some(m) = &s.mesh {
            if m.is_relative() {
                s.mesh = Some(dir.join(m));
            }
        }
        for c in s.boundaries.values_mut() {
            c.resolve_files(&dir);
        }
        s.check_boundary_files().map_err(|e| anyhow!("{}: {e:#}", path.display()))?;
        for f in s.bathymetry.files_mut() {
            f.resolve(&dir);
        }
        if let Initial::AtRest { interface: Level::File(f), .. } = &mut s.initial {
            f.resolve(&dir);
        }
        Ok(s)
    }

    /// The scenario with every file it names (mesh, data files of the bathymetry and the
    /// initial interface, boundary time series) by absolute path, so that a copy of it runs
    /// from any directory (the output's `scenario.json`, a checkpoint's scenario). Paths were
    /// made relative to the working directory when the scenario was read.
    pub fn with_absolute_paths(&self) -> Result<Scenario> {
        let mut s = self.clone();
        let absolute = |p: &Path| std::path::absolute(p).with_context(|| format!("file {}", p.display()));
        if let Some(m) = &s.mesh {
            s.mesh = Some(absolute(m)?);
        }
        let here = absolute(Path::new("."))?;
        for c in s.boundaries.values_mut() {
            c.resolve_files(&here);
        }
        for f in s.bathymetry.files_mut() {
            f.path = absolute(&f.path)?;
        }
        if let Initial::AtRest { interface: Level::File(f), .. } = &mut s.initial {
            f.path = absolute(&f.path)?;
        }
        Ok(s)
    }

    /// Read every time-series file the boundaries name, so that a bad one is reported when
    /// the scenario is read, before any meshing.
    pub fn check_boundary_files(&self) -> Result<()> {
        for (name, c) in &self.boundaries {
            if let boundaries::Condition::Elevation { surface: a, interface: b }
            | boundaries::Condition::Discharge { layer1: a, layer2: b } = c
            {
                for (which, f) in [(0, a), (1, b)] {
                    if let Some(f @ boundaries::Forcing::File { .. }) = f {
                        let field = match (c, which) {
                            (boundaries::Condition::Elevation { .. }, 0) => "surface",
                            (boundaries::Condition::Elevation { .. }, _) => "interface",
                            (_, 0) => "layer1",
                            _ => "layer2",
                        };
                        f.function(&format!("boundaries.{name}.{field}"))?;
                    }
                }
            }
        }
        Ok(())
    }

    /// The boundary tag names this scenario's mesh knows, with their numbers: a domain's
    /// `outer_tags`/`hole_tags` names (numbered from 1 in order of first appearance); a mesh
    /// file's Gmsh physical line names, and every tag by its number (`"3"`).
    pub fn tag_names(&self, mesh: &crate::mesh::Mesh) -> Result<BTreeMap<String, u32>> {
        self.tag_names_from(&mut mesh.boundary.iter().map(|seg| seg.tag))
    }

    /// [`Scenario::tag_names`] from the tags of the mesh's boundary segments alone (a rank
    /// that holds only its part of the mesh has them from its partition files).
    pub fn tag_names_from(&self, segment_tags: &mut dyn Iterator<Item = u32>) -> Result<BTreeMap<String, u32>> {
        let mut names = BTreeMap::new();
        if let Some(d) = &self.domain {
            for (k, n) in d.tag_names().into_iter().enumerate() {
                names.insert(n, k as u32 + 1);
            }
            return Ok(names);
        }
        for tag in segment_tags {
            if tag != 0 {
                names.insert(tag.to_string(), tag);
            }
        }
        if let Some(path) = &self.mesh {
            if path.extension().is_some_and(|e| e == "msh") {
                for (tag, name) in crate::mesh::io::gmsh::physical_line_names(path)? {
                    names.insert(name, tag);
                }
            }
        }
        Ok(names)
    }

    /// The run's boundary table (`boundaries`), for a mesh with this topology.
    pub fn boundary_table(
        &self,
        mesh: &crate::mesh::Mesh,
        topo: &crate::mesh::Topology,
    ) -> Result<crate::physics::Boundaries> {
        if self.boundaries.is_empty() {
            return Ok(Default::default());
        }
        let mut lengths: BTreeMap<u32, f64> = BTreeMap::new();
        for (e, &tag) in topo.edge_tag.iter().enumerate() {
            if tag != 0 && topo.edge_cells[e][1] == crate::mesh::NO_CELL {
                *lengths.entry(tag).or_insert(0.0) += topo.edge_length[e];
            }
        }
        let names = self.tag_names(mesh)?;
        self.boundary_table_of(&names, &lengths)
    }

    /// [`Scenario::boundary_table`] from the global length of each boundary tag and the tags
    /// of the mesh's boundary segments, without the mesh (a rank of a partitioned run).
    pub fn boundary_table_from(
        &self,
        lengths: &[(u32, f64)],
        segment_tags: &[u32],
    ) -> Result<crate::physics::Boundaries> {
        if self.boundaries.is_empty() {
            return Ok(Default::default());
        }
        let names = self.tag_names_from(&mut segment_tags.iter().copied())?;
        self.boundary_table_of(&names, &lengths.iter().copied().collect())
    }

    fn boundary_table_of(
        &self,
        names: &BTreeMap<String, u32>,
        lengths: &BTreeMap<u32, f64>,
    ) -> Result<crate::physics::Boundaries> {
        let source = match &self.mesh {
            Some(p) => format!("the mesh {}", p.display()),
            None => "the domain".to_string(),
        };
        boundaries::table(&self.boundaries, names, lengths, &self.physics.reference(), &source)
    }

    pub fn from_json(text: &str) -> Result<Scenario> {
        let mut de = serde_json::Deserializer::from_str(text);
        let mut s: Scenario = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let path = e.path().to_string();
            let path = if path == "." { String::new() } else { path };
            let inner = e.into_inner().to_string();
            let (path, msg) = match tagged::split(&inner) {
                Some((deeper, msg)) => (tagged::join(&path, deeper), msg.to_string()),
                None => (path, inner),
            };
            if path.is_empty() {
                anyhow!("{msg}")
            } else {
                anyhow!("{path}: {msg}")
            }
        })?;
        // Whatever follows the object (a second object, garbage, NUL bytes) is an error, not
        // ignored: it is most likely a file that was pasted together or damaged.
        de.end().map_err(|e| {
            anyhow!(
                "unexpected content after the scenario's JSON object at line {} column {}: expected the end of the file",
                e.line(),
                e.column()
            )
        })?;
        // The rest state the solver stores deviations from, made explicit here so that a
        // checkpoint's copy of the scenario restarts with the same one.
        s.physics.reference.get_or_insert(s.initial.rest_levels());
        if s.output.dir.as_os_str().is_empty() {
            s.output.dir = Path::new("out").join(&s.name);
        }
        s.validate()?;
        Ok(s)
    }

    /// Output times after 0, ending with `time.end`.
    pub fn output_times(&self) -> Vec<f64> {
        let end = self.time.end;
        let mut times: Vec<f64> = if let Some(ts) = &self.time.output_times {
            ts.iter().copied().filter(|&t| t > 0.0 && t < end).collect()
        } else if let Some(dt) = self.time.output_interval {
            let n = (end / dt - 1e-9).floor() as u64;
            (1..=n).map(|k| k as f64 * dt).filter(|&t| t < end * (1.0 - 1e-12)).collect()
        } else {
            vec![]
        };
        times.push(end);
        times
    }

    /// How many frames the output times make (the initial state, the times in between and
    /// the end), without listing them: an absurd interval must not allocate before it is
    /// refused.
    pub fn frame_count(&self) -> f64 {
        let t = &self.time;
        let between = match (&t.output_times, t.output_interval) {
            (Some(ts), _) => ts.len() as f64,
            (None, Some(dt)) => (t.end / dt - 1e-9).floor().max(0.0),
            (None, None) => 0.0,
        };
        between + 2.0
    }

    pub fn validate(&self) -> Result<()> {
        self.validate_with(true)
    }

    /// [`validate`](Self::validate) for a scenario already validated once and then changed
    /// by the command line (`--t-end`, `--output-interval`, `--out`, `--cells`), which never
    /// touches the domain's polygons: everything but their geometry is checked again, so a
    /// large domain is searched for crossings once per run, not twice.
    pub fn validate_after_overrides(&self) -> Result<()> {
        self.validate_with(false)
    }

    fn validate_with(&self, geometry: bool) -> Result<()> {
        check_name(&self.name)?;
        self.physics.validate()?;
        physics_ranges::check(&self.physics)?;
        let t = &self.time;
        if !(t.end.is_finite() && t.end > 0.0) {
            bail!("time.end: expected a positive end time, found {}", t.end);
        }
        if t.output_interval.is_some() && t.output_times.is_some() {
            bail!("time: give either output_interval or output_times, not both");
        }
        if let Some(dt) = t.output_interval {
            if !(dt.is_finite() && dt > 0.0) {
                bail!("time.output_interval: expected a positive interval, found {dt}");
            }
        }
        if let Some(ts) = &t.output_times {
            for (k, w) in ts.windows(2).enumerate() {
                if w[1].partial_cmp(&w[0]) != Some(std::cmp::Ordering::Greater) {
                    bail!("time.output_times[{}]: expected increasing times, found {} after {}", k + 1, w[1], w[0]);
                }
            }
            if let Some((k, bad)) = ts.iter().enumerate().find(|(_, &x)| !(x >= 0.0 && x <= t.end)) {
                bail!("time.output_times[{k}]: expected a time in [0, time.end = {}], found {bad}", t.end);
            }
        }
        let max_frames = self.output.max_frames.unwrap_or(MAX_FRAMES);
        if max_frames > MAX_FRAMES_LIMIT {
            bail!(
                "output.max_frames: {max_frames} is more than pycno allows ({MAX_FRAMES_LIMIT}); the list of output \
                 times alone would not fit in memory"
            );
        }
        if max_frames < 2 {
            bail!(
                "output.max_frames: expected at least 2 (a run writes its first and its last frame), found {max_frames}"
            );
        }
        self.output.validate()?;
        let frames = self.frame_count();
        if frames > max_frames as f64 {
            let field = if t.output_times.is_some() { "time.output_times" } else { "time.output_interval" };
            let (what, given) = match (&t.output_times, t.output_interval) {
                (Some(ts), _) => ("times".to_string(), format!("{} output times", ts.len())),
                (None, dt) => (format!("{} s", dt.unwrap_or(0.0)), String::new()),
            };
            let asked = if given.is_empty() { format!("an interval of {what}") } else { given };
            bail!(
                "{field}: {asked} until time.end = {} would write {frames:.0} frames; at most {max_frames} are allowed \
                 (set output.max_frames in the scenario to raise the cap)",
                t.end
            );
        }
        match (&self.domain, &self.mesh) {
            (Some(_), Some(_)) => bail!("domain, mesh: give either a domain to triangulate or a mesh file, not both"),
            (None, None) => bail!("domain: missing; give a domain to triangulate or a mesh file"),
            (Some(d), None) => {
                if geometry {
                    crate::mesh::domain::check_domain(d)?;
                }
                d.check_tags()?;
                let known = d.tag_names();
                if let Some(name) = self.boundaries.keys().find(|k| !known.contains(k)) {
                    bail!(
                        "boundaries.{name}: the domain has no boundary tag {name:?}; known tags: {} (name the \
                         segments with domain.outer_tags and domain.hole_tags)",
                        if known.is_empty() { "none".to_string() } else { known.join(", ") }
                    );
                }
                let r = &self.resolution;
                match (r.cells, r.max_area) {
                    (None, None) => bail!("resolution: give cells (a target triangle count) or max_area"),
                    (Some(_), Some(_)) => bail!("resolution: give either cells or max_area, not both"),
                    (Some(n), None) if n < 2 => bail!("resolution.cells: expected at least 2 triangles, found {n}"),
                    (Some(n), None) if n > MAX_CELLS => {
                        bail!("resolution.cells: {n} triangles are more than pycno can number (at most {MAX_CELLS})")
                    }
                    (None, Some(a)) if !(a.is_finite() && a > 0.0) => {
                        bail!("resolution.max_area: expected a positive area, found {a}")
                    }
                    (None, Some(a)) => {
                        let area = crate::mesh::generate::domain_area(d);
                        let implied = area / a;
                        if implied.is_nan() || implied > MAX_CELLS as f64 {
                            bail!(
                                "resolution.max_area: {a} in a domain of area {area} means at least {implied:.3e} \
                                 triangles, more than pycno can number (at most {MAX_CELLS}) or any machine can hold"
                            );
                        }
                    }
                    _ => {}
                }
                if !(r.min_angle >= 0.0 && r.min_angle <= 33.0) {
                    bail!("resolution.min_angle: expected degrees in [0, 33] (refinement may not end above that), found {}", r.min_angle);
                }
            }
            (None, Some(_)) => {
                let r = &self.resolution;
                if r.cells.is_some() || r.max_area.is_some() || r.min_angle != Resolution::default().min_angle {
                    bail!(
                        "resolution: applies to a domain that pycno triangulates; this scenario reads the mesh file \
                         {}: remove resolution (or give a domain instead of the mesh)",
                        self.mesh.as_deref().unwrap_or(Path::new("")).display()
                    );
                }
            }
        }
        for (name, c) in &self.boundaries {
            c.validate(&format!("boundaries.{name}"))?;
        }
        self.bathymetry.validate()?;
        self.initial.validate()?;
        if let Some(g) = &self.gauges {
            if g.points.is_empty() && g.boundaries.is_empty() {
                bail!("gauges: expected at least one gauge point (gauges.points) or boundary tag (gauges.boundaries)");
            }
            let open: Vec<&String> = self
                .boundaries
                .iter()
                .filter(|(_, c)| !matches!(c, boundaries::Condition::Wall))
                .map(|(n, _)| n)
                .collect();
            for (k, name) in g.boundaries.iter().enumerate() {
                if !open.contains(&name) {
                    bail!(
                        "gauges.boundaries[{k}]: {name:?} is not a boundary that water crosses; expected one of the \
                         tags in `boundaries` that is not a wall: {}",
                        if open.is_empty() {
                            "(none)".to_string()
                        } else {
                            open.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", ")
                        }
                    );
                }
                if g.boundaries[..k].contains(name) {
                    bail!("gauges.boundaries[{k}]: {name:?} is listed twice");
                }
                if g.points.iter().any(|p| &p.name == name) {
                    bail!("gauges.boundaries[{k}]: {name:?} is also the name of a gauge point (their columns would clash)");
                }
            }
            if let Some(dt) = g.interval {
                if !(dt.is_finite() && dt > 0.0) {
                    bail!("gauges.interval: expected a positive interval in seconds, found {dt}");
                }
                let records = t.end / dt;
                if records.is_nan() || records > MAX_GAUGE_RECORDS {
                    bail!(
                        "gauges.interval: {dt} s until time.end = {} would record {records:.3e} rows; at most \
                         {MAX_GAUGE_RECORDS:.0} are allowed: give a larger interval",
                        t.end
                    );
                }
            }
            for (k, p) in g.points.iter().enumerate() {
                if p.name.is_empty() || !p.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
                    bail!("gauges.points[{k}].name: expected letters, digits, '_' or '-', found {:?}", p.name);
                }
                if g.points[..k].iter().any(|q| q.name == p.name) {
                    bail!("gauges.points[{k}].name: {:?} is used by another gauge", p.name);
                }
                if !(p.at[0].is_finite() && p.at[1].is_finite()) {
                    bail!("gauges.points[{k}].at: expected finite coordinates, found {:?}", p.at);
                }
            }
        }
        Ok(())
    }
}

impl Output {
    /// The NetCDF time axis's origin, `YYYY-MM-DD HH:MM:SS` (UTC).
    pub fn time_origin(&self) -> Result<String> {
        match &self.start_date {
            Some(d) => crate::util::date::parse_start_date(d).map_err(|e| anyhow::anyhow!("output.start_date: {e}")),
            None => Ok("2000-01-01 00:00:00".into()),
        }
    }

    fn validate(&self) -> Result<()> {
        self.time_origin()?;
        if let Some(fields) = &self.fields {
            if fields.is_empty() {
                bail!("output.fields: expected at least one cell array (leave the key out to write all of them)");
            }
            for (k, f) in fields.iter().enumerate() {
                if fields[..k].contains(f) {
                    bail!("output.fields[{k}]: {:?} is listed twice", f.name());
                }
            }
        }
        if let Some(m) = &self.max_maps {
            positive("output.max_maps.arrival_threshold", m.arrival_threshold, "threshold in metres")?;
        }
        Ok(())
    }

    /// The cell arrays to write, in the files' order.
    pub fn field_list(&self) -> Vec<OutputField> {
        match &self.fields {
            Some(f) => OutputField::ALL.iter().copied().filter(|x| f.contains(x)).collect(),
            None => OutputField::ALL.to_vec(),
        }
    }
}

fn positive(field: &str, x: f64, what: &str) -> Result<()> {
    if !(x.is_finite() && x > 0.0) {
        bail!("{field}: expected a positive {what}, found {x}");
    }
    Ok(())
}

fn non_negative(field: &str, x: f64, what: &str) -> Result<()> {
    if !(x.is_finite() && x >= 0.0) {
        bail!("{field}: expected a {what} >= 0 (0: the layer is absent), found {x}");
    }
    Ok(())
}

impl Bathymetry {
    fn validate(&self) -> Result<()> {
        self.validate_at("bathymetry")
    }

    /// The files this bathymetry reads, for resolving their paths.
    fn files_mut(&mut self) -> Vec<&mut data::DataFile> {
        match self {
            Bathymetry::File(f) => vec![f],
            Bathymetry::Sum(parts) => parts.iter_mut().flat_map(|b| b.files_mut()).collect(),
            _ => vec![],
        }
    }

    fn validate_at(&self, at: &str) -> Result<()> {
        let finite = |field: &str, xs: &[f64]| -> Result<()> {
            if let Some(x) = xs.iter().find(|x| !x.is_finite()) {
                bail!("{field}: expected a finite number, found {x}");
            }
            Ok(())
        };
        match self {
            Bathymetry::Constant { depth } => finite(&format!("{at}.depth"), &[*depth]),
            Bathymetry::GaussianBump { depth, height, center, width } => {
                finite(&format!("{at}.depth"), &[*depth])?;
                finite(&format!("{at}.height"), &[*height])?;
                finite(&format!("{at}.center"), center)?;
                positive(&format!("{at}.width"), *width, "width")
            }
            Bathymetry::Slope { depth, gradient } => {
                finite(&format!("{at}.depth"), &[*depth])?;
                finite(&format!("{at}.gradient"), gradient)
            }
            Bathymetry::Sill { x0, y0, height, width, depth } => {
                match (x0, y0) {
                    (Some(c), None) => finite(&format!("{at}.x0"), &[*c])?,
                    (None, Some(c)) => finite(&format!("{at}.y0"), &[*c])?,
                    _ => bail!("{at}: give exactly one of x0 (a ridge across x = x0) and y0 (a ridge across y = y0)"),
                }
                finite(&format!("{at}.height"), &[*height])?;
                finite(&format!("{at}.depth"), &[*depth])?;
                positive(&format!("{at}.width"), *width, "width")
            }
            Bathymetry::File(f) => f.validate(at),
            Bathymetry::Sum(parts) => {
                if parts.is_empty() {
                    bail!("{at}: expected at least one shape or file in the list");
                }
                for (k, b) in parts.iter().enumerate() {
                    b.validate_at(&format!("{at}[{k}]"))?;
                }
                Ok(())
            }
        }
    }
}

impl Initial {
    /// The default `physics.reference`: levels at which (part of) this initial state is at
    /// rest, so that those cells are stored as exact zeros. `at_rest`: its own levels;
    /// `dam_break_x`: the right-hand side's; `circular_dam_break`: the outside's; `layers`
    /// (thicknesses, no levels): both at 0, so that the solver stores h1 and the interface
    /// elevation.
    pub fn rest_levels(&self) -> Reference {
        match self {
            &Initial::AtRest { interface: Level::Number(interface), surface } => Reference { surface, interface },
            // A varying interface is not at rest: any reference level will do.
            &Initial::AtRest { interface: Level::File(_), surface } => Reference { surface, interface: 0.0 },
            &Initial::DamBreakX { interface_right, surface, .. } => Reference { surface, interface: interface_right },
            &Initial::CircularDamBreak { h1_outside, surface, .. } => {
                Reference { surface, interface: surface - h1_outside }
            }
            Initial::Layers { .. } => Reference::default(),
        }
    }

    fn validate(&self) -> Result<()> {
        match self {
            Initial::CircularDamBreak { radius, h1_inside, h1_outside, .. } => {
                positive("initial.radius", *radius, "radius")?;
                positive("initial.h1_inside", *h1_inside, "thickness")?;
                positive("initial.h1_outside", *h1_outside, "thickness")
            }
            Initial::DamBreakX { .. } | Initial::AtRest { interface: Level::Number(_), .. } => Ok(()),
            Initial::AtRest { interface: Level::File(f), .. } => f.validate("initial.interface"),
            Initial::Layers { layer1, layer2 } => {
                layer1.thickness.validate("initial.layer1.thickness")?;
                layer2.thickness.validate("initial.layer2.thickness")
            }
        }
    }
}

impl Field {
    fn validate(&self, field: &str) -> Result<()> {
        match self {
            Field::Constant(x) => non_negative(field, *x, "thickness"),
            Field::Shape(Shape::Circle { radius, inside, outside, .. }) => {
                positive(&format!("{field}.radius"), *radius, "radius")?;
                non_negative(&format!("{field}.inside"), *inside, "thickness")?;
                non_negative(&format!("{field}.outside"), *outside, "thickness")
            }
            Field::Shape(Shape::StepX { left, right, .. }) => {
                non_negative(&format!("{field}.left"), *left, "thickness")?;
                non_negative(&format!("{field}.right"), *right, "thickness")
            }
        }
    }
}

impl<'de> Deserialize<'de> for Bathymetry {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        parse_bathymetry(&v, true).map_err(<D::Error as serde::de::Error>::custom)
    }
}

/// One bathymetry entry, or (`list_ok`, at the top) a list of them.
fn parse_bathymetry(v: &serde_json::Value, list_ok: bool) -> Result<Bathymetry, String> {
    if let Some(items) = v.as_array() {
        if !list_ok {
            return Err(tagged::err("", "expected a shape or file object; lists do not nest"));
        }
        let mut parts = Vec::with_capacity(items.len());
        for (k, item) in items.iter().enumerate() {
            parts.push(parse_bathymetry(item, false).map_err(|e| match tagged::split(&e) {
                Some((path, msg)) => tagged::err(&tagged::join(&format!("[{k}]"), path), msg),
                None => tagged::err(&format!("[{k}]"), e),
            })?);
        }
        return Ok(Bathymetry::Sum(parts));
    }
    let o = tagged::Obj::new(v, "an object with a \"type\", or a list of them")?;
    Ok(match o.kind(&["constant", "gaussian_bump", "slope", "sill", "file"])? {
        "sill" => {
            o.only(&["x0", "y0", "height", "width", "depth"])?;
            Bathymetry::Sill {
                x0: o.opt("x0", None)?,
                y0: o.opt("y0", None)?,
                height: o.req("height")?,
                width: o.req("width")?,
                depth: o.opt("depth", 0.0)?,
            }
        }
        "file" => Bathymetry::File(tagged::value("", v)?),
        "constant" => {
            o.only(&["depth"])?;
            Bathymetry::Constant { depth: o.req("depth")? }
        }
        "gaussian_bump" => {
            o.only(&["depth", "height", "center", "width"])?;
            Bathymetry::GaussianBump {
                depth: o.req("depth")?,
                height: o.req("height")?,
                center: o.req("center")?,
                width: o.req("width")?,
            }
        }
        _ => {
            o.only(&["depth", "gradient"])?;
            Bathymetry::Slope { depth: o.req("depth")?, gradient: o.req("gradient")? }
        }
    })
}

impl<'de> Deserialize<'de> for Initial {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        let parse = || -> Result<Initial, String> {
            let o = tagged::Obj::new(&v, "an object with a \"type\"")?;
            Ok(match o.kind(&["circular_dam_break", "dam_break_x", "at_rest", "layers"])? {
                "circular_dam_break" => {
                    o.only(&["center", "radius", "h1_inside", "h1_outside", "surface"])?;
                    Initial::CircularDamBreak {
                        center: o.opt("center", [0.0, 0.0])?,
                        radius: o.opt("radius", paper_radius())?,
                        h1_inside: o.opt("h1_inside", paper_h1_inside())?,
                        h1_outside: o.opt("h1_outside", paper_h1_outside())?,
                        surface: o.opt("surface", 0.0)?,
                    }
                }
                "dam_break_x" => {
                    o.only(&["x0", "interface_left", "interface_right", "surface"])?;
                    Initial::DamBreakX {
                        x0: o.req("x0")?,
                        interface_left: o.req("interface_left")?,
                        interface_right: o.req("interface_right")?,
                        surface: o.opt("surface", 0.0)?,
                    }
                }
                "at_rest" => {
                    o.only(&["interface", "surface"])?;
                    let interface = match o.req::<serde_json::Value>("interface")? {
                        serde_json::Value::Object(_) => Level::File(o.req("interface")?),
                        _ => Level::Number(o.req("interface")?),
                    };
                    Initial::AtRest { interface, surface: o.opt("surface", 0.0)? }
                }
                _ => {
                    o.only(&["layer1", "layer2"])?;
                    Initial::Layers { layer1: o.req("layer1")?, layer2: o.req("layer2")? }
                }
            })
        };
        parse().map_err(<D::Error as serde::de::Error>::custom)
    }
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        let parse = || -> Result<Field, String> {
            if let Some(x) = v.as_f64() {
                return Ok(Field::Constant(x));
            }
            let o = tagged::Obj::new(&v, "a number or a shape object (\"type\": \"circle\" or \"step_x\")")?;
            Ok(Field::Shape(match o.kind(&["circle", "step_x"])? {
                "circle" => {
                    o.only(&["center", "radius", "inside", "outside"])?;
                    Shape::Circle {
                        center: o.req("center")?,
                        radius: o.req("radius")?,
                        inside: o.req("inside")?,
                        outside: o.req("outside")?,
                    }
                }
                _ => {
                    o.only(&["x0", "left", "right"])?;
                    Shape::StepX { x0: o.req("x0")?, left: o.req("left")?, right: o.req("right")? }
                }
            }))
        };
        parse().map_err(<D::Error as serde::de::Error>::custom)
    }
}
