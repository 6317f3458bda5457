//! The OpenCL loader layer (`libclrace.so`): an unmodified application loads it through
//! `OPENCL_LAYERS`, and every kernel launch is also checked in the emulator while the real launch
//! goes, unchanged, to the driver.
//!
//! The loader calls [`clInitLayer`] (or [`clInitLayerWithProperties`]) with the dispatch table of
//! whatever lies below (other layers, then the driver). We keep a copy of it and return our own
//! table, in which only the entries we hook are set: a NULL entry passes straight through. All
//! calls we make go down through the saved table, never through the public `cl*` symbols, which
//! would re-enter the loader from the top.
//!
//! The FFI edge is this module (the loader's calls), `hooks.rs` (programs, kernels, buffers),
//! `images.rs` (images and samplers) and `enqueue.rs` (kernel launches); `dispatch.rs` holds the
//! two tables. Every exported function goes through the one boundary of `boundary.rs`: it
//! forwards the application's call exactly once and runs our part under `catch_unwind`, so that
//! on any internal failure the layer notes it once and the call goes on as if the layer were not
//! there.

mod admission;
mod binaries;
mod boundary;
mod checker;
pub mod config;
mod dispatch;
mod enqueue;
mod hooks;
mod images;
mod inflight;
mod names;
mod output;
pub mod state;

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use opencl_sys::cl_icd::cl_icd_dispatch;
use opencl_sys::cl_layer::{
    CL_LAYER_API_VERSION, CL_LAYER_API_VERSION_100, CL_LAYER_NAME, cl_layer_info, cl_layer_properties,
};
use opencl_sys::{CL_INVALID_VALUE, CL_SUCCESS, cl_int, cl_uint};
use parking_lot::Mutex;

use boundary::entry;
use checker::Checker;
use config::Config;
use dispatch::ENTRIES;
use output::Output;
use state::State;

/// The name `clGetLayerInfo` reports.
const LAYER_NAME: &[u8] = b"clrace: data-race detector for OpenCL kernels\0";

/// Everything the layer keeps for the life of the process.
pub struct Layer {
    /// The table below us, copied up to the loader's entry count (the rest stays NULL).
    next: cl_icd_dispatch,
    /// Our table: hooked entries set, everything else NULL (pass-through).
    mine: cl_icd_dispatch,
    state: Mutex<State>,
    checker: Arc<Checker>,
    /// The application's launches the device may still be running.
    in_flight: inflight::InFlight,
}

// SAFETY: the dispatch tables are plain function pointers, written once before publication.
unsafe impl Send for Layer {}
// SAFETY: as above; the mutable parts are behind locks.
unsafe impl Sync for Layer {}

static LAYER: OnceLock<Layer> = OnceLock::new();

fn layer() -> Option<&'static Layer> {
    LAYER.get()
}

/// Set in the child of a `fork`: our threads do not exist there and our locks may be held by
/// threads that vanished, so the child forwards every call and writes nothing at exit (the
/// parent reports).
static FORKED: AtomicBool = AtomicBool::new(false);

extern "C" fn forked_child() {
    FORKED.store(true, Ordering::Relaxed);
}

/// Whether this process is a forked child of the one that loaded the layer.
fn forked() -> bool {
    FORKED.load(Ordering::Relaxed)
}

/// Reports the layer's API version and name.
///
/// # Safety
/// Called by the OpenCL loader with the usual `clGet*Info` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn clGetLayerInfo(
    param_name: cl_layer_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    // SAFETY: forwarded contract.
    entry("info", CL_INVALID_VALUE, || unsafe {
        layer_info(param_name, param_value_size, param_value, param_value_size_ret)
    })
}

/// [`clGetLayerInfo`], inside the boundary.
///
/// # Safety
/// As [`clGetLayerInfo`].
unsafe fn layer_info(
    param_name: cl_layer_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    let version = CL_LAYER_API_VERSION_100.to_ne_bytes();
    let bytes: &[u8] = match param_name {
        CL_LAYER_API_VERSION => &version,
        CL_LAYER_NAME => LAYER_NAME,
        _ => return CL_INVALID_VALUE,
    };
    // SAFETY: the caller passes writable memory of the sizes it names (loader contract).
    unsafe {
        if !param_value_size_ret.is_null() {
            *param_value_size_ret = bytes.len();
        }
        if !param_value.is_null() {
            if param_value_size < bytes.len() {
                return CL_INVALID_VALUE;
            }
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), param_value.cast::<u8>(), bytes.len());
        }
    }
    CL_SUCCESS
}

/// Initialises the layer (the entry point of loaders before cl_loader_layers properties).
///
/// # Safety
/// `target_dispatch` must point at a table of at least `num_entries` entries; the out-pointers
/// must be writable (loader contract).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn clInitLayer(
    num_entries: cl_uint,
    target_dispatch: *const cl_icd_dispatch,
    num_entries_ret: *mut cl_uint,
    layer_dispatch_ret: *mut *const cl_icd_dispatch,
) -> cl_int {
    // SAFETY: forwarded contract.
    unsafe {
        clInitLayerWithProperties(num_entries, target_dispatch, num_entries_ret, layer_dispatch_ret, std::ptr::null())
    }
}

