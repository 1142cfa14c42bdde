//! pycno: two-layer shallow-water flow on unstructured triangular meshes with the IR-Roe
//! scheme (de la Asunción, Mantas, Castro, Fernández-Nieto), on CPUs and CUDA GPUs.

pub mod mesh;
pub mod output;
pub mod physics;
pub mod comm;
pub mod solver;
pub mod scenario;
pub mod app;
pub mod partition;
