//! The application's kernel launches that the device may still be running. The exit handler
//! asks before it waits for pending checks: a driver's own exit handlers run after ours and tear
//! down what its worker threads use (pocl's compiler), so holding up an exit while the device
//! still works lets that work reach the teardown, where it crashes (a clean exit becomes
//! SIGSEGV). When nothing is in flight, waiting is harmless.
//!
//! Every forwarded launch gets an event we hold (the application's own, retained, or one of ours
//! when it asked for none); completed ones are let go from the front at each launch, so the list
//! stays as long as the work the device has not finished.
//!
//! A driver may report a launch it has finished as still queued or submitted for a while after
//! the application's `clFinish` returned (rusticl does: its events learn of completion from its
//! worker thread). Asked once at exit, such a launch looks like work on the device and every
//! check still pending is dropped; [`InFlight::settle`] asks again for a short, bounded time.

use std::collections::VecDeque;

use opencl_sys::{CL_COMPLETE, CL_EVENT_COMMAND_EXECUTION_STATUS, CL_SUCCESS, cl_event, cl_int};
use parking_lot::Mutex;

use super::Layer;

#[derive(Default)]
pub struct InFlight {
    /// Held events, oldest first (handles as integers: they are the driver's, used from any thread).
    events: Mutex<VecDeque<usize>>,
}

impl InFlight {
    /// The event pointer to give the driver for a launch: the application's `event`, or `own`
    /// when it asked for none, so that every launch has an event we hold. The application's
    /// alone where events cannot be followed, and in a forked child (which holds nothing).
    pub fn target(&self, l: &Layer, event: *mut cl_event, own: &mut cl_event) -> *mut cl_event {
        let followed =
            l.next.clRetainEvent.is_some() && l.next.clReleaseEvent.is_some() && l.next.clGetEventInfo.is_some();
        if !event.is_null() || !followed || super::forked() { event } else { own as *mut cl_event }
    }

    /// Holds the event of a launch the driver answered with `rc`, given `target` (see
    /// [`InFlight::target`]) for the application's `event`.
    ///
    /// # Safety
    /// `target` is what [`InFlight::target`] chose for `event`, still valid, and the driver has
    /// answered.
    pub unsafe fn hold(&self, l: &Layer, event: *mut cl_event, target: *mut cl_event, rc: cl_int) {
        let (Some(retain), Some(_), Some(_)) = (l.next.clRetainEvent, l.next.clReleaseEvent, l.next.clGetEventInfo)
        else {
            return;
        };
        if rc != CL_SUCCESS || target.is_null() {
            return;
        }
        // SAFETY: `target` is ours or the application's, and the driver wrote it on success.
        let made = unsafe { *target };
        if made.is_null() {
            return;
        }
        if !event.is_null() {
            // SAFETY: a valid event the driver just made; the reference is ours to release.
            unsafe { retain(made) };
        }
        let mut events = self.events.lock();
        self.let_go_of_finished(l, &mut events, false);
        events.push_back(made as usize);
    }

    /// How many held launches the device has not finished.
    pub fn running(&self, l: &Layer) -> usize {
        let mut events = self.events.lock();
        self.let_go_of_finished(l, &mut events, true);
        events.len()
    }

    /// How many held launches the device has not finished, asking again for up to `within` while
    /// some remain: the device's work ends (or its events catch up) or the bound passes.
    pub fn settle(&self, l: &Layer, within: std::time::Duration) -> usize {
        let deadline = std::time::Instant::now() + within;
        loop {
            let running = self.running(l);
            if running == 0 || std::time::Instant::now() >= deadline {
                return running;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    /// Releases finished events: from the front only, or (`all`) wherever they are.
    fn let_go_of_finished(&self, l: &Layer, events: &mut VecDeque<usize>, all: bool) {
        let (Some(release), Some(info)) = (l.next.clReleaseEvent, l.next.clGetEventInfo) else { return };
        let finished = |event: usize| {
            let mut status: cl_int = 0;
            let out = (&mut status as *mut cl_int).cast();
            // SAFETY: an event we hold a reference to, and an out-pointer of the size named.
            let rc = unsafe {
                info(
                    event as cl_event,
                    CL_EVENT_COMMAND_EXECUTION_STATUS,
                    size_of::<cl_int>(),
                    out,
                    std::ptr::null_mut(),
                )
            };
            rc != CL_SUCCESS || status == CL_COMPLETE || status < 0
        };
        // SAFETY (both arms): our reference, released once.
        let let_go = |event: usize| unsafe {
            release(event as cl_event);
        };
        if all {
            events.retain(|&event| {
                let done = finished(event);
                if done {
                    let_go(event);
                }
                !done
            });
        } else {
            while let Some(&event) = events.front().filter(|&&e| finished(e)) {
                let_go(event);
                events.pop_front();
            }
        }
    }
}
