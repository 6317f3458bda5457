//! Shared helpers for the integration tests.
//!
//! - [`run_on_pocl`] runs a [`Launch`] on the real pocl CPU driver (through the ocl-icd loader and
//!   `cl3`) and returns every buffer afterwards, so tests can compare the emulator with a real
//!   OpenCL implementation on identical inputs.
//! - [`pocl_kernel_info`] reflects a kernel's signature from pocl (a second opinion on ours).
//! - [`launch_files`] lists a directory's launch files, sorted.
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

use cl3::types::{
    cl_command_queue, cl_context, cl_device_id, cl_image_format, cl_int, cl_kernel, cl_mem, cl_program, cl_sampler,
    cl_sampler_properties,
};
use cl3::{command_queue, context, device, kernel, memory, platform, program, sampler};
use clrace::exec::image::{ImageDesc, ImageKind};
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
    context: cl_context,
    queue: cl_command_queue,
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

/// Runs `launch` on pocl: builds `source` with `options`, creates one memory object per entry of
/// `buffers` (initialised with its bytes; two arguments naming the same index share one object),
/// binds the arguments, runs the NDRange and returns every memory object read back, in order.
/// A buffer that an [`ArgValue::Image`] names becomes an image of that description (its bytes
/// packed as the emulator lays images out) and comes back in the same packed layout; a
/// [`ArgValue::Sampler`] becomes a sampler object with the same properties.
pub fn run_on_pocl(source: &str, options: &str, launch: &Launch, buffers: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, String> {
    let device = pocl_device()?;
    let mut h = Handles::build(device, source, options)?;
    // SAFETY: the device belongs to the context; no properties.
    h.queue = unsafe { command_queue::create_command_queue_with_properties(h.context, device, ptr::null()) }
        .map_err(|e| cl_error("clCreateCommandQueueWithProperties", e))?;
    h.create_kernel(&launch.kernel)?;
    run_launch(h.context, h.queue, h.kernel, launch, buffers)
}

/// The `cl_mem_object_type` of an image kind.
fn image_type(kind: ImageKind) -> u32 {
    match kind {
        ImageKind::D1 => memory::CL_MEM_OBJECT_IMAGE1D,
        ImageKind::D1Buffer => memory::CL_MEM_OBJECT_IMAGE1D_BUFFER,
        ImageKind::D1Array => memory::CL_MEM_OBJECT_IMAGE1D_ARRAY,
        ImageKind::D2 => memory::CL_MEM_OBJECT_IMAGE2D,
        ImageKind::D2Array => memory::CL_MEM_OBJECT_IMAGE2D_ARRAY,
        ImageKind::D3 => memory::CL_MEM_OBJECT_IMAGE3D,
    }
}

/// `cl_image_desc` as the OpenCL headers lay it out (the last member is a union of `buffer` and
/// `mem_object`): spelled out here so the layout does not depend on how `opencl-sys` is
/// configured.
#[repr(C)]
struct ClImageDesc {
    image_type: u32,
    image_width: usize,
    image_height: usize,
    image_depth: usize,
    image_array_size: usize,
    image_row_pitch: usize,
    image_slice_pitch: usize,
    num_mip_levels: u32,
    num_samples: u32,
    buffer: cl_mem,
}

impl ClImageDesc {
    /// The description of an image like `desc`, packed (pitches 0), on `buffer` for an
    /// image1d_buffer. Sizes a kind does not use are 0.
    fn new(desc: &ImageDesc, buffer: cl_mem) -> ClImageDesc {
        let [width, height, depth] = desc.extent().map(|v| v as usize);
        let uses_height = matches!(desc.kind, ImageKind::D2 | ImageKind::D2Array | ImageKind::D3);
        let arrayed = matches!(desc.kind, ImageKind::D1Array | ImageKind::D2Array);
        ClImageDesc {
            image_type: image_type(desc.kind),
            image_width: width,
            image_height: if uses_height { height } else { 0 },
            image_depth: if desc.kind == ImageKind::D3 { depth } else { 0 },
            image_array_size: if arrayed { desc.array_size as usize } else { 0 },
            image_row_pitch: 0,
            image_slice_pitch: 0,
            num_mip_levels: 0,
            num_samples: 0,
            buffer,
        }
    }
}

/// The region `clEnqueueReadImage` reads for the whole of an image: width, then height or array
/// layers, then depth or layers.
fn image_region(desc: &ImageDesc) -> [usize; 3] {
    let [w, h, d] = desc.extent().map(|v| v as usize);
    let layers = desc.array_size as usize;
    match desc.kind {
        ImageKind::D1 | ImageKind::D1Buffer => [w, 1, 1],
        ImageKind::D1Array => [w, layers, 1],
        ImageKind::D2 => [w, h, 1],
        ImageKind::D2Array => [w, h, layers],
        ImageKind::D3 => [w, h, d],
    }
}

/// The properties of a sampler whose kernel-side `CLK_*` bit field is `bits` (bit 0 normalized
/// coordinates, bits 1-3 the addressing mode, 0x20 linear filtering), as the zero-terminated list
/// `clCreateSamplerWithProperties` takes.
pub fn sampler_properties(bits: u32) -> [cl_sampler_properties; 7] {
    // CL_ADDRESS_NONE, then CLAMP_TO_EDGE, CLAMP, REPEAT and MIRRORED_REPEAT in the order of the
    // kernel-side modes; CL_FILTER_NEAREST and CL_FILTER_LINEAR.
    const CL_ADDRESS_NONE: u64 = 0x1130;
    const CL_FILTER_NEAREST: u64 = 0x1140;
    const CL_FILTER_LINEAR: u64 = 0x1141;
    let addressing = CL_ADDRESS_NONE + u64::from((bits >> 1) & 7);
    let filter = if bits & 0x20 != 0 { CL_FILTER_LINEAR } else { CL_FILTER_NEAREST };
    [
        sampler::CL_SAMPLER_NORMALIZED_COORDS as u64,
        u64::from(bits & 1),
        sampler::CL_SAMPLER_ADDRESSING_MODE as u64,
        addressing,
        sampler::CL_SAMPLER_FILTER_MODE as u64,
        filter,
        0,
    ]
}

/// The memory objects and samplers of one launch, released when dropped.
struct LaunchObjects {
    /// One per launch buffer: a buffer, or an image when an image argument names it.
    mems: Vec<cl_mem>,
    /// The image description of each entry of `mems` that is an image.
    images: Vec<Option<ImageDesc>>,
    /// The buffers behind image1d_buffer images.
    backing: Vec<cl_mem>,
    samplers: Vec<cl_sampler>,
}

impl Drop for LaunchObjects {
    fn drop(&mut self) {
        // SAFETY: every handle here was created by us and is released exactly once; images are
        // released before the buffers behind them.
        unsafe {
            for &s in &self.samplers {
                let _ = sampler::release_sampler(s);
            }
            for &mem in self.mems.iter().chain(&self.backing) {
                if !mem.is_null() {
                    let _ = memory::release_mem_object(mem);
                }
            }
        }
    }
}

impl LaunchObjects {
    /// Creates a buffer or image for every entry of `buffers`, initialised with its bytes.
    fn create(context: cl_context, launch: &Launch, buffers: &[Vec<u8>]) -> Result<LaunchObjects, String> {
        let mut images: Vec<Option<ImageDesc>> = vec![None; buffers.len()];
        for (index, arg) in launch.args.iter().enumerate() {
            if let ArgValue::Image { buffer, desc } = arg {
                let slot = images.get_mut(*buffer).ok_or_else(|| format!("argument {index} names a missing buffer"))?;
                if slot.is_some_and(|d| d != *desc) {
                    return Err(format!("buffer {buffer} is bound to two different images"));
                }
                *slot = Some(*desc);
            }
        }
        for (index, arg) in launch.args.iter().enumerate() {
            if let ArgValue::Buffer(b) | ArgValue::SubBuffer { buffer: b, .. } = arg
                && images.get(*b).is_some_and(Option::is_some)
            {
                return Err(format!("argument {index} binds buffer {b} as a buffer, another argument as an image"));
            }
        }
        let mut objects = LaunchObjects { mems: Vec::new(), images, backing: Vec::new(), samplers: Vec::new() };
        for (i, bytes) in buffers.iter().enumerate() {
            if bytes.is_empty() {
                return Err(format!("buffer {i} is empty: OpenCL cannot create a zero-size buffer"));
            }
            let mem = match objects.images[i] {
                Some(desc) => objects.create_image(context, i, &desc, bytes)?,
                None => {
                    create_buffer(context, bytes).map_err(|e| cl_error(&format!("clCreateBuffer(buffer {i})"), e))?
                }
            };
            objects.mems.push(mem);
        }
        Ok(objects)
    }

    fn create_image(
        &mut self,
        context: cl_context,
        i: usize,
        desc: &ImageDesc,
        bytes: &[u8],
    ) -> Result<cl_mem, String> {
        if bytes.len() as u64 != desc.byte_size() {
            return Err(format!("buffer {i} holds {} bytes, its image {desc:?} {}", bytes.len(), desc.byte_size()));
        }
        let format = cl_image_format { image_channel_order: desc.order, image_channel_data_type: desc.data_type };
        let what = || format!("clCreateImage(buffer {i}: {desc:?})");
        let flags = memory::CL_MEM_READ_WRITE;
        let (cl_desc, host) = if desc.kind == ImageKind::D1Buffer {
            let backing = create_buffer(context, bytes).map_err(|e| cl_error(&what(), e))?;
            self.backing.push(backing);
            (ClImageDesc::new(desc, backing), ptr::null_mut())
        } else {
            (ClImageDesc::new(desc, ptr::null_mut()), bytes.as_ptr() as *mut c_void)
        };
        let flags = if host.is_null() { flags } else { flags | memory::CL_MEM_COPY_HOST_PTR };
        // SAFETY: the format and description outlive the call and `ClImageDesc` has the layout of
        // `cl_image_desc`; COPY_HOST_PTR reads the packed image (its size checked above) during
        // the call only.
        unsafe { memory::create_image(context, flags, &format, &cl_desc as *const ClImageDesc as *const _, host) }
            .map_err(|e| cl_error(&what(), e))
    }

    /// Binds every argument of `launch` to `kernel`, creating its samplers.
    fn bind(&mut self, context: cl_context, kernel: cl_kernel, launch: &Launch) -> Result<(), String> {
        for (index, arg) in launch.args.iter().enumerate() {
            let null_mem: cl_mem = ptr::null_mut();
            let sampler_handle: cl_sampler;
            let (size, value): (usize, *const c_void) = match arg {
                ArgValue::Buffer(b) | ArgValue::Image { buffer: b, .. } => {
                    let mem =
                        self.mems.get(*b).ok_or_else(|| format!("argument {index} names a missing buffer {b}"))?;
                    (size_of::<cl_mem>(), mem as *const cl_mem as *const c_void)
                }
                ArgValue::Null => (size_of::<cl_mem>(), &null_mem as *const cl_mem as *const c_void),
                ArgValue::Local(n) => (*n, ptr::null()),
                ArgValue::Value(bytes) => (bytes.len(), bytes.as_ptr() as *const c_void),
                ArgValue::SubBuffer { .. } => return Err("sub-buffers are not fed to pocl".into()),
                ArgValue::Sampler(bits) => {
                    let properties = sampler_properties(*bits);
                    sampler_handle = sampler::create_sampler_with_properties(context, properties.as_ptr())
                        .map_err(|e| cl_error(&format!("clCreateSamplerWithProperties({properties:#x?})"), e))?;
                    self.samplers.push(sampler_handle);
                    (size_of::<cl_sampler>(), &sampler_handle as *const cl_sampler as *const c_void)
                }
            };
            // SAFETY: `value` points to `size` readable bytes (or is null for a local allocation),
            // alive until the call returns; OpenCL copies argument values.
            unsafe { kernel::set_kernel_arg(kernel, index as u32, size, value) }
                .map_err(|e| cl_error(&format!("clSetKernelArg(argument {index} = {arg:?})"), e))?;
        }
        Ok(())
    }

    /// Every buffer and image read back, images packed.
    fn read_back(&self, queue: cl_command_queue, buffers: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, String> {
        let mut out = Vec::with_capacity(buffers.len());
        for (i, ((&mem, bytes), image)) in self.mems.iter().zip(buffers).zip(&self.images).enumerate() {
            let mut back = vec![0u8; bytes.len()];
            let event = match image {
                Some(desc) => {
                    let region = image_region(desc);
                    // SAFETY: blocking read of the whole image, packed (pitches 0), into `back`,
                    // which holds exactly its bytes (checked when the image was created).
                    unsafe {
                        command_queue::enqueue_read_image(
                            queue,
                            mem,
                            cl3::types::CL_BLOCKING,
                            [0usize; 3].as_ptr(),
                            region.as_ptr(),
                            0,
                            0,
                            back.as_mut_ptr() as *mut c_void,
                            0,
                            ptr::null(),
                        )
                    }
                    .map_err(|e| cl_error(&format!("clEnqueueReadImage(buffer {i}, region {region:?})"), e))?
                }
                // SAFETY: blocking read of exactly `back.len()` bytes into `back`.
                None => unsafe {
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
                .map_err(|e| cl_error(&format!("clEnqueueReadBuffer(buffer {i}) after the kernel"), e))?,
            };
            // SAFETY: the event was just returned to us and is released once.
            let _ = unsafe { cl3::event::release_event(event) };
            out.push(back);
        }
        Ok(out)
    }
}

/// A read-write buffer holding a copy of `bytes`.
fn create_buffer(context: cl_context, bytes: &[u8]) -> Result<cl_mem, cl_int> {
    let flags = memory::CL_MEM_READ_WRITE | memory::CL_MEM_COPY_HOST_PTR;
    // SAFETY: COPY_HOST_PTR only reads `bytes.len()` bytes from the pointer during the call.
    unsafe { memory::create_buffer(context, flags, bytes.len(), bytes.as_ptr() as *mut c_void) }
}

/// Creates the launch's buffers, images and samplers in `context`, binds them to `kernel`, runs
/// the NDRange on `queue` and reads every buffer and image back.
fn run_launch(
    context: cl_context,
    queue: cl_command_queue,
    kernel: cl_kernel,
    launch: &Launch,
    buffers: &[Vec<u8>],
) -> Result<Vec<Vec<u8>>, String> {
    let mut objects = LaunchObjects::create(context, launch, buffers)?;
    objects.bind(context, kernel, launch)?;
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
            queue,
            kernel,
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
    let out = objects.read_back(queue, buffers)?;
    command_queue::finish(queue).map_err(|e| cl_error("clFinish", e))?;
    Ok(out)
}

/// The extensions of the pocl device (`CL_DEVICE_EXTENSIONS`).
pub fn pocl_extensions() -> Result<String, String> {
    let device = pocl_device()?;
    device::get_device_info(device, device::CL_DEVICE_EXTENSIONS)
        .map(Into::into)
        .map_err(|e| cl_error("clGetDeviceInfo(CL_DEVICE_EXTENSIONS)", e))
}

/// The image formats (`cl_channel_order`, `cl_channel_type`) pocl supports for read-write images
/// of kind `kind`.
pub fn pocl_image_formats(kind: ImageKind) -> Result<Vec<(u32, u32)>, String> {
    let device = pocl_device()?;
    let context = context::create_context(&[device], ptr::null(), None, ptr::null_mut())
        .map_err(|e| cl_error("clCreateContext", e))?;
    let formats = memory::get_supported_image_formats(context, memory::CL_MEM_READ_WRITE, image_type(kind))
        .map_err(|e| cl_error("clGetSupportedImageFormats", e));
    // SAFETY: the context was created above and is released once.
    let _ = unsafe { context::release_context(context) };
    Ok(formats?.iter().map(|f| (f.image_channel_order, f.image_channel_data_type)).collect())
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
        // Images and samplers are passed as handles (`cl_mem`, `cl_sampler`): pointer-sized.
        let size = if handle.is_some() { size_of::<cl_mem>() } else { size };
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

    /// Runs `launch` like [`run_on_pocl`] (images and samplers included) and returns every buffer
    /// read back, in order.
    pub fn run(&self, launch: &Launch, buffers: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, String> {
        let c_name = CString::new(launch.kernel.as_str()).map_err(|_| "kernel name contains NUL".to_string())?;
        let kernel = KernelHandle(
            kernel::create_kernel(self.handles.program, &c_name)
                .map_err(|e| cl_error(&format!("clCreateKernel({})", launch.kernel), e))?,
        );
        run_launch(self.handles.context, self.handles.queue, kernel.0, launch, buffers)
    }
}

/// A kernel released when dropped.
struct KernelHandle(cl_kernel);

impl Drop for KernelHandle {
    fn drop(&mut self) {
        // SAFETY: the kernel was created by us and is released exactly once.
        let _ = unsafe { kernel::release_kernel(self.0) };
    }
}

/// [`ulp_distance`] for tests that compare floats element by element themselves: the distance
/// in ulp between two floats given as raw bits of `bits` (32 or 64) width, `None` when exactly
/// one is NaN (any NaN equals any NaN; -0 and +0 are 1 ulp apart).
pub fn ulp_apart(a: u64, b: u64, bits: u32) -> Option<u64> {
    ulp_distance(a, b, bits)
}

/// Deterministic pseudo-random numbers (splitmix64) for generated test inputs.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A float in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// An integer in [0, n).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A float in [lo, hi).
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32)
    }
}

/// Output bytes as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs a command with a time limit (a deadlock fails the test instead of hanging it). The
/// command runs in a process group of its own, killed whole at the limit: a `clrace run` killed
/// alone would leave its application holding the pipes, and the test waiting for ever.
pub fn run_limited(command: &mut std::process::Command, limit: std::time::Duration) -> std::process::Output {
    use std::os::unix::process::CommandExt as _;
    use std::process::{Command, Stdio};
    let child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0).spawn().unwrap();
    let id = child.id();
    let started = std::time::Instant::now();
    let watchdog = std::thread::spawn(move || {
        while started.elapsed() < limit {
            std::thread::sleep(std::time::Duration::from_millis(100));
            if std::fs::metadata(format!("/proc/{id}")).is_err() {
                return;
            }
        }
        let _ = Command::new("kill").args(["-9", "--", &format!("-{id}")]).status();
    });
    let output = child.wait_with_output().unwrap();
    let _ = watchdog.join();
    assert!(started.elapsed() < limit, "timed out after {limit:?}: {command:?}");
    output
}

