//! NetCDF grids in the CF conventions, as GEBCO ships them: a 2-D variable over (y, x) or
//! (lat, lon) dimensions with 1-D coordinate variables of the same names, evenly spaced
//! (ascending or descending). Classic files (CDF-1, CDF-2) are read in pure Rust by the
//! `netcdf3` crate; NetCDF-4 (HDF5) and CDF-5 files by the system libnetcdf, loaded at run
//! time ([`super::netcdf4`]). CF packing (`scale_factor`, `add_offset`) is undone and
//! `_FillValue`/`missing_value` are missing data. Coordinates are the samples' positions,
//! so the data ends at the outer coordinates.

use super::grid::Grid;
use super::netcdf_source::{Source, VarInfo};
use anyhow::{anyhow, bail, Result};
use std::io::Read;
use std::path::Path;

/// A classic file and its length in bytes.
struct Classic(netcdf3::FileReader, u64);

/// Walk the header of the classic file `f` (see [`super::classic_header`]), reading as much
/// of the file as the header takes; returns the file's length.
fn check_classic_header(f: &mut std::fs::File) -> Result<u64> {
    use std::io::{Seek, SeekFrom};
    let len = f.metadata().map_err(|e| anyhow!("cannot read: {e}"))?.len();
    let mut want: u64 = 1 << 16;
    loop {
        let mut start = Vec::new();
        f.seek(SeekFrom::Start(0)).map_err(|e| anyhow!("cannot read: {e}"))?;
        f.by_ref().take(want.min(len)).read_to_end(&mut start).map_err(|e| anyhow!("cannot read: {e}"))?;
        match super::classic_header::check(&start, len)? {
            Ok(()) => return Ok(len),
            Err(super::classic_header::NeedMore) if want < len => want *= 4,
            Err(_) => bail!("not a readable classic NetCDF file: the header ends at byte {len} with the file"),
        }
    }
}

/// The `netcdf3` crate's error in a line: its text is a debug dump of the whole header
/// parser's state (1.6 KB for one wrong byte).
fn short(e: &netcdf3::error::ReadError) -> String {
    use netcdf3::error::ReadError as E;
    match e {
        E::ParseHeader(_) => "its header cannot be parsed".into(),
        E::IOErrorKind(k) => format!("cannot read: {k:?}"),
        E::VariableNotDefined(v) => format!("no variable {v:?}"),
        other => crate::util::files::excerpt(&format!("{other:?}")),
    }
}

impl Source for Classic {
    fn vars(&self) -> Vec<VarInfo> {
        use netcdf3::DataType;
        self.0
            .data_set()
            .get_vars()
            .into_iter()
            .map(|v| VarInfo {
                name: v.name().to_string(),
                dims: v.get_dims().iter().map(|d| (d.name(), d.size())).collect(),
                // NC_CHAR reads as U8 in netcdf3: text, not data.
                numeric: v.data_type() != DataType::U8,
            })
            .collect()
    }
    fn read(&mut self, var: &str) -> Result<Vec<f64>> {
        use netcdf3::DataVector as D;
        // A classic file stores every value uncompressed: a variable larger than the file is a
        // damaged header, refused before its values are allocated.
        if let Some(v) = self.0.data_set().get_var(var) {
            let values = v.get_dims().iter().try_fold(1u64, |n, d| n.checked_mul(d.size() as u64)).unwrap_or(u64::MAX);
            let bytes = values.saturating_mul(v.data_type().size_of() as u64);
            if bytes > self.1 {
                bail!(
                    "variable {var:?}: its dimensions make {values} values ({bytes} bytes), more than the file's {} \
                     bytes (a damaged header)",
                    self.1
                );
            }
            super::check_fits(
                &format!("holding variable {var:?} ({values} values)"),
                values as f64,
                8.0 + v.data_type().size_of() as f64,
            )?;
        }
        let data = self.0.read_var(var).map_err(|e| anyhow!("cannot read variable {var:?}: {}", short(&e)))?;
        Ok(match data {
            D::I8(v) => v.into_iter().map(f64::from).collect(),
            D::U8(v) => v.into_iter().map(f64::from).collect(),
            D::I16(v) => v.into_iter().map(f64::from).collect(),
            D::I32(v) => v.into_iter().map(f64::from).collect(),
            D::F32(v) => v.into_iter().map(f64::from).collect(),
            D::F64(v) => v,
        })
    }
    fn att(&self, var: &str, att: &str) -> Option<f64> {
        let a = self.0.data_set().get_var(var)?.get_attr(att)?;
        a.get_f64()
            .and_then(|v| v.first().copied())
            .or_else(|| a.get_f32().and_then(|v| v.first().map(|&x| f64::from(x))))
            .or_else(|| a.get_i32().and_then(|v| v.first().map(|&x| f64::from(x))))
            .or_else(|| a.get_i16().and_then(|v| v.first().map(|&x| f64::from(x))))
            .or_else(|| a.get_i8().and_then(|v| v.first().map(|&x| f64::from(x))))
    }
}

