//! Shared helpers for the integration tests.
//!
//! - [`run_on_pocl`] runs a [`Launch`] on the real pocl CPU driver (through the ocl-icd loader and
//!   `cl3`) and returns every buffer afterwards, so tests can compare the emulator with a real
//!   OpenCL implementation on identical inputs.
//! - [`pocl_kernel_info`] reflects a kernel's signature from pocl (a second opinion on ours).
//! - [`TestDirectives`] reads the `# clrace-test:` comment lines of a corpus launch file, and
//!   [`compare_buffer`] compares two buffers byte for byte or as floats within an ulp budget.
//!
//! pocl is part of the test setup (CI installs it): when it is missing, the helpers return an
//! error that says so, and tests must fail on it rather than skip.

#![allow(dead_code)]

use std::ffi::{CString, c_void};
use std::fmt::Write as _;
use std::mem::size_of;
use std::ptr;
use std::sync::OnceLock;

use cl3::types::{cl_device_id, cl_int, cl_kernel, cl_mem, cl_program};
use cl3::{command_queue, context, device, kernel, memory, platform, program};
use clrace::{AddressSpace, ArgValue, KernelArg, KernelInfo, Launch};

/// What pocl calls its platform (`CL_PLATFORM_NAME`).
pub const POCL_PLATFORM: &str = "Portable Computing Language";

/// Formats an OpenCL error code as `CL_NAME (code)`.
fn cl_error(what: &str, code: cl_int) -> String {
    format!("{what} failed: {} ({code})", cl3::error_codes::error_text(code))
}

/// The pocl CPU device, or why there is none. Looked up once per process: concurrent first
/// calls to `clGetDeviceIDs` from several test threads have been seen to find no device.
pub fn pocl_device() -> Result<cl_device_id, String> {
    /// A device handle: a plain pointer that the OpenCL runtime lets any thread use.
    struct Device(cl_device_id);
    // SAFETY: OpenCL handles may be used from any thread (the API is thread-safe).
    unsafe impl Send for Device {}
    // SAFETY: as above; the handle is never dereferenced by us.
    unsafe impl Sync for Device {}
    static DEVICE: OnceLock<Result<Device, String>> = OnceLock::new();
    match DEVICE.get_or_init(|| find_pocl_device().map(Device)) {
        Ok(device) => Ok(device.0),
        Err(e) => Err(e.clone()),
    }
}

fn find_pocl_device() -> Result<cl_device_id, String> {
    const HINT: &str = "pocl is required for these tests (CI installs pocl-opencl-icd and \
                        ocl-icd-libopencl1); a missing pocl is a broken setup, not a reason to skip";
    if !cl3::is_opencl_runtime_available() {
        return Err(format!("cannot load the OpenCL ICD loader (libOpenCL.so.1). {HINT}"));
    }
    let platforms = platform::get_platform_ids().map_err(|e| cl_error("clGetPlatformIDs", e))?;
    let mut seen = Vec::new();
    for id in platforms {
        let name: String = platform::get_platform_info(id, platform::CL_PLATFORM_NAME)
            .map_err(|e| cl_error("clGetPlatformInfo", e))?
            .into();
        if name.contains(POCL_PLATFORM) {
            let devices = device::get_device_ids(id, device::CL_DEVICE_TYPE_CPU)
                .map_err(|e| cl_error(&format!("clGetDeviceIDs(CPU) on {name}"), e))?;
            return devices.first().copied().ok_or_else(|| format!("pocl ({name}) has no CPU device. {HINT}"));
        }
        seen.push(name);
    }
    Err(format!("no OpenCL platform named '{POCL_PLATFORM}' (platforms found: {seen:?}). {HINT}"))
}

/// OpenCL handles released when dropped, in reverse order of creation.
struct Handles {
    context: cl3::types::cl_context,
    queue: cl3::types::cl_command_queue,
    program: cl_program,
    kernel: cl_kernel,
    mems: Vec<cl_mem>,
}

