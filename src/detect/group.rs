//! The detector inside one work-group: checks every access against the group's shadow as it
//! happens, keeps barrier intervals and acquired releases, and hands the group's global accesses
//! to the launch when the group ends.
//!
//! Time inside a group is a stamp that grows at every barrier, release and acquire. Stamps keep
//! growing across the groups a worker thread runs, so cells left by earlier groups are simply
//! older than the new group's first "barrier" and never need clearing for intra-group checks.

use std::collections::BTreeMap;

use super::cell::{
    Context, GLOBAL, LOCAL, PendingCopy, This, WordRun, atomic_update, check_cell, check_item_cell, local_load_same,
    local_word_load, quick_barrier, read_saturated, word_run,
};
use super::lockstep::Lockstep;
use super::pages::{GROUP_PAGE as PAGE, WORD};
use super::race::{AccessType, Place, RaceLog, RaceReason, Reason};
use super::record::{Entity, Record, Stamped};
use super::shadow::{Cell, GroupPage, GroupShadow, Payload, TakenPage, WordCell};
use super::sync::{Acquired, AtomicEvent, Link, MissedSync, Release, SyncGuard, SyncObject, join};
use super::{GroupResult, Shared, Summaries};
use crate::exec::ExecError;
use crate::exec::hooks::{Access, AccessKind, AtomicAccess, AtomicInst, AtomicResult, GroupHooks, LaneAtomic};
use crate::exec::memory::{SPACE_GLOBAL, SPACE_LOCAL, split};
use crate::ir::{AtomicOp, Fence, MemOrder, Scope};

/// The shadow a worker thread keeps from group to group.
#[derive(Default)]
pub struct WorkerShadow {
    local: GroupShadow,
    global: GroupShadow,
    /// The next unused stamp on this worker.
    next_stamp: u32,
    /// Bytes of the two shadows already charged to the memory budget.
    charged: usize,
    /// Buffers a group fills and the next reuses (an allocation per group is a lock in the
    /// allocator when groups end on other threads): its work-items' ids, its touched pages.
    entities: Vec<u32>,
    dirty: Vec<(u32, u32)>,
    /// The lanes of one element of a periodic load ([`GroupState::load_periodic`]).
    lanes: Vec<u32>,
}

impl WorkerShadow {
    /// Charges what the shadows grew by since the last call; false if it did not fit.
    fn charge_growth(&mut self, launch: &Shared) -> bool {
        let bytes = self.local.bytes() + self.global.bytes();
        let grown = bytes.saturating_sub(self.charged);
        if grown == 0 {
            return true;
        }
        self.charged = bytes;
        launch.charge(grown)
    }
}

/// Per-work-item synchronisation state (only touched by atomics and fences).
#[derive(Default, Clone)]
struct ItemSync {
    /// A release fence was executed: the next atomic write releases.
    fence_release: Option<Scope>,
    /// What the last relaxed atomic read could have acquired (for a later acquire fence).
    could_acquire: Vec<Release>,
    /// The fence flags this work-item named for the barrier at a source location, when its
    /// flags were not a compile-time constant (see [`BarrierMark`]).
    barrier_mark: Option<BarrierMark>,
}

/// The fence flags one work-item passes to a barrier whose flags are not a compile-time
/// constant. The compile step's workaround header (`src/workarounds.h`) turns such a
/// `barrier(flags)` (and `work_group_barrier`, `sub_group_barrier`) into one marker per space
/// the flags hold, a relaxed fence at work-item scope (which orders nothing by itself), then the
/// barrier with no flags, all at the source location of the call: one barrier for every
/// work-item, so flags that differ between work-items are no divergence. The barrier then fences
/// the union of the spaces its work-items marked there.
///
/// The union is the conservative reading where the flags differ: a space one work-item fences
/// is fenced for all. By the memory model a pair of accesses across a barrier is ordered only
/// when both work-items fence its space, so a race between two work-items one of which named
/// no fence for that space is missed; one that no work-item fences is still reported. Where
/// the flags agree (a kernel argument) the barrier fences exactly them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct BarrierMark {
    loc: u32,
    fence: Fence,
}

impl BarrierMark {
    /// Whether a fence is such a marker: relaxed at work-item scope.
    fn is_marker(order: MemOrder, scope: Scope) -> bool {
        order == MemOrder::Relaxed && scope == Scope::WorkItem
    }
}

/// The detector's state for one running work-group.
pub struct GroupState<'d> {
    cx: Context<'d>,
    /// Boxed: a group's state moves from the hooks' start to the executor and back at its end,
    /// and the shadow goes to and from the spares between groups; inline, its few hundred bytes
    /// were copied at each move (vecadd, 16,384 groups: 4% of its instructions with the
    /// detector).
    shadow: Box<WorkerShadow>,
    items: Vec<ItemSync>,
    /// Sync objects of local memory, by address (ordered: looked up without hashing).
    local_sync: BTreeMap<u64, SyncObject>,
    /// Buffers kept across atomics: what a release publishes, and what a read took.
    published: Vec<Release>,
    read: Vec<Release>,
    /// Global pages this group touched: (allocation, page).
    dirty: Vec<(u32, u32)>,
    races: RaceLog,
    /// The sync stripe held from a global atomic's memory operation to its bookkeeping.
    held: Option<SyncGuard<'d>>,
    /// Some work-item holds a [`BarrierMark`].
    marked: bool,
    /// Some work-item executed a release fence (its next atomic write may release).
    released: bool,
    /// The last run of `__local` words [`GroupState::lanes`] found idle.
    idle: IdleRun,
}

/// A run of `count` `__local` words at `addr` whose loads by consecutive lanes found every cell
/// [`local_load_idle`](super::cell::local_load_idle) (no async copy pending,
/// [`read_saturated`]) while the group's stamp was `stamp` and the worker's local shadow had
/// seen `changes` accesses that may change a saturated cell ([`GroupShadow::changes`]): while
/// both stay so, no cell of the run can have changed (a plain load leaves a saturated cell as
/// it is), nor can the last barrier have moved.
/// Lockstep clocks never take that path (their runs are checked lane by lane).
#[derive(Clone, Copy, PartialEq, Eq)]
struct IdleRun {
    addr: u64,
    count: u32,
    stamp: u32,
    changes: u64,
}

impl IdleRun {
    /// No run: no `__local` address is 0.
    const NONE: IdleRun = IdleRun { addr: 0, count: 0, stamp: 0, changes: 0 };
}

/// Where the rows of one access land, looked up once for them all: the space, the allocation,
/// the access's site and its place.
#[derive(Clone, Copy)]
struct Where {
    is_local: bool,
    allocation: u64,
    site: u16,
    place: Place,
}

