//! Ctrl-C (SIGINT) or SIGTERM during a run (issue 46): the run stops after the step it is
//! taking and writes what it has, as `--max-steps` would (the state reached as a last frame,
//! the max maps, stats.json marked `"interrupted"`), then exits 1 naming the signal. A second
//! signal ends the process at once, and so does one during set-up (before the first step),
//! where nothing is worth keeping yet.
//!
//! One process only: under `mpirun` the launcher forwards the signal and ends the ranks on
//! its own schedule, so a multi-rank run is not stopped in step (it restarts from its
//! checkpoints).

use super::observers::{Observer, RunContext, StepDone};
use crate::solver::Backend;
use anyhow::Result;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// The signal received (0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// Set once the step loop runs: before it a signal ends the process as usual.
static STEPPING: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(sig: libc::c_int) {
    // Only async-signal-safe calls here: atomics, signal and raise.
    // SAFETY: restoring the default action and re-raising are async-signal-safe.
    unsafe { libc::signal(sig, libc::SIG_DFL) };
    if !STEPPING.load(Ordering::SeqCst) {
        // SAFETY: as above; the default action ends the process.
        unsafe { libc::raise(sig) };
        return;
    }
    SIGNAL.store(sig, Ordering::SeqCst);
}

/// Catch SIGINT and SIGTERM for a single-process run (see the module's text).
pub fn install() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: the handler only touches atomics and async-signal-safe calls.
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
}

/// The run was stopped by a signal after `step`, at `time`.
#[derive(Debug)]
pub struct Interrupted {
    pub signal: &'static str,
    pub step: u64,
    pub time: f64,
}

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "interrupted by {} after step {} (t = {} s)", self.signal, self.step, self.time)
    }
}
impl std::error::Error for Interrupted {}

fn name(sig: i32) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT (Ctrl-C)",
        libc::SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}

/// The last observer of a single-process run: after a step, a signal received ends the loop
/// with [`Interrupted`] (the other observers have seen that step).
pub struct Interrupt;

impl Interrupt {
    /// From here on a signal stops the run after its step instead of ending the process.
    pub fn arm() -> Interrupt {
        STEPPING.store(true, Ordering::SeqCst);
        Interrupt
    }
}

impl Observer for Interrupt {
    fn step(&mut self, _run: &mut RunContext, _b: &mut dyn Backend, done: StepDone) -> Result<()> {
        match SIGNAL.load(Ordering::SeqCst) {
            0 => Ok(()),
            sig => Err(Interrupted { signal: name(sig), step: done.step, time: done.time }.into()),
        }
    }
    fn finish(&mut self) {
        STEPPING.store(false, Ordering::SeqCst);
    }
}
