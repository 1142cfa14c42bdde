//! NetCDF-4 (HDF5) and CDF-5 files through the system libnetcdf, loaded at run time
//! (dlopen) only when such a file is given: the binary needs no NetCDF library to build or
//! to run, and says what to install when one is needed. `PYCNO_LIBNETCDF` names the library
//! file to load instead of the system's.

use super::netcdf_source::{Source, VarInfo};
use anyhow::{anyhow, bail, Result};
use libloading::Library;
use std::ffi::{c_char, c_int, CStr, CString};
use std::path::Path;
use std::sync::{Mutex, MutexGuard, OnceLock};

type Open = unsafe extern "C" fn(*const c_char, c_int, *mut c_int) -> c_int;
type Close = unsafe extern "C" fn(c_int) -> c_int;
type StrError = unsafe extern "C" fn(c_int) -> *const c_char;
type InqNvars = unsafe extern "C" fn(c_int, *mut c_int) -> c_int;
type InqVarname = unsafe extern "C" fn(c_int, c_int, *mut c_char) -> c_int;
type InqVarndims = unsafe extern "C" fn(c_int, c_int, *mut c_int) -> c_int;
type InqVardimid = unsafe extern "C" fn(c_int, c_int, *mut c_int) -> c_int;
type InqVartype = unsafe extern "C" fn(c_int, c_int, *mut c_int) -> c_int;
type InqDim = unsafe extern "C" fn(c_int, c_int, *mut c_char, *mut usize) -> c_int;
type InqVarid = unsafe extern "C" fn(c_int, *const c_char, *mut c_int) -> c_int;
type GetVarDouble = unsafe extern "C" fn(c_int, c_int, *mut f64) -> c_int;
type GetVaraDouble = unsafe extern "C" fn(c_int, c_int, *const usize, *const usize, *mut f64) -> c_int;
type InqAtt = unsafe extern "C" fn(c_int, c_int, *const c_char, *mut c_int, *mut usize) -> c_int;
type GetAttDouble = unsafe extern "C" fn(c_int, c_int, *const c_char, *mut f64) -> c_int;

/// NC_MAX_NAME is 256; names are written with their NUL.
const NAME_LEN: usize = 1024;
const NC_CHAR: c_int = 2;
const NC_STRING: c_int = 12;

struct Api {
    open: Open,
    close: Close,
    strerror: StrError,
    inq_nvars: InqNvars,
    inq_varname: InqVarname,
    inq_varndims: InqVarndims,
    inq_vardimid: InqVardimid,
    inq_vartype: InqVartype,
    inq_dim: InqDim,
    inq_varid: InqVarid,
    get_var_double: GetVarDouble,
    get_vara_double: GetVaraDouble,
    inq_att: InqAtt,
    get_att_double: GetAttDouble,
    // Keeps the functions above loaded.
    _lib: Library,
}

pub struct Nc4 {
    api: &'static Api,
    ncid: c_int,
    // libnetcdf is not thread-safe: one file open at a time in this process.
    _one_at_a_time: MutexGuard<'static, ()>,
}

static API: OnceLock<Result<Api, String>> = OnceLock::new();
static LOCK: Mutex<()> = Mutex::new(());

/// The library, loaded once and never unloaded: HDF5 registers exit handlers that must find
/// it still mapped.
fn api() -> Result<&'static Api> {
    API.get_or_init(|| load().map_err(|e| format!("{e:#}"))).as_ref().map_err(|e| anyhow!("{e}"))
}