impl Drop for Handles {
    fn drop(&mut self) {
        // SAFETY: every non-null handle here was created by us and is released exactly once.
        unsafe {
            for &mem in &self.mems {
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
            if !self.context.is_null() {
                let _ = context::release_context(self.context);
            }
        }
    }
}

impl Handles {
    /// A context on the pocl device with `source` built with `options`.
    fn build(device: cl_device_id, source: &str, options: &str) -> Result<Handles, String> {
        let context = context::create_context(&[device], ptr::null(), None, ptr::null_mut())
            .map_err(|e| cl_error("clCreateContext", e))?;
        let mut handles = Handles {
            context,
            queue: ptr::null_mut(),
            program: ptr::null_mut(),
            kernel: ptr::null_mut(),
            mems: Vec::new(),
        };
        handles.program = program::create_program_with_source(context, &[source])
            .map_err(|e| cl_error("clCreateProgramWithSource", e))?;
        let c_options = CString::new(options).map_err(|_| "build options contain NUL".to_string())?;
        if let Err(code) = program::build_program(handles.program, &[device], &c_options, None, ptr::null_mut()) {
            let log: String = program::get_program_build_info(handles.program, device, program::CL_PROGRAM_BUILD_LOG)
                .map(Into::into)
                .unwrap_or_default();
            return Err(format!("{} with options {options:?}; build log:\n{log}", cl_error("clBuildProgram", code)));
        }
        Ok(handles)
    }

