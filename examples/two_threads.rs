//! Two host threads sharing one context and one out-of-order command queue.
//!
//! Both threads build their own kernel object from the same program (kernel arguments are
//! per-object state, so threads must not share one) and enqueue on the shared queue:
//! write the input -> run the kernel -> read the output, each step waiting on the event of the
//! one before, since an out-of-order queue does not order them by itself. If the device refuses
//! an out-of-order queue, the program falls back to an in-order one and says so.
//!
//! Each kernel adds to every value its right-hand neighbour within the work-group.
//! `neighbour_sum_racy` updates the neighbour's slot in local memory while the neighbour may
//! still read it: clrace should report a data race on `tile` for that launch only.
//! `neighbour_sum` reads first, waits at a barrier, then writes: nothing to report.
//!
//! Run: `cargo run --release --example two_threads`

mod common;

use std::ffi::{CStr, c_void};
use std::mem::size_of;
use std::process::exit;
use std::ptr;
use std::thread;

use cl3::error_codes::error_text;
use cl3::types::{CL_NON_BLOCKING, cl_command_queue, cl_context, cl_int, cl_program, cl_queue_properties};
use cl3::{command_queue, context, event, kernel, memory, program};

use common::{build, cl, create_context, create_kernel, first_device, in_order_queue, set_buffer_arg, set_local_arg};

