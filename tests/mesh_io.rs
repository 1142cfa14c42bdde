//! Mesh file readers and writers: round trips between every format, hand-written files of
//! each format, the sample meshes under meshes/, and the error messages for malformed files.

use pycno::mesh::check::check_and_orient;
use pycno::mesh::io::{
    read_gmsh, read_mesh, read_native, read_triangle, write_gmsh, write_mesh, write_native, write_triangle, GmshVersion,
};
use pycno::mesh::{BoundarySegment, Mesh};
use std::path::{Path, PathBuf};

/// A structured grid of the rectangle [x0, x0 + nx*dx] x [y0, y0 + ny*dy], each cell split in
/// two triangles, with coordinates that need all 17 digits to round-trip, and tagged segments
/// on two sides (bottom: tag 3, right: tag 7), interleaved so that their order matters.
fn grid(nx: u32, ny: u32) -> Mesh {
    let (x0, y0) = (431_234.123_456_789_1, -12.345_678_901_234_5);
    let (dx, dy) = (1.0 / 3.0, std::f64::consts::PI / 7.0);
    let id = |i: u32, j: u32| j * (nx + 1) + i;
    let mut m = Mesh::default();
    for j in 0..=ny {
        for i in 0..=nx {
            m.vertices.push([x0 + i as f64 * dx, y0 + j as f64 * dy]);
        }
    }
    for j in 0..ny {
        for i in 0..nx {
            let (a, b, c, d) = (id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1));
            m.triangles.push([a, b, c]);
            m.triangles.push([a, c, d]);
        }
    }
    for k in 0..nx.max(ny) {
        if k < nx {
            m.boundary.push(BoundarySegment { v: [id(k, 0), id(k + 1, 0)], tag: 3 });
        }
        if k < ny {
            m.boundary.push(BoundarySegment { v: [id(nx, k), id(nx, k + 1)], tag: 7 });
        }
    }
    m
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// The error of `result`, which must mention `file:line:` and `what`.
fn assert_err<T: std::fmt::Debug>(result: anyhow::Result<T>, file_line: &str, what: &str) {
    let e = format!("{:#}", result.unwrap_err());
    assert!(e.contains(file_line), "error does not name {file_line:?}: {e}");
    assert!(e.contains(what), "error does not say {what:?}: {e}");
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

#[test]
fn round_trip_native_triangle_gmsh41_gmsh22_native() {
    let d = tempfile::tempdir().unwrap();
    let m = grid(5, 3);
    assert!(check_and_orient(&mut m.clone()).is_ok());

    write_native(&d.path().join("a.pmsh"), &m).unwrap();
    let m1 = read_native(&d.path().join("a.pmsh")).unwrap();
    assert_eq!(m1, m);

    write_triangle(&d.path().join("b"), &m1).unwrap();
    let m2 = read_triangle(&d.path().join("b.node")).unwrap();
    assert_eq!(m2, m);

    write_gmsh(&d.path().join("c.msh"), &m2, GmshVersion::V41).unwrap();
    let m3 = read_gmsh(&d.path().join("c.msh")).unwrap();
    assert_eq!(m3, m);

    write_gmsh(&d.path().join("d.msh"), &m3, GmshVersion::V22).unwrap();
    let m4 = read_gmsh(&d.path().join("d.msh")).unwrap();
    assert_eq!(m4, m);

    write_native(&d.path().join("e.pmsh"), &m4).unwrap();
    assert_eq!(read_native(&d.path().join("e.pmsh")).unwrap(), m);
    assert_eq!(std::fs::read(d.path().join("a.pmsh")).unwrap(), std::fs::read(d.path().join("e.pmsh")).unwrap());
    // Every write went through a temporary that was renamed: nothing else is left.
    assert_eq!(files_in(d.path()), ["a.pmsh", "b.edge", "b.ele", "b.node", "c.msh", "d.msh", "e.pmsh"]);
}

#[test]
fn read_mesh_and_write_mesh_dispatch_on_extension() {
    let d = tempfile::tempdir().unwrap();
    let m = grid(2, 2);
    for name in ["m.pmsh", "m.msh", "t.node", "u.ele", "v.MSH"] {
        let p = d.path().join(name);
        write_mesh(&p, &m).unwrap();
        assert_eq!(read_mesh(&p).unwrap(), m, "{name}");
    }
    let text = std::fs::read_to_string(d.path().join("m.msh")).unwrap();
    assert!(text.starts_with("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n"), "{text}");
    // Triangle through either file name of the pair.
    assert_eq!(read_mesh(&d.path().join("t.ele")).unwrap(), m);
    assert!(d.path().join("u.node").exists() && d.path().join("u.edge").exists());
    assert_err(read_mesh(&d.path().join("m.vtk")), "m.vtk", "unknown mesh file extension \".vtk\"");
    assert_err(write_mesh(&d.path().join("m.obj"), &m), "m.obj", ".pmsh");
}

#[test]
fn text_writers_leave_out_tag_zero_segments() {
    let d = tempfile::tempdir().unwrap();
    let mut m = grid(2, 1);
    m.boundary.insert(1, BoundarySegment { v: [0, 3], tag: 0 });
    let want = Mesh { boundary: m.boundary.iter().copied().filter(|s| s.tag != 0).collect(), ..m.clone() };
    for name in ["a.msh", "b.node"] {
        write_mesh(&d.path().join(name), &m).unwrap();
        assert_eq!(read_mesh(&d.path().join(name)).unwrap(), want, "{name}");
    }
    write_gmsh(&d.path().join("c.msh"), &m, GmshVersion::V22).unwrap();
    assert_eq!(read_mesh(&d.path().join("c.msh")).unwrap(), want);
    write_native(&d.path().join("d.pmsh"), &m).unwrap();
    assert_eq!(read_mesh(&d.path().join("d.pmsh")).unwrap(), m);
}

/// The square of the hand-written files: 5 used nodes, 4 triangles around the centre.
fn square() -> Mesh {
    Mesh {
        // Node tags 10, 20, 30, 31, 40 in tag order.
        vertices: vec![[1.0, 0.0], [1.0, 1.0], [0.0, 0.0], [0.5, 0.5], [0.0, 1.0]],
        triangles: vec![[2, 0, 3], [0, 1, 3], [1, 4, 3], [4, 2, 3]],
        // Element 8 (curve with physical 5) before element 20 (physical 9).
        boundary: vec![BoundarySegment { v: [4, 2], tag: 5 }, BoundarySegment { v: [0, 1], tag: 9 }],
    }
}

const SQUARE_41: &str = r#"$MeshFormat
4.1 0 8
$EndMeshFormat
$PhysicalNames
3
1 5 "left wall"
1 9 "outlet"
2 100 "domain"
$EndPhysicalNames
$Entities
2 3 1 0
1 0 0 0 0
2 1 0 0 0
1 0 0 0 0 1 0 1 5 2 1 -2
2 1 0 0 1 1 0 2 9 5 0
3 0 0 0 1 0 0 0 0
1 0 0 0 1 1 0 1 100 3 1 2 3
$EndEntities
$Comments
$Nodes is mentioned here 1 2 3
$EndComments
$Nodes
4 7 10 500
0 1 0 1
500
9 9 0
1 1 1 2
40
30
0 1 0 1.0
0 0 0 0.0
2 1 0 3
20
10
31
1 1 0
1 0 0
0.5 0.5 0
0 2 0 1
15
7 7 7
$EndNodes
$Elements
5 9 1 20
0 1 15 2
1 500
2 15
2 1 2 4
3 30 10 31
4 10 20 31
5 20 40 31
6 40 30 31
1 2 1 1
20 10 20
1 1 1 1
8 40 30
1 3 1 1
9 30 10
$EndElements
$NodeData
1
"h"
1
0.0
3
0
1
1
10 1.5
$EndNodeData
"#;

const SQUARE_22: &str = r#"$MeshFormat
2.2 0 8
$EndMeshFormat
$PhysicalNames
2
1 5 "left wall"
1 9 "outlet"
$EndPhysicalNames
$Nodes
7
500 9 9 0
40 0 1 0
30 0 0 0
20 1 1 0
10 1 0 0
31 0.5 0.5 0
15 7 7 7
$EndNodes
$Elements
10
1 15 2 0 1 500
2 15 2 0 2 15
3 2 2 100 1 30 10 31
4 2 2 100 1 10 20 31
5 2 2 100 1 20 40 31
6 2 2 100 1 40 30 31
20 1 2 9 2 10 20
8 1 2 5 1 40 30
9 1 2 0 3 30 10
10 1 0 30 10
$EndElements
"#;

#[test]
fn gmsh41_sparse_tags_unused_nodes_points_and_physical_curves() {
    let d = tempfile::tempdir().unwrap();
    let m = read_gmsh(&write(d.path(), "sq41.msh", SQUARE_41)).unwrap();
    assert_eq!(m, square());
    assert!(check_and_orient(&mut m.clone()).is_ok());
}

#[test]
fn gmsh22_sparse_tags_unused_nodes_points_and_physical_lines() {
    let d = tempfile::tempdir().unwrap();
    let m = read_gmsh(&write(d.path(), "sq22.msh", SQUARE_22)).unwrap();
    assert_eq!(m, square());
}

#[test]
fn triangle_one_based_with_comments_attributes_and_markers() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "sq.node",
        "# a square\n5  2  1  1\n   1    1 0  0.25  1\n   2    1 1  0.5   1\n\n   3    0 0  0 1 # corner\n   4    0.5 0.5  0 0\n   5    0 1  0 1\n# Generated by hand\n",
    );
    write(d.path(), "sq.ele", "4 3 0\n1 3 1 4\n2 1 2 4\n3 2 5 4\n4 5 3 4\n");
    write(d.path(), "sq.edge", "5 1\n1 5 3 5\n2 3 1 0\n3 1 2 9\n4 2 5 0\n5 1 4 0\n");
    let m = read_triangle(&d.path().join("sq.node")).unwrap();
    assert_eq!(
        m,
        Mesh {
            vertices: vec![[1.0, 0.0], [1.0, 1.0], [0.0, 0.0], [0.5, 0.5], [0.0, 1.0]],
            triangles: vec![[2, 0, 3], [0, 1, 3], [1, 4, 3], [4, 2, 3]],
            boundary: vec![BoundarySegment { v: [4, 2], tag: 5 }, BoundarySegment { v: [0, 1], tag: 9 }],
        }
    );
    // Without a .edge file there are no tagged segments.
    std::fs::remove_file(d.path().join("sq.edge")).unwrap();
    assert!(read_triangle(&d.path().join("sq.ele")).unwrap().boundary.is_empty());
}

