//! Bathymetry and initial interface from data files (issue 18, item 4): each format read on
//! a small file made here from an analytic field and sampled against it (bilinear grids are
//! exact for a bilinear field, Delaunay-linear points for a linear one); bad files give
//! errors naming the file and what is wrong, with exit status 1 from `pycno run`; sums of
//! shapes; N ranks = 1 rank (a rank's subset of the points samples the same values).
//!
//! The NetCDF files are written by the netCDF4 Python package (the format's reference
//! library, in the project's venv: `python3` on PATH, as tools/test.sh sets it); NetCDF-4
//! needs the system libnetcdf (tools/setup.sh installs libnetcdf-dev).

mod common;

use common::cli::{expect_failure, expect_ok, LIMIT};
use pycno::scenario::data::DataFile;
use pycno::scenario::{initial, Scenario};
use serde_json::json;
use std::path::Path;

/// A bilinear field: bilinear interpolation reproduces it to rounding.
fn bilinear(x: f64, y: f64) -> f64 {
    -30.0 + 1.5 * x - 0.75 * y + 0.125 * x * y
}

/// A linear field: linear interpolation on any triangulation reproduces it.
fn linear(x: f64, y: f64) -> f64 {
    12.0 - 0.3 * x + 0.7 * y
}

fn file(path: &Path, extra: serde_json::Value) -> DataFile {
    let mut v = json!({"type": "file", "path": path, "positive": "up"});
    v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    serde_json::from_value(v).unwrap()
}

/// Points strictly inside [x0, x1] x [y0, y1], off the sample lines.
fn inner_points(x0: f64, x1: f64, y0: f64, y1: f64) -> Vec<[f64; 2]> {
    let mut ps = Vec::new();
    for a in 0..9 {
        for b in 0..7 {
            let (s, t) = ((a as f64 + 0.37) / 9.0, (b as f64 + 0.61) / 7.0);
            ps.push([x0 + s * (x1 - x0), y0 + t * (y1 - y0)]);
        }
    }
    ps
}

#[track_caller]
fn close_to(got: &[f64], points: &[[f64; 2]], f: impl Fn(f64, f64) -> f64, tol: f64) {
    assert_eq!(got.len(), points.len());
    for (g, p) in got.iter().zip(points) {
        let want = f(p[0], p[1]);
        assert!((g - want).abs() <= tol * (1.0 + want.abs()), "at {p:?}: sampled {g}, expected {want}");
    }
}

#[track_caller]
fn error_of(f: &DataFile, points: &[[f64; 2]]) -> String {
    match f.elevations(points) {
        Ok(v) => panic!("expected an error, sampled {v:?}"),
        Err(e) => format!("{e:#}"),
    }
}

/// An ESRI grid of `bilinear` at the cell centres: nx by ny cells of `cell` from the
/// lower-left corner `ll`, registered by corner or by centre.
fn write_asc(
    path: &Path,
    nx: usize,
    ny: usize,
    ll: [f64; 2],
    cell: f64,
    by_centre: bool,
    nodata: Option<(usize, usize)>,
) {
    let mut s = format!("ncols {nx}\nnrows {ny}\n");
    if by_centre {
        s += &format!("xllcenter {}\nyllcenter {}\n", ll[0] + cell / 2.0, ll[1] + cell / 2.0);
    } else {
        s += &format!("xllcorner {}\nyllcorner {}\n", ll[0], ll[1]);
    }
    s += &format!("cellsize {cell}\nNODATA_value -9999\n");
    for r in 0..ny {
        let j = ny - 1 - r;
        let row: Vec<String> = (0..nx)
            .map(|i| {
                if nodata == Some((i, j)) {
                    "-9999".to_string()
                } else {
                    let (x, y) = (ll[0] + (i as f64 + 0.5) * cell, ll[1] + (j as f64 + 0.5) * cell);
                    format!("{:?}", bilinear(x, y))
                }
            })
            .collect();
        s += &row.join(" ");
        s += "\n";
    }
    std::fs::write(path, s).unwrap();
}

#[test]
fn asc_grids_are_sampled_bilinearly_with_either_registration() {
    let dir = tempfile::tempdir().unwrap();
    for by_centre in [false, true] {
        let p = dir.path().join(format!("g{by_centre}.asc"));
        write_asc(&p, 7, 5, [-2.0, 1.0], 0.5, by_centre, None);
        // Centres span x in [-1.75, 1.25], y in [1.25, 3.25].
        let pts = inner_points(-1.75, 1.25, 1.25, 3.25);
        close_to(&file(&p, json!({})).elevations(&pts).unwrap(), &pts, bilinear, 1e-13);
        // positive down, scale and offset: -(scale v + offset).
        let down = file(&p, json!({"positive": "down", "scale": 2.0, "offset": 1.0}));
        close_to(&down.elevations(&pts).unwrap(), &pts, |x, y| -(2.0 * bilinear(x, y) + 1.0), 1e-13);
        // Within half a cell of the edge the outer samples hold (the cells cover it).
        let edge = [[-1.9, 2.25]];
        close_to(&file(&p, json!({})).elevations(&edge).unwrap(), &edge, |_, y| bilinear(-1.75, y), 1e-13);
        // Beyond the cells: an error naming the file, the point and the extent.
        let e = error_of(&file(&p, json!({})), &[[0.0, 2.0], [1.6, 2.0]]);
        for w in [p.to_str().unwrap(), "x = 1.6", "outside", "[-2, 1.5]", "[1, 3.5]"] {
            assert!(e.contains(w), "{w:?} missing from: {e}");
        }
    }
}

