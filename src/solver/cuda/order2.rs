//! Second order on the GPU (`physics.order = 2`, issue 21): the arrays of `kernels/order2.cu`,
//! their upload, and the backend's order-2 phases. Steps are device-resident
//! (`resident.rs`, `enqueue_steps2`: the same kernels' code under the control block) on one
//! rank, and on several with the exchange by the GPUs' own stores (`ipc.rs`: each stage's
//! halo, the receive block's two rings, from GPU to GPU); through the host (`Halo::edge_pass`)
//! they are host-driven. Each rank reconstructs its first ring itself. NCCL is not used at
//! second order.
//!
//! The kernels mirror `CpuBackend` at order 2 (`solver/cpu.rs`): the same buffer sets (stage
//! 1 writes W* over the other set and the sets swap; stage 2 reads the step's start from the
//! other set and writes W_{n+1} over it), the same accumulators, the same cells reconstructed
//! (`layout::reconstruction_sets`). The device layout and its bytes are explained in
//! `order2.cu`.

use super::launch::{address, grid, CudaReal};
use super::tiles::{TileCover, Tiles};
use super::{timing, CudaBackend};
use crate::solver::backend::{Cells, StepContext};
use crate::solver::layout::{reconstruction_sets, Layout};
use anyhow::{bail, Context, Result};
use cudarc::driver::sys::CUfunction_attribute;
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DeviceRepr, DriverError, LaunchConfig, PushKernelArg};
use std::ops::Range;

/// `Order2Arrays<T>` of `kernels/order2.cu`: device pointers, passed by value.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Order2Device {
    pub faces: u64,
    pub interior: u64,
    pub across: u64,
    pub wr: u64,
    pub ln: u64,
    pub depth: u64,
    pub recon: u64,
    pub n_cells: i64,
}
// SAFETY: #[repr(C)], integers only, mirrored in kernels/order2.cu.
unsafe impl DeviceRepr for Order2Device {}

/// `TileArrays<T>` of `kernels/order2.cu`: device pointers, passed by value.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct TileDevice {
    pub cells: u64,
    pub tec: u64,
    pub tloc: u64,
    pub tnl: u64,
    pub rest_of: u64,
    pub cap: i32,
    /// Per place, its edge's viscous coupling; 0 (null): no viscosity.
    pub tvisc: u64,
}
// SAFETY: #[repr(C)], integers only, mirrored in kernels/order2.cu.
unsafe impl DeviceRepr for TileDevice {}

/// `RestArrays<T>` of `kernels/order2.cu`: the cells the device-resident steps' tiles neither
/// sum nor finish, and their words in the list's order; all zero: no list.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct RestDevice {
    pub cells: u64,
    pub acc: u64,
    pub interior: u64,
    pub area: u64,
    pub n: i32,
}
// SAFETY: #[repr(C)], integers only, mirrored in kernels/order2.cu.
unsafe impl DeviceRepr for RestDevice {}

/// Threads of a tile's block, and its most edges and cells (`tiles.rs`): 256 in float32 (the
/// kernel's register cap is for blocks of 256, `kernels/order2.cu`), 128 in float64 where
/// tiles are asked for (174 registers a thread: two blocks a multiprocessor).
/// `PYCNO_TILE_THREADS` to try others (a multiple of 32, at most 256: the kernel's bound, and
/// whose shared memory fits 99 KB, what a block may ask for on every GPU from sm_80 on).
fn tile_threads(float_bytes: usize) -> usize {
    std::env::var("PYCNO_TILE_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| (32..=256).contains(&n) && n % 32 == 0 && tile_shared_bytes(n, float_bytes, true) <= 99 << 10)
        .unwrap_or(if float_bytes == 4 { 256 } else { 128 })
}

/// The tile kernel's shared memory for tiles of `cap` places (`tile2_kernel` in
/// `kernels/order2.cu` lays it out): per place a cell's six records and its depth, and an
/// edge's entries (int4, int2 and two floats); where the tile keeps its marked cells' words
/// (`keep`: it sums or finishes them), a marked cell's six slot words, its interior term and
/// its area and its cell's index in the list of the others (`RestArrays`) too (63 KB in
/// float32, over the 48 KB a block gets without asking: `allow_tile_shared`).
fn tile_shared_bytes(cap: usize, float_bytes: usize, keep: bool) -> usize {
    let slots = if keep { 7 * 4 * float_bytes + float_bytes + 4 } else { 0 };
    cap * (6 * 4 * float_bytes + float_bytes + 16 + 8 + 2 * float_bytes + slots)
}

/// Lets the tile kernel `f` that keeps its marked cells' words (`tile2_sums_resident`,
/// `tile2_finish_resident`, of floats of `float_bytes`) take the shared memory it needs
/// (`tile_shared_bytes`).
pub(super) fn allow_tile_shared(f: &CudaFunction, float_bytes: usize) -> Result<()> {
    let bytes = tile_shared_bytes(tile_threads(float_bytes), float_bytes, true);
    f.set_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes as i32)
        .with_context(|| format!("the tile kernel cannot have {bytes} bytes of shared memory"))
}

