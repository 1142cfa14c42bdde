//! What the step loop asks of a backend. The CPU backend and the CUDA backend implement it
//! over the same data layout; the loop, the exchange and the output never see physics.

use super::layout::{INNER, OUTER};
use crate::physics::extremes::{Arrival, WIDTH};
use crate::physics::{CellState, StoredCell};
use anyhow::{bail, Result};
use std::ops::Range;

/// Where a step stands, for time-dependent boundaries and sources: the time at the start
/// of the step and the step's length.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepContext {
    pub t: f64,
    pub dt: f64,
}

/// Result of an update: whether every owned cell is still physical.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Health {
    Ok,
    /// A thickness became negative, zero, or not finite somewhere.
    Bad,
}

/// A batch of steps for the device to take on its own (see [`Backend::steps_on_device`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeviceSteps {
    /// Time at the start of the first step.
    pub t: f64,
    /// The next output time or the end time: the step that reaches it is clipped to it, as
    /// in the host loop, and is the batch's last.
    pub target: f64,
    pub gamma: f64,
    /// At most this many steps.
    pub limit: u64,
}

/// How a batch of device steps ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceStop {
    /// It took its step limit (or the backend's batch size).
    Limit,
    /// Its last step reached the target.
    Target,
    /// The update before the step after the last one left a cell unphysical.
    Unphysical,
    /// The step after the last one had no positive finite time step.
    NoTimeStep,
}

/// What a batch of device steps did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeviceBatch {
    pub steps: u64,
    /// Time after the last step.
    pub t: f64,
    /// The last step's length, and the smallest and largest of the batch.
    pub dt: f64,
    pub dt_min: f64,
    pub dt_max: f64,
    /// The smallest of the steps not clipped to the target (infinite if none).
    pub dt_min_unclipped: f64,
    /// The last step was clipped to land on the target.
    pub clipped: bool,
    pub stop: DeviceStop,
}

/// Which cells a second-order reconstruction covers ([`Backend::reconstruct`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cells {
    /// Every cell with a stencil: the owned cells and, on several ranks, the first ring of the
    /// receive block (whose neighbours are all local: the rank reconstructs them from the same
    /// numbers and with the same code as their owner, bit for bit).
    All,
    /// The owned cells among the local cells `range` whose stencils read no receive-block
    /// cell: what a step reconstructs while the halo travels (`0..n_owned` for all of them; a
    /// CPU takes them in chunks, polling MPI between).
    Inner(Range<usize>),
    /// The cells of `All` that `Inner` leaves out: the owned cells beside the receive block
    /// and the receive block's first ring, once the halo has arrived.
    Outer,
}

impl Cells {
    /// The local cells to go over and the `layout::reconstruction_sets` bits a cell among them
    /// must have to be reconstructed, for a layout of `n_cells` cells, `n_owned` owned, whose
    /// outer cells lie among `outer` (both backends' reconstructions take their cells so).
    pub fn span(&self, n_cells: usize, n_owned: usize, outer: &Range<usize>) -> (Range<usize>, u8) {
        match self {
            Cells::All => (0..n_cells, INNER | OUTER),
            Cells::Inner(r) => (r.start.min(n_owned)..r.end.min(n_owned), INNER),
            Cells::Outer => (outer.clone(), OUTER),
        }
    }
}

/// A rank's open boundary edges `(local cell, slot, table entry)` and the mass through each
/// so far, `[in1, out1, in2, out2]` ([`Backend::boundary_edges`]).
pub type EdgeBudgets = (Vec<[i32; 3]>, Vec<[f64; 4]>);

