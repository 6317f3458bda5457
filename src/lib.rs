//! clrace: a data-race detector for OpenCL kernels, built on an embedded CPU emulator.
//!
//! The build pipeline runs one way: [`compile`] turns OpenCL C into SPIR-V bytes, [`spirv`] reads
//! them and lowers them to our [`ir`] (a kernel's reflected signature, [`ir::reflect`], is part
//! of it), [`opt`] rewrites the lowered IR, and [`ir::validate`] checks what the interpreter will
//! rely on; [`program`] sits on top, composes them and hands out the built [`Program`]. No stage
//! imports one after it. Then [`exec`] runs an NDRange on a program and reports every access
//! through its hooks, [`detect`] finds the races in them, [`explore`] re-runs a launch under
//! other orders of its atomics, [`check`] puts those together for one launch, and [`report`] turns
//! the typed [`finding`]s into text, JSON and SARIF, once, for every caller. [`launch_file`] reads
//! and writes the launch files of `clrace check`; [`layer`] is the OpenCL loader layer that checks
//! the launches of unmodified applications (built as `libclrace.so`); [`spool`] stores the
//! launches it snapshots, to be checked after the application exits.
//!
//! "Launch" is one word for several things; each has its own name here:
//! - [`Launch`]: the request to run a kernel (its name, the NDRange, the arguments);
//! - while it runs, the executor's `Execution` over the grid's `NdRange` (both private to [`exec`]);
//! - [`launch_file::LaunchFile`]: a launch as a file on disk (`clrace check FILE.sim`);
//! - the layer's intercepted `clEnqueueNDRangeKernel` is an enqueue (`layer::enqueue`), and the
//!   copy of its inputs taken there is its snapshot.

pub mod big_bytes;
pub mod budget;
pub mod check;
pub mod compile;
pub mod detect;
pub mod device;
pub mod exec;
pub mod explore;
pub mod failure;
pub mod finding;
pub mod ir;
pub mod launch_file;
pub mod layer;
pub mod opt;
pub mod program;
pub mod report;
pub mod sarif;
pub mod series;
pub mod spirv;
pub mod spool;
pub mod suppress;

pub use compile::BuildError;
pub use exec::{ArgValue, Launch, RunOutcome, run};
pub use ir::reflect::{AddressSpace, Handle, KernelArg, KernelInfo};
pub use program::Program;

/// The launch-file module under its old name, and [`launch_file::LaunchFile`] under its old name
/// `LaunchData`: kept so that the tests, the examples and
/// users' code written against them still compile.
pub mod launch {
    pub use crate::launch_file::LaunchFile as LaunchData;
    pub use crate::launch_file::*;
}