/// Builds the C host `tests/layer/NAME.c` into `dir` and returns the program's path.
pub fn c_host(dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    let host = dir.join(name);
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/layer/{name}.c"));
    let built =
        std::process::Command::new("gcc").args(["-O2", "-o"]).arg(&host).arg(&source).arg("-lOpenCL").output().unwrap();
    assert!(built.status.success(), "gcc: {}", text(&built.stderr));
    host
}

/// The directory of this build's artefacts (`clrace`, `libclrace.so`, `libclrace_icd.so`,
/// `examples/`), after building the libraries and the examples, which `cargo test` does not.
pub fn artefacts() -> &'static std::path::Path {
    static DIR: OnceLock<std::path::PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::path::Path::new(env!("CARGO_BIN_EXE_clrace")).parent().unwrap().to_path_buf();
        let profile = if dir.ends_with("release") { "release" } else { "test" };
        let status = std::process::Command::new(env!("CARGO"))
            .args(["build", "--quiet", "--profile", profile, "-p", "clrace", "-p", "clrace-icd", "--lib", "--examples"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building libclrace.so, libclrace_icd.so and the examples failed");
        for library in ["libclrace.so", "libclrace_icd.so"] {
            assert!(dir.join(library).is_file(), "no {library} in {}", dir.display());
        }
        dir
    })
}

