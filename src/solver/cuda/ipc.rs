//! The halo and the time step's minimum from GPU to GPU by the kernels' own stores
//! (`kernels/peer.cu`): each rank exports a mailbox with CUDA IPC and maps the others'
//! (one node, a GPU per rank, peer access between every pair). A step's sender stores its
//! send cells into the receivers' mailboxes and raises a flag there; a receiver waits for
//! the flag and copies its mailbox into the receive block; the time-step kernel's last block
//! stores its minimum and health flag in every other rank's mailbox and waits for theirs.
//!
//! Why not only NCCL (`peer.rs`): on two H200s its send/receive and all-reduce cost about
//! 38 µs a step beyond the half mesh's kernels (BENCHMARKS.md), each a kernel of its own
//! with an NVLink handshake; here a cross-GPU wait is one store over NVLink and a poll of
//! local memory. NCCL stays the engine where this cannot be set up.
//!
//! The bytes moved are those of the host-staged exchange (the same cells in the same order)
//! and the minimum of bit patterns does not depend on the order: results are bit for bit
//! those of the other paths. With ghost updates (small ranks, first order) a sender instead
//! stores what its update of each send cell reads, with the minimum, and each receiver
//! updates its receive block with the owners' own function: the same bits again.

use super::launch::{address, grid, DeviceArrays};
use super::resident::{cells_from_env, CONTROL_WORDS, SEQ_WORD, STOP_WORD};
use super::{CudaBackend, CudaReal};
use crate::comm::Comm;
use crate::solver::exchange::HaloPlan;
use anyhow::{anyhow, Context, Result};
use cudarc::driver::sys;
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DeviceRepr, PushKernelArg};
use std::sync::Arc;

/// Ranks a mailbox has slots for (`PEER_MAX_RANKS` in `kernels/peer.cu`).
pub const MAX_RANKS: usize = 64;
/// The flags and reduce slots before the cells (`PEER_HEADER_BYTES`).
const HEADER_BYTES: usize = 5 * MAX_RANKS * 8;
/// `stop` of the control block when another GPU did not answer (`kernels/peer.cu`).
pub const STOP_TIMEOUT: u64 = 4;

/// Owned cells a rank may have for its updates to send the next step's halo themselves
/// (first order). Measured on two H200s (BENCHMARKS.md, issue 20): the update's own send
/// saves 3.4 µs a step at 1.3e5 cells a rank (10%) and 0.4% at 2e6, but costs 0.3% at 5e6
/// and 0.8% at 1.5e7 (14.7 µs of a 1.87 ms step) against a send kernel at the step's start.
pub const UPDATE_SENDS_CELLS: usize = 3_000_000;

/// Whether a rank takes a first-order path measured faster on small ranks: up to `limit` owned
/// cells, or as `forced` ("0" never, "1" always), never at second order. The paths: the
/// update's own send of the halo (`update_peer`, `PYCNO_IPC_UPDATE_SENDS`, limit
/// [`UPDATE_SENDS_CELLS`]; second order sends each stage's halo at the stage's start) and
/// ghost updates (`PYCNO_IPC_GHOSTS`, limit [`GHOST_CELLS`], `kernels/peer.cu`: each sender
/// stores what its update of each send cell reads into the receivers' mailboxes before the
/// time step's minimum, and each receiver updates its receive block itself, so a step has one
/// cross-GPU wait and one GPU's three kernels; second order's halo has two rings, which its
/// owners do not update).
pub fn for_small_ranks(order2: bool, n_owned: usize, forced: Option<&str>, limit: usize) -> bool {
    match forced {
        _ if order2 => false,
        Some("0") => false,
        Some("1") => true,
        _ => n_owned <= limit,
    }
}

/// Owned cells a rank may have for ghost updates (first order). Measured on two H200s
/// (BENCHMARKS.md, issue 20), against the halo sent by the update or a send kernel: 2.4%
/// faster at 5e5 cells a rank, the same within 1% at 1.3e5, but 0.4% slower at 5e6 and 1.0%
/// at 1.5e7. Between 5e5 and 5e6 not measured. On more than two GPUs the default is none
/// (not yet run there).
pub const GHOST_CELLS: usize = 3_000_000;

/// Ghost words per receive cell (`PEER_GHOST_WORDS`), each four reals.
const GHOST_WORDS: usize = 9;

