//! Observers of the step loop (the callbacks of Trixi.jl): each does one job when the loop
//! reaches a step or an output time, and the driver calls them in a fixed order. What they
//! share (the series of frames, the run's running figures) lives in [`RunContext`].

use super::part::RankPart;
use crate::app::progress::Progress;
use crate::app::PreparedMesh;
use crate::comm::{agree, Comm};
use crate::output::checkpoint::Meta;
use crate::output::gauges::{GaugeRecorder, GaugeSource};
use crate::output::manifest::Manifest;
use crate::output::series::{Piece, Series};
use crate::scenario::Scenario;
use crate::solver::Backend;
use anyhow::{anyhow, bail, Result};

/// Figures of the run so far that outlive a restart (checkpoints carry them).
#[derive(Clone, Debug)]
pub struct RunRecord {
    /// The smallest step the CFL condition gave (steps cut short to land on an output time
    /// or the end are not counted here).
    pub dt_min: f64,
    pub dt_max: f64,
    /// The smallest step cut short to land on an output time or the end, and how many were.
    pub dt_min_clipped: f64,
    pub clipped_steps: u64,
    pub mass_layer1_start: f64,
    pub mass_layer2_start: f64,
    /// Hyperbolicity fallbacks before this process started (a restart).
    pub fallbacks_before: u64,
    /// Mass through each boundary table entry before this process started (a restart).
    pub budget_before: Vec<[f64; 4]>,
    /// Seconds spent writing frames, gauges and checkpoints.
    pub output_seconds: f64,
    /// Seconds the observers took after steps other than writing (sampling gauges, folding
    /// max maps): stepping time, since on a GPU most of it is the wait for the step's kernels
    /// that a read of the state has to make (issue 44: runs with gauges reported up to twice
    /// their speed when it was left out).
    pub observer_seconds: f64,
    /// When and by which command the run started (the NetCDF file's `history`); a restart
    /// keeps its checkpoint's (none from an earlier pycno's checkpoint, whose file has none).
    pub history: Option<String>,
}

impl RunRecord {
    /// A new run's, from the layers' masses at the start, and its `history` line.
    pub fn new(mass_layer1_start: f64, mass_layer2_start: f64, history: String) -> RunRecord {
        RunRecord {
            dt_min: f64::INFINITY,
            dt_max: 0.0,
            dt_min_clipped: f64::INFINITY,
            clipped_steps: 0,
            mass_layer1_start,
            mass_layer2_start,
            fallbacks_before: 0,
            budget_before: vec![],
            output_seconds: 0.0,
            observer_seconds: 0.0,
            history: Some(history),
        }
    }

    /// A restart's, as its checkpoint carries it; `budget_before`: what the backend's
    /// boundary budgets do not hold (`simulate`).
    pub fn resumed(r: &Meta, budget_before: Vec<[f64; 4]>) -> RunRecord {
        RunRecord {
            dt_min: r.dt_min,
            dt_max: r.dt_max,
            dt_min_clipped: r.dt_min_clipped.unwrap_or(f64::INFINITY),
            clipped_steps: r.clipped_steps,
            mass_layer1_start: r.mass_layer1_start,
            mass_layer2_start: r.mass_layer2_start,
            fallbacks_before: r.hyperbolicity_fallbacks,
            budget_before,
            output_seconds: 0.0,
            observer_seconds: 0.0,
            history: r.history.clone(),
        }
    }
}

/// What every observer may read or add to.
pub struct RunContext<'a> {
    pub comm: &'a dyn Comm,
    pub scenario: &'a Scenario,
    pub pm: &'a PreparedMesh,
    pub part: &'a RankPart,
    pub piece: Piece<'a>,
    pub series: Series,
    pub record: RunRecord,
    /// The checkpoint this run resumed, if any.
    pub resume: Option<&'a Meta>,
    /// The list of the files this run writes into its output directory.
    pub manifest: std::sync::Arc<Manifest>,
}

/// A step the loop has just taken.
#[derive(Clone, Copy, Debug)]
pub struct StepDone {
    pub step: u64,
    pub time: f64,
    pub dt: f64,
}

pub trait Observer {
    /// Before the first step of a run that starts at t = 0 (not on a restart).
    fn start(&mut self, _run: &mut RunContext, _b: &mut dyn Backend) -> Result<()> {
        Ok(())
    }
    /// At output time number `index` (from 1), reached by step `step`.
    fn output(
        &mut self,
        _run: &mut RunContext,
        _b: &mut dyn Backend,
        _index: usize,
        _time: f64,
        _step: u64,
    ) -> Result<()> {
        Ok(())
    }
    /// After every step, once its outputs are written; after a batch of steps a GPU took
    /// on its own, once for the batch, unless [`Observer::every_step`].
    fn step(&mut self, _run: &mut RunContext, _b: &mut dyn Backend, _done: StepDone) -> Result<()> {
        Ok(())
    }
    /// Whether it must see the state after every step (then the host drives every step).
    fn every_step(&self) -> bool {
        false
    }
    /// After a loop that reached its end (or --max-steps), before the statistics.
    fn end(&mut self, _run: &mut RunContext, _b: &mut dyn Backend) -> Result<()> {
        Ok(())
    }
    /// After the loop, whatever its outcome.
    fn finish(&mut self) {}
}

