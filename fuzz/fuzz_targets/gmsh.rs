//! Gmsh .msh (4.1 and 2.2 ASCII): any bytes must give a mesh or an error, and a mesh that
//! reads must go through the checks (orientation, folds, overlaps, topology) without a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    if let Ok(mesh) = pycno::mesh::io::read_gmsh_bytes(Path::new("fuzz.msh"), data) {
        let _ = pycno::app::prepare_mesh(mesh, "fuzz.msh");
    }
});
