//! The lockstep state of a work-group: the register file of all its work-items (lanes) in
//! structure-of-arrays form, each lane's own state, and the warps that advance lanes together.
//!
//! A [`Warp`] is a set of lanes that share a program counter and call stack. Its reconvergence
//! stack holds one [`Entry`] per path in flight: the top entry runs; when its lanes reach the
//! entry's join (the immediate post-dominator of the branch that parted them) it is popped and
//! the entry below, which holds the union of the paths' lanes, goes on from the join. Lanes can
//! leave a warp as a new warp of their own ([`Warp::split_off`]: at a barrier reached by only some
//! of them, or when they spin on a value another lane must write) and warps at the same place are
//! joined again at barriers ([`Warp::merge`]).
//!
//! This module knows the shapes, not the instructions: the interpreter moves entries and frames,
//! the scheduler splits and merges warps. Each thread keeps its register file's room from one
//! run to the next ([`Lanes::kept`], [`warm_registers`]), so that a worker's first group does
//! not fault it in.

use super::affine::{Affine, Grid, Held, uniform_row};
use crate::ir::reconverge::EXIT;

/// How many times a work-item may re-read the same unchanged value with the same atomic
/// before it counts as spinning.
pub const SPIN_REPEATS: u32 = 64;

/// The last atomic that changed nothing, to recognise a spin loop.
///
/// Registers are not watched: a loop whose only change is to a register spins. Private memory
/// is the lane's own too (a variable whose address is taken, such as the `expected` argument of
/// `atomic_compare_exchange_*`, which a failed exchange overwrites), so stores to it do not end a
/// spin as stores to shared memory do: they fold into `private`, and a spin goes on only while
/// that digest is what it was at the spin's last repeat. The digest XORs each store's change
/// (old value XOR new value, turned by the address), so it telescopes: a variable written and
/// set back within one iteration (`expected` set to 1 by the failed exchange, then to 0 again by
/// the loop) leaves it as it was, while a counter in private memory changes it every iteration.
#[derive(Debug, Default, Clone, Copy)]
pub struct SpinWatch {
    pub(super) loc: u32,
    pub(super) addr: u64,
    pub(super) value: u64,
    pub(super) repeats: u32,
    /// The digest of every store to this lane's private memory so far.
    pub(super) private: u64,
    /// `private` when the watched atomic last read its unchanged value.
    pub(super) mark: u64,
}

impl SpinWatch {
    /// How many times in a row the same atomic read the same unchanged value.
    pub fn unchanged(&self) -> u32 {
        self.repeats.saturating_sub(1)
    }

    /// Folds a store of `new` over `old` at private address `addr` into the digest.
    #[inline(always)]
    pub(super) fn private_store(&mut self, addr: u64, old: u64, new: u64) {
        let turn = (addr as u32).wrapping_mul(0x9E37_79B9) >> 26;
        self.private ^= (old ^ new).rotate_left(turn);
    }

    /// An atomic at `loc` on `addr` read `old` and wrote `new` (`None`: nothing): counts a
    /// repeat when it is the watched atomic reading its value again with private memory as it
    /// was, starts watching it when it changed nothing, and ends the spin when it changed memory.
    #[inline(always)]
    pub(super) fn atomic(&mut self, loc: u32, addr: u64, old: u64, new: Option<u64>) {
        if new.is_some_and(|n| n != old) {
            self.repeats = 0;
        } else if self.loc == loc && self.addr == addr && self.value == old && self.mark == self.private {
            self.repeats = self.repeats.saturating_add(1);
        } else {
            *self = SpinWatch { loc, addr, value: old, repeats: 1, private: self.private, mark: self.private };
        }
    }
}

/// Everything one lane (work-item) owns besides its registers.
#[derive(Default)]
pub struct LaneState {
    pub private: Vec<u8>,
    pub spin: SpinWatch,
    /// What the lane's last granted step of a stepping run read and wrote (see
    /// `schedule::Choice::read`).
    pub effect: (Option<u64>, Option<u64>),
    /// printf output since the last barrier (put in local-id order at every barrier).
    pub printf: String,
}

