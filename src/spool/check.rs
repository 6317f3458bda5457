//! Checking a spool (`clrace check DIR`, and `clrace run` once the application exited): every
//! spooled launch (or a shard's slice of them, `--shard I/N`) checked on worker threads, one
//! launch per worker at a time and each check on one thread, and reported by one reporter
//! strictly in SEQ order through the series pipeline the layer uses ([`Reports::report`] with
//! [`Occasion::Series`]), so that the reports are what the layer would have written and never
//! depend on `--jobs`. The closing summary starts from the layer's ledger (`layer.json` of each
//! process that wrote the spool) and
//! counts each spooled launch as checked or failed.
//!
//! Its limits are the branch budget, the memory and the CPU time of one check, never wall time:
//! a launch that fails under them fails whatever the load. It owns the order of the checks and of the
//! reports; it cannot see where the reports go (the caller gives a writer) nor draw anything
//! (the caller shows progress from a counter).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use serde::Deserialize;
use serde_json::json;

use super::format::{InputError, SpooledLaunch};
use super::program::ProgramSpec;
use super::reader::{LaunchEntry, Spool, copy_launches};
use crate::budget::MemoryBudget;
use crate::check::{Checked, Plan};
use crate::detect::{self, Race};
use crate::exec::{Launch, Policy, RunOptions, RunOutcome};
use crate::failure::{Failure, Limits};
use crate::program::Program;
use crate::report::{self, Format, LaunchFindings, Occasion, Sources, Spooled};
use crate::series::{self, KernelKey, KernelRecord, Ledger, Reports, Totals};
use crate::suppress::Suppressions;

/// How the print limit is named in reports of a spool.
const PRINT_LIMIT_NAME: &str = "--print-limit ";

/// Settings given on the command line; those left out come from the layer's (`layer.json`),
/// else the defaults.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `text`, `json` or `sarif`.
    pub format: Option<String>,
    pub suppressions: Option<PathBuf>,
    pub print_suppressions: bool,
    pub print_limit: Option<u64>,
    pub uniform_writes_benign: bool,
    /// A lockstep width; 0 for the sub-group size.
    pub sub_group_lockstep: Option<u32>,
    pub sub_group_size: Option<u32>,
    pub check_uninitialized: bool,
    pub budget: Option<u64>,
    /// The memory one check may hold, in MiB (0: no limit).
    pub memory_mb: Option<u64>,
    /// The CPU seconds one check may use (0: no limit).
    pub cpu_seconds: Option<u64>,
    /// Worker threads (default: every core).
    pub jobs: Option<usize>,
    /// `--shard I/N`.
    pub shard: Option<(usize, usize)>,
    /// `--spool-findings DIR` (`CLRACE_SPOOL_FINDINGS`): a spool of the launches with findings.
    pub findings_dir: Option<PathBuf>,
    /// The spool is removed once checked (`clrace run`'s own): reports do not name its files.
    pub temporary: bool,
}

/// The layer's settings as it leaves them in `layer.json` (`config`): each is a default here.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct LayerConfig {
    pub print_limit: Option<u64>,
    pub suppressions: Option<PathBuf>,
    pub format: Option<String>,
    pub sub_group_lockstep: Option<u32>,
    pub uniform_writes_benign: Option<bool>,
    pub check_uninitialized: Option<bool>,
    pub sub_group_size: Option<u32>,
    pub budget: Option<u64>,
    /// `CLRACE_CHECK_TIMEOUT`: the CPU seconds of one check.
    pub check_timeout_s: Option<u64>,
}

/// The CPU seconds of one check when neither the command line nor the layer says
/// (`CLRACE_CHECK_TIMEOUT`'s default).
pub const DEFAULT_CPU_SECONDS: u64 = 60;

/// The layer's state at exit (`DIR/runs/R/layer.json`, the runs' ledgers added up by the reader).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct LayerState {
    kernels: serde_json::Value,
    config: LayerConfig,
    /// The runs (processes writing the spool) that left no state: they crashed.
    runs_missing: Vec<u64>,
}

