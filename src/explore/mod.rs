//! Schedule exploration: re-runs a launch under other orders of its conflicting atomics and
//! reports what depends on the order (conflict-directed, delay-bounded scheduling after Chiang,
//! Gopalakrishnan, Li and Rakamaric, NFM 2013).
//!
//! Run 0 is the canonical stepping run ([`crate::exec::run_stepped`] with every work-group alive
//! and each work-item running alone to its next atomic; the lowest waiting work-item goes
//! first, one that spins is skipped). The bytes its atomics touched (global and `__local`)
//! become the *watch*: the canonical schedule is run once more with plain loads and stores
//! into them stopping as atomics do (the same run step for step, see [`chooser`]), and every
//! schedule after it runs with that watch. The events of that run, atomics and watched plain
//! accesses, each with what it read and wrote, give conflicts (see [`conflicts`]) and so delay
//! points. A delay sequence is re-run from the launch's inputs: when the canonical pick
//! is the sequence's next point, the next waiting work-item (same group, else the next group)
//! runs instead, as long as it can; conflicts met once the sequence is spent extend it by one.
//! Sequences run breadth-first by length up to the bound, those whose last point involves a
//! conditional atomic first, at most `max_schedules` runs in all and within the wall-time
//! budget; runs are independent and go to every core, and their results are merged in
//! schedule order, so the outcome does not depend on the thread count.
//!
//! Each alternate run's writable buffers are compared with run 0's ([`compare`]); a run in
//! which every waiting work-item spins on what nobody changes, or that the engine reports as
//! hung, is a deadlock. Every schedule also runs the race detector (unless it is off) and the
//! emulator's own checks (out-of-bounds accesses, barrier divergence, failed assertions); what
//! they find is deduplicated across schedules by instruction, each kept with the delays of the
//! first schedule (in schedule order) that showed it. Blind spots: a plain access is a
//! scheduling point only on bytes an atomic of run 0 touched (not on bytes only another
//! schedule's atomics reach, and never a vector `vload`/`vstore`, copy or image access), so an
//! order only such an access could expose is not tried; a bound is not a proof.

pub mod chooser;
pub mod compare;
pub mod conflicts;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use chooser::{Point, Scheduler};
use compare::{Compared, Difference, Mode};
use conflicts::Event;

use crate::detect::{self, Detector, Race};
use crate::exec::hooks::NoHooks;
use crate::exec::{Choice, ExecError, Finding, Launch, RunOptions, findings, run_stepped_watching};
use crate::ir::AtomicOp;
use crate::program::Program;

/// The default bound on delays per schedule.
pub const DEFAULT_BOUND: usize = 2;
/// The default number of schedules (the canonical one included).
pub const DEFAULT_SCHEDULES: usize = 64;
/// The default wall-time budget of an exploration.
pub const DEFAULT_SECONDS: u64 = 60;

/// What to explore and within which limits.
#[derive(Debug, Clone)]
pub struct Options {
    /// Delays per schedule at most (K).
    pub bound: usize,
    /// Schedules at most, the canonical one included (N).
    pub max_schedules: usize,
    /// Wall time for the whole exploration.
    pub time: Option<Duration>,
    /// Threads for independent runs (default: every core).
    pub threads: Option<usize>,
    /// The limits of each run (its `deadline` also ends the exploration, and so does its
    /// `cancel`, between schedules).
    pub run: RunOptions,
    /// The buffers to compare, and how.
    pub compare: Vec<Compared>,
    /// Run the race detector on every schedule, with these options (None: no race detection).
    pub races: Option<detect::Options>,
    /// Run only the schedules of this slice of the schedule list: (I, N), the I-th (from 0) of N
    /// interleaved slices (see [`explore`]).
    pub shard: Option<(usize, usize)>,
}

/// Reads a shard `I/N` (`--explore-shard`): the I-th, from 0, of N slices.
pub fn parse_shard(text: &str) -> Result<(usize, usize), String> {
    let (i, n) = text.split_once('/').ok_or_else(|| format!("'{text}' is not I/N (e.g. 0/4)"))?;
    let number = |s: &str| s.trim().parse::<usize>().map_err(|_| format!("'{s}' in '{text}' is not a number"));
    let (i, n) = (number(i)?, number(n)?);
    if n == 0 || i >= n {
        return Err(format!("shard {i}/{n}: I must be below N, and N above 0"));
    }
    Ok((i, n))
}

