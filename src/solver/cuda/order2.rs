//! Second order on the GPU (`physics.order = 2`, issue 21): the arrays of `kernels/order2.cu`,
//! their upload, and the backend's order-2 phases. Host-driven only: the step loop takes the
//! device-resident loop at order 1 only (`stepper.rs`), and a GPU-to-GPU halo exchange is
//! declined (the reconstructed edge values go through the host, `Halo::edge_pass_order2`).
//!
//! The kernels mirror `CpuBackend` at order 2 (`solver/cpu.rs`): the same buffer sets (stage
//! 1 writes W* over the other set and the sets swap; stage 2 reads the step's start from the
//! other set and writes W_{n+1} over it), the same accumulators, the same exchange format
//! (`[T; 9]` per layer per cell), so that the host-staged exchange carries the same bytes
//! whatever the backend. The device layout and its bytes are explained in `order2.cu`.

use super::launch::{address, grid, CudaReal};
use super::{host_floats, host_floats_ref, timing, CudaBackend};
use crate::solver::backend::StepContext;
use crate::solver::layout::Layout;
use anyhow::{bail, Context, Result};
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DeviceRepr, DriverError, PushKernelArg};
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
    pub staging: u64,
}
// SAFETY: #[repr(C)], integers only, mirrored in kernels/order2.cu.
unsafe impl DeviceRepr for Order2Device {}

/// What second order adds to the backend (`CudaBackend::with_order`).
pub struct Order2<T> {
    reconstruct_fn: CudaFunction,
    edge_fn: CudaFunction,
    update_fn: CudaFunction,
    pack_fn: CudaFunction,
    unpack_fn: CudaFunction,
    /// Six float4 records per cell: `[6 cell + 2 slot + layer]` (`order2.cu`).
    faces: CudaSlice<T>,
    /// The owned cells' cell-interior terms, a float4 each.
    interior: CudaSlice<T>,
    /// `Layout::across` of the owned cells, three ints each.
    across: CudaSlice<i32>,
    /// The owned cells' stencils: `(w, r)` as a float4 and `ln` as a float2 per slot, slot-major.
    wr: CudaSlice<T>,
    ln: CudaSlice<T>,
    /// Every cell's depth (constant), for the edge kernel.
    depth: CudaSlice<T>,
    /// The exchanged edge values of the send or the receive block (grown on demand).
    staging: CudaSlice<T>,
}

