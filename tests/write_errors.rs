//! Issue 46, items 4 and 8: a command whose output cannot be written (a full device, a
//! closed pipe, a file-size limit, a `.pvd` removed during the run) fails with a message
//! and exit status 1: never a panic (exit 101, which `println!` gave on a closed pipe or
//! `/dev/full`), never a silent death by `SIGXFSZ`.

mod common;

use common::cli::{expect_failure, run_bounded, text, LIMIT};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// `pycno ARGS` in `cwd` with standard output going to `out`.
fn pycno_to(cwd: &Path, args: &[&str], out: Stdio) -> Output {
    let mut cmd = common::cli::command(0, Some(cwd), args, &[]);
    cmd.stdout(out);
    run_unpiped_stdout(cmd)
}

/// As `run_bounded`, for a command whose standard output is already set (not captured).
fn run_unpiped_stdout(mut cmd: Command) -> Output {
    let child = cmd.stderr(Stdio::piped()).spawn().expect("cannot start pycno");
    let o = child.wait_with_output().expect("wait");
    eprintln!("{cmd:?}: {:?}", o.status);
    o
}

fn dev_full() -> Stdio {
    Stdio::from(std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full"))
}

/// A pipe whose reading end is already closed: every write to it fails with EPIPE.
fn closed_pipe() -> Stdio {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    Stdio::from(writer)
}

#[track_caller]
fn write_failure(o: &Output, words: &[&str]) {
    assert_eq!(o.status.signal(), None, "killed by a signal:\n{}", text(o));
    expect_failure(o, Some(1), &[&["cannot write to standard output"][..], words].concat());
}

const COMMANDS: [&[&str]; 6] = [
    &["schema"],
    &["example"],
    &["example", "lake_at_rest_bump", "ex"],
    &["mesh", "--cells", "200"],
    &["bench", "--cells", "200", "--t-end", "0.01", "--backend", "cpu", "--repeat", "1"],
    &["run", "--cells", "200", "--t-end", "0.01", "--backend", "cpu", "--out", "o"],
];

#[test]
fn every_command_reports_a_full_device() {
    for args in COMMANDS {
        let d = tempfile::tempdir().unwrap();
        let o = pycno_to(d.path(), args, dev_full());
        write_failure(&o, &["No space left on device", "the device is full"]);
    }
    let d = tempfile::tempdir().unwrap();
    let o = pycno_to(d.path(), &["partition", "--cells", "400", "--ranks", "2", "--out", "p"], dev_full());
    write_failure(&o, &["No space left on device"]);
}

#[test]
fn every_command_reports_a_closed_pipe() {
    for args in COMMANDS {
        let d = tempfile::tempdir().unwrap();
        let o = pycno_to(d.path(), args, closed_pipe());
        write_failure(&o, &["Broken pipe", "stopped reading"]);
    }
}

/// A NetCDF run past a file-size limit (`prlimit --fsize`) was killed by SIGXFSZ with no
/// message; now the write fails with EFBIG, which the run reports.
#[test]
fn a_file_size_limit_is_an_error_with_a_message() {
    let d = tempfile::tempdir().unwrap();
    let scen = d.path().join("s.json");
    std::fs::write(
        &scen,
        r#"{
  "name": "nc",
  "domain": { "outer": [[-5, -5], [5, -5], [5, 5], [-5, 5]] },
  "resolution": { "cells": 3000 },
  "bathymetry": { "type": "constant", "depth": 5.0 },
  "initial": { "type": "circular_dam_break" },
  "time": { "end": 0.2, "output_interval": 0.02 },
  "output": { "vtk": false, "netcdf": true }
}"#,
    )
    .unwrap();
    let mut cmd = common::cli::command(0, Some(d.path()), &["run", "s.json", "--backend", "cpu", "-q"], &[]);
    // SAFETY: setrlimit only, in the child before exec.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit { rlim_cur: 100_000, rlim_max: 100_000 };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let o = run_bounded(cmd, LIMIT);
    assert_eq!(o.status.signal(), None, "killed by a signal (SIGXFSZ is 25):\n{}", text(&o));
    expect_failure(&o, Some(1), &["nc.nc", "File too large"]);
}
