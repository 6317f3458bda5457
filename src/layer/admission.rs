//! The admission policy: which launches are checked, or written to the spool. What became of
//! each launch is counted in the ledger (`series::Ledger`), from which the closing summary names
//! each kernel that was not fully checked.
//!
//! The policy inline (no spool), for users on GPU machines and in CI:
//! - a launch is *new* when it is the first of its kernel, or the first with its configuration
//!   (NDRange, local size, the bytes of its scalar arguments, the sizes of its buffers and
//!   `__local` arguments: [`configuration`]); the first [`MAX_CONFIGURATIONS`] configurations
//!   of a kernel count as new, the rest are repeats. A new launch is queued whatever the
//!   checkers are doing, limited only by memory, and the checkers take new launches from the
//!   queue before repeats;
//! - a repeat is checked only when the checks keep up: no earlier launch of that kernel is
//!   still waiting for its snapshot or a checker, and a checker is free. Otherwise it is skipped
//!   (counted and named), never waited for, unless the user asked for waiting
//!   (`CLRACE_ON_BACKLOG=wait`, bounded per launch and in total);
//! - repeats may hold at most half of `CLRACE_MEMORY_MB` ([`repeat_share`]): their snapshots
//!   and their checks' emulator and shadow memory together, so that repeat checks never hold
//!   the memory a new launch needs; queued repeats give way to a new launch that does not fit.
//!   A launch the emulator cannot take (too many work-items) or whose snapshot does not
//!   fit the memory limit is skipped and named.
//!
//! With a spool (`CLRACE_SPOOL`) nothing is checked inline and there is no backlog: every launch
//! is admitted as far as the spool's disk budget and the memory limit allow, and written.
//!
//! It sees counts, sizes and configurations only; the checker owns the jobs and the threads.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

pub use crate::series::{KernelKey, Ledger};

/// Configurations of one kernel that count as new at most; later ones are repeats.
pub const MAX_CONFIGURATIONS: usize = 16;

/// How a launch is admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// The first launch of its kernel, or the first of a configuration not seen yet: checked
    /// whatever the checkers are doing (memory allowing), before repeats.
    New,
    /// A launch like one admitted before: checked only when the checks keep up.
    Repeat,
}

/// The configurations admitted of each kernel (at most [`MAX_CONFIGURATIONS`] each).
#[derive(Debug, Default)]
pub struct Configurations {
    seen: HashMap<KernelKey, Vec<u64>>,
}

impl Configurations {
    /// The class of a launch of `key` with configuration `config`; `covered`: an earlier
    /// launch of the kernel was admitted.
    pub fn class(&self, key: &KernelKey, covered: bool, config: u64) -> Class {
        let seen = self.seen.get(key).map_or(&[][..], Vec::as_slice);
        if !covered || (!seen.contains(&config) && seen.len() < MAX_CONFIGURATIONS) {
            Class::New
        } else {
            Class::Repeat
        }
    }

    /// An admitted launch's configuration is now seen.
    pub fn admitted(&mut self, key: &KernelKey, config: u64) {
        let seen = self.seen.entry(key.clone()).or_default();
        if !seen.contains(&config) && seen.len() < MAX_CONFIGURATIONS {
            seen.push(config);
        }
    }
}

/// What a launch's configuration is made of: its geometry, the bytes of its by-value
/// arguments, and the sizes of its buffers and `__local` arguments.
pub struct Shape<'a> {
    pub work_dim: u32,
    pub global: [u64; 3],
    pub local: Option<[u64; 3]>,
    /// By-value arguments' bytes.
    pub values: Vec<&'a [u8]>,
    /// Buffer, image and `__local` sizes, in argument order.
    pub sizes: Vec<u64>,
}

/// A launch's configuration, hashed.
pub fn configuration(shape: &Shape) -> u64 {
    let mut h = DefaultHasher::new();
    (shape.work_dim, shape.global, shape.local, &shape.values, &shape.sizes).hash(&mut h);
    h.finish()
}

