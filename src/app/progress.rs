//! Progress of a run: a bar with simulated time, steps/s and ETA on a terminal; a plain
//! log line every few seconds otherwise (batch jobs, CI, pipes).
//!
//! The rate and the ETA count only this process's own steps and simulated time: a restart
//! from step 5000 at t = 9 s does not claim the 5000 steps it did not take, and its ETA is
//! the time left at the pace it has kept since it started.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

pub struct Progress {
    bar: Option<ProgressBar>,
    t_start: f64,
    first_step: u64,
    t_end: f64,
    start: Instant,
    last_log: Instant,
    /// Seconds between log lines (`PYCNO_PROGRESS_SECONDS`, default 5).
    every: Duration,
    quiet: bool,
}

const TICKS: u64 = 10_000;

/// Steps per second and the seconds left, from this process's own progress: `steps` steps
/// and `advanced` seconds of simulated time in `elapsed` seconds, `left` simulated seconds to
/// go. `None` for the ETA until there is a pace to go by.
pub fn pace(steps: u64, advanced: f64, left: f64, elapsed: f64) -> (f64, Option<f64>) {
    let elapsed = elapsed.max(1e-9);
    let rate = steps as f64 / elapsed;
    let eta = (advanced > 0.0).then(|| left.max(0.0) * elapsed / advanced);
    (rate, eta)
}

fn clock(seconds: Option<f64>) -> String {
    match seconds {
        None => "?".into(),
        Some(s) if s >= 3600.0 => format!("{}h{:02}m", (s / 3600.0) as u64, ((s % 3600.0) / 60.0) as u64),
        Some(s) if s >= 60.0 => format!("{}m{:02}s", (s / 60.0) as u64, (s % 60.0) as u64),
        Some(s) => format!("{s:.0}s"),
    }
}

impl Progress {
    /// A run from `t_start` (step `first_step`: a restart's checkpoint) to `t_end`.
    pub fn new(t_start: f64, first_step: u64, t_end: f64, quiet: bool) -> Progress {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::new(TICKS);
            bar.set_style(
                ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        let every = std::env::var("PYCNO_PROGRESS_SECONDS").ok().and_then(|v| v.parse::<f64>().ok());
        let every = Duration::from_secs_f64(every.filter(|x| x.is_finite() && *x >= 0.0).unwrap_or(5.0));
        let now = Instant::now();
        Progress { bar, t_start, first_step, t_end, start: now, last_log: now, every, quiet }
    }

    pub fn step(&mut self, step: u64, time: f64, dt: f64) {
        let own = step.saturating_sub(self.first_step);
        let (rate, eta) = pace(own, time - self.t_start, self.t_end - time, self.start.elapsed().as_secs_f64());
        let since = if self.first_step > 0 { " since the restart" } else { "" };
        if let Some(bar) = &self.bar {
            let done = (time - self.t_start) / (self.t_end - self.t_start);
            bar.set_position((done.clamp(0.0, 1.0) * TICKS as f64) as u64);
            bar.set_message(format!(
                "t = {time:.4e} / {:.4e}, step {step} ({own}{since}), dt {dt:.2e}, {rate:.1} steps/s, ETA {}",
                self.t_end,
                clock(eta)
            ));
        } else if !self.quiet && self.last_log.elapsed() >= self.every {
            self.last_log = Instant::now();
            log::info!(
                "t = {time:.6e} / {:.6e} ({:.1}%), step {step} ({own}{since}), dt {dt:.3e}, {rate:.1} steps/s, ETA {}",
                self.t_end,
                100.0 * time / self.t_end,
                clock(eta)
            );
        }
    }

    pub fn println(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None if !self.quiet => log::info!("{line}"),
            None => {}
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::pace;

    #[test]
    fn a_restart_counts_only_its_own_steps_and_time() {
        // A restart at t = 9 of 10 s that took 100 steps (0.5 s of simulated time) in 2 s:
        // 50 steps/s, and 0.5 s of simulated time left at 0.25 s per second: 2 s to go.
        let (rate, eta) = pace(100, 0.5, 0.5, 2.0);
        assert_eq!(rate, 50.0);
        assert_eq!(eta, Some(2.0));
        assert_eq!(pace(0, 0.0, 1.0, 1.0).1, None);
    }
}
