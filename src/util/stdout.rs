//! What the commands print on standard output, written so that a failed write (a closed pipe:
//! `pycno schema | head -c 1`; a full device: `> /dev/full`; a file-size limit) is an error
//! with a message and exit status 1, never a panic (`println!` panics on one) and never a
//! silent death by signal (see [`ignore_write_signals`]).

use anyhow::{anyhow, Result};
use std::io::Write;

/// Write `args` to standard output and flush it, so that a failure shows at the line that
/// failed. Use it through [`say!`](crate::say).
pub fn print(args: std::fmt::Arguments) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_fmt(args)
        .and_then(|()| out.flush())
        .map_err(|e| anyhow!("cannot write to standard output: {}", describe(&e)))
}

/// A write error in words, with what to do about the ones a user meets.
pub fn describe(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::EPIPE) => format!("{e} (the program reading the output stopped reading)"),
        Some(libc::ENOSPC) => format!("{e} (the device is full)"),
        Some(libc::EFBIG) => format!("{e} (larger than the file-size limit, `ulimit -f`)"),
        _ => e.to_string(),
    }
}

/// Make a write past the file-size limit (`ulimit -f`, `prlimit --fsize`) fail with `EFBIG`
/// instead of killing the process with `SIGXFSZ` and no message, and a write to a closed pipe
/// fail with `EPIPE` instead of `SIGPIPE` (Rust's runtime already ignores it; this keeps it so
/// under launchers that restore it). Every writer then reports the error and the process
/// exits 1. Called first thing in `main`.
pub fn ignore_write_signals() {
    // SAFETY: setting a signal's disposition to SIG_IGN; no handler runs.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

/// `println!` that returns an error instead of panicking when standard output cannot be
/// written (see the module's text): `say!("wrote {}", p.display())?;`.
#[macro_export]
macro_rules! say {
    () => {
        $crate::util::stdout::print(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::util::stdout::print(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` as [`say!`] is `println!`.
#[macro_export]
macro_rules! say_raw {
    ($($arg:tt)*) => {
        $crate::util::stdout::print(format_args!($($arg)*))
    };
}
