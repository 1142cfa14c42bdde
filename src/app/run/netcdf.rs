//! `<name>.nc` (`output.netcdf`): the run's frames and max maps as one NetCDF file in the
//! UGRID-1.0 and CF-1.8 conventions (see `output::netcdf` for the format). An observer of
//! the step loop: a record at the start and at every output time; on several ranks each
//! frame is gathered to rank 0, which writes the file.

use super::maxmaps;
use super::observers::{Observer, RunContext};
use crate::comm::{agree, Comm};
use crate::output::netcdf::{Attr, Data, Schema, Type, Writer};
use crate::physics::extremes::WIDTH;
use crate::physics::CellState;
use crate::scenario::OutputField;
use crate::solver::Backend;
use anyhow::Result;

/// A field of a record: its variable name, the CF standard name (where one exists), long
/// name and units.
struct FieldVar {
    name: &'static str,
    standard: Option<&'static str>,
    long: &'static str,
    units: &'static str,
}

fn field_vars(f: OutputField) -> Vec<FieldVar> {
    let v = |name, standard, long, units| FieldVar { name, standard, long, units };
    match f {
        OutputField::H1 => vec![v("h1", None, "thickness of the upper layer", "m")],
        OutputField::H2 => vec![v("h2", None, "thickness of the lower layer", "m")],
        OutputField::Velocity1 => vec![
            v("u1", Some("sea_water_x_velocity"), "eastward (x) velocity of the upper layer", "m s-1"),
            v("v1", Some("sea_water_y_velocity"), "northward (y) velocity of the upper layer", "m s-1"),
        ],
        OutputField::Velocity2 => vec![
            v("u2", Some("sea_water_x_velocity"), "eastward (x) velocity of the lower layer", "m s-1"),
            v("v2", Some("sea_water_y_velocity"), "northward (y) velocity of the lower layer", "m s-1"),
        ],
        OutputField::InterfaceElevation => {
            vec![v("interface_elevation", None, "elevation of the interface above the reference level, h2 - H", "m")]
        }
        OutputField::FreeSurfaceElevation => vec![v(
            "free_surface_elevation",
            Some("sea_surface_height_above_mean_sea_level"),
            "elevation of the free surface above the reference (rest) level, h1 + h2 - H",
            "m",
        )],
        // Static (bathymetry), implicit (the face index is the cell id) or per rank.
        OutputField::Bathymetry | OutputField::CellId | OutputField::Rank => vec![],
    }
}

/// The values of a field's variables for the whole mesh (global order).
fn field_values(f: OutputField, st: &[CellState], depth: &[f64]) -> Vec<Vec<f64>> {
    let vel = |k: usize| -> Vec<f64> {
        st.iter()
            .map(|s| {
                let (a, b) = s.velocities();
                [a[0], a[1], b[0], b[1]][k]
            })
            .collect()
    };
    match f {
        OutputField::H1 => vec![st.iter().map(|s| s.h1).collect()],
        OutputField::H2 => vec![st.iter().map(|s| s.h2).collect()],
        OutputField::Velocity1 => vec![vel(0), vel(1)],
        OutputField::Velocity2 => vec![vel(2), vel(3)],
        OutputField::InterfaceElevation => vec![st.iter().zip(depth).map(|(s, &d)| s.interface_elevation(d)).collect()],
        OutputField::FreeSurfaceElevation => {
            vec![st.iter().zip(depth).map(|(s, &d)| s.surface_elevation(d)).collect()]
        }
        _ => vec![],
    }
}

const MAPS: [(&str, Option<&str>, &str, &str); 6] = [
    (
        "max_free_surface_elevation",
        Some("sea_surface_height_above_mean_sea_level"),
        "highest free surface over the run",
        "m",
    ),
    ("max_interface_elevation", None, "highest interface over the run", "m"),
    ("min_interface_elevation", None, "lowest interface over the run", "m"),
    ("max_speed1", None, "highest speed of the upper layer over the run", "m s-1"),
    ("max_speed2", None, "highest speed of the lower layer over the run", "m s-1"),
    ("arrival_time", None, "first time the followed elevation moved more than the threshold; -1: never", "s"),
];