/// A delayed atomic or plain access, as reports show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delay {
    pub global_id: [u64; 3],
    /// Source location (an index into `ir::Module::locations`).
    pub loc: u32,
    /// The operation (`Load` or `Store` for a plain access).
    pub op: AtomicOp,
    pub plain: bool,
}

impl Delay {
    /// The operation's name in reports (see [`conflicts::operation`]).
    pub fn operation(&self) -> &'static str {
        conflicts::operation(self.op, self.plain)
    }
}

/// One side of the pair of events whose order a delay flipped, as it ran in the schedule that
/// met their conflict (the canonical one for a sequence's first delay, the schedule of the
/// sequence one shorter for a later one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Side {
    pub at: Delay,
    /// Bytes it accessed.
    pub size: u32,
    /// What it read and wrote there (see [`crate::exec::Effect`]).
    pub read: Option<u64>,
    pub wrote: Option<u64>,
}

/// A work-item waiting when a schedule deadlocked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Waiter {
    pub global_id: [u64; 3],
    pub loc: u32,
    /// The tagged address its atomic waits on.
    pub addr: u64,
}

/// Something that depends on the schedule.
#[derive(Debug, Clone, PartialEq)]
pub enum ScheduleFinding {
    /// A buffer range ends differently than in the canonical run.
    Result {
        buffer: String,
        element: compare::Element,
        mode: Mode,
        difference: Difference,
        /// The delays of the schedule that showed it.
        delays: Vec<Delay>,
        /// The last delay and the first later event of another work-item it conflicted with.
        conflict: Option<(Side, Side)>,
    },
    /// Every unfinished work-item waits for something no other will ever do.
    Deadlock {
        /// The work-items waiting before atomics (at most [`MAX_WAITERS`]).
        waiting: Vec<Waiter>,
        /// How many were waiting in all.
        waiting_count: usize,
        /// The engine's message when it found the hang itself.
        message: Option<String>,
        delays: Vec<Delay>,
    },
    /// A race, out-of-bounds access, barrier divergence or failed assertion, in the first
    /// schedule that showed it (no delays: the canonical schedule of the exploration).
    Found { found: Found, delays: Vec<Delay> },
}

/// A finding of the usual kinds in a schedule: a race, or one of the emulator's (an
/// out-of-bounds access, a barrier divergence, a failed assertion) with how often the
/// instruction did it in that schedule.
#[derive(Debug, Clone, PartialEq)]
pub enum Found {
    Race(Race),
    Emulator { finding: Finding, count: u64 },
}

impl Found {
    /// Whether two are the same report: the same pair of instructions and access kinds for a
    /// race, the same instruction (see [`findings::same_report`]) otherwise.
    pub fn same(&self, other: &Found) -> bool {
        match (self, other) {
            (Found::Race(a), Found::Race(b)) => same_race(a, b),
            (Found::Emulator { finding: a, .. }, Found::Emulator { finding: b, .. }) => findings::same_report(a, b),
            _ => false,
        }
    }
}

/// Two races are one report: the same pair of instructions and access kinds, in the same space,
/// whichever side came first (another schedule may run them in the other order).
pub fn same_race(a: &Race, b: &Race) -> bool {
    let [a0, a1] = a.accesses.clone().map(|s| (s.loc, s.access));
    let [b0, b1] = b.accesses.clone().map(|s| (s.loc, s.access));
    a.write_write == b.write_write && a.local == b.local && ((a0, a1) == (b0, b1) || (a0, a1) == (b1, b0))
}

/// Waiters listed per deadlock.
pub const MAX_WAITERS: usize = 8;

/// What an exploration found.
#[derive(Debug, Default)]
pub struct Exploration {
    /// Schedules run to the end, the canonical one included.
    pub schedules: usize,
    /// Whether the bound, the schedule limit or the time budget left sequences unexplored.
    pub truncated: bool,
    pub findings: Vec<ScheduleFinding>,
    /// Alternate runs that failed otherwise (budget, memory, ...): their delays and why.
    pub failures: Vec<(Vec<Delay>, String)>,
}

impl Exploration {
    /// Drops the findings of the usual kinds that the normal check already reported (`races`,
    /// and the emulator's `findings`): what is left was seen only under exploration.
    pub fn drop_reported(&mut self, races: &[Race], findings: &[Finding]) {
        self.findings.retain(|f| match f {
            ScheduleFinding::Found { found: Found::Race(r), .. } => !races.iter().any(|c| same_race(c, r)),
            ScheduleFinding::Found { found: Found::Emulator { finding, .. }, .. } => {
                !findings.iter().any(|c| self::findings::same_report(c, finding))
            }
            _ => true,
        });
    }

