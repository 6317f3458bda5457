//! Error paths a real driver cannot be made to take on demand, against a recording fake
//! dispatch table: whatever happens in the layer, the call reaches the driver and the
//! application gets the driver's answer.

use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicI32, Ordering};

use opencl_sys::cl_icd::cl_icd_dispatch;
use opencl_sys::{
    CL_INVALID_KERNEL, CL_INVALID_VALUE, CL_MEM_OBJECT_IMAGE2D, CL_OUT_OF_RESOURCES, CL_SUCCESS, CL_UNORM_INT8,
    cl_bool, cl_command_queue, cl_context, cl_device_id, cl_event, cl_image_desc, cl_image_format, cl_int, cl_kernel,
    cl_mem, cl_mem_flags, cl_program, cl_uint,
};
use parking_lot::Mutex;

use super::dispatch::ENTRIES;
use super::state::Key;
use super::{clGetLayerInfo, clInitLayer};

/// What the fake driver saw.
static CALLS: Mutex<Vec<String>> = Mutex::new(Vec::new());
/// What the fake `clEnqueueReadBuffer` answers.
static READ_RESULT: AtomicI32 = AtomicI32::new(CL_SUCCESS);

fn seen(call: String) {
    CALLS.lock().push(call);
}

unsafe extern "C" fn fake_create_program(
    _: cl_context,
    count: cl_uint,
    strings: *mut *const c_char,
    _: *const usize,
    errcode: *mut cl_int,
) -> cl_program {
    seen(format!("clCreateProgramWithSource {count} {}", strings.is_null()));
    // SAFETY: the test passes a valid out-pointer.
    unsafe { *errcode = CL_INVALID_VALUE };
    std::ptr::null_mut()
}

unsafe extern "C" fn fake_create_buffer(
    _: cl_context,
    _: cl_mem_flags,
    size: usize,
    _: *mut c_void,
    _: *mut cl_int,
) -> cl_mem {
    seen(format!("clCreateBuffer {size}"));
    0x1000 as cl_mem
}

unsafe extern "C" fn fake_set_arg(kernel: cl_kernel, index: cl_uint, _: usize, _: *const c_void) -> cl_int {
    seen(format!("clSetKernelArg {kernel:?} {index}"));
    if kernel.is_null() { CL_INVALID_KERNEL } else { CL_SUCCESS }
}

unsafe extern "C" fn fake_read(
    _: cl_command_queue,
    _: cl_mem,
    _: cl_bool,
    _: usize,
    size: usize,
    _: *mut c_void,
    _: cl_uint,
    _: *const cl_event,
    _: *mut cl_event,
) -> cl_int {
    seen(format!("clEnqueueReadBuffer {size}"));
    READ_RESULT.load(Ordering::Relaxed)
}

unsafe extern "C" fn fake_ndrange(
    _: cl_command_queue,
    kernel: cl_kernel,
    _: cl_uint,
    _: *const usize,
    _: *const usize,
    _: *const usize,
    waits: cl_uint,
    _: *const cl_event,
    _: *mut cl_event,
) -> cl_int {
    seen(format!("clEnqueueNDRangeKernel {kernel:?} waits={waits}"));
    if kernel.is_null() { CL_INVALID_KERNEL } else { CL_SUCCESS }
}

unsafe extern "C" fn fake_build(
    _: cl_program,
    _: cl_uint,
    _: *const cl_device_id,
    options: *const c_char,
    _: Option<unsafe extern "C" fn(cl_program, *mut c_void)>,
    _: *mut c_void,
) -> cl_int {
    seen(format!("clBuildProgram null_options={}", options.is_null()));
    CL_INVALID_VALUE
}

unsafe extern "C" fn fake_marker(_: cl_command_queue, waits: cl_uint, _: *const cl_event, _: *mut cl_event) -> cl_int {
    seen(format!("clEnqueueMarkerWithWaitList waits={waits}"));
    CL_SUCCESS
}

unsafe extern "C" fn fake_callback(
    _: cl_event,
    _: cl_int,
    _: Option<unsafe extern "C" fn(cl_event, cl_int, *mut c_void)>,
    _: *mut c_void,
) -> cl_int {
    seen("clSetEventCallback".into());
    CL_SUCCESS
}

unsafe extern "C" fn fake_release_event(_: cl_event) -> cl_int {
    seen("clReleaseEvent".into());
    CL_SUCCESS
}

unsafe extern "C" fn fake_svm_alloc(_: cl_context, _: u64, size: usize, _: cl_uint) -> *mut c_void {
    seen(format!("clSVMAlloc {size}"));
    0x9000_0000usize as *mut c_void
}

unsafe extern "C" fn fake_set_arg_svm(kernel: cl_kernel, index: cl_uint, value: *const c_void) -> cl_int {
    seen(format!("clSetKernelArgSVMPointer {kernel:?} {index} {value:?}"));
    CL_SUCCESS
}