#[track_caller]
fn same_bits_on_parts(f: &DataFile, all: &[[f64; 2]]) {
    let whole = f.elevations(all).unwrap();
    for part in [&all[..5], &all[20..23], &all[all.len() - 4..]] {
        let start = all.iter().position(|q| q == &part[0]).unwrap();
        let got = f.elevations(part).unwrap();
        for (k, g) in got.iter().enumerate() {
            assert_eq!(g.to_bits(), whole[start + k].to_bits(), "{}: point {:?}", f.path.display(), part[k]);
        }
    }
}

#[test]
fn a_rank_s_part_of_the_points_samples_the_same_bits() {
    // Each rank reads only the window its centroids need (ESRI grids, NetCDF); the values
    // must not depend on it.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("g.asc");
    // Spacing and origin with no exact binary form, so that another order of operations
    // would round differently.
    write_asc(&p, 40, 30, [-10.07, -7.31], 0.3, false, None);
    same_bits_on_parts(&file(&p, json!({})), &inner_points(-9.7, 1.7, -7.0, 1.6));
    write_netcdf(dir.path());
    for name in ["classic.nc", "offset64.nc", "nc4.nc"] {
        same_bits_on_parts(&file(&dir.path().join(name), json!({})), &inner_points(-4.0, 3.0, 30.0, 35.0));
    }
}

#[test]
fn asc_nodata_and_damaged_files_are_errors_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("holes.asc");
    write_asc(&p, 6, 6, [0.0, 0.0], 1.0, false, Some((2, 3)));
    let f = file(&p, json!({}));
    // Far from the hole: fine.
    f.elevations(&[[0.7, 0.7]]).unwrap();
    let e = error_of(&f, &[[2.9, 3.2]]);
    for w in ["holes.asc", "no data", "column 2, row 3", "x = 2.9"] {
        assert!(e.contains(w), "{w:?} missing from: {e}");
    }
    let text = std::fs::read_to_string(&p).unwrap();
    let cases = [
        ("short.asc", text.trim_end().rsplit_once(' ').unwrap().0.to_string(), "truncated"),
        ("long.asc", format!("{text} 1.0\n"), "more values"),
        ("word.asc", format!("{text}abc\n"), "expected a number"),
        ("header.asc", text.replace("cellsize 1", "cellsize -1"), "positive cell size"),
        ("nokey.asc", text.replace("nrows 6\n", ""), "missing nrows"),
    ];
    for (name, body, want) in cases {
        let q = dir.path().join(name);
        std::fs::write(&q, body).unwrap();
        let e = error_of(&file(&q, json!({})), &[[0.7, 0.7]]);
        assert!(e.contains(name) && e.contains(want), "{name}: {want:?} missing from: {e}");
    }
    let e = error_of(&file(&dir.path().join("absent.asc"), json!({})), &[[0.0, 0.0]]);
    assert!(e.contains("absent.asc") && e.contains("cannot open"), "{e}");
}

#[test]
fn xyz_points_are_interpolated_linearly_on_their_triangulation() {
    let dir = tempfile::tempdir().unwrap();
    // Scattered points: a jittered grid over [0, 10] x [0, 6], corners exact.
    let mut body = String::from("# x, y, z\nx,y,z\n");
    for a in 0..=10 {
        for b in 0..=6 {
            let on_edge = a == 0 || a == 10 || b == 0 || b == 6;
            let j = if on_edge { 0.0 } else { 0.3 * ((a * 7 + b * 3) % 5) as f64 / 5.0 - 0.15 };
            let (x, y) = (a as f64 + j, b as f64 - j);
            body += &format!("{x:?},{y:?},{:?}\n", linear(x, y));
        }
    }
    let p = dir.path().join("pts.csv");
    std::fs::write(&p, &body).unwrap();
    let pts = inner_points(0.0, 10.0, 0.0, 6.0);
    close_to(&file(&p, json!({})).elevations(&pts).unwrap(), &pts, linear, 1e-12);
    // The same points space-separated as .xyz.
    let q = dir.path().join("pts.xyz");
    std::fs::write(&q, body.replace("x,y,z\n", "").replace(',', " ")).unwrap();
    close_to(&file(&q, json!({})).elevations(&pts).unwrap(), &pts, linear, 1e-12);
    let e = error_of(&file(&q, json!({})), &[[5.0, 3.0], [10.5, 3.0]]);
    for w in ["pts.xyz", "x = 10.5", "convex hull", "[0, 10]", "[0, 6]"] {
        assert!(e.contains(w), "{w:?} missing from: {e}");
    }
    let bad = [
        ("dup.xyz", "0 0 1\n1 0 2\n0 1 3\n1 0 4\n", "lines 2 and 4"),
        ("line.xyz", "0 0 1\n1 1 2\n2 2 3\n", "one line"),
        ("two.xyz", "0 0 1\n1 1 2\n", "at least 3 points"),
        ("nan.xyz", "0 0 1\n1 0 nan\n0 1 3\n", "line 2"),
        ("cols.xyz", "0 0 1\n1 0\n0 1 3\n", "line 2: expected three numbers"),
    ];
    for (name, body, want) in bad {
        let q = dir.path().join(name);
        std::fs::write(&q, body).unwrap();
        let e = error_of(&file(&q, json!({})), &[[0.2, 0.2]]);
        assert!(e.contains(name) && e.contains(want), "{name}: {want:?} missing from: {e}");
    }
}