    fn create_kernel(&mut self, name: &str) -> Result<(), String> {
        let c_name = CString::new(name).map_err(|_| "kernel name contains NUL".to_string())?;
        self.kernel = kernel::create_kernel(self.program, &c_name)
            .map_err(|e| cl_error(&format!("clCreateKernel({name})"), e))?;
        Ok(())
    }
}

/// Runs `launch` on pocl: builds `source` with `options`, creates one buffer per entry of
/// `buffers` (initialised with its bytes; two arguments naming the same index share one buffer),
/// binds the arguments, runs the NDRange and returns every buffer read back, in order.
pub fn run_on_pocl(source: &str, options: &str, launch: &Launch, buffers: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, String> {
    let device = pocl_device()?;
    let mut h = Handles::build(device, source, options)?;
    // SAFETY: the device belongs to the context; no properties.
    h.queue = unsafe { command_queue::create_command_queue_with_properties(h.context, device, ptr::null()) }
        .map_err(|e| cl_error("clCreateCommandQueueWithProperties", e))?;
    h.create_kernel(&launch.kernel)?;

    for (i, bytes) in buffers.iter().enumerate() {
        if bytes.is_empty() {
            return Err(format!("buffer {i} is empty: OpenCL cannot create a zero-size buffer"));
        }
        let flags = memory::CL_MEM_READ_WRITE | memory::CL_MEM_COPY_HOST_PTR;
        // SAFETY: COPY_HOST_PTR only reads `bytes.len()` bytes from the pointer during the call.
        let mem = unsafe { memory::create_buffer(h.context, flags, bytes.len(), bytes.as_ptr() as *mut c_void) }
            .map_err(|e| cl_error(&format!("clCreateBuffer(buffer {i}, {} bytes)", bytes.len()), e))?;
        h.mems.push(mem);
    }

    for (index, arg) in launch.args.iter().enumerate() {
        let null_mem: cl_mem = ptr::null_mut();
        let (size, value): (usize, *const c_void) = match arg {
            ArgValue::Buffer(b) => {
                let mem =
                    h.mems.get(*b).ok_or_else(|| format!("argument {index} names buffer {b}, which does not exist"))?;
                (size_of::<cl_mem>(), mem as *const cl_mem as *const c_void)
            }
            ArgValue::Null => (size_of::<cl_mem>(), &null_mem as *const cl_mem as *const c_void),
            ArgValue::Local(n) => (*n, ptr::null()),
            ArgValue::Value(bytes) => (bytes.len(), bytes.as_ptr() as *const c_void),
            ArgValue::SubBuffer { .. } => return Err("the corpus does not use sub-buffers".into()),
            ArgValue::Image { .. } | ArgValue::Sampler(_) => return Err("images are not fed to pocl yet".into()),
        };
        // SAFETY: `value` points to `size` readable bytes (or is null for a local allocation),
        // alive until the call returns; OpenCL copies argument values.
        unsafe { kernel::set_kernel_arg(h.kernel, index as u32, size, value) }
            .map_err(|e| cl_error(&format!("clSetKernelArg(argument {index} = {arg:?})"), e))?;
    }

    let dim = launch.work_dim as usize;
    if !(1..=3).contains(&dim) {
        return Err(format!("work_dim {dim} is not 1, 2 or 3"));
    }
    let to_size = |v: &[u64; 3]| v.map(|x| x as usize);
    let (offset, global, local) =
        (to_size(&launch.global_offset), to_size(&launch.global_size), to_size(&launch.local_size));
    let local_ptr = if local[..dim].iter().all(|&l| l == 0) { ptr::null() } else { local.as_ptr() };
    // SAFETY: the three arrays hold 3 >= work_dim entries each and outlive the call.
    let event = unsafe {
        command_queue::enqueue_nd_range_kernel(
            h.queue,
            h.kernel,
            launch.work_dim,
            offset.as_ptr(),
            global.as_ptr(),
            local_ptr,
            0,
            ptr::null(),
        )
    }
    .map_err(|e| {
        cl_error(
            &format!("clEnqueueNDRangeKernel(dim {dim}, offset {offset:?}, global {global:?}, local {local:?})"),
            e,
        )
    })?;
    // SAFETY: the event was just returned to us and is released once.
    let _ = unsafe { cl3::event::release_event(event) };

    let mut out = Vec::with_capacity(buffers.len());
    for (i, (&mem, bytes)) in h.mems.iter().zip(buffers).enumerate() {
        let mut back = vec![0u8; bytes.len()];
        // SAFETY: blocking read of exactly `back.len()` bytes into `back`.
        let event = unsafe {
            command_queue::enqueue_read_buffer(
                h.queue,
                mem,
                cl3::types::CL_BLOCKING,
                0,
                back.len(),
                back.as_mut_ptr() as *mut c_void,
                0,
                ptr::null(),
            )
        }
        .map_err(|e| cl_error(&format!("clEnqueueReadBuffer(buffer {i}) after the kernel"), e))?;
        // SAFETY: as above.
        let _ = unsafe { cl3::event::release_event(event) };
        out.push(back);
    }
    command_queue::finish(h.queue).map_err(|e| cl_error("clFinish", e))?;
    Ok(out)
}

/// Size in bytes of an OpenCL C scalar or vector type name (`int`, `float4`, `uchar16`), if it is
/// one. A 3-vector occupies 4 elements.
pub fn builtin_type_size(name: &str) -> Option<usize> {
    const SCALARS: [(&str, usize); 12] = [
        ("uchar", 1),
        ("char", 1),
        ("ushort", 2),
        ("short", 2),
        ("uint", 4),
        ("int", 4),
        ("ulong", 8),
        ("long", 8),
        ("float", 4),
        ("double", 8),
        ("half", 2),
        ("bool", 1),
    ];
    let name = name.trim();
    for (scalar, size) in SCALARS {
        if let Some(rest) = name.strip_prefix(scalar) {
            if rest.is_empty() {
                return Some(size);
            }
            return match rest.parse::<usize>() {
                Ok(3) => Some(4 * size),
                Ok(n @ (2 | 4 | 8 | 16)) => Some(n * size),
                _ => None,
            };
        }
    }
    match name {
        "size_t" | "ptrdiff_t" | "intptr_t" | "uintptr_t" => Some(8),
        _ => None,
    }
}

/// The signature of kernel `name` as pocl reflects it (`clGetKernelArgInfo`, built with
/// `-cl-kernel-arg-info`). By-value arguments of a type other than a scalar or vector (structs)
/// get size 0, pointers to them pointee size 0: pocl does not report those sizes.
pub fn pocl_kernel_info(source: &str, options: &str, name: &str) -> Result<KernelInfo, String> {
    let device = pocl_device()?;
    let mut h = Handles::build(device, source, &format!("{options} -cl-kernel-arg-info"))?;
    h.create_kernel(name)?;
    let count: u32 = kernel::get_kernel_info(h.kernel, kernel::CL_KERNEL_NUM_ARGS)
        .map_err(|e| cl_error("clGetKernelInfo(NUM_ARGS)", e))?
        .into();
    let mut args = Vec::new();
    for i in 0..count {
        let info =
            |param| kernel::get_kernel_arg_info(h.kernel, i, param).map_err(|e| cl_error("clGetKernelArgInfo", e));
        let qualifier: u32 = info(kernel::CL_KERNEL_ARG_ADDRESS_QUALIFIER)?.into();
        let type_name: String = info(kernel::CL_KERNEL_ARG_TYPE_NAME)?.into();
        let arg_name: String = info(kernel::CL_KERNEL_ARG_NAME)?.into();
        let space = match qualifier {
            kernel::CL_KERNEL_ARG_ADDRESS_GLOBAL => AddressSpace::Global,
            kernel::CL_KERNEL_ARG_ADDRESS_CONSTANT => AddressSpace::Constant,
            kernel::CL_KERNEL_ARG_ADDRESS_LOCAL => AddressSpace::Local,
            _ => AddressSpace::Private,
        };
        let is_pointer = type_name.trim_end().ends_with('*');
        let (size, pointee_size) = if is_pointer {
            let pointee = type_name.trim_end().trim_end_matches('*');
            (8, if pointee.trim() == "void" { 1 } else { builtin_type_size(pointee).unwrap_or(0) })
        } else {
            (builtin_type_size(&type_name).unwrap_or(0), 0)
        };
        let handle = match type_name.trim() {
            t if t.starts_with("image") => Some(clrace::Handle::Image),
            "sampler_t" => Some(clrace::Handle::Sampler),
            _ => None,
        };
        args.push(KernelArg { name: arg_name, space, is_pointer, type_name, size, pointee_size, handle });
    }
    let required: Vec<usize> =
        kernel::get_kernel_work_group_info(h.kernel, device, kernel::CL_KERNEL_COMPILE_WORK_GROUP_SIZE)
            .map_err(|e| cl_error("clGetKernelWorkGroupInfo(COMPILE_WORK_GROUP_SIZE)", e))?
            .into();
    let required_local_size = match required[..] {
        [x, y, z] if x != 0 => Some([x as u64, y as u64, z as u64]),
        _ => None,
    };
    Ok(KernelInfo { name: name.to_string(), args, required_local_size })
}

/// The element type a float tolerance applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FloatKind {
    F32,
    F64,
}

/// `# clrace-test: ulp=N float|double [arg=K]`: compare as floats within N ulp (every NaN equals
/// every NaN), for the buffer bound to argument K, or for every buffer without `arg=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tolerance {
    pub ulp: u64,
    pub kind: FloatKind,
    pub arg: Option<usize>,
}

