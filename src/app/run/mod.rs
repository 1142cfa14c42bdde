//! `pycno run`: scenario -> mesh -> initial state -> time loop -> VTK series + stats.json.
//!
//! The driver is thin: it reads the command line's options ([`options`]), prepares the run
//! ([`Setup`]), makes this rank's part and its backend ([`part`]), chooses how the edge pass
//! meets the other ranks ([`exchange`]), and runs the step loop with a list of observers
//! ([`observers`]: the output series, gauges, checkpoints, progress, fault injection), then
//! reports ([`report`]). Nothing here is generic over the float type: the precision is decided where
//! the backend is made.

pub mod checkpoints;
pub mod exchange;
pub mod interrupt;
pub mod maxmaps;
pub mod netcdf;
pub mod observers;
pub mod options;
pub mod part;
pub mod report;

use super::progress::Progress;
use super::stats::RunStats;
use super::{scenario_mesh, PreparedMesh};
use crate::comm::{agree, Comm};
use crate::output::checkpoint;
use crate::output::checkpoint::Meta;
use crate::output::gauges::GaugeRecorder;
use crate::output::manifest::{self, Manifest};
use crate::output::series::{Format, Piece, Series};
use crate::physics::{CellState, StoredCell};
use crate::scenario::{initial, OutputPrecision, Scenario};
use crate::solver::stepper::{default_device_steps, step_loop_with, Event, LoopStats, Schedule};
use crate::solver::Backend;
use crate::util::atomic::write_bytes_atomic;
use crate::util::memory::check_run_fits;
use anyhow::{anyhow, bail, Context, Result};
use checkpoints::{load_restart, restart_state, Checkpoints};
use observers::{Faults, Frames, Gauges, Observer, ProgressLine, RunContext, RunRecord, StepDone};
use part::{local_partition, make_backend, rank_submesh, GlobalSize, RankPart};
use report::{diagnose, max_over_ranks};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

pub use options::{load_scenario, BackendChoice, Precision, RunOptions, DEFAULT_CELLS};
pub use part::choose_backend;
pub use report::{layer_masses, state_checksum};

/// What a run starts from: the scenario, its prepared mesh, the depth of every cell and its
/// state as the solver stores it (by global id), and the checkpoint it resumes, if any.
pub struct Setup<'a> {
    pub scenario: &'a Scenario,
    pub pm: &'a PreparedMesh,
    pub depth: &'a [f64],
    pub cells: &'a [StoredCell],
    pub resume: Option<&'a Meta>,
    /// The output directory of the run that wrote that checkpoint, when this run writes to
    /// another one.
    pub earlier_output: Option<&'a Path>,
    /// The boundary table (`scenario.boundaries` on this mesh).
    pub boundaries: crate::physics::Boundaries,
    /// `Some`: this rank holds only its part of the mesh (read from its partition files), and
    /// `pm`, `depth` and `cells` are its local ones; the global mesh's size.
    pub piece: Option<GlobalSize>,
}

impl<'a> Setup<'a> {
    /// A run from the start (no checkpoint).
    pub fn new(scenario: &'a Scenario, pm: &'a PreparedMesh, depth: &'a [f64], cells: &'a [StoredCell]) -> Setup<'a> {
        Setup {
            scenario,
            pm,
            depth,
            cells,
            resume: None,
            earlier_output: None,
            boundaries: Default::default(),
            piece: None,
        }
    }
}

/// An initial state as the solver stores it: relative to the scenario's rest state
/// (`physics.reference`).
pub fn stored_cells(s: &Scenario, depth: &[f64], state: &[CellState]) -> Vec<StoredCell> {
    let rest = s.physics.reference();
    state.iter().zip(depth).map(|(c, &d)| StoredCell::from_state(c, d, &rest)).collect()
}

/// Say so (rank 0) when no cell holds water at the start: nothing moves unless a boundary
/// brings water in, and the likeliest cause is a bathymetry whose sign is turned (depths are
/// positive down). Collective.
/// The deepest water column at the start over every rank's cells (m, the largest `h1 + h2`).
pub fn deepest_water(comm: &dyn Comm, state: &[CellState]) -> f64 {
    let mine = state.iter().map(|c| c.h1 + c.h2).filter(|h| h.is_finite()).fold(0.0, f64::max);
    -comm.min_f64(-mine)
}