/// Owned cells from which the device-resident steps' second-stage tiles finish their cells
/// (`finish_on`): on an H200 it made order 2 1-2% faster at 258706, 10^6 and 10^7 cells and 7%
/// slower at 64222, where each kernel is about one wave of blocks and the finishing phase adds
/// to its length (BENCHMARKS.md, issue 21); sizes between were not measured.
const FINISH_MIN_CELLS: usize = 200_000;

/// Whether the device-resident steps' tiles finish the cells whose edges they all hold at the
/// second stage (`Tiles::finishing`, `tile2_kernel` in `kernels/order2.cu`), for a rank of
/// `n_owned` cells: from FINISH_MIN_CELLS (`PYCNO_TILE_FINISH_CELLS` to try others);
/// `PYCNO_TILE_FINISH=0` never, `1` always. Never for models with sources (the update kernel
/// applies those). The results are the same bits either way (`tests/gpu.rs`).
fn finish_on(n_owned: usize) -> bool {
    match std::env::var("PYCNO_TILE_FINISH").as_deref() {
        Ok("0") => false,
        Ok("1") => true,
        _ => n_owned >= super::resident::cells_from_env("PYCNO_TILE_FINISH_CELLS", FINISH_MIN_CELLS),
    }
}

/// Whether the reconstruction and the edge pass run as one kernel over tiles (`tile2`) or as
/// two (`reconstruct`, `edge2`), for a float of `float_bytes`: tiles in float32, where they
/// are 7-9% faster at 10^6 and 10^7 cells and up to 27% on smaller meshes, two kernels in
/// float64, where the tile kernel (174 registers a thread) was 25% slower at 10^6 cells (an
/// H200, BENCHMARKS.md). `PYCNO_ORDER2_TILES=1` or `0` forces either; the results are the same
/// bits (`tools/order2-gpu-check.sh`).
fn tiles_on(float_bytes: usize) -> bool {
    match std::env::var("PYCNO_ORDER2_TILES").as_deref() {
        Ok("0") => false,
        Ok("1") => true,
        _ => float_bytes == 4,
    }
}

/// The owned cells the tiles neither sum nor finish (`Tiles::unfinished`), and the words the
/// kernels keep for them in the list's order (`RestArrays` in `kernels/order2.cu`).
struct RestWords<T> {
    cells: CudaSlice<i32>,
    acc: CudaSlice<T>,
    interior: CudaSlice<T>,
    area: CudaSlice<T>,
    n: usize,
}

impl<T: CudaReal> RestWords<T> {
    fn device(&self, s: &CudaStream) -> RestDevice {
        RestDevice {
            cells: address(&self.cells, s),
            acc: address(&self.acc, s),
            interior: address(&self.interior, s),
            area: address(&self.area, s),
            n: self.n as i32,
        }
    }
}

