//! Launch hooks: snapshot the buffers a launch reads without blocking, forward the launch
//! unchanged, and hand the snapshot to the checker once it is complete.
//!
//! The protocol: on the application's own queue and with its own wait list, enqueue a
//! non-blocking read of every buffer the kernel receives (the root buffer once, however many
//! arguments or sub-buffers alias it), then a marker after the reads. The launch is forwarded
//! with the reads added to its wait list, so that even an out-of-order queue cannot run it before
//! they took their copy. A callback on the marker passes the job to the checker. Nothing here
//! waits for the device: a launch gated on a user event the application sets later stays gated.

use std::ffi::c_void;

use opencl_sys::{
    CL_COMPLETE, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, CL_FALSE, CL_INVALID_OPERATION, CL_MEM_CONTEXT,
    CL_MEM_HOST_NO_ACCESS, CL_MEM_HOST_WRITE_ONLY, CL_MEM_READ_WRITE, CL_QUEUE_CONTEXT, CL_SUCCESS, cl_command_queue,
    cl_context, cl_event, cl_int, cl_kernel, cl_mem, cl_uint,
};

use super::admission::KernelKey;
use super::checker::{Gate, Job, JobArg, Ticket};
use super::config::Order;
use super::hooks::record;
use super::state::ArgState;
use super::{Layer, layer};
use crate::exec::image::{ImageDesc, ImageKind};
use crate::exec::memory::BufferMode;

/// A launch as the application made it.
struct Geometry {
    work_dim: u32,
    offset: [u64; 3],
    global: [u64; 3],
    local: Option<[u64; 3]>,
}

/// What a root to copy is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum RootKind {
    /// A buffer: read with `clEnqueueReadBuffer`.
    Buffer,
    /// An image: read packed with `clEnqueueReadImage`.
    Image(ImageDesc),
    /// An SVM allocation (`handle` is its base address): copied with `clEnqueueSVMMemcpy`.
    Svm,
}

/// A buffer, image or SVM allocation to copy: its handle and size, and how.
#[derive(Clone, Copy)]
struct Root {
    handle: usize,
    size: usize,
    kind: RootKind,
    /// False for memory objects the host may not read (`CL_MEM_HOST_NO_ACCESS`,
    /// `CL_MEM_HOST_WRITE_ONLY`): they are copied through a scratch buffer.
    host_readable: bool,
}

/// Whether the host may read a memory object created with `flags`.
fn host_readable(flags: u64) -> bool {
    flags & (CL_MEM_HOST_NO_ACCESS | CL_MEM_HOST_WRITE_ONLY) == 0
}

/// What a launch needs read, and the job to fill.
struct Plan {
    job: Job,
    /// The root buffers to read, in job order.
    roots: Vec<Root>,
}

/// Why a launch is forwarded without a plan.
enum Unplanned {
    /// The configuration leaves it out (`CLRACE_KERNELS`, `CLRACE_FIRST_LAUNCHES`).
    Filtered(KernelKey),
    /// It cannot be snapshotted safely: why, named once per kernel.
    Unchecked(KernelKey, String),
    /// A kernel handle we never saw created.
    UnknownKernel,
}