/// A GeoTIFF of `bilinear` (float32 or int16 samples) with pixel size `cell`, top-left
/// corner `tl`, PixelIsArea or PixelIsPoint, GDAL_NODATA -9999 at `hole`.
#[allow(clippy::too_many_arguments)] // each case of the tests is one call, read at a glance
fn write_tiff(
    path: &Path,
    nx: u32,
    ny: u32,
    tl: [f64; 2],
    cell: f64,
    point: bool,
    int16: bool,
    georef: bool,
    hole: Option<(u32, u32)>,
) {
    use tiff::encoder::{colortype, TiffEncoder};
    use tiff::tags::Tag;
    let half = if point { 0.0 } else { 0.5 };
    let mut vals = Vec::new();
    for r in 0..ny {
        for c in 0..nx {
            let (x, y) = (tl[0] + (c as f64 + half) * cell, tl[1] - (r as f64 + half) * cell);
            vals.push(if hole == Some((c, r)) { -9999.0 } else { bilinear(x, y) });
        }
    }
    let mut enc = TiffEncoder::new(std::fs::File::create(path).unwrap()).unwrap();
    macro_rules! image {
        ($ct:ty, $data:expr) => {{
            let mut img = enc.new_image::<$ct>(nx, ny).unwrap();
            if georef {
                let e = img.encoder();
                e.write_tag(Tag::ModelPixelScaleTag, &[cell, cell, 0.0][..]).unwrap();
                e.write_tag(Tag::ModelTiepointTag, &[0.0, 0.0, 0.0, tl[0], tl[1], 0.0][..]).unwrap();
                let raster_type: u16 = if point { 2 } else { 1 };
                e.write_tag(Tag::GeoKeyDirectoryTag, &[1u16, 1, 0, 1, 1025, 0, 1, raster_type][..]).unwrap();
                e.write_tag(Tag::GdalNodata, "-9999").unwrap();
            }
            img.write_data($data).unwrap();
        }};
    }
    if int16 {
        let v: Vec<i16> = vals.iter().map(|&z| z.round() as i16).collect();
        image!(colortype::GrayI16, &v);
    } else {
        let v: Vec<f32> = vals.iter().map(|&z| z as f32).collect();
        image!(colortype::Gray32Float, &v);
    }
}

#[test]
fn geotiff_rasters_are_georeferenced_and_sampled() {
    let dir = tempfile::tempdir().unwrap();
    for point in [false, true] {
        let p = dir.path().join(format!("r{point}.tif"));
        write_tiff(&p, 8, 6, [100.0, 50.0], 2.0, point, false, true, None);
        // Sample centres: x from 100 + h*2 to 100 + (7 + h)*2, y from 50 - h*2 down 5 cells.
        let h = if point { 0.0 } else { 1.0 };
        let pts = inner_points(100.0 + h, 114.0 + h, 40.0 - h, 50.0 - h);
        // float32 samples: exact to float32 rounding of the values.
        close_to(&file(&p, json!({})).elevations(&pts).unwrap(), &pts, bilinear, 1e-6);
        // PixelIsPoint: nothing beyond the outer samples; PixelIsArea: half a pixel more.
        let r = file(&p, json!({})).elevations(&[[115.5, 45.0]]);
        assert_eq!(r.is_ok(), !point, "{r:?}");
    }
    // int16 samples, NODATA.
    let p = dir.path().join("i16.tiff");
    write_tiff(&p, 8, 6, [0.0, 12.0], 2.0, false, true, true, Some((3, 2)));
    let f = file(&p, json!({}));
    let v = f.elevations(&[[1.5, 10.5]]).unwrap()[0];
    assert!((v - bilinear(1.5, 10.5)).abs() < 1.0, "{v}");
    let e = error_of(&f, &[[7.2, 7.0]]);
    assert!(e.contains("i16.tiff") && e.contains("no data") && e.contains("column 3, row 3"), "{e}");
    // Without georeferencing, or not a TIFF at all.
    let q = dir.path().join("plain.tif");
    write_tiff(&q, 4, 4, [0.0, 0.0], 1.0, false, false, false, None);
    let e = error_of(&file(&q, json!({})), &[[0.5, 0.5]]);
    assert!(e.contains("plain.tif") && e.contains("ModelPixelScale"), "{e}");
    let q = dir.path().join("text.tif");
    std::fs::write(&q, "ncols 4\n").unwrap();
    let e = error_of(&file(&q, json!({})), &[[0.5, 0.5]]);
    assert!(e.contains("text.tif") && e.contains("not a readable TIFF"), "{e}");
    // Truncated: the header promises more pixels than the file holds.
    let bytes = std::fs::read(dir.path().join("rfalse.tif")).unwrap();
    let q = dir.path().join("cut.tif");
    std::fs::write(&q, &bytes[..bytes.len() / 2]).unwrap();
    let e = error_of(&file(&q, json!({})), &[[101.0, 45.0]]);
    assert!(e.contains("cut.tif"), "{e}");
}