unsafe extern "C" fn fake_svm_memcpy(
    _: cl_command_queue,
    blocking: cl_bool,
    _: *mut c_void,
    source: *const c_void,
    size: usize,
    _: cl_uint,
    _: *const cl_event,
    _: *mut cl_event,
) -> cl_int {
    seen(format!("clEnqueueSVMMemcpy blocking={blocking} {source:?} {size}"));
    READ_RESULT.load(Ordering::Relaxed)
}

unsafe extern "C" fn fake_create_image(
    _: cl_context,
    _: cl_mem_flags,
    format: *const cl_image_format,
    _: *const cl_image_desc,
    _: *mut c_void,
    _: *mut cl_int,
) -> cl_mem {
    // SAFETY: the test passes a valid format.
    seen(format!("clCreateImage order={:#x}", unsafe { (*format).image_channel_order }));
    0x2000 as cl_mem
}

unsafe extern "C" fn fake_read_image(
    _: cl_command_queue,
    _: cl_mem,
    _: cl_bool,
    _: *const usize,
    _: *const usize,
    _: usize,
    _: usize,
    _: *mut c_void,
    _: cl_uint,
    _: *const cl_event,
    _: *mut cl_event,
) -> cl_int {
    seen("clEnqueueReadImage".into());
    CL_SUCCESS
}

fn fake_table() -> cl_icd_dispatch {
    // SAFETY: an all-zero table is all `None`.
    let mut t: cl_icd_dispatch = unsafe { std::mem::zeroed() };
    t.clCreateProgramWithSource = Some(fake_create_program);
    t.clCreateBuffer = Some(fake_create_buffer);
    t.clSetKernelArg = Some(fake_set_arg);
    t.clEnqueueReadBuffer = Some(fake_read);
    t.clEnqueueNDRangeKernel = Some(fake_ndrange);
    t.clBuildProgram = Some(fake_build);
    t.clEnqueueMarkerWithWaitList = Some(fake_marker);
    t.clSetEventCallback = Some(fake_callback);
    t.clReleaseEvent = Some(fake_release_event);
    t.clSVMAlloc = Some(fake_svm_alloc);
    t.clSetKernelArgSVMPointer = Some(fake_set_arg_svm);
    t.clEnqueueSVMMemcpy = Some(fake_svm_memcpy);
    t.clCreateImage = Some(fake_create_image);
    t.clEnqueueReadImage = Some(fake_read_image);
    t
}

/// Launches one work-item of `kernel` while the fake driver fails every snapshot copy.
fn launch_with_failing_copies(t: &cl_icd_dispatch, queue: usize, kernel: usize) -> cl_int {
    READ_RESULT.store(CL_OUT_OF_RESOURCES, Ordering::Relaxed);
    let rc = launch_one(t, queue, kernel);
    READ_RESULT.store(CL_SUCCESS, Ordering::Relaxed);
    rc
}

/// Launches one work-item of `kernel` through our hook, as an application would.
fn launch_one(t: &cl_icd_dispatch, queue: usize, kernel: usize) -> cl_int {
    let global = [1usize];
    let none = std::ptr::null();
    // SAFETY: calling our hook as an application would, with valid (fake) handles.
    unsafe {
        t.clEnqueueNDRangeKernel.unwrap()(
            queue as cl_command_queue,
            kernel as cl_kernel,
            1,
            none,
            global.as_ptr(),
            none,
            0,
            std::ptr::null(),
            std::ptr::null_mut(),
        )
    }
}

/// The tests share the fake driver's call log: one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Initialises the layer over the fake table (once per test process) and returns our table.
fn layer_table() -> &'static cl_icd_dispatch {
    static TABLE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let address = *TABLE.get_or_init(|| {
        let fake = Box::leak(Box::new(fake_table()));
        let (mut count, mut ours) = (0 as cl_uint, std::ptr::null::<cl_icd_dispatch>());
        // SAFETY: a full table and valid out-pointers.
        let rc = unsafe { clInitLayer(149, fake, &mut count, &mut ours) };
        assert_eq!(rc, CL_SUCCESS);
        assert_eq!(count as usize, ENTRIES.min(149), "never more entries than the loader offered");
        ours as usize
    });
    // SAFETY: the layer's table lives for the process.
    unsafe { &*(address as *const cl_icd_dispatch) }
}

fn take_calls() -> Vec<String> {
    std::mem::take(&mut *CALLS.lock())
}

