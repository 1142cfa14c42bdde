//! The domain to triangulate: an outer polygon and holes (islands), with their checks:
//! simple (not self-intersecting), non-empty, holes strictly inside.
//!
//! The geometry is exact where it decides: orientation signs come from Shewchuk's adaptive
//! predicates (the `robust` crate), areas are summed relative to the polygon's first vertex
//! (so a domain far from the origin keeps its digits), and "zero area" means zero within the
//! rounding error bound of that sum, not small against an arbitrary scale. Segment crossings
//! are found through a hashed grid of cells about one segment long ([`meeting_pairs`]), so a
//! polygon of 10^5 or 10^6 vertices is checked in well under a second, not in minutes.

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// The region to triangulate: an outer polygon and optional holes (islands).
#[derive(Clone, Debug, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Domain {
    /// Outer boundary, a closed polygon (the last point is not repeated).
    pub outer: Vec<[f64; 2]>,
    /// Holes (islands), each a polygon strictly inside the outer one.
    #[serde(default)]
    pub holes: Vec<Vec<[f64; 2]>>,
    /// Boundary tags of the outer polygon's segments, one name per segment (segment k runs
    /// from point k to point k + 1); "" leaves a segment untagged (a wall). Empty: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outer_tags: Vec<String>,
    /// The same for each hole, one list per hole (an empty list: none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hole_tags: Vec<Vec<String>>,
}

impl Domain {
    /// The polygons (outer first, then the holes) with their segment tags.
    pub fn tagged_polygons(&self) -> Vec<(&[[f64; 2]], &[String])> {
        let none: &[String] = &[];
        std::iter::once((&self.outer[..], &self.outer_tags[..]))
            .chain(self.holes.iter().enumerate().map(|(h, p)| (&p[..], self.hole_tags.get(h).map_or(none, |t| &t[..]))))
            .collect()
    }

    /// The distinct tag names in order of first appearance; tag number `k + 1` is name `k`.
    pub fn tag_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for (_, tags) in self.tagged_polygons() {
            for t in tags {
                if !t.is_empty() && !names.contains(t) {
                    names.push(t.clone());
                }
            }
        }
        names
    }

    /// The tag lists match the polygons: one name per segment, names of letters, digits,
    /// `_` and `-` (or "" for none).
    pub fn check_tags(&self) -> Result<()> {
        if self.hole_tags.len() > self.holes.len() {
            bail!(
                "domain.hole_tags: {} lists for {} holes; expected at most one list per hole",
                self.hole_tags.len(),
                self.holes.len()
            );
        }
        let fields = std::iter::once("domain.outer_tags".to_string())
            .chain((0..self.holes.len()).map(|h| format!("domain.hole_tags[{h}]")));
        let polys = std::iter::once(("domain.outer".to_string(), &self.outer))
            .chain(self.holes.iter().enumerate().map(|(h, p)| (format!("domain.holes[{h}]"), p)));
        for ((field, (poly_field, poly)), (_, tags)) in fields.zip(polys).zip(self.tagged_polygons()) {
            if tags.is_empty() {
                continue;
            }
            if tags.len() != poly.len() {
                bail!(
                    "{field}: expected one name per segment of {poly_field} ({} segments), found {} names",
                    poly.len(),
                    tags.len()
                );
            }
            for (k, t) in tags.iter().enumerate() {
                if t.len() > 100 || !t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
                    bail!("{field}[{k}]: expected a tag name of letters, digits, '_' or '-' (or \"\" for a wall), found {t:?}");
                }
            }
        }
        Ok(())
    }
}

/// Twice the signed area terms of `poly` relative to its first vertex, and the sum of the
/// magnitudes of the products in them (what the rounding error of the sum scales with).
fn area_terms(poly: &[[f64; 2]]) -> (f64, f64) {
    let n = poly.len();
    if n < 3 {
        return (0.0, 0.0);
    }
    let o = poly[0];
    let (mut sum, mut mag) = (0.0, 0.0);
    for k in 1..n - 1 {
        let (a, b) = ([poly[k][0] - o[0], poly[k][1] - o[1]], [poly[k + 1][0] - o[0], poly[k + 1][1] - o[1]]);
        let (p, q) = (a[0] * b[1], a[1] * b[0]);
        sum += p - q;
        mag += p.abs() + q.abs();
    }
    (sum, mag)
}

/// Signed area (positive counter-clockwise), summed relative to the first vertex so that a
/// polygon far from the origin does not lose its area to cancellation.
pub fn signed_area(poly: &[[f64; 2]]) -> f64 {
    0.5 * area_terms(poly).0
}

