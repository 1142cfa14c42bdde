//! Checkpoints during a run (an observer of the step loop) and restarts from them.
//!
//! Every rank writes its cells by global id; rank 0 then writes `meta.json` (the scenario,
//! where the run stood, and what the run's statistics carry over) and prunes old
//! checkpoints. A restart reads them on any rank count and backend.

use super::observers::{Observer, RunContext, RunRecord, StepDone};
use super::options::{apply_overrides, Precision, RunOptions};
use crate::app::PreparedMesh;
use crate::comm::{agree, Comm};
use crate::output::checkpoint;
use crate::partition::files;
use crate::physics::StoredCell;
use crate::scenario::Scenario;
use crate::solver::Backend;
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The checkpoint to resume (its `meta` says where the run stood) and its scenario.
pub struct Restart {
    pub dir: PathBuf,
    pub meta: checkpoint::Meta,
    pub scenario: Scenario,
    /// The output directory of the run that wrote the checkpoint, when this run writes to
    /// another one (`--out`): the earlier frames stay there (the new `.pvd` refers to them by
    /// relative paths) and the earlier gauge rows are read from there.
    pub earlier_output: Option<PathBuf>,
}

/// The checkpoint to resume, and its scenario with the command-line options that make sense
/// on a restart (a later `--t-end`, `--output-interval`, `--out`).
pub fn load_restart(path: &Path, opts: &RunOptions) -> Result<Restart> {
    if opts.scenario.is_some() || opts.cells.is_some() {
        bail!("--restart takes the scenario and the mesh from the checkpoint: give no scenario file and no --cells");
    }
    let dir = checkpoint::locate(path)?;
    let meta = checkpoint::read_meta(&dir)?;
    let precision = opts.precision.name();
    if meta.precision != precision {
        bail!(
            "checkpoint {} holds a {} run: restart it with --precision {}",
            dir.display(),
            meta.precision,
            meta.precision
        );
    }
    let mut s = Scenario::from_json(&meta.scenario.to_string())
        .with_context(|| format!("checkpoint {}: its scenario", dir.display()))?;
    // A checkpoint written while the default order was 1 holds `physics.order` only where it
    // was 2: where it is missing the run was at first order, and goes on at first order.
    if meta.scenario.get("physics").and_then(|p| p.get("order")).is_none() {
        s.physics.order = 1;
    }
    if let Some(t) = opts.t_end.filter(|&t| t <= meta.time) {
        bail!("--t-end {t}: the checkpoint {} is already at t = {}", dir.display(), meta.time);
    }
    let mut earlier = PathBuf::from(meta.scenario["output"]["dir"].as_str().unwrap_or(""));
    if opts.out.is_none() {
        if let Some(copy) = copied_output(&dir, &earlier)? {
            log::info!(
                "checkpoint {} lies in {}, a copy of the output directory {} of the run that wrote it: the restart \
                 writes there (give --out to write elsewhere)",
                dir.display(),
                copy.display(),
                earlier.display()
            );
            s.output.dir = copy.clone();
            earlier = copy;
        }
    }
    apply_overrides(&mut s, opts)?;
    if opts.checkpoint_every.is_some() || opts.checkpoint_seconds.is_some() {
        let root = opts.checkpoint_dir.clone().unwrap_or_else(|| s.output.dir.join("checkpoints"));
        refuse_other_checkpoints(&dir, &root)?;
    }
    let mut meta = meta;
    let earlier_output = moved_output(&earlier, &s.output.dir, &mut meta.frames)
        .with_context(|| format!("--restart {} --out {}", dir.display(), s.output.dir.display()))?;
    Ok(Restart { dir, meta, scenario: s, earlier_output })
}

