//! Progress of a run: a bar with simulated time, steps/s and ETA on a terminal; a plain
//! log line every few seconds otherwise (batch jobs, CI, pipes).

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

pub struct Progress {
    bar: Option<ProgressBar>,
    t_end: f64,
    start: Instant,
    last_log: Instant,
    quiet: bool,
}

const TICKS: u64 = 10_000;

impl Progress {
    pub fn new(t_start: f64, t_end: f64, quiet: bool) -> Progress {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::new(TICKS);
            bar.set_style(
                ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {msg} ETA {eta}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar.set_position((t_start / t_end * TICKS as f64) as u64);
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        let now = Instant::now();
        Progress { bar, t_end, start: now, last_log: now, quiet }
    }

    pub fn step(&mut self, step: u64, time: f64, dt: f64) {
        let rate = step as f64 / self.start.elapsed().as_secs_f64().max(1e-9);
        if let Some(bar) = &self.bar {
            bar.set_position(((time / self.t_end).min(1.0) * TICKS as f64) as u64);
            bar.set_message(format!(
                "t = {time:.4e} / {:.4e}, step {step}, dt {dt:.2e}, {rate:.1} steps/s",
                self.t_end
            ));
        } else if !self.quiet && self.last_log.elapsed() >= Duration::from_secs(5) {
            self.last_log = Instant::now();
            log::info!(
                "t = {time:.6e} / {:.6e} ({:.1}%), step {step}, dt {dt:.3e}, {rate:.1} steps/s",
                self.t_end,
                100.0 * time / self.t_end
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
