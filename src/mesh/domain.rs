//! The domain to triangulate: an outer polygon and holes (islands), with their checks:
//! simple (not self-intersecting), non-empty, holes strictly inside.

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Domain {
    /// Outer boundary, a closed polygon (the last point is not repeated).
    pub outer: Vec<[f64; 2]>,
    #[serde(default)]
    pub holes: Vec<Vec<[f64; 2]>>,
}

pub fn signed_area(poly: &[[f64; 2]]) -> f64 {
    let n = poly.len();
    (0..n)
        .map(|k| {
            let (a, b) = (poly[k], poly[(k + 1) % n]);
            a[0] * b[1] - b[0] * a[1]
        })
        .sum::<f64>()
        * 0.5
}

fn orient(a: [f64; 2], b: [f64; 2], c: [f64; 2]) -> f64 {
    (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
}

fn on_segment(a: [f64; 2], b: [f64; 2], p: [f64; 2]) -> bool {
    p[0] >= a[0].min(b[0]) && p[0] <= a[0].max(b[0]) && p[1] >= a[1].min(b[1]) && p[1] <= a[1].max(b[1])
}

/// Whether closed segments ab and cd share a point.
pub fn segments_meet(a: [f64; 2], b: [f64; 2], c: [f64; 2], d: [f64; 2]) -> bool {
    let (d1, d2, d3, d4) = (orient(c, d, a), orient(c, d, b), orient(a, b, c), orient(a, b, d));
    if ((d1 > 0.0 && d2 < 0.0) || (d1 < 0.0 && d2 > 0.0)) && ((d3 > 0.0 && d4 < 0.0) || (d3 < 0.0 && d4 > 0.0)) {
        return true;
    }
    (d1 == 0.0 && on_segment(c, d, a))
        || (d2 == 0.0 && on_segment(c, d, b))
        || (d3 == 0.0 && on_segment(a, b, c))
        || (d4 == 0.0 && on_segment(a, b, d))
}

pub fn point_in_polygon(poly: &[[f64; 2]], p: [f64; 2]) -> bool {
    let n = poly.len();
    let mut inside = false;
    for k in 0..n {
        let (a, b) = (poly[k], poly[(k + 1) % n]);
        if (a[1] > p[1]) != (b[1] > p[1]) && p[0] < (b[0] - a[0]) * (p[1] - a[1]) / (b[1] - a[1]) + a[0] {
            inside = !inside;
        }
    }
    inside
}

fn check_polygon(field: &str, poly: &[[f64; 2]]) -> Result<()> {
    if poly.len() < 3 {
        bail!("{field}: expected a polygon of at least 3 points, found {}", poly.len());
    }
    if let Some((k, p)) = poly.iter().enumerate().find(|(_, p)| !(p[0].is_finite() && p[1].is_finite())) {
        bail!("{field}[{k}]: expected finite coordinates, found {p:?}");
    }
    let n = poly.len();
    for k in 0..n {
        if poly[k] == poly[(k + 1) % n] {
            bail!(
                "{field}[{}]: repeats the previous point {:?} (do not close the polygon by repeating its first point)",
                (k + 1) % n,
                poly[k]
            );
        }
    }
    for k in 0..n {
        for m in (k + 1)..n {
            // Neighbouring segments share a vertex by construction.
            if m == k + 1 || (k == 0 && m == n - 1) {
                continue;
            }
            let (a, b, c, d) = (poly[k], poly[(k + 1) % n], poly[m], poly[(m + 1) % n]);
            if segments_meet(a, b, c, d) {
                bail!("{field}: the polygon intersects itself: segment {k} ({a:?} to {b:?}) meets segment {m} ({c:?} to {d:?})");
            }
        }
    }
    // Relative to the bounding box, so that collinear points with rounding noise count as empty.
    let (mut lo, mut hi) = ([f64::MAX; 2], [f64::MIN; 2]);
    for p in poly {
        for d in 0..2 {
            lo[d] = lo[d].min(p[d]);
            hi[d] = hi[d].max(p[d]);
        }
    }
    let diag2 = (hi[0] - lo[0]).powi(2) + (hi[1] - lo[1]).powi(2);
    if signed_area(poly).abs() <= 1e-12 * diag2 {
        bail!("{field}: the polygon is empty (zero area)");
    }
    Ok(())
}

fn polygons_meet(p: &[[f64; 2]], q: &[[f64; 2]]) -> Option<(usize, usize)> {
    for k in 0..p.len() {
        for m in 0..q.len() {
            if segments_meet(p[k], p[(k + 1) % p.len()], q[m], q[(m + 1) % q.len()]) {
                return Some((k, m));
            }
        }
    }
    None
}

pub fn check_domain(d: &Domain) -> Result<()> {
    check_polygon("domain.outer", &d.outer)?;
    for (h, hole) in d.holes.iter().enumerate() {
        let field = format!("domain.holes[{h}]");
        check_polygon(&field, hole)?;
        if let Some((k, m)) = polygons_meet(hole, &d.outer) {
            bail!("{field}: segment {k} of the hole meets segment {m} of domain.outer; holes must lie strictly inside");
        }
        if !point_in_polygon(&d.outer, hole[0]) {
            bail!("{field}: the hole lies outside domain.outer");
        }
        for (g, other) in d.holes.iter().enumerate().take(h) {
            if polygons_meet(hole, other).is_some()
                || point_in_polygon(other, hole[0])
                || point_in_polygon(hole, other[0])
            {
                bail!("{field}: the hole overlaps domain.holes[{g}]");
            }
        }
    }
    Ok(())
}
