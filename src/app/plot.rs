//! `pycno plot`: pictures of an output directory, drawn by `tools/plot.py` (matplotlib, and
//! VTK to read the frames as ParaView does, compressed or not) with the project's Python
//! environment. The script is built into the binary, so `pycno plot` works from any
//! directory; the interpreter is `PYCNO_PYTHON`, else the `.venv` of the checkout this
//! binary lies in or was built in (tools/setup.sh makes it), else `python3` on the PATH.
//!
//! Python rather than a Rust plotting crate: the colour maps, colour bars, triangle maps and
//! GIFs that matplotlib draws would each be a project here, and reading compressed `.pvtu`
//! series through VTK itself is the check that ParaView reads them too.

use anyhow::{bail, Context, Result};
use std::path::PathBuf;
use std::process::Command;

const SCRIPT: &str = include_str!("../../tools/plot.py");

/// The Python that has matplotlib and VTK (see the module doc).
pub fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("PYCNO_PYTHON") {
        return p.into();
    }
    let exe = std::env::current_exe().and_then(std::fs::canonicalize);
    if let Ok(exe) = exe {
        for dir in exe.ancestors().skip(1) {
            let venv = dir.join(".venv/bin/python3");
            if dir.join("Cargo.toml").is_file() && venv.is_file() {
                return venv;
            }
        }
    }
    // An installed copy (`cargo install`, tools/setup.sh) lives outside the checkout: look in
    // the checkout it was built from.
    let built_in = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python3");
    if built_in.is_file() {
        return built_in;
    }
    PathBuf::from("python3")
}

/// Run the picture tool with `args`; its exit status is ours.
pub fn command(args: &[String]) -> Result<i32> {
    let py = python();
    let status = Command::new(&py)
        .arg("-c")
        .arg(SCRIPT)
        .args(args)
        .env("PYCNO_PLOT_PROG", "pycno plot")
        .status()
        .with_context(|| format!("cannot start {} (set PYCNO_PYTHON, or run tools/setup.sh)", py.display()))?;
    match status.code() {
        Some(c) => Ok(c),
        None => bail!("{} was killed by a signal", py.display()),
    }
}
