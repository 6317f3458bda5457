//! The checker: runs snapshotted launches in the emulator with the race detector, behind the
//! application, on its own thread, and writes the reports.
//!
//! Launch hooks hand over a [`Job`] once its snapshot reads have completed. A bounded number of
//! jobs (and of snapshot bytes) may be pending; beyond that the launching thread waits a while or
//! the launch goes unchecked, as configured. At process exit pending jobs get a bounded time to
//! finish and a summary is written.

use std::collections::{HashSet, VecDeque};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::config::{Backlog, Config};
use super::state::{KernelState, ProgramSource};
use crate::detect::{self, Detector};
use crate::exec::{ArgValue, Launch, RunOptions, run_hooked};
use crate::program::Program;
use crate::report::{Format, Reporter, Sources, Summary};

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
}

impl Job {
    fn bytes(&self) -> u64 {
        self.buffers.iter().map(|b| b.len() as u64).sum()
    }
}

/// Running totals for the closing summary.
#[derive(Debug, Default, Clone, Copy)]
pub struct Totals {
    pub checked: u64,
    pub skipped: u64,
    pub failed: u64,
    pub races: u64,
    pub out_of_bounds: u64,
    pub divergences: u64,
}

impl Totals {
    pub fn found(&self) -> bool {
        self.races + self.out_of_bounds + self.divergences > 0
    }
}

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    /// Jobs admitted and not finished (queued, waiting for their reads, or running).
    pending: usize,
    pending_bytes: u64,
}

/// The checker shared by all hooks.
pub struct Checker {
    pub config: Config,
    queue: Mutex<Queue>,
    /// Signalled when a job arrives and when one finishes.
    changed: Condvar,
    totals: Mutex<Totals>,
    output: Mutex<Box<dyn Write + Send>>,
    /// Messages already given once (skipped kernels, failed builds).
    said: Mutex<HashSet<String>>,
    /// The checker thread, started with the first check (an application whose kernels are all
    /// filtered out never pays for it).
    worker: std::sync::Once,
}

impl Checker {
    pub fn new(config: Config) -> Arc<Checker> {
        let output: Box<dyn Write + Send> = match &config.output {
            Some(path) => match std::fs::OpenOptions::new().create(true).append(true).open(path) {
                Ok(file) => Box::new(file),
                Err(e) => {
                    eprintln!("clrace: cannot open CLRACE_OUTPUT={}: {e}; reporting on stderr", path.display());
                    Box::new(std::io::stderr())
                }
            },
            None => Box::new(std::io::stderr()),
        };
        Arc::new(Checker {
            config,
            queue: Mutex::new(Queue::default()),
            changed: Condvar::new(),
            totals: Mutex::new(Totals::default()),
            output: Mutex::new(output),
            said: Mutex::new(HashSet::new()),
            worker: std::sync::Once::new(),
        })
    }

    /// Starts the checker thread unless it runs already.
    fn start_worker(self: &Arc<Self>) {
        self.worker.call_once(|| {
            let worker = self.clone();
            let spawned = std::thread::Builder::new().name("clrace-checker".into()).spawn(move || worker.work());
            if let Err(e) = spawned {
                self.note_once("no-thread", &format!("cannot start the checker thread ({e}); checks will not run"));
            }
        });
    }

    /// Asks for a slot for a job of `bytes` snapshot bytes. False: check nothing this time.
    pub fn admit(self: &Arc<Self>, bytes: u64) -> bool {
        self.start_worker();
        let limit = self.config.memory_mb << 20;
        let mut queue = self.queue.lock();
        let full = |q: &Queue| q.pending >= self.config.queue || (q.pending > 0 && q.pending_bytes + bytes > limit);
        if full(&queue) && self.config.backlog == Backlog::Wait {
            // Bounded: the pending checks may themselves wait on something this thread does later.
            let deadline = Instant::now() + Duration::from_secs(2);
            while full(&queue) && !self.changed.wait_until(&mut queue, deadline).timed_out() {}
        }
        if full(&queue) {
            drop(queue);
            self.totals.lock().skipped += 1;
            tracing::info!(bytes, "checks are behind the application: this launch goes unchecked");
            return false;
        }
        queue.pending += 1;
        queue.pending_bytes += bytes;
        true
    }

    /// Gives back an admitted slot whose job will not come (its snapshot failed).
    pub fn abandon(&self, bytes: u64) {
        let mut queue = self.queue.lock();
        queue.pending -= 1;
        queue.pending_bytes -= bytes;
        self.totals.lock().skipped += 1;
        self.changed.notify_all();
    }

    /// Hands over a job whose snapshot is complete (called on a driver thread: never blocks long).
    pub fn submit(&self, job: Job) {
        self.queue.lock().jobs.push_back(job);
        self.changed.notify_all();
    }

