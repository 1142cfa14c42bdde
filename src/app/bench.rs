//! `pycno bench`: the paper's benchmark, or with `--study` the study benchmark (a strait-like
//! channel with tide, open end, friction, Coriolis, gauges and max maps:
//! `Scenario::study_benchmark`), at several cell counts, stepping time only (mesh generation,
//! set-up and output excluded), median of repeated runs.

use super::run::{choose_backend, simulate, stored_cells, BackendChoice, Precision, RunOptions, Setup};
use super::scenario_mesh;
use super::stats::RunStats;
use crate::comm::Single;
use crate::scenario::{initial, Scenario};
use anyhow::Result;

#[derive(Clone, Debug)]
pub struct BenchOptions {
    pub cells: Vec<u64>,
    pub precision: Precision,
    pub repeat: usize,
    pub t_end: f64,
    pub backend: BackendChoice,
    /// Per-kernel times and bandwidth (GPU).
    pub profile: bool,
    /// `physics.order` of the benchmark's scenario (1 or 2).
    pub order: u32,
    /// The study benchmark instead of the paper's.
    pub study: bool,
}

/// The longest simulated time `bench` runs: the benchmark times the paper's first tenth of a
/// second; a longer run is a study for `pycno run`, which shows its progress and can be
/// stopped and resumed, and a huge `--t-end` would otherwise keep `bench` busy for ever.
pub const MAX_T_END: f64 = 100.0;
/// The same for the study benchmark, whose waves are slower: a day.
pub const MAX_T_END_STUDY: f64 = 86400.0;

/// The simulated time a benchmark runs when none is asked: the paper's first tenth of a
/// second, or ten minutes of the study (about 750 steps at 10^6 cells).
pub fn default_t_end(study: bool) -> f64 {
    if study {
        600.0
    } else {
        0.1
    }
}

impl BenchOptions {
    pub fn validate(&self) -> Result<()> {
        let max = if self.study { MAX_T_END_STUDY } else { MAX_T_END };
        if !(self.t_end > 0.0 && self.t_end <= max) {
            anyhow::bail!(
                "bench --t-end (the benchmark's time.end): expected a simulated time in (0, {max}] seconds, found {:?} (for longer runs use pycno run)",
                self.t_end
            );
        }
        Ok(())
    }
}

pub fn bench(opts: &BenchOptions, mut on_result: impl FnMut(&RunStats) -> Result<()>) -> Result<Vec<RunStats>> {
    opts.validate()?;
    let choice = choose_backend(opts.backend, false)?;
    let mut all = Vec::new();
    for &n in &opts.cells {
        // The study's gauges and max maps are written to a folder of its own, removed after.
        let out = std::env::temp_dir().join(format!("pycno-bench-study-{}", std::process::id()));
        let mut s = if opts.study { Scenario::study_benchmark(n, &out)? } else { Scenario::paper_benchmark(n) };
        s.time.end = opts.t_end;
        s.physics.order = opts.order;
        s.validate()?;
        crate::util::memory::check_run_fits(n as usize, opts.precision.float_bytes(), 1)?;
        let pm = scenario_mesh(&s)?;
        let (depth, state) = initial::evaluate(&s, &pm.topo.cell_centroid)?;
        s.physics.resolve_dry_tolerance(super::run::deepest_water(&Single, &state));
        let cells = stored_cells(&s, &depth, &state);
        let ro = RunOptions {
            no_vtk: true,
            quiet: true,
            precision: opts.precision,
            kernel_timing: opts.profile,
            ..Default::default()
        };
        let boundaries = s.boundary_table(&pm.mesh, &pm.topo)?;
        let mut runs = Vec::new();
        for _ in 0..opts.repeat.max(1) {
            let setup = Setup { boundaries: boundaries.clone(), ..Setup::new(&s, &pm, &depth, &cells) };
            let st = simulate(&setup, &ro, choice, &Single, None);
            if opts.study {
                let _ = std::fs::remove_dir_all(&out);
            }
            runs.push(st?);
        }
        runs.sort_by(|a, b| a.stepping_seconds.total_cmp(&b.stepping_seconds));
        let mut st = runs.swap_remove(runs.len() / 2);
        st.mesh_seconds = pm.seconds;
        st.wall_seconds = st.stepping_seconds;
        if opts.profile && choice == BackendChoice::Cuda {
            st.copy_bandwidth = Some(copy_bandwidth()?);
        }
        on_result(&st)?;
        all.push(st);
    }
    Ok(all)
}

pub fn table_header() -> String {
    format!(
        "{:>9} {:>9} {:>6} {:>10} {:>14} {:>14} {:>8}",
        "cells", "edges", "steps", "seconds", "cell-upd/s", "per core", "mesh s"
    )
}

pub fn table_row(s: &RunStats) -> String {
    format!(
        "{:>9} {:>9} {:>6} {:>10.4} {:>14.4e} {:>14.4e} {:>8.2}",
        s.cells,
        s.edges,
        s.steps,
        s.stepping_seconds,
        s.cell_updates_per_second,
        s.cell_updates_per_second / s.threads.max(1) as f64,
        s.mesh_seconds
    )
}

/// Device-to-device copy bandwidth of GPU 0 (2 GiB copied, median of 7).
fn copy_bandwidth() -> Result<f64> {
    crate::solver::cuda::copy_bandwidth(0, 1 << 31)
}

/// Per-kernel lines for a profiled run: time per launch, bytes, achieved bandwidth, and the
/// whole step against the bytes-moved floor (each kernel counted as often per step as it was
/// launched: the edge pass and the update twice a step at second order).
pub fn profile_rows(s: &RunStats) -> Vec<String> {
    let mut rows = Vec::new();
    let bw = s.copy_bandwidth.unwrap_or(f64::NAN);
    let (mut step_s, mut step_bytes) = (0.0, 0.0);
    let steps = s.steps.max(1) as f64;
    for k in &s.kernels {
        let per = k.seconds / k.launches.max(1) as f64;
        step_s += k.seconds / steps;
        step_bytes += k.bytes_per_launch * k.launches as f64 / steps;
        rows.push(format!(
            "    {:<11} {:>9.4} ms/launch {:>10.2} MB {:>8.1} GB/s {:>5.1}% of copy",
            k.name,
            per * 1e3,
            k.bytes_per_launch / 1e6,
            k.bandwidth / 1e9,
            100.0 * k.bandwidth / bw
        ));
    }
    if !s.kernels.is_empty() {
        let floor = step_bytes / bw;
        let wall = s.stepping_seconds / s.steps.max(1) as f64;
        rows.push(format!(
            "    step        {:>9.4} ms in kernels, {:.4} ms wall, floor {:.4} ms ({:.2} MB at {:.0} GB/s copy): wall/floor {:.2}",
            step_s * 1e3,
            wall * 1e3,
            floor * 1e3,
            step_bytes / 1e6,
            bw / 1e9,
            wall / floor
        ));
    }
    rows
}
