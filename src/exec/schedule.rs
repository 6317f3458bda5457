//! The scheduler: the one place that decides in which order the work-items of a work-group advance
//! between synchronisation points, and that notices when they cannot.
//!
//! Work-items advance in warps (see [`super::warp`]). The [`Policy`] says how a group starts:
//! [`Policy::Lockstep`] puts the whole group in one warp, [`Policy::SubGroups`] one warp per
//! sub-group of W consecutive work-items (warps are then never joined across sub-groups). Then
//! the group runs in passes. In a pass every runnable warp, in order, runs until it yields: at a
//! barrier, at the end of the kernel, or spinning (every active lane re-reading an unchanged
//! value with the same atomic, see [`SPIN_REPEATS`]). When only some of a warp's lanes yield (the
//! others are on another path), they leave as a warp of their own and the rest go on: so a lane
//! that spins on a value another lane must write lets that lane run, as independent work-items
//! would. Under [`Policy::SubGroups`] a spinning path keeps its warp instead, as on lockstep
//! hardware: only when the group can make no progress does it part, reported as a sub-group
//! livelock (`Finding::SubGroupLivelock`). Sub-group barriers (not collectives) are told to the
//! hooks (`GroupHooks::sub_group_barrier`) under every policy, and under `SubGroups` the hooks
//! hear which lanes run (`GroupHooks::lanes_active`). When every live warp waits at a barrier or
//! collective function, it completes
//! (reporting divergence if they wait at different ones, or if some lanes have finished), and
//! warps at the same place are joined again; a sub-group barrier or collective completes as soon
//! as its sub-group is there. A pass in which nothing progressed (no warp reached a barrier or the
//! end, and every spinning one read again exactly what it read the pass before) means the group
//! waits on something outside itself: it sleeps until another group announces a change (a group
//! that changed something bumps the launch's progress epoch), or until every running group
//! is stuck at the same epoch, which is a forward-progress hang (or, under `SubGroups`, the
//! moment to part livelocked sub-groups). No decision depends on time or on how the threads are
//! scheduled. The instruction budget is drawn from one launch-wide pool in chunks, so it bounds
//! the whole launch, not each group.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::collective::{self, AsyncCopies, Contribution, Gathered};
use super::cpu_time::CpuClock;
use super::execution::{CopyRegs, Execution, Group, Yield};
use super::hooks::{GroupHooks, NoHooks};
use super::interp::{self, Scratch};
use super::meter::Meter;
use super::stepping::{Choice, Effect, Policy, Stepping};

mod stuck;
use super::warp::{Lanes, SPIN_REPEATS, Warp};
use super::{ExecError, Finding, RunOptions};
use crate::ir::{AtomicOp, CollectiveOp, Fence, Scope};
use stuck::Snapshot;

/// Budget units a group takes from the pool at a time: also how often, at least, a running
/// group looks at the deadline, the cancel flag and the hooks' memory.
const BUDGET_CHUNK: u64 = 1 << 16;

/// How long a group waiting on other groups sleeps at most before it looks at the deadline and
/// the cancel flag again (it is woken at once when anything it waits for changes).
const WAIT_SLICE: Duration = Duration::from_millis(20);

/// What all the work-groups of one NDRange's run share.
pub struct NdRangeState {
    /// Branches and calls left to the whole launch.
    budget: Line<AtomicU64>,
    total_budget: u64,
    /// The launch's progress epoch: bumped after every pass of a group that changed something
    /// and still waits, when a group ends, and after a barrier while some group sleeps (kernels
    /// without atomics never bump it), so a group that is stuck knows whether re-running its
    /// spinning warps could read anything new.
    progress: Line<AtomicU64>,
    /// Worker threads still taking or running groups.
    running: AtomicUsize,
    /// Groups no worker has taken yet (see [`NdRangeState::groups_to_take`]): while some are
    /// left, a hang is no proof of a deadlock (one of them may change what a group waits for).
    untaken: AtomicU64,
    /// The groups stuck at the current epoch (see [`StuckBook`]), and where stuck groups sleep.
    book: Mutex<StuckBook>,
    wake: Condvar,
    /// Groups sleeping on `wake`: a bump or a change of `running` only takes the lock to wake
    /// them when there are some.
    sleepers: AtomicUsize,
    /// Set when a group failed: groups not yet started are skipped.
    pub abort: AtomicBool,
    /// The kernel has atomics, so a group can spin and wait for others; without, the epoch
    /// need not be kept.
    may_wait: bool,
    started: Instant,
    deadline: Option<Instant>,
    cancel: Option<Arc<AtomicBool>>,
    /// The CPU time of the run's threads together, against [`RunOptions::cpu_limit`].
    cpu: CpuClock,
}

/// A value alone on its cache lines (two, which some processors fetch together): the counters
/// every worker writes do not make the others reload the fields they only read.
#[repr(align(128))]
struct Line<T>(T);

impl<T> std::ops::Deref for Line<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

/// The running groups that have found, in a pass begun at progress epoch `epoch`, that none of
/// their warps can progress, and those of them with a livelocked sub-group that could part
/// ([`Policy::SubGroups`] only). Marks of an older epoch count for nothing: a bump since means
/// some group changed memory, and every stuck group must look again before it is stuck.
#[derive(Debug, Default)]
struct StuckBook {
    epoch: u64,
    stuck: usize,
    livelocked: usize,
}

/// What a stuck group learns while it waits (see [`NdRangeState::wait_stuck`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Woken {
    /// Another group changed something: run the spinning warps again.
    Changed,
    /// Every running group is stuck at this epoch: part the group's livelocked sub-groups.
    Part,
    /// Every running group is stuck and none can part: a forward-progress hang (`alone`: this
    /// was the only running group; `all_taken`: no group is left to start).
    Hang { alone: bool, all_taken: bool },
}

