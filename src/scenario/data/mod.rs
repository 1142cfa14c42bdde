//! Elevations read from data files (`{"type": "file", ...}` in `bathymetry` or
//! `initial.interface`): ESRI ASCII grids, GeoTIFF rasters, NetCDF grids and scattered XYZ
//! points, sampled at cell centroids. Grids are sampled bilinearly, points linearly on their
//! Delaunay triangulation. Every rank reads the file itself and samples its own centroids
//! with the same arithmetic, so N ranks give the values of 1 rank bit for bit.

mod asc;
mod classic_header;
mod geotiff;
mod grid;
mod netcdf;
mod netcdf4;
mod netcdf_source;
mod points;

pub use grid::Grid;

use anyhow::{anyhow, bail, Context, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// An elevation field read from a file.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DataFile {
    /// Always `"file"`.
    #[serde(rename = "type")]
    pub kind: FileTag,
    /// The data file, relative to the scenario file.
    pub path: PathBuf,
    /// `asc` (ESRI ASCII grid), `xyz` (scattered points: `x y z` or `x,y,z` per line),
    /// `geotiff` or `netcdf`; default from the extension (`.asc`, `.xyz`/`.csv`/`.txt`,
    /// `.tif`/`.tiff`, `.nc`/`.nc4`/`.grd`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<DataFormat>,
    /// Whether the file's values are elevations (`up`, as GEBCO's) or depths (`down`).
    pub positive: Positive,
    /// The NetCDF variable to read (default: the file's only 2-D variable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variable: Option<String>,
    /// The file's value v is read as `scale * v + offset` (in the file's sense, before the
    /// sign of `positive`); defaults 1 and 0.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub scale: f64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub offset: f64,
}
fn one() -> f64 {
    1.0
}
fn is_one(x: &f64) -> bool {
    *x == 1.0
}
fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FileTag {
    File,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum DataFormat {
    Asc,
    Xyz,
    Geotiff,
    Netcdf,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Positive {
    /// Elevations above the reference level.
    Up,
    /// Depths below the reference level.
    Down,
}

/// What a file holds once read: a regular grid or scattered points.
pub enum Data {
    Grid(Grid),
    Points(points::Points),
}

impl DataFile {
    /// Check the fields that need no file; `field` is the object's JSON path.
    pub fn validate(&self, field: &str) -> Result<()> {
        if self.path.as_os_str().is_empty() {
            bail!("{field}.path: expected a file name, found an empty string");
        }
        if self.format.is_none() && format_from_extension(&self.path).is_none() {
            bail!(
                "{field}.format: cannot tell the format of {} from its extension; give format: \"asc\", \"xyz\", \
                 \"geotiff\" or \"netcdf\"",
                self.path.display()
            );
        }
        if !(self.scale.is_finite() && self.scale != 0.0) {
            bail!("{field}.scale: expected a finite, non-zero factor, found {}", self.scale);
        }
        if !self.offset.is_finite() {
            bail!("{field}.offset: expected a finite number, found {}", self.offset);
        }
        if self.variable.is_some() && self.format() != DataFormat::Netcdf {
            bail!("{field}.variable: only a NetCDF file has variables; {} is not one", self.path.display());
        }
        Ok(())
    }

    pub fn format(&self) -> DataFormat {
        self.format.or_else(|| format_from_extension(&self.path)).unwrap_or(DataFormat::Asc)
    }

    /// Resolve a relative path against the directory of the scenario file.
    pub fn resolve(&mut self, dir: &Path) {
        if self.path.is_relative() {
            self.path = dir.join(&self.path);
        }
    }

    /// Read the file; `bbox` (min x, min y, max x, max y of the points to be sampled) lets
    /// a grid reader keep only the part it needs.
    pub fn load(&self, bbox: [f64; 4]) -> Result<Data> {
        let path = &self.path;
        let data = match self.format() {
            DataFormat::Asc => asc::read(path, bbox).map(Data::Grid),
            DataFormat::Geotiff => geotiff::read(path).map(Data::Grid),
            DataFormat::Netcdf => netcdf::read(path, self.variable.as_deref(), bbox).map(Data::Grid),
            DataFormat::Xyz => points::read(path).map(Data::Points),
        };
        data.with_context(|| format!("{}", path.display()))
    }

    /// Elevations (m, positive up) at `points`, with `scale`, `offset` and `positive`
    /// applied. Fails naming the file and the first point outside the data or on missing
    /// data.
    pub fn elevations(&self, points: &[[f64; 2]]) -> Result<Vec<f64>> {
        if points.is_empty() {
            return Ok(vec![]);
        }
        let mut bbox = [f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY];
        for p in points {
            bbox = [bbox[0].min(p[0]), bbox[1].min(p[1]), bbox[2].max(p[0]), bbox[3].max(p[1])];
        }
        let data = self.load(bbox)?;
        let raw: Result<Vec<f64>> = match &data {
            Data::Grid(g) => points.iter().map(|&p| g.sample(p)).collect(),
            Data::Points(t) => t.sample_all(points),
        };
        let raw = raw.map_err(|e| anyhow!("{}: {e:#}", self.path.display()))?;
        let sign = match self.positive {
            Positive::Up => 1.0,
            Positive::Down => -1.0,
        };
        Ok(raw.into_iter().map(|v| sign * (self.scale * v + self.offset)).collect())
    }
}

fn format_from_extension(path: &Path) -> Option<DataFormat> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "asc" => DataFormat::Asc,
        "xyz" | "csv" | "txt" => DataFormat::Xyz,
        "tif" | "tiff" => DataFormat::Geotiff,
        "nc" | "nc4" | "grd" | "cdf" => DataFormat::Netcdf,
        _ => return None,
    })
}

