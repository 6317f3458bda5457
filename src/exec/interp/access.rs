//! The instructions that read and write memory without atomicity: scalar and composite loads
//! and stores, `memmove`, `alloca`, `vload`/`vstore` and the array-index check. Each is a method
//! of [`Executor`], inlined into its loop. Consecutive lanes reading or writing consecutive
//! elements are checked and told to the hooks as one run; the lanes of any pattern inside one
//! allocation (rows of a group, the lanes a branch kept) are gathered with one bounds check when
//! no hook needs to hear each; lanes whose addresses all lie in their own private memory go
//! straight to it; a fault is named lane by lane.

use super::super::affine::Affine;
use super::super::execution::Yield;
use super::super::execution::observe_copy;
use super::super::hooks::{Access, AccessKind, GroupHooks};
use super::super::memory::{
    ANY, INDEX_SHIFT, LOAD, OFFSET_MASK, SPACE_PRIVATE, SPACE_SHIFT, STORE, address, load_private, private_range,
    store_private,
};
use super::super::ops::{bits_f32, f32_of, f64_of};
use super::super::{ExecError, half};
use super::executor::Event;
use super::executor::{Executor, dense};
use super::faults;
use crate::ir::value::{MAX_PRIVATE_BYTES, extend, extend_shift, mask};
use crate::ir::{self, AtomicOp, Inst, Reg, VecMem};

/// With hooks to tell, a load whose first run has fewer lanes is one gather (see `load_scalar`).
const SHORT_RUN: usize = 8;

/// The fewest lanes per row for a load or store to go row by row ([`Executor::rows`]): shorter
/// rows are gathered or scattered, or told lane by lane.
const MIN_ROW: usize = 8;

/// [`MIN_ROW`] where the hooks hear of the access: rows of 4 lanes then go as rows too, one call
/// to the hooks instead of one per run (bitonic's compare-exchange at stride 4: 64 runs of 4
/// words; its check 2.7% fewer instructions); without hooks they are cheaper gathered.
const MIN_ROW_TOLD: usize = 4;

/// The rows [`Executor::rows`] found: the span from the lowest start to the highest row's last
/// element, how many rows, and where each starts (the first row's start, then `stride` apart).
#[derive(Clone, Copy)]
struct Rows {
    span: (u64, u64),
    count: usize,
    start: u64,
    stride: u64,
}

impl Rows {
    /// `rows` rows of `n` elements of `size` bytes, the first from `start` and each `stride`
    /// bytes after the one before, where every start is a multiple of `size` (and of the
    /// alignment: `unaligned` is its mask) and the span from the lowest start to the highest
    /// row's last element lies in one allocation outside private memory, without wrapping past
    /// either end of the address space (the starts in between lie between the first and the
    /// last).
    #[inline(always)]
    fn of(start: u64, stride: u64, (rows, n): (usize, usize), size: usize, unaligned: u64) -> Option<Rows> {
        let last = (rows as i64 - 1).checked_mul(stride as i64).and_then(|d| start.checked_add_signed(d))?;
        let (lo, top) = if last >= start { (start, last) } else { (last, start) };
        let hi = top.checked_add(((n - 1) * size) as u64)?;
        let one = (start | stride) & (unaligned | (size as u64 - 1)) == 0
            && lo >> INDEX_SHIFT == hi >> INDEX_SHIFT
            && lo >> SPACE_SHIFT != SPACE_PRIVATE;
        one.then_some(Rows { span: (lo, hi), count: rows, start, stride })
    }

    /// Where row `r` starts.
    #[inline(always)]
    fn start(&self, r: usize) -> u64 {
        self.start.wrapping_add(self.stride.wrapping_mul(r as u64))
    }
}

/// The pattern of a descriptor's addresses ([`Executor::affine_shape`]).
enum Shape {
    /// One run of consecutive elements from this address.
    Run(u64),
    Rows(Rows),
    /// Each row of a two-dimensional group reads one element of its own (a tile's column read
    /// by the rows of the group: `As[ty][k]`): rows of one element, one per row of lanes.
    Blocks(Rows),
}

/// The longest period `tell_periodic` looks for in the addresses of a scattered load's lanes.
const MAX_PERIOD: usize = 16;

/// The period of lanes' addresses `addrs` (more than one lane) when the lanes `p` apart read the
/// same element and the first `p` (at least 2, at most [`MAX_PERIOD`]) read different ones
/// outside private memory.
fn periodic(addrs: &[u64]) -> Option<usize> {
    let (n, first) = (addrs.len(), *addrs.first()?);
    let p = (2..n.min(MAX_PERIOD + 1)).find(|&k| addrs[k] == first)?;
    let distinct = (1..p).all(|j| !addrs[..j].contains(&addrs[j]));
    (first >> SPACE_SHIFT != SPACE_PRIVATE && distinct && addrs[p..] == addrs[..n - p]).then_some(p)
}

/// The block of lanes' addresses `addrs` when they come in blocks of at least two consecutive
/// lanes of one address each, outside private memory.
fn blocks(addrs: &[u64]) -> Option<usize> {
    let (n, first) = (addrs.len(), *addrs.first()?);
    let block = addrs.iter().position(|&a| a != first).unwrap_or(n);
    if block < 2 || !n.is_multiple_of(block) || first >> SPACE_SHIFT == SPACE_PRIVATE {
        return None;
    }
    // Every lane reads what the first of its block reads (one pass, without early exit).
    let mut same = true;
    for block in addrs.chunks_exact(block) {
        for &a in block {
            same &= a == block[0];
        }
    }
    same.then_some(block)
}

/// The low `size` bytes of each of `n` values (the `j`th is `value(j)`), little-endian, one
/// after the other, into `bytes`: one loop per width, so each value is one store.
#[inline(always)]
fn le_bytes(n: usize, value: impl Fn(usize) -> u64, size: usize, bytes: &mut Vec<u8>) {
    bytes.clear();
    let width = size.min(8);
    bytes.resize(n * width, 0);
    // Plain loops, one per width (an adapter's `for_each` can be left out of line in a large
    // caller).
    macro_rules! each {
        ($n:literal, $t:ty) => {
            for (j, b) in bytes.chunks_exact_mut($n).enumerate() {
                b.copy_from_slice(&(value(j) as $t).to_le_bytes());
            }
        };
    }
    match size {
        4 => each!(4, u32),
        8 => each!(8, u64),
        2 => each!(2, u16),
        1 => each!(1, u8),
        _ => {
            for (j, b) in bytes.chunks_exact_mut(width).enumerate() {
                b.copy_from_slice(&value(j).to_le_bytes()[..width]);
            }
        }
    }
}

/// Whether `size` bytes at `addr` overlap one of `ranges` (sorted, disjoint `[start, end)`).
fn watched(ranges: &[(u64, u64)], addr: u64, size: u64) -> bool {
    let end = addr.saturating_add(size.max(1));
    let i = ranges.partition_point(|r| r.1 <= addr);
    ranges.get(i).is_some_and(|r| r.0 < end)
}