/// The tiles on the device.
struct DeviceTiles<T> {
    cells: CudaSlice<i32>,
    tec: CudaSlice<i32>,
    tloc: CudaSlice<i32>,
    tnl: CudaSlice<T>,
    /// Per place, its edge's viscous coupling, where there is viscosity.
    tvisc: Option<CudaSlice<T>>,
    cover: TileCover,
    threads: usize,
    /// Where the tiles can finish cells (no sources): the owned cells they do not finish
    /// (`Tiles::finishing`), which the second stage's update and the first stage's time step
    /// then take, with their words in the list's order; each place's index in that list
    /// (`Tiles::listed_places`); and the finished cells as a bit per owned cell (`summed`: the
    /// first stage's update reads their sums).
    rest: Option<RestWords<T>>,
    rest_of: Option<CudaSlice<i32>>,
    summed: Option<CudaSlice<u32>>,
    /// Whether the device-resident steps finish cells (`finish_on`, `set_tile_finish`).
    finish: bool,
}

impl<T: CudaReal> DeviceTiles<T> {
    fn device(&self, s: &CudaStream) -> TileDevice {
        TileDevice {
            cells: address(&self.cells, s),
            tec: address(&self.tec, s),
            tloc: address(&self.tloc, s),
            tnl: address(&self.tnl, s),
            rest_of: self.rest_of.as_ref().map_or(0, |r| address(r, s)),
            cap: self.threads as i32,
            tvisc: self.tvisc.as_ref().map_or(0, |v| address(v, s)),
        }
    }
    /// The launch of tiles `tiles`: a block each, its records in dynamic shared memory (and
    /// the marked cells' words where it keeps them).
    fn config(&self, tiles: &Range<usize>, keep: bool) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (tiles.len() as u32, 1, 1),
            block_dim: (self.threads as u32, 1, 1),
            shared_mem_bytes: tile_shared_bytes(self.threads, std::mem::size_of::<T>(), keep) as u32,
        }
    }
}

/// What second order adds to the backend (`CudaBackend::with_order`).
pub struct Order2<T> {
    reconstruct_fn: CudaFunction,
    edge_fn: CudaFunction,
    update_fn: CudaFunction,
    tile_fn: CudaFunction,
    /// The fused reconstruction and edge pass, unless `PYCNO_ORDER2_TILES=0`.
    tiles: Option<DeviceTiles<T>>,
    /// Six float4 records per cell: `[6 cell + 2 slot + layer]` (`order2.cu`).
    faces: CudaSlice<T>,
    /// The cell-interior terms, a float4 each.
    interior: CudaSlice<T>,
    /// `Layout::across`, three ints per cell.
    across: CudaSlice<i32>,
    /// The stencils: `(w, r)` as a float4 and `ln` as a float2 per slot, slot-major.
    wr: CudaSlice<T>,
    ln: CudaSlice<T>,
    /// Every cell's depth (constant), for the edge kernel.
    depth: CudaSlice<T>,
    /// Which reconstruction covers each cell (`layout::reconstruction_sets`), and where the
    /// outer ones lie.
    recon: CudaSlice<u8>,
    outer: Range<usize>,
    /// Edges that read only inner cells (`Layout::n_inner_edges`).
    pub n_inner_edges: usize,
}

impl<T: CudaReal> Order2<T> {
    /// Kernels of a device-resident step on one GPU: two stages of a tile kernel (or a
    /// reconstruction and an edge kernel) and an update, and the time step.
    pub fn step_kernels(&self) -> u64 {
        if self.tiles.is_some() {
            5
        } else {
            7
        }
    }

    fn device(&self, s: &CudaStream) -> Order2Device {
        Order2Device {
            faces: address(&self.faces, s),
            interior: address(&self.interior, s),
            across: address(&self.across, s),
            wr: address(&self.wr, s),
            ln: address(&self.ln, s),
            depth: address(&self.depth, s),
            recon: address(&self.recon, s),
            n_cells: self.depth.len() as i64 - 1,
        }
    }
}

impl<T: CudaReal> CudaBackend<T> {
    /// The backend at order `order` (`physics.order`: 1 or 2), for the layout `lay` it was made
    /// from (second order uploads its neighbours across each slot and its stencils).
    pub fn with_order(mut self, order: u32, lay: &Layout<T>) -> Result<Self> {
        match order {
            1 => Ok(self),
            2 => {
                self.order2 = Some(self.order2_arrays(lay)?);
                Ok(self)
            }
            _ => bail!("physics.order: expected 1 or 2, found {order}"),
        }
    }

