//! A race-free 256-bin histogram of bytes, built with atomics.
//!
//! Each work-group of 256 work-items clears its own 256 bins in local memory, counts its slice of
//! the input with `atomic_inc` on those local bins, then adds each bin to the global histogram
//! with one `atomic_add`. Barriers separate the three phases. The program checks that the bins
//! add up to the input size and match a CPU histogram, then prints the total. clrace should
//! report nothing: every shared update is atomic and the phases are ordered by barriers.
//!
//! Run: `cargo run --release --example histogram`

mod common;

use std::ffi::c_void;
use std::process::exit;

use cl3::types::cl_uint;
use cl3::{command_queue, context, event, kernel, memory, program};

use common::{
    build, cl, create_context, create_kernel, first_device, in_order_queue, launch, read_blocking, set_buffer_arg,
    set_value_arg,
};

const SOURCE: &str = r#"
kernel void histogram(global const uchar *data, uint per_item, global uint *bins)
{
    local uint local_bins[256];
    size_t lid = get_local_id(0);
    local_bins[lid] = 0;      /* one bin per work-item: the group size is 256 */
    barrier(CLK_LOCAL_MEM_FENCE);

    size_t start = get_global_id(0) * per_item;
    for (uint i = 0; i < per_item; i++)
        atomic_inc(&local_bins[data[start + i]]);
    barrier(CLK_LOCAL_MEM_FENCE);

    atomic_add(&bins[lid], local_bins[lid]);
}
"#;

const BINS: usize = 256;
const GROUPS: usize = 8;
const PER_ITEM: usize = 32;
const LEN: usize = GROUPS * BINS * PER_ITEM;

fn run() -> Result<bool, String> {
    let device = first_device()?;
    let context = create_context(device)?;
    let queue = in_order_queue(context, device)?;
    let program = build(context, device, SOURCE)?;
    let kernel = create_kernel(program, c"histogram")?;

    // Pseudo-random bytes from a fixed linear congruential generator: the same every run.
    let mut state: u32 = 12345;
    let data: Vec<u8> = (0..LEN)
        .map(|_| {
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (state >> 16) as u8
        })
        .collect();
    let zeros = [0 as cl_uint; BINS];
    let mut bins = [0 as cl_uint; BINS];

    // SAFETY: COPY_HOST_PTR reads `data` and `zeros` (of exactly these sizes) during the calls only.
    let (data_buf, bins_buf) = unsafe {
        let flags = memory::CL_MEM_COPY_HOST_PTR;
        let data_buf =
            memory::create_buffer(context, flags | memory::CL_MEM_READ_ONLY, LEN, data.as_ptr() as *mut c_void)
                .map_err(cl("clCreateBuffer(data)"))?;
        let bins_buf = memory::create_buffer(
            context,
            flags | memory::CL_MEM_READ_WRITE,
            size_of_val(&zeros),
            zeros.as_ptr() as *mut c_void,
        )
        .map_err(cl("clCreateBuffer(bins)"))?;
        (data_buf, bins_buf)
    };

    let per_item = PER_ITEM as cl_uint;
    set_buffer_arg(kernel, 0, &data_buf, "clSetKernelArg(0)")?;
    set_value_arg(kernel, 1, &per_item, "clSetKernelArg(1)")?;
    set_buffer_arg(kernel, 2, &bins_buf, "clSetKernelArg(2)")?;

    let launch = launch(queue, kernel, &[GROUPS * BINS], &[BINS])?;
    let read = read_blocking(queue, bins_buf, &mut bins)?;

    let mut expected = [0 as cl_uint; BINS];
    for &byte in &data {
        expected[byte as usize] += 1;
    }
    let total: u64 = bins.iter().map(|&n| u64::from(n)).sum();
    let ok = total == LEN as u64 && bins == expected;
    if ok {
        println!("histogram: {total} bytes counted in {BINS} bins, matches the CPU");
    } else {
        eprintln!("histogram: {total} bytes counted, expected {LEN}; the bins match the CPU: {}", bins == expected);
    }

    // SAFETY: every handle was created above and is released once.
    unsafe {
        event::release_event(launch).map_err(cl("clReleaseEvent"))?;
        event::release_event(read).map_err(cl("clReleaseEvent"))?;
        memory::release_mem_object(data_buf).map_err(cl("clReleaseMemObject"))?;
        memory::release_mem_object(bins_buf).map_err(cl("clReleaseMemObject"))?;
        kernel::release_kernel(kernel).map_err(cl("clReleaseKernel"))?;
        program::release_program(program).map_err(cl("clReleaseProgram"))?;
        command_queue::release_command_queue(queue).map_err(cl("clReleaseCommandQueue"))?;
        context::release_context(context).map_err(cl("clReleaseContext"))?;
    }
    Ok(ok)
}

fn main() {
    match run() {
        Ok(true) => {}
        Ok(false) => exit(1),
        Err(message) => {
            eprintln!("histogram: {message}");
            exit(1);
        }
    }
}
