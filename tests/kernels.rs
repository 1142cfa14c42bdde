//! The CUDA kernels compile: NVRTC (which needs no GPU; `tools/setup.sh` installs it into
//! the project's venv) compiles every kernel source for the GPUs pycno runs on, with the
//! flags a run uses, and each kernel the backends and probes launch is in the PTX. This
//! catches a broken kernel on any machine, CI included, before a GPU ever sees it.

#[path = "common/skip.rs"]
mod skip;

use pycno::solver::cuda::device::{compile_ptx, nvrtc_present, KERNEL_SOURCES};

#[test]
fn every_kernel_compiles_for_hopper_and_ampere() {
    if !nvrtc_present() {
        skip::skipped("no NVRTC library (libnvrtc.so.13) found; tools/setup.sh installs one into .venv");
        return;
    }
    for arch in ["sm_90", "sm_80"] {
        let ptx = compile_ptx(arch).unwrap_or_else(|e| panic!("{arch}: {e:#}"));
        // For a look at the machine code (`ptxas -v` gives each kernel's registers and spills).
        if let Some(dir) = std::env::var_os("PYCNO_PTX_OUT") {
            std::fs::write(std::path::Path::new(&dir).join(format!("kernels-{arch}.ptx")), &ptx).unwrap();
        }
        for op in [
            "edge",
            "edge_visc",
            "dt",
            "update",
            "edge_resident",
            "edge_visc_resident",
            "dt_resident",
            "update_resident",
            "finalize_resident",
            "send_peer",
            "receive_peer",
            "dt_peer",
            "update_peer",
            "extremes",
            "reconstruct",
            "edge2",
            "update2",
            "reconstruct_resident",
            "edge2_resident",
            "update2_resident",
            "tile2",
            "tile2_resident",
            "tile2_finish",
            "tile2_finish_resident",
            "probe_eigenvalues",
            "probe_flux",
            "probe_boundary",
            "probe_source",
            "probe_extremes",
            "probe_settle",
            "probe_reconstruct",
            "probe_interior",
            "probe_edge_flux",
            "probe_edge_boundary_flux",
            "probe_sizes",
        ] {
            for t in ["f32", "f64"] {
                let entry = format!(".entry {op}_{t}(");
                assert!(ptx.contains(&entry), "{arch}: no kernel {op}_{t} in the PTX");
            }
        }
        eprintln!("{arch}: {} bytes of PTX from {} sources", ptx.len(), KERNEL_SOURCES.len());
    }
}
