//! The CPU backend: the paper's layout and phases, the edge pass spread over all cores with
//! rayon. Each edge writes its own accumulator slots, so threads never share a word.

use super::backend::{Backend, Cells, Health, StepContext};
use super::layout::{add_to_budget, budget_per_entry, check_slots, reconstruction_sets, Layout, BOUNDARY};
use crate::physics::extremes::{self, Arrival, WIDTH};
use crate::physics::reconstruct::{self, edge_boundary_flux, edge_flux};
use crate::physics::{
    add_compensated, add_viscosity, boundary_flux, dry_edge, numerical_flux, settle, source_at, CellState, Model, Real,
    Side, StoredCell,
};
use anyhow::{bail, Result};
use rayon::prelude::*;
use std::ops::Range;

pub struct CpuBackend<T> {
    model: Model<T>,
    lay: Layout<T>,
    acc: [Vec<[T; 4]>; 6],
    fallbacks: u64,
    health: Health,
    /// The cells of the download in progress (the send block).
    download: Range<usize>,
    /// The other volume buffers: the update writes them from `lay.v1`, `lay.v2` and the two
    /// swap, so the state before the last update stays available.
    other: [Vec<[T; 4]>; 2],
    /// The other buffer of low parts (swapped with `lay.lo` likewise).
    other_lo: Vec<[T; 2]>,
    /// The open boundary edges (`Layout::open_edges`) and the mass through each so far.
    open: Vec<[i32; 3]>,
    budget: Vec<[f64; 4]>,
    /// Per-cell extremes of the owned cells, when kept (`output.max_maps`).
    extremes: Option<(Arrival, Vec<[f64; WIDTH]>)>,
    /// `physics.order`.
    order: u32,
    /// Second order: every cell's reconstructed values at its three edge midpoints, per
    /// layer, slot k at `3k..3k + 3` (`(d1, q1x, q1y)`, `(d2, q2x, q2y)`), from
    /// [`Backend::reconstruct`]: the owned cells' and the receive block's first ring's.
    faces: [Vec<[T; 9]>; 2],
    /// Second order: per cell, which reconstruction covers it ([`INNER`], [`OUTER`], or 0:
    /// none, the receive block's outer ring), and the cells `OUTER` ones lie among.
    recon: Vec<u8>,
    outer: Range<usize>,
}

/// A raw pointer the edge pass shares between threads. Sound because every (slot, cell)
/// word is written by exactly one edge ([`check_slots`] proves it when the backend is made).
#[derive(Clone, Copy)]
struct SlotPtr<T>(*mut [T; 4]);
unsafe impl<T> Send for SlotPtr<T> {}
unsafe impl<T> Sync for SlotPtr<T> {}

/// Cell `c`'s reconstructed state at the midpoint of slot `k` (second order), over its depth.
#[inline(always)]
fn face_side<T: Real>(faces: &[Vec<[T; 9]>; 2], c: usize, k: usize, depth: T) -> Side<T> {
    let (f1, f2) = (&faces[0][c], &faces[1][c]);
    Side { d1: f1[3 * k], q1: [f1[3 * k + 1], f1[3 * k + 2]], d2: f2[3 * k], q2: [f2[3 * k + 1], f2[3 * k + 2]], depth }
}

#[inline(always)]
fn side<T: Real>(a: [T; 4], b: [T; 4]) -> Side<T> {
    Side { d1: a[0], q1: [a[1], a[2]], d2: b[0], q2: [b[1], b[2]], depth: a[3] }
}

impl<T: Real> CpuBackend<T> {
    pub fn new(model: Model<T>, lay: Layout<T>) -> Result<Self> {
        check_slots(&lay)?;
        lay.check_model(&model)?;
        let n = lay.num_cells();
        let zero = [T::zero(); 4];
        let acc = std::array::from_fn(|_| vec![zero; n]);
        let other = [lay.v1.clone(), lay.v2.clone()];
        let other_lo = lay.lo.clone();
        let open = lay.open_edges();
        let budget = vec![[0.0; 4]; open.len()];
        Ok(CpuBackend {
            model,
            lay,
            acc,
            fallbacks: 0,
            health: Health::Ok,
            download: 0..0,
            other,
            other_lo,
            open,
            budget,
            extremes: None,
            order: 1,
            faces: [Vec::new(), Vec::new()],
            recon: Vec::new(),
            outer: 0..0,
        })
    }

