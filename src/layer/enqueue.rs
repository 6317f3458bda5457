//! The hooked enqueues of kernels (`clEnqueueNDRangeKernel`, `clEnqueueTask`): take a
//! [`Snapshot`] of the buffers a launch reads without blocking, forward the launch unchanged,
//! and hand the snapshot to the checker once it is complete.
//!
//! The protocol: on the application's own queue and with its own wait list, enqueue a
//! non-blocking read of every buffer the kernel receives (the root buffer once, however many
//! arguments or sub-buffers alias it), then a marker after the reads. The launch is forwarded
//! with the reads added to its wait list, so that even an out-of-order queue cannot run it before
//! they took their copy. A callback on the marker passes the job to the checker. Nothing here
//! waits for the device: a launch gated on a user event the application sets later stays gated.
//!
//! With `CLRACE_ORDER=before` the launch also waits for a user event of ours, the gate, which the
//! checker opens once the report is written. The reads and the marker are flushed before the
//! gated launch is enqueued: a driver may hold back commands submitted together with one that
//! waits on a user event (rusticl does), and reads that never reach the device would hold the
//! launch for ever. The gate also opens by itself after [`GATE_MARGIN`] past the check timeout,
//! whatever became of the snapshot or the check.
//!
//! All of it is our part of the hook, inside the boundary of `boundary.rs`: a failure before the
//! launch is forwarded leaves the boundary to forward it as the application made it, and what a
//! snapshot holds (its ticket, its buffers, our events) is owned by one [`Taking`], which gives
//! it back whichever way our part ends, a panic included.

use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use opencl_sys::{
    CL_COMPLETE, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, CL_FALSE, CL_INVALID_OPERATION, CL_MEM_CONTEXT,
    CL_MEM_HOST_NO_ACCESS, CL_MEM_HOST_WRITE_ONLY, CL_MEM_READ_WRITE, CL_QUEUE_CONTEXT, CL_SUCCESS, cl_command_queue,
    cl_context, cl_event, cl_int, cl_kernel, cl_mem, cl_uint,
};

use parking_lot::{Condvar, Mutex};

use super::Layer;
use super::admission::KernelKey;
use super::admission::{Shape, configuration};
use super::boundary::{Forward, alone, below, fault, guard};
use super::checker::{Gate, Job, Ticket};
use super::config::Order;
use super::state::{ArgState, Key, ProgramSource};
use crate::exec::image::{ImageDesc, ImageKind};
use crate::exec::memory::BufferMode;
use crate::spool::SpooledArg;

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

