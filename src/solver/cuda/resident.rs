//! Device-resident steps: a CUDA graph of K whole steps (edge pass, time step with its
//! minimum and its clip to the target, update; at second order two stages, `enqueue_steps2`)
//! that the host launches and then reads back once, instead of launching three kernels and
//! reading the time step back every step (about 30 µs a step on an H200, whatever the mesh).
//! The kernels are `kernels/resident.cu`; the step is the host loop's (`solver/stepper.rs`),
//! in the same float64 arithmetic, so results do not depend on K.
//!
//! Graphs of 4, 8, 12, ..., 64 steps (`PYCNO_DEVICE_STEPS` caps it): each batch takes the
//! smallest that covers the steps expected to its target (from the last step's length; the
//! first batch from the first step's, found at set-up) if it overshoots them by a few steps,
//! else the largest that does not overshoot: a batch's round trip costs about as much as a
//! dozen launches, and each step of a graph after its batch stopped still costs a launch of
//! each of its kernels (`pick`).
//!
//! The update writes the other buffer set, so step k of a graph reads the set of parity
//! (p + k) mod 2: two graphs, one for each set the batch starts from. Steps after the one
//! that stops the batch are no-ops, and the host swaps its sets once per step taken.

use super::ipc::{Exchange, STOP_TIMEOUT};
use super::launch::{address, grid, launch_ex, DeviceArrays};
use super::order2::RestDevice;
use super::{CudaBackend, CudaReal};
use crate::solver::backend::{Cells, DeviceBatch, DeviceSteps, DeviceStop};
use anyhow::{anyhow, bail, Context, Result};
use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{CudaFunction, CudaGraph, CudaSlice, LaunchConfig, PinnedHostSlice};
use std::ffi::c_void;

/// A kernel argument as `cuLaunchKernelEx` takes it.
fn arg<A>(a: &A) -> *const c_void {
    a as *const A as *const c_void
}

/// The main stream while steps are queued: whether the last thing on it was one of our
/// kernels (the next may then be launched with programmatic dependent launch).
struct Queue<'a> {
    stream: &'a cudarc::driver::CudaStream,
    pdl: bool,
    after_kernel: bool,
}

impl Queue<'_> {
    fn kernel(&mut self, f: &CudaFunction, cfg: LaunchConfig, args: &[*const c_void], what: &str) -> Result<()> {
        // SAFETY: every caller passes its kernel's arguments, in order (see each call).
        unsafe { launch_ex(self.stream, f, cfg, self.pdl && self.after_kernel, args) }
            .with_context(|| format!("queueing {what}"))?;
        self.after_kernel = true;
        Ok(())
    }
}

/// `Control` of `kernels/resident.cu`, as 17 words.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct Control {
    t: f64,
    target: f64,
    dt: f64,
    dt_min: f64,
    dt_max: f64,
    t_step: f64,
    dt_min_unclipped: f64,
    pad1: f64,
    stop: u64,
    steps: u64,
    limit: u64,
    blocks: u64,
    hit: u64,
    clipped: u64,
    /// Several GPUs: the rank's step as `!bits` and its health flag, all-reduced (max).
    reduce: [u64; 2],
    /// Exchanges before this batch (numbers the GPUs' stores of `ipc.rs`).
    seq: u64,
}

/// Byte offset of `Control::reduce` in the control block.
const REDUCE_OFFSET: u64 = std::mem::offset_of!(Control, reduce) as u64;
/// The control block's eight-byte words, and the words of `stop` and `seq` (written and read
/// by the host-driven steps of `ipc.rs`).
pub(super) const CONTROL_WORDS: usize = std::mem::size_of::<Control>() / 8;
pub(super) const STOP_WORD: usize = std::mem::offset_of!(Control, stop) / 8;
pub(super) const SEQ_WORD: usize = std::mem::offset_of!(Control, seq) / 8;
// The layout `kernels/resident.cu` has.
const _: () = assert!(CONTROL_WORDS == 17 && STOP_WORD == 8 && SEQ_WORD == 16 && REDUCE_OFFSET == 14 * 8);

// SAFETY: #[repr(C)], 17 eight-byte fields, no padding; every bit pattern is valid.
unsafe impl bytemuck::Zeroable for Control {}
// SAFETY: as above.
unsafe impl bytemuck::Pod for Control {}

/// The graphs and the control block of one backend.
pub struct Resident {
    two_gamma_bits: u64,
    /// Graphs of several sizes (steps), smallest first (see [`pick`]): the steps of a graph
    /// after its batch stopped still cost a launch each (about 1.5 µs on an H200). Graph `p` of a size
    /// starts from buffer set `p` (set 0: the buffers `v1, v2, lo` held at start).
    /// `None` where the steps are queued one kernel at a time instead (`PYCNO_NCCL_GRAPH=0`
    /// with the GPU-to-GPU exchange: NCCL calls outside CUDA graphs, for comparison).
    graphs: Vec<(u64, Option<[CudaGraph; 2]>)>,
    /// The last step's length, for the guess of the steps to the next target.
    last_dt: f64,
    ctl: CudaSlice<u64>,
    /// The control block's copy on the host, page-locked: a batch's two small copies are
    /// then queued directly, where pageable memory goes through the driver's staging (its
    /// read-back also blocks the host until the graph is done). Written before the batch's
    /// copy to the device and read after the stream is synchronized, so that no copy is in
    /// flight while the host touches it (cudarc tracks no events on it: see `CudaBackend::new`).
    host: PinnedHostSlice<u64>,
}

