//! The two dispatch tables of the layer: the copy of the table below us (other layers, then the
//! driver), through which every call of ours goes down, and our own table, which the loader
//! calls: the entries we hook are set, every other entry is NULL and passes straight through.
//!
//! It sees the hooks only as the function pointers it puts in our table.

use opencl_sys::cl_icd::cl_icd_dispatch;

use super::{enqueue, hooks, images};

/// Pointer-sized entries in a dispatch table of the headers we were built with.
pub const ENTRIES: usize = size_of::<cl_icd_dispatch>() / size_of::<usize>();

/// Copies the first `count` entries of the table below us; the rest of the copy stays NULL.
///
/// # Safety
/// `table` must point at `count` readable pointer-sized entries.
pub unsafe fn below(table: *const cl_icd_dispatch, count: usize) -> cl_icd_dispatch {
    // SAFETY: an all-zero table is all `None` (NULL function pointers).
    let mut copy: cl_icd_dispatch = unsafe { std::mem::zeroed() };
    let n = count.min(ENTRIES);
    // SAFETY: the caller guarantees `count` readable entries; we copy at most `ENTRIES` of them.
    unsafe {
        std::ptr::copy_nonoverlapping(table.cast::<usize>(), (&mut copy as *mut cl_icd_dispatch).cast::<usize>(), n)
    };
    copy
}

/// Our dispatch table: the entries we hook, everything else NULL (pass-through).
pub fn ours() -> cl_icd_dispatch {
    // SAFETY: an all-zero table is all `None`.
    let mut t: cl_icd_dispatch = unsafe { std::mem::zeroed() };
    t.clCreateProgramWithSource = Some(hooks::create_program_with_source);
    t.clCreateProgramWithIL = Some(hooks::create_program_with_il);
    t.clCreateProgramWithBinary = Some(hooks::create_program_with_binary);
    t.clBuildProgram = Some(hooks::build_program);
    t.clCompileProgram = Some(hooks::compile_program);
    t.clLinkProgram = Some(hooks::link_program);
    t.clCreateKernel = Some(hooks::create_kernel);
    t.clCreateKernelsInProgram = Some(hooks::create_kernels_in_program);
    t.clCloneKernel = Some(hooks::clone_kernel);
    t.clSetKernelArg = Some(hooks::set_kernel_arg);
    t.clCreateBuffer = Some(hooks::create_buffer);
    t.clCreateBufferWithProperties = Some(hooks::create_buffer_with_properties);
    t.clCreateSubBuffer = Some(hooks::create_sub_buffer);
    t.clCreateImage = Some(images::create_image);
    t.clCreateImageWithProperties = Some(images::create_image_with_properties);
    t.clCreateImage2D = Some(images::create_image_2d);
    t.clCreateImage3D = Some(images::create_image_3d);
    t.clCreateSampler = Some(images::create_sampler);
    t.clCreateSamplerWithProperties = Some(images::create_sampler_with_properties);
    t.clSVMAlloc = Some(hooks::svm_alloc);
    t.clSVMFree = Some(hooks::svm_free);
    t.clSetKernelArgSVMPointer = Some(hooks::set_kernel_arg_svm_pointer);
    t.clEnqueueNDRangeKernel = Some(enqueue::enqueue_ndrange_kernel);
    t.clEnqueueTask = Some(enqueue::enqueue_task);
    t
}
