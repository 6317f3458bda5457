//! The explorer's scheduler: the canonical order with spinning work-items skipped, the delays of
//! one delay sequence, and the test that tells a deadlock from slow progress.
//!
//! It sees only what the engine offers at each step (the waiting work-items and their next
//! atomics or watched plain accesses, see [`Choice`]); it cannot see values, other plain
//! accesses or work-items at barriers. A plain access is no choice in the canonical order: the
//! first one waiting always runs at once (the delayed work-item's aside), so that everything a
//! work-item does between two atomics runs in the order it would without the watch, and a
//! watched run without delays is the unwatched one step for step.
//! Everything per step is a binary search of the offered list by group and a scan of a group's
//! part of it (of the group that ran last, and of those whose plain accesses still wait), O(1)
//! work per delay point, and a scan of the list only once as many work-items have stalled as
//! wait: no allocation (but the first step's), hashing or formatting.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::exec::{Choice, Chooser};
use crate::ir::AtomicOp;

/// One dynamic atomic: work-item (group linear index, local linear id), source location, and
/// how many times that work-item ran an atomic at that location before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Point {
    pub group: u64,
    pub item: u32,
    pub loc: u32,
    pub instance: u32,
}

/// Picks the next atomic: canonically the work-item of a detour (the one a delay switched to)
/// while it waits and does not spin, else the lowest waiting work-item that does not spin, else
/// (all spin) the lowest one not yet seen stalling. Delays the points of `delays` in order.
pub struct Scheduler<'d> {
    delays: &'d [Point],
    /// The first delay not yet spent.
    next: usize,
    /// Per delay point: the atomics its work-item has run at its location so far.
    counts: Vec<u32>,
    /// The slot of the work-item a delay switched to.
    detour: Option<usize>,
    /// While a detour lasts: the slot of the work-item its delay held back, which does not run
    /// its plain access before the detour ends.
    held: Option<usize>,
    step: usize,
    /// The step from which conflicts are recorded: once every delay is spent.
    pub recording_from: Option<usize>,
    /// The work-item picked last at an atomic, while whether that atomic progressed is not
    /// known yet: its slot, location, address and unchanged count then. Judged when it waits
    /// again at an atomic (or leaves the list).
    last: Option<(usize, u32, u64, u32)>,
    /// The groups whose part of the list may hold plain accesses, in NDRange order: every group
    /// with one at the first step, then the group of each pick (only that group runs after it).
    plain_groups: Vec<u64>,
    started: bool,
    /// Per work-item (group * items + item): ran an atomic that changed nothing since the last
    /// step at which anything progressed.
    stalled: Vec<bool>,
    stalled_list: Vec<usize>,
    items_per_group: u64,
    /// Set when every waiting work-item stalls: the run is then cancelled through it.
    cancel: Arc<AtomicBool>,
    /// The waiting work-items when the deadlock was seen.
    pub deadlock: Option<Vec<Choice>>,
}

