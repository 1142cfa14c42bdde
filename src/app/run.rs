//! `pycno run`: scenario -> mesh -> initial state -> time loop -> VTK series + stats.json.

use super::progress::Progress;
use super::stats::{KernelStat, RunStats};
use super::{scenario_mesh, PreparedMesh};
use crate::comm::{agree, Comm};
use crate::mesh::Mesh;
use crate::output::checkpoint;
use crate::output::gauges::GaugeRecorder;
use crate::output::series::{Piece, Series};
use crate::partition::{files, metis, submesh, Submesh};
use crate::physics::CellState;
use crate::physics::Model;
use crate::scenario::{initial, Scenario};
use crate::solver::cuda::{self, CudaBackend, CudaReal};
use crate::solver::exchange::{AllEdges, EdgePass, ExchangeMode, MpiHalo, PhaseTimes};
use crate::solver::layout::kernel_bytes;
use crate::solver::stepper::{step_loop_with, BlowUp, Event, Schedule};
use crate::solver::{Backend, CpuBackend, Layout};
use crate::util::atomic::write_bytes_atomic;
use anyhow::{anyhow, bail, Context, Result};
use clap::ValueEnum;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Precision {
    F32,
    F64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendChoice {
    /// CUDA when a usable GPU and driver exist, else the CPU.
    Auto,
    Cpu,
    Cuda,
}

/// Resolve `auto`: CUDA when [`cuda::probe`] finds a device, else the CPU.
pub fn choose_backend(choice: BackendChoice) -> Result<BackendChoice> {
    choose_backend_quietly(choice, false)
}

/// As [`choose_backend`]; `quiet` (ranks other than 0) logs nothing.
pub fn choose_backend_quietly(choice: BackendChoice, quiet: bool) -> Result<BackendChoice> {
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

/// A backend of the chosen kind over `layout`.
/// `node_rank` picks the GPU: one rank per GPU, by node-local rank.
pub fn make_backend<T: CudaReal>(
    choice: BackendChoice,
    params: Model<T>,
    layout: Layout<T>,
    node_rank: usize,
) -> Result<Box<dyn Backend>> {
    Ok(match choice {
        BackendChoice::Cuda => Box::new(CudaBackend::new(params, &layout, node_rank % cuda::device_count()?.max(1))?),
        _ => Box::new(CpuBackend::new(params, layout)?),
    })
}

/// Cell count of `pycno run` with neither a scenario nor `--cells`.
pub const DEFAULT_CELLS: u64 = 16040;

#[derive(Clone, Debug)]
pub struct RunOptions {
    pub scenario: Option<PathBuf>,
    pub cells: Option<u64>,
    pub t_end: Option<f64>,
    pub out: Option<PathBuf>,
    pub output_interval: Option<f64>,
    pub precision: Precision,
    pub backend: BackendChoice,
    pub max_steps: Option<u64>,
    /// Write no VTK files (stats.json still written when `out` is set).
    pub no_vtk: bool,
    pub quiet: bool,
    /// Time each GPU kernel (events; no extra synchronization).
    pub kernel_timing: bool,
    /// Partition directory (`pycno partition`) for a multi-rank run.
    pub partition: Option<PathBuf>,
    pub exchange: ExchangeMode,
    /// Write a checkpoint every this many steps.
    pub checkpoint_every: Option<u64>,
    /// Write a checkpoint every this many seconds of wall-clock time.
    pub checkpoint_seconds: Option<f64>,
    /// Where checkpoints go (default: `<output dir>/checkpoints`).
    pub checkpoint_dir: Option<PathBuf>,
    /// How many complete checkpoints to keep.
    pub checkpoint_keep: usize,
    /// Resume from this checkpoint (or the newest complete one in this directory).
    pub restart: Option<PathBuf>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            scenario: None,
            cells: None,
            t_end: None,
            out: None,
            output_interval: None,
            precision: Precision::F32,
            backend: BackendChoice::Auto,
            max_steps: None,
            no_vtk: false,
            quiet: false,
            kernel_timing: false,
            partition: None,
            exchange: ExchangeMode::Overlap,
            checkpoint_every: None,
            checkpoint_seconds: None,
            checkpoint_dir: None,
            checkpoint_keep: 2,
            restart: None,
        }
    }
}