/// What a corpus launch file asks of the test, from its `# clrace-test:` comment lines.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TestDirectives {
    pub tolerances: Vec<Tolerance>,
    /// `# clrace-test: expect-findings`: the emulator is expected to report findings.
    pub expect_findings: bool,
}

impl TestDirectives {
    /// Reads every `# clrace-test:` directive of a launch file; unknown words are errors, so a typo
    /// cannot silently turn a check off.
    pub fn parse(sim: &str) -> Result<TestDirectives, String> {
        let mut directives = TestDirectives::default();
        for (number, line) in sim.lines().enumerate() {
            let Some(comment) = line.split_once('#').map(|(_, c)| c.trim()) else { continue };
            let Some(words) = comment.strip_prefix("clrace-test:") else { continue };
            let bad = |msg: String| format!("line {}: {msg} in '{line}'", number + 1);
            let (mut ulp, mut kind, mut arg) = (None, None, None);
            for word in words.split_whitespace() {
                match word {
                    "expect-findings" => directives.expect_findings = true,
                    "float" => kind = Some(FloatKind::F32),
                    "double" => kind = Some(FloatKind::F64),
                    _ => {
                        if let Some(n) = word.strip_prefix("ulp=") {
                            ulp = Some(n.parse().map_err(|_| bad(format!("bad ulp count '{n}'")))?);
                        } else if let Some(k) = word.strip_prefix("arg=") {
                            arg = Some(k.parse().map_err(|_| bad(format!("bad argument index '{k}'")))?);
                        } else {
                            return Err(bad(format!("unknown clrace-test word '{word}'")));
                        }
                    }
                }
            }
            match (ulp, kind) {
                (Some(ulp), Some(kind)) => directives.tolerances.push(Tolerance { ulp, kind, arg }),
                (None, None) if arg.is_none() => {}
                _ => return Err(bad("ulp= needs both a count and 'float' or 'double'".into())),
            }
        }
        Ok(directives)
    }