/// The spacing of the graph sizes (`sizes`): 0, every fourth step count; or
/// `PYCNO_BATCH_SIZES=2` or `4`, powers of 2 or 4 (the sizes before, for comparison).
fn batch_base() -> u64 {
    std::env::var("PYCNO_BATCH_SIZES").ok().and_then(|v| v.parse().ok()).filter(|&b| b == 2 || b == 4).unwrap_or(0)
}

/// Whether the kernel after the join of the exchange's stream (the GPUs' own stores; the
/// time step at first order, the outer tiles at second) is launched programmatically after
/// the main stream's kernel before it: it then waits in `pdl_wait` for that kernel and the
/// exchange's (every resident and peer kernel waits there before reading anything), instead
/// of being launched once both are done. 0.6% faster at 2.6e5 cells and 0.4% at 10^6 on two
/// H200s, the same bits (BENCHMARKS.md, issue 20); `PYCNO_JOIN_PDL=0` launches it plainly.
fn join_pdl() -> bool {
    std::env::var("PYCNO_JOIN_PDL").map_or(true, |v| v != "0")
}

/// Whether NCCL calls go into the CUDA graphs (`PYCNO_NCCL_GRAPH=0`: queued step by step).
fn nccl_in_graphs() -> bool {
    std::env::var("PYCNO_NCCL_GRAPH").map_or(true, |v| v != "0")
}

/// Blocks of the device-resident time-step kernel: enough to fill an H200 (132 SMs) a few
/// times over, few enough that counting them is cheap.
const DT_BLOCKS: u32 = 1024;

/// Owned cells up to which each resident kernel lets the next be scheduled after its own wait
/// (`pdl_trigger` in `kernels/resident.cu`; `PYCNO_PDL_EARLY_CELLS` to try others): on an
/// H200 it gains 10-12% at 4040 and 15736 cells, where a step is a chain of a few microseconds
/// of latency, and costs 1.5% at 64222 cells, where the waiting blocks take room the running
/// kernel's later waves need (BENCHMARKS.md, issue 20).
const PDL_EARLY_CELLS: usize = 16384;