/// The file's layout for this run.
fn schema(run: &RunContext, f32: bool) -> Result<Schema> {
    let (s, mesh) = (run.scenario, &run.pm.mesh);
    let ty = if f32 { Type::Float } else { Type::Double };
    let mut sc = Schema::default();
    let text = |x: &str| Attr::Text(x.into());
    sc.attrs = vec![
        ("Conventions".into(), text("CF-1.8 UGRID-1.0")),
        ("title".into(), text(&format!("pycno run {}", s.name))),
        (
            "source".into(),
            text(&format!("pycno {} (two-layer shallow water, IR-Roe scheme)", env!("CARGO_PKG_VERSION"))),
        ),
        (
            "references".into(),
            text(
                "M. de la Asuncion, J. M. Mantas, M. J. Castro, E. D. Fernandez-Nieto, An MPI-CUDA implementation of \
                 an improved Roe method for two-layer shallow water systems, J. Parallel Distrib. Comput. 72 (2012)",
            ),
        ),
        ("density_ratio".into(), Attr::Double(s.physics.r)),
        ("gravity".into(), Attr::Double(s.physics.g)),
    ];
    if let Some(h) = &run.record.history {
        sc.attrs.push(("history".into(), text(h)));
    }
    let node = sc.dim("nMesh_node", mesh.vertices.len());
    let face = sc.dim("nMesh_face", mesh.triangles.len());
    let three = sc.dim("nMaxMesh_face_nodes", 3);
    let time = sc.dim("time", 0);
    sc.var(
        "mesh",
        &[],
        Type::Int,
        &[
            ("cf_role", text("mesh_topology")),
            ("long_name", text("topology of the 2D triangular mesh")),
            ("topology_dimension", Attr::Int(2)),
            ("node_coordinates", text("mesh_node_x mesh_node_y")),
            ("face_node_connectivity", text("mesh_face_nodes")),
            ("face_dimension", text("nMesh_face")),
            ("face_coordinates", text("mesh_face_x mesh_face_y")),
        ],
    );
    for (name, axis, std) in [
        ("mesh_node_x", "x", "projection_x_coordinate"),
        ("mesh_node_y", "y", "projection_y_coordinate"),
        ("mesh_face_x", "x", "projection_x_coordinate"),
        ("mesh_face_y", "y", "projection_y_coordinate"),
    ] {
        let (dim, what) = if name.contains("node") { (node, "node") } else { (face, "face centroid") };
        let long = format!("{axis} coordinate of each mesh {what}");
        sc.var(
            name,
            &[dim],
            Type::Double,
            &[("standard_name", text(std)), ("long_name", text(&long)), ("units", text("m"))],
        );
    }
    sc.var(
        "mesh_face_nodes",
        &[face, three],
        Type::Int,
        &[
            ("cf_role", text("face_node_connectivity")),
            ("long_name", text("the three nodes of each triangle, counter-clockwise")),
            ("start_index", Attr::Int(0)),
        ],
    );
    let on_faces = |sc: &mut Schema, name: &str, dims: &[usize], std: Option<&str>, long: &str, units: &str| {
        let mut a = vec![
            ("long_name", text(long)),
            ("units", text(units)),
            ("mesh", text("mesh")),
            ("location", text("face")),
            ("coordinates", text("mesh_face_x mesh_face_y")),
        ];
        if let Some(x) = std {
            a.insert(0, ("standard_name", text(x)));
        }
        sc.var(name, dims, ty, &a);
    };
    on_faces(
        &mut sc,
        "bathymetry",
        &[face],
        Some("sea_floor_depth_below_mean_sea_level"),
        "depth of the bottom below the reference level, H (positive down)",
        "m",
    );
    if s.output.max_maps.is_some() {
        for (name, std, long, units) in MAPS {
            on_faces(&mut sc, name, &[face], std, long, units);
            // CF: what each value is of the run's time span (the arrival time is none).
            let method = if name.starts_with("max_") {
                Some("time: maximum")
            } else if name.starts_with("min_") {
                Some("time: minimum")
            } else {
                None
            };
            if let (Some(m), Some(v)) = (method, sc.vars.last_mut()) {
                v.attrs.push(("cell_methods".into(), text(m)));
            }
        }
    }
    sc.var(
        "time",
        &[time],
        Type::Double,
        &[
            ("standard_name", text("time")),
            ("long_name", text("model time from the start of the run")),
            ("units", text(&format!("seconds since {}", s.output.time_origin()?))),
            ("axis", text("T")),
        ],
    );
    for f in s.output.field_list() {
        for v in field_vars(f) {
            on_faces(&mut sc, v.name, &[time, face], v.standard, v.long, v.units);
        }
    }
    Ok(sc)
}

