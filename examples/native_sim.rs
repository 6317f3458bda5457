//! Runs the launch of a `.sim` launch file natively, on the first OpenCL device of the first
//! platform (pocl on our machines), and reports the best kernel time of several runs as the
//! device's profiling events measure it (`CL_PROFILING_COMMAND_START` to `END`): the native
//! column of `ci/bench`.
//!
//! The launch file is read by clrace's own reader (`clrace::launch`), against the kernel
//! signature that clrace's compiler pipeline reflects, so the arguments, sizes and initial
//! contents are exactly those `clrace check` runs. Every run starts from those contents (the
//! buffers are written again before each, untimed), so with `--dump` the dumps printed on
//! stdout are those of one run, in the format of `clrace check` and `oclgrind-kernel`, and can
//! be compared with theirs byte for byte.
//!
//! What it cannot see: anything the device does outside the kernel (buffer transfers, the
//! build) is not in the time. Image and sampler arguments are refused: the benchmark kernels
//! have none, and packing images is the differential tests' business.
//!
//! Usage: `native_sim [--reps N] [--dump] FILE.sim`; the time goes to stderr as
//! `native_sim: KERNEL on DEVICE: best_ms=T runs=N`.

mod common;

use std::ffi::{CString, c_void};
use std::path::PathBuf;
use std::process::ExitCode;
use std::ptr;

use cl3::error_codes::error_text;
use cl3::types::{
    CL_BLOCKING, cl_buffer_region, cl_command_queue, cl_context, cl_device_id, cl_kernel, cl_mem, cl_program,
    cl_queue_properties,
};
use cl3::{command_queue, device, event, kernel, memory, program};
use clrace::ArgValue;
use clrace::launch::{self, LaunchData};

use common::{cl, create_context, first_device};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("native_sim: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The command line.
struct Options {
    file: PathBuf,
    reps: u32,
    dump: bool,
}

fn parse_options() -> Result<Options, String> {
    const USAGE: &str = "usage: native_sim [--reps N] [--dump] FILE.sim";
    let mut args = std::env::args().skip(1);
    let (mut file, mut reps, mut dump) = (None, 3, false);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--dump" => dump = true,
            "--reps" => {
                let value = args.next().ok_or(USAGE)?;
                reps = value.parse().ok().filter(|&n| n > 0).ok_or_else(|| format!("--reps {value}: not a count"))?;
            }
            _ if arg.starts_with('-') || file.is_some() => return Err(USAGE.into()),
            _ => file = Some(PathBuf::from(arg)),
        }
    }
    Ok(Options { file: file.ok_or(USAGE)?, reps, dump })
}

