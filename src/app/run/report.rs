//! What a run reports at its end: the statistics (`stats.json`, [`run_stats`]), an
//! order-independent checksum of the state, the layer masses, and the blow-up report when
//! the state went unphysical.

use super::observers::RunContext;
use super::options::RunOptions;
use crate::app::stats::{KernelStat, RunStats};
use crate::comm::{agree, Comm};
use crate::mesh::NO_CELL;
use crate::physics::{Boundaries, CellState};
use crate::solver::exchange::PhaseTimes;
use crate::solver::layout::kernel_bytes;
use crate::solver::stepper::{BlowUp, LoopStats};
use crate::solver::watch::{cell_speed, WentWrong, OPT_OUT};
use crate::solver::Backend;
use crate::util::memory::peak_resident;
use anyhow::{anyhow, Result};

/// Mass of each layer: sum of thickness times area.
pub fn layer_masses(state: &[CellState], area: &[f64]) -> (f64, f64) {
    state.iter().zip(area).fold((0.0, 0.0), |(m1, m2), (s, a)| (m1 + s.h1 * a, m2 + s.h2 * a))
}

/// A fingerprint of the whole state that does not depend on how the cells are spread over
/// ranks or ordered: the wrapping sum over cells of a hash of (global id, the bits of every
/// state value). Runs whose final states agree bit for bit have the same checksum.
pub fn state_checksum(global: &[u32], state: &[CellState]) -> u64 {
    fn mix(mut z: u64) -> u64 {
        // splitmix64's finalizer
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    state
        .iter()
        .zip(global)
        .map(|(s, &g)| s.to_array().iter().fold(mix(g as u64), |h, x| mix(h ^ x.to_bits())))
        .fold(0u64, u64::wrapping_add)
}

/// Turn a blow-up into a report that names the step, time, rank and the first bad cell (by
/// its global id). Every rank holds the blow-up; the lowest rank with a bad cell reports.
pub fn diagnose(e: anyhow::Error, b: &mut dyn Backend, run: &RunContext) -> anyhow::Error {
    if let Some(w) = e.downcast_ref::<WentWrong>() {
        return went_wrong(w, b, run).context("run stopped");
    }
    let Some(bu) = e.downcast_ref::<BlowUp>() else { return e };
    let (comm, global) = (run.comm, &run.part.global);
    let bu = format!("{bu}");
    let (st, good) = match (b.state(), b.previous_state()) {
        (Ok(st), Ok(good)) => (st, good),
        (Err(read), _) | (_, Err(read)) => return read.context(format!("{bu}; reading the state back failed")),
    };
    let bad = |s: &CellState| !s.is_admissible();
    let count = st.iter().filter(|s| bad(s)).count();
    let total = comm.sum_u64(count as u64);
    // The state before the bad update, with the cells that then went bad marked.
    let marks: Vec<i32> = st.iter().map(|s| bad(s) as i32).collect();
    // At second order the state before the last update is the first stage's where the
    // backend finished the step all the same (the GPU): say so when it is unphysical too.
    let bad_before = comm.sum_u64(good.iter().filter(|s| bad(s)).count() as u64);
    let what = if bad_before == 0 {
        "the last good state".to_string()
    } else {
        format!("the state before the last stage (itself unphysical in {bad_before} cells)")
    };
    let saved = match run.series.write_snapshot(comm, "blowup", &run.piece, &good, ("blew_up", &marks)) {
        Ok(path) => {
            format!("; {what}, with the cells that went bad marked (cell array blew_up), is in {}", path.display())
        }
        Err(w) => format!("; writing {what} failed: {w:#}"),
    };
    let local = match st.iter().position(bad) {
        Some(c) => {
            let s = st[c];
            let g = global[c] as usize;
            // A rank's piece has its cells in local order; the global mesh in global order.
            let p = run.pm.topo.cell_centroid[if run.part.piece { c } else { g }];
            let on_rank = if comm.size() > 1 { format!(" on rank {}", comm.rank()) } else { String::new() };
            Err(anyhow!(
                "{bu}: {total} cells went unphysical; first is cell {g}{on_rank} at (x = {}, y = {}): h1 = {}, h2 = {}, q1 = ({}, {}), q2 = ({}, {}){saved}",
                p[0], p[1], s.h1, s.h2, s.q1[0], s.q1[1], s.q2[0], s.q2[1]
            ))
        }
        None => Ok(()),
    };
    match agree(comm, local) {
        Err(report) => report.context("run stopped"),
        // No bad cell anywhere: the time step itself failed (zero or not finite).
        Ok(()) => {
            let r: anyhow::Result<()> = Err(anyhow!("{bu}: the time step became zero or not finite"));
            let r = if comm.is_root() { r } else { Ok(()) };
            agree(comm, r).err().unwrap_or(e).context("run stopped")
        }
    }
}

/// A run the health checks stopped (`solver/watch.rs`): what passed its limit, the fastest
/// cell (by global id, on the lowest rank holding it) with its numbers, the state written out
/// with the cells moving at more than half that speed marked, what likely caused it, and how
/// to switch the check off. Collective.
fn went_wrong(w: &WentWrong, b: &mut dyn Backend, run: &RunContext) -> anyhow::Error {
    let (comm, global) = (run.comm, &run.part.global);
    let st = match b.state() {
        Ok(st) => st,
        Err(read) => return read.context(format!("{w}; reading the state back failed")),
    };
    let speed = cell_speed;
    let marks: Vec<i32> = st.iter().map(|s| (speed(s) > 0.5 * w.speed) as i32).collect();
    let saved = match run.series.write_snapshot(comm, "wentwrong", &run.piece, &st, ("fast", &marks)) {
        Ok(path) => format!("; the state, with the fastest cells marked (cell array fast), is in {}", path.display()),
        Err(e) => format!("; writing the state failed: {e:#}"),
    };
    let mine = st.iter().enumerate().filter(|(_, s)| speed(s) >= w.speed).map(|(c, _)| c).next();
    let at = match mine {
        Some(c) => {
            let s = st[c];
            let g = global[c] as usize;
            let p = run.pm.topo.cell_centroid[if run.part.piece { c } else { g }];
            let on_rank = if comm.size() > 1 { format!(" on rank {}", comm.rank()) } else { String::new() };
            Err(format!(
                "; the fastest water is in cell {g}{on_rank} at (x = {}, y = {}): h1 = {}, h2 = {}, q1 = ({}, {}), q2 = ({}, {})",
                p[0], p[1], s.h1, s.h2, s.q1[0], s.q1[1], s.q2[0], s.q2[1]
            ))
        }
        None => Ok(()),
    };
    // The lowest rank holding the fastest cell names it.
    let cell = match agree(comm, at.map_err(|t| anyhow!(t))) {
        Ok(()) => String::new(),
        Err(t) => t.to_string(),
    };
    let s = run.scenario;
    let mut hints = vec![];
    for (tag, c) in &s.boundaries {
        if let Some(p) = c.shortest_tide_period().filter(|&p| p < 3600.0) {
            hints.push(format!(
                "boundary {tag:?} has a tide of period {p} s: periods are in seconds (12.42 h is 44712 s)"
            ));
        }
    }
    hints.push(
        "a bathymetry with its sign turned (depths are positive down), a time step too large for the mesh \
        (physics.gamma), or a forcing far beyond the water's (tide, discharge, wind)"
            .into(),
    );
    anyhow!("{w}{cell}{saved}. Likely causes: {}. ({OPT_OUT}.)", hints.join("; "))
}

/// The largest of every rank's `x`.
pub fn max_over_ranks(comm: &dyn Comm, x: f64) -> f64 {
    comm.all_gather_f64(&[x]).into_iter().fold(0.0, f64::max)
}

/// The boundary budget of the whole run: each rank's per-entry sums added over the ranks
/// (entry by entry, in a fixed order), plus what came before a restart. Collective. Empty
/// when every boundary is a wall.
pub fn total_budget(comm: &dyn Comm, mine: &[[f64; 4]], before: &[[f64; 4]]) -> Vec<[f64; 4]> {
    let flat: Vec<f64> = mine.iter().flatten().copied().collect();
    // Every rank has the same table, so the same length; a rank's empty list means walls.
    if comm.sum_u64(flat.len() as u64) == 0 {
        return before.to_vec();
    }
    let mut total: Vec<[f64; 4]> = flat.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]).collect();
    for b in total.iter_mut() {
        for x in b.iter_mut() {
            *x = comm.sum_f64(*x);
        }
    }
    for (t, b) in total.iter_mut().zip(before) {
        for k in 0..4 {
            t[k] += b[k];
        }
    }
    total
}