/// The settings a spool is checked with.
#[derive(Debug, Clone)]
pub struct Settings {
    pub format: Format,
    /// SARIF: the findings go to one log (returned); notes and the summary are text.
    pub sarif: bool,
    pub suppressions: Option<Arc<Suppressions>>,
    pub print_suppressions: bool,
    /// Findings shown per kernel (0: all); not applied with a shard (the merge applies it).
    pub print_limit: u64,
    /// The print limit one unsharded check would apply: a shard's summary names it for the merge.
    pub whole_print_limit: u64,
    pub detect: detect::Options,
    pub sub_group_size: u32,
    pub check_uninitialized: bool,
    pub budget: u64,
    /// The memory of one check in MiB (0: no limit).
    pub memory_mb: u64,
    /// The CPU seconds of one check (0: no limit).
    pub cpu_seconds: u64,
    pub jobs: usize,
    pub shard: Option<(usize, usize)>,
    pub findings_dir: Option<PathBuf>,
    pub temporary: bool,
    /// What the check says first about its settings (the layer's rules that cannot be used).
    pub problems: Vec<String>,
}

/// What the early checks came to: their settings (None when they never began) and the results
/// of the launches they finished, by SEQ.
pub struct EarlyResults {
    pub(super) settings: Option<Settings>,
    pub(super) results: HashMap<u64, LaunchResult>,
}

impl EarlyResults {
    /// How many launches were checked.
    pub fn len(&self) -> usize {
        self.results.len()
    }

    pub fn is_empty(&self) -> bool {
        self.results.is_empty()
    }
}

/// A spool opened for checking: its launches (the shard's), its layer state and the settings.
pub struct SpoolCheck {
    spool: Arc<Spool>,
    launches: Vec<LaunchEntry>,
    layer: Option<LayerState>,
    pub settings: Settings,
    /// Launches checked while the application ran, by SEQ (see [`SpoolCheck::adopt`]).
    early: HashMap<u64, LaunchResult>,
}

/// What checking a spool came to.
#[derive(Debug)]
pub struct Outcome {
    /// Something unsuppressed was found (the exit status 1).
    pub found: bool,
    /// With SARIF: the log.
    pub sarif: Option<String>,
    pub totals: Totals,
}

/// Parses `I/N` (`--shard`): 0 <= I < N.
pub fn parse_shard(text: &str) -> Result<(usize, usize), String> {
    let (i, n) = text.split_once('/').ok_or_else(|| format!("'{text}' is not I/N"))?;
    let (i, n): (usize, usize) = match (i.trim().parse(), n.trim().parse()) {
        (Ok(i), Ok(n)) => (i, n),
        _ => return Err(format!("'{text}' is not I/N with numbers")),
    };
    if n == 0 || i >= n {
        return Err(format!("'{text}': I must be from 0 to N-1"));
    }
    Ok((i, n))
}

/// Whether `dir` is a spool (it has a `spool.json`).
pub fn is_spool(dir: &Path) -> bool {
    dir.is_dir() && dir.join("spool.json").is_file()
}

impl SpoolCheck {
    /// Opens the spool `dir` and lists the launches to check.
    pub fn open(dir: &Path, given: &Overrides) -> Result<SpoolCheck, String> {
        let spool = Spool::open(dir)?;
        let layer = spool.layer_state().map(|v| serde_json::from_value::<LayerState>(v).unwrap_or_default());
        let config = layer.as_ref().map(|l| l.config.clone()).unwrap_or_default();
        let settings = settings(given, &config)?;
        let mut launches = spool.launches()?;
        if let Some((i, n)) = settings.shard {
            launches = launches.into_iter().enumerate().filter(|(p, _)| p % n == i).map(|(_, l)| l).collect();
        }
        Ok(SpoolCheck { spool: Arc::new(spool), launches, layer, settings, early: HashMap::new() })
    }

