//! Deduplication of the emulator's findings: one report per instruction (out-of-bounds,
//! access-mode, misaligned and array-index findings by source location, access kind and
//! allocation; uninitialised values by source location and use; barrier divergences by the two barriers),
//! shown at its first occurrence in NDRange order with a count of occurrences.
//!
//! A work-group logs its findings in a [`FindingLog`] as it runs (at most [`MAX_KEPT`] distinct
//! ones; further distinct ones are only counted); a worker thread folds the logs of the groups
//! it ran into a [`WorkerFindings`]; the launch merges the workers' in NDRange order
//! ([`merge`]). Each group's log depends only on the group, so the result is the same whatever
//! the number of threads. This module sees findings only, not how they were found.

use std::collections::HashMap;

use super::Finding;

/// Distinct findings kept per work-group and per launch; the rest are counted.
pub const MAX_KEPT: usize = 1000;

/// Roughly the bytes one kept finding holds (for memory accounting).
pub const FINDING_BYTES: u64 = 256;

/// What makes two findings the same report.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    OutOfBounds { store: bool, space: &'static str, allocation: String, loc: u32 },
    ImageOutOfBounds { store: bool, image: String, loc: u32 },
    Divergence { barrier: u32, other_barrier: Option<u32> },
    Livelock { loc: u32 },
    Deadlock { locs: Vec<u32> },
    AccessMode { store: bool, allocation: String, loc: u32 },
    Misaligned { access: &'static str, space: &'static str, allocation: String, loc: u32 },
    ArrayIndex { space: &'static str, allocation: String, loc: u32 },
    AsyncCopy { problem: super::AsyncProblem, loc: u32 },
    Assertion { loc: u32 },
    Uninitialized { used: &'static str, loc: u32 },
}

fn key(finding: &Finding) -> Key {
    match finding {
        Finding::OutOfBounds { store, space, allocation, loc, .. } => {
            Key::OutOfBounds { store: *store, space, allocation: allocation.clone(), loc: *loc }
        }
        Finding::ImageOutOfBounds { store, image, loc, .. } => {
            Key::ImageOutOfBounds { store: *store, image: image.clone(), loc: *loc }
        }
        Finding::BarrierDivergence { barrier, other_barrier, .. } => {
            Key::Divergence { barrier: *barrier, other_barrier: *other_barrier }
        }
        Finding::SubGroupLivelock { loc, .. } => Key::Livelock { loc: *loc },
        Finding::Deadlock { waiting, .. } => {
            let mut locs: Vec<u32> = waiting.iter().map(|w| w.1).collect();
            locs.sort_unstable();
            locs.dedup();
            Key::Deadlock { locs }
        }
        Finding::AccessMode { store, allocation, loc, .. } => {
            Key::AccessMode { store: *store, allocation: allocation.clone(), loc: *loc }
        }
        Finding::Misaligned { access, space, allocation, loc, .. } => {
            Key::Misaligned { access, space, allocation: allocation.clone(), loc: *loc }
        }
        Finding::ArrayIndex { space, allocation, loc, .. } => {
            Key::ArrayIndex { space, allocation: allocation.clone(), loc: *loc }
        }
        Finding::AsyncCopy { problem, loc, .. } => Key::AsyncCopy { problem: *problem, loc: *loc },
        Finding::AssertionFailed { loc, .. } => Key::Assertion { loc: *loc },
        Finding::Uninitialized { used, loc, .. } => Key::Uninitialized { used, loc: *loc },
    }
}

/// Whether two findings are the same report (the same instruction, and for an out-of-bounds
/// access the same kind and allocation): how runs under other schedules are deduplicated.
pub fn same_report(a: &Finding, b: &Finding) -> bool {
    key(a) == key(b)
}

/// The findings of one work-group, deduplicated, in the order first found.
#[derive(Debug, Default)]
pub struct FindingLog {
    /// Each distinct finding's first occurrence and its count.
    entries: Vec<(Finding, u64)>,
    index: HashMap<Key, usize>,
    /// Occurrences of distinct findings past [`MAX_KEPT`].
    omitted: u64,
}

impl FindingLog {
    /// Logs one occurrence. Out of line and cold: the interpreter calls it from many places
    /// that must stay small.
    #[cold]
    #[inline(never)]
    pub fn push(&mut self, finding: Finding) {
        let key = key(&finding);
        if let Some(&i) = self.index.get(&key) {
            self.entries[i].1 += 1;
        } else if self.entries.len() < MAX_KEPT {
            self.index.insert(key, self.entries.len());
            self.entries.push((finding, 1));
        } else {
            self.omitted += 1;
        }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.omitted == 0
    }

    /// Distinct findings kept.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Empties the log for the next group, keeping its memory.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.index.clear();
        self.omitted = 0;
    }
}

