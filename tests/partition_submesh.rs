//! Mesh partitioning (`pycno::partition`): the submesh invariants over many meshes and
//! rank counts, and a multi-rank run emulated in process that must match the one-rank run
//! bit for bit. The checks here are written apart from the library's own
//! (`partition::verify`), from the global topology and the owner map only, so a bug there
//! cannot hide one in the builder.

#![allow(unused_imports)]
use pycno::app::run::stored_cells;
use pycno::app::{scenario_mesh, PreparedMesh};
use pycno::mesh::NO_CELL;
use pycno::partition::order::{order_send_block, SendOrder};
use pycno::partition::{self, files, submesh, Submesh};
use pycno::physics::reconstruct::ACROSS_OPEN;
use pycno::physics::Model;
use pycno::scenario::{initial, Scenario};
use pycno::solver::layout::{check_slots, BOUNDARY};
use pycno::solver::{Backend, CpuBackend, Layout, StepContext};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::process::{Command, Output};

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
    let sc = Scenario::paper_benchmark(100);
    let (depth, state) = initial::evaluate(&sc, &pm.topo.cell_centroid).unwrap();
    let cells = stored_cells(&sc, &depth, &state);
    for s in subs {
        let lay: Layout<f32> = s.layout(&pm.topo, &depth, &cells, &sc.physics.reference()).unwrap();
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
    let sc = Scenario::paper_benchmark(1000);
    let (depth, state) = initial::evaluate(&sc, &pm.topo.cell_centroid).unwrap();
    let rest = sc.physics.reference();
    let a: Layout<f32> = s.layout(&pm.topo, &depth, &stored_cells(&sc, &depth, &state), &rest).unwrap();
    let b = Layout::<f32>::from_topology(&pm.topo, &depth, &state, &rest);
    assert_eq!((a.edge_cells, a.v1, a.v2, a.lo), (b.edge_cells, b.v1, b.v2, b.lo));
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

    let rest = s.physics.reference();
    let cells = stored_cells(&s, &depth, &state);
    let mut one = CpuBackend::new(params, Layout::<f32>::from_topology(&pm.topo, &depth, &state, &rest)).unwrap();
    for _ in 0..steps {
        one.process_edges(0..one.num_edges(), 0.0).unwrap();
        let (dt, _) = one.local_dt(s.physics.gamma).unwrap();
        one.update(StepContext { t: 0.0, dt }).unwrap();
    }
    let want: Vec<[f64; 8]> = (0..one.layout().n_owned).map(|c| one.layout().stored(c).to_array()).collect();

    for ranks in [3, 8] {
        let part = partition::partition(&pm.topo, ranks, 0).unwrap();
        let subs = &part.submeshes;
        let mut bs: Vec<CpuBackend<f32>> = subs
            .iter()
            .map(|sub| CpuBackend::new(params, sub.layout(&pm.topo, &depth, &cells, &rest).unwrap()).unwrap())
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
                // Every stored number: the records and the low parts.
                let (x, y) = (b.layout().stored(l).to_array(), want[g]);
                assert!(
                    x.iter().zip(&y).all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{ranks} ranks: cell {g}: {x:?} != {y:?}"
                );
            }
        }
    }
}

/// The cells within `steps` edge steps of `from` (not counting `from` itself), from scratch.
fn within(pm: &PreparedMesh, from: &BTreeSet<u32>, steps: usize) -> BTreeSet<u32> {
    let t = &pm.topo;
    let mut nb = vec![Vec::new(); t.num_cells()];
    for &[i, j] in &t.edge_cells {
        if j != NO_CELL {
            nb[i as usize].push(j);
            nb[j as usize].push(i);
        }
    }
    let mut seen = from.clone();
    let mut front: Vec<u32> = from.iter().copied().collect();
    for _ in 0..steps {
        let mut next = Vec::new();
        for c in front {
            for &o in &nb[c as usize] {
                if seen.insert(o) {
                    next.push(o);
                }
            }
        }
        front = next;
    }
    seen.difference(from).copied().collect()
}

