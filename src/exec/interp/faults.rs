//! The findings and errors the interpreter's instructions make: cold, out of line, so that the
//! loop that calls them stays small. They read the running NDRange for names and nothing else.

use super::super::execution::{Execution, allocation_of};
use super::super::image;
use super::super::memory::split;
use super::super::{ExecError, Finding};
use crate::ir::{self, value::MAX_PRIVATE_BYTES};

#[cold]
pub(super) fn private_too_large(global_id: [u64; 3]) -> ExecError {
    ExecError::Memory(format!(
        "work-item {global_id:?} needs more than {} MiB of private memory",
        MAX_PRIVATE_BYTES >> 20
    ))
}

#[cold]
#[inline(never)]
pub(super) fn misaligned(
    exec: &Execution,
    addr: u64,
    size: u32,
    alignment: u32,
    access: &'static str,
    global_id: [u64; 3],
    loc: u32,
) -> Finding {
    let (space, allocation) = allocation_of(exec, addr);
    let offset = split(addr).2 as i64;
    Finding::Misaligned { access, space, allocation, offset, size, alignment, global_id, loc }
}

#[cold]
#[inline(never)]
pub(super) fn array_index(
    exec: &Execution,
    element: u64,
    index: i64,
    extent: u32,
    global_id: [u64; 3],
    loc: u32,
) -> Finding {
    let (space, allocation) = allocation_of(exec, element);
    let offset = split(element).2 as i64;
    Finding::ArrayIndex { space, allocation, offset, index, extent: extent as u64, global_id, loc }
}

/// A failed assertion of one work-item; `message` is the assertion's bytes as the kernel holds
/// them (not necessarily UTF-8).
#[cold]
#[inline(never)]
pub(super) fn assertion_failed(message: Option<Vec<u8>>, global_id: [u64; 3], loc: u32) -> Finding {
    let message = message.map(|m| String::from_utf8_lossy(&m).into_owned());
    Finding::AssertionFailed { message, global_id, loc }
}

pub(super) fn not_an_image(module: &ir::Module, loc: u32) -> ExecError {
    ExecError::Fault(format!("an image operation at {} was given something that is not an image", module.location(loc)))
}

pub(super) fn image_oob(
    exec: &Execution,
    handle: u64,
    desc: &image::ImageDesc,
    store: bool,
    outside: image::OutOfRange,
    global_id: [u64; 3],
    loc: u32,
) -> Finding {
    let (_, index, _) = split(handle);
    let image = exec.globals.names.get(index as usize).cloned().unwrap_or_default();
    Finding::ImageOutOfBounds { store, image, coord: outside.coord, extent: desc.query_size(), global_id, loc }
}

#[cold]
pub(super) fn unreachable(module: &ir::Module, loc: u32) -> ExecError {
    ExecError::Fault(format!("reached unreachable code at {}", module.location(loc)))
}

#[cold]
pub(super) fn unsupported(module: &ir::Module, what: u32, loc: u32) -> ExecError {
    ExecError::Unsupported(format!("{} at {}", module.unsupported[what as usize], module.location(loc)))
}
