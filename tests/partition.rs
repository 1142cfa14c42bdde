//! Mesh partitioning (`pycno::partition`, `pycno partition`): the submesh invariants over
//! many meshes and rank counts, the shared-cell pair ordering on hand-built inputs (the
//! paper's figure 2c), a multi-rank run emulated in process that must match the one-rank
//! run bit for bit, the partition files with every corruption rejected, and the CLI.
//!
//! The checks here are written apart from the library's own (`partition::verify`), from the
//! global topology and the owner map only, so a bug there cannot hide one in the builder.

use pycno::app::{scenario_mesh, PreparedMesh};
use pycno::mesh::NO_CELL;
use pycno::partition::order::{order_send_block, SendOrder};
use pycno::partition::{self, files, submesh, Submesh};
use pycno::physics::Model;
use pycno::scenario::{initial, Scenario};
use pycno::solver::cpu::check_slots;
use pycno::solver::layout::BOUNDARY;
use pycno::solver::{Backend, CpuBackend, Layout, StepContext};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_pycno");
const RANKS: [usize; 12] = [2, 3, 4, 5, 7, 8, 12, 16, 24, 32, 48, 64];

fn paper(cells: u64) -> PreparedMesh {
    scenario_mesh(&Scenario::paper_benchmark(cells)).expect("paper mesh")
}

/// The paper's square with a square hole off centre: boundaries inside the domain too.
fn holed(cells: u64) -> PreparedMesh {
    let mut s = Scenario::paper_benchmark(cells);
    s.domain.as_mut().unwrap().holes = vec![vec![[-1.0, -2.0], [2.0, -2.0], [2.0, 1.0], [-1.0, 1.0]]];
    scenario_mesh(&s).expect("holed mesh")
}

/// Ranks owning a neighbour of each cell, other than its own: computed here from scratch.
fn neighbour_ranks(pm: &PreparedMesh, owner: &[u32]) -> Vec<BTreeSet<u32>> {
    let t = &pm.topo;
    let mut d = vec![BTreeSet::new(); t.num_cells()];
    for &[i, j] in &t.edge_cells {
        if j != NO_CELL && owner[i as usize] != owner[j as usize] {
            d[i as usize].insert(owner[j as usize]);
            d[j as usize].insert(owner[i as usize]);
        }
    }
    d
}

/// Are these positions consecutive integers?
fn consecutive(pos: &[usize]) -> bool {
    pos.windows(2).all(|w| w[1] == w[0] + 1)
}

/// Does the paper's pair chain work for these destination sets: no cell to three or more
/// ranks, and the distinct pairs form disjoint simple paths?
fn chain_works(dests: &[&BTreeSet<u32>]) -> bool {
    let mut pairs = BTreeSet::new();
    for d in dests {
        match d.len() {
            0 | 1 => {}
            2 => {
                let v: Vec<u32> = d.iter().copied().collect();
                pairs.insert((v[0], v[1]));
            }
            _ => return false,
        }
    }
    let mut degree: BTreeMap<u32, usize> = BTreeMap::new();
    let mut comp: BTreeMap<u32, u32> = BTreeMap::new();
    fn root(c: &BTreeMap<u32, u32>, mut x: u32) -> u32 {
        while let Some(&p) = c.get(&x) {
            if p == x {
                break;
            }
            x = p;
        }
        x
    }
    for &(a, b) in &pairs {
        for x in [a, b] {
            *degree.entry(x).or_default() += 1;
            comp.entry(x).or_insert(x);
        }
        let (ra, rb) = (root(&comp, a), root(&comp, b));
        if ra == rb {
            return false; // a cycle
        }
        comp.insert(ra, rb);
    }
    degree.values().all(|&d| d <= 2)
}