#[test]
fn reports_version_100_and_a_name() {
    let mut version = 0u32;
    let mut size = 0usize;
    // SAFETY: a 4-byte out-value.
    let rc = unsafe { clGetLayerInfo(0x4240, 4, (&mut version as *mut u32).cast(), &mut size) };
    assert_eq!((rc, version, size), (CL_SUCCESS, 100, 4));
    let mut name = [0u8; 128];
    // SAFETY: a 128-byte out-buffer.
    let rc = unsafe { clGetLayerInfo(0x4241, name.len(), name.as_mut_ptr().cast(), &mut size) };
    assert_eq!(rc, CL_SUCCESS);
    assert!(String::from_utf8_lossy(&name[..size]).starts_with("clrace"));
    // SAFETY: a too-small buffer is refused, not overrun.
    assert_eq!(unsafe { clGetLayerInfo(0x4241, 2, name.as_mut_ptr().cast(), std::ptr::null_mut()) }, CL_INVALID_VALUE);
}

#[test]
fn errors_are_the_drivers_and_every_call_is_forwarded() {
    let _serial = ONE_AT_A_TIME.lock();
    let t = layer_table();
    let _ = take_calls();

    // A NULL source list: the driver says no, we do not crash.
    let mut err = 0;
    // SAFETY: calling our hook the way a (careless) application would.
    let program = unsafe {
        t.clCreateProgramWithSource.unwrap()(std::ptr::null_mut(), 1, std::ptr::null_mut(), std::ptr::null(), &mut err)
    };
    assert!(program.is_null());
    assert_eq!(err, CL_INVALID_VALUE);

    // Build options NULL, and the driver's failure comes back.
    // SAFETY: as above.
    let rc = unsafe {
        t.clBuildProgram.unwrap()(0x77 as cl_program, 0, std::ptr::null(), std::ptr::null(), None, std::ptr::null_mut())
    };
    assert_eq!(rc, CL_INVALID_VALUE);

    // An argument for an unknown (NULL) kernel.
    let mem = 0x1000usize;
    // SAFETY: as above.
    let rc = unsafe { t.clSetKernelArg.unwrap()(std::ptr::null_mut(), 0, 8, (&mem as *const usize).cast()) };
    assert_eq!(rc, CL_INVALID_KERNEL);

    // A launch of an unknown kernel: forwarded untouched, no snapshot attempted.
    let global = [64usize];
    // SAFETY: as above.
    let rc = unsafe {
        t.clEnqueueNDRangeKernel.unwrap()(
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            1,
            std::ptr::null(),
            global.as_ptr(),
            std::ptr::null(),
            0,
            std::ptr::null(),
            std::ptr::null_mut(),
        )
    };
    assert_eq!(rc, CL_INVALID_KERNEL);

    assert_eq!(
        take_calls(),
        vec![
            "clCreateProgramWithSource 1 true".to_string(),
            "clBuildProgram null_options=true".into(),
            format!("clSetKernelArg {:?} 0", std::ptr::null_mut::<c_void>()),
            format!("clEnqueueNDRangeKernel {:?} waits=0", std::ptr::null_mut::<c_void>()),
        ]
    );
}

#[test]
fn a_failing_snapshot_read_still_launches_the_kernel_as_asked() {
    let _serial = ONE_AT_A_TIME.lock();
    let t = layer_table();
    // A kernel the layer knows, with a buffer argument.
    {
        let layer = super::layer().unwrap();
        let mut state = layer.state.lock();
        state.add_program(
            Key::at(0x50),
            super::state::ProgramSource::Source("kernel void k(global int *a) { a[0] = 1; }".into()),
        );
        state.add_kernel(Key::at(0x60), Key::at(0x50), "k".into());
    }
    let mut err = 0;
    // SAFETY: calling our hooks as an application would.
    let mem = unsafe { t.clCreateBuffer.unwrap()(std::ptr::null_mut(), 0, 256, std::ptr::null_mut(), &mut err) };
    // SAFETY: as above.
    unsafe { t.clSetKernelArg.unwrap()(0x60 as cl_kernel, 0, 8, (&mem as *const cl_mem).cast()) };
    let _ = take_calls();
    let rc = launch_with_failing_copies(t, 0x70, 0x60);
    assert_eq!(rc, CL_SUCCESS, "the driver's answer");
    assert_eq!(
        take_calls(),
        vec!["clEnqueueReadBuffer 256".to_string(), "clEnqueueNDRangeKernel 0x60 waits=0".into()],
        "the launch goes out with the application's own wait list"
    );
}