/// GeoTIFFs as GDAL writes them (through rasterio, GDAL's Python bindings, in the project's
/// venv): striped and tiled, uncompressed, DEFLATE and LZW with a predictor, float32 and
/// int16, pixel-is-area and pixel-is-point. Each must read to the same samples.
#[test]
fn geotiffs_written_by_gdal_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let script = r#"
import sys, numpy as np, rasterio
from rasterio.transform import from_origin
d = sys.argv[1]
nx, ny, cell, x0, y0 = 8, 6, 2.0, 100.0, 50.0
def bilinear(x, y): return -30.0 + 1.5 * x - 0.75 * y + 0.125 * x * y
for name, opts, dtype, point in [
    ("striped.tif", {}, "float32", False),
    ("tiled_deflate.tif", {"tiled": True, "blockxsize": 16, "blockysize": 16, "compress": "deflate", "predictor": 3}, "float32", False),
    ("lzw_int16.tif", {"compress": "lzw", "predictor": 2}, "int16", False),
    ("point.tif", {"compress": "deflate"}, "float32", True),
]:
    h = 0.0 if point else 0.5
    z = np.array([[bilinear(x0 + (c + h) * cell, y0 - (r + h) * cell) for c in range(nx)] for r in range(ny)])
    # Pixel-is-point: GDAL's transform gives the pixel corner, half a cell up-left of the sample.
    t = from_origin(x0 - (cell / 2 if point else 0.0), y0 + (cell / 2 if point else 0.0), cell, cell)
    tags = {"AREA_OR_POINT": "Point"} if point else {}
    with rasterio.open(f"{d}/{name}", "w", driver="GTiff", width=nx, height=ny, count=1, dtype=dtype,
                       transform=t, nodata=-9999, **opts) as f:
        f.update_tags(**tags)
        f.write((np.round(z) if dtype == "int16" else z).astype(dtype), 1)
"#;
    let o = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(dir.path())
        .output()
        .expect("cannot run python3 (tools/test.sh puts the project's .venv, with rasterio, first on PATH)");
    assert!(o.status.success(), "rasterio failed: {}", String::from_utf8_lossy(&o.stderr));
    for (name, point, tol) in [
        ("striped.tif", false, 1e-5),
        ("tiled_deflate.tif", false, 1e-5),
        ("lzw_int16.tif", false, 1e-3),
        ("point.tif", true, 1e-5),
    ] {
        let h = if point { 0.0 } else { 1.0 };
        let pts = inner_points(100.0 + h, 114.0 + h, 40.0 - h, 50.0 - h);
        let got = file(&dir.path().join(name), json!({})).elevations(&pts).unwrap_or_else(|e| panic!("{name}: {e:#}"));
        close_to(&got, &pts, bilinear, tol);
    }
}

