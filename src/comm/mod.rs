//! What ranks say to each other: the collective operations a run needs and point-to-point
//! messages ([`Messages`]), on one process ([`Single`]), over MPI ([`mpi::MpiComm`]), or
//! between threads of one process ([`threads::ThreadComm`], which lets the tests run the
//! real halo exchange without `mpirun`). The halo exchange built on them is
//! `solver::exchange`.
//!
//! Failure policy: a step that every rank takes together (reading the scenario, building the
//! mesh, reading a partition file, writing an output frame) ends with [`agree`], so that a
//! failure on any rank stops every rank at the same point, the lowest failing rank prints
//! its message and every rank exits non-zero. An error outside such a step (a GPU fault in
//! the middle of a step) aborts the whole job from the rank that saw it (see `main.rs`), so
//! no rank is ever left waiting in a collective.

pub mod mpi;
pub mod threads;
pub mod watchdog;

use anyhow::Result;

pub trait Comm {
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    fn min_f64(&self, x: f64) -> f64;
    fn sum_f64(&self, x: f64) -> f64;
    fn sum_u64(&self, x: u64) -> u64;
    /// Every rank's `x` (same length everywhere), concatenated in rank order.
    fn all_gather_f64(&self, x: &[f64]) -> Vec<f64>;
    /// Root's `data` on every rank (only root's length matters).
    fn broadcast_u32(&self, data: &mut Vec<u32>);
    fn barrier(&self);
    /// Rank within this node, and ranks on this node (one GPU per node-local rank).
    fn node_rank(&self) -> (usize, usize) {
        (0, 1)
    }
    fn is_root(&self) -> bool {
        self.rank() == 0
    }
    /// Point-to-point messages between the ranks (none on one process).
    fn messages(&self) -> Option<&dyn Messages> {
        None
    }
}

/// A message to send: (destination rank, tag, bytes).
pub type Outgoing<'a> = (usize, i32, &'a [u8]);
/// A message to receive: (source rank, tag, the buffer it fills exactly).
pub type Incoming<'a> = (usize, i32, &'a mut [u8]);

/// Non-blocking point-to-point messages, as the halo exchange uses them: post every receive
/// and send, do `work` while they travel (calling the `progress` it is given between chunks
/// of work, so that a transport that moves messages only inside its own calls, like Open
/// MPI's rendezvous protocol, keeps them moving), then wait for all of them.
pub trait Messages {
    fn exchange(
        &self,
        sends: &[Outgoing],
        recvs: &mut [Incoming],
        work: &mut dyn FnMut(&mut dyn FnMut()) -> Result<()>,
    ) -> Result<()>;
}

/// A run on one process.
pub struct Single;

impl Comm for Single {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn min_f64(&self, x: f64) -> f64 {
        x
    }
    fn sum_f64(&self, x: f64) -> f64 {
        x
    }
    fn sum_u64(&self, x: u64) -> u64 {
        x
    }
    fn all_gather_f64(&self, x: &[f64]) -> Vec<f64> {
        x.to_vec()
    }
    fn broadcast_u32(&self, _data: &mut Vec<u32>) {}
    fn barrier(&self) {}
}

/// An error that every rank knows about (it came through [`agree`]): no rank needs to abort
/// the job for it. `print` is true on the one rank that reports it; that rank's `message`
/// is its own error.
#[derive(Debug)]
pub struct Agreed {
    pub print: bool,
    pub failed_rank: usize,
    pub message: Option<String>,
}

impl std::fmt::Display for Agreed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.message {
            Some(m) => f.write_str(m),
            None => write!(f, "rank {} failed", self.failed_rank),
        }
    }
}
impl std::error::Error for Agreed {}

/// Make one rank's outcome of a collective step everyone's: `Ok` everywhere, or an error
/// everywhere. The lowest failing rank keeps its own message (prefixed with its rank when
/// several run); the others get a quiet error naming that rank.
///
/// An error that already came through `agree` is returned as it is, with no collective
/// call: every rank holds one then, so every rank skips the call alike.
pub fn agree<T>(comm: &dyn Comm, r: Result<T>) -> Result<T> {
    if let Err(e) = &r {
        if agreed(e).is_some() {
            return r;
        }
    }
    let me = comm.rank() as f64;
    let lowest = comm.min_f64(if r.is_err() { me } else { f64::INFINITY });
    if !lowest.is_finite() {
        return r;
    }
    let failed_rank = lowest as usize;
    let print = failed_rank == comm.rank();
    let message = match r {
        Err(e) if print && comm.size() > 1 => Some(format!("rank {failed_rank} of {}: {e:#}", comm.size())),
        Err(e) if print => Some(format!("{e:#}")),
        _ => None,
    };
    Err(anyhow::Error::new(Agreed { print, failed_rank, message }))
}

/// Whether an error went through [`agree`], and if so whether this rank should print it.
pub fn agreed(e: &anyhow::Error) -> Option<&Agreed> {
    e.downcast_ref::<Agreed>()
}
