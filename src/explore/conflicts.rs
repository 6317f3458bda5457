//! Conflicts between the events of one run, and the delay points they give.
//!
//! An event is a step of a stepped run: an atomic, or a plain load or store into the bytes the
//! canonical run's atomics touched (the *watch*, see [`watch`]), with what it read and wrote.
//! A conflict is two events of different work-items on overlapping bytes of the same memory,
//! at least one of which can write; its first event in run order is a delay point. `__local`
//! memory is the same only within a work-group, and only between the same two of its barriers
//! (a barrier orders the accesses on either side of it in every schedule: this is what keeps a
//! group's plain initialisation of `__local` memory from adding delay points); private memory
//! never is. So a plain access
//! conflicts only with another work-item's atomic, or plain store, on the same bytes: plain
//! accesses elsewhere are no events at all, which keeps the delay points few.
//!
//! Whether an event can write is a matter of its operation, not of what it did: a
//! compare-exchange that failed in this run (it wrote nothing) still counts as a writer, since
//! in another schedule it can find the value it expects and succeed; dropping it would lose the
//! delay points that let it. Only loads, atomic or plain, never write. The values are kept for
//! the reports (the pair whose order a delay flipped shows both); the conflicts do not use them.

use super::chooser::Point;
use crate::exec::memory::{SPACE_GLOBAL, SPACE_LOCAL, split};
use crate::exec::{Choice, Effect};
use crate::ir::AtomicOp;

/// One event of a run, in run order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    pub point: Point,
    /// The atomic operation; for a plain access `Load` or `Store`.
    pub op: AtomicOp,
    /// A plain load or store, not an atomic.
    pub plain: bool,
    pub addr: u64,
    pub size: u32,
    /// Work-group barriers its group had completed (see [`Choice::barriers`]).
    pub barriers: u32,
    /// What it read and wrote (see [`Effect`]).
    pub read: Option<u64>,
    pub wrote: Option<u64>,
}

impl Event {
    /// Whether it can write: anything but a load (a compare-exchange even when it failed).
    pub fn writes(&self) -> bool {
        self.op != AtomicOp::Load
    }
}

/// The name of an event's operation in reports: the OpenCL C atomic's (`atomic_add`, ...), or
/// `load` / `store` for a plain access.
pub fn operation(op: AtomicOp, plain: bool) -> &'static str {
    use AtomicOp::*;
    match (op, plain) {
        (Load, true) => "load",
        (Store, true) => "store",
        (Load, _) => "atomic_load",
        (Store, _) => "atomic_store",
        (Exchange, _) => "atomic_xchg",
        (CompareExchange, _) => "atomic_cmpxchg",
        (Add, _) => "atomic_add",
        (Sub, _) => "atomic_sub",
        (SMin | UMin, _) => "atomic_min",
        (SMax | UMax, _) => "atomic_max",
        (And, _) => "atomic_and",
        (Or, _) => "atomic_or",
        (Xor, _) => "atomic_xor",
        (Inc, _) => "atomic_inc",
        (Dec, _) => "atomic_dec",
        (FlagTestAndSet, _) => "atomic_flag_test_and_set",
        (FlagClear, _) => "atomic_flag_clear",
    }
}

