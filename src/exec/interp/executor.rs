//! The executor's state for one run of straight-line code of one entry ([`Executor`]), the loop
//! that decodes each instruction and hands it to the method of its family (the files beside
//! this one), and the few helpers all families share: register access ([`Regs`]), the active
//! lanes ([`Active`]), the group's memory ([`Space`]) and where reports go ([`Sink`]).
//!
//! Everything the hot loop reads is a field here, copied or borrowed once per run, and every
//! family method is inlined into the loop: the loop is one function with one `match`, as a
//! single body would be. It cannot see the warp's shape (the caller, `interp::Execution::run`,
//! moves entries and frames) nor the scheduler.

use std::marker::PhantomData;

use super::super::ExecError;
use super::super::affine::{Affine, Grid, Plan, Split};
use super::super::execution::{Execution, Group, Yield, oob};
use super::super::findings::FindingLog;
use super::super::hooks::{Access, AccessKind, GroupHooks, LaneAtomic};
use super::super::memory::{ANY, Fault, GlobalMemory, Memory};
use super::super::uninit::{self, GroupShadow};
use super::super::warp::{LaneFlags, LaneIds, LaneState, Lanes};
use super::faults;
use crate::ir::{self, Inst, Reg};

/// The plan of a launch without descriptors (its groups are too small for them).
static NO_PLAN: Plan = Plan { at: Vec::new(), touches: Vec::new(), follows: Vec::new() };

/// Reusable lane lists for parting a warp at a branch.
#[derive(Default)]
pub struct Scratch {
    pub(super) then: Vec<u32>,
    pub(super) otherwise: Vec<u32>,
    pub(super) cases: Vec<(u32, u32)>,
    /// The values of a load or store run of consecutive lanes, and a store run's bytes.
    pub(super) values: Vec<u64>,
    pub(super) bytes: Vec<u8>,
    /// The addresses of lanes whose pattern the hooks' calls are chosen by.
    pub(super) addrs: Vec<u64>,
    /// The lanes' parts of an atomic on `__local` memory, for the hooks.
    pub(super) atomics: Vec<LaneAtomic>,
}

/// What ends a run of straight-line code of one entry.
pub(super) enum Event {
    /// The entry's lanes reached its join.
    Join,
    /// A conditional branch at `at` parted the lanes (in `Scratch::then` / `otherwise`).
    Diverge {
        at: usize,
        then: u32,
        otherwise: u32,
    },
    /// A switch at `at` parted the lanes (in `Scratch::cases`, sorted by target).
    DivergeSwitch {
        at: usize,
    },
    Call {
        callee: u32,
        dst: u32,
        first_arg: u32,
        num_args: u16,
        return_pc: u32,
    },
    Return {
        src: u32,
        n: u16,
    },
    Stop(Yield),
}

/// The register file as the hot loop sees it: where it starts, the current frame's first slot,
/// and the lanes per slot. Copied freely; every read and write goes through [`Regs::get`] and
/// [`Regs::set`].
///
/// What makes these unchecked accesses sound: validation (`ir::validate`) proved every
/// register an instruction names (directly or through its side tables) is below the function's
/// frame size; the caller made room for the whole frame of every lane (`Lanes::ensure_slots`);
/// lane lists are sorted, so the last lane is the largest; and [`Executor::new`] asserts that the
/// frame of the largest lane lies inside the file, which nothing resizes while a run lives.
#[derive(Clone, Copy)]
pub(super) struct Regs<'r> {
    ptr: *mut u64,
    base: usize,
    stride: usize,
    /// The file borrowed for as long as the run (`Executor::new` takes it from `Lanes`).
    file: PhantomData<&'r mut [u64]>,
}