impl<'d> GroupState<'d> {
    pub fn new(
        launch: &'d Shared,
        mut shadow: Box<WorkerShadow>,
        group_id: [u64; 3],
        size: [u64; 3],
    ) -> GroupState<'d> {
        // A fresh stamp, above everything earlier groups left in the cells, acting as a barrier.
        let stamp = shadow.next_stamp.wrapping_add(1);
        shadow.next_stamp = stamp;
        let mut entities = std::mem::take(&mut shadow.entities);
        entities.clear();
        launch.geometry.extend_global_linear(group_id, size, &mut entities);
        let mut dirty = std::mem::take(&mut shadow.dirty);
        dirty.clear();
        let cx = Context {
            launch,
            group: launch.geometry.group_linear(group_id),
            group_id,
            stamp,
            barrier: [stamp; 2],
            any_barrier: stamp,
            serial: stamp,
            acquired: Vec::new(),
            links: Vec::new(),
            copies: Vec::new(),
            sub_group_width: 0,
            sub_group_barriers: Vec::new(),
            lockstep: launch.options.sub_group_lockstep.map(|w| Lockstep::new(w, size.iter().product::<u64>() as u32)),
            entities,
        };
        GroupState {
            cx,
            shadow,
            items: Vec::new(),
            local_sync: BTreeMap::new(),
            published: Vec::new(),
            read: Vec::new(),
            dirty,
            races: RaceLog::default(),
            held: None,
            marked: false,
            released: false,
            idle: IdleRun::NONE,
        }
    }

    /// A plain load or store the detector does not track: in a buffer no argument writes
    /// through (stencil's and vector add's inputs). Asked where the interpreter calls the
    /// hooks, so that such accesses cost no call. Atomics and the other spaces go on.
    #[inline(always)]
    fn untracked(&self, access: &Access) -> bool {
        !matches!(access.kind, AccessKind::Atomic(_)) && !GroupHooks::hears_plain(self, access.addr)
    }

    pub fn group(&self) -> u32 {
        self.cx.group
    }

    fn item(&mut self, local: u32) -> &mut ItemSync {
        if local as usize >= self.items.len() {
            self.items.resize(local as usize + 1, ItemSync::default());
        }
        &mut self.items[local as usize]
    }

    /// `fence` widened by the [`BarrierMark`]s that the work-items of `lanes` (local linear ids)
    /// left at `loc` for the barrier there they completed; their marks are used up.
    fn take_marks(&mut self, mut fence: Fence, loc: u32, lanes: std::ops::Range<usize>) -> Fence {
        if !self.marked {
            return fence;
        }
        let end = lanes.end.min(self.items.len());
        for item in &mut self.items[lanes.start.min(end)..end] {
            if let Some(mark) = item.barrier_mark.take()
                && mark.loc == loc
            {
                fence.local |= mark.fence.local;
                fence.global |= mark.fence.global;
            }
        }
        self.marked = self.items.iter().any(|i| i.barrier_mark.is_some());
        fence
    }

    /// Checks and records one access of `size` bytes at a tagged address.
    fn access(&mut self, by: Option<u32>, access: &Access, kind: AccessType, write: bool) {
        let (space, allocation, offset) = split(access.addr);
        let Some(is_local) = checked_local(space) else { return };
        let cx = &self.cx;
        if !is_local && cx.launch.read_only(allocation as u32) {
            return;
        }
        let step = match (&mut self.cx.lockstep, by) {
            (Some(clocks), Some(lane)) => clocks.step(lane, 1, access.loc),
            _ => 0,
        };
        let cx = &self.cx;
        let site = cx.launch.sites.site(access.loc);
        let entity = cx.entity_of(by);
        let atomic = kind == AccessType::Atomic;
        let mut record = Record::new(site, entity, cx.stamp, atomic, 0);
        if cx.lockstep.is_some() {
            record = record.with_step(step);
        }
        let now = Stamped { record, stamp: cx.stamp };
        let base = This::new(now, by, kind, write, cx.place(is_local, allocation as u32), access.loc);
        // Anything but a work-item's plain load may change a cell a plain load leaves as it is.
        let changes = by.is_none() || kind != AccessType::Load;
        let allocation_index = allocation as usize;
        let mut at = offset as usize;
        let end = at + access.size as usize;
        while at < end {
            let page_index = at / PAGE;
            let in_page = at % PAGE;
            let len = (PAGE - in_page).min(end - at);
            let bytes = in_page..in_page + len;
            let page = touched_page(
                &mut self.shadow,
                &mut self.dirty,
                cx,
                is_local.then_some(changes),
                (allocation, page_index),
                bytes,
            )
            .1;
            let stored = |at: usize| at - offset as usize;
            let whole_words = in_page.is_multiple_of(WORD) && len.is_multiple_of(WORD);
            if let (true, GroupPage::Words(words)) = (whole_words, page) {
                // Aligned whole words: one check per word.
                let cells = &mut words[in_page / WORD..(in_page + len) / WORD];
                for (w, cell) in cells.iter_mut().enumerate() {
                    let data = u32::from_stored(access.stored, stored(at) + w * WORD);
                    // Global words this group has not touched yet (pages are clean between
                    // groups) cannot race inside the group: record the access and go on.
                    if !is_local && cell.untouched(cx.serial) {
                        cell.record_first(&now, write, data);
                    } else {
                        check_cell(cx, &mut self.races, cell, &base, (at + w * WORD) as u64, data);
                    }
                }
                at += len;
                continue;
            }
            let shadow = if is_local { &mut self.shadow.local } else { &mut self.shadow.global };
            let cells = &mut shadow.byte_cells(allocation_index, page_index)[in_page..in_page + len];
            let byte_at = |i: usize| u8::from_stored(access.stored, stored(at) + i);
            if !is_local && cells.iter().all(|c| c.untouched(cx.serial)) {
                for (i, cell) in cells.iter_mut().enumerate() {
                    cell.record_first(&now, write, byte_at(i));
                }
                at += len;
                continue;
            }
            // Bytes in the same state (the common case) take one check, unless it finds a race.
            let mut first = 0;
            if len > 1 && cells[1..].iter().all(|c| c.same_state(&cells[0])) {
                let before = cells[0];
                let events = self.races.events;
                check_cell(cx, &mut self.races, &mut cells[0], &base, at as u64, byte_at(0));
                first = 1;
                if self.races.events == events {
                    let after = cells[0];
                    for (i, cell) in cells.iter_mut().enumerate().skip(1) {
                        *cell = cell.updated_like(&before, &after, &now, byte_at(i));
                    }
                    first = len;
                }
            }
            for (i, cell) in cells.iter_mut().enumerate().skip(first) {
                check_cell(cx, &mut self.races, cell, &base, (at + i) as u64, byte_at(i));
            }
            at += len;
        }
    }

    /// A plain load or store, or the access of an atomic (`kind`), by one work-item: when it is
    /// one aligned word on a page of word cells (the common case), checked against that cell
    /// with nothing else looked up; otherwise (and under lockstep clocks) as
    /// [`GroupState::access`] checks any access.
    #[inline]
    fn word(&mut self, item: u32, access: &Access, kind: AccessType, write: bool) {
        let (space, allocation, offset) = split(access.addr);
        if access.size as usize != WORD || !(offset as usize).is_multiple_of(WORD) || self.cx.lockstep.is_some() {
            return self.access(Some(item), access, kind, write);
        }
        let Some(is_local) = checked_local(space) else { return };
        if !is_local && self.cx.launch.read_only(allocation as u32) {
            return;
        }
        let (page_index, in_page) = (offset as usize / PAGE, offset as usize % PAGE);
        let bytes = in_page..in_page + WORD;
        // Anything but a plain load may change a cell a plain load leaves as it is.
        let local = is_local.then_some(kind != AccessType::Load);
        let page = touched_page(&mut self.shadow, &mut self.dirty, &self.cx, local, (allocation, page_index), bytes).1;
        let GroupPage::Words(words) = page else {
            return self.access(Some(item), access, kind, write);
        };
        let cx = &self.cx;
        let cell = &mut words[in_page / WORD];
        let now = cx.lane_now(item, cx.launch.sites.site(access.loc), kind == AccessType::Atomic, None);
        let data = if write { u32::from_stored(access.stored, 0) } else { 0 };
        if !is_local && cell.untouched(cx.serial) {
            cell.record_first(&now, write, data);
        } else {
            let base = This::new(now, Some(item), kind, write, cx.place(is_local, allocation as u32), access.loc);
            check_cell(cx, &mut self.races, cell, &base, offset, data);
        }
    }

    /// A load or store of one word each by the work-items `lanes` at addresses of their own (see
    /// [`GroupHooks::access_each`]): the site, stamp and record looked up once, `__local` words
    /// checked on their page with the last page kept for the next lane; a lane on global memory,
    /// not one aligned word, or on a page of byte cells goes as [`GroupState::word`] takes it.
    fn each(&mut self, lanes: &[u32], access: &Access, write: bool, lane: impl Fn(u32) -> (u64, u64)) {
        let kind = if write { AccessType::Store } else { AccessType::Load };
        let per_lane = |state: &mut Self, l: u32| {
            let (addr, value) = lane(l);
            let bytes = value.to_le_bytes();
            let stored = if write { &bytes[..(access.size as usize).min(8)] } else { &[][..] };
            GroupHooks::access(state, l, &Access { addr, stored, ..*access });
        };
        if access.size as usize != WORD || self.cx.lockstep.is_some() {
            return lanes.iter().for_each(|&l| per_lane(self, l));
        }
        let site = self.cx.launch.sites.site(access.loc);
        let head = Record::new(site, Entity::Item(0), self.cx.stamp, false, 0);
        let base = This::new(Stamped::EMPTY, None, kind, write, self.cx.place(true, 0), access.loc);
        let mut rest = lanes;
        while !rest.is_empty() {
            let done = if write {
                local_words::<true>(self, rest, head, base, &lane)
            } else {
                local_words::<false>(self, rest, head, base, &lane)
            };
            // The lane after those is one the general path takes.
            let Some(&l) = rest.get(done) else { break };
            per_lane(self, l);
            rest = &rest[done + 1..];
        }
    }

    /// [`GroupHooks::access_rows`] (and [`GroupHooks::access_lanes`], one row) of an access the
    /// detector tracks; out of line, so that the hooks, which ask [`GroupState::untracked`]
    /// first, are small enough to be inlined where the interpreter calls them: a load of a buffer
    /// no argument writes through then costs no call.
    #[inline(never)]
    fn tracked_rows(&mut self, first: u32, (count, rows): (u32, u32), stride: u64, access: &Access) {
        match access.kind {
            AccessKind::Load => self.rows(first, (count, rows), stride, access, false),
            AccessKind::Store => self.rows(first, (count, rows), stride, access, true),
            // Not meant for atomics: taken lane by lane, as each would have come.
            AccessKind::Atomic(_) => {
                for r in 0..rows {
                    let row = access.row(r, count, stride);
                    for k in 0..count {
                        GroupHooks::access(self, first + r * count + k, &row.lane(k));
                    }
                }
            }
        }
    }

    /// Loads or stores by `rows` rows of `count` consecutive lanes, each row contiguous in
    /// memory and `stride` bytes after the one before (see [`GroupHooks::access_rows`]): the
    /// allocation, site and place looked up once; each row as [`GroupState::lanes`] takes it.
    #[inline(always)]
    fn rows(&mut self, first: u32, (count, rows): (u32, u32), stride: u64, access: &Access, write: bool) {
        let (space, allocation, _) = split(access.addr);
        let Some(is_local) = checked_local(space) else { return };
        if !is_local && self.cx.launch.read_only(allocation as u32) {
            return;
        }
        let at = Where {
            is_local,
            allocation,
            site: self.cx.launch.sites.site(access.loc),
            place: self.cx.place(is_local, allocation as u32),
        };
        if rows == 1 {
            return self.lanes(first, count, access, write, at);
        }
        for r in 0..rows {
            self.lanes(first + r * count, count, &access.row(r, count, stride), write, at);
        }
    }

    /// A load or store of consecutive lanes, contiguous in memory (see
    /// [`GroupHooks::access_lanes`]) in the checked allocation `at` names: when each lane's part
    /// is whole words aligned to its size, checked word by word on pages of word cells, with the
    /// page looked up once; otherwise (and on pages of byte cells) lane by lane.
    #[inline(always)]
    fn lanes(&mut self, first: u32, count: u32, access: &Access, write: bool, at: Where) {
        let kind = if write { AccessType::Store } else { AccessType::Load };
        let size = access.size as usize;
        let lane_by_lane = |state: &mut Self, from: u32, to: u32| {
            for k in from..to {
                state.access(Some(first + k), &access.lane(k), kind, write);
            }
        };
        let Where { is_local, allocation, site, place } = at;
        let offset = split(access.addr).2;
        if !(size >= WORD && size.is_power_of_two() && size <= PAGE && (offset as usize).is_multiple_of(size)) {
            return lane_by_lane(self, 0, count);
        }
        // The run of `__local` loads last found idle, found again (the next row of the group
        // reading the same tile row): nothing to do.
        let idle_run = IdleRun { addr: access.addr, count, stamp: self.cx.stamp, changes: self.shadow.local.changes() };
        if is_local && !write && size == WORD && self.idle == idle_run && self.cx.copies.is_empty() {
            return;
        }
        let alloc = allocation as usize;
        let mut lane = 0;
        while lane < count {
            let at = offset as usize + lane as usize * size;
            let (page_index, in_page) = (at / PAGE, at % PAGE);
            // Lanes never straddle a page: their parts are aligned to their power-of-two size.
            let here = (((PAGE - in_page) / size) as u32).min(count - lane);
            let end = in_page + here as usize * size;
            let (serial, bytes) = (self.cx.serial, in_page..end);
            if write && !is_local && size == WORD && self.cx.lockstep.is_none() {
                // A store by consecutive work-items (`c[i] = ...`) on a page the group has not
                // touched yet (or right after such a store): kept as one run until anything
                // else touches the page.
                let end_lane = lane + here;
                let items = &self.cx.entities[(first + lane) as usize..][..here as usize];
                let words = access.stored.get(lane as usize * WORD..end_lane as usize * WORD);
                if let Some(words) = words
                    && items[here as usize - 1].wrapping_sub(items[0]) == here - 1
                {
                    let stamp = self.cx.stamp;
                    let now = Stamped { record: Record::new(site, Entity::Item(items[0]), stamp, false, 0), stamp };
                    let global = &mut self.shadow.global;
                    if let Some(fresh) = global.defer_store(alloc, page_index, serial, (in_page, end), now, words) {
                        if fresh {
                            self.dirty.push((allocation as u32, page_index as u32));
                        }
                        lane += here;
                        continue;
                    }
                }
            }
            let local = is_local.then_some(write);
            let (last, page) =
                touched_page(&mut self.shadow, &mut self.dirty, &self.cx, local, (allocation, page_index), bytes);
            let GroupPage::Words(words) = page else {
                lane_by_lane(self, lane, lane + here);
                lane += here;
                continue;
            };
            let step = self.cx.lockstep.as_mut().map(|clocks| clocks.step(first + lane, here, access.loc));
            let (cx, races) = (&self.cx, &mut self.races);
            // One access for every lane, its work-item and record set lane by lane.
            let mut base = This::new(Stamped::EMPTY, None, kind, write, place, access.loc);
            let cells = &mut words[in_page / WORD..end / WORD];
            let page_offset = page_index * PAGE + in_page;
            let stored = |at: usize| if write { u32::from_stored(access.stored, lane as usize * size + at) } else { 0 };
            if size == WORD && step.is_none() {
                // A word per lane (the common case): the lanes' records differ only in the work-item.
                let head = Record::new(site, Entity::Item(0), cx.stamp, false, 0);
                let items = &cx.entities[(first + lane) as usize..][..here as usize];
                let run = WordRun {
                    head,
                    first: first + lane,
                    offset: page_offset,
                    stored: access.stored,
                    at: lane as usize * size,
                    // A `__local` page no access touched since the last barrier of local memory.
                    stale: last < cx.barrier[LOCAL],
                };
                let idle = match (is_local, write) {
                    (true, false) => word_run::<true, false>(cx, races, cells, items, base, run),
                    (true, true) => word_run::<true, true>(cx, races, cells, items, base, run),
                    (false, false) => word_run::<false, false>(cx, races, cells, items, base, run),
                    (false, true) => word_run::<false, true>(cx, races, cells, items, base, run),
                };
                if idle && here == count {
                    self.idle = idle_run;
                }
                lane += here;
                continue;
            }
            for (k, lane_cells) in cells.chunks_exact_mut(size / WORD).enumerate() {
                let l = lane + k as u32;
                let now = cx.lane_now(first + l, site, false, step);
                (base.now, base.by) = (now, Some(first + l));
                for (w, cell) in lane_cells.iter_mut().enumerate() {
                    let at = k * size + w * WORD;
                    let data = stored(at);
                    if !is_local && cell.untouched(cx.serial) {
                        cell.record_first(&now, write, data);
                    } else {
                        check_cell(cx, races, cell, &base, (page_offset + at) as u64, data);
                    }
                }
            }
            lane += here;
        }
    }

    fn atomic(&mut self, item: u32, access: &Access, atomic: AtomicAccess) {
        let entity = self.cx.entity_of(Some(item));
        let rmw = !matches!(atomic.op, AtomicOp::Load | AtomicOp::Store | AtomicOp::FlagClear);
        let wrote = atomic.wrote;
        let reads = rmw || !wrote;
        // A work-item with no sync state has no fence pending: none is made for it here.
        let fence_release = self.items.get_mut(item as usize).and_then(|i| i.fence_release.take());
        let releases = wrote && (atomic.order.releases() || fence_release.is_some());
        let acquires = reads && atomic.order.acquires();
        // What a release publishes is built in a buffer the group keeps: no allocation per atomic.
        self.published.clear();
        if releases {
            let stamp = self.cx.tick();
            let scope = if atomic.order.releases() { atomic.scope } else { fence_release.unwrap_or(atomic.scope) };
            let Entity::Item(id) = entity else { unreachable!("atomics come from work-items") };
            self.published.push(Release {
                group: self.cx.group,
                item: id,
                stamp,
                barrier: self.cx.barrier,
                group_scope: scope < Scope::Device,
            });
            // Publish what this work-item knows too: happens-before is transitive.
            let known = self.cx.acquired.iter().filter(|a| a.item.is_none() || a.item == Some(item));
            join(&mut self.published, known.map(|a| a.release));
        }
        let release = releases.then_some(self.published.as_slice());
        let event = AtomicEvent { entity, group: self.cx.group, order: atomic.order, scope: atomic.scope, wrote, rmw };
        let (space, _, _) = split(access.addr);
        let read = &mut self.read;
        let missed = if space == SPACE_LOCAL {
            // Relaxed local atomics (histogram bins) publish nothing: skip the bookkeeping unless
            // the location already carries releases.
            let plain = release.is_none() && !acquires && event.order == MemOrder::Relaxed;
            match self.local_sync.get_mut(&access.addr) {
                Some(object) => object.apply(&event, release, acquires, read),
                None if plain => {
                    read.clear();
                    None
                }
                None => self.local_sync.entry(access.addr).or_default().apply(&event, release, acquires, read),
            }
        } else {
            let mut stripe = self.held.take().unwrap_or_else(|| self.cx.launch.sync.lock(access.addr));
            stripe.entry(access.addr).or_default().apply(&event, release, acquires, read)
        };
        if acquires && !self.read.is_empty() {
            let from = self.cx.tick();
            for release in self.read.iter() {
                self.cx.acquired.push(Acquired { item: Some(item), from, release: *release });
            }
        } else if reads && !acquires {
            // Nothing to keep for a work-item with no sync state when nothing could be acquired
            // (a histogram's relaxed adds to global bins): its list is empty as it is.
            let GroupState { items, read, .. } = self;
            if item as usize >= items.len() && !read.is_empty() {
                items.resize(item as usize + 1, ItemSync::default());
            }
            if let Some(state) = items.get_mut(item as usize) {
                state.could_acquire.clear();
                state.could_acquire.extend_from_slice(read);
            }
        }
        if let Some((writer, why)) = missed {
            self.cx.links.push(Link { reader: entity, writer, why, loc: access.loc });
        }
        self.word(item, access, AccessType::Atomic, wrote);
    }

    /// The loads of a tile's row by every row of the group ([`GroupHooks::load_periodic`]): of
    /// `__local` words on pages of word cells, with no async copy pending and no lockstep clocks,
    /// the site and the barrier are looked up once and each element's lanes are checked as
    /// [`local_load_same`] checks them (a word's third and later readers change nothing); any
    /// other element as [`GroupState::load_same`] takes it.
    fn load_periodic(&mut self, lanes: &[u32], period: usize, access: &Access, addr: impl Fn(usize) -> u64) {
        let period = period.min(lanes.len());
        self.load_elements(access, period, addr, |j| lanes[j..].iter().step_by(period));
    }

    /// The loads of blocks of `block` consecutive lanes each reading one element
    /// ([`GroupHooks::load_blocks`]: a tile's column read by each row of the group), checked
    /// element by element as [`GroupState::load_periodic`] checks its elements.
    fn load_blocks(&mut self, lanes: &[u32], block: usize, access: &Access, addr: impl Fn(usize) -> u64) {
        let block = block.max(1);
        self.load_elements(access, lanes.len().div_ceil(block), addr, |j| lanes[j * block..].iter().take(block));
    }

    /// The loads of `count` elements, element `j` at `addr(j)` read by the work-items `elem(j)`
    /// in turn: runs of them [`GroupState::quick_elements`] takes, and each other element as
    /// [`GroupState::load_same`] takes it.
    fn load_elements<'l, E: Iterator<Item = &'l u32> + Clone>(
        &mut self,
        access: &Access,
        count: usize,
        addr: impl Fn(usize) -> u64,
        elem: impl Fn(usize) -> E,
    ) {
        let mut j = 0;
        while j < count {
            j += self.quick_elements(access, j..count, &addr, &elem);
            if j < count {
                let mut each = std::mem::take(&mut self.shadow.lanes);
                each.clear();
                each.extend(elem(j));
                self.load_same(&each, &Access { addr: addr(j), ..*access });
                self.shadow.lanes = each;
                j += 1;
            }
        }
    }

    /// The loads of the elements `range` (as [`GroupState::load_elements`] has them) from the
    /// first on, while each is an aligned `__local` word on a page of word cells, with no async
    /// copy pending and no lockstep clocks: each checked as [`local_load_same`] checks it, with
    /// the site, barrier and place looked up once and the last element's page kept for the next.
    /// How many it took.
    fn quick_elements<'l, E: Iterator<Item = &'l u32>>(
        &mut self,
        access: &Access,
        range: std::ops::Range<usize>,
        addr: &impl Fn(usize) -> u64,
        elem: &impl Fn(usize) -> E,
    ) -> usize {
        let quick =
            quick_barrier(&self.cx, LOCAL).filter(|_| access.size as usize == WORD && self.cx.lockstep.is_none());
        let Some(barrier) = quick else { return 0 };
        // Numbered here if new, as before any element is checked.
        let site = self.cx.launch.sites.site(access.loc);
        let GroupState { cx, shadow, races, .. } = self;
        let mut base = This::new(Stamped::EMPTY, None, AccessType::Load, false, cx.place(true, 0), access.loc);
        let mut last: Option<(u64, &mut [WordCell])> = None;
        let count = range.len();
        for (done, j) in range.enumerate() {
            let at = addr(j);
            let (space, allocation, offset) = split(at);
            let in_page = offset as usize % PAGE;
            if space != SPACE_LOCAL || !in_page.is_multiple_of(WORD) {
                return done;
            }
            let page_at = at / PAGE as u64;
            let words = match last.take() {
                Some((p, words)) if p == page_at => words,
                _ => match shadow.local.stamped_page(allocation as usize, offset as usize / PAGE, cx.stamp, false).1 {
                    GroupPage::Words(words) => &mut words[..],
                    GroupPage::Bytes(..) => return done,
                },
            };
            base.place.allocation = allocation as u32;
            local_word_load(cx, races, &mut words[in_page / WORD], elem(j), (&mut base, site), offset, barrier);
            last = Some((page_at, words));
        }
        count
    }

    /// One load of an address by several work-items (see [`GroupHooks::load_same`]): when it is
    /// whole words on a page of word cells, the address, site and page are looked up once and
    /// each lane checks the same cells; otherwise (and under lockstep clocks) lane by lane.
    fn load_same(&mut self, lanes: &[u32], access: &Access) {
        let (space, allocation, offset) = split(access.addr);
        let Some(is_local) = checked_local(space) else { return };
        if !is_local && self.cx.launch.read_only(allocation as u32) {
            return;
        }
        let size = access.size as usize;
        let (page_index, in_page) = (offset as usize / PAGE, offset as usize % PAGE);
        let whole_words = in_page.is_multiple_of(WORD) && size.is_multiple_of(WORD) && in_page + size <= PAGE;
        let bytes = in_page..in_page + size;
        let page = (whole_words && self.cx.lockstep.is_none()).then(|| {
            let local = is_local.then_some(false);
            touched_page(&mut self.shadow, &mut self.dirty, &self.cx, local, (allocation, page_index), bytes).1
        });
        let Some(GroupPage::Words(words)) = page else {
            for &l in lanes {
                self.access(Some(l), access, AccessType::Load, false);
            }
            return;
        };
        let cx = &self.cx;
        let cells = &mut words[in_page / WORD..(in_page + size) / WORD];
        let races = &mut self.races;
        if is_local && let Some(quick) = quick_barrier(cx, LOCAL) {
            return local_load_same(cx, races, cells, lanes, (allocation as u32, offset), access.loc, quick);
        }
        let site = cx.launch.sites.site(access.loc);
        let place = cx.place(is_local, allocation as u32);
        let mut base = This::new(Stamped::EMPTY, None, AccessType::Load, false, place, access.loc);
        let barrier = cx.barrier[if is_local { LOCAL } else { GLOBAL }];
        for (k, &l) in lanes.iter().enumerate() {
            // Once every cell holds two live plain reads and no live write, the remaining lanes
            // change nothing but the summary read, which the last of them sets.
            if k >= 2 && cx.copies.is_empty() && cells.iter().all(|c| read_saturated(c, barrier)) {
                let now = cx.lane_now(lanes[lanes.len() - 1], site, false, None);
                for cell in cells.iter_mut() {
                    cell.summary_read = now;
                }
                break;
            }
            let now = cx.lane_now(l, site, false, None);
            (base.now, base.by) = (now, Some(l));
            for (w, cell) in cells.iter_mut().enumerate() {
                if !is_local && cell.untouched(cx.serial) {
                    cell.record_first(&now, false, 0);
                } else {
                    check_cell(cx, races, cell, &base, offset + (w * WORD) as u64, 0u32);
                }
            }
        }
    }

    /// Relaxed atomics of one instruction on `__local` memory (histogram bins): what
    /// [`GroupState::atomic`] and [`GroupState::access`] do for each, with the site, stamp and
    /// place set up once. Anything that publishes or acquires, a pending release fence, or
    /// lockstep clocks take the general path part by part.
    fn local_atomics(&mut self, lanes: &[LaneAtomic], inst: &AtomicInst) {
        let relaxed = inst.order == MemOrder::Relaxed && inst.fail_order == MemOrder::Relaxed;
        let fenced = |l: &LaneAtomic| self.items.get(l.item as usize).is_some_and(|i| i.fence_release.is_some());
        let fenced = self.released && lanes.iter().any(fenced);
        if !relaxed || !self.local_sync.is_empty() || self.cx.lockstep.is_some() || fenced {
            for lane in lanes {
                let mut bytes = [0; 8];
                GroupHooks::access(self, lane.item, &lane.access(inst, &mut bytes));
            }
            return;
        }
        // A relaxed read acquires nothing, and could acquire nothing for a later fence.
        self.read.clear();
        let rmw = !matches!(inst.op, AtomicOp::Load | AtomicOp::Store | AtomicOp::FlagClear);
        let site = self.cx.launch.sites.site(inst.loc);
        let head = Record::new(site, Entity::Item(0), self.cx.stamp, true, 0);
        let mut rest = lanes;
        while !rest.is_empty() {
            let done = relaxed_local_atomics(self, rest, inst, rmw, head);
            // The lane after those is one the general path takes: bytes, or a misaligned word.
            let Some(lane) = rest.get(done) else { break };
            if (rmw || lane.wrote.is_none())
                && let Some(item) = self.items.get_mut(lane.item as usize)
            {
                item.could_acquire.clear();
            }
            let mut bytes = [0; 8];
            let access = lane.access(inst, &mut bytes);
            self.access(Some(lane.item), &access, AccessType::Atomic, lane.wrote.is_some());
            rest = &rest[done + 1..];
        }
    }

    /// Gathers the group's global summaries, as runs of cells whose accesses differ at most in a
    /// work-item id that steps by one (never across a kernel-wide page), and frees the touched
    /// pages for the next group.
    fn take_summaries(&mut self) -> Summaries {
        // Summary buffers circulate between groups and the merge: no large allocation per group.
        let mut out = self.cx.launch.spares.take_buffer(|home| Summaries { home, ..Summaries::default() });
        let mut dirty = std::mem::take(&mut self.dirty);
        dirty.sort_unstable();
        let serial = self.cx.serial;
        for &(allocation, page_index) in &dirty {
            let global = &mut self.shadow.global;
            // Every dirty page is there: it was made when it was first marked, and is taken once.
            let Some(TakenPage { touched, deferred, page }) =
                global.take_page(allocation as usize, page_index as usize)
            else {
                continue;
            };
            let base = (page_index as usize * PAGE) as u64;
            match &page {
                _ if let Some((at, first)) = deferred => {
                    // One deferred store (its page, if any, holds none of it): its first word's
                    // write, and the stored bytes kept apart.
                    let stored = &global.deferred_bytes()[at..at + touched.len()];
                    out.add_stores(allocation, base + touched.start as u64, mine(&first, serial), stored);
                }
                None => {}
                Some(GroupPage::Words(words)) => {
                    let first = touched.start / WORD;
                    let cells = &words[first..touched.end.div_ceil(WORD)];
                    let summary = |k: usize| {
                        let cell = &cells[k];
                        (mine(&cell.summary_write, serial), mine(&cell.summary_read, serial), cell.summary_data)
                    };
                    out.add_words(allocation, base + (first * WORD) as u64, cells.len(), summary);
                }
                Some(GroupPage::Bytes(bytes)) => {
                    for (i, cell) in bytes[touched.clone()].iter().enumerate() {
                        summarise(&mut out, allocation, base + (touched.start + i) as u64, cell, serial);
                    }
                }
            }
            global.recycle(page);
        }
        self.shadow.global.clear_deferred();
        self.shadow.dirty = dirty;
        out
    }

    /// Ends the group: returns its worker shadow and what the launch merges.
    pub fn finish(mut self) -> (Box<WorkerShadow>, GroupResult) {
        self.shadow.charge_growth(self.cx.launch);
        let summaries = self.take_summaries();
        self.shadow.next_stamp = self.cx.stamp.wrapping_add(1);
        self.shadow.entities = std::mem::take(&mut self.cx.entities);
        let result = GroupResult {
            group: self.cx.group,
            stamps: (self.cx.serial, self.cx.stamp),
            summaries,
            acquired: self.cx.acquired,
            links: self.cx.links,
            races: self.races,
            charged: 0,
        };
        (self.shadow, result)
    }
}

