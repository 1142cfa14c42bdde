//! Tiles of the second order's fused reconstruction and edge pass (`tile2` in
//! `kernels/order2.cu`): a CUDA block takes a tile, reconstructs the cells its edges touch into
//! shared memory and then takes its edges, so that the edge values never reach device memory.
//! Made once at set-up from the layout's edges.
//!
//! Each edge range the edge pass asks for separately (on several ranks the inner edges, whose
//! cells need no halo, and then the others) gets tiles of its own. Within a range the edges go
//! in the order of their lower cell, and a tile takes edges until it holds `cap` edges or its
//! cells would exceed `cap` (a block of `cap` threads then reconstructs one cell and takes one
//! edge per thread). A cell next to two tiles is reconstructed in both: 14% more
//! reconstructions than cells with tiles of 256 on the paper benchmark's mesh (19% with 128),
//! for no edge values written or read.

use std::ops::Range;

/// The tiles of a layout's edges, in the arrays `TileArrays` of `kernels/order2.cu` reads:
/// each tile has `cap` places in each array (tile `k` at `k * cap`), so that a block finds its
/// tile's entries with no count or offset loaded first, and a place past the tile's cells or
/// edges holds -1 in its first number.
#[derive(Clone, Debug)]
pub struct Tiles<T> {
    /// The places of each tile, and the most cells and edges a tile holds.
    pub cap: usize,
    /// Per place, a cell the tile reconstructs and what lies across its three slots (the
    /// layout's `across`): the reconstruction's first loads, in one.
    pub cells: Vec<[i32; 4]>,
    /// Per place, an edge the tile takes: the layout's `edge_cells` entry.
    pub tec: Vec<[i32; 4]>,
    /// Each edge's two cells' places in its tile (a boundary edge: its cell's twice).
    pub tloc: Vec<[i32; 2]>,
    /// Each edge's normal times length, the layout's `edge_normal` entry.
    pub tnl: Vec<[T; 2]>,
    /// Which tiles take which edges: all the backend keeps once the arrays are uploaded.
    pub cover: TileCover,
}

/// The edge ranges of [`Tiles::build`], and the tiles of each: `tiles[k]` covers the edges
/// `ranges[k]`.
#[derive(Clone, Debug, Default)]
pub struct TileCover {
    pub ranges: Vec<Range<usize>>,
    pub tiles: Vec<Range<usize>>,
}

impl TileCover {
    /// The tiles that cover exactly the edges `edges` (a union of consecutive ranges), if any;
    /// none for no edges (one rank's inner edges are all of them, its others none).
    pub fn covering(&self, edges: &Range<usize>) -> Option<Range<usize>> {
        if edges.is_empty() {
            return Some(0..0);
        }
        let a = self.ranges.iter().position(|r| r.start == edges.start)?;
        let b = self.ranges.iter().position(|r| r.end == edges.end)?;
        (a <= b).then(|| self.tiles[a].start..self.tiles[b].end)
    }
}

impl<T: Copy + Default> Tiles<T> {
    /// Tiles of at most `cap` edges and `cap` cells over the edges of each range between
    /// consecutive `splits` (e.g. `[0, n_inner_edges, n_edges]`; empty ranges are skipped).
    pub fn build(
        edge_cells: &[[i32; 4]],
        edge_normal: &[[T; 2]],
        across: &[[i32; 3]],
        splits: &[usize],
        cap: usize,
    ) -> Self {
        assert!(cap >= 2, "a tile takes at least one edge's two cells");
        let mut t = Tiles {
            cap,
            cells: Vec::new(),
            tec: Vec::new(),
            tloc: Vec::new(),
            tnl: Vec::new(),
            cover: TileCover::default(),
        };
        // place[c]: c's place in the open tile, or -1.
        let mut place = vec![-1i32; across.len()];
        let mut open: Vec<i32> = Vec::new();
        let mut edges_open = 0usize;
        for w in splits.windows(2) {
            let r = w[0]..w[1];
            if r.is_empty() {
                continue;
            }
            let first_tile = t.len();
            let mut order: Vec<usize> = r.clone().collect();
            let lower = |e: usize| {
                let [i, j, ..] = edge_cells[e];
                if j >= 0 {
                    i.min(j)
                } else {
                    i
                }
            };
            order.sort_by_key(|&e| (lower(e), e));
            for e in order {
                let [i, j, ..] = edge_cells[e];
                let fresh = |c: i32, place: &[i32]| (c >= 0 && place[c as usize] < 0) as usize;
                let new = fresh(i, &place) + if j != i { fresh(j, &place) } else { 0 };
                if edges_open == cap || open.len() + new > cap {
                    t.close(&mut place, &mut open, &mut edges_open, across);
                }
                for c in [i, j] {
                    if c >= 0 && place[c as usize] < 0 {
                        place[c as usize] = open.len() as i32;
                        open.push(c);
                    }
                }
                let pi = place[i as usize];
                let pj = if j >= 0 { place[j as usize] } else { pi };
                t.tec.push(edge_cells[e]);
                t.tloc.push([pi, pj]);
                t.tnl.push(edge_normal[e]);
                edges_open += 1;
            }
            t.close(&mut place, &mut open, &mut edges_open, across);
            t.cover.ranges.push(r);
            t.cover.tiles.push(first_tile..t.len());
        }
        t
    }