/// Orientation of c against the line a -> b: positive to the left, negative to the right,
/// zero exactly when collinear (exact sign; adaptive precision).
pub fn orient(a: [f64; 2], b: [f64; 2], c: [f64; 2]) -> f64 {
    use robust::{orient2d, Coord};
    orient2d(Coord { x: a[0], y: a[1] }, Coord { x: b[0], y: b[1] }, Coord { x: c[0], y: c[1] })
}

fn on_segment(a: [f64; 2], b: [f64; 2], p: [f64; 2]) -> bool {
    p[0] >= a[0].min(b[0]) && p[0] <= a[0].max(b[0]) && p[1] >= a[1].min(b[1]) && p[1] <= a[1].max(b[1])
}

/// Whether closed segments ab and cd share a point (exact).
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

/// Every pair `(i, j)`, `i < j`, of segments that share a point, except the pairs `skip`
/// excludes, through `found(i, j)` (a pair may be reported more than once). Segments are
/// bucketed in a hashed grid of cells about as large as the average segment, each segment
/// in every cell it passes through with a margin of one cell, so segments that meet always
/// share a cell; only segments in one cell are compared. Expected time O(n log n) for
/// polygons whose vertices are spread along their length (coastlines, circles, rectangles).
pub fn meeting_pairs(segs: &[[[f64; 2]; 2]], skip: impl Fn(usize, usize) -> bool, mut found: impl FnMut(usize, usize)) {
    let n = segs.len();
    if n < 2 {
        return;
    }
    let (mut lo, mut hi, mut big, mut length) = ([f64::MAX; 2], [f64::MIN; 2], 0.0f64, 0.0f64);
    for s in segs {
        for p in s {
            for d in 0..2 {
                lo[d] = lo[d].min(p[d]);
                hi[d] = hi[d].max(p[d]);
                big = big.max(p[d].abs());
            }
        }
        length += (s[1][0] - s[0][0]).hypot(s[1][1] - s[0][1]);
    }
    // About one segment per cell, but never finer than 1e-9 of the coordinates' magnitude:
    // the one-cell margin must dwarf the rounding of the cell arithmetic below.
    let extent = (hi[0] - lo[0]).max(hi[1] - lo[1]);
    let h = (length / n as f64).max(extent / (1u64 << 20) as f64).max(1e-9 * big).max(f64::MIN_POSITIVE);
    let cells = |d: usize| (((hi[d] - lo[d]) / h).floor() as i64).max(0) + 1;
    let (nx, ny) = (cells(0), cells(1));
    let cell_of = |x: f64, d: usize, count: i64| (((x - lo[d]) / h).floor() as i64).clamp(0, count - 1);
    let mut entries: Vec<(u64, u32)> = Vec::with_capacity(4 * n);
    for (i, s) in segs.iter().enumerate() {
        let ([xa, ya], [xb, yb]) = (s[0], s[1]);
        let (x0, x1) = (xa.min(xb), xa.max(xb));
        let (y0, y1) = (ya.min(yb), ya.max(yb));
        let (c0, c1) = ((cell_of(x0, 0, nx) - 1).max(0), (cell_of(x1, 0, nx) + 1).min(nx - 1));
        for c in c0..=c1 {
            // The part of the segment over column c (widened by 1% of a cell each side).
            let (sx0, sx1) = ((lo[0] + (c as f64 - 0.01) * h).max(x0), (lo[0] + (c as f64 + 1.01) * h).min(x1));
            if sx0 > sx1 {
                continue;
            }
            let (ry0, ry1) = if xb == xa {
                (y0, y1)
            } else {
                let y = |x: f64| (ya + (x - xa) / (xb - xa) * (yb - ya)).clamp(y0, y1);
                let (u, v) = (y(sx0), y(sx1));
                (u.min(v), u.max(v))
            };
            let (r0, r1) = ((cell_of(ry0, 1, ny) - 1).max(0), (cell_of(ry1, 1, ny) + 1).min(ny - 1));
            for r in r0..=r1 {
                entries.push(((c as u64) * (ny as u64) + r as u64, i as u32));
            }
        }
    }
    entries.sort_unstable();
    let mut start = 0;
    while start < entries.len() {
        let key = entries[start].0;
        let mut end = start + 1;
        while end < entries.len() && entries[end].0 == key {
            end += 1;
        }
        let group = &entries[start..end];
        for (g, &(_, i)) in group.iter().enumerate() {
            for &(_, j) in &group[g + 1..] {
                let (i, j) = (i as usize, j as usize);
                let (s, t) = (&segs[i], &segs[j]);
                if !skip(i, j) && segments_meet(s[0], s[1], t[0], t[1]) {
                    found(i, j);
                }
            }
        }
        start = end;
    }
}

/// The checks of one polygon that need no other polygon and no geometry search.
fn check_points(field: &str, poly: &[[f64; 2]]) -> Result<()> {
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
    Ok(())
}

