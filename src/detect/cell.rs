//! The check of one cell of a group's shadow against an access, and the group context it reads
//! (time, barriers, async copies in flight, acquired releases, lockstep clocks).
//!
//! `group.rs` owns the group's state and finds the cells an access touches; this module decides,
//! cell by cell, whether the access races with what the cell remembers, logs the races and
//! updates the cell. The common cases (nothing live to conflict with) are inline and write the
//! cell as the full check would. It sees a cell, or a run of word cells that `group.rs` found
//! on one page for consecutive lanes ([`word_run`], [`local_load_same`]): not pages, summaries
//! or the kernel-wide shadow.

use super::Shared;
use super::lockstep::{Lockstep, Pair};
use super::pages::WORD;
use super::race::{AccessType, Place, RaceEvent, RaceLog, RaceScope, Reason, Side};
use super::record::{Entity, Record, Stamped};
use super::shadow::{Cell, Payload, WordCell};
use super::sync::{Acquired, Link, covered};

/// Space indices for barrier stamps.
pub(super) const LOCAL: usize = 0;
pub(super) const GLOBAL: usize = 1;

/// One `async_work_group_copy` of the group (all work-items' parts of it). Its accesses are
/// group-level records with its site, stamped at or after `start`; they are ordered against
/// nothing until a `wait_group_events` names `event` and the barrier after it releases the group.
pub(super) struct PendingCopy {
    pub(super) site: u16,
    pub(super) event: u64,
    pub(super) start: u32,
    /// A work-item named the event in a wait: the copy completes at the next barrier.
    pub(super) waited: bool,
    pub(super) done: bool,
}

/// What the checks of one group read: geometry, time, barriers, acquired releases.
pub(super) struct Context<'d> {
    pub(super) launch: &'d Shared,
    pub(super) group: u32,
    pub(super) group_id: [u64; 3],
    pub(super) stamp: u32,
    /// The stamp of the last barrier that fenced local, global memory.
    pub(super) barrier: [u32; 2],
    /// The stamp of the last barrier of any kind.
    pub(super) any_barrier: u32,
    /// This group's first stamp: cells with older stamps were left by earlier groups.
    pub(super) serial: u32,
    pub(super) acquired: Vec<Acquired>,
    pub(super) links: Vec<Link>,
    /// The global linear id of each work-item, by local linear id.
    pub(super) entities: Vec<u32>,
    /// The async copies whose records may still be in the cells, in the order they started.
    pub(super) copies: Vec<PendingCopy>,
    /// Sub-groups of this many work-items completed a sub-group barrier (0: none did yet), and
    /// each sub-group's stamp of its last one that fenced local, global memory.
    pub(super) sub_group_width: u32,
    pub(super) sub_group_barriers: Vec<[u32; 2]>,
    /// With `--sub-group-lockstep`: the sub-groups' clocks.
    pub(super) lockstep: Option<Lockstep>,
}

