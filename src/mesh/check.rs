//! Mesh checks with errors a user can act on: what is wrong, where, and what was expected.

use super::domain::{meeting_pairs, orient};
use super::Mesh;
use anyhow::{bail, Result};
use rayon::prelude::*;

/// Check a raw mesh and make every triangle counter-clockwise. A mesh whose triangles are
/// all clockwise (a Gmsh surface with a downward normal) is flipped as a whole; a mesh that
/// mixes orientations has inverted triangles and is rejected.
pub fn check_and_orient(mesh: &mut Mesh) -> Result<()> {
    let nv = mesh.vertices.len();
    if mesh.triangles.is_empty() {
        bail!("the mesh has no triangles");
    }
    for (v, p) in mesh.vertices.iter().enumerate() {
        if !p[0].is_finite() || !p[1].is_finite() {
            bail!("vertex {v} has a non-finite coordinate ({}, {})", p[0], p[1]);
        }
    }
    let mut used = vec![false; nv];
    for (t, tri) in mesh.triangles.iter().enumerate() {
        for &v in tri {
            if v as usize >= nv {
                bail!(
                    "triangle {t} refers to vertex {v}, but the mesh has {nv} vertices (0..{})",
                    nv.saturating_sub(1)
                );
            }
            used[v as usize] = true;
        }
        if tri[0] == tri[1] || tri[1] == tri[2] || tri[0] == tri[2] {
            bail!("triangle {t} repeats a vertex: {:?}", tri);
        }
    }
    if let Some(v) = used.iter().position(|u| !u) {
        let n = used.iter().filter(|u| !**u).count();
        bail!("vertex {v} is used by no triangle ({n} unused vertices in all); remove unused vertices");
    }
    check_duplicate_vertices(mesh)?;
    for (s, seg) in mesh.boundary.iter().enumerate() {
        if seg.v.iter().any(|&v| v as usize >= nv) {
            bail!("boundary segment {s} refers to vertex {:?}, but the mesh has {nv} vertices", seg.v);
        }
    }

    let (mut ccw, mut cw) = (0usize, 0usize);
    for t in 0..mesh.triangles.len() {
        let a = mesh.signed_area(t);
        let [p, q, r] = mesh.triangles[t].map(|v| mesh.vertices[v as usize]);
        let l2 = [(p, q), (q, r), (r, p)]
            .iter()
            .map(|(a, b)| (a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2))
            .fold(0.0f64, f64::max);
        // Twice the area against the longest edge squared: a scale-free flatness measure.
        if (2.0 * a).abs() <= 1e-10 * l2 {
            bail!("triangle {t} is degenerate (area {a:e}, vertices {:?})", mesh.triangles[t]);
        }
        if a > 0.0 {
            ccw += 1
        } else {
            cw += 1
        }
    }
    if ccw > 0 && cw > 0 {
        let want_cw = cw < ccw;
        let t = (0..mesh.triangles.len()).find(|&t| (mesh.signed_area(t) < 0.0) == want_cw).unwrap_or(0);
        bail!(
            "triangle {t} is inverted: {} triangles are counter-clockwise and {} clockwise; \
             a mesh must orient all its triangles the same way",
            ccw,
            cw
        );
    }
    if cw > 0 {
        log::info!("all {cw} triangles are clockwise: flipping them to counter-clockwise");
        for tri in &mut mesh.triangles {
            tri.swap(1, 2);
        }
    }
    check_embedding(mesh)
}

/// The corners of the mesh by vertex (compressed rows): for vertex v, the range
/// `start[v]..start[v + 1]` of `to` and `from` holds, for every triangle (v, b, c) (counter-
/// clockwise from v), b and c. Built by counting, in linear time.
struct Corners {
    start: Vec<u32>,
    /// Beside each corner, the next vertex of its triangle (the outgoing half-edge's end)
    /// and the one before it.
    to: Vec<u32>,
    from: Vec<u32>,
    /// Per vertex, how many of its corners cover the direction +x from it (see
    /// [`check_embedding`]): the number of times its fan turns round it, when it is closed.
    turns: Vec<u32>,
}

