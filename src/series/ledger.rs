//! The ledger of an application's launches: for every kernel, how many launches it had and
//! what became of each (checked, skipped and why, failed and why, unfinished at exit), in the
//! order of the kernels' first launch. The layer keeps one while the application runs; the
//! spool checker starts from the layer's and adds its own checks, so that one closing summary
//! counts every launch.
//!
//! It holds counts and reasons only: it cannot see launches, checks or findings.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

/// A kernel as the summary names it: its program's file name and its own name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct KernelKey {
    pub program: String,
    pub name: String,
}

/// What became of the launches of one kernel.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
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
    /// Launches written to a spool (`CLRACE_SPOOL`) to be checked later: neither checked nor
    /// skipped yet. The spool checker turns each into a check.
    pub spooled: u64,
}

/// One kernel of a ledger as JSON: its key's fields, then its record's.
#[derive(Serialize, Deserialize)]
struct LedgerEntry {
    #[serde(flatten)]
    key: KernelKey,
    #[serde(flatten)]
    record: KernelRecord,
}

/// The ledger of every kernel, in the order of their first launch.
#[derive(Debug, Default, Clone)]
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

    /// A launch not checked, for `why` (one line, no launch-specific numbers).
    pub fn skip(&mut self, key: &KernelKey, why: &str) {
        *self.record(key).skipped.entry(why.to_string()).or_default() += 1;
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

    /// A launch written to the spool, for a later check.
    pub fn spooled(&mut self, key: &KernelKey) {
        let record = self.record(key);
        record.in_flight -= 1;
        record.spooled += 1;
    }

    /// Adds another ledger's counts (another process's launches of the same kernels, or new
    /// kernels, which come after this ledger's in their own order).
    pub fn absorb(&mut self, other: &Ledger) {
        for (key, theirs) in other.kernels() {
            let ours = self.record(key);
            ours.launches += theirs.launches;
            ours.admitted += theirs.admitted;
            ours.checked += theirs.checked;
            ours.in_flight += theirs.in_flight;
            ours.repeated_findings += theirs.repeated_findings;
            ours.spooled += theirs.spooled;
            for (mine, their) in [
                (&mut ours.skipped, &theirs.skipped),
                (&mut ours.failed, &theirs.failed),
                (&mut ours.unfinished, &theirs.unfinished),
            ] {
                for (why, n) in their {
                    *mine.entry(why.clone()).or_default() += n;
                }
            }
        }
    }

    /// The ledger as the layer leaves it in a spool (`layer.json`): every kernel in order.
    pub fn to_json(&self) -> serde_json::Value {
        let kernels: Vec<LedgerEntry> =
            self.kernels().map(|(key, record)| LedgerEntry { key: key.clone(), record: record.clone() }).collect();
        serde_json::to_value(kernels).unwrap_or_default()
    }

    /// The ledger [`Ledger::to_json`] wrote.
    pub fn from_json(value: &serde_json::Value) -> Result<Ledger, String> {
        let kernels: Vec<LedgerEntry> =
            serde_json::from_value(value.clone()).map_err(|e| format!("not a ledger of kernels: {e}"))?;
        let mut ledger = Ledger::default();
        for entry in kernels {
            *ledger.record(&entry.key) = entry.record;
        }
        Ok(ledger)
    }

    /// Every kernel, in the order of its first launch.
    pub fn kernels(&self) -> impl Iterator<Item = (&KernelKey, &KernelRecord)> {
        self.order.iter().map(|k| (k, &self.kernels[k]))
    }
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
        ledger.skip(&k, "checks were behind");
        ledger.skip(&k, "checks were behind");
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
    fn a_ledger_comes_back_from_json_whole_and_in_order() {
        let mut ledger = Ledger::default();
        let (k, j) = (key("k"), key("j"));
        ledger.admit(&k);
        ledger.spooled(&k);
        ledger.skip(&j, "the spool is full");
        ledger.record(&j).launches += 2;
        let back = Ledger::from_json(&ledger.to_json()).unwrap();
        let kernels = |l: &Ledger| l.kernels().map(|(k, r)| (k.clone(), r.clone())).collect::<Vec<_>>();
        assert_eq!(kernels(&back), kernels(&ledger));
        assert_eq!(kernels(&back)[0].1.spooled, 1);
        assert!(Ledger::from_json(&serde_json::json!({"kernel": 1})).is_err());
    }

    #[test]
    fn ledgers_of_two_processes_add_up_kernel_by_kernel() {
        let (k, j) = (key("k"), key("j"));
        let mut first = Ledger::default();
        first.record(&k).launches = 2;
        first.skip(&k, "the spool is full");
        let mut second = Ledger::default();
        second.record(&j).launches = 1;
        second.record(&k).launches = 3;
        second.skip(&k, "the spool is full");
        first.absorb(&second);
        let kernels: Vec<_> =
            first.kernels().map(|(key, r)| (key.name.clone(), r.launches, r.skipped.clone())).collect();
        assert_eq!(kernels[0].0, "k");
        assert_eq!((kernels[0].1, kernels[0].2["the spool is full"]), (5, 2));
        assert_eq!((kernels[1].0.as_str(), kernels[1].1), ("j", 1));
    }
}
