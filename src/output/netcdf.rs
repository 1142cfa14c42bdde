//! NetCDF output in the UGRID-1.0 and CF-1.8 conventions (the unstructured-mesh convention
//! of SCHISM, ADCIRC, FVCOM and Delft3D FM: xarray, ParaView, QGIS and the ocean toolchain
//! read it), written here with no C library: the classic 64-bit-offset format (CDF-2,
//! <https://docs.unidata.ucar.edu/netcdf-c/current/file_format_specifications.html>) is a
//! short big-endian header followed by the arrays, so the binary keeps running on machines
//! without libnetcdf and the GPU build is untouched.
//!
//! One file per run, `<name>.nc`: the mesh (node coordinates, face-node connectivity with
//! `start_index = 0`, face centres), the bathymetry, one record per output time along the
//! unlimited `time` dimension (the cell fields of `output.fields`, velocities as `u1, v1,
//! u2, v2`), and the max maps written into their reserved space at the end. Records are
//! appended as the run goes and the record count in the header is updated after each, so a
//! killed run's file holds every record it finished. A restart continues the file, after
//! dropping the records past its checkpoint.
//!
//! Several ranks: rank 0 writes the file, with each frame gathered to it in global cell
//! order (the faces are the global mesh's triangles, so face `k` is cell id `k`).

use anyhow::{bail, Context, Result};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

const NC_CHAR: u32 = 2;
const NC_INT: u32 = 4;
const NC_FLOAT: u32 = 5;
const NC_DOUBLE: u32 = 6;
const NC_DIMENSION: u32 = 0x0A;
const NC_VARIABLE: u32 = 0x0B;
const NC_ATTRIBUTE: u32 = 0x0C;

/// An attribute value.
#[derive(Clone, Debug)]
pub enum Attr {
    Text(String),
    Int(i32),
    Double(f64),
}

/// The element type of a variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    Int,
    Float,
    Double,
}