impl<T: CudaReal> Order2<T> {
    fn device(&self, s: &CudaStream) -> Order2Device {
        Order2Device {
            faces: address(&self.faces, s),
            interior: address(&self.interior, s),
            across: address(&self.across, s),
            wr: address(&self.wr, s),
            ln: address(&self.ln, s),
            depth: address(&self.depth, s),
            staging: address(&self.staging, s),
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
        // At least one element each: no allocation may be empty.
        let owned = n.max(1);
        let mut across = vec![0i32; 3 * owned];
        let mut wr = vec![T::zero(); 12 * owned];
        let mut ln = vec![T::zero(); 6 * owned];
        for c in 0..n {
            across[3 * c..3 * c + 3].copy_from_slice(&lay.across[c]);
            let st = &lay.stencil[c];
            for k in 0..3 {
                let at = k * n + c;
                wr[4 * at..4 * at + 4].copy_from_slice(&[st.w[k][0], st.w[k][1], st.r[k][0], st.r[k][1]]);
                ln[2 * at..2 * at + 2].copy_from_slice(&st.ln[k]);
            }
        }
        let depth: Vec<T> = lay.v1.iter().map(|r| r[3]).chain(std::iter::once(T::zero())).collect();
        let s = &self.stream;
        let up = |what: &str, e: DriverError| anyhow::anyhow!("cannot upload {what} to {}: {e}", self.device);
        let o = Order2 {
            reconstruct_fn: f("reconstruct")?,
            edge_fn: f("edge2")?,
            update_fn: f("update2")?,
            pack_fn: f("faces_pack")?,
            unpack_fn: f("faces_unpack")?,
            faces: s.alloc_zeros::<T>(24 * cells.max(1)).map_err(|e| up("the edge values", e))?,
            interior: s.alloc_zeros::<T>(4 * owned).map_err(|e| up("the cell-interior terms", e))?,
            across: s.clone_htod(&across).map_err(|e| up("the neighbours", e))?,
            wr: s.clone_htod(&wr).map_err(|e| up("the stencils", e))?,
            ln: s.clone_htod(&ln).map_err(|e| up("the stencils", e))?,
            depth: s.clone_htod(&depth).map_err(|e| up("the depths", e))?,
            staging: s.alloc_zeros::<T>(18).map_err(|e| up("the exchange staging", e))?,
        };
        s.synchronize()?;
        Ok(o)
    }

    fn order2(&self) -> &Order2<T> {
        self.order2.as_ref().expect("second order set up by with_order")
    }

    /// Launch an exchange kernel of second order (not timed), checked like the others.
    fn launch_exchange(&self, run: impl FnOnce() -> Result<(), DriverError>) -> Result<()> {
        run().context("launching an exchange kernel of second order")?;
        if self.sync_each_launch {
            self.stream.synchronize().context("the exchange kernel of second order failed")?;
        }
        Ok(())
    }

    /// The reconstruction of every owned cell (`reconstruct_{T}`).
    pub(super) fn order2_reconstruct(&mut self) -> Result<()> {
        let (a, o, m) = (self.arrays(), self.order2().device(&self.stream), self.model);
        self.launch(timing::RECONSTRUCT, |s| {
            let mut l = s.stream.launch_builder(&s.order2().reconstruct_fn);
            l.arg(&a).arg(&o).arg(&m);
            // SAFETY: the arguments of reconstruct_{f32,f64} in kernels/order2.cu, in order.
            unsafe { l.launch(grid(s.n_owned)) }.map(|_| ())
        })
    }

    /// The edge pass over `edges` at time `t`, between the cells' reconstructed edge values.
    pub(super) fn order2_edges(&mut self, edges: Range<usize>, t: f64) -> Result<()> {
        let (a, o, m, t) = (self.arrays(), self.order2().device(&self.stream), self.model, T::c(t));
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
        self.launch(k, |s| {
            let mut l = s.stream.launch_builder(&s.order2().update_fn);
            l.arg(&a).arg(&o).arg(&m).arg(&dt).arg(&flag);
            // SAFETY: the arguments of update2_{f32,f64} in kernels/order2.cu, in order.
            unsafe { l.launch(grid(s.n_owned)) }.map(|_| ())
        })?;
        std::mem::swap(&mut self.v1, &mut self.o1);
        std::mem::swap(&mut self.v2, &mut self.o2);
        std::mem::swap(&mut self.lo, &mut self.olo);
        Ok(())
    }

    fn ensure_staging(&mut self, words: usize) -> Result<()> {
        let o = self.order2.as_mut().expect("second order set up by with_order");
        if o.staging.len() < words {
            o.staging = self.stream.alloc_zeros::<T>(words).context("cannot allocate the exchange staging")?;
        }
        Ok(())
    }

    /// The send block's reconstructed edge values in the exchange format.
    pub(super) fn order2_download_faces(&mut self, cells: Range<usize>, f1: &mut [u8], f2: &mut [u8]) -> Result<()> {
        let count = cells.len();
        let (d1, d2) = (host_floats::<T>(f1)?, host_floats::<T>(f2)?);
        if d1.len() != 9 * count || d2.len() != 9 * count {
            bail!("{} and {} floats of edge values for a send block of {count} cells", d1.len(), d2.len());
        }
        if count == 0 {
            return Ok(());
        }
        self.ensure_staging(18 * count)?;
        let (a, o, begin, n) = (self.arrays(), self.order2().device(&self.stream), cells.start as i32, count as i32);
        self.launch_exchange(|| {
            let mut l = self.stream.launch_builder(&self.order2().pack_fn);
            l.arg(&a).arg(&o).arg(&begin).arg(&n);
            // SAFETY: the arguments of faces_pack_{f32,f64} in kernels/order2.cu, in order; the
            // staging holds 18 floats per cell of the send block.
            unsafe { l.launch(grid(count)) }.map(|_| ())
        })?;
        let what = "copying the send block's edge values to the host";
        let st = &self.order2().staging;
        self.stream.memcpy_dtoh(&st.slice(0..9 * count), d1).context(what)?;
        self.stream.memcpy_dtoh(&st.slice(9 * count..18 * count), d2).context(what)
    }

    /// The receive block's reconstructed edge values from the exchange format (after its
    /// states: the fourth lanes take their mean thicknesses).
    pub(super) fn order2_upload_receive_faces(&mut self, f1: &[u8], f2: &[u8]) -> Result<()> {
        let count = self.n_cells - self.n_owned;
        let (s1, s2) = (host_floats_ref::<T>(f1)?, host_floats_ref::<T>(f2)?);
        if s1.len() != 9 * count || s2.len() != 9 * count {
            bail!("receive block of {} and {} floats of edge values for {count} cells", s1.len(), s2.len());
        }
        if count == 0 {
            return Ok(());
        }
        self.ensure_staging(18 * count)?;
        let what = "copying the receive block's edge values to the GPU";
        let o = self.order2.as_mut().expect("second order set up by with_order");
        self.stream.memcpy_htod(s1, &mut o.staging.slice_mut(0..9 * count)).context(what)?;
        self.stream.memcpy_htod(s2, &mut o.staging.slice_mut(9 * count..18 * count)).context(what)?;
        let (a, o, m) = (self.arrays(), self.order2().device(&self.stream), self.model);
        let (begin, n) = (self.n_owned as i32, count as i32);
        self.launch_exchange(|| {
            let mut l = self.stream.launch_builder(&self.order2().unpack_fn);
            l.arg(&a).arg(&o).arg(&m).arg(&begin).arg(&n);
            // SAFETY: the arguments of faces_unpack_{f32,f64} in kernels/order2.cu, in order;
            // the staging holds 18 floats per cell of the receive block.
            unsafe { l.launch(grid(count)) }.map(|_| ())
        })
    }
}