/// The output directory a checkpoint lies in when it is not `recorded` (the one the run that
/// wrote it recorded): `OUT/checkpoints/step_N` of an `OUT` whose list of outputs is that
/// run's, i.e. a copy (or a move) of its output directory. A restart without `--out` goes on
/// there, and not in the directory it was copied from, whose files and checkpoints it would
/// otherwise replace and prune (issue 46).
fn copied_output(dir: &Path, recorded: &Path) -> Result<Option<PathBuf>> {
    let Ok(root) = std::fs::canonicalize(dir.join("..")) else { return Ok(None) };
    let (Some(out), Some("checkpoints")) = (root.parent(), root.file_name().and_then(|n| n.to_str())) else {
        return Ok(None);
    };
    if std::fs::canonicalize(recorded).is_ok_and(|r| r == out) {
        return Ok(None);
    }
    let id = checkpoint::run_id(dir)?;
    let ours = crate::output::manifest::inspect(out, &id)? == crate::output::manifest::Before::ThisRun;
    Ok(ours.then(|| out.to_path_buf()))
}

/// A restart from the checkpoint `dir` that would write its checkpoints into `root`: refused
/// when `root` is another directory than the one `dir` lies in and already holds complete
/// checkpoints. They are another history (another run's, or a copy's of this one), which
/// this run's pruning would delete and a later restart could mistake for its own.
fn refuse_other_checkpoints(dir: &Path, root: &Path) -> Result<()> {
    let here = std::fs::canonicalize(dir.join(".."))
        .with_context(|| format!("checkpoint {}: cannot resolve its directory", dir.display()))?;
    let Ok(there) = std::fs::canonicalize(root) else { return Ok(()) };
    if here == there {
        return Ok(());
    }
    let found = checkpoint::complete(&there)?;
    let Some((newest, _)) = found.last() else { return Ok(()) };
    bail!(
        "--restart {}: this run would write its checkpoints into {}, which holds {} other checkpoint(s) (newest: \
         step {newest}) that its pruning would remove; the checkpoint it resumes lies in {}. Give --checkpoint-dir {} \
         to go on there, or --checkpoint-dir with an empty directory",
        dir.display(),
        there.display(),
        found.len(),
        here.display(),
        here.display()
    )
}

/// When a restart writes to another directory than the run that wrote the checkpoint:
/// that run's directory (its frames rewritten as paths relative to the new directory, so the
/// new `.pvd` lists frames that open), or `None` when both are the same.
fn moved_output(earlier: &Path, now: &Path, frames: &mut [(f64, String)]) -> Result<Option<PathBuf>> {
    std::fs::create_dir_all(now).with_context(|| format!("cannot create output directory {}", now.display()))?;
    let now = std::fs::canonicalize(now).with_context(|| format!("output directory {}", now.display()))?;
    let Ok(earlier) = std::fs::canonicalize(earlier) else {
        if frames.is_empty() {
            return Ok(None);
        }
        bail!(
            "the output directory {} of the run that wrote the checkpoint is gone, and with it the {} frames written before the checkpoint; restart without --out to keep them in one series, or restore that directory",
            earlier.display(),
            frames.len()
        );
    };
    if earlier == now {
        return Ok(None);
    }
    for (_, file) in frames.iter_mut() {
        // Paths already relative to an earlier directory stay relative to it.
        let target = earlier.join(&*file);
        *file = crate::util::files::relative_path(&now, &target).display().to_string();
    }
    Ok(Some(earlier))
}

/// The checkpoint's cells as stored, by global id, after checking that they belong to this
/// mesh.
pub fn restart_state(r: &Restart, pm: &PreparedMesh) -> Result<Vec<StoredCell>> {
    let fingerprint = pm.fingerprint();
    if r.meta.mesh_fingerprint != files::fingerprint_hex(fingerprint) || r.meta.cells != pm.topo.num_cells() {
        bail!(
            "checkpoint {} was made on another mesh ({} cells, fingerprint {}; this scenario's mesh: {} cells, {})",
            r.dir.display(),
            r.meta.cells,
            r.meta.mesh_fingerprint,
            pm.topo.num_cells(),
            files::fingerprint_hex(fingerprint)
        );
    }
    checkpoint::read_state(&r.dir, &r.meta, fingerprint)
}