impl NdRangeState {
    /// `may_wait`: whether the kernel's code has atomics (spin waits are recognised on atomics
    /// only, so without them no group ever waits for another).
    pub fn new(options: &RunOptions, may_wait: bool) -> NdRangeState {
        NdRangeState {
            budget: Line(AtomicU64::new(options.budget)),
            total_budget: options.budget,
            progress: Line(AtomicU64::new(0)),
            running: AtomicUsize::new(0),
            untaken: AtomicU64::new(0),
            book: Mutex::new(StuckBook::default()),
            wake: Condvar::new(),
            sleepers: AtomicUsize::new(0),
            abort: AtomicBool::new(false),
            may_wait,
            started: Instant::now(),
            deadline: options.deadline,
            cancel: options.cancel.clone(),
            cpu: CpuClock::new(options.cpu_limit),
        }
    }

    /// Fails when the run is cancelled, past its deadline or past its CPU time (this thread's
    /// use since its last look is added here); `place` says where it was.
    pub fn check_time(&self, place: impl FnOnce() -> String) -> Result<(), ExecError> {
        let cancelled = self.cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed));
        let late = self.deadline.is_some_and(|d| Instant::now() >= d);
        let cpu = self.cpu.over_limit();
        if !cancelled && !late && cpu.is_none() {
            return Ok(());
        }
        // Read only on the way out: a clock read per group is measurable on small groups.
        let elapsed = self.started.elapsed().as_secs_f64();
        let what = match (cancelled, late, cpu) {
            (true, ..) => format!("run cancelled after {elapsed:.1}s"),
            (_, _, Some(used)) => format!("CPU-time limit exceeded after {:.1} s of CPU time", used.as_secs_f64()),
            _ => format!("wall-time limit exceeded after {elapsed:.1}s"),
        };
        Err(ExecError::Timeout(format!("{what} in {}", place())))
    }

    /// Whether the run is cancelled (one relaxed load: cheap enough for every step of a
    /// stepped run, whose chooser may cancel it).
    pub fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// `n` worker threads will take groups: counted before any of them starts, so that a group
    /// never takes itself for the only one running while another worker is still starting.
    pub fn workers_starting(&self, n: usize) {
        self.running.fetch_add(n, Ordering::SeqCst);
    }

    /// A worker thread starts taking groups (call before it takes the first), unless it was
    /// counted by [`NdRangeState::workers_starting`].
    pub fn worker_started(&self) {
        self.running.fetch_add(1, Ordering::SeqCst);
    }

    /// The launch has `n` groups for the workers to take (a stepped run takes them all at once
    /// and never calls this).
    pub fn groups_to_take(&self, n: u64) {
        self.untaken.store(n, Ordering::SeqCst);
    }

    /// A worker took `n` groups to run.
    pub fn groups_taken(&self, n: u64) {
        self.untaken.fetch_sub(n, Ordering::SeqCst);
    }

    /// A worker thread has run its last group.
    pub fn worker_finished(&self) {
        self.running.fetch_sub(1, Ordering::SeqCst);
        self.notify();
    }

    /// Some group changed memory or its own state: every stuck group must look again.
    fn bump(&self) {
        if self.may_wait {
            self.progress.fetch_add(1, Ordering::SeqCst);
            self.notify();
        }
    }

    /// A group got past a barrier, which it may have written memory before: tells the groups
    /// that sleep. (One that is still in its pass and has not seen the writes hears of them
    /// anyway before the group that made them can be stuck: its next pass progresses, and that
    /// bumps the epoch, as does its end. So nothing hangs for want of this bump; it only saves
    /// the sleepers the wait, and costs the others no write to a shared line.)
    fn bump_for_sleepers(&self) {
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            self.bump();
        }
    }

    /// Wakes the sleeping groups, if any. (A sleeper counts itself in `sleepers` before it looks
    /// at what it waits for, and we change that before we look at `sleepers`, both sequentially
    /// consistent: either it sees the change or we see it, and then it holds the lock until it
    /// sleeps, so the notification cannot come between its look and its sleep.)
    fn notify(&self) {
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            drop(self.book.lock());
            self.wake.notify_all();
        }
    }

    /// A group whose pass begun at progress epoch `epoch` changed nothing waits here until
    /// another group changes something, or until every running group is stuck at this epoch
    /// (then, if `livelocked`, it is to part its livelocked sub-groups; if no group can part,
    /// it is hung). Nothing is decided by time: a group waits for as long as another one runs,
    /// which the budget and the deadline bound. `place` names the group for a timeout.
    fn wait_stuck(&self, epoch: u64, livelocked: bool, place: &dyn Fn() -> String) -> Result<Woken, ExecError> {
        let mut book = self.book.lock();
        if self.progress.load(Ordering::SeqCst) != epoch {
            return Ok(Woken::Changed);
        }
        if book.epoch != epoch {
            *book = StuckBook { epoch, stuck: 0, livelocked: 0 };
        }
        book.stuck += 1;
        book.livelocked += usize::from(livelocked);
        // This mark may complete the set of stuck groups another one waits for.
        self.wake.notify_all();
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        let woken = loop {
            if self.progress.load(Ordering::SeqCst) != epoch {
                break Ok(Woken::Changed);
            }
            let running = self.running.load(Ordering::SeqCst);
            if book.stuck >= running {
                if livelocked {
                    // It parts and runs on: no longer stuck, but nothing changed for the others
                    // until its next pass does (which bumps the epoch).
                    book.stuck -= 1;
                    book.livelocked -= 1;
                    break Ok(Woken::Part);
                }
                if book.livelocked == 0 {
                    let all_taken = self.untaken.load(Ordering::SeqCst) == 0;
                    break Ok(Woken::Hang { alone: running <= 1, all_taken });
                }
                // Another stuck group can part a livelocked sub-group: wait for it.
            }
            if let Err(e) = self.check_time(place) {
                break Err(e);
            }
            self.wake.wait_for(&mut book, WAIT_SLICE);
        };
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
        woken
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

/// Where a warp stands between passes.
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
    /// Before an atomic, or a plain access into watched bytes, waiting to be chosen (stepping
    /// only).
    AtAtomic {
        loc: u32,
        op: AtomicOp,
        addr: u64,
        size: u32,
        plain: bool,
    },
    /// At a collective function: its site and where each lane's part and result are.
    AtCollective {
        site: u64,
        loc: u32,
        op: CollectiveOp,
        bits: u8,
        src: u32,
        id: u32,
        id_n: u8,
        dst: u32,
        sub_group: bool,
    },
    /// At an async copy: its site and the registers of its arguments.
    AtAsyncCopy {
        site: u64,
        loc: u32,
        regs: CopyRegs,
    },
    /// At a `wait_group_events`: its site and the registers of its operands.
    AtWait {
        site: u64,
        loc: u32,
        num: u32,
        list: u32,
    },
    Done,
}

