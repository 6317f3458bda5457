//! The admission policy: which launches are checked. What became of each launch is counted in
//! the ledger (`series::Ledger`), from which the closing summary names each kernel that was not
//! fully checked.
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

pub use crate::series::{KernelKey, Ledger};

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

    #[test]
    fn launches_over_the_emulators_limits_are_refused_by_name() {
        assert!(too_large([1 << 20, 1 << 20, 1], None).is_some_and(|s| s.reason().contains("2^32")));
        assert!(too_large([1 << 16, 1 << 16, 1], Some([64, 1, 1])).is_none());
        let huge_group = too_large([1 << 24, 1, 1], Some([1 << 17, 1, 1]));
        assert!(huge_group.is_some_and(|s| s.reason().contains("work-groups")));
    }
}
