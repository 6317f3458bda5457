//! A kernel's reflected signature: its name, its arguments (address space, pointer or value,
//! size, image or sampler) and its required work-group size, as the lowering reads them from the
//! SPIR-V module, kept with the IR's kernels, and handed to callers unchanged.
//!
//! Plain data: it sees nothing of how a module is lowered, run or built.

use serde::{Deserialize, Serialize};

/// The address space of a kernel argument, as OpenCL names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum AddressSpace {
    Private,
    Global,
    Constant,
    Local,
}

/// One reflected kernel argument.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Handle {
    Image,
    Sampler,
}

/// A kernel's reflected signature.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KernelInfo {
    pub name: String,
    pub args: Vec<KernelArg>,
    /// `reqd_work_group_size`, when the kernel declares it.
    pub required_local_size: Option<[u64; 3]>,
}
