//! Check 9, uninitialised values: which bytes of private, `__local` and `noinit` global memory
//! nothing has written yet, how that state flows through the registers, and the three places
//! where using such a value is a finding: as a memory address, as a branch or switch condition,
//! and as a value stored to global memory. Copies between registers and into private or local
//! memory only carry the state along (as MemorySanitizer does), so a kernel may copy an
//! uninitialised variable and never be reported unless the copy is used.
//!
//! The interpreter calls [`step`] before each instruction, only in its checked instantiation
//! (`interp::Execution::run` with the check on): the step reads the instruction's operands' shadow
//! and the registers' values (addresses, indices), writes the shadow of what the instruction will
//! write, and moves memory shadow for loads, stores and copies. Off, none of this exists.
//!
//! Shadow of a register slot: a `u16` whose low byte has bit `k` set when byte `k` of the slot's
//! value is uninitialised, and whose high byte says where the first such byte came from
//! ([`Origin`]). Vector elements are slots of their own, so a vector written in some lanes only
//! is exact per lane; bytes matter for values clang assembles from parts (padded structs copied
//! as one integer: `and`, `or` and shifts by whole bytes are followed byte by byte, other
//! arithmetic makes every byte of the result uninitialised when any input byte is). Shadow of
//! memory: one origin byte per byte (0: written). Private memory is shadowed per work-item from
//! its allocas (fresh ones uninitialised), local memory per group (all uninitialised at the
//! group's start except variables with initial values), and global memory only for buffers
//! marked `noinit`, in relaxed atomic bytes because groups run on several threads.
//!
//! What it cannot see: images (texels read are defined), the bytes a collective or
//! `async_work_group_copy` moves are moved when the copy is issued, not when it completes, and a
//! work-group function's result is taken as defined. Memory written by the host is defined.

use std::sync::atomic::{AtomicU8, Ordering};

use super::Finding;
use super::findings::FindingLog;
use super::memory::{GlobalMemory, SPACE_GLOBAL, SPACE_LOCAL, SPACE_PRIVATE, split};
use super::warp::{LaneIds, LaneState};
use crate::ir::{self, AtomicOp, Conv, Function, Inst, IntOp, VecMem};

/// Where an uninitialised byte was read: 1 private memory, 2 an undefined value of the program
/// (`OpUndef`: a vector built in some lanes only), 3 a failed load (outside every allocation: it
/// yields no value of the program's), 4 + i the `i`-th local allocation,
/// [`GLOBAL_ORIGIN`] + i global allocation `i` (both capped at the byte's range). 0: defined.
pub type Origin = u8;
const PRIVATE_ORIGIN: Origin = 1;
const UNDEF_ORIGIN: Origin = 2;
const INVALID_ORIGIN: Origin = 3;
const LOCAL_ORIGIN: Origin = 4;
const GLOBAL_ORIGIN: Origin = 128;

fn local_origin(index: u64) -> Origin {
    (LOCAL_ORIGIN as u64 + index).min(GLOBAL_ORIGIN as u64 - 1) as Origin
}

fn global_origin(index: u64) -> Origin {
    (GLOBAL_ORIGIN as u64 + index).min(255) as Origin
}

/// The shadow of a register slot (see the module doc): byte mask and origin.
type Shadow = u16;
const ALL: Shadow = 0xff;

/// Both inputs' uninitialised bytes, with the origin of the first that has any.
#[inline(always)]
fn join(a: Shadow, b: Shadow) -> Shadow {
    if a & ALL != 0 { a | (b & ALL) } else { b }
}

/// Every byte uninitialised if any is (arithmetic that mixes bytes), else defined.
#[inline(always)]
fn smear(s: Shadow) -> Shadow {
    if s & ALL != 0 { s | ALL } else { 0 }
}

fn origin_of(s: Shadow) -> Origin {
    (s >> 8) as Origin
}

fn shadow(origin: Origin, mask: u8) -> Shadow {
    if origin == 0 || mask == 0 { 0 } else { (origin as Shadow) << 8 | mask as Shadow }
}

/// The shadow of `noinit` global buffers, shared by every work-group of a launch.
pub struct GlobalShadow {
    /// By global allocation index: a byte per byte of the buffer (its origin, 0 once written).
    buffers: Vec<Option<Box<[AtomicU8]>>>,
}

impl GlobalShadow {
    /// Shadows the allocations `noinit` names (index, length) as wholly uninitialised.
    pub fn new(noinit: &[(u64, usize)]) -> GlobalShadow {
        let mut buffers: Vec<Option<Box<[AtomicU8]>>> = Vec::new();
        for &(index, len) in noinit {
            let i = index as usize;
            if buffers.len() <= i {
                buffers.resize_with(i + 1, || None);
            }
            let origin = global_origin(index);
            buffers[i] = Some((0..len).map(|_| AtomicU8::new(origin)).collect());
        }
        GlobalShadow { buffers }
    }

    fn bytes(&self, index: u64) -> Option<&[AtomicU8]> {
        self.buffers.get(index as usize)?.as_deref()
    }
}

/// The shadow one work-group owns: its register file's (as the registers are laid out, slot-major)
/// and its local memory's, and each work-item's private memory.
#[derive(Default)]
pub struct GroupShadow {
    regs: Vec<Shadow>,
    local: Vec<Origin>,
    private: Vec<Vec<Origin>>,
}

