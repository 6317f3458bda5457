//! A race-free 256-bin histogram of bytes, built with atomics.
//!
//! Each work-group of 256 work-items clears its own 256 bins in local memory, counts its slice of
//! the input with `atomic_inc` on those local bins, then adds each bin to the global histogram
//! with one `atomic_add`. Barriers separate the three phases. The program checks that the bins
//! add up to the input size and match a CPU histogram, then prints the total. clrace should
//! report nothing: every shared update is atomic and the phases are ordered by barriers.
//!
//! Run: `cargo run --release --example histogram`

use std::ffi::c_void;
use std::mem::size_of;
use std::process::exit;
use std::ptr;

use cl3::error_codes::error_text;
use cl3::types::{CL_BLOCKING, cl_device_id, cl_int, cl_mem, cl_uint};
use cl3::{command_queue, context, device, event, kernel, memory, platform, program};

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

fn run() -> Result<bool, String> {
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
    let kernel = kernel::create_kernel(program, c"histogram").map_err(cl("clCreateKernel"))?;

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
    // SAFETY: each value points to an argument of the given size.
    unsafe {
        kernel::set_kernel_arg(kernel, 0, size_of::<cl_mem>(), &data_buf as *const cl_mem as *const c_void)
            .map_err(cl("clSetKernelArg(0)"))?;
        kernel::set_kernel_arg(kernel, 1, size_of::<cl_uint>(), &per_item as *const cl_uint as *const c_void)
            .map_err(cl("clSetKernelArg(1)"))?;
        kernel::set_kernel_arg(kernel, 2, size_of::<cl_mem>(), &bins_buf as *const cl_mem as *const c_void)
            .map_err(cl("clSetKernelArg(2)"))?;
    }

    let global = [GROUPS * BINS];
    let local = [BINS];
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
    // SAFETY: a blocking read into `bins`, which holds exactly this many bytes.
    let read = unsafe {
        command_queue::enqueue_read_buffer(
            queue,
            bins_buf,
            CL_BLOCKING,
            0,
            size_of_val(&bins),
            bins.as_mut_ptr() as *mut c_void,
            0,
            ptr::null(),
        )
    }
    .map_err(cl("clEnqueueReadBuffer"))?;

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
