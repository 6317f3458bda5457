//! The checkers: threads of ours that run snapshotted launches in the emulator with the race
//! detector, behind the application, and write the reports.
//!
//! Launch hooks ask [`Checker::admit`] (the policy is in `admission.rs`) and, once a snapshot
//! is complete, hand over a [`Job`]. Jobs wait in one queue for one of `CLRACE_CHECKERS`
//! threads. Every check runs under the memory limit (snapshots, emulator and shadow together:
//! one [`MemoryBudget`]), the branch budget and a wall-time limit (`CLRACE_CHECK_TIMEOUT`),
//! after which it is abandoned and named. A finding already reported for an earlier launch of
//! the same kernel is counted, not printed again. At process exit the checks that are queued or
//! running get a bounded time; snapshots still waiting for the device are not waited for.
//!
//! It never touches a C pointer: jobs are plain data.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::admission::{self, KernelKey, Ledger, Skip};
use super::config::{Backlog, Config, OnFinding};
use super::output::Output;
use super::state::{KernelState, ProgramSource};
use crate::budget::MemoryBudget;
use crate::check::{Checked, Plan};
use crate::detect;
use crate::exec::{ArgValue, ExecError, Launch, Policy, RunOptions};
use crate::program::Program;
use crate::report::{self, Format, LaunchFindings, Occasion, Sources};
use crate::series::{self, Reports, Totals};

/// One argument of a snapshotted launch.
#[derive(Debug, Clone)]
pub enum JobArg {
    /// A buffer: index into [`Job::buffers`] and the byte offset of a sub-buffer.
    Buffer {
        index: usize,
        offset: u64,
    },
    Null,
    Local(usize),
    Value(Vec<u8>),
    /// An image: index into [`Job::buffers`] of its packed pixels.
    Image {
        index: usize,
        desc: crate::exec::image::ImageDesc,
    },
    /// A sampler's `CLK_*` bits.
    Sampler(u32),
}

/// A launch to check, with copies of the buffers it reads.
pub struct Job {
    pub kernel: KernelState,
    /// Which launch of this kernel it is (1 = first).
    pub number: u64,
    pub work_dim: u32,
    pub offset: [u64; 3],
    pub global: [u64; 3],
    /// None when the application gave no local size.
    pub local: Option<[u64; 3]>,
    pub args: Vec<JobArg>,
    /// The snapshot of each distinct root buffer, filled by the driver's reads.
    pub buffers: Vec<Vec<u8>>,
    /// The host's access mode of each root buffer (by index; missing ones are read-write): the
    /// one every argument bound to it has, read-write when they differ.
    pub modes: Vec<crate::exec::memory::BufferMode>,
}

impl Job {
    pub fn key(&self) -> KernelKey {
        KernelKey { program: self.kernel.program.file_name(), name: self.kernel.name.clone() }
    }
}

/// An admitted launch: its place in the ledger, the snapshot memory charged for it and, with
/// `CLRACE_ORDER=before`, the gate its device launch waits on. Given back with the job, or with
/// [`Checker::abandon`]; the gate opens when the ticket is dropped, whatever happened.
pub struct Ticket {
    key: KernelKey,
    bytes: u64,
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
}

/// The checker shared by all hooks.
pub struct Checker {
    pub config: Config,
    pub output: Arc<Output>,
    memory: Arc<MemoryBudget>,
    inner: Mutex<Inner>,
    /// Signalled when a job arrives and when one finishes.
    changed: Condvar,
    /// The checker threads, started with the first admitted launch (an application whose
    /// kernels are all filtered out never pays for them).
    workers: std::sync::Once,
}

impl Checker {
    pub fn new(config: Config, output: Arc<Output>) -> Arc<Checker> {
        let memory = MemoryBudget::new(config.memory_mb << 20);
        Arc::new(Checker {
            config,
            output,
            memory,
            inner: Mutex::new(Inner::default()),
            changed: Condvar::new(),
            workers: std::sync::Once::new(),
        })
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
        let message = format!("launches of kernel '{}' ({}) go unchecked: {reason}", key.name, key.program);
        self.note_once(&format!("skip {key:?} {reason}"), &message);
    }

