//! Data files read as geotiff (`scenario/data/`): any bytes must give elevations or an
//! error naming the file, never a panic or an allocation abort. The readers take a path,
//! so each input is written to a file of its own process (libFuzzer runs one at a time).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = std::env::temp_dir().join(format!("pycno-fuzz-{}.tif", std::process::id()));
    std::fs::write(&path, data).expect("cannot write the input file");
    let file: pycno::scenario::data::DataFile = serde_json::from_value(serde_json::json!({
        "type": "file", "path": path, "positive": "up", "format": "geotiff"
    }))
    .expect("a valid data file entry");
    if let Err(e) = file.elevations(&[[1.2, 1.1], [2.5, 2.0], [3.1, 1.7]]) {
        assert!(format!("{e:#}").contains(".tif"), "the error does not name the file: {e:#}");
    }
});