/// What a reported race says about why its accesses were not ordered.
pub fn reported_reason(launch: &Shared, reason: &Reason) -> RaceReason {
    match *reason {
        Reason::Missed { link, direct } => match link.why {
            MissedSync::Relaxed => RaceReason::Relaxed { at: link.loc, direct },
            MissedSync::Scope => RaceReason::GroupScope { at: link.loc },
        },
        Reason::FenceOnly { group, local } => RaceReason::FenceOnly { group, local },
        Reason::NoBarrier { group } => RaceReason::NoBarrier { group },
        Reason::CopyInFlight { group, site } => RaceReason::CopyInFlight { group, copy: launch.sites.loc(site) },
        Reason::Groups { first, second } => {
            let g = &launch.geometry;
            RaceReason::Groups { first: g.group_id(first), second: g.group_id(second) }
        }
    }
}

/// For an address space the detector checks, whether it is local memory (else global); None for
/// the others.
#[inline(always)]
fn checked_local(space: u64) -> Option<bool> {
    match space {
        SPACE_GLOBAL => Some(false),
        SPACE_LOCAL => Some(true),
        _ => None,
    }
}

/// The plain loads (stores if `WRITE`) of a word each of [`GroupState::each`] from the first of
/// `lanes` on, up to the first that is not an aligned word of `__local` memory on a page of word
/// cells (returned: how many were done). `lane(l)` gives work-item `l`'s address and stored
/// value; the lanes' records differ only in the work-item (`head` is work-item 0's), and the
/// page of the last lane is kept for the next.
#[inline(always)]
fn local_words<const WRITE: bool>(
    state: &mut GroupState,
    lanes: &[u32],
    head: Record,
    mut base: This<()>,
    lane: &impl Fn(u32) -> (u64, u64),
) -> usize {
    let GroupState { cx, shadow, races, .. } = state;
    let quick = quick_barrier(cx, LOCAL);
    let mut last: Option<(u64, &mut [WordCell])> = None;
    for (k, &l) in lanes.iter().enumerate() {
        let (addr, value) = lane(l);
        let (space, allocation, offset) = split(addr);
        if space != SPACE_LOCAL || !(offset as usize).is_multiple_of(WORD) {
            return k;
        }
        let page_at = addr / PAGE as u64;
        let words = match last.take() {
            Some((p, words)) if p == page_at => words,
            _ => match shadow.local.stamped_page(allocation as usize, offset as usize / PAGE, cx.stamp, WRITE).1 {
                GroupPage::Words(words) => &mut words[..],
                GroupPage::Bytes(..) => return k,
            },
        };
        let now = Stamped { record: head.advanced_full(cx.entities[l as usize]), stamp: cx.stamp };
        (base.now, base.by, base.place.allocation) = (now, Some(l), allocation as u32);
        let data = if WRITE { value as u32 } else { 0 };
        check_item_cell(cx, races, &mut words[offset as usize % PAGE / WORD], &base, (offset, data), quick);
        last = Some((page_at, words));
    }
    lanes.len()
}

