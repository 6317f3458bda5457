//! The threads that run a launch's work-groups. Each thread that runs launches keeps its own
//! workers for as long as it lives, so that a run does not start threads: a start costs a few
//! hundred microseconds here, as much as a small kernel's whole check, and the layer's checker
//! runs thousands of launches on one thread. `start` makes them ahead of the first run (a check of
//! one launch starts them while it reads its inputs).
//!
//! Each calling thread has workers of its own, never shared with another caller: the workers of a
//! run may wait for one another (a group waiting for another's write), which they could not do if
//! a second run's work sat between them on the same threads.
//!
//! It runs a closure on every worker and gives back what each returned, or queues one for each
//! worker to run before its part of the next run ([`ahead`]); what the closures do (taking
//! groups, merging findings, faulting in memory) is their callers' business.

use std::cell::RefCell;
use std::sync::Arc;

/// This thread's workers: how many, and the process that started them (a forked child has the
/// parent's record of them but not the threads).
struct Workers {
    pool: Arc<rayon_core::ThreadPool>,
    threads: usize,
    process: u32,
}

thread_local! {
    static WORKERS: RefCell<Option<Workers>> = const { RefCell::new(None) };
}

/// This thread's `threads` workers: those it has, or new ones (replacing any of another count).
/// `None` when the threads cannot be started.
fn pool(threads: usize) -> Option<Arc<rayon_core::ThreadPool>> {
    WORKERS.with(|cell| {
        let mut kept = cell.borrow_mut();
        let process = std::process::id();
        match kept.take() {
            Some(old) if old.process == process && old.threads == threads => {
                let pool = old.pool.clone();
                *kept = Some(old);
                return Some(pool);
            }
            // The threads stayed with the parent: there is nothing here to stop or join.
            Some(old) if old.process != process => std::mem::forget(old),
            // Another count: dropped, its threads end.
            _ => {}
        }
        let pool = rayon_core::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("clrace-worker-{i}"))
            .build()
            .map_err(|e| tracing::warn!("cannot start {threads} worker threads: {e}"))
            .ok()?;
        let pool = Arc::new(pool);
        *kept = Some(Workers { pool: pool.clone(), threads, process });
        Some(pool)
    })
}

/// Starts this thread's `threads` workers if they are not running yet, and returns at once.
pub fn start(threads: usize) {
    if threads > 1 {
        let _ = pool(threads);
    }
}

/// Queues `job` once on each of this thread's `threads` workers, when they are running, and
/// returns at once: each runs it before its part of the next run, so that what the job does
/// (faulting in memory the run will use) overlaps this thread's preparing that run. Nothing is
/// queued for one thread (the calling thread runs the groups itself) or when the workers could
/// not be started.
pub fn ahead(threads: usize, job: impl Fn() + Send + Sync + 'static) {
    if threads > 1
        && let Some(pool) = pool(threads)
    {
        pool.spawn_broadcast(move |_| job());
    }
}

/// Runs `work` once on each of `threads` threads (the calling thread alone when `threads` is 1)
/// and returns what each returned. A panic in `work` is raised here once every run has ended.
pub fn run_on<R: Send>(threads: usize, work: &(dyn Fn() -> R + Sync)) -> Vec<R> {
    if threads <= 1 {
        return vec![work()];
    }
    match pool(threads) {
        Some(pool) => pool.broadcast(|_| work()),
        // Threads of this run's own, as a last resort.
        None => std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads).map(|_| scope.spawn(work)).collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))).collect()
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn runs_once_on_each_worker_and_keeps_them() {
        let runs = AtomicUsize::new(0);
        let mut names = run_on(3, &|| {
            runs.fetch_add(1, Ordering::Relaxed);
            std::thread::current().name().map(str::to_owned).expect("workers are named")
        });
        assert_eq!(runs.load(Ordering::Relaxed), 3);
        names.sort();
        assert_eq!(names, ["clrace-worker-0", "clrace-worker-1", "clrace-worker-2"]);
        // The same threads run the next launch.
        let ids = || {
            let mut ids = run_on(3, &|| std::thread::current().id());
            ids.sort_by_key(|id| format!("{id:?}"));
            ids
        };
        let (a, b) = (ids(), ids());
        assert_eq!(a, b);
        assert!(!a.contains(&std::thread::current().id()));
        // Another count replaces them; one is the calling thread.
        assert_eq!(run_on(2, &|| 1).len(), 2);
        assert_eq!(run_on(1, &|| std::thread::current().id()), [std::thread::current().id()]);
    }

    #[test]
    fn work_queued_ahead_runs_on_each_worker_before_the_next_run() {
        use std::sync::{Arc, Mutex};
        let before: Arc<Mutex<Vec<std::thread::ThreadId>>> = Arc::default();
        let record = before.clone();
        ahead(2, move || record.lock().unwrap().push(std::thread::current().id()));
        // Each worker has run the job by the time it runs its part of the run.
        let seen = run_on(2, &|| (std::thread::current().id(), before.lock().unwrap().clone()));
        for (me, ran) in &seen {
            assert!(ran.contains(me), "the job ran on this worker before its run");
        }
        let mut ran = before.lock().unwrap().clone();
        ran.sort_by_key(|id| format!("{id:?}"));
        ran.dedup();
        assert_eq!(ran.len(), 2, "once on each of the two workers");
        // One thread queues nothing: the caller itself runs the groups.
        let calls = Arc::new(AtomicUsize::new(0));
        let count = calls.clone();
        ahead(1, move || {
            count.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(run_on(1, &|| 0), [0]);
        assert_eq!(calls.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_panic_in_one_worker_reaches_the_caller_and_the_workers_go_on() {
        let caught = std::panic::catch_unwind(|| {
            run_on(2, &|| {
                if std::thread::current().name() == Some("clrace-worker-1") {
                    panic!("boom");
                }
            })
        });
        assert!(caught.is_err());
        assert_eq!(run_on(2, &|| 7), [7, 7]);
    }
}
