//! The observation interface: what the emulator tells a consumer (the race detector) about every
//! memory access, atomic, barrier and fence of a launch.
//!
//! A consumer implements [`Hooks`] once per launch; it hands out one [`GroupHooks`] per work-group,
//! which the thread running that group owns, so per-group state needs no lock. The interpreter is
//! generic over the hooks, and [`NoHooks`] sets [`GroupHooks::ACTIVE`] to false, which compiles
//! every call site away: a plain run pays nothing for the interface.

use super::ExecError;
use super::memory::Fault;
use crate::ir::{AtomicOp, Fence, MemOrder, Scope};

/// What an atomic's memory operation returns: the old value and what it stored, or a fault.
pub type AtomicResult = Result<(u64, Option<u64>), Fault>;

/// What an access did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessKind {
    Load,
    Store,
    Atomic(AtomicAccess),
}

/// The atomic part of an access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AtomicAccess {
    pub op: AtomicOp,
    /// The order that applied: the failure order of a compare-exchange that did not store.
    pub order: MemOrder,
    pub scope: Scope,
    /// Whether the operation wrote memory (a failed compare-exchange or a load did not).
    pub wrote: bool,
    /// The value memory held before the operation.
    pub read: u64,
}

/// One access of `size` bytes at a tagged address (see [`crate::exec::memory::split`] for its
/// space, allocation and byte offset).
#[derive(Debug, Clone, Copy)]
pub struct Access<'a> {
    pub kind: AccessKind,
    pub addr: u64,
    pub size: u32,
    /// The instruction's source location: an index into `ir::Module::locations`.
    pub loc: u32,
    /// The bytes a store or writing atomic left in memory; empty for loads.
    pub stored: &'a [u8],
}

impl<'a> Access<'a> {
    /// Lane `k`'s part of an access by consecutive lanes over consecutive elements (see
    /// [`GroupHooks::access_lanes`]): its element's address and its stored bytes.
    #[inline(always)]
    pub fn lane(&self, k: u32) -> Access<'a> {
        let size = self.size as usize;
        let stored = self.stored.get(k as usize * size..(k as usize + 1) * size).unwrap_or(&[]);
        Access { addr: self.addr + k as u64 * size as u64, stored, ..*self }
    }

    /// Row `r`'s part of an access by rows of `count` lanes, each row `stride` bytes after the
    /// one before (see [`GroupHooks::access_rows`]): its first address and its stored bytes.
    #[inline(always)]
    pub fn row(&self, r: u32, count: u32, stride: u64) -> Access<'a> {
        let row_bytes = count as usize * self.size as usize;
        let stored = self.stored.get(r as usize * row_bytes..(r as usize + 1) * row_bytes).unwrap_or(&[]);
        Access { addr: self.addr.wrapping_add((r as u64).wrapping_mul(stride)), stored, ..*self }
    }
}

/// One atomic instruction, as every work-item running it performed it (see
/// [`GroupHooks::local_atomics`]).
#[derive(Debug, Clone, Copy)]
pub struct AtomicInst {
    pub op: AtomicOp,
    pub order: MemOrder,
    /// The order of a compare-exchange that did not store.
    pub fail_order: MemOrder,
    pub scope: Scope,
    pub size: u32,
    pub loc: u32,
}

/// One work-item's part of an atomic instruction: its address, the value memory held before,
/// and what it stored (none for a load or a failed compare-exchange).
#[derive(Debug, Clone, Copy)]
pub struct LaneAtomic {
    pub item: u32,
    pub addr: u64,
    pub read: u64,
    pub wrote: Option<u64>,
}

impl LaneAtomic {
    /// This part as [`GroupHooks::access`] hears of it; `bytes` holds the stored bytes.
    pub fn access<'b>(&self, inst: &AtomicInst, bytes: &'b mut [u8; 8]) -> Access<'b> {
        let order = if self.wrote.is_some() { inst.order } else { inst.fail_order };
        let atomic =
            AtomicAccess { op: inst.op, order, scope: inst.scope, wrote: self.wrote.is_some(), read: self.read };
        *bytes = self.wrote.unwrap_or(0).to_le_bytes();
        let stored = if self.wrote.is_some() { &bytes[..inst.size as usize] } else { &[] };
        Access { kind: AccessKind::Atomic(atomic), addr: self.addr, size: inst.size, loc: inst.loc, stored }
    }
}

/// A launch-wide consumer: creates and collects per-group observers.
pub trait Hooks: Sync {
    type Group: GroupHooks;

    /// A work-group with this id and size is about to run.
    fn group_start(&self, group_id: [u64; 3], size: [u64; 3]) -> Self::Group;

    /// The work-group has finished; every work-item reached the end of the kernel.
    fn group_end(&self, group: Self::Group);

    /// The run's threads are done with its work-groups (all ended, or the run stopped at a
    /// failed one): told once, on the thread that started the run, before the last
    /// [`Hooks::check`]. A stepped run that fails ends none of its groups and does not tell it.
    fn run_end(&self) {}

    /// Asked before every work-group starts and after the last ends: an error (e.g.
    /// [`ExecError::Memory`] when the consumer's memory passed its budget) stops the run with it.
    fn check(&self) -> Result<(), ExecError> {
        Ok(())
    }
}

