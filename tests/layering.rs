//! The module layering of CONTRIBUTING.md and the guide's "Layout of the code": a module
//! may use only modules below it. This test reads every source file and fails on any
//! `crate::X` path that points at a module on the same level or above (a cycle, or an
//! import pointing up).

use std::path::Path;

/// Lowest first. Modules on one level may not use each other.
const LEVELS: [&[&str]; 7] =
    [&["util", "physics", "comm"], &["mesh"], &["solver"], &["scenario"], &["output"], &["partition"], &["app"]];

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

/// Every `crate::NAME` in `text`, outside line comments.
fn crate_paths(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(k) = rest.find("crate::") {
            let before = rest[..k].chars().last();
            rest = &rest[k + 7..];
            // `pycno_crate::`, `$crate::` and the like are not this crate's paths.
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
                continue;
            }
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            found.push((n + 1, name));
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
