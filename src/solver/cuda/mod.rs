//! The CUDA backend: the same layout and phases as the CPU backend, as kernels
//! (`kernels/solver.cu` over the physics headers) launched through cudarc's driver API.
//!
//! - [`device`]: finding a GPU, compiling and loading the kernels;
//! - [`launch`]: the structs the kernels receive and the launch geometry;
//! - [`halo`]: the copy stream and pinned staging of the halo exchange;
//! - [`timing`]: per-kernel timing for `bench --profile`;
//! - [`probe`](mod@probe): running single physics functions on the GPU, for the tests;
//! - [`resident`]: many steps as one CUDA graph, read back once;
//! - [`order2`]: second order (`physics.order = 2`), device-resident on one rank, and
//!   [`tiles`], its fused reconstruction and edge pass;
//! - [`ipc`]: the halo exchange from GPU to GPU and the time step's minimum over the GPUs by
//!   the kernels' own stores over NVLink (one node), so several GPUs run device-resident;
//! - [`nccl`], [`peer`]: the same with NCCL, where the stores cannot be set up.

pub mod device;
pub mod halo;
pub mod ipc;
pub mod launch;
pub mod nccl;
pub mod order2;
pub mod peer;
pub mod probe;
pub mod resident;
pub mod tiles;
pub mod timing;

pub use device::{copy_bandwidth, device_count, probe};
pub use launch::CudaReal;

use super::backend::{Backend, Cells, DeviceBatch, DeviceSteps, Health, StepContext};
use super::layout::{budget_per_entry, check_slots, Layout};
use crate::physics::extremes::{Arrival, WIDTH};
use crate::physics::{Boundary, BoundaryKind, BoundarySpec, CellState, Model, Reference, StoredCell};
use anyhow::{anyhow, bail, Context, Result};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DriverError, PushKernelArg};
use halo::HaloStaging;
use launch::{address, grid, DeviceArrays};
use std::ops::Range;
use std::sync::Arc;
use timing::KernelTiming;

pub struct CudaBackend<T: CudaReal> {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    /// Kept for the probe kernels of the tests.
    module: Arc<CudaModule>,
    edge_fn: CudaFunction,
    dt_fn: CudaFunction,
    update_fn: CudaFunction,
    budget_fn: CudaFunction,
    model: Model<T>,
    v1: CudaSlice<T>,
    v2: CudaSlice<T>,
    /// The other volume buffers (the update writes them; then the two pairs swap).
    o1: CudaSlice<T>,
    o2: CudaSlice<T>,
    /// Low parts of the owned cells' deviations (two floats a cell), and the other buffer.
    lo: CudaSlice<T>,
    olo: CudaSlice<T>,
    ecells: CudaSlice<i32>,
    enormal: CudaSlice<T>,
    boundaries: CudaSlice<Boundary<T>>,
    /// What each boundary table entry prescribes over time, and the time the device's
    /// table was evaluated at (`Layout::refresh_boundaries`).
    specs: Vec<BoundarySpec>,
    boundaries_time: f64,
    /// The open boundary edges `(cell, slot, entry)` (host and device) and the mass through
    /// each so far (`[in1, out1, in2, out2]` per edge, double, on the device).
    open: Vec<[i32; 3]>,
    open_dev: Option<(CudaSlice<i32>, CudaSlice<f64>)>,
    acc: CudaSlice<T>,
    scratch: CudaSlice<u64>,
    /// Each owned cell's Coriolis parameter on a beta-plane (`Layout::coriolis`).
    coriolis: CudaSlice<T>,
    /// Each edge's viscous coupling (`Layout::edge_viscosity`), where there is viscosity.
    evisc: Option<CudaSlice<T>>,
    n_cells: usize,
    n_owned: usize,
    n_edges: usize,
    n_local_edges: usize,
    /// The owned cells' depths in float64 and the rest state: for conversions to CellState.
    depth: Vec<f64>,
    reference: Reference,
    device: String,
    sync_each_launch: bool,
    timing: Option<KernelTiming>,
    halo: Option<HaloStaging<T>>,
    /// The GPU-to-GPU exchange (several ranks, NCCL), when connected.
    peer: Option<peer::DeviceHalo>,
    /// The GPU-to-GPU exchange by the kernels' own stores (one node), when connected.
    ipc: Option<ipc::PeerLink>,
    /// The arrays with each buffer set current (set 0: the buffers allocated first), as the
    /// CUDA graphs of [`resident`] hold them.
    home: [DeviceArrays; 2],
    resident_fns: Option<resident::ResidentFns>,
    resident: Option<resident::Resident>,
    /// Steps per CUDA graph (`PYCNO_DEVICE_STEPS`; below 2: the host drives every step).
    resident_k: u64,
    /// Programmatic dependent launch in the device-resident steps (`launch::pdl_enabled`).
    pdl: bool,
    extremes_fn: CudaFunction,
    /// Per-cell extremes of the owned cells (`output.max_maps`), one array per quantity,
    /// and the owned cells' depths in float64 (the frames' thicknesses are computed with them).
    extremes: Option<(Arrival, CudaSlice<f64>, CudaSlice<f64>)>,
    /// Second order's arrays and kernels (`with_order`); `None` at first order.
    order2: Option<order2::Order2<T>>,
}

