//! Host-side steps every example application repeats: error messages that name the failing
//! call, the choice of device, a context and queue, a build that shows its log, setting
//! arguments, an NDRange launch and a blocking read. Each example keeps the OpenCL calls its
//! story is about (user events, out-of-order queues, threads) in its own file.

// Not every example uses every helper.
#![allow(dead_code)]

use std::ffi::{CStr, c_void};
use std::ptr;

use cl3::error_codes::error_text;
use cl3::types::{CL_BLOCKING, cl_command_queue, cl_context, cl_device_id, cl_event, cl_int, cl_kernel, cl_mem};
use cl3::{command_queue, context, device, kernel, platform, program};

/// Turns an OpenCL error code into a message naming the call that failed.
pub fn cl(what: &'static str) -> impl Fn(cl_int) -> String {
    move |code| format!("{what} failed: {}", error_text(code))
}

/// The first GPU or CPU device of the first platform.
pub fn first_device() -> Result<cl_device_id, String> {
    let platforms = platform::get_platform_ids().map_err(cl("clGetPlatformIDs"))?;
    let platform = *platforms.first().ok_or("no OpenCL platform")?;
    let devices = device::get_device_ids(platform, device::CL_DEVICE_TYPE_GPU | device::CL_DEVICE_TYPE_CPU)
        .map_err(cl("clGetDeviceIDs"))?;
    Ok(*devices.first().ok_or("no OpenCL device")?)
}

/// A context on `device`.
pub fn create_context(device: cl_device_id) -> Result<cl_context, String> {
    context::create_context(&[device], ptr::null(), None, ptr::null_mut()).map_err(cl("clCreateContext"))
}

/// An in-order queue on `device`.
pub fn in_order_queue(context: cl_context, device: cl_device_id) -> Result<cl_command_queue, String> {
    // SAFETY: the device belongs to the context; no properties.
    unsafe { command_queue::create_command_queue_with_properties(context, device, ptr::null()) }
        .map_err(cl("clCreateCommandQueueWithProperties"))
}

/// `source` built for `device`; a failed build's error carries the build log.
pub fn build(context: cl_context, device: cl_device_id, source: &str) -> Result<cl3::types::cl_program, String> {
    let program = program::create_program_with_source(context, &[source]).map_err(cl("clCreateProgramWithSource"))?;
    if let Err(code) = program::build_program(program, &[device], c"", None, ptr::null_mut()) {
        let log: String = program::get_program_build_info(program, device, program::CL_PROGRAM_BUILD_LOG)
            .map(Into::into)
            .unwrap_or_default();
        return Err(format!("clBuildProgram failed: {}\n{log}", error_text(code)));
    }
    Ok(program)
}

/// Sets argument `index` of `kernel` to a buffer.
pub fn set_buffer_arg(kernel: cl_kernel, index: u32, buffer: &cl_mem, what: &'static str) -> Result<(), String> {
    // SAFETY: the value points to one buffer handle, the argument's size.
    unsafe { kernel::set_kernel_arg(kernel, index, size_of::<cl_mem>(), buffer as *const cl_mem as *const c_void) }
        .map_err(cl(what))
}

/// Sets argument `index` of `kernel` to a by-value argument (a scalar).
pub fn set_value_arg<T: Copy>(kernel: cl_kernel, index: u32, value: &T, what: &'static str) -> Result<(), String> {
    // SAFETY: the value points to `size_of::<T>()` readable bytes.
    unsafe { kernel::set_kernel_arg(kernel, index, size_of::<T>(), value as *const T as *const c_void) }
        .map_err(cl(what))
}

/// Sets argument `index` of `kernel` to a `__local` allocation of `bytes`.
pub fn set_local_arg(kernel: cl_kernel, index: u32, bytes: usize, what: &'static str) -> Result<(), String> {
    // SAFETY: a null value with a size allocates local memory.
    unsafe { kernel::set_kernel_arg(kernel, index, bytes, ptr::null()) }.map_err(cl(what))
}

/// Launches `kernel` over `global` work-items in groups of `local` (one entry per dimension),
/// with no wait list.
pub fn launch(
    queue: cl_command_queue,
    kernel: cl_kernel,
    global: &[usize],
    local: &[usize],
) -> Result<cl_event, String> {
    assert_eq!(global.len(), local.len(), "one local size per dimension");
    // SAFETY: both arrays hold `global.len()` sizes and outlive the call.
    unsafe {
        command_queue::enqueue_nd_range_kernel(
            queue,
            kernel,
            global.len() as u32,
            ptr::null(),
            global.as_ptr(),
            local.as_ptr(),
            0,
            ptr::null(),
        )
    }
    .map_err(cl("clEnqueueNDRangeKernel"))
}

/// Reads the start of `buffer` into `out`, blocking until it is there.
pub fn read_blocking<T: Copy>(queue: cl_command_queue, buffer: cl_mem, out: &mut [T]) -> Result<cl_event, String> {
    // SAFETY: a blocking read of exactly `out`'s bytes into `out`.
    unsafe {
        command_queue::enqueue_read_buffer(
            queue,
            buffer,
            CL_BLOCKING,
            0,
            size_of_val(out),
            out.as_mut_ptr() as *mut c_void,
            0,
            ptr::null(),
        )
    }
    .map_err(cl("clEnqueueReadBuffer"))
}

/// A kernel of `program`.
pub fn create_kernel(program: cl3::types::cl_program, name: &CStr) -> Result<cl_kernel, String> {
    kernel::create_kernel(program, name).map_err(cl("clCreateKernel"))
}