impl<H: GroupHooks> Executor<'_, '_, H> {
    /// The run of lanes from `act[k]`: as many as are consecutive lanes whose addresses in the
    /// slot at word `at` step by `size` (not in private memory, which is each lane's own; else
    /// one lane). Its first lane and length.
    #[inline(always)]
    fn run_of(&self, at: usize, size: usize, k: usize) -> (usize, usize) {
        let (regs, act) = (self.regs, self.act.lanes);
        let first = act[k] as usize;
        let addr = regs.get(at + first);
        let mut n = 1;
        if addr >> SPACE_SHIFT == SPACE_PRIVATE {
            return (first, n);
        }
        if let Some((_, hi)) = self.act.dense {
            // The lanes from `first` on are consecutive: only the addresses need comparing. When
            // the next and the last lane continue the run, all of them likely do: one pass
            // without an early exit (which the compiler can vectorise) tests that, the expected
            // address stepping by `size` (an induction, not a multiplication per lane).
            let at_lane = |l: usize| addr.wrapping_add(((l - first) * size) as u64);
            if hi - first > 2
                && regs.get(at + first + 1) == at_lane(first + 1)
                && regs.get(at + hi - 1) == at_lane(hi - 1)
            {
                let mut all = true;
                let mut expected = addr;
                for l in first..hi {
                    all &= regs.get(at + l) == expected;
                    expected = expected.wrapping_add(size as u64);
                }
                if all {
                    return (first, hi - first);
                }
            }
            let mut next = addr.wrapping_add(size as u64);
            while first + n < hi && regs.get(at + first + n) == next {
                n += 1;
                next = next.wrapping_add(size as u64);
            }
        } else {
            while k + n < act.len()
                && act[k + n] as usize == first + n
                && regs.get(at + first + n) == addr.wrapping_add((n * size) as u64)
            {
                n += 1;
            }
        }
        (first, n)
    }

    /// Whether no active lane's address in the slot at word `at` is its predecessor's (in the
    /// lane list) nor, for consecutive lanes, the element of `size` bytes after it: each lane is
    /// then a run of its own ([`Executor::run_of`]), and the next lane reads another element.
    #[inline(always)]
    fn lone_lanes(&self, at: usize, size: u64) -> bool {
        let (regs, act) = (self.regs, self.act.lanes);
        let apart = |pair: &[u32]| {
            let (l0, l1) = (pair[0] as usize, pair[1] as usize);
            let (a0, a1) = (regs.get(at + l0), regs.get(at + l1));
            a1 != a0 && (l1 != l0 + 1 || a1 != a0.wrapping_add(size))
        };
        // The first two lanes tell most patterns (a row's lanes reading one element, a run)
        // before a pass over all of them, without early exit, which the compiler can vectorise.
        let mut lone = act.len() > 1 && apart(&act[..2]);
        if !lone {
            return false;
        }
        match self.act.dense {
            // Consecutive lanes: each address against the one before, no list read.
            Some((lo, hi)) => {
                for l in lo + 1..hi {
                    let (a0, a1) = (regs.get(at + l - 1), regs.get(at + l));
                    lone &= a1 != a0 && a1 != a0.wrapping_add(size);
                }
            }
            None => {
                for pair in act.windows(2) {
                    lone &= apart(pair);
                }
            }
        }
        lone
    }

    /// The span of the addresses in the slot at word `at` of the active lanes, when they are
    /// several lanes whose addresses lie in one allocation outside private memory, all aligned
    /// (`unaligned` is the alignment's mask): `(lo, hi)`. Each address is read once, in a pass
    /// without early exit (which the compiler can vectorise over a range of lanes).
    #[inline(always)]
    fn span(&self, at: usize, unaligned: u64) -> Option<(u64, u64)> {
        let (regs, act) = (self.regs, self.act);
        if act.lanes.len() < 2 {
            return None;
        }
        // The tags (space and allocation) agree where every address has the same bits above the
        // offset. Offsets below 4 GiB (no bit of 32 to 39 set in any) compare as 32-bit numbers,
        // which vectorise.
        let (mut all, mut any, mut lo, mut hi) = (u64::MAX, 0, u32::MAX, 0);
        act.each(|l| {
            let a = regs.get(at + l);
            (all, any, lo, hi) = (all & a, any | a, lo.min(a as u32), hi.max(a as u32));
        });
        let one = any & unaligned == 0
            && (all ^ any) >> INDEX_SHIFT == 0
            && (any & OFFSET_MASK) >> 32 == 0
            && any >> SPACE_SHIFT != SPACE_PRIVATE;
        let tag = all & !OFFSET_MASK;
        one.then_some((tag | lo as u64, tag | hi as u64))
    }

    /// When the active lanes are a range cut into rows of `n` consecutive lanes (`first_run`, the
    /// active lanes' first run as [`Executor::run_of`] found it for the slot at word `at` and
    /// `size`, at least [`MIN_ROW`] lanes ([`MIN_ROW_TOLD`] with hooks) and dividing the range:
    /// the rows of a two-dimensional group), its start a multiple of `size` (and of the
    /// alignment: `unaligned` is its mask), each later lane's address the same distance from the
    /// lane a row before it (rows equally far apart, which keeps each a run), the rows in one
    /// allocation outside private memory: the span from the lowest start to the highest row's
    /// last element, the number of rows, and the first row's start and the distance between rows
    /// ([`Rows`]). One pass without early exit over the lanes after the first row (which the
    /// compiler can vectorise): `run_of` has checked the first.
    #[inline(always)]
    fn rows(&self, at: usize, size: usize, first_run: (usize, usize), unaligned: u64) -> Option<Rows> {
        let (first, end) = self.act.dense?;
        let (count, n) = (end - first, first_run.1);
        let min_row = if H::ACTIVE { MIN_ROW_TOLD } else { MIN_ROW };
        if first_run.0 != first || n < min_row || n >= count || !count.is_multiple_of(n) {
            return None;
        }
        let regs = self.regs;
        let start = regs.get(at + first);
        let mut all = true;
        let stride = regs.get(at + first + n).wrapping_sub(start);
        for l in first + n..end {
            all &= regs.get(at + l).wrapping_sub(regs.get(at + l - n)) == stride;
        }
        if !all {
            return None;
        }
        Rows::of(start, stride, (count / n, n), size, unaligned)
    }

    /// Without hooks to tell: the active lanes' loads of `size` bytes at the addresses in the
    /// slot at word `at` into the slot at word `d`, whatever their pattern (rows of a
    /// two-dimensional group, strides, one address, the lanes a branch kept), when
    /// [`Executor::span`] finds them in one allocation, each address a whole element (a multiple
    /// of `size` as well as of the alignment), and it allows the whole span: one bounds check,
    /// then one plain load per lane. False, with the registers as they were or to be rewritten,
    /// when not (the lane-by-lane path then reports what is wrong).
    #[inline(always)]
    fn gather(&mut self, d: usize, at: usize, size: usize, unaligned: u64) -> bool {
        let Some(span) = self.span(at, unaligned | (size as u64 - 1)) else { return false };
        let (regs, act) = (self.regs, self.act);
        let mut mem = self.space.of(&mut self.lanes[act.lanes[0] as usize].private);
        match act.dense {
            Some((first, end)) => mem.load_gather(
                span,
                size,
                end - first,
                move |j| regs.get(at + first + j),
                move |j, v| regs.set(d + first + j, v),
            ),
            None => {
                let lane = move |j: usize| act.lanes[j] as usize;
                mem.load_gather(
                    span,
                    size,
                    act.lanes.len(),
                    move |j| regs.get(at + lane(j)),
                    move |j, v| regs.set(d + lane(j), v),
                )
            }
        }
        .is_ok()
    }