    /// The backend at order `order` (`physics.order`: 1 or 2).
    pub fn with_order(mut self, order: u32) -> Result<Self> {
        if !(order == 1 || order == 2) {
            bail!("physics.order: expected 1 or 2, found {order}");
        }
        self.order = order;
        if order == 2 {
            let n = self.lay.num_cells();
            (self.recon, self.outer) = reconstruction_sets(&self.lay)?;
            self.faces = [vec![[T::zero(); 9]; n], vec![[T::zero(); 9]; n]];
        }
        Ok(self)
    }

    /// The first stage's update (`second = false`, the whole step at first order) or the
    /// second stage's (`second = true`: the stage's result is averaged with the step's start,
    /// kept in `other`). Fluxes, the cell-interior term at second order, sources, settling.
    fn stage_update(&mut self, step: StepContext, second: bool) -> Result<()> {
        if second && self.health == Health::Bad {
            // The first stage went unphysical: the step is not finished, so that the step's
            // start stays in `other` and a blow-up report shows it as the last good state
            // (and the unphysical stage, with its bad cells marked, as the state).
            return Ok(());
        }
        let dt = T::c(step.dt);
        // The mass through each open boundary edge this step: the edge's slot holds its
        // outward mass fluxes times its length, which the update below takes times dt (half
        // of it per stage at second order: Heun's average of the two stages' fluxes).
        let share = if self.order == 2 { 0.5 * dt.f64() } else { dt.f64() };
        for (k, &[c, s, _]) in self.open.iter().enumerate() {
            let (c, s) = (c as usize, s as usize);
            let flux = [self.acc[2 * s][c][0].f64(), self.acc[2 * s + 1][c][0].f64()];
            add_to_budget(&mut self.budget, k, flux, share);
        }
        let model = self.model;
        let sources = model.has_sources();
        let order2 = self.order == 2;
        let n = self.lay.n_owned;
        let acc = &self.acc;
        let faces = &self.faces;
        let stencil = &self.lay.stencil;
        let coriolis = &self.lay.coriolis;
        let (old1, old2, old_lo) = (&self.lay.v1[..n], &self.lay.v2[..n], &self.lay.lo[..n]);
        let [new1, new2] = &mut self.other;
        let half = T::c(0.5);
        let ok = new1[..n]
            .par_iter_mut()
            .zip(new2[..n].par_iter_mut())
            .zip(self.other_lo[..n].par_iter_mut())
            .enumerate()
            .with_min_len(8192)
            .map(|(c, ((a, b), lo))| {
                // The second stage averages with the step's start, which these buffers hold.
                let start = (*a, *b, *lo);
                *a = old1[c];
                *b = old2[c];
                let k = dt / b[3];
                // Slots summed (0 + 1) + 2, as on the GPU.
                let sum = |layer: usize, m: usize| acc[layer][c][m] + acc[2 + layer][c][m] + acc[4 + layer][c][m];
                let mut total = [[sum(0, 0), sum(0, 1), sum(0, 2)], [sum(1, 0), sum(1, 1), sum(1, 2)]];
                if order2 {
                    let (f1, f2) = (&faces[0][c], &faces[1][c]);
                    let (fd1, fd2) = ([f1[0], f1[3], f1[6]], [f2[0], f2[3], f2[6]]);
                    let extra = reconstruct::interior(&model, a[0], b[0], fd1, fd2, &stencil[c].ln, a[3]);
                    for m in 1..3 {
                        total[0][m] = total[0][m] + extra[m];
                        total[1][m] = total[1][m] + extra[3 + m];
                    }
                }
                // The thickness deviations with their low parts: the increment is added
                // exactly, whatever its size against the stored value.
                let (d1, lo1) = add_compensated(a[0], old_lo[c][0], -(k * total[0][0]));
                let (d2, lo2) = add_compensated(b[0], old_lo[c][1], -(k * total[1][0]));
                (a[0], b[0], *lo) = (d1, d2, [lo1, lo2]);
                for m in 1..3 {
                    a[m] = a[m] - k * total[0][m];
                    b[m] = b[m] - k * total[1][m];
                }
                let mut s = side(*a, *b);
                if sources {
                    let f = if model.coriolis_per_cell != 0 { coriolis[c] } else { model.coriolis_f };
                    source_at(&model, &mut s, dt, f);
                }
                if second {
                    // Heun: (W_n + W**)/2, as W_n plus half the difference, so that a cell
                    // at rest (W** = W_n) keeps its numbers bit for bit; the deviations with
                    // their low parts, the difference of the pairs taken exactly.
                    let (s0, l0) = (side(start.0, start.1), start.2);
                    let inc1 = half * ((s.d1 - s0.d1) + (lo[0] - l0[0]));
                    let inc2 = half * ((s.d2 - s0.d2) + (lo[1] - l0[1]));
                    let (d1, lo1) = add_compensated(s0.d1, l0[0], inc1);
                    let (d2, lo2) = add_compensated(s0.d2, l0[1], inc2);
                    (s.d1, s.d2, *lo) = (d1, d2, [lo1, lo2]);
                    for x in 0..2 {
                        s.q1[x] = s0.q1[x] + half * (s.q1[x] - s0.q1[x]);
                        s.q2[x] = s0.q2[x] + half * (s.q2[x] - s0.q2[x]);
                    }
                }
                // Vanishing layers: momentum dropped at or below the dry tolerance, rounding
                // below zero set to an exact zero; the admissibility check (physics/wetdry.rs).
                let ok = settle(&model, &mut s, lo);
                *a = [s.d1, s.q1[0], s.q1[1], a[3]];
                *b = [s.d2, s.q2[0], s.q2[1], b[3]];
                ok
            })
            .reduce(|| true, |x, y| x && y);
        std::mem::swap(&mut self.lay.v1, &mut self.other[0]);
        std::mem::swap(&mut self.lay.v2, &mut self.other[1]);
        std::mem::swap(&mut self.lay.lo, &mut self.other_lo);
        self.health = if ok { Health::Ok } else { Health::Bad };
        Ok(())
    }