impl Regs<'_> {
    /// Register-file word `i`: a slot of the current frame (`(base + slot) * stride + lane`).
    #[inline(always)]
    pub fn get(self, i: usize) -> u64 {
        // SAFETY: `i` indexes a slot of the current frame for a lane of this group, which
        // `Executor::new`'s assertions place inside the register file (see the type's doc); the
        // file is reached only through this pointer while the run lives.
        unsafe { *self.ptr.add(i) }
    }

    /// Writes register-file word `i` (as [`Regs::get`]).
    #[inline(always)]
    pub fn set(self, i: usize, v: u64) {
        // SAFETY: as in `get`: `i` is inside the file, and no reference to it lives.
        unsafe { *self.ptr.add(i) = v }
    }

    /// The word of slot `s` of the current frame for lane 0 (add the lane for its own).
    #[inline(always)]
    pub fn slot(self, s: usize) -> usize {
        (self.base + s) * self.stride
    }

    /// Slot `s` of the current frame for lane `l`.
    #[inline(always)]
    pub fn r(self, s: usize, l: usize) -> u64 {
        self.get(self.slot(s) + l)
    }

    /// Writes slot `s` of the current frame for lane `l`.
    #[inline(always)]
    pub fn set_r(self, s: usize, l: usize, v: u64) {
        self.set(self.slot(s) + l, v)
    }

    /// The first slot of the current frame.
    #[inline(always)]
    pub fn base(self) -> usize {
        self.base
    }

    /// Lanes `lo..hi` of the row that starts at word `w` (a `slot`), to write.
    ///
    /// # Safety
    /// `w` is a row of the current frame and `hi <= stride` (every lane is below the stride:
    /// `Executor::new` asserts it), so the slice lies inside one row of the file (see the type's
    /// doc). While it lives, no other reference to that row may: the caller makes it only for a
    /// row that differs from every other row it reads, and two rows are the same or apart.
    #[inline(always)]
    pub unsafe fn row_mut<'s>(self, w: usize, (lo, hi): (usize, usize)) -> &'s mut [u64] {
        debug_assert!(lo <= hi && hi <= self.stride);
        // SAFETY: as the doc says, the caller's promise.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(w + lo), hi - lo) }
    }

    /// Lanes `lo..hi` of the row that starts at word `w`, to read.
    ///
    /// # Safety
    /// As [`Regs::row_mut`]: no slice to write the same row may live while this one does.
    #[inline(always)]
    pub unsafe fn row<'s>(self, w: usize, (lo, hi): (usize, usize)) -> &'s [u64] {
        debug_assert!(lo <= hi && hi <= self.stride);
        // SAFETY: as the doc says, the caller's promise.
        unsafe { std::slice::from_raw_parts(self.ptr.add(w + lo), hi - lo) }
    }

    /// `d = f(x)` for lanes `range` of rows `d` and `x` (`slot`s). Where `d` is `x` (an update
    /// in place), through a slice: knowing no other row is written, the compiler vectorises the
    /// loop, where through `get` and `set` its run-time test that the write changes no later read
    /// fails every time. Other rows take the plain loop, which the compiler vectorises behind that
    /// test (and unrolls further than a loop over slices).
    #[inline(always)]
    pub fn map1(self, d: usize, x: usize, (lo, hi): (usize, usize), f: impl Fn(u64) -> u64) {
        if d == x {
            // SAFETY: the row is a slot of the frame, `lo..hi` active lanes (below the stride),
            // and the slice is the only reference to the file while it lives.
            for o in unsafe { self.row_mut(d, (lo, hi)) } {
                *o = f(*o);
            }
        } else {
            for l in lo..hi {
                self.set(d + l, f(self.get(x + l)));
            }
        }
    }

    /// `d = f(x, y)` for lanes `range` of rows `d`, `x` and `y`; an update in place of `x` or
    /// `y` through slices (see [`Regs::map1`]).
    #[inline(always)]
    pub fn map2(self, d: usize, (x, y): (usize, usize), (lo, hi): (usize, usize), f: impl Fn(u64, u64) -> u64) {
        let range = (lo, hi);
        // SAFETY (each block): the rows are slots of the frame and `range` is of active lanes
        // (below the stride); the row written is borrowed once, and every other slice is of
        // another row (two rows are the same or apart).
        if d != x && d != y {
            for l in lo..hi {
                self.set(d + l, f(self.get(x + l), self.get(y + l)));
            }
        } else if d != y {
            let (out, ys) = unsafe { (self.row_mut(d, range), self.row(y, range)) };
            for (o, &b) in out.iter_mut().zip(ys) {
                *o = f(*o, b);
            }
        } else if d != x {
            let (out, xs) = unsafe { (self.row_mut(d, range), self.row(x, range)) };
            for (o, &a) in out.iter_mut().zip(xs) {
                *o = f(a, *o);
            }
        } else {
            for o in unsafe { self.row_mut(d, range) } {
                *o = f(*o, *o);
            }
        }
    }

    /// `d = f(x, y, z)` for lanes `range` where it updates `y` or `z` in place (an accumulator's
    /// `mad`, a `select` that keeps a value), through slices (see [`Regs::map1`]), or where the
    /// range is long: true. False, with nothing done, for other rows over fewer than 32 lanes,
    /// which the caller runs lane by lane (a loop over four rows behind the compiler's run-time
    /// overlap tests costs more in set-up than it saves on a short path's lanes).
    #[inline(always)]
    pub fn update3(
        self,
        d: usize,
        (x, y, z): (usize, usize, usize),
        range: (usize, usize),
        f: impl Fn(u64, u64, u64) -> u64,
    ) -> bool {
        // SAFETY (each block): as in `map2`.
        if d == z && d != x && d != y {
            let (out, xs, ys) = unsafe { (self.row_mut(d, range), self.row(x, range), self.row(y, range)) };
            for ((o, &a), &b) in out.iter_mut().zip(xs).zip(ys) {
                *o = f(a, b, *o);
            }
            true
        } else if d == y && d != x && d != z {
            let (out, xs, zs) = unsafe { (self.row_mut(d, range), self.row(x, range), self.row(z, range)) };
            for ((o, &a), &c) in out.iter_mut().zip(xs).zip(zs) {
                *o = f(a, *o, c);
            }
            true
        } else if range.1 - range.0 >= 32 {
            // A long range of other rows: the plain loop, which the compiler vectorises behind
            // its overlap tests.
            for l in range.0..range.1 {
                self.set(d + l, f(self.get(x + l), self.get(y + l), self.get(z + l)));
            }
            true
        } else {
            false
        }
    }
}

