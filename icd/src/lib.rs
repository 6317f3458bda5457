//! `libclrace_icd.so`: the clrace layer for OpenCL loaders that cannot load layers (ocl-icd up to
//! 2.2.13, for instance).
//!
//! The loader takes this library for a vendor driver (an ICD): `OCL_ICD_VENDORS=/path/to/
//! libclrace_icd.so` with ocl-icd. On first use we open the real driver (`CLRACE_ICD_VENDOR`,
//! default `libpocl.so.2`), ask it for its platforms, open the clrace layer (`CLRACE_ICD_LAYER`,
//! default `libclrace.so` next to this library) and initialise it with a *copy* of the driver's
//! dispatch table, exactly as a loader would. Then every entry the layer hooks is written into
//! the driver's own table, in place. The driver's platforms go to the loader unchanged, so every
//! object the application gets is the driver's and every call the loader dispatches through it
//! reaches the layer's hook, which forwards through its copy (the original entries): there is no
//! wrapping of handles and no recursion.
//!
//! Assumption: all objects of the driver share the dispatch table of its platforms (true for
//! pocl). We check it for the platforms and their devices and say so when it does not hold;
//! objects created later (contexts, queues, kernels) are not checked.
//!
//! Exports: `clGetExtensionFunctionAddress`, `clIcdGetPlatformIDsKHR` and `clGetPlatformInfo`,
//! what the loaders look up in a vendor library. Nothing here may unwind into C: every export
//! catches panics, and every failure is one `clrace-icd: ...` line on stderr, after which the
//! application goes on with the driver unpatched (or with no platform, when the driver itself
//! could not be loaded).

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::io::Write as _;
use std::path::PathBuf;
use std::ptr;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use opencl_sys::cl_icd::cl_icd_dispatch;
use opencl_sys::cl_layer::clInitLayer_t;
use opencl_sys::{
    CL_DEVICE_TYPE_ALL, CL_INVALID_PLATFORM, CL_INVALID_VALUE, CL_PLATFORM_NOT_FOUND_KHR, CL_PLATFORM_VERSION,
    CL_SUCCESS, cl_device_id, cl_int, cl_platform_id, cl_platform_info, cl_uint,
};

/// Pointer-sized entries in a dispatch table of the headers we were built with.
const ENTRIES: usize = size_of::<cl_icd_dispatch>() / size_of::<usize>();

/// The driver opened when `CLRACE_ICD_VENDOR` is not set.
const DEFAULT_VENDOR: &str = "libpocl.so.2";

/// The layer's file name, looked for next to this library when `CLRACE_ICD_LAYER` is not set.
const LAYER_FILE: &str = "libclrace.so";

type GetExtensionFunctionAddress = unsafe extern "C" fn(*const c_char) -> *mut c_void;
type GetPlatformIds = unsafe extern "C" fn(cl_uint, *mut cl_platform_id, *mut cl_uint) -> cl_int;

/// What we know after the first use, for the life of the process.
struct Icd {
    /// The driver's platforms, handed to the loader unchanged (empty if it could not be loaded).
    platforms: Vec<cl_platform_id>,
    /// The driver's own `clGetExtensionFunctionAddress`, for the names we do not answer.
    vendor_gefa: Option<GetExtensionFunctionAddress>,
}

// SAFETY: platform handles are opaque pointers owned by the driver, valid for the process's life
// and usable from any thread (OpenCL's thread-safety guarantee); we never write through them.
unsafe impl Send for Icd {}
// SAFETY: as above; `Icd` is never changed after initialisation.
unsafe impl Sync for Icd {}

static ICD: OnceLock<Icd> = OnceLock::new();

/// Writes one line on stderr; never panics (stderr may be closed).
fn say(message: &str) {
    let _ = writeln!(std::io::stderr(), "clrace-icd: {message}");
}

/// Runs `f`; a panic becomes a line on stderr and `fallback`.
fn guard<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| {
        say("internal error; the OpenCL driver is used without the clrace layer");
        fallback
    })
}

/// Loads (once) the driver and the layer, and patches the driver's table.
fn icd() -> &'static Icd {
    ICD.get_or_init(|| guard(Icd { platforms: Vec::new(), vendor_gefa: None }, load))
}

/// An environment variable, unless unset or empty.
fn setting(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// `dlerror()` as text.
fn dl_error() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string valid until the next dl* call here.
    let text = unsafe { libc::dlerror() };
    if text.is_null() {
        "unknown error".to_string()
    } else {
        // SAFETY: non-NULL, NUL-terminated (above).
        unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned()
    }
}

