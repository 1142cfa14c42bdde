//! ESRI ASCII grids (`.asc`): a header (`ncols`, `nrows`, `xllcorner` or `xllcenter`,
//! `yllcorner` or `yllcenter`, `cellsize` or GDAL's `dx`/`dy`, optional `NODATA_value`),
//! then the values row by row from the north. Each value stands for a cell of the grid;
//! `xllcorner` places the lower-left cell's corner, `xllcenter` its centre.

use super::grid::Grid;
use anyhow::{anyhow, bail, Result};
use std::path::Path;

/// Read the grid, keeping the rows and columns that points in `bbox` need.
pub fn read(path: &Path, bbox: [f64; 4]) -> Result<Grid> {
    let mut lines = super::lines(super::open(path)?);
    let mut header: Vec<(String, f64, usize)> = Vec::new();
    // The header: `key value` lines until the first line that starts with a number.
    let mut first_row: Option<(usize, String)> = None;
    for (k, line) in lines.by_ref() {
        let line = line.map_err(|e| anyhow!("line {}: cannot read: {e}", k + 1))?;
        let mut words = line.split_whitespace();
        let Some(key) = words.next() else { continue };
        if key.parse::<f64>().is_ok() || key.eq_ignore_ascii_case("nan") {
            first_row = Some((k, line));
            break;
        }
        let value = words.next().and_then(|v| v.parse::<f64>().ok()).ok_or_else(|| {
            anyhow!(
                "line {}: expected a header line `KEY NUMBER` (ncols, nrows, xllcorner, ...), found {line:?}",
                k + 1
            )
        })?;
        header.push((key.to_ascii_lowercase(), value, k + 1));
    }
    let get = |names: &[&str]| header.iter().find(|(k, _, _)| names.contains(&k.as_str())).map(|&(_, v, _)| v);
    let known =
        ["ncols", "nrows", "xllcorner", "xllcenter", "yllcorner", "yllcenter", "cellsize", "dx", "dy", "nodata_value"];
    if let Some((k, _, line)) = header.iter().find(|(k, _, _)| !known.contains(&k.as_str())) {
        bail!("line {line}: unknown header key {k:?}, expected one of: {}", known.join(", "));
    }
    let count = |name: &str| -> Result<usize> {
        let v = get(&[name]).ok_or_else(|| anyhow!("header: missing {name}"))?;
        if !(v >= 2.0 && v.fract() == 0.0 && v < 1e9) {
            bail!("header: {name} = {v}, expected a whole number >= 2");
        }
        Ok(v as usize)
    };
    let (nx, ny) = (count("ncols")?, count("nrows")?);
    let (dx, dy) = match (get(&["cellsize"]), get(&["dx"]), get(&["dy"])) {
        (Some(c), None, None) => (c, c),
        (None, Some(dx), Some(dy)) => (dx, dy),
        _ => bail!("header: expected cellsize (or both dx and dy)"),
    };
    if !(dx.is_finite() && dx > 0.0 && dy.is_finite() && dy > 0.0) {
        bail!("header: expected a positive cell size, found {dx} by {dy}");
    }
    let corner = |c: &str, m: &str, d: f64| -> Result<f64> {
        match (get(&[c]), get(&[m])) {
            (Some(v), None) => Ok(v + 0.5 * d),
            (None, Some(v)) => Ok(v),
            _ => bail!("header: expected exactly one of {c} and {m}"),
        }
    };
    let (x0, y0) = (corner("xllcorner", "xllcenter", dx)?, corner("yllcorner", "yllcenter", dy)?);
    let nodata = get(&["nodata_value"]);
    let (i0, i1) = Grid::window(x0, dx, nx, bbox[0], bbox[2]);
    let (j0, j1) = Grid::window(y0, dy, ny, bbox[1], bbox[3]);
    let (wnx, wny) = (i1 - i0, j1 - j0);
    super::check_fits(&format!("holding the {wnx} by {wny} values the domain needs"), wnx as f64 * wny as f64, 8.0)?;
    let mut values = vec![f64::NAN; wnx * wny];
    // Values in file order: row r from the north is grid row ny - 1 - r.
    let mut n = 0usize;
    let total = nx * ny;
    let rows = first_row.into_iter().map(Ok).chain(lines.map(|(k, l)| l.map(|l| (k, l))));
    for row in rows {
        let (k, line) = row.map_err(|e| anyhow!("cannot read: {e}"))?;
        for word in line.split_whitespace() {
            let v: f64 = word.parse().map_err(|_| anyhow!("line {}: expected a number, found {word:?}", k + 1))?;
            if n >= total {
                bail!("line {}: more values than ncols * nrows = {nx} * {ny} = {total}", k + 1);
            }
            let (i, j) = (n % nx, ny - 1 - n / nx);
            if (i0..i1).contains(&i) && (j0..j1).contains(&j) {
                let missing = nodata == Some(v) || !v.is_finite();
                values[(j - j0) * wnx + (i - i0)] = if missing { f64::NAN } else { v };
            }
            n += 1;
        }
    }
    if n != total {
        bail!("expected ncols * nrows = {nx} * {ny} = {total} values, found {n} (a truncated file?)");
    }
    let g = Grid { x0, y0, dx, dy, nx, ny, values, cells: true, origin: [i0, j0], wnx, wny };
    g.check()?;
    Ok(g)
}
