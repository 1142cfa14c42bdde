//! pycno's native .pmsh. The checksum would stop almost every mutation at the door, so the
//! input is framed here: the fuzzer's bytes become the body and the CRC-32 is appended (a
//! checksum-correct but malformed file is what must not crash the reader).
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let mut file = data.to_vec();
    if data.first() == Some(&b'!') {
        // A leading "!" passes the rest through raw, checksum and all.
        file.remove(0);
    } else {
        let crc = pycno_crc32(&file);
        file.extend_from_slice(&crc.to_le_bytes());
    }
    if let Ok(mesh) = pycno::mesh::io::read_native_bytes(Path::new("fuzz.pmsh"), &file) {
        let _ = pycno::app::prepare_mesh(mesh, "fuzz.pmsh");
    }
});

/// CRC-32 (IEEE), as crc32fast computes it, without another dependency.
fn pycno_crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xedb8_8320 } else { crc >> 1 };
        }
    }
    !crc
}
