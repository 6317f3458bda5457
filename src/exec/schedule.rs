//! The scheduler: the one place that decides in which order the work-items of a work-group advance
//! between synchronisation points, and that notices when they cannot.
//!
//! The policy is a sequence of passes. In a pass every runnable work-item, in local-id order, runs
//! until it yields: at a barrier, at the end of the kernel, or spinning (re-reading an unchanged
//! value with the same atomic, see [`SPIN_REPEATS`]). When every live work-item waits at a barrier
//! or collective function, it completes (reporting divergence if they wait at different ones, or
//! if some have finished); a sub-group barrier or collective completes as soon as its sub-group
//! is there. A pass in which nothing progressed (no work-item reached a barrier or the end, and
//! every spinning one read again exactly what it read the pass before) means the group waits on
//! something outside itself: another work-group, if one is running and progressing, or nothing,
//! which is a forward-progress hang. The instruction budget is drawn from one launch-wide pool in chunks, so
//! it bounds the whole launch exactly, not per group.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::collective::{self, Contribution};
use super::group::Meter;
use super::hooks::{GroupHooks, NoHooks};
use super::interp::{Group, Launch, SPIN_REPEATS, WorkItem, Yield};
use super::{ExecError, Finding, RunOptions};
use crate::ir::{CollectiveOp, Fence, Scope};

/// Budget units a group takes from the pool at a time: also how often, at least, a running
/// group looks at the deadline, the cancel flag and the hooks' memory.
const BUDGET_CHUNK: u64 = 1 << 16;

/// How long a spinning group waits for other running groups that show no progress before it is
/// reported as hung (OpenCL does not promise forward progress between groups anyway).
const CROSS_GROUP_PATIENCE: Duration = Duration::from_secs(2);

/// What all the work-groups of one launch share.
pub struct LaunchState {
    /// Branches and calls left to the whole launch.
    budget: AtomicU64,
    total_budget: u64,
    /// Bumped whenever some group makes progress: lets a spinning group see the others move.
    progress: AtomicU64,
    /// Worker threads still taking or running groups.
    running: AtomicUsize,
    /// Set when a group failed: groups not yet started are skipped.
    pub abort: AtomicBool,
    started: Instant,
    deadline: Option<Instant>,
    cancel: Option<Arc<AtomicBool>>,
}

impl LaunchState {
    pub fn new(options: &RunOptions) -> LaunchState {
        LaunchState {
            budget: AtomicU64::new(options.budget),
            total_budget: options.budget,
            progress: AtomicU64::new(0),
            running: AtomicUsize::new(0),
            abort: AtomicBool::new(false),
            started: Instant::now(),
            deadline: options.deadline,
            cancel: options.cancel.clone(),
        }
    }

    /// Fails when the run is cancelled or past its deadline; `place` says where it was.
    pub fn check_time(&self, place: impl FnOnce() -> String) -> Result<(), ExecError> {
        let cancelled = self.cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed));
        let late = self.deadline.is_some_and(|d| Instant::now() >= d);
        if !cancelled && !late {
            return Ok(());
        }
        let elapsed = self.started.elapsed().as_secs_f64();
        let what = if cancelled { "run cancelled" } else { "wall-time limit exceeded" };
        Err(ExecError::Timeout(format!("{what} after {elapsed:.1}s in {}", place())))
    }

    /// A worker thread starts taking groups (call before it takes the first).
    pub fn worker_started(&self) {
        self.running.fetch_add(1, Ordering::SeqCst);
    }

    /// A worker thread has run its last group.
    pub fn worker_finished(&self) {
        self.running.fetch_sub(1, Ordering::SeqCst);
    }

    /// Takes up to one chunk of budget from the pool; 0 when the pool is empty.
    fn take_budget(&self) -> u64 {
        let mut taken = 0;
        let _ = self.budget.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
            // Smaller chunks as the pool drains, so no thread sits on budget another one needs.
            taken = left.min(BUDGET_CHUNK).min((left / 16).max(1));
            Some(left - taken)
        });
        taken
    }
}