pub struct NetCdf {
    /// Rank 0's file.
    writer: Option<Writer>,
}

/// The whole state in global cell order, on rank 0 (collective).
fn gather(comm: &dyn Comm, global: &[u32], st: &[CellState], cells: usize) -> Option<Vec<CellState>> {
    if comm.size() == 1 {
        return Some(by_global(global, st));
    }
    let mine: Vec<f64> =
        global.iter().zip(st).flat_map(|(&g, s)| [&[g as f64][..], &s.to_array()[..]].concat()).collect();
    gather_records(comm, &mine, 6, cells)
        .map(|r| r.into_iter().map(|x| CellState::from_array(std::array::from_fn(|k| x[k]))).collect())
}

/// One rank's values in global order (its cells are all the cells).
fn by_global<T: Clone>(global: &[u32], v: &[T]) -> Vec<T> {
    let mut out = v.to_vec();
    for (&g, x) in global.iter().zip(v) {
        out[g as usize] = x.clone();
    }
    out
}

/// Records of `width` values after a global id, from every rank, by id (rank 0 only).
fn gather_records(comm: &dyn Comm, mine: &[f64], width: usize, cells: usize) -> Option<Vec<Vec<f64>>> {
    // all_gather takes equal lengths: pad every rank's block to the longest.
    let longest = comm.all_gather_f64(&[mine.len() as f64]).into_iter().fold(0.0, f64::max) as usize;
    let mut block = mine.to_vec();
    block.resize(longest, -1.0);
    let all = comm.all_gather_f64(&block);
    if !comm.is_root() {
        return None;
    }
    let rec = width + 1;
    let mut out = vec![vec![0.0; width]; cells];
    for r in 0..comm.size() {
        for x in all[r * longest..(r + 1) * longest].chunks_exact(rec) {
            if x[0] >= 0.0 {
                out[x[0] as usize] = x[1..].to_vec();
            }
        }
    }
    Some(out)
}

impl NetCdf {
    /// Start `<name>.nc` in the output directory (rank 0), or continue it on a restart.
    pub fn new(run: &RunContext, f32: bool) -> Result<NetCdf> {
        let comm = run.comm;
        let path = run.scenario.output.dir.join(file_name(&run.scenario.name));
        let writer = if comm.is_root() {
            let w = (|| -> Result<Writer> {
                let sc = schema(run, f32)?;
                if let Some(r) = run.resume {
                    return Writer::resume(&path, sc, "time", r.time);
                }
                let mut w = Writer::create(&path, sc)?;
                let m = &run.pm.mesh;
                let col = |v: &[[f64; 2]], k: usize| v.iter().map(|p| p[k]).collect::<Vec<f64>>();
                w.put("mesh", Data::Int(&[0]))?;
                w.put("mesh_node_x", Data::Real(&col(&m.vertices, 0)))?;
                w.put("mesh_node_y", Data::Real(&col(&m.vertices, 1)))?;
                w.put("mesh_face_x", Data::Real(&col(&run.pm.topo.cell_centroid, 0)))?;
                w.put("mesh_face_y", Data::Real(&col(&run.pm.topo.cell_centroid, 1)))?;
                let tri: Vec<i32> = m.triangles.iter().flat_map(|t| t.map(|v| v as i32)).collect();
                w.put("mesh_face_nodes", Data::Int(&tri))?;
                Ok(w)
            })();
            Some(agree(comm, w)?)
        } else {
            agree(comm, Ok(()))?;
            None
        };
        let mut n = NetCdf { writer };
        // The bathymetry, by global id.
        let depth = n.global_depth(run);
        n.on_root(comm, |w| match &depth {
            Some(d) => w.put("bathymetry", Data::Real(d)),
            None => Ok(()),
        })?;
        Ok(n)
    }