impl State {
    fn of(y: Yield) -> State {
        match y {
            Yield::Spin { loc, addr, value } => State::Spinning { loc, addr, value },
            Yield::Barrier { fence, scope, loc, site, sub_group } => {
                State::AtBarrier { site, fence, scope, loc, sub_group }
            }
            Yield::Collective { site, loc, op, bits, src, id, id_n, dst, sub_group } => {
                State::AtCollective { site, loc, op, bits, src, id, id_n, dst, sub_group }
            }
            Yield::AtAtomic { loc, op, addr, size, plain } => State::AtAtomic { loc, op, addr, size, plain },
            Yield::AsyncCopy { site, loc, regs } => State::AtAsyncCopy { site, loc, regs },
            Yield::WaitEvents { site, loc, num, list } => State::AtWait { site, loc, num, list },
            Yield::Done => State::Done,
            Yield::OutOfBudget => State::Runnable,
        }
    }

    /// Waiting for the rest of the group (at a barrier, a collective function, an async copy or
    /// a wait for events).
    fn waits(&self) -> bool {
        matches!(
            self,
            State::AtBarrier { .. } | State::AtCollective { .. } | State::AtAsyncCopy { .. } | State::AtWait { .. }
        )
    }

    fn site(&self) -> Option<(u64, u32)> {
        match *self {
            State::AtBarrier { site, loc, .. }
            | State::AtCollective { site, loc, .. }
            | State::AtAsyncCopy { site, loc, .. }
            | State::AtWait { site, loc, .. } => Some((site, loc)),
            _ => None,
        }
    }

    /// Waiting at a sub-group barrier or collective.
    fn sub_group_wait(&self) -> bool {
        matches!(self, State::AtBarrier { sub_group: true, .. } | State::AtCollective { sub_group: true, .. })
    }
}

/// Bytes of scheduler state per work-item (a warp per work-item at worst).
pub const STATE_BYTES: usize = std::mem::size_of::<State>() + std::mem::size_of::<Warp>();

/// Runs every work-item of `group` (its lanes already started) from the entry of kernel
/// function `func` to the end. `meter` holds the group's memory: `fixed` bytes (`__local`
/// memory, lane structs), what the lanes hold on the heap (registers, private memory, summed at
/// every budget point), and its printf output.
pub fn run_group<H: GroupHooks>(
    worker: &mut WorkerRun,
    group: &mut Group,
    lanes: &mut Lanes,
    func: u32,
    (hooks, shared): (&mut H, &NdRangeState),
    meter: &mut Meter,
    fixed: u64,
) -> Result<(), ExecError> {
    let WorkerRun { run, scratch, budget } = worker;
    let launch = run.launch;
    let mut at_budget_point = |group: &Group, lanes: &Lanes, warp: &Warp, hooks: &mut H| {
        check_limits(launch, shared, meter, fixed, (group, lanes, warp), hooks)
    };
    let mut cx = PassContext { shared, budget, at_budget_point: &mut at_budget_point, scratch };
    let result = run.passes(group, lanes, func, hooks, &mut cx);
    // The worker keeps what is left for its next group, unless the pool runs low and another
    // worker may need it.
    if shared.budget.load(Ordering::Relaxed) < BUDGET_CHUNK * 8 {
        shared.budget.fetch_add(std::mem::take(budget), Ordering::Relaxed);
    }
    shared.bump();
    if result.is_err() {
        shared.abort.store(true, Ordering::Relaxed);
    }
    result
}

/// What a worker thread keeps from group to group: the scheduler's lists, the interpreter's
/// scratch lists and the budget it took from the pool but did not use, so that a group neither
/// allocates them again nor touches the pool (a cache line every worker writes) unless it needs
/// more budget.
pub struct WorkerRun<'l, 'a> {
    run: GroupRun<'l, 'a>,
    scratch: Scratch,
    budget: u64,
}

impl<'l, 'a> WorkerRun<'l, 'a> {
    pub fn new(launch: &'l Execution<'a>, policy: Policy) -> WorkerRun<'l, 'a> {
        WorkerRun { run: GroupRun::new(launch, policy), scratch: Scratch::default(), budget: 0 }
    }

    /// Gives the unused budget back to the pool (the worker has run its last group).
    pub fn finish(&mut self, shared: &NdRangeState) {
        shared.budget.fetch_add(std::mem::take(&mut self.budget), Ordering::Relaxed);
    }
}

/// What a group does each time it needs more budget: checks the run's deadline and cancel flag,
/// charges `fixed` bytes plus what the lanes hold and the group printed, and polls the hooks.
/// `at` is the group, its lanes and the warp asking (for messages).
fn check_limits<H: GroupHooks>(
    launch: &Execution,
    shared: &NdRangeState,
    meter: &mut Meter,
    fixed: u64,
    (group, lanes, warp): (&Group, &Lanes, &Warp),
    hooks: &mut H,
) -> Result<(), ExecError> {
    let place = || {
        let gid = warp.active().first().map_or([0; 3], |&l| lanes.global_id(l as usize));
        format!("work-group {} (work-item {} at {})", ids(group.id), ids(gid), interp::location(launch.module, warp))
    };
    shared.check_time(place)?;
    let bytes = fixed + lanes.footprint() + group.printf.len() as u64;
    meter.need(bytes, || format!("{} (its work-items' memory and printf output)", place()))?;
    hooks.poll()
}

/// What a group does each time it needs more budget: given the warp asking, it checks the
/// limits of the run.
pub type BudgetPoint<'a, H> = dyn FnMut(&Group, &Lanes, &Warp, &mut H) -> Result<(), ExecError> + 'a;