/// A polygon's area must be distinguishable from zero: larger than the rounding error bound
/// of its shoelace sum (relative to the first vertex), and a normal floating-point number.
fn check_area(field: &str, poly: &[[f64; 2]]) -> Result<()> {
    let (twice, mag) = area_terms(poly);
    let bound = 2.0 * (poly.len() as f64 + 8.0) * f64::EPSILON * mag;
    if mag == 0.0 || twice.abs() <= bound {
        bail!("{field}: the polygon is empty (zero area)");
    }
    let area = 0.5 * twice.abs();
    if area < f64::MIN_POSITIVE {
        let big = poly.iter().flat_map(|p| p.iter()).fold(0.0f64, |m, x| m.max(x.abs()));
        bail!(
            "{field}: the polygon's area {area:e} is too small relative to its coordinates {big:e} to be represented"
        );
    }
    Ok(())
}

fn bbox(poly: &[[f64; 2]]) -> [f64; 4] {
    poly.iter().fold([f64::MAX, f64::MAX, f64::MIN, f64::MIN], |b, p| {
        [b[0].min(p[0]), b[1].min(p[1]), b[2].max(p[0]), b[3].max(p[1])]
    })
}

fn boxes_meet(a: &[f64; 4], b: &[f64; 4]) -> bool {
    a[0] <= b[2] && b[0] <= a[2] && a[1] <= b[3] && b[1] <= a[3]
}

/// Where the polygons' segments meet: per polygon its first self-crossing (segment k, m),
/// per hole its first crossing with the outer polygon (hole segment, outer segment), and the
/// pairs of holes (earlier, later) that meet; all lexicographically first, as a plain
/// double loop would find them.
struct Meets {
    own: Vec<Option<(usize, usize)>>,
    outer: Vec<Option<(usize, usize)>>,
    holes: HashSet<(usize, usize)>,
}

fn find_meets(polys: &[&[[f64; 2]]]) -> Meets {
    let mut segs = Vec::new();
    let mut at = Vec::new();
    for (p, poly) in polys.iter().enumerate() {
        for k in 0..poly.len() {
            segs.push([poly[k], poly[(k + 1) % poly.len()]]);
            at.push((p, k));
        }
    }
    let mut m = Meets { own: vec![None; polys.len()], outer: vec![None; polys.len()], holes: HashSet::new() };
    let adjacent = |i: usize, j: usize| {
        let ((p, k), (q, l)) = (at[i], at[j]);
        // Neighbouring segments of one polygon share a vertex by construction.
        let n = polys[p].len();
        p == q && (k.abs_diff(l) == 1 || k.abs_diff(l) == n - 1)
    };
    let keep = |slot: &mut Option<(usize, usize)>, pair: (usize, usize)| {
        if slot.is_none_or(|s| pair < s) {
            *slot = Some(pair);
        }
    };
    meeting_pairs(&segs, adjacent, |i, j| {
        let ((p, k), (q, l)) = if at[i] < at[j] { (at[i], at[j]) } else { (at[j], at[i]) };
        match (p == q, p == 0) {
            (true, _) => keep(&mut m.own[p], (k, l)),
            (false, true) => keep(&mut m.outer[q], (l, k)),
            (false, false) => {
                m.holes.insert((p, q));
            }
        }
    });
    m
}

