//! The guide's tutorial (docs/src/tutorial.md) runs as written: its `sh` blocks, in the
//! order of the page, as one bash script in an empty directory with this build as `pycno`
//! on the PATH, and each file it shows after a `<!-- tutorial-file: PATH -->` line written
//! where it appears. Only `paraview` (a GUI) is left out. Then what the page says of the
//! results is checked: the files it names exist, and two ranks give one rank's state.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

mod common;
use common::cli::BIN;

/// The tutorial as a bash script: its `sh` blocks and its files, in the page's order.
fn script(page: &str) -> String {
    let mut out = String::from("set -euo pipefail\n");
    let mut file: Option<String> = None;
    let mut block: Option<(String, Vec<&str>)> = None;
    for line in page.lines() {
        if let Some((info, lines)) = &mut block {
            if line.trim_start().starts_with("```") {
                match (info.as_str(), file.take()) {
                    (_, Some(path)) => {
                        out.push_str(&format!("cat > '{path}' <<'TUTORIAL_EOF'\n{}\nTUTORIAL_EOF\n", lines.join("\n")))
                    }
                    ("sh", None) => {
                        for l in lines.iter() {
                            if !l.trim_start().starts_with("paraview ") {
                                out.push_str(&format!("echo '+ {}'\n{l}\n", l.replace('\'', "'\\''")));
                            }
                        }
                    }
                    _ => {}
                }
                block = None;
            } else {
                lines.push(line);
            }
        } else if let Some(info) = line.trim_start().strip_prefix("```") {
            block = Some((info.trim().to_string(), Vec::new()));
        } else if let Some(p) = line.trim().strip_prefix("<!-- tutorial-file:").and_then(|l| l.strip_suffix("-->")) {
            file = Some(p.trim().to_string());
        }
    }
    assert!(block.is_none(), "docs/src/tutorial.md: a code block is not closed");
    out
}

fn json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap()
}

#[test]
fn the_script_is_the_pages_commands_and_files_in_order() {
    let page = "intro\n```sh\npycno a   # note\nparaview x.pvd\n```\n\
                <!-- tutorial-file: d/f.json -->\n```json\n{ \"k\": 'v' }\n```\n\
                ```json\n{ \"shown\": \"only\" }\n```\n```sh\npycno b\n```\n";
    let s = script(page);
    let a = s.find("\npycno a   # note\n").expect(&s);
    let f = s.find("cat > 'd/f.json' <<'TUTORIAL_EOF'\n{ \"k\": 'v' }\nTUTORIAL_EOF\n").expect(&s);
    let b = s.find("\npycno b\n").expect(&s);
    assert!(a < f && f < b, "{s}");
    assert!(!s.contains("paraview") && !s.contains("shown"), "{s}");
}

#[test]
fn the_tutorials_commands_run_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/src/tutorial.md")).unwrap();
    let script = script(&page);
    for needed in ["pycno run study/strait.json", "mpirun -np 2", "pycno plot out/strait --gauges", "xarray"] {
        assert!(script.contains(needed), "the tutorial no longer runs {needed:?}:\n{script}");
    }
    // Its pictures and its xarray step need the Python packages tools/setup.sh installs
    // (tools/test.sh puts them first on the PATH), and its two ranks mpirun: CI has both.
    let python = Command::new("python3").args(["-c", "import xarray, matplotlib, vtk"]).output();
    let mpirun = Command::new("mpirun").arg("--version").output();
    if !python.is_ok_and(|o| o.status.success()) || !mpirun.is_ok_and(|o| o.status.success()) {
        assert!(std::env::var_os("CI").is_none(), "CI needs python3 with xarray, matplotlib and vtk, and mpirun");
        return common::skip::skipped(
            "no python3 with xarray, matplotlib and vtk, or no mpirun (tools/setup.sh installs them)",
        );
    }

    let d = tempfile::tempdir().unwrap();
    let bin = d.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(BIN, bin.join("pycno")).unwrap();
    let work = d.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let path = std::env::join_paths(
        std::iter::once(bin.clone()).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(&script)
        .current_dir(&work)
        .env("PATH", path)
        // Open MPI as root and with more ranks than cores, as on CI's machine; and pycno plot
        // with the python3 found above.
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .env("PYCNO_PYTHON", "python3")
        .env("RUST_LOG", "warn");
    let o = common::cli::run_bounded(cmd, std::time::Duration::from_secs(600));
    let log = common::cli::text(&o);
    assert!(o.status.success(), "the tutorial's commands failed:\n{log}");

    // What the page says the commands made.
    let out = work.join("out/strait");
    for f in [
        "strait.pvd",
        "strait_00000.vtu",
        "strait_00008.vtu",
        "strait_max.vtu",
        "strait.nc",
        "gauges.csv",
        "gauges.png",
        "strait_interface_last.png",
        "strait_arrival_time.png",
    ] {
        assert!(out.join(f).is_file(), "the tutorial's run made no out/strait/{f}:\n{log}");
    }
    assert!(work.join("out/strait_2ranks/strait_00000.pvtu").is_file(), "no .pvtu from two ranks:\n{log}");
    assert!(work.join("out/strait_sill_from_file/stats.json").is_file(), "{log}");
    assert!(work.join("out/strait_exchange/stats.json").is_file(), "{log}");
    assert!(log.contains("lowest interface at the end:"), "the xarray step printed nothing:\n{log}");
    let (one, two) = (json(&out.join("stats.json")), json(&work.join("out/strait_2ranks/stats.json")));
    assert_eq!(two["ranks"], 2);
    assert_eq!(one["state_checksum"], two["state_checksum"], "two ranks differ from one, as the page says they do not");
    // The mass balance the page points at closes for both layers.
    for layer in ["mass_balance_layer1", "mass_balance_layer2"] {
        let mass = one["mass_layer1_start"].as_f64().unwrap() + one["mass_layer2_start"].as_f64().unwrap();
        let b = one[layer].as_f64().unwrap_or_else(|| panic!("no {layer} in stats.json"));
        assert!(b.abs() < 1e-6 * mass, "{layer} = {b} of a mass {mass}");
    }
}