/// The sample meshes under meshes/ read, pass the checks, and agree with each other.
#[test]
fn sample_meshes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("meshes");
    let mut v41 = read_mesh(&dir.join("channel_v41.msh")).unwrap();
    let mut v22 = read_mesh(&dir.join("channel_v22.msh")).unwrap();
    assert_eq!(v41, v22, "the 4.1 and 2.2 files hold the same Gmsh mesh");
    let mut tri = read_mesh(&dir.join("channel.node")).unwrap();
    for (m, name) in [(&mut v41, "v41"), (&mut v22, "v22"), (&mut tri, "triangle")] {
        check_and_orient(m).unwrap_or_else(|e| panic!("{name}: {e:#}"));
        assert!((m.total_area() - 4.0).abs() < 1e-12, "{name}: area {}", m.total_area());
        let mut tags: Vec<u32> = m.boundary.iter().map(|s| s.tag).collect();
        tags.sort_unstable();
        tags.dedup();
        assert_eq!(tags, [1, 2, 3], "{name}");
        // Tagged segments cover the whole perimeter: 2 * (4 + 1).
        let len: f64 = m
            .boundary
            .iter()
            .map(|s| {
                let [p, q] = s.v.map(|v| m.vertices[v as usize]);
                (p[0] - q[0]).hypot(p[1] - q[1])
            })
            .sum();
        assert!((len - 10.0).abs() < 1e-9, "{name}: perimeter {len}");
        // Inflow (tag 2) at x = 0, outflow (tag 3) at x = 4.
        for s in &m.boundary {
            let xs = s.v.map(|v| m.vertices[v as usize][0]);
            match s.tag {
                2 => assert_eq!(xs, [0.0, 0.0], "{name}"),
                3 => assert_eq!(xs, [4.0, 4.0], "{name}"),
                _ => {}
            }
        }
    }
    assert_eq!((v41.vertices.len(), v41.triangles.len(), v41.boundary.len()), (30, 38, 20));
    assert_eq!((tri.vertices.len(), tri.triangles.len(), tri.boundary.len()), (51, 78, 22));
}

