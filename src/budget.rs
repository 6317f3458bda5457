//! Memory accounting: a byte budget that the emulator, the race detector and the layer's
//! admission charge their input-sized allocations against, so that a hostile launch ends with
//! a clear error instead of exhausting the machine.
//!
//! It only counts: it cannot see what memory the process really uses, only what its users
//! declare through [`MemoryBudget::try_charge`] and [`MemoryBudget::release`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A limit in bytes and what is charged against it, shared between threads.
#[derive(Debug)]
pub struct MemoryBudget {
    limit: u64,
    used: AtomicU64,
    /// The budget this one is a share of: what is charged here is charged there too.
    parent: Option<Arc<MemoryBudget>>,
}

impl MemoryBudget {
    /// A budget of `limit_bytes`, nothing charged yet.
    pub fn new(limit_bytes: u64) -> Arc<MemoryBudget> {
        Arc::new(MemoryBudget { limit: limit_bytes, used: AtomicU64::new(0), parent: None })
    }

    /// A share of `limit_bytes` of `parent`: a charge must fit both, and is charged to both.
    pub fn within(parent: &Arc<MemoryBudget>, limit_bytes: u64) -> Arc<MemoryBudget> {
        Arc::new(MemoryBudget { limit: limit_bytes, used: AtomicU64::new(0), parent: Some(parent.clone()) })
    }

    /// Charges `bytes` if they fit under the limit; charges nothing and returns false if not.
    pub fn try_charge(&self, bytes: u64) -> bool {
        let charged = self
            .used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                used.checked_add(bytes).filter(|&total| total <= self.limit)
            })
            .is_ok();
        if charged && self.parent.as_ref().is_some_and(|p| !p.try_charge(bytes)) {
            self.release_own(bytes);
            return false;
        }
        charged
    }

    /// Gives back `bytes` charged earlier (never more than is charged).
    pub fn release(&self, bytes: u64) {
        self.release_own(bytes);
        if let Some(parent) = &self.parent {
            parent.release(bytes);
        }
    }

    fn release_own(&self, bytes: u64) {
        let _ = self.used.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| Some(used.saturating_sub(bytes)));
    }

    /// Bytes charged now.
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    /// The limit in bytes.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Charges `bytes` for as long as the returned [`Charge`] lives; None if they do not fit.
    pub fn charge(self: &Arc<Self>, bytes: u64) -> Option<Charge> {
        self.try_charge(bytes).then(|| Charge { budget: Arc::clone(self), bytes })
    }
}

/// Bytes charged to a [`MemoryBudget`], released when dropped.
#[derive(Debug)]
pub struct Charge {
    budget: Arc<MemoryBudget>,
    bytes: u64,
}

impl Charge {
    /// The bytes this charge holds.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.budget.release(self.bytes);
    }
}

/// `bytes` as a number of MiB for messages, rounded up.
pub fn mib(bytes: u64) -> u64 {
    bytes.div_ceil(1 << 20)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_up_to_the_limit_and_releases() {
        let budget = MemoryBudget::new(100);
        assert!(budget.try_charge(60));
        assert!(!budget.try_charge(41), "61 + 41 passes the limit");
        assert_eq!(budget.used(), 60, "a failed charge charges nothing");
        assert!(budget.try_charge(40));
        assert_eq!(budget.used(), 100);
        budget.release(30);
        assert_eq!(budget.used(), 70);
        assert!(!budget.try_charge(u64::MAX), "overflow is a failed charge");
        assert_eq!(budget.limit(), 100);
    }

    #[test]
    fn a_charge_releases_when_dropped() {
        let budget = MemoryBudget::new(10);
        let held = budget.charge(8).expect("fits");
        assert_eq!(held.bytes(), 8);
        assert!(budget.charge(3).is_none());
        drop(held);
        assert_eq!(budget.used(), 0);
        assert!(budget.charge(10).is_some());
    }

    #[test]
    fn a_share_must_fit_itself_and_its_parent() {
        let whole = MemoryBudget::new(100);
        let half = MemoryBudget::within(&whole, 50);
        assert!(half.try_charge(40));
        assert_eq!((half.used(), whole.used()), (40, 40));
        assert!(!half.try_charge(11), "over the share");
        assert!(whole.try_charge(55));
        assert!(!half.try_charge(10), "the share fits, the whole does not");
        assert_eq!((half.used(), whole.used()), (40, 95), "a failed charge charges neither");
        half.release(40);
        assert_eq!((half.used(), whole.used()), (0, 55));
    }
}
