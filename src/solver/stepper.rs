//! The time loop: edge pass, local time step, global minimum, update (de la Asunción et al. 2012, section 3),
//! with the step clipped so that output times and the end time are hit exactly.

use super::backend::{Backend, Health, StepContext};
use super::exchange::{AllEdges, EdgePass, PhaseTimes};
use crate::comm::Comm;
use anyhow::{bail, Result};
use std::time::Instant;

#[derive(Clone, Debug, Default)]
pub struct LoopStats {
    pub steps: u64,
    pub dt_min: f64,
    pub dt_max: f64,
    pub time: f64,
    /// Seconds spent stepping, output excluded.
    pub stepping_seconds: f64,
    pub phases: PhaseTimes,
}

pub enum Event {
    /// After every step, once its outputs (if any) are written. `clipped`: the step was cut
    /// short of the CFL step to land on an output time or the end time.
    Step { step: u64, time: f64, dt: f64, output: bool, clipped: bool },
    /// The time reached an output time (not called for t = 0).
    Output { index: usize, time: f64, step: u64 },
}

/// The state went unphysical: the caller diagnoses with the backend's state.
#[derive(Debug)]
pub struct BlowUp {
    pub step: u64,
    pub time: f64,
}
impl std::fmt::Display for BlowUp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the solution blew up at step {} (t = {})", self.step, self.time)
    }
}
impl std::error::Error for BlowUp {}

pub struct Schedule<'a> {
    pub t_start: f64,
    pub t_end: f64,
    pub gamma: f64,
    /// Increasing output times in (t_start, t_end]; `Event::Output` index counts from
    /// `first_output_index`.
    pub outputs: &'a [f64],
    pub first_output_index: usize,
    pub max_steps: Option<u64>,
    /// Steps already taken before `t_start` (a restart): step numbers continue from here.
    pub first_step: u64,
}

/// The loop on one rank holding the whole mesh.
pub fn step_loop(
    b: &mut dyn Backend,
    comm: &dyn Comm,
    plan: &Schedule,
    on_event: &mut dyn FnMut(&mut dyn Backend, Event) -> Result<()>,
) -> Result<LoopStats> {
    step_loop_with(b, comm, &mut AllEdges, plan, on_event)
}

/// The loop with the edge pass of `edges` (with or without a halo exchange).
pub fn step_loop_with(
    b: &mut dyn Backend,
    comm: &dyn Comm,
    edges: &mut dyn EdgePass,
    plan: &Schedule,
    on_event: &mut dyn FnMut(&mut dyn Backend, Event) -> Result<()>,
) -> Result<LoopStats> {
    let mut st = LoopStats {
        dt_min: f64::INFINITY,
        dt_max: 0.0,
        time: plan.t_start,
        steps: plan.first_step,
        ..Default::default()
    };
    let mut next_out = 0usize;
    let mut t = plan.t_start;
    while t < plan.t_end {
        if plan.max_steps.is_some_and(|m| st.steps >= m) {
            break;
        }
        let target = plan.outputs.get(next_out).copied().unwrap_or(plan.t_end).min(plan.t_end);
        let clock = Instant::now();
        edges.edge_pass(b, t, &mut st.phases)?;
        let phase = Instant::now();
        let (dt_local, health) = b.local_dt(plan.gamma)?;
        st.phases.dt += phase.elapsed().as_secs_f64();
        let phase = Instant::now();
        // An unphysical cell on any rank turns the global minimum negative: all ranks stop.
        let dt_cfl = comm.min_f64(if health == Health::Bad { -1.0 } else { dt_local });
        st.phases.allreduce += phase.elapsed().as_secs_f64();
        if dt_cfl < 0.0 {
            bail!(BlowUp { step: st.steps, time: t });
        }
        if !(dt_cfl.is_finite() && dt_cfl > 0.0) {
            bail!(BlowUp { step: st.steps + 1, time: t });
        }
        let remaining = target - t;
        let (dt, hits) = if dt_cfl >= remaining { (remaining, true) } else { (dt_cfl, false) };
        let clipped = dt_cfl > remaining;
        let phase = Instant::now();
        b.update(StepContext { t, dt })?;
        st.phases.update += phase.elapsed().as_secs_f64();
        st.stepping_seconds += clock.elapsed().as_secs_f64();
        st.steps += 1;
        t = if hits { target } else { t + dt };
        st.time = t;
        st.dt_min = st.dt_min.min(dt);
        st.dt_max = st.dt_max.max(dt);
        let mut output = false;
        while hits && next_out < plan.outputs.len() && plan.outputs[next_out] <= t {
            on_event(b, Event::Output { index: plan.first_output_index + next_out, time: t, step: st.steps })?;
            next_out += 1;
            output = true;
        }
        on_event(b, Event::Step { step: st.steps, time: t, dt, output, clipped })?;
    }
    let bad = if b.health()? == Health::Bad { -1.0 } else { 1.0 };
    if comm.min_f64(bad) < 0.0 {
        bail!(BlowUp { step: st.steps, time: t });
    }
    if st.steps == plan.first_step {
        st.dt_min = 0.0;
    }
    Ok(st)
}
