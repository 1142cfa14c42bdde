//! What an edge reads of each of its cells ([`Side`]) and what it gives back to them
//! ([`EdgeFlux`]): the two types that the numerical flux (`flux.rs`), the dry-aware flux
//! (`wetdry.rs`), the boundaries, the reconstruction and the source terms share.
//! `kernels/edge.cuh` mirrors this file.

use super::{Model, Real};

/// One cell's state as an edge sees it: the stored numbers (`Side` in `kernels/edge.cuh`,
/// same field order). The thicknesses are deviations from the model's reference rest state
/// (`physics/state.rs`); [`Side::h1`] and [`Side::h2`] give the thicknesses, and a boundary
/// builds its ghost state with [`Side::from_thickness`] or [`Side::from_elevations`].
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Side<T> {
    /// Layer 1's thickness minus the reference one: `h1 - Model::ref_h1`.
    pub d1: T,
    pub q1: [T; 2],
    /// The interface's elevation above the reference interface: `h2 - H - Model::ref_interface`.
    pub d2: T,
    pub q2: [T; 2],
    /// Depth of the bottom below the reference level, `H`.
    pub depth: T,
}

impl<T: Real> Side<T> {
    /// From thicknesses and momenta, over a bottom at depth `depth`.
    #[inline(always)]
    pub fn from_thickness(m: &Model<T>, h1: T, q1: [T; 2], h2: T, q2: [T; 2], depth: T) -> Side<T> {
        Side { d1: h1 - m.ref_h1, q1, d2: (h2 - depth) - m.ref_interface, q2, depth }
    }

    /// From the free-surface and interface elevations (above the reference level) and the
    /// momenta, as differences of small numbers: exact zeros for the reference levels
    /// themselves, so a ghost at rest at those levels meets cells at rest exactly.
    #[inline(always)]
    pub fn from_elevations(m: &Model<T>, surface: T, interface: T, q1: [T; 2], q2: [T; 2], depth: T) -> Side<T> {
        let d2 = interface - m.ref_interface;
        Side { d1: (surface - m.ref_surface) - d2, q1, d2, q2, depth }
    }

    /// Layer 1's thickness (rounded once: for the nonlinear terms).
    #[inline(always)]
    pub fn h1(&self, m: &Model<T>) -> T {
        self.d1 + m.ref_h1
    }

    /// Layer 2's thickness (the interface's elevation plus the depth).
    #[inline(always)]
    pub fn h2(&self, m: &Model<T>) -> T {
        (self.d2 + m.ref_interface) + self.depth
    }
}

/// What one edge gives its two cells (`EdgeFlux` in `kernels/edge.cuh`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EdgeFlux<T> {
    /// (h1, q1x, q1y, h2, q2x, q2y) flux leaving cell i, per unit edge length, less cell
    /// i's own hydrostatic pressure `g h_i^2/2 n` in the momentum rows (the module comment
    /// of `flux.rs` says why): the physical flux of a state is `i` plus that pressure.
    pub i: [T; 6],
    /// The same seen from cell j, less cell j's own hydrostatic pressure. The mass rows are
    /// those of `i`.
    pub j: [T; 6],
    /// max |lambda| of the Roe matrix.
    pub speed: T,
    /// The Roe state was not hyperbolic and the fallback was used.
    pub fallback: bool,
}