/// A count of cells from the environment variable `var` (a switch for comparisons), else
/// `default`.
pub(super) fn cells_from_env(var: &str, default: usize) -> usize {
    std::env::var(var).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Graph sizes for batches of at most `k` steps: every multiple of 4 up to 64, then powers
/// of 2, and `k` (`base` 2 or 4: powers of `base` from 4, the sizes of earlier versions, for
/// comparison). Each size is two graphs captured at set-up; with a size for every count of
/// steps up to 64 to within 3, a batch that ends at its target is one batch (20 steps: 20,
/// where powers of 2 took 16 + 4, two round trips).
fn sizes(k: u64, base: u64) -> Vec<u64> {
    let next = |&s: &u64| Some(if base == 0 && s < 64 { s + 4 } else { s * base.max(2) });
    let mut v: Vec<u64> = std::iter::successors(Some(4u64), next).take_while(|&s| s < k).collect();
    v.push(k);
    v
}

/// Kernel launches a batch's round trip costs (its control block written, the graph
/// launched, the host woken to read it back: about 20 µs on an H200 against about 1.5 µs a
/// no-op launch; BENCHMARKS.md, issue 20): a batch may overshoot its expected steps by as many
/// steps as cost at most that many launches, since each step after the batch stopped is a
/// launch of each of its kernels that returns at once.
const BATCH_LAUNCHES: u64 = 12;

/// The size to launch for `limit` steps at most, with about `expected` steps to the target:
/// the smallest that covers them if it overshoots by at most `slack` steps (one batch instead
/// of several), else the largest that does not overshoot, else the smallest.
fn pick(sizes: &[u64], limit: u64, expected: u64, slack: u64) -> usize {
    let want = limit.min(expected).max(1);
    if let Some(at) = sizes.iter().position(|&s| s >= want && s - want <= slack) {
        return at;
    }
    sizes.iter().rposition(|&s| s <= want).unwrap_or(0)
}

// SAFETY: a CUDA graph may be used from any thread as long as no two threads use it at once
// (CUDA's graph thread-safety rules); it lives in one backend, which is `Send` but not
// `Sync`, and is only touched through `&mut self`.
unsafe impl Send for Resident {}

/// The functions of the resident kernels.
pub struct ResidentFns {
    edge: CudaFunction,
    dt: CudaFunction,
    update: CudaFunction,
    finalize: CudaFunction,
    /// Second order's stages (`PYCNO_RESIDENT2` in `kernels/resident.cu`).
    reconstruct2: CudaFunction,
    edge2: CudaFunction,
    tile2: CudaFunction,
    /// The first stage's tiles where they sum cells (`order2.rs`, `order2_summed`), and the
    /// second stage's where they finish cells (`order2_rest`).
    tile2_sums: CudaFunction,
    tile2_finish: CudaFunction,
    update2: CudaFunction,
    /// The time step over the cells the summing tiles leave (`RestArrays`).
    dt_rest: CudaFunction,
}

impl ResidentFns {
    /// `viscous`: the run has a horizontal viscosity, whose edge kernel it takes.
    pub fn load(
        module: &std::sync::Arc<cudarc::driver::CudaModule>,
        suffix: &str,
        viscous: bool,
    ) -> Result<ResidentFns> {
        let f = |op: &str| {
            module
                .load_function(&format!("{op}_resident_{suffix}"))
                .with_context(|| format!("kernel {op}_resident missing"))
        };
        let (tile2_sums, tile2_finish) = (f("tile2_sums")?, f("tile2_finish")?);
        for k in [&tile2_sums, &tile2_finish] {
            super::order2::allow_tile_shared(k, if suffix == "f32" { 4 } else { 8 })?;
        }
        Ok(ResidentFns {
            edge: f(if viscous { "edge_visc" } else { "edge" })?,
            dt: f("dt")?,
            update: f("update")?,
            finalize: f("finalize")?,
            reconstruct2: f("reconstruct")?,
            edge2: f("edge2")?,
            tile2: f("tile2")?,
            tile2_sums,
            tile2_finish,
            update2: f("update2")?,
            dt_rest: f("dt_rest")?,
        })
    }
}

impl<T: CudaReal> CudaBackend<T> {
    /// Which buffer set is current: 0 if `v1` is the one allocated first.
    fn parity(&self) -> usize {
        (address(&self.v1, &self.stream) != self.home[0].v1) as usize
    }

    /// Steps a batch may overshoot (`pick`): [`BATCH_LAUNCHES`] over the kernels of a step
    /// (first order on one GPU 3; with the exchange about 6; second order 5 with tiles, 7
    /// without, about 10 on several GPUs). `PYCNO_BATCH_SLACK` sets it, for comparison (0: the
    /// choice before 2026-11-26).
    fn batch_slack(&self) -> u64 {
        if let Some(v) = std::env::var("PYCNO_BATCH_SLACK").ok().and_then(|v| v.parse().ok()) {
            return v;
        }
        let several = self.ipc.is_some() || self.peer.is_some();
        let launches = match (&self.order2, several) {
            (None, false) => 3,
            (None, true) => 6,
            (Some(o), false) => o.step_kernels(),
            (Some(_), true) => 10,
        };
        BATCH_LAUNCHES / launches
    }

    /// Queue `k` steps starting from buffer set `parity` on the main stream (captured into a
    /// graph, or launched as they are). With a GPU-to-GPU exchange each step first moves
    /// the halo (overlapped with the interior edges, as the host-driven edge pass) and
    /// reduces the time step and the health flag over the ranks before the update: by the
    /// kernels' own stores (`ipc.rs`) or with NCCL (`peer.rs`).
    ///
    /// Kernels that follow one of ours on the main stream are launched with programmatic
    /// dependent launch where the GPU has it (`launch_ex`); after a wait on the exchange's
    /// stream or an NCCL call, plainly.
    fn enqueue_steps(
        &self,
        fns: &ResidentFns,
        ctl: &CudaSlice<u64>,
        parity: usize,
        k: u64,
        two_gamma: T,
    ) -> Result<()> {
        let c = address(ctl, &self.stream);
        let (m, ne, nl) = (self.model, self.n_edges as i32, self.n_local_edges as i32);
        let s = &self.stream;
        let mut q = Queue { stream: s, pdl: self.pdl, after_kernel: false };
        let finalize = i32::from(self.peer.is_none() && self.ipc.is_none());
        let early = i32::from(self.pdl && self.n_owned <= cells_from_env("PYCNO_PDL_EARLY_CELLS", PDL_EARLY_CELLS));
        // At most DT_BLOCKS blocks, each thread over several cells (see the kernel).
        let mut dt_grid = grid(self.n_owned);
        dt_grid.grid_dim.0 = dt_grid.grid_dim.0.min(DT_BLOCKS);
        if self.order2.is_some() {
            return self.enqueue_steps2(fns, &mut q, c, parity, k, two_gamma, dt_grid, early);
        }
        for step in 0..k {
            let a: DeviceArrays = self.home[(parity + step as usize) % 2];
            // edge_resident_{f32,f64}(a, m, begin, end, c, early)
            let edges = |q: &mut Queue, begin: i32, end: i32| -> Result<()> {
                if begin >= end {
                    return Ok(());
                }
                let args = [arg(&a), arg(&m), arg(&begin), arg(&end), arg(&c), arg(&early)];
                q.kernel(&fns.edge, grid((end - begin) as usize), &args, "the edge kernel")
            };
            if self.ipc.as_ref().is_some_and(|p| p.ghosts) {
                // The receive block was updated by the step before (update_ghost_peer): one
                // GPU's edge pass.
                edges(&mut q, 0, ne)?;
            } else if let Some(p) = &self.ipc {
                // The communication edges follow the receipt on the exchange's stream, beside
                // the interior edges (they write other accumulator slots): the step then
                // waits for the later of the two, not for both in turn.
                if p.update_sends {
                    // The update before sent this step's halo (update_peer), so the receipt
                    // waits for the peers' flags alone, and may wait while this rank's update
                    // runs (its receive block is another buffer set's than the last step's
                    // edges read); the communication edges also wait for that update.
                    if step == 0 {
                        p.stream.wait(&s.record_event(None)?)?;
                    }
                    self.enqueue_ipc_receive(&a, c, Exchange::first_order(step), &p.stream)?;
                    p.stream.wait(&s.record_event(None)?)?;
                    let mut side = Queue { stream: &p.stream, pdl: self.pdl, after_kernel: false };
                    edges(&mut side, nl, ne)?;
                } else {
                    p.stream.wait(&s.record_event(None)?)?;
                    self.enqueue_ipc(&a, c, Exchange::first_order(step), &p.stream)?;
                    let mut side = Queue { stream: &p.stream, pdl: self.pdl, after_kernel: true };
                    edges(&mut side, nl, ne)?;
                }
                let done = p.stream.record_event(None)?;
                edges(&mut q, 0, nl)?;
                s.wait(&done)?;
                q.after_kernel = join_pdl();
            } else if let Some(p) = &self.peer {
                p.stream.wait(&s.record_event(None)?)?;
                p.enqueue(&a, &p.stream)?;
                let done = p.stream.record_event(None)?;
                edges(&mut q, 0, nl)?;
                s.wait(&done)?;
                q.after_kernel = false;
                edges(&mut q, nl, ne)?;
            } else {
                edges(&mut q, 0, ne)?;
            }
            if let Some(p) = self.ipc.as_ref().filter(|p| p.ghosts) {
                // dt_ghost_peer_{f32,f64}(a, two_gamma, c, peer args, k, m): also stores the ghost words.
                let args = [arg(&a), arg(&two_gamma), arg(&c), arg(&p.args), arg(&step), arg(&m)];
                q.kernel(&p.fns.dt_ghost, dt_grid, &args, "the time-step kernel")?;
            } else if let Some(p) = &self.ipc {
                // dt_peer_{f32,f64}(a, two_gamma, c, peer args, k)
                let args = [arg(&a), arg(&two_gamma), arg(&c), arg(&p.args), arg(&step)];
                q.kernel(&p.fns.dt, dt_grid, &args, "the time-step kernel")?;
            } else {
                // dt_resident_{f32,f64}(a, two_gamma, c, finalize, early)
                let args = [arg(&a), arg(&two_gamma), arg(&c), arg(&finalize), arg(&early)];
                q.kernel(&fns.dt, dt_grid, &args, "the time-step kernel")?;
            }
            if self.peer.is_some() {
                self.enqueue_reduce(c + REDUCE_OFFSET)?;
                q.after_kernel = false;
                let one =
                    cudarc::driver::LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 };
                // finalize_resident_{f32,f64}(a, c)
                q.kernel(&fns.finalize, one, &[arg(&a), arg(&c)], "the step's choice")?;
            }
            match &self.ipc {
                // update_ghost_peer_{f32,f64}(a, m, c, k, early, peer args): the receive block too.
                Some(p) if p.ghosts => {
                    let args = [arg(&a), arg(&m), arg(&c), arg(&step), arg(&early), arg(&p.args)];
                    let n = self.n_owned + p.n_recv();
                    q.kernel(&p.fns.update_ghost, grid(n), &args, "the update kernel")?;
                }
                // update_peer_{f32,f64}(a, m, c, k, early, peer args): also sends the next step's halo.
                Some(p) if p.update_sends => {
                    let args = [arg(&a), arg(&m), arg(&c), arg(&step), arg(&early), arg(&p.args)];
                    q.kernel(&p.fns.update, grid(self.n_owned), &args, "the update kernel")?;
                }
                // update_resident_{f32,f64}(a, m, c, k, early)
                _ => {
                    let args = [arg(&a), arg(&m), arg(&c), arg(&step), arg(&early)];
                    q.kernel(&fns.update, grid(self.n_owned), &args, "the update kernel")?;
                }
            }
        }
        Ok(())
    }

    /// Second order's `k` steps on one GPU (`PYCNO_RESIDENT2` in `kernels/resident.cu`): each
    /// the host loop's two stages (`stepper.rs`) with the host-driven kernels' code
    /// (`order2.rs`). Stage 1 reads set `parity` and writes the other; stage 2 reads that one
    /// and the step's start, and writes the new state over the start: every step begins and
    /// ends in set `parity`.
    #[allow(clippy::too_many_arguments)]
    fn enqueue_steps2(
        &self,
        fns: &ResidentFns,
        q: &mut Queue,
        c: u64,
        parity: usize,
        k: u64,
        two_gamma: T,
        dt_grid: LaunchConfig,
        early: i32,
    ) -> Result<()> {
        if self.peer.is_some() {
            bail!("second order exchanges from GPU to GPU by the GPUs' own stores only, not NCCL");
        }
        let (m, o) = (self.model, self.order2_device());
        let (ne, ni) = (self.n_edges, crate::solver::Backend::num_inner_edges(self));
        // The edge pass over the edges of one of the tiles' ranges (0..ne, or with an exchange
        // 0..ni while the halo travels and ni..ne after it), the cells they read reconstructed.
        // Where the tiles finish cells at the second stage (`rest`: the cells they do not), the
        // update then takes only the rest; where the first stage's tiles sum those cells
        // (`summed`), its time step takes only the rest and its update reads their sums. The
        // tiles that sum or finish put the rest's words in the list's order.
        let rest = self.order2_rest();
        let summed = self.order2_summed().filter(|_| rest.is_some());
        let listed = rest.unwrap_or_default();
        let tiles = |keep: bool| -> Result<[_; 3]> {
            Ok([self.order2_tiles(0..ne, keep)?, self.order2_tiles(0..ni, keep)?, self.order2_tiles(ni..ne, keep)?])
        };
        let tiles = [tiles(summed.is_some())?, tiles(rest.is_some())?];
        let ranges = [(0..ne, Cells::All), (0..ni, Cells::Inner(0..self.n_owned)), (ni..ne, Cells::Outer)];
        let pass = |q: &mut Queue, which: usize, a: &DeviceArrays, step: u64, stage: i32| -> Result<()> {
            let (edges, cells) = &ranges[which];
            if let Some((ta, cfg, first)) = &tiles[stage as usize][which] {
                if cfg.grid_dim.0 == 0 {
                    return Ok(());
                }
                if stage == 1 && rest.is_some() {
                    // tile2_finish_resident_{f32,f64}(a, o, ta, rest, m, tile_begin, c, k, early)
                    let args = [arg(a), arg(&o), arg(ta), arg(&listed), arg(&m), arg(first), arg(&c), arg(&step)];
                    let args = [&args[..], &[arg(&early)]].concat();
                    return q.kernel(&fns.tile2_finish, *cfg, &args, "the finishing reconstruction and edge kernel");
                }
                if stage == 0 && summed.is_some() {
                    // tile2_sums_resident_{f32,f64}(a, o, ta, rest, m, tile_begin, c, k, two_gamma, early)
                    let args = [arg(a), arg(&o), arg(ta), arg(&listed), arg(&m), arg(first), arg(&c), arg(&step)];
                    let args = [&args[..], &[arg(&two_gamma), arg(&early)]].concat();
                    return q.kernel(&fns.tile2_sums, *cfg, &args, "the summing reconstruction and edge kernel");
                }
                // tile2_resident_{f32,f64}(a, o, ta, m, tile_begin, c, k, stage, early)
                let args = [arg(a), arg(&o), arg(ta), arg(&m), arg(first), arg(&c), arg(&step), arg(&stage)];
                let args = [&args[..], &[arg(&early)]].concat();
                return q.kernel(&fns.tile2, *cfg, &args, "the reconstruction and edge kernel");
            }
            let (span, want) = self.order2_cells(cells);
            if !span.is_empty() {
                let (begin, end, want) = (span.start as i32, span.end as i32, i32::from(want));
                // reconstruct_resident_{f32,f64}(a, o, m, begin, end, want, c, k, stage, early)
                let args = [arg(a), arg(&o), arg(&m), arg(&begin), arg(&end), arg(&want), arg(&c), arg(&step)];
                let args = [&args[..], &[arg(&stage), arg(&early)]].concat();
                q.kernel(&fns.reconstruct2, grid(span.len()), &args, "the reconstruction kernel")?;
            }
            if !edges.is_empty() {
                let (begin, end) = (edges.start as i32, edges.end as i32);
                // edge2_resident_{f32,f64}(a, o, m, e_begin, e_end, c, k, stage, early)
                let args = [arg(a), arg(&o), arg(&m), arg(&begin), arg(&end), arg(&c), arg(&step), arg(&stage)];
                let args = [&args[..], &[arg(&early)]].concat();
                q.kernel(&fns.edge2, grid(edges.len()), &args, "the edge kernel")?;
            }
            Ok(())
        };
        let s = &self.stream;
        for step in 0..k {
            for stage in 0..2i32 {
                let a: DeviceArrays = self.home[(parity + stage as usize) % 2];
                if let Some(p) = &self.ipc {
                    // Each stage's halo (the states it reads), sent at its start once the
                    // update before wrote them, received while the inner cells are computed.
                    p.stream.wait(&s.record_event(None)?)?;
                    self.enqueue_ipc(&a, c, Exchange::second_order(step, stage), &p.stream)?;
                    let done = p.stream.record_event(None)?;
                    pass(q, 1, &a, step, stage)?;
                    s.wait(&done)?;
                    q.after_kernel = join_pdl();
                    pass(q, 2, &a, step, stage)?;
                } else {
                    pass(q, 0, &a, step, stage)?;
                }
                if stage == 0 {
                    if let Some(p) = &self.ipc {
                        // dt_peer_{f32,f64}(a, two_gamma, c, peer args, k): numbered as the step's
                        // first exchange.
                        let first = 2 * step;
                        let args = [arg(&a), arg(&two_gamma), arg(&c), arg(&p.args), arg(&first)];
                        q.kernel(&p.fns.dt, dt_grid, &args, "the time-step kernel")?;
                    } else if summed.is_some() {
                        // dt_rest_resident_{f32,f64}(a, two_gamma, c, rest, early): the cells the
                        // tiles did not sum.
                        let args = [arg(&a), arg(&two_gamma), arg(&c), arg(&listed), arg(&early)];
                        q.kernel(&fns.dt_rest, dt_grid, &args, "the time-step kernel")?;
                    } else {
                        // dt_resident_{f32,f64}(a, two_gamma, c, finalize, early)
                        let finalize = 1i32;
                        let args = [arg(&a), arg(&two_gamma), arg(&c), arg(&finalize), arg(&early)];
                        q.kernel(&fns.dt, dt_grid, &args, "the time-step kernel")?;
                    }
                }
                // update2_resident_{f32,f64}(a, o, m, c, k, second, rest, summed, early): at the
                // second stage only the cells the tiles did not finish, where they finish some;
                // at the first, the sums of those the tiles summed, then the others.
                let (list, bits, n) = match (stage, rest, summed) {
                    (1, Some(r), _) => (r, 0u64, r.n as usize),
                    (0, Some(r), Some(b)) => (r, b, self.n_owned + r.n as usize),
                    _ => (RestDevice::default(), 0u64, self.n_owned),
                };
                let args = [arg(&a), arg(&o), arg(&m), arg(&c), arg(&step), arg(&stage), arg(&list), arg(&bits)];
                let args = [&args[..], &[arg(&early)]].concat();
                // At least one thread: the first resets the time step's minimum.
                q.kernel(&fns.update2, grid(n.max(1)), &args, "the update kernel")?;
            }
        }
        Ok(())
    }

    /// Capture `k` steps starting from buffer set `parity` into a graph.
    fn capture(
        &self,
        fns: &ResidentFns,
        ctl: &CudaSlice<u64>,
        parity: usize,
        k: u64,
        two_gamma: T,
    ) -> Result<CudaGraph> {
        self.stream
            .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .context("starting a CUDA graph capture")?;
        let launched = self.enqueue_steps(fns, ctl, parity, k, two_gamma);
        // The capture always ends, or the stream stays in capture mode.
        let graph = self.stream.end_capture(CUgraphInstantiate_flags(0));
        launched.context("capturing the steps")?;
        graph.context("making the CUDA graph")?.ok_or_else(|| anyhow!("the CUDA graph capture recorded nothing"))
    }

    /// Capture the graphs for CFL number `gamma` (once; again if it changes). Set-up, like
    /// compiling the kernels: the step loop calls it before its clock starts.
    pub(super) fn prepare_resident(&mut self, gamma: f64) -> Result<()> {
        if self.timing.is_some() || self.sync_each_launch || self.resident_k < 2 || self.host_driven_boundaries() {
            return Ok(());
        }
        let two_gamma = T::c(2.0 * gamma);
        let bits = two_gamma.f64().to_bits();
        if self.resident.as_ref().is_none_or(|r| r.two_gamma_bits != bits) {
            let fns = self.resident_fns.as_ref().ok_or_else(|| anyhow!("resident kernels not loaded"))?;
            let mut ctl = self.stream.alloc_zeros::<u64>(CONTROL_WORDS).context("allocating the step control block")?;
            let mut graphs = Vec::new();
            for k in sizes(self.resident_k, batch_base()) {
                if self.peer.is_some() && !nccl_in_graphs() {
                    graphs.push((k, None));
                    continue;
                }
                let pair = [self.capture(fns, &ctl, 0, k, two_gamma)?, self.capture(fns, &ctl, 1, k, two_gamma)?];
                for g in &pair {
                    g.upload().context("uploading the steps' CUDA graph")?;
                }
                graphs.push((k, Some(pair)));
            }
            self.warm_up(&mut ctl, &graphs)?;
            // SAFETY: written in full before every use (resident_steps).
            let host = unsafe { self.ctx.alloc_pinned_with_flags::<u64>(CONTROL_WORDS, 0) }
                .context("allocating the step control block's host copy")?;
            let last_dt = self.first_dt(gamma)?;
            self.resident = Some(Resident { two_gamma_bits: bits, graphs, last_dt, ctl, host });
        }
        Ok(())
    }

    /// The next step's time step (0 where not found), for the size of the first batch: the
    /// edge pass and the time-step kernel on the current state, as that step will compute
    /// them, at set-up. On one GPU at first order (elsewhere the first batch guesses). The
    /// scratch words the kernels change (the minimum, the fallback count) are put back, and
    /// every accumulator slot is written again by the step's own edge pass, so the run's
    /// results and counts are unchanged (tests/gpu.rs).
    fn first_dt(&mut self, gamma: f64) -> Result<f64> {
        if self.order2.is_some() || self.ipc.is_some() || self.peer.is_some() || self.halo.is_some() {
            return Ok(0.0);
        }
        let saved = self.stream.clone_dtoh(&self.scratch).context("reading the scratch words")?;
        // Every boundary is a wall here (`host_driven_boundaries`): the time is not read.
        crate::solver::Backend::process_edges(self, 0..self.n_edges, self.boundaries_time)?;
        let (dt, _) = crate::solver::Backend::local_dt(self, gamma)?;
        self.stream.memcpy_htod(&saved, &mut self.scratch).context("restoring the scratch words")?;
        Ok(if dt.is_finite() && dt > 0.0 { dt } else { 0.0 })
    }

    /// Launch each graph once with every step a no-op (`stop` set), at set-up: a graph's
    /// first launch costs more than later ones, and a run's first batch would pay it in its
    /// stepping time (`PYCNO_GRAPH_WARMUP=0` skips it, for comparison). Not with NCCL, whose
    /// collectives in the graphs would run on every rank.
    fn warm_up(&self, ctl: &mut CudaSlice<u64>, graphs: &[(u64, Option<[CudaGraph; 2]>)]) -> Result<()> {
        if self.peer.is_some() || std::env::var("PYCNO_GRAPH_WARMUP").is_ok_and(|v| v == "0") {
            return Ok(());
        }
        let idle: [u64; CONTROL_WORDS] = bytemuck::cast(Control { stop: 1, ..Default::default() });
        self.stream.memcpy_htod(&idle, ctl).context("writing the step control block")?;
        for g in graphs.iter().filter_map(|g| g.1.as_ref()).flatten() {
            g.launch().context("launching the steps' CUDA graph")?;
        }
        self.stream.synchronize().context("warming up the steps' CUDA graphs")
    }

    /// See [`crate::solver::Backend::steps_on_device`].
    pub(super) fn resident_steps(&mut self, req: DeviceSteps) -> Result<Option<DeviceBatch>> {
        if self.timing.is_some() || self.sync_each_launch || self.resident_k < 2 || self.host_driven_boundaries() {
            return Ok(None);
        }
        self.prepare_resident(req.gamma)?;
        let parity = self.parity();
        let slack = self.batch_slack();
        let r = self.resident.as_mut().expect("made above");
        let sizes: Vec<u64> = r.graphs.iter().map(|g| g.0).collect();
        // Without a step's length, guess 16 (a wrong guess costs one short batch or a few
        // no-ops).
        let expected = if r.last_dt > 0.0 { ((req.target - req.t) / r.last_dt).ceil().min(1e9) as u64 } else { 16 };
        let at = pick(&sizes, req.limit, expected, slack);
        let k = r.graphs[at].0;
        let start = Control {
            t: req.t,
            target: req.target,
            dt_min: f64::INFINITY,
            dt_min_unclipped: f64::INFINITY,
            limit: req.limit.clamp(1, k),
            seq: self.ipc.as_ref().map_or(0, |p| p.seq),
            ..Default::default()
        };
        let words: [u64; CONTROL_WORDS] = bytemuck::cast(start);
        r.host.as_mut_slice().context("the step control block's host copy")?.copy_from_slice(&words);
        self.stream.memcpy_htod(&r.host, &mut r.ctl).context("writing the step control block")?;
        if let Some(p) = self.ipc.as_ref().filter(|p| !p.primed) {
            let ctl = address(&r.ctl, &self.stream);
            if p.ghosts {
                // The receive block as the owners hold it now (later batches' steps update it
                // themselves). Exchange 1 of the batch on the halo's flags: its steps number
                // only minima.
                self.enqueue_ipc(&self.home[parity], ctl, Exchange::first_order(0), &self.stream)?;
            } else if p.update_sends {
                // The first batch's first halo (later ones were sent by the update before).
                self.enqueue_ipc_send(&self.home[parity], ctl, Exchange::first_order(0), &self.stream)?;
            }
        }
        if let Some(p) = self.ipc.as_mut() {
            p.primed = true;
        }
        let r = self.resident.as_mut().expect("made above");
        let graphed = match &r.graphs[at].1 {
            Some(pair) => {
                pair[parity].launch().context("launching the steps' CUDA graph")?;
                true
            }
            None => false,
        };
        let r = self.resident.as_ref().expect("made above");
        if !graphed {
            let fns = self.resident_fns.as_ref().ok_or_else(|| anyhow!("resident kernels not loaded"))?;
            self.enqueue_steps(fns, &r.ctl, parity, k, T::c(f64::from_bits(r.two_gamma_bits)))?;
        }
        let r = self.resident.as_mut().expect("made above");
        self.stream.memcpy_dtoh(&r.ctl, &mut r.host).context("reading the steps back")?;
        self.stream.synchronize().context("the steps on the device")?;
        let mut back = [0u64; CONTROL_WORDS];
        back.copy_from_slice(r.host.as_slice().context("the step control block's host copy")?);
        let c: Control = bytemuck::cast(back);
        if c.steps > k {
            bail!("the device reports {} steps of a batch of {k}", c.steps);
        }
        if c.steps > 0 {
            r.last_dt = c.dt;
        }
        if c.stop == STOP_TIMEOUT {
            return Err(super::ipc::timeout());
        }
        if let Some(p) = &mut self.ipc {
            // A step's exchanges: one, or one a stage at second order.
            p.seq += if self.order2.is_some() { 2 * c.steps } else { c.steps };
        }
        // Each first-order step's update wrote the other set (a second-order step ends in
        // the set it began from).
        if self.order2.is_none() && c.steps % 2 == 1 {
            std::mem::swap(&mut self.v1, &mut self.o1);
            std::mem::swap(&mut self.v2, &mut self.o2);
            std::mem::swap(&mut self.lo, &mut self.olo);
        }
        let stop = match c.stop {
            2 => DeviceStop::Unphysical,
            3 => DeviceStop::NoTimeStep,
            _ if c.hit != 0 => DeviceStop::Target,
            _ => DeviceStop::Limit,
        };
        Ok(Some(DeviceBatch {
            steps: c.steps,
            t: c.t,
            dt: c.dt,
            dt_min: c.dt_min,
            dt_max: c.dt_max,
            dt_min_unclipped: c.dt_min_unclipped,
            clipped: c.steps > 0 && c.clipped != 0,
            stop,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graph_sizes_cover_the_batch_and_the_smallest_sufficient_is_taken() {
        let every4: Vec<u64> = (1..=16).map(|i| 4 * i).collect();
        assert_eq!(sizes(64, 0), every4);
        assert_eq!(sizes(10, 0), vec![4, 8, 10]);
        assert_eq!(sizes(256, 0), [&every4[..], &[128, 256]].concat());
        assert_eq!(sizes(200, 0), [&every4[..], &[128, 200]].concat());
        assert_eq!(sizes(2, 0), vec![2]);
        // Every count of steps up to 64 is one batch that overshoots by 3 at most.
        let s = sizes(64, 0);
        for want in 1..=64u64 {
            let got = s[pick(&s, 64, want, 3)];
            assert!(got >= want && got - want <= 3, "{want} steps: a graph of {got}");
        }
        assert_eq!(s[pick(&s, 64, 20, 4)], 20);
        assert_eq!(s[pick(&s, 64, 1000, 4)], 64);
        assert_eq!(sizes(64, 2), vec![4, 8, 16, 32, 64]);
        assert_eq!(sizes(64, 4), vec![4, 16, 64]);
        assert_eq!(sizes(48, 2), vec![4, 8, 16, 32, 48]);
        assert_eq!(sizes(5, 2), vec![4, 5]);
        assert_eq!(sizes(2, 2), vec![2]);
        // No slack: the largest that does not overshoot, the smallest if all do.
        let s = sizes(64, 4);
        assert_eq!(s[pick(&s, 64, 1, 0)], 4);
        assert_eq!(s[pick(&s, 64, 5, 0)], 4);
        assert_eq!(s[pick(&s, 64, 17, 0)], 16);
        assert_eq!(s[pick(&s, 64, 1000, 0)], 64);
        // The step limit wins over a longer way to the target.
        assert_eq!(s[pick(&s, 20, 1000, 0)], 16);
        assert_eq!(s[pick(&s, 3, 1000, 0)], 4);
        // Slack: one batch that overshoots by a few steps instead of several short ones.
        let s = sizes(64, 2);
        assert_eq!(s[pick(&s, 64, 15, 4)], 16);
        assert_eq!(s[pick(&s, 64, 29, 4)], 32);
        assert_eq!(s[pick(&s, 64, 27, 4)], 16, "5 steps over: too many");
        assert_eq!(s[pick(&s, 64, 61, 4)], 64);
        assert_eq!(s[pick(&s, 64, 1000, 4)], 64);
        assert_eq!(s[pick(&s, 13, 1000, 4)], 16, "3 steps past the limit");
        assert_eq!(pick(&s, 64, 2, 1), 0, "the smallest if all overshoot");
        assert_eq!(s[pick(&s, 64, 47, 1)], 32, "32, then 16");
    }
}