/// The bytes the atomics among `events` touched in global and `__local` memory, as sorted,
/// disjoint `[start, end)` ranges of tagged addresses: the watch of the runs that follow
/// (`__local` ranges hold in every group, a superset of what each group's atomics touched).
pub fn watch(events: &[Event]) -> Vec<(u64, u64)> {
    let mut ranges: Vec<(u64, u64)> = events
        .iter()
        .filter(|e| !e.plain && matches!(split(e.addr).0, SPACE_GLOBAL | SPACE_LOCAL))
        .map(|e| (e.addr, e.addr.saturating_add(e.size.max(1) as u64)))
        .collect();
    ranges.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
    for (start, end) in ranges {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

/// The events of a run from the choices it made and what each did (their dynamic instances
/// counted per work-item and location).
pub fn events(record: &[Choice], effects: &[Effect]) -> Vec<Event> {
    let mut order: Vec<usize> = (0..record.len()).collect();
    order.sort_by_key(|&i| (record[i].group, record[i].item, record[i].loc, i));
    let mut instance = vec![0u32; record.len()];
    for w in 1..order.len() {
        let (a, b) = (&record[order[w - 1]], &record[order[w]]);
        if (a.group, a.item, a.loc) == (b.group, b.item, b.loc) {
            instance[order[w]] = instance[order[w - 1]] + 1;
        }
    }
    record
        .iter()
        .zip(instance)
        .enumerate()
        .map(|(k, (c, instance))| (c, instance, effects.get(k).copied().unwrap_or_default()))
        .map(|(c, instance, effect)| Event {
            point: Point { group: c.group, item: c.item, loc: c.loc, instance },
            op: c.op,
            plain: c.plain,
            addr: c.addr,
            size: c.size,
            barriers: c.barriers,
            read: effect.read,
            wrote: effect.wrote,
        })
        .collect()
}

/// A conditional atomic: its effect depends on the value it finds (the paper's "optimized"
/// policy runs these first).
pub fn conditional(op: AtomicOp) -> bool {
    use AtomicOp::*;
    matches!(op, CompareExchange | SMin | SMax | UMin | UMax | Exchange)
}

/// A delay point of a run: the event, the first later event it conflicts with, and whether
/// either of its conflicts involves a conditional atomic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DelayPoint {
    pub event: usize,
    pub partner: usize,
    pub conditional: bool,
}

/// The two work-items with the earliest events among those seen so far (scanning backwards),
/// each with its earliest event.
#[derive(Default, Clone, Copy)]
struct Earliest([Option<((u64, u32), usize)>; 2]);

impl Earliest {
    /// Records event `index` of `who`, earlier than every event seen before.
    fn see(&mut self, who: (u64, u32), index: usize) {
        let [first, second] = self.0;
        self.0 = match (first, second) {
            (Some((w, _)), _) if w == who => [Some((who, index)), second],
            (_, Some((w, _))) if w == who => [Some((who, index)), first],
            _ => [Some((who, index)), first],
        };
    }

    /// The earliest event of a work-item other than `who`.
    fn other_than(&self, who: (u64, u32)) -> Option<usize> {
        self.0.iter().flatten().find(|(w, _)| *w != who).map(|&(_, i)| i)
    }
}

/// The delay points among `events[from..]` (conflicts with both events there), conditional
/// ones first, each class in run order.
pub fn delay_points(events: &[Event], from: usize) -> Vec<DelayPoint> {
    // One key per byte an event touches: the byte's address, and for local memory the group and
    // its barrier interval.
    let mut keys: Vec<(u64, (u64, u32), usize)> = Vec::new();
    for (i, e) in events.iter().enumerate().skip(from) {
        let (space, _, _) = split(e.addr);
        let memory = match space {
            SPACE_GLOBAL => (u64::MAX, 0),
            SPACE_LOCAL => (e.point.group, e.barriers),
            _ => continue,
        };
        keys.extend((0..e.size.max(1) as u64).map(|b| (e.addr.wrapping_add(b), memory, i)));
    }
    keys.sort_unstable();
    let mut found: Vec<Option<DelayPoint>> = vec![None; events.len()];
    for same in keys.chunk_by(|a, b| (a.0, a.1) == (b.0, b.1)) {
        let (mut any, mut writers, mut conditionals) = (Earliest::default(), Earliest::default(), Earliest::default());
        for &(_, _, i) in same.iter().rev() {
            let e = &events[i];
            let who = (e.point.group, e.point.item);
            let writes = e.writes();
            let partner =
                [writes.then(|| any.other_than(who)).flatten(), writers.other_than(who)].into_iter().flatten().min();
            if let Some(partner) = partner {
                let cond = conditional(e.op) || conditionals.other_than(who).is_some();
                let point = found[i].get_or_insert(DelayPoint { event: i, partner, conditional: cond });
                point.partner = point.partner.min(partner);
                point.conditional |= cond;
            }
            any.see(who, i);
            if writes {
                writers.see(who, i);
            }
            if conditional(e.op) {
                conditionals.see(who, i);
            }
        }
    }
    let mut points: Vec<DelayPoint> = found.into_iter().flatten().collect();
    points.sort_by_key(|p| (!p.conditional, p.event));
    points
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::memory::{SPACE_PRIVATE, address};

    fn choice(group: u64, item: u32, loc: u32, op: AtomicOp, addr: u64) -> Choice {
        let (size, plain, unchanged, barriers) = (4, false, 0, 0);
        Choice { group, item, loc, op, addr, size, plain, unchanged, barriers }
    }

    #[test]
    fn instances_count_per_work_item_and_location() {
        let g = address(SPACE_GLOBAL, 1, 0);
        let record = [
            choice(0, 0, 5, AtomicOp::Add, g),
            choice(0, 1, 5, AtomicOp::Add, g),
            choice(0, 0, 5, AtomicOp::Add, g),
            choice(0, 0, 6, AtomicOp::Add, g),
        ];
        let instances: Vec<u32> = events(&record, &[]).iter().map(|e| e.point.instance).collect();
        assert_eq!(instances, vec![0, 0, 1, 0]);
    }

    #[test]
    fn conflicts_need_two_work_items_overlapping_bytes_and_a_writer() {
        let g = |offset| address(SPACE_GLOBAL, 1, offset);
        let record = [
            choice(0, 0, 1, AtomicOp::Load, g(0)), // 0: conflicts with 3, a writer
            choice(0, 1, 1, AtomicOp::Load, g(0)), // 1: conflicts with 3 (a writer)
            choice(0, 0, 2, AtomicOp::Add, g(8)),  // 2: only its own work-item follows
            choice(0, 2, 3, AtomicOp::Inc, g(0)),  // 3: nothing later by others
            choice(0, 0, 2, AtomicOp::Add, g(8)),  // 4: same work-item as 2
            choice(0, 3, 4, AtomicOp::Add, g(2)),  // 5: overlaps 0..4 at bytes 2..4
            choice(0, 0, 1, AtomicOp::Load, g(0)), // 6: read after 5, last
            choice(1, 0, 7, AtomicOp::Add, address(SPACE_PRIVATE, 0, 0)), // 7: private
            choice(2, 0, 7, AtomicOp::Add, address(SPACE_PRIVATE, 0, 0)), // 8: private
        ];
        let e = events(&record, &[]);
        let points = delay_points(&e, 0);
        let got: Vec<(usize, usize)> = points.iter().map(|p| (p.event, p.partner)).collect();
        // 0 conflicts with 3 (writer of another work-item), 1 with 3, 3 with 5, 5 with 6.
        assert_eq!(got, vec![(0, 3), (1, 3), (3, 5), (5, 6)]);
        assert!(points.iter().all(|p| !p.conditional));
        // From event 4 on, only 5 and 6 remain in the window.
        let later: Vec<usize> = delay_points(&e, 4).iter().map(|p| p.event).collect();
        assert_eq!(later, vec![5]);
    }

    #[test]
    fn local_memory_conflicts_only_within_a_group_and_conditional_ones_come_first() {
        let l = address(SPACE_LOCAL, 1, 0);
        let g = address(SPACE_GLOBAL, 1, 0);
        let record = [
            choice(0, 0, 1, AtomicOp::Add, l),
            choice(1, 0, 1, AtomicOp::Add, l),
            choice(0, 0, 2, AtomicOp::Add, g),
            choice(0, 1, 3, AtomicOp::CompareExchange, g),
        ];
        let points = delay_points(&events(&record, &[]), 0);
        let got: Vec<(usize, bool)> = points.iter().map(|p| (p.event, p.conditional)).collect();
        assert_eq!(got, vec![(2, true)], "different groups' local memory is not shared");
    }

    fn plain(group: u64, item: u32, loc: u32, store: bool, addr: u64) -> Choice {
        let op = if store { AtomicOp::Store } else { AtomicOp::Load };
        Choice { plain: true, ..choice(group, item, loc, op, addr) }
    }

    #[test]
    fn the_watch_is_the_bytes_atomics_touched_in_global_and_local_memory_merged() {
        let g = |offset| address(SPACE_GLOBAL, 1, offset);
        let record = [
            choice(0, 0, 1, AtomicOp::Add, g(8)),
            choice(0, 1, 1, AtomicOp::Add, g(4)), // adjacent to 8..12: one range 4..12
            choice(0, 1, 1, AtomicOp::Add, g(32)), // apart
            plain(0, 0, 2, true, g(64)),          // plain: not watched
            choice(0, 0, 3, AtomicOp::Add, address(SPACE_PRIVATE, 0, 0)),
            choice(1, 0, 4, AtomicOp::Load, address(SPACE_LOCAL, 1, 0)),
        ];
        let local = address(SPACE_LOCAL, 1, 0);
        let mut want = vec![(g(4), g(12)), (g(32), g(36)), (local, local + 4)];
        want.sort_unstable();
        assert_eq!(watch(&events(&record, &[])), want);
    }

    #[test]
    fn a_plain_access_conflicts_with_another_work_items_atomic_or_plain_store_and_a_writer_is_needed() {
        let g = |offset| address(SPACE_GLOBAL, 1, offset);
        let record = [
            choice(0, 0, 1, AtomicOp::Load, g(0)), // 0: with 3 (a plain store)
            plain(0, 1, 2, false, g(0)),           // 1: a plain load: with 3 only
            plain(0, 2, 2, false, g(0)),           // 2: a plain load: with 3 only
            plain(0, 3, 3, true, g(0)),            // 3: a plain store: with 4
            choice(0, 1, 1, AtomicOp::Load, g(0)), // 4: last reader
            plain(0, 0, 5, false, g(0)),           // 5: loads after the last store: nothing
        ];
        let e = events(&record, &[]);
        let got: Vec<(usize, usize)> = delay_points(&e, 0).iter().map(|p| (p.event, p.partner)).collect();
        assert_eq!(got, vec![(0, 3), (1, 3), (2, 3), (3, 4)]);
        // Two plain loads, or a plain and an atomic load, never conflict.
        let loads = [plain(0, 0, 2, false, g(0)), choice(0, 1, 1, AtomicOp::Load, g(0)), plain(0, 2, 2, false, g(0))];
        assert!(delay_points(&events(&loads, &[]), 0).is_empty());
    }

    #[test]
    fn a_compare_exchange_that_failed_is_still_a_writer() {
        let g = address(SPACE_GLOBAL, 1, 0);
        let record = [choice(0, 0, 1, AtomicOp::CompareExchange, g), choice(0, 1, 2, AtomicOp::Load, g)];
        let failed = [Effect { read: Some(1), wrote: None }, Effect { read: Some(1), wrote: None }];
        let points = delay_points(&events(&record, &failed), 0);
        assert_eq!(points.len(), 1);
        assert_eq!((points[0].event, points[0].partner, points[0].conditional), (0, 1, true));
    }

    #[test]
    fn local_memory_conflicts_only_between_the_same_two_barriers() {
        let l = address(SPACE_LOCAL, 1, 0);
        let record = [
            Choice { barriers: 0, ..plain(0, 0, 1, true, l) }, // initialised before the barrier
            Choice { barriers: 1, ..choice(0, 1, 2, AtomicOp::Add, l) },
            Choice { barriers: 1, ..choice(0, 2, 2, AtomicOp::Add, l) },
        ];
        let got: Vec<(usize, usize)> =
            delay_points(&events(&record, &[]), 0).iter().map(|p| (p.event, p.partner)).collect();
        assert_eq!(got, vec![(1, 2)], "the store before the barrier cannot be reordered with what follows it");
    }
}