impl GroupShadow {
    /// A fresh group: local memory uninitialised but for variables with initial values, private
    /// memory empty (what a work-item starts with, its by-value arguments, is defined), and the
    /// registers of `OpUndef` values in each function's frame (`frame_bases`) uninitialised.
    pub fn start(&mut self, local_regions: &[(usize, usize)], module: &ir::Module, frame_bases: &[u32], lanes: usize) {
        for (func, &base) in module.functions.iter().zip(frame_bases) {
            if base == u32::MAX {
                continue;
            }
            for &(reg, n) in &func.undefined {
                let first = (base as usize + reg as usize) * lanes;
                let end = first + n as usize * lanes;
                self.fit(end);
                self.regs[first..end].fill(shadow(UNDEF_ORIGIN, 0xff));
            }
        }
        let end = local_regions.iter().map(|r| r.0 + r.1).max().unwrap_or(0);
        self.local.clear();
        self.local.resize(end, 0);
        for (i, &(start, len)) in local_regions.iter().enumerate() {
            let initialised = module.locals.get(i).map_or(0, |v| v.init.len().min(len));
            self.local[start + initialised..start + len].fill(local_origin(i as u64));
        }
        self.private.resize_with(lanes, Vec::new);
        self.private.iter_mut().for_each(Vec::clear);
    }

    /// Makes room for a register file of `len` words (its slots are written before they are
    /// read; constants and arguments are never written and stay defined).
    pub fn fit(&mut self, len: usize) {
        if self.regs.len() < len {
            self.regs.resize(len, 0);
        }
    }

    /// Copies the shadow of `n` absolute slots from `from` to `to` for `lanes` (call arguments
    /// and returned values).
    pub fn copy_slots(&mut self, from: usize, to: usize, n: usize, stride: usize, lanes: &[u32]) {
        for k in 0..n {
            for &l in lanes {
                let s = self.regs[(from + k) * stride + l as usize];
                self.regs[(to + k) * stride + l as usize] = s;
            }
        }
    }
}

/// What [`step`] needs of the interpreter for one instruction.
pub struct Step<'s> {
    pub module: &'s ir::Module,
    pub globals: &'s GlobalMemory,
    /// The shadow of the `noinit` global buffers.
    pub global: Option<&'s GlobalShadow>,
    pub func: &'s Function,
    pub base: usize,
    pub stride: usize,
    pub act: &'s [u32],
    /// The register file's values (slot-major, as the interpreter holds them).
    pub values: &'s [u64],
    pub shadow: &'s mut GroupShadow,
    pub info: &'s [LaneState],
    pub ids: LaneIds<'s>,
    pub local_regions: &'s [(usize, usize)],
    pub findings: &'s mut FindingLog,
    /// The instruction's index in its function.
    pub pc: usize,
}

/// How an uninitialised value was used (the finding's `use`).
const ADDRESS: &str = "address";
const BRANCH: &str = "branch";
const STORE: &str = "store";