    /// Takes the results of launches checked while the application ran, when they were checked
    /// as this check would check them (the same settings of the emulator and the detector):
    /// each is then reported as if checked now, byte for byte.
    pub fn adopt(&mut self, early: EarlyResults) {
        if early.settings.is_some_and(|s| same_checks(&s, &self.settings)) {
            self.early = early.results;
        }
    }

    /// How many launches this check covers.
    pub fn len(&self) -> usize {
        self.launches.len()
    }

    pub fn is_empty(&self) -> bool {
        self.launches.is_empty()
    }

    /// Checks the launches and writes the reports, the notes and the closing summary to `out`
    /// (with SARIF the notes and summary in text; the log comes back). `done` counts the
    /// launches reported.
    pub fn run(mut self, out: &mut dyn Write, done: &AtomicU64) -> Result<Outcome, String> {
        let early = std::mem::take(&mut self.early);
        let shared = Arc::new(Shared {
            spool: self.spool.clone(),
            launches: self.launches.clone(),
            settings: self.settings.clone(),
            cancel: None,
            early: Mutex::new(early),
            programs: Mutex::new(HashMap::new()),
            queue: Mutex::new(Queue::default()),
            changed: Condvar::new(),
        });
        let jobs = self.settings.jobs.max(1).min(self.launches.len().max(1));
        let workers: Vec<_> = (0..jobs)
            .map(|i| {
                let shared = shared.clone();
                std::thread::Builder::new()
                    .name(format!("clrace-spool-check-{i}"))
                    .spawn(move || shared.work())
                    .map_err(|e| format!("cannot start a checker thread: {e}"))
            })
            .collect::<Result<_, _>>()?;
        let mut reporter = Reporter::new(&self, out);
        reporter.start()?;
        for position in 0..self.launches.len() {
            let result = shared.take(position);
            reporter.report(&self.launches[position], result)?;
            done.fetch_add(1, Ordering::Relaxed);
        }
        for worker in workers {
            let _ = worker.join();
        }
        reporter.finish()
    }
}

/// Whether two settings check a launch alike (what is reported from the results may differ).
fn same_checks(a: &Settings, b: &Settings) -> bool {
    let key = |s: &Settings| {
        (
            s.detect.uniform_writes_benign,
            s.detect.sub_group_lockstep,
            s.sub_group_size,
            s.check_uninitialized,
            s.budget,
            s.memory_mb,
            s.cpu_seconds,
        )
    };
    key(a) == key(b)
}

/// Resolves the settings: the command line's, else the layer's, else the defaults.
pub(super) fn settings(given: &Overrides, layer: &LayerConfig) -> Result<Settings, String> {
    let format = given.format.clone().or_else(|| layer.format.clone()).unwrap_or_else(|| "text".into());
    let (format, sarif) = match format.as_str() {
        "text" => (Format::Text, false),
        "json" => (Format::Json, false),
        "sarif" => (Format::Text, true),
        other => return Err(format!("format '{other}' is not text, json or sarif")),
    };
    // Rules given here must be right (a usage error); the layer's are used as the layer did:
    // not at all when they cannot be (it said so, and so does the check).
    let mut problems = Vec::new();
    let suppressions = match (&given.suppressions, &layer.suppressions) {
        (Some(path), _) => Some(Arc::new(Suppressions::load(path)?)),
        (None, Some(path)) => match Suppressions::load(path) {
            Ok(rules) => Some(Arc::new(rules)),
            Err(e) => {
                problems.push(format!("the layer's suppression rules cannot be used: {e}; nothing is suppressed"));
                None
            }
        },
        (None, None) => None,
    };
    let sub_group_size = given.sub_group_size.or(layer.sub_group_size).unwrap_or(crate::exec::DEFAULT_SUB_GROUP_SIZE);
    let lockstep = match given.sub_group_lockstep.or(layer.sub_group_lockstep) {
        Some(0) => Some(sub_group_size),
        other => other,
    };
    if let Some(w) = lockstep.filter(|w| !(1..=64).contains(w)) {
        return Err(format!("--sub-group-lockstep: a width of {w} is not from 1 to 64"));
    }
    let print_limit = given.print_limit.or(layer.print_limit).unwrap_or(crate::suppress::DEFAULT_PRINT_LIMIT);
    Ok(Settings {
        format,
        sarif,
        suppressions,
        print_suppressions: given.print_suppressions,
        // A shard shows every finding: the merge applies the limit over all shards.
        print_limit: if given.shard.is_some() { 0 } else { print_limit },
        whole_print_limit: print_limit,
        detect: detect::Options {
            uniform_writes_benign: given.uniform_writes_benign || layer.uniform_writes_benign == Some(true),
            sub_group_lockstep: lockstep,
        },
        sub_group_size: lockstep.unwrap_or(sub_group_size),
        check_uninitialized: given.check_uninitialized || layer.check_uninitialized == Some(true),
        budget: given.budget.or(layer.budget).unwrap_or(crate::exec::DEFAULT_BUDGET),
        memory_mb: given.memory_mb.unwrap_or(0),
        cpu_seconds: given.cpu_seconds.or(layer.check_timeout_s).unwrap_or(DEFAULT_CPU_SECONDS),
        jobs: given.jobs.unwrap_or_else(crate::exec::default_threads),
        shard: given.shard,
        findings_dir: given.findings_dir.clone(),
        temporary: given.temporary,
        problems,
    })
}