/// Every invariant of a partition, checked against the global topology and `owner`.
/// Returns the number of non-contiguous destinations found (already compared with what the
/// submeshes report).
#[track_caller]
fn check_partition(pm: &PreparedMesh, owner: &[u32], subs: &[Submesh], what: &str) -> usize {
    let t = &pm.topo;
    let ranks = subs.len();
    let dests = neighbour_ranks(pm, owner);

    // Every cell owned by exactly one rank, the one `owner` names.
    let mut owned_by = vec![Vec::new(); t.num_cells()];
    for s in subs {
        for &g in &s.global_cell[..s.n_owned] {
            owned_by[g as usize].push(s.rank);
        }
    }
    for (c, o) in owned_by.iter().enumerate() {
        assert_eq!(o, &vec![owner[c]], "{what}: cell {c} owned by {o:?}");
    }

    let mut non_contiguous = 0;
    for s in subs {
        let p = s.rank;
        assert_eq!(s.ranks as usize, ranks);
        let local: HashMap<u32, usize> = s.global_cell.iter().enumerate().map(|(l, &g)| (g, l)).collect();
        assert_eq!(local.len(), s.num_cells(), "{what}: rank {p} lists a cell twice");

        // Blocks: interior cells have no neighbour elsewhere, send-block cells do.
        for (l, &g) in s.global_cell[..s.n_owned].iter().enumerate() {
            assert_eq!(
                l >= s.n_interior,
                !dests[g as usize].is_empty(),
                "{what}: rank {p} cell {g} in the wrong block"
            );
        }

        // Each destination gets exactly the owned cells with a neighbour there.
        let mut want: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
        for &g in &s.global_cell[..s.n_owned] {
            for &q in &dests[g as usize] {
                want.entry(q).or_default().insert(g);
            }
        }
        let got: BTreeMap<u32, BTreeSet<u32>> =
            s.sends.iter().map(|d| (d.rank, d.cells().map(|l| s.global_cell[l]).collect())).collect();
        assert_eq!(got, want, "{what}: rank {p} sends the wrong cells");

        // Send of p to q == q's receive from p, cell by cell; contiguity as reported.
        for d in &s.sends {
            let positions: Vec<usize> = d.cells().collect();
            assert!(positions.iter().all(|&l| s.send_block().contains(&l)));
            let sent: Vec<u32> = positions.iter().map(|&l| s.global_cell[l]).collect();
            let q = &subs[d.rank as usize];
            let r = q
                .recvs
                .iter()
                .find(|r| r.rank == p)
                .unwrap_or_else(|| panic!("{what}: {} gets nothing from {p}", d.rank));
            assert_eq!(&q.global_cell[r.range()], &sent[..], "{what}: {p} -> {} differ", d.rank);
            let contiguous = consecutive(&positions);
            assert_eq!(d.range().is_some(), contiguous, "{what}: {p} -> {}: range and positions disagree", d.rank);
            non_contiguous += usize::from(!contiguous);
        }
        // The receive block is exactly the receive ranges, by ascending source, and each
        // source sends to this rank.
        let mut at = s.n_owned;
        for r in &s.recvs {
            assert_eq!(r.start as usize, at);
            at += r.len as usize;
            assert!(subs[r.rank as usize].sends.iter().any(|d| d.rank == p));
        }
        assert_eq!(at, s.num_cells());
        assert!(s.recvs.windows(2).all(|w| w[0].rank < w[1].rank));

        // Where the paper's chain works, nothing falls back.
        let comm: Vec<&BTreeSet<u32>> = s.global_cell[s.send_block()].iter().map(|&g| &dests[g as usize]).collect();
        if chain_works(&comm) {
            assert_eq!(s.fallback_destinations(), 0, "{what}: rank {p}: the chain works but it fell back");
        }

        // Edges: ranges, one owned cell on each communication edge, global orientation.
        for (k, &e) in s.global_edge.iter().enumerate() {
            let [i, j] = t.edge_cells[e as usize];
            let own = |c: u32| c != NO_CELL && owner[c as usize] == p;
            if k < s.n_local_edges {
                assert!(own(i) && (j == NO_CELL || own(j)), "{what}: rank {p}: local edge {e} touches another rank");
            } else {
                assert!(
                    j != NO_CELL && own(i) != own(j),
                    "{what}: rank {p}: communication edge {e} has not exactly one owned cell"
                );
                let other = if own(i) { j } else { i };
                assert!(
                    local[&other] >= s.n_owned,
                    "{what}: rank {p}: edge {e}'s other cell is not in the receive block"
                );
            }
        }
    }

    // Every global edge is processed by the ranks that own its cells and no other.
    let mut by: Vec<BTreeSet<u32>> = vec![BTreeSet::new(); t.num_edges()];
    for s in subs {
        for &e in &s.global_edge {
            assert!(by[e as usize].insert(s.rank), "{what}: rank {} lists edge {e} twice", s.rank);
        }
    }
    for (e, &[i, j]) in t.edge_cells.iter().enumerate() {
        let mut want = BTreeSet::from([owner[i as usize]]);
        if j != NO_CELL {
            want.insert(owner[j as usize]);
        }
        assert_eq!(by[e], want, "{what}: edge {e}");
    }

    let reported: usize = subs.iter().map(|s| s.fallback_destinations()).sum();
    assert_eq!(reported, non_contiguous, "{what}: fallbacks reported {reported}, found {non_contiguous}");
    non_contiguous
}