/// Where a work-item stands between passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Runnable,
    Spinning {
        loc: u32,
        addr: u64,
        value: u64,
    },
    AtBarrier {
        site: u64,
        fence: Fence,
        scope: Scope,
        loc: u32,
        sub_group: bool,
    },
    /// At a collective function: its site, source location and this work-item's part.
    AtCollective {
        site: u64,
        loc: u32,
        op: CollectiveOp,
        bits: u8,
        part: Contribution,
        dst: u32,
        sub_group: bool,
    },
    Done,
}

/// Bytes of scheduler state per work-item.
pub const STATE_BYTES: usize = std::mem::size_of::<State>();

/// Runs every work-item of `group` (already started at the kernel entry) to the end. `meter`
/// holds the group's memory: `fixed` bytes (`__local` memory, work-item and scheduler structs),
/// what its work-items hold on the heap (registers, frames, private memory, summed at every
/// budget point), and its printf output.
pub fn run_group<H: GroupHooks>(
    launch: &Launch,
    group: &mut Group,
    items: &mut [WorkItem],
    hooks: &mut H,
    shared: &LaunchState,
    meter: &mut Meter,
    fixed: u64,
) -> Result<(), ExecError> {
    let mut budget = 0;
    let mut at_budget_point = |group: &Group, wi: &WorkItem, held: u64, hooks: &mut H| -> Result<(), ExecError> {
        let place = || {
            format!("work-group {} (work-item {} at {})", ids(group.id), ids(wi.global_id), wi.location(launch.module))
        };
        shared.check_time(place)?;
        let bytes = fixed + held + group.printf.len() as u64;
        meter.need(bytes, || format!("{} (its work-items' memory and printf output)", place()))?;
        hooks.poll()
    };
    let result = passes(launch, group, items, hooks, shared, &mut budget, &mut at_budget_point);
    shared.budget.fetch_add(budget, Ordering::Relaxed);
    shared.progress.fetch_add(1, Ordering::Relaxed);
    if result.is_err() {
        shared.abort.store(true, Ordering::Relaxed);
    }
    result
}

/// What a group does each time it needs more budget: given the work-item asking and the bytes
/// the work-items hold, it checks the limits of the run.
type BudgetPoint<'a, H> = dyn FnMut(&Group, &WorkItem, u64, &mut H) -> Result<(), ExecError> + 'a;

