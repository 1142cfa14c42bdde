//! This rank's part of a run and its backend: the submesh (read from a partition directory
//! or made here), the owned cells' global ids, depth, area and mesh piece, and the backend
//! of the chosen kind and precision over the rank's layout. The precision is decided here
//! and goes no further: everything above sees a `dyn Backend`.

use super::options::{BackendChoice, Precision, RunOptions};
use super::Setup;
use crate::app::PreparedMesh;
use crate::comm::{agree, Comm};
use crate::mesh::Mesh;
use crate::partition::geometry::{self, RankGeometry};
use crate::partition::{files, fit, metis, rings_for_order, submesh, Submesh};
use crate::physics::Model;
use crate::scenario::Scenario;
use crate::solver::cuda::{self, CudaBackend, CudaReal};
use crate::solver::{Backend, CpuBackend, Layout};
use anyhow::{bail, Context, Result};

/// Resolve `auto`: CUDA when [`cuda::probe()`] finds a device, else the CPU. `quiet` (ranks
/// other than 0) logs nothing.
pub fn choose_backend(choice: BackendChoice, quiet: bool) -> Result<BackendChoice> {
    match choice {
        BackendChoice::Cpu => Ok(BackendChoice::Cpu),
        BackendChoice::Cuda => {
            cuda::probe().context("--backend cuda: no usable GPU")?;
            Ok(BackendChoice::Cuda)
        }
        BackendChoice::Auto => match cuda::probe() {
            Ok(_) => Ok(BackendChoice::Cuda),
            Err(e) => {
                if !quiet {
                    log::info!("no usable GPU ({e:#}); running on the CPU");
                }
                Ok(BackendChoice::Cpu)
            }
        },
    }
}

/// The global mesh's size, on a rank that holds only its part of it (its prepared mesh is
/// then the rank's piece: owned cells as `mesh`, owned and receive-block cells as `topo`).
#[derive(Clone, Copy, Debug)]
pub struct GlobalSize {
    pub cells: usize,
    pub edges: usize,
}

/// What a rank reads of a partition directory with geometry files: its submesh and geometry,
/// and nothing global.
pub struct LocalPartition {
    pub submesh: Submesh,
    pub geometry: RankGeometry,
    pub seconds: f64,
}

/// This rank's part read from `--partition DIR` alone, without the global mesh (issue 22):
/// `None` (the caller builds the global mesh, as before) for a directory made before the
/// geometry files, or a run that writes NetCDF (the one output still written from the global
/// mesh). Checks that the partition was made for the scenario's mesh (by the identity of its
/// source, as the fingerprint needs the global mesh) and for this many ranks, and that the
/// ranks' files belong to one partition. Collective.
pub fn local_partition(opts: &RunOptions, s: &Scenario, comm: &dyn Comm) -> Result<Option<LocalPartition>> {
    let Some(dir) = &opts.partition else { return Ok(None) };
    let clock = std::time::Instant::now();
    let (rank, size) = (comm.rank(), comm.size());
    let m = agree(comm, files::read_manifest(dir))?;
    if !m.rank_geometry || s.output.netcdf {
        if comm.is_root() && !opts.quiet {
            log::info!(
                "{}: every rank builds the global mesh ({})",
                dir.display(),
                if s.output.netcdf {
                    "NetCDF output is written from it"
                } else {
                    "the partition has no geometry files; partition again to read only each rank's part"
                }
            );
        }
        return Ok(None);
    }
    agree(comm, ranks_match(dir, m.stats.ranks, size))?;
    let made_for = agree(comm, files::manifest_source(&m))?;
    let source = agree(comm, crate::app::mesh_source_id(s))?;
    if made_for != source {
        let r: Result<()> = Err(anyhow::anyhow!(
            "partition directory {} was made for another mesh than this scenario's ({}; this scenario's mesh source: {}): partition this scenario's mesh again with pycno partition",
            dir.display(),
            m.source,
            files::fingerprint_hex(source)
        ));
        // Every rank knows; one reports.
        agree(comm, if comm.is_root() { r } else { Ok(()) })?;
        bail!("partition made for another mesh");
    }
    let fingerprint = agree(comm, files::manifest_fingerprint(&m))?;
    let sub = agree(comm, files::read_rank(dir, rank as u32, fingerprint, size as u32))?;
    agree(comm, check_rings(dir, &sub, s.physics.order, comm.is_root() && !opts.quiet))?;
    let geo = agree(
        comm,
        geometry::read_geometry(dir, rank as u32).and_then(|g| {
            g.fits(&sub).with_context(|| {
                format!(
                    "partition directory {}: rank {rank}'s files do not belong to one partition ({}): partition again with pycno partition, or find the odd file with pycno partition --check {}",
                    dir.display(),
                    geometry::geometry_file(dir, rank as u32).display(),
                    dir.display()
                )
            })?;
            if g.source_id != source {
                bail!("{}: made for another mesh", geometry::geometry_file(dir, rank as u32).display());
            }
            Ok(g)
        }),
    )?;
    check_fit(dir, &sub, comm)?;
    Ok(Some(LocalPartition { submesh: sub, geometry: geo, seconds: clock.elapsed().as_secs_f64() }))
}

