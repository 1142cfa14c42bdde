//! [`Comm`] over MPI (rsmpi on the system's Open MPI). MPI is started only when the process
//! was launched by an MPI launcher ([`launched_by_mpi`]), so a plain `pycno run` never pays
//! for (or depends on) a working MPI runtime.

use super::{Comm, Incoming, Messages, Outgoing};
use anyhow::Result;
use mpi::collective::SystemOperation;
use mpi::environment::Universe;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use mpi::Threading;

/// Environment variables that MPI launchers set in the processes they start (Open MPI's
/// mpirun, PMIx, Hydra/Slurm's PMI). `PYCNO_MPI=1` forces MPI on, `PYCNO_MPI=0` off.
pub fn launched_by_mpi() -> bool {
    match std::env::var("PYCNO_MPI").ok().as_deref() {
        Some("1") => return true,
        Some("0") => return false,
        _ => {}
    }
    ["OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"].iter().any(|v| std::env::var_os(v).is_some())
}

pub struct MpiComm {
    // Dropping the universe finalizes MPI: it must outlive every communicator.
    world: SimpleCommunicator,
    node_rank: usize,
    node_size: usize,
    _universe: Universe,
}

impl MpiComm {
    /// Start MPI. Only the main thread calls MPI (the CPU backend's worker threads never
    /// do), so `Funneled` is enough.
    pub fn init() -> anyhow::Result<MpiComm> {
        let (universe, _level) = mpi::initialize_with_threading(Threading::Funneled)
            .ok_or_else(|| anyhow::anyhow!("MPI was already initialized"))?;
        let world = universe.world();
        // Ranks that share memory are on one node: one GPU per node-local rank.
        let node = world.split_shared(world.rank());
        let (node_rank, node_size) = (node.rank() as usize, node.size() as usize);
        Ok(MpiComm { world, node_rank, node_size, _universe: universe })
    }

    pub fn world(&self) -> &SimpleCommunicator {
        &self.world
    }

    /// Stop every rank of the job now (after a failure that not every rank knows of).
    pub fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }
}

impl Comm for MpiComm {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }
    fn size(&self) -> usize {
        self.world.size() as usize
    }
    fn min_f64(&self, x: f64) -> f64 {
        let mut y = 0.0;
        self.world.all_reduce_into(&x, &mut y, SystemOperation::min());
        y
    }
    fn sum_f64(&self, x: f64) -> f64 {
        let mut y = 0.0;
        self.world.all_reduce_into(&x, &mut y, SystemOperation::sum());
        y
    }
    fn sum_u64(&self, x: u64) -> u64 {
        let mut y = 0u64;
        self.world.all_reduce_into(&x, &mut y, SystemOperation::sum());
        y
    }
    fn all_gather_f64(&self, x: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; x.len() * self.size()];
        self.world.all_gather_into(x, &mut out[..]);
        out
    }
    fn broadcast_u32(&self, data: &mut Vec<u32>) {
        let root = self.world.process_at_rank(0);
        let mut len = data.len() as u64;
        root.broadcast_into(&mut len);
        data.resize(len as usize, 0);
        root.broadcast_into(&mut data[..]);
    }
    fn barrier(&self) {
        self.world.barrier();
    }
    fn node_rank(&self) -> (usize, usize) {
        (self.node_rank, self.node_size)
    }
    fn messages(&self) -> Option<&dyn Messages> {
        Some(self)
    }
}

impl Messages for MpiComm {
    fn exchange(
        &self,
        sends: &[Outgoing],
        recvs: &mut [Incoming],
        work: &mut dyn FnMut(&mut dyn FnMut()) -> Result<()>,
    ) -> Result<()> {
        let world = &self.world;
        let mut result = Ok(());
        let sources: Vec<usize> = recvs.iter().map(|(from, _, _)| *from).collect();
        mpi::request::multiple_scope(sends.len() + recvs.len(), |scope, coll| {
            for (from, tag, buf) in recvs.iter_mut() {
                coll.add(world.process_at_rank(*from as i32).immediate_receive_into_with_tag(scope, &mut **buf, *tag));
            }
            for (to, tag, buf) in sends {
                coll.add(world.process_at_rank(*to as i32).immediate_send_with_tag(scope, *buf, *tag));
            }
            let mut done = Vec::new();
            result = work(&mut || {
                coll.test_all(&mut done);
            });
            // Wait message by message, so that the watchdog can say whose never came.
            let mut pending = vec![true; sources.len()];
            let mut done = Vec::new();
            while coll.incomplete() > 0 {
                let waiting: Vec<usize> = sources.iter().zip(&pending).filter(|(_, &p)| p).map(|(&r, _)| r).collect();
                super::watchdog::waiting_for(&waiting);
                coll.wait_some(&mut done);
                for (k, _, _) in &done {
                    // Receives were added first: request k < sources.len() is a receive.
                    if let Some(p) = pending.get_mut(*k) {
                        *p = false;
                    }
                }
            }
            super::watchdog::waiting_for(&[]);
        });
        result
    }
}