impl Step<'_> {
    #[inline(always)]
    fn at(&self, slot: u32, l: u32) -> usize {
        (self.base + slot as usize) * self.stride + l as usize
    }

    #[inline(always)]
    fn sh(&self, slot: u32, l: u32) -> Shadow {
        self.shadow.regs[self.at(slot, l)]
    }

    #[inline(always)]
    fn set(&mut self, slot: u32, l: u32, s: Shadow) {
        let i = self.at(slot, l);
        self.shadow.regs[i] = s;
    }

    #[inline(always)]
    fn value(&self, slot: u32, l: u32) -> u64 {
        self.values[self.at(slot, l)]
    }

    /// Every active lane's `n` slots from `dst` are `f(lane, element)`.
    fn each(&mut self, dst: u32, n: u16, mut f: impl FnMut(&Self, u32, u32) -> Shadow) {
        for i in 0..n as u32 {
            for k in 0..self.act.len() {
                let l = self.act[k];
                let s = f(self, l, i);
                self.set(dst + i, l, s);
            }
        }
    }

    /// Every active lane's `n` slots from `dst` are `f` of its slots from `a` and `b`, element
    /// by element (the common arithmetic; one column offset per element, not per lane).
    #[inline(always)]
    fn columns(&mut self, dst: u32, a: u32, b: u32, n: u16, f: impl Fn(Shadow, Shadow) -> Shadow) {
        let col = |r: u32| (self.base + r as usize) * self.stride;
        for i in 0..n as u32 {
            let (d, x, y) = (col(dst + i), col(a + i), col(b + i));
            let regs = &mut self.shadow.regs;
            for &l in self.act {
                let l = l as usize;
                regs[d + l] = f(regs[x + l], regs[y + l]);
            }
        }
    }

    fn report(&mut self, used: &'static str, s: Shadow, l: u32) {
        let loc = self.func.locs.get(self.pc).copied().unwrap_or(u32::MAX);
        let global_id = self.ids.global(l as usize);
        self.findings.push(uninitialized(self.module, self.globals, used, origin_of(s), global_id, loc));
    }

    /// Reports lane `l`'s address in `slot` if any byte of it is uninitialised.
    fn address(&mut self, slot: u32, l: u32) {
        let s = self.sh(slot, l);
        if s & ALL != 0 {
            self.report(ADDRESS, s, l);
        }
    }

    /// The shadow of `size` (at most 8) bytes of memory at `addr`, as lane `l` sees it.
    fn load(&self, addr: u64, size: usize, l: u32) -> Shadow {
        if self.unshadowed(addr, size) {
            return 0;
        }
        let size = size.min(8);
        if let Some(bytes) = self.own(addr, size, l) {
            // Private or local memory in bounds: the bytes at once.
            let (mut mask, mut origin) = (0u8, 0);
            for (k, &o) in bytes.iter().enumerate() {
                if o != 0 {
                    mask |= 1 << k;
                    origin = if origin == 0 { o } else { origin };
                }
            }
            return shadow(origin, mask);
        }
        let mut mask = 0u8;
        let mut origin = 0;
        for k in 0..size {
            let o = self.byte(addr.wrapping_add(k as u64), l);
            if o != 0 {
                mask |= 1 << k;
                if origin == 0 {
                    origin = o;
                }
            }
        }
        shadow(origin, mask)
    }

    /// Whether the `size` bytes at `addr` lie in a global allocation that has no shadow (not
    /// `noinit`): always defined, and nothing to record. The common case, tested once per access.
    #[inline(always)]
    fn unshadowed(&self, addr: u64, size: usize) -> bool {
        let (space, index, offset) = split(addr);
        space == SPACE_GLOBAL
            && offset as usize + size <= self.globals.len(index).unwrap_or(0)
            && self.global.is_none_or(|g| g.bytes(index).is_none())
    }

    /// The shadow of `size` bytes at `addr` in lane `l`'s private memory or its group's local
    /// memory, when the shadow holds them all (else the byte-by-byte path decides).
    #[inline(always)]
    fn own(&self, addr: u64, size: usize, l: u32) -> Option<&[Origin]> {
        let (space, index, offset) = split(addr);
        let offset = offset as usize;
        match space {
            SPACE_PRIVATE if index == 0 => self.shadow.private[l as usize].get(offset..offset + size),
            SPACE_LOCAL => {
                let &(start, len) = self.local_regions.get(index as usize)?;
                (offset + size <= len).then(|| self.shadow.local.get(start + offset..start + offset + size))?
            }
            _ => None,
        }
    }

    fn byte(&self, addr: u64, l: u32) -> Origin {
        let (space, index, offset) = split(addr);
        let offset = offset as usize;
        match space {
            SPACE_PRIVATE if index == 0 && offset < self.info[l as usize].private.len() => {
                self.shadow.private[l as usize].get(offset).copied().unwrap_or(0)
            }
            SPACE_LOCAL => match self.local_regions.get(index as usize) {
                Some(&(start, len)) if offset < len => self.shadow.local.get(start + offset).copied().unwrap_or(0),
                _ => INVALID_ORIGIN,
            },
            SPACE_GLOBAL if offset < self.globals.len(index).unwrap_or(0) => {
                match self.global.and_then(|g| g.bytes(index)) {
                    Some(bytes) => bytes.get(offset).map_or(0, |b| b.load(Ordering::Relaxed)),
                    None => 0,
                }
            }
            _ => INVALID_ORIGIN,
        }
    }

    fn set_byte(&mut self, addr: u64, l: u32, origin: Origin) {
        let (space, index, offset) = split(addr);
        let offset = offset as usize;
        match space {
            SPACE_PRIVATE => {
                if let Some(b) = self.shadow.private[l as usize].get_mut(offset) {
                    *b = origin;
                }
            }
            SPACE_LOCAL => {
                if let Some(&(start, len)) = self.local_regions.get(index as usize)
                    && offset < len
                    && let Some(b) = self.shadow.local.get_mut(start + offset)
                {
                    *b = origin;
                }
            }
            SPACE_GLOBAL => {
                if let Some(b) = self.global.and_then(|g| g.bytes(index)).and_then(|b| b.get(offset)) {
                    b.store(origin, Ordering::Relaxed);
                }
            }
            _ => {}
        }
    }

    /// Lane `l` stores a value of shadow `s` in `size` bytes at `addr`: an uninitialised value
    /// stored to global memory is reported (`report` false: already reported for this access).
    fn store(&mut self, addr: u64, size: usize, s: Shadow, l: u32, report: bool) -> bool {
        let global = addr >> crate::ir::value::SPACE_SHIFT == SPACE_GLOBAL;
        let reported = global && report && s & ALL != 0;
        if reported {
            self.report(STORE, s, l);
        }
        if global && self.unshadowed(addr, size) {
            return reported;
        }
        let origin = origin_of(s);
        if size <= 8 && self.own(addr, size, l).is_some() {
            let (space, index, offset) = split(addr);
            let at = if space == SPACE_LOCAL { self.local_regions[index as usize].0 } else { 0 } + offset as usize;
            let bytes = match space {
                SPACE_LOCAL => &mut self.shadow.local[at..at + size],
                _ => &mut self.shadow.private[l as usize][at..at + size],
            };
            for (k, b) in bytes.iter_mut().enumerate() {
                *b = if s & (1 << k) != 0 { origin } else { 0 };
            }
            return reported;
        }
        for k in 0..size {
            let uninit = k < 8 && s & (1 << k) != 0;
            self.set_byte(addr.wrapping_add(k as u64), l, if uninit { origin } else { 0 });
        }
        reported
    }

    /// Whether `n` bytes at `addr` lie inside one allocation lane `l` can reach (as the
    /// interpreter's copies ask before they copy anything).
    fn fits(&self, addr: u64, n: u64, l: u32) -> bool {
        let (space, index, offset) = split(addr);
        let Some(end) = offset.checked_add(n) else { return false };
        let len = match space {
            SPACE_GLOBAL => self.globals.len(index).unwrap_or(0),
            SPACE_LOCAL => self.local_regions.get(index as usize).map_or(0, |r| r.1),
            SPACE_PRIVATE if index == 0 => self.info[l as usize].private.len(),
            _ => 0,
        };
        end <= len as u64
    }

    /// Copies the shadow of `n` bytes (lane `l`'s memmove), without reporting: a copy is not a
    /// use. A copy with a side outside memory copies nothing, as the interpreter's.
    fn copy(&mut self, to: u64, from: u64, n: usize, l: u32) {
        if !(self.fits(to, n as u64, l) && self.fits(from, n as u64, l)) {
            return;
        }
        let forward = to <= from;
        for j in 0..n {
            let k = if forward { j } else { n - 1 - j } as u64;
            let o = self.byte(from.wrapping_add(k), l);
            self.set_byte(to.wrapping_add(k), l, o);
        }
    }
}