impl Corners {
    fn new(mesh: &Mesh) -> Corners {
        let nv = mesh.vertices.len();
        let mut start = vec![0u32; nv + 1];
        for tri in &mesh.triangles {
            for &v in tri {
                start[v as usize + 1] += 1;
            }
        }
        for v in 0..nv {
            start[v + 1] += start[v];
        }
        let mut fill = start.clone();
        let mut to = vec![0u32; 3 * mesh.triangles.len()];
        let mut from = vec![0u32; 3 * mesh.triangles.len()];
        let mut turns = vec![0u32; nv];
        let y = |v: u32| mesh.vertices[v as usize][1];
        for tri in &mesh.triangles {
            for (k, &v) in tri.iter().enumerate() {
                let at = fill[v as usize] as usize;
                let (b, c) = (tri[(k + 1) % 3], tri[(k + 2) % 3]);
                to[at] = b;
                from[at] = c;
                turns[v as usize] += (y(b) <= y(v) && y(v) < y(c)) as u32;
                fill[v as usize] += 1;
            }
        }
        Corners { start, to, from, turns }
    }

    fn range(&self, v: u32) -> std::ops::Range<usize> {
        self.start[v as usize] as usize..self.start[v as usize + 1] as usize
    }

    /// The ends of the half-edges leaving v.
    fn out(&self, v: u32) -> &[u32] {
        &self.to[self.range(v)]
    }

    /// The starts of the half-edges coming into v, corner by corner as [`out`](Self::out).
    fn before(&self, v: u32) -> &[u32] {
        &self.from[self.range(v)]
    }
}

/// A short list of triangles for a message: "3, 4, 9" or "3, 4, ... (12 in all)".
fn some(ts: &[usize]) -> String {
    let shown: Vec<String> = ts.iter().take(8).map(|t| t.to_string()).collect();
    if ts.len() > 8 {
        format!("{}, ... ({} in all)", shown.join(", "), ts.len())
    } else {
        shown.join(", ")
    }
}

/// The angle at `a` of the counter-clockwise triangle (a, b, c), in (0, pi).
fn corner_angle(a: [f64; 2], b: [f64; 2], c: [f64; 2]) -> f64 {
    let (u, v) = ([b[0] - a[0], b[1] - a[1]], [c[0] - a[0], c[1] - a[1]]);
    (u[0] * v[1] - u[1] * v[0]).atan2(u[0] * v[0] + u[1] * v[1])
}

