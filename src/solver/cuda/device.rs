//! Finding a GPU and loading the kernels: the CUDA libraries are loaded at run time, so
//! [`probe`] looks for them first and a machine without CUDA never reaches cudarc's loader
//! (which panics); the kernel sources are embedded in the binary and compiled once per
//! process by NVRTC for the GPU at hand.

use anyhow::{anyhow, bail, Context, Result};
use cudarc::driver::{sys::CUdevice_attribute, sys::CUevent_flags, CudaContext, CudaModule};
use std::sync::{Arc, OnceLock};

/// The kernel sources in the order NVRTC compiles them (each header only uses the ones
/// before it). The headers mirror the files of the same name in `src/physics/`.
pub const KERNEL_SOURCES: [(&str, &str); 18] = [
    ("real.cuh", include_str!("../../../kernels/real.cuh")),
    ("state.cuh", include_str!("../../../kernels/state.cuh")),
    ("model.cuh", include_str!("../../../kernels/model.cuh")),
    ("eigen.cuh", include_str!("../../../kernels/eigen.cuh")),
    ("edge.cuh", include_str!("../../../kernels/edge.cuh")),
    ("wetdry.cuh", include_str!("../../../kernels/wetdry.cuh")),
    ("viscosity.cuh", include_str!("../../../kernels/viscosity.cuh")),
    ("flux.cuh", include_str!("../../../kernels/flux.cuh")),
    ("boundary.cuh", include_str!("../../../kernels/boundary.cuh")),
    ("reconstruct.cuh", include_str!("../../../kernels/reconstruct.cuh")),
    ("shear.cuh", include_str!("../../../kernels/shear.cuh")),
    ("source.cuh", include_str!("../../../kernels/source.cuh")),
    ("extremes.cuh", include_str!("../../../kernels/extremes.cuh")),
    ("solver.cu", include_str!("../../../kernels/solver.cu")),
    ("order2.cu", include_str!("../../../kernels/order2.cu")),
    ("resident.cu", include_str!("../../../kernels/resident.cu")),
    ("peer.cu", include_str!("../../../kernels/peer.cu")),
    ("probe.cu", include_str!("../../../kernels/probe.cu")),
];

/// Threads per block: 128 measured fastest for the edge kernel on an H200 (BENCHMARKS.md);
/// `PYCNO_CUDA_BLOCK` overrides it for tuning.
pub fn block() -> u32 {
    static B: OnceLock<u32> = OnceLock::new();
    *B.get_or_init(|| {
        std::env::var("PYCNO_CUDA_BLOCK")
            .ok()
            .and_then(|s| s.parse().ok())
            .filter(|b| b % 32 == 0 && *b <= 1024)
            .unwrap_or(128)
    })
}

/// Whether a CUDA driver, NVRTC and a device are usable here; `Ok` names the device.
pub fn probe() -> Result<String> {
    // SAFETY: these only try to dlopen the libraries; they do not call into them.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        bail!("no CUDA driver library (libcuda.so) found");
    }
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        bail!("no NVRTC library (libnvrtc.so) found");
    }
    let found = std::panic::catch_unwind(|| -> Result<String> {
        let n = CudaContext::device_count().map_err(|e| anyhow!("cannot query CUDA devices: {e}"))?;
        if n < 1 {
            bail!("the CUDA driver reports no device");
        }
        let ctx = CudaContext::new(0).map_err(|e| anyhow!("cannot open CUDA device 0: {e}"))?;
        ctx.name().map_err(|e| anyhow!("cannot read the CUDA device name: {e}"))
    });
    found.unwrap_or_else(|_| Err(anyhow!("the CUDA libraries failed to load")))
}

/// Number of CUDA devices (after a successful [`probe`]).
pub fn device_count() -> Result<usize> {
    Ok(CudaContext::device_count().map_err(|e| anyhow!("cannot query CUDA devices: {e}"))? as usize)
}

/// PTX of every kernel, both precisions, for one architecture, compiled once per process.
fn ptx(arch: &str) -> Result<String> {
    static PTX: OnceLock<std::result::Result<(String, String), String>> = OnceLock::new();
    let got = PTX.get_or_init(|| compile_ptx(arch).map(|p| (arch.to_string(), p)).map_err(|e| format!("{e:#}")));
    match got {
        Ok((a, src)) if a == arch => Ok(src.clone()),
        Ok((a, _)) => bail!("kernels were compiled for {a}, not {arch}: one GPU architecture per process"),
        Err(e) => bail!("{e}"),
    }
}