/// The active lanes of the entry: their list (sorted), and the same lanes as one range when they
/// are consecutive (all of a group, or the first `s` of a tree reduction): element-wise ops then
/// loop over the range, which the compiler can unroll, instead of reading each lane from the list.
#[derive(Clone, Copy)]
pub(super) struct Active<'r> {
    pub lanes: &'r [u32],
    pub dense: Option<(usize, usize)>,
}

impl Active<'_> {
    /// The lanes as one range when they are consecutive and enough of them (8) for a vectorised
    /// loop over rows ([`Regs::map2`]) to repay its set-up; fewer go lane by lane.
    #[inline(always)]
    pub fn wide(self) -> Option<(usize, usize)> {
        self.dense.filter(|&(lo, hi)| hi - lo >= 8)
    }

    /// Runs `body` for every active lane, in order.
    #[inline(always)]
    pub fn each(self, mut body: impl FnMut(usize)) {
        if let Some((lo, hi)) = self.dense {
            for l in lo..hi {
                body(l);
            }
        } else {
            for &l in self.lanes {
                body(l as usize);
            }
        }
    }
}

/// Lanes `act` (sorted) as one range `lo..hi`, when they are consecutive.
#[inline(always)]
pub(super) fn dense(act: &[u32]) -> Option<(usize, usize)> {
    match (act.first(), act.last()) {
        (Some(&lo), Some(&hi)) if (hi - lo) as usize + 1 == act.len() => Some((lo as usize, hi as usize + 1)),
        _ => None,
    }
}