    /// The tolerance for the buffer bound to the arguments `args` (indices), if any: an `arg=`
    /// match wins over a directive for every buffer.
    pub fn tolerance_for(&self, args: &[usize]) -> Option<Tolerance> {
        let specific = self.tolerances.iter().find(|t| t.arg.is_some_and(|a| args.contains(&a)));
        specific.or_else(|| self.tolerances.iter().find(|t| t.arg.is_none())).copied()
    }
}

/// Distance in ulp between two floats given as raw bits of `bits` width; `None` when exactly one
/// is NaN. NaNs equal NaNs; -0 and +0 are 1 ulp apart.
fn ulp_distance(a: u64, b: u64, bits: u32) -> Option<u64> {
    let sign = 1u64 << (bits - 1);
    let exp_mask = if bits == 32 { 0x7f80_0000u64 } else { 0x7ff0_0000_0000_0000 };
    let is_nan = |x: u64| x & exp_mask == exp_mask && x & (exp_mask ^ (sign - 1)) != 0;
    match (is_nan(a), is_nan(b)) {
        (true, true) => return Some(0),
        (true, false) | (false, true) => return None,
        _ => {}
    }
    // Map to a line where consecutive floats are consecutive integers: -0 -> -1, +0 -> 0.
    let ordered = |x: u64| {
        let magnitude = (x & (sign - 1)) as i128;
        if x & sign != 0 { -magnitude - 1 } else { magnitude }
    };
    Some(ordered(a).abs_diff(ordered(b)) as u64)
}

/// The value of an IEEE half, for printing.
fn half_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let (exponent, mantissa) = (i32::from(h >> 10 & 0x1f), f32::from(h & 0x3ff));
    match exponent {
        0 => sign * mantissa * 2f32.powi(-24),
        31 if mantissa == 0.0 => sign * f32::INFINITY,
        31 => f32::NAN,
        _ => sign * (1024.0 + mantissa) * 2f32.powi(exponent - 25),
    }
}

/// How to print an element of a buffer: the scalar type from the argument's type name.
fn format_element(bytes: &[u8], type_name: &str) -> String {
    let base = type_name.trim().trim_end_matches('*').trim();
    let base = base.strip_prefix("const ").unwrap_or(base).trim();
    let scalar = ["uchar", "char", "ushort", "short", "uint", "int", "ulong", "long", "float", "double", "half"]
        .into_iter()
        .find(|s| base.strip_prefix(s).is_some_and(|rest| rest.is_empty() || rest.parse::<u32>().is_ok()));
    let hex = bytes.iter().rev().fold(String::from("0x"), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    });
    let Some(scalar) = scalar else { return format!("bytes {bytes:02x?}") };
    let size = builtin_type_size(scalar).unwrap_or(1);
    if !bytes.len().is_multiple_of(size) {
        return format!("bytes {bytes:02x?}");
    }
    let values: Vec<String> = bytes
        .chunks(size)
        .map(|c| match scalar {
            "uchar" => c[0].to_string(),
            "char" => (c[0] as i8).to_string(),
            "ushort" => u16::from_le_bytes([c[0], c[1]]).to_string(),
            "short" => i16::from_le_bytes([c[0], c[1]]).to_string(),
            "uint" => u32::from_le_bytes(c.try_into().unwrap()).to_string(),
            "int" => i32::from_le_bytes(c.try_into().unwrap()).to_string(),
            "ulong" => u64::from_le_bytes(c.try_into().unwrap()).to_string(),
            "long" => i64::from_le_bytes(c.try_into().unwrap()).to_string(),
            "float" => format!("{:e}", f32::from_le_bytes(c.try_into().unwrap())),
            "half" => format!("{:e}", half_to_f32(u16::from_le_bytes([c[0], c[1]]))),
            _ => format!("{:e}", f64::from_le_bytes(c.try_into().unwrap())),
        })
        .collect();
    if values.len() == 1 { format!("{} ({hex})", values[0]) } else { format!("({}) ({hex})", values.join(", ")) }
}

