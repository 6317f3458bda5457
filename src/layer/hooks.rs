//! The hooked OpenCL entry points of programs, kernels, arguments, buffers and SVM. Each forwards
//! the application's call unchanged through the table below us and, before or after it, records
//! what the checker needs, inside the boundary of `boundary.rs`: a failure in our part is caught
//! and noted once, and never changes what the application gets back.
//!
//! It sees the side tables of `state.rs`; images and samplers are `images.rs`'s, launches
//! `enqueue.rs`'s.

use std::ffi::{CStr, c_char, c_void};
use std::path::Path;

use opencl_sys::{
    CL_DEVICE_EXTENSIONS, CL_KERNEL_FUNCTION_NAME, CL_PROGRAM_BINARIES, CL_PROGRAM_BINARY_SIZES, CL_PROGRAM_DEVICES,
    CL_PROGRAM_KERNEL_NAMES, CL_SUCCESS, cl_buffer_create_type, cl_buffer_region, cl_context, cl_device_id, cl_int,
    cl_kernel, cl_mem, cl_mem_flags, cl_mem_properties, cl_program, cl_svm_mem_flags, cl_uint,
};

use super::boundary::{below, first, guard, then};
use super::state::{BufferState, Key, ProgramSource, ProgramState, kind};
use super::{Layer, binaries};

type Notify = Option<unsafe extern "C" fn(program: cl_program, user_data: *mut c_void)>;

/// The source strings of `clCreateProgramWithSource`, joined.
///
/// # Safety
/// `strings` holds `count` pointers; `lengths` is NULL or holds `count` lengths (0 = NUL-terminated).
unsafe fn joined_source(count: cl_uint, strings: *mut *const c_char, lengths: *const usize) -> Option<String> {
    if strings.is_null() {
        return None;
    }
    let mut source = Vec::new();
    for i in 0..count as usize {
        // SAFETY: the caller's contract (that of clCreateProgramWithSource).
        unsafe {
            let s = *strings.add(i);
            if s.is_null() {
                return None;
            }
            let len = if lengths.is_null() { 0 } else { *lengths.add(i) };
            if len == 0 {
                source.extend_from_slice(CStr::from_ptr(s).to_bytes());
            } else {
                source.extend_from_slice(std::slice::from_raw_parts(s.cast::<u8>(), len));
            }
        }
    }
    Some(String::from_utf8_lossy(&source).into_owned())
}

pub unsafe extern "C" fn create_program_with_source(
    context: cl_context,
    count: cl_uint,
    strings: *mut *const c_char,
    lengths: *const usize,
    errcode_ret: *mut cl_int,
) -> cl_program {
    let (l, f) = below!(clCreateProgramWithSource);
    // SAFETY: forwarded unchanged.
    let forward = || unsafe { f(context, count, strings, lengths, errcode_ret) };
    then("program", forward, |program| {
        if !program.is_null() {
            // SAFETY: the driver accepted these strings, so they satisfy the contract.
            let source = unsafe { joined_source(count, strings, lengths) };
            let source =
                source.map_or(ProgramSource::Unsupported("its source could not be read"), ProgramSource::Source);
            l.state.lock().add_program(Key::of(program), source);
        }
    })
}

pub unsafe extern "C" fn create_program_with_il(
    context: cl_context,
    il: *const c_void,
    length: usize,
    errcode_ret: *mut cl_int,
) -> cl_program {
    let (l, f) = below!(clCreateProgramWithIL);
    // SAFETY: forwarded unchanged.
    let forward = || unsafe { f(context, il, length, errcode_ret) };
    then("program", forward, |program| {
        if !program.is_null() && !il.is_null() {
            // SAFETY: the driver read `length` bytes at `il`.
            let bytes = unsafe { std::slice::from_raw_parts(il.cast::<u8>(), length) }.to_vec();
            l.state.lock().add_program(Key::of(program), ProgramSource::Il(bytes));
        }
    })
}

