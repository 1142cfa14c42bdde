//! Partition statistics: what the manifest records and the command prints.

use super::Submesh;
use crate::mesh::{Topology, NO_CELL};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// Bytes a communicated cell costs per exchange and destination: the paper's two float4
/// volume words (v1 and v2) in f32. Twice this in f64.
pub const BYTES_PER_CELL: u64 = 2 * 4 * 4;

/// Exchanges per step of the order a partition with `rings` rings is for: one at first
/// order, one per stage (two) at second.
pub fn exchanges_per_step(rings: u32) -> u64 {
    if rings >= 2 {
        2
    } else {
        1
    }
}

fn one() -> u32 {
    1
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankStats {
    pub rank: u32,
    /// Owned cells.
    pub cells: usize,
    pub interior: usize,
    pub send: usize,
    /// Receive-block cells (both rings, with two).
    pub receive: usize,
    /// Edges processed (not the first ring's own, which only its stencils read).
    pub edges: usize,
    pub communication_edges: usize,
    pub neighbours: usize,
    /// f32, per step: [`BYTES_PER_CELL`] per cell, destination and exchange
    /// ([`exchanges_per_step`]).
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Destinations sent to through a gather list (not one contiguous range).
    pub fallback_destinations: usize,
    /// Size of the rank's file.
    pub file_bytes: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub ranks: usize,
    /// Rings of receive cells: 1 (first order) or 2 (second order). Manifests written before
    /// there were two have none: 1.
    #[serde(default = "one")]
    pub rings: u32,
    pub cells: usize,
    pub edges: usize,
    /// Interior edges whose cells are on different ranks.
    pub edge_cut: u64,
    /// Most owned cells on a rank over the mean.
    pub imbalance: f64,
    pub cells_min: usize,
    pub cells_max: usize,
    /// Cells in some rank's send block (each counted once, on its owner).
    pub communication_cells: u64,
    /// (sender, receiver) pairs, i.e. messages per exchange.
    pub destinations: u64,
    pub fallback_destinations: u64,
    /// All ranks' sends per step, f32 (two exchanges a step with two rings).
    pub bytes_per_step: u64,
    pub neighbours_max: usize,
    pub empty_ranks: usize,
    pub per_rank: Vec<RankStats>,
}

impl Stats {
    pub fn compute(topo: &Topology, owner: &[u32], subs: &[Submesh]) -> Stats {
        let rings = subs.first().map_or(1, |s| s.rings);
        let per_step = BYTES_PER_CELL * exchanges_per_step(rings);
        let per_rank: Vec<RankStats> = subs
            .iter()
            .map(|s| {
                let sent: usize = s.sends.iter().map(|d| d.len()).sum();
                RankStats {
                    rank: s.rank,
                    cells: s.n_owned,
                    interior: s.n_interior,
                    send: s.n_owned - s.n_interior,
                    receive: s.num_cells() - s.n_owned,
                    edges: s.n_pass_edges,
                    communication_edges: s.n_pass_edges - s.n_local_edges,
                    neighbours: s.sends.len(),
                    bytes_sent: sent as u64 * per_step,
                    bytes_received: (s.num_cells() - s.n_owned) as u64 * per_step,
                    fallback_destinations: s.fallback_destinations(),
                    file_bytes: 0,
                }
            })
            .collect();
        let edge_cut =
            topo.edge_cells.iter().filter(|&&[i, j]| j != NO_CELL && owner[i as usize] != owner[j as usize]).count()
                as u64;
        let cells = topo.num_cells();
        let mean = cells as f64 / subs.len().max(1) as f64;
        let cells_max = per_rank.iter().map(|r| r.cells).max().unwrap_or(0);
        Stats {
            ranks: subs.len(),
            rings,
            cells,
            edges: topo.num_edges(),
            edge_cut,
            imbalance: cells_max as f64 / mean,
            cells_min: per_rank.iter().map(|r| r.cells).min().unwrap_or(0),
            cells_max,
            communication_cells: per_rank.iter().map(|r| r.send as u64).sum(),
            destinations: per_rank.iter().map(|r| r.neighbours as u64).sum(),
            fallback_destinations: per_rank.iter().map(|r| r.fallback_destinations as u64).sum(),
            bytes_per_step: per_rank.iter().map(|r| r.bytes_sent).sum(),
            neighbours_max: per_rank.iter().map(|r| r.neighbours).max().unwrap_or(0),
            empty_ranks: per_rank.iter().filter(|r| r.cells == 0).count(),
            per_rank,
        }
    }

    /// Human-readable lines; one per rank when there are few.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let mean = self.cells as f64 / self.ranks.max(1) as f64;
        let nb: Vec<usize> = self.per_rank.iter().map(|r| r.neighbours).collect();
        let nb_mean = nb.iter().sum::<usize>() as f64 / nb.len().max(1) as f64;
        let _ = writeln!(
            s,
            "cells per rank: {} .. {} (mean {:.1}), imbalance {:.4}{}",
            self.cells_min,
            self.cells_max,
            mean,
            self.imbalance,
            if self.empty_ranks > 0 { format!(", {} EMPTY ranks", self.empty_ranks) } else { String::new() }
        );
        let _ = writeln!(
            s,
            "edge cut: {} of {} edges; communication cells: {} ({:.2} % of cells)",
            self.edge_cut,
            self.edges,
            self.communication_cells,
            100.0 * self.communication_cells as f64 / self.cells.max(1) as f64
        );
        let _ = writeln!(
            s,
            "rings of receive cells: {} (for physics.order = {})",
            self.rings,
            if self.rings >= 2 { "2: each rank reconstructs the first ring itself" } else { "1" }
        );
        let exchanges = exchanges_per_step(self.rings);
        let _ = writeln!(
            s,
            "neighbours per rank: {} .. {} (mean {:.2}); {} messages, {} bytes per step (f32, {} B per cell{})",
            nb.iter().min().unwrap_or(&0),
            self.neighbours_max,
            nb_mean,
            self.destinations * exchanges,
            self.bytes_per_step,
            BYTES_PER_CELL,
            if exchanges > 1 { format!(" and exchange, {exchanges} exchanges a step") } else { String::new() }
        );
        let _ = writeln!(
            s,
            "fallback destinations (gather instead of one range): {} of {}",
            self.fallback_destinations, self.destinations
        );
        if self.ranks <= 16 {
            let _ = writeln!(
                s,
                "rank     cells  interior   send  receive   edges  comm-edges  neighbours  bytes-sent  fallbacks"
            );
            for r in &self.per_rank {
                let _ = writeln!(
                    s,
                    "{:>4} {:>9} {:>9} {:>6} {:>8} {:>7} {:>11} {:>11} {:>11} {:>10}",
                    r.rank,
                    r.cells,
                    r.interior,
                    r.send,
                    r.receive,
                    r.edges,
                    r.communication_edges,
                    r.neighbours,
                    r.bytes_sent,
                    r.fallback_destinations
                );
            }
        }
        s
    }
}
