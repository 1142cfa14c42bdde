//! What a run watches while it steps, so that a run going wrong says so and stops instead of
//! crawling on (issue 43): its time step collapsing, its hyperbolicity fallbacks piling up,
//! and its water moving faster than any shallow-water wave of its depth could make it. Each
//! first warns (once, from rank 0) and then stops the run with [`WentWrong`], which the run's
//! report turns into the cell, its position and its numbers, and the state written out.
//!
//! The checks read what the loop has anyway (each step's time step) or, every
//! [`WINDOW`] steps, the backend's fallback count and its state (one download on a GPU).

use super::backend::Backend;
use crate::comm::Comm;
use anyhow::Result;

/// Steps between two looks at the fallbacks and the speeds.
pub const WINDOW: u64 = 200;

/// The limits (each 0 to switch it off). [`Watch::off`] for tests that do not want them;
/// `pycno run` sets them from its options (`--max-speed`, `--no-health-checks`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Watch {
    /// Stop when a step's CFL time step falls below this fraction of the run's first (warn at
    /// ten times it).
    pub dt_fraction: f64,
    /// Stop when the hyperbolicity fallbacks pass this fraction of the edge evaluations over
    /// a window of steps (warn at a tenth of it).
    pub fallback_fraction: f64,
    /// Stop when a layer's velocity passes this (m/s; warn at half of it).
    pub speed: f64,
}

impl Watch {
    pub const fn off() -> Watch {
        Watch { dt_fraction: 0.0, fallback_fraction: 0.0, speed: 0.0 }
    }

    /// The defaults for water up to `depth` (m) deep under gravity `g`: the step at 1e-3 of
    /// the first, half the edge evaluations in the fallback, speeds of 10 `√(g depth)`, ten
    /// times the fastest long wave. Why fallbacks stop a run only at one half (with a warning
    /// from 5%): a sound exchange flow sits at the edge of hyperbolicity, where rounding tips
    /// edges into the fallback: a lock exchange's fan is critical everywhere (at r = 0.9 a
    /// tenth of its edges fall back, 5% of a 500-column channel's), while the runs that go
    /// wrong (the strait at order 2 before issue 43's fixes: 13%) also pass the speed limit.
    pub fn defaults(g: f64, depth: f64) -> Watch {
        Watch { dt_fraction: 1e-3, fallback_fraction: 0.5, speed: 10.0 * (g * depth.max(0.0)).sqrt() }
    }
}

/// A run that went wrong without (yet) going unphysical: what was seen, at which step.
#[derive(Debug)]
pub struct WentWrong {
    pub step: u64,
    pub time: f64,
    /// What passed its limit, with the numbers.
    pub what: String,
    /// The largest velocity seen, to name the cell in the report.
    pub speed: f64,
}

impl std::fmt::Display for WentWrong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the run went wrong at step {} (t = {}): {}", self.step, self.time, self.what)
    }
}
impl std::error::Error for WentWrong {}

/// The watch's memory over a run.
pub struct Watcher {
    limits: Watch,
    dt_first: Option<f64>,
    warned: [bool; 3],
    window_start: (u64, u64),
    edge_evaluations: f64,
}

impl Watcher {
    /// `edges`: this rank's edges (each evaluated `stages` times a step).
    pub fn new(limits: Watch, edges: usize, stages: u32) -> Watcher {
        Watcher {
            limits,
            dt_first: None,
            warned: [false; 3],
            window_start: (0, 0),
            edge_evaluations: (edges as f64) * stages as f64,
        }
    }

    fn warn(&mut self, k: usize, comm: &dyn Comm, text: &str) {
        if !self.warned[k] && comm.is_root() {
            log::warn!("{text}; the run stops if it gets worse ({OPT_OUT})");
        }
        self.warned[k] = true;
    }

    /// After steps up to `step` (time `t`) whose smallest CFL step (not clipped to an output
    /// time) was `dt_min`. Collective where it looks at the backend (every rank calls it with
    /// the same step counts).
    pub fn after(&mut self, b: &mut dyn Backend, comm: &dyn Comm, step: u64, t: f64, dt_min: f64) -> Result<()> {
        let l = self.limits;
        if l.dt_fraction > 0.0 && dt_min.is_finite() {
            let first = *self.dt_first.get_or_insert(dt_min);
            let ratio = dt_min / first;
            if ratio < l.dt_fraction {
                return Err(self.wrong(
                    b,
                    comm,
                    step,
                    t,
                    format!(
                    "the time step fell to {dt_min:.3e} s, {ratio:.1e} of the first step's {first:.3e} s (limit {:e})",
                    l.dt_fraction
                ),
                ));
            }
            if ratio < 10.0 * l.dt_fraction {
                self.warn(
                    0,
                    comm,
                    &format!("the time step fell to {dt_min:.3e} s, {ratio:.1e} of the first step's {first:.3e} s"),
                );
            }
        }
        if step < self.window_start.0 + WINDOW || (l.fallback_fraction <= 0.0 && l.speed <= 0.0) {
            return Ok(());
        }
        let fallbacks = comm.sum_u64(b.fallbacks()?);
        let evaluations = comm.sum_f64(self.edge_evaluations) * (step - self.window_start.0) as f64;
        let share = (fallbacks - self.window_start.1.min(fallbacks)) as f64 / evaluations.max(1.0);
        self.window_start = (step, fallbacks);
        if l.fallback_fraction > 0.0 {
            let text = format!(
                "{:.2}% of the edge evaluations of the last steps fell back to the non-hyperbolic flux (limit {}%)",
                100.0 * share,
                100.0 * l.fallback_fraction
            );
            if share > l.fallback_fraction {
                return Err(self.wrong(b, comm, step, t, text));
            }
            if share > 0.1 * l.fallback_fraction {
                self.warn(1, comm, &text);
            }
        }
        if l.speed > 0.0 {
            let fastest = -comm.min_f64(-max_speed(b)?);
            let text = format!("water moves at {fastest:.3} m/s (limit {:.3} m/s, --max-speed)", l.speed);
            if fastest > l.speed {
                return Err(self.wrong(b, comm, step, t, text));
            }
            if fastest > 0.5 * l.speed {
                self.warn(2, comm, &text);
            }
        }
        Ok(())
    }

    fn wrong(&self, b: &mut dyn Backend, comm: &dyn Comm, step: u64, time: f64, what: String) -> anyhow::Error {
        let speed = max_speed(b).map(|s| -comm.min_f64(-s)).unwrap_or(f64::NAN);
        anyhow::Error::new(WentWrong { step, time, what, speed })
    }
}

/// How to switch the checks off, for the messages.
pub const OPT_OUT: &str = "--max-speed M sets the speed limit, --no-health-checks switches these checks off";

/// The larger speed of a cell's two layers, counting a layer where it holds at least 1% of its
/// water column (a film's `q/h` is noise, not a flow). The check and the report both use it,
/// so the report names a cell the check saw.
pub fn cell_speed(s: &crate::physics::CellState) -> f64 {
    let (u1, u2) = s.velocities();
    let column = s.h1 + s.h2;
    let of = |u: [f64; 2], h: f64| if h >= 0.01 * column { u[0].hypot(u[1]) } else { 0.0 };
    of(u1, s.h1).max(of(u2, s.h2))
}

/// The largest [`cell_speed`] over this rank's cells.
pub fn max_speed(b: &mut dyn Backend) -> Result<f64> {
    // A NaN is no speed here: an unphysical state is the blow-up report's.
    Ok(b.state()?.iter().map(cell_speed).fold(0.0, f64::max))
}