/// An interval for error messages about a data set's extent.
pub(crate) fn fmt_extent(lo: f64, hi: f64) -> String {
    format!("[{lo}, {hi}]")
}

/// Open a regular file for reading (the caller's error names it). A FIFO, a device or a
/// directory is refused without blocking: a FIFO given as a data file hung the run, on every
/// rank, waiting for a writer.
pub(crate) fn open(path: &Path) -> Result<std::fs::File> {
    crate::util::files::open_regular(path).map_err(|e| anyhow!("cannot open: {e}"))
}

/// Refuse to hold `values` numbers of `bytes_each` bytes (what a data file's header asks
/// for) when the machine has not the memory, before anything is allocated: a header that
/// says 999999999 by 999999999 otherwise aborts the run in the allocator (SIGABRT).
pub(crate) fn check_fits(what: &str, values: f64, bytes_each: f64) -> Result<()> {
    crate::util::memory::check_data_fits(what, values * bytes_each)
}

/// The longest line a text data file may have (256 MiB): an ESRI grid row of a million
/// values is about 10 MB. A longer "line" is not text (a sparse or binary file read as one
/// line would be allocated whole).
const MAX_LINE: usize = 256 << 20;

/// The lines of the text file `f`, numbered from 0, as `BufRead::lines` gives them, but a
/// NUL byte (a binary or sparse file) or a line longer than [`MAX_LINE`] is an error at once,
/// before the line is held in memory.
pub(crate) fn lines(f: std::fs::File) -> impl Iterator<Item = (usize, std::io::Result<String>)> {
    let mut r = std::io::BufReader::new(f);
    let mut k = 0usize;
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        let line = next_line(&mut r);
        let item = match line {
            Ok(Some(l)) => Ok(l),
            Ok(None) => return None,
            Err(e) => {
                done = true;
                Err(e)
            }
        };
        k += 1;
        Some((k - 1, item))
    })
}

fn next_line(r: &mut impl std::io::BufRead) -> std::io::Result<Option<String>> {
    let mut line: Vec<u8> = Vec::new();
    let mut any = false;
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        any = true;
        let end = buf.iter().position(|&b| b == b'\n');
        let chunk = &buf[..end.unwrap_or(buf.len())];
        if let Some(at) = chunk.iter().position(|&b| b == 0) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("a NUL byte at column {}: a binary (or sparse) file, not text", line.len() + at + 1),
            ));
        }
        if line.len() + chunk.len() > MAX_LINE {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("a line longer than {MAX_LINE} bytes: not a text data file"),
            ));
        }
        line.extend_from_slice(chunk);
        let used = chunk.len() + usize::from(end.is_some());
        r.consume(used);
        if end.is_some() {
            break;
        }
    }
    if !any {
        return Ok(None);
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    String::from_utf8(line)
        .map(Some)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"))
}