/// Write NetCDF files with the netCDF4 Python package: `elevation` over (lat, lon) of
/// `bilinear`, lat descending in one of them, int16-packed in another, a second 2-D
/// variable, and one with a fill value.
fn write_netcdf(dir: &Path) {
    let script = r#"
import sys, numpy as np, netCDF4
d = sys.argv[1]
lon = np.linspace(-4.0, 3.0, 8); lat = np.linspace(30.0, 35.0, 6)
X, Y = np.meshgrid(lon, lat)
Z = -30.0 + 1.5 * X - 0.75 * Y + 0.125 * X * Y
def make(name, fmt, descending=False, packed=False, hole=False, second=False):
    f = netCDF4.Dataset(f"{d}/{name}", "w", format=fmt)
    f.createDimension("lat", 6); f.createDimension("lon", 8)
    la = f.createVariable("lat", "f8", ("lat",)); lo = f.createVariable("lon", "f8", ("lon",))
    lo[:] = lon
    la[:] = lat[::-1] if descending else lat
    z = Z[::-1] if descending else Z
    if packed:
        v = f.createVariable("elevation", "i2", ("lat", "lon"), fill_value=-32767)
        v.scale_factor = 0.01; v.add_offset = -30.0
    else:
        v = f.createVariable("elevation", "f4", ("lat", "lon"), fill_value=-9999.0 if hole else None)
    v[:] = np.ma.masked_where((X == lon[2]) & (Y == (lat[::-1] if descending else lat)[3]), z) if hole else z
    if second:
        t = f.createVariable("tid", "i1", ("lat", "lon")); t[:] = 1
    f.close()
make("classic.nc", "NETCDF3_CLASSIC")
make("offset64.nc", "NETCDF3_64BIT_OFFSET", descending=True)
make("packed.nc", "NETCDF3_CLASSIC", packed=True)
make("hole.nc", "NETCDF3_CLASSIC", hole=True)
make("two.nc", "NETCDF3_CLASSIC", second=True)
make("nc4.nc", "NETCDF4", descending=True)
make("nc4two.nc", "NETCDF4", second=True)
"#;
    let o = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(dir)
        .output()
        .expect("cannot run python3 (tools/test.sh puts the project's .venv, with netCDF4, first on PATH)");
    assert!(o.status.success(), "writing the NetCDF files failed:\n{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn netcdf_grids_classic_and_netcdf4_are_sampled() {
    let dir = tempfile::tempdir().unwrap();
    write_netcdf(dir.path());
    let pts = inner_points(-4.0, 3.0, 30.0, 35.0);
    for name in ["classic.nc", "offset64.nc", "nc4.nc"] {
        let f = file(&dir.path().join(name), json!({}));
        close_to(&f.elevations(&pts).unwrap(), &pts, bilinear, 1e-6);
        // CF coordinates are sample positions: the data ends at the outer ones.
        let e = error_of(&f, &[[3.2, 32.0]]);
        assert!(e.contains(name) && e.contains("outside") && e.contains("[-4, 3]"), "{e}");
    }
    // int16 with scale_factor and add_offset: to the packing's 0.005.
    let f = file(&dir.path().join("packed.nc"), json!({}));
    close_to(&f.elevations(&pts).unwrap(), &pts, bilinear, 0.006 / 30.0);
    // _FillValue is missing data.
    let e = error_of(&file(&dir.path().join("hole.nc"), json!({})), &[[-2.2, 33.1]]);
    assert!(e.contains("hole.nc") && e.contains("no data") && e.contains("column 2, row 3"), "{e}");
    // Two 2-D variables: name one; a wrong name lists them.
    for two in ["two.nc", "nc4two.nc"] {
        let p = dir.path().join(two);
        let e = error_of(&file(&p, json!({})), &pts);
        assert!(e.contains(two) && e.contains("several 2-D variables") && e.contains("tid"), "{e}");
        let f = file(&p, json!({"variable": "elevation"}));
        close_to(&f.elevations(&pts).unwrap(), &pts, bilinear, 1e-6);
        let e = error_of(&file(&p, json!({"variable": "depth"})), &pts);
        assert!(e.contains(two) && e.contains("no variable \"depth\"") && e.contains("elevation"), "{e}");
    }
    // Not NetCDF; truncated classic.
    let q = dir.path().join("text.nc");
    std::fs::write(&q, "hello").unwrap();
    let e = error_of(&file(&q, json!({})), &pts);
    assert!(e.contains("text.nc") && e.contains("not a NetCDF file"), "{e}");
    let bytes = std::fs::read(dir.path().join("classic.nc")).unwrap();
    let q = dir.path().join("cut.nc");
    std::fs::write(&q, &bytes[..bytes.len() - 100]).unwrap();
    let e = error_of(&file(&q, json!({})), &pts);
    assert!(e.contains("cut.nc"), "{e}");
}

#[test]
fn netcdf4_without_the_library_says_what_to_install() {
    let dir = tempfile::tempdir().unwrap();
    write_netcdf(dir.path());
    let scen = write_scenario(
        dir.path(),
        json!({"type": "file", "path": "nc4.nc", "positive": "up", "offset": 40.0}),
        [[-3.5, 30.5], [2.5, 30.5], [2.5, 34.5], [-3.5, 34.5]],
    );
    let o = common::pycno_within(
        dir.path(),
        &["run", scen.to_str().unwrap()],
        &[("PYCNO_LIBNETCDF", "/nonexistent/libnetcdf.so")],
        LIMIT,
    );
    expect_failure(&o, Some(1), &["nc4.nc", "libnetcdf", "apt-get install libnetcdf-dev"]);
    // With the library the same scenario runs.
    expect_ok(common::pycno_within(dir.path(), &["run", scen.to_str().unwrap()], &[], LIMIT));
}

/// A scenario over `outer` (a 4-vertex polygon) with this bathymetry, a short run.
fn write_scenario(dir: &Path, bathymetry: serde_json::Value, outer: [[f64; 2]; 4]) -> std::path::PathBuf {
    let s = json!({
        "name": "fromfile",
        "domain": {"outer": outer},
        "resolution": {"cells": 200},
        "bathymetry": bathymetry,
        "initial": {"type": "at_rest", "interface": -1.0},
        "time": {"end": 0.01},
        "output": {"dir": "out", "vtk": false}
    });
    let p = dir.join("scenario.json");
    std::fs::write(&p, serde_json::to_string_pretty(&s).unwrap()).unwrap();
    p
}

#[test]
fn pycno_run_fails_with_status_1_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    write_asc(&dir.path().join("g.asc"), 8, 8, [0.0, 0.0], 1.0, false, None);
    write_asc(&dir.path().join("h.asc"), 8, 8, [0.0, 0.0], 1.0, false, Some((4, 4)));
    std::fs::write(dir.path().join("cut.asc"), "ncols 8\nnrows 8\nxllcorner 0\nyllcorner 0\ncellsize 1\n1 2 3\n")
        .unwrap();
    let sq = |a: f64, b: f64| [[a, a], [b, a], [b, b], [a, b]];
    let cases = [
        (json!({"type": "file", "path": "g.asc", "positive": "up"}), sq(0.0, 9.0), vec!["g.asc", "outside", "[0, 8]"]),
        (
            json!({"type": "file", "path": "h.asc", "positive": "up"}),
            sq(3.0, 6.0),
            vec!["h.asc", "no data", "column 4, row 4"],
        ),
        (json!({"type": "file", "path": "cut.asc", "positive": "up"}), sq(1.0, 2.0), vec!["cut.asc", "truncated"]),
        (json!({"type": "file", "path": "none.asc", "positive": "up"}), sq(1.0, 2.0), vec!["none.asc", "cannot open"]),
        (
            json!({"type": "file", "path": "g.asc", "positive": "up", "format": "netcdf"}),
            sq(1.0, 2.0),
            vec!["g.asc", "not a NetCDF file"],
        ),
        (
            json!({"type": "file", "path": "g.asc", "positive": "up", "format": "geotiff"}),
            sq(1.0, 2.0),
            vec!["g.asc", "TIFF"],
        ),
        (json!({"type": "file", "path": "g.dat", "positive": "up"}), sq(1.0, 2.0), vec!["bathymetry.format", "g.dat"]),
        (json!({"type": "file", "path": "g.asc"}), sq(1.0, 2.0), vec!["bathymetry", "positive"]),
        (
            json!({"type": "file", "path": "g.asc", "positive": "up", "scale": 0}),
            sq(1.0, 2.0),
            vec!["bathymetry.scale"],
        ),
        (
            json!([{"type": "constant", "depth": 5}, {"type": "sill", "x0": 1, "height": 2}]),
            sq(1.0, 2.0),
            vec!["bathymetry[1].width"],
        ),
        (
            json!([{"type": "constant", "depth": 5}, {"type": "sill", "height": 2, "width": 1}]),
            sq(1.0, 2.0),
            vec!["bathymetry[1]", "x0"],
        ),
        (json!([]), sq(1.0, 2.0), vec!["bathymetry", "at least one"]),
    ];
    for (bathymetry, outer, words) in cases {
        let scen = write_scenario(dir.path(), bathymetry.clone(), outer);
        let o = common::pycno_within(dir.path(), &["run", scen.to_str().unwrap(), "--overwrite"], &[], LIMIT);
        let err = expect_failure(&o, Some(1), &words);
        assert!(!dir.path().join("out").join("stats.json").exists(), "{bathymetry}: wrote results: {err}");
    }
}

