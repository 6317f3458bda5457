//! Writing a spool: [`SpoolWriter`] takes launch records from the layer's threads and writes them
//! on threads of its own (hashing and compression never run on the caller's thread): the
//! program record and the buffers as blobs first, then the launch's manifest, renamed into place
//! last, so that a crashed application leaves only complete launches. A disk budget bounds the
//! spool: a launch is admitted ([`SpoolWriter::reserve`]) for its uncompressed size before its
//! snapshot is taken, and charged what it really took once written.
//!
//! Several processes may write one spool at once (an application that starts others, each with
//! the layer): each writer claims a run number R of its own (`DIR/runs/R`, made atomically), and
//! a launch the caller numbers S is stored as SEQ = R x [`RUN_STRIDE`] + S, so the SEQs of
//! different processes never meet, and the first process's are the caller's own numbers. Each
//! run's layer state is `DIR/runs/R/layer.json`.
//!
//! It knows nothing of the layer's objects or of checking: it is handed plain data, and tells
//! the caller how each write went through the caller's callback.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Instant;

use parking_lot::{Condvar, Mutex};

use super::blobs::{Blobs, write_atomically};
use super::format::{BlobRef, FORMAT, LaunchRecord, SpoolInfo, SpooledLaunch};
use super::program::ProgramSpec;

/// How many threads write a spool.
const WRITERS: usize = 2;

/// The SEQs of one run (one process writing the spool): run R stores the caller's launch S as
/// R x RUN_STRIDE + S.
pub const RUN_STRIDE: u64 = 100_000_000;

/// What the writer calls once a launch is written (with the bytes it took on disk) or failed.
pub type Done = Box<dyn FnOnce(Result<u64, String>) + Send>;

/// A launch waiting to be written.
struct Queued {
    record: LaunchRecord,
    reserved: u64,
    done: Done,
}

#[derive(Default)]
struct Queue {
    waiting: VecDeque<Queued>,
    /// Launches taken by a writer thread and not finished.
    writing: usize,
}

/// A spool being written.
pub struct SpoolWriter {
    dir: PathBuf,
    /// This writer's run number (see the module's doc).
    run: u64,
    blobs: Blobs,
    budget: u64,
    /// Bytes on disk, plus those reserved for launches not written yet.
    used: AtomicU64,
    queue: Mutex<Queue>,
    /// Signalled when a launch is queued and when one is finished.
    changed: Condvar,
    /// The program records stored, by the program's address (the `Weak` kept keeps the address
    /// from being reused by another program, without keeping the program's text).
    programs: Mutex<HashMap<usize, (Weak<ProgramSpec>, BlobRef)>>,
    /// The writer threads, started with the first launch.
    threads: std::sync::Once,
    /// How many writer threads started.
    started: AtomicU64,
}

