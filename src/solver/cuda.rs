//! The CUDA backend: the same layout and phases as the CPU backend, as kernels
//! (kernels/solver.cu over kernels/physics.cuh) compiled once per process by NVRTC and
//! launched through cudarc's driver API. Libraries are loaded at run time: [`probe`] looks
//! for them first, so a machine without CUDA never reaches cudarc's loader (which panics).

use super::backend::{Backend, Health};
use super::cpu::check_slots;
use super::layout::Layout;
use crate::physics::CellState;
use crate::physics::{Params, Real};
use anyhow::{anyhow, bail, Context, Result};
use cudarc::driver::{
    sys::{CUdevice_attribute, CUevent_flags},
    CudaContext, CudaEvent, CudaFunction, CudaSlice, CudaStream, DeviceRepr, LaunchConfig, PinnedHostSlice,
    PushKernelArg, ValidAsZeroBits,
};
use std::ops::Range;
use std::sync::{Arc, OnceLock};

/// The kernel sources, embedded in the binary.
pub const PHYSICS_CUH: &str = include_str!("../../kernels/physics.cuh");
pub const SOLVER_CU: &str = include_str!("../../kernels/solver.cu");

/// Threads per block: 128 measured fastest for the edge kernel on an H200 (BENCHMARKS.md);
/// `PYCNO_CUDA_BLOCK` overrides it for tuning.
fn block() -> u32 {
    static B: OnceLock<u32> = OnceLock::new();
    *B.get_or_init(|| {
        std::env::var("PYCNO_CUDA_BLOCK")
            .ok()
            .and_then(|s| s.parse().ok())
            .filter(|b| b % 32 == 0 && *b <= 1024)
            .unwrap_or(128)
    })
}

/// A float type the kernels exist for.
pub trait CudaReal: Real + DeviceRepr + ValidAsZeroBits {
    const SUFFIX: &'static str;
    fn from_min_bits(bits: u64) -> f64;
}
impl CudaReal for f32 {
    const SUFFIX: &'static str = "f32";
    fn from_min_bits(bits: u64) -> f64 {
        if bits > u32::MAX as u64 {
            f64::NAN
        } else {
            f32::from_bits(bits as u32) as f64
        }
    }
}
impl CudaReal for f64 {
    const SUFFIX: &'static str = "f64";
    fn from_min_bits(bits: u64) -> f64 {
        if bits == u64::MAX {
            f64::NAN
        } else {
            f64::from_bits(bits)
        }
    }
}

/// Whether a CUDA driver, NVRTC and a device are usable here; `Ok` names the device.
pub fn probe() -> Result<String> {
    // SAFETY: these only try to dlopen the libraries; they do not call into them.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        bail!("no CUDA driver library (libcuda.so) found");
    }
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        bail!("no NVRTC library (libnvrtc.so) found");
    }
    let found = std::panic::catch_unwind(|| -> Result<String> {
        let n = CudaContext::device_count().map_err(|e| anyhow!("cannot query CUDA devices: {e}"))?;
        if n < 1 {
            bail!("the CUDA driver reports no device");
        }
        let ctx = CudaContext::new(0).map_err(|e| anyhow!("cannot open CUDA device 0: {e}"))?;
        ctx.name().map_err(|e| anyhow!("cannot read the CUDA device name: {e}"))
    });
    found.unwrap_or_else(|_| Err(anyhow!("the CUDA libraries failed to load")))
}

/// Number of CUDA devices (after a successful [`probe`]).
pub fn device_count() -> Result<usize> {
    Ok(CudaContext::device_count().map_err(|e| anyhow!("cannot query CUDA devices: {e}"))? as usize)
}

/// PTX of both precisions' kernels for one architecture, compiled once per process.
fn ptx(arch: &str) -> Result<String> {
    static PTX: OnceLock<std::result::Result<(String, String), String>> = OnceLock::new();
    let got = PTX.get_or_init(|| {
        let src = format!("{PHYSICS_CUH}\n{SOLVER_CU}");
        let mut options = vec![format!("--gpu-architecture={arch}"), "--std=c++17".into()];
        // For experiments and benchmarks of compiler flags (e.g. "--use_fast_math").
        if let Ok(extra) = std::env::var("PYCNO_NVRTC_FLAGS") {
            options.extend(extra.split_whitespace().map(String::from));
        }
        // Single precision divides and square roots to within 2 ulp instead of correctly
        // rounded (float64 is unaffected): the edge kernel is 10-15% faster on an H200, and
        // CPU/GPU agreement and every invariant test still hold (BENCHMARKS.md).
        let opts = cudarc::nvrtc::CompileOptions {
            options,
            fmad: Some(true),
            prec_div: Some(false),
            prec_sqrt: Some(false),
            ..Default::default()
        };
        cudarc::nvrtc::compile_ptx_with_opts(src, opts)
            .map(|p| (arch.to_string(), p.to_src()))
            .map_err(|e| format!("NVRTC could not compile the kernels: {e:?}"))
    });
    match got {
        Ok((a, src)) if a == arch => Ok(src.clone()),
        Ok((a, _)) => bail!("kernels were compiled for {a}, not {arch}: one GPU architecture per process"),
        Err(e) => bail!("{e}"),
    }
}

