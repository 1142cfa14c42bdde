//! NCCL, loaded at run time (`libnccl.so.2`, the name the NCCL packages install; cudarc's own
//! loader does not look for it), with only the calls the GPU-to-GPU halo exchange and the
//! device time-step reduction need. A machine without NCCL never loads it: [`Nccl::connect`]
//! first agrees over MPI that every rank could load it, so no rank is left waiting in
//! `ncclCommInitRank`, and the caller falls back to the host-staged exchange otherwise.

use crate::comm::Comm;
use anyhow::{anyhow, bail, Context, Result};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;

type NcclComm = *mut c_void;
type Status = c_int;
/// `ncclUint8` and `ncclUint64` of `ncclDataType_t`.
pub const UINT8: c_int = 1;
pub const UINT64: c_int = 5;
/// `ncclMax` and `ncclMin` of `ncclRedOp_t`.
pub const MAX: c_int = 2;
pub const MIN: c_int = 3;

#[repr(C)]
#[derive(Clone, Copy)]
struct UniqueId([u8; 128]);

/// The functions of the library, resolved once.
struct Lib {
    _lib: libloading::Library,
    version: unsafe extern "C" fn(*mut c_int) -> Status,
    unique_id: unsafe extern "C" fn(*mut UniqueId) -> Status,
    init_rank: unsafe extern "C" fn(*mut NcclComm, c_int, UniqueId, c_int) -> Status,
    destroy: unsafe extern "C" fn(NcclComm) -> Status,
    error_string: unsafe extern "C" fn(Status) -> *const c_char,
    send: unsafe extern "C" fn(*const c_void, usize, c_int, c_int, NcclComm, *mut c_void) -> Status,
    recv: unsafe extern "C" fn(*mut c_void, usize, c_int, c_int, NcclComm, *mut c_void) -> Status,
    all_reduce: unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, c_int, NcclComm, *mut c_void) -> Status,
    group_start: unsafe extern "C" fn() -> Status,
    group_end: unsafe extern "C" fn() -> Status,
}

/// The library names tried, in order (`PYCNO_NCCL_LIB` first when set: another NCCL, or a
/// name that does not exist to try the fallback).
fn candidates() -> Vec<String> {
    let mut v: Vec<String> = std::env::var("PYCNO_NCCL_LIB").ok().into_iter().collect();
    if v.is_empty() {
        v.extend(["libnccl.so.2".into(), "libnccl.so".into()]);
    }
    v
}

fn load() -> Result<&'static Lib, String> {
    static LIB: OnceLock<Result<Lib, String>> = OnceLock::new();
    LIB.get_or_init(|| {
        let mut why = Vec::new();
        for name in candidates() {
            // SAFETY: loading NCCL runs its initializers, which have no preconditions.
            match unsafe { libloading::Library::new(&name) } {
                Ok(lib) => return resolve(lib).map_err(|e| format!("{name}: {e}")),
                Err(e) => why.push(format!("{name}: {e}")),
            }
        }
        Err(format!("NCCL not found ({})", why.join("; ")))
    })
    .as_ref()
    .map_err(|e| e.clone())
}

fn resolve(lib: libloading::Library) -> Result<Lib, libloading::Error> {
    // SAFETY: the signatures are those of nccl.h (NCCL 2.x); the pointers stay valid while
    // `_lib` is held, which the struct does.
    unsafe {
        Ok(Lib {
            version: *lib.get(b"ncclGetVersion\0")?,
            unique_id: *lib.get(b"ncclGetUniqueId\0")?,
            init_rank: *lib.get(b"ncclCommInitRank\0")?,
            destroy: *lib.get(b"ncclCommDestroy\0")?,
            error_string: *lib.get(b"ncclGetErrorString\0")?,
            send: *lib.get(b"ncclSend\0")?,
            recv: *lib.get(b"ncclRecv\0")?,
            all_reduce: *lib.get(b"ncclAllReduce\0")?,
            group_start: *lib.get(b"ncclGroupStart\0")?,
            group_end: *lib.get(b"ncclGroupEnd\0")?,
            _lib: lib,
        })
    }
}

fn check(lib: &Lib, what: &str, s: Status) -> Result<()> {
    if s == 0 {
        return Ok(());
    }
    // SAFETY: ncclGetErrorString returns a static C string.
    let msg = unsafe { CStr::from_ptr((lib.error_string)(s)) }.to_string_lossy();
    bail!("NCCL {what}: {msg} (status {s})")
}

/// The NCCL version here ("2.28.3"), or why NCCL cannot be used.
pub fn version() -> Result<String, String> {
    let lib = load()?;
    let mut v = 0;
    // SAFETY: writes one int.
    if unsafe { (lib.version)(&mut v) } != 0 {
        return Err("ncclGetVersion failed".into());
    }
    Ok(format!("{}.{}.{}", v / 10000, v / 100 % 100, v % 100))
}

/// One NCCL communicator over all ranks of `comm`, on the CUDA device current on this thread.
pub struct Nccl {
    comm: NcclComm,
    lib: &'static Lib,
    pub version: String,
}