/// The group's memory besides the lanes' private memory.
pub(super) struct Space<'r> {
    pub globals: &'r GlobalMemory,
    local: &'r mut [u8],
    pub local_regions: &'r [(usize, usize)],
}

impl Space<'_> {
    /// The group's local arena (its regions are `local_regions`).
    #[inline(always)]
    pub fn local(&mut self) -> &mut [u8] {
        self.local
    }

    /// The memory a lane with private memory `private` sees.
    #[inline(always)]
    pub fn of<'m>(&'m mut self, private: &'m mut Vec<u8>) -> Memory<'m> {
        Memory { globals: self.globals, local: &mut self.local[..], local_regions: self.local_regions, private }
    }
}

/// Where reports go: the group's findings, and the hooks (the race detector, or nothing).
pub(super) struct Sink<'r, 'a, H> {
    pub exec: &'r Execution<'a>,
    pub findings: &'r mut FindingLog,
    pub hooks: &'r mut H,
}

impl<H: GroupHooks> Sink<'_, '_, H> {
    /// A plain load by lane `l`, told to the hooks.
    #[inline(always)]
    pub fn load(&mut self, l: usize, addr: u64, size: u64, loc: u32) {
        if H::ACTIVE && super::super::execution::observed(addr) {
            let access = Access { kind: AccessKind::Load, addr, size: size as u32, loc, stored: &[] };
            self.hooks.access(l as u32, &access);
        }
    }

    /// A plain store of `value` by lane `l`, told to the hooks.
    #[inline(always)]
    pub fn store(&mut self, l: usize, addr: u64, size: u64, value: u64, loc: u32) {
        if H::ACTIVE && super::super::execution::observed(addr) {
            let bytes = value.to_le_bytes();
            let size = (size as usize).min(8);
            let access = Access { kind: AccessKind::Store, addr, size: size as u32, loc, stored: &bytes[..size] };
            self.hooks.access(l as u32, &access);
        }
    }

    /// An access that memory refused (`store` says which side).
    #[inline(always)]
    pub fn fault(&mut self, mem: &Memory, f: Fault, store: bool, global_id: [u64; 3], loc: u32) {
        self.findings.push(oob(self.exec, mem, f, store, global_id, loc))
    }

    /// An access through an address not aligned to `align` (a power of two): reported, and then
    /// performed if it is in bounds.
    #[inline(always)]
    pub fn misaligned(
        &mut self,
        addr: u64,
        size: u64,
        align: u64,
        access: &'static str,
        global_id: [u64; 3],
        loc: u32,
    ) {
        self.findings.push(faults::misaligned(self.exec, addr, size as u32, align as u32, access, global_id, loc))
    }

    /// A load of `size` bytes at `addr` by lane `l` (work-item `global_id`) that memory refused:
    /// reported; one that only the buffer's mode refused (a read of a write-only buffer) is
    /// performed all the same. Its value.
    #[inline(always)]
    pub fn refused_load(
        &mut self,
        mem: &mut Memory,
        f: Fault,
        (l, global_id): (usize, [u64; 3]),
        (addr, size): (u64, u64),
        loc: u32,
    ) -> u64 {
        self.fault(mem, f, false, global_id, loc);
        match f.mode_only().then(|| mem.load_as(addr, size as usize, ANY)) {
            Some(Ok(v)) => {
                self.load(l, addr, size, loc);
                v
            }
            _ => 0,
        }
    }

    /// A store of `value` as [`Sink::refused_load`].
    #[inline(always)]
    pub fn refused_store(
        &mut self,
        mem: &mut Memory,
        f: Fault,
        (l, global_id): (usize, [u64; 3]),
        (addr, size): (u64, u64),
        value: u64,
        loc: u32,
    ) {
        self.fault(mem, f, true, global_id, loc);
        if f.mode_only() && mem.store_as(addr, size as usize, value, ANY).is_ok() {
            self.store(l, addr, size, value, loc);
        }
    }
}

/// Where a run of one entry starts: the function, its frame, its lanes and the first
/// instruction.
pub(super) struct Entry<'r> {
    pub func_index: u32,
    pub base: usize,
    pub act: &'r [u32],
    pub pc: usize,
}