/// The scenario with the command line's overrides applied and validated again.
pub fn load_scenario(opts: &RunOptions) -> Result<Scenario> {
    let mut s = match &opts.scenario {
        Some(path) => Scenario::from_file(path)?,
        None => Scenario::paper_benchmark(opts.cells.unwrap_or(DEFAULT_CELLS)),
    };
    if let Some(n) = opts.cells {
        if n < 2 {
            bail!("--cells: expected at least 2 triangles, found {n}");
        }
        if s.mesh.is_some() {
            bail!("--cells applies to scenarios that triangulate a domain; this one reads a mesh file");
        }
        s.resolution.cells = Some(n);
        s.resolution.max_area = None;
    }
    apply_overrides(&mut s, opts)?;
    Ok(s)
}

/// The options that change when and where a run writes (`--t-end`, `--output-interval`,
/// `--out`), then the scenario checked again.
fn apply_overrides(s: &mut Scenario, opts: &RunOptions) -> Result<()> {
    if let Some(t) = opts.t_end {
        s.time.end = t;
        if let Some(ts) = &mut s.time.output_times {
            ts.retain(|&x| x <= t);
        }
    }
    if let Some(dt) = opts.output_interval {
        s.time.output_interval = Some(dt);
        s.time.output_times = None;
    }
    if let Some(out) = &opts.out {
        s.output.dir = out.clone();
    }
    s.validate().map_err(|e| anyhow!("{e:#} (after applying the command-line options)"))
}

pub fn run(opts: &RunOptions, comm: &dyn Comm) -> Result<RunStats> {
    let wall = Instant::now();
    let restart = match &opts.restart {
        Some(p) => Some(agree(comm, load_restart(p, opts))?),
        None => None,
    };
    let s = match &restart {
        Some(r) => r.scenario.clone(),
        None => agree(comm, load_scenario(opts))?,
    };
    let source = match (&opts.restart, &opts.scenario) {
        (Some(p), _) => format!("checkpoint {}", p.display()),
        (None, Some(p)) => p.display().to_string(),
        (None, None) => "the paper benchmark".into(),
    };
    let pm = agree(comm, scenario_mesh(&s).with_context(|| source.clone()))?;
    let (depth, mut state) =
        agree(comm, initial::evaluate(&s, &pm.topo.cell_centroid).with_context(|| source.clone()))?;
    let resume = match restart {
        Some(r) => {
            state = agree(comm, restart_state(&r, &pm))?;
            Some(r.meta)
        }
        None => None,
    };
    let backend = agree(comm, choose_backend_quietly(opts.backend, !comm.is_root()))?;
    let part = agree(comm, rank_submesh(opts, &pm, comm))?;
    let mut stats = match opts.precision {
        Precision::F32 => {
            run_with::<f32>(&s, &pm, &depth, &state, opts, backend, comm, part.as_ref(), resume.as_ref())?
        }
        Precision::F64 => {
            run_with::<f64>(&s, &pm, &depth, &state, opts, backend, comm, part.as_ref(), resume.as_ref())?
        }
    };
    stats.mesh_seconds = pm.seconds;
    stats.wall_seconds = comm.all_gather_f64(&[wall.elapsed().as_secs_f64()]).into_iter().fold(0.0, f64::max);
    if !opts.no_vtk || opts.out.is_some() {
        let path = s.output.dir.join("stats.json");
        let written = if comm.is_root() {
            write_bytes_atomic(&path, serde_json::to_string_pretty(&stats)?.as_bytes())
        } else {
            Ok(())
        };
        agree(comm, written)?;
    }
    Ok(stats)
}

/// The checkpoint to resume (its `meta` says where the run stood) and its scenario.
pub struct Restart {
    dir: PathBuf,
    meta: checkpoint::Meta,
    scenario: Scenario,
}