/// A program built for the emulator, shared by the checks of its launches.
type Built = Result<Arc<Program>, String>;

/// What the workers share: the launches, the programs built, and the results waiting for the
/// reporter.
pub(super) struct Shared {
    pub(super) spool: Arc<Spool>,
    launches: Vec<LaunchEntry>,
    pub(super) settings: Settings,
    /// Abandons the checks under way (early checks, once the application has exited).
    pub(super) cancel: Option<Arc<AtomicBool>>,
    /// Results of launches checked before this check began (`early.rs`), by SEQ.
    early: Mutex<HashMap<u64, LaunchResult>>,
    /// By the program record's blob hash: built once, by the first worker that needs it.
    programs: Mutex<HashMap<String, Arc<OnceLock<Built>>>>,
    queue: Mutex<Queue>,
    changed: Condvar,
}

/// The workers' queue: the next launch to take, and the results not reported yet.
#[derive(Default)]
struct Queue {
    next: usize,
    /// Positions the reporter has taken.
    reported: usize,
    results: BTreeMap<usize, LaunchResult>,
}

impl Shared {
    /// How far ahead of the reporter the workers may go (results waiting hold memory).
    fn window(&self) -> usize {
        self.settings.jobs.max(1) * 4
    }

    fn work(&self) {
        loop {
            let position = {
                let mut queue = self.queue.lock();
                while queue.next < self.launches.len() && queue.next >= queue.reported + self.window() {
                    self.changed.wait(&mut queue);
                }
                if queue.next >= self.launches.len() {
                    return;
                }
                queue.next += 1;
                queue.next - 1
            };
            let entry = &self.launches[position];
            let early = self.early.lock().remove(&entry.seq);
            let result = early.unwrap_or_else(|| {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.check(entry)))
                    .unwrap_or_else(|_| LaunchResult::internal(entry))
            });
            self.queue.lock().results.insert(position, result);
            self.changed.notify_all();
        }
    }

    /// The result of the launch at `position`, once a worker has it.
    fn take(&self, position: usize) -> LaunchResult {
        let mut queue = self.queue.lock();
        loop {
            if let Some(result) = queue.results.remove(&position) {
                queue.reported = position + 1;
                drop(queue);
                self.changed.notify_all();
                return result;
            }
            self.changed.wait(&mut queue);
        }
    }

    fn program(&self, spec: &ProgramSpec, hash: &str) -> Built {
        let cell = self.programs.lock().entry(hash.to_string()).or_default().clone();
        cell.get_or_init(|| spec.build().map(Arc::new).map_err(|e| e.to_string())).clone()
    }

    /// A worker's share of a check, for launches checked before the application ended.
    pub(super) fn new(spool: Arc<Spool>, settings: Settings, cancel: Option<Arc<AtomicBool>>) -> Shared {
        Shared {
            spool,
            launches: Vec::new(),
            settings,
            cancel,
            early: Mutex::new(HashMap::new()),
            programs: Mutex::new(HashMap::new()),
            queue: Mutex::new(Queue::default()),
            changed: Condvar::new(),
        }
    }

    /// Checks one spooled launch.
    pub(super) fn check(&self, entry: &LaunchEntry) -> LaunchResult {
        let manifest = match self.spool.load(entry) {
            Ok(manifest) => manifest,
            Err(why) => return LaunchResult::unreadable(entry, &why),
        };
        let spec = match self.spool.program(&manifest) {
            Ok(spec) => spec,
            Err(why) => return LaunchResult::unreadable(entry, &why),
        };
        let key = KernelKey { program: spec.name.clone(), name: manifest.kernel.clone() };
        let mut result = LaunchResult {
            seq: entry.seq,
            key: key.clone(),
            number: manifest.number,
            spec: Some(spec.clone()),
            notes: Vec::new(),
            checked: Err(Failure { kind: "internal", reason: String::new(), message: String::new() }),
        };
        result.checked = self.run(&manifest, &spec, &key, &mut result.notes);
        result
    }

    fn run(
        &self,
        manifest: &SpooledLaunch,
        spec: &ProgramSpec,
        key: &KernelKey,
        notes: &mut Vec<Note>,
    ) -> Result<Run, Failure> {
        let name = &manifest.kernel;
        let program = self.program(spec, &manifest.program.hash).map_err(|why| Failure::build(&key.program, &why))?;
        let info = program.kernel(name).ok_or_else(|| Failure::missing(name, &key.program))?;
        let inputs = manifest.to_launch(info).map_err(|e| match e {
            InputError::Unsupported { .. } => e.failure(name, &key.program),
            InputError::Corrupt(why) => damaged(key, manifest.seq, &why),
        })?;
        if let Some(assumed) = inputs.assumed_local {
            notes.push(Note { kind: "local", message: assumed_local_note(name, assumed) });
        }
        let mut buffers = self.spool.buffers(manifest).map_err(|why| damaged(key, manifest.seq, &why))?;
        let settings = &self.settings;
        let run = RunOptions {
            threads: Some(1),
            sub_group_size: settings.sub_group_size,
            budget: settings.budget,
            memory: (settings.memory_mb > 0).then(|| MemoryBudget::new(settings.memory_mb << 20)),
            cpu_limit: (settings.cpu_seconds > 0).then(|| Duration::from_secs(settings.cpu_seconds)),
            policy: settings.detect.sub_group_lockstep.map_or(Policy::Lockstep, Policy::SubGroups),
            buffer_modes: inputs.modes,
            check_uninitialized: settings.check_uninitialized,
            cancel: self.cancel.clone(),
            ..RunOptions::default()
        };
        let plan = Plan { races: Some(settings.detect), run, explore: None, release_buffers: true };
        let checked = crate::check::check(&program, &inputs.launch, &mut buffers, plan);
        let Checked { outcome, races, .. } =
            checked.map_err(|e| Failure::run(&e, &key.name, &key.program, manifest.number, &limits(settings)))?;
        Ok(Run { program, launch: inputs.launch, outcome, races })
    }
}

