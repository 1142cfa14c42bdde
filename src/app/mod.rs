//! The commands behind the CLI: preparing a mesh, running a scenario, benchmarking.

pub mod bench;
pub mod example;
pub mod partition;
pub mod plot;
pub mod progress;
pub mod run;
pub mod schema;
pub mod stats;

use crate::mesh::{check::check_and_orient, generate, io, order::hilbert_order, Mesh, Topology};
use crate::partition::files;
use crate::scenario::Scenario;
use anyhow::{bail, Context, Result};
use run::{load_scenario, RunOptions, DEFAULT_CELLS};
use std::path::Path;
use std::time::Instant;

/// A mesh ready for the solver: checked, counter-clockwise, in Hilbert order, with its
/// topology. Cell `c` of `mesh` is global cell id `c`.
pub struct PreparedMesh {
    pub mesh: Mesh,
    pub topo: Topology,
    pub seconds: f64,
    /// [`files::mesh_fingerprint`] of `mesh`, computed on first use (a pass over the whole
    /// mesh that partition files, checkpoints and runs all need).
    fingerprint: std::sync::OnceLock<u64>,
}

impl PreparedMesh {
    pub fn fingerprint(&self) -> u64 {
        *self.fingerprint.get_or_init(|| files::mesh_fingerprint(&self.mesh))
    }
}

pub fn prepare_mesh(mut mesh: Mesh, source: &str) -> Result<PreparedMesh> {
    let clock = Instant::now();
    check_and_orient(&mut mesh).with_context(|| format!("{source}: invalid mesh"))?;
    hilbert_order(&mut mesh);
    let topo = Topology::build(&mesh).with_context(|| format!("{source}: invalid mesh"))?;
    let parts = topo.connected_parts();
    if parts > 1 {
        bail!("{source}: invalid mesh: it has {parts} disconnected parts; a run needs one connected mesh");
    }
    Ok(PreparedMesh { mesh, topo, seconds: clock.elapsed().as_secs_f64(), fingerprint: Default::default() })
}

/// The scenario's mesh: read from its mesh file or triangulated from its domain.
pub fn scenario_mesh(s: &Scenario) -> Result<PreparedMesh> {
    let clock = Instant::now();
    let (mesh, source) = match (&s.mesh, &s.domain) {
        (Some(path), _) => (io::read_mesh(path)?, path.display().to_string()),
        (None, Some(domain)) => (generate::generate(domain, &s.resolution)?, "generated mesh".to_string()),
        (None, None) => bail!("domain: missing; give a domain to triangulate or a mesh file"),
    };
    let mut prepared = prepare_mesh(mesh, &source)?;
    prepared.seconds = clock.elapsed().as_secs_f64();
    Ok(prepared)
}

/// The one error for `--cells` given with a mesh file (directly, or through a scenario's
/// `mesh`), in every command: a mesh file's cells are what they are.
pub fn cells_with_mesh_file(mesh: &Path) -> anyhow::Error {
    anyhow::anyhow!(
        "--cells applies to scenarios that triangulate a domain, not to the mesh file {}: remove --cells",
        mesh.display()
    )
}

/// The mesh of `pycno mesh` and `pycno partition`: a scenario file (`.json`), a mesh file, or
/// with neither the paper's benchmark domain; `cells` (`--cells`) only where a domain is
/// triangulated. Returns the prepared mesh and a description of where it came from.
pub fn input_mesh(input: Option<&Path>, cells: Option<u64>) -> Result<(PreparedMesh, String)> {
    match input {
        Some(p) if p.extension().is_some_and(|e| e == "json") => {
            if cells.is_some() {
                if let Some(m) = Scenario::from_file(p)?.mesh {
                    return Err(cells_with_mesh_file(&m));
                }
            }
            let opts = RunOptions { scenario: Some(p.to_path_buf()), cells, ..Default::default() };
            Ok((scenario_mesh(&load_scenario(&opts)?)?, p.display().to_string()))
        }
        Some(p) => {
            if cells.is_some() {
                return Err(cells_with_mesh_file(p));
            }
            Ok((prepare_mesh(io::read_mesh(p)?, &p.display().to_string())?, p.display().to_string()))
        }
        None => {
            let opts = RunOptions { cells, ..Default::default() };
            let pm = scenario_mesh(&load_scenario(&opts)?)?;
            Ok((pm, format!("paper benchmark ({} cells requested)", cells.unwrap_or(DEFAULT_CELLS))))
        }
    }
}

/// A command-line count (`--cells`, `--ranks`, `--max-steps`, ...): a whole number, with a
/// message that says so for "-1" or "many" (clap's own would call "-1" an unexpected
/// argument).
pub fn count_arg<T: std::str::FromStr>(s: &str) -> Result<T, String> {
    s.trim().parse::<T>().map_err(|_| {
        if s.trim_start().starts_with('-') {
            format!("expected a whole number of 0 or more, found the negative {s}")
        } else {
            format!("expected a whole number, found {s:?}")
        }
    })
}

/// `--threads N`: between 1 and 64 per core of this machine (at least 64, at most 4096);
/// more would only add scheduling overhead, and a typo such as 100000 would start that many
/// threads.
pub fn threads_arg(s: &str) -> Result<usize, String> {
    let n: usize = count_arg(s)?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let most = (64 * cores).clamp(64, 4096);
    if n == 0 || n > most {
        return Err(format!("expected 1 to {most} threads (64 per core, {cores} cores here), found {n}"));
    }
    Ok(n)
}

/// `bench --repeat K`: 1 to 1000 runs per size.
pub fn repeat_arg(s: &str) -> Result<usize, String> {
    let n: usize = count_arg(s)?;
    if !(1..=1000).contains(&n) {
        return Err(format!("expected 1 to 1000 runs per size (the median is reported), found {n}"));
    }
    Ok(n)
}