    /// [`Executor::gather`] for stores of the slot at word `s`, in lane order (the last lane
    /// writing an address wins, as lane by lane). A store to shared memory ends each lane's spin.
    #[inline(always)]
    fn scatter(&mut self, s: usize, at: usize, size: usize, unaligned: u64) -> bool {
        let Some(span) = self.span(at, unaligned | (size as u64 - 1)) else { return false };
        let (regs, act) = (self.regs, self.act);
        let mut mem = self.space.of(&mut self.lanes[act.lanes[0] as usize].private);
        let stored = match act.dense {
            Some((first, end)) => mem.store_scatter(
                span,
                size,
                end - first,
                move |j| regs.get(at + first + j),
                move |j| regs.get(s + first + j),
            ),
            None => {
                let lane = move |j: usize| act.lanes[j] as usize;
                mem.store_scatter(
                    span,
                    size,
                    act.lanes.len(),
                    move |j| regs.get(at + lane(j)),
                    move |j| regs.get(s + lane(j)),
                )
            }
        };
        if stored.is_err() {
            return false;
        }
        if self.flags.spinning {
            for &l in act.lanes {
                self.lanes[l as usize].spin.repeats = 0;
            }
        }
        true
    }

    /// Whether every active lane's address in the slot at word `at` is an address of its own
    /// private memory, aligned (`unaligned` is the alignment's mask) with `size` bytes inside it:
    /// a variable the optimiser left in memory. Stops at the first lane that is not.
    #[inline(always)]
    fn all_private(&self, at: usize, size: usize, unaligned: u64) -> bool {
        let (regs, lanes) = (self.regs, &*self.lanes);
        self.act.lanes.iter().all(|&l| {
            let addr = regs.get(at + l as usize);
            addr & unaligned == 0 && private_range(lanes[l as usize].private.len(), addr, size).is_some()
        })
    }

    /// The active lanes' loads of `size` bytes from their private memory when
    /// [`Executor::all_private`] holds: each read straight from the lane's memory (the hooks
    /// never hear of private memory). False, with nothing done, when not.
    #[inline(always)]
    fn private_loads(&mut self, d: usize, at: usize, size: usize, unaligned: u64) -> bool {
        if !self.all_private(at, size, unaligned) {
            return false;
        }
        let regs = self.regs;
        for &l in self.act.lanes {
            let l = l as usize;
            regs.set(d + l, load_private(&self.lanes[l].private, regs.get(at + l), size).unwrap_or(0));
        }
        true
    }

    /// The active lanes' stores of the slot at word `s` to their private memory, as
    /// [`Executor::private_loads`]; not while some lane may spin (a private store then goes into
    /// its spin watch, on the general path).
    #[inline(always)]
    fn private_stores(&mut self, s: usize, at: usize, size: usize, unaligned: u64) -> bool {
        if self.flags.spinning || !self.all_private(at, size, unaligned) {
            return false;
        }
        let regs = self.regs;
        for &l in self.act.lanes {
            let l = l as usize;
            store_private(&mut self.lanes[l].private, regs.get(at + l), size, regs.get(s + l));
        }
        true
    }

    /// The active lanes' loads of a composite value (`layout`'s leaves into the slots from
    /// `dst`) from their private memory, when [`Executor::all_private`] holds for the whole value
    /// and its leaves do not overwrite the address: leaf by leaf, each lane's straight from its
    /// memory. False, with nothing done, when not.
    #[inline(always)]
    fn private_values(&mut self, dst: Reg, ptr: Reg, layout: &ir::Layout, align: u8) -> bool {
        let regs = self.regs;
        let at = regs.slot(ptr as usize);
        let overwrites = (dst as usize..dst as usize + layout.leaves.len()).contains(&(ptr as usize));
        if overwrites || !self.all_private(at, layout.size as usize, align as u64 - 1) {
            return false;
        }
        for (i, leaf) in layout.leaves.iter().enumerate() {
            let (d, offset, size) = (regs.slot(dst as usize + i), leaf.offset as u64, leaf.size as usize);
            for &l in self.act.lanes {
                let l = l as usize;
                let value = load_private(&self.lanes[l].private, regs.get(at + l) + offset, size);
                regs.set(d + l, value.unwrap_or(0));
            }
        }
        true
    }