    fn global_depth(&self, run: &RunContext) -> Option<Vec<f64>> {
        let cells = run.pm.topo.num_cells();
        let comm = run.comm;
        if comm.size() == 1 {
            return Some(by_global(&run.part.global, run.piece.depth));
        }
        let mine: Vec<f64> = run.part.global.iter().zip(run.piece.depth).flat_map(|(&g, &d)| [g as f64, d]).collect();
        gather_records(comm, &mine, 1, cells).map(|r| r.into_iter().map(|x| x[0]).collect())
    }

    /// Run `f` on rank 0's writer; every rank learns the outcome.
    fn on_root(&mut self, comm: &dyn Comm, f: impl FnOnce(&mut Writer) -> Result<()>) -> Result<()> {
        let r = match &mut self.writer {
            Some(w) => f(w),
            None => Ok(()),
        };
        agree(comm, r)
    }

    fn record(&mut self, run: &RunContext, b: &mut dyn Backend, time: f64) -> Result<()> {
        let comm = run.comm;
        let st = agree(comm, b.state())?;
        let cells = run.pm.topo.num_cells();
        let all = gather(comm, &run.part.global, &st, cells);
        let depth = self.global_depth(run);
        self.on_root(comm, |w| {
            let (all, depth) = (all.expect("rank 0 gathers"), depth.expect("rank 0 gathers"));
            let fields = run.scenario.output.field_list();
            let values: Vec<(&str, Vec<f64>)> = fields
                .iter()
                .flat_map(|&f| field_vars(f).into_iter().map(|v| v.name).zip(field_values(f, &all, &depth)))
                .collect();
            let mut rec: Vec<(&str, Data)> = vec![("time", Data::Real(std::slice::from_ref(&time)))];
            rec.extend(values.iter().map(|(n, v)| (*n, Data::Real(v))));
            w.append(&rec)
        })
    }

    /// The max maps into their variables (collective).
    pub fn write_maps(&mut self, run: &RunContext, b: &mut dyn Backend) -> Result<()> {
        let comm = run.comm;
        let e = agree(comm, b.extremes())?;
        let cells = run.pm.topo.num_cells();
        let mine: Vec<f64> =
            run.part.global.iter().zip(&e).flat_map(|(&g, r)| [&[g as f64][..], &r[..]].concat()).collect();
        let all: Option<Vec<[f64; WIDTH]>> = if comm.size() == 1 {
            Some(by_global(&run.part.global, &e))
        } else {
            gather_records(comm, &mine, WIDTH, cells)
                .map(|r| r.into_iter().map(|x| std::array::from_fn(|k| x[k])).collect())
        };
        let depth = self.global_depth(run);
        self.on_root(comm, |w| {
            let arrays = maxmaps::arrays(&all.expect("rank 0 gathers"), &depth.expect("rank 0 gathers"));
            arrays.iter().try_for_each(|(name, v)| w.put(name, Data::Real(v)))
        })
    }
}

pub fn file_name(name: &str) -> String {
    format!("{name}.nc")
}

impl Observer for NetCdf {
    fn start(&mut self, run: &mut RunContext, b: &mut dyn Backend) -> Result<()> {
        self.record(run, b, 0.0)
    }
    fn output(
        &mut self,
        run: &mut RunContext,
        b: &mut dyn Backend,
        _index: usize,
        time: f64,
        _step: u64,
    ) -> Result<()> {
        self.record(run, b, time)
    }
    fn end(&mut self, run: &mut RunContext, b: &mut dyn Backend) -> Result<()> {
        if run.scenario.output.max_maps.is_some() {
            self.write_maps(run, b)?;
        }
        Ok(())
    }
}
