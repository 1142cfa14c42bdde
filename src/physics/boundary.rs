//! Boundary conditions: the ghost state beyond a boundary edge, and the flux through it.
//! `kernels/boundary.cuh` mirrors this file.
//!
//! A boundary edge's fourth integer in the solver's layout holds an index into the run's
//! boundary table, a list of [`Boundary`] records (kind and parameters), so a boundary kind
//! costs no memory per edge. The flux through a boundary edge is the interior flux
//! ([`numerical_flux`]) between the cell and its ghost; a wall then sets the mass fluxes to
//! exactly zero.
//!
//! Adding a kind: a [`BoundaryKind`] variant with the next number, its ghost state in
//! [`ghost`], the same in `kernels/boundary.cuh`, the scenario's words for it, a test.

use super::flux::{numerical_flux, EdgeFlux, Side};
use super::{Model, Real};

/// What a boundary does. The numbers are the `kind` of [`Boundary`] on the GPU too.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoundaryKind {
    /// No flow through the boundary: the ghost is the mirror image of the cell (normal
    /// momenta reversed) and the mass flux is exactly zero.
    Wall = 0,
}

/// Words of a boundary's parameters (what a kind means by each is its own business).
pub const BOUNDARY_DATA: usize = 8;

/// One entry of the boundary table, as the kernels read it (`kernels/boundary.cuh`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Boundary<T> {
    /// A [`BoundaryKind`] as its number.
    pub kind: i32,
    /// Keeps `data` aligned for f64 and the C layout free of implicit padding.
    pub reserved: i32,
    pub data: [T; BOUNDARY_DATA],
}

impl<T: Real> Boundary<T> {
    pub fn wall() -> Boundary<T> {
        Boundary { kind: BoundaryKind::Wall as i32, reserved: 0, data: [T::zero(); BOUNDARY_DATA] }
    }
}

/// The mirror image of `w` across an edge with unit normal `n`: normal momenta reversed,
/// the same stored thicknesses (so every thickness and elevation jump is exactly zero).
#[inline(always)]
pub fn mirror<T: Real>(w: &Side<T>, n: [T; 2]) -> Side<T> {
    let two = T::c(2.0);
    let reflect = |q: [T; 2]| {
        let qn = q[0] * n[0] + q[1] * n[1];
        [q[0] - two * qn * n[0], q[1] - two * qn * n[1]]
    };
    Side { d1: w.d1, q1: reflect(w.q1), d2: w.d2, q2: reflect(w.q2), depth: w.depth }
}

/// The state beyond the boundary edge with unit outward normal `n` of a cell in state
/// `inner`, at time `t`. A kind that prescribes thicknesses or elevations builds its ghost
/// with `Side::from_thickness` or `Side::from_elevations` (the model holds the reference
/// they are stored against).
#[inline(always)]
pub fn ghost<T: Real>(b: &Boundary<T>, inner: &Side<T>, n: [T; 2], _t: T) -> Side<T> {
    // Every kind but the wall is yet to come: they become arms here. An unknown kind never
    // reaches this point (the table is built from the kinds above).
    #[allow(clippy::match_single_binding)]
    match b.kind {
        _ => mirror(inner, n),
    }
}

/// The flux out of the cell in state `inner` through its boundary edge (normal `n`, time `t`).
#[inline(always)]
pub fn boundary_flux<T: Real>(m: &Model<T>, b: &Boundary<T>, inner: &Side<T>, n: [T; 2], t: T) -> EdgeFlux<T> {
    let mut f = numerical_flux(m, inner, &ghost(b, inner, n, t), n);
    if b.kind == BoundaryKind::Wall as i32 {
        // The mirror makes the mass fluxes zero in exact arithmetic; rounding, amplified by
        // the eigenvector solve, would otherwise leak mass through walls.
        f.i[0] = T::zero();
        f.i[3] = T::zero();
        f.j[0] = T::zero();
        f.j[3] = T::zero();
    }
    f
}