/// The checkpoint to resume, and its scenario with the command-line options that make sense
/// on a restart (a later `--t-end`, `--output-interval`, `--out`).
fn load_restart(path: &Path, opts: &RunOptions) -> Result<Restart> {
    if opts.scenario.is_some() || opts.cells.is_some() {
        bail!("--restart takes the scenario and the mesh from the checkpoint: give no scenario file and no --cells");
    }
    let dir = checkpoint::locate(path)?;
    let meta = checkpoint::read_meta(&dir)?;
    let precision = match opts.precision {
        Precision::F32 => "f32",
        Precision::F64 => "f64",
    };
    if meta.precision != precision {
        bail!(
            "checkpoint {} holds a {} run: restart it with --precision {}",
            dir.display(),
            meta.precision,
            meta.precision
        );
    }
    let mut s = Scenario::from_json(&meta.scenario.to_string())
        .with_context(|| format!("checkpoint {}: its scenario", dir.display()))?;
    if let Some(t) = opts.t_end.filter(|&t| t <= meta.time) {
        bail!("--t-end {t}: the checkpoint {} is already at t = {}", dir.display(), meta.time);
    }
    apply_overrides(&mut s, opts)?;
    Ok(Restart { dir, meta, scenario: s })
}

/// The checkpoint's cells, by global id, after checking that they belong to this mesh.
fn restart_state(r: &Restart, pm: &PreparedMesh) -> Result<Vec<CellState>> {
    let fingerprint = pm.fingerprint();
    if r.meta.mesh_fingerprint != files::fingerprint_hex(fingerprint) || r.meta.cells != pm.topo.num_cells() {
        bail!(
            "checkpoint {} was made on another mesh ({} cells, fingerprint {}; this scenario's mesh: {} cells, {})",
            r.dir.display(),
            r.meta.cells,
            r.meta.mesh_fingerprint,
            pm.topo.num_cells(),
            files::fingerprint_hex(fingerprint)
        );
    }
    checkpoint::read_state(&r.dir, &r.meta, fingerprint)
}

/// When and where a run writes checkpoints.
struct Checkpointer {
    root: PathBuf,
    every: Option<u64>,
    seconds: Option<f64>,
    keep: usize,
    last: Instant,
    fingerprint: u64,
    float_bytes: usize,
    /// `PYCNO_KILL_IN_CHECKPOINT=STEP`: rank 0 kills itself (SIGKILL) once its part of that
    /// step's checkpoint is written and before the checkpoint is complete. For the tests.
    kill_at: Option<u64>,
}

impl Checkpointer {
    fn new(opts: &RunOptions, s: &Scenario, fingerprint: u64, float_bytes: usize) -> Result<Option<Checkpointer>> {
        if opts.checkpoint_every.is_none() && opts.checkpoint_seconds.is_none() {
            return Ok(None);
        }
        if opts.checkpoint_every == Some(0) {
            bail!("--checkpoint-every: expected at least 1 step");
        }
        if let Some(t) = opts.checkpoint_seconds {
            if !(t.is_finite() && t > 0.0) {
                bail!("--checkpoint-seconds: expected a positive number of seconds, found {t}");
            }
        }
        let root = opts.checkpoint_dir.clone().unwrap_or_else(|| s.output.dir.join("checkpoints"));
        std::fs::create_dir_all(&root)
            .with_context(|| format!("cannot create checkpoint directory {}", root.display()))?;
        let probe = root.join(format!(".pycno-write-test.{}", std::process::id()));
        std::fs::write(&probe, b"")
            .with_context(|| format!("checkpoint directory {} is not writable", root.display()))?;
        let _ = std::fs::remove_file(&probe);
        let kill_at = std::env::var("PYCNO_KILL_IN_CHECKPOINT").ok().and_then(|v| v.parse().ok());
        Ok(Some(Checkpointer {
            root,
            every: opts.checkpoint_every,
            seconds: opts.checkpoint_seconds,
            keep: opts.checkpoint_keep.max(1),
            last: Instant::now(),
            fingerprint,
            float_bytes,
            kill_at,
        }))
    }

