//! Small utilities at the bottom of the layering, used by every module that writes or reads
//! files: atomic writes (no reader ever sees a half-written file) and checksummed binary
//! framing (magic, version, CRC-32).

pub mod atomic;
