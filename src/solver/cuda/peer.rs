//! The halo exchange from GPU to GPU (NCCL send/receive on a stream): each rank's send block
//! goes straight from its device to the neighbours' receive blocks, with no copy to the host,
//! no MPI message and no host wait, so it can be queued with the kernels (also inside the
//! CUDA graphs of the device-resident loop, `resident.rs`). The host-staged MPI exchange
//! (`halo.rs`, `solver::exchange`) stays for nodes without NCCL and multi-node runs.
//!
//! The bytes moved are exactly those of the host-staged exchange (the same cells, in the
//! same order), so results are bit for bit the same.

use super::launch::DeviceArrays;
use super::nccl::{self, Nccl};
use super::{CudaBackend, CudaReal};
use crate::comm::Comm;
use crate::solver::exchange::HaloPlan;
use anyhow::{anyhow, Context, Result};
use cudarc::driver::{CudaSlice, CudaStream};
use std::ffi::c_void;
use std::ops::Range;
use std::sync::Arc;

/// A destination rank, the runs of local cells it gets, and their gather buffers (one per layer).
type Destination = (usize, Vec<Range<usize>>, Option<[CudaSlice<u8>; 2]>);

pub struct DeviceHalo {
    pub nccl: Nccl,
    /// The exchange's stream (the overlapped edge pass forks to it and joins back).
    pub stream: Arc<CudaStream>,
    /// Per destination: its rank, the runs of local cells it gets, and (several runs, the
    /// partition's fallback destinations) a device buffer per layer they are gathered into.
    sends: Vec<Destination>,
    /// Per source: its rank and the local cells of the receive block it fills.
    recvs: Vec<(usize, Range<usize>)>,
    cell_bytes: usize,
}

// SAFETY: the buffers and the communicator are touched only through `&mut` of the backend.
unsafe impl Send for DeviceHalo {}

impl DeviceHalo {
    /// Queue the whole exchange for the buffer set `a` on `stream`.
    pub fn enqueue(&self, a: &DeviceArrays, stream: &CudaStream) -> Result<()> {
        let cb = self.cell_bytes;
        let s = stream.cu_stream() as *mut c_void;
        let layers = [a.v1, a.v2];
        for (_, runs, gathered) in &self.sends {
            let Some(bufs) = gathered else { continue };
            for (layer, buf) in bufs.iter().enumerate() {
                let base = super::launch::address(buf, stream);
                let mut at = 0;
                for r in runs {
                    let bytes = r.len() * cb;
                    // SAFETY: both ranges lie inside their allocations (the buffer was sized for
                    // the runs, the runs are local cells); ordered on `stream`.
                    unsafe {
                        cudarc::driver::result::memcpy_dtod_async(
                            base + at as u64,
                            layers[layer] + (r.start * cb) as u64,
                            bytes,
                            stream.cu_stream(),
                        )
                    }
                    .context("gathering cells for a neighbour")?;
                    at += bytes;
                }
            }
        }
        self.nccl.group_start()?;
        let queued = (|| -> Result<()> {
            for (rank, cells) in &self.recvs {
                for layer in layers {
                    // SAFETY: the receive block's cells of this source, inside the buffer.
                    unsafe { self.nccl.recv(layer + (cells.start * cb) as u64, cells.len() * cb, *rank, s)? };
                }
            }
            for (rank, runs, gathered) in &self.sends {
                let bytes = runs.iter().map(|r| r.len()).sum::<usize>() * cb;
                for (layer, base) in layers.into_iter().enumerate() {
                    let ptr = match gathered {
                        Some(bufs) => super::launch::address(&bufs[layer], stream),
                        None => base + (runs[0].start * cb) as u64,
                    };
                    // SAFETY: as above, owned cells of the send block or the gather buffer.
                    unsafe { self.nccl.send(ptr, bytes, *rank, s)? };
                }
            }
            Ok(())
        })();
        // The group always ends, or NCCL stays in it.
        let ended = self.nccl.group_end();
        queued?;
        ended
    }
}

impl<T: CudaReal> CudaBackend<T> {
    /// Connect the GPU-to-GPU exchange of `plan` (every rank together). `Ok(Err(why))` on every
    /// rank where it cannot be used: the caller keeps the host-staged exchange.
    pub fn connect_peer_exchange(
        &mut self,
        comm: &dyn Comm,
        plan: &HaloPlan,
    ) -> Result<std::result::Result<String, String>> {
        self.ctx.bind_to_thread().context("binding the CUDA context")?;
        let nccl = match Nccl::connect(comm)? {
            Ok(n) => n,
            Err(why) => return Ok(Err(why)),
        };
        let cb = 4 * std::mem::size_of::<T>();
        let mut sends = Vec::new();
        for (rank, runs) in &plan.sends {
            let gathered = if runs.len() == 1 {
                None
            } else {
                let n: usize = runs.iter().map(|r| r.len()).sum::<usize>() * cb;
                let buf = || self.stream.alloc_zeros::<u8>(n.max(1)).context("allocating a gather buffer");
                Some([buf()?, buf()?])
            };
            sends.push((*rank as usize, runs.clone(), gathered));
        }
        let recvs = plan.recvs.iter().map(|(r, c)| (*r as usize, c.clone())).collect();
        let stream = self.ctx.new_stream().map_err(|e| anyhow!("cannot make the exchange's CUDA stream: {e}"))?;
        self.stream.synchronize()?;
        let version = nccl.version.clone();
        self.peer = Some(DeviceHalo { nccl, stream, sends, recvs, cell_bytes: cb });
        // The graphs captured so far hold no exchange.
        self.resident = None;
        Ok(Ok(format!("nccl {version}")))
    }

    /// The edge pass with the GPU-to-GPU exchange, queued: overlapped (the interior edges run
    /// while the exchange's stream moves the halo, then the communication edges) or blocking
    /// (the exchange, then every edge).
    pub fn peer_edge_pass(&mut self, t: f64, overlap: bool, nl: usize) -> Result<()> {
        use crate::solver::Backend;
        let a = self.arrays();
        let ne = self.n_edges;
        let Some(p) = &self.peer else { return Err(anyhow!("the GPU-to-GPU exchange is not connected")) };
        if overlap {
            p.stream.wait(&self.stream.record_event(None)?)?;
            p.enqueue(&a, &p.stream)?;
            let done = p.stream.record_event(None)?;
            self.process_edges(0..nl, t)?;
            self.stream.wait(&done)?;
            self.process_edges(nl..ne, t)
        } else {
            p.enqueue(&a, &self.stream)?;
            self.process_edges(0..ne, t)
        }
    }

    /// Queue the all-reduce (max) of the two words at device address `words` (the control
    /// block's `reduce`: each rank's time step as `!bits`, and its health flag) on the main
    /// stream: one NCCL call a step.
    pub(super) fn enqueue_reduce(&self, words: u64) -> Result<()> {
        let Some(p) = &self.peer else { return Ok(()) };
        let s = self.stream.cu_stream() as *mut c_void;
        // SAFETY: two u64 words of the control block on this device, which outlives the stream's work.
        unsafe { p.nccl.all_reduce_u64(words, 2, nccl::MAX, s) }
    }
}