impl<'d> Scheduler<'d> {
    pub fn new(delays: &'d [Point], groups: u64, items_per_group: u64, cancel: Arc<AtomicBool>) -> Scheduler<'d> {
        Scheduler {
            delays,
            next: 0,
            counts: vec![0; delays.len()],
            detour: None,
            held: None,
            plain_groups: Vec::new(),
            started: false,
            step: 0,
            recording_from: delays.is_empty().then_some(0),
            last: None,
            stalled: vec![false; (groups * items_per_group) as usize],
            stalled_list: Vec::new(),
            items_per_group,
            cancel,
            deadlock: None,
        }
    }

    fn slot(&self, c: &Choice) -> usize {
        (c.group * self.items_per_group + c.item as u64) as usize
    }

    /// Where in `ready` work-item `slot` waits, if it does.
    fn find(&self, ready: &[Choice], slot: usize) -> Option<usize> {
        let (group, item) = (slot as u64 / self.items_per_group, (slot as u64 % self.items_per_group) as u32);
        let part = group_part(ready, group);
        ready[part.clone()].iter().position(|c| c.item == item).map(|k| part.start + k)
    }

    /// The first plain access waiting in NDRange order, but the held-back work-item's.
    fn first_plain(&mut self, ready: &[Choice]) -> Option<usize> {
        if !std::mem::replace(&mut self.started, true) {
            self.plain_groups = ready.iter().filter(|c| c.plain).map(|c| c.group).collect();
            self.plain_groups.dedup();
        }
        let (held, per_group) = (self.held, self.items_per_group);
        let mut first = None;
        self.plain_groups.retain(|&g| {
            if first.is_some() {
                return true;
            }
            let part = group_part(ready, g);
            let waiting = &ready[part.clone()];
            let held_here = |c: &Choice| held == Some((c.group * per_group + c.item as u64) as usize);
            first = waiting.iter().position(|c| c.plain && !held_here(c)).map(|k| part.start + k);
            first.is_some() || waiting.iter().any(|c| c.plain)
        });
        first
    }

    /// A plain access never spins: it runs on the way to the next atomic.
    fn spinning(&self, c: &Choice) -> bool {
        !c.plain && (c.unchanged > 0 || self.stalled[self.slot(c)])
    }

    /// Judges the atomic picked last, once its work-item waits at an atomic again or has left the
    /// list: it changed something if it left (finished, or at a barrier), moved to another
    /// atomic, or its unchanged count did not simply go up by one (the engine counts, for a
    /// stepped work-item, every re-read of the value its last atomic there read, and restarts on
    /// any store or change). Progress forgets every stall; no progress marks it stalled. Not yet
    /// while the work-item waits at a plain access on its way.
    fn judge_last(&mut self, ready: &[Choice]) {
        let Some((slot, loc, addr, before)) = self.last else { return };
        let now = self.find(ready, slot).map(|k| &ready[k]);
        if now.is_some_and(|c| c.plain) {
            return;
        }
        self.last = None;
        let progressed = match now {
            Some(now) if now.loc == loc && now.addr == addr => now.unchanged != before + 1,
            _ => true,
        };
        if progressed {
            self.progressed();
        } else if !std::mem::replace(&mut self.stalled[slot], true) {
            self.stalled_list.push(slot);
        }
    }

    /// Something changed: no work-item stalls any more.
    fn progressed(&mut self) {
        for s in self.stalled_list.drain(..) {
            self.stalled[s] = false;
        }
    }

    /// The canonical pick, without delays.
    fn canonical(&mut self, ready: &[Choice]) -> usize {
        let detour = self.detour.and_then(|slot| self.find(ready, slot)).filter(|&k| !self.spinning(&ready[k]));
        if detour.is_none() {
            (self.detour, self.held) = (None, None);
        }
        // Plain accesses first, in NDRange order: the engine would have run them on the way.
        if let Some(k) = self.first_plain(ready) {
            return k;
        }
        if let Some(k) = detour {
            return k;
        }
        if let Some(k) = ready.iter().position(|c| !self.spinning(c)) {
            return k;
        }
        ready.iter().position(|c| !self.stalled[self.slot(c)]).unwrap_or(0)
    }

    /// Whether `c` is the next delay point.
    fn is_next_delay(&self, c: &Choice) -> bool {
        self.delays.get(self.next).is_some_and(|p| {
            p.group == c.group && p.item == c.item && p.loc == c.loc && self.counts[self.next] == p.instance
        })
    }

    /// The waiting work-item after `k` in NDRange order (wrapping to the first group), one that
    /// does not spin if there is one.
    fn after(&self, ready: &[Choice], k: usize) -> usize {
        let n = ready.len();
        let others = (1..n).map(|d| (k + d) % n);
        others.clone().find(|&j| !self.spinning(&ready[j])).or_else(|| others.clone().next()).unwrap_or(k)
    }
}

impl Chooser for Scheduler<'_> {
    fn choose(&mut self, ready: &[Choice]) -> usize {
        if self.deadlock.is_some() {
            return 0;
        }
        self.judge_last(ready);
        if self.stalled_list.len() >= ready.len() && ready.iter().all(|c| !c.plain && self.stalled[self.slot(c)]) {
            // Every waiting work-item re-read what it read before, and nothing changed since:
            // none can ever see anything else.
            self.deadlock = Some(ready.to_vec());
            self.cancel.store(true, Ordering::Relaxed);
            return 0;
        }
        let mut pick = self.canonical(ready);
        // A delay switches to the next waiting work-item, which then runs as long as it can.
        let mut spent = 0;
        while spent < self.delays.len() && self.is_next_delay(&ready[pick]) {
            self.next += 1;
            spent += 1;
            self.held = Some(self.slot(&ready[pick]));
            pick = self.after(ready, pick);
            self.detour = Some(self.slot(&ready[pick]));
            if self.next == self.delays.len() {
                self.recording_from = Some(self.step);
            }
        }
        let c = ready[pick];
        if let Err(at) = self.plain_groups.binary_search(&c.group) {
            self.plain_groups.insert(at, c.group);
        }
        for (p, count) in self.delays.iter().zip(self.counts.iter_mut()) {
            *count += (p.group == c.group && p.item == c.item && p.loc == c.loc) as u32;
        }
        if c.plain {
            // A plain store may change what spinning work-items read; a plain load changes nothing.
            if c.op == AtomicOp::Store {
                self.progressed();
            }
        } else {
            if self.last.is_some() {
                // Still unjudged (its work-item was held at a plain access): counted as progress.
                self.progressed();
            }
            self.last = Some((self.slot(&c), c.loc, c.addr, c.unchanged));
        }
        self.step += 1;
        pick
    }
}