impl<T: CudaReal> CudaBackend<T> {
    /// Upload `lay` to device `ordinal`.
    pub fn new(model: Model<T>, lay: &Layout<T>, ordinal: usize) -> Result<Self> {
        check_slots(lay)?;
        lay.check_model(&model)?;
        let n = lay.num_cells();
        if n > i32::MAX as usize / 6 || lay.num_edges() > i32::MAX as usize {
            bail!("the mesh is too large for 32-bit indices on the GPU ({n} cells)");
        }
        let (ctx, module, device) = device::open(ordinal)?;
        let major =
            ctx.attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
        let pdl = launch::pdl_enabled(major);
        // Streams are ordered by explicit events (the halo copies): cudarc's per-slice event
        // tracking would make the receive-block copy wait for the interior edges' reads.
        // SAFETY: every slice is allocated and filled on the main stream, which is
        // synchronized below before any other stream exists; see Drop for the end.
        unsafe { ctx.disable_event_tracking() };
        let f = |op: &str| {
            module
                .load_function(&format!("{op}_{}", T::SUFFIX))
                .with_context(|| format!("kernel {op}_{} missing", T::SUFFIX))
        };
        // A run with viscosity takes the edge kernel that computes it (solver.cu's VISC).
        let viscous = !lay.edge_viscosity.is_empty();
        let (edge_fn, dt_fn, update_fn, extremes_fn, budget_fn) =
            (f(if viscous { "edge_visc" } else { "edge" })?, f("dt")?, f("update")?, f("extremes")?, f("budget")?);
        let resident_fns = Some(resident::ResidentFns::load(&module, T::SUFFIX, viscous)?);
        // A stream of our own: CUDA graphs cannot be captured on the legacy default stream.
        let stream = ctx.new_stream().map_err(|e| anyhow!("cannot make a CUDA stream on {device}: {e}"))?;
        let up = |what: &str, e: cudarc::driver::DriverError| anyhow!("cannot upload {what} to {device}: {e}");
        let cells = |v: &[[T; 4]]| stream.clone_htod(bytemuck::cast_slice::<[T; 4], T>(v)).map_err(|e| up("cells", e));
        let (v1, v2, o1, o2) = (cells(&lay.v1)?, cells(&lay.v2)?, cells(&lay.v1)?, cells(&lay.v2)?);
        // The owned cells' low parts (at least one pair: no empty allocation).
        let owned_lo = &lay.lo[..lay.n_owned.max(1).min(n)];
        let lows = || stream.clone_htod(bytemuck::cast_slice::<[T; 2], T>(owned_lo)).map_err(|e| up("low parts", e));
        let (lo, olo) = (lows()?, lows()?);
        let ecells =
            stream.clone_htod(bytemuck::cast_slice::<[i32; 4], i32>(&lay.edge_cells)).map_err(|e| up("edges", e))?;
        let enormal =
            stream.clone_htod(bytemuck::cast_slice::<[T; 2], T>(&lay.edge_normal)).map_err(|e| up("edges", e))?;
        let boundaries = stream.clone_htod(&lay.boundaries).map_err(|e| up("the boundary table", e))?;
        let open = lay.open_edges();
        let open_dev = if open.is_empty() {
            None
        } else {
            let cells = stream.clone_htod(bytemuck::cast_slice::<[i32; 3], i32>(&open)).map_err(|e| up("edges", e))?;
            let budget = stream.alloc_zeros::<f64>(4 * open.len()).map_err(|e| up("the boundary budget", e))?;
            Some((cells, budget))
        };
        let acc = stream.alloc_zeros::<T>(6 * 4 * n).map_err(|e| up("accumulators", e))?;
        let scratch = stream.clone_htod(&[u64::MAX, 0, 0]).map_err(|e| up("scratch", e))?;
        // Read by the update only on a beta-plane (Model::coriolis_per_cell); at least one
        // word, as no allocation may be empty.
        let per_cell_f = if lay.coriolis.is_empty() { vec![T::zero()] } else { lay.coriolis.clone() };
        let coriolis = stream.clone_htod(&per_cell_f).map_err(|e| up("the Coriolis parameters", e))?;
        let evisc = if lay.edge_viscosity.is_empty() {
            None
        } else {
            Some(stream.clone_htod(&lay.edge_viscosity).map_err(|e| up("the viscous couplings", e))?)
        };
        stream.synchronize()?;
        let mut b = CudaBackend {
            ctx,
            stream,
            module,
            edge_fn,
            dt_fn,
            update_fn,
            budget_fn,
            model,
            v1,
            v2,
            o1,
            o2,
            lo,
            olo,
            ecells,
            enormal,
            boundaries,
            specs: lay.specs.clone(),
            boundaries_time: lay.boundaries_time,
            open,
            open_dev,
            acc,
            scratch,
            coriolis,
            evisc,
            n_cells: n,
            n_owned: lay.n_owned,
            n_edges: lay.num_edges(),
            n_local_edges: lay.n_local_edges,
            depth: lay.depth[..lay.n_owned].to_vec(),
            reference: lay.reference,
            device,
            sync_each_launch: std::env::var_os("PYCNO_CUDA_SYNC").is_some(),
            timing: None,
            halo: None,
            peer: None,
            ipc: None,
            home: [DeviceArrays::default(); 2],
            resident_fns,
            resident: None,
            resident_k: crate::solver::stepper::default_device_steps(),
            pdl,
            extremes_fn,
            extremes: None,
            order2: None,
        };
        let a = b.arrays();
        b.home = [a, DeviceArrays { v1: a.o1, v2: a.o2, o1: a.v1, o2: a.v2, lo: a.olo, olo: a.lo, ..a }];
        Ok(b)
    }

