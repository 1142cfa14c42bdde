//! pycno: two-layer shallow-water flow on unstructured triangular meshes with the IR-Roe
//! scheme of de la Asunción, Mantas, Castro and Fernández-Nieto ("An MPI-CUDA
//! implementation of an improved Roe method for two-layer shallow water systems",
//! J. Parallel Distrib. Comput. 72, 2012), on CPUs and CUDA GPUs.
//!
//! Modules in layering order, lowest first; a module imports only from modules before it
//! in this list (tests/layering.rs checks it):
//! `util`, `physics`, `comm` (the bottom layer: none imports another), then `mesh`,
//! `solver`, `scenario`, `output`, `partition`, `app`.

pub mod app;
pub mod comm;
pub mod mesh;
pub mod output;
pub mod partition;
pub mod physics;
pub mod scenario;
pub mod solver;
pub mod util;
