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

impl PreparedMesh {
    /// A rank's part of a mesh read from its partition files: `mesh` its owned cells, `topo`
    /// its local topology (owned and receive-block cells), `fingerprint` the global mesh's.
    /// Cell `c` is local cell `c`, not global cell `c`.
    pub fn rank_piece(mesh: Mesh, topo: Topology, fingerprint: u64, seconds: f64) -> PreparedMesh {
        let f = std::sync::OnceLock::new();
        let _ = f.set(fingerprint);
        PreparedMesh { mesh, topo, seconds, fingerprint: f }
    }
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

/// Identity of a scenario's mesh source, known without meshing: for a mesh file, CRC-32 of
/// its bytes (and of the `.ele` beside a `.node`) with its length; for a triangulated domain,
/// CRC-32 of the domain and of the resolution as JSON. A partition records it, and a run that
/// reads only its rank's files (and so cannot compute the mesh's fingerprint) compares it
/// with its scenario's, so that a partition of another mesh is refused before anything runs.
pub fn mesh_source_id(s: &Scenario) -> Result<u64> {
    match (&s.mesh, &s.domain) {
        (Some(path), _) => mesh_file_id(path),
        (None, Some(domain)) => {
            let d = serde_json::to_vec(domain)?;
            let r = serde_json::to_vec(&s.resolution)?;
            Ok((u64::from(crc32fast::hash(&d)) << 32) | u64::from(crc32fast::hash(&r)))
        }
        (None, None) => bail!("domain: missing; give a domain to triangulate or a mesh file"),
    }
}

/// [`mesh_source_id`] of a mesh file, read in blocks (never whole: it may be larger than a
/// rank's memory).
pub fn mesh_file_id(path: &Path) -> Result<u64> {
    use std::io::Read;
    let mut files = vec![path.to_path_buf()];
    if path.extension().is_some_and(|e| e == "node") {
        files.push(path.with_extension("ele"));
    }
    let (mut crc, mut len) = (crc32fast::Hasher::new(), 0u64);
    for f in files {
        let mut file =
            crate::util::files::open_regular(&f).with_context(|| format!("cannot read mesh file {}", f.display()))?;
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = file.read(&mut buf).with_context(|| format!("cannot read mesh file {}", f.display()))?;
            if n == 0 {
                break;
            }
            crc.update(&buf[..n]);
            len += n as u64;
        }
    }
    Ok((len << 32) | u64::from(crc.finalize()))
}

/// [`mesh_source_id`] of `pycno partition`'s and `pycno mesh`'s input (see [`input_mesh`]).
pub fn input_source_id(input: Option<&Path>, cells: Option<u64>) -> Result<u64> {
    match input {
        Some(p) if p.extension().is_some_and(|e| e == "json") => {
            let opts = RunOptions { scenario: Some(p.to_path_buf()), cells, ..Default::default() };
            mesh_source_id(&load_scenario(&opts)?)
        }
        Some(p) => mesh_file_id(p),
        None => mesh_source_id(&load_scenario(&RunOptions { cells, ..Default::default() })?),
    }
}

/// The `physics.order` of `pycno partition`'s input: a scenario's (the paper's benchmark's
/// with no input), else the default one (a mesh file, whose runs' scenarios most often leave
/// the order to its default).
pub fn input_order(input: Option<&Path>, cells: Option<u64>) -> Result<u32> {
    match input {
        Some(p) if p.extension().is_none_or(|e| e != "json") => Ok(crate::physics::model::DEFAULT_ORDER),
        _ => {
            let opts = RunOptions { scenario: input.map(Path::to_path_buf), cells, ..Default::default() };
            Ok(load_scenario(&opts)?.physics.order)
        }
    }
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