    /// Stepping with watched bytes: a plain access of `size` bytes at the address in slot `ptr`
    /// of the warp's one lane stops before it runs when it overlaps them, until the scheduler
    /// grants it. Whether it runs as a granted step (its effect is then recorded), or the event
    /// that stops it.
    #[inline(always)]
    fn plain_step(&mut self, ptr: Reg, size: u64, op: AtomicOp, loc: u32) -> Result<bool, Event> {
        if self.watching {
            let addr = self.regs.r(ptr as usize, self.act.lanes[0] as usize);
            if watched(self.exec.watch, addr, size) {
                if !std::mem::take(self.granted) {
                    self.p -= 1;
                    let size = size as u32;
                    return Err(Event::Stop(Yield::AtAtomic { loc, op, addr, size, plain: true }));
                }
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Lane `l`'s index is checked against `extent` elements.
    #[inline(always)]
    pub(super) fn index_check(&mut self, index: u32, ptr: Reg, extent: u32, loc: u32) {
        let regs = self.regs;
        let index = self.func.indices[index as usize];
        let (at, shift) = (regs.slot(index.reg as usize), extend_shift(index.bits));
        // A negative index is past the end as an unsigned one.
        let outside = |l: usize| extend(regs.get(at + l), shift) as u64 >= extent as u64;
        let mut any = false;
        self.act.each(|l| any |= outside(l));
        if !any {
            return;
        }
        for &l in self.act.lanes {
            let l = l as usize;
            if outside(l) {
                let i = extend(regs.get(at + l), shift);
                let gid = self.ids.global(l);
                let finding = faults::array_index(self.exec, regs.r(ptr as usize, l), i, extent, gid, loc);
                self.sink.findings.push(finding);
            }
        }
    }

    /// Tells the hooks of the plain loads (with `stored`, the stores of the values in the slot at
    /// word `stored`) of `size` bytes by `lanes` at the addresses in the slot at word `at`, as
    /// one gather or scatter (out of line: the interpreter's loop stays small). Loads whose lanes
    /// `p` apart read one element go as `p` loads of one element each ([`Self::tell_periodic`]).
    #[inline(never)]
    fn tell_each(&mut self, lanes: &[u32], at: usize, stored: Option<usize>, size: u8, loc: u32) {
        if stored.is_none() && self.tell_periodic(lanes, at, size, loc) {
            return;
        }
        let regs = self.regs;
        let (kind, s) = match stored {
            Some(s) => (AccessKind::Store, s),
            None => (AccessKind::Load, at),
        };
        let access = Access { kind, addr: 0, size: size as u32, loc, stored: &[] };
        self.sink.hooks.access_each(lanes, &access, move |l| (regs.get(at + l as usize), regs.get(s + l as usize)));
    }

    /// The addresses in the slot at word `at` of `lanes`, copied out of the register file (taken
    /// from `Scratch::addrs`; give the vector back with [`Self::give_addrs`]): the pattern
    /// checks below then scan a plain slice.
    #[inline(always)]
    fn lane_addrs(&mut self, lanes: &[u32], at: usize) -> Vec<u64> {
        let regs = self.regs;
        let mut addrs = std::mem::take(&mut self.scratch.addrs);
        addrs.clear();
        match dense(lanes) {
            Some((lo, hi)) => addrs.extend((lo..hi).map(|l| regs.get(at + l))),
            None => addrs.extend(lanes.iter().map(|&l| regs.get(at + l as usize))),
        }
        addrs
    }

    #[inline(always)]
    fn give_addrs(&mut self, addrs: Vec<u64>) {
        self.scratch.addrs = addrs;
    }

    /// The loads of `lanes` (addresses in the slot at word `at`, all loaded, in bounds and
    /// aligned), when the lanes `p` apart read the same element and the first `p` read different
    /// ones outside private memory (a tile's row read by every row of a work-group: GEMM's
    /// `__local` tiles): told to the hooks as one periodic load ([`GroupHooks::load_periodic`]),
    /// and true. Each element is read by the same lanes in the same
    /// order as lane by lane. False, telling nothing, for any other pattern.
    #[inline(never)]
    fn tell_periodic(&mut self, lanes: &[u32], at: usize, size: u8, loc: u32) -> bool {
        // No lane among the first few reads what the first reads: no period (most scatters).
        let (regs, n) = (self.regs, lanes.len());
        let addr = |k: usize| regs.get(at + lanes[k] as usize);
        if n < 2 || !(2..n.min(MAX_PERIOD + 1)).any(|k| addr(k) == addr(0)) {
            return false;
        }
        let addrs = self.lane_addrs(lanes, at);
        let told = periodic(&addrs).is_some_and(|p| {
            let access = Access { kind: AccessKind::Load, addr: 0, size: size as u32, loc, stored: &[] };
            self.sink.hooks.load_periodic(lanes, p, &access, |k| addrs[k]);
            true
        });
        self.give_addrs(addrs);
        told
    }

    /// The loads of `lanes` (addresses in the slot at word `at`, all loaded, in bounds and
    /// aligned, in one allocation), when they come in blocks of at least two consecutive lanes
    /// of one address each, outside private memory: told to the hooks as one load of blocks
    /// ([`GroupHooks::load_blocks`]), and true. False, telling nothing, for any other pattern.
    fn tell_blocks(&mut self, lanes: &[u32], at: usize, size: u8, loc: u32) -> bool {
        // The second lane reads elsewhere than the first: no blocks.
        let regs = self.regs;
        if lanes.len() < 2 || regs.get(at + lanes[0] as usize) != regs.get(at + lanes[1] as usize) {
            return false;
        }
        let addrs = self.lane_addrs(lanes, at);
        let told = blocks(&addrs).is_some_and(|block| {
            let access = Access { kind: AccessKind::Load, addr: 0, size: size as u32, loc, stored: &[] };
            self.sink.hooks.load_blocks(lanes, block, &access, |j| addrs[j * block]);
            true
        });
        self.give_addrs(addrs);
        told
    }

    /// Stores the values in the slot at word `s` of the `n` consecutive lanes from `first`, `size`
    /// bytes each from `addr` on, telling no hooks; false, with nothing stored, if memory
    /// refuses.
    #[inline(always)]
    fn store_lanes(&mut self, s: usize, first: usize, n: usize, addr: u64, size: usize) -> bool {
        let regs = self.regs;
        let mut mem = self.space.of(&mut self.lanes[first].private);
        if n == 1 {
            return mem.store(addr, size, regs.get(s + first)).is_ok();
        }
        mem.store_run(addr, size, n, move |j| regs.get(s + first + j)).is_ok()
    }

    /// Where the group's lanes access `size` bytes through the addresses of descriptor `a`
    /// (every lane active): one run of consecutive elements from an aligned start, rows as
    /// [`Executor::rows`] finds them, or an element per row of a two-dimensional group (rows
    /// apart); None for other patterns, short groups, and private memory (the plain paths handle
    /// those as ever, and say what is wrong).
    #[inline(always)]
    fn affine_shape(&self, a: Affine, size: usize, unaligned: u64) -> Option<Shape> {
        let grid = self.grid?;
        let a = a.widened(grid, false)?;
        let (count, width) = (grid.count, grid.width);
        if count < SHORT_RUN || a.base >> SPACE_SHIFT == SPACE_PRIVATE {
            return None;
        }
        if a.step == 0 {
            // Lanes of a row read one element; rows read different ones.
            if a.row_step == 0 || width < 2 || count <= width || !count.is_multiple_of(width) {
                return None;
            }
            return Rows::of(a.base, a.row_step, (count / width, 1), size, unaligned).map(Shape::Blocks);
        }
        if a.step != size as u64 {
            return None;
        }
        if count <= width || a.row_step == (size * width) as u64 {
            return (a.base & unaligned == 0).then_some(Shape::Run(a.base));
        }
        if width < MIN_ROW || !count.is_multiple_of(width) {
            return None;
        }
        Rows::of(a.base, a.row_step, (count / width, width), size, unaligned).map(Shape::Rows)
    }

    /// A load of every lane of the group through the addresses of descriptor `a` (of slot
    /// `ptr`) into `dst`, where [`Executor::affine_shape`] finds their pattern and memory allows
    /// it: what `load_scalar` does for that pattern, told to the hooks alike. False, with
    /// nothing written, where not.
    #[inline(always)]
    pub(super) fn affine_load(&mut self, dst: Reg, ptr: Reg, (size, align): (u8, u8), loc: u32, a: Affine) -> bool {
        let Some(shape) = self.affine_shape(a, size as usize, align as u64 - 1) else { return false };
        let tell = self.tells_load(self.p);
        let regs = self.regs;
        let count = self.act.lanes.len();
        let d = regs.slot(dst as usize);
        let mut mem = self.space.of(&mut self.lanes[0].private);
        // SAFETY: row `d` is a slot of the frame and `0..count` the active lanes (below the
        // stride); nothing else reaches the register file while the load runs.
        let out = unsafe { regs.row_mut(d, (0, count)) };
        match shape {
            Shape::Run(addr) => {
                if mem.load_run(addr, size as usize, out).is_err() {
                    return false;
                }
                if tell {
                    let access = Access { kind: AccessKind::Load, addr, size: size as u32, loc, stored: &[] };
                    self.sink.hooks.access_lanes(0, count as u32, &access);
                }
            }
            Shape::Rows(found) => {
                let hear = tell && self.sink.hooks.hears_plain(found.start);
                let n = count / found.count;
                if (hear && dst == ptr)
                    || mem.load_rows(found.span, (size as usize, n), |r| found.start(r), out).is_err()
                {
                    return false;
                }
                if hear {
                    let access =
                        Access { kind: AccessKind::Load, addr: found.start, size: size as u32, loc, stored: &[] };
                    self.sink.hooks.access_rows(0, (n as u32, found.count as u32), found.stride, &access);
                }
            }
            Shape::Blocks(found) => {
                // One element loaded per row and written in the row's lanes; the hooks hear of
                // the rows as the blocks the gather this replaces finds (and, like it, not this
                // way when the loaded values replace the addresses).
                let hear = tell && self.sink.hooks.hears_plain(found.start);
                if hear && dst == ptr {
                    return false;
                }
                let values = &mut self.scratch.values;
                values.clear();
                values.resize(found.count, 0);
                if mem.load_rows(found.span, (size as usize, 1), |r| found.start(r), values).is_err() {
                    return false;
                }
                let width = count / found.count;
                for (row, &v) in out.chunks_exact_mut(width).zip(values.iter()) {
                    row.fill(v);
                }
                if hear {
                    let access = Access { kind: AccessKind::Load, addr: 0, size: size as u32, loc, stored: &[] };
                    self.sink.hooks.load_blocks(self.act.lanes, width, &access, |j| found.start(j));
                }
            }
        }
        true
    }

    /// A store of every lane of the group's value in `src` through the addresses of descriptor
    /// `a`, as [`Executor::affine_load`].
    #[inline(always)]
    pub(super) fn affine_store(&mut self, src: Reg, (size, align): (u8, u8), loc: u32, a: Affine) -> bool {
        let Some(shape) = self.affine_shape(a, size as usize, align as u64 - 1) else { return false };
        let regs = self.regs;
        let count = self.act.lanes.len();
        let s = regs.slot(src as usize);
        // A store to shared memory (never private, here) ends each lane's spin.
        let spun = |ex: &mut Self| {
            if ex.flags.spinning {
                for lane in &mut ex.lanes[..count] {
                    lane.spin.repeats = 0;
                }
            }
        };
        match shape {
            // Every lane of a row storing one element: left to the plain path (a race the
            // detector reports lane by lane).
            Shape::Blocks(_) => return false,
            Shape::Run(addr) => {
                spun(self);
                if !self.store_lanes(s, 0, count, addr, size as usize) {
                    return false;
                }
                if H::ACTIVE {
                    let bytes = &mut self.scratch.bytes;
                    le_bytes(count, move |j| regs.get(s + j), size as usize, bytes);
                    let access = Access { kind: AccessKind::Store, addr, size: size as u32, loc, stored: bytes };
                    self.sink.hooks.access_lanes(0, count as u32, &access);
                }
            }
            Shape::Rows(found) => {
                let (rows, n) = (found.count, count / found.count);
                let mut mem = self.space.of(&mut self.lanes[0].private);
                let value = move |r: usize, j: usize| regs.get(s + r * n + j);
                if mem.store_rows(found.span, (size as usize, n, rows), |r| found.start(r), value).is_err() {
                    return false;
                }
                spun(self);
                if H::ACTIVE {
                    let bytes = &mut self.scratch.bytes;
                    le_bytes(count, move |j| regs.get(s + j), size as usize, bytes);
                    let access =
                        Access { kind: AccessKind::Store, addr: found.start, size: size as u32, loc, stored: bytes };
                    self.sink.hooks.access_rows(0, (n as u32, rows as u32), found.stride, &access);
                }
            }
        }
        true
    }

    #[inline(always)]
    pub(super) fn load_scalar(&mut self, dst: Reg, ptr: Reg, size: u8, loc: u32, align: u8) -> Option<Event> {
        let step = match self.plain_step(ptr, size as u64, AtomicOp::Load, loc) {
            Ok(step) => step,
            Err(e) => return Some(e),
        };
        let (regs, act) = (self.regs, self.act.lanes);
        let (d, at) = (regs.slot(dst as usize), regs.slot(ptr as usize));
        let unaligned = align as u64 - 1;
        if !step && self.private_loads(d, at, size as usize, unaligned) {
            return None;
        }
        // The first run: all the lanes, the common case, goes on below as one run. Fewer: one
        // pass over the lanes may load them all, and what is left is telling the hooks (which
        // read the addresses, so not when the loaded values replaced them), worth it with hooks
        // when the runs are short (a run of many lanes is one memory call below).
        // Loads the hooks do not hear of (a buffer nothing writes, to the detector) are gathered
        // as without hooks: a gather's lanes all read one allocation.
        let first_run = self.run_of(at, size as usize, 0);
        let tell = self.tells_load(self.p - 1);
        let hear = tell && self.sink.hooks.hears_plain(regs.get(at + act[0] as usize));
        // Rows of a two-dimensional group, each a run: one bounds check, each row one loop, and
        // each row one run to the hooks (which read the addresses: not when the loaded values
        // replace them).
        if !step
            && (!hear || d != at)
            && let Some(found) = self.rows(at, size as usize, first_run, unaligned)
        {
            let (n, first, rows) = (first_run.1, first_run.0, found.count);
            let mut mem = self.space.of(&mut self.lanes[first].private);
            // SAFETY: row `d` is a slot of the frame and the rows' lanes are active lanes (below
            // the stride); nothing else reaches the register file while the load runs (the rows'
            // starts come from `found`, not from the addresses the values may replace).
            let out = unsafe { regs.row_mut(d, (first, first + n * rows)) };
            if mem.load_rows(found.span, (size as usize, n), |r| found.start(r), out).is_ok() {
                if hear {
                    let access =
                        Access { kind: AccessKind::Load, addr: found.start, size: size as u32, loc, stored: &[] };
                    self.sink.hooks.access_rows(first as u32, (n as u32, rows as u32), found.stride, &access);
                }
                return None;
            }
        }
        let gathered = !step
            && first_run.1 < act.len()
            && (!hear || (d != at && first_run.1 < SHORT_RUN))
            && self.gather(d, at, size as usize, unaligned);
        if gathered && !hear {
            return None;
        }
        // Every lane a run of its own that shares no element with the next: the loop below would
        // tell the hooks of them all as one gather (the rows of a group reading a `__local` tile).
        if gathered && first_run.1 == 1 && self.lone_lanes(at, size as u64) {
            self.tell_each(act, at, None, size, loc);
            return None;
        }
        // Blocks of consecutive lanes each reading one element (the columns of a `__local` tile
        // read by the rows of a group): one call for them all, as the loop below would tell
        // the hooks of each block in turn.
        if gathered && first_run.1 == 1 && self.tell_blocks(act, at, size, loc) {
            return None;
        }
        // Where the lanes of short runs the hooks have not heard of yet begin, in `act`.
        let mut scattered = None;
        let mut k = 0;
        while k < act.len() {
            let (first, n) = if k == 0 { first_run } else { self.run_of(at, size as usize, k) };
            let addr = regs.get(at + first);
            // Lanes after this one reading the same element (outside private memory): one load
            // for them all (for every lane, when the address is uniform).
            let same = if n == 1 && addr & unaligned == 0 && addr >> SPACE_SHIFT != SPACE_PRIVATE {
                act[k + 1..].iter().take_while(|&&l| regs.get(at + l as usize) == addr).count()
            } else {
                0
            };
            if gathered {
                // Every lane loaded, in bounds and aligned: the hooks hear of the runs as below,
                // and of the lanes of short runs in between as one gather (`scattered`).
                let access = Access { kind: AccessKind::Load, addr, size: size as u32, loc, stored: &[] };
                if same == 0 && n < SHORT_RUN / 2 {
                    scattered.get_or_insert(k);
                    k += n;
                    continue;
                }
                if let Some(from) = scattered.take() {
                    self.tell_each(&act[from..k], at, None, size, loc);
                }
                if same > 0 {
                    self.sink.hooks.load_same(&act[k..k + 1 + same], &access);
                    k += 1 + same;
                } else {
                    self.sink.hooks.access_lanes(first as u32, n as u32, &access);
                    k += n;
                }
                continue;
            }
            if same > 0 {
                let mut mem = self.space.of(&mut self.lanes[first].private);
                if let Ok(v) = mem.load(addr, size as usize) {
                    let lanes = &act[k..k + 1 + same];
                    for &l in lanes {
                        regs.set(d + l as usize, v);
                    }
                    if tell {
                        let access = Access { kind: AccessKind::Load, addr, size: size as u32, loc, stored: &[] };
                        self.sink.hooks.load_same(lanes, &access);
                    }
                    k += 1 + same;
                    continue;
                }
            }
            k += n;
            if n > 1 && addr & unaligned == 0 {
                // Consecutive lanes read consecutive elements: one check for them all (alignment
                // too: each element is as aligned as the first).
                let mut mem = self.space.of(&mut self.lanes[first].private);
                // Refused, it writes no register: the lanes are then loaded one by one below.
                // SAFETY: row `d` is a slot of the frame and `first..first + n` active lanes;
                // nothing else reaches the register file while the load runs.
                let out = unsafe { regs.row_mut(d, (first, first + n)) };
                if mem.load_run(addr, size as usize, out).is_ok() {
                    if tell {
                        let access = Access { kind: AccessKind::Load, addr, size: size as u32, loc, stored: &[] };
                        self.sink.hooks.access_lanes(first as u32, n as u32, &access);
                    }
                    continue;
                }
                // Some lane is outside: lane by lane names it.
            }
            for (l, ls) in self.lanes.iter_mut().enumerate().skip(first).take(n) {
                let addr = regs.get(at + l);
                if addr & unaligned != 0 {
                    self.sink.misaligned(addr, size as u64, align as u64, "load", self.ids.global(l), loc);
                }
                if let Some(v) = load_private(&ls.private, addr, size as usize) {
                    self.sink.load(l, addr, size as u64, loc);
                    if step {
                        ls.effect = (Some(v), None);
                    }
                    regs.set(d + l, v);
                    continue;
                }
                let mut mem = self.space.of(&mut ls.private);
                let v = match mem.load(addr, size as usize) {
                    Ok(v) => {
                        self.sink.load(l, addr, size as u64, loc);
                        if step {
                            ls.effect = (Some(v), None);
                        }
                        v
                    }
                    Err(f) => self.sink.refused_load(&mut mem, f, (l, self.ids.global(l)), (addr, size as u64), loc),
                };
                regs.set(d + l, v);
            }
        }
        if let Some(from) = scattered {
            self.tell_each(&act[from..], at, None, size, loc);
        }
        None
    }

    #[inline(always)]
    pub(super) fn store_scalar(&mut self, src: Reg, ptr: Reg, size: u8, loc: u32, align: u8) -> Option<Event> {
        let step = match self.plain_step(ptr, size as u64, AtomicOp::Store, loc) {
            Ok(step) => step,
            Err(e) => return Some(e),
        };
        let (regs, act) = (self.regs, self.act.lanes);
        let (s, at) = (regs.slot(src as usize), regs.slot(ptr as usize));
        let unaligned = align as u64 - 1;
        if !step && self.private_stores(s, at, size as usize, unaligned) {
            return None;
        }
        // The first run: all the lanes, the common case, goes on below as one run; fewer, and
        // without hooks to tell, one pass over the lanes may do.
        let first_run = self.run_of(at, size as usize, 0);
        // Rows of a two-dimensional group, each a run: as for loads.
        if !step && let Some(found) = self.rows(at, size as usize, first_run, unaligned) {
            let (n, first, rows) = (first_run.1, first_run.0, found.count);
            let mut mem = self.space.of(&mut self.lanes[first].private);
            let start = |r: usize| found.start(r);
            if mem
                .store_rows(found.span, (size as usize, n, rows), start, move |r, j| regs.get(s + first + r * n + j))
                .is_ok()
            {
                // Not private memory (`rows`): a store to shared memory ends each lane's spin.
                if self.flags.spinning {
                    for lane in &mut self.lanes[first..first + rows * n] {
                        lane.spin.repeats = 0;
                    }
                }
                if H::ACTIVE {
                    let bytes = &mut self.scratch.bytes;
                    le_bytes(rows * n, move |j| regs.get(s + first + j), size as usize, bytes);
                    let access =
                        Access { kind: AccessKind::Store, addr: found.start, size: size as u32, loc, stored: bytes };
                    self.sink.hooks.access_rows(first as u32, (n as u32, rows as u32), found.stride, &access);
                }
                return None;
            }
        }
        if !H::ACTIVE && !step && first_run.1 < act.len() && self.scatter(s, at, size as usize, unaligned) {
            return None;
        }
        // Every lane a run of its own that shares no element with the next (a tile stored down
        // its columns, or every other word): one scatter, and the hooks hear of the lanes as one
        // scatter, as the loop below would tell them after storing lane by lane.
        if H::ACTIVE
            && !step
            && first_run.1 == 1
            && self.lone_lanes(at, size as u64)
            && self.scatter(s, at, size as usize, unaligned)
        {
            self.tell_each(act, at, Some(s), size, loc);
            return None;
        }
        // Where the lanes of short runs the hooks have not heard of yet begin, in `act`.
        let mut scattered = None;
        let mut k = 0;
        while k < act.len() {
            let (first, n) = if k == 0 { first_run } else { self.run_of(at, size as usize, k) };
            let addr = regs.get(at + first);
            k += n;
            // A store to shared memory ends a spin; one to private memory (one lane: `run_of`)
            // is folded into the lane's spin watch below.
            let private = addr >> SPACE_SHIFT == SPACE_PRIVATE;
            if !private && self.flags.spinning {
                for lane in &mut self.lanes[first..first + n] {
                    lane.spin.repeats = 0;
                }
            }
            // A short run (a strided or divergent store): stored now, and told to the hooks with
            // the short runs around it as one scatter (`scattered`).
            if H::ACTIVE
                && n < SHORT_RUN / 2
                && !private
                && !step
                && addr & unaligned == 0
                && self.store_lanes(s, first, n, addr, size as usize)
            {
                scattered.get_or_insert(k - n);
                continue;
            }
            if let Some(from) = scattered.take() {
                self.tell_each(&act[from..k - n], at, Some(s), size, loc);
            }
            if n > 1 && addr & unaligned == 0 && self.store_lanes(s, first, n, addr, size as usize) {
                if H::ACTIVE {
                    let bytes = &mut self.scratch.bytes;
                    le_bytes(n, move |j| regs.get(s + first + j), size as usize, bytes);
                    let access = Access { kind: AccessKind::Store, addr, size: size as u32, loc, stored: bytes };
                    self.sink.hooks.access_lanes(first as u32, n as u32, &access);
                }
                continue;
            }
            for (l, ls) in self.lanes.iter_mut().enumerate().skip(first).take(n) {
                let (addr, value) = (regs.get(at + l), regs.get(s + l));
                if addr & unaligned != 0 {
                    self.sink.misaligned(addr, size as u64, align as u64, "store", self.ids.global(l), loc);
                }
                if private && let Some(old) = load_private(&ls.private, addr, size as usize) {
                    // Private memory takes every store inside it.
                    if self.flags.spinning {
                        ls.spin.private_store(addr, old, value & mask(size * 8));
                    }
                    store_private(&mut ls.private, addr, size as usize, value);
                    self.sink.store(l, addr, size as u64, value, loc);
                    if step {
                        ls.effect = (None, Some(value & mask(size * 8)));
                    }
                    continue;
                }
                let mut mem = self.space.of(&mut ls.private);
                if private
                    && self.flags.spinning
                    && let Ok(old) = mem.load(addr, size as usize)
                {
                    ls.spin.private_store(addr, old, value & mask(size * 8));
                }
                match mem.store(addr, size as usize, value) {
                    Ok(()) => {
                        self.sink.store(l, addr, size as u64, value, loc);
                        if step {
                            ls.effect = (None, Some(value & mask(size * 8)));
                        }
                    }
                    Err(f) => {
                        self.sink.refused_store(&mut mem, f, (l, self.ids.global(l)), (addr, size as u64), value, loc)
                    }
                }
            }
        }
        if let Some(from) = scattered {
            self.tell_each(&act[from..], at, Some(s), size, loc);
        }
        None
    }

    /// A load of a composite value (its leaves, by the layout).
    #[inline(always)]
    pub(super) fn load(&mut self, dst: Reg, ptr: Reg, layout: u32, loc: u32, align: u8) -> Option<Event> {
        let (module, regs) = (self.module, self.regs);
        let layout = &module.layouts[layout as usize];
        let step = match self.plain_step(ptr, layout.size as u64, AtomicOp::Load, loc) {
            Ok(step) => step,
            Err(e) => return Some(e),
        };
        if !step && self.private_values(dst, ptr, layout, align) {
            return None;
        }
        for &l in self.act.lanes {
            let l = l as usize;
            let addr = regs.r(ptr as usize, l);
            let ls = &mut self.lanes[l];
            if addr & (align as u64 - 1) != 0 {
                self.sink.misaligned(addr, layout.size as u64, align as u64, "load", self.ids.global(l), loc);
            }
            if private_range(ls.private.len(), addr, layout.size as usize).is_some() {
                // All of it in the lane's private memory: each leaf is there too.
                for (i, leaf) in layout.leaves.iter().enumerate() {
                    let at = addr + leaf.offset as u64;
                    regs.set_r(dst as usize + i, l, load_private(&ls.private, at, leaf.size as usize).unwrap_or(0));
                    self.sink.load(l, at, leaf.size as u64, loc);
                }
                continue;
            }
            let mut mem = self.space.of(&mut ls.private);
            // Check the whole value first, so a partly-outside access is one finding; one that
            // only the buffer's mode refuses is reported and performed.
            let want = match mem.check(addr, layout.size as usize, LOAD) {
                Ok(()) => Some(LOAD),
                Err(f) => {
                    self.sink.fault(&mem, f, false, self.ids.global(l), loc);
                    f.mode_only().then_some(ANY)
                }
            };
            if let Some(want) = want {
                for (i, leaf) in layout.leaves.iter().enumerate() {
                    let at = addr + leaf.offset as u64;
                    regs.set_r(dst as usize + i, l, mem.load_as(at, leaf.size as usize, want).unwrap_or(0));
                    self.sink.load(l, at, leaf.size as u64, loc);
                }
            } else {
                for i in 0..layout.leaves.len() {
                    regs.set_r(dst as usize + i, l, 0);
                }
            }
        }
        None
    }

    /// A store of a composite value (its leaves, by the layout).
    #[inline(always)]
    pub(super) fn store(&mut self, src: Reg, ptr: Reg, layout: u32, loc: u32, align: u8) -> Option<Event> {
        let (module, regs) = (self.module, self.regs);
        let layout = &module.layouts[layout as usize];
        if let Err(e) = self.plain_step(ptr, layout.size as u64, AtomicOp::Store, loc) {
            return Some(e);
        }
        for &l in self.act.lanes {
            let l = l as usize;
            let addr = regs.r(ptr as usize, l);
            let ls = &mut self.lanes[l];
            ls.spin.repeats = 0;
            if addr & (align as u64 - 1) != 0 {
                self.sink.misaligned(addr, layout.size as u64, align as u64, "store", self.ids.global(l), loc);
            }
            let mut mem = self.space.of(&mut ls.private);
            let want = match mem.check(addr, layout.size as usize, STORE) {
                Ok(()) => Some(STORE),
                Err(f) => {
                    self.sink.fault(&mem, f, true, self.ids.global(l), loc);
                    f.mode_only().then_some(ANY)
                }
            };
            if let Some(want) = want {
                for (i, leaf) in layout.leaves.iter().enumerate() {
                    let at = addr + leaf.offset as u64;
                    let value = regs.r(src as usize + i, l);
                    let _ = mem.store_as(at, leaf.size as usize, value, want);
                    self.sink.store(l, at, leaf.size as u64, value, loc);
                }
            }
        }
        None
    }

    /// `memmove` of `size` bytes (a register) from `src` to `dst`.
    #[inline(always)]
    pub(super) fn copy_memory(&mut self, dst: Reg, src: Reg, size: Reg, loc: u32) {
        let regs = self.regs;
        for &l in self.act.lanes {
            let l = l as usize;
            let n = regs.r(size as usize, l) as usize;
            let (to, from) = (regs.r(dst as usize, l), regs.r(src as usize, l));
            let ls = &mut self.lanes[l];
            // Both sides in the lane's private memory (a struct assigned whole): moved there at
            // once (the hooks never hear of private memory).
            if let (Some(to), Some(from)) =
                (private_range(ls.private.len(), to, n), private_range(ls.private.len(), from, n))
            {
                ls.private.copy_within(from, to.start);
                ls.spin.repeats = 0;
                continue;
            }
            let mut mem = self.space.of(&mut ls.private);
            // A side only the buffer's mode refuses is reported, then copied anyway.
            let mut want = (LOAD, STORE);
            loop {
                match mem.copy_as(to, from, n, want) {
                    Ok(()) => {
                        ls.spin.repeats = 0;
                        if H::ACTIVE {
                            let hooks = &mut *self.sink.hooks;
                            let mut mem = self.space.of(&mut ls.private);
                            observe_copy(&mut mem, to, from, n, loc, &mut |a| hooks.access(l as u32, a));
                        }
                    }
                    Err((f, store)) => {
                        self.sink.fault(&mem, f, store, self.ids.global(l), loc);
                        if f.mode_only() {
                            *(if store { &mut want.1 } else { &mut want.0 }) = ANY;
                            continue;
                        }
                    }
                }
                break;
            }
        }
    }

    /// Private memory of `size` bytes aligned to `align`, at the top of each lane's stack.
    #[inline(always)]
    pub(super) fn alloca(&mut self, dst: Reg, size: u32, align: u32) -> Result<(), ExecError> {
        let regs = self.regs;
        for &l in self.act.lanes {
            let l = l as usize;
            let ls = &mut self.lanes[l];
            let start = ls.private.len().next_multiple_of(align as usize);
            if start + size as usize > MAX_PRIVATE_BYTES {
                return Err(faults::private_too_large(self.ids.global(l)));
            }
            ls.private.resize(start + size as usize, 0);
            self.flags.private = true;
            regs.set_r(dst as usize, l, address(super::super::memory::SPACE_PRIVATE, 0, start as u64));
        }
        Ok(())
    }

    /// `vload`/`vstore` and their half forms: `n` elements of `elem` bytes at element `offset`.
    #[inline(always)]
    pub(super) fn vector_memory(&mut self, inst: &Inst) {
        let Inst::VectorMemory { op, dst, offset, ptr, elem, n, loc } = *inst else { unreachable!() };
        let regs = self.regs;
        let (n, elem) = (n as u64, elem as u64);
        let width = match op {
            VecMem::LoadHalf { aligned: true } | VecMem::StoreHalf { aligned: true, .. } if n == 3 => 4,
            _ => n,
        };
        for &l in self.act.lanes {
            let l = l as usize;
            let start = regs.r(ptr as usize, l).wrapping_add(regs.r(offset as usize, l).wrapping_mul(width * elem));
            let ls = &mut self.lanes[l];
            let store = matches!(op, VecMem::Store | VecMem::StoreHalf { .. });
            if store {
                ls.spin.repeats = 0;
            }
            // `vload`/`vstore` need the element's alignment only; `vloada_half` and
            // `vstorea_half` the whole vector's (a 3-vector's as a 4-vector's).
            let align = match op {
                VecMem::Load | VecMem::Store => elem,
                VecMem::LoadHalf { aligned: true } | VecMem::StoreHalf { aligned: true, .. } => 2 * width,
                _ => 2,
            };
            if start & (align - 1) != 0 {
                let access = if store { "store" } else { "load" };
                let size = if elem == 0 { 2 * n } else { n * elem };
                self.sink.misaligned(start, size, align, access, self.ids.global(l), loc);
            }
            let lane = (l, self.ids.global(l));
            let mut mem = self.space.of(&mut ls.private);
            let sink = &mut self.sink;
            for i in 0..n {
                let at = start + i * elem;
                let slot = dst as usize + i as usize;
                match op {
                    VecMem::Load => match mem.load(at, elem as usize) {
                        Ok(v) => {
                            sink.load(l, at, elem, loc);
                            regs.set_r(slot, l, v)
                        }
                        Err(f) => regs.set_r(slot, l, sink.refused_load(&mut mem, f, lane, (at, elem), loc)),
                    },
                    VecMem::LoadHalf { .. } => match mem.load(at, 2) {
                        Ok(v) => {
                            sink.load(l, at, 2, loc);
                            regs.set_r(slot, l, bits_f32(half::to_f32(v as u16)))
                        }
                        Err(f) => {
                            let v = sink.refused_load(&mut mem, f, lane, (at, 2), loc);
                            regs.set_r(slot, l, if f.mode_only() { bits_f32(half::to_f32(v as u16)) } else { 0 });
                        }
                    },
                    VecMem::Store => {
                        let v = regs.r(slot, l);
                        match mem.store(at, elem as usize, v) {
                            Ok(()) => sink.store(l, at, elem, v, loc),
                            Err(f) => sink.refused_store(&mut mem, f, lane, (at, elem), v, loc),
                        }
                    }
                    VecMem::StoreHalf { round, f64, .. } => {
                        let v = regs.r(slot, l);
                        let x = if f64 { f64_of(v) } else { f32_of(v) as f64 };
                        let h = half::from_f64(x, round.unwrap_or(ir::HalfRound::Rte));
                        match mem.store(at, 2, h as u64) {
                            Ok(()) => sink.store(l, at, 2, h as u64, loc),
                            Err(f) => sink.refused_store(&mut mem, f, lane, (at, 2), h as u64, loc),
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{blocks, periodic};
    use crate::ir::value::{SPACE_LOCAL, SPACE_PRIVATE, address};

    /// A tile's row read by each of four rows of 8 lanes (period 8), a tile's column read by each
    /// row (blocks of 8), and what neither is: one differing lane, a period past the longest,
    /// a repeat inside the first period, private memory.
    #[test]
    fn periods_and_blocks_of_lane_addresses() {
        let at = |word: u64| address(SPACE_LOCAL, 1, word * 4);
        let rows: Vec<u64> = (0..32).map(|l| at(l % 8)).collect();
        let cols: Vec<u64> = (0..32).map(|l| at(100 + l / 8 * 34)).collect();
        assert_eq!((periodic(&rows), blocks(&rows)), (Some(8), None));
        assert_eq!((periodic(&cols), blocks(&cols)), (None, Some(8)));
        for k in [1, 9, 31] {
            let (mut row, mut col) = (rows.clone(), cols.clone());
            row[k] = at(50);
            col[k] = at(50);
            assert_eq!((periodic(&row), blocks(&col)), (None, None), "lane {k} differs");
        }
        let long: Vec<u64> = (0..64).map(|l| at(l % 32)).collect();
        assert_eq!(periodic(&long), None, "a period of 32 is past the longest looked for");
        let repeat: Vec<u64> = (0..32).map(|l| at([0, 1, 0, 2][l % 4])).collect();
        assert_eq!(periodic(&repeat), None, "lanes two apart read alike only in part");
        let private: Vec<u64> = rows.iter().map(|&a| address(SPACE_PRIVATE, 0, a & 0xfff)).collect();
        assert_eq!((periodic(&private), blocks(&private)), (None, None));
        let lone_block: Vec<u64> = (0..30).map(|l| at(l / 8)).collect();
        assert_eq!(blocks(&lone_block), None, "30 lanes are not blocks of 8");
        assert_eq!((periodic(&[]), blocks(&[])), (None, None));
    }
}