    /// Whether to write one after `step` (the same answer on every rank).
    fn due(&self, comm: &dyn Comm, step: u64) -> bool {
        let by_steps = self.every.is_some_and(|k| step % k == 0);
        let by_clock = self.seconds.is_some_and(|t| {
            // Rank 0's clock decides for everyone.
            let mine = comm.is_root() && self.last.elapsed().as_secs_f64() >= t;
            comm.min_f64(if mine { 0.0 } else { 1.0 }) == 0.0
        });
        by_steps || by_clock
    }
}

/// This rank's submesh: read from `--partition DIR`, or made here (METIS on rank 0, the
/// cell owners broadcast, every rank building the same submeshes). `None` on one rank
/// without a partition directory: the whole mesh in global order.
fn rank_submesh(opts: &RunOptions, pm: &PreparedMesh, comm: &dyn Comm) -> Result<Option<Submesh>> {
    let (rank, size) = (comm.rank(), comm.size());
    let fingerprint = pm.fingerprint();
    if let Some(dir) = &opts.partition {
        let m = files::read_manifest(dir)?;
        if m.stats.ranks != size {
            bail!(
                "partition directory {} was made for {} ranks, but this run has {size}: start it with `mpirun -np {}`, or partition again with --ranks {size}",
                dir.display(),
                m.stats.ranks,
                m.stats.ranks
            );
        }
        return files::read_rank(dir, rank as u32, fingerprint, size as u32).map(Some);
    }
    if size == 1 {
        return Ok(None);
    }
    if size > pm.topo.num_cells() {
        bail!("{size} ranks for {} cells: at most one rank per cell", pm.topo.num_cells());
    }
    let mut owner = agree(comm, if comm.is_root() { metis::partition_cells(&pm.topo, size) } else { Ok(Vec::new()) })?;
    comm.broadcast_u32(&mut owner);
    let mut subs = submesh::build(&pm.topo, &owner, size, fingerprint)?;
    Ok(Some(subs.swap_remove(rank)))
}

/// Mass of each layer: sum of thickness times area.
pub fn layer_masses(state: &[CellState], area: &[f64]) -> (f64, f64) {
    state.iter().zip(area).fold((0.0, 0.0), |(m1, m2), (s, a)| (m1 + s.h1 * a, m2 + s.h2 * a))
}