pub unsafe extern "C" fn create_program_with_binary(
    context: cl_context,
    num_devices: cl_uint,
    device_list: *const cl_device_id,
    lengths: *const usize,
    binaries: *mut *const u8,
    binary_status: *mut cl_int,
    errcode_ret: *mut cl_int,
) -> cl_program {
    let (l, f) = below!(clCreateProgramWithBinary);
    // SAFETY: forwarded unchanged.
    let forward = || unsafe { f(context, num_devices, device_list, lengths, binaries, binary_status, errcode_ret) };
    then("program", forward, |program| {
        if program.is_null() || lengths.is_null() || binaries.is_null() {
            return;
        }
        // SAFETY: the driver read `num_devices` lengths and binaries of those lengths.
        let known = l.checker.config.binaries.as_deref().and_then(|dir| {
            (0..num_devices as usize).find_map(|i| unsafe {
                let (length, binary) = (*lengths.add(i), *binaries.add(i));
                (!binary.is_null()).then(|| binaries::recall(dir, std::slice::from_raw_parts(binary, length))).flatten()
            })
        });
        let mut state = l.state.lock();
        match known {
            Some((source, options)) => {
                state.add_program(Key::of(program), source);
                state.set_options(Key::of(program), &options, "", Vec::new());
            }
            None => {
                state.add_program(Key::of(program), ProgramSource::Unsupported(UNKNOWN_BINARY));
                let name = state.programs.get(&Key::of(program)).map(|p| p.name.clone()).unwrap_or_default();
                drop(state);
                // Said at once, as well as when one of its kernels is launched: a check that
                // would say it may not run before exit.
                let message = format!("the kernels of {name} go unchecked: {UNKNOWN_BINARY}");
                l.checker.note_once("unknown binary", &message);
            }
        }
    })
}

/// Why a program made from a binary clrace never saw built goes unchecked, and what to do.
const UNKNOWN_BINARY: &str = "it was created from a device binary clrace never saw built from source (binaries are \
     remembered in CLRACE_CACHE_DIR when a program is built from source or SPIR-V); turn off the application's \
     binary cache for one run (PyOpenCL: PYOPENCL_NO_CACHE=1) so that clrace sees the build";

pub unsafe extern "C" fn build_program(
    program: cl_program,
    num_devices: cl_uint,
    device_list: *const cl_device_id,
    options: *const c_char,
    pfn_notify: Notify,
    user_data: *mut c_void,
) -> cl_int {
    let (l, f) = below!(clBuildProgram);
    let record = || {
        // SAFETY: NULL or a NUL-terminated string (clBuildProgram contract).
        let text = unsafe { c_text(options) };
        // SAFETY: the application's device list (or NULL), as passed to the driver.
        let device = unsafe { first_device(l, program, num_devices, device_list) };
        let device_options = device.map(|d| device_extension_options(l, d)).unwrap_or_default();
        l.state.lock().set_options(Key::of(program), &text, &device_options, Vec::new());
    };
    // SAFETY: forwarded unchanged.
    let forward = |()| unsafe { f(program, num_devices, device_list, options, pfn_notify, user_data) };
    // With a callback the build may still run when the call returns: nothing is asked then.
    let after = |rc| {
        if rc == CL_SUCCESS && pfn_notify.is_none() {
            built(l, program);
        }
    };
    guard("build", forward, |_| record(), after)
}

/// After a successful build (or link) of `program`: names it by the kernels the driver found,
/// remembers its binaries (see `binaries.rs`) and writes its text to `CLRACE_SOURCE_OUT`.
fn built(l: &Layer, program: cl_program) {
    let kernels: Vec<String> = program_text(l, program, CL_PROGRAM_KERNEL_NAMES)
        .map(|names| names.split(';').map(str::trim).filter(|n| !n.is_empty()).map(str::to_string).collect())
        .unwrap_or_default();
    let Some(state) = l.state.lock().built(Key::of(program), &kernels) else { return };
    let config = &l.checker.config;
    let remembered = matches!(state.source, ProgramSource::Source(_) | ProgramSource::Il(_));
    if let (Some(dir), true) = (&config.binaries, remembered) {
        for binary in program_binaries(l, program) {
            binaries::remember(dir, &binary, &state.source, &state.options);
        }
    }
    if let Some(dir) = &config.source_out
        && let Err(e) = write_out(dir, &state)
    {
        let message = format!("cannot write program '{}' to CLRACE_SOURCE_OUT={}: {e}", state.name, dir.display());
        l.checker.note_once("source-out", &message);
    }
}

