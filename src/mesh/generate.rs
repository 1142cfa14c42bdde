//! Mesh generation (in progress).
