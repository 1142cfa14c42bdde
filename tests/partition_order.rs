//! The shared-cell pair ordering of the send block (de la Asunción et al. 2012, section
//! 6.2) on hand-built inputs: the paper's figure 2c, several cells shared by one pair,
//! cycles and three-way cells that fall back, and random inputs.

#![allow(unused_imports)]
use pycno::app::{scenario_mesh, PreparedMesh};
use pycno::mesh::NO_CELL;
use pycno::partition::order::{order_send_block, SendOrder};
use pycno::partition::{self, files, submesh, Submesh};
use pycno::physics::Model;
use pycno::scenario::{initial, Scenario};
use pycno::solver::layout::{check_slots, BOUNDARY};
use pycno::solver::{Backend, CpuBackend, Layout, StepContext};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::process::{Command, Output};

fn consecutive(pos: &[usize]) -> bool {
    pos.windows(2).all(|w| w[1] == w[0] + 1)
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