/// What some lane of the group did that `start_lanes` must undo for the next group: each flag
/// false means every lane's part is as a fresh lane has it, so the per-lane reset is skipped
/// (its writes to every lane's state are most of a short kernel's group set-up).
#[derive(Default, Debug, Clone, Copy)]
pub struct LaneFlags {
    /// Some lane printed since the output was last collected.
    pub printed: bool,
    /// Some lane's [`SpinWatch`] watched an atomic: until then no lane's watch differs from a
    /// fresh one (stores need not end a spin, private stores need no digest).
    pub spinning: bool,
    /// Some lane allocated private memory (`alloca`).
    pub private: bool,
}

/// The work-items of a group: registers (slot-major: slot `s` of lane `l` is `regs[s * stride +
/// l]`) and per-lane state. A worker thread keeps one for all the groups it runs.
#[derive(Default)]
pub struct Lanes {
    /// Lanes per register slot: the launch's work-group size.
    pub stride: usize,
    /// How many lanes the current group has (fewer than `stride` at the edges of ragged ranges).
    pub count: usize,
    pub regs: Vec<u64>,
    pub lane: Vec<LaneState>,
    /// The functions whose frames are laid out in the register file (see [`Lanes::lay`]).
    laid: Vec<u32>,
    /// What the lanes did that a new group must undo.
    pub flags: LaneFlags,
    /// Whether each lane has returned from the kernel, by lane.
    pub done: Vec<bool>,
    /// The group size the lanes' local ids were set for.
    pub shape: [u64; 3],
    /// Each lane's local id, one row of `stride` per dimension (`ids[d * stride + l]`): read
    /// by whole rows when a warp asks for its ids.
    pub ids: Vec<u64>,
    /// The current group's first global id: a lane's global id is this plus its local id.
    pub origin: [u64; 3],
    /// What is known of each register slot's lanes, by slot (see [`super::affine`]): kept from
    /// group to group of one shape ([`Lanes::forget_all`]).
    pub affine: Vec<Affine>,
    /// The current group's lanes as a grid, where registers may be kept as descriptors (None:
    /// every register is in the register file).
    pub grid: Option<Grid>,
    /// By slot, the group (numbered by [`Lanes::forget_all`]) in which a compare writing the
    /// slot found its lanes on both sides of the value it compares them with: not looked at
    /// again in that group (a reduction's `lid < s` in a loop).
    pub undecided: Vec<u32>,
    /// The current group's number, counted from 1 (see `undecided`).
    pub group_number: u32,
}

/// The [`Lanes::lay`] key of the kernel's entry frame (its template holds the launch's arguments).
pub const ENTRY_FRAME: u32 = u32::MAX;

/// The most register-file words (8 bytes each: 1 MiB) a thread keeps from one run for its next.
const KEPT_WORDS: usize = 1 << 17;

