//! The progress line of `clrace check`: while a run lasts longer than a moment, one status line
//! on stderr (work-groups done of all, time so far), redrawn a few times a second and erased
//! when the run ends. Only when stderr is a terminal; the caller decides for other formats.
//! It sees only a counter of finished work-groups, not the run itself.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a run goes before the line appears.
const QUIET_START: Duration = Duration::from_secs(2);
/// How often the line is redrawn.
const REDRAW: Duration = Duration::from_millis(250);

/// A running progress line; [`Progress::finish`] erases it.
pub struct Progress {
    stop: Arc<(Mutex<bool>, Condvar)>,
    shown: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Progress {
    /// Starts showing `done` of `total` work-groups, if stderr is a terminal.
    pub fn start(done: Arc<AtomicU64>, total: u64) -> Progress {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let shown = Arc::new(AtomicBool::new(false));
        let thread = std::io::stderr().is_terminal().then(|| {
            let (stop, shown) = (stop.clone(), shown.clone());
            std::thread::spawn(move || draw_until_stopped(&done, total, &stop, &shown))
        });
        Progress { stop, shown, thread }
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
        if self.shown.load(Ordering::Relaxed) {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop_thread();
    }
}

fn draw_until_stopped(done: &AtomicU64, total: u64, stop: &(Mutex<bool>, Condvar), shown: &AtomicBool) {
    let started = Instant::now();
    let (lock, wake) = stop;
    let mut stopped = lock.lock().unwrap_or_else(|e| e.into_inner());
    let mut wait = QUIET_START;
    while !*stopped {
        let (guard, timeout) = wake.wait_timeout(stopped, wait).unwrap_or_else(|e| e.into_inner());
        stopped = guard;
        if *stopped || !timeout.timed_out() {
            continue;
        }
        let line = status(done.load(Ordering::Relaxed), total, started.elapsed());
        let _ = write!(std::io::stderr(), "\r\x1b[2K{line}");
        shown.store(true, Ordering::Relaxed);
        wait = REDRAW;
    }
}

/// The status text.
fn status(done: u64, total: u64, elapsed: Duration) -> String {
    format!("clrace: {done} of {total} work-group(s) done, {}s", elapsed.as_secs())
}

#[cfg(test)]
mod tests {
    #[test]
    fn status_names_groups_and_seconds() {
        assert_eq!(
            super::status(3, 10, std::time::Duration::from_millis(4500)),
            "clrace: 3 of 10 work-group(s) done, 4s"
        );
    }
}
