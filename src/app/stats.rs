//! Run statistics: printed at the end of a run and written as `stats.json` beside the output.

use crate::solver::exchange::{ExchangeMode, PhaseTimes};
use serde::Serialize;

#[derive(Clone, Debug, Default, Serialize)]
pub struct RunStats {
    pub name: String,
    pub version: String,
    pub cells: usize,
    pub edges: usize,
    pub steps: u64,
    pub t_end: f64,
    /// The smallest time step the CFL condition gave (steps cut short to land on an output
    /// time or the end are not counted).
    pub dt_min: f64,
    pub dt_max: f64,
    /// The smallest step cut short to land on an output time or the end, and how many were.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dt_min_clipped: Option<f64>,
    pub clipped_steps: u64,
    pub wall_seconds: f64,
    pub stepping_seconds: f64,
    pub mesh_seconds: f64,
    /// Seconds from the command's start to the first step, on each rank (issue 22: they
    /// fall with the rank count when each rank reads only its part of a partition).
    #[serde(default)]
    pub setup_seconds_per_rank: Vec<f64>,
    /// CPU seconds each rank used until its first step (`/proc/self/stat`): its set-up work,
    /// whatever its share of the cores.
    #[serde(default)]
    pub setup_cpu_seconds_per_rank: Vec<f64>,
    /// Peak resident memory of each rank's process (`VmHWM` of `/proc/self/status`), bytes;
    /// 0 where it cannot be read.
    #[serde(default)]
    pub peak_memory_per_rank: Vec<u64>,
    pub output_seconds: f64,
    pub cell_updates_per_second: f64,
    pub mass_layer1_start: f64,
    pub mass_layer1_end: f64,
    pub mass_layer2_start: f64,
    pub mass_layer2_end: f64,
    /// Mass (volume, m³) through each tagged open boundary, per layer, in and out.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub boundaries: Vec<TagBudget>,
    /// start + in - out - end per layer (zero to rounding), with open boundaries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mass_balance_layer1: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mass_balance_layer2: Option<f64>,
    /// Edge evaluations that used the non-hyperbolic fallback flux ...
    pub hyperbolicity_fallbacks: u64,
    /// ... as a fraction of all edge evaluations (steps times edges).
    pub hyperbolicity_fallback_fraction: f64,
    pub backend: String,
    pub device: String,
    pub precision: String,
    pub threads: usize,
    pub ranks: usize,
    /// Where the run wrote its output.
    #[serde(skip)]
    pub output_dir: std::path::PathBuf,
    /// Why the run stopped before its end, when a signal stopped it ("interrupted by
    /// SIGINT (Ctrl-C) after step 120 (t = 3.5 s)"): its figures cover the run up to there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<String>,
    /// The checkpoint step this run resumed from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restarted_from: Option<u64>,
    /// The exchange loop of a multi-rank run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exchange: Option<ExchangeMode>,
    /// What carried the halo of a multi-rank run: "host" (pinned copies and MPI) or the
    /// device-to-device engine ("nccl 2.28.3").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_exchange: Option<String>,
    /// Seconds per phase of the step loop, the mean over ranks.
    pub phases: PhaseTimes,
    /// The same per rank (multi-rank runs).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub phases_per_rank: Vec<PhaseTimes>,
    pub outputs: usize,
    /// Order-independent fingerprint of the final state (`run::state_checksum`): equal for
    /// runs that agree bit for bit, whatever the rank count.
    pub state_checksum: String,
    /// Per-kernel times (GPU, with `bench --profile`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kernels: Vec<KernelStat>,
    /// Measured device-to-device copy bandwidth, bytes read + written per second.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub copy_bandwidth: Option<f64>,
}

/// One boundary tag's mass budget (volumes in m³ since the start of the run).
#[derive(Clone, Debug, Default, Serialize)]
pub struct TagBudget {
    pub tag: String,
    pub kind: String,
    pub layer1_in: f64,
    pub layer1_out: f64,
    pub layer2_in: f64,
    pub layer2_out: f64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct KernelStat {
    pub name: String,
    pub seconds: f64,
    pub launches: u64,
    /// Bytes the kernel must move per launch (layout::kernel_bytes).
    pub bytes_per_launch: f64,
    /// bytes_per_launch * launches / seconds.
    pub bandwidth: f64,
}

impl RunStats {
    pub fn summary(&self) -> String {
        let mut text = self.base_summary();
        for b in &self.boundaries {
            text += &format!(
                "\nboundary {} ({}): layer 1 in {:.6e} out {:.6e}, layer 2 in {:.6e} out {:.6e}",
                b.tag, b.kind, b.layer1_in, b.layer1_out, b.layer2_in, b.layer2_out
            );
        }
        if let (Some(a), Some(b)) = (self.mass_balance_layer1, self.mass_balance_layer2) {
            text += &format!("\nmass balance (start + in - out - end): layer 1 {a:.3e}, layer 2 {b:.3e}");
        }
        text
    }

    fn base_summary(&self) -> String {
        let rel = |a: f64, b: f64| if a != 0.0 { (b - a) / a } else { b - a };
        format!(
            "{} cells, {} edges, {} steps to t = {} (CFL dt {:.3e} .. {:.3e}{})\n\
             stepping {:.3} s ({:.3e} cell-updates/s on {} threads, {}), mesh {:.3} s, output {:.3} s, wall {:.3} s\n\
             mass layer 1: {:.12e} -> {:.12e} (relative change {:.2e})\n\
             mass layer 2: {:.12e} -> {:.12e} (relative change {:.2e})\n\
             hyperbolicity fallbacks: {} edge evaluations ({:.2e} of all)",
            self.cells,
            self.edges,
            self.steps,
            self.t_end,
            self.dt_min,
            self.dt_max,
            match self.dt_min_clipped {
                Some(c) =>
                    format!("; {} steps cut short to land on output times, the shortest {c:.3e}", self.clipped_steps),
                None => String::new(),
            },
            self.stepping_seconds,
            self.cell_updates_per_second,
            self.threads,
            self.device,
            self.mesh_seconds,
            self.output_seconds,
            self.wall_seconds,
            self.mass_layer1_start,
            self.mass_layer1_end,
            rel(self.mass_layer1_start, self.mass_layer1_end),
            self.mass_layer2_start,
            self.mass_layer2_end,
            rel(self.mass_layer2_start, self.mass_layer2_end),
            self.hyperbolicity_fallbacks,
            self.hyperbolicity_fallback_fraction
        )
    }
}
