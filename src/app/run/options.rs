//! What `pycno run` is asked for beyond the scenario: the command line's options
//! ([`RunOptions`]: precision, backend, output, exchange, checkpoints, health checks), and
//! the scenario with those of them that change it applied ([`load_scenario`]).

use crate::output::manifest::Manifest;
use crate::scenario::Scenario;
use crate::solver::exchange::{ExchangeMode, GpuExchange};
use crate::solver::watch::Watch;
use anyhow::{anyhow, bail, Result};
use clap::ValueEnum;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Precision {
    /// Single precision (the paper's, and the GPU's fast path).
    F32,
    /// Double precision, for reference runs.
    F64,
}

impl Precision {
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        }
    }
    pub fn float_bytes(self) -> usize {
        match self {
            Precision::F32 => 4,
            Precision::F64 => 8,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendChoice {
    /// CUDA when a usable GPU and driver exist, else the CPU.
    Auto,
    Cpu,
    Cuda,
}

/// Cell count of `pycno run` with neither a scenario nor `--cells`.
pub const DEFAULT_CELLS: u64 = 16040;

#[derive(Clone, Debug)]
pub struct RunOptions {
    pub scenario: Option<PathBuf>,
    pub cells: Option<u64>,
    pub t_end: Option<f64>,
    pub out: Option<PathBuf>,
    /// Replace an earlier run's results in the output directory (`--overwrite`).
    pub overwrite: bool,
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
    /// What carries the halo between GPUs.
    pub gpu_exchange: GpuExchange,
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
    /// Set by [`super::run`]: the run's id (a restart keeps its checkpoint's), the same on every
    /// rank; the output list and the checkpoint directory are claimed under it.
    pub run_id: Option<String>,
    /// Set by [`super::run`]: the list of the files the run writes into its output directory.
    pub manifest: Option<Arc<Manifest>>,
    /// Set by [`super::run`]: the checkpoint directory a restart resumes (its max maps).
    pub resume_dir: Option<PathBuf>,
    /// Set by [`super::run`]: when the command began, for the set-up seconds in stats.json.
    pub started: Option<Instant>,
    /// The speed (m/s) past which the run stops as gone wrong (default: 10 √(g H_max)).
    pub max_speed: Option<f64>,
    /// Switch off the checks that stop a run going wrong (`solver/watch.rs`).
    pub no_health_checks: bool,
}

impl RunOptions {
    /// What the step loop watches, for water up to `depth` deep (`solver/watch.rs`).
    pub fn watch(&self, p: &crate::physics::Physics, depth: f64) -> Watch {
        if self.no_health_checks {
            return Watch::off();
        }
        let w = Watch::defaults(p.g, depth);
        Watch { speed: self.max_speed.unwrap_or(w.speed), ..w }
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            scenario: None,
            cells: None,
            t_end: None,
            out: None,
            overwrite: false,
            output_interval: None,
            precision: Precision::F32,
            backend: BackendChoice::Auto,
            max_steps: None,
            no_vtk: false,
            quiet: false,
            kernel_timing: false,
            partition: None,
            exchange: ExchangeMode::Overlap,
            gpu_exchange: GpuExchange::Auto,
            checkpoint_every: None,
            checkpoint_seconds: None,
            checkpoint_dir: None,
            checkpoint_keep: 2,
            restart: None,
            run_id: None,
            manifest: None,
            resume_dir: None,
            started: None,
            max_speed: None,
            no_health_checks: false,
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
        if let Some(m) = &s.mesh {
            return Err(crate::app::cells_with_mesh_file(m));
        }
        s.resolution.cells = Some(n);
        s.resolution.max_area = None;
    }
    apply_overrides(&mut s, opts)?;
    Ok(s)
}

/// The options that change when and where a run writes (`--t-end`, `--output-interval`,
/// `--out`), then the scenario checked again.
pub fn apply_overrides(s: &mut Scenario, opts: &RunOptions) -> Result<()> {
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
    // The domain's geometry was checked when the scenario was read; the options never
    // change it, so a large domain is searched for crossings once.
    s.validate_after_overrides().map_err(|e| anyhow!("{e:#} (after applying the command-line options)"))
}
