//! A launch gated on a user event: the host decides when the device may start.
//!
//! The program creates a user event, enqueues (without blocking) a buffer write that waits on it
//! and a kernel that waits on the write, checks that the kernel has not run, sleeps a moment,
//! then sets the user event to `CL_COMPLETE`. Only then can the write and the kernel run; the
//! program waits for the kernel, reads the result back and checks it. The kernel is race-free
//! (each work-item touches only its own element): clrace should report nothing, and a layer
//! must let the gated launch through without deadlocking.
//!
//! Run: `cargo run --release --example user_event`

mod common;

use std::ffi::c_void;
use std::process::exit;
use std::ptr;
use std::thread;
use std::time::Duration;

use cl3::types::{CL_NON_BLOCKING, cl_event, cl_int};
use cl3::{command_queue, context, event, kernel, memory, program};

use common::{build, cl, create_context, create_kernel, first_device, in_order_queue, read_blocking, set_buffer_arg};

const SOURCE: &str = r#"
kernel void scale(global const int *in, global int *out)
{
    size_t i = get_global_id(0);
    out[i] = 2 * in[i] + 1;
}
"#;

const LEN: usize = 1024;

/// Whether the command behind `e` has finished.
fn kernel_done(e: cl_event) -> Result<bool, String> {
    let status: cl_int =
        event::get_event_info(e, event::CL_EVENT_COMMAND_EXECUTION_STATUS).map_err(cl("clGetEventInfo"))?.into();
    Ok(status == event::CL_COMPLETE)
}

fn run() -> Result<bool, String> {
    let device = first_device()?;
    let context = create_context(device)?;
    let queue = in_order_queue(context, device)?;
    let program = build(context, device, SOURCE)?;
    let kernel = create_kernel(program, c"scale")?;

    let input: Vec<cl_int> = (0..LEN as cl_int).collect();
    let mut output = vec![0 as cl_int; LEN];
    let bytes = size_of_val(&input[..]);
    // SAFETY: no host pointers.
    let (in_buf, out_buf) = unsafe {
        (
            memory::create_buffer(context, memory::CL_MEM_READ_ONLY, bytes, ptr::null_mut())
                .map_err(cl("clCreateBuffer(in)"))?,
            memory::create_buffer(context, memory::CL_MEM_WRITE_ONLY, bytes, ptr::null_mut())
                .map_err(cl("clCreateBuffer(out)"))?,
        )
    };
    set_buffer_arg(kernel, 0, &in_buf, "clSetKernelArg(0)")?;
    set_buffer_arg(kernel, 1, &out_buf, "clSetKernelArg(1)")?;

    // The gate: nothing below can start until the host completes this event.
    let gate = event::create_user_event(context).map_err(cl("clCreateUserEvent"))?;
    let global = [LEN];
    // SAFETY: `input` stays alive and unchanged until the write completes (we wait for the kernel,
    // which waits for the write); the size array outlives the call.
    let (write, launch) = unsafe {
        let write = command_queue::enqueue_write_buffer(
            queue,
            in_buf,
            CL_NON_BLOCKING,
            0,
            bytes,
            input.as_ptr() as *const c_void,
            1,
            &gate,
        )
        .map_err(cl("clEnqueueWriteBuffer"))?;
        let launch = command_queue::enqueue_nd_range_kernel(
            queue,
            kernel,
            1,
            ptr::null(),
            global.as_ptr(),
            ptr::null(),
            1,
            &write,
        )
        .map_err(cl("clEnqueueNDRangeKernel"))?;
        (write, launch)
    };
    command_queue::flush(queue).map_err(cl("clFlush"))?;

    thread::sleep(Duration::from_millis(100));
    let ran_early = kernel_done(launch)?;
    println!("before the gate opens, the kernel has run: {ran_early}");
    if ran_early {
        eprintln!("user_event: the kernel ran although its user event was not complete");
    }

    event::set_user_event_status(gate, event::CL_COMPLETE).map_err(cl("clSetUserEventStatus"))?;
    event::wait_for_events(&[launch]).map_err(cl("clWaitForEvents"))?;
    println!("after the gate opens, the kernel has run: {}", kernel_done(launch)?);

    let read = read_blocking(queue, out_buf, &mut output)?;

    let mismatch = (0..LEN).find(|&i| output[i] != 2 * input[i] + 1);
    match mismatch {
        None => println!("user_event: ok, out[0..4] = {:?}, out[{}] = {}", &output[..4], LEN - 1, output[LEN - 1]),
        Some(i) => eprintln!("user_event: out[{i}] is {}, expected {}", output[i], 2 * input[i] + 1),
    }

    // SAFETY: every handle was created above and is released once.
    unsafe {
        for e in [gate, write, launch, read] {
            event::release_event(e).map_err(cl("clReleaseEvent"))?;
        }
        memory::release_mem_object(in_buf).map_err(cl("clReleaseMemObject"))?;
        memory::release_mem_object(out_buf).map_err(cl("clReleaseMemObject"))?;
        kernel::release_kernel(kernel).map_err(cl("clReleaseKernel"))?;
        program::release_program(program).map_err(cl("clReleaseProgram"))?;
        command_queue::release_command_queue(queue).map_err(cl("clReleaseCommandQueue"))?;
        context::release_context(context).map_err(cl("clReleaseContext"))?;
    }
    Ok(!ran_early && mismatch.is_none())
}

fn main() {
    match run() {
        Ok(true) => {}
        Ok(false) => exit(1),
        Err(message) => {
            eprintln!("user_event: {message}");
            exit(1);
        }
    }
}