/// What a group's passes draw on besides the group, its lanes and its hooks: the launch's shared
/// state, the budget the worker holds, what the worker does at a budget point, and its scratch
/// lists. A worker builds it once per group (once per launch when stepped).
pub struct PassContext<'r, 'p, H> {
    shared: &'r NdRangeState,
    budget: &'r mut u64,
    at_budget_point: &'r mut BudgetPoint<'p, H>,
    scratch: &'r mut Scratch,
}

/// What [`GroupRun::settle`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// Every lane finished.
    Done,
    /// A barrier, collective or sub-group operation completed: run another pass.
    Released,
    /// Some warps spin or wait before atomics.
    Waiting,
}

/// One group's warps and their states.
pub struct GroupRun<'l, 'a> {
    launch: &'l Execution<'a>,
    policy: Policy,
    warps: Vec<Warp>,
    states: Vec<State>,
    /// Lane marks for splitting a warp (all false between uses).
    take: Vec<bool>,
    /// The group's async copies and their events.
    copies: AsyncCopies,
    /// The site of the barrier that follows a wait not every work-item reached: its divergence
    /// is that of the wait, already reported.
    wait_barrier: Option<u64>,
    /// The group as it was when a barrier was last released while some of its work-items had
    /// returned (see [`GroupRun::endless_divergence`]).
    divergent: Option<Snapshot>,
    /// Work-group barriers and collectives completed.
    pub barriers: u32,
}

impl<'l, 'a> GroupRun<'l, 'a> {
    pub fn new(launch: &'l Execution<'a>, policy: Policy) -> GroupRun<'l, 'a> {
        GroupRun {
            launch,
            policy,
            warps: Vec::new(),
            states: Vec::new(),
            take: Vec::new(),
            copies: AsyncCopies::default(),
            wait_barrier: None,
            divergent: None,
            barriers: 0,
        }
    }

    fn passes<H: GroupHooks>(
        &mut self,
        group: &mut Group,
        lanes: &mut Lanes,
        func: u32,
        hooks: &mut H,
        cx: &mut PassContext<H>,
    ) -> Result<(), ExecError> {
        let shared = cx.shared;
        self.start(func, lanes);
        loop {
            // What the pass can see: every change another group announced up to this epoch.
            let epoch = shared.progress.load(Ordering::SeqCst);
            let progressed = self.pass(group, lanes, hooks, cx)?;
            match self.settle(group, lanes, hooks) {
                Settled::Done => return Ok(()),
                Settled::Released => {
                    shared.bump_for_sleepers();
                    continue;
                }
                Settled::Waiting => {}
            }
            if progressed {
                shared.bump();
                continue;
            }
            // Some warps spin and nothing in this group changed: running them again can only
            // read something new once another group has written it. Wait for that, or for every
            // running group to be stuck too (then nothing but parting a livelocked sub-group
            // helps). Waiting instead of spinning leaves the core to the group that can progress
            // and keeps the spinning group from heaping up accesses for the detector.
            let livelocked = self.livelocked();
            let id = group.id;
            let place = || format!("work-group {}, whose work-items wait for other work-groups", ids(id));
            match shared.wait_stuck(epoch, livelocked, &place)? {
                Woken::Changed => {}
                Woken::Part => {
                    // Its next pass makes progress (the masked lanes run on) and announces it.
                    let parted = self.part_livelocked(group, lanes);
                    debug_assert!(parted, "a livelocked group has a sub-group to part");
                }
                Woken::Hang { alone, all_taken } => {
                    // Only when every group of the launch has started can nothing outside the
                    // stuck groups ever change what they wait for; otherwise clrace cannot
                    // tell a deadlock from a group waiting for one not started yet.
                    if all_taken && self.deadlocked(group, lanes, hooks, cx)? {
                        flush_printf(group, lanes);
                        return Ok(());
                    }
                    return Err(self.hang_error(group, lanes, alone));
                }
            }
        }
    }

    /// Under [`Policy::SubGroups`]: some warp's spinning path waits while other lanes of its
    /// sub-group are masked off (see [`GroupRun::part_livelocked`]).
    fn livelocked(&self) -> bool {
        matches!(self.policy, Policy::SubGroups(_))
            && self.states.iter().zip(&self.warps).any(|(s, w)| matches!(s, State::Spinning { .. }) && !w.converged())
    }

    /// Puts the group's lanes into their first warps, by the policy.
    pub fn start(&mut self, func: u32, lanes: &Lanes) {
        let count = lanes.count as u32;
        // The lists are kept from the worker's last group (a fresh run has none yet), and so are
        // its warps' own lists: a group starts without allocating.
        let (width, warps) = match self.policy {
            Policy::Lockstep => (count.max(1), 1),
            Policy::SubGroups(w) => (w.max(1), count.div_ceil(w.max(1))),
            Policy::WorkItems => (1, count),
        };
        let lanes_of = |s: u32| s * width..((s + 1) * width).min(count);
        self.warps.truncate(warps as usize);
        for (s, warp) in self.warps.iter_mut().enumerate() {
            warp.restart(func, lanes_of(s as u32));
        }
        for s in self.warps.len() as u32..warps {
            self.warps.push(Warp::new(func, lanes_of(s)));
        }
        self.states.clear();
        self.states.resize(self.warps.len(), State::Runnable);
        // All false between uses: only its length may need to grow.
        let marks = lanes.stride.max(count as usize);
        if self.take.len() < marks {
            self.take.resize(marks, false);
        }
        self.copies.reset();
        self.wait_barrier = None;
        self.divergent = None;
    }

    /// Runs every runnable warp once until it stops; returns whether anything progressed (a
    /// warp that spins again on exactly what it read before did not).
    pub fn pass<H: GroupHooks>(
        &mut self,
        group: &mut Group,
        lanes: &mut Lanes,
        hooks: &mut H,
        cx: &mut PassContext<H>,
    ) -> Result<bool, ExecError> {
        let mut progressed = false;
        let mut i = 0;
        while i < self.warps.len() {
            if matches!(self.states[i], State::Runnable | State::Spinning { .. }) {
                let state = self.run_warp(i, group, lanes, hooks, cx)?;
                progressed |= !matches!(state, State::Spinning { .. }) || state != self.states[i];
                self.states[i] = state;
            }
            i += 1;
        }
        Ok(progressed)
    }