/// What a run borrows from the warp's worker for its length.
pub(super) struct Borrowed<'r, H> {
    pub lanes: &'r mut Lanes,
    pub group: &'r mut Group,
    pub hooks: &'r mut H,
    pub budget: &'r mut u64,
    pub granted: &'r mut bool,
    pub scratch: &'r mut Scratch,
}

/// The run state of one entry's straight-line code: what the hot loop reads.
pub(super) struct Executor<'r, 'a, H> {
    pub exec: &'r Execution<'a>,
    pub module: &'a ir::Module,
    pub func: &'a ir::Function,
    pub func_index: u32,
    pub act: Active<'r>,
    pub regs: Regs<'r>,
    /// The register file's length in words (for the checked instantiation's view of it).
    regs_len: usize,
    /// The next instruction.
    pub p: usize,
    /// Each lane's own state (indexed by lane).
    pub lanes: &'r mut [LaneState],
    /// The lanes' local and global ids.
    pub ids: LaneIds<'r>,
    /// What the lanes did that the next group must undo (printed, watched a spin, allocated).
    pub flags: &'r mut LaneFlags,
    pub group_id: [u64; 3],
    pub group_size: [u64; 3],
    pub space: Space<'r>,
    pub sink: Sink<'r, 'a, H>,
    /// The group's shadow (used by the checked instantiation only).
    pub shadow: &'r mut GroupShadow,
    pub scratch: &'r mut Scratch,
    /// Branches and calls left (see `Execution::run`).
    pub budget: &'r mut u64,
    /// The scheduler granted the next atomic or watched access (see `Warp::granted`).
    pub granted: &'r mut bool,
    /// Some plain accesses stop before they run (`Execution::watch` is not empty).
    pub watching: bool,
    /// What is known of each register slot of the file (see `super::affine`).
    pub affine: &'r mut [Affine],
    /// The group's lanes as a grid, where registers may be kept as descriptors.
    pub grid: Option<Grid>,
    /// Compares not decided for the whole group, by the slot they write, and this group's
    /// number (see `Lanes::undecided`).
    pub undecided: (&'r mut [u32], u32),
    /// The function's plan for descriptors.
    pub plan: &'a Plan,
    /// Per instruction, whether it is a `__local` read the hooks need not hear of (see
    /// [`Execution::quiet_reads`]); empty where every read is told.
    pub quiet: &'a [bool],
    /// The active lanes are all the group's lanes, and registers may be kept as descriptors.
    pub full: bool,
    /// The last compare split over the group's lanes (see `super::affine`): the branch right
    /// after it on its result parts the lanes from it, without reading them.
    pub split: Option<SplitAt>,
}

/// A compare at `at` whose result, written to slot `dst` of the frame, holds as `split` says.
#[derive(Debug, Clone, Copy)]
pub struct SplitAt {
    pub at: usize,
    pub dst: Reg,
    pub split: Split,
}

impl<'r, 'a, H: GroupHooks> Executor<'r, 'a, H> {
    /// The run state for `entry`, borrowing `parts`.
    #[inline(always)]
    pub fn new<const U: bool>(exec: &'r Execution<'a>, entry: Entry<'r>, parts: Borrowed<'r, H>) -> Self {
        let module = exec.module;
        let func = &module.functions[entry.func_index as usize];
        let Lanes { regs, lane, stride, flags, ids, origin, affine, grid, undecided, group_number, .. } = parts.lanes;
        let stride = *stride;
        let ids = LaneIds::new(ids, stride, *origin);
        let Group { id, size, local, local_regions, findings, uninit: shadow, diverged, .. } = parts.group;
        let (base, act) = (entry.base, entry.act);
        // See `Regs` for what these make sound.
        assert!((base + func.template.len()) * stride <= regs.len(), "the register file holds the frame");
        assert!(act.last().is_none_or(|&l| (l as usize) < stride), "the lanes are in the register file");
        debug_assert!(act.is_sorted());
        if U {
            shadow.fit(regs.len());
        }
        let dense = dense(act);
        let grid = *grid;
        assert!(affine.len() * stride >= regs.len(), "a descriptor for every slot");
        Executor {
            affine: &mut affine[..],
            grid,
            undecided: (&mut undecided[..], *group_number),
            full: grid.is_some_and(|g| dense == Some((0, g.count))),
            plan: exec.plans.get(entry.func_index as usize).unwrap_or(&NO_PLAN),
            quiet: match exec.quiet_reads.get(entry.func_index as usize) {
                Some(quiet) if H::ACTIVE && !*diverged => quiet,
                _ => &[],
            },
            exec,
            module,
            func,
            func_index: entry.func_index,
            act: Active { lanes: act, dense },
            regs_len: regs.len(),
            regs: Regs { ptr: regs.as_mut_ptr(), base, stride, file: PhantomData },
            p: entry.pc,
            lanes: &mut lane[..],
            ids,
            flags,
            group_id: *id,
            group_size: *size,
            space: Space { globals: exec.globals, local: &mut local[..], local_regions: &local_regions[..] },
            sink: Sink { exec, findings, hooks: parts.hooks },
            shadow,
            scratch: parts.scratch,
            budget: parts.budget,
            granted: parts.granted,
            watching: !exec.watch.is_empty(),
            split: None,
        }
    }