fn load() -> Result<Api> {
    let names: Vec<String> = match std::env::var("PYCNO_LIBNETCDF") {
        Ok(p) if !p.is_empty() => vec![p],
        _ => [
            "libnetcdf.so",
            "libnetcdf.so.19",
            "libnetcdf.so.22",
            "libnetcdf.so.18",
            "libnetcdf.so.15",
            "libnetcdf.dylib",
        ]
        .map(String::from)
        .to_vec(),
    };
    let mut last = String::new();
    for name in &names {
        // SAFETY: loading libnetcdf runs its (and HDF5's) initialisers, which have no
        // preconditions.
        match unsafe { Library::new(name) } {
            Ok(lib) => return bind(lib).map_err(|e| anyhow!("{name}: {e}")),
            Err(e) => last = e.to_string(),
        }
    }
    bail!(
        "this is a NetCDF-4 (HDF5) or CDF-5 file, which pycno reads with the system's NetCDF library, and none could be \
         loaded (tried {}; last error: {last}); install it (Debian/Ubuntu: apt-get install libnetcdf-dev), set \
         PYCNO_LIBNETCDF to the library file, or convert the file to classic NetCDF (nccopy -k classic IN OUT)",
        names.join(", ")
    )
}

fn bind(lib: Library) -> Result<Api> {
    // SAFETY: each symbol is declared with the C signature of netcdf.h.
    unsafe {
        macro_rules! sym {
            ($name:literal) => {
                *lib.get(concat!($name, "\0").as_bytes()).map_err(|e| anyhow!("missing {}: {e}", $name))?
            };
        }
        Ok(Api {
            open: sym!("nc_open"),
            close: sym!("nc_close"),
            strerror: sym!("nc_strerror"),
            inq_nvars: sym!("nc_inq_nvars"),
            inq_varname: sym!("nc_inq_varname"),
            inq_varndims: sym!("nc_inq_varndims"),
            inq_vardimid: sym!("nc_inq_vardimid"),
            inq_vartype: sym!("nc_inq_vartype"),
            inq_dim: sym!("nc_inq_dim"),
            inq_varid: sym!("nc_inq_varid"),
            get_var_double: sym!("nc_get_var_double"),
            get_vara_double: sym!("nc_get_vara_double"),
            inq_att: sym!("nc_inq_att"),
            get_att_double: sym!("nc_get_att_double"),
            _lib: lib,
        })
    }
}

impl Api {
    fn check(&self, status: c_int, what: &str) -> Result<()> {
        if status == 0 {
            return Ok(());
        }
        // SAFETY: nc_strerror returns a static NUL-terminated string for any status.
        let msg = unsafe { CStr::from_ptr((self.strerror)(status)) }.to_string_lossy().into_owned();
        bail!("{what}: {msg}")
    }
}

pub fn open(path: &Path) -> Result<Nc4> {
    let api = api()?;
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let cpath = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| anyhow!("the path holds a NUL byte"))?;
    let mut ncid = 0;
    // SAFETY: a NUL-terminated path and a valid out-pointer; mode 0 is NC_NOWRITE.
    api.check(unsafe { (api.open)(cpath.as_ptr(), 0, &mut ncid) }, "cannot open with libnetcdf")?;
    Ok(Nc4 { api, ncid, _one_at_a_time: guard })
}

impl Drop for Nc4 {
    fn drop(&mut self) {
        // SAFETY: ncid came from nc_open and is closed once.
        unsafe { (self.api.close)(self.ncid) };
    }
}

impl Nc4 {
    fn var_info(&self, varid: c_int) -> Result<VarInfo> {
        let a = &self.api;
        let mut name = vec![0 as c_char; NAME_LEN];
        let (mut ndims, mut xtype) = (0, 0);
        // SAFETY: buffers larger than NC_MAX_NAME + 1 and valid out-pointers.
        unsafe {
            a.check((a.inq_varname)(self.ncid, varid, name.as_mut_ptr()), "nc_inq_varname")?;
            a.check((a.inq_varndims)(self.ncid, varid, &mut ndims), "nc_inq_varndims")?;
            a.check((a.inq_vartype)(self.ncid, varid, &mut xtype), "nc_inq_vartype")?;
        }
        let mut dimids = vec![0 as c_int; ndims.max(1) as usize];
        // SAFETY: room for ndims ids.
        unsafe { a.check((a.inq_vardimid)(self.ncid, varid, dimids.as_mut_ptr()), "nc_inq_vardimid")? };
        let mut dims = Vec::new();
        for &d in &dimids[..ndims as usize] {
            let mut dname = vec![0 as c_char; NAME_LEN];
            let mut len = 0usize;
            // SAFETY: as above.
            unsafe { a.check((a.inq_dim)(self.ncid, d, dname.as_mut_ptr(), &mut len), "nc_inq_dim")? };
            // SAFETY: libnetcdf wrote a NUL-terminated name.
            dims.push((unsafe { CStr::from_ptr(dname.as_ptr()) }.to_string_lossy().into_owned(), len));
        }
        // SAFETY: as above.
        let name = unsafe { CStr::from_ptr(name.as_ptr()) }.to_string_lossy().into_owned();
        Ok(VarInfo { name, dims, numeric: xtype != NC_CHAR && xtype != NC_STRING })
    }

