//! State and accumulator arrays in the paper's layout, the backend interface with its CPU
//! implementation, and the time loop.

pub mod backend;
pub mod cpu;
pub mod cuda;
pub mod exchange;
pub mod layout;
pub mod stepper;
pub mod watch;

pub use backend::{Backend, Cells, Health, StepContext};
pub use cpu::CpuBackend;
pub use layout::Layout;