/// Bandwidth of a large device-to-device copy on device `ordinal`, in bytes (read plus
/// written) per second: the ceiling the memory-bound kernels are measured against.
pub fn copy_bandwidth(ordinal: usize, bytes: usize) -> Result<f64> {
    let ctx = CudaContext::new(ordinal)?;
    let stream = ctx.default_stream();
    let n = bytes / 8;
    let src = stream.alloc_zeros::<u64>(n)?;
    let mut dst = stream.alloc_zeros::<u64>(n)?;
    let ev = || ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT));
    let (a, b) = (ev()?, ev()?);
    let mut times = Vec::new();
    for _ in 0..7 {
        a.record(&stream)?;
        stream.memcpy_dtod(&src, &mut dst)?;
        b.record(&stream)?;
        times.push(a.elapsed_ms(&b)? as f64 * 1e-3);
    }
    times.sort_by(f64::total_cmp);
    Ok(2.0 * (8 * n) as f64 / times[times.len() / 2])
}

fn flat<T, const N: usize>(v: &[[T; N]]) -> &[T] {
    // SAFETY: [T; N] is N contiguous T with no padding.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const T, v.len() * N) }
}

pub struct CudaBackend<T: CudaReal> {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    edge_fn: CudaFunction,
    dt_fn: CudaFunction,
    update_fn: CudaFunction,
    params: Params<T>,
    v1: CudaSlice<T>,
    v2: CudaSlice<T>,
    /// The other volume buffers (the update writes them; then the two pairs swap).
    o1: CudaSlice<T>,
    o2: CudaSlice<T>,
    ecells: CudaSlice<i32>,
    enormal: CudaSlice<T>,
    acc: CudaSlice<T>,
    scratch: CudaSlice<u64>,
    n_cells: usize,
    n_owned: usize,
    n_edges: usize,
    n_local_edges: usize,
    device: String,
    sync_each_launch: bool,
    timing: Option<KernelTiming>,
    halo: Option<HaloStaging<T>>,
}

/// The halo exchange's side of the GPU: a copy stream beside the main one and pinned host
/// staging for the send and receive blocks, so that copies run while kernels do.
///
/// Completion is tracked with our own events: with cudarc's event tracking off (see `new`),
/// cudarc records no event on pinned buffers, so their own `as_slice` would not wait.
struct HaloStaging<T> {
    copy: Arc<CudaStream>,
    send: [PinnedHostSlice<T>; 2],
    recv: [PinnedHostSlice<T>; 2],
    /// The send block has arrived in `send`.
    downloaded: Option<CudaEvent>,
    /// The last upload has left `recv` (it may be overwritten).
    uploaded: Option<CudaEvent>,
}

const KERNELS: [&str; 3] = ["edge", "dt", "update"];

/// Events around each kernel; a kernel's time is read once the stream has passed its end
/// event (at the next read-back), so timing adds no synchronization of its own.
struct KernelTiming {
    /// (start, end, still to be read) per kernel.
    events: Vec<(CudaEvent, CudaEvent, bool)>,
    seconds: [f64; 3],
    launches: [u64; 3],
}

impl KernelTiming {
    fn new(ctx: &Arc<CudaContext>) -> Result<Self> {
        let ev = || ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT));
        let events = (0..3).map(|_| Ok((ev()?, ev()?, false))).collect::<Result<Vec<_>>>()?;
        Ok(KernelTiming { events, seconds: [0.0; 3], launches: [0; 3] })
    }
    /// Fold in every kernel whose end event has completed (call after a synchronization).
    fn collect(&mut self) -> Result<()> {
        for (k, (a, b, pending)) in self.events.iter_mut().enumerate() {
            if *pending {
                self.seconds[k] += a.elapsed_ms(b)? as f64 * 1e-3;
                self.launches[k] += 1;
                *pending = false;
            }
        }
        Ok(())
    }
}