/// The observer of one work-group. Work-items are named by their local linear id. Accesses to
/// private memory are not reported: it is each work-item's own and cannot race. Nor are plain
/// loads of `__local` memory that share no barrier interval with a write that may reach them
/// ([`crate::ir::intervals`]; see `Execution::quiet_reads`), in a group whose barriers have all
/// been reached by every work-item: no access can race with them either.
pub trait GroupHooks: Send {
    /// False only for [`NoHooks`]: lets the interpreter skip building [`Access`] values.
    const ACTIVE: bool = true;

    /// A load, store or atomic by one work-item.
    fn access(&mut self, item: u32, access: &Access);

    /// The same load or store by the `count` work-items `first..first + count` (local linear
    /// ids), work-item `first + k` accessing `access.size` bytes at `access.addr + k *
    /// access.size`: a contiguous access of consecutive lanes. `access.stored` holds the lanes'
    /// stored bytes one after the other (empty for loads). Means the same as
    /// [`GroupHooks::access`] for each work-item in order; a consumer may check it in one go.
    /// Not for atomics.
    #[inline(always)]
    fn access_lanes(&mut self, first: u32, count: u32, access: &Access) {
        debug_assert!(!matches!(access.kind, AccessKind::Atomic(_)), "atomics are reported one by one");
        for k in 0..count {
            self.access(first + k, &access.lane(k));
        }
    }

    /// The same load or store by `rows` rows of `count` consecutive work-items each, the lanes
    /// `first..first + rows * count` (local linear ids) in order: row `r` (work-items from
    /// `first + r * count`) accesses as [`GroupHooks::access_lanes`] from `access.addr + r *
    /// stride` (wrapping: rows may run downwards), every row in the allocation of `access.addr`,
    /// outside private memory. `access.stored` holds the lanes' stored bytes one after the other,
    /// row after row (empty for loads). The rows of a two-dimensional group, or the blocks of a
    /// sorting network's step. Means the same as [`GroupHooks::access_lanes`] of each row in
    /// order; a consumer may check them in one go. Not for atomics.
    #[inline(always)]
    fn access_rows(&mut self, first: u32, (count, rows): (u32, u32), stride: u64, access: &Access) {
        for r in 0..rows {
            self.access_lanes(first + r * count, count, &access.row(r, count, stride));
        }
    }

    /// Whether plain loads and stores anywhere in the allocation of `addr` concern these hooks.
    /// False lets the interpreter leave them untold (the detector's read-only buffers, which no
    /// access can race on); atomics are told all the same.
    #[inline(always)]
    fn hears_plain(&self, addr: u64) -> bool {
        let _ = addr;
        true
    }

    /// The same load of one address by the work-items `lanes` (local linear ids, in order): a
    /// value several lanes read at once (a tile row in matmul, a uniform operand). Means the same
    /// as [`GroupHooks::access`] for each in order; a consumer may check it in one go.
    #[inline(always)]
    fn load_same(&mut self, lanes: &[u32], access: &Access) {
        debug_assert!(matches!(access.kind, AccessKind::Load), "loads only");
        for &l in lanes {
            self.access(l, access);
        }
    }

    /// The loads of `lanes` (local linear ids) whose lanes `period` apart read one element and
    /// whose first `period` lanes read `period` different ones, outside private memory: lane
    /// `lanes[k]` reads at `addr(k % period)` (`access.addr` is not used). A tile's row read by
    /// every row of a work-group (GEMM's `__local` tiles). Means the same as
    /// [`GroupHooks::load_same`] of each element's lanes (`lanes[j..]`, every `period`th) for `j`
    /// in order; a consumer may check it in one go.
    #[inline(always)]
    fn load_periodic(&mut self, lanes: &[u32], period: usize, access: &Access, addr: impl Fn(usize) -> u64) {
        debug_assert!(matches!(access.kind, AccessKind::Load), "loads only");
        for j in 0..period.min(lanes.len()) {
            let access = Access { addr: addr(j), ..*access };
            for &l in lanes[j..].iter().step_by(period) {
                self.access(l, &access);
            }
        }
    }

    /// The loads of `lanes` (local linear ids) in blocks of `block` consecutive ones, each block
    /// reading one element outside private memory: the lanes `lanes[j * block..][..block]` read
    /// at `addr(j)` (`access.addr` is not used). A tile's column read by each row of a
    /// work-group (GEMM's `__local` tiles). Means the same as [`GroupHooks::load_same`] of each
    /// block in order; a consumer may check it in one go.
    #[inline(always)]
    fn load_blocks(&mut self, lanes: &[u32], block: usize, access: &Access, addr: impl Fn(usize) -> u64) {
        for (j, elem) in lanes.chunks(block.max(1)).enumerate() {
            self.load_same(elem, &Access { addr: addr(j), ..*access });
        }
    }

