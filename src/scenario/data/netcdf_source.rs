//! What the NetCDF grid reader (`netcdf.rs`) needs from a NetCDF library: the variables
//! with their dimensions, their values and their attributes. The classic reader
//! (`netcdf.rs`, pure Rust) and libnetcdf (`netcdf4.rs`) each give it.

use anyhow::{bail, Result};

/// A variable's name and its dimensions (name, length), slowest first.
pub struct VarInfo {
    pub name: String,
    pub dims: Vec<(String, usize)>,
    /// Numeric (not text).
    pub numeric: bool,
}

/// What the grid reader needs from a NetCDF library.
pub trait Source {
    fn vars(&self) -> Vec<VarInfo>;
    /// The whole variable as f64, unpacked by nothing.
    fn read(&mut self, var: &str) -> Result<Vec<f64>>;
    /// Rows `start[0]..start[0] + count[0]` and columns `start[1]..start[1] + count[1]`
    /// of a 2-D variable, row-major; `dims` is its (rows, columns).
    fn read_window(&mut self, var: &str, dims: [usize; 2], start: [usize; 2], count: [usize; 2]) -> Result<Vec<f64>> {
        let all = self.read(var)?;
        if all.len() != dims[0] * dims[1] {
            bail!("variable {var:?}: expected {} by {} values, found {}", dims[0], dims[1], all.len());
        }
        let mut out = Vec::with_capacity(count[0] * count[1]);
        for r in start[0]..start[0] + count[0] {
            out.extend_from_slice(&all[r * dims[1] + start[1]..r * dims[1] + start[1] + count[1]]);
        }
        Ok(out)
    }
    /// The first value of a numeric attribute.
    fn att(&self, var: &str, att: &str) -> Option<f64>;
}