/// Builds OpenCL C `source` as if from a file named `file_name` (the name reports show).
pub fn build_program(file_name: &str, source: &str, options: &str) -> clrace::Program {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(file_name);
    std::fs::write(&path, source).unwrap();
    clrace::Program::from_source(source, &path, options).unwrap_or_else(|e| panic!("{e}"))
}

/// A one-dimensional launch of `kernel`: `global` work-items in groups of `local`.
pub fn launch_1d(kernel: &str, global: u64, local: u64, args: Vec<ArgValue>) -> Launch {
    Launch {
        kernel: kernel.into(),
        work_dim: 1,
        global_offset: [0; 3],
        global_size: [global, 1, 1],
        local_size: [local, 1, 1],
        args,
    }
}

/// Runs `clrace check --format json ARGS SIM` in `dir`: its exit status, the JSON objects it wrote
/// to stderr (one per line; a line that is not JSON fails the test) and its stdout (the dumps).
pub fn check_json(dir: &std::path::Path, sim: &str, args: &[&str]) -> (i32, Vec<serde_json::Value>, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_clrace"))
        .args(["check", "--format", "json"])
        .args(args)
        .arg(sim)
        .current_dir(dir)
        .output()
        .expect("clrace runs");
    let objects = String::from_utf8_lossy(&out.stderr)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{sim}: not JSON ({e}): {l}")))
        .collect();
    (out.status.code().unwrap_or(-1), objects, String::from_utf8_lossy(&out.stdout).into())
}