/// Each rank's layout passes the solver's slot check and maps to the global edges.
#[track_caller]
fn check_layouts(pm: &PreparedMesh, subs: &[Submesh], what: &str) {
    let (depth, state) = initial::evaluate(&Scenario::paper_benchmark(100), &pm.topo.cell_centroid).unwrap();
    for s in subs {
        let lay: Layout<f32> = s.layout(&pm.topo, &depth, &state).unwrap();
        check_slots(&lay).unwrap_or_else(|e| panic!("{what}: rank {}: {e:#}", s.rank));
        assert_eq!((lay.n_owned, lay.n_local_edges, lay.num_cells()), (s.n_owned, s.n_local_edges, s.num_cells()));
        for (k, &e) in s.global_edge.iter().enumerate() {
            let [i, j] = pm.topo.edge_cells[e as usize];
            let [si, sj] = pm.topo.edge_slots[e as usize];
            let [li, lj, lsi, lsj] = lay.edge_cells[k];
            assert_eq!(s.global_cell[li as usize], i, "{what}: orientation");
            assert_eq!(lsi, si as i32);
            if j == NO_CELL {
                assert_eq!(lj, BOUNDARY);
            } else {
                assert_eq!((s.global_cell[lj as usize], lsj), (j, sj as i32));
            }
        }
        for (l, &g) in s.global_cell.iter().enumerate() {
            assert_eq!(lay.v2[l][3], pm.topo.cell_area[g as usize] as f32);
        }
    }
}

#[test]
fn metis_partitions_keep_every_invariant() {
    let meshes = [
        ("paper 500", paper(500)),
        ("paper 2000", paper(2000)),
        ("paper 5000", paper(5000)),
        ("holed 3000", holed(3000)),
    ];
    let mut total_fallbacks = 0;
    for (name, pm) in &meshes {
        let fp = files::mesh_fingerprint(&pm.mesh);
        for ranks in RANKS {
            let what = format!("{name} cells into {ranks} ranks");
            let part = partition::partition(&pm.topo, ranks, fp).unwrap();
            assert_eq!(part.submeshes.len(), ranks);
            total_fallbacks += check_partition(pm, &part.owner, &part.submeshes, &what);
            check_layouts(pm, &part.submeshes, &what);
            partition::verify::verify(&pm.topo, &part.submeshes).unwrap();
        }
    }
    eprintln!("fallback destinations over all METIS partitions: {total_fallbacks}");
}

/// Owner maps METIS would never make (scattered, striped), so that cells going to three
/// ranks, cycles and branches all occur: the fallback must keep every invariant.
#[test]
fn scattered_partitions_fall_back_and_keep_every_invariant() {
    let pm = holed(2000);
    let n = pm.topo.num_cells();
    let mut total = 0;
    for ranks in [3usize, 4, 7, 16] {
        let hashed: Vec<u32> =
            (0..n as u64).map(|c| ((c.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) % ranks as u64) as u32).collect();
        let striped: Vec<u32> = pm
            .topo
            .cell_centroid
            .iter()
            .map(|p| ((((p[0] + 5.0) * 3.0) as i64 + ((p[1] + 5.0) * 2.0) as i64) % ranks as i64) as u32)
            .collect();
        for (kind, owner) in [("hashed", hashed), ("striped", striped)] {
            let what = format!("{kind} owners, {ranks} ranks");
            let subs = submesh::build(&pm.topo, &owner, ranks, 0).unwrap();
            total += check_partition(&pm, &owner, &subs, &what);
            check_layouts(&pm, &subs, &what);
        }
    }
    assert!(total > 0, "these partitions should need some fallbacks");
}

