//! The ocean basins of issue 16 (float32 at rest at any depth, and mass over long runs),
//! shared by `tests/precision.rs` (CPU) and `tests/gpu.rs`.

use super::scenario;
use pycno::physics::CellState;
use pycno::scenario::Scenario;

/// The largest spurious velocity water at rest may have, m/s (issue 16).
pub const U_REST: f64 = 1e-9;
/// The largest relative mass change of either layer over a long float32 run (issue 16).
pub const MASS_REL: f64 = 2e-7;

/// The issue's ocean basins, 800 m deep with a 500 m Gaussian seamount, the interface at
/// -150 m, r = 0.998, the free surface at 0, about 20k cells: `Seamount` (20 km square,
/// width 3 km), `Steep` (5 km square, width 800 m: slopes steeper than 1:2, the bottom
/// everywhere at least 300 m deep, so nothing emerges) and `Utm` (the seamount basin at
/// x ~ 3e5 m, y ~ 4e6 m, UTM-like coordinates, whose edge normals and cell areas come from
/// differences of large numbers).
#[derive(Clone, Copy, Debug)]
pub enum Basin {
    Seamount,
    Steep,
    Utm,
}

pub fn ocean(basin: Basin, cells: u64) -> Scenario {
    let (x0, y0, half, width) = match basin {
        Basin::Seamount => (0.0, 0.0, 10_000.0, 3000.0),
        Basin::Steep => (0.0, 0.0, 2500.0, 800.0),
        Basin::Utm => (300_000.0, 4_000_000.0, 10_000.0, 3000.0),
    };
    let (a, b, c, d) = (x0 - half, y0 - half, x0 + half, y0 + half);
    // Off centre, so that the mesh has no symmetry that could hide an error.
    let (cx, cy) = (x0 + 0.1 * half, y0 - 0.07 * half);
    scenario(&format!(
        r#"{{
        "name": "ocean",
        "domain": {{ "outer": [[{a},{b}],[{c},{b}],[{c},{d}],[{a},{d}]] }},
        "resolution": {{ "cells": {cells} }},
        "bathymetry": {{ "type": "gaussian_bump", "depth": 800, "height": 500, "center": [{cx}, {cy}], "width": {width} }},
        "initial": {{ "type": "at_rest", "interface": -150, "surface": 0 }},
        "physics": {{ "r": 0.998 }},
        "time": {{ "end": 28800 }}
    }}"#
    ))
}

/// The largest |u| of either layer.
pub fn max_speed(state: &[CellState]) -> f64 {
    state
        .iter()
        .flat_map(|s| {
            let (u1, u2) = s.velocities();
            [u1[0], u1[1], u2[0], u2[1]]
        })
        .fold(0.0, |m, x| m.max(x.abs()))
}

/// Cells whose free surface or interface elevation is not, bit for bit, what it was.
pub fn moved_levels(start: &[CellState], end: &[CellState], depth: &[f64]) -> usize {
    let level = |s: &CellState, d: f64| (s.surface_elevation(d).to_bits(), s.interface_elevation(d).to_bits());
    start.iter().zip(end).zip(depth).filter(|((a, b), &d)| level(a, d) != level(b, d)).count()
}