    fn work(&self) {
        loop {
            let job = {
                let mut queue = self.queue.lock();
                loop {
                    if let Some(job) = queue.jobs.pop_front() {
                        break job;
                    }
                    self.changed.wait(&mut queue);
                }
            };
            let bytes = job.bytes();
            let started = Instant::now();
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.check(&job)));
            tracing::debug!(kernel = %job.kernel.name, launch = job.number, bytes, elapsed = ?started.elapsed(), "checked");
            if result.is_err() {
                self.totals.lock().failed += 1;
                self.note_once("panic", "internal error while checking a launch; that launch is not reported");
            }
            let mut queue = self.queue.lock();
            queue.pending -= 1;
            queue.pending_bytes -= bytes;
            self.changed.notify_all();
        }
    }

    /// Writes one message once per key.
    pub fn note_once(&self, key: &str, message: &str) {
        if self.said.lock().insert(key.to_string()) {
            self.note(message);
        }
    }

    fn note(&self, message: &str) {
        tracing::info!("{message}");
        let line = match self.config.format {
            Format::Text => format!("clrace: {message}"),
            Format::Json => serde_json::json!({"kind": "note", "message": message}).to_string(),
        };
        let mut out = self.output.lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
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

    fn check(&self, job: &Job) {
        let name = &job.kernel.name;
        let program = match self.build(job) {
            Ok(p) => p,
            Err(why) => {
                self.totals.lock().failed += 1;
                let file = job.kernel.program.file_name();
                self.note_once(&format!("build {file}"), &format!("kernels of {file} are not checked: {why}"));
                return;
            }
        };
        let Some(info) = program.kernel(name) else {
            self.totals.lock().failed += 1;
            self.note_once(&format!("kernel {name}"), &format!("kernel '{name}' is not in its program as we built it"));
            return;
        };
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
                    self.totals.lock().skipped += 1;
                    self.note_once(
                        &format!("arg {name} {i}"),
                        &format!("kernel '{name}' is not checked: argument {i} ('{}') is of a kind not supported yet (pipes, queues, or not set)", arg.name),
                    );
                    return;
                }
            };
            args.push(value);
        }
        let local = match job.local.or(info.required_local_size) {
            Some(l) => l,
            None => {
                let assumed = assumed_local_size(job.global, job.work_dim);
                self.note_once(
                    &format!("local {name}"),
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
        let mut buffers = job.buffers.clone();
        let options = detect::Options { uniform_writes_benign: self.config.uniform_writes_benign };
        let detector = Detector::new(&program, &launch, options);
        let run = RunOptions {
            threads: self.config.threads,
            sub_group_size: self.config.sub_group_size,
            budget: self.config.budget,
            ..RunOptions::default()
        };
        let outcome = match run_hooked(&program, &launch, &mut buffers, &run, &&detector) {
            Ok(outcome) => outcome,
            Err(e) => {
                self.totals.lock().failed += 1;
                // Once per kernel and kind of failure: an unsupported feature fails every launch.
                let message = format!("kernel '{name}' could not be checked (launch {}): {e}", job.number);
                let kind = std::mem::discriminant(&e);
                self.note_once(&format!("failed {name} {kind:?}"), &message);
                return;
            }
        };
        let races = detector.races();
        let files = match &job.kernel.program.source {
            ProgramSource::Source(text) => vec![(PathBuf::from(job.kernel.program.file_name()), text.clone())],
            ProgramSource::Linked { units, .. } => {
                units.iter().map(|u| (PathBuf::from(u.file_name()), u.source.clone())).collect()
            }
            _ => Vec::new(),
        };
        let sources = Sources::new(files);
        let reporter =
            Reporter { kernel: name, module: program.module(), sources: &sources, format: self.config.format };
        let summary = Summary::of(races.len(), &outcome.findings, &launch);
        {
            let mut totals = self.totals.lock();
            totals.checked += 1;
            totals.races += summary.races as u64;
            totals.out_of_bounds += summary.out_of_bounds as u64;
            totals.divergences += summary.divergences as u64;
        }
        let separator = if self.config.format == Format::Text { "\n" } else { "" };
        let mut text = String::new();
        for race in &races {
            text.push_str(&format!("{separator}{}\n", reporter.race(race)));
        }
        for finding in &outcome.findings {
            text.push_str(&format!("{separator}{}\n", reporter.finding(finding)));
        }
        if let Some(line) = reporter.summary(&summary) {
            text.push_str(&format!("{separator}{line}\n"));
        }
        let mut out = self.output.lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }

    /// Waits (bounded) for pending checks, then writes the closing summary. Returns the totals.
    pub fn finish(&self) -> Totals {
        let deadline = Instant::now() + Duration::from_millis(self.config.exit_wait_ms);
        let mut queue = self.queue.lock();
        while queue.pending > 0 && !self.changed.wait_until(&mut queue, deadline).timed_out() {}
        let unfinished = queue.pending as u64;
        drop(queue);
        let totals = *self.totals.lock();
        let line = match self.config.format {
            Format::Text => format!(
                "clrace: {} launch(es) checked: {} race(s), {} out-of-bounds access(es), {} barrier divergence(s); {} launch(es) not checked{}",
                totals.checked,
                totals.races,
                totals.out_of_bounds,
                totals.divergences,
                totals.skipped + totals.failed + unfinished,
                if unfinished > 0 { format!(" ({unfinished} still running at exit)") } else { String::new() }
            ),
            Format::Json => self.summary_json(&totals, unfinished).to_string(),
        };
        let mut out = self.output.lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
        if let Some(path) = &self.config.summary_file {
            let _ = std::fs::write(path, self.summary_json(&totals, unfinished).to_string());
        }
        totals
    }

    fn summary_json(&self, t: &Totals, unfinished: u64) -> serde_json::Value {
        serde_json::json!({
            "kind": "layer-summary",
            "launches_checked": t.checked,
            "launches_skipped": t.skipped,
            "launches_failed": t.failed,
            "launches_unfinished": unfinished,
            "races": t.races,
            "out_of_bounds": t.out_of_bounds,
            "divergences": t.divergences,
        })
    }
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