/// Initialises the layer (newer loaders require this entry point).
///
/// # Safety
/// As [`clInitLayer`]; `properties` is NULL or a 0-terminated list (unused).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn clInitLayerWithProperties(
    num_entries: cl_uint,
    target_dispatch: *const cl_icd_dispatch,
    num_entries_ret: *mut cl_uint,
    layer_dispatch_ret: *mut *const cl_icd_dispatch,
    _properties: *const cl_layer_properties,
) -> cl_int {
    if target_dispatch.is_null() || num_entries_ret.is_null() || layer_dispatch_ret.is_null() {
        return CL_INVALID_VALUE;
    }
    let init = entry("init", None, || {
        Some(LAYER.get_or_init(|| {
            // SAFETY: the loader's table holds `num_entries` valid entries; we never read past them.
            let next = unsafe { dispatch::below(target_dispatch, num_entries as usize) };
            let (config, problems) = Config::from_env();
            let output = Output::open(config.output.as_deref(), config.format);
            output.catch_panics();
            start_log(&config.log, &output);
            let mut state = State::default();
            state.source_dir = config.source_dir.clone();
            let checker = Checker::new(config, output);
            for problem in problems {
                checker.note_once(&problem, &problem);
            }
            register_exit();
            // SAFETY: registering a plain `extern "C"` function that only stores to an atomic.
            unsafe {
                libc::pthread_atfork(None, None, Some(forked_child));
            }
            Layer { next, mine: dispatch::ours(), state: Mutex::new(state), checker, in_flight: Default::default() }
        }))
    });
    match init {
        Some(layer) => {
            // SAFETY: checked non-null above; the loader reads our table for the process's life.
            unsafe {
                *num_entries_ret = ENTRIES.min(num_entries as usize) as cl_uint;
                *layer_dispatch_ret = &layer.mine;
            }
            CL_SUCCESS
        }
        None => CL_INVALID_VALUE,
    }
}

/// Called by loaders at teardown: finishes pending checks and writes the summary.
#[unsafe(no_mangle)]
pub extern "C" fn clDeinitLayer() -> cl_int {
    entry("finish", CL_SUCCESS, || {
        finish_once();
        CL_SUCCESS
    })
}

/// The layer's own log goes where its reports go.
fn start_log(filter: &str, output: &Arc<Output>) {
    let filter = tracing_subscriber::EnvFilter::try_new(filter).unwrap_or_else(|_| "warn".into());
    let ansi = output.is_terminal();
    let output = output.clone();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(move || output::LogWriter(output.clone()))
        .with_target(false)
        .with_ansi(ansi)
        .try_init();
}

/// The most the exit handler waits for the application's launches to leave the device before it
/// decides whether pending checks may be waited for (never more than `CLRACE_EXIT_WAIT_MS`).
const DEVICE_SETTLE_MS: u64 = 1_000;

static FINISHED: OnceLock<crate::series::Totals> = OnceLock::new();

/// Finishes once: waits (bounded) for pending checks, writes the summary. Nothing in a forked
/// child.
fn finish_once() -> Option<crate::series::Totals> {
    if forked() {
        return None;
    }
    let layer = layer()?;
    let totals = FINISHED.get_or_init(|| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            // The device's work gets a share of the exit bound: a launch the application
            // finished may still read as submitted for a moment (see `inflight.rs`).
            let within = std::time::Duration::from_millis(layer.checker.config.exit_wait_ms.min(DEVICE_SETTLE_MS));
            let device_running = layer.in_flight.settle(layer, within);
            layer.checker.finish(device_running)
        }))
        .unwrap_or_default()
    });
    Some(*totals)
}

extern "C" fn at_exit() {
    let Some(status) = entry("exit", None, exit_status) else { return };
    // SAFETY: flushing C stdio and leaving with a status is what `exit` would do, minus the
    // handlers that already ran or are still to run (the application asked for this mode).
    unsafe {
        libc::fflush(std::ptr::null_mut());
        libc::_exit(status);
    }
}

/// Finishes, and says with which status the process must end instead of its own
/// (`CLRACE_FAIL_ON_RACE` and a finding), if it must.
fn exit_status() -> Option<i32> {
    let totals = finish_once()?;
    let config = &layer()?.checker.config;
    (config.fail_on_race && totals.found()).then_some(config.fail_status)
}

/// Registers the exit handler. Called at initialisation and again at the first launch: exit
/// handlers run in the reverse order of their registration, so the second registration runs
/// ours before the handlers the driver and its libraries registered when they were loaded
/// (after the layer), and the driver is still whole while pending checks finish. Running twice
/// is harmless: the work is done once.
fn register_exit() {
    // SAFETY: registering a plain `extern "C"` function that never unwinds.
    unsafe {
        libc::atexit(at_exit);
    }
}

/// The second registration of the exit handler, at the first launch (see [`register_exit`]).
fn register_exit_after_driver() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(register_exit);
}

#[cfg(test)]
mod tests;
