//! Sub-group lockstep analysis (`--sub-group-lockstep=W`): which races lockstep execution of
//! sub-groups of W work-items hides, and which it does not.
//!
//! Under `Policy::SubGroups` the executor tells a group's observer which lanes of a sub-group run
//! each time they may change (`GroupHooks::lanes_active`). Each sub-group keeps a clock of steps:
//! it advances at every new instance of a memory instruction (an access whose source location
//! differs from the last one's, or whose lane is below the last one's: lanes of one instruction
//! come in increasing order) and at every change of the running lanes, which it logs with the
//! new set of lanes. An access's record carries the low [`STEP_BITS`] of its step. Nothing else
//! happens on the access path; a race is classified when it is found, from its two records: the
//! sub-groups of the two work-items, whether they made the same step (one instruction), and
//! whether both lanes ran together at some step between the two accesses (then lockstep ordered
//! them).
//!
//! What it cannot see: steps further apart than 2^[`STEP_BITS`], and set changes older than the
//! last [`LOG_LIMIT`] of a sub-group; both make a pair look unordered (an error, never a hidden
//! race that is not). Two instances of one instruction by the same single lane count as one
//! step (no other lane ran between them, so no pair of lanes is misjudged).

use std::collections::VecDeque;

pub use super::record::STEP_BITS;

/// What lockstep execution says about a race found under OpenCL semantics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LockstepClass {
    /// The two work-items are in different sub-groups (or one side is the work-group's async
    /// copy, or another work-group): an ordinary race.
    InterSubGroup,
    /// Same sub-group, and both lanes ran together at some step between the two accesses (or
    /// both stored the same bytes in one instruction): ordered by lockstep, a race by OpenCL.
    Hidden,
    /// Same sub-group, one instruction, different stored bytes: not ordered even in lockstep.
    SameInstruction,
    /// Same sub-group, no step between the accesses at which both lanes ran (the two sides of a
    /// divergent branch): not ordered even in lockstep.
    Divergent,
}

impl LockstepClass {
    pub fn name(self) -> &'static str {
        match self {
            LockstepClass::InterSubGroup => "inter-sub-group",
            LockstepClass::Hidden => "hidden",
            LockstepClass::SameInstruction => "same-instruction",
            LockstepClass::Divergent => "divergent",
        }
    }

    /// Hidden races are warnings; the others errors.
    pub fn is_warning(self) -> bool {
        self == LockstepClass::Hidden
    }
}

/// How many changes of its running lanes a sub-group remembers.
pub const LOG_LIMIT: usize = 1024;

/// No access yet (a location no instruction has).
const NO_LOC: u32 = u32::MAX;

/// One sub-group's clock.
#[derive(Debug, Clone)]
struct Clock {
    step: u32,
    last_loc: u32,
    last_lane: u32,
    /// The running lanes (bit `l - first lane of the sub-group`).
    mask: u64,
    /// Each change of the running lanes: the step it took effect at, and the new lanes.
    log: VecDeque<(u32, u64)>,
}

impl Default for Clock {
    fn default() -> Clock {
        Clock { step: 0, last_loc: NO_LOC, last_lane: 0, mask: 0, log: VecDeque::new() }
    }
}

/// Before classifying: whether the two accesses made the same step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pair {
    Inter,
    SameStep,
    Hidden,
    Divergent,
}

/// The clocks of one work-group's sub-groups.
#[derive(Debug)]
pub struct Lockstep {
    width: u32,
    clocks: Vec<Clock>,
}

impl Lockstep {
    /// Clocks for a group of `lanes` work-items in sub-groups of `width` (1 to 64).
    pub fn new(width: u32, lanes: u32) -> Lockstep {
        let width = width.clamp(1, 64);
        Lockstep { width, clocks: vec![Clock::default(); lanes.div_ceil(width) as usize] }
    }

    fn clock(&mut self, lane: u32) -> &mut Clock {
        let s = (lane / self.width) as usize;
        if s >= self.clocks.len() {
            self.clocks.resize(s + 1, Clock::default());
        }
        &mut self.clocks[s]
    }

    /// The lanes `lanes` of one sub-group run from now on.
    pub fn lanes_active(&mut self, lanes: &[u32]) {
        let Some(&first) = lanes.first() else { return };
        let base = first / self.width * self.width;
        let mask = lanes.iter().fold(0u64, |m, &l| m | 1 << (l - base));
        let clock = self.clock(first);
        if mask == clock.mask && !clock.log.is_empty() {
            return;
        }
        clock.step = clock.step.wrapping_add(1);
        clock.mask = mask;
        clock.last_loc = NO_LOC;
        if clock.log.len() == LOG_LIMIT {
            clock.log.pop_front();
        }
        clock.log.push_back((clock.step, mask));
    }