// ----------------------------------------------------------------------------------------
// Malformed files: the error names the file and the line.

fn triangle_pair(dir: &Path, node: &str, ele: &str) -> PathBuf {
    write(dir, "x.node", node);
    write(dir, "x.ele", ele);
    dir.join("x.node")
}

const NODE4: &str = "4 2 0 0\n1 0 0\n2 1 0\n3 1 1\n4 0 1\n";
const ELE2: &str = "2 3 0\n1 1 2 3\n2 1 3 4\n";

#[test]
fn triangle_good_pair_reads() {
    let d = tempfile::tempdir().unwrap();
    let m = read_triangle(&triangle_pair(d.path(), NODE4, ELE2)).unwrap();
    assert_eq!(m.triangles, vec![[0, 1, 2], [0, 2, 3]]);
}

#[test]
fn triangle_truncated_file() {
    let d = tempfile::tempdir().unwrap();
    // Cut in the middle of the last line.
    let p = triangle_pair(d.path(), NODE4, "2 3 0\n1 1 2 3\n2 1 3");
    assert_err(read_triangle(&p), "x.ele:3:", "expected 4 fields (id v0 v1 v2), found 3");
    // Cut after a whole line.
    let p = triangle_pair(d.path(), "4 2 0 0\n1 0 0\n2 1 0\n", ELE2);
    assert_err(read_triangle(&p), "x.node:3:", "the file ends after 2 vertices, but the header (line 1) says 4");
}