pub trait Backend: Send {
    /// "cpu (f32, 2 threads)", "cuda (f32, NVIDIA H200)", ...
    fn describe(&self) -> String;
    fn name(&self) -> &'static str;
    /// The float type of the state: "f32" or "f64".
    fn precision(&self) -> &'static str;
    /// Edge pass over a range of edges (see `Layout`) at the step's start time `t` (for
    /// time-dependent boundaries): fills the accumulator slots.
    fn process_edges(&mut self, edges: Range<usize>, t: f64) -> Result<()>;
    /// min over owned cells of `2 gamma |V_i| / Z_i`, and whether the last update left
    /// every owned cell physical (reported here so that a GPU needs one read-back a step).
    fn local_dt(&mut self, gamma: f64) -> Result<(f64, Health)>;
    /// `W_i -= dt / |V_i| * M_i` on owned cells, then the cell source terms over `dt`.
    fn update(&mut self, step: StepContext) -> Result<()>;
    /// Whether the last update left every owned cell physical.
    fn health(&mut self) -> Result<Health>;
    /// Order of accuracy in space and time (`physics.order`): 1, or 2 (then every step is two
    /// stages, each an edge pass after [`Backend::reconstruct`], the second ending in
    /// [`Backend::second_stage`] instead of [`Backend::update`]).
    fn order(&self) -> u32 {
        1
    }
    /// Second order: the limited reconstruction (`physics/reconstruct.rs`) of `cells`, from
    /// the local cells' states; what the edge pass then reads. On several ranks the receive
    /// block has two rings and the first ring's cells are reconstructed too (every cell whose
    /// three neighbours are local: `Layout::across` has no `i32::MIN`), so that the
    /// communication edges have both sides' edge values without a second exchange. A no-op
    /// at first order.
    fn reconstruct(&mut self, _cells: Cells) -> Result<()> {
        Ok(())
    }
    /// Second order on several ranks: edges `0..num_inner_edges()` read only cells that
    /// [`Cells::Inner`] reconstructs (`Layout::n_inner_edges`); 0 where nothing can run before
    /// the halo arrives.
    fn num_inner_edges(&self) -> usize {
        0
    }
    /// Second order: the second stage of SSP-RK2 (Heun) over the step `step` whose first
    /// stage [`Backend::update`] took: `W = (W_n + (W* - dt/|V| M(W*)))/2`, sources at the
    /// stage, then the wet/dry settling.
    fn second_stage(&mut self, _step: StepContext) -> Result<()> {
        bail!("the {} backend has no second order", self.name())
    }
    /// Take up to `req.limit` whole steps (edge pass, time step, update) on the device
    /// without the host, exactly as the step loop would on one rank; `None` where this
    /// backend cannot (the CPU, a GPU with kernel timing on). Only for a rank that holds
    /// the whole mesh: there is no halo exchange between the steps.
    fn steps_on_device(&mut self, _req: DeviceSteps) -> Result<Option<DeviceBatch>> {
        Ok(None)
    }
    /// Set up what [`Backend::steps_on_device`] needs (a GPU captures its CUDA graphs), so
    /// that set-up is not counted as stepping time.
    fn prepare_device_steps(&mut self, _gamma: f64) -> Result<()> {
        Ok(())
    }
    /// Connect the halo exchange from device to device for `plan` (every rank calls this
    /// together): `Ok(Ok(what))` names the engine; `Ok(Err(why))`, the same outcome on every
    /// rank, keeps the host-staged exchange.
    fn connect_device_exchange(
        &mut self,
        _comm: &dyn crate::comm::Comm,
        _plan: &super::exchange::HaloPlan,
        _engine: super::exchange::GpuExchange,
    ) -> Result<std::result::Result<String, String>> {
        Ok(Err(format!("the {} backend exchanges through the host", self.name())))
    }
    /// The edge pass of a step with the halo exchanged device to device (after
    /// [`Backend::connect_device_exchange`]): overlapped with the interior edges, or first.
    fn device_edge_pass(&mut self, _t: f64, _overlap: bool) -> Result<()> {
        bail!("the {} backend has no device-to-device exchange", self.name())
    }
    /// Edges where the Roe matrix was not hyperbolic, since the start.
    fn fallbacks(&mut self) -> Result<u64>;
    /// Owned cells' state, in float64.
    fn state(&mut self) -> Result<Vec<CellState>>;
    /// Owned cells as stored (deviations, low parts, momenta), exactly: what a checkpoint
    /// holds, so that a restart continues bit for bit.
    fn stored_state(&mut self) -> Result<Vec<StoredCell>>;
    /// Owned cells' state before the last update (the update writes a second buffer), so a
    /// blow-up can be reported with the last good state.
    fn previous_state(&mut self) -> Result<Vec<CellState>>;
    /// The state of a few local cells (gauges).
    fn read_cells(&mut self, cells: &[usize]) -> Result<Vec<CellState>>;
    fn num_edges(&self) -> usize;
    fn num_local_edges(&self) -> usize;
    /// Bytes of one cell's `v1` (or `v2`) record: four floats.
    fn cell_bytes(&self) -> usize;
    /// Start copying `v1` and `v2` of the local cells `cells` (the send block) to the host,
    /// after all work queued so far: a GPU queues it on a copy stream, so the copy runs while
    /// the non-communication edges are computed.
    fn begin_download(&mut self, cells: Range<usize>) -> Result<()>;
    /// Wait for [`Backend::begin_download`] and hand its cells over
    /// (`cells.len() * cell_bytes()` bytes per layer).
    fn finish_download(&mut self, v1: &mut [u8], v2: &mut [u8]) -> Result<()>;
    /// Overwrite `v1` and `v2` of the receive block (cells `n_owned..`) from the host.
    fn upload_receive_block(&mut self, v1: &[u8], v2: &[u8]) -> Result<()>;
    /// Whether `process_edges` only queues the work (a GPU): the exchange then waits on MPI
    /// while the device computes, instead of polling MPI between chunks of edges.
    fn edges_async(&self) -> bool {
        false
    }
    /// Mass through the open boundaries since the start, per entry of the boundary table:
    /// `[in1, out1, in2, out2]`, volumes (m³) of layer 1 and layer 2 that entered and left
    /// through this rank's boundary edges (each step: dt times the edge's mass flux, summed
    /// per edge in float64, then per entry in edge order). Empty when every boundary is a
    /// wall.
    fn boundary_budget(&mut self) -> Result<Vec<[f64; 4]>> {
        Ok(vec![])
    }
    /// This rank's open boundary edges `(local cell, slot, table entry)` in edge order, and
    /// the mass through each so far (`[in1, out1, in2, out2]`, before the sums per entry of
    /// [`Backend::boundary_budget`]): a checkpoint keeps them, so that a restart continues
    /// each edge's sum and the budget (and the gauges' discharges) bit for bit.
    fn boundary_edges(&mut self) -> Result<EdgeBudgets> {
        Ok((vec![], vec![]))
    }
    /// Set the mass through each open boundary edge so far (a restart), in the order of
    /// [`Backend::boundary_edges`].
    fn set_boundary_edges(&mut self, per_edge: &[[f64; 4]]) -> Result<()> {
        if per_edge.is_empty() {
            return Ok(());
        }
        bail!("the {} backend keeps no boundary budget", self.name())
    }
    /// Start keeping per-cell extremes of the owned cells (`physics::extremes`, the max
    /// maps): from the current state, or from `from` (a restart's, one record per owned cell).
    fn extremes_start(&mut self, _arrival: Arrival, _from: Option<&[[f64; WIDTH]]>) -> Result<()> {
        bail!("the {} backend keeps no max maps", self.name())
    }
    /// Fold the current state, at time `t`, into the extremes (after every step; queued on
    /// a GPU, like a step).
    fn extremes_fold(&mut self, _t: f64) -> Result<()> {
        bail!("the {} backend keeps no max maps", self.name())
    }
    /// The owned cells' extremes.
    fn extremes(&mut self) -> Result<Vec<[f64; WIDTH]>> {
        bail!("the {} backend keeps no max maps", self.name())
    }
    /// Start timing each kernel (GPU backends; a no-op elsewhere).
    fn enable_kernel_timing(&mut self) {}
    /// Seconds spent in each kernel since timing was enabled: (name, seconds, launches).
    fn kernel_seconds(&mut self) -> Result<Vec<(&'static str, f64, u64)>> {
        Ok(vec![])
    }
}