/// The note on a launch checked with an assumed local size (the layer's words).
pub fn assumed_local_note(kernel: &str, assumed: [u64; 3]) -> String {
    format!(
        "kernel '{kernel}' is launched without a local size; it is checked with an assumed local size ({},{},{}), and races in local memory depend on it",
        assumed[0], assumed[1], assumed[2]
    )
}

/// A launch whose spooled data cannot be read.
fn damaged(key: &KernelKey, seq: u64, why: &str) -> Failure {
    Failure {
        kind: "spool",
        reason: "its spooled launch cannot be read".into(),
        message: format!("kernel '{}' ({}) could not be checked (spooled launch {seq}): {why}", key.name, key.program),
    }
}

/// How a spool's check names its limits in the reasons of checks that did not complete: there
/// is no wall-time limit, so a timeout is always the CPU time.
fn limits(settings: &Settings) -> Limits {
    let cpu =
        format!("its check used more than {} s of CPU time (--timeout, CLRACE_CHECK_TIMEOUT)", settings.cpu_seconds);
    Limits { wall: cpu.clone(), cpu, memory: format!("its check needed more than --memory-mb {}", settings.memory_mb) }
}

/// A note a check gives, once per kernel and kind.
struct Note {
    kind: &'static str,
    message: String,
}