    fn varid(&self, var: &str) -> Option<c_int> {
        let c = CString::new(var).ok()?;
        let mut id = 0;
        // SAFETY: a NUL-terminated name and a valid out-pointer.
        (unsafe { (self.api.inq_varid)(self.ncid, c.as_ptr(), &mut id) } == 0).then_some(id)
    }
}

impl Source for Nc4 {
    fn vars(&self) -> Vec<VarInfo> {
        let mut n = 0;
        // SAFETY: a valid out-pointer.
        if unsafe { (self.api.inq_nvars)(self.ncid, &mut n) } != 0 {
            return vec![];
        }
        (0..n).filter_map(|v| self.var_info(v).ok()).collect()
    }

    fn read(&mut self, var: &str) -> Result<Vec<f64>> {
        let id = self.varid(var).ok_or_else(|| anyhow!("no variable {var:?}"))?;
        let info = self.var_info(id)?;
        let n = info.dims.iter().try_fold(1usize, |n, d| n.checked_mul(d.1)).unwrap_or(usize::MAX);
        super::check_fits(&format!("holding variable {var:?} ({n} values)"), n as f64, 8.0)?;
        let mut out = vec![0.0f64; n];
        // SAFETY: room for every value of the variable.
        let status = unsafe { (self.api.get_var_double)(self.ncid, id, out.as_mut_ptr()) };
        self.api.check(status, &format!("cannot read variable {var:?}"))?;
        Ok(out)
    }

    fn read_window(&mut self, var: &str, dims: [usize; 2], start: [usize; 2], count: [usize; 2]) -> Result<Vec<f64>> {
        let id = self.varid(var).ok_or_else(|| anyhow!("no variable {var:?}"))?;
        let info = self.var_info(id)?;
        let shape: Vec<usize> = info.dims.iter().map(|d| d.1).collect();
        if shape != dims || start[0] + count[0] > dims[0] || start[1] + count[1] > dims[1] {
            bail!("variable {var:?}: expected {} by {} values, found {shape:?}", dims[0], dims[1]);
        }
        super::check_fits(
            &format!("holding {} by {} values of variable {var:?}", count[0], count[1]),
            count[0] as f64 * count[1] as f64,
            8.0,
        )?;
        let mut out = vec![0.0f64; count[0] * count[1]];
        // SAFETY: start and count have one entry per dimension (2), and out room for the
        // count[0] * count[1] values they select.
        let status =
            unsafe { (self.api.get_vara_double)(self.ncid, id, start.as_ptr(), count.as_ptr(), out.as_mut_ptr()) };
        self.api.check(status, &format!("cannot read variable {var:?}"))?;
        Ok(out)
    }

    fn att(&self, var: &str, att: &str) -> Option<f64> {
        let id = self.varid(var)?;
        let c = CString::new(att).ok()?;
        let (mut xtype, mut len) = (0, 0usize);
        // SAFETY: valid pointers; the attribute's length is checked before reading it.
        unsafe {
            if (self.api.inq_att)(self.ncid, id, c.as_ptr(), &mut xtype, &mut len) != 0
                || len == 0
                || xtype == NC_CHAR
                || xtype == NC_STRING
            {
                return None;
            }
            let mut v = vec![0.0f64; len];
            ((self.api.get_att_double)(self.ncid, id, c.as_ptr(), v.as_mut_ptr()) == 0).then(|| v[0])
        }
    }
}