    pub fn layout(&self) -> &Layout<T> {
        &self.lay
    }
    pub fn layout_mut(&mut self) -> &mut Layout<T> {
        &mut self.lay
    }

    /// Second order: every cell's reconstructed edge values per layer (slot k at `3k..3k + 3`),
    /// from the last reconstruction; for tests that compare them with the GPU's.
    pub fn faces(&self) -> [&[[T; 9]]; 2] {
        [&self.faces[0], &self.faces[1]]
    }

    /// The six accumulators flattened in the GPU's order, `[(2 slot + layer) n + cell][4]`.
    pub fn accumulators(&self) -> Vec<T> {
        self.acc.iter().flat_map(|a| a.iter().flat_map(|v| v.iter().copied())).collect()
    }
}

impl<T: Real> Backend for CpuBackend<T> {
    fn describe(&self) -> String {
        format!("cpu ({}, {} threads)", T::NAME, rayon::current_num_threads())
    }
    fn name(&self) -> &'static str {
        "cpu"
    }
    fn precision(&self) -> &'static str {
        T::NAME
    }

    fn process_edges(&mut self, edges: Range<usize>, t: f64) -> Result<()> {
        self.lay.refresh_boundaries(t);
        let m = self.model;
        let t = T::c(t);
        let order2 = self.order == 2;
        let faces = &self.faces;
        let lay = &self.lay;
        let viscous = !lay.edge_viscosity.is_empty();
        let acc: [SlotPtr<T>; 6] = std::array::from_fn(|k| SlotPtr(self.acc[k].as_mut_ptr()));
        let fallbacks: u64 = edges
            .into_par_iter()
            .with_min_len(2048)
            .map(|e| {
                let [i, j, si, sj] = lay.edge_cells[e];
                let nl = lay.edge_normal[e];
                let len = (nl[0] * nl[0] + nl[1] * nl[1]).sqrt();
                let n = [nl[0] / len, nl[1] / len];
                let (i, si) = (i as usize, si as usize);
                let wi = side(lay.v1[i], lay.v2[i]);
                // The flux, and whether the edge is one the GPU writes as quiet (no water on
                // either side of what the flux read), which takes no viscous stress either.
                let (f, no_stress) = if order2 {
                    // Both sides the cells' reconstructed edge values (physics/reconstruct.rs).
                    let fi = face_side(faces, i, si, lay.v1[i][3]);
                    if j == BOUNDARY {
                        (edge_boundary_flux(&m, &lay.boundaries[sj as usize], &fi, &wi, n, t), true)
                    } else {
                        let (j, sj) = (j as usize, sj as usize);
                        let fj = face_side(faces, j, sj, lay.v1[j][3]);
                        (
                            edge_flux(&m, &fi, &fj, &wi, &side(lay.v1[j], lay.v2[j]), n),
                            viscous && dry_edge(&m, &fi, &fj),
                        )
                    }
                } else if j == BOUNDARY {
                    (boundary_flux(&m, &lay.boundaries[sj as usize], &wi, n, t), true)
                } else {
                    let wj = side(lay.v1[j as usize], lay.v2[j as usize]);
                    (numerical_flux(&m, &wi, &wj, n), viscous && dry_edge(&m, &wi, &wj))
                };
                let z = len * f.speed;
                let mut words = [
                    [len * f.i[0], len * f.i[1], len * f.i[2], z],
                    [len * f.i[3], len * f.i[4], len * f.i[5], T::zero()],
                    [-(len * f.j[0]), -(len * f.j[1]), -(len * f.j[2]), z],
                    [-(len * f.j[3]), -(len * f.j[4]), -(len * f.j[5]), T::zero()],
                ];
                if viscous && !no_stress && lay.edge_viscosity[e] > T::zero() {
                    // Between the cells' means, at both orders (physics/viscosity.rs).
                    let j = j as usize;
                    add_viscosity(&m, &wi, &side(lay.v1[j], lay.v2[j]), lay.edge_viscosity[e], &mut words);
                }
                // SAFETY: check_slots proved that (si, i) and (sj, j) belong to this edge alone.
                unsafe {
                    *acc[2 * si].0.add(i) = words[0];
                    *acc[2 * si + 1].0.add(i) = words[1];
                    if j != BOUNDARY {
                        let (j, sj) = (j as usize, sj as usize);
                        *acc[2 * sj].0.add(j) = words[2];
                        *acc[2 * sj + 1].0.add(j) = words[3];
                    }
                }
                f.fallback as u64
            })
            .sum();
        self.fallbacks += fallbacks;
        Ok(())
    }

    fn local_dt(&mut self, gamma: f64) -> Result<(f64, Health)> {
        let two_gamma = T::c(2.0 * gamma);
        let (a0, a2, a4) = (&self.acc[0], &self.acc[2], &self.acc[4]);
        let v2 = &self.lay.v2;
        let dt = (0..self.lay.n_owned)
            .into_par_iter()
            .with_min_len(8192)
            .map(|c| {
                let z = a0[c][3] + a2[c][3] + a4[c][3];
                two_gamma * v2[c][3] / z
            })
            .reduce(T::infinity, |a, b| a.min(b));
        Ok((dt.f64(), self.health))
    }

    fn health(&mut self) -> Result<Health> {
        Ok(self.health)
    }

    fn update(&mut self, step: StepContext) -> Result<()> {
        self.stage_update(step, false)
    }

    fn order(&self) -> u32 {
        self.order
    }

    fn second_stage(&mut self, step: StepContext) -> Result<()> {
        if self.order != 2 {
            bail!("second_stage at order {}", self.order);
        }
        self.stage_update(step, true)
    }

    fn reconstruct(&mut self, cells: Cells) -> Result<()> {
        if self.order != 2 {
            return Ok(());
        }
        let m = self.model;
        let lay = &self.lay;
        let (range, want) = cells.span(lay.num_cells(), lay.n_owned, &self.outer);
        let recon = &self.recon;
        let [f1, f2] = &mut self.faces;
        let at = range.start;
        f1[range.clone()].par_iter_mut().zip(f2[range].par_iter_mut()).enumerate().with_min_len(4096).for_each(
            |(k, (f1, f2))| {
                let c = at + k;
                if recon[c] & want == 0 {
                    return;
                }
                // What lies across a boundary slot needs no records: the cell's own stand in.
                let nb = lay.across[c].map(|o| {
                    let o = if o >= 0 { o as usize } else { c };
                    (lay.v1[o], lay.v2[o])
                });
                let (_, faces) = reconstruct::cell(&m, lay.v1[c], lay.v2[c], lay.across[c], &nb, &lay.stencil[c]);
                for (k, f) in faces.iter().enumerate() {
                    f1[3 * k..3 * k + 3].copy_from_slice(&f[0..3]);
                    f2[3 * k..3 * k + 3].copy_from_slice(&f[3..6]);
                }
            },
        );
        Ok(())
    }

    fn num_inner_edges(&self) -> usize {
        self.lay.n_inner_edges
    }

    fn fallbacks(&mut self) -> Result<u64> {
        Ok(self.fallbacks)
    }
    fn boundary_budget(&mut self) -> Result<Vec<[f64; 4]>> {
        if self.lay.specs.iter().all(|s| s.kind == crate::physics::BoundaryKind::Wall) {
            return Ok(vec![]);
        }
        Ok(budget_per_entry(&self.open, &self.budget, self.lay.specs.len()))
    }
    fn boundary_edges(&mut self) -> Result<super::backend::EdgeBudgets> {
        Ok((self.open.clone(), self.budget.clone()))
    }
    fn set_boundary_edges(&mut self, per_edge: &[[f64; 4]]) -> Result<()> {
        if per_edge.len() != self.budget.len() {
            bail!("{} boundary edge budgets for {} open boundary edges", per_edge.len(), self.budget.len());
        }
        self.budget.copy_from_slice(per_edge);
        Ok(())
    }
    fn state(&mut self) -> Result<Vec<CellState>> {
        Ok(self.lay.host_state())
    }
    fn stored_state(&mut self) -> Result<Vec<StoredCell>> {
        Ok((0..self.lay.n_owned).map(|c| self.lay.stored(c)).collect())
    }
    fn previous_state(&mut self) -> Result<Vec<CellState>> {
        let (lay, n) = (&self.lay, self.lay.n_owned);
        let stored = |c: usize| StoredCell::from_records(&self.other[0][c], &self.other[1][c], &self.other_lo[c]);
        Ok((0..n).map(|c| stored(c).state_in(lay.depth[c], &lay.reference, T::EPS.f64())).collect())
    }
    fn read_cells(&mut self, cells: &[usize]) -> Result<Vec<CellState>> {
        Ok(cells.iter().map(|&c| self.lay.cell_state(c)).collect())
    }
    fn num_edges(&self) -> usize {
        self.lay.num_edges()
    }
    fn num_local_edges(&self) -> usize {
        self.lay.n_local_edges
    }
    fn cell_bytes(&self) -> usize {
        std::mem::size_of::<[T; 4]>()
    }
    fn begin_download(&mut self, cells: Range<usize>) -> Result<()> {
        self.download = cells;
        Ok(())
    }
    fn finish_download(&mut self, v1: &mut [u8], v2: &mut [u8]) -> Result<()> {
        let cells = self.download.clone();
        v1.copy_from_slice(records_as_bytes(&self.lay.v1[cells.clone()]));
        v2.copy_from_slice(records_as_bytes(&self.lay.v2[cells]));
        Ok(())
    }
    fn extremes_start(&mut self, arrival: Arrival, from: Option<&[[f64; WIDTH]]>) -> Result<()> {
        let n = self.lay.n_owned;
        let e = match from {
            Some(f) if f.len() != n => bail!("extremes of {} cells for {n} owned cells", f.len()),
            Some(f) => f.to_vec(),
            None => (0..n)
                .map(|c| {
                    let s = self.lay.cell_state(c);
                    extremes::start(s.h1, s.q1[0], s.q1[1], s.h2, s.q2[0], s.q2[1], arrival)
                })
                .collect(),
        };
        self.extremes = Some((arrival, e));
        Ok(())
    }
    fn extremes_fold(&mut self, t: f64) -> Result<()> {
        let Some((a, e)) = &mut self.extremes else { bail!("extremes_fold before extremes_start") };
        let (lay, a) = (&self.lay, *a);
        e.par_iter_mut().enumerate().with_min_len(8192).for_each(|(c, e)| {
            // The thicknesses as the frames compute them, so the maps equal their maximum.
            let s = lay.cell_state(c);
            extremes::fold(e, s.h1, s.q1[0], s.q1[1], s.h2, s.q2[0], s.q2[1], t, a)
        });
        Ok(())
    }
    fn extremes(&mut self) -> Result<Vec<[f64; WIDTH]>> {
        match &self.extremes {
            Some((_, e)) => Ok(e.clone()),
            None => bail!("extremes read before extremes_start"),
        }
    }
    fn upload_receive_block(&mut self, v1: &[u8], v2: &[u8]) -> Result<()> {
        let n = self.lay.n_owned;
        copy_into_records(&mut self.lay.v1[n..], v1)?;
        copy_into_records(&mut self.lay.v2[n..], v2)
    }
}

fn records_as_bytes<T: Real>(r: &[[T; 4]]) -> &[u8] {
    // SAFETY: floats have no padding; any initialized memory is valid as bytes.
    unsafe { std::slice::from_raw_parts(r.as_ptr() as *const u8, std::mem::size_of_val(r)) }
}

fn copy_into_records<T: Real>(r: &mut [[T; 4]], bytes: &[u8]) -> Result<()> {
    if bytes.len() != std::mem::size_of_val(r) {
        bail!("receive block of {} bytes for {} cells", bytes.len(), r.len());
    }
    // SAFETY: same size; every bit pattern is a valid f32/f64.
    let dst = unsafe { std::slice::from_raw_parts_mut(r.as_mut_ptr() as *mut u8, bytes.len()) };
    dst.copy_from_slice(bytes);
    Ok(())
}
