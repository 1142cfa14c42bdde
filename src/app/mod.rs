//! The commands behind the CLI: preparing a mesh, running a scenario, benchmarking.

pub mod bench;
pub mod partition;
pub mod progress;
pub mod run;
pub mod stats;

use crate::mesh::{check::check_and_orient, generate, io, order::hilbert_order, Mesh, Topology};
use crate::partition::files;
use crate::scenario::Scenario;
use anyhow::{bail, Context, Result};
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