    /// Adds `found` of a schedule with `delays`, unless an earlier schedule showed it.
    fn add_found(&mut self, found: Vec<Found>, delays: &[Delay]) {
        for f in found {
            let seen =
                self.findings.iter().any(|g| matches!(g, ScheduleFinding::Found { found, .. } if found.same(&f)));
            if !seen {
                self.findings.push(ScheduleFinding::Found { found: f, delays: delays.to_vec() });
            }
        }
    }
}

/// The geometry needed to name work-items.
#[derive(Clone, Copy)]
struct Geometry {
    groups: [u64; 3],
    local: [u64; 3],
    offset: [u64; 3],
}

impl Geometry {
    fn of(launch: &Launch) -> Geometry {
        let local = launch.local_size.map(|l| l.max(1));
        let groups = [0, 1, 2].map(|d| launch.global_size[d].div_ceil(local[d]));
        Geometry { groups, local, offset: launch.global_offset }
    }

    fn group_count(&self) -> u64 {
        self.groups.iter().product()
    }

    fn items(&self) -> u64 {
        self.local.iter().product()
    }

    fn global_id(&self, group: u64, item: u32) -> [u64; 3] {
        let g = [
            group % self.groups[0],
            group / self.groups[0] % self.groups[1],
            group / (self.groups[0] * self.groups[1]),
        ];
        let i = item as u64;
        let l = [i % self.local[0], i / self.local[0] % self.local[1], i / (self.local[0] * self.local[1])];
        [0, 1, 2].map(|d| self.offset[d] + g[d] * self.local[d] + l[d])
    }

    fn delay(&self, e: &Event) -> Delay {
        let p = &e.point;
        Delay { global_id: self.global_id(p.group, p.item), loc: p.loc, op: e.op, plain: e.plain }
    }

    fn side(&self, e: &Event) -> Side {
        Side { at: self.delay(e), size: e.size, read: e.read, wrote: e.wrote }
    }
}

/// What one schedule gave.
enum Ran {
    Finished {
        buffers: Vec<Vec<u8>>,
        events: Vec<Event>,
        /// The event from which conflicts are recorded: once the sequence was spent (None: never).
        from: Option<usize>,
        /// What the detector and the emulator found.
        found: Vec<Found>,
    },
    Deadlock {
        waiting: Vec<Choice>,
        message: Option<String>,
    },
    /// The exploration's time ran out (or it was cancelled).
    OutOfTime,
    Failed(ExecError),
}

/// What every schedule of an exploration runs: the program's launch from its inputs, with the
/// run's options, over its NDRange.
#[derive(Clone, Copy)]
struct Runner<'a> {
    program: &'a Program,
    launch: &'a Launch,
    inputs: &'a [Vec<u8>],
    options: &'a RunOptions,
    geometry: Geometry,
}

/// Runs one schedule: the delays of `sequence`, from a copy of the inputs, plain accesses into
/// `watch` stopping too, with the race detector when `races` says so.
fn run_schedule(runner: Runner, races: Option<detect::Options>, sequence: &[Point], watch: &[(u64, u64)]) -> Ran {
    let Runner { program, launch, inputs, options, geometry } = runner;
    let cancel = Arc::new(AtomicBool::new(false));
    let run = RunOptions { cancel: Some(cancel.clone()), progress: None, ..options.clone() };
    let mut scheduler = Scheduler::new(sequence, geometry.group_count(), geometry.items(), cancel);
    let mut buffers = inputs.to_vec();
    let result = match races {
        Some(detect) => {
            let detector = Detector::with_memory(program, launch, detect, run.memory.clone());
            run_stepped_watching(program, launch, &mut buffers, &run, &mut scheduler, &&detector, watch)
                .map(|(outcome, record, effects)| (outcome, record, effects, detector.races()))
        }
        None => run_stepped_watching(program, launch, &mut buffers, &run, &mut scheduler, &NoHooks, watch)
            .map(|(outcome, record, effects)| (outcome, record, effects, Vec::new())),
    };
    if let Some(waiting) = scheduler.deadlock.take() {
        return Ran::Deadlock { waiting, message: None };
    }
    match result {
        Ok((outcome, record, effects, races)) => {
            let events = conflicts::events(&record, &effects);
            let from = scheduler.recording_from;
            let counts = (0..outcome.findings.len()).map(|i| outcome.finding_counts.get(i).copied().unwrap_or(1));
            let found = races
                .into_iter()
                .map(Found::Race)
                .chain(
                    outcome.findings.into_iter().zip(counts).map(|(finding, count)| Found::Emulator { finding, count }),
                )
                .collect();
            Ran::Finished { buffers, events, from, found }
        }
        Err(ExecError::Hang(message)) => Ran::Deadlock { waiting: Vec::new(), message: Some(message) },
        Err(ExecError::Timeout(_)) => Ran::OutOfTime,
        Err(e) => Ran::Failed(e),
    }
}

