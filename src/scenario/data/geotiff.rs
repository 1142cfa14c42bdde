//! GeoTIFF rasters through the `tiff` crate: one band of integer or float samples,
//! georeferenced by ModelPixelScale (33550) and ModelTiepoint (33922); GTRasterTypeGeoKey
//! says whether a pixel is an area (the default) or a point; GDAL_NODATA (42113) marks
//! missing data. Rotated rasters (ModelTransformation) are refused.

use super::grid::Grid;
use anyhow::{anyhow, bail, Result};
use std::path::Path;
use tiff::decoder::{Decoder, DecodingResult, Limits};
use tiff::tags::Tag;
use tiff::ColorType;

const MODEL_TRANSFORMATION: u16 = 34264;
/// GeoKey GTRasterTypeGeoKey: 1 = RasterPixelIsArea, 2 = RasterPixelIsPoint.
const GT_RASTER_TYPE: u64 = 1025;

pub fn read(path: &Path) -> Result<Grid> {
    let file = super::open(path)?;
    let len = file.metadata().map_err(|e| anyhow!("cannot read: {e}"))?.len();
    let file = std::io::BufReader::new(file);
    let bad = |e: tiff::TiffError| anyhow!("not a readable TIFF file: {e}");
    // No tag value and no compressed strip is larger than the file: a damaged count asks for
    // no more. The crate reserves a tag's values up to `decoding_buffer_size` (a mutated count
    // asked for 68 GB): at most the memory available. The decoded raster is checked against
    // the memory below, before it is read.
    let mut limits = Limits::unlimited();
    let in_file = usize::try_from(len).unwrap_or(usize::MAX);
    limits.ifd_value_size = in_file.min(256 << 20);
    limits.intermediate_buffer_size = in_file;
    limits.decoding_buffer_size =
        crate::util::memory::available().map_or(usize::MAX, |a| usize::try_from(a).unwrap_or(usize::MAX));
    let mut dec = Decoder::new(file).map_err(bad)?.with_limits(limits);
    let (w, h) = dec.dimensions().map_err(bad)?;
    let sample_bytes = match dec.colortype().map_err(bad)? {
        ColorType::Gray(b) if [8, 16, 32, 64].contains(&b) => f64::from(b / 8),
        ColorType::Gray(b) => {
            bail!("{b}-bit samples: pycno reads 8, 16, 32 or 64-bit samples (integer or float)")
        }
        c => bail!("expected a single band (grayscale) raster, found {c:?}"),
    };
    // The samples as decoded, then as f64 twice (converted, then flipped to rows from the south).
    super::check_fits(
        &format!("holding the raster's {w} by {h} samples"),
        f64::from(w) * f64::from(h),
        sample_bytes + 16.0,
    )?;
    let mut floats = |tag: Tag| -> Result<Option<Vec<f64>>> {
        match dec.find_tag(tag).map_err(bad)? {
            None => Ok(None),
            Some(v) => v.into_f64_vec().map(Some).map_err(|e| anyhow!("tag {tag:?}: {e}")),
        }
    };
    let scale = floats(Tag::ModelPixelScaleTag)?;
    let tie = floats(Tag::ModelTiepointTag)?;
    let (scale, tie) = match (scale, tie) {
        (Some(s), Some(t)) if s.len() >= 2 && t.len() >= 6 => (s, t),
        (None, None) if dec.find_tag(Tag::Unknown(MODEL_TRANSFORMATION)).map_err(bad)?.is_some() => {
            bail!("the raster is georeferenced by a ModelTransformation (rotated or sheared); pycno reads north-up rasters with ModelPixelScale and ModelTiepoint")
        }
        _ => bail!("no georeferencing: expected the GeoTIFF tags ModelPixelScale (33550) and ModelTiepoint (33922)"),
    };
    let cells = match dec.find_tag(Tag::GeoKeyDirectoryTag).map_err(bad)? {
        Some(v) => {
            let keys = v.into_u64_vec().map_err(|e| anyhow!("GeoKeyDirectory: {e}"))?;
            // Header of 4 shorts, then entries (key, location, count, value).
            let raster_type =
                keys.get(4..).unwrap_or(&[]).chunks_exact(4).find(|e| e[0] == GT_RASTER_TYPE && e[1] == 0);
            raster_type.map(|e| e[3] != 2).unwrap_or(true)
        }
        None => true,
    };
    let nodata = match dec.find_tag(Tag::GdalNodata).map_err(bad)? {
        Some(v) => {
            let s = v.into_string().map_err(|e| anyhow!("GDAL_NODATA: {e}"))?;
            let s = s.trim_matches(|c: char| c == '\0' || c.is_whitespace());
            Some(s.parse::<f64>().map_err(|_| anyhow!("GDAL_NODATA: expected a number, found {s:?}"))?)
        }
        None => None,
    };
    let data = dec.read_image().map_err(|e| anyhow!("cannot read the raster: {e}"))?;
    let raw: Vec<f64> = match data {
        DecodingResult::U8(v) => v.into_iter().map(f64::from).collect(),
        DecodingResult::U16(v) => v.into_iter().map(f64::from).collect(),
        DecodingResult::U32(v) => v.into_iter().map(f64::from).collect(),
        DecodingResult::U64(v) => v.into_iter().map(|x| x as f64).collect(),
        DecodingResult::I8(v) => v.into_iter().map(f64::from).collect(),
        DecodingResult::I16(v) => v.into_iter().map(f64::from).collect(),
        DecodingResult::I32(v) => v.into_iter().map(f64::from).collect(),
        DecodingResult::I64(v) => v.into_iter().map(|x| x as f64).collect(),
        DecodingResult::F32(v) => v.into_iter().map(f64::from).collect(),
        DecodingResult::F64(v) => v,
        _ => bail!("unsupported sample type (expected integer or 32/64-bit float samples)"),
    };
    let (nx, ny) = (w as usize, h as usize);
    if raw.len() != nx * ny {
        bail!("expected {nx} by {ny} samples, found {}", raw.len());
    }
    let (sx, sy) = (scale[0], scale[1]);
    // Raster (I, J) maps to (X + (I - i) sx, Y - (J - j) sy); a pixel's centre is at
    // I = column + 1/2 for PixelIsArea and I = column for PixelIsPoint.
    let half = if cells { 0.5 } else { 0.0 };
    let (ti, tj, tx, ty) = (tie[0], tie[1], tie[3], tie[4]);
    let x0 = tx + (half - ti) * sx;
    let y_top = ty - (half - tj) * sy;
    let y0 = y_top - (ny as f64 - 1.0) * sy;
    // Rows from the south, NODATA as NaN.
    let mut values = Vec::with_capacity(nx * ny);
    for j in 0..ny {
        let row = &raw[(ny - 1 - j) * nx..(ny - j) * nx];
        let missing = |v: f64| !v.is_finite() || nodata.is_some_and(|n| n == v || n as f32 == v as f32);
        values.extend(row.iter().map(|&v| if missing(v) { f64::NAN } else { v }));
    }
    let g = Grid::whole(x0, y0, sx, sy, nx, ny, values, cells);
    g.check()?;
    Ok(g)
}
