//! Which `__local` reads need no race hook in an instrumented kernel: those that no write to the
//! same allocation can meet in a barrier interval.
//!
//! The device's shadow orders a group's accesses to `__local` memory by epochs, one per barrier
//! that fences `__local` memory; two accesses conflict only within one epoch. The code a
//! work-item may run in one epoch is a barrier interval: what is reachable from the kernel's
//! entry, or from just after such a barrier, without passing another one. Barriers are reached
//! by every work-item of a group (OpenCL requires it), so two work-items in one epoch run code of
//! one interval. A read that shares no interval with a store to its allocation can thus race
//! with nothing, and no write ever consults its record: its hook (the shadow load and the
//! read summary's compare-and-swap) can go; its bounds check stays. A tiled kernel's loop over
//! its tiles, between the barrier after the tiles are written and the next, is such a read.
//!
//! What it sees: the kernel's own code (the instrumenter refuses calls) and, per access, the
//! allocation it goes to, as the caller names it. What it cannot see: whether barriers are in
//! fact reached by every work-item (divergence is not checked on the device).

use crate::ir::{Function, Inst};

/// A `__local` access: the allocation it goes to (any number naming it, one per allocation) and
/// whether it writes.
#[derive(Clone, Copy)]
pub(super) struct LocalAccess {
    pub(super) allocation: usize,
    pub(super) write: bool,
}

/// Per instruction of `func`, whether it is a `__local` read that shares no barrier interval
/// with a store to its allocation. `local(pc)` names the `__local` access at `pc`, if any.
pub(super) fn quiet_reads(func: &Function, local: impl Fn(usize) -> Option<LocalAccess>) -> Vec<bool> {
    let n = func.code.len();
    let ends_interval =
        |pc: usize| matches!(func.code[pc], Inst::Barrier { fence, sub_group: false, .. } if fence.local);
    let starts = std::iter::once(0).chain((0..n).filter(|&pc| ends_interval(pc)).map(|pc| pc + 1)).filter(|&s| s < n);
    let mut met = vec![false; n];
    let mut visited = vec![usize::MAX; n];
    let (mut work, mut reads, mut written) = (Vec::new(), Vec::new(), Vec::new());
    for (interval, start) in starts.enumerate() {
        reads.clear();
        written.clear();
        work.push(start);
        while let Some(pc) = work.pop() {
            if visited[pc] == interval {
                continue;
            }
            visited[pc] = interval;
            match local(pc) {
                Some(LocalAccess { allocation, write: true }) => written.push(allocation),
                Some(LocalAccess { allocation, write: false }) => reads.push((pc, allocation)),
                None => {}
            }
            if !ends_interval(pc) {
                func.for_each_successor(pc, |next| work.push(next));
            }
        }
        for &(pc, allocation) in &reads {
            met[pc] |= written.contains(&allocation);
        }
    }
    (0..n).map(|pc| !met[pc] && local(pc).is_some_and(|a| !a.write)).collect()
}
