//! The admission policy: which launches are checked, and the ledger of what became of every
//! launch of every kernel (checked, skipped and why, failed and why), from which the closing
//! summary names each kernel that was not fully checked.
//!
//! The policy, for users on GPU machines and in CI:
//! - the first launch of every kernel is checked: it is queued whatever the checkers are doing,
//!   limited only by memory;
//! - a repeat of a kernel already admitted is checked only when the checks keep up: no earlier
//!   launch of that kernel is still waiting for its snapshot or a checker, and a checker is
//!   free. Otherwise it is skipped (counted and named), never waited for, unless the user asked
//!   for waiting (`CLRACE_ON_BACKLOG=wait`, bounded per launch and in total);
//! - a launch the emulator cannot take (too many work-items) or whose snapshot does not fit the
//!   memory limit is skipped and named.
//!
//! It sees counts and sizes only; the checker owns the jobs and the threads.

use std::collections::{BTreeMap, HashMap};

/// A kernel as the summary names it: its program's file name and its own name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KernelKey {
    pub program: String,
    pub name: String,
}

/// What became of the launches of one kernel.
#[derive(Debug, Default, Clone)]
pub struct KernelRecord {
    pub launches: u64,
    /// Admitted and not given back: checked, failed, or still in flight.
    pub admitted: u64,
    pub checked: u64,
    /// Launches of this kernel admitted whose check has not ended (waiting for their snapshot,
    /// for a checker, or running).
    pub in_flight: u64,
    /// Skipped launches by reason.
    pub skipped: BTreeMap<String, u64>,
    /// Failed checks by reason.
    pub failed: BTreeMap<String, u64>,
    /// Launches whose check had not ended at exit, by reason: abandoned then.
    pub unfinished: BTreeMap<String, u64>,
    /// Findings already reported for an earlier launch, seen again and not printed again.
    pub repeated_findings: u64,
}

/// Why a launch is not checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skip {
    /// Checks are behind and this kernel was checked already.
    Behind,
    /// The snapshot would take the memory over `CLRACE_MEMORY_MB`.
    Memory { limit: u64 },
    /// The launch cannot be checked: too large for the emulator, or not safely snapshotted.
    Cannot(String),
}

impl Skip {
    /// The reason as the summary counts it (one line, no launch-specific numbers).
    pub fn reason(&self) -> String {
        match self {
            Skip::Behind => "checks were behind the application and the kernel was checked already".into(),
            Skip::Memory { limit } => format!("its snapshot did not fit CLRACE_MEMORY_MB={}", limit >> 20),
            Skip::Cannot(why) => why.clone(),
        }
    }
}

/// The ledger of every kernel, in the order of their first launch.
#[derive(Debug, Default)]
pub struct Ledger {
    kernels: HashMap<KernelKey, KernelRecord>,
    order: Vec<KernelKey>,
}

impl Ledger {
    pub fn record(&mut self, key: &KernelKey) -> &mut KernelRecord {
        if !self.kernels.contains_key(key) {
            self.order.push(key.clone());
        }
        self.kernels.entry(key.clone()).or_default()
    }

    /// Whether a launch of `key` is a repeat: an earlier launch was admitted (and its check
    /// did not give it back).
    pub fn covered(&self, key: &KernelKey) -> bool {
        self.kernels.get(key).is_some_and(|k| k.admitted > 0)
    }

    /// Whether an earlier launch of `key` is still waiting to be checked or being checked.
    pub fn in_flight(&self, key: &KernelKey) -> bool {
        self.kernels.get(key).is_some_and(|k| k.in_flight > 0)
    }

    pub fn skip(&mut self, key: &KernelKey, why: &Skip) {
        *self.record(key).skipped.entry(why.reason()).or_default() += 1;
    }

    pub fn admit(&mut self, key: &KernelKey) {
        let record = self.record(key);
        record.admitted += 1;
        record.in_flight += 1;
    }

    /// An admitted launch whose snapshot could not be taken: skipped after all.
    pub fn give_back(&mut self, key: &KernelKey, why: &str) {
        let record = self.record(key);
        record.admitted -= 1;
        record.in_flight -= 1;
        *record.skipped.entry(why.to_string()).or_default() += 1;
    }

    pub fn checked(&mut self, key: &KernelKey) {
        let record = self.record(key);
        record.in_flight -= 1;
        record.checked += 1;
    }

    pub fn failed(&mut self, key: &KernelKey, why: &str) {
        let record = self.record(key);
        record.in_flight -= 1;
        *record.failed.entry(why.to_string()).or_default() += 1;
    }