    fn order2_arrays(&self, lay: &Layout<T>) -> Result<Order2<T>> {
        let (n, cells) = (self.n_owned, self.n_cells);
        if lay.num_cells() != cells || lay.n_owned != n || lay.across.len() != cells || lay.stencil.len() != cells {
            bail!(
                "second order on {}: a layout of {} cells ({} owned, {} stencils) for a backend of {cells} ({n} owned)",
                self.device,
                lay.num_cells(),
                lay.n_owned,
                lay.stencil.len()
            );
        }
        let f = |op: &str| {
            self.module
                .load_function(&format!("{op}_{}", T::SUFFIX))
                .with_context(|| format!("kernel {op}_{} missing", T::SUFFIX))
        };
        // Every local cell's: on several ranks the receive block's first ring is reconstructed
        // here too. At least one element each: no allocation may be empty.
        let (recon, outer) = reconstruction_sets(lay)?;
        let all = cells.max(1);
        let mut across = vec![0i32; 3 * all];
        let mut wr = vec![T::zero(); 12 * all];
        let mut ln = vec![T::zero(); 6 * all];
        for c in 0..cells {
            across[3 * c..3 * c + 3].copy_from_slice(&lay.across[c]);
            let st = &lay.stencil[c];
            for k in 0..3 {
                let at = k * cells + c;
                wr[4 * at..4 * at + 4].copy_from_slice(&[st.w[k][0], st.w[k][1], st.r[k][0], st.r[k][1]]);
                ln[2 * at..2 * at + 2].copy_from_slice(&st.ln[k]);
            }
        }
        // One more word than the cells: never empty (and `Order2Device::n_cells` from it).
        let depth: Vec<T> = lay.v1.iter().map(|r| r[3]).chain(std::iter::once(T::zero())).collect();
        let s = &self.stream;
        let up = |what: &str, e: DriverError| anyhow::anyhow!("cannot upload {what} to {}: {e}", self.device);
        let tiles = if tiles_on(std::mem::size_of::<T>()) {
            let threads = tile_threads(std::mem::size_of::<T>());
            let splits = [0, lay.n_inner_edges.min(self.n_edges), self.n_edges];
            let mut plan = Tiles::build(&lay.edge_cells, &lay.edge_normal, &lay.across[..cells], &splits, threads);
            let finished = (!self.model.has_sources_besides_shear_limit()).then(|| plan.finishing(cells, n));
            let rest = finished.as_ref().map(|f| Tiles::<T>::unfinished(f, n));
            let summed = finished.as_ref().map(|f| Tiles::<T>::finished_bits(f, n));
            // At least one element each: no allocation may be empty.
            let ints =
                |v: &[i32]| s.clone_htod(if v.is_empty() { &[0][..] } else { v }).map_err(|e| up("the tiles", e));
            let zeros = |k: usize| s.alloc_zeros::<T>(k.max(1)).map_err(|e| up("the listed cells' words", e));
            let rest_of = rest.as_ref().map(|r| ints(&plan.listed_places(r, cells))).transpose()?;
            let rest = rest
                .map(|r| {
                    // The areas, as the state's v2.w (constant).
                    let area: Vec<T> =
                        r.iter().map(|&c| lay.v2[c as usize][3]).chain(std::iter::once(T::zero())).collect();
                    Ok::<_, anyhow::Error>(RestWords {
                        cells: ints(&r)?,
                        acc: zeros(24 * r.len())?,
                        interior: zeros(4 * r.len())?,
                        area: s.clone_htod(&area).map_err(|e| up("the listed cells' areas", e))?,
                        n: r.len(),
                    })
                })
                .transpose()?;
            let tnl: Vec<T> = plan.tnl.iter().flatten().copied().chain(std::iter::once(T::zero())).collect();
            Some(DeviceTiles {
                cells: ints(bytemuck::cast_slice(&plan.cells))?,
                tec: ints(bytemuck::cast_slice(&plan.tec))?,
                tloc: ints(bytemuck::cast_slice(&plan.tloc))?,
                tnl: s.clone_htod(&tnl).map_err(|e| up("the tiles", e))?,
                tvisc: if lay.edge_viscosity.is_empty() {
                    None
                } else {
                    Some(
                        s.clone_htod(&plan.per_place(&lay.edge_viscosity, T::zero()))
                            .map_err(|e| up("the tiles", e))?,
                    )
                },
                cover: plan.cover,
                threads,
                rest,
                rest_of,
                summed: summed.map(|b| s.clone_htod(&b).map_err(|e| up("the tiles", e))).transpose()?,
                finish: finish_on(n),
            })
        } else {
            None
        };
        // The tiles write no edge values.
        let face_words = if tiles.is_some() { 24 } else { 24 * all };
        let o = Order2 {
            reconstruct_fn: f("reconstruct")?,
            edge_fn: f("edge2")?,
            update_fn: f("update2")?,
            tile_fn: f("tile2")?,
            tiles,
            faces: s.alloc_zeros::<T>(face_words).map_err(|e| up("the edge values", e))?,
            interior: s.alloc_zeros::<T>(4 * all).map_err(|e| up("the cell-interior terms", e))?,
            across: s.clone_htod(&across).map_err(|e| up("the neighbours", e))?,
            wr: s.clone_htod(&wr).map_err(|e| up("the stencils", e))?,
            ln: s.clone_htod(&ln).map_err(|e| up("the stencils", e))?,
            depth: s.clone_htod(&depth).map_err(|e| up("the depths", e))?,
            recon: s.clone_htod(&if recon.is_empty() { vec![0] } else { recon }).map_err(|e| up("the cell sets", e))?,
            outer,
            n_inner_edges: lay.n_inner_edges,
        };
        s.synchronize()?;
        Ok(o)
    }

