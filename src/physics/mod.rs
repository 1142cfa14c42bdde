//! The two-layer shallow-water physics, and nothing else: the model's parameters, a cell's
//! state, the eigenstructure of the projected 4x4 system, the numerical flux (the IR-Roe
//! scheme of de la Asunción, Mantas, Castro and Fernández-Nieto, 2012, section 2.2),
//! boundary ghost states and cell source terms. Each file is mirrored by the CUDA header of
//! the same name in `kernels/`; tests compare the two function by function.
//!
//! Layer 1 is the upper, lighter layer; layer 2 the lower, denser one. `H` (`depth`) is the
//! depth of the bottom below a fixed reference level (positive down).

pub mod boundary;
pub mod edge;
pub mod eigen;
pub mod extremes;
pub mod flux;
pub mod forcing;
pub mod model;
pub mod real;
pub mod reconstruct;
pub mod shear;
pub mod source;
pub mod state;
pub mod viscosity;
pub mod wetdry;

pub use boundary::{boundary_flux, ghost, Boundaries, Boundary, BoundaryKind, BoundarySpec};
pub use edge::{EdgeFlux, Side};
pub use flux::numerical_flux;
pub use forcing::{Constituent, TimeFunction};
pub use model::{Model, Physics, Reference};
pub use real::{add_compensated, Real};
pub use source::{source, source_at};
pub use state::{is_admissible, CellState, StoredCell};
pub use viscosity::{add_viscosity, Viscosity};
pub use wetdry::{dry_edge, dry_flux, needs_dry_flux, settle};
