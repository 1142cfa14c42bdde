//! Scattered points (`.xyz`, `.csv`, `.txt`): one `x y z` per line, separated by spaces,
//! tabs, commas or semicolons; `#` starts a comment, and a first line that is not numbers is
//! a header. Sampled linearly on the points' Delaunay triangulation (spade): exact for a
//! linear field, continuous, equal to the data at the points, free of parameters to tune,
//! and it never extrapolates: a point outside the convex hull of the data is an error.

use super::fmt_extent;
use anyhow::{anyhow, bail, Result};
use spade::{DelaunayTriangulation, FloatTriangulation, HasPosition, Point2, Triangulation};
use std::path::Path;

#[derive(Clone, Copy, Debug)]
struct Pt {
    x: f64,
    y: f64,
    z: f64,
}

impl HasPosition for Pt {
    type Scalar = f64;
    fn position(&self) -> Point2<f64> {
        Point2::new(self.x, self.y)
    }
}

pub struct Points {
    tri: DelaunayTriangulation<Pt>,
    extent: [f64; 4],
}

pub fn read(path: &Path) -> Result<Points> {
    let mut pts: Vec<(Pt, usize)> = Vec::new();
    let mut header_allowed = true;
    for (k, line) in super::lines(super::open(path)?) {
        let line = line.map_err(|e| anyhow!("line {}: cannot read: {e}", k + 1))?;
        let text = line.split('#').next().unwrap_or("").trim();
        if text.is_empty() {
            continue;
        }
        let words: Vec<&str> =
            text.split(|c: char| c.is_whitespace() || c == ',' || c == ';').filter(|w| !w.is_empty()).collect();
        let nums: Option<Vec<f64>> = words.iter().map(|w| w.parse::<f64>().ok()).collect();
        match nums {
            Some(v) if v.len() == 3 => {
                if let Some(bad) = v.iter().find(|x| !x.is_finite()) {
                    bail!("line {}: expected finite numbers x y z, found {bad}", k + 1);
                }
                pts.push((Pt { x: v[0], y: v[1], z: v[2] }, k + 1));
            }
            None if header_allowed => {}
            _ => bail!("line {}: expected three numbers x y z, found {text:?}", k + 1),
        }
        header_allowed = false;
    }
    if pts.len() < 3 {
        bail!("expected at least 3 points x y z, found {}", pts.len());
    }
    // Two values at one position would leave the field undefined there (spade would keep
    // one silently).
    let mut order: Vec<usize> = (0..pts.len()).collect();
    order.sort_by(|&a, &b| (pts[a].0.x, pts[a].0.y).partial_cmp(&(pts[b].0.x, pts[b].0.y)).unwrap());
    for w in order.windows(2) {
        let (a, b) = (&pts[w[0]], &pts[w[1]]);
        if a.0.x == b.0.x && a.0.y == b.0.y {
            let (la, lb) = (a.1.min(b.1), a.1.max(b.1));
            bail!("lines {la} and {lb}: two points at the same position (x = {}, y = {})", a.0.x, a.0.y);
        }
    }
    let mut extent = [f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY];
    for (p, _) in &pts {
        extent = [extent[0].min(p.x), extent[1].min(p.y), extent[2].max(p.x), extent[3].max(p.y)];
    }
    // The triangulation's half-edges, faces and vertices: about 200 bytes a point.
    super::check_fits(&format!("triangulating {} points", pts.len()), pts.len() as f64, 200.0)?;
    let tri = DelaunayTriangulation::<Pt>::bulk_load(pts.into_iter().map(|(p, _)| p).collect())
        .map_err(|e| anyhow!("cannot triangulate the points: {e:?}"))?;
    if tri.all_vertices_on_line() {
        bail!("all points lie on one line: they cannot be interpolated over an area");
    }
    Ok(Points { tri, extent })
}

impl Points {
    /// Linear interpolation on the triangulation at each point.
    pub fn sample_all(&self, points: &[[f64; 2]]) -> Result<Vec<f64>> {
        let interp = self.tri.barycentric();
        points
            .iter()
            .map(|&p| {
                interp.interpolate(|v| v.data().z, Point2::new(p[0], p[1])).ok_or_else(|| {
                    let e = self.extent;
                    anyhow!(
                        "the point (x = {}, y = {}) is outside the data: outside the convex hull of the points, which \
                         span x in {} and y in {}",
                        p[0],
                        p[1],
                        fmt_extent(e[0], e[2]),
                        fmt_extent(e[1], e[3])
                    )
                })
            })
            .collect()
    }
}