#[test]
fn one_rank_is_the_whole_mesh_in_global_order() {
    let pm = paper(1000);
    let part = partition::partition(&pm.topo, 1, 7).unwrap();
    let s = &part.submeshes[0];
    assert_eq!(s.global_cell, (0..pm.topo.num_cells() as u32).collect::<Vec<_>>());
    assert_eq!(
        (s.n_interior, s.n_owned, s.n_local_edges),
        (pm.topo.num_cells(), pm.topo.num_cells(), pm.topo.num_edges())
    );
    assert!(s.sends.is_empty() && s.recvs.is_empty());
    let (depth, state) = initial::evaluate(&Scenario::paper_benchmark(1000), &pm.topo.cell_centroid).unwrap();
    let a: Layout<f32> = s.layout(&pm.topo, &depth, &state).unwrap();
    let b = Layout::<f32>::from_topology(&pm.topo, &depth, &state);
    assert_eq!((a.edge_cells, a.v1, a.v2), (b.edge_cells, b.v1, b.v2));
}

#[test]
fn the_same_input_gives_the_same_partition() {
    let pm = holed(3000);
    let a = partition::partition(&pm.topo, 12, 1).unwrap();
    let b = partition::partition(&pm.topo, 12, 1).unwrap();
    assert_eq!(a.owner, b.owner);
    assert_eq!(a.submeshes, b.submeshes);
}

#[test]
fn bad_rank_counts_are_errors() {
    let pm = paper(500);
    let n = pm.topo.num_cells();
    let e = partition::partition(&pm.topo, 0, 0).err().expect("0 ranks");
    assert!(format!("{e:#}").contains("at least 1"), "{e:#}");
    let e = partition::partition(&pm.topo, n + 1, 0).err().expect("too many ranks");
    assert!(format!("{e:#}").contains("one rank per cell"), "{e:#}");
    let e = submesh::build(&pm.topo, &vec![5; n], 3, 0).expect_err("owner out of range");
    assert!(format!("{e:#}").contains("outside 0..3"), "{e:#}");
}

/// The paper's step loop on every rank's layout with the halo exchange done by copying,
/// non-communication edges before communication edges as in Algorithm 2: after some steps
/// every owned cell must hold exactly, bit for bit, the one-rank result.
#[test]
fn a_multi_rank_run_matches_one_rank_bit_for_bit() {
    let s = Scenario::paper_benchmark(3000);
    let pm = scenario_mesh(&s).unwrap();
    let (depth, state) = initial::evaluate(&s, &pm.topo.cell_centroid).unwrap();
    let params = Model::<f32>::new(&s.physics).unwrap();
    let steps = 30;

    let mut one = CpuBackend::new(params, Layout::<f32>::from_topology(&pm.topo, &depth, &state)).unwrap();
    for _ in 0..steps {
        one.process_edges(0..one.num_edges(), 0.0).unwrap();
        let (dt, _) = one.local_dt(s.physics.gamma).unwrap();
        one.update(StepContext { t: 0.0, dt }).unwrap();
    }
    let want = one.layout().v1.clone();

    for ranks in [3, 8] {
        let part = partition::partition(&pm.topo, ranks, 0).unwrap();
        let subs = &part.submeshes;
        let mut bs: Vec<CpuBackend<f32>> = subs
            .iter()
            .map(|sub| CpuBackend::new(params, sub.layout(&pm.topo, &depth, &state).unwrap()).unwrap())
            .collect();
        for _ in 0..steps {
            for b in bs.iter_mut() {
                let (nl, ne) = (b.num_local_edges(), b.num_edges());
                b.process_edges(0..nl, 0.0).unwrap();
                b.process_edges(nl..ne, 0.0).unwrap();
            }
            let dt = bs.iter_mut().map(|b| b.local_dt(s.physics.gamma).unwrap().0).fold(f64::INFINITY, f64::min);
            bs.iter_mut().for_each(|b| b.update(StepContext { t: 0.0, dt }).unwrap());
            // Exchange: each receive range gets its source's send list, in order.
            for q in 0..ranks {
                for r in subs[q].recvs.clone() {
                    let p = r.rank as usize;
                    let send = subs[p].sends.iter().find(|d| d.rank == q as u32).unwrap();
                    let words: Vec<([f32; 4], [f32; 4])> =
                        send.cells().map(|l| (bs[p].layout().v1[l], bs[p].layout().v2[l])).collect();
                    let lay = bs[q].layout_mut();
                    for (k, (a, b)) in r.range().zip(words) {
                        lay.v1[k] = a;
                        lay.v2[k] = b;
                    }
                }
            }
        }
        for (sub, b) in subs.iter().zip(&bs) {
            for l in 0..sub.n_owned {
                let g = sub.global_cell[l] as usize;
                let (x, y) = (b.layout().v1[l], want[g]);
                assert!(
                    x.iter().zip(&y).all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{ranks} ranks: cell {g}: {x:?} != {y:?}"
                );
            }
        }
    }
}

