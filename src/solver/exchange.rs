//! The edge pass of one step with the exchange of communication cells (de la Asunción et al. 2012, section 6.3).
//!
//! - Overlapped (Algorithm 2): post the receives, copy the send block to the host, post one
//!   send per neighbour and layer (a slice of the send block; a gather only for destinations
//!   the partition reported as fallbacks), process the non-communication edges while the
//!   messages travel, wait, copy the receive block to the backend, process the communication
//!   edges.
//! - Blocking (Algorithm 1, the baseline): the whole exchange first, then every edge.
//!
//! At second order each stage is one such exchange of states, with a receive block of two
//! rings (`partition/submesh.rs`): the rank reconstructs its owned cells and the first ring
//! itself, from the same numbers as their owners, so the communication edges have both
//! sides' edge values without a second exchange. Overlapped, the owned cells whose stencils
//! read no receive-block cell are reconstructed and their edges processed while the
//! messages travel; the rest after.
//!
//! On a CPU backend the edge pass blocks, so it runs in chunks with an `MPI_Testall` between
//! them: Open MPI progresses large (rendezvous) messages only inside MPI calls. A GPU
//! backend queues the send block's copy on a copy stream and the interior edge kernel on the
//! main stream before anything else (Jacobsen, Thibault and Senocak 2010, Listing 4), so the copy to the host, the
//! messages and the copy back all run while the kernel does; the host then only waits. On a
//! GPU the host-side phase times are queueing and waiting times, not kernel times (those come
//! from `--profile`).

use super::{Backend, Cells};
use crate::comm::Messages;
use anyhow::Result;
use clap::ValueEnum;
use serde::Serialize;
use std::ops::Range;
use std::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ExchangeMode {
    /// Algorithm 2 of de la Asunción et al. 2012: non-communication edges while the messages travel.
    Overlap,
    /// Algorithm 1 of de la Asunción et al. 2012: exchange first, then all edges.
    Blocking,
}

/// What carries the halo between GPUs (`run --gpu-exchange`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GpuExchange {
    /// Where every rank is on one node with a GPU of its own and the steps run on the
    /// device: the GPUs' own stores, else NCCL where it loads everywhere; else the host.
    #[default]
    Auto,
    /// Through the host: copies to pinned memory and MPI messages (any network).
    Host,
    /// From GPU to GPU with NCCL, and the time step reduced on the GPUs, so several GPUs
    /// run device-resident too; falls back to the host with a message where NCCL is missing.
    Nccl,
    /// From GPU to GPU by the kernels' own stores into the other GPUs' memory (CUDA IPC,
    /// one node, peer access between every pair), the time step reduced the same way;
    /// falls back to the host with a message where that cannot be set up.
    Ipc,
}

/// Seconds per phase of the step loop, summed over the steps (the paper's Table 3 splits).
#[derive(Clone, Debug, Default, Serialize)]
pub struct PhaseTimes {
    /// Send block to the host, and gathers for fallback destinations.
    pub pack: f64,
    /// Posting the messages and waiting for them, beyond what overlapped with edges.
    pub exchange: f64,
    /// Receive block from the host to the backend.
    pub unpack: f64,
    /// Non-communication edges (all edges on one rank or in the blocking loop); at second
    /// order with the reconstruction of their cells (overlapped: the inner cells and edges).
    pub edges_interior: f64,
    /// The communication edges; at second order, overlapped, with the reconstruction of the
    /// cells beside the receive block and of its first ring, and the edges between them.
    pub edges_communication: f64,
    /// Per-cell time step and the local minimum.
    pub dt: f64,
    /// The global minimum (MPI_Allreduce).
    pub allreduce: f64,
    pub update: f64,
}

