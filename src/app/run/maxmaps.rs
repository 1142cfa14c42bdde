//! The max maps of `output.max_maps` (an observer of the step loop): the backend keeps the
//! per-cell extremes of `physics::extremes` on its own device and folds every step's state
//! into them (one small kernel a step on a GPU, no copy to the host); they are read back
//! only to be written, at checkpoints (so that a restart continues them) and once at the end
//! as `<name>_max.vtu` (`.pvtu` and pieces on several ranks) and into the NetCDF file.
//!
//! Every step, not every K steps: a maximum between two looks would be missed, and the
//! fold reads the state once and the maps once (about 100 bytes a cell on a float32 run,
//! against the step's roughly 1000), so it costs a few percent of a step.

use super::observers::{Observer, RunContext, StepDone};
use crate::comm::{agree, Comm};
use crate::output::extremes as file;
use crate::physics::extremes::{
    Arrival, E_ARRIVAL, E_INTERFACE_MAX, E_INTERFACE_MIN, E_SPEED1_MAX, E_SPEED2_MAX, E_SURFACE_MAX, WIDTH,
};
use crate::scenario::{ArrivalOf, MaxMaps as Settings};
use crate::solver::Backend;
use anyhow::Result;
use std::path::Path;

/// The stem of the maps' file: `<name>_max.vtu`.
pub const STEM: &str = "max";

pub fn arrival(m: &Settings) -> Arrival {
    Arrival { threshold: m.arrival_threshold, surface: m.arrival_of == ArrivalOf::Surface }
}

/// Start the backend's extremes: from its state, or on a restart from the checkpoint in
/// `resume` (its files hold every cell by global id; this rank takes its own).
pub fn begin(
    comm: &dyn Comm,
    b: &mut dyn Backend,
    m: &Settings,
    resume: Option<(&Path, usize, u64, usize)>,
    global: &[u32],
) -> Result<()> {
    let from = match resume {
        Some((dir, ranks, step, cells)) => {
            let all = agree(comm, file::read_all(dir, ranks, step, cells))?;
            Some(global.iter().map(|&g| all[g as usize]).collect::<Vec<_>>())
        }
        None => None,
    };
    agree(comm, b.extremes_start(arrival(m), from.as_deref()))
}

/// The maps' arrays from the extremes and the depth of each cell: elevations are
/// thicknesses minus the depth (see `physics::extremes`).
pub fn arrays(e: &[[f64; WIDTH]], depth: &[f64]) -> Vec<(&'static str, Vec<f64>)> {
    let col = |k: usize| e.iter().map(|r| r[k]).collect::<Vec<f64>>();
    let less_depth = |k: usize| e.iter().zip(depth).map(|(r, d)| r[k] - d).collect::<Vec<f64>>();
    vec![
        ("max_free_surface_elevation", less_depth(E_SURFACE_MAX)),
        ("max_interface_elevation", less_depth(E_INTERFACE_MAX)),
        ("min_interface_elevation", less_depth(E_INTERFACE_MIN)),
        ("max_speed1", col(E_SPEED1_MAX)),
        ("max_speed2", col(E_SPEED2_MAX)),
        ("arrival_time", col(E_ARRIVAL)),
    ]
}

/// Folds every step into the maps.
pub struct MaxMaps;

impl Observer for MaxMaps {
    /// The maps fold in every step's state (the host drives every step; folding them into
    /// the device-resident steps' graphs is left for later).
    fn every_step(&self) -> bool {
        true
    }
    fn step(&mut self, run: &mut RunContext, b: &mut dyn Backend, done: StepDone) -> Result<()> {
        agree(run.comm, b.extremes_fold(done.time))
    }
}

/// Write the maps (collective); returns the files written.
pub fn write(run: &RunContext, b: &mut dyn Backend) -> Result<Vec<String>> {
    let e = agree(run.comm, b.extremes())?;
    run.series.write_maps(run.comm, STEM, &run.piece, arrays(&e, run.piece.depth))
}