thread_local! {
    /// The room of the register file this thread's last run left (empty, its pages faulted in):
    /// a worker's first group would otherwise fault in a fresh file, page by page (a GEMM
    /// kernel's 686 slots of 64 lanes: 86 pages, a quarter of a millisecond here).
    static KEPT: std::cell::Cell<Vec<u64>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Makes the register file this thread keeps room for `words` words (at most [`KEPT_WORDS`]),
/// its pages written once, so that the next run's first group finds them in memory. A worker
/// does this while the thread that starts the run still prepares it.
pub fn warm_registers(words: usize) {
    let words = words.min(KEPT_WORDS);
    let mut regs = KEPT.take();
    if regs.capacity() < words && regs.try_reserve_exact(words).is_err() {
        return;
    }
    regs.resize(words, 0);
    regs.clear();
    KEPT.set(regs);
}

impl Lanes {
    /// Empty lanes laid out for groups of `stride` work-items.
    pub fn new(stride: usize) -> Lanes {
        Lanes { stride, ..Lanes::default() }
    }

    /// Empty lanes whose register file takes the room this thread's last run left.
    pub fn kept() -> Lanes {
        Lanes { regs: KEPT.take(), ..Lanes::default() }
    }

    /// Leaves the register file's room to this thread's next run ([`Lanes::kept`]), when it is
    /// at most [`KEPT_WORDS`] words; a larger one is freed.
    pub fn keep(self) {
        let mut regs = self.regs;
        if regs.capacity() <= KEPT_WORDS {
            regs.clear();
            KEPT.set(regs);
        }
    }

    /// Empty lanes laid out for groups of `stride` work-items, in these lanes' register file room.
    pub fn renew(&mut self, stride: usize) {
        let mut regs = std::mem::take(&mut self.regs);
        regs.clear();
        *self = Lanes { regs, ..Lanes::new(stride) };
    }

    /// The lanes' ids.
    pub fn lane_ids(&self) -> LaneIds<'_> {
        LaneIds::new(&self.ids, self.stride, self.origin)
    }

    /// Lane `l`'s local id.
    pub fn local_id(&self, l: usize) -> [u64; 3] {
        self.lane_ids().local(l)
    }

    /// Lane `l`'s global id.
    pub fn global_id(&self, l: usize) -> [u64; 3] {
        self.lane_ids().global(l)
    }

    /// Makes room for `slots` register slots of every lane; false if that cannot be allocated.
    pub fn ensure_slots(&mut self, slots: usize) -> bool {
        let need = slots * self.stride;
        if need > self.regs.len() {
            if self.regs.try_reserve(need - self.regs.len()).is_err() {
                return false;
            }
            self.regs.resize(need, 0);
        }
        if self.affine.len() < slots {
            self.affine.resize(slots, Affine::default());
            self.undecided.resize(slots, 0);
        }
        true
    }

    /// Puts `template` (function `func`, whose frame always starts at slot `base`) in the
    /// register file for every lane, the first time the function is called. Every function has
    /// a frame of its own (there is no recursion), and its constant slots are never written, so
    /// the frame needs no copying on later calls; its other slots are written before they are
    /// read. Nobody is inside the function when it is first laid out.
    pub fn lay(&mut self, func: u32, base: u32, template: &[u64]) {
        if self.laid.contains(&func) {
            return;
        }
        let stride = self.stride;
        for (i, &v) in template.iter().enumerate() {
            let at = (base as usize + i) * stride;
            self.regs[at..at + stride].fill(v);
        }
        self.laid.push(func);
    }

    /// Starts a group of `count` lanes shaped `size`, whose registers may be kept as
    /// descriptors where `follow` and the group is a grid.
    ///
    /// A group of the same shape as the last keeps what was known: every slot an instruction
    /// writes is forgotten then (or described anew), so what is known still holds (constants
    /// and the kernel's arguments, which nothing writes, stay known from group to group). Another
    /// shape forgets everything; without a grid nothing is ever described, so nothing is left to
    /// forget from one such group to the next.
    pub fn forget_all(&mut self, size: [u64; 3], count: usize, follow: bool) {
        let grid = Grid::of(size, count).filter(|_| follow);
        self.group_number = self.group_number.wrapping_add(1);
        if self.group_number == 0 {
            self.undecided.fill(0);
            self.group_number = 1;
        }
        if grid != self.grid {
            self.affine.fill(Affine::default());
            self.grid = grid;
        }
    }

    /// A call's argument `n` slots from slot `from` are copied for lanes `act` into the
    /// callee's parameter slots from `to` (slots of the whole file): what is known of the
    /// argument is known of the parameter where every lane of the group is copied (looked for
    /// first, for an argument nothing is known of: one value in every lane); otherwise nothing.
    pub fn pass(&mut self, from: usize, to: usize, n: usize, act: &[u32]) {
        self.forget(to, n);
        let Some(grid) = self.grid.filter(|g| act.len() == g.count && act.last() == Some(&(g.count as u32 - 1))) else {
            return;
        };
        for k in 0..n {
            let mut a = self.affine[from + k];
            if a.held == Held::Unknown {
                let at = (from + k) * self.stride;
                if let Some(v) = uniform_row(&self.regs[at..at + grid.count]) {
                    a = Affine::uniform(v);
                    self.affine[from + k] = a;
                }
            }
            if matches!(a.held, Held::Known | Held::Lazy) {
                self.affine[to + k] = a;
            }
        }
    }

    /// Slots `first..first + n` (of the whole file) are about to be written outside the
    /// interpreter's instructions (a call's arguments, a return's values), perhaps for some lanes
    /// only: what was known of them is forgotten, after a descriptor's lanes are written into the
    /// file (those the write leaves hold them from then on).
    pub fn forget(&mut self, first: usize, n: usize) {
        for s in first..first + n {
            let a = std::mem::take(&mut self.affine[s]);
            if let (Held::Lazy, Some(grid)) = (a.held, self.grid) {
                let at = s * self.stride;
                a.fill(grid, &mut self.regs[at..at + self.stride]);
            }
        }
    }

    /// Bytes held on the heap: registers and private memory.
    pub fn footprint(&self) -> u64 {
        let private: usize = self.lane.iter().map(|l| l.private.capacity()).sum();
        (self.regs.capacity() * 8 + private) as u64
    }
}