#[test]
fn triangle_header_count_larger_than_lines() {
    let d = tempfile::tempdir().unwrap();
    let p = triangle_pair(d.path(), NODE4, "3 3 0\n1 1 2 3\n2 1 3 4\n# end\n\n");
    assert_err(read_triangle(&p), "x.ele:5:", "the file ends after 2 triangles, but the header (line 1) says 3");
}

#[test]
fn triangle_header_count_smaller_than_lines() {
    let d = tempfile::tempdir().unwrap();
    let p = triangle_pair(d.path(), "3 2 0 0\n1 0 0\n2 1 0\n3 1 1\n4 0 1\n", ELE2);
    assert_err(
        read_triangle(&p),
        "x.node:5:",
        "unexpected data after the 3 vertices that the header (line 1) announces",
    );
}

#[test]
fn triangle_bad_vertex_index() {
    let d = tempfile::tempdir().unwrap();
    let p = triangle_pair(d.path(), NODE4, "2 3 0\n1 1 2 3\n2 1 3 17\n");
    assert_err(
        read_triangle(&p),
        "x.ele:3:",
        "vertex index 17 out of range (the .node file has 4 vertices, numbered from 1)",
    );
    // 0 is out of range for 1-based files.
    let p = triangle_pair(d.path(), NODE4, "2 3 0\n1 0 2 3\n2 1 3 4\n");
    assert_err(read_triangle(&p), "x.ele:2:", "vertex index 0 out of range");
    write(d.path(), "x.edge", "1 1\n# comment\n1 1 5 2\n");
    let p = triangle_pair(d.path(), NODE4, ELE2);
    assert_err(read_triangle(&p), "x.edge:3:", "vertex index 5 out of range");
}

#[test]
fn triangle_non_numeric_field() {
    let d = tempfile::tempdir().unwrap();
    let p = triangle_pair(d.path(), "4 2 0 0\n1 0 0\n2 1.0e 0\n3 1 1\n4 0 1\n", ELE2);
    assert_err(read_triangle(&p), "x.node:3:", "field 2 \"1.0e\" is not a number");
    let p = triangle_pair(d.path(), NODE4, "2 3 0\n1 1 2 3\n2 1 3 x4\n");
    assert_err(read_triangle(&p), "x.ele:3:", "field 4 \"x4\" is not an integer");
}

#[test]
fn triangle_too_few_fields() {
    let d = tempfile::tempdir().unwrap();
    let p = triangle_pair(d.path(), "4 2 0 1\n1 0 0 1\n2 1 0 1\n3 1 1\n4 0 1 1\n", ELE2);
    assert_err(read_triangle(&p), "x.node:4:", "expected 4 fields (id x y, boundary marker), found 3");
}

#[test]
fn triangle_missing_file() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "x.node", NODE4);
    assert_err(read_triangle(&d.path().join("x.node")), "cannot open", "x.ele: No such file or directory");
    assert_err(read_mesh(&d.path().join("nothing.msh")), "cannot open", "nothing.msh: No such file or directory");
}