#[test]
fn a_sum_of_shapes_adds_depths_and_a_file_reads_relative_to_the_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("data");
    std::fs::create_dir(&sub).unwrap();
    write_asc(&sub.join("g.asc"), 12, 12, [0.0, 0.0], 1.0, false, None);
    let b = json!([
        {"type": "file", "path": "data/g.asc", "positive": "down"},
        {"type": "constant", "depth": 40.0},
        {"type": "sill", "x0": 6.0, "height": 3.0, "width": 1.5},
        {"type": "sill", "y0": 5.0, "height": 1.0, "width": 2.0, "depth": 0.5}
    ]);
    let p = write_scenario(dir.path(), b, [[0.5, 0.5], [11.5, 0.5], [11.5, 11.5], [0.5, 11.5]]);
    let s = Scenario::from_file(&p).unwrap();
    let pts = inner_points(0.5, 11.5, 0.5, 11.5);
    let (depth, state) = initial::evaluate(&s, &pts).unwrap();
    close_to(
        &depth,
        &pts,
        |x, y| {
            bilinear(x, y) + 40.0 - 3.0 * (-((x - 6.0) / 1.5).powi(2)).exp() + 0.5 - (-((y - 5.0) / 2.0).powi(2)).exp()
        },
        1e-12,
    );
    // At rest with the interface at -1: h2 = H - 1 everywhere.
    for (h, st) in depth.iter().zip(&state) {
        assert_eq!(st.h2, h - 1.0);
    }
    // The scenario's copy (checkpoints) keeps the resolved path and reads back the same.
    let again = Scenario::from_json(&serde_json::to_string(&s).unwrap()).unwrap();
    assert_eq!(initial::evaluate(&again, &pts).unwrap().0, depth);
}

#[test]
fn the_initial_interface_can_come_from_a_file() {
    let dir = tempfile::tempdir().unwrap();
    write_asc(&dir.path().join("z.asc"), 12, 12, [0.0, 0.0], 1.0, true, None);
    let p = dir.path().join("scenario.json");
    let s = json!({
        "domain": {"outer": [[1, 1], [10, 1], [10, 10], [1, 10]]},
        "resolution": {"cells": 100},
        "bathymetry": {"type": "constant", "depth": 100.0},
        "initial": {"type": "at_rest", "surface": 0.5,
                    "interface": {"type": "file", "path": "z.asc", "positive": "up", "offset": -20.0}},
        "time": {"end": 0.01}
    });
    std::fs::write(&p, s.to_string()).unwrap();
    let s = Scenario::from_file(&p).unwrap();
    let pts = inner_points(1.0, 10.0, 1.0, 10.0);
    let (_, state) = initial::evaluate(&s, &pts).unwrap();
    let h2: Vec<f64> = state.iter().map(|c| c.h2 - 100.0).collect();
    close_to(&h2, &pts, |x, y| bilinear(x, y) - 20.0, 1e-12);
    for (c, p) in state.iter().zip(&pts) {
        assert!((c.h1 + c.h2 - 100.5).abs() < 1e-12, "surface at {p:?}");
    }
    // Errors name initial.interface.
    let bad = s_with_interface(&dir, json!({"type": "file", "path": "z.asc", "positive": "up", "offset": -20.0}), 13.0);
    let o = common::pycno_within(dir.path(), &["run", bad.to_str().unwrap()], &[], LIMIT);
    expect_failure(&o, Some(1), &["initial.interface", "z.asc", "outside"]);
}