    /// Ends the open tile (if it has edges): its cells, and every array filled to its `cap`
    /// places.
    fn close(&mut self, place: &mut [i32], open: &mut Vec<i32>, edges_open: &mut usize, across: &[[i32; 3]]) {
        if *edges_open == 0 {
            return;
        }
        for &c in open.iter() {
            place[c as usize] = -1;
            let [a, b, d] = across[c as usize];
            self.cells.push([c, a, b, d]);
        }
        self.cells.resize(self.tec.len() - *edges_open + self.cap, [-1; 4]);
        self.tec.resize(self.cells.len(), [-1, -1, 0, 0]);
        self.tloc.resize(self.cells.len(), [0, 0]);
        self.tnl.resize(self.cells.len(), [T::default(); 2]);
        open.clear();
        *edges_open = 0;
    }

    pub fn len(&self) -> usize {
        self.tec.len() / self.cap
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Tile `k`'s places in the arrays.
    pub fn places(&self, k: usize) -> Range<usize> {
        k * self.cap..(k + 1) * self.cap
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A strip of `n` triangles 0..n, cell k sharing an edge with k + 1, and a boundary edge
    /// on each.
    fn strip(n: usize) -> (Vec<[i32; 4]>, Vec<[f32; 2]>) {
        let mut ec = Vec::new();
        for k in 0..n as i32 {
            ec.push([k, -1, 0, 0]);
            if k + 1 < n as i32 {
                ec.push([k + 1, k, 1, 2]);
            }
        }
        let nl = (0..ec.len()).map(|e| [e as f32, 1.0]).collect();
        (ec, nl)
    }

    #[test]
    fn every_edge_once_in_its_range_with_its_cells_in_its_tile() {
        let (ec, nl) = strip(50);
        let n_edges = ec.len();
        // Any numbers: the tiles copy each cell's entry.
        let across: Vec<[i32; 3]> = (0..50).map(|c| [c, -1 - c, 2 * c]).collect();
        for cap in [2, 3, 7, 64] {
            let t = Tiles::build(&ec, &nl, &across, &[0, 30, 30, n_edges], cap);
            assert_eq!(t.cover.ranges, vec![0..30, 30..n_edges]);
            assert_eq!(t.cover.tiles[0].end, t.cover.tiles[1].start);
            assert_eq!(t.len(), t.cover.tiles[1].end);
            assert!([t.cells.len(), t.tloc.len(), t.tnl.len()].iter().all(|&n| n == t.tec.len()));
            let mut seen = vec![0; n_edges];
            for k in 0..t.len() {
                let places = t.places(k);
                // The tile's cells, then only -1; its edges, then only -1.
                let cells: Vec<[i32; 4]> = t.cells[places.clone()].iter().copied().take_while(|c| c[0] >= 0).collect();
                let n_edges_k = t.tec[places.clone()].iter().take_while(|e| e[0] >= 0).count();
                assert!(t.cells[places.start + cells.len()..places.end].iter().all(|c| *c == [-1; 4]));
                assert!(t.tec[places.start + n_edges_k..places.end].iter().all(|e| e[0] == -1));
                assert!(n_edges_k > 0, "cap {cap}: tile {k} empty");
                let need: Vec<i32> = cells.iter().map(|c| c[0]).collect();
                for c in &cells {
                    assert_eq!(c[1..], across[c[0] as usize], "cap {cap}: tile {k}: across of cell {}", c[0]);
                }
                let mut distinct = need.to_vec();
                distinct.sort();
                distinct.dedup();
                assert_eq!(distinct.len(), need.len(), "a cell twice in tile {k}");
                let range = if k < t.cover.tiles[0].end { 0..30 } else { 30..n_edges };
                for q in places.start..places.start + n_edges_k {
                    let e = (0..n_edges).find(|&e| ec[e] == t.tec[q] && nl[e] == t.tnl[q]).unwrap();
                    assert!(range.contains(&e), "cap {cap}: edge {e} in another range's tile");
                    seen[e] += 1;
                    let [i, j, ..] = t.tec[q];
                    let [pi, pj] = t.tloc[q];
                    assert_eq!(need[pi as usize], i);
                    assert_eq!(need[pj as usize], if j >= 0 { j } else { i });
                }
            }
            assert!(seen.iter().all(|&s| s == 1), "cap {cap}: an edge missed or taken twice");
            assert_eq!(t.cover.covering(&(0..n_edges)), Some(0..t.len()));
            assert_eq!(t.cover.covering(&(0..30)), Some(t.cover.tiles[0].clone()));
            assert_eq!(t.cover.covering(&(30..n_edges)), Some(t.cover.tiles[1].clone()));
            assert_eq!(t.cover.covering(&(0..10)), None);
            assert_eq!(t.cover.covering(&(30..30)), Some(0..0), "no edges: no tiles");
        }
    }
}
