//! Whether the rank files of a partition directory belong together, checked by the ranks of
//! a run before the first step without any rank holding another's file: each rank adds up
//! fingerprints of what it sends, what it expects to receive and which cells it owns, and
//! the sums over all ranks must agree. Rank files from different partitions of one mesh are
//! each valid alone, but their send and receive lists disagree: without this check the
//! exchange waits for messages that never come (a hang) or receives the wrong sizes.

use super::Submesh;

/// Order-independent fingerprints of one rank's part in the partition: summed (wrapping)
/// over the ranks, `sends` equals `receives` and `owned` equals [`all_cells`] when the files
/// fit together (a mismatch slips through with probability about 2^-64).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fit {
    pub sends: u64,
    pub receives: u64,
    pub owned: u64,
    pub owned_cells: u64,
}

/// splitmix64's finalizer.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A fingerprint of the message from rank `from` to rank `to` carrying `cells` (global ids)
/// in this order.
fn message(from: u32, to: u32, cells: impl Iterator<Item = u32>) -> u64 {
    let head = mix(((from as u64) << 32) | to as u64);
    cells.enumerate().fold(head, |h, (k, g)| mix(h ^ mix(((k as u64) << 32) | g as u64)))
}

impl Submesh {
    /// This rank's fingerprints (see [`Fit`]).
    pub fn fit(&self) -> Fit {
        let sends = self
            .sends
            .iter()
            .map(|d| message(self.rank, d.rank, d.cells().map(|l| self.global_cell[l])))
            .fold(0u64, u64::wrapping_add);
        let receives = self
            .recvs
            .iter()
            .map(|r| message(r.rank, self.rank, r.range().map(|l| self.global_cell[l])))
            .fold(0u64, u64::wrapping_add);
        let owned = self.global_cell[..self.n_owned].iter().map(|&g| mix(g as u64)).fold(0u64, u64::wrapping_add);
        Fit { sends, receives, owned, owned_cells: self.n_owned as u64 }
    }
}

/// What the ranks' `owned` fingerprints add up to when every cell of a mesh of `cells`
/// cells is owned exactly once.
pub fn all_cells(cells: u32) -> u64 {
    (0..cells).map(|g| mix(g as u64)).fold(0u64, u64::wrapping_add)
}
