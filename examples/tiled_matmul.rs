//! A correct tiled matrix multiply: C = A * B for 64x64 float matrices, in 16x16 tiles.
//!
//! Each work-group computes one 16x16 tile of C. For every step along the shared dimension it
//! copies a tile of A and a tile of B into local memory, waits at a barrier, accumulates, and
//! waits at a second barrier before the tiles are overwritten. The result is checked against a
//! CPU multiply; the program prints `matmul: ok`, or exits with status 1 on a mismatch.
//! clrace should report nothing: both barriers are there.
//!
//! Run: `cargo run --release --example tiled_matmul`

mod common;

use std::ffi::c_void;
use std::process::exit;
use std::ptr;

use cl3::types::{cl_int, cl_mem};
use cl3::{command_queue, context, event, kernel, memory, program};

use common::{
    build, cl, create_context, create_kernel, first_device, in_order_queue, launch, read_blocking, set_buffer_arg,
    set_value_arg,
};

const SOURCE: &str = r#"
#define TILE 16

kernel void matmul(global const float *a, global const float *b, global float *c, int n)
{
    local float a_tile[TILE][TILE];
    local float b_tile[TILE][TILE];
    int row = get_global_id(1), col = get_global_id(0);
    int ly = get_local_id(1), lx = get_local_id(0);
    float sum = 0.0f;
    for (int t = 0; t < n; t += TILE) {
        a_tile[ly][lx] = a[row * n + t + lx];
        b_tile[ly][lx] = b[(t + ly) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);     /* the tiles are complete */
        for (int k = 0; k < TILE; k++)
            sum += a_tile[ly][k] * b_tile[k][lx];
        barrier(CLK_LOCAL_MEM_FENCE);     /* everyone is done reading them */
    }
    c[row * n + col] = sum;
}
"#;

const N: usize = 64;
const TILE: usize = 16;

/// A buffer holding a copy of `data`.
fn input_buffer(context: cl3::types::cl_context, data: &[f32]) -> Result<cl_mem, String> {
    // SAFETY: COPY_HOST_PTR reads `data` (of exactly this size) during the call only.
    unsafe {
        memory::create_buffer(
            context,
            memory::CL_MEM_READ_ONLY | memory::CL_MEM_COPY_HOST_PTR,
            size_of_val(data),
            data.as_ptr() as *mut c_void,
        )
    }
    .map_err(cl("clCreateBuffer"))
}

fn run() -> Result<bool, String> {
    let device = first_device()?;
    let context = create_context(device)?;
    let queue = in_order_queue(context, device)?;
    let program = build(context, device, SOURCE)?;
    let kernel = create_kernel(program, c"matmul")?;

    // Small integer entries, so every product and sum is exact and the check can use `==`.
    let a: Vec<f32> = (0..N * N).map(|i| (i % 7) as f32 - 3.0).collect();
    let b: Vec<f32> = (0..N * N).map(|i| (i % 5) as f32 - 2.0).collect();
    let mut c = vec![0f32; N * N];

    let a_buf = input_buffer(context, &a)?;
    let b_buf = input_buffer(context, &b)?;
    // SAFETY: no host pointer.
    let c_buf =
        unsafe { memory::create_buffer(context, memory::CL_MEM_WRITE_ONLY, size_of_val(&c[..]), ptr::null_mut()) }
            .map_err(cl("clCreateBuffer"))?;

    let n = N as cl_int;
    set_buffer_arg(kernel, 0, &a_buf, "clSetKernelArg(0)")?;
    set_buffer_arg(kernel, 1, &b_buf, "clSetKernelArg(1)")?;
    set_buffer_arg(kernel, 2, &c_buf, "clSetKernelArg(2)")?;
    set_value_arg(kernel, 3, &n, "clSetKernelArg(3)")?;

    let launch = launch(queue, kernel, &[N, N], &[TILE, TILE])?;
    let read = read_blocking(queue, c_buf, &mut c)?;

    // The same product on the CPU, then the first element where the two differ, if any.
    let expected: Vec<f32> = (0..N * N).map(|i| (0..N).map(|k| a[i / N * N + k] * b[k * N + i % N]).sum()).collect();
    let mismatch = c.iter().zip(&expected).position(|(got, want)| got != want);
    if let Some(i) = mismatch {
        eprintln!("matmul: c[{}][{}] is {}, expected {}", i / N, i % N, c[i], expected[i]);
    }

    // SAFETY: every handle was created above and is released once.
    unsafe {
        event::release_event(launch).map_err(cl("clReleaseEvent"))?;
        event::release_event(read).map_err(cl("clReleaseEvent"))?;
        for buf in [a_buf, b_buf, c_buf] {
            memory::release_mem_object(buf).map_err(cl("clReleaseMemObject"))?;
        }
        kernel::release_kernel(kernel).map_err(cl("clReleaseKernel"))?;
        program::release_program(program).map_err(cl("clReleaseProgram"))?;
        command_queue::release_command_queue(queue).map_err(cl("clReleaseCommandQueue"))?;
        context::release_context(context).map_err(cl("clReleaseContext"))?;
    }
    Ok(mismatch.is_none())
}

fn main() {
    match run() {
        Ok(true) => println!("matmul: ok"),
        Ok(false) => exit(1),
        Err(message) => {
            eprintln!("matmul: {message}");
            exit(1);
        }
    }
}