/// The layer's copy of a launch's inputs, as planned: the job to fill (kernel, arguments,
/// geometry, and the buffers the reads fill) and the roots to read into it.
struct Snapshot {
    job: Job,
    /// The root buffers to read, in job order.
    roots: Vec<Root>,
    /// The launch's configuration (see `admission.rs`).
    config: u64,
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
fn plan(l: &Layer, kernel: cl_kernel, geometry: Geometry) -> Result<Snapshot, Unplanned> {
    let mut state = l.state.lock();
    fault("plan");
    let k = state.kernels.get_mut(&Key::of(kernel)).ok_or(Unplanned::UnknownKernel)?;
    k.launches += 1;
    let key = KernelKey { program: k.program.file_name(), name: k.name.clone() };
    let config = &l.checker.config;
    if !config.wants(&k.name) || config.first_launches.is_some_and(|n| k.launches > n) {
        return Err(Unplanned::Filtered(key));
    }
    let kernel_state = k.clone();
    if let (None, ProgramSource::Unsupported(why), true) =
        (&kernel_state.program.spec, &kernel_state.program.source, l.checker.spooling())
    {
        return Err(Unplanned::Unchecked(key, format!("its program cannot be spooled: {why}")));
    }
    let unchecked = |why: String| Unplanned::Unchecked(key.clone(), why);
    let mut roots: Vec<Root> = Vec::new();
    let mut modes: Vec<Option<BufferMode>> = Vec::new();
    let mut args = Vec::with_capacity(kernel_state.args.len());
    // The sizes of what each argument binds, for the launch's configuration.
    let mut sizes = Vec::new();
    for (i, arg) in kernel_state.args.iter().enumerate() {
        let job_arg = match arg {
            Some(ArgState::Buffer(handle)) => {
                let unknown = || unchecked(format!("argument {i} is a buffer the layer did not see created"));
                let (root, offset) = state.root_of(*handle).ok_or_else(unknown)?;
                sizes.push(state.buffers.get(handle).map_or(0, |b| b.size as u64));
                let root_state = state.buffers.get(&root).ok_or_else(unknown)?;
                let host_readable = host_readable(root_state.flags);
                let root = Root {
                    handle: root.handle() as usize,
                    size: root_state.size,
                    kind: RootKind::Buffer,
                    host_readable,
                };
                let index = root_index(&mut roots, root);
                // Arguments bound to one root with different modes leave it read-write.
                let mode = state.access_mode(*handle);
                modes.resize(roots.len(), None);
                let known = modes[index].get_or_insert(mode);
                if *known != mode {
                    *known = BufferMode::ReadWrite;
                }
                SpooledArg::Buffer { index, offset: offset as u64 }
            }
            Some(ArgState::Svm(pointer)) => {
                let (base, size) = state
                    .svm_allocation(*pointer)
                    .ok_or_else(|| unchecked("an SVM argument points outside every clSVMAlloc allocation".into()))?;
                let index =
                    root_index(&mut roots, Root { handle: base, size, kind: RootKind::Svm, host_readable: true });
                sizes.push(size as u64);
                SpooledArg::Buffer { index, offset: (pointer - base) as u64 }
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
                let root =
                    Root { handle: handle.handle() as usize, size, kind, host_readable: host_readable(image.flags) };
                sizes.push(size as u64);
                SpooledArg::Image { index: root_index(&mut roots, root), desc: image.desc }
            }
            Some(ArgState::Sampler(bits)) => SpooledArg::Sampler { bits: *bits },
            Some(ArgState::Null) => SpooledArg::Null,
            Some(ArgState::Local(size)) => {
                sizes.push(*size as u64);
                SpooledArg::Local { size: *size }
            }
            Some(ArgState::Value(bytes)) => SpooledArg::value(bytes),
            None => SpooledArg::value(&[]),
        };
        args.push(job_arg);
    }
    let values: Vec<&[u8]> = kernel_state
        .args
        .iter()
        .filter_map(|a| if let Some(ArgState::Value(v)) = a { Some(&v[..]) } else { None })
        .collect();
    let shape = Shape { work_dim: geometry.work_dim, global: geometry.global, local: geometry.local, values, sizes };
    let config = configuration(&shape);
    let job = Job {
        program: kernel_state.program.clone(),
        kernel: kernel_state.name.clone(),
        number: kernel_state.launches,
        work_dim: geometry.work_dim,
        offset: geometry.offset,
        global: geometry.global,
        local: geometry.local,
        args,
        buffers: Vec::new(),
        modes: modes.into_iter().map(Option::unwrap_or_default).collect(),
    };
    Ok(Snapshot { job, roots, config })
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

/// A snapshot under way, from admission until the callback hands it to the checker: the job
/// whose buffers the reads fill, its ticket, and our events. Dropped before that (a failure, or
/// a panic of ours), it gives the ticket back, releases our events and, while a read may still be
/// writing into the job's buffers, leaks the job rather than free memory the driver writes.
struct Taking {
    l: &'static Layer,
    job: Option<Box<Job>>,
    ticket: Option<Ticket>,
    /// Our read events and the marker.
    events: Vec<cl_event>,
    /// A read into the job's buffers may be under way.
    reading: bool,
    /// The forwarded launch failed: the application gets the driver's error, we check nothing.
    cancelled: bool,
}

impl Taking {
    /// Ends the snapshot unchecked, for `why`.
    fn give_up(mut self, why: &str) {
        if let Some(ticket) = self.ticket.take() {
            self.l.checker.abandon(ticket, why);
        }
    }

    /// Hands the complete snapshot to the checker.
    fn hand_over(mut self) {
        if let (Some(job), Some(ticket)) = (self.job.take(), self.ticket.take()) {
            self.l.checker.submit(*job, ticket);
        }
    }
}

impl Drop for Taking {
    fn drop(&mut self) {
        // Runs while a panic of ours unwinds, where a second panic would abort the host.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            if let Some(ticket) = self.ticket.take() {
                self.l.checker.abandon(ticket, "an internal error of the layer");
            }
            if let Some(release) = self.l.next.clReleaseEvent {
                for &e in &self.events {
                    // SAFETY: our own events, released once.
                    unsafe { release(e) };
                }
            }
        }));
        if self.reading {
            std::mem::forget(self.job.take());
        }
    }
}