// ------------------------------------------------------------ the pair ordering, by hand

fn order(cells: &[(u32, &[u32])]) -> SendOrder {
    order_send_block(cells)
}

fn dest_cells(s: &SendOrder, d: u32) -> Vec<u32> {
    let (_, runs) = s.dests.iter().find(|(r, _)| *r == d).unwrap();
    runs.iter().flat_map(|r| r.range()).map(|p| s.order[p]).collect()
}

/// Figure 2c: rank 4 shares one cell with each of the pairs (0,1), (1,2), (2,3) and (5,6),
/// given here out of order; the paper chains them into 0, 1, 2, 3 and 5, 6.
#[test]
fn figure_2c_pairs_are_chained_at_the_junctions() {
    let cells: &[(u32, &[u32])] = &[
        (1, &[3, 2]),
        (2, &[6]),
        (3, &[1]),
        (4, &[6, 5]),
        (5, &[0]),
        (6, &[2, 1]),
        (7, &[3]),
        (8, &[2]),
        (9, &[1, 0]),
        (10, &[5]),
        (11, &[0]),
        (12, &[2]),
    ];
    let s = order(cells);
    // [only 0] [0,1] [only 1] [1,2] [only 2] [2,3] [only 3] [only 5] [5,6] [only 6]
    assert_eq!(s.order, vec![5, 11, 9, 3, 6, 8, 12, 1, 7, 10, 4, 2]);
    assert_eq!(s.fallback_destinations(), 0);
    assert_eq!(dest_cells(&s, 0), vec![5, 11, 9], "the cell shared with 1 ends 0's range");
    assert_eq!(dest_cells(&s, 1), vec![9, 3, 6], "1's range starts with the (0,1) cell, ends with the (1,2) cell");
    assert_eq!(dest_cells(&s, 2), vec![6, 8, 12, 1]);
    assert_eq!(dest_cells(&s, 3), vec![1, 7]);
    assert_eq!(dest_cells(&s, 5), vec![10, 4]);
    assert_eq!(dest_cells(&s, 6), vec![4, 2]);
    let ranges: Vec<(u32, u32, u32)> = s.dests.iter().map(|(d, r)| (*d, r[0].start, r[0].len)).collect();
    assert_eq!(ranges, vec![(0, 0, 3), (1, 2, 3), (2, 4, 4), (3, 7, 2), (5, 9, 2), (6, 10, 2)]);
}

#[test]
fn several_cells_shared_by_one_pair_stay_contiguous() {
    let s = order(&[(1, &[0]), (2, &[0, 1]), (3, &[1]), (4, &[0, 1]), (5, &[0, 1]), (6, &[1])]);
    assert_eq!(s.order, vec![1, 2, 4, 5, 3, 6]);
    assert_eq!(s.fallback_destinations(), 0);
}

