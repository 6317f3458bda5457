//! The checkers: threads of ours that run snapshotted launches in the emulator with the race
//! detector, behind the application, and write the reports.
//!
//! Launch hooks ask [`Checker::admit`] (the policy is in `admission.rs`) and, once a snapshot
//! is complete, hand over a [`Job`]. Jobs wait in one queue for one of `CLRACE_CHECKERS`
//! threads. Every check runs under the memory limit (snapshots, emulator and shadow together:
//! one [`MemoryBudget`]), the branch budget and a limit of CPU time (`CLRACE_CHECK_TIMEOUT`,
//! the check's threads together, so that what is checked does not depend on the machine's
//! load), after which it is abandoned and named. A finding already reported for an earlier launch of
//! the same kernel is counted, not printed again. At process exit the checks that are queued or
//! running get a bounded time; snapshots still waiting for the device are not waited for.
//!
//! With a spool (`CLRACE_SPOOL`, `spooling.rs`) no checker thread starts: every admitted launch
//! goes to the spool writer once its snapshot is complete, to be checked after the application.
//!
//! It never touches a C pointer: jobs are plain data.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::admission::{self, Class, Configurations, KernelKey, Ledger, Skip};
use super::config::{Backlog, Config, OnFinding};
use super::output::Output;
use super::state::{ProgramSource, ProgramState};
use crate::budget::MemoryBudget;
use crate::check::{Checked, Plan};
use crate::detect;
use crate::exec::{ExecError, Launch, Policy, RunOptions};
use crate::failure::{Failure, Limits, cited};
use crate::program::Program;
use crate::report::{self, Format, LaunchFindings, Occasion, Sources};
use crate::series::{self, Reports, Totals};
use crate::spool::{BlobRef, InputError, LaunchInputs, LaunchRecord, SpoolWriter, SpooledArg, SpooledLaunch};

mod spooling;
#[cfg(test)]
mod tests;

/// A launch to check (or to spool), with copies of the buffers it reads: what the spool
/// stores of it ([`LaunchRecord`]'s fields), and the program object it belongs to.
pub struct Job {
    /// The kernel's program object (its emulator build is made once, there).
    pub program: Arc<ProgramState>,
    pub kernel: String,
    /// Which launch of this kernel object it is (1 = first).
    pub number: u64,
    pub work_dim: u32,
    pub offset: [u64; 3],
    pub global: [u64; 3],
    /// None when the application gave no local size.
    pub local: Option<[u64; 3]>,
    pub args: Vec<SpooledArg>,
    /// The snapshot of each distinct root buffer, filled by the driver's reads.
    pub buffers: Vec<Vec<u8>>,
    /// The host's access mode of each root buffer (by index; missing ones are read-write): the
    /// one every argument bound to it has, read-write when they differ.
    pub modes: Vec<crate::exec::memory::BufferMode>,
}

impl Job {
    pub fn key(&self) -> KernelKey {
        KernelKey { program: self.program.file_name(), name: self.kernel.clone() }
    }

    /// The emulator's inputs for this launch of kernel `info`, converted exactly as the spool
    /// checker converts a spooled launch (see [`SpooledLaunch::to_launch`]).
    fn inputs(&self, info: &crate::program::KernelInfo) -> Result<LaunchInputs, InputError> {
        // Only the fields `to_launch` reads matter: the blobs are not made for an inline check.
        let view = SpooledLaunch {
            format: crate::spool::format::FORMAT,
            seq: 0,
            kernel: self.kernel.clone(),
            number: self.number,
            program: BlobRef { hash: String::new(), size: 0 },
            work_dim: self.work_dim,
            offset: self.offset,
            global: self.global,
            local: self.local,
            args: self.args.clone(),
            buffers: Vec::new(),
            modes: self.modes.clone(),
        };
        view.to_launch(info)
    }

    /// The launch as the spool writer takes it (the buffers move): None when its program is
    /// not one the emulator can build.
    pub fn into_record(self, seq: u64, number: u64) -> Option<LaunchRecord> {
        Some(LaunchRecord {
            seq,
            kernel: self.kernel,
            number,
            program: self.program.spec.clone()?,
            work_dim: self.work_dim,
            offset: self.offset,
            global: self.global,
            local: self.local,
            args: self.args,
            buffers: self.buffers,
            modes: self.modes,
        })
    }
}