fn warn_if_dry(comm: &dyn Comm, s: &Scenario, depth: &[f64], state: &[CellState]) {
    let wet = comm.sum_u64(state.iter().filter(|c| c.h1 + c.h2 > s.physics.dry_tolerance()).count() as u64);
    let deepest = -comm.min_f64(-depth.iter().copied().fold(f64::MIN, f64::max));
    if wet == 0 && comm.is_root() {
        log::warn!(
            "no cell holds water at t = 0 (the lowest bed is {} m above the reference level): nothing \
             moves unless a boundary brings water in. `bathymetry` gives depths below the reference level, \
             positive down (a sea 50 m deep is 50); a file of elevations (positive up) needs its sign turned",
            -deepest
        );
    }
}

/// Refuse an `open` end whose water beyond it (at rest at the `physics.reference` levels)
/// lacks a layer that the water inside holds: its ghost then falls back to a copy of the cell,
/// which reflects (37-41% of an internal pulse, issue 43). Names the tag, the place and the
/// levels to set.
fn open_references(
    s: &Scenario,
    topo: &crate::mesh::Topology,
    table: &crate::physics::Boundaries,
    depth: &[f64],
    state: &[CellState],
) -> Result<()> {
    let (rest, tol) = (s.physics.reference(), s.physics.dry_tolerance());
    for (e, cells) in topo.edge_cells.iter().enumerate() {
        let k = table.index(topo.edge_tag[e]) as usize;
        if cells[1] != crate::mesh::NO_CELL || table.specs[k].kind != crate::physics::BoundaryKind::Open {
            continue;
        }
        let c = cells[0] as usize;
        let (r1, r2) = (rest.h1(), rest.interface + depth[c]);
        let (h1, h2) = (state[c].h1, state[c].h2);
        if (r1 <= tol && h1 > tol) || (r2 <= tol && h2 > tol) {
            let p = topo.cell_centroid[c];
            bail!(
                "boundaries.{}: an open end lets waves out against water at rest beyond it, at the levels of \
                 physics.reference (surface {} m, interface {} m), which hold {:.4} m of layer 1 and {:.4} m of layer 2 \
                 over the bed at ({}, {}); the water inside holds {:.4} m and {:.4} m there, so the end would reflect. \
                 Set physics.reference to the undisturbed levels, for instance \
                 {{\"surface\": {}, \"interface\": {}}}",
                table.names[k],
                rest.surface,
                rest.interface,
                r1.max(0.0),
                r2.max(0.0),
                p[0],
                p[1],
                h1,
                h2,
                state[c].surface_elevation(depth[c]),
                state[c].interface_elevation(depth[c])
            );
        }
    }
    Ok(())
}

/// The same run id on every rank: rank 0's.
fn shared_run_id(comm: &dyn Comm, mine: String) -> Result<String> {
    let x = u64::from_str_radix(&mine, 16).map_err(|_| anyhow!("run id {mine:?} is not 16 hex digits"))?;
    let mut words = vec![(x >> 32) as u32, x as u32];
    comm.broadcast_u32(&mut words);
    Ok(format!("{:016x}", (u64::from(words[0]) << 32) | u64::from(words[1])))
}

/// Whether a run writes anything into its output directory.
fn writes_output(s: &Scenario, opts: &RunOptions) -> bool {
    let o = &s.output;
    // `--no-vtk` asks for stats.json only, with or without `--out` (issue 46: without it
    // nothing was written).
    o.vtk || opts.no_vtk || opts.out.is_some() || s.gauges.is_some() || o.netcdf || o.max_maps.is_some()
}

/// The scenario as the run used it (after the command line's overrides), with absolute
/// paths, for `OUT/scenario.json`: `pycno run OUT/scenario.json` runs it again from anywhere.
pub fn resolved_scenario(s: &Scenario) -> Result<Scenario> {
    let mut r = s.with_absolute_paths()?;
    if let Some(m) = &s.mesh {
        r.mesh = Some(std::fs::canonicalize(m).with_context(|| format!("mesh file {}", m.display()))?);
    }
    r.output.dir =
        std::path::absolute(&s.output.dir).with_context(|| format!("output directory {}", s.output.dir.display()))?;
    r.schema = None;
    Ok(r)
}

