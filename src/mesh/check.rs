//! Mesh checks with errors a user can act on: what is wrong, where, and what was expected.

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
