//! Shared by the validation tests: run a scenario in memory on the CPU backend.
#![allow(dead_code)]

pub mod cli;
pub mod ocean;
pub mod skip;
pub mod strip;

use pycno::app::{scenario_mesh, PreparedMesh};
use pycno::comm::Single;
use pycno::physics::CellState;
use pycno::physics::{Model, Real};
use pycno::scenario::{initial, Scenario};
use pycno::solver::stepper::{step_loop, Event, LoopStats, Schedule};
use pycno::solver::{Backend, CpuBackend, Layout};

/// The repository: where the tests were built, or `PYCNO_ROOT` (a bundled test binary run on
/// another machine, see tools/gpu-test.sh).
pub fn repo_root() -> std::path::PathBuf {
    std::env::var_os("PYCNO_ROOT")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}

pub struct Outcome {
    pub pm: PreparedMesh,
    pub depth: Vec<f64>,
    /// The backend's state before the first step (the scenario's, as the run's precision
    /// stores it), so that a change is measured against what the run started from.
    pub start: Vec<CellState>,
    pub end: Vec<CellState>,
    pub stats: LoopStats,
    pub fallbacks: u64,
}

/// Run `s` to `s.time.end` (or `max_steps`) on the CPU in precision `T`, at its
/// `physics.order`, with its dry tolerance resolved as a run resolves it.
pub fn run<T: Real>(s: &Scenario, max_steps: Option<u64>) -> Outcome {
    run_observed::<T>(s, max_steps, &[], &mut |_, _, _| {})
}

/// [`run`], handing the state at each of the increasing `outputs` times (in (0, end]) to
/// `on_output` with the time and the mesh.
pub fn run_observed<T: Real>(
    s: &Scenario,
    max_steps: Option<u64>,
    outputs: &[f64],
    on_output: &mut dyn FnMut(f64, &PreparedMesh, Vec<CellState>),
) -> Outcome {
    let pm = scenario_mesh(s).expect("mesh");
    let (depth, initial) = initial::evaluate(s, &pm.topo.cell_centroid).expect("initial state");
    // The dry tolerance as `pycno run` resolves it (scaled to the water unless given).
    let mut s = s.clone();
    s.physics.resolve_dry_tolerance(pycno::app::run::deepest_water(&Single, &initial));
    let s = &s;
    let params = Model::<T>::new(&s.physics).unwrap();
    let mut lay = Layout::<T>::from_topology(&pm.topo, &depth, &initial, &s.physics.reference());
    let table = s.boundary_table(&pm.mesh, &pm.topo).expect("boundary table");
    lay.set_boundaries(&pm.topo.edge_tag, &table);
    if let Some(v) = &s.physics.viscosity {
        lay.set_viscosity(&pm.topo, v);
    }
    let mut b = CpuBackend::new(params, lay).unwrap().with_order(s.physics.order).unwrap();
    let start = b.state().unwrap();
    let plan = Schedule { outputs, ..plan(s, max_steps) };
    let stats = step_loop(&mut b, &Single, &plan, &mut |b, ev| {
        if let Event::Output { time, .. } = ev {
            on_output(time, &pm, b.state()?);
        }
        Ok(())
    })
    .expect("run");
    let end = b.state().unwrap();
    let fallbacks = b.fallbacks().unwrap();
    Outcome { pm, depth, start, end, stats, fallbacks }
}

/// From t = 0 to the scenario's end (or `max_steps`), with no output.
pub fn plan(s: &Scenario, max_steps: Option<u64>) -> Schedule<'static> {
    Schedule {
        t_start: 0.0,
        t_end: s.time.end,
        gamma: s.physics.gamma,
        outputs: &[],
        first_output_index: 1,
        max_steps,
        first_step: 0,
        device_steps: pycno::solver::stepper::default_device_steps(),
        watch: pycno::solver::watch::Watch::off(),
    }
}

pub fn masses(state: &[CellState], area: &[f64]) -> (f64, f64) {
    pycno::app::run::layer_masses(state, area)
}

pub fn scenario(json: &str) -> Scenario {
    Scenario::from_json(json).unwrap_or_else(|e| panic!("test scenario invalid: {e:#}"))
}

/// Run the `pycno` binary with `args` in `cwd` (and extra environment), killing it after
/// `limit`: a regression to a hang then fails the test instead of hanging CI.
/// `PYCNO_TEST_BIN` runs another build instead (to see a campaign fail on the code before
/// a fix).
pub fn pycno_within(
    cwd: &std::path::Path,
    args: &[&str],
    env: &[(&str, &str)],
    limit: std::time::Duration,
) -> std::process::Output {
    let mut cmd = std::process::Command::new(cli::bin());
    cmd.args(args)
        .current_dir(cwd)
        .env("RUST_BACKTRACE", "0")
        .env_remove("RUST_LOG")
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null());
    cli::run_bounded(cmd, limit)
}

/// Every path below `dir` (files and directories, symlinks not followed), relative to it,
/// sorted.
pub fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    fn walk(root: &std::path::Path, dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            out.push(p.strip_prefix(root).unwrap().to_path_buf());
            if e.file_type().unwrap().is_dir() {
                walk(root, &p, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// Merge `patch`'s top-level keys into the JSON object `doc`; a null value removes the key.
pub fn patch_top_level(doc: &mut serde_json::Value, patch: &serde_json::Value) {
    for (k, v) in patch.as_object().expect("a JSON object") {
        if v.is_null() {
            doc.as_object_mut().expect("a JSON object").remove(k);
        } else {
            doc[k] = v.clone();
        }
    }
}