/// `PeerArgs` of `kernels/peer.cu`, passed by value.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct PeerArgs {
    mailboxes: u64,
    send_cells: u64,
    send_dest: u64,
    send_off: u64,
    dests: u64,
    sources: u64,
    counter: u64,
    by_cell_first: u64,
    by_cell_items: u64,
    /// Per rank: the bytes of one copy of its mailbox's cells (exchanges alternate copies).
    region: u64,
    n_send: i32,
    n_dests: i32,
    n_sources: i32,
    n_recv: i32,
    recv_begin: i32,
    me: i32,
    n_ranks: i32,
    sb_begin: i32,
    sb_end: i32,
    reserved: i32,
}
// SAFETY: #[repr(C)], integers only, mirrored in kernels/peer.cu.
unsafe impl DeviceRepr for PeerArgs {}

/// The kernels of `kernels/peer.cu`.
pub struct PeerFns {
    pub send: CudaFunction,
    pub receive: CudaFunction,
    pub dt: CudaFunction,
    /// The update that sends the send block's new states itself (`update_peer`).
    pub update: CudaFunction,
    /// The time step that first stores the ghost words (`dt_ghost_peer`), and the update of
    /// the owned cells and the receive block from them (`update_ghost_peer`).
    pub dt_ghost: CudaFunction,
    pub update_ghost: CudaFunction,
}

/// Which exchange of a batch: in stage `stage` (0, or 1 for second order's second) of step
/// `step`, the batch's exchange `number` (from 1: its flags are the control block's `seq` plus
/// it). The send and receive kernels run if the stage does (`stage_runs`, `kernels/resident.cu`).
#[derive(Clone, Copy, Debug)]
pub struct Exchange {
    pub step: u64,
    pub stage: i32,
    pub number: u64,
}

impl Exchange {
    /// Step `step`'s exchange at first order (one a step).
    pub fn first_order(step: u64) -> Exchange {
        Exchange { step, stage: 0, number: step + 1 }
    }
    /// Stage `stage` of step `step` at second order (two a step).
    pub fn second_order(step: u64, stage: i32) -> Exchange {
        Exchange { step, stage, number: 2 * step + stage as u64 + 1 }
    }
}

/// One rank's end of the exchange.
pub struct PeerLink {
    pub args: PeerArgs,
    /// The exchange's stream (the overlapped edge pass forks to it and joins back).
    pub stream: Arc<CudaStream>,
    pub fns: PeerFns,
    /// Exchanges so far (the sequence numbers of the flags).
    pub seq: u64,
    /// Whether the device-resident steps' updates send the halo of the next step themselves
    /// (`update_peer`), or a send kernel does at each step's start, as in the host-driven
    /// steps: see [`for_small_ranks`].
    pub update_sends: bool,
    /// Whether the device-resident steps update the receive block from the owners' ghost
    /// words (see [`for_small_ranks`]; `update_sends` then does not apply).
    pub ghosts: bool,
    /// With `update_sends`: the halo of exchange `seq + 1` is in the mailboxes already (sent
    /// by the last update of the batch before, or by the priming send of the first batch).
    /// With `ghosts`: the receive block holds the current state (the last batch's updates
    /// wrote it, or the priming exchange of the first batch).
    pub primed: bool,
    /// A control block for exchanges of host-driven steps (its `stop` reports a timeout).
    pub host_ctl: CudaSlice<u64>,
    /// The mailbox and the other ranks' mapped ones (freed when the link goes, after the
    /// stream's work: see Drop).
    _mapped: Link,
    /// The device tables `args` points into.
    _tables: Tables,
    _counter: CudaSlice<u64>,
}

/// The device tables of [`PeerArgs`]: mailboxes, send cells, destinations, offsets,
/// destination ranks, source ranks, the sent entries of each send-block cell (first per
/// cell, then the entries), and each rank's copy of cells in bytes.
type Tables = (
    CudaSlice<u64>,
    CudaSlice<i32>,
    CudaSlice<i32>,
    CudaSlice<i64>,
    CudaSlice<i32>,
    CudaSlice<i32>,
    CudaSlice<i32>,
    CudaSlice<i32>,
    CudaSlice<i64>,
);

