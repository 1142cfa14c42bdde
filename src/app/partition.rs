//! `pycno partition`: partition a mesh for a multi-rank run and write the partition
//! directory (manifest, one file per rank, a VTK view), or check one (`--check`).

use super::{input_mesh, PreparedMesh};
use crate::partition::files::{self, Manifest, Timings};
use crate::partition::geometry::{self, RankGeometry};
use crate::partition::stats::Stats;
use crate::partition::{self, metis, verify::verify, view, Partitioned, Submesh};
use anyhow::{bail, Context, Result};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(clap::Args, Clone, Debug)]
pub struct PartitionArgs {
    /// Scenario file (.json) or mesh file (.msh, .node/.ele, .pmsh); none: the paper's
    /// benchmark domain, as `pycno run`.
    pub input: Option<PathBuf>,
    /// Number of ranks (parts): at least 1, at most the number of cells.
    #[arg(long, required_unless_present = "check", allow_negative_numbers = true, value_parser = crate::app::count_arg::<usize>)]
    pub ranks: Option<usize>,
    /// Partition directory to write (created if missing; an earlier partition there is
    /// replaced).
    #[arg(long, required_unless_present = "check", conflicts_with = "check")]
    pub out: Option<PathBuf>,
    /// Target number of triangles (scenarios that triangulate a domain).
    #[arg(long, allow_negative_numbers = true, value_parser = crate::app::count_arg::<u64>)]
    pub cells: Option<u64>,
    /// Check the partition directory DIR against the mesh instead of writing one: every
    /// file's checksum, version, mesh and rank count, and the blocks' consistency.
    #[arg(long, value_name = "DIR")]
    pub check: Option<PathBuf>,
    /// Take the cell -> rank map from FILE instead of METIS: one rank per cell in global cell
    /// order (the order of `pycno mesh --out`), whitespace-separated, as gpmetis and Chaco
    /// write it.
    #[arg(long, value_name = "FILE", conflicts_with = "check")]
    pub owners: Option<PathBuf>,
    /// Write no partition.vtu (it is about 65 bytes per cell).
    #[arg(long)]
    pub no_vtk: bool,
    /// The `physics.order` of the runs the partition is for: 2 gives each rank two rings of
    /// receive cells (it then reconstructs the first ring itself: one exchange per stage);
    /// 1, one ring (a partition for first order). Default: the scenario's `physics.order`;
    /// for a mesh file the default order, 2. A first-order run also runs on a partition for
    /// order 2, exchanging the second ring for nothing; a second-order run on several ranks
    /// needs one for order 2.
    #[arg(long, allow_negative_numbers = true, value_parser = order_arg, conflicts_with = "check")]
    pub order: Option<u32>,
}

/// `--order N`: 1 or 2. (Negative numbers reach here too, instead of clap's tip to write
/// `-- -1`, which is no answer for an option's value.)
fn order_arg(s: &str) -> Result<u32, String> {
    match s.trim() {
        "1" => Ok(1),
        "2" => Ok(2),
        _ => Err(format!("expected 1 or 2 (the physics.order of the runs), found {s}")),
    }
}