fn run() -> Result<(), String> {
    let options = parse_options()?;
    let file = &options.file;
    let text = launch::read_file(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let header = launch::parse_header(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    let program_path = launch::resolve_program(&header.program, file)
        .ok_or_else(|| format!("{}: program file '{}' not found", file.display(), header.program))?;
    let source =
        launch::read_file(&program_path).map_err(|e| format!("cannot read {}: {e}", program_path.display()))?;
    let build_options = header.build_options.clone().unwrap_or_default();
    let reflected = clrace::Program::from_source(&source, &program_path, &build_options)
        .map_err(|e| format!("{}: {e}", program_path.display()))?;
    let info = reflected
        .kernel(&header.kernel)
        .ok_or_else(|| format!("no kernel named '{}' in {}", header.kernel, program_path.display()))?;
    let data = launch::parse_args(&text, &header, info, 1).map_err(|e| format!("{}: {e}", file.display()))?;

    let device = first_device()?;
    let device_name: String =
        device::get_device_info(device, device::CL_DEVICE_NAME).map_err(cl("clGetDeviceInfo"))?.into();
    let mut native = Native::new(device, &source, &build_options, &header.kernel)?;
    native.bind(&data)?;
    let mut best_ns = u64::MAX;
    for rep in 0..options.reps {
        if rep > 0 {
            native.restore(&data.buffers)?;
        }
        best_ns = best_ns.min(native.launch(&data)?);
    }
    if options.dump {
        let buffers = native.read_back(&data.buffers)?;
        print!("{}", launch::format_dumps(&data, &buffers));
    }
    eprintln!(
        "native_sim: {} on {device_name}: best_ms={:.4} runs={}",
        header.kernel,
        best_ns as f64 / 1e6,
        options.reps
    );
    Ok(())
}

/// The OpenCL objects of one launch, released when dropped (in reverse order of creation).
struct Native {
    context: cl_context,
    queue: cl_command_queue,
    program: cl_program,
    kernel: cl_kernel,
    /// One buffer per launch buffer, in order.
    buffers: Vec<cl_mem>,
    /// Sub-buffers made for `ArgValue::SubBuffer` arguments.
    sub_buffers: Vec<cl_mem>,
}

impl Drop for Native {
    fn drop(&mut self) {
        // SAFETY: every non-null handle was created by us and is released exactly once;
        // sub-buffers before the buffers they are part of.
        unsafe {
            for &mem in self.sub_buffers.iter().chain(&self.buffers) {
                let _ = memory::release_mem_object(mem);
            }
            if !self.kernel.is_null() {
                let _ = kernel::release_kernel(self.kernel);
            }
            if !self.program.is_null() {
                let _ = program::release_program(self.program);
            }
            if !self.queue.is_null() {
                let _ = command_queue::release_command_queue(self.queue);
            }
            let _ = cl3::context::release_context(self.context);
        }
    }
}

impl Native {
    /// A context and a profiling queue on `device`, with `source` built and its kernel `name`.
    fn new(device: cl_device_id, source: &str, options: &str, name: &str) -> Result<Native, String> {
        let context = create_context(device)?;
        let mut native = Native {
            context,
            queue: ptr::null_mut(),
            program: ptr::null_mut(),
            kernel: ptr::null_mut(),
            buffers: Vec::new(),
            sub_buffers: Vec::new(),
        };
        let properties: [cl_queue_properties; 3] =
            [command_queue::CL_QUEUE_PROPERTIES as cl_queue_properties, command_queue::CL_QUEUE_PROFILING_ENABLE, 0];
        // SAFETY: the device belongs to the context; the property list is zero-terminated and
        // outlives the call.
        native.queue =
            unsafe { command_queue::create_command_queue_with_properties(context, device, properties.as_ptr()) }
                .map_err(cl("clCreateCommandQueueWithProperties"))?;
        native.program =
            program::create_program_with_source(context, &[source]).map_err(cl("clCreateProgramWithSource"))?;
        let c_options = CString::new(options).map_err(|_| "build options contain NUL")?;
        if let Err(code) = program::build_program(native.program, &[device], &c_options, None, ptr::null_mut()) {
            let log: String = program::get_program_build_info(native.program, device, program::CL_PROGRAM_BUILD_LOG)
                .map(Into::into)
                .unwrap_or_default();
            return Err(format!("clBuildProgram failed: {}\n{log}", error_text(code)));
        }
        let c_name = CString::new(name).map_err(|_| "kernel name contains NUL")?;
        native.kernel = kernel::create_kernel(native.program, &c_name).map_err(cl("clCreateKernel"))?;
        Ok(native)
    }

    /// Creates the launch's buffers with their initial contents and sets every argument.
    fn bind(&mut self, data: &LaunchData) -> Result<(), String> {
        for (i, bytes) in data.buffers.iter().enumerate() {
            if bytes.is_empty() {
                return Err(format!("buffer {i} is empty: OpenCL cannot create a zero-size buffer"));
            }
            let flags = memory::CL_MEM_READ_WRITE | memory::CL_MEM_COPY_HOST_PTR;
            // SAFETY: COPY_HOST_PTR reads `bytes.len()` bytes from the pointer during the call only.
            let mem = unsafe { memory::create_buffer(self.context, flags, bytes.len(), bytes.as_ptr() as *mut c_void) }
                .map_err(|e| format!("clCreateBuffer(buffer {i}) failed: {}", error_text(e)))?;
            self.buffers.push(mem);
        }
        for (index, arg) in data.launch.args.iter().enumerate() {
            let what = |e| format!("clSetKernelArg(argument {index}) failed: {}", error_text(e));
            let null_mem: cl_mem = ptr::null_mut();
            let sub_buffer: cl_mem;
            let (size, value): (usize, *const c_void) = match arg {
                ArgValue::Buffer(b) => {
                    let mem = self.buffers.get(*b).ok_or_else(|| format!("argument {index}: no buffer {b}"))?;
                    (size_of::<cl_mem>(), mem as *const cl_mem as *const c_void)
                }
                ArgValue::SubBuffer { buffer, offset } => {
                    sub_buffer = self.sub_buffer(*buffer, *offset, data.buffers.get(*buffer).map_or(0, Vec::len))?;
                    (size_of::<cl_mem>(), &sub_buffer as *const cl_mem as *const c_void)
                }
                ArgValue::Null => (size_of::<cl_mem>(), &null_mem as *const cl_mem as *const c_void),
                ArgValue::Local(bytes) => (*bytes, ptr::null()),
                ArgValue::Value(bytes) => (bytes.len(), bytes.as_ptr() as *const c_void),
                ArgValue::Image { .. } | ArgValue::Sampler(_) => {
                    return Err(format!("argument {index}: images and samplers are not supported here"));
                }
            };
            // SAFETY: `value` points to `size` readable bytes (or is null for a local allocation),
            // alive until the call returns; OpenCL copies argument values.
            unsafe { kernel::set_kernel_arg(self.kernel, index as u32, size, value) }.map_err(what)?;
        }
        Ok(())
    }

    /// A sub-buffer of buffer `buffer` (`len` bytes) from `offset` to its end.
    fn sub_buffer(&mut self, buffer: usize, offset: u64, len: usize) -> Result<cl_mem, String> {
        let parent = *self.buffers.get(buffer).ok_or_else(|| format!("no buffer {buffer}"))?;
        let origin = offset as usize;
        let region = cl_buffer_region { origin, size: len.saturating_sub(origin) };
        // SAFETY: the region descriptor outlives the call, which only reads it.
        let mem = unsafe {
            memory::create_sub_buffer(
                parent,
                memory::CL_MEM_READ_WRITE,
                memory::CL_BUFFER_CREATE_TYPE_REGION,
                &region as *const cl_buffer_region as *const c_void,
            )
        }
        .map_err(|e| format!("clCreateSubBuffer(buffer {buffer}, offset {offset}) failed: {}", error_text(e)))?;
        self.sub_buffers.push(mem);
        Ok(mem)
    }

    /// Writes the initial contents back into every buffer (blocking, not timed).
    fn restore(&self, initial: &[Vec<u8>]) -> Result<(), String> {
        for (&mem, bytes) in self.buffers.iter().zip(initial) {
            // SAFETY: a blocking write of exactly `bytes.len()` bytes (the buffer's size) from `bytes`.
            let written = unsafe {
                command_queue::enqueue_write_buffer(
                    self.queue,
                    mem,
                    CL_BLOCKING,
                    0,
                    bytes.len(),
                    bytes.as_ptr() as *const c_void,
                    0,
                    ptr::null(),
                )
            }
            .map_err(cl("clEnqueueWriteBuffer"))?;
            // SAFETY: the event was just returned to us and is released once.
            let _ = unsafe { event::release_event(written) };
        }
        Ok(())
    }

    /// Runs the NDRange once, waits for it, and returns its time on the device in nanoseconds.
    fn launch(&self, data: &LaunchData) -> Result<u64, String> {
        let launch = &data.launch;
        let dims = launch.work_dim;
        if !(1..=3).contains(&dims) {
            return Err(format!("work_dim {dims} is not 1, 2 or 3"));
        }
        let [offset, global, local] =
            [launch.global_offset, launch.global_size, launch.local_size].map(|v| v.map(|x| x as usize));
        // SAFETY: the three arrays hold 3 >= work_dim sizes each and outlive the call.
        let done = unsafe {
            command_queue::enqueue_nd_range_kernel(
                self.queue,
                self.kernel,
                dims,
                offset.as_ptr(),
                global.as_ptr(),
                local.as_ptr(),
                0,
                ptr::null(),
            )
        }
        .map_err(cl("clEnqueueNDRangeKernel"))?;
        let times = event::wait_for_events(&[done]).map_err(cl("clWaitForEvents")).and_then(|()| {
            let at = |what| {
                event::get_event_profiling_info(done, what).map(u64::from).map_err(cl("clGetEventProfilingInfo"))
            };
            Ok((at(event::CL_PROFILING_COMMAND_START)?, at(event::CL_PROFILING_COMMAND_END)?))
        });
        // SAFETY: the event was returned to us by the enqueue and is released once.
        let _ = unsafe { event::release_event(done) };
        let (start, end) = times?;
        Ok(end.saturating_sub(start))
    }

    /// Every buffer read back, in order.
    fn read_back(&self, initial: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, String> {
        let mut out = Vec::with_capacity(initial.len());
        for (&mem, bytes) in self.buffers.iter().zip(initial) {
            let mut back = vec![0u8; bytes.len()];
            // SAFETY: a blocking read of exactly `back.len()` bytes (the buffer's size) into `back`.
            let read = unsafe {
                command_queue::enqueue_read_buffer(
                    self.queue,
                    mem,
                    CL_BLOCKING,
                    0,
                    back.len(),
                    back.as_mut_ptr() as *mut c_void,
                    0,
                    ptr::null(),
                )
            }
            .map_err(cl("clEnqueueReadBuffer"))?;
            // SAFETY: the event was just returned to us and is released once.
            let _ = unsafe { event::release_event(read) };
            out.push(back);
        }
        Ok(out)
    }
}