#[test]
fn gmsh_truncated_inside_nodes() {
    let d = tempfile::tempdir().unwrap();
    // Keep the first 31 lines: the file ends after the coordinates of nodes 40 and 30.
    let cut: String = SQUARE_41.lines().take(31).map(|l| format!("{l}\n")).collect();
    let p = write(d.path(), "t.msh", &cut);
    assert_err(read_gmsh(&p), "t.msh:31:", "the file ends inside $Nodes: expected 7 nodes, found 3");
}

#[test]
fn gmsh_header_counts_larger_than_lines() {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), "t.msh", &SQUARE_22.replace("$Nodes\n7\n", "$Nodes\n8\n"));
    assert_err(read_gmsh(&p), "t.msh:18:", "\"$EndNodes\" inside $Nodes: expected 8 nodes, found 7");
    let p = write(d.path(), "t.msh", &SQUARE_41.replace("5 9 1 20", "5 10 1 20"));
    assert_err(read_gmsh(&p), "t.msh:58:", "the 5 blocks hold 9 elements, but the $Elements header (line 44) says 10");
    let p = write(d.path(), "t.msh", &SQUARE_41.replace("\n1 3 1 1\n", "\n1 3 1 2\n"));
    assert_err(
        read_gmsh(&p),
        "t.msh:57:",
        "this block of 2 elements brings the total to 10, but the $Elements header (line 44) says 9",
    );
}

#[test]
fn gmsh_header_counts_smaller_than_lines() {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), "t.msh", &SQUARE_22.replace("$Elements\n10\n", "$Elements\n9\n"));
    assert_err(
        read_gmsh(&p),
        "t.msh:30:",
        "expected $EndElements after the 9 elements of the header (line 20), found \"10 1 0 30 10\"",
    );
}

#[test]
fn gmsh_bad_node_reference_and_segment_on_unused_node() {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), "t.msh", &SQUARE_22.replace("6 2 2 100 1 40 30 31", "6 2 2 100 1 40 30 32"));
    assert_err(read_gmsh(&p), "t.msh:26:", "node 32 (field 8) is not in $Nodes");
    let p = write(d.path(), "t.msh", &SQUARE_22.replace("8 1 2 5 1 40 30", "8 1 2 5 1 40 500"));
    assert_err(read_gmsh(&p), "t.msh:28:", "boundary line element 8 uses node 500, which no triangle uses");
    let p = write(d.path(), "t.msh", &SQUARE_41.replace("\n8 40 30\n", "\n8 15 30\n"));
    assert_err(read_gmsh(&p), "t.msh:56:", "boundary line element 8 uses node 15, which no triangle uses");
}

#[test]
fn gmsh_non_numeric_and_too_few_fields() {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), "t.msh", &SQUARE_41.replace("0.5 0.5 0\n", "0.5 0,5 0\n"));
    assert_err(read_gmsh(&p), "t.msh:38:", "field 2 \"0,5\" is not a number");
    let p = write(d.path(), "t.msh", &SQUARE_41.replace("\n5 20 40 31\n", "\n5 20 40\n"));
    assert_err(read_gmsh(&p), "t.msh:51:", "expected 4 fields (elementTag node1 node2 node3), found 3");
    let p = write(d.path(), "t.msh", &SQUARE_22.replace("31 0.5 0.5 0", "31 0.5 0.5"));
    assert_err(read_gmsh(&p), "t.msh:16:", "expected 4 fields (node-number x y z), found 3");
}

#[test]
fn gmsh_unsupported_versions_and_elements() {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), "t.msh", &SQUARE_41.replace("4.1 0 8", "4.1 1 8"));
    assert_err(read_gmsh(&p), "t.msh:2:", "binary .msh files are not supported");
    let p = write(d.path(), "t.msh", &SQUARE_22.replace("2.2 0 8", "3 0 8"));
    assert_err(read_gmsh(&p), "t.msh:2:", "Gmsh format version 3 is not supported");
    let p = write(d.path(), "t.msh", &SQUARE_41.replace("\n2 1 2 4\n", "\n2 1 9 4\n"));
    assert_err(read_gmsh(&p), "t.msh:48:", "element type 9 (6-node second-order triangle) is not supported");
}