/// Writes a program's text (a SPIR-V program's module, a linked program's units) into `dir`
/// under the names reports give them, each to a temporary name renamed into place. A program
/// named by a file of `CLRACE_SOURCE_DIR` is in that file already.
fn write_out(dir: &Path, program: &ProgramState) -> std::io::Result<()> {
    let files: Vec<(&str, &[u8])> = match &program.source {
        ProgramSource::Source(text) => vec![(&program.name, text.as_bytes())],
        ProgramSource::Il(module) => vec![(&program.name, module)],
        ProgramSource::Linked { units, .. } => {
            units.iter().map(|u| (u.name.as_str(), u.il.as_deref().unwrap_or(u.source.as_bytes()))).collect()
        }
        ProgramSource::Unsupported(_) => Vec::new(),
    };
    for (name, bytes) in files {
        let path = dir.join(name);
        if Path::new(name).is_absolute() || std::fs::read(&path).is_ok_and(|old| old == bytes) {
            continue;
        }
        std::fs::create_dir_all(dir)?;
        let temp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
        let written = std::fs::write(&temp, bytes).and_then(|()| std::fs::rename(&temp, &path));
        if written.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        written?;
    }
    Ok(())
}

/// A text property of a program (`CL_PROGRAM_KERNEL_NAMES`), asked of the driver below us.
fn program_text(l: &Layer, program: cl_program, param: cl_uint) -> Option<String> {
    let get = l.next.clGetProgramInfo?;
    let mut size = 0usize;
    // SAFETY: a size query on the program the application just built.
    if unsafe { get(program, param, 0, std::ptr::null_mut(), &mut size) } != CL_SUCCESS || size == 0 {
        return None;
    }
    let mut bytes = vec![0u8; size];
    // SAFETY: `bytes` holds `size` writable bytes.
    let rc = unsafe { get(program, param, size, bytes.as_mut_ptr().cast(), std::ptr::null_mut()) };
    (rc == CL_SUCCESS).then(|| String::from_utf8_lossy(bytes.split(|&b| b == 0).next().unwrap_or(&[])).into_owned())
}

/// Binaries larger than this are not asked for.
const MAX_BINARY_BYTES: usize = 256 << 20;

/// The binaries of a built program, one per device (`CL_PROGRAM_BINARIES`), asked of the driver
/// below us; those empty or too large are left out.
fn program_binaries(l: &Layer, program: cl_program) -> Vec<Vec<u8>> {
    let Some(get) = l.next.clGetProgramInfo else { return Vec::new() };
    let mut sizes = [0usize; 16];
    let mut written = 0usize;
    // SAFETY: room for 16 sizes; the driver writes `written` bytes of it.
    let rc =
        unsafe { get(program, CL_PROGRAM_BINARY_SIZES, size_of_val(&sizes), sizes.as_mut_ptr().cast(), &mut written) };
    let devices = written / size_of::<usize>();
    if rc != CL_SUCCESS || devices == 0 || devices > sizes.len() {
        return Vec::new();
    }
    let mut binaries: Vec<Vec<u8>> =
        sizes[..devices].iter().map(|&n| if n <= MAX_BINARY_BYTES { vec![0u8; n] } else { Vec::new() }).collect();
    let mut pointers: Vec<*mut u8> =
        binaries.iter_mut().map(|b| if b.is_empty() { std::ptr::null_mut() } else { b.as_mut_ptr() }).collect();
    // SAFETY: one pointer per device, each NULL (skipped by the driver) or to as many bytes as
    // the driver said that device's binary has.
    let rc = unsafe {
        get(
            program,
            CL_PROGRAM_BINARIES,
            size_of_val(pointers.as_slice()),
            pointers.as_mut_ptr().cast(),
            std::ptr::null_mut(),
        )
    };
    if rc != CL_SUCCESS {
        return Vec::new();
    }
    binaries.retain(|b| !b.is_empty());
    binaries
}

/// A C string argument, or empty for NULL.
///
/// # Safety
/// `text` is NULL or NUL-terminated.
unsafe fn c_text(text: *const c_char) -> String {
    // SAFETY: the caller's contract.
    if text.is_null() { String::new() } else { unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned() }
}

