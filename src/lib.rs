//! clrace: a data-race detector for OpenCL kernels, built on an embedded CPU emulator.
//!
//! The build pipeline runs one way: [`compile`] turns OpenCL C into SPIR-V bytes, [`spirv`] reads
//! them and lowers them to our [`ir`] (a kernel's reflected signature, [`ir::reflect`], is part
//! of it), [`opt`] rewrites the lowered IR, and [`ir::validate`] checks what the interpreter will
//! rely on; [`program`] sits on top and hands out the built [`Program`]. No stage imports one
//! after it. Then [`exec`] runs an NDRange on a program and reports every access through its
//! hooks, [`detect`] finds the races in them, [`explore`] re-runs a launch under other orders of
//! its atomics, [`check`] puts those together for one launch, and [`report`] renders what was
//! found. [`launch`] reads and writes the launch files of `clrace check`; [`layer`] is the
//! OpenCL loader layer that checks the launches of unmodified applications (built as
//! `libclrace.so`).

pub mod big_bytes;
pub mod budget;
pub mod check;
pub mod compile;
pub mod detect;
pub mod exec;
pub mod explore;
pub mod finding;
pub mod ir;
pub mod launch;
pub mod layer;
pub mod opt;
pub mod program;
pub mod report;
pub mod sarif;
pub mod spirv;
pub mod suppress;

pub use compile::BuildError;
pub use exec::{ArgValue, Launch, RunOutcome, run};
pub use ir::reflect::{AddressSpace, Handle, KernelArg, KernelInfo};
pub use program::Program;