impl Context<'_> {
    pub(super) fn tick(&mut self) -> u32 {
        self.stamp = self.stamp.wrapping_add(1);
        self.stamp
    }

    /// Where an access to `allocation` of local (else global) memory lands, its offset aside.
    #[inline(always)]
    pub(super) fn place(&self, is_local: bool, allocation: u32) -> Place {
        Place { local: is_local, allocation, offset: 0, group: if is_local { self.group } else { 0 } }
    }

    /// The record, stamped now, of an access at `site` by work-item `lane` (a local linear id),
    /// with its lockstep step if it has one.
    #[inline(always)]
    pub(super) fn lane_now(&self, lane: u32, site: u16, atomic: bool, step: Option<u32>) -> Stamped {
        let mut record = Record::new(site, Entity::Item(self.entities[lane as usize]), self.stamp, atomic, 0);
        if let Some(step) = step {
            record = record.with_step(step);
        }
        Stamped { record, stamp: self.stamp }
    }

    pub(super) fn entity_of(&self, local: Option<u32>) -> Entity {
        match local {
            Some(l) => Entity::Item(self.entities[l as usize]),
            None => Entity::Group(self.group),
        }
    }

    /// Whether `old` (by this group) is ordered before an access now by `by` in `space`.
    #[inline]
    pub(super) fn ordered(&self, old: &Stamped, by: Option<u32>, space: usize) -> bool {
        if is_copy(old) {
            return !self.copy_pending(old);
        }
        if old.stamp < self.barrier[space] {
            return true;
        }
        if self.sub_group_width != 0 && self.sub_group_ordered(old, by, space) {
            return true;
        }
        match old.record.entity() {
            Entity::Item(item) if !self.acquired.is_empty() => {
                covered(&self.acquired, by, self.stamp, self.group, item, old.stamp, space)
            }
            _ => false,
        }
    }

    /// Whether a sub-group barrier of the sub-group of both `old`'s work-item and `by` lies
    /// between them.
    #[cold]
    #[inline(never)]
    pub(super) fn sub_group_ordered(&self, old: &Stamped, by: Option<u32>, space: usize) -> bool {
        let (Entity::Item(item), Some(by)) = (old.record.entity(), by) else { return false };
        let w = self.sub_group_width;
        let Some(barriers) = self.sub_group_barriers.get((by / w) as usize) else { return false };
        old.stamp < barriers[space] && self.launch.geometry.local_linear(item) / w == by / w
    }

    /// The local linear id of a record's work-item (None for a work-group's access).
    pub(super) fn lane_of(&self, s: &Stamped) -> Option<u32> {
        match s.record.entity() {
            Entity::Item(item) => Some(self.launch.geometry.local_linear(item)),
            Entity::Group(_) => None,
        }
    }

    /// Empty, or left by an earlier group.
    pub(super) fn old(&self, s: &Stamped) -> bool {
        s.record.is_empty() || s.stamp < self.serial
    }

    #[inline]
    pub(super) fn stale(&self, s: &Stamped, space: usize) -> bool {
        if is_copy(s) {
            return !self.copy_pending(s);
        }
        s.record.is_empty() || s.stamp < self.barrier[space]
    }

    /// The copy a group-level record belongs to: the latest one started at its site by then.
    #[cold]
    pub(super) fn copy_of(&self, s: &Stamped) -> Option<usize> {
        let site = s.record.site();
        self.copies.iter().rposition(|c| c.site == site && c.start <= s.stamp)
    }

    /// A group-level record of this group whose copy nothing has waited for yet.
    #[cold]
    #[inline(never)]
    pub(super) fn copy_pending(&self, s: &Stamped) -> bool {
        s.stamp >= self.serial && self.copy_of(s).is_some_and(|i| !self.copies[i].done)
    }

    /// The same work-item, or the same copy.
    #[inline]
    pub(super) fn same_actor(&self, a: &Stamped, b: &Stamped) -> bool {
        a.record.same_entity(b.record) && (!is_copy(a) || self.copy_of(a) == self.copy_of(b))
    }

    pub(super) fn reason(&self, old: &Stamped, space: usize, now: Entity) -> Reason {
        let group = self.group_id;
        if let Some(link) = find_link(&self.links, old.record.entity(), now) {
            return Reason::Missed { link: *link, direct: true };
        }
        if is_copy(old) {
            return Reason::CopyInFlight { group, site: old.record.site() };
        }
        if old.stamp < self.any_barrier {
            return Reason::FenceOnly { group, local: space == LOCAL };
        }
        Reason::NoBarrier { group }
    }
}

/// A group-level record: an async copy's access.
#[inline]
pub(super) fn is_copy(s: &Stamped) -> bool {
    s.record.by_group()
}

/// The access being checked, one cell (a byte or a word) at a time.
#[derive(Clone, Copy)]
pub(super) struct This<P> {
    pub(super) now: Stamped,
    /// What a write stores in the cell.
    pub(super) data: P,
    pub(super) by: Option<u32>,
    pub(super) kind: AccessType,
    pub(super) write: bool,
    pub(super) space: usize,
    /// The cell's first byte.
    pub(super) place: Place,
    pub(super) loc: u32,
}