/// This rank's part of the run: its cells and edges, and where its owned cells sit in the
/// global mesh.
struct RankPart {
    layout_cells: usize,
    /// Global id of each owned cell.
    global: Vec<u32>,
    /// The owned cells as a mesh (for output).
    mesh: Option<Mesh>,
    depth: Vec<f64>,
    area: Vec<f64>,
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn run_with<T: CudaReal>(
    s: &Scenario,
    pm: &PreparedMesh,
    depth: &[f64],
    state: &[CellState],
    opts: &RunOptions,
    choice: BackendChoice,
    comm: &dyn Comm,
    sub: Option<&Submesh>,
    resume: Option<&checkpoint::Meta>,
) -> Result<RunStats> {
    let params = agree(comm, Model::<T>::new(&s.physics))?;
    let (layout, part) = match sub {
        None => {
            let n = pm.topo.num_cells();
            let part = RankPart {
                layout_cells: n,
                global: (0..n as u32).collect(),
                mesh: None,
                depth: depth.to_vec(),
                area: pm.topo.cell_area.clone(),
            };
            (Layout::<T>::from_topology(&pm.topo, depth, state), part)
        }
        Some(sub) => {
            let layout = agree(comm, sub.layout::<T>(&pm.topo, depth, state))?;
            let owned = |global: &[f64]| -> Result<Vec<f64>> {
                let mut v = sub.gather(global)?;
                v.truncate(sub.n_owned);
                Ok(v)
            };
            let part = RankPart {
                layout_cells: sub.num_cells(),
                global: sub.global_cell[..sub.n_owned].to_vec(),
                mesh: Some(sub.owned_mesh(&pm.mesh)),
                depth: agree(comm, owned(depth))?,
                area: agree(comm, owned(&pm.topo.cell_area))?,
            };
            (layout, part)
        }
    };
    let mut backend = agree(comm, make_backend(choice, params, layout, comm.node_rank().0))?;
    if opts.kernel_timing {
        backend.enable_kernel_timing();
    }
    let mut edges: Box<dyn EdgePass + '_> = match (sub, comm.as_mpi()) {
        (Some(sub), Some(mpi)) if comm.size() > 1 => {
            Box::new(MpiHalo::new(mpi, opts.exchange, sub.halo_plan(), backend.cell_bytes()))
        }
        _ => Box::new(AllEdges),
    };
    let cell_id: Vec<i64> = part.global.iter().map(|&g| g as i64).collect();
    let rank_field = vec![comm.rank() as i32; part.global.len()];
    let piece = Piece {
        mesh: part.mesh.as_ref().unwrap_or(&pm.mesh),
        depth: &part.depth,
        cell_id: &cell_id,
        rank: &rank_field,
    };
    let start_state = agree(comm, backend.state())?;
    let (t_start, first_step) = resume.map_or((0.0, 0), |r| (r.time, r.step));
    let (m1_start, m2_start) = match resume {
        Some(r) => (r.mass_layer1_start, r.mass_layer2_start),
        None => {
            let (a, b) = layer_masses(&start_state, &part.area);
            (comm.sum_f64(a), comm.sum_f64(b))
        }
    };