/// An admitted launch: its place in the ledger, the snapshot memory charged for it and, with
/// `CLRACE_ORDER=before`, the gate its device launch waits on. Given back with the job, or with
/// [`Checker::abandon`]; the gate opens when the ticket is dropped, whatever happened.
pub struct Ticket {
    key: KernelKey,
    bytes: u64,
    /// What `bytes` are charged to, and the check's memory with them: the whole memory limit
    /// for a new launch, the repeats' share for a repeat.
    memory: Arc<MemoryBudget>,
    /// New (a first launch, or a new configuration) or a repeat: checkers take new ones first.
    class: Class,
    /// The admission order (one counter for every kernel): the spooled launch's SEQ.
    seq: u64,
    /// Which launch of its kernel it is, by the ledger's count (the spooled launch's number).
    number: u64,
    /// Bytes of the spool's disk budget reserved for it (with a spool).
    reserved: u64,
    pub gate: Option<Gate>,
}

/// What holds a launch on the device until its check is written (`CLRACE_ORDER=before`). The
/// launch hook builds it around the driver's user event; here it is only opened (when dropped)
/// or used to hold the launch back for good.
pub struct Gate {
    /// Releases the launch: `true` runs it, `false` ends it unrun.
    release: Option<Box<dyn FnOnce(bool) + Send>>,
}

impl Gate {
    pub fn new(release: impl FnOnce(bool) + Send + 'static) -> Gate {
        Gate { release: Some(Box::new(release)) }
    }

    /// Ends the launch without running it.
    pub fn hold_back(mut self) {
        if let Some(release) = self.release.take() {
            release(false);
        }
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        if let Some(release) = self.release.take() {
            release(true);
        }
    }
}

/// A check under way: the flag that abandons it, and how far it got.
#[derive(Clone)]
struct Running {
    cancel: Arc<AtomicBool>,
    started: Instant,
    key: KernelKey,
    launch: u64,
    /// Work-groups done, counted by the emulator, of `total`.
    done: Arc<AtomicU64>,
    total: Arc<AtomicU64>,
}

/// A check's wall time may be this many times its CPU-time limit (`CLRACE_CHECK_TIMEOUT`): a
/// safety net for a check that sleeps, never the limit of one that works.
const WALL_BACKSTOP: u64 = 10;

/// How long a check runs before the layer says, once per kernel, that it is under way.
const SLOW_CHECK: Duration = Duration::from_secs(5);

/// Everything behind the checker's one lock.
#[derive(Default)]
struct Inner {
    ledger: Ledger,
    /// Complete snapshots waiting for a checker.
    ready: VecDeque<(Job, Ticket)>,
    /// Admitted launches whose snapshot the device has not finished.
    gated: u64,
    /// Checks running.
    running: Vec<Running>,
    /// The reports so far: what earlier launches of each kernel reported, and the totals.
    reports: Reports,
    /// Time the application's threads spent waiting for a checker (`CLRACE_ON_BACKLOG=wait`).
    waited: Duration,
    /// Launches not run because their check found something (`CLRACE_ON_FINDING=skip`).
    held_back: u64,
    /// Set at exit: nothing more is admitted.
    closed: bool,
    /// The configurations of each kernel admitted so far (new launches are checked first).
    configurations: Configurations,
    /// Launches admitted so far: the next one's SEQ.
    admitted: u64,
    /// Launches handed to the spool writer and not written yet, by kernel.
    writing: std::collections::HashMap<KernelKey, u64>,
}

/// The checker shared by all hooks.
pub struct Checker {
    pub config: Config,
    pub output: Arc<Output>,
    memory: Arc<MemoryBudget>,
    /// The share of `memory` repeats may hold (see `admission.rs`).
    repeats: Arc<MemoryBudget>,
    inner: Mutex<Inner>,
    /// Signalled when a job arrives and when one finishes.
    changed: Condvar,
    /// The checker threads, started with the first admitted launch (an application whose
    /// kernels are all filtered out never pays for them). None start with a spool.
    workers: std::sync::Once,
    /// `CLRACE_SPOOL`: where admitted launches are written instead of checked.
    spool: Option<Arc<SpoolWriter>>,
}