impl This<()> {
    /// An access of `kind` by `by` (None: the work-group's) at `place`, before its cell is known.
    #[inline(always)]
    pub(super) fn new(
        now: Stamped,
        by: Option<u32>,
        kind: AccessType,
        write: bool,
        place: Place,
        loc: u32,
    ) -> This<()> {
        let space = if place.local { LOCAL } else { GLOBAL };
        This { now, data: (), by, kind, write, space, place, loc }
    }

    /// The access at the cell whose first byte is at `offset`, storing `data` there.
    #[inline(always)]
    pub(super) fn at<P>(&self, offset: u64, data: P) -> This<P> {
        let This { now, by, kind, write, space, place, loc, .. } = *self;
        This { now, data, by, kind, write, space, place: Place { offset, ..place }, loc }
    }
}

/// Whether `old` (a record of the cell) and `this` conflict: another actor, not both atomic, and
/// not ordered.
#[inline(always)]
fn conflicts<P>(cx: &Context, old: &Stamped, this: &This<P>) -> bool {
    !old.record.is_empty()
        && !cx.same_actor(old, &this.now)
        && (!old.record.atomic() || !this.now.record.atomic())
        && !cx.ordered(old, this.by, this.space)
}

/// An earlier access of a cell that conflicts with the one being checked: the record, its kind,
/// and what it stored if it was a write.
type Conflict<P> = (Stamped, AccessType, Option<P>);

/// Checks one cell, whose first byte is at `offset`, against the access `base` storing `data`
/// there; logs races, and updates the cell. The access at the cell ([`This`]) is only built when
/// the inline cases do not apply.
#[inline(always)]
pub(super) fn check_cell<P: Payload>(
    cx: &Context,
    races: &mut RaceLog,
    cell: &mut Cell<P>,
    base: &This<()>,
    offset: u64,
    data: P,
) {
    if !quick_update(cx, cell, base, data) {
        check_cell_at(cx, races, cell, *base, offset, data);
    }
}

/// The stamp of the last barrier of `space` that the inline checks compare with, when they may
/// apply: no async copy is pending (else None). Read once by callers checking many cells for
/// work-items ([`check_item_cell`]).
#[inline(always)]
pub(super) fn quick_barrier(cx: &Context, space: usize) -> Option<u32> {
    cx.copies.is_empty().then(|| cx.barrier[space])
}

/// [`check_cell`] of an access by a work-item (`base.by` is set), with [`quick_barrier`] of its
/// space read by the caller.
#[inline(always)]
pub(super) fn check_item_cell<P: Payload>(
    cx: &Context,
    races: &mut RaceLog,
    cell: &mut Cell<P>,
    base: &This<()>,
    (offset, data): (u64, P),
    quick: Option<u32>,
) {
    debug_assert!(base.by.is_some() && quick == quick_barrier(cx, base.space));
    if !quick.is_some_and(|barrier| quick_item(cx, cell, base, data, barrier)) {
        check_cell_at(cx, races, cell, *base, offset, data);
    }
}

/// [`check_cell_in_full`] of `base` at the cell at `offset`, out of line. `base` comes by value:
/// the caller's access then need not be in memory unless this is called (its address does not
/// leave the inline cases).
#[inline(never)]
fn check_cell_at<P: Payload>(
    cx: &Context,
    races: &mut RaceLog,
    cell: &mut Cell<P>,
    base: This<()>,
    offset: u64,
    data: P,
) {
    check_cell_in_full(cx, races, cell, &base.at(offset, data));
}

/// The common cases of [`check_cell`], inline: an access by a work-item (no async copy in the
/// group, whose records follow other rules) that nothing in the cell can conflict with. Either a
/// plain access to a cell whose records are all older than the last barrier of the space, or
/// its own (a load then becomes the interval's first read, a store its only write); or a plain
/// load where only reads are live (another work-item's: the readers of a shared value); or an
/// atomic store or read-modify-write where every live record is atomic or, for reads, its own
/// (histogram bins). The update is the one [`check_cell_in_full`] makes. False, touching nothing,
/// in every other case.
#[inline(always)]
fn quick_update<P: Payload>(cx: &Context, cell: &mut Cell<P>, this: &This<()>, data: P) -> bool {
    if this.by.is_none() || !cx.copies.is_empty() {
        return false;
    }
    quick_item(cx, cell, this, data, cx.barrier[this.space])
}