const SOURCE: &str = r#"
kernel void neighbour_sum_racy(global const int *in, global int *out, local int *tile)
{
    size_t lid = get_local_id(0), n = get_local_size(0);
    tile[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    tile[lid] += tile[(lid + 1) % n];   /* BUG: the neighbour may have updated its slot already */
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tile[lid];
}

kernel void neighbour_sum(global const int *in, global int *out, local int *tile)
{
    size_t lid = get_local_id(0), n = get_local_size(0);
    tile[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    int right = tile[(lid + 1) % n];
    barrier(CLK_LOCAL_MEM_FENCE);       /* every read is done before any write */
    tile[lid] += right;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tile[lid];
}
"#;

const GROUPS: usize = 2;
const GROUP_SIZE: usize = 64;
const LEN: usize = GROUPS * GROUP_SIZE;

/// The handles both threads use. OpenCL objects may be used from any thread (the API is
/// thread-safe), but Rust cannot know that about raw pointers, hence the `unsafe impl`s.
struct Shared {
    context: cl_context,
    queue: cl_command_queue,
    program: cl_program,
}
// SAFETY: OpenCL handles may be passed to and used from any thread.
unsafe impl Send for Shared {}
// SAFETY: as above; we only pass the handles to OpenCL calls.
unsafe impl Sync for Shared {}

/// What one thread does: its own kernel object and buffers, then write -> kernel -> read on the
/// shared queue, chained with events. Returns the output.
fn run_kernel(shared: &Shared, name: &CStr, input: &[cl_int]) -> Result<Vec<cl_int>, String> {
    let kernel = create_kernel(shared.program, name)?;
    let bytes = size_of_val(input);
    let mut output = vec![0 as cl_int; input.len()];
    // SAFETY: no host pointers.
    let (in_buf, out_buf) = unsafe {
        (
            memory::create_buffer(shared.context, memory::CL_MEM_READ_ONLY, bytes, ptr::null_mut())
                .map_err(cl("clCreateBuffer(in)"))?,
            memory::create_buffer(shared.context, memory::CL_MEM_WRITE_ONLY, bytes, ptr::null_mut())
                .map_err(cl("clCreateBuffer(out)"))?,
        )
    };
    set_buffer_arg(kernel, 0, &in_buf, "clSetKernelArg(0)")?;
    set_buffer_arg(kernel, 1, &out_buf, "clSetKernelArg(1)")?;
    set_local_arg(kernel, 2, size_of::<cl_int>() * GROUP_SIZE, "clSetKernelArg(2)")?;

    let global = [input.len()];
    let local = [GROUP_SIZE];
    // SAFETY: `input` and `output` stay alive and untouched until `read` completes, which we wait
    // for below; each command waits on the event of the one before.
    let (write, launch, read) = unsafe {
        let write = command_queue::enqueue_write_buffer(
            shared.queue,
            in_buf,
            CL_NON_BLOCKING,
            0,
            bytes,
            input.as_ptr() as *const c_void,
            0,
            ptr::null(),
        )
        .map_err(cl("clEnqueueWriteBuffer"))?;
        let launch = command_queue::enqueue_nd_range_kernel(
            shared.queue,
            kernel,
            1,
            ptr::null(),
            global.as_ptr(),
            local.as_ptr(),
            1,
            &write,
        )
        .map_err(cl("clEnqueueNDRangeKernel"))?;
        let read = command_queue::enqueue_read_buffer(
            shared.queue,
            out_buf,
            CL_NON_BLOCKING,
            0,
            bytes,
            output.as_mut_ptr() as *mut c_void,
            1,
            &launch,
        )
        .map_err(cl("clEnqueueReadBuffer"))?;
        (write, launch, read)
    };
    event::wait_for_events(&[read]).map_err(cl("clWaitForEvents"))?;

    // SAFETY: every handle was created above and is released once.
    unsafe {
        for e in [write, launch, read] {
            event::release_event(e).map_err(cl("clReleaseEvent"))?;
        }
        memory::release_mem_object(in_buf).map_err(cl("clReleaseMemObject"))?;
        memory::release_mem_object(out_buf).map_err(cl("clReleaseMemObject"))?;
        kernel::release_kernel(kernel).map_err(cl("clReleaseKernel"))?;
    }
    Ok(output)
}

fn run() -> Result<bool, String> {
    let device = first_device()?;
    let context = create_context(device)?;

    let out_of_order: [cl_queue_properties; 3] = [
        command_queue::CL_QUEUE_PROPERTIES as cl_queue_properties,
        command_queue::CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
        0,
    ];
    // SAFETY: the device belongs to the context; the property list ends with 0.
    let queue =
        match unsafe { command_queue::create_command_queue_with_properties(context, device, out_of_order.as_ptr()) } {
            Ok(queue) => {
                println!("queue: out-of-order");
                queue
            }
            Err(code) => {
                println!("queue: in-order (the device refused an out-of-order queue: {})", error_text(code));
                in_order_queue(context, device)?
            }
        };

    let program = build(context, device, SOURCE)?;

    let input: Vec<cl_int> = (0..LEN as cl_int).collect();
    let shared = Shared { context, queue, program };
    let kernels = [c"neighbour_sum_racy", c"neighbour_sum"];
    // One thread per kernel, both enqueueing on the same queue at once.
    let results: Vec<Result<Vec<cl_int>, String>> = thread::scope(|scope| {
        let threads: Vec<_> = kernels.iter().map(|name| scope.spawn(|| run_kernel(&shared, name, &input))).collect();
        threads.into_iter().map(|t| t.join().unwrap_or_else(|_| Err("the thread panicked".into()))).collect()
    });

    // What a correct kernel computes: each value plus its right-hand neighbour in the group.
    let expected: Vec<cl_int> = (0..LEN)
        .map(|i| {
            let group_start = i / GROUP_SIZE * GROUP_SIZE;
            input[i] + input[group_start + (i + 1) % GROUP_SIZE]
        })
        .collect();
    let mut correct_ok = true;
    for (name, result) in kernels.iter().zip(results) {
        let name = name.to_str().unwrap();
        let output = result.map_err(|e| format!("{name}: {e}"))?;
        let differ = output.iter().zip(&expected).filter(|(got, want)| got != want).count();
        let sum: i64 = output.iter().map(|&v| i64::from(v)).sum();
        println!("{name}: sum {sum}, {differ} of {LEN} values differ from the CPU result");
        if name == "neighbour_sum" && differ != 0 {
            correct_ok = false;
        }
    }

    // SAFETY: every handle was created above and is released once.
    unsafe {
        program::release_program(program).map_err(cl("clReleaseProgram"))?;
        command_queue::release_command_queue(queue).map_err(cl("clReleaseCommandQueue"))?;
        context::release_context(context).map_err(cl("clReleaseContext"))?;
    }
    Ok(correct_ok)
}

fn main() {
    match run() {
        Ok(true) => {}
        Ok(false) => {
            eprintln!("two_threads: the race-free kernel gave a wrong result");
            exit(1);
        }
        Err(message) => {
            eprintln!("two_threads: {message}");
            exit(1);
        }
    }
}
