//! Rank geometry files (`pycno::partition::geometry`, issue 22): what a rank of a run reads
//! instead of the global mesh. Written and read back equal, equal to the global mesh's
//! local topology (so the layout a rank builds from it is the one it built from the global
//! mesh), and every corruption or mismatch rejected.

use pycno::app::{scenario_mesh, PreparedMesh};
use pycno::partition::geometry::{self, RankGeometry};
use pycno::partition::{self, files, Submesh};
use pycno::scenario::Scenario;

fn paper(cells: u64) -> PreparedMesh {
    scenario_mesh(&Scenario::paper_benchmark(cells)).expect("paper mesh")
}

fn parts(pm: &PreparedMesh, ranks: usize) -> Vec<Submesh> {
    partition::partition(&pm.topo, ranks, pm.fingerprint()).unwrap().submeshes
}

fn build(pm: &PreparedMesh, s: &Submesh) -> RankGeometry {
    let (tags, segments) = (geometry::tag_lengths(&pm.topo), geometry::segment_tags(&pm.mesh));
    RankGeometry::build(&pm.mesh, &pm.topo, s, 0x1234, &tags, &segments).unwrap()
}

#[test]
fn written_and_read_back_equal_and_equal_to_the_global_meshs_part() {
    let pm = paper(3000);
    let subs = parts(&pm, 4);
    let dir = tempfile::tempdir().unwrap();
    for s in &subs {
        let g = build(&pm, s);
        geometry::write_geometry(dir.path(), &g).unwrap();
        let back = geometry::read_geometry(dir.path(), s.rank).unwrap();
        assert_eq!(back, g);
        back.fits(s).unwrap();
        // The local topology is the one a rank built from the global mesh, bit for bit.
        assert_eq!(back.topo, s.local_topology(&pm.topo).unwrap());
        assert_eq!(back.piece, s.owned_mesh(&pm.mesh));
        assert_eq!(back.mesh_fingerprint, pm.fingerprint());
    }
    // The owned cells of all pieces are the global mesh's cells, each once.
    let owned: usize = subs.iter().map(|s| s.n_owned).sum();
    assert_eq!(owned, pm.topo.num_cells());
}

#[test]
fn corrupted_truncated_or_mismatched_files_are_refused() {
    let pm = paper(2000);
    let subs = parts(&pm, 3);
    let g = build(&pm, &subs[1]);
    let bytes = g.encode();
    let mut flipped = bytes.clone();
    flipped[bytes.len() / 2] ^= 1;
    let e = RankGeometry::decode(&flipped).unwrap_err();
    assert!(format!("{e:#}").contains("checksum mismatch"), "{e:#}");
    let e = RankGeometry::decode(&bytes[..bytes.len() - 9]).unwrap_err();
    assert!(format!("{e:#}").contains("checksum mismatch"), "{e:#}");
    let e = RankGeometry::decode(b"PYCNOPRT\x01\0\0\0").unwrap_err();
    assert!(format!("{e:#}").contains("not a pycno rank geometry file"), "{e:#}");
    // Another rank's submesh, or the same rank of another partition, does not fit.
    let e = g.fits(&subs[0]).unwrap_err();
    assert!(format!("{e:#}").contains("do not belong to one partition"), "{e:#}");
    let other = parts(&pm, 2);
    assert!(g.fits(&other[1]).is_err());
    // A reference past the local cells, with a valid checksum, is refused too.
    let mut bad = g.clone();
    bad.topo.edge_cells[0][0] = bad.topo.num_cells() as u32;
    let e = RankGeometry::decode(&bad.encode()).unwrap_err();
    assert!(format!("{e:#}").contains("out of range"), "{e:#}");
    // A rank file without its geometry file: the error names the missing file.
    let dir = tempfile::tempdir().unwrap();
    files::write_rank(dir.path(), &subs[0]).unwrap();
    let e = geometry::read_geometry(dir.path(), 0).unwrap_err();
    assert!(format!("{e:#}").contains("rank_00000.geo"), "{e:#}");
}