/// The ids of a group's lanes: [`Lanes::ids`] and [`Lanes::origin`], borrowed.
#[derive(Clone, Copy)]
pub struct LaneIds<'a> {
    local: &'a [u64],
    stride: usize,
    origin: [u64; 3],
}

impl<'a> LaneIds<'a> {
    /// The ids of lanes whose local ids are `local` (rows of `stride`), in the group that starts
    /// at global id `origin`.
    pub fn new(local: &'a [u64], stride: usize, origin: [u64; 3]) -> LaneIds<'a> {
        assert!(local.len() >= 3 * stride, "a row of local ids per dimension");
        LaneIds { local, stride, origin }
    }

    /// Lane `l`'s local id.
    #[inline(always)]
    pub fn local(self, l: usize) -> [u64; 3] {
        [0, 1, 2].map(|d| self.local[d * self.stride + l])
    }

    /// Lane `l`'s global id.
    #[inline(always)]
    pub fn global(self, l: usize) -> [u64; 3] {
        let local = self.local(l);
        [0, 1, 2].map(|d| self.origin[d] + local[d])
    }

    /// Every lane's local id in dimension `d`, by lane.
    #[inline(always)]
    pub fn row(self, d: usize) -> &'a [u64] {
        &self.local[d * self.stride..][..self.stride]
    }
}

/// One path in flight: its lanes run from `pc` until they reach `join`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub pc: u32,
    pub join: u32,
    start: u32,
    len: u32,
}

/// A call in flight: where to go back to, and the stack height at which the callee's entries
/// begin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    pub func: u32,
    pub return_pc: u32,
    pub base: u32,
    /// Absolute slot that receives the return value.
    pub dst: u32,
    pub private_mark: u32,
    pub stack_base: u32,
}

/// Lanes that advance together (see the module doc).
#[derive(Debug, Clone, Default)]
pub struct Warp {
    pub func: u32,
    /// First register slot of the current function's frame.
    pub base: u32,
    pub frames: Vec<Frame>,
    stack: Vec<Entry>,
    /// The lane lists of the entries, in stack order (the top entry's list is last).
    arena: Vec<u32>,
    /// The lanes [`Warp::restart`] last laid at the arena's start, while they are still there
    /// unchanged (entries above them only append, and a pop truncates no lower than the first
    /// entry): the next group with the same lanes starts without writing them again.
    laid: Option<std::ops::Range<u32>>,
    /// Lanes of this warp that have not finished.
    pub live: u32,
    /// The next atomic may run (see `Execution::stop_at_atomics`).
    pub granted: bool,
}