/// A completed check.
struct Run {
    program: Arc<Program>,
    launch: Launch,
    outcome: RunOutcome,
    races: Vec<Race>,
}

/// One launch's check, for the reporter.
pub(super) struct LaunchResult {
    seq: u64,
    key: KernelKey,
    number: u64,
    /// The program record, None when the launch could not be read.
    pub(super) spec: Option<Arc<ProgramSpec>>,
    notes: Vec<Note>,
    checked: Result<Run, Failure>,
}

impl LaunchResult {
    fn unreadable(entry: &LaunchEntry, why: &str) -> LaunchResult {
        let key = KernelKey { program: String::new(), name: entry.kernel.clone() };
        LaunchResult {
            seq: entry.seq,
            number: 0,
            spec: None,
            notes: Vec::new(),
            checked: Err(damaged(&key, entry.seq, why)),
            key,
        }
    }

    fn internal(entry: &LaunchEntry) -> LaunchResult {
        let key = KernelKey { program: String::new(), name: entry.kernel.clone() };
        let message =
            format!("spooled launch {} of kernel '{}' could not be checked: internal error", entry.seq, entry.kernel);
        let failure = Failure { kind: "internal", reason: "internal error in the checker".into(), message };
        LaunchResult { seq: entry.seq, number: 0, spec: None, notes: Vec::new(), checked: Err(failure), key }
    }
}

/// The one reporter: reports launches in SEQ order and keeps the ledger.
struct Reporter<'a> {
    check: &'a SpoolCheck,
    out: &'a mut dyn Write,
    ledger: Ledger,
    reports: Reports,
    /// Notes given, by kernel and kind.
    said: HashSet<String>,
    /// The source text of each program, by name.
    sources: HashMap<String, Sources>,
    /// The first SEQ of each kernel not in the layer's ledger (for `clrace merge`'s order).
    first_spooled: HashMap<KernelKey, u64>,
    /// Launches with new findings (`--spool-findings`).
    with_findings: Vec<u64>,
}

