//! The time loop: edge pass, local time step, global minimum, update (de la Asunción et al. 2012, section 3),
//! with the step clipped so that output times and the end time are hit exactly.

use super::backend::{Backend, DeviceSteps, DeviceStop, Health, StepContext};
use super::exchange::{AllEdges, EdgePass, PhaseTimes};
use super::watch::{Watch, Watcher};
use crate::comm::{watchdog, Comm};
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
    /// After every step, once its outputs (if any) are written; after a batch of steps
    /// taken on the device, once for the batch (`steps` of them; `dt` the last one's length).
    /// `dt_min`: the smallest of the batch's steps that were not clipped (infinite if
    /// none), `dt_max` the largest; `clipped`: the last step was cut short of the CFL step to
    /// land on an output time or the end time (only a batch's last step can be).
    Step { step: u64, time: f64, dt: f64, output: bool, steps: u64, dt_min: f64, dt_max: f64, clipped: bool },
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
    /// Steps a device may take on its own between two events (1: the host drives every
    /// step). Observers that need every step (gauges, fault injection, checkpoints every
    /// N steps) set 1; outputs and the end are hit exactly either way.
    pub device_steps: u64,
    /// What the loop watches for a run going wrong (`solver/watch.rs`).
    pub watch: Watch,
}

/// Steps a GPU takes on its own between two looks from the host, at most, unless an
/// observer needs every step: `PYCNO_DEVICE_STEPS` (1 turns it off), default 64. The
/// results do not depend on it (tests/gpu.rs).
pub fn default_device_steps() -> u64 {
    std::env::var("PYCNO_DEVICE_STEPS").ok().and_then(|v| v.parse().ok()).filter(|&k| k >= 1).unwrap_or(64)
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
    let mut watcher = Watcher::new(plan.watch, b.num_edges(), b.order());
    let on_device = plan.device_steps > 1 && edges.device_steps();
    if on_device {
        b.prepare_device_steps(plan.gamma)?;
        // The ranks start stepping together: a rank's first batch would otherwise count, as
        // stepping time, its wait for another rank still capturing its graphs (the GPUs'
        // own exchange waits on the device).
        if comm.size() > 1 {
            watchdog::beat(st.steps, "waiting for every rank to be ready to step");
            comm.barrier();
        }
    }
    while t < plan.t_end {
        if plan.max_steps.is_some_and(|m| st.steps >= m) {
            break;
        }
        let target = plan.outputs.get(next_out).copied().unwrap_or(plan.t_end).min(plan.t_end);
        let clock = Instant::now();
        if on_device {
            let limit = plan.device_steps.min(plan.max_steps.map_or(u64::MAX, |m| m - st.steps));
            watchdog::beat(st.steps + 1, "steps on the device");
            if let Some(batch) = b.steps_on_device(DeviceSteps { t, target, gamma: plan.gamma, limit })? {
                let seconds = clock.elapsed().as_secs_f64();
                st.phases.update += seconds;
                st.stepping_seconds += seconds;
                st.steps += batch.steps;
                match batch.stop {
                    DeviceStop::Unphysical => bail!(BlowUp { step: st.steps, time: batch.t }),
                    DeviceStop::NoTimeStep => bail!(BlowUp { step: st.steps + 1, time: batch.t }),
                    DeviceStop::Limit | DeviceStop::Target => {}
                }
                t = batch.t;
                st.time = t;
                st.dt_min = st.dt_min.min(batch.dt_min);
                st.dt_max = st.dt_max.max(batch.dt_max);
                let hits = batch.stop == DeviceStop::Target;
                let output = after_step(b, plan, &mut next_out, hits, t, st.steps, on_event)?;
                let ev = Event::Step {
                    step: st.steps,
                    time: t,
                    dt: batch.dt,
                    output,
                    steps: batch.steps,
                    dt_min: batch.dt_min_unclipped,
                    dt_max: batch.dt_max,
                    clipped: batch.clipped,
                };
                on_event(b, ev)?;
                watcher.after(b, comm, st.steps, t, batch.dt_min_unclipped)?;
                continue;
            }
        }
        watchdog::beat(st.steps + 1, "the edge pass and the halo exchange");
        edges.edge_pass(b, t, &mut st.phases)?;
        let phase = Instant::now();
        let (dt_local, health) = b.local_dt(plan.gamma)?;
        st.phases.dt += phase.elapsed().as_secs_f64();
        let phase = Instant::now();
        watchdog::beat(st.steps + 1, "the global time step (a reduction over all ranks)");
        // An unphysical cell on any rank turns the global minimum negative: all ranks stop.
        let dt_cfl = comm.min_f64(if health == Health::Bad { -1.0 } else { dt_local });
        st.phases.allreduce += phase.elapsed().as_secs_f64();
        if dt_cfl < 0.0 {
            bail!(BlowUp { step: st.steps, time: t });
        }
        // No wave anywhere (every cell dry, no boundary bringing water): nothing moves, and
        // the step runs to the next target.
        let dt_cfl = if dt_cfl == f64::INFINITY { target - t } else { dt_cfl };
        if !(dt_cfl.is_finite() && dt_cfl > 0.0) {
            bail!(BlowUp { step: st.steps + 1, time: t });
        }
        let remaining = target - t;
        let (dt, hits) = if dt_cfl >= remaining { (remaining, true) } else { (dt_cfl, false) };
        let clipped = dt_cfl > remaining;
        let phase = Instant::now();
        b.update(StepContext { t, dt })?;
        st.phases.update += phase.elapsed().as_secs_f64();
        if b.order() == 2 {
            // SSP-RK2 (Heun): the second stage's edge pass at the stage's time, t + dt.
            watchdog::beat(st.steps + 1, "the second stage's edge pass and halo exchange");
            edges.edge_pass(b, t + dt, &mut st.phases)?;
            let phase = Instant::now();
            b.second_stage(StepContext { t, dt })?;
            st.phases.update += phase.elapsed().as_secs_f64();
        }
        st.stepping_seconds += clock.elapsed().as_secs_f64();
        st.steps += 1;
        t = if hits { target } else { t + dt };
        st.time = t;
        st.dt_min = st.dt_min.min(dt);
        st.dt_max = st.dt_max.max(dt);
        let output = after_step(b, plan, &mut next_out, hits, t, st.steps, on_event)?;
        let dt_min = if clipped { f64::INFINITY } else { dt };
        on_event(b, Event::Step { step: st.steps, time: t, dt, output, steps: 1, dt_min, dt_max: dt, clipped })?;
        watcher.after(b, comm, st.steps, t, dt_min)?;
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

/// The outputs due at `t` after a step that reached its target (`hits`); whether any was.
fn after_step(
    b: &mut dyn Backend,
    plan: &Schedule,
    next_out: &mut usize,
    hits: bool,
    t: f64,
    step: u64,
    on_event: &mut dyn FnMut(&mut dyn Backend, Event) -> Result<()>,
) -> Result<bool> {
    watchdog::beat(step, "writing output, gauges or checkpoints (collective)");
    let mut output = false;
    while hits && *next_out < plan.outputs.len() && plan.outputs[*next_out] <= t {
        on_event(b, Event::Output { index: plan.first_output_index + *next_out, time: t, step })?;
        *next_out += 1;
        output = true;
    }
    Ok(output)
}
