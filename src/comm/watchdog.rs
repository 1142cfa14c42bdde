//! A watchdog against a rank that stops answering (a stopped process, a hung GPU or file
//! system, a lost node): without it the other ranks wait in their next collective or
//! exchange for ever, and a batch job burns its allocation. `pycno run --watchdog SECONDS`
//! starts a thread on every rank that ends the job when the rank has made no progress for
//! that long, reporting the step, what the rank was waiting in and, in a halo exchange,
//! which ranks' messages never came: the ranks next to the silent one name it.
//!
//! Progress is reported by `beat` (the step loop calls it at each phase) and `waiting_for`
//! (the MPI exchange, after each completed message). Both are a few atomic stores, and do
//! nothing unless the watchdog was started. Off by default: a rank legitimately busy for a
//! long time (writing a large checkpoint while the others wait) must not end a healthy job,
//! so choose a timeout well above the longest output or checkpoint write.
//!
//! The clock starts at the first beat, when the rank starts stepping: set-up (meshing,
//! reading data files and partitions, building the backend) is not watched, since on 400k
//! cells and two ranks it alone took longer than `--watchdog 1` and ended a healthy job as
//! "no progress" (issue 46).

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

struct Heart {
    start: Instant,
    timeout: Duration,
    rank: usize,
    size: usize,
    /// Milliseconds since `start` at the last beat.
    last: AtomicU64,
    /// Set by the first beat: before it the rank is setting up, which is not watched.
    armed: AtomicBool,
    step: AtomicU64,
    phase: Mutex<&'static str>,
    /// Ranks whose messages this rank still waits for in an exchange.
    waiting: Mutex<Vec<usize>>,
}

static HEART: OnceLock<Heart> = OnceLock::new();

/// Start the watchdog of this rank (once per process).
pub fn start(timeout: Duration, rank: usize, size: usize) {
    let heart = Heart {
        start: Instant::now(),
        timeout,
        rank,
        size,
        last: AtomicU64::new(0),
        armed: AtomicBool::new(false),
        step: AtomicU64::new(0),
        phase: Mutex::new("setting up"),
        waiting: Mutex::new(Vec::new()),
    };
    if HEART.set(heart).is_err() {
        return;
    }
    std::thread::Builder::new().name("pycno-watchdog".into()).spawn(watch).expect("cannot start the watchdog thread");
}

/// The rank is alive: at step `step`, now in `phase`.
pub fn beat(step: u64, phase: &'static str) {
    if let Some(h) = HEART.get() {
        h.last.store(h.start.elapsed().as_millis() as u64, Ordering::Relaxed);
        h.armed.store(true, Ordering::Relaxed);
        h.step.store(step, Ordering::Relaxed);
        *h.phase.lock().unwrap_or_else(|e| e.into_inner()) = phase;
    }
}

/// The rank still waits for messages from these ranks (empty: none). A message arriving
/// is progress too.
pub fn waiting_for(ranks: &[usize]) {
    if let Some(h) = HEART.get() {
        h.last.store(h.start.elapsed().as_millis() as u64, Ordering::Relaxed);
        let mut w = h.waiting.lock().unwrap_or_else(|e| e.into_inner());
        w.clear();
        w.extend_from_slice(ranks);
    }
}

fn watch() {
    let h = HEART.get().expect("started");
    loop {
        std::thread::sleep(Duration::from_millis(250));
        if !h.armed.load(Ordering::Relaxed) {
            continue;
        }
        let now = h.start.elapsed().as_millis() as u64;
        let idle = Duration::from_millis(now.saturating_sub(h.last.load(Ordering::Relaxed)));
        if idle < h.timeout {
            continue;
        }
        let phase = *h.phase.lock().unwrap_or_else(|e| e.into_inner());
        let mut waiting = h.waiting.lock().unwrap_or_else(|e| e.into_inner()).clone();
        waiting.sort_unstable();
        waiting.dedup();
        let whom = if waiting.is_empty() {
            String::new()
        } else {
            let list: Vec<String> = waiting.iter().map(|r| format!("rank {r}")).collect();
            format!("; the halo messages of {} never came: that rank stopped answering", list.join(", "))
        };
        let who = if h.size > 1 { format!(" (rank {} of {})", h.rank, h.size) } else { String::new() };
        let _ = writeln!(
            std::io::stderr(),
            "error{who}: no progress for {:.0} s (--watchdog) at step {}, waiting in {phase}{whom}; ending the job",
            idle.as_secs_f64(),
            h.step.load(Ordering::Relaxed),
        );
        let _ = std::io::stderr().flush();
        // The main thread is blocked inside MPI; leave without it. The MPI launcher then
        // ends the other ranks (a rank that exits non-zero takes the job down).
        // SAFETY: _exit ends the process at once; no Rust state is used after it.
        unsafe { libc::_exit(1) };
    }
}
