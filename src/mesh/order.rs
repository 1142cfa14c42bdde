//! Cell order for locality: triangles sorted along a Hilbert curve through their centroids,
//! vertices renumbered in order of first use. Applied once when a mesh enters the pipeline,
//! so global cell ids are those of the ordered mesh.

use super::Mesh;
use rayon::prelude::*;

/// Position of (x, y) along a Hilbert curve on a 2^16 x 2^16 grid.
fn hilbert_index(mut x: u32, mut y: u32) -> u64 {
    let n: u32 = 1 << 16;
    let mut d: u64 = 0;
    let mut s = n / 2;
    while s > 0 {
        let rx = ((x & s) > 0) as u32;
        let ry = ((y & s) > 0) as u32;
        d += (s as u64) * (s as u64) * ((3 * rx) ^ ry) as u64;
        if ry == 0 {
            if rx == 1 {
                x = n - 1 - x;
                y = n - 1 - y;
            }
            std::mem::swap(&mut x, &mut y);
        }
        s /= 2;
    }
    d
}

/// Reorder triangles along a Hilbert curve and vertices by first use. Returns the new
/// index of each old triangle.
pub fn hilbert_order(mesh: &mut Mesh) -> Vec<u32> {
    let nt = mesh.triangles.len();
    let (lo, hi) = mesh.bounding_box();
    let span = (hi[0] - lo[0]).max(hi[1] - lo[1]).max(f64::MIN_POSITIVE);
    let scale = 65535.0 / span;
    let mut keys: Vec<(u64, u32)> = (0..nt)
        .map(|t| {
            let c = mesh.centroid(t);
            let qx = ((c[0] - lo[0]) * scale).clamp(0.0, 65535.0) as u32;
            let qy = ((c[1] - lo[1]) * scale).clamp(0.0, 65535.0) as u32;
            (hilbert_index(qx, qy), t as u32)
        })
        .collect();
    keys.par_sort_unstable();

    let mut new_of_old = vec![0u32; nt];
    let triangles: Vec<[u32; 3]> = keys
        .iter()
        .enumerate()
        .map(|(new, &(_, old))| {
            new_of_old[old as usize] = new as u32;
            mesh.triangles[old as usize]
        })
        .collect();

    let mut vmap = vec![u32::MAX; mesh.vertices.len()];
    let mut vertices = Vec::with_capacity(mesh.vertices.len());
    let mut remap = |v: u32, vertices: &mut Vec<[f64; 2]>| {
        if vmap[v as usize] == u32::MAX {
            vmap[v as usize] = vertices.len() as u32;
            vertices.push(mesh.vertices[v as usize]);
        }
        vmap[v as usize]
    };
    mesh.triangles = triangles
        .iter()
        .map(|tri| [remap(tri[0], &mut vertices), remap(tri[1], &mut vertices), remap(tri[2], &mut vertices)])
        .collect();
    // Vertices used by no triangle (caught by the checks) keep a place at the end.
    for v in 0..mesh.vertices.len() as u32 {
        remap(v, &mut vertices);
    }
    for seg in &mut mesh.boundary {
        seg.v = seg.v.map(|v| vmap[v as usize]);
    }
    mesh.vertices = vertices;
    new_of_old
}
