//! What a caller sees of a built program: its kernels and their reflected signatures.
//!
//! A [`Program`] is built once (from OpenCL C, separately compiled and linked OpenCL C units, or
//! SPIR-V) and then launched any number of times through [`crate::exec::run`].

use std::path::Path;

use crate::{compile, ir, spirv};

/// The address space of a kernel argument, as OpenCL names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressSpace {
    Private,
    Global,
    Constant,
    Local,
}

/// One reflected kernel argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelArg {
    /// The parameter's name in the source (empty when the module carries none).
    pub name: String,
    /// Where a pointer argument points; `Private` for by-value arguments.
    pub space: AddressSpace,
    /// Pointer arguments point to memory in `space`.
    pub is_pointer: bool,
    /// The type as the source spelled it (`float*`, `int4`, `S`), from kernel arg-type metadata,
    /// or derived from the SPIR-V type when the metadata is absent.
    pub type_name: String,
    /// Size in bytes of the argument value: 8 for pointers, the value's size otherwise.
    pub size: usize,
    /// For pointers: the size in bytes of the pointee element (1 for `void*`).
    pub pointee_size: usize,
    /// Whether the argument is an image or a sampler rather than memory or a value.
    pub handle: Option<Handle>,
}

/// An argument that is an OpenCL object other than a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handle {
    Image,
    Sampler,
}

/// A kernel's reflected signature.
#[derive(Debug, Clone)]
pub struct KernelInfo {
    pub name: String,
    pub args: Vec<KernelArg>,
    /// `reqd_work_group_size`, when the kernel declares it.
    pub required_local_size: Option<[u64; 3]>,
}

/// A program ready to run: its SPIR-V lowered to our IR.
#[derive(Debug)]
pub struct Program {
    pub(crate) module: ir::Module,
    /// Flush single-precision denormals to zero (`-cl-denorms-are-zero`).
    pub flush_denormals: bool,
    /// Warnings and notes the compiler printed on a successful build.
    pub build_log: String,
}

/// Why a program could not be built.
#[derive(Debug)]
pub enum BuildError {
    /// The compiler tools are missing; the message says how to install them.
    ToolsMissing(String),
    /// The source does not compile: clang's diagnostics.
    Compile(String),
    /// The translator or our loader failed on input clang accepted: our bug, not the user's.
    Internal(String),
    /// The SPIR-V module is malformed or uses something we cannot run.
    Spirv(String),
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::ToolsMissing(m) => write!(f, "compiler tools missing: {m}"),
            BuildError::Compile(log) => write!(f, "build failed:\n{log}"),
            BuildError::Internal(m) => write!(f, "internal compiler error: {m}"),
            BuildError::Spirv(m) => write!(f, "invalid or unsupported SPIR-V: {m}"),
        }
    }
}

impl std::error::Error for BuildError {}

impl Program {
    /// Compiles OpenCL C `source` (named `path` in diagnostics and source locations) with the
    /// application's build `options`, then loads and lowers it.
    pub fn from_source(source: &str, path: &Path, options: &str) -> Result<Program, BuildError> {
        Program::from_compiled(compile::compile(source, path, options)?)
    }

    /// Compiles each of `units` separately (as `clCompileProgram` would), links them with the
    /// application's `link_options` (as `clLinkProgram` would), then loads and lowers the result.
    pub fn from_units(units: &[compile::Unit], link_options: &str) -> Result<Program, BuildError> {
        Program::from_compiled(compile::compile_units(units, link_options)?)
    }

    fn from_compiled(built: compile::Compiled) -> Result<Program, BuildError> {
        let mut program = Program::from_spirv(&built.spirv)?;
        program.flush_denormals = built.flush_denormals;
        program.build_log = built.log;
        Ok(program)
    }

    /// Loads a SPIR-V module (little- or big-endian words as bytes).
    pub fn from_spirv(bytes: &[u8]) -> Result<Program, BuildError> {
        let module = spirv::load_and_lower(bytes).map_err(BuildError::Spirv)?;
        Ok(Program { module, flush_denormals: false, build_log: String::new() })
    }

    /// The program's kernels, in module order.
    /// The lowered program (source locations, variables, code).
    pub fn module(&self) -> &ir::Module {
        &self.module
    }

    pub fn kernels(&self) -> impl Iterator<Item = &KernelInfo> {
        self.module.kernels.iter().map(|k| &k.info)
    }

    /// One kernel by name.
    pub fn kernel(&self, name: &str) -> Option<&KernelInfo> {
        self.kernels().find(|k| k.name == name)
    }
}
