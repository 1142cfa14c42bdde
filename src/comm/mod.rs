//! The few collective operations the step loop needs. One process: [`Single`]. The MPI
//! implementation of the same trait lives beside it once multi-rank runs land.

pub trait Comm {
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    fn min_f64(&self, x: f64) -> f64;
    fn sum_f64(&self, x: f64) -> f64;
    fn sum_u64(&self, x: u64) -> u64;
    fn is_root(&self) -> bool {
        self.rank() == 0
    }
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
}
