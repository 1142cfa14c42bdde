//! pycno: two-layer shallow-water flow on unstructured triangular meshes with the IR-Roe
//! scheme (de la Asunción, Mantas, Castro, Fernández-Nieto), on CPUs and CUDA GPUs.

pub mod mesh;
pub mod output;