/// The budget per tag for `stats.json` (entry 0, the walls, left out: nothing crosses them).
pub fn tag_budgets(table: &Boundaries, budget: &[[f64; 4]]) -> Vec<crate::app::stats::TagBudget> {
    budget
        .iter()
        .enumerate()
        .skip(1)
        .map(|(k, b)| crate::app::stats::TagBudget {
            tag: table.names.get(k).cloned().unwrap_or_default(),
            kind: table.specs.get(k).map_or("wall", |s| s.kind.name()).into(),
            layer1_in: b[0],
            layer1_out: b[1],
            layer2_in: b[2],
            layer2_out: b[3],
        })
        .collect()
}

/// What the driver knows of a run's end beyond the loop's own figures, for [`run_stats`].
pub struct RunEnd {
    /// What carried the halo on several ranks ("host", "nccl 2.28.3").
    pub via: Option<String>,
    /// Why the run stopped before its end (Ctrl-C), if it did.
    pub interrupted: Option<String>,
    /// This rank's set-up before the first step: wall-clock and CPU seconds.
    pub setup_seconds: f64,
    pub setup_cpu_seconds: f64,
}

/// The run's `stats.json` (collective): the loop's figures `ls`, the masses and the boundary
/// budget at the end, each kernel's time and bandwidth, the phase times of every rank.
pub fn run_stats(
    run: &RunContext,
    b: &mut dyn Backend,
    opts: &RunOptions,
    boundaries: &Boundaries,
    ls: &LoopStats,
    end: RunEnd,
) -> Result<RunStats> {
    let (comm, s, pm, part) = (run.comm, run.scenario, run.pm, run.part);
    let first_step = run.resume.map_or(0, |r| r.step);
    // A rank's piece holds the owned side of its walls only among the edges it processes
    // (after them come the first ring's own, at second order): every wall once over the ranks.
    let processed = match &part.submesh {
        Some(sub) if part.piece => &pm.topo.edge_cells[sub.pass_edges()],
        _ => &pm.topo.edge_cells[..],
    };
    let count_walls = || processed.iter().filter(|c| c[1] == NO_CELL).count();
    let walls = if part.piece { comm.sum_u64(count_walls() as u64) as usize } else { count_walls() };
    let float_bytes = opts.precision.float_bytes();
    let kernels = b
        .kernel_seconds()?
        .into_iter()
        .map(|(name, seconds, launches)| {
            let bytes = kernel_bytes(name, part.layout_cells, b.num_edges(), walls, float_bytes);
            KernelStat {
                name: name.into(),
                seconds,
                launches,
                bytes_per_launch: bytes,
                bandwidth: bytes * launches as f64 / seconds.max(1e-12),
            }
        })
        .collect();
    let end_state = agree(comm, b.state())?;
    let (m1_end, m2_end) = layer_masses(&end_state, &part.area);
    let cells = part.global_cells;
    let steps_here = ls.steps - first_step;
    // Per-rank phase times, and the slowest rank's stepping time (the run's), with what the
    // observers took after steps (`RunRecord::observer_seconds`).
    let stepping_here = ls.stepping_seconds + run.record.observer_seconds;
    let per_rank = comm.all_gather_f64(&[&ls.phases.to_array()[..], &[stepping_here]].concat());
    let width = PhaseTimes::NAMES.len() + 1;
    let phases_per_rank: Vec<PhaseTimes> = per_rank.chunks(width).map(PhaseTimes::from_slice).collect();
    let stepping_seconds = per_rank.chunks(width).map(|c| c[width - 1]).fold(0.0, f64::max);
    let r = &run.record;
    let fallbacks = comm.sum_u64(b.fallbacks()?) + r.fallbacks_before;
    let budget = total_budget(comm, &agree(comm, b.boundary_budget())?, &r.budget_before);
    let (m1_start, m2_start, m1, m2) =
        (r.mass_layer1_start, r.mass_layer2_start, comm.sum_f64(m1_end), comm.sum_f64(m2_end));
    let boundaries = tag_budgets(boundaries, &budget);
    let balance = |start: f64, end: f64, layer: usize| {
        let (i, o) = budget.iter().fold((0.0, 0.0), |(i, o), b| (i + b[2 * layer], o + b[2 * layer + 1]));
        start + i - o - end
    };
    let (residual1, residual2) =
        if budget.is_empty() { (None, None) } else { (Some(balance(m1_start, m1, 0)), Some(balance(m2_start, m2, 1))) };
    let checksum = comm.sum_u64(state_checksum(&part.global, &end_state));
    Ok(RunStats {
        name: s.name.clone(),
        version: env!("CARGO_PKG_VERSION").into(),
        cells,
        edges: part.global_edges,
        steps: ls.steps,
        t_end: ls.time,
        dt_min: if r.dt_min.is_finite() { r.dt_min } else { 0.0 },
        dt_max: r.dt_max,
        dt_min_clipped: r.dt_min_clipped.is_finite().then_some(r.dt_min_clipped),
        clipped_steps: r.clipped_steps,
        stepping_seconds,
        output_seconds: r.output_seconds,
        cell_updates_per_second: cells as f64 * steps_here as f64 / stepping_seconds.max(1e-12),
        mass_layer1_start: r.mass_layer1_start,
        mass_layer1_end: m1,
        mass_layer2_start: r.mass_layer2_start,
        mass_layer2_end: m2,
        boundaries,
        mass_balance_layer1: residual1,
        mass_balance_layer2: residual2,
        restarted_from: run.resume.map(|r| r.step),
        output_dir: s.output.dir.clone(),
        hyperbolicity_fallbacks: fallbacks,
        hyperbolicity_fallback_fraction: fallbacks as f64 / (ls.steps as f64 * part.global_edges as f64).max(1.0),
        backend: b.name().into(),
        device: b.describe(),
        precision: b.precision().into(),
        threads: if b.name() == "cpu" { rayon::current_num_threads() } else { 1 },
        ranks: comm.size(),
        exchange: (comm.size() > 1).then_some(opts.exchange),
        gpu_exchange: end.via,
        phases: PhaseTimes::mean(&phases_per_rank),
        phases_per_rank: if comm.size() > 1 { phases_per_rank } else { Vec::new() },
        outputs: if !opts.no_vtk && s.output.vtk { run.series.frames().len() } else { 0 },
        state_checksum: format!("{checksum:016x}"),
        kernels,
        setup_seconds_per_rank: comm.all_gather_f64(&[end.setup_seconds]),
        setup_cpu_seconds_per_rank: comm.all_gather_f64(&[end.setup_cpu_seconds]),
        peak_memory_per_rank: comm
            .all_gather_f64(&[peak_resident().unwrap_or(0) as f64])
            .into_iter()
            .map(|b| b as u64)
            .collect(),
        interrupted: end.interrupted,
        ..Default::default()
    })
}