pub fn run(opts: &RunOptions, comm: &dyn Comm) -> Result<RunStats> {
    let wall = Instant::now();
    let restart = match &opts.restart {
        Some(p) => Some(agree(comm, load_restart(p, opts))?),
        None => None,
    };
    let mut s = match &restart {
        Some(r) => r.scenario.clone(),
        None => agree(comm, load_scenario(opts))?,
    };
    let run_id = match &restart {
        Some(r) => agree(comm, checkpoint::run_id(&r.dir))?,
        None => checkpoint::new_run_id(),
    };
    let run_id = agree(comm, shared_run_id(comm, run_id))?;
    let writes = writes_output(&s, opts);
    // Refuse another run's results before the (possibly long) meshing; nothing is removed yet.
    if writes {
        let dir = &s.output.dir;
        agree(comm, if comm.is_root() { manifest::check(dir, &run_id, opts.overwrite) } else { Ok(()) })?;
    }
    if let (Some(r), true) = (&restart, comm.is_root() && !opts.quiet) {
        log::info!(
            "resuming from checkpoint {} (step {}, t = {}, written by {} on {} ranks)",
            r.dir.display(),
            r.meta.step,
            r.meta.time,
            r.meta.backend,
            r.meta.ranks
        );
    }
    let source = match (&opts.restart, &opts.scenario) {
        (Some(p), _) => format!("checkpoint {}", p.display()),
        (None, Some(p)) => p.display().to_string(),
        (None, None) => "the paper benchmark".into(),
    };
    // With a partition directory that has geometry files, each rank reads only its own part
    // and never builds the global mesh: its prepared mesh is its piece, and the depth, the
    // initial state and a restart's state are evaluated or read for its cells only.
    let local = local_partition(opts, &s, comm)?;
    let (pm, piece, local_sub, tags) = match local {
        Some(l) => {
            let g = l.geometry;
            let size = GlobalSize { cells: l.submesh.global_cells as usize, edges: l.submesh.global_edges as usize };
            let pm = PreparedMesh::rank_piece(g.piece, g.topo, g.mesh_fingerprint, l.seconds);
            (pm, Some(size), Some(l.submesh), Some((g.tag_lengths, g.segment_tags)))
        }
        None => (agree(comm, scenario_mesh(&s).with_context(|| source.clone()))?, None, None, None),
    };
    // Refuse a run that cannot fit before its arrays are allocated (an abort otherwise).
    agree(comm, check_run_fits(pm.topo.num_cells(), opts.precision.float_bytes(), comm.node_rank().1))?;
    let (depth, state) = agree(comm, initial::evaluate(&s, &pm.topo.cell_centroid).with_context(|| source.clone()))?;
    // The default dry tolerance scales with the deepest water at the start, over every rank;
    // from here on it is the scenario's (saved with the results and the checkpoints).
    s.physics.resolve_dry_tolerance(deepest_water(comm, &state));
    let cells = match (&restart, &local_sub) {
        (Some(r), Some(sub)) => agree(comm, checkpoints::restart_state_of(r, &pm, sub))?,
        (Some(r), None) => agree(comm, restart_state(r, &pm))?,
        (None, _) => stored_cells(&s, &depth, &state),
    };
    if restart.is_none() {
        warn_if_dry(comm, &s, &depth, &state);
    }
    let choice = agree(comm, choose_backend(opts.backend, !comm.is_root()))?;
    let submesh = match local_sub {
        Some(sub) => Some(sub),
        None => agree(comm, rank_submesh(opts, &pm, comm, s.physics.order))?,
    };
    // Now the output directory: an earlier run's results go (with --overwrite), the list of
    // this run's files starts, and the resolved scenario is saved first.
    let manifest = if writes && comm.is_root() {
        let restart_from = restart.as_ref().map(|r| r.dir.as_path());
        let m = Manifest::prepare(&s.output.dir, &run_id, opts.overwrite, restart_from).and_then(|m| {
            let text = serde_json::to_string_pretty(&resolved_scenario(&s)?)? + "\n";
            write_bytes_atomic(&s.output.dir.join("scenario.json"), text.as_bytes())?;
            m.record("scenario.json")?;
            Ok(m)
        });
        agree(comm, m)?
    } else {
        agree(comm, Ok(Manifest::inert()))?
    };
    let manifest = Arc::new(manifest);
    let mut opts = opts.clone();
    opts.run_id = Some(run_id);
    opts.manifest = Some(manifest.clone());
    opts.resume_dir = restart.as_ref().map(|r| r.dir.clone());
    opts.started = Some(wall);
    let boundaries = match &tags {
        Some((lengths, segments)) => s.boundary_table_from(lengths, segments),
        None => s.boundary_table(&pm.mesh, &pm.topo),
    };
    let boundaries = agree(comm, boundaries.with_context(|| source.clone()))?;
    agree(comm, open_references(&s, &pm.topo, &boundaries, &depth, &state))?;
    let setup = Setup {
        resume: restart.as_ref().map(|r| &r.meta),
        earlier_output: restart.as_ref().and_then(|r| r.earlier_output.as_deref()),
        boundaries,
        piece,
        ..Setup::new(&s, &pm, &depth, &cells)
    };
    let mut stats = simulate(&setup, &opts, choice, comm, submesh)?;
    stats.mesh_seconds = pm.seconds;
    stats.wall_seconds = max_over_ranks(comm, wall.elapsed().as_secs_f64());
    if writes {
        let path = s.output.dir.join("stats.json");
        let written = if comm.is_root() {
            write_bytes_atomic(&path, serde_json::to_string_pretty(&stats)?.as_bytes())
                .and_then(|_| manifest.record("stats.json"))
        } else {
            Ok(())
        };
        agree(comm, written)?;
    }
    if let Some(why) = &stats.interrupted {
        bail!(
            "{why}: the state reached is the last frame, and stats.json (marked \"interrupted\") and the max maps \
             hold the run up to there, in {}",
            s.output.dir.display()
        );
    }
    Ok(stats)
}