fn grid(n: usize) -> LaunchConfig {
    let b = block();
    LaunchConfig { grid_dim: ((n as u32).div_ceil(b).max(1), 1, 1), block_dim: (b, 1, 1), shared_mem_bytes: 0 }
}

impl<T: CudaReal> CudaBackend<T> {
    /// Upload `lay` to device `ordinal`.
    pub fn new(params: Params<T>, lay: &Layout<T>, ordinal: usize) -> Result<Self> {
        check_slots(lay)?;
        let n = lay.num_cells();
        if n > i32::MAX as usize / 6 || lay.num_edges() > i32::MAX as usize {
            bail!("the mesh is too large for 32-bit indices on the GPU ({n} cells)");
        }
        let ctx = CudaContext::new(ordinal).map_err(|e| anyhow!("cannot open CUDA device {ordinal}: {e}"))?;
        // Streams are ordered by explicit events (the halo copies): cudarc's per-slice event
        // tracking would make the receive-block copy wait for the interior edges' reads.
        // SAFETY: every slice is allocated and filled on the main stream, which is
        // synchronized below before any other stream exists; see Drop for the end.
        unsafe { ctx.disable_event_tracking() };
        let device = ctx.name().unwrap_or_else(|_| "unknown GPU".into());
        let major = ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
        let minor = ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
        let arch = format!("sm_{major}{minor}");
        let module = ctx
            .load_module(cudarc::nvrtc::Ptx::from_src(ptx(&arch)?))
            .with_context(|| format!("cannot load the kernels on {device}"))?;
        let f = |op: &str| {
            module
                .load_function(&format!("{op}_{}", T::SUFFIX))
                .with_context(|| format!("kernel {op}_{} missing", T::SUFFIX))
        };
        let (edge_fn, dt_fn, update_fn) = (f("edge")?, f("dt")?, f("update")?);
        let stream = ctx.default_stream();
        let up = |what: &str, e: cudarc::driver::DriverError| anyhow!("cannot upload {what} to {device}: {e}");
        let v1 = stream.clone_htod(flat(&lay.v1)).map_err(|e| up("cells", e))?;
        let v2 = stream.clone_htod(flat(&lay.v2)).map_err(|e| up("cells", e))?;
        let o1 = stream.clone_htod(flat(&lay.v1)).map_err(|e| up("cells", e))?;
        let o2 = stream.clone_htod(flat(&lay.v2)).map_err(|e| up("cells", e))?;
        let ecells = stream.clone_htod(flat(&lay.edge_cells)).map_err(|e| up("edges", e))?;
        let enormal = stream.clone_htod(flat(&lay.edge_normal)).map_err(|e| up("edges", e))?;
        let acc = stream.alloc_zeros::<T>(6 * 4 * n).map_err(|e| up("accumulators", e))?;
        let scratch = stream.clone_htod(&[u64::MAX, 0, 0]).map_err(|e| up("scratch", e))?;
        stream.synchronize()?;
        Ok(CudaBackend {
            ctx,
            stream,
            edge_fn,
            dt_fn,
            update_fn,
            params,
            v1,
            v2,
            o1,
            o2,
            ecells,
            enormal,
            acc,
            scratch,
            n_cells: n,
            n_owned: lay.n_owned,
            n_edges: lay.num_edges(),
            n_local_edges: lay.n_local_edges,
            device,
            sync_each_launch: std::env::var_os("PYCNO_CUDA_SYNC").is_some(),
            timing: None,
            halo: None,
        })
    }

    /// The copy stream and pinned staging (made on first use, sized for the send block
    /// `send_words` and the receive block).
    fn ensure_halo(&mut self, send_words: usize) -> Result<()> {
        if self.halo.is_none() {
            let recv_words = 4 * (self.n_cells - self.n_owned);
            // Plain page-locked memory (flags 0): the host reads the send staging back, which
            // write-combined memory makes slow.
            // SAFETY: the staging is written (by a copy or the host) before it is read.
            let pinned = |n: usize| unsafe { self.ctx.alloc_pinned_with_flags::<T>(n.max(1), 0) };
            self.halo = Some(HaloStaging {
                copy: self.ctx.new_stream().context("creating the copy stream")?,
                send: [pinned(send_words)?, pinned(send_words)?],
                recv: [pinned(recv_words)?, pinned(recv_words)?],
                downloaded: None,
                uploaded: None,
            });
        }
        let h = self.halo.as_ref().expect("made above");
        if h.send[0].len() < send_words {
            bail!("send block of {send_words} floats, staging made for {}", h.send[0].len());
        }
        Ok(())
    }

