//! Scenario JSON: any text must parse and validate, or give an error; a scenario that
//! validates with a domain must triangulate (at a capped size) or give an error.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(mut s) = pycno::scenario::Scenario::from_json(text) {
        if let Some(d) = &s.domain {
            // Keep each run small: at most 2000 cells.
            s.resolution.cells = Some(s.resolution.cells.unwrap_or(200).min(2000));
            s.resolution.max_area = None;
            let _ = pycno::mesh::generate::generate(d, &s.resolution);
        }
        let _ = s.output_times().len();
    }
});