fn passes<H: GroupHooks>(
    launch: &Launch,
    group: &mut Group,
    items: &mut [WorkItem],
    hooks: &mut H,
    shared: &LaunchState,
    budget: &mut u64,
    at_budget_point: &mut BudgetPoint<H>,
) -> Result<(), ExecError> {
    let mut states = vec![State::Runnable; items.len()];
    // Work-items waiting at a sub-group barrier or collective (most kernels never have any).
    let mut sub_group_waiting = 0usize;
    // Since when, and at which launch-wide progress count, this group has been stuck.
    let mut stuck: Option<(Instant, u64)> = None;
    loop {
        let mut progressed = false;
        for i in 0..items.len() {
            let state = &mut states[i];
            if !matches!(state, State::Runnable | State::Spinning { .. }) {
                continue;
            }
            *state = loop {
                match launch.run(&mut items[i], group, hooks, budget)? {
                    Yield::OutOfBudget => {
                        // What the work-items hold on the heap now (it only grows during a group).
                        let held = items.iter().map(WorkItem::footprint).sum();
                        let wi = &items[i];
                        at_budget_point(group, wi, held, hooks)?;
                        *budget = shared.take_budget();
                        if *budget == 0 {
                            return Err(budget_error(launch, wi, shared.total_budget));
                        }
                    }
                    Yield::Spin { loc, addr, value } => {
                        let again = State::Spinning { loc, addr, value };
                        progressed |= *state != again;
                        break again;
                    }
                    Yield::Barrier { fence, scope, loc, site, sub_group } => {
                        progressed = true;
                        sub_group_waiting += sub_group as usize;
                        break State::AtBarrier { site, fence, scope, loc, sub_group };
                    }
                    Yield::Collective { site, loc, op, bits, value, source, dst, sub_group } => {
                        progressed = true;
                        sub_group_waiting += sub_group as usize;
                        // A broadcast names a local id: in the work-group, or in the sub-group.
                        let size = group.size;
                        let source =
                            if sub_group { source[0] } else { (source[2] * size[1] + source[1]) * size[0] + source[0] };
                        let part = Contribution { value, source };
                        break State::AtCollective { site, loc, op, bits, part, dst, sub_group };
                    }
                    Yield::Done => {
                        progressed = true;
                        break State::Done;
                    }
                }
            };
        }

        let live = states.iter().filter(|s| **s != State::Done).count();
        if live == 0 {
            return Ok(());
        }
        // Sub-groups whose work-items all wait at one sub-group barrier or collective go on.
        let sub_group = launch.range.sub_group as usize;
        if sub_group_waiting > 0 && sub_group < items.len() {
            let released = release_sub_groups(items, &mut states, sub_group);
            sub_group_waiting -= released;
            if released > 0 {
                stuck = None;
                continue;
            }
        }
        let waiting = states.iter().filter(|s| s.waits()).count();
        if waiting == live {
            release_barrier(group, items, &mut states, sub_group, hooks);
            sub_group_waiting = 0;
            stuck = None;
            continue;
        }
        // Some work-items spin. Let them try again, unless nothing anywhere can change.
        if progressed {
            shared.progress.fetch_add(1, Ordering::Relaxed);
            stuck = None;
        } else {
            let others_progress = shared.progress.load(Ordering::Relaxed);
            let alone = shared.running.load(Ordering::SeqCst) == 1;
            match stuck {
                Some((since, seen)) if seen == others_progress => {
                    if alone || since.elapsed() > CROSS_GROUP_PATIENCE {
                        return Err(hang_error(launch, group, items, &states, alone));
                    }
                }
                _ if alone => return Err(hang_error(launch, group, items, &states, alone)),
                _ => stuck = Some((Instant::now(), others_progress)),
            }
            std::thread::yield_now();
        }
    }
}

impl State {
    /// Waiting for the rest of the group (at a barrier or a collective function).
    fn waits(&self) -> bool {
        matches!(self, State::AtBarrier { .. } | State::AtCollective { .. })
    }

    fn site(&self) -> Option<(u64, u32)> {
        match *self {
            State::AtBarrier { site, loc, .. } | State::AtCollective { site, loc, .. } => Some((site, loc)),
            _ => None,
        }
    }

    /// Waiting at a sub-group barrier or collective.
    fn sub_group_wait(&self) -> bool {
        matches!(self, State::AtBarrier { sub_group: true, .. } | State::AtCollective { sub_group: true, .. })
    }
}

/// Releases every sub-group whose live work-items all wait at the same sub-group barrier or
/// collective (sub-groups of `size` work-items, the last maybe smaller). A sub-group barrier
/// orders nothing for the race detector when the work-group has several sub-groups. Returns how
/// many work-items went on.
fn release_sub_groups(items: &mut [WorkItem], states: &mut [State], size: usize) -> usize {
    let mut released = 0;
    for start in (0..items.len()).step_by(size) {
        let members = start..(start + size).min(items.len());
        let live: Vec<usize> = members.clone().filter(|&i| states[i] != State::Done).collect();
        let Some(&first) = live.first() else { continue };
        let site = states[first].site();
        if !states[first].sub_group_wait() || live.iter().any(|&i| states[i].site() != site) {
            continue;
        }
        complete(items, states, members.clone(), size, &mut NoHooks);
        for i in members {
            if states[i].waits() {
                states[i] = State::Runnable;
                released += 1;
            }
        }
    }
    released
}

