//! The one panic boundary of the layer's exports. Every `extern "C"` function the loader or the
//! application reaches runs its body through [`guard`] (the hooks) or [`entry`] (the loader's
//! own calls): the application's call is forwarded to the driver exactly once, whatever our part
//! does, and our part runs under `catch_unwind`, so that a panic of ours is one note in the
//! layer's output (written by the panic hook of `output.rs`) and never unwinds into C. The
//! only `extern "C"` functions outside it are the handler `pthread_atfork` calls in a forked
//! child (one atomic store) and the [`below!`] prelude of each hook (a table lookup): neither can
//! panic.
//!
//! It sees nothing of what a hook records (the hooks bring their own closures) and of the layer
//! only the forked-child rule and the table below, for [`below!`].
//!
//! Debug builds, and those alone, carry a hook for the tests: `CLRACE_TEST_PANIC=REGION` makes
//! our part panic at the fault point of that name (see [`fault`]), so that a test can show the
//! host going on past a panic in each guarded region. Release builds compile [`fault`] to
//! nothing and never read the variable.

use std::panic::{AssertUnwindSafe, catch_unwind};

/// The application's call to the driver, made at most once. A hook's part may make it itself
/// (with wait lists of its own, as the launch hooks do); otherwise [`guard`] makes it, as the
/// application asked, once our part is over.
pub struct Forward<F, R> {
    call: Option<F>,
    result: Option<R>,
}

impl<F, R: Copy> Forward<F, R> {
    /// Makes the call with `args` and returns the driver's result; a second call returns the
    /// first result again without calling the driver. `None` only if the call itself did not
    /// return (the forwarding closure holds nothing but the driver's call, which cannot unwind).
    pub fn call<A>(&mut self, args: A) -> Option<R>
    where
        F: FnOnce(A) -> R,
    {
        if let Some(call) = self.call.take() {
            self.result = Some(call(args));
        }
        self.result
    }
}

/// Runs one hook of the application's call. `around` is our part before (and, for a hook that
/// forwards with arguments of its own, around) the call; the call `forward` is then made with
/// the application's own arguments (`A::default()`: no extra events) unless `around` made it;
/// `after` is our part once the driver has answered (it runs even when `around` panicked). Each
/// part runs under `catch_unwind`: a panic in it ends that part only, and is logged (the panic
/// hook's note, `region` in the debug log). The application gets the driver's result, always. In a forked child (see
/// [`super::forked`]) only the call is made.
pub fn guard<A, R, F>(
    region: &'static str,
    forward: F,
    around: impl FnOnce(&mut Forward<F, R>),
    after: impl FnOnce(R),
) -> R
where
    A: Default,
    R: Copy + Unanswered,
    F: FnOnce(A) -> R,
{
    let mut call = Forward { call: Some(forward), result: None };
    if super::forked() {
        return plain(&mut call);
    }
    let first = catch_unwind(AssertUnwindSafe(|| {
        fault(region);
        around(&mut call)
    }));
    if first.is_err() {
        caught(region);
    }
    let Some(result) = call.call(A::default()) else {
        // Unreachable: the driver's call does not unwind.
        let _ = catch_unwind(|| tracing::warn!(region, "internal error: a driver's answer was lost"));
        return R::UNANSWERED;
    };
    let second = catch_unwind(AssertUnwindSafe(|| {
        fault_after(region);
        after(result)
    }));
    if second.is_err() {
        caught(region);
    }
    result
}

/// [`guard`] for a hook whose part follows the driver's answer (it records what was made).
pub fn then<R: Copy + Unanswered>(region: &'static str, forward: impl FnOnce() -> R, after: impl FnOnce(R)) -> R {
    guard(region, |()| forward(), |_| {}, after)
}

/// [`guard`] for a hook whose part comes before the call (it records what the call is given).
pub fn first<R: Copy + Unanswered>(region: &'static str, before: impl FnOnce(), forward: impl FnOnce() -> R) -> R {
    guard(region, |()| forward(), |_| before(), |_| {})
}