    /// Whether the hooks are told of the load at `pc`: not without hooks, nor for a `__local`
    /// read no write can race with ([`Executor::quiet`]).
    #[inline(always)]
    pub fn tells_load(&self, pc: usize) -> bool {
        H::ACTIVE && !self.quiet.get(pc).copied().unwrap_or(false)
    }

    /// Runs the entry's lanes from `self.p` until something changes the warp's shape or stops
    /// it (`self.p` is then where the entry goes on) or the entry reaches `join`.
    #[inline(always)]
    pub fn straight<const U: bool>(&mut self, join: u32) -> Result<Event, ExecError> {
        let code = &self.func.code[..];
        let join = join as usize;
        macro_rules! leave {
            ($e:expr) => {
                if let Some(e) = $e {
                    return Ok(e);
                }
            };
        }
        loop {
            if self.p == join {
                return Ok(Event::Join);
            }
            let inst = &code[self.p];
            if U {
                self.uninit_step(inst);
            } else if self.grid.is_some() && self.affine_before(inst) {
                continue;
            }
            self.p += 1;
            match *inst {
                Inst::Mov { dst, src, n } => self.unary(n, dst, src, |x| x),
                Inst::IntBin { op, bits, dst, a, b, n } => self.int_bin(op, bits, dst, (a, b), n),
                Inst::FloatBin { op, bits, dst, a, b, n } => self.float_bin(op, bits, dst, (a, b), n),
                Inst::Compare { cmp, bits, dst, a, b, n } => self.compare(cmp, bits, dst, (a, b), n),
                Inst::Unary { op, bits, dst, a, n } => self.unary(n, dst, a, |x| super::super::ops::unary(op, bits, x)),
                Inst::Convert { conv, from, to, dst, src, n } => self.convert(conv, (from, to), dst, src, n),
                Inst::Select { dst, cond, a, b, n, cond_lanes } => self.select(dst, (cond, cond_lanes), (a, b), n),
                Inst::Bitcast { dst, src, from, to } => self.bitcast(dst, src, from, to),
                Inst::Reduce { all, dst, src, n } => self.reduce(all, dst, src, n),
                Inst::PtrOffset { dst, base, offset, first_index, num_indices } => {
                    self.ptr_offset(dst, base, offset, first_index, num_indices)
                }
                Inst::IndexCheck { index, ptr, extent, loc } => self.index_check(index, ptr, extent, loc),
                Inst::PtrDiff { dst, a, b, elem } => {
                    self.binary(1, dst, (a, b), |x: u64, y: u64| ((x.wrapping_sub(y) as i64) / elem as i64) as u64)
                }
                Inst::LoadScalar { dst, ptr, size, loc, align } => leave!(self.load_scalar(dst, ptr, size, loc, align)),
                Inst::StoreScalar { src, ptr, size, loc, align } => {
                    leave!(self.store_scalar(src, ptr, size, loc, align))
                }
                Inst::Load { dst, ptr, layout, loc, align } => leave!(self.load(dst, ptr, layout, loc, align)),
                Inst::Store { src, ptr, layout, loc, align } => leave!(self.store(src, ptr, layout, loc, align)),
                Inst::CopyMemory { dst, src, size, loc } => self.copy_memory(dst, src, size, loc),
                Inst::Alloca { dst, size, align } => self.alloca(dst, size, align)?,
                Inst::ExtractDynamic { dst, src, index, index_bits, n, beyond } => {
                    self.extract_dynamic(dst, src, (index, index_bits), n, beyond)
                }
                Inst::InsertDynamic { dst, src, value, index, index_bits, n } => {
                    self.insert_dynamic(dst, src, value, (index, index_bits), n)
                }
                Inst::Shuffle { dst, first, n } => self.shuffle(dst, first, n),
                Inst::ShuffleDynamic { .. } => self.shuffle_dynamic(inst),
                Inst::Builtin { dst, which, dims } => self.builtin(dst, which, dims),
                Inst::Math { op, kind, dst, args, n } => self.math(op, kind, dst, args, n)?,
                Inst::MathOut { .. } => self.math_out(inst)?,
                Inst::Geometric { op, bits, dst, a, b, n } => self.geometric(op, bits, dst, (a, b), n),
                Inst::VectorMemory { .. } => self.vector_memory(inst),
                Inst::Atomic { .. } => leave!(self.atomic(inst)),
                Inst::Barrier { fence, scope, loc, sub_group } => return Ok(self.barrier(fence, scope, loc, sub_group)),
                Inst::Collective { .. } => return Ok(self.collective(inst)),
                Inst::MemoryFence { fence, order, scope, loc } => self.fence(fence, order, scope, loc),
                Inst::CastToSpace { dst, src, space } => self.cast_to_space(dst, src, space),
                Inst::PointerFence { dst, src } => self.pointer_fence(dst, src),
                Inst::AsyncCopy { .. } => return Ok(self.async_copy(inst)),
                Inst::WaitEvents { num, list, loc } => return Ok(self.wait_events(num, list, loc)),
                Inst::ImageRead { .. } => self.image_read(inst)?,
                Inst::ImageWrite { image, coord, coord_n, src, texel, loc } => {
                    self.image_write(image, (coord, coord_n), src, texel, loc)?
                }
                Inst::ImageQuery { dst, image, query, n, bits } => self.image_query(dst, image, query, n, bits)?,
                Inst::Printf { dst, fmt, first_arg, num_args } => self.printf(dst, fmt, first_arg, num_args),
                Inst::Branch { target } => leave!(self.branch(target)),
                Inst::BranchIf { cond, then, otherwise } => leave!(self.branch_if(cond, then, otherwise)),
                Inst::Switch { value, bits, table } => leave!(self.switch(value, bits, table)),
                Inst::Call { func, dst, first_arg, num_args } => return Ok(self.call(func, dst, first_arg, num_args)),
                Inst::Return { src, n } => return Ok(Event::Return { src, n }),
                Inst::Unreachable { loc } => return Err(faults::unreachable(self.module, loc)),
                Inst::Assert { cond, bits, has_msg, msg, loc } => self.assert(cond, bits, (has_msg, msg), loc),
                Inst::Unsupported { what, loc } => return Err(faults::unsupported(self.module, what, loc)),
            }
        }
    }