impl Type {
    fn code(self) -> u32 {
        match self {
            Type::Int => NC_INT,
            Type::Float => NC_FLOAT,
            Type::Double => NC_DOUBLE,
        }
    }
    fn size(self) -> usize {
        match self {
            Type::Int | Type::Float => 4,
            Type::Double => 8,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Var {
    pub name: String,
    /// Indices into the dimensions; a record variable has the record dimension first.
    pub dims: Vec<usize>,
    pub ty: Type,
    pub attrs: Vec<(String, Attr)>,
}

/// The file's layout: dimensions (length 0 = the record dimension), global attributes and
/// variables, and where each variable's data begins.
#[derive(Clone, Debug, Default)]
pub struct Schema {
    pub dims: Vec<(String, usize)>,
    pub attrs: Vec<(String, Attr)>,
    pub vars: Vec<Var>,
}

fn pad4(n: usize) -> usize {
    n.div_ceil(4) * 4
}

fn put_u32(b: &mut Vec<u8>, x: u32) {
    b.extend_from_slice(&x.to_be_bytes());
}

fn put_name(b: &mut Vec<u8>, s: &str) {
    put_u32(b, s.len() as u32);
    b.extend_from_slice(s.as_bytes());
    b.resize(pad4(b.len()), 0);
}

fn put_attrs(b: &mut Vec<u8>, attrs: &[(String, Attr)]) {
    if attrs.is_empty() {
        return b.extend_from_slice(&[0; 8]);
    }
    put_u32(b, NC_ATTRIBUTE);
    put_u32(b, attrs.len() as u32);
    for (name, a) in attrs {
        put_name(b, name);
        match a {
            Attr::Text(s) => {
                put_u32(b, NC_CHAR);
                put_name(b, s);
            }
            Attr::Int(x) => {
                put_u32(b, NC_INT);
                put_u32(b, 1);
                b.extend_from_slice(&x.to_be_bytes());
            }
            Attr::Double(x) => {
                put_u32(b, NC_DOUBLE);
                put_u32(b, 1);
                b.extend_from_slice(&x.to_be_bytes());
            }
        }
    }
}

impl Schema {
    pub fn dim(&mut self, name: &str, len: usize) -> usize {
        self.dims.push((name.into(), len));
        self.dims.len() - 1
    }

    pub fn var(&mut self, name: &str, dims: &[usize], ty: Type, attrs: &[(&str, Attr)]) {
        let attrs = attrs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        self.vars.push(Var { name: name.into(), dims: dims.to_vec(), ty, attrs });
    }

    fn is_record(&self, v: &Var) -> bool {
        v.dims.first().is_some_and(|&d| self.dims[d].1 == 0)
    }

    /// Bytes of one variable (of one record of a record variable), padded to 4.
    fn vsize(&self, v: &Var) -> usize {
        let n: usize = v.dims.iter().map(|&d| self.dims[d].1).filter(|&l| l != 0).product();
        pad4(n * v.ty.size())
    }

    /// The header, each variable's begin offset, and the size of one record.
    pub fn layout(&self) -> (Vec<u8>, Vec<u64>, u64) {
        let header = |begins: &[u64]| {
            let mut b = Vec::new();
            b.extend_from_slice(b"CDF\x02");
            put_u32(&mut b, 0); // record count: updated as records are written
            if self.dims.is_empty() {
                b.extend_from_slice(&[0; 8]);
            } else {
                put_u32(&mut b, NC_DIMENSION);
                put_u32(&mut b, self.dims.len() as u32);
                for (name, len) in &self.dims {
                    put_name(&mut b, name);
                    put_u32(&mut b, *len as u32);
                }
            }
            put_attrs(&mut b, &self.attrs);
            put_u32(&mut b, NC_VARIABLE);
            put_u32(&mut b, self.vars.len() as u32);
            for (v, begin) in self.vars.iter().zip(begins) {
                put_name(&mut b, &v.name);
                put_u32(&mut b, v.dims.len() as u32);
                for &d in &v.dims {
                    put_u32(&mut b, d as u32);
                }
                put_attrs(&mut b, &v.attrs);
                put_u32(&mut b, v.ty.code());
                put_u32(&mut b, self.vsize(v).min(u32::MAX as usize) as u32);
                b.extend_from_slice(&begin.to_be_bytes());
            }
            b
        };
        // The header's size does not depend on the offsets (8 bytes each).
        let size = header(&vec![0; self.vars.len()]).len() as u64;
        let mut begins = vec![0u64; self.vars.len()];
        let mut at = size;
        for (k, v) in self.vars.iter().enumerate().filter(|(_, v)| !self.is_record(v)) {
            begins[k] = at;
            at += self.vsize(v) as u64;
        }
        let mut rec = 0u64;
        for (k, v) in self.vars.iter().enumerate().filter(|(_, v)| self.is_record(v)) {
            begins[k] = at + rec;
            rec += self.vsize(v) as u64;
        }
        (header(&begins), begins, rec)
    }
}

/// Values of a variable, converted to its type on writing.
pub enum Data<'a> {
    Int(&'a [i32]),
    Real(&'a [f64]),
}

/// An open NetCDF file being written (rank 0).
pub struct Writer {
    path: PathBuf,
    file: File,
    schema: Schema,
    begins: Vec<u64>,
    record_size: u64,
    records: u32,
    /// Where the record variables' data starts.
    records_at: u64,
}

fn encode(ty: Type, data: &Data, want: usize) -> Result<Vec<u8>> {
    let n = match data {
        Data::Int(v) => v.len(),
        Data::Real(v) => v.len(),
    };
    if n != want {
        bail!("{n} values for a variable of {want}");
    }
    let mut b = Vec::with_capacity(pad4(n * ty.size()));
    match (ty, data) {
        (Type::Int, Data::Int(v)) => v.iter().for_each(|x| b.extend_from_slice(&x.to_be_bytes())),
        (Type::Float, Data::Real(v)) => v.iter().for_each(|&x| b.extend_from_slice(&(x as f32).to_be_bytes())),
        (Type::Double, Data::Real(v)) => v.iter().for_each(|x| b.extend_from_slice(&x.to_be_bytes())),
        _ => bail!("values of the wrong kind for a {ty:?} variable"),
    }
    b.resize(pad4(b.len()), 0);
    Ok(b)
}

impl Writer {
    /// A new file at `path` (replacing one there) with `schema`'s header.
    pub fn create(path: &Path, schema: Schema) -> Result<Writer> {
        let (header, begins, record_size) = schema.layout();
        let file = OpenOptions::new()
            .write(true)
            .read(true)
            .create(true)
            .truncate(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        file.write_all_at(&header, 0).with_context(|| format!("cannot write {}", path.display()))?;
        let records_at = schema.vars.iter().zip(&begins).filter(|(v, _)| schema.is_record(v)).map(|(_, &b)| b).min();
        let records_at = records_at.unwrap_or(header.len() as u64);
        Ok(Writer { path: path.into(), file, schema, begins, record_size, records: 0, records_at })
    }

    /// Continue the file at `path`, which must have been written with this `schema`, keeping
    /// the records whose `time_var` value is at most `t` (a restart).
    pub fn resume(path: &Path, schema: Schema, time_var: &str, t: f64) -> Result<Writer> {
        let (header, begins, record_size) = schema.layout();
        let file = OpenOptions::new()
            .write(true)
            .read(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .with_context(|| format!("cannot open {} to continue it", path.display()))?;
        let mut have = vec![0u8; header.len()];
        file.read_exact_at(&mut have, 0).with_context(|| format!("cannot read {}", path.display()))?;
        if have[..4] != header[..4] || have[8..] != header[8..] {
            bail!("{} was not written by this run's scenario: cannot continue it", path.display());
        }
        let n = u32::from_be_bytes(have[4..8].try_into().unwrap());
        let k = schema.vars.iter().position(|v| v.name == time_var).context("no time variable")?;
        let mut keep = 0;
        for r in 0..n {
            let mut x = [0u8; 8];
            file.read_exact_at(&mut x, begins[k] + u64::from(r) * record_size)
                .with_context(|| format!("{}: record {r} is cut short", path.display()))?;
            if f64::from_be_bytes(x) > t {
                break;
            }
            keep = r + 1;
        }
        let records_at = schema.vars.iter().zip(&begins).filter(|(v, _)| schema.is_record(v)).map(|(_, &b)| b).min();
        let records_at = records_at.unwrap_or(header.len() as u64);
        let mut w = Writer { path: path.into(), file, schema, begins, record_size, records: 0, records_at };
        w.set_records(keep)?;
        w.file
            .set_len(w.records_at + u64::from(keep) * w.record_size)
            .with_context(|| format!("cannot cut {} back to its checkpoint", path.display()))?;
        Ok(w)
    }

    fn index(&self, name: &str) -> Result<usize> {
        self.schema.vars.iter().position(|v| v.name == name).with_context(|| format!("no variable {name}"))
    }

    fn count(&self, v: &Var) -> usize {
        v.dims.iter().map(|&d| self.schema.dims[d].1).filter(|&l| l != 0).product()
    }

    /// Write a variable that is not along the record dimension.
    pub fn put(&mut self, name: &str, data: Data) -> Result<()> {
        let k = self.index(name)?;
        let v = &self.schema.vars[k];
        let b = encode(v.ty, &data, self.count(v)).with_context(|| format!("{}: {name}", self.path.display()))?;
        self.file.write_all_at(&b, self.begins[k]).with_context(|| format!("cannot write {}", self.path.display()))
    }

    /// Append one record: every record variable's values, by name.
    pub fn append(&mut self, values: &[(&str, Data)]) -> Result<()> {
        let r = u64::from(self.records);
        for (name, data) in values {
            let k = self.index(name)?;
            let v = &self.schema.vars[k];
            let b = encode(v.ty, data, self.count(v)).with_context(|| format!("{}: {name}", self.path.display()))?;
            self.file
                .write_all_at(&b, self.begins[k] + r * self.record_size)
                .with_context(|| format!("cannot write {}", self.path.display()))?;
        }
        self.set_records(self.records + 1)
    }

    fn set_records(&mut self, n: u32) -> Result<()> {
        self.records = n;
        self.file.write_all_at(&n.to_be_bytes(), 4).with_context(|| format!("cannot write {}", self.path.display()))
    }

    pub fn records(&self) -> u32 {
        self.records
    }
}