/// Every live work-item waits at a barrier or collective function: reports divergence if they
/// are not all at the same one (or some have finished), completes it, and lets them all go on.
fn release_barrier<H: GroupHooks>(
    group: &mut Group,
    items: &mut [WorkItem],
    states: &mut [State],
    sub_group: usize,
    hooks: &mut H,
) {
    let first = states.iter().position(State::waits).expect("a work-item waits");
    let (site, loc) = states[first].site().expect("waiting states have a site");
    let other = states.iter().position(|s| s.site().is_none_or(|(other, _)| other != site));
    if let Some(other) = other {
        group.findings.push(Finding::BarrierDivergence {
            group: group.id,
            waiting: items[first].local_id,
            barrier: loc,
            other: items[other].local_id,
            other_barrier: states[other].site().map(|(_, loc)| loc),
        });
    }
    complete(items, states, 0..states.len(), sub_group, hooks);
    for state in states.iter_mut() {
        if state.waits() {
            *state = State::Runnable;
        }
    }
}

/// Completes the barrier or collective the first waiting work-item of `members` is at: tells the
/// hooks of a barrier, or hands out a collective's results (per sub-group of `sub_group`
/// work-items for a sub-group collective), in local linear order.
fn complete<H: GroupHooks>(
    items: &mut [WorkItem],
    states: &[State],
    members: std::ops::Range<usize>,
    sub_group: usize,
    hooks: &mut H,
) {
    let Some(first) = members.clone().find(|&i| states[i].waits()) else { return };
    let (site, loc) = states[first].site().expect("waiting states have a site");
    match states[first] {
        State::AtBarrier { fence, scope, .. } => hooks.barrier(fence, scope, loc),
        State::AtCollective { op, bits, sub_group: per_sub_group, .. } => {
            let at_site: Vec<usize> = members.filter(|&i| states[i].site().is_some_and(|(s, _)| s == site)).collect();
            let partition = |i: usize| if per_sub_group { i / sub_group } else { 0 };
            for chunk in at_site.chunk_by(|&a, &b| partition(a) == partition(b)) {
                let parts: Vec<Contribution> = chunk
                    .iter()
                    .map(|&i| match states[i] {
                        State::AtCollective { part, .. } => part,
                        _ => Contribution { value: 0, source: 0 },
                    })
                    .collect();
                for (&i, value) in chunk.iter().zip(collective::results(op, bits, &parts)) {
                    if let State::AtCollective { dst, .. } = states[i] {
                        items[i].set_register(dst, value);
                    }
                }
            }
        }
        _ => {}
    }
}

/// An id as reports write it: `(x,y,z)`.
pub fn ids(v: [u64; 3]) -> String {
    format!("({},{},{})", v[0], v[1], v[2])
}

fn budget_error(launch: &Launch, wi: &WorkItem, total: u64) -> ExecError {
    ExecError::Budget(format!(
        "the launch did not finish within {total} branches and calls (work-item {:?} was at {}); \
         raise --budget if it is just long",
        wi.global_id,
        wi.location(launch.module)
    ))
}

fn hang_error(launch: &Launch, group: &Group, items: &[WorkItem], states: &[State], alone: bool) -> ExecError {
    let (i, loc) = states
        .iter()
        .enumerate()
        .find_map(|(i, s)| match s {
            State::Spinning { loc, .. } => Some((i, *loc)),
            _ => None,
        })
        .expect("a work-item spins");
    let waiting = states.iter().filter(|s| s.waits()).count();
    let spinning = states.iter().filter(|s| matches!(s, State::Spinning { .. })).count();
    let why = if alone {
        "no other work-item or work-group can change the value it waits for"
    } else {
        "the other running work-groups made no progress either (OpenCL does not guarantee forward progress \
         between work-groups)"
    };
    ExecError::Hang(format!(
        "forward-progress hang in work-group {:?}: work-item {:?} (local {:?}) keeps re-reading an unchanged value \
         at {} ({SPIN_REPEATS} times in a row); {spinning} work-item(s) spin and {waiting} wait at a barrier; {why}",
        group.id,
        items[i].global_id,
        items[i].local_id,
        launch.module.location(loc)
    ))
}
