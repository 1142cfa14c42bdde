//! `pycno run`: scenario -> mesh -> initial state -> time loop -> VTK series + stats.json.

use super::progress::Progress;
use super::stats::{KernelStat, RunStats};
use super::{scenario_mesh, PreparedMesh};
use crate::comm::{Comm, Single};
use crate::output::atomic::write_bytes_atomic;
use crate::output::series::Series;
use crate::physics::Params;
use crate::scenario::{initial, Scenario};
use crate::solver::stepper::{step_loop, BlowUp, Event, Schedule};
use crate::solver::cuda::{self, CudaBackend, CudaReal};
use crate::solver::layout::kernel_bytes;
use crate::solver::{Backend, CellState, CpuBackend, Layout};
use anyhow::{anyhow, bail, Context, Result};
use clap::ValueEnum;
use std::path::PathBuf;
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
    match choice {
        BackendChoice::Cpu => Ok(BackendChoice::Cpu),
        BackendChoice::Cuda => {
            cuda::probe().context("--backend cuda: no usable GPU")?;
            Ok(BackendChoice::Cuda)
        }
        BackendChoice::Auto => match cuda::probe() {
            Ok(_) => Ok(BackendChoice::Cuda),
            Err(e) => {
                log::info!("no usable GPU ({e:#}); running on the CPU");
                Ok(BackendChoice::Cpu)
            }
        },
    }
}