/// As [`restart_state`] on a rank that holds only its part of the mesh (`pm` its piece): the
/// checkpoint's cells of `sub`'s local cells, in local order, read by global id; the
/// checkpoint is checked against the global mesh's fingerprint and size the partition files
/// carry.
pub fn restart_state_of(r: &Restart, pm: &PreparedMesh, sub: &crate::partition::Submesh) -> Result<Vec<StoredCell>> {
    let fingerprint = pm.fingerprint();
    if r.meta.mesh_fingerprint != files::fingerprint_hex(fingerprint) || r.meta.cells != sub.global_cells as usize {
        bail!(
            "checkpoint {} was made on another mesh ({} cells, fingerprint {}; this scenario's mesh: {} cells, {})",
            r.dir.display(),
            r.meta.cells,
            r.meta.mesh_fingerprint,
            sub.global_cells,
            files::fingerprint_hex(fingerprint)
        );
    }
    checkpoint::read_state_of(&r.dir, &r.meta, fingerprint, &sub.global_cell)
}

/// When and where a run writes checkpoints.
pub struct Checkpoints {
    root: PathBuf,
    every: Option<u64>,
    seconds: Option<f64>,
    keep: usize,
    last: Instant,
    fingerprint: u64,
    precision: Precision,
    /// `PYCNO_KILL_IN_CHECKPOINT=STEP`: rank 0 kills itself (SIGKILL) once its part of that
    /// step's checkpoint is written and before the checkpoint is complete. For the tests.
    kill_at: Option<u64>,
}

impl Checkpoints {
    /// `None` when the options ask for no checkpoints.
    pub fn new(opts: &RunOptions, s: &Scenario, fingerprint: u64) -> Result<Option<Checkpoints>> {
        if opts.checkpoint_every.is_none() && opts.checkpoint_seconds.is_none() {
            return Ok(None);
        }
        if opts.checkpoint_every == Some(0) {
            bail!("--checkpoint-every: expected at least 1 step");
        }
        if let Some(t) = opts.checkpoint_seconds {
            if !(t.is_finite() && t > 0.0) {
                bail!("--checkpoint-seconds: expected a positive number of seconds, found {t}");
            }
        }
        let root = opts.checkpoint_dir.clone().unwrap_or_else(|| s.output.dir.join("checkpoints"));
        crate::util::atomic::probe_writable(&root, "checkpoint directory")?;
        let kill_at = std::env::var("PYCNO_KILL_IN_CHECKPOINT").ok().and_then(|v| v.parse().ok());
        Ok(Some(Checkpoints {
            root,
            every: opts.checkpoint_every,
            seconds: opts.checkpoint_seconds,
            keep: opts.checkpoint_keep.max(1),
            last: Instant::now(),
            fingerprint,
            precision: opts.precision,
            kill_at,
        }))
    }

    /// Claim the checkpoint directory for this run (rank 0; the caller agrees): a directory
    /// that holds another run's checkpoints is refused, so that pruning never deletes them
    /// and a restart never resumes the wrong run. A restart continues its checkpoint's run.
    /// `run_id`: the run's id when the driver has one (its output list has the same).
    pub fn claim(&self, run_id: Option<&str>, restart: Option<&Path>) -> Result<()> {
        match run_id {
            Some(id) => checkpoint::claim(&self.root, id),
            None => checkpoint::claim_for(&self.root, restart),
        }
    }

    /// Whether to write one after `step` (the same answer on every rank).
    fn due(&self, comm: &dyn Comm, step: u64) -> bool {
        let by_steps = self.every.is_some_and(|k| step.is_multiple_of(k));
        let by_clock = self.seconds.is_some_and(|t| {
            // Rank 0's clock decides for everyone.
            let mine = comm.is_root() && self.last.elapsed().as_secs_f64() >= t;
            comm.min_f64(if mine { 0.0 } else { 1.0 }) == 0.0
        });
        by_steps || by_clock
    }