    /// Decides whether a launch of `key` with `bytes` of snapshot is checked. None: forward it
    /// unchecked (counted, and named once per kernel and reason).
    pub fn admit(
        self: &Arc<Self>,
        key: &KernelKey,
        bytes: u64,
        global: [u64; 3],
        local: Option<[u64; 3]>,
    ) -> Option<Ticket> {
        let mut inner = self.inner.lock();
        inner.ledger.record(key).launches += 1;
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
        if inner.ledger.covered(key) {
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
        if !self.memory.try_charge(bytes) {
            return skip(&mut inner, Skip::Memory { limit: self.memory.limit() });
        }
        inner.ledger.admit(key);
        inner.gated += 1;
        drop(inner);
        self.start_workers();
        Some(Ticket { key: key.clone(), bytes, gate: None })
    }

    /// Gives back an admitted launch whose job will not come (its snapshot failed): `why` says so.
    pub fn abandon(&self, ticket: Ticket, why: &str) {
        self.memory.release(ticket.bytes);
        let mut inner = self.inner.lock();
        inner.gated -= 1;
        inner.ledger.give_back(&ticket.key, why);
        drop(inner);
        self.changed.notify_all();
    }

    /// Hands over a job whose snapshot is complete (called on a driver thread: never blocks long).
    pub fn submit(&self, job: Job, ticket: Ticket) {
        let mut inner = self.inner.lock();
        inner.gated -= 1;
        if inner.closed {
            // After exit began nothing more is checked; the gate opens as the ticket goes.
            inner.ledger.failed(&ticket.key, "its snapshot completed after exit began");
            drop(inner);
            self.memory.release(ticket.bytes);
            return;
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
                    if let Some((job, ticket)) = inner.ready.pop_front() {
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
            let (kernel, number) = (job.kernel.name.clone(), job.number);
            let program = ticket.key.program.clone();
            let started = Instant::now();
            let result =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.check(job, &ticket.key, &running)));
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
            self.memory.release(ticket.bytes);
            if outcome.as_ref().is_ok_and(|&found| found) {
                self.act_on_finding(&mut ticket, &kernel, number);
            }
            // The gate, if any, opens here: the report is written.
            let key = ticket.key.clone();
            drop(ticket);
            let mut inner = self.inner.lock();
            inner.running.retain(|r| !Arc::ptr_eq(&r.cancel, cancel));
            match outcome {
                Ok(_) => inner.ledger.checked(&key),
                Err(failure) => {
                    inner.ledger.failed(&key, &failure.reason);
                    drop(inner);
                    self.note_once(&format!("failed {key:?} {}", failure.kind), &failure.message);
                }
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
                    "checking launch {} of kernel '{}' ({}) takes a while: {done} of {total} work-group(s) done after {} s (CLRACE_CHECK_TIMEOUT={} s)",
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

    fn build(&self, job: &Job) -> Result<Arc<Program>, String> {
        let program = &job.kernel.program;
        program
            .built
            .get_or_init(|| {
                let built = match &program.source {
                    ProgramSource::Source(text) => {
                        let options = format!("{} {}", program.options, program.device_options);
                        Program::from_source(text, &PathBuf::from(program.file_name()), &options)
                    }
                    ProgramSource::Il(bytes) => Program::from_spirv(bytes),
                    ProgramSource::Linked { units, options } => {
                        let units: Vec<crate::compile::Unit> = units
                            .iter()
                            .map(|u| crate::compile::Unit {
                                source: u.source.clone(),
                                path: PathBuf::from(u.file_name()),
                                options: u.options.clone(),
                                headers: u.headers.clone(),
                                spirv: u.il.clone(),
                            })
                            .collect();
                        Program::from_units(&units, options)
                    }
                    ProgramSource::Unsupported(why) => return Err(why.to_string()),
                };
                built.map(Arc::new).map_err(|e| e.to_string())
            })
            .clone()
    }

    /// Runs one check and writes its reports.
    /// Returns whether the launch has findings (new or seen before).
    fn check(&self, mut job: Job, key: &KernelKey, running: &Running) -> Result<bool, Failure> {
        let cancel = &running.cancel;
        let name = job.kernel.name.clone();
        let number = job.number;
        let program = self.build(&job).map_err(|why| Failure {
            kind: "build",
            reason: format!("its program could not be built for the emulator: {why}"),
            message: format!("kernels of {} are not checked: {}", key.program, cited(&why)),
        })?;
        let info = program.kernel(&name).ok_or_else(|| Failure {
            kind: "missing",
            reason: "the kernel is not in its program as we built it".into(),
            message: format!("kernel '{name}' is not in its program {} as we built it", key.program),
        })?;
        let mut args = Vec::with_capacity(info.args.len());
        for (i, arg) in info.args.iter().enumerate() {
            let value = match (job.args.get(i), arg.is_pointer && arg.space != crate::program::AddressSpace::Local) {
                (Some(JobArg::Buffer { index, offset: 0 }), true) => ArgValue::Buffer(*index),
                (Some(JobArg::Buffer { index, offset }), true) => {
                    ArgValue::SubBuffer { buffer: *index, offset: *offset }
                }
                (Some(JobArg::Null), true) => ArgValue::Null,
                (Some(JobArg::Local(size)), _) => ArgValue::Local(*size),
                (Some(JobArg::Image { index, desc }), _) => ArgValue::Image { buffer: *index, desc: *desc },
                (Some(JobArg::Sampler(bits)), _) => ArgValue::Sampler(*bits),
                (Some(JobArg::Value(bytes)), false) => ArgValue::Value(bytes.clone()),
                (Some(JobArg::Null), false) => ArgValue::Value(vec![0; size_of::<usize>()]),
                _ => {
                    return Err(Failure {
                        kind: "argument",
                        reason: format!("argument {i} ('{}') is of a kind not supported yet", arg.name),
                        message: format!(
                            "kernel '{name}' ({}) is not checked: argument {i} ('{}') is of a kind not supported yet (pipes, queues, or not set)",
                            key.program, arg.name
                        ),
                    });
                }
            };
            args.push(value);
        }
        let local = match job.local.or(info.required_local_size) {
            Some(l) => l,
            None => {
                let assumed = assumed_local_size(job.global, job.work_dim);
                self.note_once(
                    &format!("local {key:?}"),
                    &format!(
                        "kernel '{name}' is launched without a local size; it is checked with an assumed local size ({},{},{}), and races in local memory depend on it",
                        assumed[0], assumed[1], assumed[2]
                    ),
                );
                assumed
            }
        };
        let launch = Launch {
            kernel: name.clone(),
            work_dim: job.work_dim,
            global_offset: job.offset,
            global_size: job.global,
            local_size: local,
            args,
        };
        let run = RunOptions {
            threads: self.config.threads,
            sub_group_size: self.config.sub_group_size,
            budget: self.config.budget,
            memory: Some(self.memory.clone()),
            deadline: Some(Instant::now() + Duration::from_millis(self.config.check_timeout_ms)),
            cancel: Some(cancel.clone()),
            progress: Some(running.done.clone()),
            policy: self.config.sub_group_lockstep.map_or(Policy::Lockstep, Policy::SubGroups),
            buffer_modes: std::mem::take(&mut job.modes),
            check_uninitialized: self.config.check_uninitialized,
            noinit: Vec::new(),
        };
        let groups: u64 = (0..3).map(|d| launch.global_size[d].div_ceil(launch.local_size[d].max(1))).product();
        running.total.store(groups, Ordering::Relaxed);
        // Exploration re-runs from the launch's inputs, which the check overwrites: a copy,
        // charged to the layer's memory.
        let inputs = self.config.explore.as_ref().filter(|e| number <= e.launches).and_then(|_| {
            let bytes: u64 = job.buffers.iter().map(|b| b.len() as u64).sum();
            if self.memory.try_charge(bytes) {
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
            self.memory.release(charged);
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
        let sources = sources_of(&job.kernel);
        let findings = LaunchFindings {
            kernel: &launch.kernel,
            module: program.module(),
            sources: &sources,
            launch: &launch,
            races: &races,
            outcome: &outcome,
            exploration: exploration.as_ref(),
        };
        Ok(self.report(key, job.kernel.launches, &findings))
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
        let (kind, reason) = match e {
            ExecError::Timeout(_) if cancel.load(Ordering::Relaxed) => {
                ("exit", "its check was still running at exit".to_string())
            }
            ExecError::Timeout(_) => (
                "timeout",
                format!("its check took longer than CLRACE_CHECK_TIMEOUT={}s", self.config.check_timeout_ms / 1000),
            ),
            ExecError::Memory(_) => {
                ("memory", format!("its check needed more than CLRACE_MEMORY_MB={}", self.config.memory_mb))
            }
            ExecError::Budget(_) => ("budget", "its check ran out of CLRACE_BUDGET".to_string()),
            ExecError::Hang(_) => ("hang", "it cannot finish in the emulator (a forward-progress hang)".to_string()),
            ExecError::Unsupported(_) => ("unsupported", "it uses something the emulator does not support".to_string()),
            ExecError::Launch(_) => ("launch", "the emulator refused the launch".to_string()),
            ExecError::Fault(_) => ("fault", "the emulator failed".to_string()),
        };
        // Once per kernel and kind of failure: an unsupported feature fails every launch.
        let message = format!(
            "kernel '{}' ({}) could not be checked (launch {number}): {}",
            key.name,
            key.program,
            cited(&e.to_string())
        );
        Failure { kind, reason, message }
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
            self.memory.release(ticket.bytes);
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

/// A message of the emulator's or the compiler's as notes cite it: a program is compiled as a
/// file of the current directory that does not exist (its name is the one reports use), so
/// places under the current directory are named relative to it, as reports name them.
fn cited(message: &str) -> String {
    match std::env::current_dir() {
        Ok(cwd) if cwd.parent().is_some() => message.replace(&format!("{}/", cwd.display()), ""),
        _ => message.to_string(),
    }
}

/// Why a check did not complete: a kind (one note per kernel and kind), the reason the summary
/// counts, and the note's text.
struct Failure {
    kind: &'static str,
    reason: String,
    message: String,
}

/// The source text of a kernel's program, for the lines its reports show.
fn sources_of(kernel: &KernelState) -> Sources {
    let files = match &kernel.program.source {
        ProgramSource::Source(text) => vec![(PathBuf::from(kernel.program.file_name()), text.clone())],
        ProgramSource::Linked { units, .. } => {
            units.iter().map(|u| (PathBuf::from(u.file_name()), u.source.clone())).collect()
        }
        _ => Vec::new(),
    };
    Sources::new(files)
}

/// A local size for a launch that gave none: the largest divisor of the global size up to 64 in
/// the first dimension, 1 in the others.
pub fn assumed_local_size(global: [u64; 3], work_dim: u32) -> [u64; 3] {
    let first = (1..=64.min(global[0])).rev().find(|d| global[0].is_multiple_of(*d)).unwrap_or(1);
    let _ = work_dim;
    [first, 1, 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assumed_local_sizes_divide_the_range() {
        assert_eq!(assumed_local_size([1024, 1, 1], 1), [64, 1, 1]);
        assert_eq!(assumed_local_size([100, 7, 1], 2), [50, 1, 1]);
        assert_eq!(assumed_local_size([1, 1, 1], 1), [1, 1, 1]);
    }
}