fn ranks_match(dir: &std::path::Path, made_for: usize, size: usize) -> Result<()> {
    if made_for != size {
        bail!(
            "partition directory {} was made for {made_for} ranks, but this run has {size}: start it with `mpirun -np {made_for}`, or partition again with --ranks {size}",
            dir.display(),
        );
    }
    Ok(())
}

/// This rank's cells: where its owned cells sit in the global mesh, and what output needs
/// of them.
pub struct RankPart {
    /// Cells in the layout (owned and receive block).
    pub layout_cells: usize,
    /// Global id of each owned cell.
    pub global: Vec<u32>,
    /// The owned cells as a mesh of their own (several ranks); `None`: the whole mesh.
    pub mesh: Option<Mesh>,
    pub depth: Vec<f64>,
    pub area: Vec<f64>,
    /// The submesh (several ranks), for the halo exchange.
    pub submesh: Option<Submesh>,
    /// The global mesh's cells and edges.
    pub global_cells: usize,
    pub global_edges: usize,
    /// The prepared mesh is this rank's piece ([`GlobalSize`]), not the global mesh.
    pub piece: bool,
}

impl RankPart {
    /// The whole mesh on one rank, or this rank's submesh of it.
    /// With `piece` (a rank that holds only its part), `pm` and `depth` are the rank's local
    /// ones.
    pub fn new(
        pm: &PreparedMesh,
        depth: &[f64],
        submesh: Option<Submesh>,
        piece: Option<GlobalSize>,
    ) -> Result<RankPart> {
        if let (Some(size), Some(sub)) = (piece, &submesh) {
            let n = sub.n_owned;
            if depth.len() != sub.num_cells() || pm.topo.num_cells() != sub.num_cells() {
                bail!("rank {}: {} depths for {} local cells", sub.rank, depth.len(), sub.num_cells());
            }
            return Ok(RankPart {
                layout_cells: sub.num_cells(),
                global: sub.global_cell[..n].to_vec(),
                mesh: None,
                depth: depth[..n].to_vec(),
                area: pm.topo.cell_area[..n].to_vec(),
                submesh,
                global_cells: size.cells,
                global_edges: size.edges,
                piece: true,
            });
        }
        let (global_cells, global_edges) = (pm.topo.num_cells(), pm.topo.num_edges());
        let Some(sub) = submesh else {
            let n = pm.topo.num_cells();
            return Ok(RankPart {
                layout_cells: n,
                global: (0..n as u32).collect(),
                mesh: None,
                depth: depth.to_vec(),
                area: pm.topo.cell_area.clone(),
                submesh: None,
                global_cells,
                global_edges,
                piece: false,
            });
        };
        let owned = |global: &[f64]| -> Result<Vec<f64>> {
            let mut v = sub.gather(global)?;
            v.truncate(sub.n_owned);
            Ok(v)
        };
        Ok(RankPart {
            layout_cells: sub.num_cells(),
            global: sub.global_cell[..sub.n_owned].to_vec(),
            mesh: Some(sub.owned_mesh(&pm.mesh)),
            depth: owned(depth)?,
            area: owned(&pm.topo.cell_area)?,
            submesh: Some(sub),
            global_cells,
            global_edges,
            piece: false,
        })
    }