impl PhaseTimes {
    pub const NAMES: [&'static str; 8] =
        ["pack", "exchange", "unpack", "edges_interior", "edges_communication", "dt", "allreduce", "update"];
    pub fn to_array(&self) -> [f64; 8] {
        [
            self.pack,
            self.exchange,
            self.unpack,
            self.edges_interior,
            self.edges_communication,
            self.dt,
            self.allreduce,
            self.update,
        ]
    }
    /// The mean over ranks of each phase.
    pub fn mean(p: &[PhaseTimes]) -> PhaseTimes {
        let n = p.len().max(1) as f64;
        let mut sum = [0.0; 8];
        for x in p {
            for (a, v) in sum.iter_mut().zip(x.to_array()) {
                *a += v;
            }
        }
        PhaseTimes::from_slice(&sum.map(|x| x / n))
    }

    pub fn from_slice(x: &[f64]) -> PhaseTimes {
        PhaseTimes {
            pack: x[0],
            exchange: x[1],
            unpack: x[2],
            edges_interior: x[3],
            edges_communication: x[4],
            dt: x[5],
            allreduce: x[6],
            update: x[7],
        }
    }
}

/// How a step's edge pass fills the accumulators: all edges at once on one rank, or with the
/// halo exchange.
pub trait EdgePass {
    fn edge_pass(&mut self, b: &mut dyn Backend, t: f64, phases: &mut PhaseTimes) -> Result<()>;
    /// Whether a device may take several steps on its own (one rank's whole mesh with
    /// nothing to exchange, or an exchange the device does itself).
    fn device_steps(&self) -> bool {
        false
    }
}

/// The halo exchanged by the GPUs themselves (`CudaBackend::peer_edge_pass`, NCCL): the
/// step loop only queues work, and batches of steps run device-resident.
pub struct DeviceExchange {
    pub mode: ExchangeMode,
}

impl EdgePass for DeviceExchange {
    fn edge_pass(&mut self, b: &mut dyn Backend, t: f64, phases: &mut PhaseTimes) -> Result<()> {
        let clock = Instant::now();
        b.device_edge_pass(t, self.mode == ExchangeMode::Overlap)?;
        phases.edges_interior += clock.elapsed().as_secs_f64();
        Ok(())
    }
    fn device_steps(&self) -> bool {
        true
    }
}

/// One rank holds the whole mesh: nothing to exchange.
pub struct AllEdges;

impl EdgePass for AllEdges {
    fn edge_pass(&mut self, b: &mut dyn Backend, t: f64, phases: &mut PhaseTimes) -> Result<()> {
        let clock = Instant::now();
        b.reconstruct(Cells::All)?;
        b.process_edges(0..b.num_edges(), t)?;
        phases.edges_interior += clock.elapsed().as_secs_f64();
        Ok(())
    }
    fn device_steps(&self) -> bool {
        true
    }
}

const TAG_LAYER1: i32 = 101;
const TAG_LAYER2: i32 = 102;
/// Edges per chunk of a blocking (CPU) edge pass between two polls of MPI.
const POLL_CHUNK: usize = 32 * 1024;

/// Who gets what, in local cell indices.
#[derive(Clone, Debug)]
pub struct HaloPlan {
    pub send_block: Range<usize>,
    pub receive_block: Range<usize>,
    /// Per destination: its rank and the runs of local cells it gets, in order.
    pub sends: Vec<(i32, Vec<Range<usize>>)>,
    /// Per source: its rank and the local cells (in the receive block) it fills.
    pub recvs: Vec<(i32, Range<usize>)>,
}

/// Host buffers are u64 words so that every cell record (16 or 32 bytes) is aligned for the
/// float type it holds.
fn words(bytes: usize) -> Vec<u64> {
    vec![0u64; bytes.div_ceil(8)]
}
fn as_bytes(w: &[u64], len: usize) -> &[u8] {
    // SAFETY: u64 -> u8 reinterpretation of initialized memory; len <= 8 * w.len().
    unsafe { std::slice::from_raw_parts(w.as_ptr() as *const u8, len) }
}
fn as_bytes_mut(w: &mut [u64], len: usize) -> &mut [u8] {
    assert!(len <= 8 * w.len());
    // SAFETY: as above, exclusive borrow.
    unsafe { std::slice::from_raw_parts_mut(w.as_mut_ptr() as *mut u8, len) }
}

/// Host buffers of the per-cell records (states): the send block and the receive block per
/// layer, and gathers for fallback destinations.
struct Records {
    cell_bytes: usize,
    /// Layer 1 and layer 2 records of the send block, of the receive block.
    send: [Vec<u64>; 2],
    recv: [Vec<u64>; 2],
    /// Per destination that is not one contiguous run: its cells gathered, per layer.
    gathered: Vec<Option<[Vec<u64>; 2]>>,
    tags: [i32; 2],
}

impl Records {
    fn new(plan: &HaloPlan, cell_bytes: usize, tags: [i32; 2]) -> Records {
        let ns = plan.send_block.len() * cell_bytes;
        let nr = plan.receive_block.len() * cell_bytes;
        let gathered = plan
            .sends
            .iter()
            .map(|(_, runs)| {
                (runs.len() != 1).then(|| {
                    let n: usize = runs.iter().map(|r| r.len()).sum();
                    [words(n * cell_bytes), words(n * cell_bytes)]
                })
            })
            .collect();
        Records { cell_bytes, send: [words(ns), words(ns)], recv: [words(nr), words(nr)], gathered, tags }
    }

