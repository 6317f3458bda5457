//! clrace: a data-race detector for OpenCL kernels, built on an embedded CPU emulator.
//!
//! The pipeline: [`compile`] turns OpenCL C into SPIR-V, [`spirv`] loads and lowers it to our
//! [`ir`], [`exec`] runs an NDRange on it and reports every access through its hooks, [`detect`]
//! finds the races in them, [`explore`] re-runs a launch under other orders of its atomics,
//! [`check`] puts those together for one launch, and [`report`] renders what was found.
//! [`launch_file`] reads and writes the launch files of `clrace check`; [`layer`] is the OpenCL
//! loader layer that checks the launches of unmodified applications (built as `libclrace.so`).

pub mod big_bytes;
pub mod budget;
pub mod check;
pub mod compile;
pub mod detect;
pub mod exec;
pub mod explore;
pub mod ir;
pub mod launch_file;
pub mod layer;
pub mod program;
pub mod report;
pub mod sarif;
pub mod spirv;
pub mod suppress;

pub use exec::{ArgValue, Launch, RunOutcome, run};
pub use program::{AddressSpace, BuildError, Handle, KernelArg, KernelInfo, Program};

/// The launch-file module under its old name, and [`launch_file::LaunchFile`] under its old name
/// `LaunchData`: kept for compatibility with the command line, the tests and the examples.
pub mod launch {
    pub use crate::launch_file::LaunchFile as LaunchData;
    pub use crate::launch_file::*;
}
