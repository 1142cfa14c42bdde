//! Small utilities at the bottom of the layering, used by every module that writes or reads
//! files: atomic writes (no reader ever sees a half-written file), reading only regular
//! files, the memory a run will need against the memory the machine has, and standard output
//! written so that a failed write is an error, not a panic.

pub mod atomic;
pub mod date;
pub mod files;
pub mod memory;
pub mod stdout;
