//! Ranks as threads of one process: [`ThreadComm`] implements the collectives and the
//! point-to-point messages with shared memory, so that the tests can run the real halo
//! exchange and step loop on several "ranks" without `mpirun`. Every rank must make the same
//! collective calls in the same order, as under MPI.

use super::{Comm, Incoming, Messages, Outgoing};
use anyhow::{bail, Result};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Barrier, Condvar, Mutex};

/// Messages in flight by (from, to, tag), in the order they were sent.
type Mailboxes = HashMap<(usize, usize, i32), VecDeque<Vec<u8>>>;

struct Shared {
    size: usize,
    barrier: Barrier,
    /// One slot per rank for the collectives' contributions.
    slots: Mutex<Vec<Vec<f64>>>,
    words: Mutex<Vec<u32>>,
    mail: Mutex<Mailboxes>,
    arrived: Condvar,
}

/// One rank of a group of threads; make the group with [`ThreadComm::group`].
pub struct ThreadComm {
    rank: usize,
    shared: Arc<Shared>,
}

impl ThreadComm {
    /// `n` ranks, one for each thread that will run one.
    pub fn group(n: usize) -> Vec<ThreadComm> {
        let shared = Arc::new(Shared {
            size: n,
            barrier: Barrier::new(n),
            slots: Mutex::new(vec![Vec::new(); n]),
            words: Mutex::new(Vec::new()),
            mail: Mutex::new(HashMap::new()),
            arrived: Condvar::new(),
        });
        (0..n).map(|rank| ThreadComm { rank, shared: shared.clone() }).collect()
    }

    /// Every rank's `x`, in rank order.
    fn gather(&self, x: &[f64]) -> Vec<Vec<f64>> {
        let s = &self.shared;
        s.slots.lock().expect("collective slots")[self.rank] = x.to_vec();
        s.barrier.wait();
        let all = s.slots.lock().expect("collective slots").clone();
        // No rank may write the next collective's slot before every rank has read this one.
        s.barrier.wait();
        all
    }
}

impl Comm for ThreadComm {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.shared.size
    }
    fn min_f64(&self, x: f64) -> f64 {
        self.gather(&[x]).iter().map(|v| v[0]).fold(f64::INFINITY, f64::min)
    }
    fn sum_f64(&self, x: f64) -> f64 {
        // In rank order, as a reduction over MPI ranks would be for this few values.
        self.gather(&[x]).iter().map(|v| v[0]).sum()
    }
    fn sum_u64(&self, x: u64) -> u64 {
        self.gather(&[f64::from_bits(x)]).iter().map(|v| v[0].to_bits()).fold(0u64, u64::wrapping_add)
    }
    fn all_gather_f64(&self, x: &[f64]) -> Vec<f64> {
        self.gather(x).concat()
    }
    fn broadcast_u32(&self, data: &mut Vec<u32>) {
        let s = &self.shared;
        if self.rank == 0 {
            *s.words.lock().expect("broadcast") = data.clone();
        }
        s.barrier.wait();
        if self.rank != 0 {
            *data = s.words.lock().expect("broadcast").clone();
        }
        s.barrier.wait();
    }
    fn barrier(&self) {
        self.shared.barrier.wait();
    }
    fn messages(&self) -> Option<&dyn Messages> {
        Some(self)
    }
}

impl Messages for ThreadComm {
    fn exchange(
        &self,
        sends: &[Outgoing],
        recvs: &mut [Incoming],
        work: &mut dyn FnMut(&mut dyn FnMut()) -> Result<()>,
    ) -> Result<()> {
        let s = &self.shared;
        {
            let mut mail = s.mail.lock().expect("mailboxes");
            for (to, tag, bytes) in sends {
                mail.entry((self.rank, *to, *tag)).or_default().push_back(bytes.to_vec());
            }
        }
        s.arrived.notify_all();
        let result = work(&mut || {});
        for (from, tag, buf) in recvs.iter_mut() {
            let key = (*from, self.rank, *tag);
            let mut mail = s.mail.lock().expect("mailboxes");
            let msg = loop {
                if let Some(m) = mail.get_mut(&key).and_then(|q| q.pop_front()) {
                    break m;
                }
                mail = s.arrived.wait(mail).expect("mailboxes");
            };
            if msg.len() != buf.len() {
                bail!(
                    "rank {} sent {} bytes with tag {tag}, rank {} expected {}",
                    from,
                    msg.len(),
                    self.rank,
                    buf.len()
                );
            }
            buf.copy_from_slice(&msg);
        }
        result
    }
}