/// Decides whether and how to check this launch.
fn plan(l: &Layer, kernel: cl_kernel, geometry: Geometry) -> Result<Plan, Unplanned> {
    let mut state = l.state.lock();
    let k = state.kernels.get_mut(&(kernel as usize)).ok_or(Unplanned::UnknownKernel)?;
    k.launches += 1;
    let key = KernelKey { program: k.program.file_name(), name: k.name.clone() };
    let config = &l.checker.config;
    if !config.wants(&k.name) || config.first_launches.is_some_and(|n| k.launches > n) {
        return Err(Unplanned::Filtered(key));
    }
    let kernel_state = k.clone();
    let unchecked = |why: String| Unplanned::Unchecked(key.clone(), why);
    let mut roots: Vec<Root> = Vec::new();
    let mut modes: Vec<Option<BufferMode>> = Vec::new();
    let mut args = Vec::with_capacity(kernel_state.args.len());
    for (i, arg) in kernel_state.args.iter().enumerate() {
        let job_arg = match arg {
            Some(ArgState::Buffer(handle)) => {
                let unknown = || unchecked(format!("argument {i} is a buffer the layer did not see created"));
                let (root, offset) = state.root_of(*handle).ok_or_else(unknown)?;
                let root_state = state.buffers.get(&root).ok_or_else(unknown)?;
                let host_readable = host_readable(root_state.flags);
                let root = Root { handle: root, size: root_state.size, kind: RootKind::Buffer, host_readable };
                let index = root_index(&mut roots, root);
                // Arguments bound to one root with different modes leave it read-write.
                let mode = state.access_mode(*handle);
                modes.resize(roots.len(), None);
                let known = modes[index].get_or_insert(mode);
                if *known != mode {
                    *known = BufferMode::ReadWrite;
                }
                JobArg::Buffer { index, offset: offset as u64 }
            }
            Some(ArgState::Svm(pointer)) => {
                let (base, size) = state
                    .svm_allocation(*pointer)
                    .ok_or_else(|| unchecked("an SVM argument points outside every clSVMAlloc allocation".into()))?;
                let index =
                    root_index(&mut roots, Root { handle: base, size, kind: RootKind::Svm, host_readable: true });
                JobArg::Buffer { index, offset: (pointer - base) as u64 }
            }
            Some(ArgState::Image(handle)) => {
                let image = *state.images.get(handle).ok_or_else(|| {
                    unchecked(format!("argument {i} is an image of a kind the layer does not follow"))
                })?;
                // Never read an image into a buffer sized by a format we do not understand.
                image.desc.check().map_err(|why| unchecked(format!("argument {i}: {why}")))?;
                let size = usize::try_from(image.desc.byte_size())
                    .ok()
                    .filter(|&s| s > 0)
                    .ok_or_else(|| unchecked(format!("argument {i} is an image whose size the layer cannot tell")))?;
                let kind = RootKind::Image(image.desc);
                let root = Root { handle: *handle, size, kind, host_readable: host_readable(image.flags) };
                JobArg::Image { index: root_index(&mut roots, root), desc: image.desc }
            }
            Some(ArgState::Sampler(bits)) => JobArg::Sampler(*bits),
            Some(ArgState::Null) => JobArg::Null,
            Some(ArgState::Local(size)) => JobArg::Local(*size),
            Some(ArgState::Value(bytes)) => JobArg::Value(bytes.clone()),
            None => JobArg::Value(Vec::new()),
        };
        args.push(job_arg);
    }
    let number = kernel_state.launches;
    let job = Job {
        kernel: kernel_state,
        number,
        work_dim: geometry.work_dim,
        offset: geometry.offset,
        global: geometry.global,
        local: geometry.local,
        args,
        buffers: Vec::new(),
        modes: modes.into_iter().map(Option::unwrap_or_default).collect(),
    };
    Ok(Plan { job, roots })
}

/// The index of `root` among the roots to copy, adding it the first time.
fn root_index(roots: &mut Vec<Root>, root: Root) -> usize {
    let same = |r: &Root| r.handle == root.handle && (r.kind == RootKind::Svm) == (root.kind == RootKind::Svm);
    match roots.iter().position(same) {
        Some(i) => i,
        None => {
            roots.push(root);
            roots.len() - 1
        }
    }
}

/// Reads `dim` sizes from an optional array, padding with `fill`.
///
/// # Safety
/// `values` is NULL or holds `dim` (at most 3) readable values.
unsafe fn sizes(values: *const usize, dim: u32, fill: u64) -> Option<[u64; 3]> {
    if values.is_null() {
        return None;
    }
    let mut out = [fill; 3];
    for (d, slot) in out.iter_mut().enumerate().take((dim as usize).min(3)) {
        // SAFETY: the caller's contract.
        *slot = unsafe { *values.add(d) } as u64;
    }
    Some(out)
}

/// What the snapshot callback receives.
struct Pending {
    job: Box<Job>,
    ticket: Ticket,
    /// Our read events and the marker, released when the callback runs.
    events: Vec<cl_event>,
    /// The forwarded launch failed: the application gets the driver's error, we check nothing.
    cancelled: bool,
}

