//! A work-group tree reduction in local memory that forgets the barrier inside its loop.
//!
//! Four work-groups of 64 work-items each sum their slice of `0, 1, 2, ...` and print one partial
//! sum per group. Without a barrier between the steps of the loop, a work-item may read
//! `scratch[lid + s]` while its owner is still adding to it, so the sums depend on how the driver
//! schedules work-items. clrace should report a data race on `scratch` (local memory) between the
//! read and the write of `scratch[lid] += scratch[lid + s]`.
//!
//! Run: `cargo run --release --example racy_reduction`

use std::ffi::c_void;
use std::mem::size_of;
use std::process::exit;
use std::ptr;

use cl3::error_codes::error_text;
use cl3::types::{CL_BLOCKING, cl_device_id, cl_int, cl_mem};
use cl3::{command_queue, context, device, event, kernel, memory, platform, program};

const SOURCE: &str = r#"
kernel void racy_reduce(global const float *in, global float *partial, local float *scratch)
{
    size_t lid = get_local_id(0);
    scratch[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = get_local_size(0) / 2; s > 0; s >>= 1) {
        if (lid < s)
            scratch[lid] += scratch[lid + s];
        /* BUG: a barrier(CLK_LOCAL_MEM_FENCE) belongs here. */
    }
    if (lid == 0)
        partial[get_group_id(0)] = scratch[0];
}
"#;

const GROUPS: usize = 4;
const GROUP_SIZE: usize = 64;

/// Turns an OpenCL error code into a message naming the call that failed.
fn cl(what: &'static str) -> impl Fn(cl_int) -> String {
    move |code| format!("{what} failed: {}", error_text(code))
}

/// The first GPU or CPU device of the first platform.
fn first_device() -> Result<cl_device_id, String> {
    let platforms = platform::get_platform_ids().map_err(cl("clGetPlatformIDs"))?;
    let platform = *platforms.first().ok_or("no OpenCL platform")?;
    let devices = device::get_device_ids(platform, device::CL_DEVICE_TYPE_GPU | device::CL_DEVICE_TYPE_CPU)
        .map_err(cl("clGetDeviceIDs"))?;
    Ok(*devices.first().ok_or("no OpenCL device")?)
}

fn run() -> Result<(), String> {
    let device = first_device()?;
    let context =
        context::create_context(&[device], ptr::null(), None, ptr::null_mut()).map_err(cl("clCreateContext"))?;
    // SAFETY: the device belongs to the context; no properties.
    let queue = unsafe { command_queue::create_command_queue_with_properties(context, device, ptr::null()) }
        .map_err(cl("clCreateCommandQueueWithProperties"))?;

    let program = program::create_program_with_source(context, &[SOURCE]).map_err(cl("clCreateProgramWithSource"))?;
    if let Err(code) = program::build_program(program, &[device], c"", None, ptr::null_mut()) {
        let log: String = program::get_program_build_info(program, device, program::CL_PROGRAM_BUILD_LOG)
            .map(Into::into)
            .unwrap_or_default();
        return Err(format!("clBuildProgram failed: {}\n{log}", error_text(code)));
    }
    let kernel = kernel::create_kernel(program, c"racy_reduce").map_err(cl("clCreateKernel"))?;

    // The input 0, 1, 2, ...: small integers, so every sum is exact in a float.
    let input: Vec<f32> = (0..GROUPS * GROUP_SIZE).map(|i| i as f32).collect();
    let mut partial = vec![0f32; GROUPS];

    // SAFETY: COPY_HOST_PTR reads `input` (of exactly this size) during the call only.
    let in_buf = unsafe {
        memory::create_buffer(
            context,
            memory::CL_MEM_READ_ONLY | memory::CL_MEM_COPY_HOST_PTR,
            size_of::<f32>() * input.len(),
            input.as_ptr() as *mut c_void,
        )
    }
    .map_err(cl("clCreateBuffer(in)"))?;
    // SAFETY: no host pointer.
    let out_buf = unsafe {
        memory::create_buffer(context, memory::CL_MEM_WRITE_ONLY, size_of::<f32>() * GROUPS, ptr::null_mut())
    }
    .map_err(cl("clCreateBuffer(partial)"))?;

    // SAFETY: each value points to an argument of the given size; a null value allocates local memory.
    unsafe {
        kernel::set_kernel_arg(kernel, 0, size_of::<cl_mem>(), &in_buf as *const cl_mem as *const c_void)
            .map_err(cl("clSetKernelArg(0)"))?;
        kernel::set_kernel_arg(kernel, 1, size_of::<cl_mem>(), &out_buf as *const cl_mem as *const c_void)
            .map_err(cl("clSetKernelArg(1)"))?;
        kernel::set_kernel_arg(kernel, 2, size_of::<f32>() * GROUP_SIZE, ptr::null())
            .map_err(cl("clSetKernelArg(2)"))?;
    }

    let global = [GROUPS * GROUP_SIZE];
    let local = [GROUP_SIZE];
    // SAFETY: one-dimensional sizes; the arrays outlive the call.
    let launch = unsafe {
        command_queue::enqueue_nd_range_kernel(
            queue,
            kernel,
            1,
            ptr::null(),
            global.as_ptr(),
            local.as_ptr(),
            0,
            ptr::null(),
        )
    }
    .map_err(cl("clEnqueueNDRangeKernel"))?;
    // SAFETY: a blocking read into `partial`, which holds exactly this many bytes.
    let read = unsafe {
        command_queue::enqueue_read_buffer(
            queue,
            out_buf,
            CL_BLOCKING,
            0,
            size_of::<f32>() * GROUPS,
            partial.as_mut_ptr() as *mut c_void,
            0,
            ptr::null(),
        )
    }
    .map_err(cl("clEnqueueReadBuffer"))?;

    for (group, sum) in partial.iter().enumerate() {
        let expected: f32 = input[group * GROUP_SIZE..(group + 1) * GROUP_SIZE].iter().sum();
        println!("group {group}: partial sum {sum} (a correct reduction gives {expected})");
    }

    // SAFETY: every handle was created above and is released once.
    unsafe {
        event::release_event(launch).map_err(cl("clReleaseEvent"))?;
        event::release_event(read).map_err(cl("clReleaseEvent"))?;
        memory::release_mem_object(in_buf).map_err(cl("clReleaseMemObject"))?;
        memory::release_mem_object(out_buf).map_err(cl("clReleaseMemObject"))?;
        kernel::release_kernel(kernel).map_err(cl("clReleaseKernel"))?;
        program::release_program(program).map_err(cl("clReleaseProgram"))?;
        command_queue::release_command_queue(queue).map_err(cl("clReleaseCommandQueue"))?;
        context::release_context(context).map_err(cl("clReleaseContext"))?;
    }
    Ok(())
}

fn main() {
    if let Err(message) = run() {
        eprintln!("racy_reduction: {message}");
        exit(1);
    }
}
