//! The progress bar of `clrace check` (`indicatif`): while a run lasts longer than a moment, one
//! line on stderr (work-groups done of all, or a spool's launches reported of all, time so far,
//! rate), redrawn a few times a second and erased when the run ends. Only when stderr is a
//! terminal; the caller decides for other formats. Text written to stderr meanwhile goes
//! through [`Progress::suspend`], which lifts the line out of its way. It sees only a counter,
//! not the run itself.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long a run goes before the line appears.
const QUIET_START: Duration = Duration::from_secs(2);
/// How often the line is redrawn.
const REDRAW: Duration = Duration::from_millis(250);

/// The bar, once shown.
type Shown = Arc<Mutex<Option<ProgressBar>>>;

/// A running progress line; [`Progress::finish`] erases it.
pub struct Progress {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
    bar: Shown,
}

impl Progress {
    /// Starts showing `done` of `total` work-groups, if stderr is a terminal.
    pub fn start(done: Arc<AtomicU64>, total: u64) -> Progress {
        Progress::start_with(done, total, TEMPLATE)
    }

    /// Starts showing `done` of `total` spooled launches, if stderr is a terminal.
    pub fn start_launches(done: Arc<AtomicU64>, total: u64) -> Progress {
        Progress::start_with(done, total, LAUNCHES)
    }

    fn start_with(done: Arc<AtomicU64>, total: u64, template: &'static str) -> Progress {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let bar: Shown = Arc::default();
        let thread = std::io::stderr().is_terminal().then(|| {
            let (stop, bar) = (stop.clone(), bar.clone());
            std::thread::spawn(move || draw_until_stopped(&done, total, template, &stop, &bar))
        });
        Progress { stop, thread, bar }
    }

    /// Runs `f` (which writes to stderr) with the line out of its way.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        let bar = self.bar.lock().unwrap_or_else(|e| e.into_inner());
        match &*bar {
            Some(bar) => bar.suspend(f),
            None => f(),
        }
    }

    /// Stops and erases the line.
    pub fn finish(mut self) {
        self.stop_thread();
    }

    fn stop_thread(&mut self) {
        let (lock, wake) = &*self.stop;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
        wake.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop_thread();
    }
}

fn draw_until_stopped(
    done: &AtomicU64,
    total: u64,
    template: &'static str,
    stop: &(Mutex<bool>, Condvar),
    shown: &Mutex<Option<ProgressBar>>,
) {
    let (lock, wake) = stop;
    let mut stopped = lock.lock().unwrap_or_else(|e| e.into_inner());
    let mut wait = QUIET_START;
    while !*stopped {
        let (guard, timeout) = wake.wait_timeout(stopped, wait).unwrap_or_else(|e| e.into_inner());
        stopped = guard;
        if *stopped || !timeout.timed_out() {
            continue;
        }
        let mut bar = shown.lock().unwrap_or_else(|e| e.into_inner());
        bar.get_or_insert_with(|| new_bar(total, template)).set_position(done.load(Ordering::Relaxed));
        wait = REDRAW;
    }
    if let Some(bar) = shown.lock().unwrap_or_else(|e| e.into_inner()).take() {
        bar.finish_and_clear();
    }
}

/// The bar: what is done of all, time so far and rate, on stderr, started [`QUIET_START`] ago.
fn new_bar(total: u64, template: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr_with_hz(4));
    let style = ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style.progress_chars("=> "));
    bar.set_elapsed(QUIET_START);
    bar
}

/// What the bar shows.
const TEMPLATE: &str = "clrace: {pos} of {len} work-group(s) done, {elapsed} [{bar:30}] {per_sec}";
/// What the bar shows for a spool.
const LAUNCHES: &str = "clrace: {pos} of {len} spooled launch(es) checked, {elapsed} [{bar:20}] {per_sec}";

#[cfg(test)]
mod tests {
    #[test]
    fn the_bar_names_groups_time_and_rate() {
        assert!(indicatif::ProgressStyle::with_template(super::TEMPLATE).is_ok());
        assert!(indicatif::ProgressStyle::with_template(super::LAUNCHES).is_ok());
        let bar = super::new_bar(10, super::TEMPLATE);
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
        bar.set_position(3);
        assert_eq!((bar.position(), bar.length()), (3, Some(10)));
        assert!(bar.elapsed() >= super::QUIET_START, "the bar counts from the run's start");
    }
}