/// `clEnqueueNDRangeKernel`, hooked.
pub unsafe extern "C" fn enqueue_ndrange_kernel(
    queue: cl_command_queue,
    kernel: cl_kernel,
    work_dim: cl_uint,
    global_work_offset: *const usize,
    global_work_size: *const usize,
    local_work_size: *const usize,
    num_events: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let Some((l, forward)) = layer().and_then(|l| l.next.clEnqueueNDRangeKernel.map(|f| (l, f))) else {
        return CL_INVALID_OPERATION;
    };
    let launch = |waits: &[cl_event]| {
        let (count, list) = wait_list(waits, num_events, event_wait_list);
        // SAFETY: the application's arguments, forwarded unchanged but for extra events to wait on
        // and an event of ours when it asked for none.
        unsafe {
            l.in_flight.forward(l, event, |event| {
                forward(
                    queue,
                    kernel,
                    work_dim,
                    global_work_offset,
                    global_work_size,
                    local_work_size,
                    count,
                    list,
                    event,
                )
            })
        }
    };
    let geometry = || {
        // SAFETY: the application's arrays of `work_dim` sizes (or NULL).
        let global = unsafe { sizes(global_work_size, work_dim, 1) }?;
        Some(Geometry {
            work_dim,
            offset: unsafe { sizes(global_work_offset, work_dim, 0) }.unwrap_or([0; 3]),
            global,
            local: unsafe { sizes(local_work_size, work_dim, 1) },
        })
    };
    // SAFETY: forwarded contract.
    unsafe { checked(l, queue, kernel, num_events, event_wait_list, geometry, launch) }
}

/// `clEnqueueTask`, hooked: a launch of one work-item.
pub unsafe extern "C" fn enqueue_task(
    queue: cl_command_queue,
    kernel: cl_kernel,
    num_events: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let Some((l, forward)) = layer().and_then(|l| l.next.clEnqueueTask.map(|f| (l, f))) else {
        return CL_INVALID_OPERATION;
    };
    let launch = |waits: &[cl_event]| {
        let (count, list) = wait_list(waits, num_events, event_wait_list);
        // SAFETY: as in `enqueue_ndrange_kernel`.
        unsafe { l.in_flight.forward(l, event, |event| forward(queue, kernel, count, list, event)) }
    };
    let geometry = || Some(Geometry { work_dim: 1, offset: [0; 3], global: [1, 1, 1], local: Some([1, 1, 1]) });
    // SAFETY: forwarded contract.
    unsafe { checked(l, queue, kernel, num_events, event_wait_list, geometry, launch) }
}

/// The wait list to forward: the application's alone, or `waits` (which starts with it).
fn wait_list(waits: &[cl_event], num_events: cl_uint, list: *const cl_event) -> (cl_uint, *const cl_event) {
    if waits.is_empty() { (num_events, list) } else { (waits.len() as cl_uint, waits.as_ptr()) }
}