/// A schedule's result, reduced to what the merge needs.
enum Outcome {
    Compared {
        differences: Vec<(usize, Difference)>,
        /// The next sequences, each with whether its last point is conditional, and the
        /// conflicting partner of that point.
        next: Vec<Next>,
        found: Vec<Found>,
    },
    Deadlock(Vec<Choice>, Option<String>),
    OutOfTime,
    Failed(String),
}

/// A delay point met in a schedule: its event, whether it involves a conditional atomic, and
/// its conflicting partner's event.
type Next = (Event, bool, Event);

/// The delay points of `events` from event `from` on (see [`conflicts::delay_points`]),
/// conditional ones first, at most `cap` of each class: a level runs conditional points first
/// and at most the schedules left, so no more of a class can run.
fn next_points(events: &[Event], from: usize, cap: usize) -> Vec<Next> {
    let points = conflicts::delay_points(events, from);
    let conditional = points.iter().filter(|p| p.conditional).take(cap);
    let other = points.iter().filter(|p| !p.conditional).take(cap);
    conditional.chain(other).map(|p| (events[p.event], p.conditional, events[p.partner])).collect()
}

/// One entry of a level of the schedule list: the delayed events (as they ran in the schedules
/// that met them), the conflict partner of the last, and whether this shard reports it (else
/// it runs only to find the sequences of the next level).
struct Planned {
    delayed: Vec<Event>,
    sequence: Vec<Point>,
    partner: Event,
    mine: bool,
}