fn native_file(dir: &Path) -> (PathBuf, Vec<u8>) {
    let p = dir.join("n.pmsh");
    write_native(&p, &grid(3, 2)).unwrap();
    let b = std::fs::read(&p).unwrap();
    (p, b)
}

#[test]
fn native_truncated() {
    let d = tempfile::tempdir().unwrap();
    let (p, b) = native_file(d.path());
    std::fs::write(&p, &b[..b.len() - 10]).unwrap();
    let want = format!("take {} bytes, but the file has {} bytes", b.len(), b.len() - 10);
    assert_err(read_native(&p), "n.pmsh", &want);
    assert_err(read_native(&p), "n.pmsh", "truncated");
    std::fs::write(&p, &b[..20]).unwrap();
    assert_err(read_native(&p), "n.pmsh", "truncated: expected at least 40 bytes (header and checksum), found 20");
}

#[test]
fn native_checksum_mismatch() {
    let d = tempfile::tempdir().unwrap();
    let (p, mut b) = native_file(d.path());
    let k = b.len() / 2;
    b[k] ^= 0x10;
    std::fs::write(&p, &b).unwrap();
    assert_err(read_native(&p), "n.pmsh", "checksum mismatch: the file is corrupted");
}

#[test]
fn native_wrong_magic_and_version() {
    let d = tempfile::tempdir().unwrap();
    let (p, b) = native_file(d.path());
    let mut bad = b.clone();
    bad[..8].copy_from_slice(b"PYCNOMSX");
    std::fs::write(&p, &bad).unwrap();
    assert_err(read_native(&p), "n.pmsh", "expected the magic bytes \"PYCNOMSH\", found \"PYCNOMSX\"");
    let mut bad = b.clone();
    bad[8..12].copy_from_slice(&2u32.to_le_bytes());
    std::fs::write(&p, &bad).unwrap();
    assert_err(read_native(&p), "n.pmsh", "version 2 is not supported: this pycno reads version 1");
}

/// 10^6 triangles in every format; run with
/// `cargo test --release --test mesh_io -- --ignored --nocapture large_meshes_read_fast`.
#[test]
#[ignore]
fn large_meshes_read_fast() {
    let d = tempfile::tempdir().unwrap();
    let m = grid(1000, 500);
    assert_eq!(m.triangles.len(), 1_000_000);
    let paths = [d.path().join("l.pmsh"), d.path().join("l.node"), d.path().join("l41.msh"), d.path().join("l22.msh")];
    for p in &paths[..2] {
        write_mesh(p, &m).unwrap();
    }
    write_gmsh(&paths[2], &m, GmshVersion::V41).unwrap();
    write_gmsh(&paths[3], &m, GmshVersion::V22).unwrap();
    for p in &paths {
        let t = std::time::Instant::now();
        let r = read_mesh(p).unwrap();
        let s = t.elapsed().as_secs_f64();
        println!("{}: {s:.3} s", p.file_name().unwrap().to_string_lossy());
        assert_eq!(r, m);
        assert!(s < 3.0, "{}: {s} s", p.display());
    }
}

/// Issue 46, item 5: a Gmsh 4.1 node block with `parametric = 1` whose nodes lack their
/// parametric coordinates was read (the coordinate lines accepted 3 to 6 fields whatever the
/// block said). Now the count must match the block: x y z plus entityDim coordinates.
#[test]
fn gmsh41_parametric_block_without_its_parametric_coordinates_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let without = SQUARE_41.replace("0 1 0 1.0\n0 0 0 0.0\n", "0 1 0\n0 0 0\n");
    assert_ne!(without, SQUARE_41);
    let p = write(d.path(), "noparam.msh", &without);
    assert_err(
        read_gmsh(&p),
        "noparam.msh:30:",
        "expected 4 fields (x y z and 1 parametric coordinates (parametric = 1",
    );
    // Parametric coordinates in a block that says it has none are refused too.
    let extra = SQUARE_41.replace("1 1 0\n1 0 0\n0.5 0.5 0\n", "1 1 0 0.5\n1 0 0\n0.5 0.5 0\n");
    assert_ne!(extra, SQUARE_41);
    let p = write(d.path(), "extra.msh", &extra);
    assert_err(read_gmsh(&p), "extra.msh:", "expected 3 fields (x y z), found 4");
}