    /// The step of an access at `loc` by the `count` lanes from `lane` (of one sub-group).
    #[inline]
    pub fn step(&mut self, lane: u32, count: u32, loc: u32) -> u32 {
        let clock = self.clock(lane);
        if loc != clock.last_loc || lane < clock.last_lane {
            clock.step = clock.step.wrapping_add(1);
            clock.last_loc = loc;
        }
        clock.last_lane = lane + count.max(1) - 1;
        clock.step
    }

    /// How the earlier access by lane `old` (whose record kept the low bits `old_step` of its
    /// step) and the access now by lane `new` stand under lockstep (`None`: a work-group's
    /// access, not a lane's).
    #[cold]
    #[inline(never)]
    pub fn pair(&self, old: Option<u32>, old_step: u32, new: Option<u32>) -> Pair {
        let (Some(old), Some(new)) = (old, new) else { return Pair::Inter };
        let w = self.width;
        if old / w != new / w {
            return Pair::Inter;
        }
        let Some(clock) = self.clocks.get((new / w) as usize) else { return Pair::Divergent };
        let now = clock.step;
        let window = (1u32 << STEP_BITS) - 1;
        let then = now.wrapping_sub(now.wrapping_sub(old_step) & window);
        if then == now {
            return Pair::SameStep;
        }
        let both = 1u64 << (old % w) | 1u64 << (new % w);
        // The lanes in effect at `then` (the last change at or before it), and every change
        // after it.
        let from = clock.log.iter().rposition(|&(at, _)| at.wrapping_sub(then) as i32 <= 0).unwrap_or(0);
        let joint = clock.log.iter().skip(from).any(|&(_, mask)| mask & both == both);
        if joint { Pair::Hidden } else { Pair::Divergent }
    }
}

impl Pair {
    /// The class of one racing byte: a same-step write of the same byte is hidden (lockstep
    /// writes it once, whoever wins).
    pub fn class(self, write_write: bool, uniform: bool) -> LockstepClass {
        match self {
            Pair::Inter => LockstepClass::InterSubGroup,
            Pair::Hidden => LockstepClass::Hidden,
            Pair::Divergent => LockstepClass::Divergent,
            Pair::SameStep if write_write && uniform => LockstepClass::Hidden,
            Pair::SameStep => LockstepClass::SameInstruction,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_that_ran_together_between_two_accesses_are_ordered() {
        let mut l = Lockstep::new(4, 8);
        l.lanes_active(&[0, 1, 2, 3]);
        let s = l.step(0, 4, 10); // all four store at loc 10
        assert_eq!(l.step(0, 1, 11), s + 1, "the next instruction is the next step");
        // Lanes 0 and 1 take one side of a branch, then 2 and 3 the other.
        l.lanes_active(&[0, 1]);
        let a = l.step(0, 2, 12);
        l.lanes_active(&[2, 3]);
        assert_eq!(l.pair(Some(0), a, Some(2)), Pair::Divergent, "the two sides of a branch");
        assert_eq!(l.pair(Some(0), s, Some(2)), Pair::Hidden, "they ran together at s");
        assert_eq!(l.pair(Some(5), s, Some(2)), Pair::Inter, "another sub-group");
        assert_eq!(l.pair(None, s, Some(2)), Pair::Inter, "a group's copy");
        let b = l.step(2, 2, 12);
        assert_eq!(l.pair(Some(2), b, Some(3)), Pair::SameStep);
        assert_eq!(Pair::SameStep.class(true, false), LockstepClass::SameInstruction);
        assert_eq!(Pair::SameStep.class(true, true), LockstepClass::Hidden);
    }

    #[test]
    fn a_new_instance_of_an_instruction_is_a_new_step() {
        let mut l = Lockstep::new(8, 8);
        l.lanes_active(&[1, 5]);
        let first = l.step(1, 1, 7);
        assert_eq!(l.step(5, 1, 7), first, "lanes of one instruction in order");
        assert_eq!(l.step(1, 1, 7), first + 1, "the loop came round");
        assert_eq!(l.step(1, 1, 7), first + 1, "the same lane's second piece of one access");
    }

    #[test]
    fn steps_far_apart_never_look_ordered_when_they_were_not() {
        let mut l = Lockstep::new(2, 2);
        l.lanes_active(&[0]);
        let old = l.step(0, 1, 1);
        for i in 0..(1u32 << STEP_BITS) + 5 {
            l.step(0, 1, 2 + i % 2);
        }
        l.lanes_active(&[1]);
        assert_eq!(l.pair(Some(0), old, Some(1)), Pair::Divergent);
    }
}