/// An enqueue as the application made it: what our part needs of its arguments.
struct Enqueue {
    queue: cl_command_queue,
    kernel: cl_kernel,
    num_events: cl_uint,
    event_wait_list: *const cl_event,
}

impl Enqueue {
    /// The application's wait list as a slice.
    ///
    /// # Safety
    /// `event_wait_list` holds `num_events` events (or is NULL when 0), as the application passed.
    unsafe fn waits<'a>(&self) -> &'a [cl_event] {
        // SAFETY: the caller's contract.
        unsafe { app_wait_list(self.num_events, self.event_wait_list) }
    }
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
    let (l, driver) = below!(clEnqueueNDRangeKernel);
    let mut own_event: cl_event = std::ptr::null_mut();
    let target = l.in_flight.target(l, event, &mut own_event);
    let forward = |waits: &[cl_event]| {
        let (count, list) = wait_list(waits, num_events, event_wait_list);
        // SAFETY: the application's arguments, forwarded unchanged but for extra events to wait on
        // and an event of ours when it asked for none.
        unsafe {
            driver(queue, kernel, work_dim, global_work_offset, global_work_size, local_work_size, count, list, target)
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
    let enqueue = Enqueue { queue, kernel, num_events, event_wait_list };
    // SAFETY: the application's arguments (forwarded contract); `target` is what `in_flight`
    // chose for `event`, and the driver has answered when `hold` runs.
    guard(
        "launch",
        forward,
        |call| unsafe { snapshot_and_launch(l, &enqueue, geometry, call) },
        |rc| unsafe { l.in_flight.hold(l, event, target, rc) },
    )
}

/// `clEnqueueTask`, hooked: a launch of one work-item.
pub unsafe extern "C" fn enqueue_task(
    queue: cl_command_queue,
    kernel: cl_kernel,
    num_events: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let (l, driver) = below!(clEnqueueTask);
    let mut own_event: cl_event = std::ptr::null_mut();
    let target = l.in_flight.target(l, event, &mut own_event);
    let forward = |waits: &[cl_event]| {
        let (count, list) = wait_list(waits, num_events, event_wait_list);
        // SAFETY: as in `enqueue_ndrange_kernel`.
        unsafe { driver(queue, kernel, count, list, target) }
    };
    let geometry = || Some(Geometry { work_dim: 1, offset: [0; 3], global: [1, 1, 1], local: Some([1, 1, 1]) });
    let enqueue = Enqueue { queue, kernel, num_events, event_wait_list };
    // SAFETY: as in `enqueue_ndrange_kernel`.
    guard(
        "launch",
        forward,
        |call| unsafe { snapshot_and_launch(l, &enqueue, geometry, call) },
        |rc| unsafe { l.in_flight.hold(l, event, target, rc) },
    )
}

/// The wait list to forward: the application's alone, or `waits` (which starts with it).
fn wait_list(waits: &[cl_event], num_events: cl_uint, list: *const cl_event) -> (cl_uint, *const cl_event) {
    if waits.is_empty() { (num_events, list) } else { (waits.len() as cl_uint, waits.as_ptr()) }
}

/// Our part of a launch: plans the snapshot, has it admitted, enqueues its reads and forwards
/// the launch through `call`, waiting for the reads (and the gate), then arranges the check.
/// Returning without calling `call` leaves the boundary to forward the launch as the application
/// made it, which is what every failure of ours does.
///
/// # Safety
/// `enqueue` holds the application's arguments, valid for this call.
unsafe fn snapshot_and_launch<F: FnOnce(&[cl_event]) -> cl_int>(
    l: &'static Layer,
    enqueue: &Enqueue,
    geometry: impl FnOnce() -> Option<Geometry>,
    call: &mut Forward<F, cl_int>,
) {
    super::register_exit_after_driver();
    let planned = geometry().ok_or(Unplanned::UnknownKernel).and_then(|g| plan(l, enqueue.kernel, g));
    let Snapshot { mut job, roots, config } = match planned {
        Ok(snapshot) => snapshot,
        Err(Unplanned::Filtered(key)) => return l.checker.filtered(&key),
        Err(Unplanned::Unchecked(key, why)) => return l.checker.unchecked(&key, &why),
        Err(Unplanned::UnknownKernel) => {
            l.checker
                .note_once("unknown kernel", "a kernel the layer did not see created was launched; it is not checked");
            return;
        }
    };
    let key = job.key();
    let bytes: u64 = roots.iter().map(|r| r.size as u64).sum();
    let Some(ticket) = l.checker.admit(&key, bytes, (job.global, job.local), config) else { return };
    let mut taking =
        Taking { l, job: None, ticket: Some(ticket), events: Vec::new(), reading: false, cancelled: false };
    fault("admission");
    // With `CLRACE_ORDER=before` the launch also waits for this event of ours.
    let gated: Vec<cl_event> = if l.checker.config.order == Order::Before {
        // SAFETY: the application's queue, valid for this call.
        match unsafe { gate_on(l, enqueue.queue) } {
            Ok((event, gate)) => {
                if let Some(ticket) = taking.ticket.as_mut() {
                    ticket.gate = Some(gate);
                }
                vec![event]
            }
            Err(rc) => {
                l.checker.note_once(
                    "gate",
                    &format!("cannot hold launches until their check is written (error {rc}); they run at once"),
                );
                Vec::new()
            }
        }
    } else {
        Vec::new()
    };
    fault("gate");
    // SAFETY: the application's wait list, as it passed it.
    let app_waits = unsafe { enqueue.waits() };
    if roots.is_empty() {
        // Nothing to copy: the job is complete as it is.
        taking.job = Some(Box::new(job));
        let waits = [app_waits, &gated].concat();
        match call.call(&waits[..]) {
            Some(CL_SUCCESS) => taking.hand_over(),
            _ => taking.give_up("the driver refused the launch"),
        }
        return;
    }
    let (Some(marker), Some(callback)) = (l.next.clEnqueueMarkerWithWaitList, l.next.clSetEventCallback) else {
        return taking.give_up("the driver lacks the calls a snapshot needs");
    };
    let (Some(_), Some(_)) = (l.next.clEnqueueReadBuffer, l.next.clReleaseEvent) else {
        return taking.give_up("the driver lacks the calls a snapshot needs");
    };
    let mut buffers = Vec::new();
    if buffers.try_reserve_exact(roots.len()).is_err() {
        return taking.give_up("its snapshot could not be allocated");
    }
    for root in &roots {
        // Zeroed but not written: the driver's copy is the first to touch its pages, on the
        // driver's thread rather than the application's.
        let Some(bytes) = crate::big_bytes::zeroed(root.size) else {
            return taking.give_up("its snapshot could not be allocated");
        };
        buffers.push(bytes);
    }
    job.buffers = buffers;
    let mut job = Box::new(job);
    let targets: Vec<*mut c_void> = job.buffers.iter_mut().map(|b| b.as_mut_ptr().cast::<c_void>()).collect();
    // The buffers stay where they are: the box moves, its contents do not.
    taking.job = Some(job);
    for (root, &target) in roots.iter().zip(&targets) {
        let mut done: cl_event = std::ptr::null_mut();
        // SAFETY: `target` holds `root.size` bytes that `taking` keeps alive (or leaks) until the
        // read is over; the application's queue and wait list.
        let rc = unsafe { read_root(l, enqueue, *root, target, app_waits, &mut done) };
        if rc != CL_SUCCESS {
            return taking.give_up(&format!("reading its buffers failed (error {rc})"));
        }
        taking.events.push(done);
        taking.reading = true;
        fault("reads");
    }
    let reads = taking.events.clone();
    let mut all_read: cl_event = std::ptr::null_mut();
    // SAFETY: a marker on the application's queue, waiting for our reads (at least one).
    let rc = unsafe { marker(enqueue.queue, reads.len() as cl_uint, reads.as_ptr(), &mut all_read) };
    if !gated.is_empty()
        && let Some(flush) = l.next.clFlush
    {
        // SAFETY: the application's queue, valid for this call. An error leaves the reads to the
        // application's next flush, and the gate to its bound.
        unsafe { flush(enqueue.queue) };
    }
    let waits = [app_waits, &reads, &gated].concat();
    let launched = call.call(&waits[..]);
    fault("forwarded");
    if rc != CL_SUCCESS {
        return taking.give_up(&format!("its snapshot reads could not be followed (error {rc})"));
    }
    taking.events.push(all_read);
    taking.cancelled = launched != Some(CL_SUCCESS);
    let context = Box::into_raw(Box::new(taking)).cast::<c_void>();
    // SAFETY: the callback takes ownership of `context` exactly once.
    let rc = unsafe { callback(all_read, CL_COMPLETE, Some(snapshot_taken), context) };
    if rc != CL_SUCCESS {
        // SAFETY: the callback was not registered, so the box is still ours.
        let taking = unsafe { Box::from_raw(context.cast::<Taking>()) };
        // The reads may still write into the job's buffers: `taking` leaks them.
        taking.give_up(&format!("its snapshot could not be followed (error {rc})"));
    }
}

/// Enqueues the non-blocking copy of one root into `target`, after the application's wait
/// list, and returns the driver's status; `done` receives the copy's event.
///
/// # Safety
/// `target` holds `root.size` writable bytes that live until the copy is over; `enqueue` and
/// `app_waits` are the application's, valid for this call.
unsafe fn read_root(
    l: &Layer,
    enqueue: &Enqueue,
    root: Root,
    target: *mut c_void,
    app_waits: &[cl_event],
    done: &mut cl_event,
) -> cl_int {
    let (queue, num_events, event_wait_list) = (enqueue.queue, enqueue.num_events, enqueue.event_wait_list);
    match root.kind {
        // SAFETY: a non-blocking copy into memory kept alive until its event completes, through
        // a scratch buffer the host may read.
        _ if !root.host_readable => unsafe { read_through_scratch(l, queue, root, target, app_waits, done) },
        RootKind::Buffer => match l.next.clEnqueueReadBuffer {
            // SAFETY: a non-blocking read into memory kept alive until its event completes.
            Some(read) => unsafe {
                let handle = root.handle as cl_mem;
                read(queue, handle, CL_FALSE, 0, root.size, target, num_events, event_wait_list, done)
            },
            None => CL_INVALID_OPERATION,
        },
        RootKind::Image(desc) => match l.next.clEnqueueReadImage {
            // SAFETY: a non-blocking read of the whole image, packed, into `root.size` bytes kept
            // alive until its event completes.
            Some(read_image) => unsafe {
                let (origin, region) = ([0usize; 3], image_region(&desc));
                let (image, origin, region) = (root.handle as cl_mem, origin.as_ptr(), region.as_ptr());
                read_image(queue, image, CL_FALSE, origin, region, 0, 0, target, num_events, event_wait_list, done)
            },
            None => CL_INVALID_OPERATION,
        },
        RootKind::Svm => match l.next.clEnqueueSVMMemcpy {
            // SAFETY: as above; `root.handle` is the base of a live SVM allocation of `root.size` bytes.
            Some(memcpy) => unsafe {
                let source = root.handle as *const c_void;
                memcpy(queue, CL_FALSE, target, source, root.size, num_events, event_wait_list, done)
            },
            None => CL_INVALID_OPERATION,
        },
    }
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
    let open: Opener = Arc::new(Mutex::new(Some(Box::new(move |run| {
        let status = if run { CL_COMPLETE } else { CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST };
        // SAFETY: our own user event, set once and released once (the opener runs once); the
        // launch holds its own reference to it through its wait list.
        unsafe {
            set(handle as cl_event, status);
            release(handle as cl_event);
        }
    }))));
    let bound = Duration::from_millis(l.checker.config.check_timeout_ms) + GATE_MARGIN;
    open_later(open.clone(), Instant::now() + bound);
    let gate = Gate::new(move |run| {
        let taken = open.lock().take();
        if let Some(opener) = taken {
            opener(run);
        }
    });
    Ok((event, gate))
}

/// How long past `CLRACE_CHECK_TIMEOUT` a gated launch waits at most for its check.
pub const GATE_MARGIN: Duration = Duration::from_secs(10);

/// Sets a gate's user event, once: `true` runs the launch, `false` ends it unrun. Whoever takes
/// it first (the checker through the [`Gate`], or the bound) sets the event.
type Opener = Arc<Mutex<Option<Box<dyn FnOnce(bool) + Send>>>>;

/// The gates to open when their bound passes, oldest first (every bound is as long, so the
/// queue is in deadline order), and the thread that opens them.
struct Bounds {
    due: Mutex<VecDeque<(Instant, Opener)>>,
    changed: Condvar,
}

/// Opens `open` at `at` if nothing opened it before.
fn open_later(open: Opener, at: Instant) {
    static BOUNDS: OnceLock<Option<&'static Bounds>> = OnceLock::new();
    let bounds = BOUNDS.get_or_init(|| {
        let bounds: &'static Bounds =
            Box::leak(Box::new(Bounds { due: Mutex::new(VecDeque::new()), changed: Condvar::new() }));
        let spawned = std::thread::Builder::new().name("clrace-gates".into()).spawn(move || open_when_due(bounds));
        spawned.is_ok().then_some(bounds)
    });
    if let Some(bounds) = bounds {
        bounds.due.lock().push_back((at, open));
        bounds.changed.notify_one();
    }
}

/// The gates' thread: opens each gate still closed when its bound passes.
fn open_when_due(bounds: &Bounds) {
    loop {
        let opener = {
            let mut due = bounds.due.lock();
            loop {
                match due.front() {
                    None => bounds.changed.wait(&mut due),
                    Some(&(at, _)) if at <= Instant::now() => break due.pop_front().map(|(_, o)| o),
                    Some(&(at, _)) => {
                        bounds.changed.wait_until(&mut due, at);
                    }
                }
            }
        };
        let taken = opener.and_then(|o| o.lock().take());
        if let Some(open) = taken {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| open(true)));
        }
    }
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
    // SAFETY: `user_data` is the `Taking` box handed over in `snapshot_and_launch`, used once.
    let mut taking = unsafe { Box::from_raw(user_data.cast::<Taking>()) };
    // The reads are over: the job's buffers are ours again.
    taking.reading = false;
    alone("callback", move || {
        if status < 0 {
            taking.give_up(&format!("its snapshot reads failed (status {status})"));
        } else if taking.cancelled {
            taking.give_up("the driver refused the launch");
        } else {
            taking.hand_over();
        }
    });
}