/// Partition `pm` into `ranks`, with `rings` rings of receive cells
/// ([`partition::rings_for_order`]), and write the directory `out`: rank files,
/// `partition.vtu`, then the manifest (last, so its presence means the directory is
/// complete).
/// `started` is when the command began, for the manifest's `seconds`; `source_id` is the
/// mesh source's identity ([`super::mesh_source_id`]), carried in the rank files.
#[allow(clippy::too_many_arguments)]
pub fn write_partition(
    pm: &PreparedMesh,
    source: &str,
    source_id: u64,
    ranks: usize,
    rings: u32,
    out: &Path,
    vtk: bool,
    started: Instant,
    owners: Option<&Path>,
) -> Result<(Manifest, Partitioned)> {
    check_ranks(ranks, pm.topo.num_cells())?;
    let fingerprint = pm.fingerprint();
    let owner = owners.map(|f| partition::owners::read_owners(f, pm.topo.num_cells(), ranks)).transpose()?;
    let method = match owners {
        Some(f) => format!("cell owners from {}", f.display()),
        None => "METIS k-way on the dual graph".into(),
    };
    let part = partition::partition_with(&pm.topo, owner, ranks, fingerprint, rings)?;
    let clock = Instant::now();
    files::begin_write(out)?;
    // Each rank's two files: its cell and edge orders, and its geometry (so that a run
    // reads only these and never builds the global mesh).
    let (tags, segments) = (geometry::tag_lengths(&pm.topo), geometry::segment_tags(&pm.mesh));
    let sizes: Vec<u64> = part
        .submeshes
        .par_iter()
        .map(|s| {
            let g = RankGeometry::build(&pm.mesh, &pm.topo, s, source_id, &tags, &segments)?;
            // `file_bytes` in the statistics stays the rank file's size.
            geometry::write_geometry(out, &g)?;
            files::write_rank(out, s)
        })
        .collect::<Result<_>>()?;
    files::remove_stale(out, ranks as u32)?;
    let vtu = out.join(view::FILE);
    if vtk {
        view::write_partition_vtu(&vtu, &pm.mesh, &part.submeshes)?;
    } else if vtu.exists() {
        // A view of an earlier partition would now be wrong.
        std::fs::remove_file(&vtu).with_context(|| format!("cannot remove the stale {}", vtu.display()))?;
    }
    let mut stats = Stats::compute(&pm.topo, &part.owner, &part.submeshes);
    if stats.empty_ranks > 0 {
        log::warn!(
            "METIS left {} of {ranks} ranks without cells: too many ranks for {} cells",
            stats.empty_ranks,
            pm.topo.num_cells()
        );
    }
    for (r, bytes) in stats.per_rank.iter_mut().zip(sizes) {
        r.file_bytes = bytes;
    }
    let manifest = Manifest {
        format: files::FORMAT_NAME.into(),
        format_version: files::version_of(rings),
        mesh_fingerprint: files::fingerprint_hex(fingerprint),
        source: source.into(),
        method,
        rank_geometry: true,
        mesh_source: files::fingerprint_hex(source_id),
        peak_memory: crate::util::memory::peak_resident().unwrap_or(0),
        metis_seed: metis::SEED.into(),
        seconds: started.elapsed().as_secs_f64(),
        timings: Timings {
            mesh: pm.seconds,
            metis: part.metis_seconds,
            submeshes: part.submesh_seconds,
            write: clock.elapsed().as_secs_f64(),
        },
        stats,
    };
    files::write_manifest(out, &manifest)?;
    Ok((manifest, part))
}

fn check_ranks(ranks: usize, cells: usize) -> Result<()> {
    if ranks == 0 {
        bail!("--ranks: expected at least 1 rank, found 0");
    }
    if ranks > cells {
        bail!("--ranks {ranks}: the mesh has only {cells} cells, and every rank needs at least one");
    }
    if u32::try_from(ranks).is_err() {
        bail!("--ranks {ranks}: too many ranks");
    }
    Ok(())
}

