//! How this rank's edge pass meets the other ranks' (the exchange choice): every edge at
//! once on one rank; on several, the GPUs' own halo exchange (NCCL, CUDA IPC) where it is
//! asked for or pays off and can be connected, else the host-staged halo of Algorithms 1
//! and 2 (`solver/exchange.rs`).

use super::options::RunOptions;
use crate::comm::{agree, Comm};
use crate::partition::Submesh;
use crate::solver::exchange::{AllEdges, DeviceExchange, EdgePass, GpuExchange, Halo, HaloPlan};
use crate::solver::stepper::default_device_steps;
use crate::solver::Backend;
use anyhow::Result;

/// Whether the steps run on the device in batches (the device-resident loop): not with
/// kernel timing, nor when an observer looks at every step (gauges, max maps, step-counted
/// checkpoints) or a boundary is not a wall (tides, series and the per-tag mass budget are
/// evaluated on the host each step), since the host then drives every step.
pub fn device_resident(opts: &RunOptions, host_every_step: bool, all_walls: bool) -> bool {
    !opts.kernel_timing && default_device_steps() > 1 && !host_every_step && all_walls
}

/// This rank's edge pass, and what carries its halo for the report ("host", "nccl 2.28.3";
/// `None` on one rank). NCCL pays off in the device-resident loop (`resident`); with the
/// host driving every step the host-staged exchange is faster (BENCHMARKS.md); second
/// order goes from GPU to GPU by the GPUs' own stores only.
pub fn edge_pass<'a>(
    opts: &RunOptions,
    comm: &'a dyn Comm,
    b: &mut dyn Backend,
    submesh: Option<&Submesh>,
    resident: bool,
) -> Result<(Box<dyn EdgePass + 'a>, Option<String>)> {
    let (Some(sub), Some(messages)) = (submesh, comm.messages()) else {
        return Ok((Box::new(AllEdges), None));
    };
    if comm.size() == 1 {
        return Ok((Box::new(AllEdges), None));
    }
    let plan = sub.halo_plan();
    Ok(match device_exchange(opts, comm, b, &plan, resident)? {
        Some(what) => (Box::new(DeviceExchange { mode: opts.exchange }), Some(what)),
        None => (Box::new(Halo::new(messages, opts.exchange, plan, b.cell_bytes())), Some("host".to_string())),
    })
}

/// Connect the GPUs' own halo exchange where `opts.gpu_exchange` asks for it (`auto`: on one
/// node, for steps taken on the device, `resident`) and every rank runs on a GPU (every rank
/// together); what carries the halo then ("nccl 2.28.3"), or `None`
/// for the host-staged exchange, with a note saying why where NCCL was asked for or expected.
fn device_exchange(
    opts: &RunOptions,
    comm: &dyn Comm,
    b: &mut dyn Backend,
    plan: &HaloPlan,
    resident: bool,
) -> Result<Option<String>> {
    let want = match opts.gpu_exchange {
        GpuExchange::Host => false,
        GpuExchange::Nccl | GpuExchange::Ipc => true,
        // Multi-node runs keep MPI over the network, and so do runs the host steps.
        GpuExchange::Auto => resident && comm.node_rank().1 == comm.size(),
    };
    // Collective: every rank takes the same branch.
    let all_gpus = comm.min_f64(if b.name() == "cuda" { 1.0 } else { 0.0 }) > 0.0;
    if !want || !all_gpus {
        return Ok(None);
    }
    // NCCL needs a GPU of its own per rank: ranks that share one (more ranks on a node than
    // GPUs, as in tests) keep the host exchange.
    let gpus = crate::solver::cuda::device_count().unwrap_or(0);
    let shared = comm.min_f64(if comm.node_rank().1 > gpus { 0.0 } else { 1.0 }) == 0.0;
    if shared {
        if comm.is_root() && matches!(opts.gpu_exchange, GpuExchange::Nccl | GpuExchange::Ipc) {
            eprintln!(
                "note: the halo goes through the host (--gpu-exchange host): the GPU-to-GPU exchange needs one GPU per rank, and {} ranks share {gpus} GPU(s) on a node",
                comm.node_rank().1
            );
        }
        return Ok(None);
    }
    match agree(comm, b.connect_device_exchange(comm, plan, opts.gpu_exchange))? {
        Ok(what) => Ok(Some(what)),
        Err(why) => {
            if comm.is_root() && (opts.gpu_exchange != GpuExchange::Auto || !opts.quiet) {
                eprintln!("note: the halo goes through the host (--gpu-exchange host): {why}");
            }
            Ok(None)
        }
    }
}
