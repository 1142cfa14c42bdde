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

/// The bit of a cell's entry in [`Tiles::cells`] that marks it finished by its tile, and of a
/// place in [`Tiles::tloc`] that points at such a cell (`TILE_FINISHED_CELL`,
/// `TILE_FINISHED_PLACE` in `kernels/order2.cu`); the masks of the numbers under them.
pub const FINISHED_CELL: i32 = 1 << 30;
pub const CELL_MASK: i32 = FINISHED_CELL - 1;
pub const FINISHED_PLACE: i32 = 1 << 16;
pub const PLACE_MASK: i32 = FINISHED_PLACE - 1;

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
    /// Each edge's index in the layout (-1 past a tile's edges): for per-edge data that only
    /// some runs have (`Tiles::per_place`).
    pub tedge: Vec<i32>,
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
            tedge: Vec::new(),
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
                t.tedge.push(e as i32);
                edges_open += 1;
            }
            t.close(&mut place, &mut open, &mut edges_open, across);
            t.cover.ranges.push(r);
            t.cover.tiles.push(first_tile..t.len());
        }
        t
    }

    /// A per-edge array laid out per place as the tiles take the edges (`default` past a
    /// tile's edges): the viscous couplings' `tvisc` (`kernels/order2.cu`).
    pub fn per_place<V: Copy>(&self, per_edge: &[V], default: V) -> Vec<V> {
        self.tedge.iter().map(|&e| if e < 0 { default } else { per_edge[e as usize] }).collect()
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
        self.tedge.resize(self.cells.len(), -1);
        open.clear();
        *edges_open = 0;
    }

    /// Marks the cells each tile finishes (`tile2_kernel`'s FINISH in `kernels/order2.cu`): an owned cell (of
    /// the first `n_owned`) whose three edges are all in one tile, so that the tile has every
    /// flux the cell's update sums. A cell with a boundary edge has at most two interior ones and
    /// never qualifies: the open boundaries' budget reads its boundary slot. Sets
    /// [`FINISHED_CELL`] in the cell's entry of `cells` and [`FINISHED_PLACE`] in the places of
    /// `tloc` that point at it, and returns each of the `n_cells` cells' flag (1: finished by
    /// its tile). Marks none where the cell numbers or places would not leave the bits free.
    pub fn finishing(&mut self, n_cells: usize, n_owned: usize) -> Vec<u8> {
        let mut finished = vec![0u8; n_cells];
        if n_cells > CELL_MASK as usize || self.cap > PLACE_MASK as usize {
            return finished;
        }
        let mut count = vec![0u8; self.cap];
        for k in 0..self.len() {
            let places = self.places(k);
            count.iter_mut().for_each(|n| *n = 0);
            for q in places.clone() {
                let [i, j, ..] = self.tec[q];
                if i >= 0 && j >= 0 {
                    let [pi, pj] = self.tloc[q];
                    count[pi as usize] += 1;
                    count[pj as usize] += 1;
                }
            }
            for (p, q) in places.clone().enumerate() {
                let c = self.cells[q][0];
                if c >= 0 && (c as usize) < n_owned && count[p] == 3 {
                    self.cells[q][0] |= FINISHED_CELL;
                    finished[c as usize] = 1;
                }
            }
            for q in places.clone() {
                if self.tec[q][0] < 0 {
                    continue;
                }
                for side in 0..2 {
                    let p = self.tloc[q][side] as usize;
                    if self.cells[places.start + p][0] & FINISHED_CELL != 0 {
                        self.tloc[q][side] |= FINISHED_PLACE;
                    }
                }
            }
        }
        finished
    }

    /// The owned cells (of the first `n_owned`) that no tile finishes, from `finishing`'s
    /// flags: the cells the second stage's update takes where the tiles finish the others.
    pub fn unfinished(finished: &[u8], n_owned: usize) -> Vec<i32> {
        (0..n_owned as i32).filter(|&c| finished[c as usize] == 0).collect()
    }

    /// Each place's index in `listed` (a list of distinct cells of the `n_cells`, as
    /// `unfinished` gives) where it holds one of them, else -1 (no cell, or one not listed):
    /// where the tile kernel puts that cell's words when it keeps the others (`rest_of` of
    /// `TileArrays` in `kernels/order2.cu`).
    pub fn listed_places(&self, listed: &[i32], n_cells: usize) -> Vec<i32> {
        let mut at = vec![-1i32; n_cells];
        for (k, &c) in listed.iter().enumerate() {
            at[c as usize] = k as i32;
        }
        self.cells.iter().map(|e| if e[0] < 0 { -1 } else { at[(e[0] & CELL_MASK) as usize] }).collect()
    }

    /// The owned cells of `finished` as a bit per cell (bit c % 32 of word c / 32), at least
    /// one word.
    pub fn finished_bits(finished: &[u8], n_owned: usize) -> Vec<u32> {
        let mut bits = vec![0u32; n_owned.div_ceil(32).max(1)];
        for c in (0..n_owned).filter(|&c| finished[c] != 0) {
            bits[c / 32] |= 1 << (c % 32);
        }
        bits
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
            assert!([t.cells.len(), t.tloc.len(), t.tnl.len(), t.tedge.len()].iter().all(|&n| n == t.tec.len()));
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

    /// The faces of an octahedron: 8 triangles, 12 edges, every cell with three interior edges
    /// (no boundary), and a strip's edges after them (cells 8.., each with a boundary edge).
    fn octahedron_and_strip() -> (Vec<[i32; 4]>, Vec<[f32; 2]>, usize) {
        // Face f = (top or bottom, quadrant q); faces sharing an edge: (t, q) with (t, q + 1)
        // and with (1 - t, q).
        let face = |t: i32, q: i32| 4 * t + q.rem_euclid(4);
        let mut ec = Vec::new();
        for t in 0..2 {
            for q in 0..4 {
                ec.push([face(t, q + 1), face(t, q), 0, 1]);
            }
        }
        for q in 0..4 {
            ec.push([face(1, q), face(0, q), 2, 2]);
        }
        let (strip, _) = strip(6);
        ec.extend(strip.iter().map(|&[i, j, a, b]| [i + 8, if j >= 0 { j + 8 } else { j }, a, b]));
        let nl = (0..ec.len()).map(|e| [e as f32, 1.0]).collect();
        (ec, nl, 14)
    }

    #[test]
    fn finished_cells_have_all_three_edges_in_their_tile() {
        let (ec, nl, n_cells) = octahedron_and_strip();
        let across = vec![[0; 3]; n_cells];
        for cap in [2, 4, 6, 7, 64] {
            for n_owned in [n_cells, 5] {
                let mut t = Tiles::build(&ec, &nl, &across, &[0, ec.len()], cap);
                let plain = t.clone();
                let finished = t.finishing(n_cells, n_owned);
                // The tile of each edge (its place's tile).
                let tile_of = |e: usize| {
                    (0..t.tec.len()).find(|&q| plain.tec[q] == ec[e] && plain.tnl[q] == nl[e]).unwrap() / cap
                };
                for c in 0..n_cells as i32 {
                    let edges: Vec<usize> = (0..ec.len()).filter(|&e| ec[e][0] == c || ec[e][1] == c).collect();
                    let interior = edges.iter().all(|&e| ec[e][1] >= 0);
                    let one_tile = edges.iter().all(|&e| tile_of(e) == tile_of(edges[0]));
                    let expect = (c as usize) < n_owned && interior && edges.len() == 3 && one_tile;
                    assert_eq!(finished[c as usize] == 1, expect, "cap {cap}, {n_owned} owned: cell {c}");
                }
                if cap == 64 && n_owned == n_cells {
                    assert_eq!(finished.iter().filter(|&&f| f == 1).count(), 8, "one tile: every octahedron face");
                }
                // Each place's index in the list of the owned cells not finished points at its
                // cell, and only those places have one.
                let rest = Tiles::<f32>::unfinished(&finished, n_owned);
                let listed = t.listed_places(&rest, n_cells);
                assert_eq!(listed.len(), t.cells.len());
                for (q, &k) in listed.iter().enumerate() {
                    let c = plain.cells[q][0];
                    let expect = c >= 0 && (c as usize) < n_owned && finished[c as usize] == 0;
                    assert_eq!(k >= 0, expect, "cap {cap}, {n_owned} owned: place {q}");
                    if k >= 0 {
                        assert_eq!(rest[k as usize], c);
                    }
                }
                // The bits mark exactly those cells, and under them the numbers are unchanged.
                for q in 0..t.cells.len() {
                    let (x, y) = (t.cells[q][0], plain.cells[q][0]);
                    let marked = x >= 0 && x & FINISHED_CELL != 0;
                    assert_eq!(marked, y >= 0 && finished[y as usize] == 1);
                    assert_eq!(if x >= 0 { x & CELL_MASK } else { x }, y);
                    for side in 0..2 {
                        let (p, p0) = (t.tloc[q][side], plain.tloc[q][side]);
                        assert_eq!(p & PLACE_MASK, p0);
                        let cell = plain.cells[q / cap * cap + p0 as usize][0];
                        let points_at_finished = plain.tec[q][0] >= 0 && cell >= 0 && finished[cell as usize] == 1;
                        assert_eq!(p & FINISHED_PLACE != 0, points_at_finished, "cap {cap}: place {q}");
                    }
                }
            }
        }
    }
}
