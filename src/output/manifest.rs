//! What a run wrote into its output directory, so that runs cannot be mixed up.
//!
//! `OUT/.pycno-outputs` starts with the run's id and lists, one per line, every file the run
//! wrote there (relative to OUT), appended as the run goes: a killed run's list is complete
//! up to its last file. A new run refuses a directory that holds another run's results (a
//! list with another id, or, for directories written before the list existed, files named as
//! pycno names its results) unless `--overwrite`, which removes exactly those files and the
//! other run's checkpoints under `OUT/checkpoints`, and nothing else. A restart continues
//! its own run's list (the checkpoint carries the run id).

use super::checkpoint;
use crate::util::files::read_regular_to_string;
use anyhow::{bail, Context, Result};
use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

pub const FILE: &str = ".pycno-outputs";
const HEAD: &str = "# pycno outputs of run ";

/// The list of a run's files in its output directory (rank 0's; other ranks hold an inert
/// one). Recording is by `&self`, so every writer of the run can share it.
#[derive(Debug, Default)]
pub struct Manifest {
    inner: Mutex<Option<Open>>,
}

#[derive(Debug)]
struct Open {
    path: PathBuf,
    file: File,
    seen: HashSet<String>,
}

/// What an output directory holds before a run.
#[derive(Debug, PartialEq, Eq)]
pub enum Before {
    /// Nothing of pycno's (missing, empty, or only others' files).
    Clean,
    /// This run's own results (a restart of it).
    ThisRun,
    /// Another run's: its id (if it has a list) and the files that show it.
    Other { run_id: Option<String>, files: Vec<String> },
}

/// Whether `name` (a file directly in an output directory) is named as pycno names the
/// results of a run: how a directory written before `.pycno-outputs` existed is recognized.
fn looks_like_results(name: &str) -> bool {
    [".pvd", ".vtu", ".pvtu", ".nc"].iter().any(|e| name.ends_with(e))
        || ["stats.json", "gauges.csv", "scenario.json"].contains(&name)
}

/// The run id in `dir`'s list, and the files it lists.
fn read_list(dir: &Path) -> Result<Option<(String, Vec<String>)>> {
    let p = dir.join(FILE);
    let text = match read_regular_to_string(&p) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", p.display())),
    };
    let mut lines = text.lines();
    let id = lines.next().and_then(|l| l.strip_prefix(HEAD)).map(|s| s.trim().to_string());
    let Some(id) = id else {
        bail!("{}: not a list of pycno's outputs (its first line is not {HEAD:?}...)", p.display())
    };
    Ok(Some((id, lines.filter(|l| !l.trim().is_empty()).map(str::to_string).collect())))
}

/// What `dir` holds, for a run with id `run_id`.
pub fn inspect(dir: &Path, run_id: &str) -> Result<Before> {
    if let Some((id, files)) = read_list(dir)? {
        return Ok(if id == run_id { Before::ThisRun } else { Before::Other { run_id: Some(id), files } });
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Before::Clean),
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
            bail!("output directory {} is a file, not a directory", dir.display())
        }
        Err(e) => return Err(e).with_context(|| format!("cannot list output directory {}", dir.display())),
    };
    let mut files: Vec<String> = Vec::new();
    for e in entries {
        let e = e.with_context(|| format!("cannot list output directory {}", dir.display()))?;
        let name = e.file_name().to_string_lossy().into_owned();
        if e.file_type().is_ok_and(|t| t.is_file()) && looks_like_results(&name) {
            files.push(name);
        }
    }
    if dir.join("checkpoints").join(checkpoint::RUN_FILE).is_file() {
        files.push(format!("checkpoints/{}", checkpoint::RUN_FILE));
    }
    files.sort();
    Ok(if files.is_empty() { Before::Clean } else { Before::Other { run_id: None, files } })
}