/// The entries of a send table (`cells[k]`, the local cell of entry k) grouped by cell over
/// the send block `block`: `first[c - block.start] .. first[c - block.start + 1]` index
/// `items`, the entries of cell c in table order. None where an entry's cell lies outside.
pub fn entries_by_cell(cells: &[i32], block: std::ops::Range<usize>) -> Option<(Vec<i32>, Vec<i32>)> {
    let mut first = vec![0i32; block.len() + 1];
    for &c in cells {
        let c = c as usize;
        if !block.contains(&c) {
            return None;
        }
        first[c - block.start + 1] += 1;
    }
    for i in 0..block.len() {
        first[i + 1] += first[i];
    }
    let mut at = first.clone();
    let mut items = vec![0i32; cells.len()];
    for (k, &c) in cells.iter().enumerate() {
        let slot = &mut at[c as usize - block.start];
        items[*slot as usize] = k as i32;
        *slot += 1;
    }
    Some((first, items))
}

impl PeerLink {
    /// Cells of this rank's receive block.
    pub fn n_recv(&self) -> usize {
        self.args.n_recv as usize
    }
}

// SAFETY: the raw device pointers are only used through `&mut` of the backend.
unsafe impl Send for PeerLink {}

impl Drop for PeerLink {
    fn drop(&mut self) {
        // No kernel may still store into or read the mailboxes when `_mapped` frees them.
        let _ = self.stream.synchronize();
    }
}

fn check(what: &str, r: sys::CUresult) -> std::result::Result<(), String> {
    if r == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(format!("{what}: {r:?}"))
    }
}

/// The 64 bytes of an IPC handle as 16 words, and back (they travel as f64 integers).
fn handle_words(h: &sys::CUipcMemHandle) -> Vec<f64> {
    h.reserved
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0] as u8, c[1] as u8, c[2] as u8, c[3] as u8]) as f64)
        .collect()
}
fn handle_from(words: &[f64]) -> sys::CUipcMemHandle {
    // SAFETY: a plain byte array.
    let mut h: sys::CUipcMemHandle = unsafe { std::mem::zeroed() };
    for (dst, w) in h.reserved.chunks_exact_mut(4).zip(words) {
        for (d, b) in dst.iter_mut().zip((*w as u32).to_le_bytes()) {
            *d = b as std::ffi::c_char;
        }
    }
    h
}