impl<'a> Reporter<'a> {
    fn new(check: &'a SpoolCheck, out: &'a mut dyn Write) -> Reporter<'a> {
        let shard = check.settings.shard.map_or(0, |(i, _)| i);
        let mut ledger = check.layer.as_ref().and_then(|l| Ledger::from_json(&l.kernels).ok()).unwrap_or_default();
        let keys: Vec<KernelKey> = ledger.kernels().map(|(k, _)| k.clone()).collect();
        for key in &keys {
            let record = ledger.record(key);
            if shard == 0 {
                // The spooled launches are counted again as they are checked.
                record.launches = record.launches.saturating_sub(record.spooled);
                record.spooled = 0;
            } else {
                *record = KernelRecord::default();
            }
        }
        Reporter {
            check,
            out,
            ledger,
            reports: Reports::default(),
            said: HashSet::new(),
            sources: HashMap::new(),
            first_spooled: HashMap::new(),
            with_findings: Vec::new(),
        }
    }

    fn write(&mut self, text: &str) -> Result<(), String> {
        self.out.write_all(text.as_bytes()).map_err(|e| format!("cannot write the reports: {e}"))
    }

    /// A note, in text or as a JSON `note` object with `fields`.
    fn note(&mut self, message: &str, fields: serde_json::Value) -> Result<(), String> {
        let line = match self.check.settings.format {
            Format::Text => format!("clrace: {message}\n"),
            Format::Json => {
                let mut value = json!({"kind": "note", "message": message});
                if let (Some(object), Some(fields)) = (value.as_object_mut(), fields.as_object()) {
                    object.extend(fields.clone());
                }
                format!("{value}\n")
            }
        };
        self.write(&line)
    }

    /// What comes before the reports: the problems of the settings, the note on a missing
    /// `layer.json`.
    fn start(&mut self) -> Result<(), String> {
        for problem in self.check.settings.problems.clone() {
            self.note(&problem, json!({}))?;
        }
        let dir = self.check.spool.dir().display().to_string();
        match &self.check.layer {
            None => {
                let message = format!(
                    "{dir} has no layer.json: the application's own summary is missing (it did not exit normally), so only the spooled launches are counted"
                );
                self.note(&message, json!({}))?;
            }
            Some(layer) if !layer.runs_missing.is_empty() => {
                let runs: Vec<String> = layer.runs_missing.iter().map(u64::to_string).collect();
                let message = format!(
                    "run(s) {} of {dir} have no layer.json: the summary of those processes of the application is missing (they did not exit normally), so only their spooled launches are counted",
                    runs.join(", ")
                );
                self.note(&message, json!({}))?;
            }
            Some(_) => {}
        }
        Ok(())
    }

    /// A note of a spooled launch's check, once per kernel and kind.
    fn launch_note(&mut self, result: &LaunchResult, kind: &str, message: &str) -> Result<(), String> {
        let key = &result.key;
        if !self.said.insert(format!("{kind} {key:?}")) {
            return Ok(());
        }
        let fields = json!({"note": kind, "kernel": key.name, "program": key.program, "spooled": result.seq});
        self.note(message, fields)
    }

    fn report(&mut self, entry: &LaunchEntry, result: LaunchResult) -> Result<(), String> {
        let key = result.key.clone();
        if self.ledger.kernels().all(|(k, _)| *k != key) {
            self.first_spooled.insert(key.clone(), result.seq);
        }
        self.ledger.record(&key).launches += 1;
        for note in &result.notes {
            self.launch_note(&result, note.kind, &note.message)?;
        }
        let run = match &result.checked {
            Ok(run) => run,
            Err(failure) => {
                *self.ledger.record(&key).failed.entry(failure.reason.clone()).or_default() += 1;
                let message = failure.message.clone();
                return self.launch_note(&result, failure.kind, &message);
            }
        };
        self.ledger.record(&key).checked += 1;
        let spec = result.spec.as_ref().expect("a checked launch has its program");
        let sources = self.sources.entry(spec.name.clone()).or_insert_with(|| spec.sources());
        let findings = LaunchFindings {
            kernel: &run.launch.kernel,
            module: run.program.module(),
            sources,
            launch: &run.launch,
            races: &run.races,
            outcome: &run.outcome,
            exploration: None,
        };
        let settings = &self.check.settings;
        let options = report::Options {
            format: settings.format,
            sarif: settings.sarif,
            suppressions: settings.suppressions.as_deref(),
            print_limit: settings.print_limit,
            print_limit_name: PRINT_LIMIT_NAME,
            lockstep: settings.detect.sub_group_lockstep,
            explore_bound: 0,
            occasion: Occasion::Series { launch: result.number },
            spooled: Some(Spooled {
                seq: result.seq,
                manifest: (!settings.temporary).then_some(entry.path.as_path()),
                program: &key.program,
                shard: settings.shard.is_some(),
            }),
        };
        let reported = self.reports.report(&mut self.ledger, &key, &findings, &options);
        if reported.tally.errors() + reported.tally.hidden > 0 {
            self.with_findings.push(result.seq);
        }
        self.write(&reported.text)
    }

    /// The closing summary, the rules' listing, and the spool of launches with findings.
    fn finish(mut self) -> Result<Outcome, String> {
        let settings = &self.check.settings;
        let mut totals = self.reports.totals();
        totals.unfinished = self.ledger.kernels().map(|(_, r)| r.unfinished.values().sum::<u64>()).sum();
        let kernels = totals.count_ledger(&self.ledger);
        let style = series::Style {
            format: settings.format,
            suppressions: settings.suppressions.is_some(),
            print_limit: settings.print_limit,
            print_limit_name: PRINT_LIMIT_NAME,
            lockstep: settings.detect.sub_group_lockstep,
        };
        let summary = match settings.format {
            Format::Text => series::render_summary(&totals, &kernels, &style, ""),
            Format::Json => {
                let mut value = series::summary_json(&totals, &kernels, &style);
                value["spool"] = self.check.spool.dir().display().to_string().into();
                if let Some((i, n)) = settings.shard {
                    value["shard"] = format!("{i}/{n}").into();
                    value["print_limit"] = settings.whole_print_limit.into();
                    value["ledger"] = self.shard_ledger();
                }
                format!("{value}\n")
            }
        };
        self.write(&summary)?;
        if let (Some(rules), true) = (&settings.suppressions, settings.print_suppressions) {
            let listing = rules.listing(settings.format == Format::Json);
            self.write(&listing)?;
        }
        let _ = self.out.flush();
        if let Some(dir) = &settings.findings_dir {
            copy_launches(&self.check.spool, &self.with_findings, dir)
                .map_err(|e| format!("--spool-findings {}: {e}", dir.display()))?;
        }
        Ok(Outcome { found: totals.found(), sarif: settings.sarif.then(|| self.reports.sarif_log()), totals })
    }

    /// A shard's whole ledger, each kernel with the SEQ of its first launch in this shard when
    /// the layer's ledger does not have it: `clrace merge` adds the shards' and orders them.
    fn shard_ledger(&self) -> serde_json::Value {
        let mut ledger = self.ledger.to_json();
        if let Some(kernels) = ledger.as_array_mut() {
            for (kernel, (key, _)) in kernels.iter_mut().zip(self.ledger.kernels()) {
                kernel["first_spooled"] = self.first_spooled.get(key).copied().into();
            }
        }
        ledger
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_is_i_of_n_from_0() {
        assert_eq!(parse_shard("2/4"), Ok((2, 4)));
        for bad in ["4/4", "1/0", "1", "a/2", "-1/2"] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_command_line_overrides_the_layer_which_overrides_the_defaults() {
        let layer = LayerConfig {
            print_limit: Some(5),
            format: Some("json".into()),
            sub_group_lockstep: Some(16),
            budget: Some(1000),
            check_timeout_s: Some(7),
            ..LayerConfig::default()
        };
        let from_layer = settings(&Overrides::default(), &layer).unwrap();
        assert_eq!((from_layer.format, from_layer.print_limit, from_layer.budget), (Format::Json, 5, 1000));
        assert_eq!(
            (from_layer.detect.sub_group_lockstep, from_layer.sub_group_size, from_layer.cpu_seconds),
            (Some(16), 16, 7)
        );
        let given = Overrides {
            format: Some("sarif".into()),
            print_limit: Some(2),
            sub_group_lockstep: Some(0),
            sub_group_size: Some(8),
            shard: Some((0, 2)),
            ..Overrides::default()
        };
        let given = settings(&given, &layer).unwrap();
        assert!(given.sarif && given.format == Format::Text);
        // A shard leaves the print limit to the merge; lockstep 0 is the sub-group size.
        assert_eq!((given.print_limit, given.detect.sub_group_lockstep), (0, Some(8)));
        let defaults = settings(&Overrides::default(), &LayerConfig::default()).unwrap();
        assert_eq!(defaults.print_limit, crate::suppress::DEFAULT_PRINT_LIMIT);
        assert_eq!((defaults.budget, defaults.cpu_seconds), (crate::exec::DEFAULT_BUDGET, DEFAULT_CPU_SECONDS));
        let wrong = Overrides { format: Some("xml".into()), ..Overrides::default() };
        assert!(settings(&wrong, &layer).is_err());
    }
}