/// Compares a buffer the emulator wrote (`got`) with pocl's (`expected`). Elements are
/// `element_size` bytes (the pointee size of the argument, used for reporting), printed according
/// to `type_name`. Returns one line per differing element (at most `limit`, then a count).
pub fn compare_buffer(
    expected: &[u8],
    got: &[u8],
    element_size: usize,
    type_name: &str,
    tolerance: Option<Tolerance>,
    limit: usize,
) -> Vec<String> {
    if expected.len() != got.len() {
        return vec![format!("size differs: expected {} bytes, got {}", expected.len(), got.len())];
    }
    let mut lines = Vec::new();
    let mut differing = 0usize;
    let mut report = |lines: &mut Vec<String>, what: String| {
        differing += 1;
        if lines.len() < limit {
            lines.push(what);
        }
    };
    match tolerance {
        Some(Tolerance { ulp, kind, .. }) => {
            let (width, name) = match kind {
                FloatKind::F32 => (4, "float"),
                FloatKind::F64 => (8, "double"),
            };
            if !expected.len().is_multiple_of(width) {
                return vec![format!("{} bytes is not a whole number of {name}s", expected.len())];
            }
            for (i, (e, g)) in expected.chunks(width).zip(got.chunks(width)).enumerate() {
                let (eb, gb) = if width == 4 {
                    (u32::from_le_bytes(e.try_into().unwrap()) as u64, u32::from_le_bytes(g.try_into().unwrap()) as u64)
                } else {
                    (u64::from_le_bytes(e.try_into().unwrap()), u64::from_le_bytes(g.try_into().unwrap()))
                };
                let distance = ulp_distance(eb, gb, 8 * width as u32);
                if distance.is_none_or(|d| d > ulp) {
                    let far = distance.map_or("NaN vs number".to_string(), |d| format!("{d} ulp apart, allowed {ulp}"));
                    report(
                        &mut lines,
                        format!(
                            "{name} element {i} (byte offset {}): expected {}, got {} ({far})",
                            i * width,
                            format_element(e, name),
                            format_element(g, name)
                        ),
                    );
                }
            }
        }
        None => {
            let size = element_size.max(1);
            for (i, (e, g)) in expected.chunks(size).zip(got.chunks(size)).enumerate() {
                if e != g {
                    report(
                        &mut lines,
                        format!(
                            "element {i} (byte offset {}): expected {}, got {}",
                            i * size,
                            format_element(e, type_name),
                            format_element(g, type_name)
                        ),
                    );
                }
            }
        }
    }
    if differing > lines.len() {
        lines.push(format!("... {} differing elements in all", differing));
    }
    lines
}

/// A program built once on pocl whose kernels then run one launch at a time: cheaper than
/// [`run_on_pocl`] when one source holds many kernels.
pub struct PoclProgram {
    handles: Handles,
}

/// The kernel and buffers of one [`PoclProgram::run`], released when dropped.
struct RunHandles {
    kernel: cl_kernel,
    mems: Vec<cl_mem>,
}

impl Drop for RunHandles {
    fn drop(&mut self) {
        // SAFETY: every non-null handle here was created by us and is released exactly once.
        unsafe {
            for &mem in &self.mems {
                let _ = memory::release_mem_object(mem);
            }
            if !self.kernel.is_null() {
                let _ = kernel::release_kernel(self.kernel);
            }
        }
    }
}

impl PoclProgram {
    /// Builds `source` with `options` on the pocl device, with a queue for the runs.
    pub fn build(source: &str, options: &str) -> Result<PoclProgram, String> {
        let device = pocl_device()?;
        let mut handles = Handles::build(device, source, options)?;
        // SAFETY: the device belongs to the context; no properties.
        handles.queue =
            unsafe { command_queue::create_command_queue_with_properties(handles.context, device, ptr::null()) }
                .map_err(|e| cl_error("clCreateCommandQueueWithProperties", e))?;
        Ok(PoclProgram { handles })
    }