/// The shadow effects of `inst` (the instruction at `cx.pc`), before it runs.
pub fn step(cx: &mut Step, inst: &Inst) {
    match *inst {
        Inst::LoadScalar { .. }
        | Inst::StoreScalar { .. }
        | Inst::Load { .. }
        | Inst::Store { .. }
        | Inst::CopyMemory { .. }
        | Inst::Alloca { .. }
        | Inst::VectorMemory { .. }
        | Inst::Atomic { .. }
        | Inst::AsyncCopy { .. } => memory_step(cx, inst),
        _ => value_step(cx, inst),
    }
}

/// The shadow effects of a memory instruction: loads, stores, copies, allocas, vector memory,
/// atomics and asynchronous copies.
fn memory_step(cx: &mut Step, inst: &Inst) {
    let module = cx.module;
    match *inst {
        Inst::LoadScalar { dst, ptr, size, .. } => {
            for k in 0..cx.act.len() {
                let l = cx.act[k];
                cx.address(ptr, l);
                let s = cx.load(cx.value(ptr, l), size as usize, l);
                cx.set(dst, l, s);
            }
        }
        Inst::StoreScalar { src, ptr, size, .. } => {
            for k in 0..cx.act.len() {
                let l = cx.act[k];
                cx.address(ptr, l);
                cx.store(cx.value(ptr, l), size as usize, cx.sh(src, l), l, true);
            }
        }
        Inst::Load { dst, ptr, layout, .. } => {
            let layout = &module.layouts[layout as usize];
            for k in 0..cx.act.len() {
                let l = cx.act[k];
                cx.address(ptr, l);
                let addr = cx.value(ptr, l);
                for (i, leaf) in layout.leaves.iter().enumerate() {
                    let s = cx.load(addr.wrapping_add(leaf.offset as u64), leaf.size as usize, l);
                    cx.set(dst + i as u32, l, s);
                }
            }
        }
        Inst::Store { src, ptr, layout, .. } => {
            let layout = &module.layouts[layout as usize];
            for k in 0..cx.act.len() {
                let l = cx.act[k];
                cx.address(ptr, l);
                let addr = cx.value(ptr, l);
                let mut report = true;
                for (i, leaf) in layout.leaves.iter().enumerate() {
                    let s = cx.sh(src + i as u32, l);
                    let at = addr.wrapping_add(leaf.offset as u64);
                    report &= !cx.store(at, leaf.size as usize, s, l, report);
                }
            }
        }
        Inst::CopyMemory { dst, src, size, .. } => {
            for k in 0..cx.act.len() {
                let l = cx.act[k];
                cx.address(dst, l);
                cx.address(src, l);
                let n = cx.value(size, l) as usize;
                cx.copy(cx.value(dst, l), cx.value(src, l), n, l);
            }
        }
        Inst::Alloca { dst, size, align } => {
            for k in 0..cx.act.len() {
                let l = cx.act[k];
                // Where the interpreter will put it: the top of the work-item's private stack.
                let start = cx.info[l as usize].private.len().next_multiple_of(align as usize);
                if start + size as usize <= ir::value::MAX_PRIVATE_BYTES {
                    let private = &mut cx.shadow.private[l as usize];
                    private.truncate(start);
                    private.resize(start, 0);
                    private.resize(start + size as usize, PRIVATE_ORIGIN);
                }
                cx.set(dst, l, 0);
            }
        }
        Inst::VectorMemory { op, dst, offset, ptr, elem, n, .. } => {
            let (n, elem) = (n as u64, elem as u64);
            let width = match op {
                VecMem::LoadHalf { aligned: true } | VecMem::StoreHalf { aligned: true, .. } if n == 3 => 4,
                _ => n,
            };
            let size = if matches!(op, VecMem::Load | VecMem::Store) { elem } else { 2 };
            for k in 0..cx.act.len() {
                let l = cx.act[k];
                let start = cx.value(ptr, l).wrapping_add(cx.value(offset, l).wrapping_mul(width * elem));
                let s = join(cx.sh(ptr, l), cx.sh(offset, l));
                if s & ALL != 0 {
                    cx.report(ADDRESS, s, l);
                }
                let mut report = true;
                for i in 0..n {
                    let at = start.wrapping_add(i * elem);
                    let slot = dst + i as u32;
                    match op {
                        VecMem::Load => {
                            let s = cx.load(at, size as usize, l);
                            cx.set(slot, l, s);
                        }
                        VecMem::LoadHalf { .. } => {
                            let s = smear(cx.load(at, 2, l));
                            cx.set(slot, l, s);
                        }
                        VecMem::Store => report &= !cx.store(at, size as usize, cx.sh(slot, l), l, report),
                        VecMem::StoreHalf { .. } => {
                            report &= !cx.store(at, 2, smear(cx.sh(slot, l)), l, report);
                        }
                    }
                }
            }
        }
        Inst::Atomic { op, bits, dst, ptr, value, comparator, .. } => {
            let size = bits as usize / 8;
            for k in 0..cx.act.len() {
                let l = cx.act[k];
                cx.address(ptr, l);
                let addr = cx.value(ptr, l);
                let old = cx.load(addr, size, l);
                let operand = match op {
                    AtomicOp::Load | AtomicOp::Inc | AtomicOp::Dec | AtomicOp::FlagTestAndSet | AtomicOp::FlagClear => {
                        0
                    }
                    AtomicOp::CompareExchange => join(cx.sh(value, l), cx.sh(comparator, l)),
                    _ => cx.sh(value, l),
                };
                let new = match op {
                    AtomicOp::Load => None,
                    AtomicOp::Store | AtomicOp::Exchange => Some(operand),
                    AtomicOp::FlagTestAndSet | AtomicOp::FlagClear => Some(0),
                    _ => Some(smear(join(old, operand))),
                };
                // What it writes is reported as a store of that value (one from an
                // uninitialised or failed read is uninitialised too, as the reference tool says).
                if let Some(new) = new {
                    cx.store(addr, size, new, l, new & ALL != 0);
                }
                cx.set(dst, l, if op == AtomicOp::FlagTestAndSet { smear(old) } else { old });
            }
        }
        Inst::AsyncCopy { dst, dst_ptr, src_ptr, count, stride, elem, to_local, .. } => {
            // A collective: every work-item names the same copy; the first one moves the shadow.
            for k in 0..cx.act.len() {
                let l = cx.act[k];
                cx.address(dst_ptr, l);
                cx.address(src_ptr, l);
                cx.set(dst, l, 0);
            }
            if let Some(&l) = cx.act.first() {
                let (to, from) = (cx.value(dst_ptr, l), cx.value(src_ptr, l));
                let (count, step, elem) = (cx.value(count, l), cx.value(stride, l).max(1), elem as u64);
                // Element by element, up to the first outside memory (reported by the copy itself).
                for e in 0..count {
                    let (d, s) = if to_local { (e, e.wrapping_mul(step)) } else { (e.wrapping_mul(step), e) };
                    let (d, s) = (to.wrapping_add(d.wrapping_mul(elem)), from.wrapping_add(s.wrapping_mul(elem)));
                    if !(cx.fits(d, elem, l) && cx.fits(s, elem, l)) {
                        break;
                    }
                    cx.copy(d, s, elem as usize, l);
                }
            }
        }
        _ => unreachable!("memory_step takes memory instructions only"),
    }
}