    /// After a pass: finishes the group, or completes the barriers, collectives and sub-group
    /// operations every lane they wait for has reached.
    pub fn settle<H: GroupHooks>(&mut self, group: &mut Group, lanes: &mut Lanes, hooks: &mut H) -> Settled {
        if self.states.iter().all(|s| *s == State::Done) {
            self.copies.finish(group);
            flush_printf(group, lanes);
            return Settled::Done;
        }
        // Sub-groups whose work-items all wait at one sub-group barrier or collective go on.
        if self.states.iter().any(State::sub_group_wait) && self.release_sub_groups(group, lanes, hooks) {
            return Settled::Released;
        }
        if self.states.iter().all(|s| s.waits() || *s == State::Done) {
            self.barriers = self.barriers.wrapping_add(1);
            self.release_barrier(group, lanes, hooks);
            return Settled::Released;
        }
        Settled::Waiting
    }

    /// The work-items waiting before an atomic, as (warp index, the choice it offers; its
    /// `group` and `unchanged` are left 0 for the caller to fill in).
    pub fn at_atomics(&self) -> impl Iterator<Item = (usize, Choice)> + '_ {
        self.states.iter().enumerate().filter_map(|(i, s)| match *s {
            State::AtAtomic { loc, op, addr, size, plain } => {
                let item = self.warps[i].active()[0];
                let (unchanged, group, barriers) = (0, 0, self.barriers);
                Some((i, Choice { group, item, loc, op, addr, size, plain, unchanged, barriers }))
            }
            _ => None,
        })
    }

    /// Lets warp `i`, waiting before an atomic, run it.
    pub fn grant(&mut self, i: usize) {
        self.warps[i].granted = true;
        self.states[i] = State::Runnable;
    }

    /// Whether warp states spin or wait before atomics (a stepping run with none left and
    /// nothing released is stuck).
    pub fn any_spinning(&self) -> bool {
        self.states.iter().any(|s| matches!(s, State::Spinning { .. }))
    }

    /// Runs warp `i` until it stops for the pass; returns its new state. Lanes that stop while
    /// others of the warp are elsewhere become a warp of their own, and the rest run on.
    fn run_warp<H: GroupHooks>(
        &mut self,
        i: usize,
        group: &mut Group,
        lanes: &mut Lanes,
        hooks: &mut H,
        cx: &mut PassContext<H>,
    ) -> Result<State, ExecError> {
        loop {
            match self.launch.run(&mut self.warps[i], lanes, group, hooks, cx.budget, cx.scratch)? {
                Yield::OutOfBudget => {
                    (cx.at_budget_point)(group, lanes, &self.warps[i], hooks)?;
                    let more = cx.shared.take_budget();
                    *cx.budget += more;
                    if more == 0 {
                        return Err(budget_error(self.launch, lanes, &self.warps[i], cx.shared.total_budget));
                    }
                }
                Yield::Done => return Ok(State::Done),
                y => {
                    let state = State::of(y);
                    if state.sub_group_wait() {
                        if self.covers_its_sub_groups(i, lanes) {
                            // Every live lane of these sub-groups is here: they go on at once.
                            let members = self.warps[i].active();
                            complete(self.launch, &mut self.copies, state, members, lanes, group, &mut NoHooks);
                            self.sub_groups_synced(&state, self.warps[i].active(), hooks);
                            continue;
                        }
                        // Each sub-group's lanes wait as a warp of their own.
                        let w = self.launch.range.sub_group.max(1) as u32;
                        let active = self.warps[i].active().to_vec();
                        for chunk in active.chunk_by(|a, b| a / w == b / w) {
                            self.split(i, chunk, state);
                        }
                        if self.warps[i].depth() == 0 {
                            return Ok(State::Done);
                        }
                        continue;
                    }
                    if !self.warps[i].converged() {
                        if matches!(state, State::Spinning { .. }) && matches!(self.policy, Policy::SubGroups(_)) {
                            // Lockstep hardware cannot part a sub-group: the spinning path keeps
                            // the warp, and the others of its sub-group wait (see
                            // `part_livelocked` for when no other sub-group or group can help).
                            return Ok(state);
                        }
                        let active = self.warps[i].active().to_vec();
                        self.split(i, &active, state);
                        continue;
                    }
                    return Ok(state);
                }
            }
        }
    }

    /// Moves `moving` (lanes of warp `i`'s top entry, which just yielded into `state`) into a
    /// warp of their own at the end of the list; warp `i` keeps the rest and runs on.
    fn split(&mut self, i: usize, moving: &[u32], state: State) {
        for &l in moving {
            self.take[l as usize] = true;
        }
        let part = self.warps[i].split_off(&self.take);
        for &l in moving {
            self.take[l as usize] = false;
        }
        self.warps.push(part);
        self.states.push(state);
    }

    /// The top entry of warp `i` holds every live lane of each sub-group it has lanes of.
    fn covers_its_sub_groups(&self, i: usize, lanes: &Lanes) -> bool {
        let w = self.launch.range.sub_group.max(1) as usize;
        self.warps[i]
            .active()
            .chunk_by(|&a, &b| a as usize / w == b as usize / w)
            .all(|chunk| live_in_sub_group(lanes, chunk[0] as usize / w, w) == chunk.len())
    }

    /// Tells the hooks that the sub-groups of `members` (in local linear order) completed the
    /// sub-group barrier `state` waits at; a sub-group collective is not told (it orders nothing).
    fn sub_groups_synced<H: GroupHooks>(&self, state: &State, members: &[u32], hooks: &mut H) {
        if !H::ACTIVE {
            return;
        }
        let (fence, loc) = match *state {
            State::AtBarrier { fence, loc, sub_group: true, .. } => (fence, loc),
            // A sub-group collective, like a work-group one, orders no memory. SPIR-V gives its
            // group instructions (OpGroupIAdd, OpGroupBroadcast, OpGroupNonUniform*) an execution
            // scope and no memory semantics, and a control barrier orders memory only through
            // its own: "If Semantics is not None, this instruction also serves as an
            // OpMemoryBarrier instruction" (OpControlBarrier). OpenCL C asks of the sub-group
            // functions only that they "must be encountered by all work-items in the sub-group".
            _ => return,
        };
        let w = self.launch.range.sub_group.max(1) as u32;
        for chunk in members.chunk_by(|a, b| a / w == b / w) {
            hooks.sub_group_barrier(chunk[0] / w, w, fence, loc);
        }
    }

    /// Under [`Policy::SubGroups`], when the group can make no progress: every warp whose
    /// spinning path waits while other lanes of its sub-group are masked off on another path is
    /// a sub-group livelock (lockstep hardware would spin for ever). Each is reported, and its
    /// spinning lanes leave as a warp of their own, as independent work-items would, so the run
    /// can go on. Returns whether any was found.
    fn part_livelocked(&mut self, group: &mut Group, lanes: &Lanes) -> bool {
        let Policy::SubGroups(w) = self.policy else { return false };
        let w = w.max(1);
        let mut parted = false;
        for k in 0..self.warps.len() {
            let state = self.states[k];
            let State::Spinning { loc, .. } = state else { continue };
            if self.warps[k].converged() {
                continue;
            }
            let spinning = self.warps[k].active().to_vec();
            let s = spinning[0] / w;
            let live = (s * w..((s + 1) * w).min(lanes.count as u32)).filter(|&l| !lanes.done[l as usize]);
            let masked: Vec<u32> = live.filter(|l| !spinning.contains(l)).take(64).collect();
            group.findings.push(Finding::SubGroupLivelock {
                group: group.id,
                sub_group: s,
                width: w,
                loc,
                spinning: spinning.iter().copied().take(64).collect(),
                masked,
                global_id: lanes.global_id(spinning[0] as usize),
            });
            self.split(k, &spinning, state);
            self.states[k] = State::Runnable;
            parted = true;
        }
        parted
    }

    /// Releases every sub-group whose live lanes all wait at the same sub-group barrier or
    /// collective (each waiting warp lies in one sub-group), and tells the hooks. Returns whether
    /// any went on.
    fn release_sub_groups<H: GroupHooks>(&mut self, group: &mut Group, lanes: &mut Lanes, hooks: &mut H) -> bool {
        let w = self.launch.range.sub_group.max(1) as usize;
        let mut released = false;
        let sub_groups = lanes.count.div_ceil(w);
        for s in 0..sub_groups {
            let members = s * w..((s + 1) * w).min(lanes.count);
            let live = live_in_sub_group(lanes, s, w);
            let here: Vec<usize> = (0..self.warps.len())
                .filter(|&k| self.states[k] != State::Done)
                .filter(|&k| self.warps[k].active().first().is_some_and(|&l| members.contains(&(l as usize))))
                .collect();
            let Some(&first) = here.first() else { continue };
            let site = self.states[first].site();
            let all_here = here.iter().all(|&k| self.states[k].sub_group_wait() && self.states[k].site() == site);
            let lanes_here: usize = here.iter().map(|&k| self.warps[k].active().len()).sum();
            if !all_here || lanes_here != live {
                continue;
            }
            let mut members: Vec<u32> = here.iter().flat_map(|&k| self.warps[k].active().to_vec()).collect();
            members.sort_unstable();
            complete(self.launch, &mut self.copies, self.states[first], &members, lanes, group, &mut NoHooks);
            self.sub_groups_synced(&self.states[first], &members, hooks);
            // Join the sub-group's warps where they are at the same place.
            self.states[first] = State::Runnable;
            for &k in &here[1..] {
                if self.policy != Policy::WorkItems && self.warps[first].same_place(&self.warps[k]) {
                    let other = std::mem::take(&mut self.warps[k]);
                    self.warps[first].merge(&other);
                    self.states[k] = State::Done;
                } else {
                    self.states[k] = State::Runnable;
                }
            }
            released = true;
        }
        if released {
            self.compact();
        }
        released
    }

    /// Every live warp waits at a barrier or collective function: reports divergence if they are
    /// not all at the same one (or some lanes have finished), completes it, lets them all go on,
    /// and joins warps that are at the same place.
    fn release_barrier<H: GroupHooks>(&mut self, group: &mut Group, lanes: &mut Lanes, hooks: &mut H) {
        if let [warp] = &self.warps[..]
            && warp.live as usize == lanes.count
        {
            // The common case: the whole group, converged, at one barrier: nothing diverged.
            complete(self.launch, &mut self.copies, self.states[0], warp.active(), lanes, group, hooks);
            self.states[0] = State::Runnable;
            flush_printf(group, lanes);
            return;
        }
        // Which warp each lane is in (none once it has finished).
        let mut warp_of = vec![usize::MAX; lanes.count];
        for (k, warp) in self.warps.iter().enumerate() {
            if self.states[k] != State::Done {
                for &l in warp.active() {
                    warp_of[l as usize] = k;
                }
            }
        }
        let site_of = |l: usize| (warp_of[l] != usize::MAX).then(|| self.states[warp_of[l]].site()).flatten();
        let first = (0..lanes.count).find(|&l| warp_of[l] != usize::MAX).expect("a lane waits");
        // An async copy is not a barrier: the work-items at one go on, the others wait on.
        let at_copy =
            |l: usize| warp_of[l] != usize::MAX && matches!(self.states[warp_of[l]], State::AtAsyncCopy { .. });
        if let Some(l) = (0..lanes.count).find(|&l| at_copy(l)) {
            let state = self.states[warp_of[l]];
            let members: Vec<u32> =
                (0..lanes.count).filter(|&k| site_of(k) == state.site()).map(|k| k as u32).collect();
            complete(self.launch, &mut self.copies, state, &members, lanes, group, hooks);
            for s in self.states.iter_mut() {
                if s.site() == state.site() {
                    *s = State::Runnable;
                }
            }
            self.compact();
            self.join_warps();
            return;
        }
        let (site, loc) = site_of(first).expect("waiting states have a site");
        // A wait that not every work-item reached is reported as such when it completes, and so
        // is the barrier the lowering puts right after it (the next instruction: its site is one
        // more).
        let at_wait = matches!(self.states[warp_of[first]], State::AtWait { .. });
        let diverged = (0..lanes.count).find(|&l| site_of(l).is_none_or(|(s, _)| s != site));
        group.diverged |= diverged.is_some();
        if at_wait && diverged.is_some() {
            self.wait_barrier = Some(site + 1);
        }
        let mut returned = false;
        if let Some(other) = diverged
            && !at_wait
            && self.wait_barrier != Some(site)
        {
            group.findings.push(Finding::BarrierDivergence {
                group: group.id,
                waiting: lanes.local_id(first),
                barrier: loc,
                other: lanes.local_id(other),
                other_barrier: site_of(other).map(|(_, loc)| loc),
            });
            returned = site_of(other).is_none();
        }
        // Every lane at this site takes part, in local linear order.
        let members: Vec<u32> =
            (0..lanes.count).filter(|&l| site_of(l).is_some_and(|(s, _)| s == site)).map(|l| l as u32).collect();
        let endless = returned && self.endless_divergence(site, group, lanes);
        complete(self.launch, &mut self.copies, self.states[warp_of[first]], &members, lanes, group, hooks);
        for s in self.states.iter_mut() {
            if s.waits() {
                // A barrier that can only be reached again and again, by the same work-items in
                // the same state, ends their run: its divergence is all there is to report.
                *s = if endless { State::Done } else { State::Runnable };
            }
        }
        flush_printf(group, lanes);
        self.compact();
        self.join_warps();
    }

    /// Drops finished warps.
    fn compact(&mut self) {
        let mut k = 0;
        while k < self.warps.len() {
            if self.states[k] == State::Done {
                self.warps.swap_remove(k);
                self.states.swap_remove(k);
            } else {
                k += 1;
            }
        }
        // Keep warps in local-id order of their first lane, so passes run in that order.
        let mut order: Vec<usize> = (0..self.warps.len()).collect();
        order.sort_by_key(|&k| self.warps[k].active().first().copied().unwrap_or(u32::MAX));
        let warps = std::mem::take(&mut self.warps);
        let states = std::mem::take(&mut self.states);
        let mut slots: Vec<Option<Warp>> = warps.into_iter().map(Some).collect();
        for k in order {
            self.warps.push(slots[k].take().expect("each warp once"));
            self.states.push(states[k]);
        }
    }

    /// Joins runnable warps that are at the same place (within one sub-group under
    /// [`Policy::SubGroups`]).
    fn join_warps(&mut self) {
        let w = match self.policy {
            Policy::Lockstep => u32::MAX,
            Policy::SubGroups(w) => w.max(1),
            Policy::WorkItems => return,
        };
        let sub_group_of = |warp: &Warp| warp.active().first().map(|&l| l / w);
        let mut k = 0;
        while k < self.warps.len() {
            let mut j = k + 1;
            while j < self.warps.len() {
                if self.states[k] == State::Runnable
                    && self.states[j] == State::Runnable
                    && sub_group_of(&self.warps[k]) == sub_group_of(&self.warps[j])
                    && self.warps[k].same_place(&self.warps[j])
                {
                    let other = self.warps.remove(j);
                    self.states.remove(j);
                    self.warps[k].merge(&other);
                } else {
                    j += 1;
                }
            }
            k += 1;
        }
    }
}