/// Read the grid, keeping the rows and columns that points in `bbox` need (NetCDF-4 reads
/// only those from the file: a GEBCO tile may be far larger than a domain).
pub fn read(path: &Path, variable: Option<&str>, bbox: [f64; 4]) -> Result<Grid> {
    let mut magic = [0u8; 4];
    let mut f = super::open(path)?;
    let n = f.read(&mut magic).map_err(|e| anyhow!("cannot read: {e}"))?;
    let mut src: Box<dyn Source> = match &magic[..n] {
        [b'C', b'D', b'F', 1] | [b'C', b'D', b'F', 2] => {
            let len = check_classic_header(&mut f)?;
            let reader = netcdf3::FileReader::open(path)
                .map_err(|e| anyhow!("not a readable classic NetCDF file: {}", short(&e)))?;
            Box::new(Classic(reader, len))
        }
        [b'C', b'D', b'F', 5] | [0x89, b'H', b'D', b'F'] => Box::new(super::netcdf4::open(path)?),
        _ => bail!("not a NetCDF file: it starts with neither CDF (classic) nor \\x89HDF (NetCDF-4)"),
    };
    grid_of(src.as_mut(), variable, bbox)
}

/// The CF grid of `variable` (or of the only 2-D variable) in `src`.
pub fn grid_of(src: &mut dyn Source, variable: Option<&str>, bbox: [f64; 4]) -> Result<Grid> {
    let vars = src.vars();
    let is_coord = |v: &VarInfo| v.dims.len() == 1 && v.dims[0].0 == v.name;
    let grids: Vec<&VarInfo> = vars.iter().filter(|v| v.dims.len() == 2 && v.numeric && !is_coord(v)).collect();
    let names = || grids.iter().map(|v| v.name.as_str()).collect::<Vec<_>>().join(", ");
    let var = match variable {
        Some(name) => match vars.iter().find(|v| v.name == name) {
            Some(v) if v.dims.len() == 2 && v.numeric => v,
            Some(v) => bail!(
                "variable {name:?} has {} dimensions; expected a 2-D grid (2-D variables: {})",
                v.dims.len(),
                names()
            ),
            None => bail!("no variable {name:?}; the 2-D variables are: {}", names()),
        },
        None => match grids.as_slice() {
            [v] => *v,
            [] => bail!("no 2-D variable: expected a grid over (y, x) or (lat, lon)"),
            _ => bail!("several 2-D variables ({}): give variable to pick one", names()),
        },
    };
    let (ydim, ny) = var.dims[0].clone();
    let (xdim, nx) = var.dims[1].clone();
    let coord = |src: &mut dyn Source, dim: &str, n: usize| -> Result<(f64, f64, bool)> {
        if !vars.iter().any(|v| v.name == dim && v.dims.len() == 1) {
            bail!(
                "variable {:?}: no coordinate variable for its dimension {dim:?} (a 1-D variable of that name)",
                var.name
            );
        }
        let c = src.read(dim)?;
        if c.len() != n || n < 2 {
            bail!("coordinate variable {dim:?}: expected {n} >= 2 values, found {}", c.len());
        }
        let d = (c[n - 1] - c[0]) / (n - 1) as f64;
        if !(d.is_finite() && d != 0.0) {
            bail!("coordinate variable {dim:?}: expected distinct finite coordinates, found {} to {}", c[0], c[n - 1]);
        }
        for (k, &x) in c.iter().enumerate() {
            let off = (x - (c[0] + k as f64 * d)).abs();
            if off.is_nan() || off > 1e-6 * d.abs() {
                bail!("coordinate variable {dim:?}: expected evenly spaced coordinates, found {x} at index {k}");
            }
        }
        Ok(if d > 0.0 { (c[0], d, false) } else { (c[n - 1], -d, true) })
    };
    let (x0, dx, flip_x) = coord(src, &xdim, nx)?;
    let (y0, dy, flip_y) = coord(src, &ydim, ny)?;
    // The window in ascending indices, then in the file's (flipped where descending).
    let (i0, i1) = Grid::window(x0, dx, nx, bbox[0], bbox[2]);
    let (j0, j1) = Grid::window(y0, dy, ny, bbox[1], bbox[3]);
    let (wnx, wny) = (i1 - i0, j1 - j0);
    let fx0 = if flip_x { nx - i1 } else { i0 };
    let fy0 = if flip_y { ny - j1 } else { j0 };
    // The window as read and as unpacked.
    super::check_fits(
        &format!("holding {wny} by {wnx} values of variable {:?}", var.name),
        wnx as f64 * wny as f64,
        16.0,
    )?;
    let raw = src.read_window(&var.name, [ny, nx], [fy0, fx0], [wny, wnx])?;
    if raw.len() != wnx * wny {
        bail!("variable {:?}: expected {wny} by {wnx} values, found {}", var.name, raw.len());
    }
    let fill = [src.att(&var.name, "_FillValue"), src.att(&var.name, "missing_value")];
    let (scale, offset) =
        (src.att(&var.name, "scale_factor").unwrap_or(1.0), src.att(&var.name, "add_offset").unwrap_or(0.0));
    let mut values = vec![0.0; wnx * wny];
    for j in 0..wny {
        for i in 0..wnx {
            let fj = if flip_y { wny - 1 - j } else { j };
            let fi = if flip_x { wnx - 1 - i } else { i };
            let v = raw[fj * wnx + fi];
            let missing = !v.is_finite() || fill.iter().any(|f| f.is_some_and(|f| f == v || f as f32 == v as f32));
            values[j * wnx + i] = if missing { f64::NAN } else { v * scale + offset };
        }
    }
    let g = Grid { x0, y0, dx, dy, nx, ny, values, cells: false, origin: [i0, j0], wnx, wny };
    g.check().map_err(|e| anyhow!("variable {:?}: {e}", var.name))?;
    Ok(g)
}