/// The memory repeats may hold, snapshots, emulator and shadow together, of `limit` (the
/// memory limit): half of it. New launches may use it all.
pub fn repeat_share(limit: u64) -> u64 {
    limit / 2
}

/// Why a launch is not checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skip {
    /// Checks are behind and this kernel was checked already.
    Behind,
    /// The snapshot would take the memory over `CLRACE_MEMORY_MB` (`limit` bytes), or a
    /// repeat's over the repeats' share of it.
    Memory { limit: u64, repeat: bool },
    /// The spool's disk budget is spent (`CLRACE_SPOOL_MB`).
    SpoolFull { limit_mb: u64 },
    /// The launch cannot be checked: too large for the emulator, or not safely snapshotted.
    Cannot(String),
}

impl Skip {
    /// The reason as the summary counts it (one line, no launch-specific numbers).
    pub fn reason(&self) -> String {
        match self {
            Skip::Behind => "checks were behind the application and the kernel was checked already".into(),
            Skip::Memory { limit, repeat: false } => {
                format!("its snapshot did not fit CLRACE_MEMORY_MB={}", limit >> 20)
            }
            Skip::Memory { limit, repeat: true } => format!(
                "its snapshot did not fit the half of CLRACE_MEMORY_MB={} that repeats of a kernel checked already may hold",
                limit >> 20
            ),
            Skip::SpoolFull { limit_mb } => format!("the spool is full (CLRACE_SPOOL_MB={limit_mb})"),
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

    fn key(name: &str) -> KernelKey {
        KernelKey { program: "p.cl".into(), name: name.into() }
    }

    fn shape(global: u64, value: &[u8], size: u64) -> u64 {
        configuration(&Shape {
            work_dim: 1,
            global: [global, 1, 1],
            local: None,
            values: vec![value],
            sizes: vec![size],
        })
    }

    #[test]
    fn a_first_launch_and_each_new_configuration_are_new_and_the_rest_repeats() {
        let (k, j) = (key("k"), key("j"));
        let mut seen = Configurations::default();
        let a = shape(64, &[1, 0, 0, 0], 256);
        assert_eq!(seen.class(&k, false, a), Class::New, "the first launch");
        seen.admitted(&k, a);
        assert_eq!(seen.class(&k, true, a), Class::Repeat);
        assert_eq!(seen.class(&j, false, a), Class::New, "configurations are per kernel");
        // Each part of the configuration makes it another.
        for other in [shape(128, &[1, 0, 0, 0], 256), shape(64, &[2, 0, 0, 0], 256), shape(64, &[1, 0, 0, 0], 512)] {
            assert_ne!(other, a);
            assert_eq!(seen.class(&k, true, other), Class::New);
        }
        let local = configuration(&Shape {
            work_dim: 1,
            global: [64, 1, 1],
            local: Some([64, 1, 1]),
            values: vec![&[1, 0, 0, 0]],
            sizes: vec![256],
        });
        assert_ne!(local, a);
        // Up to 16 configurations count as new; the 17th and later are repeats.
        for n in 1..MAX_CONFIGURATIONS as u64 {
            let config = shape(64 + n, &[], 0);
            assert_eq!(seen.class(&k, true, config), Class::New, "configuration {n}");
            seen.admitted(&k, config);
        }
        assert_eq!(seen.class(&k, true, shape(1000, &[], 0)), Class::Repeat);
        assert_eq!(seen.class(&k, false, shape(1000, &[], 0)), Class::New, "a first launch is always new");
    }

    #[test]
    fn repeats_take_memory_only_within_half_the_limit() {
        let whole = crate::budget::MemoryBudget::new(100);
        let repeats = crate::budget::MemoryBudget::within(&whole, repeat_share(whole.limit()));
        assert!(repeats.try_charge(50) && !repeats.try_charge(1), "repeats stop at half");
        assert!(whole.try_charge(50), "a new launch may use the rest");
    }
}