/// Explores the schedules of `launch` from the buffers `inputs` (the launch's initial contents).
/// Fails only when the canonical run fails other than by deadlocking.
///
/// With a shard `(i, n)`, schedule `k` of the list (0 the canonical, then breadth-first in the
/// order described above) belongs to shard `k % n`. Every shard runs the canonical schedule (for
/// the final state it compares with) and every schedule shorter than the bound (their conflicts
/// make the next level, the same list on every shard), but reports, counts and compares only
/// its own; schedules at the bound, the bulk of the list, run only in their shard. The union of
/// the shards' findings is then the unsharded exploration's, but for the same finding showing
/// in several shards, and their `schedules` add up to its count.
pub fn explore(
    program: &Program,
    launch: &Launch,
    inputs: &[Vec<u8>],
    options: &Options,
) -> Result<Exploration, ExecError> {
    let geometry = Geometry::of(launch);
    let started = Instant::now();
    let deadline = match (options.time.map(|t| started + t), options.run.deadline) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let run_options = RunOptions { deadline, ..options.run.clone() };
    let (shard, shards) = options.shard.filter(|&(i, n)| n > 0 && i < n).unwrap_or((0, 1));
    let mine = |k: usize| k % shards == shard;
    let mut found = Exploration { schedules: 0, ..Exploration::default() };
    let runner = Runner { program, launch, inputs, options: &run_options, geometry };
    let canonical_run = run_schedule(runner, options.races, &[], &[]);
    let (canonical, events) = match canonical_run {
        Ran::Finished { buffers, events, found: seen, .. } => {
            if mine(0) {
                found.add_found(seen, &[]);
            }
            (buffers, events)
        }
        Ran::Deadlock { waiting, message } => {
            if mine(0) {
                found.schedules = 1;
                found.findings.push(deadlock(&geometry, &waiting, message, Vec::new()));
            }
            return Ok(found);
        }
        Ran::OutOfTime => {
            return Err(ExecError::Timeout(format!(
                "wall-time limit exceeded after {:.1}s in the canonical schedule of the exploration",
                started.elapsed().as_secs_f64()
            )));
        }
        Ran::Failed(e) => return Err(e),
    };
    found.schedules = mine(0) as usize;
    // The canonical schedule once more, with plain accesses into the bytes its atomics touched
    // stopping too: the same run (the chooser runs plain accesses in the order the engine
    // would), now with those accesses among its events.
    let watch = conflicts::watch(&events);
    let events = if watch.is_empty() || options.bound == 0 {
        events
    } else {
        match run_schedule(runner, None, &[], &watch) {
            Ran::Finished { events: watched, buffers, .. } => {
                debug_assert!(buffers == canonical, "the watched canonical run ends as the canonical one");
                watched
            }
            Ran::OutOfTime => {
                found.truncated = true;
                return Ok(found);
            }
            // The same run as the canonical one, which finished: cannot happen but by a
            // resource limit met only now; then only atomics are events.
            _ => events,
        }
    };
    // Schedules in the list so far, the canonical one included (whoever runs them).
    let mut listed = 1usize;
    // The sequences of the next level: (delayed events, conditional, conflict partner of the last).
    let mut level: Vec<(Vec<Event>, bool, Event)> = next_points(&events, 0, options.max_schedules.saturating_sub(1))
        .into_iter()
        .map(|(e, cond, partner)| (vec![e], cond, partner))
        .collect();
    let mut reported: Vec<(String, u64, u64)> = Vec::new();
    let threads = options.threads.unwrap_or_else(crate::exec::default_threads).max(1);
    let cancelled = || options.run.cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed));
    for length in 1..=options.bound {
        if level.is_empty() {
            break;
        }
        if cancelled() {
            found.truncated = true;
            break;
        }
        // Conditional atomics first, otherwise in the order the parents ran.
        level.sort_by_key(|(_, cond, _)| !cond);
        let room = options.max_schedules.saturating_sub(listed);
        if level.len() > room {
            found.truncated = true;
            level.truncate(room);
        }
        if level.is_empty() {
            break;
        }
        let last = length == options.bound;
        let level_len = level.len();
        let plan: Vec<Planned> = level
            .drain(..)
            .enumerate()
            .map(|(k, (delayed, _, partner))| Planned {
                sequence: delayed.iter().map(|e| e.point).collect(),
                delayed,
                partner,
                mine: mine(listed + k),
            })
            .filter(|p| p.mine || !last)
            .collect();
        listed += level_len;
        // The sequences of the next level that can still run, per class (see `next_points`); at
        // the bound, whether there are any.
        let cap = if last { 1 } else { options.max_schedules.saturating_sub(listed) };
        let outcomes = run_level(runner, &canonical, options, &plan, &watch, cap, threads);
        let mut next_level = Vec::new();
        let mut kept = [0usize; 2];
        for (planned, outcome) in plan.iter().zip(outcomes) {
            let Planned { delayed, partner, mine, .. } = planned;
            let delays: Vec<Delay> = delayed.iter().map(|e| geometry.delay(e)).collect();
            match outcome {
                Outcome::OutOfTime => {
                    found.truncated = true;
                    continue;
                }
                Outcome::Failed(message) => {
                    if *mine {
                        found.failures.push((delays, message));
                    }
                }
                Outcome::Deadlock(waiting, message) => {
                    if !*mine {
                        continue;
                    }
                    found.schedules += 1;
                    let finding = deadlock(&geometry, &waiting, message, delays);
                    if !found.findings.iter().any(|f| same_deadlock(f, &finding)) {
                        found.findings.push(finding);
                    }
                }
                Outcome::Compared { differences, next, found: seen } => {
                    if *mine {
                        found.schedules += 1;
                        found.add_found(seen, &delays);
                        for (k, difference) in differences {
                            let compared = &options.compare[k];
                            // A multiset difference has no range: it is reported once per buffer.
                            let (start, end) = match compared.mode {
                                Mode::Bytes => {
                                    (difference.offset, difference.offset + difference.canonical.len().max(1) as u64)
                                }
                                Mode::Multiset => (0, u64::MAX),
                            };
                            let overlaps = reported
                                .iter()
                                .any(|(name, from, to)| *name == compared.name && start < *to && *from < end);
                            if overlaps {
                                continue;
                            }
                            reported.push((compared.name.clone(), start, end));
                            let last = delayed.last().expect("alternate schedules delay something");
                            found.findings.push(ScheduleFinding::Result {
                                buffer: compared.name.clone(),
                                element: compared.element,
                                mode: compared.mode,
                                difference,
                                delays: delays.clone(),
                                conflict: Some((geometry.side(last), geometry.side(partner))),
                            });
                        }
                    }
                    if last {
                        found.truncated |= !next.is_empty();
                    } else {
                        for (event, cond, partner) in next {
                            if kept[cond as usize] == cap {
                                continue;
                            }
                            kept[cond as usize] += 1;
                            let mut longer = delayed.clone();
                            longer.push(event);
                            next_level.push((longer, cond, partner));
                        }
                    }
                }
            }
        }
        level = next_level;
    }
    Ok(found)
}