impl Warp {
    /// A warp of `lanes` at the start of function `func`.
    pub fn new(func: u32, lanes: impl IntoIterator<Item = u32>) -> Warp {
        let arena: Vec<u32> = lanes.into_iter().collect();
        let len = arena.len() as u32;
        Warp {
            func,
            base: 0,
            frames: Vec::new(),
            stack: vec![Entry { pc: 0, join: EXIT, start: 0, len }],
            arena,
            laid: None,
            live: len,
            granted: false,
        }
    }

    /// Makes this warp the one [`Warp::new`] would make of `lanes`, keeping its lists' room (a
    /// worker starts every group's warps in those of its last group, with no allocation, and
    /// writes the lane list only when it differs from the last group's).
    pub fn restart(&mut self, func: u32, lanes: std::ops::Range<u32>) {
        let len = lanes.len() as u32;
        if self.laid.as_ref() == Some(&lanes) && self.arena.len() >= len as usize {
            self.arena.truncate(len as usize);
        } else {
            self.arena.clear();
            self.arena.extend(lanes.clone());
            self.laid = Some(lanes);
        }
        self.stack.clear();
        self.stack.push(Entry { pc: 0, join: EXIT, start: 0, len });
        self.frames.clear();
        (self.func, self.base, self.live, self.granted) = (func, 0, len, false);
    }

    pub fn top(&self) -> Option<Entry> {
        self.stack.last().copied()
    }

    /// The lanes of an entry.
    pub fn lanes(&self, e: Entry) -> &[u32] {
        &self.arena[e.start as usize..(e.start + e.len) as usize]
    }

    /// The lanes of the top entry (empty when the warp has finished).
    pub fn active(&self) -> &[u32] {
        self.top().map_or(&[], |e| self.lanes(e))
    }

    /// Sets where the top entry goes on.
    pub fn set_pc(&mut self, pc: u32) {
        if let Some(top) = self.stack.last_mut() {
            top.pc = pc;
        }
    }

    pub fn depth(&self) -> usize {
        self.stack.len()
    }

    /// Every live lane of the warp is in the top entry.
    pub fn converged(&self) -> bool {
        self.top().is_some_and(|e| e.len == self.live)
    }

    /// Removes the top entry (its lanes are at its join, or have returned).
    pub fn pop(&mut self) {
        self.stack.pop();
        // With no entry left, the lanes `restart` laid stay for the next group (nothing reads
        // them until then: every list is read through an entry).
        let end = self.top().map_or_else(|| self.laid.as_ref().map_or(0, |l| l.len() as u32), |e| e.start + e.len);
        self.arena.truncate(end as usize);
    }

    /// The top entry's lanes part at a branch whose paths meet at `join`: `paths` are each
    /// path's first pc and lanes, the first to run last in the slice. A path that starts at the
    /// join adds no entry.
    pub fn diverge(&mut self, join: u32, paths: &[(u32, &[u32])]) {
        let top = self.top().expect("a diverging warp has a top entry");
        if top.join == join {
            // The paths meet where the top entry ends anyway: they replace it.
            self.pop();
        } else {
            self.set_pc(join);
        }
        for &(pc, lanes) in paths {
            if pc == join || lanes.is_empty() {
                continue;
            }
            self.push(pc, join, lanes);
        }
    }

    fn push(&mut self, pc: u32, join: u32, lanes: &[u32]) {
        let start = self.arena.len() as u32;
        self.arena.extend_from_slice(lanes);
        self.stack.push(Entry { pc, join, start, len: lanes.len() as u32 });
    }