    /// The arrays as the kernels receive them, with the current buffer pair as `v`.
    fn arrays(&self) -> DeviceArrays {
        let s = &self.stream;
        DeviceArrays {
            v1: address(&self.v1, s),
            v2: address(&self.v2, s),
            o1: address(&self.o1, s),
            o2: address(&self.o2, s),
            lo: address(&self.lo, s),
            olo: address(&self.olo, s),
            ecells: address(&self.ecells, s),
            enormal: address(&self.enormal, s),
            acc: address(&self.acc, s),
            boundaries: address(&self.boundaries, s),
            scratch: address(&self.scratch, s),
            stride: self.n_cells as i64,
            n_owned: self.n_owned as i32,
            reserved: 0,
            coriolis: address(&self.coriolis, s),
            evisc: self.evisc.as_ref().map_or(0, |v| address(v, s)),
        }
    }

    /// The copy stream and pinned staging (made on first use, sized for the send block
    /// `send_words` and the receive block).
    fn ensure_halo(&mut self, send_words: usize) -> Result<&mut HaloStaging<T>> {
        if self.halo.is_none() {
            self.halo = Some(HaloStaging::new(&self.ctx, send_words, 4 * (self.n_cells - self.n_owned))?);
        }
        let h = self.halo.as_mut().expect("made above");
        if h.send_capacity() < send_words {
            bail!("send block of {send_words} floats, staging made for {}", h.send_capacity());
        }
        Ok(h)
    }