pub fn check_domain(d: &Domain) -> Result<()> {
    let fields: Vec<String> = std::iter::once("domain.outer".to_string())
        .chain((0..d.holes.len()).map(|h| format!("domain.holes[{h}]")))
        .collect();
    let polys: Vec<&[[f64; 2]]> = std::iter::once(&d.outer[..]).chain(d.holes.iter().map(|h| &h[..])).collect();
    // Polygons up to the first one with bad points are searched; errors then come in the
    // order of a polygon-by-polygon check.
    let bad = polys.iter().zip(&fields).position(|(p, f)| check_points(f, p).is_err()).unwrap_or(polys.len());
    let meets = find_meets(&polys[..bad]);
    let boxes: Vec<[f64; 4]> = polys[..bad].iter().map(|p| bbox(p)).collect();
    for (p, (poly, field)) in polys.iter().zip(&fields).enumerate() {
        if p == bad {
            check_points(field, poly)?;
        }
        if let Some((k, m)) = meets.own[p] {
            let n = poly.len();
            let (a, b, c, d) = (poly[k], poly[(k + 1) % n], poly[m], poly[(m + 1) % n]);
            bail!("{field}: the polygon intersects itself: segment {k} ({a:?} to {b:?}) meets segment {m} ({c:?} to {d:?})");
        }
        check_area(field, poly)?;
        if p == 0 {
            continue;
        }
        if let Some((k, m)) = meets.outer[p] {
            bail!("{field}: segment {k} of the hole meets segment {m} of domain.outer; holes must lie strictly inside");
        }
        if !point_in_polygon(&d.outer, poly[0]) {
            bail!("{field}: the hole lies outside domain.outer");
        }
        for g in 1..p {
            let other = polys[g];
            if meets.holes.contains(&(g, p))
                || (boxes_meet(&boxes[g], &boxes[p])
                    && (point_in_polygon(other, poly[0]) || point_in_polygon(poly, other[0])))
            {
                bail!("{field}: the hole overlaps domain.holes[{}]", g - 1);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn domain(outer: Vec<[f64; 2]>) -> Domain {
        Domain { outer, ..Default::default() }
    }

    /// The old quadratic search, as the reference for the first crossing reported.
    fn first_crossing_quadratic(poly: &[[f64; 2]]) -> Option<(usize, usize)> {
        let n = poly.len();
        for k in 0..n {
            for m in (k + 1)..n {
                if m == k + 1 || (k == 0 && m == n - 1) {
                    continue;
                }
                if segments_meet(poly[k], poly[(k + 1) % n], poly[m], poly[(m + 1) % n]) {
                    return Some((k, m));
                }
            }
        }
        None
    }

    fn circle(n: usize, r: f64, c: [f64; 2]) -> Vec<[f64; 2]> {
        (0..n)
            .map(|k| {
                let a = k as f64 / n as f64 * std::f64::consts::TAU;
                [c[0] + r * a.cos(), c[1] + r * a.sin()]
            })
            .collect()
    }

    #[test]
    fn a_polygon_of_a_million_vertices_is_checked_once_quickly() {
        // 10^6 vertices: the quadratic search would take hours; this must not. (Measured,
        // not asserted on time: it finishes, and it finds the planted crossing.)
        let mut poly = circle(1_000_000, 1.0, [0.0, 0.0]);
        assert!(check_domain(&domain(poly.clone())).is_ok());
        // Swap two far-apart vertices: the polygon now crosses itself.
        poly.swap(10, 500_000);
        let e = check_domain(&domain(poly)).unwrap_err().to_string();
        assert!(e.contains("intersects itself: segment 9 "), "{e}");
    }

    #[test]
    fn the_first_crossing_is_the_one_a_double_loop_finds() {
        // Pseudo-random star-ish polygons with many crossings.
        let mut seed = 12345u64;
        let mut rnd = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        for n in [4, 5, 7, 12, 40, 200] {
            for _ in 0..20 {
                let poly: Vec<[f64; 2]> = (0..n).map(|_| [rnd() * 10.0, rnd() * 10.0]).collect();
                let meets = find_meets(&[&poly]);
                assert_eq!(meets.own[0], first_crossing_quadratic(&poly), "{poly:?}");
            }
        }
    }

    #[test]
    fn thin_and_far_domains_are_not_empty() {
        assert!(check_domain(&domain(vec![[0.0, 0.0], [1e6, 0.0], [1e6, 1e-6], [0.0, 1e-6]])).is_ok());
        let o = 1e15;
        assert!(check_domain(&domain(vec![[o, o], [o + 1.0, o], [o + 1.0, o + 1.0], [o, o + 1.0]])).is_ok());
        assert_eq!(signed_area(&[[o, o], [o + 1.0, o], [o + 1.0, o + 1.0], [o, o + 1.0]]), 1.0);
        let e = check_domain(&domain(vec![[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])).unwrap_err().to_string();
        assert!(e.contains("zero area"), "{e}");
        let t = 1e-160;
        let e = check_domain(&domain(vec![[0.0, 0.0], [t, 0.0], [t, t], [0.0, t]])).unwrap_err().to_string();
        assert!(e.contains("too small relative to its coordinates"), "{e}");
    }

    #[test]
    fn holes_are_checked_against_the_outer_polygon_and_each_other() {
        let outer = vec![[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]];
        let sq = |x: f64, y: f64, s: f64| vec![[x, y], [x + s, y], [x + s, y + s], [x, y + s]];
        let ok =
            Domain { outer: outer.clone(), holes: vec![sq(1.0, 1.0, 1.0), sq(3.0, 3.0, 1.0)], ..Default::default() };
        assert!(check_domain(&ok).is_ok());
        let nested =
            Domain { outer: outer.clone(), holes: vec![sq(1.0, 1.0, 4.0), sq(2.0, 2.0, 1.0)], ..Default::default() };
        let e = check_domain(&nested).unwrap_err().to_string();
        assert!(e.contains("domain.holes[1]: the hole overlaps domain.holes[0]"), "{e}");
        let crossing = Domain { outer, holes: vec![sq(9.0, 1.0, 2.0)], ..Default::default() };
        let e = check_domain(&crossing).unwrap_err().to_string();
        assert!(e.contains("domain.holes[0]: segment 0 of the hole meets segment 1 of domain.outer"), "{e}");
    }
}
