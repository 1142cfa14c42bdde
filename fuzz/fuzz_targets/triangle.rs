//! Triangle .node/.ele/.edge: the input is split at the first two NUL bytes into the three
//! files (no .edge when there is only one NUL); any bytes must give a mesh or an error, and
//! a mesh that reads must pass or fail the checks without a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(3, |&b| b == 0);
    let node = parts.next().unwrap_or_default();
    let ele = parts.next().unwrap_or_default();
    let edge = parts.next();
    if let Ok(mesh) = pycno::mesh::io::read_triangle_bytes(Path::new("fuzz"), node, ele, edge) {
        let _ = pycno::app::prepare_mesh(mesh, "fuzz.node");
    }
});
