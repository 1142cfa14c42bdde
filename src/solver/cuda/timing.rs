//! Per-kernel timing for `bench --profile`: events around each launch, read once the stream
//! has passed the end event (at the next read-back), so timing adds no synchronization.

use anyhow::Result;
use cudarc::driver::{sys::CUevent_flags, CudaContext, CudaEvent, CudaStream};
use std::sync::Arc;

/// The kernels a step launches, in the order of [`KernelTiming`]'s arrays: the first order's,
/// then second order's (`order2.rs`: the reconstruction, the edge pass and the two stages'
/// updates, which move different bytes; `tile2`, the reconstruction and edge pass in one).
pub const KERNELS: [&str; 8] = ["edge", "dt", "update", "reconstruct", "edge2", "stage1", "stage2", "tile2"];
/// Indices into [`KERNELS`] of second order's kernels.
pub const RECONSTRUCT: usize = 3;
pub const EDGE2: usize = 4;
pub const STAGE1: usize = 5;
pub const STAGE2: usize = 6;
pub const TILE2: usize = 7;
const N: usize = KERNELS.len();

pub struct KernelTiming {
    /// (start, end, still to be read) per kernel.
    events: Vec<(CudaEvent, CudaEvent, bool)>,
    seconds: [f64; N],
    launches: [u64; N],
}

impl KernelTiming {
    pub fn new(ctx: &Arc<CudaContext>) -> Result<Self> {
        let ev = || ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT));
        let events = (0..N).map(|_| Ok((ev()?, ev()?, false))).collect::<Result<Vec<_>>>()?;
        Ok(KernelTiming { events, seconds: [0.0; N], launches: [0; N] })
    }

    /// Fold in every kernel whose end event has completed (call after a synchronization).
    pub fn collect(&mut self) -> Result<()> {
        for (k, (a, b, pending)) in self.events.iter_mut().enumerate() {
            if *pending {
                self.seconds[k] += a.elapsed_ms(b)? as f64 * 1e-3;
                self.launches[k] += 1;
                *pending = false;
            }
        }
        Ok(())
    }

    /// Before launching kernel `k` on `stream`.
    pub fn start(&mut self, k: usize, stream: &CudaStream) -> Result<()> {
        if self.events[k].2 {
            self.collect()?;
        }
        self.events[k].0.record(stream)?;
        Ok(())
    }

    /// After launching kernel `k` on `stream`.
    pub fn stop(&mut self, k: usize, stream: &CudaStream) -> Result<()> {
        self.events[k].1.record(stream)?;
        self.events[k].2 = true;
        Ok(())
    }

    /// (name, seconds, launches) per kernel launched, after a synchronization.
    pub fn totals(&mut self) -> Result<Vec<(&'static str, f64, u64)>> {
        self.collect()?;
        Ok((0..N).filter(|&k| self.launches[k] > 0).map(|k| (KERNELS[k], self.seconds[k], self.launches[k])).collect())
    }
}