/// Runs every work-group of a launch on this thread with each work-item alone
/// ([`Policy::WorkItems`]), stopping every work-item before each atomic: `chooser` picks which
/// waiting work-item (of any group) runs its atomic next, and each pick is appended to
/// `record`, and what the step read and wrote to `effects` once it has run. With a `watch`, plain loads and
/// stores into its bytes stop and are chosen the same way. Between atomics the work-items run in NDRange order of groups, then local ids, to
/// their next atomic, barrier or end, so a run is fully determined by its choices: replaying
/// `record` with [`Replay`](super::stepping::Replay) repeats it exactly. `groups` are started at the kernel's entry
/// (function `func`) with their observers; `fixed` bytes are charged to `meter` besides their
/// lanes.
pub fn run_stepped<H: GroupHooks>(
    launch: &Execution,
    groups: &mut [(u64, Group, Lanes, H)],
    func: u32,
    shared: &NdRangeState,
    meter: &mut Meter,
    fixed: u64,
    stepping: Stepping,
) -> Result<(), ExecError> {
    let Stepping { chooser, record, effects, .. } = stepping;
    let mut runs: Vec<GroupRun> = groups
        .iter()
        .map(|(_, _, lanes, _)| {
            let mut run = GroupRun::new(launch, Policy::WorkItems);
            run.start(func, lanes);
            run
        })
        .collect();
    let mut budget = 0;
    let mut scratch = Scratch::default();
    let mut at_budget_point = |group: &Group, lanes: &Lanes, warp: &Warp, hooks: &mut H| {
        check_limits(launch, shared, meter, fixed, (group, lanes, warp), hooks)
    };
    let mut cx =
        PassContext { shared, budget: &mut budget, at_budget_point: &mut at_budget_point, scratch: &mut scratch };
    // The work-items waiting before an atomic, in NDRange order of groups then local ids, and
    // where each is (group, warp). Only the group of the one chosen runs after a choice (the
    // others all wait), so only its part of the list changes.
    let mut ready: Vec<Choice> = Vec::new();
    let mut places: Vec<(usize, usize)> = Vec::new();
    // Group g's new part of the list, reused from step to step.
    let (mut fresh, mut at): (Vec<Choice>, Vec<(usize, usize)>) = (Vec::new(), Vec::new());
    let group_ids: Vec<u64> = groups.iter().map(|g| g.0).collect();
    let waiting_of = |g: usize, run: &GroupRun, lanes: &Lanes, out: &mut Vec<Choice>, at: &mut Vec<(usize, usize)>| {
        for (warp, choice) in run.at_atomics() {
            let unchanged = lanes.lane[choice.item as usize].spin.unchanged();
            out.push(Choice { group: group_ids[g], unchanged, ..choice });
            at.push((g, warp));
        }
    };
    let result = (|| {
        for g in 0..runs.len() {
            let (_, group, lanes, hooks) = &mut groups[g];
            settle_group(&mut runs[g], group, lanes, hooks, &mut cx)?;
        }
        for (g, run) in runs.iter().enumerate() {
            waiting_of(g, run, &groups[g].2, &mut ready, &mut places);
        }
        loop {
            if ready.is_empty() {
                let done = runs
                    .iter_mut()
                    .zip(groups.iter_mut())
                    .all(|(run, (_, group, lanes, hooks))| run.settle(group, lanes, hooks) == Settled::Done);
                if done {
                    return Ok(());
                }
                let (g, run) = runs.iter().enumerate().find(|(_, r)| r.any_spinning()).unwrap_or((0, &runs[0]));
                return Err(run.hang_error(&groups[g].1, &groups[g].2, true));
            }
            let pick = chooser.choose(&ready).min(ready.len() - 1);
            if shared.cancelled() {
                // The chooser may cancel the run (a deadlock): no need to wait for a budget point.
                shared.check_time(|| format!("a stepped run, after {} steps", record.len()))?;
            }
            record.push(ready[pick]);
            let (g, warp) = places[pick];
            runs[g].grant(warp);
            let (_, group, lanes, hooks) = &mut groups[g];
            let item = ready[pick].item as usize;
            lanes.lane[item].effect = (None, None);
            settle_group(&mut runs[g], group, lanes, hooks, &mut cx)?;
            // The granted step ran first, and nothing after it was granted: its effect.
            let (read, wrote) = lanes.lane[item].effect;
            effects.push(Effect { read, wrote });
            // Replace group g's part of the list.
            let start = places.iter().position(|p| p.0 == g).unwrap_or(places.len());
            let end = start + places[start..].iter().take_while(|p| p.0 == g).count();
            fresh.clear();
            at.clear();
            waiting_of(g, &runs[g], &groups[g].2, &mut fresh, &mut at);
            ready.splice(start..end, fresh.drain(..));
            places.splice(start..end, at.drain(..));
        }
    })();
    shared.budget.fetch_add(budget, Ordering::Relaxed);
    result
}