/// The run's start for the NetCDF file's `history` attribute: the time (UTC), the command
/// line and pycno's version.
fn history_line() -> String {
    let args: Vec<String> = std::env::args().collect();
    format!("{}: {} (pycno {})", crate::util::date::now_utc(), args.join(" "), env!("CARGO_PKG_VERSION"))
}

/// A restart: set each open boundary edge's budget to the checkpoint's (its
/// `budget_RRRRR.bin` files), so that the sums go on as in the uninterrupted run. False, with
/// every edge left at zero, when the checkpoint has no such files (an earlier pycno's) or does
/// not hold one of this run's edges. Collective.
fn restore_boundary_edges(
    comm: &dyn Comm,
    b: &mut dyn Backend,
    dir: &Path,
    meta: &crate::output::checkpoint::Meta,
    global: &[u32],
) -> Result<bool> {
    let (open, _) = agree(comm, b.boundary_edges())?;
    if comm.sum_u64(open.len() as u64) == 0 {
        return Ok(false);
    }
    let Some(all) = agree(comm, crate::output::budget::read_all(dir, meta.ranks, meta.step))? else {
        return Ok(false);
    };
    let mine: Option<Vec<[f64; 4]>> =
        open.iter().map(|&[c, s, e]| all.get(&(global[c as usize], s as u32, e as u32)).copied()).collect();
    // Every edge of the checkpoint is some rank's edge now, and every rank found its own.
    let found = comm.sum_u64(mine.as_ref().map_or(0, |m| m.len()) as u64);
    let complete = comm.min_f64(if mine.is_some() { 1.0 } else { 0.0 }) == 1.0;
    if !complete || found != all.len() as u64 {
        log::warn!(
            "checkpoint {}: its boundary budget files do not match this run's open boundary edges; the budget \
             continues from its totals (equal to rounding)",
            dir.display()
        );
        return Ok(false);
    }
    agree(comm, b.set_boundary_edges(&mine.unwrap_or_default()))?;
    Ok(true)
}