/// The refusal of a directory holding another run's results, naming a few of them.
fn refusal(dir: &Path, run_id: &Option<String>, files: &[String]) -> anyhow::Error {
    let some: Vec<&str> = files.iter().take(4).map(String::as_str).collect();
    let more = if files.len() > some.len() { format!(" and {} more", files.len() - some.len()) } else { String::new() };
    let whose = match run_id.as_deref() {
        Some("") => format!("the results of another run (its {FILE} names no run id; files "),
        Some(id) => format!("the results of another run (run id {id}: "),
        None => "results of an earlier run (files ".to_string(),
    };
    anyhow::anyhow!(
        "output directory {} holds {whose}{}{more}); give another --out, or --overwrite to replace them (it removes \
         only that run's files)",
        dir.display(),
        some.join(", ")
    )
}

/// Whether `before` is a run that failed before writing any result (its list names only
/// its `scenario.json`, and it has no checkpoints): running the same command again, to
/// the same directory, replaces it without `--overwrite`.
fn nothing_to_lose(dir: &Path, before: &Before) -> bool {
    match before {
        Before::Other { run_id: Some(_), files } => {
            files.iter().all(|f| f == "scenario.json")
                && std::fs::symlink_metadata(dir.join("checkpoints").join(checkpoint::RUN_FILE)).is_err()
        }
        _ => false,
    }
}

/// Check, without changing anything, that a run with id `run_id` may write into `dir`.
pub fn check(dir: &Path, run_id: &str, overwrite: bool) -> Result<()> {
    let before = inspect(dir, run_id)?;
    let overwrite = overwrite || nothing_to_lose(dir, &before);
    match before {
        Before::Other { run_id, files } if !overwrite => Err(refusal(dir, &run_id, &files)),
        _ => Ok(()),
    }
}

/// A relative path of a list that stays inside its directory (no `..`, not absolute).
fn inside(name: &str) -> bool {
    let p = Path::new(name);
    !name.is_empty() && p.components().all(|c| matches!(c, Component::Normal(_)))
}

/// Remove another run's results from `dir`: the files its list names (or, without a list,
/// the files named as results), regular files only, and its checkpoints in
/// `dir/checkpoints` unless `keep_checkpoints` (a restart reading from there).
fn remove_results(dir: &Path, files: &[String], keep_checkpoints: bool) -> Result<usize> {
    let mut removed = 0;
    for name in files {
        if !inside(name) || name.starts_with("checkpoints/") {
            continue;
        }
        let p = dir.join(name);
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_file() => {
                std::fs::remove_file(&p).with_context(|| format!("--overwrite: cannot remove {}", p.display()))?;
                removed += 1;
            }
            Ok(_) => log::warn!("--overwrite: {} is not a regular file: left alone", p.display()),
            Err(_) => {}
        }
    }
    if !keep_checkpoints {
        removed += checkpoint::remove_all(&dir.join("checkpoints"))?;
    }
    let list = dir.join(FILE);
    if std::fs::symlink_metadata(&list).is_ok() {
        std::fs::remove_file(&list).with_context(|| format!("--overwrite: cannot remove {}", list.display()))?;
    }
    Ok(removed)
}

impl Manifest {
    /// A list that records nothing (ranks other than 0, runs that write nothing).
    pub fn inert() -> Manifest {
        Manifest::default()
    }

