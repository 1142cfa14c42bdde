//! Shared by the validation tests: run a scenario in memory on the CPU backend.
#![allow(dead_code)]

use pycno::app::{scenario_mesh, PreparedMesh};
use pycno::comm::Single;
use pycno::physics::CellState;
use pycno::physics::{Params, Real};
use pycno::scenario::{initial, Scenario};
use pycno::solver::stepper::{step_loop, LoopStats, Schedule};
use pycno::solver::{Backend, CpuBackend, Layout};

pub struct Outcome {
    pub pm: PreparedMesh,
    pub depth: Vec<f64>,
    pub start: Vec<CellState>,
    pub end: Vec<CellState>,
    pub stats: LoopStats,
    pub fallbacks: u64,
}

/// Run `s` to `s.time.end` (or `max_steps`) on the CPU in precision `T`.
pub fn run<T: Real>(s: &Scenario, max_steps: Option<u64>) -> Outcome {
    let pm = scenario_mesh(s).expect("mesh");
    let (depth, start) = initial::evaluate(s, &pm.topo.cell_centroid).expect("initial state");
    let params = Params::<T>::new(s.physics.g, s.physics.r).unwrap();
    let mut b = CpuBackend::new(params, Layout::<T>::from_topology(&pm.topo, &depth, &start)).unwrap();
    let plan = plan(s, max_steps);
    let stats = step_loop(&mut b, &Single, &plan, &mut |_, _| Ok(())).expect("run");
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
    }
}

pub fn masses(state: &[CellState], area: &[f64]) -> (f64, f64) {
    pycno::app::run::layer_masses(state, area)
}

pub fn scenario(json: &str) -> Scenario {
    Scenario::from_json(json).unwrap_or_else(|e| panic!("test scenario invalid: {e:#}"))
}

/// Run the `pycno` binary with `args` in `cwd` (and extra environment), killing it after
/// `limit`: a regression to a hang then fails the test instead of hanging CI. Returns the
/// output, or panics naming the command if it had to be killed. `PYCNO_TEST_BIN` runs
/// another build instead (to see a campaign fail on the code before a fix).
pub fn pycno_within(
    cwd: &std::path::Path,
    args: &[&str],
    env: &[(&str, &str)],
    limit: std::time::Duration,
) -> std::process::Output {
    use std::process::{Command, Stdio};
    let bin = std::env::var_os("PYCNO_TEST_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_pycno").into());
    let mut child = Command::new(bin)
        .args(args)
        .current_dir(cwd)
        .env("RUST_BACKTRACE", "0")
        .env_remove("RUST_LOG")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot start pycno");
    // Drain both pipes on threads, so a chatty child cannot block on a full pipe.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut b).ok();
        b
    });
    let err = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut b).ok();
        b
    });
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait for pycno") {
            break s;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("pycno {} did not finish within {limit:?}: a hang", args.join(" "));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    std::process::Output { status, stdout: out.join().unwrap(), stderr: err.join().unwrap() }
}