/// A backend of the chosen kind over `layout`.
pub fn make_backend<T: CudaReal>(choice: BackendChoice, params: Params<T>, layout: Layout<T>) -> Result<Box<dyn Backend>> {
    Ok(match choice {
        BackendChoice::Cuda => Box::new(CudaBackend::new(params, &layout, 0)?),
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
    s.validate().map_err(|e| anyhow!("{e:#} (after applying the command-line options)"))?;
    Ok(s)
}

pub fn run(opts: &RunOptions) -> Result<RunStats> {
    let wall = Instant::now();
    let s = load_scenario(opts)?;
    let source = opts.scenario.as_ref().map(|p| p.display().to_string()).unwrap_or_else(|| "the paper benchmark".into());
    let pm = scenario_mesh(&s).with_context(|| source.clone())?;
    let (depth, state) = initial::evaluate(&s, &pm.topo.cell_centroid).with_context(|| source.clone())?;
    let backend = choose_backend(opts.backend)?;
    let mut stats = match opts.precision {
        Precision::F32 => run_with::<f32>(&s, &pm, &depth, &state, opts, backend, &Single)?,
        Precision::F64 => run_with::<f64>(&s, &pm, &depth, &state, opts, backend, &Single)?,
    };
    stats.mesh_seconds = pm.seconds;
    stats.wall_seconds = wall.elapsed().as_secs_f64();
    if !opts.no_vtk || opts.out.is_some() {
        let path = s.output.dir.join("stats.json");
        write_bytes_atomic(&path, serde_json::to_string_pretty(&stats)?.as_bytes())?;
    }
    Ok(stats)
}

/// Mass of each layer: sum of thickness times area.
pub fn layer_masses(state: &[CellState], area: &[f64]) -> (f64, f64) {
    state.iter().zip(area).fold((0.0, 0.0), |(m1, m2), (s, a)| (m1 + s.h1 * a, m2 + s.h2 * a))
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
) -> Result<RunStats> {
    let params = Params::<T>::new(s.physics.g, s.physics.r)?;
    let layout = Layout::<T>::from_topology(&pm.topo, depth, state);
    let mut backend = make_backend(choice, params, layout)?;
    if opts.kernel_timing {
        backend.enable_kernel_timing();
    }
    let area = &pm.topo.cell_area;
    let cell_id: Vec<i64> = (0..pm.topo.num_cells() as i64).collect();
    let start_state = backend.state()?;
    let (m1_start, m2_start) = layer_masses(&start_state, area);

    let write_vtk = !opts.no_vtk;
    let mut series = Series::new(&s.output.dir, &s.name);
    let mut output_seconds = 0.0;
    if write_vtk {
        let clock = Instant::now();
        series.write(0, 0.0, &pm.mesh, &start_state, depth, &cell_id)?;
        output_seconds += clock.elapsed().as_secs_f64();
    }
    let outputs = s.output_times();
    let plan = Schedule {
        t_start: 0.0,
        t_end: s.time.end,
        gamma: s.physics.gamma,
        outputs: if write_vtk { &outputs } else { &[] },
        first_output_index: 1,
        max_steps: opts.max_steps,
    };
    let mut progress = Progress::new(0.0, s.time.end, opts.quiet);
    progress.println(&format!(
        "{}: {} cells, {} edges, {} on {}",
        s.name,
        pm.topo.num_cells(),
        pm.topo.num_edges(),
        T::NAME,
        backend.describe()
    ));
    let result = step_loop(backend.as_mut(), comm, &plan, &mut |b, ev| {
        match ev {
            Event::Step { step, time, dt } => progress.step(step, time, dt),
            Event::Output { index, time, .. } => {
                let clock = Instant::now();
                let st = b.state()?;
                series.write(index, time, &pm.mesh, &st, depth, &cell_id)?;
                output_seconds += clock.elapsed().as_secs_f64();
            }
        }
        Ok(())
    });
    progress.finish();
    let ls = match result {
        Ok(ls) => ls,
        Err(e) => return Err(diagnose(e, backend.as_mut(), pm)),
    };
    let walls = pm.topo.edge_cells.iter().filter(|c| c[1] == crate::mesh::NO_CELL).count();
    let kernels = backend
        .kernel_seconds()?
        .into_iter()
        .map(|(name, seconds, launches)| {
            let bytes = kernel_bytes(name, pm.topo.num_cells(), pm.topo.num_edges(), walls, std::mem::size_of::<T>());
            KernelStat { name: name.into(), seconds, launches, bytes_per_launch: bytes, bandwidth: bytes * launches as f64 / seconds.max(1e-12) }
        })
        .collect();
    let end_state = backend.state()?;
    let (m1_end, m2_end) = layer_masses(&end_state, area);
    let cells = pm.topo.num_cells();
    Ok(RunStats {
        name: s.name.clone(),
        version: env!("CARGO_PKG_VERSION").into(),
        cells,
        edges: pm.topo.num_edges(),
        steps: ls.steps,
        t_end: ls.time,
        dt_min: ls.dt_min,
        dt_max: ls.dt_max,
        stepping_seconds: ls.stepping_seconds,
        output_seconds,
        cell_updates_per_second: cells as f64 * ls.steps as f64 / ls.stepping_seconds.max(1e-12),
        mass_layer1_start: comm.sum_f64(m1_start),
        mass_layer1_end: comm.sum_f64(m1_end),
        mass_layer2_start: comm.sum_f64(m2_start),
        mass_layer2_end: comm.sum_f64(m2_end),
        hyperbolicity_fallbacks: comm.sum_u64(backend.fallbacks()?),
        backend: backend.name().into(),
        device: backend.describe(),
        precision: T::NAME.into(),
        threads: if backend.name() == "cpu" { rayon::current_num_threads() } else { 1 },
        ranks: comm.size(),
        outputs: if write_vtk { outputs.len() + 1 } else { 0 },
        kernels,
        ..Default::default()
    })
}

/// Turn a blow-up into a report that names the step, time and the first bad cell.
fn diagnose(e: anyhow::Error, b: &mut dyn Backend, pm: &PreparedMesh) -> anyhow::Error {
    let Some(bu) = e.downcast_ref::<BlowUp>() else { return e };
    let Ok(st) = b.state() else { return e };
    let bad = |s: &CellState| {
        !(s.h1 > 0.0 && s.h2 > 0.0) || ![s.h1, s.h2, s.q1[0], s.q1[1], s.q2[0], s.q2[1]].iter().all(|x| x.is_finite())
    };
    let count = st.iter().filter(|s| bad(s)).count();
    match st.iter().position(bad) {
        Some(c) => {
            let s = st[c];
            let p = pm.topo.cell_centroid[c];
            anyhow!(
                "{bu}: {count} cells went unphysical; first is cell {c} at (x = {}, y = {}): h1 = {}, h2 = {}, q1 = ({}, {}), q2 = ({}, {})",
                p[0], p[1], s.h1, s.h2, s.q1[0], s.q1[1], s.q2[0], s.q2[1]
            )
        }
        None => e.context("the time step became zero or not finite"),
    }
    .context("run stopped")
}

/// Used by `pycno run` to say where things went.
pub fn describe_outputs(s: &Scenario) -> String {
    format!("{}", s.output.dir.join(format!("{}.pvd", s.name)).display())
}
