//! What the kernels receive: the layout's device arrays as one `#[repr(C)]` struct
//! ([`DeviceArrays`], `Arrays` in `kernels/solver.cu`), the model as another
//! (`physics::Model`, `kernels/model.cuh`), and the launch geometry. The probe kernels check
//! that both sides agree on the structs' sizes (`tests/gpu_probes.rs`).

use super::device::block;
use crate::physics::{Boundary, Model, Real};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DeviceRepr, LaunchConfig, ValidAsZeroBits};

/// A float type the kernels exist for.
pub trait CudaReal: Real + DeviceRepr + ValidAsZeroBits {
    const SUFFIX: &'static str;
    fn from_min_bits(bits: u64) -> f64;
}
impl CudaReal for f32 {
    const SUFFIX: &'static str = "f32";
    fn from_min_bits(bits: u64) -> f64 {
        if bits > u32::MAX as u64 {
            f64::NAN
        } else {
            f32::from_bits(bits as u32) as f64
        }
    }
}
impl CudaReal for f64 {
    const SUFFIX: &'static str = "f64";
    fn from_min_bits(bits: u64) -> f64 {
        if bits == u64::MAX {
            f64::NAN
        } else {
            f64::from_bits(bits)
        }
    }
}

// SAFETY: #[repr(C)] structs of floats and ints, mirrored field for field in
// kernels/model.cuh and kernels/boundary.cuh, passed by value.
unsafe impl<T: CudaReal> DeviceRepr for Model<T> {}
unsafe impl<T: CudaReal> DeviceRepr for Boundary<T> {}
// SAFETY: plain old data; the device reads it as Boundary<T> records.
unsafe impl<T: CudaReal> ValidAsZeroBits for Boundary<T> {}

/// `Arrays<T>` of `kernels/solver.cu`: device pointers and sizes, passed by value.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct DeviceArrays {
    pub v1: u64,
    pub v2: u64,
    pub o1: u64,
    pub o2: u64,
    pub lo: u64,
    pub olo: u64,
    pub ecells: u64,
    pub enormal: u64,
    pub acc: u64,
    pub boundaries: u64,
    pub scratch: u64,
    pub stride: i64,
    pub n_owned: i32,
    pub reserved: i32,
    /// Each owned cell's Coriolis parameter on a beta-plane (one unused word otherwise).
    pub coriolis: u64,
    /// Each edge's viscous coupling (`Layout::edge_viscosity`); 0 (null): no viscosity.
    pub evisc: u64,
}
// SAFETY: #[repr(C)], integers only, mirrored in kernels/solver.cu.
unsafe impl DeviceRepr for DeviceArrays {}

/// The device address of `s`. The backend orders its streams with its own events (cudarc's
/// event tracking is off), so the guard cudarc returns has nothing to do.
pub fn address<T>(s: &CudaSlice<T>, stream: &CudaStream) -> u64 {
    let (ptr, _guard) = s.device_ptr(stream);
    ptr
}

/// One thread per item, `block()` threads per block.
pub fn grid(n: usize) -> LaunchConfig {
    let b = block();
    LaunchConfig { grid_dim: ((n as u32).div_ceil(b).max(1), 1, 1), block_dim: (b, 1, 1), shared_mem_bytes: 0 }
}

/// Whether kernels of the device-resident steps are launched with programmatic dependent
/// launch (Hopper and later; `PYCNO_PDL=0` turns it off): each kernel's blocks are scheduled
/// while the kernel before it on the stream finishes, and wait in `pdl_wait`
/// (`kernels/resident.cu`) before reading what it wrote.
pub fn pdl_enabled(major: i32) -> bool {
    major >= 9 && std::env::var("PYCNO_PDL").map_or(true, |v| v != "0")
}

/// Launch `f` on `stream` with `args` (pointers to each argument, in order), with
/// programmatic dependent launch on the kernel before it on the stream where `pdl`.
///
/// # Safety
/// As `cudarc`'s launch: `args` must be the kernel's parameters, in order and of its types.
pub unsafe fn launch_ex(
    stream: &CudaStream,
    f: &cudarc::driver::CudaFunction,
    cfg: LaunchConfig,
    pdl: bool,
    args: &[*const std::ffi::c_void],
) -> Result<(), cudarc::driver::DriverError> {
    use cudarc::driver::sys;
    // SAFETY: a plain C struct and union, all zeros is valid.
    let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
    let config = sys::CUlaunchConfig {
        gridDimX: cfg.grid_dim.0,
        gridDimY: cfg.grid_dim.1,
        gridDimZ: cfg.grid_dim.2,
        blockDimX: cfg.block_dim.0,
        blockDimY: cfg.block_dim.1,
        blockDimZ: cfg.block_dim.2,
        sharedMemBytes: cfg.shared_mem_bytes,
        hStream: stream.cu_stream(),
        attrs: &mut attr,
        numAttrs: u32::from(pdl),
    };
    let mut params: Vec<*mut std::ffi::c_void> = args.iter().map(|&p| p as *mut std::ffi::c_void).collect();
    stream.context().bind_to_thread()?;
    // SAFETY: the caller's promise on `args`; `config` and `attr` outlive the call.
    unsafe { sys::cuLaunchKernelEx(&config, f.cu_function(), params.as_mut_ptr(), std::ptr::null_mut()) }.result()
}