/// Whether NVRTC can be loaded here (no GPU needed): the kernels can then be compiled, as
/// the tests do on machines without a GPU.
pub fn nvrtc_present() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// Compile every kernel, both precisions, to PTX for `arch` (e.g. "sm_90"), with the flags a
/// run uses. Needs NVRTC ([`nvrtc_present`]), not a GPU.
pub fn compile_ptx(arch: &str) -> Result<String> {
    // `PYCNO_KERNEL_DIR` compiles the sources of that directory instead of the embedded
    // ones (a file missing there is taken from the binary): how a variant of a kernel is
    // tried on a GPU machine that has no Rust toolchain, without a rebuild.
    let dir = std::env::var_os("PYCNO_KERNEL_DIR").map(std::path::PathBuf::from);
    let mut src = String::new();
    for (name, text) in KERNEL_SOURCES {
        let text = match dir.as_ref().map(|d| d.join(name)).filter(|f| f.is_file()) {
            Some(f) => std::fs::read_to_string(&f).with_context(|| format!("PYCNO_KERNEL_DIR: {}", f.display()))?,
            None => text.to_string(),
        };
        src.push_str(&format!("// ---- {name}\n{text}\n"));
    }
    let mut options = vec![format!("--gpu-architecture={arch}"), "--std=c++17".into()];
    // For experiments and benchmarks of compiler flags (e.g. "--use_fast_math").
    if let Ok(extra) = std::env::var("PYCNO_NVRTC_FLAGS") {
        options.extend(extra.split_whitespace().map(String::from));
    }
    // Single precision divides and square roots to within 2 ulp instead of correctly
    // rounded (float64 is unaffected): the edge kernel is 10-15% faster on an H200, and
    // CPU/GPU agreement and every invariant test still hold (BENCHMARKS.md).
    let opts = cudarc::nvrtc::CompileOptions {
        options,
        fmad: Some(true),
        prec_div: Some(false),
        prec_sqrt: Some(false),
        ..Default::default()
    };
    cudarc::nvrtc::compile_ptx_with_opts(src, opts)
        .map(|p| p.to_src())
        .map_err(|e| anyhow!("NVRTC could not compile the kernels: {e:?}"))
}

/// A context on device `ordinal` with the kernels loaded, and the device's name.
pub fn open(ordinal: usize) -> Result<(Arc<CudaContext>, Arc<CudaModule>, String)> {
    let ctx = CudaContext::new(ordinal).map_err(|e| anyhow!("cannot open CUDA device {ordinal}: {e}"))?;
    let device = ctx.name().unwrap_or_else(|_| "unknown GPU".into());
    let major = ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
    let minor = ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
    let arch = format!("sm_{major}{minor}");
    let module = ctx
        .load_module(cudarc::nvrtc::Ptx::from_src(ptx(&arch)?))
        .with_context(|| format!("cannot load the kernels on {device}"))?;
    Ok((ctx, module, device))
}

/// Bandwidth of a large device-to-device copy on device `ordinal`, in bytes (read plus
/// written) per second: the ceiling the memory-bound kernels are measured against.
pub fn copy_bandwidth(ordinal: usize, bytes: usize) -> Result<f64> {
    let ctx = CudaContext::new(ordinal)?;
    let stream = ctx.default_stream();
    let n = bytes / 8;
    let src = stream.alloc_zeros::<u64>(n)?;
    let mut dst = stream.alloc_zeros::<u64>(n)?;
    let ev = || ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT));
    let (a, b) = (ev()?, ev()?);
    let mut times = Vec::new();
    for _ in 0..7 {
        a.record(&stream)?;
        stream.memcpy_dtod(&src, &mut dst)?;
        b.record(&stream)?;
        times.push(a.elapsed_ms(&b)? as f64 * 1e-3);
    }
    times.sort_by(f64::total_cmp);
    Ok(2.0 * (8 * n) as f64 / times[times.len() / 2])
}