    /// Runs `launch` (one-dimensional, buffer and value arguments only) like [`run_on_pocl`] and
    /// returns every buffer read back, in order.
    pub fn run(&self, launch: &Launch, buffers: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, String> {
        let (context, queue) = (self.handles.context, self.handles.queue);
        let c_name = CString::new(launch.kernel.as_str()).map_err(|_| "kernel name contains NUL".to_string())?;
        let mut h = RunHandles { kernel: ptr::null_mut(), mems: Vec::new() };
        h.kernel = kernel::create_kernel(self.handles.program, &c_name)
            .map_err(|e| cl_error(&format!("clCreateKernel({})", launch.kernel), e))?;
        for (i, bytes) in buffers.iter().enumerate() {
            let flags = memory::CL_MEM_READ_WRITE | memory::CL_MEM_COPY_HOST_PTR;
            // SAFETY: COPY_HOST_PTR only reads `bytes.len()` bytes from the pointer during the call.
            let mem = unsafe { memory::create_buffer(context, flags, bytes.len(), bytes.as_ptr() as *mut c_void) }
                .map_err(|e| cl_error(&format!("clCreateBuffer(buffer {i}, {} bytes)", bytes.len()), e))?;
            h.mems.push(mem);
        }
        for (index, arg) in launch.args.iter().enumerate() {
            let (size, value): (usize, *const c_void) = match arg {
                ArgValue::Buffer(b) => {
                    let mem = h.mems.get(*b).ok_or_else(|| format!("argument {index} names a missing buffer {b}"))?;
                    (size_of::<cl_mem>(), mem as *const cl_mem as *const c_void)
                }
                ArgValue::Value(bytes) => (bytes.len(), bytes.as_ptr() as *const c_void),
                other => return Err(format!("PoclProgram::run does not bind {other:?}")),
            };
            // SAFETY: `value` points to `size` readable bytes alive until the call returns.
            unsafe { kernel::set_kernel_arg(h.kernel, index as u32, size, value) }
                .map_err(|e| cl_error(&format!("clSetKernelArg(argument {index})"), e))?;
        }
        let global = [launch.global_size[0] as usize, 1, 1];
        let local = [launch.local_size[0] as usize, 1, 1];
        // SAFETY: one dimension; the arrays outlive the call.
        let event = unsafe {
            command_queue::enqueue_nd_range_kernel(
                queue,
                h.kernel,
                1,
                ptr::null(),
                global.as_ptr(),
                local.as_ptr(),
                0,
                ptr::null(),
            )
        }
        .map_err(|e| cl_error(&format!("clEnqueueNDRangeKernel(global {global:?}, local {local:?})"), e))?;
        // SAFETY: the event was just returned to us and is released once.
        let _ = unsafe { cl3::event::release_event(event) };
        let mut out = Vec::with_capacity(buffers.len());
        for (i, (&mem, bytes)) in h.mems.iter().zip(buffers).enumerate() {
            let mut back = vec![0u8; bytes.len()];
            // SAFETY: blocking read of exactly `back.len()` bytes into `back`.
            let event = unsafe {
                command_queue::enqueue_read_buffer(
                    queue,
                    mem,
                    cl3::types::CL_BLOCKING,
                    0,
                    back.len(),
                    back.as_mut_ptr() as *mut c_void,
                    0,
                    ptr::null(),
                )
            }
            .map_err(|e| cl_error(&format!("clEnqueueReadBuffer(buffer {i})"), e))?;
            // SAFETY: as above.
            let _ = unsafe { cl3::event::release_event(event) };
            out.push(back);
        }
        command_queue::finish(queue).map_err(|e| cl_error("clFinish", e))?;
        Ok(out)
    }
}

/// [`ulp_distance`] for tests that compare floats element by element themselves: the distance
/// in ulp between two floats given as raw bits of `bits` (32 or 64) width, `None` when exactly
/// one is NaN (any NaN equals any NaN; -0 and +0 are 1 ulp apart).
pub fn ulp_apart(a: u64, b: u64, bits: u32) -> Option<u64> {
    ulp_distance(a, b, bits)
}
