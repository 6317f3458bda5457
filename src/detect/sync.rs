//! The OpenCL 2.0 memory model's synchronisation between work-items: releases published on atomic
//! objects, acquires that take them, and the happens-before questions the detector asks.
//!
//! A release by work-item X of group G at stamp s promises: every access X made before it (stamp
//! below s), and every access of G ordered before it by a barrier (stamp below G's last barrier
//! of that space), happens before whatever follows an acquire that reads the released value. A
//! sync object (one per atomic location) holds the releases its current value carries: a release
//! store replaces them, a release read-modify-write adds to them (a release sequence), a relaxed
//! read-modify-write keeps them, a relaxed store drops them. An acquire reading the object copies
//! them into the acquirer's knowledge, unless the scopes do not cover both work-items (work-group
//! scope across groups). Barriers share what any work-item of the group has acquired.
//!
//! Everything here is off the hot path: only atomics and fences come here.

use std::collections::BTreeMap;

use parking_lot::Mutex;

use super::record::Entity;
use crate::ir::{MemOrder, Scope};

/// What one release published.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Release {
    pub group: u32,
    pub item: u32,
    /// The releaser's group stamp right after the release: its earlier accesses are below it.
    pub stamp: u32,
    /// The releasing group's last barrier stamps, `[local, global]`, at the release.
    pub barrier: [u32; 2],
    /// The release used work-group scope: it reaches only its own group.
    pub group_scope: bool,
}

/// A release that a work-item (or, after a barrier, every work-item of the group) has acquired.
#[derive(Debug, Clone, Copy)]
pub struct Acquired {
    /// The local linear id of the acquirer, or None for every work-item of the group.
    pub item: Option<u32>,
    /// The acquirer's stamp when it acquired: accesses at or after it are covered.
    pub from: u32,
    pub release: Release,
}

/// Why an atomic read did not synchronise with the write it read (for race reasons).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MissedSync {
    /// One side was relaxed (OpenCL 1.x atomics are relaxed).
    Relaxed,
    /// Work-group scope across two groups.
    Scope,
}

/// A read that took its value from another entity's atomic write without ordering anything.
#[derive(Debug, Clone, Copy)]
pub struct Link {
    pub reader: Entity,
    pub writer: Entity,
    pub why: MissedSync,
    /// The reading instruction's location (module index).
    pub loc: u32,
}

/// The state of one atomic location.
#[derive(Debug, Default, Clone)]
pub struct SyncObject {
    releases: Vec<Release>,
    /// Who wrote the current value, with which order.
    last_writer: Option<(Entity, MemOrder)>,
}

/// One atomic operation, as the sync layer needs it.
#[derive(Debug, Clone, Copy)]
pub struct AtomicEvent {
    pub entity: Entity,
    pub group: u32,
    pub order: MemOrder,
    pub scope: Scope,
    pub wrote: bool,
    /// A read-modify-write (rather than a plain atomic load or store).
    pub rmw: bool,
}

impl SyncObject {
    /// Applies one atomic operation. `release` is what this operation publishes if it releases:
    /// its own release and everything its work-item had acquired (happens-before is transitive).
    /// Leaves in `acquired` the releases it read (to acquire), and returns why it could not
    /// synchronise with the write it read, if it could not.
    pub fn apply(
        &mut self,
        event: &AtomicEvent,
        release: Option<&[Release]>,
        acquire: bool,
        acquired: &mut Vec<Release>,
    ) -> Option<(Entity, MissedSync)> {
        acquired.clear();
        let mut missed = None;
        let reads = event.rmw || !event.wrote;
        if reads
            && let Some((writer, write_order)) = self.last_writer
            && writer != event.entity
        {
            let scoped_out = |r: &Release| r.group != event.group && (r.group_scope || event.scope < Scope::Device);
            if acquire && !self.releases.is_empty() {
                acquired.extend(self.releases.iter().copied().filter(|r| !scoped_out(r)));
                if acquired.len() < self.releases.len() {
                    missed = Some((writer, MissedSync::Scope));
                }
            } else if !write_order.releases() || !acquire {
                missed = Some((writer, MissedSync::Relaxed));
            }
        }
        if event.wrote {
            match (release, event.rmw) {
                (Some(r), true) => join(&mut self.releases, r.iter().copied()),
                (Some(r), false) => {
                    self.releases.clear();
                    self.releases.extend_from_slice(r);
                }
                (None, true) => {}
                (None, false) => self.releases.clear(),
            }
            self.last_writer = Some((event.entity, if release.is_some() { MemOrder::Release } else { event.order }));
        }
        missed
    }
}

/// Adds `more` to `set`, keeping one release per work-item: the latest (what it covers grows).
pub fn join(set: &mut Vec<Release>, more: impl IntoIterator<Item = Release>) {
    for r in more {
        match set.iter_mut().find(|s| s.group == r.group && s.item == r.item) {
            Some(s) if s.stamp < r.stamp => *s = r,
            Some(_) => {}
            None => set.push(r),
        }
    }
}

/// A locked stripe of sync objects.
pub type SyncGuard<'a> = parking_lot::MutexGuard<'a, BTreeMap<u64, SyncObject>>;

/// The sync objects of global memory, shared by all groups (striped locks).
pub struct GlobalSync {
    stripes: Vec<Mutex<BTreeMap<u64, SyncObject>>>,
}