/// The shadow effects of every other instruction: values, control flow and the results the
/// check takes as defined.
fn value_step(cx: &mut Step, inst: &Inst) {
    let module = cx.module;
    match *inst {
        Inst::Mov { dst, src, n } => cx.columns(dst, src, src, n, |s, _| s),
        Inst::CastToSpace { dst, src, .. } | Inst::PointerFence { dst, src } => {
            cx.each(dst, 1, |cx, l, _| cx.sh(src, l))
        }
        Inst::Unary { dst, a, n, .. } => cx.columns(dst, a, a, n, |s, _| smear(s)),
        Inst::Convert { conv, from, to, dst, src, n } => cx.each(dst, n, |cx, l, i| {
            let s = cx.sh(src + i, l);
            let (from, to) = ((from as u32).div_ceil(8), (to as u32).div_ceil(8));
            match conv {
                // Truncation keeps the low bytes; a zero extension adds defined ones, a sign
                // extension copies the top byte's state.
                Conv::UInt | Conv::SInt if s & ALL != 0 => {
                    let keep = byte_mask(from.min(to)) as Shadow;
                    let top = from > 0 && s & (1 << (from - 1)) != 0;
                    let wide =
                        if conv == Conv::SInt && top && to > from { byte_mask(to) & !byte_mask(from) } else { 0 };
                    let m = (s & keep) | wide as Shadow;
                    if m == 0 { 0 } else { (s & 0xff00) | m }
                }
                _ => smear(s),
            }
        }),
        Inst::IntBin { op: IntOp::Add | IntOp::Sub | IntOp::Mul, bits, dst, a, b, n } => {
            let width = 0xff00 | byte_mask((bits as u32).div_ceil(8)) as Shadow;
            cx.columns(dst, a, b, n, |x, y| smear(join(x, y)) & width)
        }
        Inst::IntBin { op, bits, dst, a, b, n } => cx.each(dst, n, |cx, l, i| {
            let (sa, sb) = (cx.sh(a + i, l), cx.sh(b + i, l));
            if (sa | sb) & ALL == 0 {
                return 0;
            }
            let (va, vb) = (cx.value(a + i, l), cx.value(b + i, l));
            let width = byte_mask((bits as u32).div_ceil(8)) as Shadow;
            match op {
                // A byte is defined where both are, or where a defined operand byte decides it
                // (0 for `and`, all ones for `or`).
                IntOp::And | IntOp::Or => {
                    let decides = |v: u64, k: u32| {
                        let byte = (v >> (8 * k)) & 0xff;
                        if op == IntOp::And { byte == 0 } else { byte == 0xff }
                    };
                    let mut m = 0;
                    for k in 0..8 {
                        let (ua, ub) = (sa & (1 << k) != 0, sb & (1 << k) != 0);
                        let undefined = (ua && (ub || !decides(vb, k))) || (ub && !decides(va, k));
                        if undefined {
                            m |= 1 << k;
                        }
                    }
                    let m = m & width;
                    if m == 0 { 0 } else { (join(sa, sb) & 0xff00) | m }
                }
                IntOp::Xor => join(sa, sb) & (0xff00 | width),
                IntOp::Shl | IntOp::LShr if sb & ALL == 0 => {
                    let shift = (vb as u32) % bits.max(1) as u32;
                    let m = (sa & ALL) as u32;
                    let (lo, hi) = (shift / 8, shift.div_ceil(8));
                    let m = if op == IntOp::Shl { (m << lo) | (m << hi) } else { (m >> lo) | (m >> hi) };
                    let m = m as Shadow & width;
                    if m == 0 { 0 } else { (sa & 0xff00) | m }
                }
                _ => smear(join(sa, sb)) & (0xff00 | width),
            }
        }),
        Inst::FloatBin { dst, a, b, n, .. } | Inst::Compare { dst, a, b, n, .. } => {
            cx.columns(dst, a, b, n, |x, y| smear(join(x, y)))
        }
        Inst::Select { dst, cond, a, b, n, cond_lanes } => cx.each(dst, n, |cx, l, i| {
            let c = cx.sh(cond + if cond_lanes { i } else { 0 }, l);
            let picked = if cx.value(cond + if cond_lanes { i } else { 0 }, l) != 0 { a } else { b };
            join(smear(c), cx.sh(picked + i, l))
        }),
        Inst::Bitcast { dst, src, from, to } => {
            let (from, to) = (&module.layouts[from as usize], &module.layouts[to as usize]);
            for k in 0..cx.act.len() {
                let l = cx.act[k];
                let mut bytes = [0u8; 128];
                for (i, leaf) in from.leaves.iter().enumerate() {
                    let s = cx.sh(src + i as u32, l);
                    for j in 0..leaf.size as usize {
                        if s & (1 << j) != 0 {
                            bytes[(leaf.offset as usize + j).min(127)] = origin_of(s);
                        }
                    }
                }
                for (i, leaf) in to.leaves.iter().enumerate() {
                    let (mut mask, mut origin) = (0u8, 0);
                    for j in 0..leaf.size as usize {
                        let o = bytes[(leaf.offset as usize + j).min(127)];
                        if o != 0 {
                            mask |= 1 << j;
                            origin = if origin == 0 { o } else { origin };
                        }
                    }
                    cx.set(dst + i as u32, l, shadow(origin, mask));
                }
            }
        }
        Inst::Reduce { dst, src, n, .. } => {
            cx.each(dst, 1, |cx, l, _| smear((0..n as u32).fold(0, |s, i| join(s, cx.sh(src + i, l)))))
        }
        Inst::PtrOffset { dst, base, first_index, num_indices, .. } => {
            let indices = &cx.func.indices[first_index as usize..first_index as usize + num_indices as usize];
            cx.each(dst, 1, |cx, l, _| {
                smear(indices.iter().fold(cx.sh(base, l), |s, index| join(s, cx.sh(index.reg, l))))
            });
        }
        Inst::PtrDiff { dst, a, b, .. } => cx.each(dst, 1, |cx, l, _| smear(join(cx.sh(a, l), cx.sh(b, l)))),
        Inst::ExtractDynamic { dst, src, index, index_bits, n, .. } => cx.each(dst, 1, |cx, l, _| {
            let i = cx.value(index, l) & ir::value::mask(index_bits);
            let picked = if i < n as u64 { cx.sh(src + i as u32, l) } else { 0 };
            join(smear(cx.sh(index, l)), picked)
        }),
        Inst::InsertDynamic { dst, src, value, index, index_bits, n } => {
            for k in 0..cx.act.len() {
                let l = cx.act[k];
                let at = cx.value(index, l) & ir::value::mask(index_bits);
                let si = smear(cx.sh(index, l));
                let mut lanes = [0 as Shadow; 16];
                for (i, s) in lanes.iter_mut().enumerate().take(n as usize) {
                    let from = if i as u64 == at { cx.sh(value, l) } else { cx.sh(src + i as u32, l) };
                    *s = join(si, from);
                }
                for (i, &s) in lanes.iter().enumerate().take(n as usize) {
                    cx.set(dst + i as u32, l, s);
                }
            }
        }
        Inst::Shuffle { dst, first, n } => {
            let sources = &cx.func.lanes[first as usize..first as usize + n as usize];
            for k in 0..cx.act.len() {
                let l = cx.act[k];
                let mut picked = [0 as Shadow; 16];
                for (p, &s) in picked.iter_mut().zip(sources) {
                    *p = cx.sh(s, l);
                }
                for (i, &s) in picked.iter().enumerate().take(n as usize) {
                    cx.set(dst + i as u32, l, s);
                }
            }
        }
        Inst::ShuffleDynamic { dst, a, b, na, mask, n, mask_bits } => {
            let na = na as u64;
            for k in 0..cx.act.len() {
                let l = cx.act[k];
                let mut picked = [0 as Shadow; 16];
                for (i, p) in picked.iter_mut().enumerate().take(n as usize) {
                    let sel = (cx.value(mask + i as u32, l) & ir::value::mask(mask_bits)) % (2 * na);
                    let from = if sel < na { cx.sh(a + sel as u32, l) } else { cx.sh(b + (sel - na) as u32, l) };
                    *p = join(smear(cx.sh(mask + i as u32, l)), from);
                }
                for (i, &s) in picked.iter().enumerate().take(n as usize) {
                    cx.set(dst + i as u32, l, s);
                }
            }
        }
        Inst::Builtin { dst, dims, .. } => cx.each(dst, dims as u16, |_, _, _| 0),
        Inst::Math { dst, args, n, .. } => cx.each(dst, n, |cx, l, i| {
            // Unused operands are register 0 (see the lowering of OpenCL.std calls).
            let used = args.iter().enumerate().filter(|&(k, &a)| k == 0 || a != 0);
            smear(used.fold(0, |s, (_, &a)| join(s, cx.sh(a + i, l))))
        }),
        Inst::MathOut { dst, a, b, out, n, out_bits, .. } => {
            let step = out_bits as u64 / 8;
            for k in 0..cx.act.len() {
                let l = cx.act[k];
                cx.address(out, l);
                let at = cx.value(out, l);
                let mut report = true;
                for i in 0..n as u32 {
                    let s = smear(join(cx.sh(a + i, l), cx.sh(b + i, l)));
                    report &= !cx.store(at.wrapping_add(i as u64 * step), step as usize, s, l, report);
                    cx.set(dst + i, l, s);
                }
            }
        }
        Inst::Geometric { .. } => {
            // Every result from every operand.
            let mut reads: [(ir::Reg, u64); 2] = [(0, 0); 2];
            let mut write = (0, 0);
            let mut r = 0;
            ir::operands::for_each(module, cx.func, inst, |reg, n, used| match used {
                ir::operands::Use::Read if r < 2 => {
                    reads[r] = (reg, n);
                    r += 1;
                }
                ir::operands::Use::Write => write = (reg, n),
                _ => {}
            });
            cx.each(write.0, write.1 as u16, |cx, l, _| {
                let all = reads.iter().flat_map(|&(reg, n)| (0..n as u32).map(move |i| reg + i));
                smear(all.fold(0, |s, reg| join(s, cx.sh(reg, l))))
            });
        }
        Inst::BranchIf { cond, .. } => {
            for k in 0..cx.act.len() {
                let l = cx.act[k];
                let s = cx.sh(cond, l);
                if s & ALL != 0 {
                    cx.report(BRANCH, s, l);
                }
            }
        }
        Inst::Switch { value, bits, .. } => {
            let width = byte_mask((bits as u32).div_ceil(8)) as Shadow;
            for k in 0..cx.act.len() {
                let l = cx.act[k];
                let s = cx.sh(value, l);
                if s & width != 0 {
                    cx.report(BRANCH, s, l);
                }
            }
        }
        // Control flow, barriers and fences move no values; calls and returns are copied by the
        // caller of `step` (`interp::Execution::run`).
        Inst::Branch { .. }
        | Inst::Call { .. }
        | Inst::Return { .. }
        | Inst::Barrier { .. }
        | Inst::MemoryFence { .. }
        | Inst::WaitEvents { .. }
        | Inst::IndexCheck { .. }
        | Inst::Assert { .. }
        | Inst::ImageWrite { .. }
        | Inst::Unreachable { .. }
        | Inst::Unsupported { .. } => {}
        // Results the check takes as defined: work-group functions, images, printf.
        Inst::Collective { .. } | Inst::ImageRead { .. } | Inst::ImageQuery { .. } | Inst::Printf { .. } => {
            let mut write = (0, 0);
            ir::operands::for_each(module, cx.func, inst, |reg, n, used| {
                if used == ir::operands::Use::Write {
                    write = (reg, n);
                }
            });
            cx.each(write.0, write.1 as u16, |_, _, _| 0);
        }
        _ => unreachable!("value_step takes no memory instruction"),
    }
}

