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

/// The tiles of a layout's edges, in the arrays `TileArrays` of `kernels/order2.cu` reads.
#[derive(Clone, Debug)]
pub struct Tiles<T> {
    /// Per tile, its first entry of `need`; one more entry at the end.
    pub need_first: Vec<i32>,
    /// The cells each tile reconstructs, tile after tile.
    pub need: Vec<i32>,
    /// Per tile, its first edge in `tec`, `tloc`, `tnl`; one more at the end.
    pub edge_first: Vec<i32>,
    /// The edges in tile order: the layout's `edge_cells` entry.
    pub tec: Vec<[i32; 4]>,
    /// Each edge's two cells' places in its tile's `need` (a boundary edge: its cell's twice).
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

impl<T: Copy> Tiles<T> {
    /// Tiles of at most `cap` edges and `cap` cells over the edges of each range between
    /// consecutive `splits` (e.g. `[0, n_inner_edges, n_edges]`; empty ranges are skipped).
    pub fn build(
        edge_cells: &[[i32; 4]],
        edge_normal: &[[T; 2]],
        n_cells: usize,
        splits: &[usize],
        cap: usize,
    ) -> Self {
        assert!(cap >= 2, "a tile takes at least one edge's two cells");
        let mut t = Tiles {
            need_first: vec![0],
            need: Vec::new(),
            edge_first: vec![0],
            tec: Vec::new(),
            tloc: Vec::new(),
            tnl: Vec::new(),
            cover: TileCover::default(),
        };
        // place[c]: c's place in the open tile, or -1.
        let mut place = vec![-1i32; n_cells];
        let mut open: Vec<i32> = Vec::new();
        for w in splits.windows(2) {
            let r = w[0]..w[1];
            if r.is_empty() {
                continue;
            }
            let first_tile = t.edge_first.len() - 1;
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
            let mut edges_open = 0usize;
            for e in order {
                let [i, j, ..] = edge_cells[e];
                let fresh = |c: i32, place: &[i32]| (c >= 0 && place[c as usize] < 0) as usize;
                let new = fresh(i, &place) + if j != i { fresh(j, &place) } else { 0 };
                if edges_open == cap || open.len() + new > cap {
                    t.close(&mut place, &mut open);
                    edges_open = 0;
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
            t.close(&mut place, &mut open);
            t.cover.ranges.push(r);
            t.cover.tiles.push(first_tile..t.edge_first.len() - 1);
        }
        t
    }

    fn close(&mut self, place: &mut [i32], open: &mut Vec<i32>) {
        if self.tec.len() as i32 == *self.edge_first.last().expect("starts with 0") {
            return;
        }
        for &c in open.iter() {
            place[c as usize] = -1;
        }
        self.need.append(open);
        self.need_first.push(self.need.len() as i32);
        self.edge_first.push(self.tec.len() as i32);
    }

    pub fn len(&self) -> usize {
        self.edge_first.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
        for cap in [2, 3, 7, 64] {
            let t = Tiles::build(&ec, &nl, 50, &[0, 30, 30, n_edges], cap);
            assert_eq!(t.cover.ranges, vec![0..30, 30..n_edges]);
            assert_eq!(t.cover.tiles[0].end, t.cover.tiles[1].start);
            assert_eq!(t.len(), t.cover.tiles[1].end);
            let mut seen = vec![0; n_edges];
            for k in 0..t.len() {
                let (n0, n1) = (t.need_first[k] as usize, t.need_first[k + 1] as usize);
                let (e0, e1) = (t.edge_first[k] as usize, t.edge_first[k + 1] as usize);
                assert!(n1 - n0 <= cap && e1 > e0 && e1 - e0 <= cap, "cap {cap}: tile {k} too big or empty");
                let need = &t.need[n0..n1];
                let mut distinct = need.to_vec();
                distinct.sort();
                distinct.dedup();
                assert_eq!(distinct.len(), need.len(), "a cell twice in tile {k}");
                let range = if k < t.cover.tiles[0].end { 0..30 } else { 30..n_edges };
                for q in e0..e1 {
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