    /// Launch kernel `k` (of `timing::KERNELS`) through `launch`, timed and checked.
    fn launch(&mut self, k: usize, launch: impl FnOnce(&Self) -> Result<(), DriverError>) -> Result<()> {
        if let Some(t) = &mut self.timing {
            t.start(k, &self.stream)?;
        }
        let name = timing::KERNELS[k];
        launch(self).with_context(|| format!("launching the {name} kernel"))?;
        if let Some(t) = &mut self.timing {
            t.stop(k, &self.stream)?;
        }
        if self.sync_each_launch {
            self.stream.synchronize().with_context(|| format!("kernel {name}_{} failed", T::SUFFIX))?;
        }
        Ok(())
    }

    pub fn device(&self) -> &str {
        &self.device
    }

    /// Steps per CUDA graph of the device-resident loop (below 2: the host drives every step).
    pub fn set_device_steps(&mut self, k: u64) {
        if k != self.resident_k {
            self.resident_k = k;
            self.resident = None;
        }
    }

    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().context("CUDA stream")?;
        self.ctx.check_err().context("CUDA context")?;
        Ok(())
    }

    /// Launch the extremes kernel: start the extremes from the state, or fold it in at `t`.
    fn launch_extremes(&self, t: f64, start: bool) -> Result<()> {
        let Some((arr, ext, depth)) = &self.extremes else { bail!("extremes used before extremes_start") };
        let (a, e, d) = (self.arrays(), address(ext, &self.stream), address(depth, &self.stream));
        let (ref_h1, ref_interface) = (self.reference.h1(), self.reference.interface);
        let (threshold, surface, start) = (arr.threshold, i32::from(arr.surface), i32::from(start));
        let mut l = self.stream.launch_builder(&self.extremes_fn);
        l.arg(&a).arg(&e).arg(&d).arg(&ref_h1).arg(&ref_interface).arg(&t).arg(&threshold).arg(&surface).arg(&start);
        // SAFETY: the arguments of extremes_{f32,f64} in kernels/solver.cu, in order; `ext`
        // holds WIDTH * n_owned doubles, `depth` n_owned.
        unsafe { l.launch(grid(self.n_owned)) }.context("launching the extremes kernel")?;
        if self.sync_each_launch {
            self.stream.synchronize().with_context(|| format!("kernel extremes_{} failed", T::SUFFIX))?;
        }
        Ok(())
    }

    /// The mass through each open boundary edge in this step's fluxes (the budget kernel), the
    /// accumulators' mass words times `share` of the step (the step at first order, half of it
    /// per stage at second), as `add_to_budget` on the CPU.
    fn launch_budget(&mut self, share: f64) -> Result<()> {
        let a = self.arrays();
        if let Some((open, budget)) = &mut self.open_dev {
            let n = self.open.len() as i32;
            let mut l = self.stream.launch_builder(&self.budget_fn);
            l.arg(&a).arg(&*open).arg(budget).arg(&n).arg(&share);
            // SAFETY: the arguments of budget_{f32,f64} in kernels/solver.cu, in order.
            unsafe { l.launch(grid(self.open.len())) }.context("launching the budget kernel")?;
        }
        Ok(())
    }

    /// The accumulators, for tests that compare them with the CPU's, with each quiet slot (an
    /// edge with no water on either side wrote its layer-1 word with Z < 0 and no layer-2
    /// word: `kernels/solver.cu`) read as the zeros it stands for.
    pub fn accumulators(&self) -> Result<Vec<T>> {
        let mut acc = self.stream.clone_dtoh(&self.acc)?;
        let n = self.n_cells;
        for slot in 0..3 {
            for c in 0..n {
                let (w1, w2) = (4 * (2 * slot * n + c), 4 * ((2 * slot + 1) * n + c));
                if acc[w1 + 3] < T::zero() {
                    acc[w1 + 3] = T::zero();
                    let zeros = [acc[w1], acc[w1 + 1], acc[w1 + 2], T::zero()];
                    acc[w2..w2 + 4].copy_from_slice(&zeros);
                }
            }
        }
        Ok(acc)
    }

    /// How many accumulator slots the last edge pass left quiet (no water on either side of
    /// their edge), for tests.
    pub fn quiet_slots(&self) -> Result<usize> {
        let acc = self.stream.clone_dtoh(&self.acc)?;
        let n = self.n_cells;
        Ok((0..3).map(|slot| (0..n).filter(|&c| acc[4 * (2 * slot * n + c) + 3] < T::zero()).count()).sum())
    }

    /// Poison every accumulator word with NaN, so that a test can prove each was written.
    pub fn poison_accumulators(&mut self) -> Result<()> {
        let nan = vec![T::nan(); 6 * 4 * self.n_cells];
        self.stream.memcpy_htod(&nan, &mut self.acc)?;
        Ok(())
    }

    /// Thicknesses and momenta of owned cells given as stored.
    fn states(&self, cells: &[StoredCell]) -> Vec<CellState> {
        cells.iter().zip(&self.depth).map(|(c, &d)| c.state_in(d, &self.reference, T::EPS.f64())).collect()
    }

    /// Whether any boundary is not a wall: then the host drives every step. The device-resident
    /// loop (`resident.rs`) runs several steps without the host, but tides and time series are
    /// evaluated on the host once a step (`process_edges` uploads the boundary table) and the
    /// per-tag mass budget is a kernel of its own after each step's fluxes (`update`): neither
    /// is in the CUDA graphs. Source terms are not time-dependent and stay in the graphs.
    pub fn host_driven_boundaries(&self) -> bool {
        self.specs.iter().any(|s| s.kind != BoundaryKind::Wall)
    }

    /// The probe kernels on this backend's device (tests).
    pub fn probes(&self) -> probe::Probes<'_, T> {
        probe::Probes::new(&self.stream, &self.module, self.model)
    }
}