    /// The top entry's lanes enter function `func` with its frame at slot `base`; the caller goes
    /// on at `return_pc` when they have all returned.
    pub fn call(&mut self, func: u32, base: u32, return_pc: u32, dst: u32, private_mark: u32) {
        let top = self.top().expect("a calling warp has a top entry");
        self.set_pc(return_pc);
        let stack_base = self.stack.len() as u32;
        self.frames.push(Frame { func: self.func, return_pc, base: self.base, dst, private_mark, stack_base });
        // The callee's first entry shares the caller's lane list.
        self.stack.push(Entry { pc: 0, join: EXIT, start: top.start, len: top.len });
        self.func = func;
        self.base = base;
    }

    /// The top entry's lanes returned (their values are written): pops it, and the frame too when
    /// it has no path left, returning that frame.
    pub fn returned(&mut self) -> Option<Frame> {
        self.pop();
        let frame = *self.frames.last()?;
        if self.stack.len() as u32 > frame.stack_base {
            return None;
        }
        self.frames.pop();
        self.func = frame.func;
        self.base = frame.base;
        Some(frame)
    }

    /// The top entry's lanes finished the kernel.
    pub fn finished_top(&mut self) {
        let n = self.top().map_or(0, |e| e.len);
        self.live -= n;
        self.pop();
    }

    /// Moves the lanes marked in `take` (indexed by lane) into a warp of their own at the same
    /// place; this warp keeps the rest. Entries left without lanes are dropped, and so are frames
    /// left without entries.
    pub fn split_off(&mut self, take: &[bool]) -> Warp {
        let mut taken = Warp { func: self.func, base: self.base, ..Warp::default() };
        let mut kept = Warp { func: self.func, base: self.base, ..Warp::default() };
        // How many entries below each old index survive in each part, to renumber frames.
        let mut below_taken = Vec::with_capacity(self.stack.len() + 1);
        let mut below_kept = Vec::with_capacity(self.stack.len() + 1);
        for &e in &self.stack {
            below_taken.push(taken.stack.len() as u32);
            below_kept.push(kept.stack.len() as u32);
            for (part, want) in [(&mut taken, true), (&mut kept, false)] {
                let start = part.arena.len() as u32;
                part.arena.extend(self.lanes(e).iter().copied().filter(|&l| take[l as usize] == want));
                let len = part.arena.len() as u32 - start;
                if len > 0 {
                    part.stack.push(Entry { pc: e.pc, join: e.join, start, len });
                }
            }
        }
        below_taken.push(taken.stack.len() as u32);
        below_kept.push(kept.stack.len() as u32);
        for (part, below) in [(&mut taken, &below_taken), (&mut kept, &below_kept)] {
            part.frames =
                self.frames.iter().map(|f| Frame { stack_base: below[f.stack_base as usize], ..*f }).collect();
            // A frame none of whose entries survived was left by all of this part's lanes.
            while let Some(f) = part.frames.last().copied() {
                if (part.stack.len() as u32) > f.stack_base {
                    break;
                }
                part.frames.pop();
                part.func = f.func;
                part.base = f.base;
            }
        }
        let moved = self.lanes_live(take);
        taken.live = moved;
        kept.live = self.live - moved;
        *self = kept;
        taken
    }

    /// How many distinct lanes of the warp's entries are marked (a lane is in every entry from
    /// its path's down to the one that holds all the warp's lanes, so count each once; finished
    /// lanes have left every entry).
    fn lanes_live(&self, take: &[bool]) -> u32 {
        // The top entry's list ends the arena's lists in use.
        let end = self.top().map_or(0, |e| (e.start + e.len) as usize);
        let mut seen: Vec<u32> = self.arena[..end].iter().copied().filter(|&l| take[l as usize]).collect();
        seen.sort_unstable();
        seen.dedup();
        seen.len() as u32
    }

    /// Whether `other` is at the same place (function, frames, paths) so the two can be one warp.
    pub fn same_place(&self, other: &Warp) -> bool {
        self.func == other.func
            && self.base == other.base
            && self.frames == other.frames
            && self.stack.len() == other.stack.len()
            && self.stack.iter().zip(&other.stack).all(|(a, b)| a.pc == b.pc && a.join == b.join)
    }

