//! A work-group tree reduction in local memory that forgets the barrier inside its loop.
//!
//! Four work-groups of 64 work-items each sum their slice of `0, 1, 2, ...` and print one partial
//! sum per group. Without a barrier between the steps of the loop, a work-item may read
//! `scratch[lid + s]` while its owner is still adding to it, so the sums depend on how the driver
//! schedules work-items. clrace should report a data race on `scratch` (local memory) between the
//! read and the write of `scratch[lid] += scratch[lid + s]`.
//!
//! Run: `cargo run --release --example racy_reduction`

mod common;

use std::ffi::c_void;
use std::mem::size_of;
use std::process::exit;
use std::ptr;

use cl3::{command_queue, context, event, kernel, memory, program};

use common::{
    build, cl, create_context, create_kernel, first_device, in_order_queue, launch, read_blocking, set_buffer_arg,
    set_local_arg,
};

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

fn run() -> Result<(), String> {
    let device = first_device()?;
    let context = create_context(device)?;
    let queue = in_order_queue(context, device)?;
    let program = build(context, device, SOURCE)?;
    let kernel = create_kernel(program, c"racy_reduce")?;

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

    set_buffer_arg(kernel, 0, &in_buf, "clSetKernelArg(0)")?;
    set_buffer_arg(kernel, 1, &out_buf, "clSetKernelArg(1)")?;
    set_local_arg(kernel, 2, size_of::<f32>() * GROUP_SIZE, "clSetKernelArg(2)")?;

    let launch = launch(queue, kernel, &[GROUPS * GROUP_SIZE], &[GROUP_SIZE])?;
    let read = read_blocking(queue, out_buf, &mut partial)?;

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