/// Check that a consistently oriented (counter-clockwise) mesh lies flat in the plane: no
/// fold, no overlap, no hanging vertex, and tagged boundary segments on its edges.
///
/// - Around each vertex its triangles' angles add up to 2 pi (inside: the fan turns once,
///   counted exactly) or to the interior angle of the boundary there; a fan that turns
///   twice (720 degrees) folds over itself. Sums that differ are whole turns apart, so the
///   test needs no fine tolerance.
/// - No vertex lies inside, or on an edge of, a triangle it is not a corner of (found
///   through a grid of about one vertex per cell; exact orientation predicates): an overlap,
///   or a non-conforming mesh whose hanging vertex would be an invisible internal wall.
/// - Boundary edges cross no other boundary edge.
///
/// Indices in the messages are those of the mesh as read (0-based). Meshes with an edge of
/// more than two triangles, or two triangles on the same side of an edge, are left to the
/// topology's own, more precise, errors.
pub fn check_embedding(mesh: &Mesh) -> Result<()> {
    let nv = mesh.vertices.len();
    let corners = Corners::new(mesh);
    // Per vertex a, its outgoing half-edges a -> b: interior when there is one back, b -> a;
    // boundary (the domain on the left) when not. An edge of more than two triangles, or two
    // triangles on one side of an edge: not ours to report.
    let out_edges = |a: u32| corners.out(a).iter().copied();
    // Per vertex: its boundary half-edges, and for an inside vertex how many times its fan
    // of triangles turns round it. That count is exact and needs no angle: corner (v, b, c)
    // of a counter-clockwise triangle covers the direction +x from v (half-open, so that
    // each full turn covers it once) exactly when b.y <= v.y < c.y, comparisons of floats.
    let per_vertex: Vec<Option<(u32, Vec<u32>)>> = (0..nv as u32)
        .into_par_iter()
        .map(|a| {
            let mut boundary = Vec::new();
            // b -> a exists exactly when some corner at a comes after b: a's own list.
            let ins = corners.before(a);
            for b in out_edges(a) {
                let same = out_edges(a).filter(|&x| x == b).count();
                let back = ins.iter().filter(|&&x| x == b).count();
                if same > 1 || back > 1 {
                    return None;
                }
                if back == 0 {
                    boundary.push(b);
                }
            }
            Some((corners.turns[a as usize], boundary))
        })
        .collect();
    if per_vertex.iter().any(|b| b.is_none()) {
        return Ok(());
    }
    let per_vertex: Vec<(u32, Vec<u32>)> = per_vertex.into_iter().flatten().collect();
    let boundary: Vec<[u32; 2]> =
        per_vertex.iter().enumerate().flat_map(|(a, (_, bs))| bs.iter().map(move |&b| [a as u32, b])).collect();
    check_segments(mesh, |a, b| out_edges(a).filter(|&x| x == b).count() + out_edges(b).filter(|&x| x == a).count())?;

    // The angle sum round a vertex (for boundary vertices and messages only).
    let sum = |v: usize| -> f64 {
        let p = |u: u32| mesh.vertices[u as usize];
        let (b, c) = (corners.out(v as u32), corners.before(v as u32));
        b.iter().zip(c).map(|(&b, &c)| corner_angle(mesh.vertices[v], p(b), p(c))).sum()
    };
    // Per boundary vertex: its outgoing and incoming boundary edge (u32::MAX: none; more
    // than one each, a vertex where two boundary loops touch: not checked).
    const NONE: u32 = u32::MAX;
    const MANY: u32 = u32::MAX - 1;
    let (mut out, mut inc) = (vec![NONE; nv], vec![NONE; nv]);
    for &[a, b] in &boundary {
        out[a as usize] = if out[a as usize] == NONE { b } else { MANY };
        inc[b as usize] = if inc[b as usize] == NONE { a } else { MANY };
    }
    let deg = |x: f64| x.to_degrees();
    let bad = (0..nv).into_par_iter().find_first(|&v| {
        let (o, i) = (out[v], inc[v]);
        if o == NONE && i == NONE {
            per_vertex[v].0 != 1
        } else if o < MANY && i < MANY {
            // Angle sums at a boundary vertex differ from its interior angle by whole turns
            // when the fan folds: no fine tolerance needed.
            let p = mesh.vertices[v];
            let (w, u) = (mesh.vertices[o as usize], mesh.vertices[i as usize]);
            (sum(v) - interior_angle(p, w, u)).abs() > std::f64::consts::PI
        } else {
            false
        }
    });
    drop(per_vertex);
    if let Some(v) = bad {
        // The error path: a scan for the triangles round v is fine here.
        let around: Vec<usize> =
            (0..mesh.triangles.len()).filter(|&t| mesh.triangles[t].contains(&(v as u32))).collect();
        let p = mesh.vertices[v];
        if out[v] == NONE {
            bail!(
                "vertex {v} at ({}, {}): the angles of its {} triangles add up to {:.1} degrees instead of 360: the mesh \
                 folds over itself there (triangles {})",
                p[0],
                p[1],
                around.len(),
                deg(sum(v)),
                some(&around)
            );
        }
        let (w, u) = (mesh.vertices[out[v] as usize], mesh.vertices[inc[v] as usize]);
        bail!(
            "boundary vertex {v} at ({}, {}): the angles of its {} triangles add up to {:.1} degrees, but the boundary's \
             interior angle there is {:.1}: the mesh folds over itself there (triangles {})",
            p[0],
            p[1],
            around.len(),
            deg(sum(v)),
            deg(interior_angle(p, w, u)),
            some(&around)
        );
    }
    check_vertices_off_triangles(mesh)?;
    check_boundary_crossings(mesh, &boundary)
}

/// The interior angle at boundary vertex `p`, from the outgoing edge (towards `w`) round
/// counter-clockwise to the incoming one (from `u`): the domain's side, in (0, 2 pi].
fn interior_angle(p: [f64; 2], w: [f64; 2], u: [f64; 2]) -> f64 {
    let a = corner_angle(p, w, u);
    // corner_angle is signed: negative when u is clockwise from w (a reflex corner).
    if a <= 0.0 {
        a + std::f64::consts::TAU
    } else {
        a
    }
}

/// Tagged boundary segments must be edges of the mesh; `uses(a, b)` counts the triangles
/// that have the edge (a, b).
fn check_segments(mesh: &Mesh, uses: impl Fn(u32, u32) -> usize) -> Result<()> {
    let mut interior = 0usize;
    for (s, seg) in mesh.boundary.iter().enumerate() {
        let [a, b] = seg.v;
        let n = if a == b { 0 } else { uses(a, b) };
        if n == 0 {
            bail!(
                "boundary segment {s} joins vertices {a} and {b}, which share no edge of the mesh (no triangle has both \
                 as neighbouring corners)"
            );
        }
        interior += (n == 2) as usize;
    }
    if interior > 0 {
        log::warn!("{interior} tagged boundary segments lie on interior edges; their tags are ignored");
    }
    Ok(())
}