    /// Joins `other` (at the same place, see [`Warp::same_place`]) into this warp.
    pub fn merge(&mut self, other: &Warp) {
        let mut arena = Vec::with_capacity(self.arena.len() + other.arena.len());
        for (a, b) in self.stack.iter_mut().zip(&other.stack) {
            let start = arena.len() as u32;
            let (x, y) = (&self.arena[a.start as usize..(a.start + a.len) as usize], other.lanes(*b));
            let (mut i, mut j) = (0, 0);
            while i < x.len() || j < y.len() {
                if j == y.len() || (i < x.len() && x[i] < y[j]) {
                    arena.push(x[i]);
                    i += 1;
                } else {
                    arena.push(y[j]);
                    j += 1;
                }
            }
            a.start = start;
            a.len = arena.len() as u32 - start;
        }
        self.arena = arena;
        self.laid = None;
        self.live += other.live;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marks(n: usize, lanes: &[u32]) -> Vec<bool> {
        let mut m = vec![false; n];
        for &l in lanes {
            m[l as usize] = true;
        }
        m
    }

    /// A thread's next run takes the register file's room its last run left (or that
    /// `warm_registers` made), empty, so that a fresh layout zeroes it as a new file would be;
    /// a file beyond the limit is not kept.
    #[test]
    fn a_thread_keeps_its_register_files_room_for_its_next_run() {
        std::thread::spawn(|| {
            warm_registers(1000);
            let mut lanes = Lanes::kept();
            assert!(lanes.regs.capacity() >= 1000 && lanes.regs.is_empty());
            lanes.renew(8);
            assert!(lanes.regs.capacity() >= 1000, "a new stride keeps the room");
            assert!(lanes.ensure_slots(100));
            lanes.regs[5] = 7;
            let room = lanes.regs.as_ptr();
            lanes.keep();
            let mut next = Lanes::kept();
            assert_eq!(next.regs.as_ptr(), room, "the same memory");
            next.renew(8);
            assert!(next.ensure_slots(100));
            assert!(next.regs.iter().all(|&w| w == 0), "laid out zeroed as a fresh file");
            next.keep();
            // Beyond the limit: freed, not kept; the warm-up stops at the limit too.
            let mut big = Lanes::kept();
            big.renew(1);
            assert!(big.ensure_slots(KEPT_WORDS + 1));
            big.keep();
            assert_eq!(Lanes::kept().regs.capacity(), 0);
            warm_registers(KEPT_WORDS * 4);
            assert!(Lanes::kept().regs.capacity() < KEPT_WORDS * 2);
        })
        .join()
        .unwrap();
    }

    /// A worker's next group starts in the warp of its last: whatever the paths did, a restart
    /// gives the warp a fresh one would have, whether it reuses the lane list or lays it anew.
    #[test]
    fn a_restart_gives_the_warp_new_would_make() {
        let fresh = |lanes: std::ops::Range<u32>| Warp::new(0, lanes);
        let same = |a: &Warp, b: &Warp| {
            assert_eq!((a.active(), a.depth(), a.live, a.top()), (b.active(), b.depth(), b.live, b.top()));
        };
        let mut w = fresh(0..6);
        w.restart(0, 0..6);
        // Paths that meet at the exit replace the first entry; their lists go above the laid one.
        w.diverge(EXIT, &[(7, &[1, 3, 5]), (5, &[0, 2, 4])]);
        assert_eq!(w.active(), &[0, 2, 4]);
        w.finished_top();
        w.finished_top();
        assert_eq!(w.depth(), 0);
        w.restart(0, 0..6);
        same(&w, &fresh(0..6));
        // Paths that meet inside, then the kernel's end.
        w.diverge(10, &[(7, &[1]), (5, &[0, 2])]);
        w.pop();
        w.pop();
        w.finished_top();
        w.restart(0, 0..6);
        same(&w, &fresh(0..6));
        // Other lanes are laid anew, and so are the lanes after a split or a merge.
        w.restart(0, 2..5);
        same(&w, &fresh(2..5));
        let taken = w.split_off(&marks(6, &[3]));
        w.merge(&taken);
        w.restart(0, 2..5);
        same(&w, &fresh(2..5));
        let mut part = fresh(0..4);
        part.restart(0, 0..4);
        let _ = part.split_off(&marks(4, &[1, 2]));
        part.restart(0, 0..4);
        same(&part, &fresh(0..4));
    }

    #[test]
    fn paths_meet_at_their_join() {
        let mut w = Warp::new(0, 0..4);
        w.diverge(10, &[(7, &[1, 3]), (5, &[0, 2])]);
        assert_eq!(w.depth(), 3);
        assert_eq!((w.top().unwrap().pc, w.active()), (5, &[0u32, 2][..]));
        w.pop();
        assert_eq!((w.top().unwrap().pc, w.active()), (7, &[1u32, 3][..]));
        w.pop();
        assert_eq!((w.top().unwrap().pc, w.active()), (10, &[0u32, 1, 2, 3][..]));
        assert!(w.converged());
    }

    #[test]
    fn a_branch_meeting_where_the_path_ends_replaces_it() {
        let mut w = Warp::new(0, 0..4);
        w.diverge(10, &[(7, &[1, 3]), (5, &[0, 2])]);
        // Inside the path of lanes 0 and 2, a loop exit whose join is the same point.
        w.diverge(10, &[(10, &[0]), (6, &[2])]);
        assert_eq!(w.depth(), 3);
        assert_eq!(w.active(), &[2]);
    }

    #[test]
    fn a_call_shares_the_lanes_and_returns_to_the_caller() {
        let mut w = Warp::new(0, 0..3);
        w.call(4, 20, 9, 3, 0);
        assert_eq!((w.func, w.base, w.active()), (4, 20, &[0u32, 1, 2][..]));
        w.diverge(EXIT, &[(2, &[2]), (1, &[0, 1])]);
        assert_eq!(w.returned(), None);
        let frame = w.returned().expect("the last path returns the frame");
        assert_eq!(frame.return_pc, 9);
        assert_eq!((w.func, w.base, w.top().unwrap().pc, w.active()), (0, 0, 9, &[0u32, 1, 2][..]));
    }

    #[test]
    fn splitting_and_merging_keep_every_lane_once() {
        let mut w = Warp::new(0, 0..6);
        w.diverge(10, &[(7, &[3, 4, 5]), (5, &[0, 1, 2])]);
        let mut part = w.split_off(&marks(6, &[0, 1, 2]));
        assert_eq!((part.live, w.live), (3, 3));
        assert_eq!(part.active(), &[0, 1, 2]);
        assert_eq!(w.active(), &[3, 4, 5]);
        // Both reach the join: they are at the same place again.
        part.pop();
        w.pop();
        assert!(part.same_place(&w));
        w.merge(&part);
        assert_eq!(w.active(), &[0, 1, 2, 3, 4, 5]);
        assert!(w.converged());
    }

    #[test]
    fn a_split_inside_a_call_drops_the_frame_its_lanes_never_entered() {
        let mut w = Warp::new(0, 0..4);
        w.diverge(10, &[(7, &[2, 3]), (5, &[0, 1])]);
        w.call(1, 8, 6, 0, 0);
        // Lanes 2 and 3 wait in the caller; lanes 0 and 1 are in the callee.
        let rest = w.split_off(&marks(4, &[2, 3]));
        assert_eq!((w.func, w.frames.len()), (1, 1));
        assert_eq!((rest.func, rest.frames.len(), rest.top().unwrap().pc), (0, 0, 7));
    }
}