/// Runs a group of a stepped launch until each of its work-items waits before an atomic, at a
/// barrier that cannot complete yet, or has finished.
fn settle_group<H: GroupHooks>(
    run: &mut GroupRun,
    group: &mut Group,
    lanes: &mut Lanes,
    hooks: &mut H,
    cx: &mut PassContext<H>,
) -> Result<(), ExecError> {
    loop {
        run.pass(group, lanes, hooks, cx)?;
        if run.settle(group, lanes, hooks) != Settled::Released {
            return Ok(());
        }
    }
}

/// Completes what `state` waits at for `members` (in local linear order): tells the hooks of a
/// barrier, hands out a collective's results (per sub-group for a sub-group one), or makes an
/// async copy or completes a wait (see [`AsyncCopies`]).
fn complete<H: GroupHooks>(
    launch: &Execution,
    copies: &mut AsyncCopies,
    state: State,
    members: &[u32],
    lanes: &mut Lanes,
    group: &mut Group,
    hooks: &mut H,
) {
    match state {
        State::AtBarrier { fence, scope, loc, .. } => hooks.barrier(fence, scope, loc),
        State::AtCollective { .. } => {
            complete_collective(&state, members, lanes, launch.range.sub_group.max(1) as usize, group)
        }
        State::AtAsyncCopy { loc, regs, .. } => {
            copies.copy(Gathered { exec: launch, lanes, group, hooks }, loc, regs, members)
        }
        State::AtWait { loc, num, list, .. } => {
            copies.wait(Gathered { exec: launch, lanes, group, hooks }, loc, (num, list), members)
        }
        _ => {}
    }
}