/// No vertex inside or on an edge of a triangle it is not a corner of.
fn check_vertices_off_triangles(mesh: &Mesh) -> Result<()> {
    let nv = mesh.vertices.len();
    let (lo, hi) = mesh.bounding_box();
    // About one vertex per cell, in the aspect ratio of the bounding box.
    let (w, h) = ((hi[0] - lo[0]).max(f64::MIN_POSITIVE), (hi[1] - lo[1]).max(f64::MIN_POSITIVE));
    let nx = ((nv as f64 * w / h).sqrt().ceil() as usize).clamp(1, nv.max(1));
    let ny = (nv.div_ceil(nx)).clamp(1, nv.max(1));
    let cell = |p: [f64; 2]| {
        let i = (((p[0] - lo[0]) / w * nx as f64) as usize).min(nx - 1);
        let j = (((p[1] - lo[1]) / h * ny as f64) as usize).min(ny - 1);
        (i, j)
    };
    // The vertices by cell, with their coordinates beside them: the candidates of a
    // triangle are then a few contiguous runs in memory, not scattered reads.
    let mut start = vec![0u32; nx * ny + 1];
    let cells: Vec<u32> = mesh.vertices.par_iter().map(|&p| cell(p)).map(|(i, j)| (j * nx + i) as u32).collect();
    for &c in &cells {
        start[c as usize + 1] += 1;
    }
    for k in 0..nx * ny {
        start[k + 1] += start[k];
    }
    let mut fill = start.clone();
    let mut order = vec![0u32; nv];
    let mut at = vec![[0.0f64; 2]; nv];
    for (v, &c) in cells.iter().enumerate() {
        let k = fill[c as usize] as usize;
        order[k] = v as u32;
        at[k] = mesh.vertices[v];
        fill[c as usize] += 1;
    }
    drop((cells, fill));
    // Triangles visited cell by cell (by their first corner), so that neighbouring
    // triangles, which share vertices and cells, are checked one after the other: a mesh in
    // no spatial order (as read, or as spade makes it) is otherwise one cache miss per read.
    let mut visit: Vec<(u32, u32)> = mesh
        .triangles
        .par_iter()
        .enumerate()
        .map(|(t, tri)| {
            let (i, j) = cell(mesh.vertices[tri[0] as usize]);
            ((j * nx + i) as u32, t as u32)
        })
        .collect();
    visit.par_sort_unstable();
    let hit = visit.par_iter().filter_map(|&(_, t)| {
        let tri = &mesh.triangles[t as usize];
        let [a, b, c] = tri.map(|v| mesh.vertices[v as usize]);
        let lo_p = [a[0].min(b[0]).min(c[0]), a[1].min(b[1]).min(c[1])];
        let hi_p = [a[0].max(b[0]).max(c[0]), a[1].max(b[1]).max(c[1])];
        let ((i0, j0), (i1, j1)) = (cell(lo_p), cell(hi_p));
        for j in j0..=j1 {
            let row = j * nx;
            let run = start[row + i0] as usize..start[row + i1 + 1] as usize;
            for (&v, &p) in order[run.clone()].iter().zip(&at[run]) {
                if p[0] < lo_p[0] || p[0] > hi_p[0] || p[1] < lo_p[1] || p[1] > hi_p[1] || tri.contains(&v) {
                    continue;
                }
                let o = [orient(a, b, p), orient(b, c, p), orient(c, a, p)];
                if o.iter().all(|&x| x >= 0.0) {
                    return Some((t as usize, v, o.iter().position(|&x| x == 0.0)));
                }
            }
        }
        None
    });
    // The lowest triangle with a vertex on it, whatever the order of the visit.
    let hit = hit.min_by_key(|&(t, v, _)| (t, v));
    if let Some((t, v, edge)) = hit {
        let tri = mesh.triangles[t];
        let p = mesh.vertices[v as usize];
        match edge {
            Some(k) => bail!(
                "vertex {v} at ({}, {}) lies on edge ({}, {}) of triangle {t} but is not one of its corners: the mesh is \
                 non-conforming (a hanging vertex makes an invisible internal wall); split triangle {t} at vertex {v}",
                p[0],
                p[1],
                tri[k],
                tri[(k + 1) % 3]
            ),
            None => bail!(
                "vertex {v} at ({}, {}) lies inside triangle {t} (vertices {:?}), which it is not a corner of: triangles \
                 overlap",
                p[0],
                p[1],
                tri
            ),
        }
    }
    Ok(())
}