impl<T: CudaReal> CudaBackend<T> {
    /// Connect the exchange by the kernels' own stores for `plan` (every rank together).
    /// `Ok(Err(why))`, the same on every rank, where it cannot be used.
    pub fn connect_ipc_exchange(
        &mut self,
        comm: &dyn Comm,
        plan: &HaloPlan,
    ) -> Result<std::result::Result<String, String>> {
        self.ctx.bind_to_thread().context("binding the CUDA context")?;
        let (n, me) = (comm.size(), comm.rank());
        let agreed = |ok: bool| comm.min_f64(if ok { 1.0 } else { 0.0 }) > 0.0;
        if n > MAX_RANKS || comm.node_rank().1 != n {
            return Ok(Err(format!("the GPUs' own stores need every rank on one node (at most {MAX_RANKS})")));
        }
        // The time-step kernel's blocks load the ranks' mailbox addresses one a thread
        // (peer_prefetch in kernels/peer.cu). The same on every rank (the same environment).
        if (super::device::block() as usize) < n {
            return Ok(Err(format!("the GPUs' own stores need at least {n} threads a block (PYCNO_CUDA_BLOCK)")));
        }
        // Every rank's GPU, and peer access between each pair.
        let ordinal = self.ctx.ordinal() as f64;
        let ordinals = comm.all_gather_f64(&[ordinal]);
        let mut why = None;
        let mine = self.ctx.cu_device();
        for (r, &o) in ordinals.iter().enumerate() {
            if r == me {
                continue;
            }
            if o == ordinal {
                why = Some(format!("ranks {me} and {r} share GPU {o}"));
                break;
            }
            let mut other: sys::CUdevice = 0;
            let mut can: std::ffi::c_int = 0;
            // SAFETY: out-pointers to locals.
            let r1 = unsafe { sys::cuDeviceGet(&mut other, o as std::ffi::c_int) };
            // SAFETY: as above.
            let r2 = unsafe { sys::cuDeviceCanAccessPeer(&mut can, mine, other) };
            if let Err(e) = check("cuDeviceGet", r1).and(check("cuDeviceCanAccessPeer", r2)) {
                why = Some(e);
                break;
            }
            if can == 0 {
                why = Some(format!("GPU {ordinal} cannot reach GPU {o} (no peer access)"));
                break;
            }
        }
        if !agreed(why.is_none()) {
            return Ok(Err(why.unwrap_or_else(|| "another rank's GPU has no peer access".into())));
        }
        let cb = 4 * std::mem::size_of::<T>();
        let n_recv = plan.receive_block.len();
        // The header, then two copies of the receive block's cells and two of its ghost words
        // (`kernels/peer.cu`).
        let bytes = HEADER_BYTES + (4 + 2 * GHOST_WORDS) * n_recv * cb;
        // A plain allocation (CUDA IPC cannot export the stream-ordered pool's).
        // SAFETY: a fresh allocation, zeroed before use.
        let mailbox = unsafe { cudarc::driver::result::malloc_sync(bytes) }.context("allocating the GPU mailbox")?;
        // SAFETY: inside the allocation just made.
        unsafe { cudarc::driver::result::memset_d8_sync(mailbox, 0, bytes) }.context("clearing the GPU mailbox")?;
        let mut link = Link { mailbox, opened: vec![] };
        // SAFETY: a plain byte array, then filled by the driver for the allocation.
        let mut h: sys::CUipcMemHandle = unsafe { std::mem::zeroed() };
        // SAFETY: `mailbox` is an allocation of this context.
        let got = check("cuIpcGetMemHandle", unsafe { sys::cuIpcGetMemHandle(&mut h, mailbox) });
        let handles = comm.all_gather_f64(&handle_words(&h));
        // Where each source's cells go in this rank's mailbox: (offset, cells) per source
        // rank (-1: none), and the receive block's size.
        let mut place = vec![-1.0; 2 * n + 1];
        for (src, cells) in &plan.recvs {
            place[2 * *src as usize] = (cells.start - plan.receive_block.start) as f64;
            place[2 * *src as usize + 1] = cells.len() as f64;
        }
        place[2 * n] = n_recv as f64;
        let places = comm.all_gather_f64(&place);
        let mut mailboxes = vec![0u64; n];
        mailboxes[me] = mailbox;
        let mut why = got.err();
        for r in 0..n {
            if r == me || why.is_some() {
                continue;
            }
            let mut p: sys::CUdeviceptr = 0;
            let handle = handle_from(&handles[16 * r..16 * r + 16]);
            // SAFETY: another process's exported allocation, mapped here with peer access.
            let opened = unsafe {
                sys::cuIpcOpenMemHandle_v2(
                    &mut p,
                    handle,
                    sys::CUipcMem_flags::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS as std::ffi::c_uint,
                )
            };
            match check(&format!("opening rank {r}'s mailbox"), opened) {
                Ok(()) => {
                    link.opened.push(p);
                    mailboxes[r] = p;
                }
                Err(e) => why = Some(e),
            }
        }
        // The send table: each sent cell, its destination and its two layers' places there.
        let (mut cells, mut dest, mut offs) = (vec![], vec![], vec![]);
        for (d, runs) in &plan.sends {
            let d = *d as usize;
            let at = &places[(2 * n + 1) * d..(2 * n + 1) * (d + 1)];
            let (off, len, their_recv) = (at[2 * me], at[2 * me + 1], at[2 * n] as usize);
            let total: usize = runs.iter().map(|r| r.len()).sum();
            if off < 0.0 || len as usize != total {
                why.get_or_insert(format!("rank {d} expects {len} cells from rank {me}, which sends {total}"));
                continue;
            }
            for (i, c) in runs.iter().flat_map(|r| r.clone()).enumerate() {
                let k = off as usize + i;
                cells.push(c as i32);
                dest.push(d as i32);
                offs.push((HEADER_BYTES + k * cb) as i64);
                offs.push((HEADER_BYTES + (their_recv + k) * cb) as i64);
            }
        }
        let by_cell = entries_by_cell(&cells, plan.send_block.clone());
        if by_cell.is_none() {
            why.get_or_insert(format!("rank {me} sends cells outside its send block {:?}", plan.send_block));
        }
        if !agreed(why.is_none()) {
            return Ok(Err(why.unwrap_or_else(|| "another rank could not map the mailboxes".into())));
        }
        let (first, items) = by_cell.expect("checked above");
        // One copy of each rank's cells: its receive block's two layers.
        let region: Vec<i64> = (0..n).map(|r| (2 * places[(2 * n + 1) * r + 2 * n] as usize * cb) as i64).collect();
        let s = &self.stream;
        let up = |e| anyhow!("uploading the GPU exchange's tables: {e}");
        let nonempty = |v: Vec<i32>| if v.is_empty() { vec![0] } else { v };
        let dests: Vec<i32> = plan.sends.iter().map(|(d, _)| *d).collect();
        let sources: Vec<i32> = plan.recvs.iter().map(|(r, _)| *r).collect();
        let (n_send, n_dests, n_sources) = (cells.len() as i32, dests.len() as i32, sources.len() as i32);
        let tables = (
            s.clone_htod(&mailboxes).map_err(up)?,
            s.clone_htod(&nonempty(cells)).map_err(up)?,
            s.clone_htod(&nonempty(dest)).map_err(up)?,
            s.clone_htod(&if offs.is_empty() { vec![0i64; 2] } else { offs }).map_err(up)?,
            s.clone_htod(&nonempty(dests)).map_err(up)?,
            s.clone_htod(&nonempty(sources)).map_err(up)?,
            s.clone_htod(&first).map_err(up)?,
            s.clone_htod(&nonempty(items)).map_err(up)?,
            s.clone_htod(&region).map_err(up)?,
        );
        let counter = s.alloc_zeros::<u64>(1).map_err(up)?;
        let host_ctl = s.alloc_zeros::<u64>(CONTROL_WORDS).map_err(up)?;
        let args = PeerArgs {
            mailboxes: address(&tables.0, s),
            send_cells: address(&tables.1, s),
            send_dest: address(&tables.2, s),
            send_off: address(&tables.3, s),
            dests: address(&tables.4, s),
            sources: address(&tables.5, s),
            counter: address(&counter, s),
            by_cell_first: address(&tables.6, s),
            by_cell_items: address(&tables.7, s),
            region: address(&tables.8, s),
            n_send,
            n_dests,
            n_sources,
            n_recv: n_recv as i32,
            recv_begin: plan.receive_block.start as i32,
            me: me as i32,
            n_ranks: n as i32,
            sb_begin: plan.send_block.start as i32,
            sb_end: plan.send_block.end as i32,
            reserved: 0,
        };
        let f = |op: &str| {
            self.module
                .load_function(&format!("{op}_peer_{}", T::SUFFIX))
                .with_context(|| format!("kernel {op}_peer missing"))
        };
        let fns = PeerFns {
            send: f("send")?,
            receive: f("receive")?,
            dt: f("dt")?,
            update: f("update")?,
            dt_ghost: f("dt_ghost")?,
            update_ghost: f("update_ghost")?,
        };
        let stream = self.ctx.new_stream().map_err(|e| anyhow!("cannot make the exchange's CUDA stream: {e}"))?;
        s.synchronize()?;
        // Every mailbox is cleared before any rank stores into another's.
        comm.barrier();
        // Every rank the same way (their owned cells differ a little), though the exchange
        // would work either way.
        let small = |switch: &str, default: usize| {
            let forced = std::env::var(switch).ok();
            let limit = cells_from_env(&format!("{switch}_CELLS"), default);
            agreed(for_small_ranks(self.order2.is_some(), self.n_owned, forced.as_deref(), limit))
        };
        let update_sends = small("PYCNO_IPC_UPDATE_SENDS", UPDATE_SENDS_CELLS);
        // Ghost updates, where taken, replace the update's send (`enqueue_steps`). Measured and
        // checked on two GPUs only: on more, only where asked for (PYCNO_IPC_GHOSTS=1 or
        // PYCNO_IPC_GHOSTS_CELLS).
        let ghosts = small("PYCNO_IPC_GHOSTS", if n == 2 { GHOST_CELLS } else { 0 });
        self.ipc = Some(PeerLink {
            args,
            stream,
            fns,
            seq: 0,
            update_sends,
            ghosts,
            primed: false,
            host_ctl,
            _mapped: link,
            _tables: tables,
            _counter: counter,
        });
        // The graphs captured so far hold no exchange.
        self.resident = None;
        Ok(Ok("ipc (each GPU stores into the others' memory over NVLink)".into()))
    }