    let write_vtk = !opts.no_vtk;
    let mut series = match resume {
        Some(r) => Series::resume(&s.output.dir, &s.name, r.frames.clone()),
        None => Series::new(&s.output.dir, &s.name),
    };
    let mut output_seconds = 0.0;
    if write_vtk && resume.is_none() {
        let clock = Instant::now();
        series.write(comm, 0, 0.0, &piece, &start_state)?;
        output_seconds += clock.elapsed().as_secs_f64();
    }
    let fingerprint = pm.fingerprint();
    let mut checkpointer = agree(comm, Checkpointer::new(opts, s, fingerprint, std::mem::size_of::<T>()))?;
    let mut gauges = match &s.gauges {
        Some(g) => Some(agree(
            comm,
            GaugeRecorder::new(
                comm,
                &s.output.dir,
                g,
                &pm.mesh,
                &pm.topo.cell_centroid,
                &part.global,
                resume.map(|r| r.time),
            ),
        )?),
        None => None,
    };
    let depth_of = |l: usize| part.depth[l];
    if let (Some(g), None) = (&mut gauges, resume) {
        g.record(comm, backend.as_mut(), 0, 0.0, &depth_of)?;
    }
    let outputs = s.output_times();
    let done = outputs.iter().filter(|&&x| x <= t_start).count();
    let plan = Schedule {
        t_start,
        t_end: s.time.end,
        gamma: s.physics.gamma,
        outputs: if write_vtk || gauges.is_some() { &outputs[done..] } else { &[] },
        first_output_index: 1 + done,
        max_steps: opts.max_steps,
        first_step,
    };
    let (mut dt_lo, mut dt_hi) = resume.map_or((f64::INFINITY, 0.0), |r| (r.dt_min, r.dt_max));
    let fallbacks_before = resume.map_or(0, |r| r.hyperbolicity_fallbacks);
    let mut gauge_step = None;
    let mut progress = Progress::new(t_start, s.time.end, opts.quiet || !comm.is_root());
    let ranks_note = if comm.size() > 1 {
        format!(" x {} ranks ({:?} exchange)", comm.size(), opts.exchange).to_lowercase()
    } else {
        String::new()
    };
    progress.println(&format!(
        "{}: {} cells, {} edges, {} on {}{}",
        s.name,
        pm.topo.num_cells(),
        pm.topo.num_edges(),
        T::NAME,
        backend.describe(),
        ranks_note
    ));
    let fault = injected("PYCNO_FAULT")?;
    let kill = injected("PYCNO_KILL")?;
    let result = step_loop_with(backend.as_mut(), comm, edges.as_mut(), &plan, &mut |b, ev| {
        match ev {
            Event::Step { step, time, dt, .. } => {
                if fault == Some((comm.rank(), step)) {
                    bail!("injected fault after step {step} (PYCNO_FAULT)");
                }
                if kill == Some((comm.rank(), step)) {
                    // SAFETY: plain libc calls; the process ends here, as on a node failure.
                    unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
                }
                dt_lo = dt_lo.min(dt);
                dt_hi = dt_hi.max(dt);
                if let Some(g) = &mut gauges {
                    if gauge_step != Some(step) && g.due(time, false) {
                        g.record(comm, b, step, time, &depth_of)?;
                    }
                }
                if let Some(ck) = &mut checkpointer {
                    if ck.due(comm, step) {
                        let carry = CheckpointCarry {
                            frames: series.frames(),
                            dt_min: dt_lo,
                            dt_max: dt_hi,
                            m1_start,
                            m2_start,
                            fallbacks_before,
                        };
                        write_checkpoint(ck, comm, b, s, step, time, &part.global, &carry)?;
                    }
                }
                progress.step(step, time, dt)
            }
            Event::Output { index, time, step } => {
                let clock = Instant::now();
                if write_vtk {
                    let st = agree(comm, b.state())?;
                    series.write(comm, index, time, &piece, &st)?;
                }
                if let Some(g) = &mut gauges {
                    g.record(comm, b, step, time, &depth_of)?;
                    gauge_step = Some(step);
                }
                output_seconds += clock.elapsed().as_secs_f64();
            }
        }
        Ok(())
    });
    progress.finish();
    drop(edges);
    let ls = match result {
        Ok(ls) => ls,
        Err(e) => return Err(diagnose(e, backend.as_mut(), pm, &part.global, comm, &series, &piece)),
    };
    let walls = pm.topo.edge_cells.iter().filter(|c| c[1] == crate::mesh::NO_CELL).count();
    let kernels = backend
        .kernel_seconds()?
        .into_iter()
        .map(|(name, seconds, launches)| {
            let bytes = kernel_bytes(name, part.layout_cells, backend.num_edges(), walls, std::mem::size_of::<T>());
            KernelStat {
                name: name.into(),
                seconds,
                launches,
                bytes_per_launch: bytes,
                bandwidth: bytes * launches as f64 / seconds.max(1e-12),
            }
        })
        .collect();
    let end_state = agree(comm, backend.state())?;
    let (m1_end, m2_end) = layer_masses(&end_state, &part.area);
    let cells = pm.topo.num_cells();
    let steps_here = ls.steps - first_step;
    // Per-rank phase times, and the slowest rank's stepping time (the run's).
    let per_rank = comm.all_gather_f64(&[&ls.phases.to_array()[..], &[ls.stepping_seconds]].concat());
    let width = PhaseTimes::NAMES.len() + 1;
    let phases_per_rank: Vec<PhaseTimes> = per_rank.chunks(width).map(PhaseTimes::from_slice).collect();
    let stepping_seconds = per_rank.chunks(width).map(|c| c[width - 1]).fold(0.0, f64::max);
    let fallbacks = comm.sum_u64(backend.fallbacks()?) + fallbacks_before;
    let checksum = comm.sum_u64(state_checksum(&part.global, &end_state));
    Ok(RunStats {
        name: s.name.clone(),
        version: env!("CARGO_PKG_VERSION").into(),
        cells,
        edges: pm.topo.num_edges(),
        steps: ls.steps,
        t_end: ls.time,
        dt_min: if dt_lo.is_finite() { dt_lo } else { 0.0 },
        dt_max: dt_hi,
        stepping_seconds,
        output_seconds,
        cell_updates_per_second: cells as f64 * steps_here as f64 / stepping_seconds.max(1e-12),
        mass_layer1_start: m1_start,
        mass_layer1_end: comm.sum_f64(m1_end),
        mass_layer2_start: m2_start,
        mass_layer2_end: comm.sum_f64(m2_end),
        restarted_from: resume.map(|r| r.step),
        output_dir: s.output.dir.clone(),
        hyperbolicity_fallbacks: fallbacks,
        backend: backend.name().into(),
        device: backend.describe(),
        precision: T::NAME.into(),
        threads: if backend.name() == "cpu" { rayon::current_num_threads() } else { 1 },
        ranks: comm.size(),
        exchange: (comm.size() > 1).then_some(opts.exchange),
        phases: mean_phases(&phases_per_rank),
        phases_per_rank: if comm.size() > 1 { phases_per_rank } else { Vec::new() },
        outputs: if write_vtk { outputs.len() + 1 } else { 0 },
        state_checksum: format!("{checksum:016x}"),
        kernels,
        ..Default::default()
    })
}

