//! What a run reports at its end: the statistics, an order-independent checksum of the
//! state, the layer masses, and the blow-up report when the state went unphysical.

use super::observers::RunContext;
use crate::comm::{agree, Comm};
use crate::physics::CellState;
use crate::solver::stepper::BlowUp;
use crate::solver::watch::{cell_speed, WentWrong, OPT_OUT};
use crate::solver::Backend;
use anyhow::anyhow;

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
    let saved = match run.series.write_snapshot(comm, "blowup", &run.piece, &good, ("blew_up", &marks)) {
        Ok(path) => format!(
            "; the last good state, with the cells that went bad marked (cell array blew_up), is in {}",
            path.display()
        ),
        Err(w) => format!("; writing the last good state failed: {w:#}"),
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
pub fn tag_budgets(table: &crate::physics::Boundaries, budget: &[[f64; 4]]) -> Vec<crate::app::stats::TagBudget> {
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