    fn before_launch(&mut self, k: usize) -> Result<()> {
        if let Some(t) = &mut self.timing {
            if t.events[k].2 {
                t.collect()?;
            }
            t.events[k].0.record(&self.stream)?;
        }
        Ok(())
    }

    fn after_launch_timed(&mut self, k: usize) -> Result<()> {
        if let Some(t) = &mut self.timing {
            t.events[k].1.record(&self.stream)?;
            t.events[k].2 = true;
        }
        self.after_launch(KERNELS[k])
    }

    fn after_launch(&self, what: &str) -> Result<()> {
        if self.sync_each_launch {
            self.stream.synchronize().with_context(|| format!("kernel {what}_{} failed", T::SUFFIX))?;
        }
        Ok(())
    }

    pub fn device(&self) -> &str {
        &self.device
    }

    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().context("CUDA stream")?;
        self.ctx.check_err().context("CUDA context")?;
        Ok(())
    }

    /// The accumulators, for tests that compare them with the CPU's.
    pub fn accumulators(&self) -> Result<Vec<T>> {
        Ok(self.stream.clone_dtoh(&self.acc)?)
    }

    /// Poison every accumulator word with NaN, so that a test can prove each was written.
    pub fn poison_accumulators(&mut self) -> Result<()> {
        let nan = vec![T::nan(); 6 * 4 * self.n_cells];
        self.stream.memcpy_htod(&nan, &mut self.acc)?;
        Ok(())
    }
}