    /// The order-2 arrays as the kernels take them (the device-resident steps' too).
    pub(super) fn order2_device(&self) -> Order2Device {
        self.order2().device(&self.stream)
    }

    /// The tiles covering the edges `edges` as the tile kernel takes them (arrays, launch,
    /// first tile), or None where the reconstruction and the edge pass are two kernels; `keep`:
    /// for the launches that sum or finish cells (`order2_rest`).
    pub(super) fn order2_tiles(
        &self,
        edges: Range<usize>,
        keep: bool,
    ) -> Result<Option<(TileDevice, LaunchConfig, i32)>> {
        let Some(tiles) = &self.order2().tiles else {
            return Ok(None);
        };
        let Some(run) = tiles.cover.covering(&edges) else {
            bail!("second order on {}: no tiles cover the edges {edges:?}", self.device);
        };
        Ok(Some((tiles.device(&self.stream), tiles.config(&run, keep), run.start as i32)))
    }

    /// Where the tiles finish cells at the second stage (device-resident steps): the cells
    /// the update then takes, with their words in the list's order.
    pub(super) fn order2_rest(&self) -> Option<RestDevice> {
        let tiles = self.order2().tiles.as_ref().filter(|t| t.finish)?;
        tiles.rest.as_ref().map(|r| r.device(&self.stream))
    }

    /// Where the first stage's tiles also sum the cells they finish at the second (`TILE_SUMS`
    /// in `kernels/order2.cu`; one GPU: the time-step kernel of several takes every cell's
    /// slots): the bits of those cells, for the update, as a device address. With the
    /// finishing, unless `PYCNO_TILE_SUMS=0`.
    pub(super) fn order2_summed(&self) -> Option<u64> {
        if self.ipc.is_some() || self.peer.is_some() || std::env::var("PYCNO_TILE_SUMS").is_ok_and(|v| v == "0") {
            return None;
        }
        let tiles = self.order2().tiles.as_ref().filter(|t| t.finish)?;
        tiles.summed.as_ref().map(|b| address(b, &self.stream))
    }

    /// Whether the device-resident steps' second-stage tiles finish the cells whose edges they
    /// all hold (by default from FINISH_MIN_CELLS owned cells, `finish_on`), for tests and
    /// comparisons; nothing changes at first order, without tiles or with sources.
    pub fn set_tile_finish(&mut self, on: bool) {
        if let Some(t) = self.order2.as_mut().and_then(|o| o.tiles.as_mut()) {
            if t.finish != on {
                t.finish = on;
                // The captured steps launch the other kernels now.
                self.resident = None;
            }
        }
    }