    /// Queue this rank's send and receive of exchange `at` of a batch on `stream`, with
    /// control block `ctl` (its `seq` numbers the exchanges).
    pub(super) fn enqueue_ipc(&self, a: &DeviceArrays, ctl: u64, at: Exchange, stream: &CudaStream) -> Result<()> {
        self.enqueue_ipc_send(a, ctl, at, stream)?;
        self.enqueue_ipc_receive(a, ctl, at, stream)
    }

    /// Queue this rank's send of exchange `at` (the send block of `a`'s current set).
    pub(super) fn enqueue_ipc_send(&self, a: &DeviceArrays, ctl: u64, at: Exchange, stream: &CudaStream) -> Result<()> {
        let p = self.ipc.as_ref().ok_or_else(|| anyhow!("the GPU stores exchange is not connected"))?;
        let mut l = stream.launch_builder(&p.fns.send);
        l.arg(a).arg(&p.args).arg(&ctl).arg(&at.step).arg(&at.stage).arg(&at.number);
        // SAFETY: the arguments of send_peer_{f32,f64}, in order.
        unsafe { l.launch(grid(p.args.n_send.max(1) as usize)) }.context("queueing the halo's stores")?;
        Ok(())
    }

    /// Queue this rank's receipt of exchange `at` (into `a`'s receive block).
    pub(super) fn enqueue_ipc_receive(
        &self,
        a: &DeviceArrays,
        ctl: u64,
        at: Exchange,
        stream: &CudaStream,
    ) -> Result<()> {
        let p = self.ipc.as_ref().ok_or_else(|| anyhow!("the GPU stores exchange is not connected"))?;
        let mut l = stream.launch_builder(&p.fns.receive);
        l.arg(a).arg(&p.args).arg(&ctl).arg(&at.step).arg(&at.stage).arg(&at.number);
        // SAFETY: the arguments of receive_peer_{f32,f64}, in order.
        unsafe { l.launch(grid(p.args.n_recv.max(1) as usize)) }.context("queueing the halo's receipt")?;
        Ok(())
    }