    /// The mesh this rank writes: its piece, or the whole mesh.
    pub fn output_mesh<'a>(&'a self, pm: &'a PreparedMesh) -> &'a Mesh {
        self.mesh.as_ref().unwrap_or(&pm.mesh)
    }
}

/// Whether a partition's rings of receive cells serve a run at `physics.order = order`:
/// second order on several ranks needs two (the error names the rank file and what to do);
/// first order runs on either, with a note (`log`) where the second ring is exchanged for
/// nothing.
pub(crate) fn check_rings(dir: &std::path::Path, sub: &Submesh, order: u32, log: bool) -> Result<()> {
    let need = rings_for_order(order);
    if sub.ranks > 1 && sub.rings < need {
        bail!(
            "partition file {} has one ring of receive cells (a partition for physics.order = 1, or one made before second order became the default on 2026-11-29), but physics.order = {order} (the default where the scenario sets none) on several ranks needs two: each rank reconstructs the cells beside its own, which reads their neighbours. Partition again into {}, with pycno partition SCENARIO --ranks {} --out DIR (a scenario at order {order} gives two rings, and so does a mesh file), or run this partition at first order with \"physics\": {{\"order\": 1}} in the scenario",
            files::rank_file(dir, sub.rank).display(),
            dir.display(),
            sub.ranks
        );
    }
    if log && sub.ranks > 1 && sub.rings > need {
        log::info!(
            "{}: a partition for physics.order = 2 (two rings of receive cells); this run at order {order} exchanges the second ring for nothing (pycno partition --order {order} makes one without)",
            dir.display()
        );
    }
    Ok(())
}

/// This rank's submesh: read from `--partition DIR`, or made here (METIS on rank 0, the
/// cell owners broadcast, every rank building the same submeshes, with the rings of
/// receive cells `physics.order = order` needs). `None` on one rank without a partition
/// directory: the whole mesh in global order.
pub fn rank_submesh(opts: &RunOptions, pm: &PreparedMesh, comm: &dyn Comm, order: u32) -> Result<Option<Submesh>> {
    let (rank, size) = (comm.rank(), comm.size());
    let fingerprint = pm.fingerprint();
    if let Some(dir) = &opts.partition {
        let m = files::read_manifest(dir)?;
        ranks_match(dir, m.stats.ranks, size)?;
        let sub = agree(comm, files::read_rank(dir, rank as u32, fingerprint, size as u32))?;
        agree(comm, check_rings(dir, &sub, order, comm.is_root() && !opts.quiet))?;
        check_fit(dir, &sub, comm)?;
        return Ok(Some(sub));
    }
    if size == 1 {
        return Ok(None);
    }
    if size > pm.topo.num_cells() {
        bail!("{size} ranks for {} cells: at most one rank per cell", pm.topo.num_cells());
    }
    let mut owner = agree(comm, if comm.is_root() { metis::partition_cells(&pm.topo, size) } else { Ok(Vec::new()) })?;
    comm.broadcast_u32(&mut owner);
    let mut subs = submesh::build_rings(&pm.topo, &owner, size, fingerprint, rings_for_order(order))?;
    Ok(Some(subs.swap_remove(rank)))
}

