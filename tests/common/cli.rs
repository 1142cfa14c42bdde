//! Running the `pycno` binary in the tests: alone or under `mpirun`, in a given working
//! directory, with extra environment, never for longer than [`LIMIT`] (a hang fails the
//! test instead of hanging CI), and the checks every CLI test makes of the outcome.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_pycno");

/// The binary the tests run: this build's, or `PYCNO_TEST_BIN` (another build, e.g. to see
/// a test fail on the code before a fix).
pub fn bin() -> std::ffi::OsString {
    std::env::var_os("PYCNO_TEST_BIN").unwrap_or_else(|| BIN.into())
}

/// No command in the tests needs more than a minute or two; a hang fails at this bound.
pub const LIMIT: Duration = Duration::from_secs(300);

/// `pycno ARGS` (`np` = 0) or `mpirun -np NP pycno ARGS`, in `cwd` (or the current
/// directory), with `env`; one CPU thread per rank under mpirun, since the ranks share
/// this machine's few cores.
pub fn command(np: usize, cwd: Option<&Path>, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = if np == 0 {
        Command::new(bin())
    } else {
        let mut c = Command::new("mpirun");
        c.args(["--allow-run-as-root", "--oversubscribe", "-np", &np.to_string()]).arg(bin());
        c.env("OMPI_ALLOW_RUN_AS_ROOT", "1").env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1").env("RAYON_NUM_THREADS", "1");
        c
    };
    cmd.args(args).env("RUST_BACKTRACE", "0").env_remove("RUST_LOG");
    if let Some(d) = cwd {
        cmd.current_dir(d);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// Run a command to completion, or kill it after `limit` and fail the test (a hang).
pub fn run_bounded(mut cmd: Command, limit: Duration) -> Output {
    let start = Instant::now();
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("cannot start the command");
    // Drain the pipes on threads so that a chatty child never blocks on a full pipe.
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut so, &mut v).ok();
        v
    });
    let err_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut se, &mut v).ok();
        v
    });
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break st;
        }
        if start.elapsed() > limit {
            child.kill().ok();
            let _ = child.wait();
            panic!("{cmd:?} did not finish within {limit:?}: a hang");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = Output { status, stdout: out_t.join().unwrap(), stderr: err_t.join().unwrap() };
    eprintln!("{cmd:?}: {:?} in {:.1} s", out.status.code(), start.elapsed().as_secs_f64());
    out
}

/// Run `pycno` (see [`command`]).
pub fn pycno_np(np: usize, cwd: Option<&Path>, args: &[&str], env: &[(&str, &str)]) -> Output {
    run_bounded(command(np, cwd, args, env), LIMIT)
}

/// A finished command's output, for assertion messages.
pub fn text(o: &Output) -> String {
    format!(
        "exit: {:?}\n--- stdout ---\n{}--- stderr ---\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[track_caller]
pub fn expect_ok(o: Output) -> Output {
    assert!(o.status.success(), "expected success:\n{}", text(&o));
    o
}

/// A clean failure: exit status `code` (any non-zero one if `None`), never a panic, a
/// message on stderr that contains each of `words`. Returns stderr.
#[track_caller]
pub fn expect_failure(o: &Output, code: Option<i32>, words: &[&str]) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    match code {
        Some(c) => assert_eq!(o.status.code(), Some(c), "wrong exit status:\n{}", text(o)),
        None => assert!(!o.status.success(), "expected a failure:\n{}", text(o)),
    }
    assert!(!err.contains("panicked"), "a panic:\n{}", text(o));
    assert!(!err.trim().is_empty(), "failed without a message:\n{}", text(o));
    for w in words {
        assert!(err.contains(w), "stderr lacks {w:?}:\n{}", text(o));
    }
    err
}

/// A run's `stats.json`.
pub fn stats(dir: &Path) -> Value {
    let path = dir.join("stats.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
