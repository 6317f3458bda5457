//! Checks made while the application still runs (`clrace run`): threads at the lowest priority
//! check the launches of the spool as their manifests appear, with the settings the layer wrote
//! when it began (`runs/0/settings.json`), and keep the results. Once the application has
//! exited, the spool's check ([`super::check::SpoolCheck::adopt`]) takes them instead of checking
//! those launches again, when its settings check launches alike; it still reports every launch
//! itself, in SEQ order, so the reports are the same as without these checks. A check still under
//! way when the application exits is abandoned, and done again by the spool's check.
//!
//! Being at the lowest priority, they use the cores the application leaves idle. They see the
//! spool's files and the check of one launch, not the reports.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::Mutex;

use super::check::{EarlyResults, LaunchResult, LayerConfig, Overrides, Shared, settings};
use super::reader::{LaunchEntry, Spool};

/// How long a thread with nothing to check waits before it looks at the spool again.
const IDLE: Duration = Duration::from_millis(200);

/// The checks under way while the application runs.
pub struct Early {
    shared: Arc<State>,
    threads: Vec<JoinHandle<()>>,
}

struct State {
    dir: PathBuf,
    given: Overrides,
    stop: Arc<AtomicBool>,
    checker: Mutex<Option<Arc<Shared>>>,
    /// SEQs taken by a thread, finished or not.
    taken: Mutex<HashSet<u64>>,
    /// SEQs seen in the spool and not taken yet, in order: the directory is listed again only
    /// when these run out.
    pending: Mutex<VecDeque<u64>>,
    results: Mutex<HashMap<u64, LaunchResult>>,
}

impl Early {
    /// Starts `jobs` threads checking the spool `dir` (which the layer may not have made yet) as
    /// `clrace check DIR` with `given` would.
    pub fn start(dir: &Path, given: &Overrides, jobs: usize) -> Early {
        let shared = Arc::new(State {
            dir: dir.to_path_buf(),
            given: Overrides { shard: None, ..given.clone() },
            stop: Arc::new(AtomicBool::new(false)),
            checker: Mutex::new(None),
            taken: Mutex::new(HashSet::new()),
            pending: Mutex::new(VecDeque::new()),
            results: Mutex::new(HashMap::new()),
        });
        let threads = (0..jobs.max(1))
            .filter_map(|i| {
                let shared = shared.clone();
                std::thread::Builder::new().name(format!("clrace-early-{i}")).spawn(move || shared.work()).ok()
            })
            .collect();
        Early { shared, threads }
    }

    /// How many launches the checks have finished so far.
    pub fn finished(&self) -> usize {
        self.shared.results.lock().len()
    }

    /// Stops the checks (one under way is abandoned) and gives back what they finished.
    pub fn stop(self) -> EarlyResults {
        self.shared.stop.store(true, Ordering::Relaxed);
        for thread in self.threads {
            let _ = thread.join();
        }
        let settings = self.shared.checker.lock().as_ref().map(|c| c.settings.clone());
        EarlyResults { settings, results: std::mem::take(&mut *self.shared.results.lock()) }
    }
}

impl State {
    fn work(&self) {
        lowest_priority();
        while !self.stop.load(Ordering::Relaxed) {
            let next = self.checker().and_then(|checker| Some((self.next(&checker.spool)?, checker)));
            let Some((entry, checker)) = next else {
                std::thread::sleep(IDLE);
                continue;
            };
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| checker.check(&entry)));
            // A check the stop cut short is not a result; nor is a launch that could not be read
            // (the spool's check names it as it lists it).
            if let Ok(result) = result
                && !self.stop.load(Ordering::Relaxed)
                && result.spec.is_some()
            {
                self.results.lock().insert(entry.seq, result);
            }
        }
    }

    /// The checker, once the spool and the first run's settings exist.
    fn checker(&self) -> Option<Arc<Shared>> {
        let mut checker = self.checker.lock();
        if checker.is_none() {
            let spool = Spool::open(&self.dir).ok()?;
            let config: LayerConfig = serde_json::from_value(spool.run_settings(0)?).ok()?;
            let settings = settings(&self.given, &config).ok()?;
            *checker = Some(Arc::new(Shared::new(Arc::new(spool), settings, Some(self.stop.clone()))));
        }
        checker.clone()
    }

    /// The first complete launch no thread has taken, taken.
    fn next(&self, spool: &Spool) -> Option<LaunchEntry> {
        let mut pending = self.pending.lock();
        if pending.is_empty() {
            let names = std::fs::read_dir(self.dir.join("launches")).ok()?;
            let mut seqs: Vec<u64> =
                names.flatten().filter_map(|e| e.file_name().to_str()?.strip_suffix(".json")?.parse().ok()).collect();
            seqs.sort_unstable();
            let taken = self.taken.lock();
            pending.extend(seqs.into_iter().filter(|seq| !taken.contains(seq)));
        }
        let seq = pending.pop_front()?;
        self.taken.lock().insert(seq);
        Some(LaunchEntry { seq, path: spool.manifest_path(seq), kernel: String::new() })
    }
}

/// Puts the calling thread at the lowest scheduling priority, so that it runs on what the
/// application leaves idle.
fn lowest_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority on the calling thread's own id (Linux gives threads their own nice
    // value); it reads no memory of ours, and a failure only leaves the priority as it was.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, 19);
    }
}