/// The low `bytes` bits set (a slot's bytes).
fn byte_mask(bytes: u32) -> u8 {
    if bytes >= 8 { 0xff } else { ((1u16 << bytes) - 1) as u8 }
}

#[cold]
#[inline(never)]
fn uninitialized(
    module: &ir::Module,
    globals: &GlobalMemory,
    used: &'static str,
    origin: Origin,
    global_id: [u64; 3],
    loc: u32,
) -> Finding {
    let (space, allocation) = match origin {
        PRIVATE_ORIGIN => ("private", "private memory".to_string()),
        UNDEF_ORIGIN => ("private", "undefined value".to_string()),
        INVALID_ORIGIN => ("none", "outside every allocation".to_string()),
        o if o >= GLOBAL_ORIGIN => {
            let index = (o - GLOBAL_ORIGIN) as usize;
            ("global", globals.names.get(index).cloned().unwrap_or_else(|| "global buffer".into()))
        }
        o if o >= LOCAL_ORIGIN => {
            let index = (o - LOCAL_ORIGIN) as usize;
            let name = module.locals.get(index).map(|v| v.name.clone());
            ("local", name.unwrap_or_else(|| format!("local argument {index}")))
        }
        _ => ("unknown", "unknown".to_string()),
    };
    Finding::Uninitialized { used, space, allocation, global_id, loc }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::memory::address;

    /// Runs `step` on `inst` for one lane whose registers hold `values` with shadows `shadows`,
    /// and 16 bytes of private memory shadowed as `private`: the registers' shadow after, and
    /// how many findings it made.
    fn step_one(inst: &Inst, values: &[u64], shadows: &[Shadow], private: &mut Vec<Origin>) -> (Vec<Shadow>, usize) {
        let module = ir::Module::default();
        let globals = GlobalMemory::new();
        let func = Function { locs: vec![u32::MAX], ..Function::default() };
        let mut shadow =
            GroupShadow { regs: shadows.to_vec(), local: Vec::new(), private: vec![std::mem::take(private)] };
        let info = [LaneState { private: vec![0; 16], ..LaneState::default() }];
        let mut findings = FindingLog::default();
        let mut cx = Step {
            module: &module,
            globals: &globals,
            global: None,
            func: &func,
            base: 0,
            stride: 1,
            act: &[0],
            values,
            shadow: &mut shadow,
            info: &info,
            ids: LaneIds::new(&[0; 3], 1, [0; 3]),
            local_regions: &[],
            findings: &mut findings,
            pc: 0,
        };
        step(&mut cx, inst);
        *private = std::mem::take(&mut shadow.private[0]);
        (shadow.regs, findings.len())
    }

    #[test]
    fn and_with_defined_zero_bytes_and_shifts_by_bytes_are_followed_byte_by_byte() {
        let and = Inst::IntBin { op: IntOp::And, bits: 32, dst: 2, a: 0, b: 1, n: 1 };
        let (regs, _) = step_one(&and, &[0, 0xff, 0], &[shadow(1, 0x0f), 0, 0], &mut Vec::new());
        assert_eq!(regs[2], shadow(1, 0x01), "only the byte the mask keeps");
        let shl = Inst::IntBin { op: IntOp::Shl, bits: 32, dst: 2, a: 0, b: 1, n: 1 };
        let (regs, _) = step_one(&shl, &[0, 8, 0], &[shadow(1, 0x01), 0, 0], &mut Vec::new());
        assert_eq!(regs[2], shadow(1, 0x02));
        let add = Inst::IntBin { op: IntOp::Add, bits: 16, dst: 2, a: 0, b: 1, n: 1 };
        let (regs, _) = step_one(&add, &[0, 1, 0], &[shadow(1, 0x01), 0, 0], &mut Vec::new());
        assert_eq!(regs[2], shadow(1, 0x03), "arithmetic spreads over the result's bytes");
    }

    #[test]
    fn a_branch_on_an_uninitialised_condition_is_a_finding_and_a_defined_one_is_not() {
        let branch = Inst::BranchIf { cond: 0, then: 0, otherwise: 0 };
        assert_eq!(step_one(&branch, &[1], &[shadow(1, 0x01)], &mut Vec::new()).1, 1);
        assert_eq!(step_one(&branch, &[1], &[0], &mut Vec::new()).1, 0);
    }

    #[test]
    fn private_memory_keeps_the_bytes_a_store_left_uninitialised() {
        let at = address(SPACE_PRIVATE, 0, 4);
        let mut private = vec![PRIVATE_ORIGIN; 16];
        let store = Inst::StoreScalar { src: 0, ptr: 1, size: 4, loc: 0, align: 4 };
        let (_, found) = step_one(&store, &[7, at, 0], &[shadow(UNDEF_ORIGIN, 0x0c), 0, 0], &mut private);
        assert_eq!(found, 0, "a store to private memory is not a use");
        assert_eq!(&private[4..8], &[0, 0, UNDEF_ORIGIN, UNDEF_ORIGIN]);
        let load = Inst::LoadScalar { dst: 2, ptr: 1, size: 8, loc: 0, align: 4 };
        let (regs, _) = step_one(&load, &[0, at, 0], &[0, 0, 0], &mut private);
        assert_eq!(regs[2], shadow(UNDEF_ORIGIN, 0xfc), "bytes 8.. of the load are the fresh variable's");
    }

    #[test]
    fn join_keeps_the_first_origin_and_every_byte() {
        let (a, b) = (shadow(1, 0b0001), shadow(130, 0b0110));
        assert_eq!(join(a, b), shadow(1, 0b0111));
        assert_eq!(join(0, b), b);
        assert_eq!(join(a, 0), a);
        assert_eq!(smear(a), shadow(1, 0xff));
        assert_eq!(smear(0), 0);
    }

    #[test]
    fn origins_name_their_space() {
        assert_eq!(local_origin(0), LOCAL_ORIGIN);
        assert!(local_origin(1000) < GLOBAL_ORIGIN);
        assert_eq!(global_origin(3), GLOBAL_ORIGIN + 3);
        assert_eq!(global_origin(1000), 255);
        assert_eq!(byte_mask(4), 0x0f);
        assert_eq!(byte_mask(8), 0xff);
    }
}