/// Boundary edges that cross each other (beyond the vertices they share): overlapping parts.
fn check_boundary_crossings(mesh: &Mesh, boundary: &[[u32; 2]]) -> Result<()> {
    let segs: Vec<[[f64; 2]; 2]> =
        boundary.iter().map(|e| [mesh.vertices[e[0] as usize], mesh.vertices[e[1] as usize]]).collect();
    let shares = |i: usize, j: usize| boundary[i].iter().any(|v| boundary[j].contains(v));
    let mut first: Option<(usize, usize)> = None;
    meeting_pairs(&segs, shares, |i, j| {
        let pair = (i.min(j), i.max(j));
        if first.is_none_or(|f| pair < f) {
            first = Some(pair);
        }
    });
    if let Some((i, j)) = first {
        let (e, f) = (boundary[i], boundary[j]);
        bail!(
            "boundary edges ({}, {}) and ({}, {}) cross: parts of the mesh overlap (or the boundary touches itself)",
            e[0],
            e[1],
            f[0],
            f[1]
        );
    }
    Ok(())
}

fn check_duplicate_vertices(mesh: &Mesh) -> Result<()> {
    let mut idx: Vec<u32> = (0..mesh.vertices.len() as u32).collect();
    let key = |v: u32| {
        let p = mesh.vertices[v as usize];
        (p[0].to_bits(), p[1].to_bits())
    };
    idx.par_sort_unstable_by_key(|&v| key(v));
    for w in idx.windows(2) {
        if key(w[0]) == key(w[1]) {
            let p = mesh.vertices[w[0] as usize];
            bail!("vertices {} and {} are duplicates (both at ({}, {}))", w[0].min(w[1]), w[0].max(w[1]), p[0], p[1]);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::BoundarySegment;

    fn check(vertices: Vec<[f64; 2]>, triangles: Vec<[u32; 3]>) -> Result<()> {
        check_and_orient(&mut Mesh { vertices, triangles, boundary: vec![] })
    }

    #[test]
    fn a_fan_turning_twice_is_a_fold() {
        // Twelve triangles round vertex 0 in steps of 60 degrees: 720 degrees in all, the
        // second turn on a larger radius so that no two vertices coincide.
        let mut v = vec![[0.0, 0.0]];
        for k in 0..12 {
            let (a, r) = (k as f64 * std::f64::consts::FRAC_PI_3, if k < 6 { 1.0 } else { 2.0 });
            v.push([r * a.cos(), r * a.sin()]);
        }
        let t = (0..12).map(|k| [0, k + 1, (k + 1) % 12 + 1]).collect();
        let e = check(v, t).unwrap_err().to_string();
        assert!(e.contains("vertex 0 at (0, 0)") && e.contains("720.0 degrees instead of 360"), "{e}");
    }

    #[test]
    fn overlapping_triangles_are_found() {
        let v = vec![[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.5, 0.25], [3.0, 0.2], [3.0, 0.4]];
        let e = check(v, vec![[0, 1, 2], [0, 2, 3], [4, 5, 6]]).unwrap_err().to_string();
        assert!(e.contains("vertex 4 at (0.5, 0.25) lies inside triangle 0"), "{e}");
    }

    #[test]
    fn a_hanging_vertex_is_non_conforming() {
        let v = vec![[0.0, 0.0], [2.0, 0.0], [1.0, 1.0], [1.0, 0.0], [1.0, -1.0]];
        let e = check(v, vec![[0, 1, 2], [0, 4, 3], [3, 4, 1]]).unwrap_err().to_string();
        assert!(
            e.contains("vertex 3 at (1, 0) lies on edge (0, 1) of triangle 0") && e.contains("non-conforming"),
            "{e}"
        );
    }

    #[test]
    fn a_boundary_segment_must_be_an_edge() {
        let mut m = Mesh {
            vertices: vec![[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]],
            triangles: vec![[0, 1, 2], [0, 2, 3]],
            boundary: vec![BoundarySegment { v: [0, 1], tag: 2 }, BoundarySegment { v: [1, 3], tag: 2 }],
        };
        let e = check_and_orient(&mut m).unwrap_err().to_string();
        assert!(e.contains("boundary segment 1 joins vertices 1 and 3, which share no edge"), "{e}");
        m.boundary.pop();
        check_and_orient(&mut m).unwrap();
    }

    #[test]
    fn flat_meshes_with_holes_and_reflex_corners_pass() {
        // An L shape with a reflex corner at (1, 1), triangulated, plus a clockwise copy.
        let v = vec![[0.0, 0.0], [2.0, 0.0], [2.0, 1.0], [1.0, 1.0], [1.0, 2.0], [0.0, 2.0]];
        let t = vec![[0, 1, 2], [0, 2, 3], [0, 3, 4], [0, 4, 5]];
        check(v.clone(), t.clone()).unwrap();
        check(v, t.into_iter().map(|[a, b, c]| [a, c, b]).collect()).unwrap();
    }
}