    /// The send block's two layers, to be filled from the backend.
    fn send_bytes(&mut self, plan: &HaloPlan) -> (&mut [u8], &mut [u8]) {
        let n = plan.send_block.len() * self.cell_bytes;
        let [s1, s2] = &mut self.send;
        (as_bytes_mut(s1, n), as_bytes_mut(s2, n))
    }

    fn recv_bytes(&self, plan: &HaloPlan) -> (&[u8], &[u8]) {
        let n = plan.receive_block.len() * self.cell_bytes;
        (as_bytes(&self.recv[0], n), as_bytes(&self.recv[1], n))
    }

    /// Gather the send block for fallback destinations.
    fn gather(&mut self, plan: &HaloPlan) {
        let cb = self.cell_bytes;
        let sb = plan.send_block.clone();
        let n = sb.len() * cb;
        for ((_, runs), g) in plan.sends.iter().zip(&mut self.gathered) {
            let Some(g) = g else { continue };
            for (layer, buf) in g.iter_mut().enumerate() {
                let src = as_bytes(&self.send[layer], n);
                let mut at = 0;
                let len = 8 * buf.len();
                let dst = as_bytes_mut(buf, len);
                for r in runs {
                    let bytes = (r.start - sb.start) * cb..(r.end - sb.start) * cb;
                    dst[at..at + bytes.len()].copy_from_slice(&src[bytes.clone()]);
                    at += bytes.len();
                }
            }
        }
    }

    /// Send the send block, receive the receive block, running `work` while the messages
    /// travel.
    fn exchange(
        &mut self,
        messages: &dyn Messages,
        plan: &HaloPlan,
        work: &mut dyn FnMut(&mut dyn FnMut()) -> Result<()>,
    ) -> Result<()> {
        let cb = self.cell_bytes;
        let Records { send, recv, gathered, tags, .. } = self;
        let (sb, rb) = (plan.send_block.clone(), plan.receive_block.clone());
        // The receive block, split by source in the order the plan lists them.
        let [r1, r2] = recv;
        let (mut r1, mut r2) = (as_bytes_mut(r1, rb.len() * cb), as_bytes_mut(r2, rb.len() * cb));
        let mut incoming = Vec::with_capacity(2 * plan.recvs.len());
        for (rank, cells) in &plan.recvs {
            let n = cells.len() * cb;
            let (a, rest) = std::mem::take(&mut r1).split_at_mut(n);
            r1 = rest;
            let (c, rest) = std::mem::take(&mut r2).split_at_mut(n);
            r2 = rest;
            incoming.push((*rank as usize, tags[0], a));
            incoming.push((*rank as usize, tags[1], c));
        }
        // One slice of the send block per destination (its gather for fallback ones).
        let n = sb.len() * cb;
        let (s1, s2) = (as_bytes(&send[0], n), as_bytes(&send[1], n));
        let mut outgoing = Vec::with_capacity(2 * plan.sends.len());
        for ((rank, runs), g) in plan.sends.iter().zip(gathered.iter()) {
            let (a, c): (&[u8], &[u8]) = match g {
                Some([g1, g2]) => (as_bytes(g1, 8 * g1.len()), as_bytes(g2, 8 * g2.len())),
                None => {
                    let r = (runs[0].start - sb.start) * cb..(runs[0].end - sb.start) * cb;
                    (&s1[r.clone()], &s2[r])
                }
            };
            let len = runs.iter().map(|r| r.len()).sum::<usize>() * cb;
            outgoing.push((*rank as usize, tags[0], &a[..len]));
            outgoing.push((*rank as usize, tags[1], &c[..len]));
        }
        messages.exchange(&outgoing, &mut incoming, work)
    }
}

pub struct Halo<'c> {
    messages: &'c dyn Messages,
    mode: ExchangeMode,
    plan: HaloPlan,
    states: Records,
}