pub unsafe extern "C" fn compile_program(
    program: cl_program,
    num_devices: cl_uint,
    device_list: *const cl_device_id,
    options: *const c_char,
    num_input_headers: cl_uint,
    input_headers: *const cl_program,
    header_include_names: *mut *const c_char,
    pfn_notify: Notify,
    user_data: *mut c_void,
) -> cl_int {
    let (l, f) = below!(clCompileProgram);
    let record = || {
        // SAFETY: clCompileProgram's contract: a string, and `num_input_headers` programs and names.
        let (text, device) = unsafe { (c_text(options), first_device(l, program, num_devices, device_list)) };
        let device_options = device.map(|d| device_extension_options(l, d)).unwrap_or_default();
        let mut state = l.state.lock();
        let mut headers = Vec::new();
        if !input_headers.is_null() && !header_include_names.is_null() {
            for i in 0..num_input_headers as usize {
                // SAFETY: as above.
                let (header, name) = unsafe { (*input_headers.add(i), c_text(*header_include_names.add(i))) };
                if let Some(text) = state.source_text(Key::of(header)) {
                    headers.push((name, text));
                }
            }
        }
        state.set_options(Key::of(program), &text, &device_options, headers);
    };
    // SAFETY: forwarded unchanged.
    let forward = || unsafe {
        f(
            program,
            num_devices,
            device_list,
            options,
            num_input_headers,
            input_headers,
            header_include_names,
            pfn_notify,
            user_data,
        )
    };
    first("build", record, forward)
}

/// The device a build is for: the first of the list, else the program's first.
///
/// # Safety
/// `device_list` holds `num_devices` handles, or is NULL.
unsafe fn first_device(
    l: &Layer,
    program: cl_program,
    num_devices: cl_uint,
    device_list: *const cl_device_id,
) -> Option<cl_device_id> {
    if num_devices > 0 && !device_list.is_null() {
        // SAFETY: the caller's contract.
        return Some(unsafe { *device_list });
    }
    let get = l.next.clGetProgramInfo?;
    let mut devices = [std::ptr::null_mut::<c_void>(); 16];
    let mut size = 0usize;
    // SAFETY: room for 16 handles; the driver writes at most `size` bytes of it.
    let rc = unsafe { get(program, CL_PROGRAM_DEVICES, size_of_val(&devices), devices.as_mut_ptr().cast(), &mut size) };
    (rc == CL_SUCCESS && size >= size_of::<cl_device_id>()).then(|| devices[0] as cl_device_id)
}

/// `-Xclang -cl-ext=-all,+...`: our compiler sees exactly the device's extensions, so that
/// `#ifdef cl_khr_fp64` means in the emulator what it means on the device.
fn device_extension_options(l: &Layer, device: cl_device_id) -> String {
    let Some(get) = l.next.clGetDeviceInfo else { return String::new() };
    let mut size = 0usize;
    // SAFETY: a size query.
    if unsafe { get(device, CL_DEVICE_EXTENSIONS, 0, std::ptr::null_mut(), &mut size) } != CL_SUCCESS {
        return String::new();
    }
    let mut bytes = vec![0u8; size];
    // SAFETY: `bytes` holds `size` writable bytes.
    if unsafe { get(device, CL_DEVICE_EXTENSIONS, size, bytes.as_mut_ptr().cast(), std::ptr::null_mut()) } != CL_SUCCESS
    {
        return String::new();
    }
    let text = String::from_utf8_lossy(bytes.split(|&b| b == 0).next().unwrap_or(&[])).into_owned();
    let plus: Vec<String> = text.split_whitespace().map(|e| format!("+{e}")).collect();
    format!("-Xclang -cl-ext=-all{}{}", if plus.is_empty() { "" } else { "," }, plus.join(","))
}