impl SpoolWriter {
    /// Makes (or opens) the spool `dir` with its `blobs/` and `launches/` and `spool.json`, and a
    /// writer for it within `budget_bytes` on disk. A spool of this format is written into as it
    /// is (its launches stay; blobs already there are not written again). Refuses a directory
    /// holding a spool of another format, a `spool.json` that is not a spool's, and a directory
    /// that holds other files and no `spool.json`.
    pub fn create(dir: &Path, budget_bytes: u64) -> Result<Arc<SpoolWriter>, String> {
        let cannot = |what: &Path, e: std::io::Error| format!("cannot make the spool {}: {e}", what.display());
        std::fs::create_dir_all(dir).map_err(|e| cannot(dir, e))?;
        let info_path = dir.join("spool.json");
        match std::fs::read(&info_path) {
            Ok(bytes) => {
                let info: SpoolInfo = serde_json::from_slice(&bytes)
                    .map_err(|e| format!("{} holds a spool.json that is not a clrace spool's ({e})", dir.display()))?;
                if info.format != FORMAT {
                    return Err(format!(
                        "{} holds a spool of format {} (written by clrace {}); this clrace writes format {FORMAT}: name another directory",
                        dir.display(),
                        info.format,
                        info.clrace
                    ));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // Not a directory of the user's files: blobs and launches would go among them.
                let mut entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
                if entries.next().is_some() {
                    return Err(format!(
                        "{} is not empty and is not a clrace spool (it has no spool.json): name a new or empty directory",
                        dir.display()
                    ));
                }
                let info =
                    serde_json::to_vec(&SpoolInfo::current()).map_err(|e| format!("cannot write spool.json: {e}"))?;
                write_atomically(&info_path, &info)?;
            }
            Err(e) => return Err(format!("cannot read {}: {e}", info_path.display())),
        }
        for sub in ["blobs", "launches", "runs"] {
            std::fs::create_dir_all(dir.join(sub)).map_err(|e| cannot(&dir.join(sub), e))?;
        }
        let run = claim_run(&dir.join("runs"))?;
        Ok(Arc::new(SpoolWriter {
            dir: dir.to_path_buf(),
            run,
            blobs: Blobs::new(dir.join("blobs")),
            budget: budget_bytes,
            used: AtomicU64::new(0),
            queue: Mutex::new(Queue::default()),
            changed: Condvar::new(),
            programs: Mutex::new(HashMap::new()),
            threads: std::sync::Once::new(),
            started: AtomicU64::new(0),
        }))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// This writer's run number: 0 for the first process that wrote the spool.
    pub fn run(&self) -> u64 {
        self.run
    }

    /// The SEQ a launch the caller numbers `local` is stored under.
    pub fn seq(&self, local: u64) -> u64 {
        self.run * RUN_STRIDE + local
    }

    /// The disk budget in bytes.
    pub fn budget(&self) -> u64 {
        self.budget
    }

    /// Bytes written, plus those reserved for launches not written yet.
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    /// Reserves `bytes` (a launch's uncompressed size) of the disk budget; false, reserving
    /// nothing, when they do not fit.
    pub fn reserve(&self, bytes: u64) -> bool {
        self.used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                used.checked_add(bytes).filter(|&total| total <= self.budget)
            })
            .is_ok()
    }

    /// Gives back a reservation whose launch will not be submitted.
    pub fn release(&self, reserved: u64) {
        self.charge(reserved, 0);
    }