/// The time loop of a prepared run on this rank (`submesh`: its part of a multi-rank run),
/// with its observers; `pycno bench` calls it too.
pub fn simulate(
    setup: &Setup,
    opts: &RunOptions,
    choice: BackendChoice,
    comm: &dyn Comm,
    submesh: Option<crate::partition::Submesh>,
) -> Result<RunStats> {
    let (s, pm, resume) = (setup.scenario, setup.pm, setup.resume);
    let part = agree(comm, RankPart::new(pm, setup.depth, submesh, setup.piece))?;
    let mut backend = agree(comm, make_backend(choice, opts.precision, setup, &part, comm.node_rank().0))?;
    if opts.kernel_timing {
        backend.enable_kernel_timing();
    }
    let cell_id: Vec<i64> = part.global.iter().map(|&g| g as i64).collect();
    let rank_field = vec![comm.rank() as i32; part.global.len()];
    let (t_start, first_step) = resume.map_or((0.0, 0), |r| (r.time, r.step));
    // What the backends' boundary budgets do not hold: on a restart, the checkpoint's totals,
    // or only what it carried itself when its edges' sums are restored.
    let budget_before = match (resume, &opts.resume_dir) {
        (Some(r), Some(dir)) => {
            if restore_boundary_edges(comm, backend.as_mut(), dir, r, &part.global)? {
                r.boundary_budget_carried.clone()
            } else {
                r.boundary_budget.clone()
            }
        }
        (Some(r), None) => r.boundary_budget.clone(),
        (None, _) => vec![],
    };
    let record = match resume {
        Some(r) => RunRecord::resumed(r, budget_before),
        None => {
            let (a, b) = layer_masses(&agree(comm, backend.state())?, &part.area);
            RunRecord::new(comm.sum_f64(a), comm.sum_f64(b), history_line())
        }
    };
    let mut run = RunContext {
        comm,
        scenario: s,
        pm,
        part: &part,
        piece: Piece { mesh: part.output_mesh(pm), depth: &part.depth, cell_id: &cell_id, rank: &rank_field },
        series: match resume {
            Some(r) => Series::resume(&s.output.dir, &s.name, r.frames.clone()),
            None => Series::new(&s.output.dir, &s.name),
        }
        .with_format(frame_format(s, opts.precision)),
        record,
        resume,
        manifest: opts.manifest.clone().unwrap_or_default(),
    };
    let mut observers = observers(setup, opts, &mut run, backend.as_mut())?;
    // The halo's path, once the observers are known.
    let host_every_step = observers.iter().any(|o| o.every_step());
    let resident = exchange::device_resident(opts, host_every_step, setup.boundaries.all_walls());
    let (mut edges, via) = exchange::edge_pass(opts, comm, backend.as_mut(), part.submesh.as_ref(), resident)?;
    let progress = progress_line(&run, &*backend, opts, via.as_deref(), t_start, first_step);
    observers.push(Box::new(ProgressLine(progress)));

    if resume.is_none() {
        let clock = Instant::now();
        for o in observers.iter_mut() {
            o.start(&mut run, backend.as_mut())?;
        }
        run.record.output_seconds += clock.elapsed().as_secs_f64();
    }
    let outputs = s.output_times();
    let done = outputs.iter().filter(|&&x| x <= t_start).count();
    let writes_frames = (!opts.no_vtk && s.output.vtk) || s.gauges.is_some() || s.output.netcdf;
    // The deepest water the mesh holds, for the speed limit of the health checks.
    let water_depth = max_over_ranks(comm, setup.depth.iter().copied().fold(0.0, f64::max));
    let plan = Schedule {
        t_start,
        t_end: s.time.end,
        gamma: s.physics.gamma,
        outputs: if writes_frames { &outputs[done..] } else { &[] },
        first_output_index: 1 + done,
        // `--max-steps` counts this process's steps: on a restart from step N the loop's
        // step numbers start at N, and a smaller limit silently did nothing (issue 46).
        max_steps: opts.max_steps.map(|m| first_step.saturating_add(m)),
        first_step,
        // Observers that look at every step keep the host driving every step. So do open,
        // forced and discharge boundaries: the GPU backend declines the device-resident loop
        // when any boundary is not a wall (`CudaBackend::host_driven_boundaries`: tides,
        // series and the per-tag mass budget are host-evaluated or launched per step, outside
        // the CUDA graphs).
        device_steps: if host_every_step { 1 } else { default_device_steps() },
        watch: opts.watch(&s.physics, water_depth),
    };
    // The last output written: (index, time); frame `done` is the last one before this
    // process started (frame 0 at t = 0 for a new run).
    let mut last_out = (done, t_start);
    let setup_seconds = opts.started.map_or(0.0, |t| t.elapsed().as_secs_f64());
    let setup_cpu_seconds = crate::util::memory::cpu_seconds().unwrap_or(0.0);
    let result = step_loop_with(backend.as_mut(), comm, edges.as_mut(), &plan, &mut |b, ev| {
        match ev {
            Event::Step { step, time, dt, dt_min, dt_max, clipped, .. } => {
                let r = &mut run.record;
                if clipped {
                    r.dt_min_clipped = r.dt_min_clipped.min(dt);
                    r.clipped_steps += 1;
                }
                r.dt_min = r.dt_min.min(dt_min);
                r.dt_max = r.dt_max.max(dt_max);
                let done = StepDone { step, time, dt };
                let (clock, written) = (Instant::now(), run.record.output_seconds);
                for o in observers.iter_mut() {
                    o.step(&mut run, b, done)?;
                }
                let r = &mut run.record;
                r.observer_seconds += clock.elapsed().as_secs_f64() - (r.output_seconds - written);
            }
            Event::Output { index, time, step } => {
                let clock = Instant::now();
                for o in observers.iter_mut() {
                    o.output(&mut run, b, index, time, step)?;
                }
                last_out = (index, time);
                run.record.output_seconds += clock.elapsed().as_secs_f64();
            }
        }
        Ok(())
    });
    let (result, interrupted) = wind_up(result, &mut observers, &mut run, backend.as_mut(), last_out, writes_frames);
    drop(edges);
    let ls = match result {
        Ok(ls) => ls,
        Err(e) => return Err(diagnose(e, backend.as_mut(), &run)),
    };
    let end = report::RunEnd { via, interrupted, setup_seconds, setup_cpu_seconds };
    report::run_stats(&run, backend.as_mut(), opts, &setup.boundaries, &ls, end)
}