pub unsafe extern "C" fn link_program(
    context: cl_context,
    num_devices: cl_uint,
    device_list: *const cl_device_id,
    options: *const c_char,
    num_input_programs: cl_uint,
    input_programs: *const cl_program,
    pfn_notify: Notify,
    user_data: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_program {
    let (l, f) = below!(clLinkProgram);
    // SAFETY: forwarded unchanged.
    let forward = || unsafe {
        f(
            context,
            num_devices,
            device_list,
            options,
            num_input_programs,
            input_programs,
            pfn_notify,
            user_data,
            errcode_ret,
        )
    };
    then("program", forward, |program| {
        if !program.is_null() {
            let inputs: Vec<Key<kind::Program>> = if input_programs.is_null() {
                Vec::new()
            } else {
                // SAFETY: the driver read `num_input_programs` handles here.
                unsafe { std::slice::from_raw_parts(input_programs, num_input_programs as usize) }
                    .iter()
                    .map(|&p| Key::of(p))
                    .collect()
            };
            // SAFETY: NULL or NUL-terminated.
            let options = unsafe { c_text(options) };
            let mut state = l.state.lock();
            let source = state.linked(&inputs, &options);
            state.add_program(Key::of(program), source);
            drop(state);
            if pfn_notify.is_none() {
                built(l, program);
            }
        }
    })
}

/// A kernel's function name, asked of the driver.
fn kernel_name(l: &Layer, kernel: cl_kernel) -> Option<String> {
    let get = l.next.clGetKernelInfo?;
    let mut size = 0usize;
    // SAFETY: a size query on a valid kernel handle.
    if unsafe { get(kernel, CL_KERNEL_FUNCTION_NAME, 0, std::ptr::null_mut(), &mut size) } != CL_SUCCESS {
        return None;
    }
    let mut bytes = vec![0u8; size];
    // SAFETY: `bytes` holds `size` writable bytes.
    let rc = unsafe { get(kernel, CL_KERNEL_FUNCTION_NAME, size, bytes.as_mut_ptr().cast(), std::ptr::null_mut()) };
    (rc == CL_SUCCESS).then(|| String::from_utf8_lossy(bytes.split(|&b| b == 0).next().unwrap_or(&[])).into_owned())
}

pub unsafe extern "C" fn create_kernel(
    program: cl_program,
    kernel_name_ptr: *const c_char,
    errcode_ret: *mut cl_int,
) -> cl_kernel {
    let (l, f) = below!(clCreateKernel);
    // SAFETY: forwarded unchanged.
    let forward = || unsafe { f(program, kernel_name_ptr, errcode_ret) };
    then("kernel", forward, |kernel| {
        if !kernel.is_null() && !kernel_name_ptr.is_null() {
            // SAFETY: the driver found a kernel by this NUL-terminated name.
            let name = unsafe { CStr::from_ptr(kernel_name_ptr) }.to_string_lossy().into_owned();
            l.state.lock().add_kernel(Key::of(kernel), Key::of(program), name);
        }
    })
}

pub unsafe extern "C" fn create_kernels_in_program(
    program: cl_program,
    num_kernels: cl_uint,
    kernels: *mut cl_kernel,
    num_kernels_ret: *mut cl_uint,
) -> cl_int {
    let (l, f) = below!(clCreateKernelsInProgram);
    // SAFETY: forwarded unchanged.
    let forward = || unsafe { f(program, num_kernels, kernels, num_kernels_ret) };
    then("kernel", forward, |rc| {
        if rc == CL_SUCCESS && !kernels.is_null() {
            for i in 0..num_kernels as usize {
                // SAFETY: on success the driver wrote `num_kernels` handles (or NULLs past the count).
                let kernel = unsafe { *kernels.add(i) };
                if kernel.is_null() {
                    continue;
                }
                if let Some(name) = kernel_name(l, kernel) {
                    l.state.lock().add_kernel(Key::of(kernel), Key::of(program), name);
                }
            }
        }
    })
}

pub unsafe extern "C" fn clone_kernel(source_kernel: cl_kernel, errcode_ret: *mut cl_int) -> cl_kernel {
    let (l, f) = below!(clCloneKernel);
    // SAFETY: forwarded unchanged.
    let forward = || unsafe { f(source_kernel, errcode_ret) };
    then("kernel", forward, |kernel| {
        if !kernel.is_null() {
            let mut state = l.state.lock();
            match state.kernels.get(&Key::of(source_kernel)).cloned() {
                Some(mut copy) => {
                    copy.launches = 0;
                    state.kernels.insert(Key::of(kernel), copy);
                }
                None => {
                    state.kernels.remove(&Key::of(kernel));
                }
            }
        }
    })
}

pub unsafe extern "C" fn set_kernel_arg(
    kernel: cl_kernel,
    arg_index: cl_uint,
    arg_size: usize,
    arg_value: *const c_void,
) -> cl_int {
    let (l, f) = below!(clSetKernelArg);
    // SAFETY: forwarded unchanged.
    let forward = || unsafe { f(kernel, arg_index, arg_size, arg_value) };
    then("argument", forward, |rc| {
        if rc == CL_SUCCESS {
            // SAFETY: the driver accepted `arg_size` readable bytes at `arg_value` (or NULL).
            let value =
                (!arg_value.is_null()).then(|| unsafe { std::slice::from_raw_parts(arg_value.cast::<u8>(), arg_size) });
            l.state.lock().set_arg(Key::of(kernel), arg_index as usize, arg_size, value);
        }
    })
}

fn record_buffer(l: &Layer, mem: cl_mem, size: usize, flags: cl_mem_flags) {
    if !mem.is_null() {
        l.state.lock().add_buffer(Key::of(mem), BufferState { size, parent: None, flags });
    }
}

pub unsafe extern "C" fn create_buffer(
    context: cl_context,
    flags: cl_mem_flags,
    size: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    let (l, f) = below!(clCreateBuffer);
    // SAFETY: forwarded unchanged.
    let forward = || unsafe { f(context, flags, size, host_ptr, errcode_ret) };
    then("buffer", forward, |mem| record_buffer(l, mem, size, flags))
}

pub unsafe extern "C" fn create_buffer_with_properties(
    context: cl_context,
    properties: *const cl_mem_properties,
    flags: cl_mem_flags,
    size: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    let (l, f) = below!(clCreateBufferWithProperties);
    // SAFETY: forwarded unchanged.
    let forward = || unsafe { f(context, properties, flags, size, host_ptr, errcode_ret) };
    then("buffer", forward, |mem| record_buffer(l, mem, size, flags))
}

pub unsafe extern "C" fn create_sub_buffer(
    buffer: cl_mem,
    flags: cl_mem_flags,
    create_type: cl_buffer_create_type,
    create_info: *const c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    let (l, f) = below!(clCreateSubBuffer);
    // SAFETY: forwarded unchanged.
    let forward = || unsafe { f(buffer, flags, create_type, create_info, errcode_ret) };
    then("buffer", forward, |mem| {
        if !mem.is_null() && !create_info.is_null() {
            // SAFETY: the only create type is a region, which the driver just read.
            let region = unsafe { *create_info.cast::<cl_buffer_region>() };
            let sub = BufferState { size: region.size, parent: Some((Key::of(buffer), region.origin)), flags };
            l.state.lock().add_buffer(Key::of(mem), sub);
        }
    })
}

pub unsafe extern "C" fn svm_alloc(
    context: cl_context,
    flags: cl_svm_mem_flags,
    size: usize,
    alignment: cl_uint,
) -> *mut c_void {
    let (l, f) = below!(clSVMAlloc);
    // SAFETY: forwarded unchanged.
    let forward = || unsafe { f(context, flags, size, alignment) };
    then("svm", forward, |pointer| {
        if !pointer.is_null() {
            l.state.lock().svm.insert(pointer as usize, size);
        }
    })
}

pub unsafe extern "C" fn svm_free(context: cl_context, pointer: *mut c_void) {
    let (l, f) = below!(clSVMFree);
    let record = || {
        l.state.lock().svm.remove(&(pointer as usize));
    };
    // SAFETY: forwarded unchanged.
    let forward = || unsafe { f(context, pointer) };
    first("svm", record, forward)
}

pub unsafe extern "C" fn set_kernel_arg_svm_pointer(
    kernel: cl_kernel,
    arg_index: cl_uint,
    arg_value: *const c_void,
) -> cl_int {
    let (l, f) = below!(clSetKernelArgSVMPointer);
    // SAFETY: forwarded unchanged.
    let forward = || unsafe { f(kernel, arg_index, arg_value) };
    then("argument", forward, |rc| {
        if rc == CL_SUCCESS {
            l.state.lock().set_svm_arg(Key::of(kernel), arg_index as usize, arg_value as usize);
        }
    })
}