/// Snapshots, forwards through `launch`, and arranges the check. Any failure of ours forwards
/// the launch as the application made it.
///
/// # Safety
/// `event_wait_list` holds `num_events` events (or is NULL when 0), as the application passed.
unsafe fn checked(
    l: &'static Layer,
    queue: cl_command_queue,
    kernel: cl_kernel,
    num_events: cl_uint,
    event_wait_list: *const cl_event,
    geometry: impl FnOnce() -> Option<Geometry>,
    launch: impl Fn(&[cl_event]) -> cl_int,
) -> cl_int {
    if super::forked() {
        return launch(&[]);
    }
    super::register_exit_after_driver();
    let planned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        geometry().ok_or(Unplanned::UnknownKernel).and_then(|g| plan(l, kernel, g))
    }));
    let (mut job, roots) = match planned {
        Ok(Ok(Plan { job, roots })) => (job, roots),
        Ok(Err(Unplanned::Filtered(key))) => {
            l.checker.filtered(&key);
            return launch(&[]);
        }
        Ok(Err(Unplanned::Unchecked(key, why))) => {
            l.checker.unchecked(&key, &why);
            return launch(&[]);
        }
        Ok(Err(Unplanned::UnknownKernel)) => {
            l.checker
                .note_once("unknown kernel", "a kernel the layer did not see created was launched; it is not checked");
            return launch(&[]);
        }
        Err(_) => {
            l.checker.note_once("panic plan", "internal error while preparing a check; launches go on unchecked");
            return launch(&[]);
        }
    };
    let key = job.key();
    let bytes: u64 = roots.iter().map(|r| r.size as u64).sum();
    let Some(mut ticket) = l.checker.admit(&key, bytes, job.global, job.local) else {
        return launch(&[]);
    };
    // With `CLRACE_ORDER=before` the launch also waits for this event of ours.
    let gate = if l.checker.config.order == Order::Before {
        // SAFETY: the application's queue, valid for this call.
        match unsafe { gate_on(l, queue) } {
            Ok((event, gate)) => {
                ticket.gate = Some(gate);
                Some(event)
            }
            Err(rc) => {
                l.checker.note_once(
                    "gate",
                    &format!("cannot hold launches until their check is written (error {rc}); they run at once"),
                );
                None
            }
        }
    } else {
        None
    };
    let gated: Vec<cl_event> = gate.into_iter().collect();
    if roots.is_empty() {
        // Nothing to copy: the job is complete as it is.
        // SAFETY: the application's wait list, as it passed it.
        let mut waits = unsafe { app_wait_list(num_events, event_wait_list) }.to_vec();
        waits.extend_from_slice(&gated);
        let launched = launch(&waits);
        if launched == CL_SUCCESS {
            l.checker.submit(job, ticket);
        } else {
            l.checker.abandon(ticket, "the driver refused the launch");
        }
        return launched;
    }
    let (Some(read), Some(marker), Some(callback), Some(release)) = (
        l.next.clEnqueueReadBuffer,
        l.next.clEnqueueMarkerWithWaitList,
        l.next.clSetEventCallback,
        l.next.clReleaseEvent,
    ) else {
        l.checker.abandon(ticket, "the driver lacks the calls a snapshot needs");
        return launch(&[]);
    };
    // SAFETY: the application's wait list, as it passed it.
    let app_waits = unsafe { app_wait_list(num_events, event_wait_list) };
    let mut buffers = Vec::new();
    if buffers.try_reserve_exact(roots.len()).is_err() {
        l.checker.abandon(ticket, "its snapshot could not be allocated");
        return launch(&[]);
    }
    for root in &roots {
        // Zeroed but not written: the driver's copy is the first to touch its pages, on the
        // driver's thread rather than the application's.
        let Some(bytes) = crate::big_bytes::zeroed(root.size) else {
            l.checker.abandon(ticket, "its snapshot could not be allocated");
            return launch(&[]);
        };
        buffers.push(bytes);
    }
    job.buffers = buffers;
    let mut job = Box::new(job);
    let mut reads: Vec<cl_event> = Vec::with_capacity(roots.len());
    for (i, root) in roots.iter().enumerate() {
        let mut done: cl_event = std::ptr::null_mut();
        let target = job.buffers[i].as_mut_ptr().cast::<c_void>();
        let rc = match root.kind {
            // SAFETY: a non-blocking copy into memory we keep alive until its event completes,
            // through a scratch buffer the host may read.
            _ if !root.host_readable => unsafe { read_through_scratch(l, queue, *root, target, app_waits, &mut done) },
            // SAFETY: a non-blocking read into memory we keep alive until its event completes.
            RootKind::Buffer => unsafe {
                let handle = root.handle as cl_mem;
                read(queue, handle, CL_FALSE, 0, root.size, target, num_events, event_wait_list, &mut done)
            },
            RootKind::Image(desc) => match l.next.clEnqueueReadImage {
                // SAFETY: a non-blocking read of the whole image, packed, into `root.size` bytes we
                // keep alive until its event completes.
                Some(read_image) => unsafe {
                    let (origin, region) = ([0usize; 3], image_region(&desc));
                    let (image, origin, region) = (root.handle as cl_mem, origin.as_ptr(), region.as_ptr());
                    read_image(
                        queue,
                        image,
                        CL_FALSE,
                        origin,
                        region,
                        0,
                        0,
                        target,
                        num_events,
                        event_wait_list,
                        &mut done,
                    )
                },
                None => CL_INVALID_OPERATION,
            },
            RootKind::Svm => match l.next.clEnqueueSVMMemcpy {
                // SAFETY: as above; `root.handle` is the base of a live SVM allocation of `root.size` bytes.
                Some(memcpy) => unsafe {
                    let source = root.handle as *const c_void;
                    memcpy(queue, CL_FALSE, target, source, root.size, num_events, event_wait_list, &mut done)
                },
                None => CL_INVALID_OPERATION,
            },
        };
        if rc != CL_SUCCESS {
            l.checker.abandon(ticket, &format!("reading its buffers failed (error {rc})"));
            if !reads.is_empty() {
                // Reads already under way write into the job: let it live (rare: a failing read).
                std::mem::forget(job);
                // SAFETY: our own events.
                reads.iter().for_each(|&e| unsafe {
                    release(e);
                });
            }
            return launch(&[]);
        }
        reads.push(done);
    }
    let mut all_read: cl_event = std::ptr::null_mut();
    // SAFETY: a marker on the application's queue, waiting for our reads (at least one).
    let rc = unsafe { marker(queue, reads.len() as cl_uint, reads.as_ptr(), &mut all_read) };
    let mut waits = app_waits.to_vec();
    waits.extend_from_slice(&reads);
    waits.extend_from_slice(&gated);
    let launched = launch(&waits);
    if rc != CL_SUCCESS {
        l.checker.abandon(ticket, &format!("its snapshot reads could not be followed (error {rc})"));
        std::mem::forget(job);
        return launched;
    }
    let mut events = reads;
    events.push(all_read);
    let pending = Box::new(Pending { job, ticket, events, cancelled: launched != CL_SUCCESS });
    let context = Box::into_raw(pending).cast::<c_void>();
    // SAFETY: the callback takes ownership of `context` exactly once.
    let rc = unsafe { callback(all_read, CL_COMPLETE, Some(snapshot_taken), context) };
    if rc != CL_SUCCESS {
        // SAFETY: the callback was not registered, so the box is still ours.
        let pending = unsafe { Box::from_raw(context.cast::<Pending>()) };
        let Pending { job, ticket, .. } = *pending;
        l.checker.abandon(ticket, &format!("its snapshot could not be followed (error {rc})"));
        // The reads may still write into the job's buffers.
        std::mem::forget(job);
    }
    launched
}