    /// The cells a reconstruction of `cells` goes over and the set bits it wants
    /// (`Cells::span`).
    pub(super) fn order2_cells(&self, cells: &Cells) -> (Range<usize>, u8) {
        cells.span(self.n_cells, self.n_owned, &self.order2().outer)
    }

    fn order2(&self) -> &Order2<T> {
        self.order2.as_ref().expect("second order set up by with_order")
    }

    /// The reconstruction of the cells `cells` covers (`reconstruct_{T}` over a range of
    /// cells, each thread skipping a cell outside the set).
    pub(super) fn order2_reconstruct(&mut self, cells: Cells) -> Result<()> {
        if self.order2().tiles.is_some() {
            // The tile kernel reconstructs the cells of its edges (order2_edges).
            return Ok(());
        }
        let (range, want) = self.order2_cells(&cells);
        if range.is_empty() {
            return Ok(());
        }
        let (a, o, m) = (self.arrays(), self.order2().device(&self.stream), self.model);
        let (b, e, w) = (range.start as i32, range.end as i32, i32::from(want));
        self.launch(timing::RECONSTRUCT, |s| {
            let mut l = s.stream.launch_builder(&s.order2().reconstruct_fn);
            l.arg(&a).arg(&o).arg(&m).arg(&b).arg(&e).arg(&w);
            // SAFETY: the arguments of reconstruct_{f32,f64} in kernels/order2.cu, in order.
            unsafe { l.launch(grid(range.len())) }.map(|_| ())
        })
    }

    /// The edge pass over `edges` at time `t`, between the cells' reconstructed edge values.
    pub(super) fn order2_edges(&mut self, edges: Range<usize>, t: f64) -> Result<()> {
        let (a, o, m, t) = (self.arrays(), self.order2().device(&self.stream), self.model, T::c(t));
        if let Some((ta, cfg, first)) = self.order2_tiles(edges.clone(), false)? {
            if cfg.grid_dim.0 == 0 {
                return Ok(());
            }
            return self.launch(timing::TILE2, |s| {
                let mut l = s.stream.launch_builder(&s.order2().tile_fn);
                l.arg(&a).arg(&o).arg(&ta).arg(&m).arg(&first).arg(&t);
                // SAFETY: the arguments of tile2_{f32,f64} in kernels/order2.cu, in order.
                unsafe { l.launch(cfg) }.map(|_| ())
            });
        }
        let (b, e) = (edges.start as i32, edges.end as i32);
        self.launch(timing::EDGE2, |s| {
            let mut l = s.stream.launch_builder(&s.order2().edge_fn);
            l.arg(&a).arg(&o).arg(&m).arg(&b).arg(&e).arg(&t);
            // SAFETY: the arguments of edge2_{f32,f64} in kernels/order2.cu, in order.
            unsafe { l.launch(grid(edges.len())) }.map(|_| ())
        })
    }

    /// A stage's update (`CpuBackend::stage_update` at order 2): the first (`second` false,
    /// `Backend::update`) or the second; then the buffer sets swap.
    pub(super) fn order2_update(&mut self, step: StepContext, second: bool) -> Result<()> {
        let (a, o, m, dt) = (self.arrays(), self.order2().device(&self.stream), self.model, T::c(step.dt));
        // Heun's average of the two stages' boundary fluxes: half the step each (as the CPU).
        self.launch_budget(0.5 * dt.f64())?;
        let (k, flag) = if second { (timing::STAGE2, 1i32) } else { (timing::STAGE1, 0i32) };
        // Host-driven steps finish no cells in the tiles: every owned cell is updated here.
        let (rest, summed) = (RestDevice::default(), 0u64);
        self.launch(k, |s| {
            let mut l = s.stream.launch_builder(&s.order2().update_fn);
            l.arg(&a).arg(&o).arg(&m).arg(&dt).arg(&flag).arg(&rest).arg(&summed);
            // SAFETY: the arguments of update2_{f32,f64} in kernels/order2.cu, in order.
            unsafe { l.launch(grid(s.n_owned)) }.map(|_| ())
        })?;
        std::mem::swap(&mut self.v1, &mut self.o1);
        std::mem::swap(&mut self.v2, &mut self.o2);
        std::mem::swap(&mut self.lo, &mut self.olo);
        Ok(())
    }
}