#[test]
fn cycles_and_three_way_cells_fall_back_on_one_destination() {
    // A cycle 0-1-2-0: no line of intervals realises it.
    let cyc = order(&[(1, &[0, 1]), (2, &[1, 2]), (3, &[0, 2]), (4, &[0]), (5, &[1]), (6, &[2])]);
    assert_eq!(cyc.fallback_destinations(), 1, "{cyc:?}");
    // A cell going to three ranks that all have cells of their own.
    let three = order(&[(1, &[0, 1, 2]), (2, &[0]), (3, &[1]), (4, &[2]), (5, &[2])]);
    assert_eq!(three.fallback_destinations(), 1, "{three:?}");
    assert_eq!(three.unchained, vec![0], "the fewest cells, then the lowest rank");
    for s in [&cyc, &three] {
        for (d, runs) in &s.dests {
            assert!(runs.len() <= 2, "destination {d}: {runs:?}");
        }
    }
}

/// Random inputs: the order is a permutation, each destination gets exactly its cells,
/// the reported count is the number of non-contiguous destinations, and inputs built from
/// disjoint paths never fall back.
#[test]
fn random_inputs_keep_the_invariants() {
    let mut seed = 12345u64;
    let mut rnd = |n: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    for case in 0..400 {
        let paths = case % 2 == 0;
        let k = 2 + rnd(8) as u32;
        let mut cells: Vec<(u32, Vec<u32>)> = Vec::new();
        let perm: Vec<u32> = {
            let mut v: Vec<u32> = (0..k).collect();
            for i in (1..v.len()).rev() {
                v.swap(i, rnd(i as u64 + 1) as usize);
            }
            v
        };
        for id in 0..(3 + rnd(40) as u32) {
            let d: Vec<u32> = if paths {
                // Chains along `perm`, cut every third link: pairs only of path neighbours.
                let a = rnd(k as u64) as usize;
                if rnd(3) == 0 && a + 1 < k as usize && a % 3 != 2 {
                    vec![perm[a], perm[a + 1]]
                } else {
                    vec![perm[a]]
                }
            } else {
                let mut d: Vec<u32> = (0..1 + rnd(3)).map(|_| rnd(k as u64) as u32).collect();
                d.sort_unstable();
                d.dedup();
                d
            };
            cells.push((1000 - id, d));
        }
        let input: Vec<(u32, &[u32])> = cells.iter().map(|(i, d)| (*i, d.as_slice())).collect();
        let s = order(&input);
        let mut sorted = s.order.clone();
        sorted.sort_unstable();
        let mut ids: Vec<u32> = cells.iter().map(|c| c.0).collect();
        ids.sort_unstable();
        assert_eq!(sorted, ids, "case {case}: not a permutation");
        let mut non_contiguous = 0;
        for (d, runs) in &s.dests {
            let pos: Vec<usize> = runs.iter().flat_map(|r| r.range()).collect();
            let got: BTreeSet<u32> = pos.iter().map(|&p| s.order[p]).collect();
            let want: BTreeSet<u32> = cells.iter().filter(|c| c.1.contains(d)).map(|c| c.0).collect();
            assert_eq!(got, want, "case {case}: destination {d}");
            assert!(runs.iter().all(|r| r.len > 0));
            assert!(pos.windows(2).all(|w| w[0] < w[1]), "case {case}: runs out of order");
            non_contiguous += usize::from(!consecutive(&pos));
        }
        assert_eq!(s.fallback_destinations(), non_contiguous, "case {case}");
        if paths {
            assert_eq!(non_contiguous, 0, "case {case}: {cells:?} -> {s:?}");
        }
    }
}

// ------------------------------------------------------------ files

fn written(ranks: usize) -> (tempfile::TempDir, PreparedMesh, Vec<Submesh>, u64) {
    let pm = paper(2000);
    let fp = files::mesh_fingerprint(&pm.mesh);
    let dir = tempfile::tempdir().unwrap();
    let part = partition::partition(&pm.topo, ranks, fp).unwrap();
    for s in &part.submeshes {
        files::write_rank(dir.path(), s).unwrap();
    }
    (dir, pm, part.submeshes, fp)
}

#[track_caller]
fn rejected(dir: &Path, rank: u32, fp: u64, ranks: u32, words: &[&str]) {
    let e = files::read_rank(dir, rank, fp, ranks).expect_err("should be rejected");
    let msg = format!("{e:#}");
    assert!(msg.contains(&format!("rank_{rank:05}.bin")), "the error should name the file: {msg}");
    for w in words {
        assert!(msg.contains(w), "expected {w:?} in: {msg}");
    }
}

