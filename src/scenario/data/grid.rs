//! A regular grid of samples and its bilinear interpolation.

use super::fmt_extent;
use anyhow::{bail, Result};

/// Samples on a regular grid of nx by ny at `(x0 + i dx, y0 + j dy)`, rows from south to
/// north, of which a window is kept: `values[(j - j0) * wnx + (i - i0)]` for `[i0, j0] =
/// origin`. NaN marks missing data (NODATA, `_FillValue`). Positions are computed in the
/// whole grid's indices, so that every window samples a point with the same arithmetic
/// (the same value on every rank).
#[derive(Clone, Debug)]
pub struct Grid {
    pub x0: f64,
    pub y0: f64,
    pub dx: f64,
    pub dy: f64,
    pub nx: usize,
    pub ny: usize,
    pub values: Vec<f64>,
    /// Each sample stands for a cell of dx by dy around it (ESRI grids, GeoTIFF
    /// PixelIsArea): the data covers half a cell beyond the outer samples, where the nearest
    /// outer sample's row or column is used. Otherwise (PixelIsPoint, NetCDF coordinates)
    /// the data ends at the outer samples.
    pub cells: bool,
    /// The kept window: its first column and row, and its size.
    pub origin: [usize; 2],
    pub wnx: usize,
    pub wny: usize,
}

impl Grid {
    /// A whole grid (no window).
    #[allow(clippy::too_many_arguments)]
    pub fn whole(x0: f64, y0: f64, dx: f64, dy: f64, nx: usize, ny: usize, values: Vec<f64>, cells: bool) -> Grid {
        Grid { x0, y0, dx, dy, nx, ny, values, cells, origin: [0, 0], wnx: nx, wny: ny }
    }

    /// The columns (or rows) `[lo, hi)` of `n` samples from `x0` by `d` that bilinear
    /// interpolation needs for coordinates in `[a, b]`, with a margin; all of them when
    /// `[a, b]` reaches outside the data (the error then names the whole extent).
    pub fn window(x0: f64, d: f64, n: usize, a: f64, b: f64) -> (usize, usize) {
        let (fa, fb) = ((a - x0) / d, (b - x0) / d);
        if !(fa >= -1.0 && fb <= n as f64) {
            return (0, n);
        }
        let lo = (fa.floor() - 1.0).max(0.0) as usize;
        let hi = ((fb.ceil() + 2.0) as usize).min(n);
        (lo.min(n.saturating_sub(2)), hi.max(lo + 2).min(n))
    }

    /// Check the geometry: at least 2 by 2 samples, positive finite spacings, finite origin.
    pub fn check(&self) -> Result<()> {
        if self.nx < 2 || self.ny < 2 {
            bail!("expected a grid of at least 2 by 2 values, found {} by {}", self.nx, self.ny);
        }
        if !(self.dx.is_finite() && self.dx > 0.0 && self.dy.is_finite() && self.dy > 0.0) {
            bail!("expected positive grid spacings, found dx = {}, dy = {}", self.dx, self.dy);
        }
        if !(self.x0.is_finite() && self.y0.is_finite()) {
            bail!("expected a finite grid origin, found ({}, {})", self.x0, self.y0);
        }
        if self.values.len() != self.wnx * self.wny {
            bail!(
                "expected {} by {} = {} values, found {}",
                self.wnx,
                self.wny,
                self.wnx * self.wny,
                self.values.len()
            );
        }
        Ok(())
    }

    /// x and y extent of the data (what `sample` accepts).
    pub fn extent(&self) -> [f64; 4] {
        let h = if self.cells { 0.5 } else { 0.0 };
        [
            self.x0 - h * self.dx,
            self.y0 - h * self.dy,
            self.x0 + (self.nx as f64 - 1.0 + h) * self.dx,
            self.y0 + (self.ny as f64 - 1.0 + h) * self.dy,
        ]
    }

    /// Bilinear interpolation at `p`. Fails outside the data and where a sample with a
    /// non-zero weight is missing.
    pub fn sample(&self, p: [f64; 2]) -> Result<f64> {
        let (fx, fy) = ((p[0] - self.x0) / self.dx, (p[1] - self.y0) / self.dy);
        let h = if self.cells { 0.5 } else { 0.0 };
        // A hair of tolerance for points on the data's edge (a mesh made to its extent).
        let tol = 1e-9;
        let (mx, my) = (self.nx as f64 - 1.0, self.ny as f64 - 1.0);
        if !(fx >= -h - tol && fx <= mx + h + tol && fy >= -h - tol && fy <= my + h + tol) {
            let e = self.extent();
            bail!(
                "the point (x = {}, y = {}) is outside the data, which covers x in {} and y in {}",
                p[0],
                p[1],
                fmt_extent(e[0], e[2]),
                fmt_extent(e[1], e[3])
            );
        }
        let (fx, fy) = (fx.clamp(0.0, mx), fy.clamp(0.0, my));
        let i = (fx.floor() as usize).min(self.nx - 2);
        let j = (fy.floor() as usize).min(self.ny - 2);
        let (t, s) = (fx - i as f64, fy - j as f64);
        let corners = [
            (i, j, (1.0 - t) * (1.0 - s)),
            (i + 1, j, t * (1.0 - s)),
            (i, j + 1, (1.0 - t) * s),
            (i + 1, j + 1, t * s),
        ];
        let mut v = 0.0;
        for (ci, cj, w) in corners {
            if w == 0.0 {
                continue;
            }
            let (li, lj) = (ci.wrapping_sub(self.origin[0]), cj.wrapping_sub(self.origin[1]));
            if li >= self.wnx || lj >= self.wny {
                bail!("internal error: the point (x = {}, y = {}) needs a sample outside the window read", p[0], p[1]);
            }
            let z = self.values[lj * self.wnx + li];
            if !z.is_finite() {
                bail!(
                    "no data (NODATA, fill value or NaN) at column {}, row {} counted from the south-west (x = {}, y = {}), \
                     which the point (x = {}, y = {}) needs",
                    ci,
                    cj,
                    self.x0 + ci as f64 * self.dx,
                    self.y0 + cj as f64 * self.dy,
                    p[0],
                    p[1]
                );
            }
            v += w * z;
        }
        Ok(v)
    }
}