    /// The edge pass of a host-driven step (or stage) with the exchange by the GPUs' stores.
    /// At second order as the host-staged exchange's (`Halo::edge_pass`): the reconstruction
    /// of the inner cells and the edges between them while the halo travels, then the rest.
    pub fn ipc_edge_pass(&mut self, t: f64, overlap: bool) -> Result<()> {
        use crate::solver::backend::Cells;
        use crate::solver::Backend;
        let a = self.arrays();
        let order2 = self.order2.is_some();
        let (ne, nl) = (self.n_edges, if order2 { self.num_inner_edges() } else { self.n_local_edges });
        let n_owned = self.n_owned;
        let p = self.ipc.as_mut().ok_or_else(|| anyhow!("the GPU stores exchange is not connected"))?;
        // The last exchange's outcome (the host-driven loop synchronizes every step).
        let mut stop = [0u64];
        p.stream.memcpy_dtoh(&p.host_ctl.slice(STOP_WORD..STOP_WORD + 1), &mut stop)?;
        p.stream.synchronize()?;
        if stop[0] == STOP_TIMEOUT {
            return Err(timeout());
        }
        let seq = [p.seq];
        p.stream.memcpy_htod(&seq, &mut p.host_ctl.slice_mut(SEQ_WORD..SEQ_WORD + 1))?;
        p.seq += 1;
        // This step's sends are its own: the next device-resident batch primes its own.
        p.primed = false;
        let p = self.ipc.as_ref().expect("connected");
        let ctl = address(&p.host_ctl, &p.stream);
        // One exchange under the host's control block: its `seq` was just written.
        let at = Exchange::first_order(0);
        if overlap {
            p.stream.wait(&self.stream.record_event(None)?)?;
            self.enqueue_ipc(&a, ctl, at, &p.stream)?;
            let done = p.stream.record_event(None)?;
            self.reconstruct(Cells::Inner(0..n_owned))?;
            self.process_edges(0..nl, t)?;
            self.stream.wait(&done)?;
            self.reconstruct(Cells::Outer)?;
            self.process_edges(nl..ne, t)
        } else {
            p.stream.wait(&self.stream.record_event(None)?)?;
            self.enqueue_ipc(&a, ctl, at, &p.stream)?;
            self.stream.wait(&p.stream.record_event(None)?)?;
            self.reconstruct(Cells::All)?;
            self.process_edges(0..ne, t)
        }
    }
}

