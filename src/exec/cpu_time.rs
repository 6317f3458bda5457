//! The CPU time of one run ([`super::RunOptions::cpu_limit`]): every worker thread reads its own
//! CPU clock (`CLOCK_THREAD_CPUTIME_ID`) where the run looks at its limits and adds what it used
//! since its last look to one sum for the run. A limit of CPU time, unlike one of wall time,
//! does not depend on how loaded the machine is: a check ends at the same point of its work
//! however many other processes share the cores (up to how often the threads look).
//!
//! It sees only clocks and the sum: not the run, its groups or its threads.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The CPU time a run's threads used together, against its limit.
#[derive(Debug)]
pub struct CpuClock {
    limit_ns: Option<u64>,
    used_ns: AtomicU64,
    /// This run's number: a thread's last reading counts only for the run it was taken in.
    run: u64,
}

/// Numbers runs (0 is no run).
static RUNS: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// This thread's last reading of its CPU clock, and the run it was taken for.
    static LAST: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

impl CpuClock {
    pub fn new(limit: Option<Duration>) -> CpuClock {
        CpuClock {
            limit_ns: limit.map(|l| u64::try_from(l.as_nanos()).unwrap_or(u64::MAX)),
            used_ns: AtomicU64::new(0),
            run: RUNS.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Adds the CPU time this thread used since its last look (nothing at its first look in
    /// this run: the thread's earlier time was another run's or its own start), and returns the
    /// run's total when it is past the limit. Without a limit, reads no clock.
    pub fn over_limit(&self) -> Option<Duration> {
        let limit = self.limit_ns?;
        let now = thread_cpu_ns();
        let used = LAST.with(|last| {
            let (run, then) = last.replace((self.run, now));
            if run == self.run { now.saturating_sub(then) } else { 0 }
        });
        let total = self.used_ns.fetch_add(used, Ordering::Relaxed).saturating_add(used);
        (total >= limit).then(|| Duration::from_nanos(total))
    }
}

/// The calling thread's CPU time in nanoseconds (0 if the clock cannot be read).
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `clock_gettime` writes one `timespec` into the valid, writable `ts`.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    (ts.tv_sec as u64).saturating_mul(1_000_000_000).saturating_add(ts.tv_nsec as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spins this thread for about `ms` of its own CPU time.
    fn spin(ms: u64) {
        let start = thread_cpu_ns();
        while thread_cpu_ns() - start < ms * 1_000_000 {
            std::hint::black_box(0u64);
        }
    }

    #[test]
    fn the_threads_of_a_run_add_up_their_cpu_time_and_a_new_run_starts_at_zero() {
        let clock = CpuClock::new(Some(Duration::from_millis(60)));
        assert!(clock.over_limit().is_none(), "the first look counts nothing");
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    assert!(clock.over_limit().is_none());
                    spin(40);
                    let _ = clock.over_limit();
                });
            }
        });
        let total = clock.over_limit().expect("two threads of 40 ms each pass 60 ms together");
        assert!(total >= Duration::from_millis(80), "{total:?}");
        let next = CpuClock::new(Some(Duration::from_millis(60)));
        assert!(next.over_limit().is_none(), "this thread's time before is not the next run's");
        assert!(CpuClock::new(None).over_limit().is_none());
    }

    #[test]
    fn a_spinning_kernel_ends_at_its_cpu_limit() {
        let source = "kernel void endless(global int *out) { int i = 0; while (out[0] == 0) { i++; } out[1] = i; }";
        let program = crate::program::Program::from_source(source, std::path::Path::new("cpu.cl"), "").unwrap();
        let launch = crate::exec::Launch {
            kernel: "endless".into(),
            work_dim: 1,
            global_offset: [0; 3],
            global_size: [8, 1, 1],
            local_size: [4, 1, 1],
            args: vec![crate::exec::ArgValue::Buffer(0)],
        };
        let limit = Duration::from_millis(300);
        let options = crate::exec::RunOptions { cpu_limit: Some(limit), threads: Some(2), ..Default::default() };
        let err = crate::exec::run_with(&program, &launch, &mut [vec![0; 8]], &options).unwrap_err();
        let crate::exec::ExecError::Timeout(message) = &err else { panic!("expected a timeout, got {err:?}") };
        let seconds: f64 = message
            .strip_prefix("CPU-time limit exceeded after ")
            .and_then(|m| m.split(' ').next())
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("{message}"));
        // At the limit, give or take what the two threads use between two looks.
        assert!((0.3..1.0).contains(&seconds), "{message}");
        assert!(message.contains("s of CPU time in work-group ("), "{message}");
    }
}