/// The relaxed local atomics of [`GroupState::local_atomics`] from the first of `lanes` on, up
/// to the first that falls on a page of byte cells or is not whole aligned words (returned: how
/// many were done). The lanes' records differ only in the work-item (`head` is the record of
/// work-item 0), and the page of the last lane is kept for the next (the lanes of a histogram's
/// update mostly hit the same page of bins). A word written where only atomics are live (a bin)
/// is updated inline ([`atomic_update`]); anything else is checked in full.
#[inline(always)]
fn relaxed_local_atomics(
    state: &mut GroupState,
    lanes: &[LaneAtomic],
    inst: &AtomicInst,
    rmw: bool,
    head: Record,
) -> usize {
    let GroupState { cx, shadow, items, races, .. } = state;
    let size = inst.size as usize;
    if !(size.is_power_of_two() && size.is_multiple_of(WORD) && size <= PAGE) {
        return 0;
    }
    let mut base = This::new(Stamped::EMPTY, None, AccessType::Atomic, false, cx.place(true, 0), inst.loc);
    let quick = quick_barrier(cx, LOCAL);
    // What a relaxed read could acquire is only kept by work-items that have a sync state.
    let clear = !items.is_empty();
    let stamp = cx.stamp;
    let mut last: Option<(u64, &mut [WordCell])> = None;
    for (k, lane) in lanes.iter().enumerate() {
        let (_, allocation, offset) = split(lane.addr);
        // Parts are aligned to their power-of-two size: they never straddle a page.
        if offset as usize & (size - 1) != 0 {
            return k;
        }
        let page_at = lane.addr / PAGE as u64;
        let words = match last.take() {
            Some((p, words)) if p == page_at => words,
            _ => match shadow.local.stamped_page(allocation as usize, offset as usize / PAGE, stamp, true).1 {
                GroupPage::Words(words) => &mut words[..],
                GroupPage::Bytes(..) => return k,
            },
        };
        if clear
            && (rmw || lane.wrote.is_none())
            && let Some(item) = items.get_mut(lane.item as usize)
        {
            item.could_acquire.clear();
        }
        let now = Stamped { record: head.advanced_full(cx.entities[lane.item as usize]), stamp };
        let in_page = offset as usize % PAGE;
        let stored = lane.wrote.unwrap_or(0);
        match (lane.wrote, quick) {
            (Some(_), Some(barrier)) if size == WORD => {
                let cell = &mut words[in_page / WORD];
                if !atomic_update(cell, now, stored as u32, barrier) {
                    (base.now, base.by, base.write, base.place.allocation) =
                        (now, Some(lane.item), true, allocation as u32);
                    check_item_cell(cx, races, cell, &base, (offset, stored as u32), quick);
                }
            }
            _ => {
                let write = lane.wrote.is_some();
                (base.now, base.by, base.write, base.place.allocation) =
                    (now, Some(lane.item), write, allocation as u32);
                for (w, cell) in words[in_page / WORD..(in_page + size) / WORD].iter_mut().enumerate() {
                    let data = (stored >> (32 * w)) as u32;
                    check_item_cell(cx, races, cell, &base, (offset + (w * WORD) as u64, data), quick);
                }
            }
        }
        last = Some((page_at, words));
    }
    lanes.len()
}