#[test]
fn the_target_table_is_never_read_past_the_loaders_count() {
    // A table whose entries past 10 are poison: copying 10 entries must leave ours NULL there.
    let poison = [0xdead_beef_usize; 200];
    // SAFETY: `poison` holds more than 10 readable entries.
    let copy = unsafe { super::dispatch::below(poison.as_ptr().cast(), 10) };
    // SAFETY: the table is a plain array of pointer-sized entries.
    let words: [usize; ENTRIES] = unsafe { std::mem::transmute(copy) };
    assert!(words[..10].iter().all(|&w| w == 0xdead_beef));
    assert!(words[10..].iter().all(|&w| w == 0), "nothing past the count the loader gave");
    // A loader offering more entries than our headers know (the newest has 150): we stop at ours.
    // SAFETY: `poison` holds 200 entries.
    let copy = unsafe { super::dispatch::below(poison.as_ptr().cast(), 200) };
    // SAFETY: as above.
    let words: [usize; ENTRIES] = unsafe { std::mem::transmute(copy) };
    assert!(words.iter().all(|&w| w == 0xdead_beef));
}

#[test]
fn svm_arguments_are_copied_whole_from_their_allocation() {
    let _serial = ONE_AT_A_TIME.lock();
    let t = layer_table();
    {
        let layer = super::layer().unwrap();
        let mut state = layer.state.lock();
        state.add_program(
            Key::at(0x51),
            super::state::ProgramSource::Source("kernel void s(global int *a) { a[0] = 1; }".into()),
        );
        state.add_kernel(Key::at(0x61), Key::at(0x51), "s".into());
    }
    // SAFETY: calling our hooks as an application would.
    let base = unsafe { t.clSVMAlloc.unwrap()(std::ptr::null_mut(), 0, 4096, 0) };
    let inside = (base as usize + 64) as *const c_void;
    // SAFETY: as above.
    unsafe { t.clSetKernelArgSVMPointer.unwrap()(0x61 as cl_kernel, 0, inside) };
    let _ = take_calls();
    // The copy fails here (no device behind it): the launch still goes out, as asked.
    let rc = launch_with_failing_copies(t, 0x71, 0x61);
    assert_eq!(rc, CL_SUCCESS);
    assert_eq!(
        take_calls(),
        vec![format!("clEnqueueSVMMemcpy blocking=0 {base:?} 4096"), "clEnqueueNDRangeKernel 0x61 waits=0".into()],
        "the whole allocation is copied, without blocking, from its base"
    );
}

#[test]
fn an_image_of_a_channel_order_the_emulator_does_not_know_is_never_read_and_its_launch_goes_out() {
    let _serial = ONE_AT_A_TIME.lock();
    let t = layer_table();
    {
        let layer = super::layer().unwrap();
        let mut state = layer.state.lock();
        let source = "kernel void i(read_only image2d_t img, global int *a) { a[0] = 1; }";
        state.add_program(Key::at(0x52), super::state::ProgramSource::Source(source.into()));
        state.add_kernel(Key::at(0x62), Key::at(0x52), "i".into());
    }
    // CL_sRGBA: a format a driver may offer and the emulator does not size.
    let format = cl_image_format { image_channel_order: 0x10C1, image_channel_data_type: CL_UNORM_INT8 };
    // SAFETY: an all-zero desc is valid; the fields set describe a 16x16 2D image.
    let mut desc: cl_image_desc = unsafe { std::mem::zeroed() };
    (desc.image_type, desc.image_width, desc.image_height) = (CL_MEM_OBJECT_IMAGE2D, 16, 16);
    let mut err = 0;
    // SAFETY: calling our hooks as an application would.
    let image =
        unsafe { t.clCreateImage.unwrap()(std::ptr::null_mut(), 0, &format, &desc, std::ptr::null_mut(), &mut err) };
    // SAFETY: as above.
    unsafe { t.clSetKernelArg.unwrap()(0x62 as cl_kernel, 0, 8, (&image as *const cl_mem).cast()) };
    let _ = take_calls();
    let rc = launch_one(t, 0x72, 0x62);
    assert_eq!(rc, CL_SUCCESS);
    assert_eq!(
        take_calls(),
        vec!["clEnqueueNDRangeKernel 0x62 waits=0".to_string()],
        "no read into a buffer sized by a format we do not know"
    );
}

#[test]
fn a_panic_of_ours_is_one_note_in_the_configured_output_without_backtrace() {
    let _serial = ONE_AT_A_TIME.lock();
    let file = std::env::temp_dir().join(format!("clrace-panic-{}.txt", std::process::id()));
    let output = super::output::Output::open(Some(&file), crate::report::Format::Text);
    output.catch_panics();
    for _ in 0..2 {
        let caught = std::panic::catch_unwind(|| panic!("the checker lost its way"));
        assert!(caught.is_err());
    }
    let _ = std::panic::take_hook(); // back to the default hook for the other tests
    let written = std::fs::read_to_string(&file).unwrap();
    let _ = std::fs::remove_file(&file);
    assert_eq!(written.lines().count(), 1, "once per place: {written}");
    assert!(written.starts_with("clrace: internal error at src/layer/tests.rs:"), "{written}");
    assert!(written.contains("the checker lost its way") && !written.contains("backtrace"), "{written}");
}