#[test]
fn rank_files_read_back_equal() {
    let (dir, _, subs, fp) = written(5);
    for s in &subs {
        assert_eq!(&files::read_rank(dir.path(), s.rank, fp, 5).unwrap(), s);
    }
}

#[test]
fn corrupted_rank_files_are_rejected() {
    let (dir, pm, _, fp) = written(4);
    let path = files::rank_file(dir.path(), 2);
    let good = std::fs::read(&path).unwrap();

    // Any single flipped byte: header, data or the checksum itself.
    for at in [13, 30, 70, good.len() / 2, good.len() - 5, good.len() - 1] {
        let mut b = good.clone();
        b[at] ^= 0x40;
        std::fs::write(&path, &b).unwrap();
        rejected(dir.path(), 2, fp, 4, &["checksum"]);
    }
    // Truncated anywhere.
    for len in [0, 7, 40, good.len() / 2, good.len() - 1] {
        std::fs::write(&path, &good[..len]).unwrap();
        let e = files::read_rank(dir.path(), 2, fp, 4).expect_err("truncated");
        let msg = format!("{e:#}");
        assert!(msg.contains("rank_00002.bin") && (msg.contains("truncated") || msg.contains("checksum")), "{msg}");
    }
    // Another format version, even with a valid checksum.
    let mut b = good.clone();
    b[8..12].copy_from_slice(&(files::FORMAT_VERSION + 1).to_le_bytes());
    let n = b.len();
    let crc = crc32fast::hash(&b[..n - 4]);
    b[n - 4..].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(&path, &b).unwrap();
    rejected(dir.path(), 2, fp, 4, &["version"]);
    // Not a partition file.
    std::fs::write(&path, b"{\"hello\": 1}\n").unwrap();
    rejected(dir.path(), 2, fp, 4, &["not a pycno partition file"]);

    std::fs::write(&path, &good).unwrap();
    files::read_rank(dir.path(), 2, fp, 4).unwrap();
    // Another mesh, another rank count, a missing rank.
    let other = files::mesh_fingerprint(&paper(1000).mesh);
    assert_ne!(other, fp);
    rejected(dir.path(), 2, other, 4, &["another mesh"]);
    rejected(dir.path(), 2, fp, 8, &["4 ranks"]);
    rejected(dir.path(), 7, fp, 8, &["cannot read"]);
    // A file of the right mesh but for the other rank number.
    std::fs::copy(files::rank_file(dir.path(), 1), &path).unwrap();
    rejected(dir.path(), 2, fp, 4, &["holds rank 1"]);
    // A submesh that is not this mesh's is caught when the layout is built.
    let mut s = files::read_rank(dir.path(), 1, fp, 4).unwrap();
    s.global_edges += 1;
    assert!(s.local_topology(&pm.topo).is_err());
}

// ------------------------------------------------------------ CLI

fn pycno(cwd: &Path, args: &[&str]) -> Output {
    Command::new(BIN).args(args).current_dir(cwd).env("RUST_BACKTRACE", "0").output().expect("cannot start pycno")
}

#[track_caller]
fn cli_ok(cwd: &Path, args: &[&str]) -> String {
    let o = pycno(cwd, args);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "pycno {args:?} failed:\n{out}\n{}", String::from_utf8_lossy(&o.stderr));
    out
}

#[track_caller]
fn cli_fails(cwd: &Path, args: &[&str], words: &[&str]) {
    let o = pycno(cwd, args);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "pycno {args:?}: exit {:?}\n{err}", o.status.code());
    assert!(!err.contains("panicked"), "pycno {args:?} panicked:\n{err}");
    for w in words {
        assert!(err.contains(w), "pycno {args:?}: expected {w:?} in:\n{err}");
    }
}