impl Checker {
    pub fn new(config: Config, output: Arc<Output>) -> Arc<Checker> {
        let memory = MemoryBudget::new(config.memory_mb << 20);
        let repeats = MemoryBudget::within(&memory, admission::repeat_share(memory.limit()));
        let spool = config.spool.as_deref().and_then(|dir| match SpoolWriter::create(dir, config.spool_mb << 20) {
            Ok(writer) => {
                // A checker may start on the launches while the application runs (clrace run).
                if let Err(e) = writer.write_run_settings(&spooling::settings_json(&config)) {
                    output.note_once("spool-settings", &format!("CLRACE_SPOOL: {e}"));
                }
                Some(writer)
            }
            Err(e) => {
                output.note_once("spool", &format!("CLRACE_SPOOL: {e}; launches are checked inline"));
                None
            }
        });
        Arc::new(Checker {
            config,
            output,
            memory,
            repeats,
            inner: Mutex::new(Inner::default()),
            changed: Condvar::new(),
            workers: std::sync::Once::new(),
            spool,
        })
    }

    /// Whether admitted launches go to a spool rather than to inline checks.
    pub fn spooling(&self) -> bool {
        self.spool.is_some()
    }

    pub fn note_once(&self, key: &str, message: &str) {
        self.output.note_once(key, message);
    }

    /// Starts the checker threads unless they run already.
    fn start_workers(self: &Arc<Self>) {
        self.workers.call_once(|| {
            for i in 0..self.config.checkers {
                let worker = self.clone();
                let spawned =
                    std::thread::Builder::new().name(format!("clrace-checker-{i}")).spawn(move || worker.work());
                if let Err(e) = spawned {
                    self.note_once("no-thread", &format!("cannot start a checker thread ({e}); fewer checks run"));
                }
            }
            let watcher = self.clone();
            let _ = std::thread::Builder::new().name("clrace-watcher".into()).spawn(move || watcher.watch());
        });
    }

    /// Counts a launch the configuration leaves out (`CLRACE_KERNELS`, `CLRACE_FIRST_LAUNCHES`).
    pub fn filtered(&self, key: &KernelKey) {
        self.inner.lock().ledger.record(key).launches += 1;
    }

    /// Counts a launch that cannot be checked (`why`), and names it once per kernel and reason.
    pub fn unchecked(&self, key: &KernelKey, why: &str) {
        let mut inner = self.inner.lock();
        inner.ledger.record(key).launches += 1;
        self.skip(&mut inner, key, &Skip::Cannot(why.to_string()));
    }

    /// Counts a skipped launch in the ledger and names it once per kernel and reason.
    fn skip(&self, inner: &mut Inner, key: &KernelKey, why: &Skip) {
        let reason = why.reason();
        inner.ledger.skip(key, &reason);
        let what = if self.spool.is_some() { "are not spooled" } else { "go unchecked" };
        let message = format!("launches of kernel '{}' ({}) {what}: {reason}", key.name, key.program);
        self.note_once(&format!("skip {key:?} {reason}"), &message);
    }