/// The part of `ready` (in NDRange order of groups) that group `g`'s work-items hold.
fn group_part(ready: &[Choice], g: u64) -> std::ops::Range<usize> {
    let start = ready.partition_point(|c| c.group < g);
    start..start + ready[start..].partition_point(|c| c.group == g)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Work-item `item` of group 0 before an atomic load at `loc` of address 8.
    fn spin(item: u32, unchanged: u32, loc: u32) -> Choice {
        let op = AtomicOp::Load;
        let (addr, size, plain, barriers) = (8, 4, false, 0);
        Choice { group: 0, item, loc, op, addr, size, plain, unchanged, barriers }
    }

    /// Feeds `scheduler` work-items that all spin at one atomic, their unchanged counts going
    /// up by one at each of their picks as the engine counts them; returns the picks until it
    /// sees the deadlock, or None within `limit` picks.
    fn picks_until_deadlock(n: u32, start: impl Fn(u32) -> u32, limit: usize) -> Option<usize> {
        let cancel = Arc::new(AtomicBool::new(false));
        let mut scheduler = Scheduler::new(&[], 1, n as u64, cancel.clone());
        let mut ready: Vec<Choice> = (0..n).map(|item| spin(item, start(item), 3)).collect();
        for step in 0..limit {
            let k = scheduler.choose(&ready);
            if scheduler.deadlock.is_some() {
                assert!(cancel.load(Ordering::Relaxed), "the run is cancelled");
                return Some(step);
            }
            ready[k].unchanged += 1;
        }
        None
    }

    #[test]
    fn spinners_that_change_nothing_are_a_deadlock_within_a_round() {
        // Each of four spinners re-reads once without anything changing: then all have stalled.
        assert_eq!(picks_until_deadlock(4, |_| 1, 100), Some(4));
        // Counts far apart (past the engine's spin count of the default mode): the same.
        let steps = picks_until_deadlock(200, |i| i * 7, 10_000).expect("a deadlock");
        assert!(steps <= 200 + 1, "{steps} picks");
    }

    #[test]
    fn a_work_item_that_moves_on_is_progress() {
        let cancel = Arc::new(AtomicBool::new(false));
        let mut scheduler = Scheduler::new(&[], 1, 2, cancel);
        // Item 1 spins; item 0 progresses at another atomic each time: never a deadlock, and
        // item 0 (not spinning) is always preferred.
        for step in 0..50 {
            let k = scheduler.choose(&[spin(0, 0, 10 + step), spin(1, 5 + step, 3)]);
            assert_eq!(k, 0);
            assert!(scheduler.deadlock.is_none());
        }
    }

    #[test]
    fn plain_accesses_run_first_but_the_one_a_delay_holds_back_waits_for_the_detour() {
        let cancel = Arc::new(AtomicBool::new(false));
        let plain = |item, loc| Choice { plain: true, op: AtomicOp::Store, ..spin(item, 0, loc) };
        let atomic = |item, loc| spin(item, 0, loc);
        // Without delays: the first plain access waiting, before any atomic.
        let mut canonical = Scheduler::new(&[], 1, 3, cancel.clone());
        assert_eq!(canonical.choose(&[atomic(0, 1), plain(1, 2), plain(2, 2)]), 1);
        assert_eq!(canonical.choose(&[atomic(0, 1), atomic(1, 1), plain(2, 2)]), 2);
        assert_eq!(canonical.choose(&[atomic(0, 1), atomic(1, 1), atomic(2, 1)]), 0);
        // Delaying work-item 1's plain access: work-item 2 runs instead, to the end of its
        // detour, while work-item 1 waits; then work-item 1 goes on.
        let delay = [Point { group: 0, item: 1, loc: 2, instance: 0 }];
        let mut delayed = Scheduler::new(&delay, 1, 3, cancel);
        assert_eq!(delayed.choose(&[atomic(0, 1), plain(1, 2), plain(2, 2)]), 2);
        assert_eq!(delayed.choose(&[atomic(0, 1), plain(1, 2), atomic(2, 1)]), 2);
        assert_eq!(delayed.recording_from, Some(0));
        assert_eq!(delayed.choose(&[atomic(0, 1), plain(1, 2)]), 1, "the detour ended");
    }
}