/// [`quick_update`] of an access by a work-item with no async copy pending; `barrier` is the
/// stamp of the last barrier of its space.
#[inline(always)]
fn quick_item<P: Payload>(cx: &Context, cell: &mut Cell<P>, this: &This<()>, data: P, barrier: u32) -> bool {
    let now = this.now;
    // An empty record is stamped 0, before every barrier (see [`Stamped`]): the stamp says both.
    debug_assert!(barrier > 0, "stamps start at 1");
    let stale = |s: &Stamped| s.stamp < barrier;
    let stale_or_own = |s: &Stamped| stale(s) || s.record.same_entity(now.record);
    if now.record.atomic() {
        return this.write && quick_atomic(cx, cell, this, data);
    }
    if !stale_or_own(&cell.write) || !stale_or_own(&cell.other_write) {
        return false;
    }
    if this.write {
        if !stale(&cell.other_write) || !stale_or_own(&cell.read) || !stale_or_own(&cell.other_read) {
            return false;
        }
        (cell.write, cell.write_data) = (now, data);
        (cell.other_write, cell.other_data) = (Stamped::EMPTY, P::default());
        if this.space != LOCAL {
            cell.summary_write = now;
            cell.summary_data = data;
        }
        return true;
    }
    // A plain load meets no live write of another work-item: no conflict. What follows keeps up
    // to two readers as `check_cell_in_full` does (with no copy pending, a copy's record is
    // never live there). Two live plain reads (the third and later readers of a shared value)
    // stay whoever reads.
    let live_plain = |s: &Stamped| s.stamp >= barrier && s.record.plain();
    if live_plain(&cell.other_read) && live_plain(&cell.read) {
        if this.space != LOCAL {
            cell.summary_read = now;
        }
        return true;
    }
    let live = |r: &Stamped| !stale(r) && !r.record.by_group();
    let same = |r: &Stamped| live(r) && r.record.same_entity(now.record);
    if !live(&cell.read) {
        cell.read = now;
        cell.other_read = Stamped::EMPTY;
    } else if same(&cell.read) {
        if cell.read.record.atomic() {
            cell.read = now;
        }
    } else if same(&cell.other_read) {
        if cell.other_read.record.atomic() {
            cell.other_read = now;
        }
    } else if !live(&cell.other_read) || cell.other_read.record.atomic() {
        cell.other_read = now;
    } else if cell.read.record.atomic() {
        cell.read = now;
    }
    if this.space != LOCAL {
        cell.summary_read = now;
    }
    true
}

/// Whether a plain load by any work-item changes nothing in `cell` but its summary read (the
/// third and later readers of a shared value, a tile's word): no write live since `barrier`
/// (the last barrier of the access's space), and both read slots hold plain reads of
/// work-items live since then. Whether the reader is one of them or not, [`quick_update`] and
/// [`check_cell_in_full`] then keep both (no async copy may be pending: the caller checks).
/// [`quick_update`] asks the same of the reads where a live write of the reader's own is allowed.
#[inline(always)]
pub(super) fn read_saturated<P: Payload>(cell: &Cell<P>, barrier: u32) -> bool {
    // An empty record is stamped 0, before every barrier (see [`Stamped`]).
    let stale = |s: &Stamped| s.stamp < barrier;
    let live_plain = |s: &Stamped| s.stamp >= barrier && s.record.plain();
    live_plain(&cell.other_read) && live_plain(&cell.read) && stale(&cell.write) && stale(&cell.other_write)
}