    /// Every rank writes its cells; rank 0 then completes the checkpoint and prunes old ones.
    fn write(&mut self, run: &RunContext, b: &mut dyn Backend, step: u64, time: f64) -> Result<()> {
        let comm = run.comm;
        let dir = checkpoint::step_dir(&self.root, step);
        let st = agree(comm, b.stored_state())?;
        let float_bytes = self.precision.float_bytes();
        let global = &run.part.global;
        let crc = agree(
            comm,
            checkpoint::write_rank(
                &dir,
                comm.rank(),
                comm.size(),
                self.fingerprint,
                step,
                time,
                float_bytes,
                global,
                &st,
            ),
        )?;
        // Every rank file's checksum, for meta.json (a CRC-32 is exact in an f64).
        let rank_checksums: Vec<u32> = comm.all_gather_f64(&[f64::from(crc)]).into_iter().map(|x| x as u32).collect();
        // The max maps beside the cells, so that a restart continues them.
        if run.scenario.output.max_maps.is_some() {
            let e = agree(comm, b.extremes())?;
            agree(comm, crate::output::extremes::write_rank(&dir, comm.rank(), step, global, &e))?;
        }
        // Each open boundary edge's budget, so that a restart continues its sum.
        let (open, per_edge) = agree(comm, b.boundary_edges())?;
        // Every rank writes one when any has open edges (collective: no short cut).
        if comm.sum_u64(open.len() as u64) > 0 {
            let keys: Vec<_> = open.iter().map(|&[c, s, e]| (global[c as usize], s as u32, e as u32)).collect();
            agree(comm, crate::output::budget::write_rank(&dir, comm.rank(), step, &keys, &per_edge))?;
        }
        if self.kill_at == Some(step) && comm.is_root() {
            // SAFETY: plain libc calls; the process ends here.
            unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        }
        let r: &RunRecord = &run.record;
        let fallbacks = comm.sum_u64(b.fallbacks()?) + r.fallbacks_before;
        let boundary_budget = super::report::total_budget(comm, &agree(comm, b.boundary_budget())?, &r.budget_before);
        let cells = comm.sum_u64(global.len() as u64) as usize;
        let done = if comm.is_root() {
            (|| -> Result<()> {
                let s = run.scenario;
                // Every file (mesh, data files, time series) and the output directory by
                // absolute path, so the restart may run from another directory, and find this
                // run's frames and gauges if it writes to another output directory.
                let mut scenario = serde_json::to_value(s.with_absolute_paths()?)?;
                if let Some(m) = &s.mesh {
                    let abs = std::fs::canonicalize(m).with_context(|| format!("mesh file {}", m.display()))?;
                    scenario["mesh"] = serde_json::Value::String(abs.display().to_string());
                }
                let out = &s.output.dir;
                let abs = std::fs::canonicalize(out).with_context(|| format!("output directory {}", out.display()))?;
                scenario["output"]["dir"] = serde_json::Value::String(abs.display().to_string());
                let meta = checkpoint::Meta {
                    format: "pycno-checkpoint".into(),
                    version: checkpoint::VERSION,
                    step,
                    time,
                    ranks: comm.size(),
                    cells,
                    precision: self.precision.name().into(),
                    backend: b.name().into(),
                    mesh_fingerprint: files::fingerprint_hex(self.fingerprint),
                    scenario,
                    frames: run.series.frames().to_vec(),
                    dt_min: r.dt_min,
                    dt_max: r.dt_max,
                    dt_min_clipped: r.dt_min_clipped.is_finite().then_some(r.dt_min_clipped),
                    clipped_steps: r.clipped_steps,
                    mass_layer1_start: r.mass_layer1_start,
                    mass_layer2_start: r.mass_layer2_start,
                    hyperbolicity_fallbacks: fallbacks,
                    boundary_budget,
                    boundary_budget_carried: r.budget_before.clone(),
                    history: r.history.clone(),
                    rank_checksums,
                };
                checkpoint::write_meta(&dir, &meta)?;
                checkpoint::prune(&self.root, self.keep)
            })()
        } else {
            Ok(())
        };
        agree(comm, done)?;
        self.last = Instant::now();
        Ok(())
    }
}

impl Observer for Checkpoints {
    /// Checkpoints every N steps fall on exact step numbers; by wall-clock time they do not.
    fn every_step(&self) -> bool {
        self.every.is_some()
    }
    fn step(&mut self, run: &mut RunContext, b: &mut dyn Backend, done: StepDone) -> Result<()> {
        if self.due(run.comm, done.step) {
            let clock = Instant::now();
            self.write(run, b, done.step, done.time)?;
            run.record.output_seconds += clock.elapsed().as_secs_f64();
        }
        Ok(())
    }
}
