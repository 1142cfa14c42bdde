//! Mesh file formats (in progress).