/// Whether a plain load of a `__local` cell by a work-item can be skipped: with no async copy
/// pending (`quick` is [`quick_barrier`]), the cell is [`read_saturated`], so checking it would
/// change nothing: the summaries of `__local` cells are not kept (only global pages hand theirs
/// to the launch; a `__local` page stays one for good).
#[inline(always)]
pub(super) fn local_load_idle<P: Payload>(cell: &Cell<P>, quick: Option<u32>) -> bool {
    quick.is_some_and(|barrier| read_saturated(cell, barrier))
}

/// The atomic case of [`quick_update`]: an atomic that writes, where every live write is atomic
/// and every live read atomic or its own ([`atomic_update`]), and the summary write it makes.
#[inline(always)]
fn quick_atomic<P: Payload>(cx: &Context, cell: &mut Cell<P>, this: &This<()>, data: P) -> bool {
    if !atomic_update(cell, this.now, data, cx.barrier[this.space]) {
        return false;
    }
    if this.space != LOCAL && (cx.old(&cell.summary_write) || cell.summary_write.record.atomic()) {
        cell.summary_write = this.now;
        cell.summary_data = data;
    }
    true
}

/// An atomic write `now` (by a work-item, storing `data`; no async copy pending) of a cell where
/// every write live since `barrier` (the last barrier of its space) is atomic and every live
/// read atomic or its own: nothing conflicts (atomics do not race with atomics), and the writes
/// kept are what [`keep_writes`] keeps then: this one, and the oldest live one of another
/// work-item. The cell's summary is the caller's. False, touching nothing, in every other case.
#[inline(always)]
pub(super) fn atomic_update<P: Payload>(cell: &mut Cell<P>, now: Stamped, data: P, barrier: u32) -> bool {
    // Not live in `check_cell_in_full`'s terms (no copy is pending).
    let gone = |s: &Stamped| s.stamp < barrier || s.record.by_group();
    let atomic_or_gone = |s: &Stamped| gone(s) || s.record.atomic();
    let reads_fine = |s: &Stamped| atomic_or_gone(s) || s.record.same_entity(now.record);
    if !atomic_or_gone(&cell.write)
        || !atomic_or_gone(&cell.other_write)
        || !reads_fine(&cell.read)
        || !reads_fine(&cell.other_read)
    {
        return false;
    }
    let apart = |s: &Stamped| !gone(s) && !s.record.same_entity(now.record);
    // The second write kept: the other slot's if it is another work-item's and live (the
    // common case of a bin many update), else this slot's if it is, else none.
    if !apart(&cell.other_write) {
        if apart(&cell.write) {
            (cell.other_write, cell.other_data) = (cell.write, cell.write_data);
        } else {
            (cell.other_write, cell.other_data) = (Stamped::EMPTY, P::default());
        }
    }
    (cell.write, cell.write_data) = (now, data);
    true
}

/// [`check_cell`] in every case.
#[inline(never)]
fn check_cell_in_full<P: Payload>(cx: &Context, races: &mut RaceLog, cell: &mut Cell<P>, this: &This<P>) {
    let atomic = this.now.record.atomic();
    let conflicts = |old: &Stamped| conflicts(cx, old, this);
    // Which of the cell's writes, then reads, conflict; the list is only built when one does.
    let found = [
        conflicts(&cell.write),
        conflicts(&cell.other_write),
        this.write && conflicts(&cell.read),
        this.write && conflicts(&cell.other_read),
    ];
    if found.iter().any(|&f| f) {
        report_cell(cx, races, cell, found, this);
    }
    if this.write {
        keep_writes(cx, cell, this);
        if this.space != LOCAL && (cx.old(&cell.summary_write) || !atomic || cell.summary_write.record.atomic()) {
            cell.summary_write = this.now;
            cell.summary_data = this.data;
        }
    } else {
        // Keep up to two readers of the interval, distinct work-items, plain ones first.
        let live = |r: &Stamped| !cx.stale(r, this.space);
        let same = |r: &Stamped| live(r) && cx.same_actor(r, &this.now);
        if !live(&cell.read) {
            cell.read = this.now;
            cell.other_read = Stamped::EMPTY;
        } else if same(&cell.read) || same(&cell.other_read) {
            let slot = if same(&cell.read) { &mut cell.read } else { &mut cell.other_read };
            if slot.record.atomic() && !atomic {
                *slot = this.now;
            }
        } else if !live(&cell.other_read) || (!atomic && cell.other_read.record.atomic()) {
            cell.other_read = this.now;
        } else if !atomic && cell.read.record.atomic() {
            cell.read = this.now;
        }
        if this.space != LOCAL && (cx.old(&cell.summary_read) || !atomic || cell.summary_read.record.atomic()) {
            cell.summary_read = this.now;
        }
    }
}