/// The findings of the groups one worker ran, by key: each one's first occurrence (group
/// index in NDRange order, rank in the group) and its count.
#[derive(Debug, Default)]
pub struct WorkerFindings {
    entries: HashMap<Key, (u64, usize, Finding, u64)>,
    omitted: u64,
}

impl WorkerFindings {
    /// Folds in the log of group `group` (groups come in increasing order) and empties it.
    pub fn absorb(&mut self, group: u64, log: &mut FindingLog) {
        self.omitted += log.omitted;
        for (rank, (finding, count)) in log.entries.drain(..).enumerate() {
            match self.entries.entry(key(&finding)) {
                std::collections::hash_map::Entry::Occupied(mut e) => e.get_mut().3 += count,
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert((group, rank, finding, count));
                }
            }
        }
        log.clear();
    }

    /// Distinct findings held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.omitted == 0
    }
}

/// The launch's findings: the first [`MAX_KEPT`] distinct ones in NDRange order with their
/// counts, and how many occurrences were not kept.
#[derive(Debug, Default)]
pub struct Merged {
    pub findings: Vec<Finding>,
    pub counts: Vec<u64>,
    pub omitted: u64,
}

/// Merges the workers' findings.
pub fn merge(workers: Vec<WorkerFindings>) -> Merged {
    let mut all: HashMap<Key, (u64, usize, Finding, u64)> = HashMap::new();
    let mut omitted = 0;
    for worker in workers {
        omitted += worker.omitted;
        for (key, entry) in worker.entries {
            match all.entry(key) {
                std::collections::hash_map::Entry::Occupied(mut e) => {
                    let kept = e.get_mut();
                    let count = kept.3 + entry.3;
                    if (entry.0, entry.1) < (kept.0, kept.1) {
                        *kept = entry;
                    }
                    kept.3 = count;
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(entry);
                }
            }
        }
    }
    let mut ordered: Vec<(u64, usize, Finding, u64)> = all.into_values().collect();
    ordered.sort_by_key(|e| (e.0, e.1));
    let mut merged = Merged { omitted, ..Merged::default() };
    for (i, (_, _, finding, count)) in ordered.into_iter().enumerate() {
        if i < MAX_KEPT {
            merged.findings.push(finding);
            merged.counts.push(count);
        } else {
            merged.omitted += count;
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oob(loc: u32, id: u64) -> Finding {
        Finding::OutOfBounds {
            store: false,
            space: "global",
            allocation: "in".into(),
            offset: 64,
            size: 4,
            alloc_size: 64,
            global_id: [id, 0, 0],
            loc,
        }
    }

    fn id(f: &Finding) -> u64 {
        match f {
            Finding::OutOfBounds { global_id, .. } => global_id[0],
            _ => unreachable!(),
        }
    }

    #[test]
    fn one_report_per_instruction_at_its_first_occurrence_in_ndrange_order() {
        // Two workers ran groups 0, 2 and 1, 3; instruction 7 fails everywhere, 9 in group 1 and 3.
        let mut log = FindingLog::default();
        let mut a = WorkerFindings::default();
        let mut b = WorkerFindings::default();
        for group in [0, 2] {
            log.push(oob(7, group * 10));
            log.push(oob(7, group * 10 + 1));
            a.absorb(group, &mut log);
        }
        for group in [1, 3] {
            log.push(oob(9, group * 10));
            log.push(oob(7, group * 10 + 1));
            b.absorb(group, &mut log);
        }
        let merged = merge(vec![b, a]);
        assert_eq!(merged.findings.iter().map(id).collect::<Vec<_>>(), vec![0, 10]);
        assert_eq!(merged.counts, vec![6, 2]);
        assert_eq!(merged.omitted, 0);
    }

    #[test]
    fn distinct_findings_past_the_cap_are_counted() {
        let mut log = FindingLog::default();
        for loc in 0..MAX_KEPT as u32 + 5 {
            log.push(oob(loc, 0));
        }
        log.push(oob(0, 1));
        assert_eq!(log.len(), MAX_KEPT);
        let mut w = WorkerFindings::default();
        w.absorb(0, &mut log);
        assert!(log.is_empty());
        let merged = merge(vec![w]);
        assert_eq!(merged.findings.len(), MAX_KEPT);
        assert_eq!(merged.counts[0], 2);
        assert_eq!(merged.omitted, 5);
    }
}
