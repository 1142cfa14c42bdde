//! Shared by the validation tests: run a scenario in memory on the CPU backend.
#![allow(dead_code)]

pub mod cli;
pub mod ocean;

use pycno::app::{scenario_mesh, PreparedMesh};
use pycno::comm::Single;
use pycno::physics::CellState;
use pycno::physics::{Model, Real};
use pycno::scenario::{initial, Scenario};
use pycno::solver::stepper::{step_loop, LoopStats, Schedule};
use pycno::solver::{Backend, CpuBackend, Layout};

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

/// Run `s` to `s.time.end` (or `max_steps`) on the CPU in precision `T`.
pub fn run<T: Real>(s: &Scenario, max_steps: Option<u64>) -> Outcome {
    let pm = scenario_mesh(s).expect("mesh");
    let (depth, initial) = initial::evaluate(s, &pm.topo.cell_centroid).expect("initial state");
    let params = Model::<T>::new(&s.physics).unwrap();
    let lay = Layout::<T>::from_topology(&pm.topo, &depth, &initial, &s.physics.reference());
    let mut b = CpuBackend::new(params, lay).unwrap();
    let start = b.state().unwrap();
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