/// The group's shadow page `page_index` of an allocation, for an access to `bytes` of it now.
/// `local` is None for global memory, else whether the access may change a cell otherwise than
/// a plain load by a work-item does (see [`GroupShadow::stamped_page`]). A `__local` page is
/// stamped with the group's stamp, and comes with the stamp it had (if that is older than the
/// last barrier of local memory, every record on the page is); a global page is marked as
/// touched there by the group (`u32::MAX` for the stamp), and listed in `dirty` when this is the
/// group's first touch of it.
#[inline(always)]
fn touched_page<'s>(
    shadow: &'s mut WorkerShadow,
    dirty: &mut Vec<(u32, u32)>,
    cx: &Context,
    local: Option<bool>,
    (allocation, page_index): (u64, usize),
    bytes: std::ops::Range<usize>,
) -> (u32, &'s mut GroupPage) {
    if let Some(changes) = local {
        return shadow.local.stamped_page(allocation as usize, page_index, cx.stamp, changes);
    }
    let (fresh, page) = shadow.global.marked_page(allocation as usize, page_index, cx.serial, bytes.start, bytes.end);
    if fresh {
        dirty.push((allocation as u32, page_index as u32));
    }
    (u32::MAX, page)
}

/// A cell's summary record as the group whose first stamp is `serial` hands it on: empty when
/// an earlier group left it (cells are never cleared: the next group's stamps make them stale).
#[inline(always)]
fn mine(s: &Stamped, serial: u32) -> Stamped {
    // Kernel-wide records keep the stamp's low bits counted from the group's first, the same in
    // every group with the same barriers: records of many groups then share heads.
    if s.stamp >= serial {
        Stamped { record: s.record.canonical(s.stamp.wrapping_sub(serial)), stamp: s.stamp }
    } else {
        Stamped::EMPTY
    }
}