// SAFETY: the communicator is used by one thread at a time (it lives in one backend, touched
// through `&mut self`); NCCL allows that.
unsafe impl Send for Nccl {}

impl Nccl {
    /// Every rank of `comm` calls this together. `Ok(None)` on every rank where any rank
    /// cannot load NCCL (with the first reason, on the ranks that saw one).
    pub fn connect(comm: &dyn Comm) -> Result<std::result::Result<Nccl, String>> {
        let here = version();
        let everywhere = comm.min_f64(if here.is_ok() { 1.0 } else { 0.0 }) > 0.0;
        let version = match (everywhere, here) {
            (true, Ok(v)) => v,
            (_, Err(e)) => return Ok(Err(e)),
            (false, Ok(_)) => return Ok(Err("NCCL is missing on another rank".into())),
        };
        // NVLink multicast (NVLS) stays off: the 2-GPU machines this was measured on hang
        // with it (the device tool's KINDS.md); a user's own setting wins.
        if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
            std::env::set_var("NCCL_NVLS_ENABLE", "0");
        }
        let lib = load().map_err(|e| anyhow!(e))?;
        let mut id = UniqueId([0; 128]);
        if comm.is_root() {
            // SAFETY: writes the 128-byte id.
            check(lib, "ncclGetUniqueId", unsafe { (lib.unique_id)(&mut id) })?;
        }
        let mut words: Vec<u32> = id.0.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        comm.broadcast_u32(&mut words);
        if words.len() != 32 {
            bail!("the NCCL id arrived with {} words, not 32", words.len());
        }
        for (dst, w) in id.0.chunks_exact_mut(4).zip(&words) {
            dst.copy_from_slice(&w.to_le_bytes());
        }
        let mut c: NcclComm = std::ptr::null_mut();
        let (n, r) = (comm.size() as c_int, comm.rank() as c_int);
        // SAFETY: `c` receives the communicator; every rank passes the same id and size.
        check(lib, "ncclCommInitRank", unsafe { (lib.init_rank)(&mut c, n, id, r) })
            .context("setting up the GPU-to-GPU exchange")?;
        Ok(Ok(Nccl { comm: c, lib, version }))
    }

    pub fn group_start(&self) -> Result<()> {
        // SAFETY: no arguments.
        check(self.lib, "ncclGroupStart", unsafe { (self.lib.group_start)() })
    }
    pub fn group_end(&self) -> Result<()> {
        // SAFETY: no arguments.
        check(self.lib, "ncclGroupEnd", unsafe { (self.lib.group_end)() })
    }

    /// Queue sending `bytes` bytes at device address `ptr` to `peer` on `stream`.
    ///
    /// # Safety
    /// `ptr..ptr + bytes` is device memory that stays allocated until the stream is done.
    pub unsafe fn send(&self, ptr: u64, bytes: usize, peer: usize, stream: *mut c_void) -> Result<()> {
        check(
            self.lib,
            "ncclSend",
            (self.lib.send)(ptr as *const c_void, bytes, UINT8, peer as c_int, self.comm, stream),
        )
    }

    /// Queue receiving `bytes` bytes from `peer` into device address `ptr` on `stream`.
    ///
    /// # Safety
    /// As [`Nccl::send`].
    pub unsafe fn recv(&self, ptr: u64, bytes: usize, peer: usize, stream: *mut c_void) -> Result<()> {
        check(self.lib, "ncclRecv", (self.lib.recv)(ptr as *mut c_void, bytes, UINT8, peer as c_int, self.comm, stream))
    }

    /// Queue an in-place all-reduce of `count` u64 words at `ptr` with `op` ([`MIN`], [`MAX`]).
    ///
    /// # Safety
    /// As [`Nccl::send`].
    pub unsafe fn all_reduce_u64(&self, ptr: u64, count: usize, op: c_int, stream: *mut c_void) -> Result<()> {
        let p = ptr as *mut c_void;
        check(self.lib, "ncclAllReduce", (self.lib.all_reduce)(p, p, count, UINT64, op, self.comm, stream))
    }
}

impl Drop for Nccl {
    fn drop(&mut self) {
        // SAFETY: the communicator was made by ncclCommInitRank and is destroyed once; the
        // backend synchronizes its streams before this runs.
        unsafe { (self.lib.destroy)(self.comm) };
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_missing_library_is_reported_by_name_and_nothing_is_connected() {
        // The only test of this binary that loads NCCL: the OnceLock sees this name first.
        std::env::set_var("PYCNO_NCCL_LIB", "libpycno-no-such-nccl.so.2");
        let e = super::version().expect_err("a library that does not exist loaded");
        assert!(e.contains("NCCL not found") && e.contains("libpycno-no-such-nccl.so.2"), "{e}");
        let e = super::Nccl::connect(&crate::comm::Single).expect("no collective failed");
        assert!(e.is_err(), "connected without NCCL");
    }
}