/// Logs the races of `this` with the cell's records that `found` marks (its two writes, then
/// its two reads). Every conflicting pair is reported: the dedup by instruction pair keeps one of
/// each.
#[cold]
#[inline(never)]
fn report_cell<P: Payload>(cx: &Context, races: &mut RaceLog, cell: &Cell<P>, found: [bool; 4], this: &This<P>) {
    let kind = |old: &Stamped, plain| if old.record.atomic() { AccessType::Atomic } else { plain };
    let records = [
        (cell.write, kind(&cell.write, AccessType::Store), Some(cell.write_data)),
        (cell.other_write, kind(&cell.other_write, AccessType::Store), Some(cell.other_data)),
        (cell.read, kind(&cell.read, AccessType::Load), None),
        (cell.other_read, kind(&cell.other_read, AccessType::Load), None),
    ];
    let mut list = [(Stamped::EMPTY, AccessType::Load, None); 4];
    let mut n = 0;
    for (record, _) in records.into_iter().zip(found).filter(|(_, f)| *f) {
        list[n] = record;
        n += 1;
    }
    report(cx, races, &list[..n], this);
}

/// Keeps up to two live writes of the interval by distinct work-items. Two are what a later
/// access needs: one of them is always another work-item's, so a work-item's own write (its
/// atomic after everyone else's, say) cannot hide the others' from it. Plain writes come first
/// (they race with atomics too), the newest first; then atomic ones, the oldest kept first, since
/// the newest is most often by the work-item whose next access follows.
#[inline]
fn keep_writes<P: Payload>(cx: &Context, cell: &mut Cell<P>, this: &This<P>) {
    // The common case: a plain write over nothing live but this work-item's own write.
    if !this.now.record.atomic()
        && cx.stale(&cell.other_write, this.space)
        && (cx.stale(&cell.write, this.space) || cx.same_actor(&cell.write, &this.now))
    {
        (cell.write, cell.write_data) = (this.now, this.data);
        (cell.other_write, cell.other_data) = (Stamped::EMPTY, P::default());
        return;
    }
    let live = |w: Stamped, data: P| if cx.stale(&w, this.space) { (Stamped::EMPTY, P::default()) } else { (w, data) };
    let (now, write, other) =
        ((this.now, this.data), live(cell.write, cell.write_data), live(cell.other_write, cell.other_data));
    let plain = |c: &&(Stamped, P)| !c.0.record.is_empty() && !c.0.record.atomic();
    let first = *[now, write, other].iter().find(plain).unwrap_or(&now);
    let apart = |c: &&(Stamped, P)| !c.0.record.is_empty() && !cx.same_actor(&c.0, &first.0);
    let (newest, oldest) = ([now, write, other], [other, write, now]);
    let second = newest
        .iter()
        .filter(apart)
        .find(plain)
        .or_else(|| oldest.iter().find(apart))
        .copied()
        .unwrap_or((Stamped::EMPTY, P::default()));
    (cell.write, cell.write_data) = first;
    (cell.other_write, cell.other_data) = second;
}