/// Two rings of receive cells (second order, issue 21), checked from scratch on small meshes
/// and owner maps of every kind: each rank receives exactly the other ranks' cells within
/// two edge steps of its own, in its sources' send order; sends each neighbour exactly its
/// cells within two steps of that neighbour's; processes the same edges as with one ring,
/// the inner ones (first) between cells with no neighbour elsewhere; and every first-ring
/// cell (a receive cell beside an owned one) has its whole stencil on the rank: its three
/// neighbours local, its `across` pointing at them, its stencil the one-rank layout's bit for
/// bit.
#[test]
fn two_rings_receive_and_send_what_the_reconstruction_reads() {
    let sc = Scenario::paper_benchmark(100);
    let mut checked = 0;
    for (name, pm) in [("paper 500", paper(500)), ("holed 2000", holed(2000))] {
        let t = &pm.topo;
        let n = t.num_cells();
        let (depth, state) = initial::evaluate(&sc, &t.cell_centroid).unwrap();
        let cells = stored_cells(&sc, &depth, &state);
        let rest = sc.physics.reference();
        let one = Layout::<f32>::from_topology(t, &depth, &state, &rest);
        for ranks in [2usize, 3, 7] {
            let hashed: Vec<u32> =
                (0..n as u64).map(|c| ((c.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) % ranks as u64) as u32).collect();
            let metis = partition::metis::partition_cells(t, ranks).unwrap();
            for (kind, owner) in [("METIS", metis), ("hashed", hashed)] {
                let what = format!("{name}, {kind} owners, {ranks} ranks, two rings");
                let subs = submesh::build_rings(t, &owner, ranks, 0, 2).unwrap();
                partition::verify::verify(t, &subs).unwrap_or_else(|e| panic!("{what}: {e:#}"));
                let mine = |p: u32| -> BTreeSet<u32> { (0..n as u32).filter(|&c| owner[c as usize] == p).collect() };
                for s in &subs {
                    let p = s.rank;
                    assert_eq!(s.rings, 2);
                    let own = mine(p);
                    let local: HashMap<u32, usize> = s.global_cell.iter().enumerate().map(|(l, &g)| (g, l)).collect();
                    // The receive block: the cells within two steps, no more.
                    let recv: BTreeSet<u32> = s.global_cell[s.receive_block()].iter().copied().collect();
                    assert_eq!(recv, within(&pm, &own, 2), "{what}: rank {p}'s receive block");
                    let ring1 = within(&pm, &own, 1);
                    // Sends: to q, the owned cells within two steps of q's cells.
                    for d in &s.sends {
                        let got: BTreeSet<u32> = d.cells().map(|l| s.global_cell[l]).collect();
                        let want: BTreeSet<u32> = within(&pm, &mine(d.rank), 2).intersection(&own).copied().collect();
                        assert_eq!(got, want, "{what}: rank {p} -> {}", d.rank);
                        let q = &subs[d.rank as usize];
                        let r = q.recvs.iter().find(|r| r.rank == p).unwrap();
                        let sent: Vec<u32> = d.cells().map(|l| s.global_cell[l]).collect();
                        assert_eq!(&q.global_cell[r.range()], &sent[..], "{what}: {p} -> {} order", d.rank);
                    }
                    // Processed edges: those with an owned cell, the inner ones first.
                    let processed: BTreeSet<u32> = s.global_edge[s.pass_edges()].iter().copied().collect();
                    let want: BTreeSet<u32> = (0..t.num_edges() as u32)
                        .filter(|&e| t.edge_cells[e as usize].iter().any(|c| own.contains(c)))
                        .collect();
                    assert_eq!(processed, want, "{what}: rank {p}'s processed edges");
                    let beside = |c: u32| {
                        t.cell_edges[c as usize]
                            .iter()
                            .any(|&e| t.edge_cells[e as usize].iter().any(|&o| o != NO_CELL && !own.contains(&o)))
                    };
                    for (k, &e) in s.global_edge[..s.n_local_edges].iter().enumerate() {
                        let inner = t.edge_cells[e as usize].iter().all(|&c| c == NO_CELL || !beside(c));
                        assert_eq!(k < s.n_inner_edges, inner, "{what}: rank {p}: edge {e} in the wrong local range");
                    }
                    // The layout: every first-ring cell reconstructs as on one rank.
                    let lay: Layout<f32> = s.layout(t, &depth, &cells, &rest).unwrap();
                    check_slots(&lay).unwrap_or_else(|e| panic!("{what}: rank {p}: {e:#}"));
                    assert_eq!(lay.num_edges(), s.n_pass_edges);
                    for (l, &g) in s.global_cell.iter().enumerate() {
                        let first_ring = ring1.contains(&g);
                        let has_stencil = !lay.across[l].contains(&i32::MIN);
                        assert!(
                            has_stencil || !(l < s.n_owned || first_ring),
                            "{what}: rank {p}: cell {g} (owned or first ring) has no stencil"
                        );
                        // Whatever has a stencil (an outer-ring cell whose neighbours all
                        // happen to be in the first ring may), has its owner's.
                        if has_stencil {
                            for k in 0..3 {
                                let (a, b) = (lay.across[l][k], one.across[g as usize][k]);
                                if b < 0 {
                                    assert_eq!(a, b, "{what}: rank {p}: cell {g} slot {k}");
                                } else {
                                    assert!(a >= 0, "{what}: rank {p}: cell {g}'s neighbour {b} is not local");
                                    assert_eq!(
                                        s.global_cell[a as usize], b as u32,
                                        "{what}: rank {p}: cell {g} slot {k}"
                                    );
                                    assert!(local.contains_key(&(b as u32)));
                                }
                            }
                            assert_eq!(lay.stencil[l], one.stencil[g as usize], "{what}: rank {p}: cell {g}'s stencil");
                            checked += usize::from(first_ring);
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 1000, "only {checked} first-ring cells checked");
}

/// A one-ring partition's files are what they were before two rings existed (format
/// version 1, byte for byte the same layout), and both kinds read back as written.
#[test]
fn rank_files_of_one_and_two_rings_round_trip() {
    let pm = holed(2000);
    let owner = partition::metis::partition_cells(&pm.topo, 3).unwrap();
    for rings in [1, 2] {
        for s in submesh::build_rings(&pm.topo, &owner, 3, 77, rings).unwrap() {
            let bytes = files::encode(&s);
            let version = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
            assert_eq!(version, rings, "a partition of {rings} ring(s) is written in version {rings}");
            assert_eq!(files::decode(&bytes).unwrap(), s);
        }
    }
}

/// Two rings with open boundaries: a first-ring cell on an open boundary (its edge there is
/// one of the first ring's own, which the layout drops) is marked open in `across` as on its
/// owner, so its reconstruction uses the same ghost.
#[test]
fn first_ring_cells_on_open_boundaries_see_them_as_their_owner_does() {
    let sc = Scenario::from_json(
        r#"{ "name": "channel",
             "domain": { "outer": [[0, 0], [40, 0], [40, 4], [0, 4]], "outer_tags": ["", "sea", "", "river"] },
             "resolution": { "cells": 2000 },
             "bathymetry": { "type": "constant", "depth": 5.0 },
             "initial": { "type": "dam_break_x", "x0": 12.0, "interface_left": -2.0, "interface_right": -3.0, "surface": 0.0 },
             "time": { "end": 1.0 },
             "boundaries": { "river": { "type": "discharge", "layer1": 2.0, "layer2": 0 }, "sea": { "type": "open" } } }"#,
    )
    .unwrap();
    let pm = scenario_mesh(&sc).unwrap();
    let t = &pm.topo;
    let table = sc.boundary_table(&pm.mesh, t).unwrap();
    let (depth, state) = initial::evaluate(&sc, &t.cell_centroid).unwrap();
    let cells = stored_cells(&sc, &depth, &state);
    let rest = sc.physics.reference();
    let mut one = Layout::<f64>::from_topology(t, &depth, &state, &rest);
    one.set_boundaries(&t.edge_tag, &table);
    // Stripes across the channel's ends: every rank meets both open boundaries.
    let owner: Vec<u32> = t.cell_centroid.iter().map(|p| ((p[1] / 0.5) as u32) % 3).collect();
    let subs = submesh::build_rings(t, &owner, 3, 0, 2).unwrap();
    let mut open_in_ring = 0;
    for s in &subs {
        let mut lay: Layout<f64> = s.layout(t, &depth, &cells, &rest).unwrap();
        lay.set_boundaries(&s.local_topology(t).unwrap().edge_tag, &table);
        for (l, &g) in s.global_cell.iter().enumerate() {
            if !lay.across[l].contains(&i32::MIN) {
                for k in 0..3 {
                    let (a, b) = (lay.across[l][k], one.across[g as usize][k]);
                    assert_eq!(a < 0, b < 0, "rank {}: cell {g} slot {k}", s.rank);
                    if b < 0 {
                        assert_eq!(a, b, "rank {}: cell {g} slot {k}: another boundary kind", s.rank);
                        open_in_ring += usize::from(l >= s.n_owned && b == ACROSS_OPEN);
                    }
                }
            }
        }
    }
    assert!(open_in_ring > 0, "no first-ring cell met an open boundary: nothing tested");
}

/// `verify` (and so `pycno partition --check`) holds two-ring partitions to two rings: one
/// rank's submesh of one ring among two-ring ones, or a two-ring rank missing a second-ring
/// cell, is caught.
#[test]
fn verify_catches_a_rank_with_the_wrong_rings() {
    let pm = paper(2000);
    let owner = partition::metis::partition_cells(&pm.topo, 3).unwrap();
    let two = submesh::build_rings(&pm.topo, &owner, 3, 0, 2).unwrap();
    partition::verify::verify(&pm.topo, &two).unwrap();
    let one = submesh::build_rings(&pm.topo, &owner, 3, 0, 1).unwrap();
    partition::verify::verify(&pm.topo, &one).unwrap();
    let mut mixed = two.clone();
    mixed[1] = one[1].clone();
    let e = partition::verify::verify(&pm.topo, &mixed).unwrap_err();
    assert!(format!("{e:#}").contains("rings"), "{e:#}");
    // Two rings claimed over one ring's cells: the first ring has no stencil edges.
    let mut claimed = one.clone();
    for s in &mut claimed {
        s.rings = 2;
    }
    let e = partition::verify::verify(&pm.topo, &claimed).unwrap_err();
    assert!(format!("{e:#}").contains("of the first ring lacks some of its edges"), "{e:#}");
}