impl<'c> Halo<'c> {
    pub fn new(messages: &'c dyn Messages, mode: ExchangeMode, plan: HaloPlan, cell_bytes: usize) -> Halo<'c> {
        let states = Records::new(&plan, cell_bytes, [TAG_LAYER1, TAG_LAYER2]);
        Halo { messages, mode, plan, states }
    }

    /// Take the send block copied to the host, and gather for fallback destinations.
    fn pack(&mut self, b: &mut dyn Backend) -> Result<()> {
        let (s1, s2) = self.states.send_bytes(&self.plan);
        b.finish_download(s1, s2)?;
        self.states.gather(&self.plan);
        Ok(())
    }
}

impl EdgePass for Halo<'_> {
    /// One exchange of states. What runs while the messages travel (overlapped): at first
    /// order the non-communication edges; at second order the reconstruction of the owned
    /// cells whose stencils read no receive-block cell ([`Cells::Inner`]) and the edges
    /// between such cells. After the receipt: the rest of the reconstruction
    /// ([`Cells::Outer`], the first ring included) and the remaining edges. Blocking: the
    /// exchange, then the whole reconstruction and every edge.
    fn edge_pass(&mut self, b: &mut dyn Backend, t: f64, phases: &mut PhaseTimes) -> Result<()> {
        let overlap = self.mode == ExchangeMode::Overlap;
        let order2 = b.order() == 2;
        let (nl, ne) = (if order2 { b.num_inner_edges() } else { b.num_local_edges() }, b.num_edges());
        let n_owned = self.plan.receive_block.start;
        let clock = Instant::now();
        b.begin_download(self.plan.send_block.clone())?;
        let mut launched = 0.0;
        // A GPU queues the interior work now: it runs during the copy and the messages.
        let queued = overlap && b.edges_async();
        if queued {
            let c = Instant::now();
            if order2 {
                b.reconstruct(Cells::Inner(0..n_owned))?;
            }
            b.process_edges(0..nl, t)?;
            launched = c.elapsed().as_secs_f64();
        }
        self.pack(b)?;
        phases.pack += clock.elapsed().as_secs_f64() - launched;
        phases.edges_interior += launched;

        let clock = Instant::now();
        let mut interior = 0.0;
        self.states.exchange(self.messages, &self.plan, &mut |progress| {
            if overlap && !queued {
                // Let the messages move between chunks while the cores compute.
                let start = Instant::now();
                if order2 {
                    for lo in (0..n_owned).step_by(POLL_CHUNK) {
                        b.reconstruct(Cells::Inner(lo..(lo + POLL_CHUNK).min(n_owned)))?;
                        progress();
                    }
                }
                for lo in (0..nl).step_by(POLL_CHUNK) {
                    b.process_edges(lo..(lo + POLL_CHUNK).min(nl), t)?;
                    progress();
                }
                interior = start.elapsed().as_secs_f64();
            }
            Ok(())
        })?;
        phases.edges_interior += interior;
        phases.exchange += clock.elapsed().as_secs_f64() - interior;

        let clock = Instant::now();
        let (r1, r2) = self.states.recv_bytes(&self.plan);
        b.upload_receive_block(r1, r2)?;
        phases.unpack += clock.elapsed().as_secs_f64();

        let clock = Instant::now();
        if overlap {
            if order2 {
                b.reconstruct(Cells::Outer)?;
            }
            b.process_edges(nl..ne, t)?;
            phases.edges_communication += clock.elapsed().as_secs_f64();
        } else {
            if order2 {
                b.reconstruct(Cells::All)?;
            }
            b.process_edges(0..ne, t)?;
            phases.edges_interior += clock.elapsed().as_secs_f64();
        }
        Ok(())
    }
}