/// Logs the races of `this` with each of `found`, byte by byte of the cell (for each byte, in
/// the order found), as a cell per byte would have logged them.
#[cold]
#[inline(never)]
fn report<P: Payload>(cx: &Context, races: &mut RaceLog, found: &[Conflict<P>], this: &This<P>) {
    let entity = this.now.record.entity();
    // Under lockstep: how each pair stands (the same for every byte of the cell).
    let mut pairs = [Pair::Inter; 4];
    if let Some(clocks) = &cx.lockstep {
        for (pair, (old, _, _)) in pairs.iter_mut().zip(found) {
            *pair = clocks.pair(cx.lane_of(old), old.record.step_low(), this.by);
        }
    }
    for i in 0..P::BYTES {
        let byte = this.data.byte(i);
        for (&(old, old_kind, old_data), pair) in found.iter().zip(pairs) {
            let old_writes = old_data.is_some();
            let uniform = this.write && old_data.map(|d| d.byte(i)) == Some(byte);
            // Lockstep classes a pair by the whole cell: one instruction storing the same word.
            let same_cell = this.write && old_data == Some(this.data);
            if uniform && cx.launch.options.uniform_writes_benign {
                continue;
            }
            races.add(RaceEvent {
                place: Place { offset: this.place.offset + i as u64, ..this.place },
                first: Side {
                    entity: old.record.entity(),
                    loc: cx.launch.sites.loc(old.record.site()),
                    access: old_kind,
                },
                second: Side { entity, loc: this.loc, access: this.kind },
                write_write: this.write && old_writes,
                uniform,
                scope: RaceScope::IntraGroup,
                reason: cx.reason(&old, this.space, entity),
                lockstep: cx.lockstep.as_ref().map(|_| pair.class(this.write && old_writes, same_cell)),
            });
        }
    }
}

/// A failed synchronisation between two entities, either way round.
pub fn find_link(links: &[Link], a: Entity, b: Entity) -> Option<&Link> {
    links.iter().find(|l| (l.reader == a && l.writer == b) || (l.reader == b && l.writer == a))
}

/// Where a run of [`word_run`] lies: the record of its accesses by work-item 0 (`head`, never
/// empty), the local linear id of its first lane, the page offset of its first word, the
/// stored bytes of its lanes from `at` on, and whether its page is a `__local` one that no
/// access touched since the last barrier of local memory (`stale`: every record on it is older).
pub(super) struct WordRun<'a> {
    pub(super) head: Record,
    pub(super) first: u32,
    pub(super) offset: usize,
    pub(super) stored: &'a [u8],
    pub(super) at: usize,
    pub(super) stale: bool,
}

/// The plain loads (stores if `WRITE`) of a word each of consecutive lanes (work-items `items`)
/// on consecutive `cells` of a `__local` (if `LOCAL`) or global page, as `GroupState::lanes`
/// checks them; made once for each space and direction, so that the loop tests neither.
/// Returns whether these were `__local` loads and every cell [`local_load_idle`] (nothing was
/// checked or changed).
#[inline(always)]
pub(super) fn word_run<const LOCAL: bool, const WRITE: bool>(
    cx: &Context,
    races: &mut RaceLog,
    cells: &mut [WordCell],
    items: &[u32],
    mut base: This<()>,
    run: WordRun,
) -> bool {
    let n = cells.len().min(items.len());
    let (cells, items) = (&mut cells[..n], &items[..n]);
    // Known at compile time from here on: the checks inlined below test the space.
    base.space = if LOCAL { self::LOCAL } else { GLOBAL };
    let quick = quick_barrier(cx, base.space);
    // The stored words, when all are there (stores always have them).
    let words = run.stored.get(run.at..run.at + n * WORD).filter(|_| WRITE);
    if LOCAL && run.stale && quick.is_some() {
        // Every record of the page precedes the last barrier (and no copy is pending, so all
        // are stale): nothing conflicts, and each cell takes what the check would leave, this
        // access as the only write, or the only read, of the interval.
        for k in 0..n {
            let now = Stamped { record: run.head.advanced_full(items[k]), stamp: cx.stamp };
            let cell = &mut cells[k];
            if WRITE {
                let data = match words {
                    Some(words) => u32::from_le_bytes([
                        words[k * WORD],
                        words[k * WORD + 1],
                        words[k * WORD + 2],
                        words[k * WORD + 3],
                    ]),
                    None => u32::from_stored(run.stored, run.at + k * WORD),
                };
                (cell.write, cell.write_data) = (now, data);
                (cell.other_write, cell.other_data) = (Stamped::EMPTY, 0);
            } else {
                (cell.read, cell.other_read) = (now, Stamped::EMPTY);
            }
        }
        return false;
    }
    // Loads of a run whose first cell is saturated (a tile row read again) mostly are too.
    let idle = LOCAL && !WRITE && n > 0 && local_load_idle(&cells[0], quick);
    let mut all_idle = idle;
    for k in 0..n {
        if idle && local_load_idle(&cells[k], quick) {
            // A third or later reader since the barrier (a matmul tile's row read by each row
            // of work-items in turn): nothing to check or keep.
            continue;
        }
        all_idle = false;
        // `head` is not empty: work-item `items[k]`'s record is `head` advanced by it.
        let now = Stamped { record: run.head.advanced_full(items[k]), stamp: cx.stamp };
        let data = match words {
            Some(words) => {
                u32::from_le_bytes([words[k * WORD], words[k * WORD + 1], words[k * WORD + 2], words[k * WORD + 3]])
            }
            None if WRITE => u32::from_stored(run.stored, run.at + k * WORD),
            None => 0,
        };
        let cell = &mut cells[k];
        if !LOCAL && cell.untouched(cx.serial) {
            cell.record_first(&now, WRITE, data);
        } else {
            (base.now, base.by) = (now, Some(run.first + k as u32));
            check_item_cell(cx, races, cell, &base, ((run.offset + k * WORD) as u64, data), quick);
        }
    }
    all_idle
}

