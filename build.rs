//! Records which source a binary was built from, for `pycno --version`: the git commit of
//! the checkout (`unknown` outside a git checkout or without git) and the cargo profile.
//! A binary installed with `cargo install` is a copy, so it has to carry this itself.

use std::path::PathBuf;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=PYCNO_GIT_COMMIT={commit}");
    // Cargo sets PROFILE to `release` or `debug` (the latter for dev and test builds).
    let profile = std::env::var("PROFILE").unwrap_or_else(|_| "unknown".into());
    println!("cargo:rustc-env=PYCNO_BUILD_PROFILE={profile}");

    // Rebuild the version text when HEAD moves: HEAD itself (a checkout or a new branch) and
    // the file of the branch it names (a commit), or packed-refs where the branch was packed.
    // In a worktree, HEAD lives in the worktree's git dir and the branch in the common one;
    // `--git-path` resolves both. Only files that exist: cargo reruns a build script whose
    // rerun-if-changed file is missing on every build, which rebuilt the crate every time.
    println!("cargo:rerun-if-changed=build.rs");
    let mut watched = vec!["HEAD".to_string(), "packed-refs".to_string()];
    watched.extend(git(&["symbolic-ref", "-q", "HEAD"]));
    for path in watched {
        if let Some(p) = git(&["rev-parse", "--git-path", &path]).map(PathBuf::from) {
            if p.exists() {
                println!("cargo:rerun-if-changed={}", p.display());
            }
        }
    }
}
