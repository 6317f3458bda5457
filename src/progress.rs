//! The progress bar of `clrace check` (`indicatif`): while a run lasts longer than a moment, one
//! line on stderr (work-groups done of all, time so far, rate), redrawn a few times a second and
//! erased when the run ends. Only when stderr is a terminal; the caller decides for other formats.
//! It sees only a counter of finished work-groups, not the run itself.

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

/// A running progress line; [`Progress::finish`] erases it.
pub struct Progress {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl Progress {
    /// Starts showing `done` of `total` work-groups, if stderr is a terminal.
    pub fn start(done: Arc<AtomicU64>, total: u64) -> Progress {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let thread = std::io::stderr().is_terminal().then(|| {
            let stop = stop.clone();
            std::thread::spawn(move || draw_until_stopped(&done, total, &stop))
        });
        Progress { stop, thread }
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

fn draw_until_stopped(done: &AtomicU64, total: u64, stop: &(Mutex<bool>, Condvar)) {
    let (lock, wake) = stop;
    let mut stopped = lock.lock().unwrap_or_else(|e| e.into_inner());
    let mut wait = QUIET_START;
    let mut bar: Option<ProgressBar> = None;
    while !*stopped {
        let (guard, timeout) = wake.wait_timeout(stopped, wait).unwrap_or_else(|e| e.into_inner());
        stopped = guard;
        if *stopped || !timeout.timed_out() {
            continue;
        }
        let bar = bar.get_or_insert_with(|| new_bar(total));
        bar.set_position(done.load(Ordering::Relaxed));
        wait = REDRAW;
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
}

/// The bar: groups done of all, time so far and rate, on stderr, started [`QUIET_START`] ago.
fn new_bar(total: u64) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr_with_hz(4));
    let style = ProgressStyle::with_template(TEMPLATE).unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style.progress_chars("=> "));
    bar.set_elapsed(QUIET_START);
    bar
}

/// What the bar shows.
const TEMPLATE: &str = "clrace: {pos} of {len} work-group(s) done, {elapsed} [{bar:30}] {per_sec}";

#[cfg(test)]
mod tests {
    #[test]
    fn the_bar_names_groups_time_and_rate() {
        assert!(indicatif::ProgressStyle::with_template(super::TEMPLATE).is_ok());
        let bar = super::new_bar(10);
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
        bar.set_position(3);
        assert_eq!((bar.position(), bar.length()), (3, Some(10)));
        assert!(bar.elapsed() >= super::QUIET_START, "the bar counts from the run's start");
    }
}