/// A fingerprint of the whole state that does not depend on how the cells are spread over
/// ranks or ordered: the wrapping sum over cells of a hash of (global id, the bits of every
/// state value). Runs whose final states agree bit for bit have the same checksum.
pub fn state_checksum(global: &[u32], state: &[CellState]) -> u64 {
    fn mix(mut z: u64) -> u64 {
        // splitmix64's finalizer
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    state
        .iter()
        .zip(global)
        .map(|(s, &g)| s.to_array().iter().fold(mix(g as u64), |h, x| mix(h ^ x.to_bits())))
        .fold(0u64, u64::wrapping_add)
}

/// What a checkpoint records besides the cells.
struct CheckpointCarry<'a> {
    frames: &'a [(f64, String)],
    dt_min: f64,
    dt_max: f64,
    m1_start: f64,
    m2_start: f64,
    fallbacks_before: u64,
}

/// Every rank writes its cells; rank 0 then completes the checkpoint and prunes old ones.
#[allow(clippy::too_many_arguments)]
fn write_checkpoint(
    ck: &mut Checkpointer,
    comm: &dyn Comm,
    b: &mut dyn Backend,
    s: &Scenario,
    step: u64,
    time: f64,
    global: &[u32],
    c: &CheckpointCarry,
) -> Result<()> {
    let dir = checkpoint::step_dir(&ck.root, step);
    let st = agree(comm, b.state())?;
    agree(
        comm,
        checkpoint::write_rank(&dir, comm.rank(), comm.size(), ck.fingerprint, step, time, ck.float_bytes, global, &st),
    )?;
    if ck.kill_at == Some(step) && comm.is_root() {
        // SAFETY: plain libc calls; the process ends here.
        unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
    }
    let fallbacks = comm.sum_u64(b.fallbacks()?) + c.fallbacks_before;
    let cells = comm.sum_u64(global.len() as u64) as usize;
    let done = if comm.is_root() {
        (|| -> Result<()> {
            let mut scenario = serde_json::to_value(s)?;
            // A mesh file by absolute path, so the restart may run from another directory.
            if let Some(m) = &s.mesh {
                let abs = std::fs::canonicalize(m).with_context(|| format!("mesh file {}", m.display()))?;
                scenario["mesh"] = serde_json::Value::String(abs.display().to_string());
            }
            let meta = checkpoint::Meta {
                format: "pycno-checkpoint".into(),
                version: checkpoint::VERSION,
                step,
                time,
                ranks: comm.size(),
                cells,
                precision: if ck.float_bytes == 4 { "f32".into() } else { "f64".into() },
                backend: b.name().into(),
                mesh_fingerprint: files::fingerprint_hex(ck.fingerprint),
                scenario,
                frames: c.frames.to_vec(),
                dt_min: c.dt_min,
                dt_max: c.dt_max,
                mass_layer1_start: c.m1_start,
                mass_layer2_start: c.m2_start,
                hyperbolicity_fallbacks: fallbacks,
            };
            checkpoint::write_meta(&dir, &meta)?;
            checkpoint::prune(&ck.root, ck.keep)
        })()
    } else {
        Ok(())
    };
    agree(comm, done)?;
    ck.last = Instant::now();
    Ok(())
}

