//! Re-entrant corners of the domain (issue 43). At order 2 the gradient's mirror across a wall
//! reverses the normal velocity, as beside a straight wall; at a wall edge that ends at a
//! re-entrant corner (the water's angle round the vertex over 200 degrees) the ghost repeats
//! the cell's velocities instead (`physics/reconstruct.rs`), since the water beyond is round
//! the corner. Without that, the cell in the lee of the strait study's Atlantic mouth fell to
//! -1.66 m under neighbours near -0.3 m (CPU, f32, 72 h at order 2); with it, -0.64 m.

mod common;
use common::repo_root;
use pycno::app::scenario_mesh;
use pycno::mesh::{Mesh, Topology, NO_CELL};
use pycno::physics::model::Reference;
use pycno::physics::reconstruct::{self, ACROSS_CORNER, ACROSS_WALL};
use pycno::physics::{CellState, Model, Physics};
use pycno::scenario::Scenario;
use pycno::solver::Layout;

/// An L of three unit squares, [0, 2] x [0, 1] and [0, 1] x [1, 2], two triangles each,
/// counter-clockwise: its re-entrant corner is (1, 1).
fn l_shape() -> Mesh {
    let vertices = vec![[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 1.0], [0.0, 2.0], [1.0, 2.0]];
    // Squares by their corners (lower left, lower right, upper right, upper left).
    let squares = [[0, 1, 4, 3], [1, 2, 5, 4], [3, 4, 7, 6]];
    let triangles = squares.iter().flat_map(|&[a, b, c, d]| [[a, b, c], [a, c, d]]).collect();
    Mesh { vertices, triangles, boundary: Vec::new() }
}

#[test]
fn the_walls_at_a_re_entrant_corner_are_flagged_and_no_others() {
    let mesh = l_shape();
    let topo = Topology::build(&mesh).unwrap();
    let at = |e: usize| topo.edge_vertices[e].map(|v| mesh.vertices[v as usize]);
    let mut flagged = Vec::new();
    for e in 0..topo.num_edges() {
        let [a, b] = at(e);
        let touches = a == [1.0, 1.0] || b == [1.0, 1.0];
        let boundary = topo.edge_cells[e][1] == NO_CELL;
        assert_eq!(topo.edge_corner[e], boundary && touches, "edge {e} from {a:?} to {b:?}");
        if topo.edge_corner[e] {
            flagged.push(if a == [1.0, 1.0] { b } else { a });
        }
    }
    flagged.sort_by(|p, q| p.partial_cmp(q).unwrap());
    // The walls from the corner to (1, 2) and to (2, 1); the L's convex corners (90 degrees of
    // water) and its straight walls (180) are not corners.
    assert_eq!(flagged, vec![[1.0, 2.0], [2.0, 1.0]]);
}

#[test]
fn the_strait_studys_corners_are_its_mouths_four() {
    let path = repo_root().join("meshes/scenarios/strait_exchange.json");
    let s = Scenario::from_file(&path).unwrap();
    let pm = scenario_mesh(&s).unwrap();
    let mut corners: Vec<[i64; 2]> = Vec::new();
    for e in (0..pm.topo.num_edges()).filter(|&e| pm.topo.edge_corner[e]) {
        // The edge's end nearer a mouth corner, in km.
        let ends = pm.topo.edge_vertices[e].map(|v| pm.mesh.vertices[v as usize]);
        let corner = ends
            .iter()
            .map(|p| [(p[0] / 1e3).round() as i64, (p[1] / 1e3).round() as i64])
            .find(|p| [60, 110].contains(&p[0]) && p[1].abs() == 10)
            .unwrap_or_else(|| panic!("a corner edge away from the mouths: {ends:?}"));
        corners.push(corner);
    }
    corners.sort();
    // Two walls at each of the four corners where the strait meets its basins.
    let want = [[60, -10], [60, -10], [60, 10], [60, 10], [110, -10], [110, -10], [110, 10], [110, 10]];
    assert_eq!(corners, want);
}

/// Water leaving the wall at the L's corner, the cell there at 0.4 m/s, the rest at 0.8 m/s
/// (the strait's corner cell beside the turning jet): with the corner's ghost the cell sends
/// less through its other faces than with a straight wall's mirror, which fits a normal
/// velocity vanishing at the wall and so steepens the cell's gradient away from it.
#[test]
fn a_corner_cell_drains_less_than_with_a_straight_walls_mirror() {
    let mesh = l_shape();
    let topo = Topology::build(&mesh).unwrap();
    let reference = Reference { surface: 0.0, interface: -5.0 };
    let physics = Physics { reference: Some(reference), ..Physics::default() };
    let m = Model::<f64>::new(&physics).unwrap();
    let n = topo.num_cells();
    // The square [1, 2] x [0, 1]'s upper triangle has the wall from (1, 1) to (2, 1).
    let c = (0..n)
        .find(|&c| {
            let p = topo.cell_centroid[c];
            p[0] > 1.0 && p[1] > 0.5 && p[1] < 1.0
        })
        .unwrap();
    // 5 m of each layer moving down, away from that wall.
    let state: Vec<CellState> = (0..n)
        .map(|k| {
            let v = if k == c { -0.4 } else { -0.8 };
            CellState { h1: 5.0, q1: [0.0, 5.0 * v], h2: 5.0, q2: [0.0, 5.0 * v] }
        })
        .collect();
    let lay = Layout::<f64>::from_topology(&topo, &vec![10.0; n], &state, &reference);
    assert!(lay.across[c].contains(&ACROSS_CORNER), "cell {c}: {:?}", lay.across[c]);
    let nb = lay.across[c].map(|o| {
        let o = if o >= 0 { o as usize } else { c };
        (lay.v1[o], lay.v2[o])
    });
    // What leaves the cell through its faces (both layers' momenta along the outward normals).
    let outflow = |across: [i32; 3]| {
        let (_, faces) = reconstruct::cell(&m, lay.v1[c], lay.v2[c], across, &nb, &lay.stencil[c]);
        let ln = lay.stencil[c].ln;
        (0..3).map(|k| (faces[k][1] + faces[k][4]) * ln[k][0] + (faces[k][2] + faces[k][5]) * ln[k][1]).sum::<f64>()
    };
    let corner = outflow(lay.across[c]);
    let walled = outflow(lay.across[c].map(|o| if o == ACROSS_CORNER { ACROSS_WALL } else { o }));
    eprintln!("volume leaving the cell: {corner:.4} m³/s with the corner's ghost, {walled:.4} with a mirror");
    assert!(corner < walled, "corner {corner}, mirror {walled}");
}