/// The lanes of sub-group `s` (of `w` lanes) that have not finished.
fn live_in_sub_group(lanes: &Lanes, s: usize, w: usize) -> usize {
    (s * w..((s + 1) * w).min(lanes.count)).filter(|&l| !lanes.done[l]).count()
}

/// Hands out a collective's results to `members` (in local linear order), per sub-group of `w`
/// lanes when it is a sub-group collective (else `w` is ignored); nothing to do for a barrier.
fn complete_collective(state: &State, members: &[u32], lanes: &mut Lanes, w: usize, group: &Group) {
    let State::AtCollective { op, bits, src, id, id_n, dst, sub_group, .. } = *state else { return };
    let stride = lanes.stride;
    let size = group.size;
    let partition = |l: u32| if sub_group { l as usize / w.max(1) } else { 0 };
    for chunk in members.chunk_by(|&a, &b| partition(a) == partition(b)) {
        let parts: Vec<Contribution> = chunk
            .iter()
            .map(|&l| {
                let l = l as usize;
                let mut source = [0u64; 3];
                for (d, slot) in source.iter_mut().enumerate().take(id_n as usize) {
                    *slot = lanes.regs[(id as usize + d) * stride + l];
                }
                // A broadcast names a local id: in the work-group, or in the sub-group.
                let source =
                    if sub_group { source[0] } else { (source[2] * size[1] + source[1]) * size[0] + source[0] };
                Contribution { value: lanes.regs[src as usize * stride + l], source }
            })
            .collect();
        for (&l, value) in chunk.iter().zip(collective::results(op, bits, &parts)) {
            lanes.regs[dst as usize * stride + l as usize] = value;
        }
    }
}

/// Appends the lanes' printf output since the last barrier to the group's, in local-id order.
fn flush_printf(group: &mut Group, lanes: &mut Lanes) {
    if !std::mem::take(&mut lanes.flags.printed) {
        return;
    }
    for lane in &mut lanes.lane[..lanes.count] {
        if !lane.printf.is_empty() {
            group.printf.push_str(&lane.printf);
            lane.printf.clear();
        }
    }
}

/// An id as reports write it: `(x,y,z)`.
pub fn ids(v: [u64; 3]) -> String {
    format!("({},{},{})", v[0], v[1], v[2])
}

fn budget_error(launch: &Execution, lanes: &Lanes, warp: &Warp, total: u64) -> ExecError {
    let gid = warp.active().first().map_or([0; 3], |&l| lanes.global_id(l as usize));
    ExecError::Budget(format!(
        "the launch did not finish within {total} branches and calls (work-item {:?} was at {}); \
         raise --budget if it is just long",
        gid,
        interp::location(launch.module, warp)
    ))
}