/// Failure injection for the tests, `VAR=RANK:STEP`: `PYCNO_FAULT` makes that rank fail
/// with an error after that step (on that rank alone: the job must end, not hang);
/// `PYCNO_KILL` makes it SIGKILL itself there (a node failure; a restart must recover).
fn injected(var: &str) -> Result<Option<(usize, u64)>> {
    let Ok(v) = std::env::var(var) else { return Ok(None) };
    let parsed = v.split_once(':').and_then(|(r, s)| Some((r.parse().ok()?, s.parse().ok()?)));
    parsed.map(Some).ok_or_else(|| anyhow!("{var}={v:?}: expected RANK:STEP, e.g. 1:5"))
}

fn mean_phases(p: &[PhaseTimes]) -> PhaseTimes {
    let n = p.len().max(1) as f64;
    let sum = p.iter().fold([0.0; 8], |mut acc, x| {
        for (a, v) in acc.iter_mut().zip(x.to_array()) {
            *a += v;
        }
        acc
    });
    PhaseTimes::from_slice(&sum.map(|x| x / n))
}

/// Turn a blow-up into a report that names the step, time, rank and the first bad cell (by
/// its global id). Every rank holds the blow-up; the lowest rank with a bad cell reports.
#[allow(clippy::too_many_arguments)]
fn diagnose(
    e: anyhow::Error,
    b: &mut dyn Backend,
    pm: &PreparedMesh,
    global: &[u32],
    comm: &dyn Comm,
    series: &Series,
    piece: &Piece,
) -> anyhow::Error {
    let Some(bu) = e.downcast_ref::<BlowUp>() else { return e };
    let bu = format!("{bu}");
    let (st, good) = match (b.state(), b.previous_state()) {
        (Ok(st), Ok(good)) => (st, good),
        (Err(read), _) | (_, Err(read)) => return read.context(format!("{bu}; reading the state back failed")),
    };
    let bad = |s: &CellState| !s.is_admissible();
    let count = st.iter().filter(|s| bad(s)).count();
    let total = comm.sum_u64(count as u64);
    // The state before the bad update, with the cells that then went bad marked.
    let marks: Vec<i32> = st.iter().map(|s| bad(s) as i32).collect();
    let saved = match series.write_snapshot(comm, "blowup", piece, &good, ("blew_up", &marks)) {
        Ok(path) => format!(
            "; the last good state, with the cells that went bad marked (cell array blew_up), is in {}",
            path.display()
        ),
        Err(w) => format!("; writing the last good state failed: {w:#}"),
    };
    let local = match st.iter().position(bad) {
        Some(c) => {
            let s = st[c];
            let g = global[c] as usize;
            let p = pm.topo.cell_centroid[g];
            let on_rank = if comm.size() > 1 { format!(" on rank {}", comm.rank()) } else { String::new() };
            Err(anyhow!(
                "{bu}: {total} cells went unphysical; first is cell {g}{on_rank} at (x = {}, y = {}): h1 = {}, h2 = {}, q1 = ({}, {}), q2 = ({}, {}){saved}",
                p[0], p[1], s.h1, s.h2, s.q1[0], s.q1[1], s.q2[0], s.q2[1]
            ))
        }
        None => Ok(()),
    };
    match agree(comm, local) {
        Err(report) => report.context("run stopped"),
        // No bad cell anywhere: the time step itself failed (zero or not finite).
        Ok(()) => {
            let r: Result<()> = Err(anyhow!("{bu}: the time step became zero or not finite"));
            let r = if comm.is_root() { r } else { Ok(()) };
            agree(comm, r).err().unwrap_or(e).context("run stopped")
        }
    }
}

/// Used by `pycno run` to say where things went.
pub fn describe_outputs(dir: &Path, name: &str) -> String {
    format!("{}", dir.join(format!("{name}.pvd")).display())
}