/// After the step loop: a Ctrl-C's stop taken as where the run ends, the state reached as
/// the last frame where the loop stopped before the end (--max-steps, Ctrl-C), the max maps,
/// and every observer's end; then every observer finishes, whatever happened. Returns the
/// loop's figures and, after a Ctrl-C, what stopped it.
fn wind_up(
    result: Result<LoopStats>,
    observers: &mut [Box<dyn Observer>],
    run: &mut RunContext,
    b: &mut dyn Backend,
    last_out: (usize, f64),
    writes_frames: bool,
) -> (Result<LoopStats>, Option<String>) {
    let (comm, s) = (run.comm, run.scenario);
    // Ctrl-C: the run ends where the signal found it, as at --max-steps below, and says so.
    let mut interrupted = None;
    let result = match result {
        Err(e) if e.downcast_ref::<interrupt::Interrupted>().is_some() => {
            let i = e.downcast::<interrupt::Interrupted>().expect("checked");
            interrupted = Some(i.to_string());
            Ok(LoopStats { steps: i.step, time: i.time, ..Default::default() })
        }
        r => r,
    };
    // Stopped before the end (--max-steps): the state reached is the run's last frame, with
    // its gauge row, so the output ends where the run did.
    let result = result.and_then(|ls| {
        if ls.time < s.time.end && ls.time > last_out.1 && writes_frames {
            let clock = Instant::now();
            for o in observers.iter_mut() {
                o.output(run, b, last_out.0 + 1, ls.time, ls.steps)?;
            }
            run.record.output_seconds += clock.elapsed().as_secs_f64();
        }
        Ok(ls)
    });
    // The max maps, once, at the end of the run (or where --max-steps stopped it).
    let result = result.and_then(|ls| {
        if s.output.max_maps.is_some() {
            let clock = Instant::now();
            let files = maxmaps::write(run, b)?;
            agree(comm, run.manifest.record_all(&files))?;
            run.record.output_seconds += clock.elapsed().as_secs_f64();
        }
        let clock = Instant::now();
        for o in observers.iter_mut() {
            o.end(run, b)?;
        }
        run.record.output_seconds += clock.elapsed().as_secs_f64();
        Ok(ls)
    });
    for o in observers.iter_mut() {
        o.finish();
    }
    (result, interrupted)
}