/// What a rank reports when another GPU stopped answering.
pub fn timeout() -> anyhow::Error {
    anyhow!("another rank's GPU did not answer the halo exchange for 120 s (that rank failed or hangs)")
}

/// This rank's mailbox and the other ranks' as mapped here: freed when dropped (also when
/// the set-up stops half-way).
struct Link {
    mailbox: sys::CUdeviceptr,
    opened: Vec<sys::CUdeviceptr>,
}

impl Drop for Link {
    fn drop(&mut self) {
        for &p in &self.opened {
            // SAFETY: mapped by cuIpcOpenMemHandle; no work uses it any more (PeerLink's Drop
            // synchronized its stream first).
            unsafe { sys::cuIpcCloseMemHandle(p) };
        }
        // SAFETY: allocated by malloc_sync; as above.
        let _ = unsafe { cudarc::driver::result::free_sync(self.mailbox) };
    }
}

#[cfg(test)]
mod tests {
    use super::{entries_by_cell, for_small_ranks, Exchange, GHOST_CELLS, UPDATE_SENDS_CELLS};

    #[test]
    fn small_rank_paths_up_to_their_limits_at_first_order_only() {
        // The update's send: 2.6e5 and 4e6 cells on two GPUs take it, 10^7 and 3e7 not; ghost updates:
        // 2.6e5 and 10^6 take them, 10^7 and 3e7 not (BENCHMARKS.md).
        for (limit, takes, not) in [
            (UPDATE_SENDS_CELLS, [129_353, 2_006_597], [5_017_764, 15_050_427]),
            (GHOST_CELLS, [129_353, 502_668], [5_017_764, 15_050_427]),
        ] {
            for n in takes {
                assert!(for_small_ranks(false, n, None, limit));
            }
            for n in not {
                assert!(!for_small_ranks(false, n, None, limit));
            }
            assert!(for_small_ranks(false, limit, None, limit));
            assert!(!for_small_ranks(false, limit + 1, None, limit));
        }
        // Forced either way, or with another limit; never at second order.
        let limit = GHOST_CELLS;
        assert!(!for_small_ranks(false, 1000, Some("0"), limit));
        assert!(for_small_ranks(false, 15_050_427, Some("1"), limit));
        assert!(!for_small_ranks(false, 1000, None, 999));
        assert!(!for_small_ranks(true, 1000, Some("1"), limit));
        assert!(!for_small_ranks(true, 1000, None, limit));
    }

    #[test]
    fn exchanges_are_numbered_in_order_one_or_two_a_step() {
        // The mailbox copy of an exchange is its number's parity (`kernels/peer.cu`): the two
        // stages of a second-order step take different copies, and numbers never repeat.
        let first: Vec<u64> = (0..4).map(|k| Exchange::first_order(k).number).collect();
        assert_eq!(first, vec![1, 2, 3, 4]);
        let second: Vec<u64> = (0..4).flat_map(|k| (0..2).map(move |s| Exchange::second_order(k, s).number)).collect();
        assert_eq!(second, (1..=8).collect::<Vec<u64>>());
        assert_ne!(Exchange::second_order(3, 0).number % 2, Exchange::second_order(3, 1).number % 2);
    }

    #[test]
    fn send_entries_are_grouped_by_cell_in_table_order() {
        // Cells 10..14: 11 goes to two ranks, 13 to none.
        let cells = [12, 11, 10, 11, 12];
        let (first, items) = entries_by_cell(&cells, 10..14).unwrap();
        assert_eq!(first, vec![0, 1, 3, 5, 5]);
        assert_eq!(items, vec![2, 1, 3, 0, 4]);
        for (c, w) in first.windows(2).enumerate() {
            for &k in &items[w[0] as usize..w[1] as usize] {
                assert_eq!(cells[k as usize] as usize, 10 + c);
            }
        }
        assert!(entries_by_cell(&[9], 10..14).is_none(), "a cell outside the send block");
        assert_eq!(entries_by_cell(&[], 3..3), Some((vec![0], vec![])));
    }
}
