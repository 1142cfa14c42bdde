//! A channel one cell wide: one row of two right triangles per column, walls all round, as
//! Triangle's .node and .ele files, and its state averaged per column (the quasi-1-D cases:
//! `tests/lock_exchange_fan.rs`, `tests/slope_current.rs`).

use pycno::physics::CellState;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `columns` square columns over [lo, hi] (the strip is one column wide).
pub struct Strip {
    pub columns: usize,
    pub lo: f64,
    pub hi: f64,
}

impl Strip {
    pub fn dx(&self) -> f64 {
        (self.hi - self.lo) / self.columns as f64
    }

    /// Writes `strip.node` and `strip.ele` into `dir`; returns the .node file.
    pub fn write(&self, dir: &Path) -> PathBuf {
        let (n, dx) = (self.columns, self.dx());
        let node = dir.join("strip.node");
        let mut f = std::fs::File::create(&node).unwrap();
        writeln!(f, "{} 2 0 0", 2 * (n + 1)).unwrap();
        for j in 0..2 {
            for i in 0..=n {
                writeln!(f, "{} {:?} {:?}", j * (n + 1) + i + 1, self.lo + i as f64 * dx, j as f64 * dx).unwrap();
            }
        }
        let mut f = std::fs::File::create(dir.join("strip.ele")).unwrap();
        writeln!(f, "{} 3 0", 2 * n).unwrap();
        for i in 0..n {
            let (a, b, c, d) = (i + 1, i + 2, n + 1 + i + 2, n + 1 + i + 1);
            writeln!(f, "{} {a} {b} {c}\n{} {a} {c} {d}", 2 * i + 1, 2 * i + 2).unwrap();
        }
        node
    }

    /// The columns' centres.
    pub fn centres(&self) -> Vec<f64> {
        (0..self.columns).map(|i| self.lo + (i as f64 + 0.5) * self.dx()).collect()
    }

    /// Area-weighted column averages of h1 and h2 of `state` (cells at `centroid`, `area`).
    pub fn averages(&self, centroid: &[[f64; 2]], area: &[f64], state: &[CellState]) -> (Vec<f64>, Vec<f64>) {
        let n = self.columns;
        let (mut h1, mut h2, mut sum) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        for (c, st) in state.iter().enumerate() {
            let k = (((centroid[c][0] - self.lo) / self.dx()) as usize).min(n - 1);
            h1[k] += area[c] * st.h1;
            h2[k] += area[c] * st.h2;
            sum[k] += area[c];
        }
        let avg = |v: Vec<f64>| v.iter().zip(&sum).map(|(x, a)| x / a).collect::<Vec<_>>();
        (avg(h1), avg(h2))
    }
}