/// Runs the schedules of one level on `threads` threads; their outcomes in level order, each
/// with at most `cap` next points per class. Schedules only run for their conflicts (not this
/// shard's) are not compared.
fn run_level(
    runner: Runner,
    canonical: &[Vec<u8>],
    options: &Options,
    level: &[Planned],
    watch: &[(u64, u64)],
    cap: usize,
    threads: usize,
) -> Vec<Outcome> {
    let taken = AtomicUsize::new(0);
    let out_of_time = AtomicBool::new(false);
    let work = || {
        let mut done = Vec::new();
        loop {
            let k = taken.fetch_add(1, Ordering::Relaxed);
            let Some(planned) = level.get(k) else { break };
            if options.run.cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed)) {
                out_of_time.store(true, Ordering::Relaxed);
            }
            if out_of_time.load(Ordering::Relaxed) {
                done.push((k, Outcome::OutOfTime));
                continue;
            }
            // The detector runs only where the findings are reported.
            let races = options.races.filter(|_| planned.mine);
            let ran = run_schedule(runner, races, &planned.sequence, watch);
            let outcome = match ran {
                Ran::Finished { buffers, events, from, found } => Outcome::Compared {
                    differences: if planned.mine {
                        compare_all(canonical, &buffers, &options.compare)
                    } else {
                        Vec::new()
                    },
                    next: from.map_or_else(Vec::new, |from| next_points(&events, from, cap)),
                    found,
                },
                Ran::Deadlock { waiting, message } => Outcome::Deadlock(waiting, message),
                Ran::OutOfTime => {
                    out_of_time.store(true, Ordering::Relaxed);
                    Outcome::OutOfTime
                }
                Ran::Failed(e) => Outcome::Failed(e.to_string()),
            };
            done.push((k, outcome));
        }
        done
    };
    let mut all: Vec<(usize, Outcome)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads.min(level.len())).map(|_| s.spawn(work)).collect();
        handles.into_iter().flat_map(|h| h.join().expect("an exploration worker panicked")).collect()
    });
    all.sort_by_key(|(k, _)| *k);
    all.into_iter().map(|(_, o)| o).collect()
}

/// The differences of every compared buffer, as (index into `compare`, difference).
fn compare_all(canonical: &[Vec<u8>], alternate: &[Vec<u8>], compare: &[Compared]) -> Vec<(usize, Difference)> {
    let mut out = Vec::new();
    for (k, c) in compare.iter().enumerate() {
        let (Some(a), Some(b)) = (canonical.get(c.buffer), alternate.get(c.buffer)) else { continue };
        match c.mode {
            Mode::Bytes => out.extend(compare::differences(a, b, c.element).into_iter().map(|d| (k, d))),
            Mode::Multiset => out.extend(compare::multiset_difference(a, b).map(|d| (k, d))),
        }
    }
    out
}

fn deadlock(geometry: &Geometry, waiting: &[Choice], message: Option<String>, delays: Vec<Delay>) -> ScheduleFinding {
    ScheduleFinding::Deadlock {
        waiting: waiting
            .iter()
            .take(MAX_WAITERS)
            .map(|c| Waiter { global_id: geometry.global_id(c.group, c.item), loc: c.loc, addr: c.addr })
            .collect(),
        waiting_count: waiting.len(),
        message,
        delays,
    }
}

/// Two deadlocks wait at the same places (reported once).
fn same_deadlock(a: &ScheduleFinding, b: &ScheduleFinding) -> bool {
    match (a, b) {
        (
            ScheduleFinding::Deadlock { waiting: wa, message: ma, .. },
            ScheduleFinding::Deadlock { waiting: wb, message: mb, .. },
        ) => {
            let places = |w: &[Waiter]| {
                let mut v: Vec<u32> = w.iter().map(|w| w.loc).collect();
                v.sort_unstable();
                v.dedup();
                v
            };
            places(wa) == places(wb) && ma.is_some() == mb.is_some()
        }
        _ => false,
    }
}