impl<T: CudaReal> Drop for CudaBackend<T> {
    fn drop(&mut self) {
        // No slice may be freed while a copy on the other stream still uses it.
        if let Some(h) = &self.halo {
            let _ = h.copy.synchronize();
        }
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

    fn process_edges(&mut self, edges: Range<usize>) -> Result<()> {
        if edges.is_empty() {
            return Ok(());
        }
        let (b, e) = (edges.start as i32, edges.end as i32);
        let stride = self.n_cells as i64;
        let cfg = grid(edges.len());
        self.before_launch(0)?;
        let mut l = self.stream.launch_builder(&self.edge_fn);
        l.arg(&self.v1).arg(&self.v2).arg(&self.ecells).arg(&self.enormal).arg(&mut self.acc);
        l.arg(&stride).arg(&b).arg(&e).arg(&self.params.g).arg(&self.params.r).arg(&mut self.scratch);
        // SAFETY: argument types and order match edge_{f32,f64} in kernels/solver.cu.
        unsafe { l.launch(cfg) }.context("launching the edge kernel")?;
        self.after_launch_timed(0)
    }

    fn local_dt(&mut self, gamma: f64) -> Result<(f64, Health)> {
        let two_gamma = T::c(2.0 * gamma);
        let (stride, n) = (self.n_cells as i64, self.n_owned as i32);
        self.before_launch(1)?;
        let mut l = self.stream.launch_builder(&self.dt_fn);
        l.arg(&self.v2).arg(&self.acc).arg(&stride).arg(&n).arg(&two_gamma).arg(&mut self.scratch);
        // SAFETY: matches dt_{f32,f64}.
        unsafe { l.launch(grid(self.n_owned)) }.context("launching the time-step kernel")?;
        self.after_launch_timed(1)?;
        let mut s = [0u64; 2];
        self.stream.memcpy_dtoh(&self.scratch.slice(0..2), &mut s).context("reading the time step back")?;
        if let Some(t) = &mut self.timing {
            t.collect()?;
        }
        let health = if s[1] != 0 { Health::Bad } else { Health::Ok };
        Ok((T::from_min_bits(s[0]), health))
    }

    fn update(&mut self, dt: f64) -> Result<()> {
        let dt = T::c(dt);
        let (stride, n) = (self.n_cells as i64, self.n_owned as i32);
        self.before_launch(2)?;
        let mut l = self.stream.launch_builder(&self.update_fn);
        l.arg(&self.v1).arg(&self.v2).arg(&mut self.o1).arg(&mut self.o2);
        l.arg(&self.acc).arg(&stride).arg(&n).arg(&dt).arg(&mut self.scratch);
        // SAFETY: matches update_{f32,f64}.
        unsafe { l.launch(grid(self.n_owned)) }.context("launching the update kernel")?;
        std::mem::swap(&mut self.v1, &mut self.o1);
        std::mem::swap(&mut self.v2, &mut self.o2);
        self.after_launch_timed(2)
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

    fn state(&mut self) -> Result<Vec<CellState>> {
        owned_state(&self.stream, &self.v1, &self.v2, self.n_owned)
    }
    fn previous_state(&mut self) -> Result<Vec<CellState>> {
        owned_state(&self.stream, &self.o1, &self.o2, self.n_owned)
    }
    fn read_cells(&mut self, cells: &[usize]) -> Result<Vec<CellState>> {
        let mut out = Vec::with_capacity(cells.len());
        for &c in cells {
            let a = self.stream.clone_dtoh(&self.v1.slice(4 * c..4 * c + 4))?;
            let b = self.stream.clone_dtoh(&self.v2.slice(4 * c..4 * c + 4))?;
            out.push(CellState::from_records(&a, &b));
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
        Ok(match &mut self.timing {
            Some(t) => {
                t.collect()?;
                (0..3).map(|k| (KERNELS[k], t.seconds[k], t.launches[k])).collect()
            }
            None => vec![],
        })
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
        let h = self.halo.as_mut().expect("made by ensure_halo");
        if words.is_empty() {
            return Ok(());
        }
        // The copy stream starts once the main stream's work so far (the update) is done.
        h.copy.wait(&self.stream.record_event(None)?)?;
        h.copy
            .memcpy_dtoh(&self.v1.slice(words.clone()), &mut h.send[0])
            .context("copying the send block to the host")?;
        h.copy.memcpy_dtoh(&self.v2.slice(words), &mut h.send[1]).context("copying the send block to the host")?;
        h.downloaded = Some(h.copy.record_event(Some(CUevent_flags::CU_EVENT_BLOCKING_SYNC))?);
        Ok(())
    }
    fn finish_download(&mut self, v1: &mut [u8], v2: &mut [u8]) -> Result<()> {
        let Some(h) = &mut self.halo else { bail!("finish_download without begin_download") };
        if let Some(done) = h.downloaded.take() {
            done.synchronize().context("copying the send block to the host")?;
        }
        for (out, staged) in [(v1, &h.send[0]), (v2, &h.send[1])] {
            let src = staged.as_slice().context("copying the send block to the host")?;
            let dst = host_floats::<T>(out)?;
            let n = dst.len();
            dst.copy_from_slice(&src[..n]);
        }
        Ok(())
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
        if let Some(done) = h.uploaded.take() {
            done.synchronize().context("copying the receive block to the GPU")?;
        }
        for (k, src) in [a, b].into_iter().enumerate() {
            h.recv[k].as_mut_slice().context("staging the receive block")?[..src.len()].copy_from_slice(src);
        }
        h.copy
            .memcpy_htod(&h.recv[0], &mut self.v1.slice_mut(words.clone()))
            .context("copying the receive block to the GPU")?;
        h.copy
            .memcpy_htod(&h.recv[1], &mut self.v2.slice_mut(words))
            .context("copying the receive block to the GPU")?;
        // The communication edges (main stream) wait for the copy, not the host.
        let done = h.copy.record_event(Some(CUevent_flags::CU_EVENT_BLOCKING_SYNC))?;
        self.stream.wait(&done)?;
        h.uploaded = Some(done);
        Ok(())
    }
    fn edges_async(&self) -> bool {
        true
    }
}

fn owned_state<T: CudaReal>(
    stream: &Arc<CudaStream>,
    v1: &CudaSlice<T>,
    v2: &CudaSlice<T>,
    n: usize,
) -> Result<Vec<CellState>> {
    let a = stream.clone_dtoh(&v1.slice(0..4 * n))?;
    let b = stream.clone_dtoh(&v2.slice(0..4 * n))?;
    Ok(a.chunks_exact(4).zip(b.chunks_exact(4)).map(|(a, b)| CellState::from_records(a, b)).collect())
}

/// Host bytes of the halo buffers as floats; they are allocated as u64 words (comm::halo),
/// so the alignment holds.
fn host_floats<T: CudaReal>(b: &mut [u8]) -> Result<&mut [T]> {
    // SAFETY: every bit pattern is a valid f32/f64; align_to_mut checks the alignment.
    let (pre, mid, post) = unsafe { b.align_to_mut::<T>() };
    if !pre.is_empty() || !post.is_empty() {
        bail!("halo buffer not aligned for {}", T::NAME);
    }
    Ok(mid)
}
fn host_floats_ref<T: CudaReal>(b: &[u8]) -> Result<&[T]> {
    // SAFETY: as host_floats.
    let (pre, mid, post) = unsafe { b.align_to::<T>() };
    if !pre.is_empty() || !post.is_empty() {
        bail!("halo buffer not aligned for {}", T::NAME);
    }
    Ok(mid)
}
