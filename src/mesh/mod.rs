//! Triangle meshes: the raw mesh (vertices, triangles, tagged boundary segments) as read
//! or generated, its checks, the solver-ready topology (edges with their two cells and
//! slots, normals, areas), generation with spade, cell ordering, and file formats.

pub mod check;
pub mod domain;
pub mod generate;
pub mod io;
pub mod order;
pub mod topology;

pub use topology::{Topology, NO_CELL};

/// A triangle mesh as read from a file or generated: geometry and connectivity only.
/// Triangles are counter-clockwise after [`check::check_and_orient`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mesh {
    pub vertices: Vec<[f64; 2]>,
    pub triangles: Vec<[u32; 3]>,
    /// Tagged boundary segments (Gmsh physical groups, Triangle boundary markers).
    /// Boundary edges not listed are walls with tag 0.
    pub boundary: Vec<BoundarySegment>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BoundarySegment {
    pub v: [u32; 2],
    pub tag: u32,
}

impl Mesh {
    pub fn num_cells(&self) -> usize {
        self.triangles.len()
    }

    /// Signed area of triangle `t` (positive when counter-clockwise).
    pub fn signed_area(&self, t: usize) -> f64 {
        let [a, b, c] = self.triangles[t].map(|v| self.vertices[v as usize]);
        0.5 * ((b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1]))
    }

    pub fn centroid(&self, t: usize) -> [f64; 2] {
        let [a, b, c] = self.triangles[t].map(|v| self.vertices[v as usize]);
        [(a[0] + b[0] + c[0]) / 3.0, (a[1] + b[1] + c[1]) / 3.0]
    }

    pub fn total_area(&self) -> f64 {
        (0..self.triangles.len()).map(|t| self.signed_area(t).abs()).sum()
    }

    /// The lower-left and upper-right corners of the vertices' bounding box.
    pub fn bounding_box(&self) -> ([f64; 2], [f64; 2]) {
        let (mut lo, mut hi) = ([f64::MAX; 2], [f64::MIN; 2]);
        for p in &self.vertices {
            for d in 0..2 {
                lo[d] = lo[d].min(p[d]);
                hi[d] = hi[d].max(p[d]);
            }
        }
        (lo, hi)
    }
}