/// The progress bar or log lines, opened with the run's first line: its name, size,
/// precision and device, and on several ranks how their halo goes (`via`).
fn progress_line(
    run: &RunContext,
    b: &dyn Backend,
    opts: &RunOptions,
    via: Option<&str>,
    t: f64,
    step: u64,
) -> Progress {
    let (comm, s, part) = (run.comm, run.scenario, run.part);
    let progress = Progress::new(t, step, s.time.end, opts.quiet || !comm.is_root());
    let ranks_note = if comm.size() > 1 {
        let through = via.unwrap_or("host");
        format!(" x {} ranks ({:?} exchange", comm.size(), opts.exchange).to_lowercase()
            + &format!(" through {through})")
    } else {
        String::new()
    };
    progress.println(&format!(
        "{}: {} cells, {} edges, {} on {}{}",
        s.name,
        part.global_cells,
        part.global_edges,
        b.precision(),
        b.describe(),
        ranks_note
    ));
    progress
}

/// The observers of the step loop, in the order they are called (the progress line, which
/// needs the halo's path, comes last but one: [`simulate`] adds it). Collective.
fn observers(
    setup: &Setup,
    opts: &RunOptions,
    run: &mut RunContext,
    b: &mut dyn Backend,
) -> Result<Vec<Box<dyn Observer>>> {
    let (comm, s, pm, part, resume) = (run.comm, run.scenario, run.pm, run.part, run.resume);
    let mut observers: Vec<Box<dyn Observer>> = Vec::new();
    if let Some(f) = Faults::from_env()? {
        observers.push(Box::new(f));
    }
    if !opts.no_vtk && s.output.vtk {
        observers.push(Box::new(Frames));
    }
    let checkpoints = agree(comm, Checkpoints::new(opts, s, pm.fingerprint()))?;
    if let Some(c) = &checkpoints {
        let claim = if comm.is_root() { c.claim(opts.run_id.as_deref(), opts.restart.as_deref()) } else { Ok(()) };
        agree(comm, claim)?;
    }
    if let Some(g) = &s.gauges {
        // A restart continues the gauges of the run that wrote the checkpoint, which may have
        // written them to another output directory.
        let earlier = setup.earlier_output.unwrap_or(&s.output.dir).join(crate::output::gauges::FILE);
        let at = resume.map(|r| (r.time, earlier.as_path()));
        let recorder = if part.piece {
            let centroid = &pm.topo.cell_centroid[..part.global.len()];
            GaugeRecorder::new_on_piece(comm, &s.output.dir, g, &pm.mesh, centroid, &part.global, at)
        } else {
            GaugeRecorder::new(comm, &s.output.dir, g, &pm.mesh, &pm.topo.cell_centroid, &part.global, at)
        };
        let recorder = agree(comm, recorder)?.in_f32(opts.precision == Precision::F32);
        let before = &run.record.budget_before;
        let mut gauges = Gauges::new(recorder.with_boundaries(comm, g, &setup.boundaries, before)?);
        if let Some(r) = resume {
            gauges.resume(run, b, r.step, r.time)?;
        }
        observers.push(Box::new(gauges));
        agree(comm, run.manifest.record(crate::output::gauges::FILE))?;
    }
    if let Some(m) = &s.output.max_maps {
        let from = match (resume, &opts.resume_dir) {
            (Some(r), Some(dir)) => Some((dir.as_path(), r.ranks, r.step, r.cells)),
            _ => None,
        };
        maxmaps::begin(comm, b, m, from, &part.global)?;
        observers.push(Box::new(maxmaps::MaxMaps));
    }
    if s.output.netcdf {
        let nc = netcdf::NetCdf::new(run, frame_format(s, opts.precision).f32)?;
        observers.push(Box::new(nc));
        agree(comm, run.manifest.record(&netcdf::file_name(&s.name)))?;
    }
    if let Some(c) = checkpoints {
        observers.push(Box::new(c));
    }
    // Last: a step every other observer has seen is where a Ctrl-C stops the run.
    if comm.size() == 1 {
        observers.push(Box::new(interrupt::Interrupt::arm()));
    }
    Ok(observers)
}

/// What the frames hold: the scenario's `output.fields`, `output.precision` (default: the
/// run's float type) and `output.compression`.
fn frame_format(s: &Scenario, run: Precision) -> Format {
    let f32 = match s.output.precision {
        Some(OutputPrecision::Float32) => true,
        Some(OutputPrecision::Float64) => false,
        None => run == Precision::F32,
    };
    Format { fields: s.output.field_list(), f32, compression: s.output.compression }
}

/// Used by `pycno run` to say where things went.
pub fn describe_outputs(dir: &Path, name: &str) -> String {
    format!("{}", dir.join(format!("{name}.pvd")).display())
}
