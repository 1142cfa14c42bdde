//! The data readers under bounded random mutation (issue 46, item 7), on the stable
//! toolchain: seed files of each format (ESRI `.asc`, `.xyz` points, GeoTIFF, classic
//! NetCDF) are mutated a few thousand times with a fixed seed (bit flips, interesting
//! integers over binary fields, inserted digits, cut and duplicated runs), and every read
//! must end in values or in an error that names the file: never a panic, never an abort.
//! (`fuzz/fuzz_targets/data_*.rs` are the libFuzzer targets of the same readers.)

use pycno::scenario::data::DataFile;
use std::path::Path;

/// xorshift64*: a fixed sequence, so that a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const INTERESTING: [u32; 8] = [0, 1, 0x7f, 0xff, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff, 0x0001_0000];

fn mutate(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let mut b = seed.to_vec();
    for _ in 0..1 + rng.below(3) {
        let at = rng.below(b.len());
        match rng.below(7) {
            0 => b[at] ^= 1 << rng.below(8),
            1 => b[at] = rng.next() as u8,
            2 => {
                let x = INTERESTING[rng.below(INTERESTING.len())];
                let bytes = if rng.below(2) == 0 { x.to_be_bytes() } else { x.to_le_bytes() };
                for (k, v) in bytes.iter().enumerate() {
                    if let Some(slot) = b.get_mut(at + k) {
                        *slot = *v;
                    }
                }
            }
            3 => {
                let digits: Vec<u8> = (0..1 + rng.below(9)).map(|_| b'0' + rng.below(10) as u8).collect();
                b.splice(at..at, digits);
            }
            4 => {
                let end = (at + 1 + rng.below(16)).min(b.len());
                b.drain(at..end);
            }
            5 => b.truncate(at),
            _ => {
                let end = (at + 1 + rng.below(32)).min(b.len());
                let run = b[at..end].to_vec();
                b.splice(at..at, run);
            }
        }
        if b.is_empty() {
            break;
        }
    }
    b
}

fn asc_seed() -> Vec<u8> {
    let mut s = "ncols 5\nnrows 4\nxllcorner 0\nyllcorner 0\ncellsize 1\nNODATA_value -9999\n".to_string();
    for r in 0..4 {
        let row: Vec<String> = (0..5).map(|c| format!("{}", -10.0 - r as f64 * 0.5 + c as f64 * 0.25)).collect();
        s += &(row.join(" ") + "\n");
    }
    s.into_bytes()
}

fn xyz_seed() -> Vec<u8> {
    let mut s = "x y z\n".to_string();
    for j in 0..5 {
        for i in 0..5 {
            s += &format!("{i} {j} {}\n", -10.0 + 0.5 * i as f64 - 0.25 * j as f64);
        }
    }
    s.into_bytes()
}

fn tiff_seed(dir: &Path) -> Vec<u8> {
    use tiff::encoder::{colortype, TiffEncoder};
    use tiff::tags::Tag;
    let p = dir.join("seed.tif");
    let mut enc = TiffEncoder::new(std::fs::File::create(&p).unwrap()).unwrap();
    let mut img = enc.new_image::<colortype::Gray32Float>(5, 4).unwrap();
    let e = img.encoder();
    e.write_tag(Tag::ModelPixelScaleTag, &[1.0, 1.0, 0.0][..]).unwrap();
    e.write_tag(Tag::ModelTiepointTag, &[0.0, 0.0, 0.0, 0.0, 4.0, 0.0][..]).unwrap();
    e.write_tag(Tag::GeoKeyDirectoryTag, &[1u16, 1, 0, 1, 1025, 0, 1, 1][..]).unwrap();
    e.write_tag(Tag::GdalNodata, "-9999").unwrap();
    let v: Vec<f32> = (0..20).map(|k| -10.0 + k as f32 * 0.1).collect();
    img.write_data(&v).unwrap();
    std::fs::read(&p).unwrap()
}

fn netcdf_seed(dir: &Path) -> Vec<u8> {
    use netcdf3::{DataSet, FileWriter, Version};
    let p = dir.join("seed.nc");
    let mut ds = DataSet::new();
    ds.add_fixed_dim("y", 4).unwrap();
    ds.add_fixed_dim("x", 5).unwrap();
    ds.add_var_f64("y", &["y"]).unwrap();
    ds.add_var_f64("x", &["x"]).unwrap();
    ds.add_var_f32("z", &["y", "x"]).unwrap();
    let mut w = FileWriter::open(&p).unwrap();
    w.set_def(&ds, Version::Classic, 0).unwrap();
    w.write_var_f64("y", &[0.0, 1.0, 2.0, 3.0]).unwrap();
    w.write_var_f64("x", &[0.0, 1.0, 2.0, 3.0, 4.0]).unwrap();
    let z: Vec<f32> = (0..20).map(|k| -10.0 + k as f32 * 0.1).collect();
    w.write_var_f32("z", &z).unwrap();
    w.close().unwrap();
    std::fs::read(&p).unwrap()
}

#[test]
fn mutated_data_files_give_values_or_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let seeds = [
        ("m.asc", asc_seed()),
        ("m.xyz", xyz_seed()),
        ("m.tif", tiff_seed(dir.path())),
        ("m.nc", netcdf_seed(dir.path())),
    ];
    let points = [[1.2, 1.1], [2.5, 2.0], [3.1, 1.7]];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for (name, seed) in &seeds {
        let path = dir.path().join(name);
        let file: DataFile =
            serde_json::from_value(serde_json::json!({"type": "file", "path": path, "positive": "up"})).unwrap();
        std::fs::write(&path, seed).unwrap();
        let v = file.elevations(&points).unwrap_or_else(|e| panic!("the seed {name} does not read: {e:#}"));
        assert!(v.iter().all(|x| x.is_finite()), "{name}: {v:?}");
        let (mut ok, mut refused) = (0, 0);
        for k in 0..1500 {
            let bytes = mutate(&mut rng, seed);
            std::fs::write(&path, &bytes).unwrap();
            match std::panic::catch_unwind(|| file.elevations(&points)) {
                Ok(Ok(_)) => ok += 1,
                Ok(Err(e)) => {
                    let m = format!("{e:#}");
                    assert!(m.contains(name), "mutation {k} of {name}: the error does not name the file: {m}");
                    refused += 1;
                }
                Err(_) => {
                    let kept = dir.path().join(format!("panic_{k}_{name}"));
                    std::fs::copy(&path, &kept).unwrap();
                    panic!("mutation {k} of {name} panicked (the file: {})", kept.display());
                }
            }
        }
        eprintln!("{name}: 1500 mutations, {ok} read, {refused} refused with an error naming the file");
        assert!(refused > 0, "{name}: no mutation was refused: the mutations do not reach the reader");
    }
}