/// The application's wait list as a slice.
///
/// # Safety
/// `list` holds `count` events, or `count` is 0.
unsafe fn app_wait_list<'a>(count: cl_uint, list: *const cl_event) -> &'a [cl_event] {
    if count == 0 || list.is_null() {
        &[]
    } else {
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts(list, count as usize) }
    }
}

/// A user event of ours in the queue's context, and the [`Gate`] that sets it: complete to run
/// the launch waiting on it, an error status to end that launch unrun (`CLRACE_ON_FINDING=skip`).
///
/// # Safety
/// `queue` is a valid command queue.
unsafe fn gate_on(l: &Layer, queue: cl_command_queue) -> Result<(cl_event, Gate), cl_int> {
    let (Some(info), Some(create), Some(set), Some(release)) =
        (l.next.clGetCommandQueueInfo, l.next.clCreateUserEvent, l.next.clSetUserEventStatus, l.next.clReleaseEvent)
    else {
        return Err(CL_INVALID_OPERATION);
    };
    let mut context: cl_context = std::ptr::null_mut();
    let mut err = CL_SUCCESS;
    // SAFETY: a valid queue and out-pointers of the sizes named.
    let event = unsafe {
        let out = (&mut context as *mut cl_context).cast();
        let rc = info(queue, CL_QUEUE_CONTEXT, size_of::<cl_context>(), out, std::ptr::null_mut());
        if rc != CL_SUCCESS {
            return Err(rc);
        }
        create(context, &mut err)
    };
    if event.is_null() {
        return Err(err);
    }
    let handle = event as usize;
    let gate = Gate::new(move |run| {
        let status = if run { CL_COMPLETE } else { CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST };
        // SAFETY: our own user event, set once and released once; the launch holds its own
        // reference to it through its wait list.
        unsafe {
            set(handle as cl_event, status);
            release(handle as cl_event);
        }
    });
    Ok((event, gate))
}