#[test]
fn cli_writes_a_partition_directory_and_checks_it() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    let out = cli_ok(cwd, &["partition", "--cells", "2000", "--ranks", "6", "--out", "part"]);
    assert!(out.contains("fallback destinations"), "{out}");
    let m: Value = serde_json::from_str(&std::fs::read_to_string(cwd.join("part/manifest.json")).unwrap()).unwrap();
    for key in [
        "ranks",
        "cells",
        "edge_cut",
        "imbalance",
        "communication_cells",
        "fallback_destinations",
        "seconds",
        "format_version",
        "mesh_fingerprint",
        "bytes_per_step",
        "per_rank",
    ] {
        assert!(m.get(key).is_some(), "manifest lacks {key}: {m}");
    }
    assert_eq!(m["ranks"], 6);
    assert!(m["edge_cut"].as_u64().unwrap() > 0 && m["imbalance"].as_f64().unwrap() >= 1.0);
    let per_rank = m["per_rank"].as_array().unwrap();
    assert_eq!(per_rank.len(), 6);
    for (r, pr) in per_rank.iter().enumerate() {
        for key in ["cells", "neighbours", "bytes_sent", "bytes_received", "fallback_destinations"] {
            assert!(pr.get(key).is_some(), "per_rank lacks {key}");
        }
        let file = files::rank_file(&cwd.join("part"), r as u32);
        assert_eq!(pr["file_bytes"].as_u64().unwrap(), std::fs::metadata(&file).unwrap().len());
    }
    assert!(cwd.join("part/partition.vtu").exists());
    let cells: u64 = per_rank.iter().map(|r| r["cells"].as_u64().unwrap()).sum();
    assert_eq!(cells, m["cells"].as_u64().unwrap());
    cli_ok(cwd, &["partition", "--cells", "2000", "--check", "part"]);

    // Into fewer ranks in the same directory: the old rank files go.
    cli_ok(cwd, &["partition", "--cells", "2000", "--ranks", "2", "--out", "part"]);
    assert!(!files::rank_file(&cwd.join("part"), 2).exists());
    cli_ok(cwd, &["partition", "--cells", "2000", "--check", "part", "--ranks", "2"]);

    // Checking against another mesh, or with a damaged file.
    cli_fails(cwd, &["partition", "--cells", "1000", "--check", "part"], &["another mesh"]);
    let f = files::rank_file(&cwd.join("part"), 1);
    let mut b = std::fs::read(&f).unwrap();
    b.truncate(b.len() - 3);
    std::fs::write(&f, &b).unwrap();
    cli_fails(cwd, &["partition", "--cells", "2000", "--check", "part"], &["rank_00001.bin", "checksum"]);
    cli_fails(cwd, &["partition", "--cells", "2000", "--check", "nowhere"], &["manifest.json"]);
}

#[test]
fn cli_partitions_a_mesh_file_into_one_rank() {
    let tmp = tempfile::tempdir().unwrap();
    let mesh = Path::new(env!("CARGO_MANIFEST_DIR")).join("meshes/channel_v41.msh");
    cli_ok(tmp.path(), &["partition", mesh.to_str().unwrap(), "--ranks", "1", "--out", "one", "--no-vtk"]);
    assert!(!tmp.path().join("one/partition.vtu").exists());
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(tmp.path().join("one/manifest.json")).unwrap()).unwrap();
    assert_eq!(
        (m["ranks"].as_u64(), m["edge_cut"].as_u64(), m["fallback_destinations"].as_u64()),
        (Some(1), Some(0), Some(0))
    );
}

#[test]
fn cli_rejects_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    cli_fails(cwd, &["partition", "--cells", "500", "--ranks", "0", "--out", "p"], &["--ranks", "at least 1"]);
    cli_fails(cwd, &["partition", "--cells", "500", "--ranks", "100000", "--out", "p"], &["--ranks 100000", "cells"]);
    cli_fails(cwd, &["partition", "missing.msh", "--ranks", "2", "--out", "p"], &["missing.msh"]);
    let mesh = Path::new(env!("CARGO_MANIFEST_DIR")).join("meshes/channel_v41.msh");
    cli_fails(
        cwd,
        &["partition", mesh.to_str().unwrap(), "--cells", "100", "--ranks", "2", "--out", "p"],
        &["--cells"],
    );
    assert!(!cwd.join("p").exists(), "a failed command wrote a partition");
    // Usage errors are clap's (exit 2).
    let o = pycno(cwd, &["partition", "--cells", "500", "--ranks", "2"]);
    assert_eq!(o.status.code(), Some(2));
}