impl<T: CudaReal> Drop for CudaBackend<T> {
    fn drop(&mut self) {
        // No slice may be freed while a copy on the other stream still uses it.
        if let Some(h) = &self.halo {
            let _ = h.synchronize();
        }
        if let Some(p) = &self.peer {
            let _ = p.stream.synchronize();
        }
        if let Some(p) = &self.ipc {
            let _ = p.stream.synchronize();
        }
        // The graphs hold NCCL work: they go before the communicator.
        let _ = self.stream.synchronize();
        self.resident = None;
        self.peer = None;
        self.ipc = None;
        let _ = self.stream.synchronize();
    }
}

impl<T: CudaReal> Backend for CudaBackend<T> {
    fn describe(&self) -> String {
        format!("cuda ({}, {})", T::NAME, self.device)
    }
    fn name(&self) -> &'static str {
        "cuda"
    }
    fn precision(&self) -> &'static str {
        T::NAME
    }

    fn process_edges(&mut self, edges: Range<usize>, t: f64) -> Result<()> {
        if edges.is_empty() {
            return Ok(());
        }
        if t != self.boundaries_time && self.specs.iter().any(|s| s.time_dependent()) {
            // Tides and time series: the table at the step's start time, queued before the
            // edge kernel on the same stream.
            let table: Vec<Boundary<T>> = self.specs.iter().map(|s| s.entry(t)).collect();
            self.stream.memcpy_htod(&table, &mut self.boundaries).context("uploading the boundary table")?;
            self.boundaries_time = t;
        }
        if self.order2.is_some() {
            return self.order2_edges(edges, t);
        }
        let (a, m, t) = (self.arrays(), self.model, T::c(t));
        let (b, e) = (edges.start as i32, edges.end as i32);
        self.launch(0, |s| {
            let mut l = s.stream.launch_builder(&s.edge_fn);
            l.arg(&a).arg(&m).arg(&b).arg(&e).arg(&t);
            // SAFETY: the arguments of edge_{f32,f64} in kernels/solver.cu, in order.
            unsafe { l.launch(grid(edges.len())) }.map(|_| ())
        })
    }

    fn local_dt(&mut self, gamma: f64) -> Result<(f64, Health)> {
        let (a, two_gamma) = (self.arrays(), T::c(2.0 * gamma));
        self.launch(1, |s| {
            let mut l = s.stream.launch_builder(&s.dt_fn);
            l.arg(&a).arg(&two_gamma);
            // SAFETY: the arguments of dt_{f32,f64}, in order.
            unsafe { l.launch(grid(s.n_owned)) }.map(|_| ())
        })?;
        let mut s = [0u64; 2];
        self.stream.memcpy_dtoh(&self.scratch.slice(0..2), &mut s).context("reading the time step back")?;
        if let Some(t) = &mut self.timing {
            t.collect()?;
        }
        let health = if s[1] != 0 { Health::Bad } else { Health::Ok };
        Ok((T::from_min_bits(s[0]), health))
    }

    fn update(&mut self, step: StepContext) -> Result<()> {
        if self.order2.is_some() {
            return self.order2_update(step, false);
        }
        let (a, m, dt) = (self.arrays(), self.model, T::c(step.dt));
        self.launch_budget(dt.f64())?;
        self.launch(2, |s| {
            let mut l = s.stream.launch_builder(&s.update_fn);
            l.arg(&a).arg(&m).arg(&dt);
            // SAFETY: the arguments of update_{f32,f64}, in order.
            unsafe { l.launch(grid(s.n_owned)) }.map(|_| ())
        })?;
        std::mem::swap(&mut self.v1, &mut self.o1);
        std::mem::swap(&mut self.v2, &mut self.o2);
        std::mem::swap(&mut self.lo, &mut self.olo);
        Ok(())
    }

    fn connect_device_exchange(
        &mut self,
        comm: &dyn crate::comm::Comm,
        plan: &super::exchange::HaloPlan,
        engine: super::exchange::GpuExchange,
    ) -> Result<std::result::Result<String, String>> {
        use super::exchange::GpuExchange;
        // Second order: the GPUs' own stores only (`enqueue_steps2`, `ipc_edge_pass`).
        if self.order2.is_some() && engine == GpuExchange::Nccl {
            return Ok(Err("second order (physics.order = 2) exchanges from GPU to GPU by the GPUs' own stores (--gpu-exchange ipc), not NCCL".into()));
        }
        // The GPUs' own stores first (fewer cross-GPU handshakes a step), then NCCL.
        if matches!(engine, GpuExchange::Auto | GpuExchange::Ipc) {
            match self.connect_ipc_exchange(comm, plan)? {
                Ok(what) => return Ok(Ok(what)),
                Err(why) if engine == GpuExchange::Ipc || self.order2.is_some() => return Ok(Err(why)),
                Err(_) => {}
            }
        }
        self.connect_peer_exchange(comm, plan)
    }
    fn device_edge_pass(&mut self, t: f64, overlap: bool) -> Result<()> {
        if self.ipc.is_some() {
            return self.ipc_edge_pass(t, overlap);
        }
        self.peer_edge_pass(t, overlap, self.n_local_edges)
    }
    fn steps_on_device(&mut self, req: DeviceSteps) -> Result<Option<DeviceBatch>> {
        // Second order too (several ranks: with the GPUs' own stores; through the host the
        // edge pass never asks for device steps).
        self.resident_steps(req)
    }
    fn prepare_device_steps(&mut self, gamma: f64) -> Result<()> {
        self.prepare_resident(gamma)
    }
    fn order(&self) -> u32 {
        if self.order2.is_some() {
            2
        } else {
            1
        }
    }
    fn reconstruct(&mut self, cells: Cells) -> Result<()> {
        if self.order2.is_some() {
            self.order2_reconstruct(cells)?;
        }
        Ok(())
    }
    fn num_inner_edges(&self) -> usize {
        self.order2.as_ref().map_or(0, |o| o.n_inner_edges)
    }
    fn second_stage(&mut self, step: StepContext) -> Result<()> {
        if self.order2.is_none() {
            bail!("second_stage at order 1");
        }
        self.order2_update(step, true)
    }

    fn health(&mut self) -> Result<Health> {
        let mut s = [0u64; 1];
        self.stream.memcpy_dtoh(&self.scratch.slice(1..2), &mut s)?;
        Ok(if s[0] != 0 { Health::Bad } else { Health::Ok })
    }

    fn fallbacks(&mut self) -> Result<u64> {
        let mut s = [0u64; 1];
        self.stream.memcpy_dtoh(&self.scratch.slice(2..3), &mut s)?;
        Ok(s[0])
    }

    fn boundary_budget(&mut self) -> Result<Vec<[f64; 4]>> {
        if self.specs.iter().all(|s| s.kind == BoundaryKind::Wall) {
            return Ok(vec![]);
        }
        let per_edge: Vec<[f64; 4]> = match &self.open_dev {
            Some((_, budget)) => {
                self.stream.clone_dtoh(budget)?.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]).collect()
            }
            None => vec![],
        };
        Ok(budget_per_entry(&self.open, &per_edge, self.specs.len()))
    }

    fn boundary_edges(&mut self) -> Result<crate::solver::backend::EdgeBudgets> {
        let per_edge: Vec<[f64; 4]> = match &self.open_dev {
            Some((_, budget)) => {
                self.stream.clone_dtoh(budget)?.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]).collect()
            }
            None => vec![],
        };
        Ok((self.open.clone(), per_edge))
    }

    fn set_boundary_edges(&mut self, per_edge: &[[f64; 4]]) -> Result<()> {
        match &mut self.open_dev {
            Some((_, budget)) if budget.len() == 4 * per_edge.len() => {
                let flat: Vec<f64> = per_edge.iter().flatten().copied().collect();
                self.stream.memcpy_htod(&flat, budget)?;
                Ok(())
            }
            None if per_edge.is_empty() => Ok(()),
            _ => bail!("{} boundary edge budgets for {} open boundary edges", per_edge.len(), self.open.len()),
        }
    }

    fn state(&mut self) -> Result<Vec<CellState>> {
        let cells = owned_stored(&self.stream, [&self.v1, &self.v2, &self.lo], self.n_owned)?;
        Ok(self.states(&cells))
    }
    fn stored_state(&mut self) -> Result<Vec<StoredCell>> {
        owned_stored(&self.stream, [&self.v1, &self.v2, &self.lo], self.n_owned)
    }
    fn previous_state(&mut self) -> Result<Vec<CellState>> {
        let cells = owned_stored(&self.stream, [&self.o1, &self.o2, &self.olo], self.n_owned)?;
        Ok(self.states(&cells))
    }
    fn read_cells(&mut self, cells: &[usize]) -> Result<Vec<CellState>> {
        let mut out = Vec::with_capacity(cells.len());
        for &c in cells {
            if c >= self.n_owned {
                bail!("cell {c} is not one of this rank's {} owned cells", self.n_owned);
            }
            let a = self.stream.clone_dtoh(&self.v1.slice(4 * c..4 * c + 4))?;
            let b = self.stream.clone_dtoh(&self.v2.slice(4 * c..4 * c + 4))?;
            let l = self.stream.clone_dtoh(&self.lo.slice(2 * c..2 * c + 2))?;
            out.push(StoredCell::from_records(&a, &b, &l).state_in(self.depth[c], &self.reference, T::EPS.f64()));
        }
        Ok(out)
    }
    fn num_edges(&self) -> usize {
        self.n_edges
    }
    fn enable_kernel_timing(&mut self) {
        if self.timing.is_none() {
            self.timing = KernelTiming::new(&self.ctx).ok();
        }
    }
    fn kernel_seconds(&mut self) -> Result<Vec<(&'static str, f64, u64)>> {
        self.synchronize()?;
        match &mut self.timing {
            Some(t) => t.totals(),
            None => Ok(vec![]),
        }
    }
    fn num_local_edges(&self) -> usize {
        self.n_local_edges
    }
    fn cell_bytes(&self) -> usize {
        4 * std::mem::size_of::<T>()
    }
    fn begin_download(&mut self, cells: Range<usize>) -> Result<()> {
        let words = 4 * cells.start..4 * cells.end;
        self.ensure_halo(words.len())?;
        if words.is_empty() {
            return Ok(());
        }
        let h = self.halo.as_mut().expect("made by ensure_halo");
        h.begin_download(&self.stream, &self.v1, &self.v2, words)
    }
    fn finish_download(&mut self, v1: &mut [u8], v2: &mut [u8]) -> Result<()> {
        let Some(h) = &mut self.halo else { bail!("finish_download without begin_download") };
        h.finish_download(host_floats(v1)?, host_floats(v2)?)
    }
    fn upload_receive_block(&mut self, v1: &[u8], v2: &[u8]) -> Result<()> {
        let words = 4 * self.n_owned..4 * self.n_cells;
        let (a, b) = (host_floats_ref::<T>(v1)?, host_floats_ref::<T>(v2)?);
        if a.len() != words.len() || b.len() != words.len() {
            bail!("receive block of {} floats for {} cells", a.len(), self.n_cells - self.n_owned);
        }
        if words.is_empty() {
            return Ok(());
        }
        self.ensure_halo(0)?;
        let h = self.halo.as_mut().expect("made by ensure_halo");
        h.upload(&self.stream, a, b, &mut self.v1, &mut self.v2, words)
    }
    fn edges_async(&self) -> bool {
        true
    }
    fn extremes_start(&mut self, arrival: Arrival, from: Option<&[[f64; WIDTH]]>) -> Result<()> {
        let n = self.n_owned;
        let ext = match from {
            Some(f) if f.len() != n => bail!("extremes of {} cells for {n} owned cells", f.len()),
            // One array per quantity on the device.
            Some(f) => {
                let soa: Vec<f64> = (0..WIDTH).flat_map(|k| f.iter().map(move |e| e[k])).collect();
                self.stream.clone_htod(&soa).context("cannot upload the max maps")?
            }
            None => self.stream.alloc_zeros::<f64>(WIDTH * n.max(1)).context("cannot allocate the max maps")?,
        };
        let depth = self.stream.clone_htod(&self.depth).context("cannot upload the depths for the max maps")?;
        self.extremes = Some((arrival, ext, depth));
        if from.is_none() {
            self.launch_extremes(0.0, true)?;
        }
        Ok(())
    }
    fn extremes_fold(&mut self, t: f64) -> Result<()> {
        self.launch_extremes(t, false)
    }
    fn extremes(&mut self) -> Result<Vec<[f64; WIDTH]>> {
        let Some((_, ext, _)) = &self.extremes else { bail!("extremes read before extremes_start") };
        let n = self.n_owned;
        let soa = self.stream.clone_dtoh(&ext.slice(0..WIDTH * n)).context("cannot read the max maps back")?;
        Ok((0..n).map(|c| std::array::from_fn(|k| soa[k * n + c])).collect())
    }
}