/// The loads of one `__local` word (`cell`, at `offset`) by the work-items `lanes` in turn, with
/// no async copy pending (`barrier` is the last barrier of local memory) and `base` the access
/// (site `site`, its work-item and record set here per lane): [`local_load_same`] of one word,
/// without its look-ups, for `GroupState::load_periodic`, which makes them once for many words.
#[inline]
pub(super) fn local_word_load<'l>(
    cx: &Context,
    races: &mut RaceLog,
    cell: &mut WordCell,
    lanes: impl IntoIterator<Item = &'l u32>,
    (base, site): (&mut This<()>, u16),
    offset: u64,
    barrier: u32,
) {
    if read_saturated(cell, barrier) {
        return;
    }
    for &l in lanes {
        (base.now, base.by) = (cx.lane_now(l, site, false, None), Some(l));
        check_item_cell(cx, races, cell, base, (offset, 0u32), Some(barrier));
        if read_saturated(cell, barrier) {
            return;
        }
    }
}

/// `GroupState::load_same` of `__local` words `cells` (the first at `offset` of `allocation`)
/// with no async copy pending (`barrier` is the last barrier of local memory): each lane checks
/// each cell in turn, but a cell that is [`read_saturated`] (two live plain reads, no live
/// write: a tile's word read by its second reader) is one a plain load leaves as it is, with
/// nothing to report, so it is skipped, and the lanes stop once every cell is.
#[inline(never)]
pub(super) fn local_load_same(
    cx: &Context,
    races: &mut RaceLog,
    cells: &mut [WordCell],
    lanes: &[u32],
    (allocation, offset): (u32, u64),
    loc: u32,
    barrier: u32,
) {
    let saturated = |cells: &[WordCell]| cells.iter().all(|c| read_saturated(c, barrier));
    if saturated(cells) {
        return;
    }
    let site = cx.launch.sites.site(loc);
    let place = cx.place(true, allocation);
    let mut base = This::new(Stamped::EMPTY, None, AccessType::Load, false, place, loc);
    for &l in lanes {
        (base.now, base.by) = (cx.lane_now(l, site, false, None), Some(l));
        for (w, cell) in cells.iter_mut().enumerate() {
            if !read_saturated(cell, barrier) {
                check_item_cell(cx, races, cell, &base, (offset + (w * WORD) as u64, 0u32), Some(barrier));
            }
        }
        if saturated(cells) {
            return;
        }
    }
}