/// Copies a buffer or image the host may not read (`CL_MEM_HOST_NO_ACCESS`,
/// `HOST_WRITE_ONLY`) into a scratch buffer of ours in the same context, then reads that, all
/// without blocking.
///
/// # Safety
/// `target` holds `root.size` writable bytes that live until `done` completes.
unsafe fn read_through_scratch(
    l: &Layer,
    queue: cl_command_queue,
    root: Root,
    target: *mut c_void,
    waits: &[cl_event],
    done: &mut cl_event,
) -> cl_int {
    let (Some(info), Some(create), Some(copy), Some(copy_image), Some(read), Some(release_mem), Some(release_event)) = (
        l.next.clGetMemObjectInfo,
        l.next.clCreateBuffer,
        l.next.clEnqueueCopyBuffer,
        l.next.clEnqueueCopyImageToBuffer,
        l.next.clEnqueueReadBuffer,
        l.next.clReleaseMemObject,
        l.next.clReleaseEvent,
    ) else {
        return CL_INVALID_OPERATION;
    };
    let mut context: cl_context = std::ptr::null_mut();
    let (events, list) = (waits.len() as cl_uint, if waits.is_empty() { std::ptr::null() } else { waits.as_ptr() });
    // SAFETY: each call gets valid handles and out-pointers; the scratch buffer is released once
    // enqueued (OpenCL keeps it until the commands using it are done).
    unsafe {
        let context_out = (&mut context as *mut cl_context).cast();
        let rc =
            info(root.handle as cl_mem, CL_MEM_CONTEXT, size_of::<cl_context>(), context_out, std::ptr::null_mut());
        if rc != CL_SUCCESS {
            return rc;
        }
        let mut err = CL_SUCCESS;
        let scratch = create(context, CL_MEM_READ_WRITE, root.size, std::ptr::null_mut(), &mut err);
        if scratch.is_null() {
            return err;
        }
        let mut copied: cl_event = std::ptr::null_mut();
        let rc = match root.kind {
            RootKind::Image(desc) => {
                let (origin, region) = ([0usize; 3], image_region(&desc));
                let source = root.handle as cl_mem;
                copy_image(queue, source, scratch, origin.as_ptr(), region.as_ptr(), 0, events, list, &mut copied)
            }
            _ => copy(queue, root.handle as cl_mem, scratch, 0, 0, root.size, events, list, &mut copied),
        };
        if rc != CL_SUCCESS {
            release_mem(scratch);
            return rc;
        }
        let rc = read(queue, scratch, CL_FALSE, 0, root.size, target, 1, &copied, done);
        release_event(copied);
        release_mem(scratch);
        rc
    }
}

/// The region (in pixels, rows and slices or layers) that covers a whole image.
fn image_region(desc: &ImageDesc) -> [usize; 3] {
    let [w, h, d] = desc.extent().map(|v| v as usize);
    let layers = desc.array_size as usize;
    match desc.kind {
        ImageKind::D1Array => [w, layers, 1],
        ImageKind::D2Array => [w, h, layers],
        _ => [w, h, d],
    }
}

/// Runs on a driver thread when the snapshot reads are done: hands the job to the checker.
unsafe extern "C" fn snapshot_taken(_event: cl_event, status: cl_int, user_data: *mut c_void) {
    // SAFETY: `user_data` is the `Pending` box handed over in `checked`, used once.
    let pending = unsafe { Box::from_raw(user_data.cast::<Pending>()) };
    let Some(l) = layer() else { return };
    record(l, "a snapshot", || {
        if let Some(release) = l.next.clReleaseEvent {
            for &e in &pending.events {
                // SAFETY: our own events, released once.
                unsafe { release(e) };
            }
        }
        let Pending { job, ticket, cancelled, .. } = *pending;
        if status < 0 {
            l.checker.abandon(ticket, &format!("its snapshot reads failed (status {status})"));
        } else if cancelled {
            l.checker.abandon(ticket, "the driver refused the launch");
        } else {
            l.checker.submit(*job, ticket);
        }
    });
}