    /// Check 9 before `inst` runs: its operands' shadow, and the shadow of what it writes.
    #[inline(always)]
    fn uninit_step(&mut self, inst: &Inst) {
        // SAFETY: `regs.ptr` points to the `regs_len` words of the register file, which nothing
        // resizes while the run lives; this shared view ends before the instruction runs, and
        // nothing writes the file while it lives.
        let values = unsafe { std::slice::from_raw_parts(self.regs.ptr, self.regs_len) };
        let mut cx = uninit::Step {
            module: self.module,
            globals: self.space.globals,
            global: self.exec.uninit,
            func: self.func,
            base: self.regs.base,
            stride: self.regs.stride,
            act: self.act.lanes,
            values,
            shadow: self.shadow,
            info: self.lanes,
            ids: self.ids,
            local_regions: self.space.local_regions,
            findings: self.sink.findings,
            pc: self.p,
        };
        uninit::step(&mut cx, inst);
    }

    /// Applies `f` to slots `a` and `b` of every active lane, element by element, into `dst`.
    #[inline(always)]
    pub fn binary(&self, n: u16, dst: Reg, (a, b): (Reg, Reg), f: impl Fn(u64, u64) -> u64) {
        let (regs, act) = (self.regs, self.act);
        for i in 0..n as usize {
            let d = regs.slot(dst as usize + i);
            let x = regs.slot(a as usize + i);
            let y = regs.slot(b as usize + i);
            match act.wide() {
                Some(range) => regs.map2(d, (x, y), range, &f),
                None => act.each(|l| regs.set(d + l, f(regs.get(x + l), regs.get(y + l)))),
            }
        }
    }