/// The objects of a JSON report that are findings (all but the summaries).
pub fn findings(values: &[serde_json::Value]) -> Vec<&serde_json::Value> {
    values.iter().filter(|v| v["kind"] != "summary").collect()
}

/// The golden test of a directory of launch files (`tests/checks` and its subdirectories):
/// every `NAME.sim` of `dir` runs through `clrace check --format json ARGS` with 1 and 3 worker
/// threads, whose reports must be identical; one named `*_ok`, the correct twin of the one
/// without the suffix, must exit 0 with no finding, any other exit 1 with some; `also(name,
/// findings)` may name one more problem; and the report must be `NAME.expected`
/// (`CLRACE_BLESS=1` rewrites them). Panics with every problem found.
pub fn golden_reports(
    dir: &std::path::Path,
    args: &[&str],
    also: impl Fn(&str, &[&serde_json::Value]) -> Option<String>,
) {
    let mut sims: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".sim"))
        .collect();
    sims.sort();
    let mut problems = Vec::new();
    let bless = std::env::var_os("CLRACE_BLESS").is_some();
    for sim in &sims {
        let name = sim.trim_end_matches(".sim");
        let report = |threads: &str| {
            let (status, values, _) = check_json(dir, sim, &[args, &["--threads", threads]].concat());
            (status, values)
        };
        let (status, values) = report("1");
        let (status3, values3) = report("3");
        if (status, &values) != (status3, &values3) {
            problems.push(format!("{name}: the report differs between 1 and 3 threads"));
        }
        let found = findings(&values);
        match (name.ends_with("_ok"), status, found.is_empty()) {
            (true, 0, true) | (false, 1, false) => {}
            _ => problems.push(format!("{name}: exit {status} with {} finding(s)", found.len())),
        }
        problems.extend(also(name, &found));
        let text: String = values.iter().map(|v| format!("{v}\n")).collect();
        let golden = dir.join(format!("{name}.expected"));
        if bless {
            std::fs::write(&golden, &text).unwrap();
        } else if std::fs::read_to_string(&golden).ok().as_deref() != Some(text.as_str()) {
            problems.push(format!("{name}: the report is not {name}.expected:\n{text}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// An OpenCL driver the end-to-end layer tests run on, selected explicitly: `OCL_ICD_VENDORS`
/// names a directory holding that driver's `.icd` alone (the system's may list several).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driver {
    /// pocl's CPU device: required (CI installs it).
    Pocl,
    /// Mesa's rusticl on llvmpipe (`RUSTICL_ENABLE=llvmpipe`): optional, skipped with a message
    /// when `libRusticlOpenCL.so.1` is absent.
    Rusticl,
}

impl Driver {
    /// The library the `.icd` file names.
    fn library(self) -> &'static str {
        match self {
            Driver::Pocl => "libpocl.so.2",
            Driver::Rusticl => "libRusticlOpenCL.so.1",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Driver::Pocl => "pocl",
            Driver::Rusticl => "rusticl",
        }
    }

    /// Whether the driver's library is installed where the loader finds it.
    fn installed(self) -> bool {
        let dirs =
            ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib"];
        dirs.iter().any(|d| std::path::Path::new(d).join(self.library()).exists())
    }

    /// A directory holding this driver's `.icd` alone, made once per test process.
    fn vendors(self) -> std::path::PathBuf {
        static ROOT: OnceLock<tempfile::TempDir> = OnceLock::new();
        let root = ROOT.get_or_init(|| {
            let root = tempfile::tempdir().unwrap();
            for driver in [Driver::Pocl, Driver::Rusticl] {
                let dir = root.path().join(driver.name());
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(dir.join(format!("{}.icd", driver.name())), driver.library()).unwrap();
            }
            root
        });
        root.path().join(self.name())
    }

    /// Makes `command` use this driver alone.
    pub fn select(self, command: &mut std::process::Command) -> &mut std::process::Command {
        command.env("OCL_ICD_VENDORS", self.vendors()).env_remove("OCL_ICD_FILENAMES");
        if self == Driver::Rusticl {
            command.env("RUSTICL_ENABLE", "llvmpipe");
        }
        command
    }
}

/// The drivers to run the end-to-end layer tests on: pocl always, rusticl where it is installed
/// (said on stderr when it is not, so that a skipped half is visible in the test log).
pub fn drivers() -> Vec<Driver> {
    let mut drivers = vec![Driver::Pocl];
    if Driver::Rusticl.installed() {
        drivers.push(Driver::Rusticl);
    } else {
        eprintln!(
            "SKIPPED on rusticl: libRusticlOpenCL.so.1 is not installed (ci/setup installs mesa-opencl-icd); pocl only"
        );
    }
    drivers
}

/// The launch files (`*.sim`) of `dir`, sorted by name.
pub fn launch_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "sim"))
        .collect();
    files.sort();
    files
}