/// Every rank's file in `dir` must come from the same partition (each is valid alone, but
/// files of two partitions of one mesh disagree on who sends what: the exchange would then
/// wait for ever or receive the wrong sizes). Collective; the same answer on every rank.
fn check_fit(dir: &std::path::Path, sub: &Submesh, comm: &dyn Comm) -> Result<()> {
    let f = sub.fit();
    let (sends, receives) = (comm.sum_u64(f.sends), comm.sum_u64(f.receives));
    let (owned, owned_cells) = (comm.sum_u64(f.owned), comm.sum_u64(f.owned_cells));
    if sends != receives || owned_cells != sub.global_cells as u64 || owned != fit::all_cells(sub.global_cells) {
        let r: Result<()> = Err(anyhow::anyhow!(
            "partition directory {}: its rank files do not belong to one partition ({}): partition again with pycno partition, or find the odd file with pycno partition --check {}",
            dir.display(),
            if sends != receives {
                "what the ranks send and what they expect to receive differ"
            } else {
                "the ranks' cells do not cover the mesh exactly once"
            },
            dir.display()
        ));
        // Every rank knows; one reports.
        return agree(comm, if comm.is_root() { r } else { Ok(()) });
    }
    Ok(())
}

/// A backend of the chosen kind and precision over this rank's layout, built from the
/// setup's depth and state (global, or the rank's own when it holds only its piece). `node_rank` picks the GPU: one rank per GPU, by
/// node-local rank.
pub fn make_backend(
    choice: BackendChoice,
    precision: Precision,
    setup: &Setup,
    part: &RankPart,
    node_rank: usize,
) -> Result<Box<dyn Backend>> {
    match precision {
        Precision::F32 => backend_in::<f32>(choice, setup, part, node_rank),
        Precision::F64 => backend_in::<f64>(choice, setup, part, node_rank),
    }
}

fn backend_in<T: CudaReal>(
    choice: BackendChoice,
    setup: &Setup,
    part: &RankPart,
    node_rank: usize,
) -> Result<Box<dyn Backend>> {
    let model = Model::<T>::new(&setup.scenario.physics)?;
    let (topo, depth, cells) = (&setup.pm.topo, setup.depth, setup.cells);
    let rest = setup.scenario.physics.reference();
    let mut layout = match &part.submesh {
        None => Layout::<T>::from_stored(topo, depth, cells, &rest),
        // A rank's piece: its topology, depth and state are already local.
        Some(sub) if part.piece => {
            let mut lay = Layout::<T>::from_stored(topo, depth, cells, &rest);
            sub.shape_layout(&mut lay);
            lay
        }
        Some(sub) => sub.layout::<T>(topo, depth, cells, &rest)?,
    };
    let table = &setup.boundaries;
    if !table.all_walls() {
        // The layout's edges in its own order: the whole mesh's, or the rank's local ones.
        match &part.submesh {
            None => layout.set_boundaries(&topo.edge_tag, table),
            Some(_) if part.piece => layout.set_boundaries(&topo.edge_tag, table),
            Some(sub) => layout.set_boundaries(&sub.local_topology(topo)?.edge_tag, table),
        }
    }
    if let Some(v) = &setup.scenario.physics.viscosity {
        // The couplings from the topology the layout's edges come from, as the boundaries'.
        match &part.submesh {
            Some(sub) if !part.piece => layout.set_viscosity(&sub.local_topology(topo)?, v),
            _ => layout.set_viscosity(topo, v),
        }
    }
    if let Some(c) = setup.scenario.physics.coriolis.filter(|c| c.varies()) {
        // A beta-plane: each owned cell's f at its centroid. A rank's piece numbers its
        // owned cells first, in layout order; otherwise `topo` is the global mesh.
        let f = if part.piece {
            c.at_centroids(&topo.cell_centroid[..part.global.len()])
        } else {
            c.at_centroids(part.global.iter().map(|&g| &topo.cell_centroid[g as usize]))
        };
        layout.set_coriolis(&f);
    }
    let order = setup.scenario.physics.order;
    Ok(match choice {
        BackendChoice::Cuda => {
            let ordinal = node_rank % cuda::device_count()?.max(1);
            Box::new(CudaBackend::new(model, &layout, ordinal)?.with_order(order, &layout)?)
        }
        _ => Box::new(CpuBackend::new(model, layout)?.with_order(order)?),
    })
}
