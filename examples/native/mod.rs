//! One launch of a launch file on an OpenCL device, for the examples that time kernels natively
//! (`native_sim`, the on-device gate): a context and profiling queue, the program built, the
//! launch's buffers made from their initial contents and every argument set, runs timed by the
//! device's profiling events, and the buffers written back or read out between runs.
//!
//! What it cannot see: images and samplers (refused), and anything the device does outside the
//! kernel (transfers and the build are not timed).

// Not every example uses every helper.
#![allow(dead_code)]

use std::ffi::{CString, c_void};
use std::ptr;

use cl3::error_codes::error_text;
use cl3::types::{
    CL_BLOCKING, cl_buffer_region, cl_command_queue, cl_context, cl_device_id, cl_event, cl_kernel, cl_mem, cl_program,
    cl_queue_properties,
};
use cl3::{command_queue, event, kernel, memory, program};
use clrace::ArgValue;
use clrace::launch::LaunchData;

use crate::common::{cl, create_context};

/// The OpenCL objects of one launch, released when dropped (in reverse order of creation).
pub struct Native {
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
    pub fn new(device: cl_device_id, source: &str, options: &str, name: &str) -> Result<Native, String> {
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
    pub fn bind(&mut self, data: &LaunchData) -> Result<(), String> {
        for (i, bytes) in data.buffers.iter().enumerate() {
            if bytes.is_empty() {
                return Err(format!("buffer {i} is empty: OpenCL cannot create a zero-size buffer"));
            }
            let mem = self.buffer(bytes.len(), Some(bytes))?;
            self.buffers.push(mem);
        }
        for (index, arg) in data.launch.args.iter().enumerate() {
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
            self.set_arg(index, size, value)?;
        }
        Ok(())
    }

    /// A read-write buffer of `len` bytes (at least 1), with `initial`'s bytes when given.
    pub fn buffer(&self, len: usize, initial: Option<&[u8]>) -> Result<cl_mem, String> {
        let (flags, host) = match initial {
            Some(bytes) => {
                assert!(bytes.len() >= len, "the initial bytes cover the buffer");
                (memory::CL_MEM_READ_WRITE | memory::CL_MEM_COPY_HOST_PTR, bytes.as_ptr() as *mut c_void)
            }
            None => (memory::CL_MEM_READ_WRITE, ptr::null_mut()),
        };
        // SAFETY: with COPY_HOST_PTR the call reads `len` bytes from `host` during the call only,
        // and `initial` holds at least that many; without it `host` is null.
        unsafe { memory::create_buffer(self.context, flags, len.max(1), host) }.map_err(cl("clCreateBuffer"))
    }

    /// Sets argument `index` of the kernel to `size` bytes at `value` (null for a `__local` size).
    pub fn set_arg(&self, index: usize, size: usize, value: *const c_void) -> Result<(), String> {
        // SAFETY: the callers pass `value` pointing to `size` readable bytes alive until the call
        // returns (or null for a __local size); OpenCL copies argument values.
        unsafe { kernel::set_kernel_arg(self.kernel, index as u32, size, value) }
            .map_err(|e| format!("clSetKernelArg(argument {index}) failed: {}", error_text(e)))
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

    /// Writes `bytes` into `mem` from its start (blocking, not timed).
    pub fn write(&self, mem: cl_mem, bytes: &[u8]) -> Result<(), String> {
        // SAFETY: a blocking write of exactly `bytes.len()` bytes from `bytes`, which the callers
        // keep within the buffer's size.
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
        Ok(())
    }

    /// Writes the initial contents back into every buffer (blocking, not timed).
    pub fn restore(&self, initial: &[Vec<u8>]) -> Result<(), String> {
        for (&mem, bytes) in self.buffers.iter().zip(initial) {
            self.write(mem, bytes)?;
        }
        Ok(())
    }

    /// Fills the `len` bytes of `mem` with zeros on the device and returns the fill's time in
    /// nanoseconds.
    pub fn zero(&self, mem: cl_mem, len: usize) -> Result<u64, String> {
        let zero = 0u64;
        // SAFETY: the pattern is 8 bytes alive for the call; the callers give the buffer's size,
        // a multiple of 8.
        let filled = unsafe {
            command_queue::enqueue_fill_buffer(
                self.queue,
                mem,
                &zero as *const u64 as *const c_void,
                8,
                0,
                len,
                0,
                ptr::null(),
            )
        }
        .map_err(cl("clEnqueueFillBuffer"))?;
        elapsed(filled)
    }

    /// Runs the NDRange once, waits for it, and returns its time on the device in nanoseconds.
    pub fn launch(&self, data: &LaunchData) -> Result<u64, String> {
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
        elapsed(done)
    }

    /// The first `len` bytes of `mem` (a blocking read).
    pub fn read(&self, mem: cl_mem, len: usize) -> Result<Vec<u8>, String> {
        let mut back = vec![0u8; len];
        // SAFETY: a blocking read of exactly `back.len()` bytes into `back`, which the callers
        // keep within the buffer's size.
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
        Ok(back)
    }

    /// Every buffer read back, in order.
    pub fn read_back(&self, initial: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, String> {
        self.buffers.iter().zip(initial).map(|(&mem, bytes)| self.read(mem, bytes.len())).collect()
    }
}

/// Waits for `done`, releases it, and returns its time on the device in nanoseconds
/// (`CL_PROFILING_COMMAND_START` to `END`).
fn elapsed(done: cl_event) -> Result<u64, String> {
    let times = event::wait_for_events(&[done]).map_err(cl("clWaitForEvents")).and_then(|()| {
        let at =
            |what| event::get_event_profiling_info(done, what).map(u64::from).map_err(cl("clGetEventProfilingInfo"));
        Ok((at(event::CL_PROFILING_COMMAND_START)?, at(event::CL_PROFILING_COMMAND_END)?))
    });
    // SAFETY: the event was returned to us by an enqueue and is released once.
    let _ = unsafe { event::release_event(done) };
    let (start, end) = times?;
    Ok(end.saturating_sub(start))
}