/// Adds a cell's group summary to `out`.
#[inline]
fn summarise<P: Payload>(out: &mut Summaries, allocation: u32, offset: u64, cell: &Cell<P>, serial: u32) {
    let (write, read) = (mine(&cell.summary_write, serial), mine(&cell.summary_read, serial));
    if write.record.is_empty() && read.record.is_empty() {
        return;
    }
    out.add(allocation, offset, write, read, cell.summary_data);
}

impl GroupHooks for GroupState<'_> {
    fn poll(&mut self) -> Result<(), ExecError> {
        self.shadow.charge_growth(self.cx.launch);
        self.cx.launch.check()
    }

    #[inline]
    fn access(&mut self, item: u32, access: &Access) {
        if self.untracked(access) {
            return;
        }
        match access.kind {
            AccessKind::Load => self.word(item, access, AccessType::Load, false),
            AccessKind::Store => self.word(item, access, AccessType::Store, true),
            AccessKind::Atomic(atomic) => self.atomic(item, access, atomic),
        }
    }

    #[inline(always)]
    fn hears_plain(&self, addr: u64) -> bool {
        let (space, allocation, _) = split(addr);
        !(space == SPACE_GLOBAL && self.cx.launch.read_only(allocation as u32))
    }

    #[inline(always)]
    fn access_lanes(&mut self, first: u32, count: u32, access: &Access) {
        if !self.untracked(access) {
            self.tracked_rows(first, (count, 1), 0, access);
        }
    }

    #[inline(always)]
    fn access_rows(&mut self, first: u32, rows: (u32, u32), stride: u64, access: &Access) {
        if !self.untracked(access) {
            self.tracked_rows(first, rows, stride, access);
        }
    }

    #[inline]
    fn access_each(&mut self, lanes: &[u32], access: &Access, lane: impl Fn(u32) -> (u64, u64)) {
        match access.kind {
            AccessKind::Load => self.each(lanes, access, false, lane),
            AccessKind::Store => self.each(lanes, access, true, lane),
            // Not meant for atomics: taken lane by lane, as each would have come.
            AccessKind::Atomic(_) => {
                for &l in lanes {
                    let (addr, value) = lane(l);
                    let bytes = value.to_le_bytes();
                    let stored = &bytes[..(access.size as usize).min(8)];
                    GroupHooks::access(self, l, &Access { addr, stored, ..*access });
                }
            }
        }
    }

    fn local_atomics(&mut self, lanes: &[LaneAtomic], inst: &AtomicInst) {
        GroupState::local_atomics(self, lanes, inst);
    }

    #[inline]
    fn load_same(&mut self, lanes: &[u32], access: &Access) {
        if self.untracked(access) {
            return;
        }
        GroupState::load_same(self, lanes, access);
    }

    #[inline]
    fn load_periodic(&mut self, lanes: &[u32], period: usize, access: &Access, addr: impl Fn(usize) -> u64) {
        if !GroupHooks::hears_plain(self, addr(0)) {
            return;
        }
        GroupState::load_periodic(self, lanes, period, access, addr);
    }

    #[inline]
    fn load_blocks(&mut self, lanes: &[u32], block: usize, access: &Access, addr: impl Fn(usize) -> u64) {
        if !GroupHooks::hears_plain(self, addr(0)) {
            return;
        }
        GroupState::load_blocks(self, lanes, block, access, addr);
    }

    fn atomic_section(&mut self, addr: u64, run: impl FnOnce() -> AtomicResult) -> AtomicResult {
        // Global atomics only (see the trait). Memory operation and bookkeeping under one lock: releases are seen in memory order.
        // A faulting atomic is not reported, so its lock is not kept.
        let stripe = self.cx.launch.sync.lock(addr);
        let result = run();
        if result.is_ok() {
            self.held = Some(stripe);
        }
        result
    }

    fn group_access(&mut self, access: &Access) {
        let (kind, write) = match access.kind {
            AccessKind::Store => (AccessType::Store, true),
            _ => (AccessType::Load, false),
        };
        self.access(None, access, kind, write);
    }

    fn async_copy(&mut self, _item: u32, event: u64, loc: u32) {
        let site = self.cx.launch.sites.site(loc);
        let cx = &mut self.cx;
        if !cx.copies.iter().any(|c| c.site == site && c.event == event && !c.done) {
            cx.copies.push(PendingCopy { site, event, start: cx.stamp, waited: false, done: false });
        }
    }

    fn wait_event(&mut self, _item: u32, event: u64) {
        for copy in self.cx.copies.iter_mut().filter(|c| c.event == event) {
            copy.waited = true;
        }
    }

    fn barrier(&mut self, fence: Fence, _scope: Scope, loc: u32) {
        let fence = self.take_marks(fence, loc, 0..self.items.len());
        let cx = &mut self.cx;
        if cx.copies.iter().any(|c| c.waited && !c.done) {
            for copy in cx.copies.iter_mut() {
                copy.done |= copy.waited;
            }
            // A finished copy is forgotten once no earlier copy of its site is pending: its
            // records then belong to no copy, which reads as finished too.
            let mut keep = Vec::with_capacity(cx.copies.len());
            for (i, copy) in cx.copies.iter().enumerate() {
                keep.push(!copy.done || cx.copies[..i].iter().any(|p| p.site == copy.site && !p.done));
            }
            let mut flags = keep.into_iter();
            cx.copies.retain(|_| flags.next().unwrap_or(true));
        }
        let stamp = cx.tick();
        cx.any_barrier = stamp;
        if fence.local {
            cx.barrier[LOCAL] = stamp;
        }
        if fence.global {
            cx.barrier[GLOBAL] = stamp;
        }
        // What one work-item acquired, the barrier shares with all.
        for i in 0..cx.acquired.len() {
            let a = cx.acquired[i];
            if a.item.is_some() {
                cx.acquired.push(Acquired { item: None, from: stamp, release: a.release });
            }
        }
    }

    fn sub_group_barrier(&mut self, sub_group: u32, width: u32, fence: Fence, loc: u32) {
        let first = sub_group as usize * width as usize;
        let fence = self.take_marks(fence, loc, first..first + width as usize);
        let cx = &mut self.cx;
        if cx.sub_group_width != width {
            cx.sub_group_width = width.max(1);
            cx.sub_group_barriers.clear();
        }
        let stamp = cx.tick();
        let s = sub_group as usize;
        if s >= cx.sub_group_barriers.len() {
            cx.sub_group_barriers.resize(s + 1, [0; 2]);
        }
        if fence.local {
            cx.sub_group_barriers[s][LOCAL] = stamp;
        }
        if fence.global {
            cx.sub_group_barriers[s][GLOBAL] = stamp;
        }
    }

    fn lanes_active(&mut self, lanes: &[u32]) {
        if let Some(clocks) = &mut self.cx.lockstep {
            clocks.lanes_active(lanes);
        }
    }

    fn fence(&mut self, item: u32, fence: Fence, order: MemOrder, scope: Scope, loc: u32) {
        if BarrierMark::is_marker(order, scope) {
            let mark = &mut self.item(item).barrier_mark;
            let mut flags = match *mark {
                Some(m) if m.loc == loc => m.fence,
                _ => Fence::default(),
            };
            flags.local |= fence.local;
            flags.global |= fence.global;
            *mark = Some(BarrierMark { loc, fence: flags });
            self.marked = true;
            return;
        }
        if order.releases() {
            self.item(item).fence_release = Some(scope);
            self.released = true;
        }
        if order.acquires() {
            let pending = std::mem::take(&mut self.item(item).could_acquire);
            if !pending.is_empty() {
                let from = self.cx.tick();
                for release in pending {
                    self.cx.acquired.push(Acquired { item: Some(item), from, release });
                }
            }
        }
    }
}