/// Read the partition in `dir` back (every file) and check it against `pm`.
pub fn check_partition(dir: &Path, pm: &PreparedMesh) -> Result<(Manifest, Vec<Submesh>)> {
    let m = files::read_manifest(dir)?;
    let fingerprint = pm.fingerprint();
    let made_for = files::manifest_fingerprint(&m)?;
    if made_for != fingerprint {
        bail!(
            "{}: a partition of another mesh (fingerprint {}, {} cells; this mesh: {}, {} cells)",
            dir.display(),
            m.mesh_fingerprint,
            m.stats.cells,
            files::fingerprint_hex(fingerprint),
            pm.topo.num_cells()
        );
    }
    let ranks = u32::try_from(m.stats.ranks).context("rank count out of range in the manifest")?;
    let subs: Vec<Submesh> =
        (0..ranks).into_par_iter().map(|r| files::read_rank(dir, r, fingerprint, ranks)).collect::<Result<_>>()?;
    verify(&pm.topo, &subs).with_context(|| format!("{}: inconsistent partition", dir.display()))?;
    if m.rank_geometry {
        let source_id = files::manifest_source(&m)?;
        let (tags, segments) = (geometry::tag_lengths(&pm.topo), geometry::segment_tags(&pm.mesh));
        subs.par_iter().try_for_each(|s| {
            let expected = RankGeometry::build(&pm.mesh, &pm.topo, s, source_id, &tags, &segments)?;
            if geometry::read_geometry(dir, s.rank)? != expected {
                bail!(
                    "{}: the geometry of rank {} differs from this mesh's: partition again",
                    geometry::geometry_file(dir, s.rank).display(),
                    s.rank
                );
            }
            Ok(())
        })?;
    }
    Ok((m, subs))
}

/// The command: partition (`--ranks`, `--out`) or check (`--check`).
pub fn command(args: &PartitionArgs) -> Result<()> {
    let started = Instant::now();
    if args.ranks == Some(0) {
        check_ranks(0, 0)?;
    }
    let (pm, source) = input_mesh(args.input.as_deref(), args.cells)?;
    crate::say!("mesh: {source}: {} cells, {} edges ({:.2} s)", pm.topo.num_cells(), pm.topo.num_edges(), pm.seconds)?;
    if let Some(dir) = &args.check {
        let (m, subs) = check_partition(dir, &pm)?;
        if let Some(r) = args.ranks.filter(|&r| r != m.stats.ranks) {
            bail!("--ranks {r}, but {} holds a partition into {} ranks", dir.display(), m.stats.ranks);
        }
        // The rings the scenario's order needs, as `run` checks them (a one-ring partition
        // passed here and was then refused by the run of a second-order scenario).
        let order = match args.order {
            Some(o) => o,
            None => super::input_order(args.input.as_deref(), args.cells)?,
        };
        if let Some(s) = subs.first() {
            super::run::part::check_rings(dir, s, order, false)?;
        }
        crate::say!("partition {} ok: {} ranks, every file checked against this mesh", dir.display(), m.stats.ranks)?;
        crate::say_raw!("{}", m.stats.summary())?;
        return Ok(());
    }
    let (Some(ranks), Some(out)) = (args.ranks, args.out.as_deref()) else {
        bail!("give --ranks N and --out DIR (or --check DIR)");
    };
    let source_id = super::input_source_id(args.input.as_deref(), args.cells)?;
    let order = match args.order {
        Some(o) => o,
        None => super::input_order(args.input.as_deref(), args.cells)?,
    };
    let rings = partition::rings_for_order(order);
    let owners = args.owners.as_deref();
    let (m, _) = write_partition(&pm, &source, source_id, ranks, rings, out, !args.no_vtk, started, owners)?;
    let t = &m.timings;
    crate::say!(
        "partitioned into {ranks} ranks in {:.2} s (METIS {:.2} s, submeshes {:.2} s, writing {:.2} s; {:.2} s in all; peak memory {:.0} MB)",
        t.metis + t.submeshes + t.write,
        t.metis,
        t.submeshes,
        t.write,
        m.seconds,
        m.peak_memory as f64 / 1e6
    )?;
    crate::say_raw!("{}", m.stats.summary())?;
    crate::say!(
        "wrote {} ({} rank files, {} bytes; {}{})",
        out.display(),
        ranks,
        m.stats.per_rank.iter().map(|r| r.file_bytes).sum::<u64>(),
        files::MANIFEST,
        if args.no_vtk { String::new() } else { format!("; {} for ParaView", view::FILE) }
    )?;
    Ok(())
}
