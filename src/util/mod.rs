//! Small utilities at the bottom of the layering, used by every module that writes or reads
//! files: atomic writes (no reader ever sees a half-written file), reading only regular
//! files, and the memory a run will need against the memory the machine has.

pub mod atomic;
pub mod files;
pub mod memory;