/// `dlopen(name, RTLD_NOW | RTLD_LOCAL)`.
fn dl_open(name: &str) -> Result<*mut c_void, String> {
    let c_name = CString::new(name).map_err(|_| "the name contains a NUL byte".to_string())?;
    // SAFETY: a valid C string; loading a library runs its constructors, which is what we ask for.
    let handle = unsafe { libc::dlopen(c_name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if handle.is_null() { Err(dl_error()) } else { Ok(handle) }
}

/// `dlsym(handle, name)`, NULL as `None`.
fn dl_sym(handle: *mut c_void, name: &CStr) -> Option<*mut c_void> {
    // SAFETY: `handle` comes from a successful dlopen, `name` is a C string.
    let symbol = unsafe { libc::dlsym(handle, name.as_ptr()) };
    (!symbol.is_null()).then_some(symbol)
}

fn load() -> Icd {
    let vendor = setting("CLRACE_ICD_VENDOR").unwrap_or_else(|| DEFAULT_VENDOR.to_string());
    let no_driver = |why: String| {
        say(&format!("cannot use the OpenCL driver {vendor} (set CLRACE_ICD_VENDOR): {why}; no platform offered"));
        Icd { platforms: Vec::new(), vendor_gefa: None }
    };
    let handle = match dl_open(&vendor) {
        Ok(handle) => handle,
        Err(e) => return no_driver(e),
    };
    let Some(gefa) = dl_sym(handle, c"clGetExtensionFunctionAddress") else {
        return no_driver("it exports no clGetExtensionFunctionAddress (not an OpenCL ICD)".to_string());
    };
    // SAFETY: an ICD's `clGetExtensionFunctionAddress` has this signature (cl_khr_icd).
    let gefa: GetExtensionFunctionAddress = unsafe { std::mem::transmute(gefa) };
    if same_library(gefa as *const c_void, anchor as *const c_void) {
        // Asking ourselves for platforms would wait forever on our own initialisation.
        return no_driver("that is clrace-icd itself".to_string());
    }
    // SAFETY: a C string, and the driver's function of the right type (above).
    let get_ids = unsafe { gefa(c"clIcdGetPlatformIDsKHR".as_ptr()) };
    if get_ids.is_null() {
        return no_driver("it does not answer clIcdGetPlatformIDsKHR".to_string());
    }
    // SAFETY: the cl_khr_icd signature of clIcdGetPlatformIDsKHR.
    let get_ids: GetPlatformIds = unsafe { std::mem::transmute(get_ids) };
    let vendor_gefa = Some(gefa);
    let platforms = match platforms_of(get_ids) {
        Ok(platforms) => platforms,
        Err(code) => {
            say(&format!("the OpenCL driver {vendor} offers no platform (error {code})"));
            return Icd { platforms: Vec::new(), vendor_gefa };
        }
    };
    if let Err(e) = patch(&platforms) {
        say(&format!("{e}; OpenCL calls go to {vendor} unchecked"));
    }
    Icd { platforms, vendor_gefa }
}

/// The driver's platforms, through its clIcdGetPlatformIDsKHR.
fn platforms_of(get_ids: GetPlatformIds) -> Result<Vec<cl_platform_id>, cl_int> {
    let mut count: cl_uint = 0;
    // SAFETY: the count query of clIcdGetPlatformIDsKHR, with a valid out-pointer.
    let status = unsafe { get_ids(0, ptr::null_mut(), &mut count) };
    if status != CL_SUCCESS || count == 0 {
        return Err(if status == CL_SUCCESS { CL_PLATFORM_NOT_FOUND_KHR } else { status });
    }
    let mut platforms = vec![ptr::null_mut(); count as usize];
    let mut written: cl_uint = 0;
    // SAFETY: room for `count` handles.
    let status = unsafe { get_ids(count, platforms.as_mut_ptr(), &mut written) };
    if status != CL_SUCCESS {
        return Err(status);
    }
    platforms.truncate((written as usize).min(count as usize));
    platforms.retain(|p| !p.is_null());
    if platforms.is_empty() { Err(CL_PLATFORM_NOT_FOUND_KHR) } else { Ok(platforms) }
}

/// The dispatch table of an OpenCL object: the first word of every handle (cl_khr_icd).
///
/// # Safety
/// `object` must be a live object of a cl_khr_icd driver.
unsafe fn table_of(object: *mut c_void) -> *mut cl_icd_dispatch {
    // SAFETY: the caller's contract; the first word of an ICD object is its dispatch pointer.
    unsafe { *object.cast::<*mut cl_icd_dispatch>() }
}

/// Loads the layer and writes its hooks into the table of the driver's platforms.
fn patch(platforms: &[cl_platform_id]) -> Result<(), String> {
    // SAFETY: the driver just returned these platforms.
    let table = unsafe { table_of(platforms[0].cast()) };
    if table.is_null() {
        return Err("the driver's platform has no dispatch table".to_string());
    }
    // SAFETY: as above.
    if platforms.iter().any(|&p| unsafe { table_of(p.cast()) } != table) {
        say("the driver's platforms use more than one dispatch table; only the first platform's is patched");
    }
    let entries = table_entries(table, platforms[0]);
    warn_if_also_a_layer();

    let layer_path = setting("CLRACE_ICD_LAYER").map(PathBuf::from).unwrap_or_else(default_layer_path);
    let layer = dl_open(&layer_path.to_string_lossy())
        .map_err(|e| format!("cannot load the clrace layer {} (set CLRACE_ICD_LAYER): {e}", layer_path.display()))?;
    let init = dl_sym(layer, c"clInitLayer")
        .ok_or_else(|| format!("{} exports no clInitLayer (not the clrace layer)", layer_path.display()))?;
    // SAFETY: clInitLayer has the cl_loader_layers signature.
    let init: clInitLayer_t = unsafe { std::mem::transmute(init) };
    let init = init.expect("dl_sym returns non-NULL symbols");

    // The layer forwards through the table it is given, so it gets a copy of the original
    // entries, which stays untouched (and alive: the layer may keep the pointer).
    // SAFETY: an all-zero table is all NULL entries.
    let below: &'static mut cl_icd_dispatch = Box::leak(Box::new(unsafe { std::mem::zeroed() }));
    // SAFETY: the driver's table holds at least `entries` entries (`table_entries`), and `below`
    // holds `ENTRIES >= entries`.
    unsafe {
        ptr::copy_nonoverlapping(
            table.cast::<usize>(),
            (below as *mut cl_icd_dispatch).cast::<usize>(),
            entries.min(ENTRIES),
        )
    };
    let mut returned: cl_uint = 0;
    let mut hooks: *const cl_icd_dispatch = ptr::null();
    // SAFETY: a table of `entries` entries and two valid out-pointers (the loader's contract).
    let status = unsafe { init(entries as cl_uint, below, &mut returned, &mut hooks) };
    if status != CL_SUCCESS || hooks.is_null() {
        return Err(format!("the clrace layer did not start (clInitLayer returned {status})"));
    }

    let mut patches = Vec::new();
    for i in 0..(returned as usize).min(entries) {
        // SAFETY: the layer's table holds `returned` entries, of which we read fewer.
        let hook = unsafe { *hooks.cast::<usize>().add(i) };
        if hook != 0 {
            patches.push((i, hook));
        }
    }
    let last = patches.iter().map(|&(i, _)| i).max().unwrap_or(0);
    let write = || {
        for &(i, hook) in &patches {
            // SAFETY: an aligned pointer-sized slot of the driver's table (`i < entries`), made
            // writable by `with_writable`; other threads may read it meanwhile, hence the atomic.
            unsafe { AtomicUsize::from_ptr(table.cast::<usize>().add(i)).store(hook, Ordering::SeqCst) };
        }
    };
    // SAFETY: the range is the first `last + 1` entries of the driver's table, which it has
    // (`table_entries`), and `write` writes only there.
    unsafe { with_writable(table as usize, (last + 1) * size_of::<usize>(), write) }
        .map_err(|e| format!("cannot make the driver's dispatch table writable: {e}"))?;

    check_devices(platforms, table);
    Ok(())
}

/// How many entries the driver's table surely has: as many as the OpenCL version its platform
/// reports defines (a driver built with older headers has a shorter table, and neither reading
/// nor writing may go past it).
fn table_entries(table: *mut cl_icd_dispatch, platform: cl_platform_id) -> usize {
    let mut version = [0u8; 256];
    let mut size = 0usize;
    // SAFETY: the driver's own table and platform; a buffer of the size we pass.
    let status = unsafe {
        match (*table).clGetPlatformInfo {
            Some(f) => f(platform, CL_PLATFORM_VERSION, version.len(), version.as_mut_ptr().cast(), &mut size),
            None => CL_INVALID_PLATFORM,
        }
    };
    let parsed = if status == CL_SUCCESS { parse_version(&version[..size.min(version.len())]) } else { None };
    entries_for(parsed)
}

/// `OpenCL <major>.<minor> <anything>` (the CL_PLATFORM_VERSION format).
fn parse_version(text: &[u8]) -> Option<(u32, u32)> {
    let text = std::str::from_utf8(text).ok()?.trim_end_matches('\0');
    let number = text.strip_prefix("OpenCL ")?.split(' ').next()?;
    let (major, minor) = number.split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// The table entries a driver of this OpenCL version has; unknown: those of OpenCL 1.2.
fn entries_for(version: Option<(u32, u32)>) -> usize {
    macro_rules! through {
        ($field:ident) => {
            std::mem::offset_of!(cl_icd_dispatch, $field) / size_of::<usize>() + 1
        };
    }
    let entries = match version {
        Some((0, _) | (1, 0)) => through!(clGetExtensionFunctionAddress),
        Some((1, 1)) => through!(clEnqueueCopyBufferRect),
        None | Some((1, _)) => through!(clCreateFromGLTexture),
        Some((2, 0)) => through!(clSetKernelExecInfo),
        Some((2, 1)) => through!(clSetDefaultDeviceCommandQueue),
        Some((2, _)) => through!(clSetProgramSpecializationConstant),
        Some(_) => through!(clSetContextDestructorCallback),
    };
    entries.min(ENTRIES)
}

/// A function of ours that is not exported, so its address is surely in this library (the
/// address of an exported one may resolve to a same-named symbol of a library loaded before us,
/// such as the loader's `clGetExtensionFunctionAddress`).
extern "C" fn anchor() {}

/// What `dladdr` knows about the library holding `address`.
fn library_of(address: *const c_void) -> Option<libc::Dl_info> {
    // SAFETY: an all-zero Dl_info is a valid out-parameter.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only looks the address up; `info` is writable.
    let found = unsafe { libc::dladdr(address, &mut info) };
    (found != 0).then_some(info)
}

/// Whether two code addresses lie in the same loaded library.
fn same_library(a: *const c_void, b: *const c_void) -> bool {
    match (library_of(a), library_of(b)) {
        (Some(a), Some(b)) => a.dli_fbase == b.dli_fbase,
        _ => false,
    }
}

/// `libclrace.so` in the directory this library was loaded from.
fn default_layer_path() -> PathBuf {
    if let Some(info) = library_of(anchor as *const c_void)
        && !info.dli_fname.is_null()
    {
        // SAFETY: dladdr filled in a NUL-terminated file name.
        let ours = PathBuf::from(unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy().into_owned());
        if let Some(dir) = ours.parent() {
            return dir.join(LAYER_FILE);
        }
    }
    PathBuf::from(LAYER_FILE)
}

/// The layer named in the loader's layer variables as well would check launches twice, or
/// not at all, depending on the loader.
fn warn_if_also_a_layer() {
    for name in ["OPENCL_LAYERS", "OCL_ICD_LAYERS"] {
        if setting(name).is_some_and(|v| v.contains("clrace")) {
            say(&format!("{name} names a clrace layer too; use either it or clrace-icd, not both"));
        }
    }
}

/// Says so when a device of the patched platforms dispatches through another table (then its
/// objects bypass the hooks).
fn check_devices(platforms: &[cl_platform_id], table: *mut cl_icd_dispatch) {
    // SAFETY: the driver's own table, read only.
    let Some(get_devices) = (unsafe { (*table).clGetDeviceIDs }) else { return };
    // SAFETY: as in `patch`.
    for &platform in platforms.iter().filter(|&&p| unsafe { table_of(p.cast()) } == table) {
        let mut count: cl_uint = 0;
        // SAFETY: the count query of clGetDeviceIDs.
        if unsafe { get_devices(platform, CL_DEVICE_TYPE_ALL, 0, ptr::null_mut(), &mut count) } != CL_SUCCESS {
            continue;
        }
        let mut devices: Vec<cl_device_id> = vec![ptr::null_mut(); count as usize];
        // SAFETY: room for `count` devices.
        let status = unsafe { get_devices(platform, CL_DEVICE_TYPE_ALL, count, devices.as_mut_ptr(), ptr::null_mut()) };
        // SAFETY: devices the driver returned.
        if status == CL_SUCCESS && devices.iter().any(|&d| !d.is_null() && unsafe { table_of(d.cast()) } != table) {
            say("a device of the driver uses another dispatch table; launches on it may go unchecked");
            return;
        }
    }
}

/// Runs `f` with the pages of `[start, start + len)` writable, then gives them back their
/// protection.
///
/// # Safety
/// The range must lie in mapped memory of this process, and `f` must only write where
/// writing is sound (making a read-only page writable does not make every write sound).
unsafe fn with_writable(start: usize, len: usize, f: impl FnOnce()) -> Result<(), String> {
    // SAFETY: sysconf has no preconditions.
    let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
    let first = start & !(page - 1);
    let last = (start + len.max(1) - 1) & !(page - 1);
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    let mut changed: Vec<(usize, c_int)> = Vec::new();
    let mut result = Ok(());
    for address in (first..=last).step_by(page) {
        let old = protection_at(&maps, address);
        let new = old.unwrap_or(libc::PROT_READ) | libc::PROT_READ | libc::PROT_WRITE;
        if old == Some(new) {
            continue;
        }
        // SAFETY: a page-aligned page of our own mapped memory (caller's contract); the new
        // protection keeps what it had (execute included) and adds writing.
        if unsafe { libc::mprotect(address as *mut c_void, page, new) } != 0 {
            result = Err(std::io::Error::last_os_error().to_string());
            break;
        }
        changed.push((address, old.unwrap_or(new)));
    }
    if result.is_ok() {
        f();
    }
    for (address, old) in changed {
        // SAFETY: as above, giving back the protection the page had before.
        unsafe { libc::mprotect(address as *mut c_void, page, old) };
    }
    result
}

/// The protection of the mapping holding `address`, from the text of `/proc/self/maps`.
fn protection_at(maps: &str, address: usize) -> Option<c_int> {
    maps.lines().find_map(|line| {
        let mut fields = line.split_whitespace();
        let (low, high) = fields.next()?.split_once('-')?;
        let (low, high) = (usize::from_str_radix(low, 16).ok()?, usize::from_str_radix(high, 16).ok()?);
        if !(low..high).contains(&address) {
            return None;
        }
        let perms = fields.next()?.as_bytes();
        let mut prot = libc::PROT_NONE;
        for (flag, letter) in [(libc::PROT_READ, b'r'), (libc::PROT_WRITE, b'w'), (libc::PROT_EXEC, b'x')] {
            if perms.contains(&letter) {
                prot |= flag;
            }
        }
        Some(prot)
    })
}

/// What the loader asks a vendor library first: our `clIcdGetPlatformIDsKHR`. Other `clIcd*`
/// names get NULL (the loader must dispatch through the tables we patch, not through a
/// cl_khr_icd2 side door); every other name goes to the driver.
///
/// # Safety
/// `func_name` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn clGetExtensionFunctionAddress(func_name: *const c_char) -> *mut c_void {
    guard(ptr::null_mut(), || {
        if func_name.is_null() {
            return ptr::null_mut();
        }
        // SAFETY: the caller's contract.
        let name = unsafe { CStr::from_ptr(func_name) }.to_bytes();
        if name == b"clIcdGetPlatformIDsKHR" {
            // Not the exported symbol's address, which another library could shadow.
            return get_platform_ids as *mut c_void;
        }
        if name.starts_with(b"clIcd") {
            return ptr::null_mut();
        }
        match icd().vendor_gefa {
            // SAFETY: the driver's function, with the caller's string.
            Some(gefa) => unsafe { gefa(func_name) },
            None => ptr::null_mut(),
        }
    })
}

/// The driver's platforms (cl_khr_icd); loads everything on first use.
///
/// # Safety
/// The usual clGetPlatformIDs contract: `platforms` holds `num_entries` handles, the pointers
/// are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn clIcdGetPlatformIDsKHR(
    num_entries: cl_uint,
    platforms: *mut cl_platform_id,
    num_platforms: *mut cl_uint,
) -> cl_int {
    // SAFETY: the caller's contract, forwarded.
    unsafe { get_platform_ids(num_entries, platforms, num_platforms) }
}

/// [`clIcdGetPlatformIDsKHR`], under a name that is not exported (what the loader gets from
/// [`clGetExtensionFunctionAddress`]).
///
/// # Safety
/// As [`clIcdGetPlatformIDsKHR`].
unsafe extern "C" fn get_platform_ids(
    num_entries: cl_uint,
    platforms: *mut cl_platform_id,
    num_platforms: *mut cl_uint,
) -> cl_int {
    if (num_entries == 0 && !platforms.is_null()) || (platforms.is_null() && num_platforms.is_null()) {
        return CL_INVALID_VALUE;
    }
    guard(CL_PLATFORM_NOT_FOUND_KHR, || {
        let ours = &icd().platforms;
        // SAFETY: the caller's contract.
        unsafe {
            if !num_platforms.is_null() {
                *num_platforms = ours.len() as cl_uint;
            }
            if !platforms.is_null() {
                let n = ours.len().min(num_entries as usize);
                ptr::copy_nonoverlapping(ours.as_ptr(), platforms, n);
            }
        }
        if ours.is_empty() { CL_PLATFORM_NOT_FOUND_KHR } else { CL_SUCCESS }
    })
}

/// Platform queries (ocl-icd calls this symbol directly, for `CL_PLATFORM_ICD_SUFFIX_KHR` and
/// others): answered by the driver, through its table. A NULL platform means the first one.
///
/// # Safety
/// The usual clGetPlatformInfo contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn clGetPlatformInfo(
    platform: cl_platform_id,
    param_name: cl_platform_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    guard(CL_INVALID_PLATFORM, || {
        let ours = &icd().platforms;
        let platform = if platform.is_null() { ours.first().copied() } else { Some(platform) };
        let Some(platform) = platform.filter(|p| ours.contains(p)) else { return CL_INVALID_PLATFORM };
        // SAFETY: one of the driver's platforms, so its first word is the driver's table.
        let table = unsafe { table_of(platform.cast()) };
        // SAFETY: as above; the arguments are the caller's, forwarded unchanged.
        unsafe {
            match (*table).clGetPlatformInfo {
                Some(f) => f(platform, param_name, param_value_size, param_value, param_value_size_ret),
                None => CL_INVALID_PLATFORM,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn platform_versions_are_read() {
        assert_eq!(parse_version(b"OpenCL 3.0 PoCL 3.1+debian\0"), Some((3, 0)));
        assert_eq!(parse_version(b"OpenCL 1.2 CUDA 12.2.0"), Some((1, 2)));
        assert_eq!(parse_version(b"OpenCL 2.1"), Some((2, 1)));
        assert_eq!(parse_version(b"3.0 something"), None);
        assert_eq!(parse_version(b"OpenCL x.y"), None);
    }

    #[test]
    fn table_sizes_follow_the_version() {
        assert_eq!(entries_for(Some((3, 0))), 149, "through clSetContextDestructorCallback");
        assert_eq!(entries_for(Some((1, 2))), entries_for(None));
        let sizes: Vec<usize> =
            [(1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2), (3, 0)].map(|v| entries_for(Some(v))).to_vec();
        assert!(sizes.windows(2).all(|w| w[0] < w[1]), "{sizes:?}");
        assert!(entries_for(Some((9, 9))) <= ENTRIES);
    }

    #[test]
    fn protections_come_from_the_maps() {
        let maps = "00400000-00452000 r-xp 00000000 08:02 173521 /usr/bin/x\n\
                    00651000-00652000 rw-p 00051000 08:02 173521 /usr/bin/x\n";
        assert_eq!(protection_at(maps, 0x400010), Some(libc::PROT_READ | libc::PROT_EXEC));
        assert_eq!(protection_at(maps, 0x651fff), Some(libc::PROT_READ | libc::PROT_WRITE));
        assert_eq!(protection_at(maps, 0x652000), None);
    }

    #[test]
    fn the_loader_gets_our_platform_query() {
        // SAFETY: a C string literal.
        let ours = unsafe { clGetExtensionFunctionAddress(c"clIcdGetPlatformIDsKHR".as_ptr()) };
        assert_eq!(ours as usize, get_platform_ids as *const () as usize);
        // SAFETY: as above.
        let refused = unsafe { clGetExtensionFunctionAddress(c"clIcdSetPlatformDispatchDataKHR".as_ptr()) };
        assert!(refused.is_null());
        // SAFETY: both out-pointers NULL is refused before any use.
        assert_eq!(unsafe { clIcdGetPlatformIDsKHR(0, ptr::null_mut(), ptr::null_mut()) }, CL_INVALID_VALUE);
    }
}