    /// Make `dir` ready for run `run_id` (rank 0): refuse another run's results unless
    /// `overwrite` (then remove them first), and open the list: continued for this run's
    /// restart, new otherwise. `restart_from`: the checkpoint a restart reads (never removed).
    pub fn prepare(dir: &Path, run_id: &str, overwrite: bool, restart_from: Option<&Path>) -> Result<Manifest> {
        let before = inspect(dir, run_id)?;
        let overwrite = overwrite || nothing_to_lose(dir, &before);
        if let Before::Other { run_id: other, files } = &before {
            if !overwrite {
                return Err(refusal(dir, other, files));
            }
            let ours = restart_from.is_some_and(|r| {
                let (a, b) = (std::fs::canonicalize(r), std::fs::canonicalize(dir.join("checkpoints")));
                matches!((a, b), (Ok(a), Ok(b)) if a.starts_with(&b))
            });
            let n = remove_results(dir, files, ours)?;
            log::info!("--overwrite: removed {n} files of the earlier run from {}", dir.display());
        }
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create output directory {}", dir.display()))?;
        let path = dir.join(FILE);
        let mut seen = HashSet::new();
        let file = if before == Before::ThisRun {
            if let Some((_, files)) = read_list(dir)? {
                seen.extend(files);
            }
            OpenOptions::new().append(true).custom_flags(libc::O_NOFOLLOW).open(&path)
        } else {
            OpenOptions::new().write(true).create_new(true).custom_flags(libc::O_NOFOLLOW).open(&path)
        };
        let mut file = file.with_context(|| format!("cannot write {}", path.display()))?;
        if before != Before::ThisRun {
            file.write_all(format!("{HEAD}{run_id}\n").as_bytes())
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        Ok(Manifest { inner: Mutex::new(Some(Open { path, file, seen })) })
    }

    /// Add `name` (relative to the output directory) to the list, once.
    pub fn record(&self, name: &str) -> Result<()> {
        let mut guard = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let Some(open) = guard.as_mut() else { return Ok(()) };
        if open.seen.insert(name.to_string()) {
            open.file
                .write_all(format!("{name}\n").as_bytes())
                .with_context(|| format!("cannot append to {}", open.path.display()))?;
        }
        Ok(())
    }

    pub fn record_all<S: AsRef<str>>(&self, names: &[S]) -> Result<()> {
        names.iter().try_for_each(|n| self.record(n.as_ref()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 46, item 8: a list with an empty run id, and a directory without a list, were
    /// refused as "(run id : t.pvd)" and "(: t.pvd)".
    #[test]
    fn a_refusal_reads_well_without_a_run_id() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join(FILE), format!("{HEAD}\nt.pvd\n")).unwrap();
        std::fs::write(d.path().join("t.pvd"), "x").unwrap();
        let e = format!("{:#}", check(d.path(), "aaaa", false).unwrap_err());
        assert!(e.contains("names no run id; files t.pvd)") && !e.contains(": t.pvd"), "{e}");
        std::fs::remove_file(d.path().join(FILE)).unwrap();
        let e = format!("{:#}", check(d.path(), "aaaa", false).unwrap_err());
        assert!(e.contains("results of an earlier run (files t.pvd)"), "{e}");
        let e = format!("{:#}", refusal(d.path(), &Some("bbbb".into()), &["t.pvd".into()]));
        assert!(e.contains("(run id bbbb: t.pvd)"), "{e}");
    }

    #[test]
    fn another_runs_results_are_refused_then_replaced_alone() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("out");
        let m = Manifest::prepare(&out, "aaaa", false, None).unwrap();
        for f in ["run.pvd", "run_00000.vtu", "stats.json"] {
            std::fs::write(out.join(f), "x").unwrap();
            m.record(f).unwrap();
        }
        m.record("run.pvd").unwrap();
        std::fs::write(out.join("notes.txt"), "mine").unwrap();
        std::fs::write(out.join("other.vtu"), "mine too").unwrap();
        drop(m);
        assert_eq!(inspect(&out, "aaaa").unwrap(), Before::ThisRun);
        let e = check(&out, "bbbb", false).unwrap_err().to_string();
        assert!(e.contains("run id aaaa") && e.contains("--overwrite") && e.contains("run.pvd"), "{e}");
        let list = std::fs::read_to_string(out.join(FILE)).unwrap();
        assert_eq!(list, "# pycno outputs of run aaaa\nrun.pvd\nrun_00000.vtu\nstats.json\n");
        Manifest::prepare(&out, "bbbb", true, None).unwrap();
        let mut left: Vec<String> =
            std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        left.sort();
        assert_eq!(left, vec![FILE, "notes.txt", "other.vtu"]);
        assert!(std::fs::read_to_string(out.join(FILE)).unwrap().starts_with("# pycno outputs of run bbbb\n"));
    }

    #[test]
    fn a_directory_from_before_the_list_is_recognized() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("readme.md"), "x").unwrap();
        assert_eq!(inspect(d.path(), "a").unwrap(), Before::Clean);
        std::fs::write(d.path().join("old.pvd"), "x").unwrap();
        assert!(matches!(inspect(d.path(), "a").unwrap(), Before::Other { run_id: None, .. }));
        assert!(!inside("../x") && !inside("/etc/passwd") && inside("a_00001.vtu"));
    }
}
