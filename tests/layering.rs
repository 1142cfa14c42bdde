//! The module layering of CONTRIBUTING.md and the guide's "Layout of the code": a module
//! may use only modules below it, and `output` not even the solver below it; within the
//! solver, the CUDA backend uses nothing of the CPU backend. This test reads every source
//! file and fails on any `crate::X` path that points at a module on the same level or above
//! (a cycle, or an import pointing up), or across one of those two walls.

use std::path::Path;

/// Lowest first. Modules on one level may not use each other: the scenario and the solver
/// stand side by side (what a run asks for, and the numbers that run it; `physics` holds
/// what both need, the boundary table included).
const LEVELS: [&[&str]; 6] =
    [&["util", "physics", "comm"], &["mesh"], &["scenario", "solver"], &["output"], &["partition"], &["app"]];

/// Pairs `(a, b)`: `a` stands above `b` but may not use it. The output writes what the run
/// hands it (the gauges read the backend through `output::gauges::GaugeSource`).
const APART: [(&str, &str); 1] = [("output", "solver")];

/// Macros exported at the crate's root (`#[macro_export]`), and the module that defines them:
/// `crate::say!` is a use of `util`.
const ROOT_MACROS: [(&str, &str); 2] = [("say", "util"), ("say_raw", "util")];

fn level(module: &str) -> Option<usize> {
    let module = ROOT_MACROS.iter().find(|(m, _)| *m == module).map_or(module, |(_, home)| home);
    LEVELS.iter().position(|l| l.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Each line of `text` (numbered from 1) without its line comment.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(|(n, line)| (n + 1, line.split("//").next().unwrap_or("")))
}

/// Every `crate::NAME` in `text`, outside line comments.
fn crate_paths(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, code) in code_lines(text) {
        let mut rest = code;
        while let Some(k) = rest.find("crate::") {
            let before = rest[..k].chars().last();
            rest = &rest[k + 7..];
            // `pycno_crate::`, `$crate::` and the like are not this crate's paths.
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
                continue;
            }
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            found.push((n, name));
        }
    }
    found
}

#[test]
fn no_module_imports_from_a_module_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut checked = 0;
    let mut bad = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        let module = rel.components().next().unwrap().as_os_str().to_string_lossy().trim_end_matches(".rs").to_string();
        if module == "lib" || module == "main" {
            continue;
        }
        let Some(mine) = level(&module) else {
            bad.push(format!(
                "src/{}: module `{module}` is not in the layering (add it to LEVELS, CONTRIBUTING.md and docs/src/layout.md)",
                rel.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(f).unwrap();
        for (line, target) in crate_paths(&text) {
            checked += 1;
            if target == module {
                continue;
            }
            match level(&target) {
                Some(_) if APART.contains(&(module.as_str(), target.as_str())) => bad.push(format!(
                    "src/{}:{line}: `{module}` uses `crate::{target}`, which it must not (APART)",
                    rel.display()
                )),
                Some(t) if t < mine => {}
                Some(_) => bad.push(format!(
                    "src/{}:{line}: `{module}` uses `crate::{target}`, which is not below it",
                    rel.display()
                )),
                None => bad.push(format!("src/{}:{line}: unknown module `crate::{target}`", rel.display())),
            }
        }
    }
    assert!(checked > 50, "found only {checked} crate paths: is the scan broken?");
    assert!(bad.is_empty(), "imports that break the layering:\n{}", bad.join("\n"));
}

#[test]
fn the_scan_sees_an_import_pointing_up() {
    // The checker itself: a made-up physics file that uses the solver must be caught.
    let paths = crate_paths("use crate::solver::Layout; // crate::app in a comment\nlet x = $crate::y;");
    assert_eq!(paths, vec![(1, "solver".to_string())]);
    assert!(level("solver") > level("physics"));
}

/// Paths in `text` (outside line comments) that reach the CPU backend from a sibling module
/// of `solver/`: `super::cpu`, `super::super::cpu`, `solver::cpu`, or `CpuBackend`.
fn cpu_backend_paths(text: &str) -> Vec<(usize, String)> {
    code_lines(text)
        .flat_map(|(n, code)| {
            ["super::cpu", "solver::cpu", "CpuBackend"]
                .into_iter()
                .filter(move |w| code.contains(w))
                .map(move |w| (n, w.to_string()))
        })
        .collect()
}

#[test]
fn the_cuda_backend_uses_nothing_of_the_cpu_backend() {
    // What both backends share (the layout, its checks, the budget) lives in
    // `solver/layout.rs` and `solver/backend.rs`, not in `solver/cpu.rs`.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/solver/cuda");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    assert!(files.len() > 5, "found only {} files in src/solver/cuda: is the scan broken?", files.len());
    let bad: Vec<String> = files
        .iter()
        .flat_map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            let name = f.strip_prefix(Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap().display().to_string();
            cpu_backend_paths(&text).into_iter().map(move |(line, what)| format!("{name}:{line}: uses `{what}`"))
        })
        .collect();
    assert!(bad.is_empty(), "the CUDA backend reaches into the CPU backend:\n{}", bad.join("\n"));
}

#[test]
fn the_scans_see_the_walls() {
    // The checkers themselves: an output file using the solver, and a CUDA file using the
    // CPU backend's check, must be caught; a comment naming them must not.
    assert!(APART.contains(&("output", "solver")) && level("output") > level("solver"));
    assert_eq!(level("scenario"), level("solver"), "scenario and solver side by side");
    let found = cpu_backend_paths(
        "use super::super::cpu::check_slots;\n// `CpuBackend` at order 2\nlet b = CpuBackend::new();",
    );
    assert_eq!(found, vec![(1, "super::cpu".to_string()), (3, "CpuBackend".to_string())]);
}
