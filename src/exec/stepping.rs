//! Who picks the order of a stepped run: the warp [`Policy`] of a group, the [`Choice`]s offered
//! to a [`Chooser`] at each atomic (or watched plain access), the [`Effect`] each chosen step had,
//! and the two choosers every run has ([`InOrder`], [`Replay`]). Plain data and small traits: the
//! scheduler (`schedule.rs`) acts on them; this module cannot see lanes, warps or memory.

use crate::ir::AtomicOp;

/// How the work-items of a group are put into warps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Policy {
    /// All work-items of a group in lockstep between barriers, split apart only where they must
    /// be (the default).
    #[default]
    Lockstep,
    /// Lockstep within each sub-group of this many consecutive work-items (by local linear id);
    /// sub-groups advance independently.
    SubGroups(u32),
    /// Every work-item alone, never joined; with a [`Chooser`] (see `exec::run_stepped`) the
    /// order of atomics across all work-items of the launch is chosen step by step.
    WorkItems,
}

/// A work-item waiting to run its next atomic, one of the choices a [`Chooser`] is offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    /// The work-group's linear index in the NDRange.
    pub group: u64,
    /// The work-item's local linear id.
    pub item: u32,
    /// The atomic's source location (an index into `ir::Module::locations`).
    pub loc: u32,
    /// What it will do, and to which bytes (a tagged address, see `exec::memory`). A plain
    /// access is a `Load` or `Store`.
    pub op: AtomicOp,
    pub addr: u64,
    pub size: u32,
    /// A plain load or store into watched bytes (see [`Stepping::watch`]), not an atomic.
    pub plain: bool,
    /// How many times in a row this work-item's atomics here read an unchanged value without
    /// storing anything (0 when it last made progress): a spinning work-item is blocked.
    pub unchanged: u32,
    /// How many work-group barriers (and work-group collectives) its group has completed: what
    /// two choices of one group with different counts do, no schedule can reorder.
    pub barriers: u32,
}

/// What a chosen step did, recorded once it has run (beside its [`Choice`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Effect {
    /// The value it read, as an unsigned number of its size (None for a store, a fault, or a
    /// plain access of a struct).
    pub read: Option<u64>,
    /// The value it wrote, likewise (None also for a load and a compare-exchange that failed).
    pub wrote: Option<u64>,
}

/// What a stepped run is told: who picks, where the picks and their effects are recorded, and
/// which bytes make plain accesses scheduling points too.
pub struct Stepping<'c> {
    pub chooser: &'c mut dyn Chooser,
    pub record: &'c mut Vec<Choice>,
    /// What each step of `record` did, in the same order.
    pub effects: &'c mut Vec<Effect>,
    /// Sorted, disjoint ranges `[start, end)` of tagged addresses: a plain load or store that
    /// overlaps one stops before it runs, as an atomic does (`__local` ranges hold in every
    /// group). Empty: only atomics stop.
    pub watch: &'c [(u64, u64)],
}

/// Decides which waiting work-item runs its atomic next.
pub trait Chooser {
    /// Picks one of `ready` (never empty; in NDRange order of groups, then local ids) by index.
    fn choose(&mut self, ready: &[Choice]) -> usize;
}

/// The canonical order: the first waiting work-item (lowest group, then lowest local id).
pub struct InOrder;

impl Chooser for InOrder {
    fn choose(&mut self, _: &[Choice]) -> usize {
        0
    }
}

/// Replays a recorded sequence of choices: at step k it picks the work-item the recording
/// picked at step k, or, past the end of the recording or when that work-item is not waiting,
/// the canonical choice, and counts the mismatch.
pub struct Replay {
    pub choices: Vec<Choice>,
    pub step: usize,
    /// Steps at which the recorded work-item was not waiting (the replay diverged).
    pub mismatches: usize,
}

impl Replay {
    pub fn new(choices: Vec<Choice>) -> Replay {
        Replay { choices, step: 0, mismatches: 0 }
    }
}

impl Chooser for Replay {
    fn choose(&mut self, ready: &[Choice]) -> usize {
        let wanted = self.choices.get(self.step).copied();
        self.step += 1;
        match wanted.and_then(|w| ready.iter().position(|c| c.group == w.group && c.item == w.item)) {
            Some(i) => i,
            None => {
                self.mismatches += wanted.is_some() as usize;
                0
            }
        }
    }
}