    /// Decides whether a launch of `key` with `bytes` of snapshot and configuration `config`
    /// (see `admission.rs`) is checked, or spooled. None: forward it unchecked (counted, and
    /// named once per kernel and reason).
    pub fn admit(
        self: &Arc<Self>,
        key: &KernelKey,
        bytes: u64,
        (global, local): ([u64; 3], Option<[u64; 3]>),
        config: u64,
    ) -> Option<Ticket> {
        let mut inner = self.inner.lock();
        let number = {
            let record = inner.ledger.record(key);
            record.launches += 1;
            record.launches
        };
        if inner.closed {
            return None;
        }
        let skip = |inner: &mut Inner, why: Skip| {
            self.skip(inner, key, &why);
            None
        };
        if let Some(why) = admission::too_large(global, local) {
            return skip(&mut inner, why);
        }
        let class = match &self.spool {
            Some(_) => Class::New,
            None => inner.configurations.class(key, inner.ledger.covered(key), config),
        };
        let mut reserved = 0;
        if let Some(writer) = &self.spool {
            if !writer.reserve(bytes) {
                return skip(&mut inner, Skip::SpoolFull { limit_mb: self.config.spool_mb });
            }
            reserved = bytes;
        } else if class == Class::Repeat {
            let behind = |inner: &Inner| {
                inner.ledger.in_flight(key) || inner.ready.len() + inner.running.len() >= self.config.checkers
            };
            if behind(&inner) && self.config.backlog == Backlog::Wait {
                let allowed = Duration::from_millis(self.config.wait_ms).saturating_sub(inner.waited);
                let started = Instant::now();
                let deadline = started + allowed;
                while behind(&inner) && !self.changed.wait_until(&mut inner, deadline).timed_out() {}
                inner.waited += started.elapsed();
            }
            if behind(&inner) {
                return skip(&mut inner, Skip::Behind);
            }
        }
        let mut gave_way = Vec::new();
        if !self.charge_snapshot(&mut inner, class, bytes, &mut gave_way) {
            if let Some(writer) = &self.spool {
                writer.release(reserved);
            }
            drop(skip(&mut inner, Skip::Memory { limit: self.memory.limit(), repeat: class == Class::Repeat }));
            drop(inner);
            drop(gave_way);
            return None;
        }
        inner.ledger.admit(key);
        inner.configurations.admitted(key, config);
        inner.gated += 1;
        let seq = inner.admitted;
        inner.admitted += 1;
        drop(inner);
        // Dropped without the lock: dropping a ticket opens its gate, and the driver may run
        // callbacks of ours from that call.
        drop(gave_way);
        if self.spool.is_none() {
            self.start_workers();
        }
        let memory = if class == Class::Repeat { self.repeats.clone() } else { self.memory.clone() };
        Some(Ticket { key: key.clone(), bytes, memory, class, seq, number, reserved, gate: None })
    }

    /// Charges a snapshot of `bytes` to the memory limit (a repeat's to the repeats' share of
    /// it). A new launch that does not fit takes the memory of queued repeats, which give way
    /// (into `gave_way`, to be dropped without the lock): repeat checks never keep a new launch
    /// out.
    fn charge_snapshot(&self, inner: &mut Inner, class: Class, bytes: u64, gave_way: &mut Vec<(Job, Ticket)>) -> bool {
        let budget = if class == Class::Repeat { &self.repeats } else { &self.memory };
        loop {
            if budget.try_charge(bytes) {
                return true;
            }
            if class == Class::Repeat {
                return false;
            }
            let Some(at) = inner.ready.iter().rposition(|(_, t)| t.class == Class::Repeat) else { return false };
            let (job, ticket) = inner.ready.remove(at).expect("a queued repeat");
            ticket.memory.release(ticket.bytes);
            inner.ledger.give_back(&ticket.key, "its queued check gave way to a new launch when memory ran short");
            gave_way.push((job, ticket));
        }
    }

    /// Gives back an admitted launch whose job will not come (its snapshot failed): `why` says so.
    pub fn abandon(&self, ticket: Ticket, why: &str) {
        ticket.memory.release(ticket.bytes);
        if let Some(writer) = &self.spool {
            writer.release(ticket.reserved);
        }
        let mut inner = self.inner.lock();
        inner.gated -= 1;
        inner.ledger.give_back(&ticket.key, why);
        drop(inner);
        self.changed.notify_all();
    }

    /// Hands over a job whose snapshot is complete (called on a driver thread: never blocks long).
    pub fn submit(self: &Arc<Self>, job: Job, ticket: Ticket) {
        let mut inner = self.inner.lock();
        inner.gated -= 1;
        if inner.closed {
            // After exit began nothing more is checked; the gate opens as the ticket goes.
            inner.ledger.failed(&ticket.key, "its snapshot completed after exit began");
            drop(inner);
            ticket.memory.release(ticket.bytes);
            if let Some(writer) = &self.spool {
                writer.release(ticket.reserved);
            }
            return;
        }
        if let Some(writer) = &self.spool {
            // Counted as being written under the same lock that ends its gate, so that exit,
            // which waits for both counts, never sees it in neither.
            *inner.writing.entry(ticket.key.clone()).or_default() += 1;
            drop(inner);
            return self.spool_job(writer, job, ticket);
        }
        inner.ready.push_back((job, ticket));
        drop(inner);
        self.changed.notify_all();
    }