const STRIPES: usize = 64;

impl GlobalSync {
    pub fn new() -> GlobalSync {
        GlobalSync { stripes: (0..STRIPES).map(|_| Mutex::new(BTreeMap::new())).collect() }
    }

    /// Locks the stripe of `addr`: hold it across an atomic and its bookkeeping.
    pub fn lock(&self, addr: u64) -> SyncGuard<'_> {
        self.stripes[(addr as usize >> 2) % STRIPES].lock()
    }
}

/// Whether a group's acquired releases order an access of (`group`, `item`, `stamp`) in `space`
/// (0 local, 1 global) before an access by local work-item `by` at stamp `at` of that group.
pub fn covered(
    acquired: &[Acquired],
    by: Option<u32>,
    at: u32,
    group: u32,
    item: u32,
    stamp: u32,
    space: usize,
) -> bool {
    acquired.iter().any(|a| {
        a.from <= at
            && (a.item.is_none() || by.is_none() || a.item == by)
            && a.release.group == group
            && ((a.release.item == item && stamp < a.release.stamp) || stamp < a.release.barrier[space])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(entity: u32, group: u32, order: MemOrder, wrote: bool, rmw: bool) -> AtomicEvent {
        AtomicEvent { entity: Entity::Item(entity), group, order, scope: Scope::Device, wrote, rmw }
    }

    /// What an atomic read: the releases it acquired, and why it missed a synchronisation.
    struct Outcome {
        acquired: Vec<Release>,
        missed: Option<(Entity, MissedSync)>,
    }

    fn apply(object: &mut SyncObject, event: &AtomicEvent, release: Option<&[Release]>, acquire: bool) -> Outcome {
        let mut acquired = vec![release_of_nothing()];
        let missed = object.apply(event, release, acquire, &mut acquired);
        Outcome { acquired, missed }
    }

    /// A stale entry the buffer holds before `apply`, which must clear it.
    fn release_of_nothing() -> Release {
        release(99, 99, 99)
    }

    fn release(group: u32, item: u32, stamp: u32) -> Release {
        Release { group, item, stamp, barrier: [0, 0], group_scope: false }
    }

    #[test]
    fn release_store_then_acquire_load_synchronises() {
        let mut object = SyncObject::default();
        apply(&mut object, &event(1, 0, MemOrder::Release, true, false), Some(&[release(0, 1, 5)]), false);
        let read = apply(&mut object, &event(9, 1, MemOrder::Acquire, false, false), None, true);
        assert_eq!(read.acquired, vec![release(0, 1, 5)]);
        assert!(read.missed.is_none());
    }

    #[test]
    fn relaxed_pairs_miss_and_say_why() {
        let mut object = SyncObject::default();
        apply(&mut object, &event(1, 0, MemOrder::Relaxed, true, false), None, false);
        let read = apply(&mut object, &event(9, 1, MemOrder::Acquire, false, false), None, true);
        assert!(read.acquired.is_empty());
        assert_eq!(read.missed, Some((Entity::Item(1), MissedSync::Relaxed)));
    }

    #[test]
    fn work_group_scope_does_not_reach_another_group() {
        let mut object = SyncObject::default();
        let mut narrow = release(0, 1, 5);
        narrow.group_scope = true;
        apply(&mut object, &event(1, 0, MemOrder::Release, true, false), Some(&[narrow]), false);
        let other = apply(&mut object, &event(9, 1, MemOrder::Acquire, false, false), None, true);
        assert_eq!(other.missed, Some((Entity::Item(1), MissedSync::Scope)));
        let same = apply(&mut object, &event(2, 0, MemOrder::Acquire, false, false), None, true);
        assert_eq!(same.acquired, vec![narrow]);
    }

    #[test]
    fn read_modify_writes_accumulate_a_release_sequence() {
        let mut object = SyncObject::default();
        apply(&mut object, &event(1, 0, MemOrder::AcqRel, true, true), Some(&[release(0, 1, 3)]), true);
        apply(&mut object, &event(5, 1, MemOrder::AcqRel, true, true), Some(&[release(1, 5, 4)]), true);
        let last = apply(&mut object, &event(9, 2, MemOrder::AcqRel, true, true), Some(&[release(2, 9, 2)]), true);
        assert_eq!(last.acquired, vec![release(0, 1, 3), release(1, 5, 4)]);
    }

    #[test]
    fn coverage_respects_item_stamp_and_barriers() {
        let mut r = release(3, 7, 10);
        r.barrier = [0, 6];
        let acquired = [Acquired { item: Some(2), from: 20, release: r }];
        assert!(covered(&acquired, Some(2), 25, 3, 7, 9, 1), "the releaser's own earlier access");
        assert!(!covered(&acquired, Some(2), 25, 3, 7, 10, 1), "after the release");
        assert!(covered(&acquired, Some(2), 25, 3, 8, 5, 1), "another item, before a global barrier");
        assert!(!covered(&acquired, Some(2), 25, 3, 8, 5, 0), "that barrier did not fence local memory");
        assert!(!covered(&acquired, Some(4), 25, 3, 7, 9, 1), "a work-item that did not acquire");
        assert!(!covered(&acquired, Some(2), 15, 3, 7, 9, 1), "before the acquire");
    }
}