    /// Replaces a reservation of `reserved` bytes with `written`.
    fn charge(&self, reserved: u64, written: u64) {
        let _ = self.used.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
            Some(used.saturating_sub(reserved).saturating_add(written))
        });
    }

    /// Queues `record`, admitted with `reserved` bytes, for a writer thread; `done` is called
    /// there once its manifest is in place (with the bytes written) or the write failed. Never
    /// blocks on the disk. When no writer thread could be started, the reservation is given
    /// back and `done` is called with the error on the caller's thread, before this returns.
    pub fn submit(self: &Arc<Self>, record: LaunchRecord, reserved: u64, done: Done) {
        self.start_threads();
        if self.started.load(Ordering::Relaxed) == 0 {
            self.release(reserved);
            done(Err("no spool writer thread could be started".into()));
            return;
        }
        self.queue.lock().waiting.push_back(Queued { record, reserved, done });
        self.changed.notify_all();
    }

    /// Waits until every queued launch is written, or until `deadline`. Returns how many are
    /// still queued or being written.
    pub fn drain(&self, deadline: Instant) -> usize {
        let mut queue = self.queue.lock();
        let left = |q: &Queue| q.waiting.len() + q.writing;
        while left(&queue) > 0 && !self.changed.wait_until(&mut queue, deadline).timed_out() {}
        left(&queue)
    }

    /// Writes this run's `DIR/runs/R/settings.json` (the settings its launches are checked
    /// with, known from the start, so that a checker may begin before the application ends).
    pub fn write_run_settings(&self, settings: &serde_json::Value) -> Result<(), String> {
        let text = serde_json::to_vec_pretty(settings).map_err(|e| format!("cannot write the settings: {e}"))?;
        write_atomically(&self.dir.join("runs").join(self.run.to_string()).join("settings.json"), &text)
    }

    /// Writes this run's `DIR/runs/R/layer.json` (the layer's ledger at exit), atomically.
    pub fn write_layer_state(&self, state: &serde_json::Value) -> Result<(), String> {
        let text = serde_json::to_vec_pretty(state).map_err(|e| format!("cannot write the layer state: {e}"))?;
        write_atomically(&self.dir.join("runs").join(self.run.to_string()).join("layer.json"), &text)
    }

    fn start_threads(self: &Arc<Self>) {
        self.threads.call_once(|| {
            for i in 0..WRITERS {
                let writer = self.clone();
                let spawned =
                    std::thread::Builder::new().name(format!("clrace-spool-{i}")).spawn(move || writer.work());
                if spawned.is_ok() {
                    self.started.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
    }

    fn work(&self) {
        loop {
            let Queued { record, reserved, done } = {
                let mut queue = self.queue.lock();
                loop {
                    if let Some(next) = queue.waiting.pop_front() {
                        queue.writing += 1;
                        break next;
                    }
                    self.changed.wait(&mut queue);
                }
            };
            let seq = self.seq(record.seq);
            let mut written = 0;
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.write(record, &mut written)))
                .unwrap_or_else(|_| Err(format!("internal error while spooling launch {seq}")));
            self.charge(reserved, written);
            let result = result.map(|()| written);
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| done(result)));
            self.queue.lock().writing -= 1;
            self.changed.notify_all();
        }
    }

    /// Writes one launch: its program record and buffers as blobs, then its manifest. Adds the
    /// bytes it put on disk to `written` as it goes (a failed write's blobs stay, and count).
    fn write(&self, record: LaunchRecord, written: &mut u64) -> Result<(), String> {
        let program = self.program_blob(&record.program, written)?;
        let mut buffers = Vec::with_capacity(record.buffers.len());
        for buffer in record.buffers {
            let (blob, bytes) = self.blobs.put(&buffer)?;
            *written += bytes;
            buffers.push(blob);
            // Freed as soon as it is written.
            drop(buffer);
        }
        let seq = self.seq(record.seq);
        let manifest = SpooledLaunch {
            format: FORMAT,
            seq,
            kernel: record.kernel,
            number: record.number,
            program,
            work_dim: record.work_dim,
            offset: record.offset,
            global: record.global,
            local: record.local,
            args: record.args,
            buffers,
            modes: record.modes,
        };
        let text = serde_json::to_vec_pretty(&manifest).map_err(|e| format!("cannot write a manifest: {e}"))?;
        write_atomically(&manifest_path(&self.dir, seq), &text)?;
        *written += text.len() as u64;
        Ok(())
    }

    /// The program record's blob, stored on the first launch of the program.
    fn program_blob(&self, program: &Arc<ProgramSpec>, written: &mut u64) -> Result<BlobRef, String> {
        let key = Arc::as_ptr(program) as usize;
        if let Some((_, blob)) = self.programs.lock().get(&key) {
            return Ok(blob.clone());
        }
        let json = serde_json::to_vec(&**program).map_err(|e| format!("cannot write a program record: {e}"))?;
        let (blob, bytes) = self.blobs.put(&json)?;
        *written += bytes;
        let mut programs = self.programs.lock();
        // Those the layer dropped go: their addresses may come back for new programs.
        programs.retain(|_, (weak, _)| weak.strong_count() > 0);
        programs.insert(key, (Arc::downgrade(program), blob.clone()));
        Ok(blob)
    }
}

/// Claims the first free run number under `runs` (a directory made atomically: two processes
/// never get the same one).
fn claim_run(runs: &Path) -> Result<u64, String> {
    for run in 0..u64::MAX / RUN_STRIDE {
        match std::fs::create_dir(runs.join(run.to_string())) {
            Ok(()) => return Ok(run),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("cannot make a run of the spool in {}: {e}", runs.display())),
        }
    }
    Err(format!("no run number is left in {}", runs.display()))
}

/// `DIR/launches/SEQ.json`, SEQ zero-padded to 8 digits.
pub fn manifest_path(dir: &Path, seq: u64) -> PathBuf {
    dir.join("launches").join(format!("{seq:08}.json"))
}