/// [`guard`] for a part of ours that no call of the application's goes with (the callback of a
/// snapshot's reads).
pub fn alone(region: &'static str, ours: impl FnOnce()) {
    guard(region, |()| (), |_| ours(), |()| {})
}

/// The layer and the entry `$name` of the table below it, or return the hook's
/// [`Unanswered`] value (the loader gives us a table before any call, so this is a defect, not an
/// error path).
macro_rules! below {
    ($name:ident) => {
        match super::layer().and_then(|l| l.next.$name.map(|f| (l, f))) {
            Some(pair) => pair,
            None => return super::boundary::Unanswered::UNANSWERED,
        }
    };
}
pub(super) use below;

/// The call as the application made it, and its result.
fn plain<A: Default, R: Copy + Unanswered, F: FnOnce(A) -> R>(call: &mut Forward<F, R>) -> R {
    call.call(A::default()).unwrap_or(R::UNANSWERED)
}

/// What a hook returns when it has no answer of the driver's to give: when the layer has no
/// table below it (the loader gives one before any call) or the driver's call did not return
/// (see [`Forward::call`]). Both are defects, not error paths.
pub trait Unanswered {
    const UNANSWERED: Self;
}

impl Unanswered for opencl_sys::cl_int {
    const UNANSWERED: Self = opencl_sys::CL_INVALID_OPERATION;
}

impl<T> Unanswered for *mut T {
    const UNANSWERED: Self = std::ptr::null_mut();
}

impl Unanswered for () {
    const UNANSWERED: Self = ();
}

/// Logs a caught panic of ours. The panic hook of `output.rs` has already written the one
/// `internal error at FILE:LINE` note the README promises; the region goes to the debug log.
fn caught(region: &str) {
    let _ = catch_unwind(|| tracing::debug!(region, "a panic of the layer was caught at the C boundary"));
}

/// Runs one of the loader's calls to the layer (`clGetLayerInfo`, `clInitLayer`, `clDeinitLayer`
/// and the exit handler), which have no driver below them: our part is the whole call, and a
/// panic in it returns `failed`. Nothing is printed here: before `clInitLayer` has opened the
/// output there is nowhere of ours to write, and after it the panic hook writes the note.
pub fn entry<R>(region: &'static str, failed: R, body: impl FnOnce() -> R) -> R {
    quiet_until_configured();
    catch_unwind(AssertUnwindSafe(|| {
        fault(region);
        body()
    }))
    .unwrap_or(failed)
}

/// Until `clInitLayer` installs the panic hook of the layer's output, a panic of ours would be
/// printed on the application's stderr by the default hook: the first call of the loader's
/// replaces it with one that says nothing.
fn quiet_until_configured() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| std::panic::set_hook(Box::new(|_| {})));
}

/// A test's fault point: panics when `CLRACE_TEST_PANIC` names `point`. Debug builds only (the
/// variable is read once); a no-op in release builds, which never read it.
#[inline]
pub fn fault(point: &str) {
    if chosen() == Some(point) {
        panic!("CLRACE_TEST_PANIC: a test panic in {point}");
    }
}

/// The fault point of a region's `after` part: `REGION/after`.
#[inline]
fn fault_after(region: &str) {
    if chosen().and_then(|point| point.strip_suffix("/after")) == Some(region) {
        panic!("CLRACE_TEST_PANIC: a test panic in {region}/after");
    }
}

/// The fault point `CLRACE_TEST_PANIC` names, in debug builds.
#[inline]
fn chosen() -> Option<&'static str> {
    #[cfg(debug_assertions)]
    {
        static CHOSEN: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
        CHOSEN.get_or_init(|| std::env::var("CLRACE_TEST_PANIC").ok()).as_deref()
    }
    #[cfg(not(debug_assertions))]
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_call_is_made_once_and_its_result_kept() {
        let calls = std::cell::Cell::new(0);
        let mut call = Forward {
            call: Some(|n: u32| {
                calls.set(calls.get() + 1);
                n + 1
            }),
            result: None,
        };
        assert_eq!(call.call(1), Some(2));
        assert_eq!(call.call(10), Some(2), "a second call returns the first result");
        assert_eq!(calls.get(), 1);
    }
}