fn s_with_interface(dir: &tempfile::TempDir, interface: serde_json::Value, edge: f64) -> std::path::PathBuf {
    let p = dir.path().join("bad.json");
    let s = json!({
        "domain": {"outer": [[1, 1], [edge, 1], [edge, edge], [1, edge]]},
        "resolution": {"cells": 100},
        "bathymetry": {"type": "constant", "depth": 100.0},
        "initial": {"type": "at_rest", "interface": interface},
        "time": {"end": 0.01},
        "output": {"dir": "out"}
    });
    std::fs::write(&p, s.to_string()).unwrap();
    p
}

#[test]
fn three_ranks_give_one_rank_s_run_bit_for_bit_for_every_format() {
    let dir = tempfile::tempdir().unwrap();
    write_netcdf(dir.path());
    // Every format in one sum (each scaled down to a small contribution), over [-3, 2] x [31, 34].
    write_asc(&dir.path().join("g.asc"), 8, 6, [-4.0, 30.0], 1.0, false, None);
    write_tiff(&dir.path().join("r.tif"), 8, 6, [-4.0, 36.0], 1.0, false, false, true, None);
    let mut pts = String::new();
    for a in 0..=8 {
        for b in 0..=6 {
            let (x, y) = (-4.0 + a as f64 + 0.1 * (b % 3) as f64, 30.0 + b as f64);
            pts += &format!("{x} {y} {}\n", linear(x, y));
        }
    }
    std::fs::write(dir.path().join("p.xyz"), pts).unwrap();
    let small = |path: &str| json!({"type": "file", "path": path, "positive": "up", "scale": 0.01});
    let b = json!([
        {"type": "constant", "depth": 3.0},
        small("g.asc"), small("r.tif"), small("p.xyz"), small("classic.nc"), small("nc4.nc")
    ]);
    let scen = write_scenario(dir.path(), b, [[-3.0, 31.0], [2.0, 31.0], [2.0, 34.0], [-3.0, 34.0]]);
    // Moving water, so that the depths reach the state (water at rest is stored as zeros).
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&scen).unwrap()).unwrap();
    v["initial"] = json!({"type": "dam_break_x", "x0": -0.5, "interface_left": -0.5, "interface_right": -1.5});
    v["time"] = json!({"end": 0.5});
    std::fs::write(&scen, v.to_string()).unwrap();
    let mut sums = Vec::new();
    for np in [0, 3] {
        let out = format!("o{np}");
        let args = ["run", scen.to_str().unwrap(), "--out", &out, "--no-vtk", "-q", "--precision", "f64"];
        expect_ok(common::cli::pycno_np(np, Some(dir.path()), &args, &[]));
        sums.push(common::cli::stats(&dir.path().join(&out))["state_checksum"].clone());
    }
    assert_eq!(sums[0], sums[1], "1 rank and 3 ranks differ");
}

#[test]
fn water_at_rest_over_a_bathymetry_file_stays_exactly_at_rest() {
    // Well-balancing with a bottom read from data: flat interface and surface over the
    // rough bottom of a grid (plus a sill), 200 steps, in float32 and float64.
    let dir = tempfile::tempdir().unwrap();
    write_asc(&dir.path().join("g.asc"), 12, 12, [0.0, 0.0], 1.0, false, None);
    let b = json!([
        {"type": "file", "path": "g.asc", "positive": "up", "scale": 0.1},
        {"type": "constant", "depth": 8.0},
        {"type": "sill", "x0": 6.0, "height": 1.0, "width": 1.0}
    ]);
    let p = write_scenario(dir.path(), b, [[0.5, 0.5], [11.5, 0.5], [11.5, 11.5], [0.5, 11.5]]);
    let mut s = Scenario::from_file(&p).unwrap();
    s.time.end = 1e4;
    let f64run = common::run::<f64>(&s, Some(200));
    let f32run = common::run::<f32>(&s, Some(200));
    for o in [f64run, f32run] {
        assert_eq!(o.stats.steps, 200);
        let (min, max) = o.depth.iter().fold((f64::MAX, f64::MIN), |(a, b), &h| (a.min(h), b.max(h)));
        assert!(max - min > 1.0, "the bottom is not rough: depths {min} to {max}");
        for (c, (a, b)) in o.start.iter().zip(&o.end).enumerate() {
            assert_eq!(a.to_array(), b.to_array(), "cell {c} moved");
            assert_eq!(b.q1, [0.0; 2], "cell {c}");
        }
    }
}

/// A TIFF that is only a header: one float32 band of `w` by `h` in one strip, georeferenced
/// (a damaged or hostile file: its strip is not there).
fn tiff_header(w: u32, h: u32, bits: u16) -> Vec<u8> {
    let entries: [(u16, u16, u32); 10] = [
        (256, 4, w),                              // ImageWidth, LONG
        (257, 4, h),                              // ImageLength
        (258, 3, bits.into()),                    // BitsPerSample, SHORT
        (259, 3, 1),                              // Compression: none
        (262, 3, 1),                              // PhotometricInterpretation: BlackIsZero
        (273, 4, 200),                            // StripOffsets
        (277, 3, 1),                              // SamplesPerPixel
        (278, 4, h),                              // RowsPerStrip: one strip
        (279, 4, u32::MAX),                       // StripByteCounts
        (339, 3, if bits == 32 { 3 } else { 1 }), // SampleFormat: float or unsigned
    ];
    let mut b = b"II*\0".to_vec();
    b.extend_from_slice(&8u32.to_le_bytes());
    b.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    for (tag, kind, value) in entries {
        b.extend_from_slice(&tag.to_le_bytes());
        b.extend_from_slice(&kind.to_le_bytes());
        b.extend_from_slice(&1u32.to_le_bytes());
        if kind == 3 {
            b.extend_from_slice(&(value as u16).to_le_bytes());
            b.extend_from_slice(&[0, 0]);
        } else {
            b.extend_from_slice(&value.to_le_bytes());
        }
    }
    b.extend_from_slice(&0u32.to_le_bytes());
    b.resize(256, 0);
    b
}