    fn work(&self) {
        loop {
            let (job, mut ticket, running) = {
                let mut inner = self.inner.lock();
                loop {
                    if let Some((job, ticket)) = next_job(&mut inner) {
                        let running = Running {
                            cancel: Arc::new(AtomicBool::new(false)),
                            started: Instant::now(),
                            key: ticket.key.clone(),
                            launch: job.number,
                            done: Arc::new(AtomicU64::new(0)),
                            total: Arc::new(AtomicU64::new(0)),
                        };
                        inner.running.push(running.clone());
                        break (job, ticket, running);
                    }
                    self.changed.wait(&mut inner);
                }
            };
            let cancel = &running.cancel;
            let (kernel, number) = (job.kernel.clone(), job.number);
            let program = ticket.key.program.clone();
            let started = Instant::now();
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.check(job, &ticket.key, &running, &ticket.memory)
            }));
            tracing::debug!(%kernel, launch = number, elapsed = ?started.elapsed(), "checked");
            let outcome = result.unwrap_or_else(|_| {
                Err::<bool, _>(Failure {
                    kind: "internal",
                    reason: "internal error in the checker".into(),
                    message: format!(
                        "launch {number} of kernel '{kernel}' ({program}) could not be checked: internal error"
                    ),
                })
            });
            ticket.memory.release(ticket.bytes);
            if outcome.as_ref().is_ok_and(|&found| found) {
                self.act_on_finding(&mut ticket, &kernel, number);
            }
            // The gate, if any, opens here: the report is written.
            let key = ticket.key.clone();
            drop(ticket);
            // The note before the check leaves the running list: the exit, which waits for that
            // list to empty before it writes the summary, must find the note written (written
            // after, it went missing when the application exited meanwhile).
            if let Err(failure) = &outcome {
                self.note_once(&format!("failed {key:?} {}", failure.kind), &failure.message);
            }
            let mut inner = self.inner.lock();
            inner.running.retain(|r| !Arc::ptr_eq(&r.cancel, cancel));
            match outcome {
                Ok(_) => inner.ledger.checked(&key),
                Err(failure) => inner.ledger.failed(&key, &failure.reason),
            }
            self.changed.notify_all();
        }
    }

    /// Says once per kernel when one of its checks has run for [`SLOW_CHECK`], with how far it got.
    fn watch(&self) {
        loop {
            std::thread::sleep(Duration::from_secs(1));
            let slow: Vec<Running> =
                self.inner.lock().running.iter().filter(|r| r.started.elapsed() >= SLOW_CHECK).cloned().collect();
            for r in slow {
                let (done, total) = (r.done.load(Ordering::Relaxed), r.total.load(Ordering::Relaxed));
                let message = format!(
                    "checking launch {} of kernel '{}' ({}) takes a while: {done} of {total} work-group(s) done after {} s (CLRACE_CHECK_TIMEOUT={} s of CPU time)",
                    r.launch,
                    r.key.name,
                    r.key.program,
                    r.started.elapsed().as_secs(),
                    self.config.check_timeout_ms / 1000
                );
                self.note_once(&format!("slow {:?}", r.key), &message);
            }
        }
    }

    /// `CLRACE_ON_FINDING` for a launch held before the device (`CLRACE_ORDER=before`) whose
    /// check found something.
    fn act_on_finding(&self, ticket: &mut Ticket, kernel: &str, number: u64) {
        let Some(gate) = ticket.gate.take() else { return };
        match self.config.on_finding {
            OnFinding::Continue => ticket.gate = Some(gate),
            OnFinding::Skip => {
                gate.hold_back();
                self.inner.lock().held_back += 1;
                self.output.note(&format!(
                    "launch {number} of kernel '{kernel}' was not run on the device (CLRACE_ON_FINDING=skip): its buffers keep their contents, its event ends with an error status, and the application's results differ from a run without clrace"
                ));
            }
            OnFinding::Abort => {
                self.output.note(&format!(
                    "launch {number} of kernel '{kernel}' has findings (CLRACE_ON_FINDING=abort): ending the process with status {} before it runs",
                    self.config.fail_status
                ));
                // SAFETY: flushing C stdio and leaving with a status, as `exit` would minus the
                // exit handlers, which would wait for this very thread (the user asked for this).
                unsafe {
                    libc::fflush(std::ptr::null_mut());
                    libc::_exit(self.config.fail_status);
                }
            }
        }
    }

    /// The emulator's build of the job's program, made once per program object from its
    /// [`crate::spool::ProgramSpec`] (as the spool checker builds a spooled launch's).
    fn build(&self, job: &Job) -> Result<Arc<Program>, String> {
        let program = &job.program;
        program
            .built
            .get_or_init(|| match (&program.spec, &program.source) {
                (Some(spec), _) => spec.build().map(Arc::new).map_err(|e| e.to_string()),
                (None, ProgramSource::Unsupported(why)) => Err(why.to_string()),
                (None, _) => Err("its program is of a kind the emulator does not take".to_string()),
            })
            .clone()
    }

    /// Runs one check and writes its reports.
    /// Returns whether the launch has findings (new or seen before).
    fn check(
        &self,
        mut job: Job,
        key: &KernelKey,
        running: &Running,
        memory: &Arc<MemoryBudget>,
    ) -> Result<bool, Failure> {
        let cancel = &running.cancel;
        let name = job.kernel.clone();
        let number = job.number;
        let program = self.build(&job).map_err(|why| Failure::build(&key.program, &why))?;
        let info = program.kernel(&name).ok_or_else(|| Failure::missing(&name, &key.program))?;
        let LaunchInputs { launch, modes, assumed_local } =
            job.inputs(info).map_err(|e| e.failure(&name, &key.program))?;
        if let Some(assumed) = assumed_local {
            self.note_once(
                &format!("local {key:?}"),
                &format!(
                    "kernel '{name}' is launched without a local size; it is checked with an assumed local size ({},{},{}), and races in local memory depend on it",
                    assumed[0], assumed[1], assumed[2]
                ),
            );
        }
        let run = RunOptions {
            threads: self.config.threads,
            sub_group_size: self.config.sub_group_size,
            budget: self.config.budget,
            memory: Some(memory.clone()),
            cpu_limit: Some(Duration::from_millis(self.config.check_timeout_ms)),
            // Only a safety net for a check that sleeps: the limit is its CPU time.
            deadline: Some(Instant::now() + Duration::from_millis(self.config.check_timeout_ms * WALL_BACKSTOP)),
            cancel: Some(cancel.clone()),
            progress: Some(running.done.clone()),
            policy: self.config.sub_group_lockstep.map_or(Policy::Lockstep, Policy::SubGroups),
            buffer_modes: modes,
            check_uninitialized: self.config.check_uninitialized,
            noinit: Vec::new(),
            ..RunOptions::default()
        };
        let groups: u64 = (0..3).map(|d| launch.global_size[d].div_ceil(launch.local_size[d].max(1))).product();
        running.total.store(groups, Ordering::Relaxed);
        // Exploration re-runs from the launch's inputs, which the check overwrites: a copy,
        // charged to the layer's memory.
        let inputs = self.config.explore.as_ref().filter(|e| number <= e.launches).and_then(|_| {
            let bytes: u64 = job.buffers.iter().map(|b| b.len() as u64).sum();
            if memory.try_charge(bytes) {
                return Some((job.buffers.clone(), bytes));
            }
            let why = format!("its inputs do not fit CLRACE_MEMORY_MB={} twice", self.config.memory_mb);
            let message = format!("kernel '{name}' ({}) is not explored: {why}", key.program);
            self.note_once(&format!("explore {name}"), &message);
            None
        });
        let explore =
            inputs.as_ref().and_then(|(inputs, _)| Some((inputs.as_slice(), self.explore(info, &launch, &run)?)));
        let plan = Plan { races: Some(self.detector_options()), run, explore, release_buffers: true };
        let checked = crate::check::check(&program, &launch, &mut job.buffers, plan);
        if let Some((inputs, charged)) = inputs {
            drop(inputs);
            memory.release(charged);
        }
        let Checked { outcome, races, exploration } = checked.map_err(|e| self.failure_of(&e, key, number, cancel))?;
        let exploration = exploration.and_then(|explored| {
            explored
                .map_err(|e| {
                    let message = format!(
                        "the schedules of kernel '{name}' ({}) could not be explored: {}",
                        key.program,
                        cited(&e.to_string())
                    );
                    self.note_once(&format!("explore {name}"), &message);
                })
                .ok()
        });
        let sources = job.program.spec.as_ref().map(|spec| spec.sources()).unwrap_or_else(|| Sources::new(Vec::new()));
        let findings = LaunchFindings {
            kernel: &launch.kernel,
            module: program.module(),
            sources: &sources,
            launch: &launch,
            races: &races,
            outcome: &outcome,
            exploration: exploration.as_ref(),
        };
        Ok(self.report(key, number, &findings))
    }

    /// The options of the race detector, from the configuration.
    fn detector_options(&self) -> detect::Options {
        detect::Options {
            uniform_writes_benign: self.config.uniform_writes_benign,
            sub_group_lockstep: self.config.sub_group_lockstep,
        }
    }

    /// The options of exploring a checked launch (`CLRACE_EXPLORE`): the same as `clrace check
    /// --explore` takes, within the check's limits (`run`) and the exploration's own time.
    fn explore(
        &self,
        info: &crate::program::KernelInfo,
        launch: &Launch,
        run: &RunOptions,
    ) -> Option<crate::explore::Options> {
        let settings = self.config.explore.as_ref()?;
        let mut compare = crate::explore::compare::writable_buffers(launch, &info.args);
        // The list is the application's: names of other kernels' buffers are expected in it.
        for c in compare.iter_mut().filter(|c| settings.multiset.contains(&c.name)) {
            c.mode = crate::explore::compare::Mode::Multiset;
        }
        Some(crate::explore::Options {
            bound: settings.bound,
            max_schedules: settings.schedules,
            time: (settings.seconds > 0).then(|| Duration::from_secs(settings.seconds)),
            threads: self.config.threads,
            run: RunOptions { progress: None, ..run.clone() },
            compare,
            races: Some(self.detector_options()),
            shard: None,
        })
    }

    /// Names a run that did not complete.
    fn failure_of(&self, e: &ExecError, key: &KernelKey, number: u64, cancel: &AtomicBool) -> Failure {
        if matches!(e, ExecError::Timeout(_)) && cancel.load(Ordering::Relaxed) {
            let mut failure = Failure::run(e, &key.name, &key.program, number, &self.limits());
            (failure.kind, failure.reason) = ("exit", "its check was still running at exit".to_string());
            return failure;
        }
        Failure::run(e, &key.name, &key.program, number, &self.limits())
    }

    /// How the layer names its limits in the reasons of checks that did not complete.
    fn limits(&self) -> Limits {
        let timeout = self.config.check_timeout_ms / 1000;
        Limits {
            cpu: format!("its check used more than CLRACE_CHECK_TIMEOUT={timeout}s of CPU time"),
            wall: format!(
                "its check took longer than {WALL_BACKSTOP} times CLRACE_CHECK_TIMEOUT={timeout}s of wall time"
            ),
            memory: format!("its check needed more than CLRACE_MEMORY_MB={}", self.config.memory_mb),
        }
    }

    /// Writes the findings of one checked launch (and of its exploration) that were not
    /// reported for an earlier one. Returns whether it has findings no rule suppresses (new or
    /// seen before).
    fn report(&self, key: &KernelKey, launch: u64, findings: &LaunchFindings) -> bool {
        let options = report::Options {
            format: self.output.format(),
            sarif: self.config.sarif,
            suppressions: self.config.suppressions.as_deref(),
            print_limit: self.config.print_limit,
            print_limit_name: "CLRACE_PRINT_LIMIT=",
            lockstep: self.config.sub_group_lockstep,
            explore_bound: self.config.explore.as_ref().map_or(0, |x| x.bound),
            occasion: Occasion::Series { launch },
            spooled: None,
        };
        // Under the lock: what earlier launches reported, and the totals, change with it.
        let reported = {
            let mut guard = self.inner.lock();
            let inner = &mut *guard;
            inner.reports.report(&mut inner.ledger, key, findings, &options)
        };
        if !reported.text.is_empty() {
            self.output.write(&reported.text);
        }
        reported.found
    }

    /// At exit: closes admission, waits (bounded) for the checks queued or running, abandons
    /// the rest, and writes the closing summary. Returns the totals.
    ///
    /// With launches of the application still on the device (`device_running`), nothing is
    /// waited for: the driver's own exit handlers run next, and work it still does then can
    /// crash the process (see `inflight.rs`).
    pub fn finish(&self, device_running: usize) -> Totals {
        if let Some(writer) = &self.spool {
            return self.finish_spool(writer, device_running);
        }
        let wait = if device_running > 0 { 0 } else { self.config.exit_wait_ms };
        let deadline = Instant::now() + Duration::from_millis(wait);
        let mut inner = self.inner.lock();
        // Snapshots still waiting are waited for only when the device is idle: then their
        // reads are done (the launch waited for them) and only the driver's callback is late.
        let idle = |inner: &Inner| inner.ready.is_empty() && inner.running.is_empty() && inner.gated == 0;
        while !idle(&inner) && !self.changed.wait_until(&mut inner, deadline).timed_out() {}
        // Nothing more is admitted or queued from here on.
        inner.closed = true;
        // Whatever is still running stops at its next budget check; it is not waited for.
        for running in &inner.running {
            running.cancel.store(true, Ordering::Relaxed);
        }
        // Dropped after the lock is released: dropping a ticket opens its gate, and the driver
        // may run callbacks of ours from that call.
        let left: Vec<(Job, Ticket)> = inner.ready.drain(..).collect();
        for (_, ticket) in &left {
            inner.ledger.failed(&ticket.key, "its check was still queued at exit");
            ticket.memory.release(ticket.bytes);
        }
        let running_keys: Vec<KernelKey> = inner.running.iter().map(|r| r.key.clone()).collect();
        inner.ledger.at_exit(&running_keys);
        let running = inner.running.len() as u64;
        let gated = inner.gated;
        let mut totals = Totals {
            unfinished: running + gated,
            held_back: inner.held_back,
            device_running: device_running as u64,
            ..inner.reports.totals()
        };
        let sarif = self.config.sarif.then(|| inner.reports.sarif_log());
        let kernels = totals.count_ledger(&inner.ledger);
        drop(inner);
        drop(left);
        let unfinished_note = match (running, gated) {
            (0, 0) => String::new(),
            _ if device_running > 0 => format!(
                " ({running} still running and {gated} still waiting for the device at exit, not waited for: the device was still running {device_running} launch(es))"
            ),
            _ => format!(" ({running} still running and {gated} still waiting for the device at exit)"),
        };
        let style = series::Style {
            format: self.output.format(),
            suppressions: self.config.suppressions.is_some(),
            print_limit: self.config.print_limit,
            print_limit_name: "CLRACE_PRINT_LIMIT=",
            lockstep: self.config.sub_group_lockstep,
        };
        let summary = series::summary_json(&totals, &kernels, &style);
        let text = series::render_summary(&totals, &kernels, &style, &unfinished_note);
        self.output.write(&text);
        if let (Some(rules), true) = (&self.config.suppressions, self.config.print_suppressions) {
            self.output.write(&rules.listing(self.output.format() == Format::Json));
        }
        if let Some(log) = sarif {
            match &self.config.sarif_file {
                Some(path) => {
                    if let Err(e) = std::fs::write(path, log) {
                        self.output.note(&format!("cannot write the SARIF log to {}: {e}", path.display()));
                    }
                }
                None => self.output.write(&log),
            }
        }
        if let Some(path) = &self.config.summary_file {
            let _ = std::fs::write(path, summary.to_string());
        }
        totals
    }
}

/// The next queued job for a checker: the oldest new launch (a first launch, or a new
/// configuration), else the oldest repeat.
fn next_job(inner: &mut Inner) -> Option<(Job, Ticket)> {
    let next = inner.ready.iter().position(|(_, t)| t.class == Class::New).unwrap_or(0);
    inner.ready.remove(next)
}