    /// The same load or store by the work-items `lanes` (local linear ids, in order), each at an
    /// address of its own outside private memory: `lane(l)` gives work-item `l`'s address and,
    /// for a store, the value it stored (its low `access.size` bytes; ignored for loads).
    /// `access.addr` and `access.stored` are not used. A gather or scatter whose lanes are not
    /// one consecutive run (strided, divergent). Means the same as [`GroupHooks::access`] for
    /// each work-item in order; a consumer may check it in one go. Not for atomics.
    #[inline(always)]
    fn access_each(&mut self, lanes: &[u32], access: &Access, lane: impl Fn(u32) -> (u64, u64)) {
        debug_assert!(!matches!(access.kind, AccessKind::Atomic(_)), "atomics are reported one by one");
        let size = (access.size as usize).min(8);
        let store = matches!(access.kind, AccessKind::Store);
        for &l in lanes {
            let (addr, value) = lane(l);
            let bytes = value.to_le_bytes();
            let stored = if store { &bytes[..size] } else { &[][..] };
            self.access(l, &Access { addr, stored, ..*access });
        }
    }

    /// The atomic instruction `inst` by the work-items of `lanes`, in that order, all on
    /// `__local` memory (which no other thread sees, so nothing is asked to wrap their memory
    /// operations). Means the same as [`GroupHooks::access`] for each part in order; a consumer
    /// may take them in one go.
    #[inline(always)]
    fn local_atomics(&mut self, lanes: &[LaneAtomic], inst: &AtomicInst) {
        for lane in lanes {
            let mut bytes = [0; 8];
            self.access(lane.item, &lane.access(inst, &mut bytes));
        }
    }

    /// Performs the memory operation of an atomic at `addr` (which [`GroupHooks::access`] then
    /// reports). A consumer that tracks what atomics publish to each other wraps `run` so that its
    /// own bookkeeping happens in the same order as the memory operations. Called for global
    /// memory only: a group's local and private memory see no other thread's atomics.
    #[inline(always)]
    fn atomic_section(&mut self, _addr: u64, run: impl FnOnce() -> AtomicResult) -> AtomicResult {
        run()
    }

    /// An access the work-group makes as a whole (`async_work_group_copy`).
    fn group_access(&mut self, access: &Access);

    /// The group makes the copy whose event is `event` (`async_work_group_copy`), once, when its
    /// work-items have reached it; `item` is the lowest of them. The [`GroupHooks::group_access`]
    /// calls that follow, until the next call of this hook, are that copy's.
    #[inline(always)]
    fn async_copy(&mut self, _item: u32, _event: u64, _loc: u32) {}

    /// A `wait_group_events` the group's work-items have reached names `event` (`item` is the
    /// lowest of them; called once per event named): the copies of that event are complete once
    /// the barrier that follows releases the group.
    #[inline(always)]
    fn wait_event(&mut self, _item: u32, _event: u64) {}

    /// Every work-item of the group has reached the same barrier and is released from it.
    fn barrier(&mut self, fence: Fence, scope: Scope, loc: u32);

    /// A fence without barrier (`atomic_work_item_fence`, `mem_fence`) by one work-item.
    fn fence(&mut self, item: u32, fence: Fence, order: MemOrder, scope: Scope, loc: u32);

    /// The work-items of sub-group `sub_group` (of `width` consecutive local linear ids) completed
    /// a `sub_group_barrier` whose fence covers `fence`: their accesses before it are ordered
    /// against their accesses after it. Called under every policy; never for a sub-group
    /// collective function, which orders no memory (nor does a work-group one).
    #[inline(always)]
    fn sub_group_barrier(&mut self, _sub_group: u32, _width: u32, _fence: Fence, _loc: u32) {}

    /// Only under `Policy::SubGroups` (lockstep per sub-group): the lanes `lanes` (local linear
    /// ids of one sub-group, sorted) are the ones that run from now on, one instruction for all,
    /// until the next call naming lanes of their sub-group. Called whenever a warp of the
    /// sub-group starts running or its active lanes may have changed (a branch parted them, paths
    /// met, a call returned, lanes finished); the same lanes may be named again.
    #[inline(always)]
    fn lanes_active(&mut self, _lanes: &[u32]) {}

    /// Asked at least every 64K branches and calls of the group, and when it ends: an error
    /// (e.g. [`ExecError::Memory`] when the consumer's memory would pass its budget) stops the
    /// whole run with it.
    #[inline(always)]
    fn poll(&mut self) -> Result<(), ExecError> {
        Ok(())
    }
}

/// No consumer: every hook is empty and inlined away.
pub struct NoHooks;

impl Hooks for NoHooks {
    type Group = NoHooks;

    fn group_start(&self, _: [u64; 3], _: [u64; 3]) -> NoHooks {
        NoHooks
    }

    fn group_end(&self, _: NoHooks) {}
}

impl GroupHooks for NoHooks {
    const ACTIVE: bool = false;

    #[inline(always)]
    fn access(&mut self, _: u32, _: &Access) {}

    #[inline(always)]
    fn group_access(&mut self, _: &Access) {}

    #[inline(always)]
    fn barrier(&mut self, _: Fence, _: Scope, _: u32) {}

    #[inline(always)]
    fn fence(&mut self, _: u32, _: Fence, _: MemOrder, _: Scope, _: u32) {}
}