    /// Applies `f` to slot `a` of every active lane, element by element, into `dst`.
    #[inline(always)]
    pub fn unary(&self, n: u16, dst: Reg, a: Reg, f: impl Fn(u64) -> u64) {
        let (regs, act) = (self.regs, self.act);
        for i in 0..n as usize {
            let d = regs.slot(dst as usize + i);
            let x = regs.slot(a as usize + i);
            match act.wide() {
                Some(range) => regs.map1(d, x, range, &f),
                None => act.each(|l| regs.set(d + l, f(regs.get(x + l)))),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every way the rows of an element-wise operation can coincide (an update in place of
    /// either operand, or both, or none) gives what the operation on the values before gives.
    #[test]
    fn element_wise_rows_give_the_same_values_in_place_or_not() {
        let (stride, rows) = (40, 4);
        let start: Vec<u64> = (0..stride * rows).map(|i| (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 7).collect();
        let f1 = |a: u64| a.rotate_left(3) ^ 5;
        let f2 = |a: u64, b: u64| a.wrapping_mul(3).wrapping_sub(b);
        let f3 = |a: u64, b: u64, c: u64| a.wrapping_add(b.wrapping_mul(7)) ^ c.rotate_left(11);
        for range in [(0, stride), (2, 37), (3, 13), (5, 6)] {
            for d in 0..rows {
                for x in 0..rows {
                    for y in 0..rows {
                        for (z, op) in (0..rows).flat_map(|z| (0..3).map(move |op| (z, op))) {
                            let mut file = start.clone();
                            let regs = Regs { ptr: file.as_mut_ptr(), base: 0, stride, file: PhantomData };
                            let slot = |s: usize| regs.slot(s);
                            let mut expected = start.clone();
                            for l in range.0..range.1 {
                                let v = |s: usize| start[s * stride + l];
                                expected[d * stride + l] = match op {
                                    0 => f1(v(x)),
                                    1 => f2(v(x), v(y)),
                                    _ => f3(v(x), v(y), v(z)),
                                };
                            }
                            match op {
                                0 => regs.map1(slot(d), slot(x), range, f1),
                                1 => regs.map2(slot(d), (slot(x), slot(y)), range, f2),
                                _ => {
                                    if !regs.update3(slot(d), (slot(x), slot(y), slot(z)), range, f3) {
                                        expected = start.clone();
                                    }
                                }
                            }
                            assert_eq!(file, expected, "op {op}, rows {d} {x} {y} {z}, lanes {range:?}");
                        }
                    }
                }
            }
        }
    }
}