/// The start of a classic NetCDF file: one dimension `x` of 3 and one int variable `v(x)`,
/// whose dimension count (byte 12) is flipped from 0x00 to 0x7f: it asks for 2^31 dimensions.
fn flipped_netcdf() -> Vec<u8> {
    let mut b = b"CDF\x01".to_vec();
    let words = |b: &mut Vec<u8>, xs: &[u32]| xs.iter().for_each(|x| b.extend_from_slice(&x.to_be_bytes()));
    words(&mut b, &[0, 0x0A, 1, 1]);
    b.extend_from_slice(b"x\0\0\0");
    words(&mut b, &[3, 0, 0, 0x0B, 1, 1]);
    b.extend_from_slice(b"v\0\0\0");
    words(&mut b, &[1, 0, 0, 0, 4, 12, 80]);
    b.extend_from_slice(&[0; 12]);
    b[12] = 0x7f;
    b
}

/// Issue 46, item 2: headers that ask for more memory than the machine has aborted the run
/// (SIGABRT in the allocator); a 20 GB sparse `.asc` was read as one 20 GB line. Each is now
/// refused before the allocation, naming the file and the bytes.
#[test]
fn huge_or_damaged_headers_are_refused_naming_the_file_and_the_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("huge.asc"),
        "ncols 999999999\nnrows 999999999\nxllcorner 100\nyllcorner 100\ncellsize 1\n0 0\n",
    )
    .unwrap();
    std::fs::write(d.join("huge.tif"), tiff_header(4_000_000_000, 4_000_000_000, 32)).unwrap();
    std::fs::write(d.join("seven.tif"), tiff_header(8, 8, 7)).unwrap();
    std::fs::write(d.join("flipped.nc"), flipped_netcdf()).unwrap();
    let sparse = std::fs::File::create(d.join("sparse.asc")).unwrap();
    std::io::Write::write_all(&mut &sparse, b"ncols 8\nnrows 8\nxllcorner 0\nyllcorner 0\ncellsize 1\n").unwrap();
    sparse.set_len(20_000_000_000).unwrap();
    drop(sparse);
    let sq = |a: f64, b: f64| [[a, a], [b, a], [b, b], [a, b]];
    let cases = [
        ("huge.asc", vec!["huge.asc", "999999999 by 999999999", "needs about 8000.0 PB of memory", "available"]),
        ("huge.tif", vec!["huge.tif", "4000000000 by 4000000000", "needs about", "PB of memory"]),
        ("seven.tif", vec!["seven.tif", "7-bit samples"]),
        ("flipped.nc", vec!["flipped.nc", "at byte 12", "2130706433 dimensions", "damaged header"]),
        ("sparse.asc", vec!["sparse.asc", "line 6", "NUL byte", "not text"]),
    ];
    for (name, words) in cases {
        let bathymetry = json!({"type": "file", "path": name, "positive": "up"});
        let scen = write_scenario(d, bathymetry, sq(1.0, 2.0));
        let o = common::pycno_within(d, &["run", scen.to_str().unwrap(), "--overwrite"], &[], LIMIT);
        expect_failure(&o, Some(1), &words);
    }
}

/// Issue 46, item 3: a FIFO given as a data file (bathymetry in any format, or the initial
/// interface) blocked the run for ever, on one rank and on two. It is refused at once.
#[test]
fn a_fifo_as_a_data_file_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for name in ["p.asc", "p.tif", "p.nc", "p.xyz"] {
        let c = std::ffi::CString::new(d.join(name).as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }
    // Without the fix each of these waits for a writer: 60 s is far more than a refusal takes.
    let bound = std::time::Duration::from_secs(60);
    let sq = |a: f64, b: f64| [[a, a], [b, a], [b, b], [a, b]];
    for name in ["p.asc", "p.tif", "p.nc", "p.xyz"] {
        let scen = write_scenario(d, json!({"type": "file", "path": name, "positive": "up"}), sq(1.0, 2.0));
        let o = common::pycno_within(d, &["run", scen.to_str().unwrap(), "--overwrite"], &[], bound);
        expect_failure(&o, Some(1), &[name, "not a regular file", "FIFO"]);
    }
    let bad = s_with_interface(&dir, json!({"type": "file", "path": "p.asc", "positive": "up"}), 5.0);
    let o = common::pycno_within(d, &["run", bad.to_str().unwrap()], &[], bound);
    expect_failure(&o, Some(1), &["initial.interface", "p.asc", "FIFO"]);
    let cmd = common::cli::command(2, Some(d), &["run", bad.to_str().unwrap()], &[]);
    let o = common::cli::run_bounded(cmd, bound);
    expect_failure(&o, None, &["p.asc", "FIFO"]);
}