/// The VTK time series: frame 0 at the start, then one per output time.
pub struct Frames;

impl Observer for Frames {
    fn start(&mut self, run: &mut RunContext, b: &mut dyn Backend) -> Result<()> {
        self.output(run, b, 0, 0.0, 0)
    }
    fn output(&mut self, run: &mut RunContext, b: &mut dyn Backend, index: usize, time: f64, _step: u64) -> Result<()> {
        let st = agree(run.comm, b.state())?;
        let files = run.series.write(run.comm, index, time, &run.piece, &st)?;
        agree(run.comm, run.manifest.record_all(&files))
    }
}

/// `gauges.csv`: at the start, at every output time, and at the times its interval asks
/// (interpolated in time between the steps around them; see `output::gauges`).
pub struct Gauges {
    recorder: GaugeRecorder,
}

impl Gauges {
    pub fn new(recorder: GaugeRecorder) -> Gauges {
        Gauges { recorder }
    }

    /// A restart: the state it starts from is the first end of the next interpolation.
    pub fn resume(&mut self, run: &mut RunContext, b: &mut dyn Backend, step: u64, time: f64) -> Result<()> {
        let depth = &run.part.depth;
        self.recorder.prime(run.comm, &mut Reading(b), step, time, &|l| depth[l])
    }
}

impl Observer for Gauges {
    fn every_step(&self) -> bool {
        true
    }
    fn start(&mut self, run: &mut RunContext, b: &mut dyn Backend) -> Result<()> {
        let depth = &run.part.depth;
        self.recorder.advance(run.comm, &mut Reading(b), 0, 0.0, true, &|l| depth[l])
    }
    fn output(&mut self, run: &mut RunContext, b: &mut dyn Backend, _index: usize, time: f64, step: u64) -> Result<()> {
        let depth = &run.part.depth;
        self.recorder.advance(run.comm, &mut Reading(b), step, time, true, &|l| depth[l])
    }
    fn step(&mut self, run: &mut RunContext, b: &mut dyn Backend, done: StepDone) -> Result<()> {
        let depth = &run.part.depth;
        self.recorder.advance(run.comm, &mut Reading(b), done.step, done.time, false, &|l| depth[l])
    }
}

/// The backend as the gauges read it (`output` knows nothing of the solver).
struct Reading<'a>(&'a mut dyn Backend);

impl GaugeSource for Reading<'_> {
    fn read_cells(&mut self, cells: &[usize]) -> Result<Vec<crate::physics::CellState>> {
        self.0.read_cells(cells)
    }
    fn boundary_budget(&mut self) -> Result<Vec<[f64; 4]>> {
        self.0.boundary_budget()
    }
}

/// The progress bar or log lines (rank 0).
pub struct ProgressLine(pub Progress);

impl Observer for ProgressLine {
    fn step(&mut self, _run: &mut RunContext, _b: &mut dyn Backend, done: StepDone) -> Result<()> {
        self.0.step(done.step, done.time, done.dt);
        Ok(())
    }
    fn finish(&mut self) {
        self.0.finish();
    }
}

/// Failure injection for the tests, `VAR=RANK:STEP`: `PYCNO_FAULT` makes that rank fail with
/// an error after that step (on that rank alone: the job must end, not hang); `PYCNO_KILL`
/// makes it SIGKILL itself there (a node failure; a restart must recover); `PYCNO_STOP`
/// makes it SIGSTOP itself (a rank that stops answering: only `--watchdog` ends the job).
pub struct Faults {
    fault: Option<(usize, u64)>,
    kill: Option<(usize, u64)>,
    stop: Option<(usize, u64)>,
}

impl Faults {
    /// From the environment; `None` when neither variable is set.
    pub fn from_env() -> Result<Option<Faults>> {
        let (fault, kill, stop) = (injected("PYCNO_FAULT")?, injected("PYCNO_KILL")?, injected("PYCNO_STOP")?);
        Ok((fault.is_some() || kill.is_some() || stop.is_some()).then_some(Faults { fault, kill, stop }))
    }
}

fn injected(var: &str) -> Result<Option<(usize, u64)>> {
    let Ok(v) = std::env::var(var) else { return Ok(None) };
    let parsed = v.split_once(':').and_then(|(r, s)| Some((r.parse().ok()?, s.parse().ok()?)));
    parsed.map(Some).ok_or_else(|| anyhow!("{var}={v:?}: expected RANK:STEP, e.g. 1:5"))
}

impl Observer for Faults {
    fn every_step(&self) -> bool {
        true
    }
    fn step(&mut self, run: &mut RunContext, _b: &mut dyn Backend, done: StepDone) -> Result<()> {
        let me = (run.comm.rank(), done.step);
        if self.fault == Some(me) {
            bail!("injected fault after step {} (PYCNO_FAULT)", done.step);
        }
        if self.kill == Some(me) {
            // SAFETY: plain libc calls; the process ends here, as on a node failure.
            unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        }
        if self.stop == Some(me) {
            // SAFETY: as above; the process stops (all its threads) until SIGCONT or SIGKILL.
            unsafe { libc::kill(libc::getpid(), libc::SIGSTOP) };
        }
        Ok(())
    }
}