/// The first `n` cells of a buffer set (v1, v2, lo) as stored.
fn owned_stored<T: CudaReal>(stream: &Arc<CudaStream>, set: [&CudaSlice<T>; 3], n: usize) -> Result<Vec<StoredCell>> {
    let a = stream.clone_dtoh(&set[0].slice(0..4 * n))?;
    let b = stream.clone_dtoh(&set[1].slice(0..4 * n))?;
    let l = stream.clone_dtoh(&set[2].slice(0..2 * n))?;
    Ok(a.chunks_exact(4)
        .zip(b.chunks_exact(4))
        .zip(l.chunks_exact(2))
        .map(|((a, b), l)| StoredCell::from_records(a, b, l))
        .collect())
}

/// Host bytes of the halo buffers as floats; they are allocated as u64 words
/// (`solver::exchange`), so the alignment holds, and bytemuck checks it.
fn host_floats<T: CudaReal>(b: &mut [u8]) -> Result<&mut [T]> {
    bytemuck::try_cast_slice_mut(b).map_err(|e| anyhow!("halo buffer not usable as {}: {e:?}", T::NAME))
}
fn host_floats_ref<T: CudaReal>(b: &[u8]) -> Result<&[T]> {
    bytemuck::try_cast_slice(b).map_err(|e| anyhow!("halo buffer not usable as {}: {e:?}", T::NAME))
}