    /// At exit: names a reason for every launch whose check has not ended, given the keys of
    /// the checks still running (the others were waiting for their snapshot).
    pub fn at_exit(&mut self, running: &[KernelKey]) {
        let mut still_running: HashMap<&KernelKey, u64> = HashMap::new();
        for key in running {
            *still_running.entry(key).or_default() += 1;
        }
        for (key, record) in &mut self.kernels {
            let checking = still_running.get(key).copied().unwrap_or(0).min(record.in_flight);
            let waiting = record.in_flight - checking;
            for (n, why) in [
                (checking, "its check was still running at exit and was abandoned"),
                (waiting, "its snapshot was still waiting for the device at exit"),
            ] {
                if n > 0 {
                    *record.unfinished.entry(why.to_string()).or_default() += n;
                }
            }
        }
    }

    /// Every kernel, in the order of its first launch.
    pub fn kernels(&self) -> impl Iterator<Item = (&KernelKey, &KernelRecord)> {
        self.order.iter().map(|k| (k, &self.kernels[k]))
    }
}

/// Work-items one check may have at most: the detector keeps work-item ids in 32 bits.
pub const MAX_WORK_ITEMS: u128 = crate::exec::MAX_LAUNCH_ITEMS as u128;

/// Work-items one work-group may have at most in a check: the emulator's limit.
pub const MAX_GROUP_ITEMS: u128 = crate::exec::MAX_GROUP_ITEMS as u128;

/// Refuses a launch the emulator cannot take, before anything is copied.
pub fn too_large(global: [u64; 3], local: Option<[u64; 3]>) -> Option<Skip> {
    let items: u128 = global.iter().map(|&g| g as u128).product();
    if items > MAX_WORK_ITEMS {
        return Some(Skip::Cannot(format!("it has more than 2^32 work-items ({items}), more than the emulator takes")));
    }
    let group: u128 = local.map_or(1, |l| l.iter().map(|&g| g as u128).product());
    if group > MAX_GROUP_ITEMS {
        return Some(Skip::Cannot(format!(
            "its work-groups have {group} work-items, more than the emulator takes ({MAX_GROUP_ITEMS})"
        )));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> KernelKey {
        KernelKey { program: "program-1.cl".into(), name: name.into() }
    }

    #[test]
    fn a_kernel_is_covered_once_a_launch_is_admitted_and_not_given_back() {
        let mut ledger = Ledger::default();
        let k = key("k");
        assert!(!ledger.covered(&k));
        ledger.admit(&k);
        assert!(ledger.covered(&k) && ledger.in_flight(&k));
        ledger.give_back(&k, "its buffers could not be read");
        assert!(!ledger.covered(&k) && !ledger.in_flight(&k));
        ledger.admit(&k);
        ledger.checked(&k);
        assert!(ledger.covered(&k) && !ledger.in_flight(&k));
        ledger.skip(&k, &Skip::Behind);
        ledger.skip(&k, &Skip::Behind);
        let (_, record) = ledger.kernels().next().unwrap();
        assert_eq!((record.checked, record.skipped.values().sum::<u64>()), (1, 3));
    }

    #[test]
    fn every_launch_unfinished_at_exit_gets_a_reason() {
        let mut ledger = Ledger::default();
        let (k, j) = (key("k"), key("j"));
        for _ in 0..3 {
            ledger.admit(&k);
        }
        ledger.admit(&j);
        ledger.checked(&j);
        ledger.at_exit(std::slice::from_ref(&k));
        let records: Vec<_> = ledger.kernels().map(|(_, r)| r.clone()).collect();
        let reasons: Vec<(&str, u64)> = records[0].unfinished.iter().map(|(w, n)| (w.as_str(), *n)).collect();
        assert_eq!(
            reasons,
            [
                ("its check was still running at exit and was abandoned", 1),
                ("its snapshot was still waiting for the device at exit", 2)
            ]
        );
        assert!(records[1].unfinished.is_empty());
    }

    #[test]
    fn launches_over_the_emulators_limits_are_refused_by_name() {
        assert!(too_large([1 << 20, 1 << 20, 1], None).is_some_and(|s| s.reason().contains("2^32")));
        assert!(too_large([1 << 16, 1 << 16, 1], Some([64, 1, 1])).is_none());
        let huge_group = too_large([1 << 24, 1, 1], Some([1 << 17, 1, 1]));
        assert!(huge_group.is_some_and(|s| s.reason().contains("work-groups")));
    }
}
