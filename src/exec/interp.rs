//! The interpreter: runs a warp (lanes that share a program counter, see [`super::warp`]) over
//! the IR in lockstep until it reaches a barrier, spins, finishes, or fails.
//!
//! Each instruction is decoded once and applied to every active lane of the warp's top entry;
//! registers are slot-major, so a lane loop walks one array. A conditional branch whose lanes
//! disagree parts the warp into paths that meet again at the branch's immediate post-dominator
//! (`ir::Function::joins`). The hot loop allocates nothing and does not hash, format or dispatch
//! dynamically; the scalar meaning of each operation lives in [`super::ops`].

use rspirv::spirv::OpenclStd100Op as Cl;

use super::execution::{CopyRegs, allocation_of, observe_copy, observed, oob};
pub use super::execution::{Execution, Group, NdRange, Yield};
use super::hooks::{Access, AccessKind, AtomicInst, GroupHooks, LaneAtomic};
use super::image::{self, Sampler};
use super::memory::{
    ANY, Fault, FaultKind, LOAD, Memory, SPACE_GLOBAL, SPACE_LOCAL, SPACE_PRIVATE, SPACE_SHIFT, STORE, address, split,
};
use super::ops::{
    atomic_update, bits_f32, compare, convert, f32_of, f64_of, float_lane, float_op, flush, flushed_op, geometric,
    half_op, int_op, math_lane, narrow_float, unary,
};
pub use super::warp::SPIN_REPEATS;
use super::warp::{Lanes, SpinWatch, Warp};
use super::{ExecError, Finding, half, math, printf};
use crate::ir::reconverge::EXIT;
use crate::ir::value::{MAX_PRIVATE_BYTES, mask, sign_extend};
use crate::ir::{self, AtomicOp, Builtin, Cmp, FloatOp, Geo, ImageQuery, Inst, IntOp, MathKind, Round, VecMem};

/// Whether `size` bytes at `addr` overlap one of `ranges` (sorted, disjoint `[start, end)`).
fn watched(ranges: &[(u64, u64)], addr: u64, size: u64) -> bool {
    let end = addr.saturating_add(size.max(1));
    let i = ranges.partition_point(|r| r.1 <= addr);
    ranges.get(i).is_some_and(|r| r.0 < end)
}

#[cold]
fn private_too_large(global_id: [u64; 3]) -> ExecError {
    ExecError::Memory(format!(
        "work-item {global_id:?} needs more than {} MiB of private memory",
        MAX_PRIVATE_BYTES >> 20
    ))
}

/// The most call frames a warp may stack (recursion is rejected earlier; this bounds depth).
const MAX_FRAMES: usize = 1024;

/// Reusable lane lists for parting a warp at a branch.
#[derive(Default)]
pub struct Scratch {
    then: Vec<u32>,
    otherwise: Vec<u32>,
    cases: Vec<(u32, u32)>,
    /// The values of a load or store run of consecutive lanes, and a store run's bytes.
    values: Vec<u64>,
    bytes: Vec<u8>,
    /// The lanes' parts of an atomic on `__local` memory, for the hooks.
    atomics: Vec<LaneAtomic>,
}

/// What ends a run of straight-line code of one entry.
enum Event {
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

/// The source location of a warp's next instruction (for messages).
pub fn location(module: &ir::Module, warp: &Warp) -> String {
    let func = &module.functions[warp.func as usize];
    let pc = warp.top().map_or(0, |e| e.pc) as usize;
    let at = (pc + 1).min(func.locs.len());
    // The nearest located instruction before, else after (code before the first line); in a
    // kernel's entry stub without lines, the function it is about to call.
    let near = |locs: &[u32], at: usize| locs[..at].iter().rev().chain(&locs[at..]).copied().find(|&l| l != u32::MAX);
    let callee = match func.code.get(pc) {
        Some(Inst::Call { func: callee, .. }) => near(&module.functions[*callee as usize].locs, 0),
        _ => None,
    };
    let loc = near(&func.locs, at).or(callee);
    loc.map(|l| module.location(l)).unwrap_or_else(|| "unknown location".into())
}

impl<'a> Execution<'a> {
    /// Runs `warp` until it yields. `budget` counts down branches and calls, one per active
    /// lane; when it has less than the active lanes need, the warp yields
    /// [`Yield::OutOfBudget`] before the branch or call.
    pub fn run<H: GroupHooks>(
        &self,
        warp: &mut Warp,
        lanes: &mut Lanes,
        group: &mut Group,
        hooks: &mut H,
        budget: &mut u64,
        scratch: &mut Scratch,
    ) -> Result<Yield, ExecError> {
        if self.uninit.is_some() {
            self.run_as::<H, true>(warp, lanes, group, hooks, budget, scratch)
        } else {
            self.run_as::<H, false>(warp, lanes, group, hooks, budget, scratch)
        }
    }

    /// [`Execution::run`], with the uninitialised-value check (`U`) or without it. Out of line:
    /// each instantiation keeps the straight-line loop inlined as a single one did.
    #[inline(never)]
    fn run_as<H: GroupHooks, const U: bool>(
        &self,
        warp: &mut Warp,
        lanes: &mut Lanes,
        group: &mut Group,
        hooks: &mut H,
        budget: &mut u64,
        scratch: &mut Scratch,
    ) -> Result<Yield, ExecError> {
        let module = self.module;
        let stride = lanes.stride;
        'frames: loop {
            let func_index = warp.func;
            let func = &module.functions[func_index as usize];
            let base = warp.base as usize;
            loop {
                let Some(top) = warp.top() else { return Ok(Yield::Done) };
                if top.pc == EXIT {
                    // Paths that met only at the exit: their lanes have all returned.
                    if warp.frames.is_empty() {
                        warp.pop();
                    } else if let Some(frame) = warp.returned() {
                        restore_private(lanes, warp.active(), frame.private_mark);
                    }
                    continue 'frames;
                }
                let mut pc = top.pc as usize;
                let mut granted = std::mem::take(&mut warp.granted);
                if H::ACTIVE && self.report_lanes {
                    hooks.lanes_active(warp.lanes(top));
                }
                let event = self.straight::<H, U>(
                    func_index,
                    base,
                    warp.lanes(top),
                    top.join,
                    &mut pc,
                    lanes,
                    group,
                    hooks,
                    (budget, &mut granted),
                    scratch,
                );
                warp.granted = granted;
                match event? {
                    Event::Join => warp.pop(),
                    Event::Stop(y) => {
                        warp.set_pc(pc as u32);
                        return Ok(y);
                    }
                    Event::Diverge { at, then, otherwise } => {
                        let join = func.joins[at];
                        warp.diverge(join, &[(otherwise, &scratch.otherwise), (then, &scratch.then)]);
                    }
                    Event::DivergeSwitch { at } => {
                        let join = func.joins[at];
                        scratch.then.clear();
                        let mut paths: Vec<(u32, std::ops::Range<usize>)> = Vec::new();
                        for chunk in scratch.cases.chunk_by(|a, b| a.0 == b.0) {
                            let start = scratch.then.len();
                            scratch.then.extend(chunk.iter().map(|c| c.1));
                            paths.push((chunk[0].0, start..scratch.then.len()));
                        }
                        // The first case's lanes run first: they go on top.
                        let paths: Vec<(u32, &[u32])> =
                            paths.into_iter().rev().map(|(t, r)| (t, &scratch.then[r])).collect();
                        warp.diverge(join, &paths);
                    }
                    Event::Call { callee, dst, first_arg, num_args, return_pc } => {
                        if warp.frames.len() >= MAX_FRAMES {
                            return Err(ExecError::Fault("call stack too deep".into()));
                        }
                        let target = &module.functions[callee as usize];
                        // The group's start made room for every frame (`group::frame_bases`).
                        let new_base = self.frame_bases[callee as usize] as usize;
                        let act = warp.active();
                        lanes.lay(callee, new_base as u32, &target.template);
                        let args = &func.args[first_arg as usize..first_arg as usize + num_args as usize];
                        for (arg, &(param, n)) in args.iter().zip(&target.params) {
                            for k in 0..n as usize {
                                let from = (base + arg.reg as usize + k) * stride;
                                let to = (new_base + param as usize + k) * stride;
                                for &l in act {
                                    lanes.regs[to + l as usize] = lanes.regs[from + l as usize];
                                }
                            }
                            if U {
                                let (from, to) = (base + arg.reg as usize, new_base + param as usize);
                                group.uninit.copy_slots(from, to, n as usize, stride, act);
                            }
                        }
                        let mark = lanes.lane[act[0] as usize].private.len() as u32;
                        warp.call(callee, new_base as u32, return_pc, (base + dst as usize) as u32, mark);
                        continue 'frames;
                    }
                    Event::Return { src, n } => {
                        let Some(&frame) = warp.frames.last() else {
                            for &l in warp.active() {
                                lanes.lane[l as usize].done = true;
                            }
                            warp.finished_top();
                            if warp.depth() == 0 {
                                return Ok(Yield::Done);
                            }
                            continue 'frames;
                        };
                        for k in 0..n as usize {
                            let from = (base + src as usize + k) * stride;
                            let to = (frame.dst as usize + k) * stride;
                            for &l in warp.active() {
                                lanes.regs[to + l as usize] = lanes.regs[from + l as usize];
                            }
                        }
                        if U {
                            let (from, to) = (base + src as usize, frame.dst as usize);
                            group.uninit.copy_slots(from, to, n as usize, stride, warp.active());
                        }
                        if let Some(frame) = warp.returned() {
                            restore_private(lanes, warp.active(), frame.private_mark);
                        }
                        continue 'frames;
                    }
                }
            }
        }
    }

    /// Runs the lanes `act` of one entry from `*pc_out` until something changes the warp's shape
    /// or stops it; `*pc_out` is then where the entry goes on.
    #[allow(clippy::too_many_arguments)]
    fn straight<H: GroupHooks, const U: bool>(
        &self,
        func_index: u32,
        base: usize,
        act: &[u32],
        join: u32,
        pc_out: &mut usize,
        lanes: &mut Lanes,
        group: &mut Group,
        hooks: &mut H,
        (budget, granted): (&mut u64, &mut bool),
        scratch: &mut Scratch,
    ) -> Result<Event, ExecError> {
        let module = self.module;
        let func = &module.functions[func_index as usize];
        let code = &func.code[..];
        let Lanes { regs, lane: info, stride, printed, .. } = lanes;
        let stride = *stride;
        let Group { id: group_id, size: group_size, local, local_regions, findings, uninit: shadow, .. } = group;
        let (group_id, group_size) = (*group_id, *group_size);
        let globals = self.globals;
        let join = join as usize;
        let mut p = *pc_out;
        // What makes the unchecked register accesses below sound: validation (`spirv::validate`)
        // proved every register an instruction names (directly or through its side tables) is
        // below the function's frame size; the caller made room for the whole frame of every
        // lane (`Lanes::ensure_slots`); and lane lists are sorted, so the last lane is the largest.
        assert!((base + func.template.len()) * stride <= regs.len(), "the register file holds the frame");
        assert!(act.last().is_none_or(|&l| (l as usize) < stride), "the lanes are in the register file");
        debug_assert!(act.is_sorted());
        let regs_len = regs.len();
        if U {
            shadow.fit(regs_len);
        }
        // Every register access below goes through this pointer (the file is not resized here).
        let regs: *mut u64 = regs.as_mut_ptr();
        macro_rules! leave {
            ($e:expr) => {{
                *pc_out = p;
                return Ok($e);
            }};
        }
        // Register-file word `i`: a slot of the current frame (`(base + slot) * stride + lane`).
        macro_rules! at {
            ($i:expr) => {
                // SAFETY: `i` indexes a slot of the current frame for a lane of this group, which
                // the assertions above place inside the register file; `regs` is the only path
                // to the file in this function and each reference made here ends at once.
                *unsafe { &mut *regs.add($i) }
            };
        }
        // Slot `s` of the current frame for lane `l`.
        macro_rules! r {
            ($s:expr, $l:expr) => {
                at!((base + ($s) as usize) * stride + $l)
            };
        }
        macro_rules! mem {
            ($ls:expr) => {
                Memory { globals, local: &mut local[..], local_regions: &local_regions[..], private: &mut $ls.private }
            };
        }
        macro_rules! fault {
            ($mem:expr, $f:expr, $store:expr, $gid:expr, $loc:expr) => {
                findings.push(oob(self, &$mem, $f, $store, $gid, $loc))
            };
        }
        // An access through an address not aligned to `$align` (a power of two): reported, and
        // then performed if it is in bounds.
        macro_rules! misaligned {
            ($addr:expr, $size:expr, $align:expr, $access:expr, $gid:expr, $loc:expr) => {
                findings.push(misaligned(self, $addr, $size as u32, $align as u32, $access, $gid, $loc))
            };
        }
        // A load by lane `$l` that memory refused: reported; one that only the buffer's mode
        // refused (a read of a write-only buffer) is performed all the same. Its value.
        macro_rules! refused_load {
            ($mem:expr, $f:expr, $ls:expr, $l:expr, $addr:expr, $size:expr, $loc:expr) => {{
                fault!($mem, $f, false, $ls.global_id, $loc);
                match $f.mode_only().then(|| $mem.load_as($addr, $size as usize, ANY)) {
                    Some(Ok(v)) => {
                        observe!(load, $l, $addr, $size, $loc);
                        v
                    }
                    _ => 0,
                }
            }};
        }
        // A store by lane `$l` that memory refused, as `refused_load!`.
        macro_rules! refused_store {
            ($mem:expr, $f:expr, $ls:expr, $l:expr, $addr:expr, $size:expr, $value:expr, $loc:expr) => {{
                fault!($mem, $f, true, $ls.global_id, $loc);
                if $f.mode_only() && $mem.store_as($addr, $size as usize, $value, ANY).is_ok() {
                    observe!(store, $l, $addr, $size, $value, $loc);
                }
            }};
        }
        // Reports a plain access to the hooks.
        macro_rules! observe {
            (load, $l:expr, $addr:expr, $size:expr, $loc:expr) => {
                if H::ACTIVE && observed($addr) {
                    let access =
                        Access { kind: AccessKind::Load, addr: $addr, size: $size as u32, loc: $loc, stored: &[] };
                    hooks.access($l as u32, &access);
                }
            };
            (store, $l:expr, $addr:expr, $size:expr, $value:expr, $loc:expr) => {
                if H::ACTIVE && observed($addr) {
                    let bytes = ($value as u64).to_le_bytes();
                    let size = ($size as usize).min(8);
                    let access = Access {
                        kind: AccessKind::Store,
                        addr: $addr,
                        size: size as u32,
                        loc: $loc,
                        stored: &bytes[..size],
                    };
                    hooks.access($l as u32, &access);
                }
            };
        }
        // The run of lanes from `act[$k]`: as many as are consecutive lanes whose addresses in
        // slot column `$at` step by `$size` (not in private memory, which is each lane's own;
        // else one lane). Its first lane and length.
        macro_rules! run {
            ($at:expr, $size:expr, $k:expr) => {{
                let first = act[$k] as usize;
                let addr = at!($at + first);
                let mut n = 1;
                if addr >> SPACE_SHIFT != SPACE_PRIVATE {
                    while $k + n < act.len()
                        && act[$k + n] as usize == first + n
                        && at!($at + first + n) == addr.wrapping_add((n * $size as usize) as u64)
                    {
                        n += 1;
                    }
                }
                (first, n)
            }};
        }
        // Spends one unit of budget per active lane before a branch or call, or yields to get more.
        macro_rules! spend {
            () => {
                let lanes = act.len() as u64;
                if *budget < lanes {
                    p -= 1;
                    leave!(Event::Stop(Yield::OutOfBudget));
                }
                *budget -= lanes;
            };
        }
        // Applies `$f` to slots `a` and `b` of every active lane, element by element.
        // The active lanes as one range when they are consecutive (all of a group, or the first
        // `s` of a tree reduction): element-wise ops then loop over the range, which the
        // compiler can unroll, instead of reading each lane's index from the list.
        let dense = match (act.first(), act.last()) {
            (Some(&lo), Some(&hi)) if (hi - lo) as usize + 1 == act.len() => Some((lo as usize, hi as usize + 1)),
            _ => None,
        };
        macro_rules! each_lane {
            (|$l:ident| $body:expr) => {
                if let Some((lo, hi)) = dense {
                    for $l in lo..hi {
                        $body;
                    }
                } else {
                    for &lane in act {
                        let $l = lane as usize;
                        $body;
                    }
                }
            };
        }
        macro_rules! binary {
            ($n:expr, $dst:expr, $a:expr, $b:expr, $f:expr) => {
                for i in 0..$n as usize {
                    let d = (base + $dst as usize + i) * stride;
                    let x = (base + $a as usize + i) * stride;
                    let y = (base + $b as usize + i) * stride;
                    each_lane!(|l| at!(d + l) = $f(at!(x + l), at!(y + l)));
                }
            };
        }
        macro_rules! unary_lanes {
            ($n:expr, $dst:expr, $a:expr, $f:expr) => {
                for i in 0..$n as usize {
                    let d = (base + $dst as usize + i) * stride;
                    let x = (base + $a as usize + i) * stride;
                    each_lane!(|l| at!(d + l) = $f(at!(x + l)));
                }
            };
        }
        // Stepping with watched bytes: a plain access of `$size` bytes at the address in slot
        // `$ptr` of the warp's one lane stops before it runs when it overlaps them, until the
        // scheduler grants it. Whether it runs as a granted step (its effect is then recorded).
        let watching = !self.watch.is_empty();
        macro_rules! plain_step {
            ($ptr:expr, $size:expr, $op:expr, $loc:expr) => {{
                let mut step = false;
                if watching {
                    let addr = r!($ptr, act[0] as usize);
                    if watched(self.watch, addr, $size as u64) {
                        if !std::mem::take(granted) {
                            p -= 1;
                            let (op, size) = ($op, $size as u32);
                            leave!(Event::Stop(Yield::AtAtomic { loc: $loc, op, addr, size, plain: true }));
                        }
                        step = true;
                    }
                }
                step
            }};
        }
        loop {
            if p == join {
                leave!(Event::Join);
            }
            let inst = &code[p];
            if U {
                // SAFETY: `regs` points to the `regs_len` words of the register file, which
                // nothing resizes here; this shared view ends before the instruction runs, and
                // nothing writes the file while it lives.
                let values = unsafe { std::slice::from_raw_parts(regs, regs_len) };
                let mut cx = super::uninit::Step {
                    module,
                    globals,
                    global: self.uninit,
                    func,
                    base,
                    stride,
                    act,
                    values,
                    shadow,
                    info,
                    local_regions,
                    findings,
                    pc: p,
                };
                super::uninit::step(&mut cx, inst);
            }
            p += 1;
            match *inst {
                Inst::Mov { dst, src, n } => unary_lanes!(n, dst, src, |x| x),
                Inst::IntBin { op, bits, dst, a, b, n } => {
                    let m = mask(bits);
                    match op {
                        IntOp::Add => binary!(n, dst, a, b, |x: u64, y: u64| x.wrapping_add(y) & m),
                        IntOp::Sub => binary!(n, dst, a, b, |x: u64, y: u64| x.wrapping_sub(y) & m),
                        IntOp::Mul => binary!(n, dst, a, b, |x: u64, y: u64| x.wrapping_mul(y) & m),
                        IntOp::And => binary!(n, dst, a, b, |x: u64, y: u64| x & y),
                        IntOp::Or => binary!(n, dst, a, b, |x: u64, y: u64| x | y),
                        IntOp::Xor => binary!(n, dst, a, b, |x: u64, y: u64| x ^ y),
                        // Shift counts are taken modulo the width, as OpenCL C defines them (a
                        // power of two here, so a mask).
                        IntOp::Shl if bits == 32 || bits == 64 => {
                            binary!(n, dst, a, b, |x: u64, y: u64| (x << (y & (bits as u64 - 1))) & m)
                        }
                        IntOp::LShr if bits == 32 || bits == 64 => {
                            binary!(n, dst, a, b, |x: u64, y: u64| (x >> (y & (bits as u64 - 1))) & m)
                        }
                        _ => binary!(n, dst, a, b, |x, y| int_op(op, bits, x, y)),
                    }
                }
                Inst::FloatBin { op, bits, dst, a, b, n } => {
                    if self.flush_denormals {
                        binary!(n, dst, a, b, |x, y| flushed_op(op, bits, x, y));
                    } else {
                        match (bits, op) {
                            (32, FloatOp::Add) => binary!(n, dst, a, b, |x, y| bits_f32(f32_of(x) + f32_of(y))),
                            (32, FloatOp::Sub) => binary!(n, dst, a, b, |x, y| bits_f32(f32_of(x) - f32_of(y))),
                            (32, FloatOp::Mul) => binary!(n, dst, a, b, |x, y| bits_f32(f32_of(x) * f32_of(y))),
                            (32, _) => binary!(n, dst, a, b, |x, y| bits_f32(float_op(op, f32_of(x), f32_of(y)))),
                            (64, _) => binary!(n, dst, a, b, |x, y| float_op(op, f64_of(x), f64_of(y)).to_bits()),
                            _ => binary!(n, dst, a, b, |x, y| half_op(op, x, y)),
                        }
                    }
                }
                Inst::Compare { cmp, bits, dst, a, b, n } => {
                    let m = mask(bits);
                    match cmp {
                        Cmp::Eq => binary!(n, dst, a, b, |x: u64, y: u64| (x & m == y & m) as u64),
                        Cmp::Ne => binary!(n, dst, a, b, |x: u64, y: u64| (x & m != y & m) as u64),
                        Cmp::ULt => binary!(n, dst, a, b, |x: u64, y: u64| ((x & m) < (y & m)) as u64),
                        Cmp::ULe => binary!(n, dst, a, b, |x: u64, y: u64| ((x & m) <= (y & m)) as u64),
                        Cmp::UGt => binary!(n, dst, a, b, |x: u64, y: u64| ((x & m) > (y & m)) as u64),
                        Cmp::UGe => binary!(n, dst, a, b, |x: u64, y: u64| ((x & m) >= (y & m)) as u64),
                        Cmp::SLt => {
                            binary!(n, dst, a, b, |x, y| (sign_extend(x, bits) < sign_extend(y, bits)) as u64)
                        }
                        Cmp::SLe => {
                            binary!(n, dst, a, b, |x, y| (sign_extend(x, bits) <= sign_extend(y, bits)) as u64)
                        }
                        Cmp::SGt => {
                            binary!(n, dst, a, b, |x, y| (sign_extend(x, bits) > sign_extend(y, bits)) as u64)
                        }
                        Cmp::SGe => {
                            binary!(n, dst, a, b, |x, y| (sign_extend(x, bits) >= sign_extend(y, bits)) as u64)
                        }
                        Cmp::FOrdLt if bits == 32 => binary!(n, dst, a, b, |x, y| (f32_of(x) < f32_of(y)) as u64),
                        Cmp::FOrdGt if bits == 32 => binary!(n, dst, a, b, |x, y| (f32_of(x) > f32_of(y)) as u64),
                        Cmp::FOrdLe if bits == 32 => binary!(n, dst, a, b, |x, y| (f32_of(x) <= f32_of(y)) as u64),
                        Cmp::FOrdGe if bits == 32 => binary!(n, dst, a, b, |x, y| (f32_of(x) >= f32_of(y)) as u64),
                        _ => binary!(n, dst, a, b, |x, y| compare(cmp, bits, x, y) as u64),
                    }
                }
                Inst::Unary { op, bits, dst, a, n } => unary_lanes!(n, dst, a, |x| unary(op, bits, x)),
                Inst::Convert { conv, from, to, dst, src, n } => {
                    unary_lanes!(n, dst, src, |x| convert(conv, from, to, x))
                }
                Inst::Select { dst, cond, a, b, n, cond_lanes } => {
                    for i in 0..n as usize {
                        let c = (base + cond as usize + if cond_lanes { i } else { 0 }) * stride;
                        let (d, x, y) = (
                            (base + dst as usize + i) * stride,
                            (base + a as usize + i) * stride,
                            (base + b as usize + i) * stride,
                        );
                        for &l in act {
                            let l = l as usize;
                            at!(d + l) = if at!(c + l) != 0 { at!(x + l) } else { at!(y + l) };
                        }
                    }
                }
                Inst::Bitcast { dst, src, from, to } => {
                    let (from, to) = (&module.layouts[from as usize], &module.layouts[to as usize]);
                    for &l in act {
                        let l = l as usize;
                        let mut bytes = [0u8; 128];
                        for (i, leaf) in from.leaves.iter().enumerate() {
                            let at = leaf.offset as usize;
                            bytes[at..at + leaf.size as usize]
                                .copy_from_slice(&r!(src as usize + i, l).to_le_bytes()[..leaf.size as usize]);
                        }
                        for (i, leaf) in to.leaves.iter().enumerate() {
                            let mut word = [0u8; 8];
                            let at = leaf.offset as usize;
                            word[..leaf.size as usize].copy_from_slice(&bytes[at..at + leaf.size as usize]);
                            r!(dst as usize + i, l) = u64::from_le_bytes(word);
                        }
                    }
                }
                Inst::Reduce { all, dst, src, n } => {
                    for &l in act {
                        let l = l as usize;
                        let lane = |i: usize| r!(src as usize + i, l) != 0;
                        r!(dst, l) = if all { (0..n as usize).all(lane) } else { (0..n as usize).any(lane) } as u64;
                    }
                }
                Inst::PtrOffset { dst, base: b, offset, first_index, num_indices } => {
                    let indices = &func.indices[first_index as usize..first_index as usize + num_indices as usize];
                    let (d, from) = ((base + dst as usize) * stride, (base + b as usize) * stride);
                    if let [index] = indices {
                        // The common `p + i` of an array access, without the index loop.
                        let (i, bits, step) = ((base + index.reg as usize) * stride, index.bits, index.stride);
                        each_lane!(|l| {
                            let start = at!(from + l).wrapping_add(offset as u64);
                            at!(d + l) = start.wrapping_add(sign_extend(at!(i + l), bits).wrapping_mul(step) as u64);
                        });
                        continue;
                    }
                    for &l in act {
                        let l = l as usize;
                        let mut addr = at!(from + l).wrapping_add(offset as u64);
                        for index in indices {
                            let i = sign_extend(r!(index.reg, l), index.bits);
                            addr = addr.wrapping_add(i.wrapping_mul(index.stride) as u64);
                        }
                        at!(d + l) = addr;
                    }
                }
                Inst::IndexCheck { index, ptr, extent, loc } => {
                    let index = func.indices[index as usize];
                    for &l in act {
                        let l = l as usize;
                        // A negative index is past the end as an unsigned one.
                        let i = sign_extend(r!(index.reg, l), index.bits);
                        if i as u64 >= extent as u64 {
                            findings.push(array_index(self, r!(ptr, l), i, extent, info[l].global_id, loc));
                        }
                    }
                }
                Inst::PtrDiff { dst, a, b, elem } => {
                    binary!(1, dst, a, b, |x: u64, y: u64| ((x.wrapping_sub(y) as i64) / elem as i64) as u64)
                }
                Inst::LoadScalar { dst, ptr, size, loc, align } => {
                    let step = plain_step!(ptr, size, AtomicOp::Load, loc);
                    let (d, at) = ((base + dst as usize) * stride, (base + ptr as usize) * stride);
                    let unaligned = align as u64 - 1;
                    let mut k = 0;
                    while k < act.len() {
                        let (first, n) = run!(at, size, k);
                        let addr = at!(at + first);
                        // Lanes after this one reading the same element (outside private memory):
                        // one load for them all (for every lane, when the address is uniform).
                        let same = if n == 1 && addr & unaligned == 0 && addr >> SPACE_SHIFT != SPACE_PRIVATE {
                            act[k + 1..].iter().take_while(|&&l| at!(at + l as usize) == addr).count()
                        } else {
                            0
                        };
                        if same > 0 {
                            let mut mem = mem!(info[first]);
                            if let Ok(v) = mem.load(addr, size as usize) {
                                let lanes = &act[k..k + 1 + same];
                                for &l in lanes {
                                    at!(d + l as usize) = v;
                                }
                                if H::ACTIVE {
                                    let access =
                                        Access { kind: AccessKind::Load, addr, size: size as u32, loc, stored: &[] };
                                    hooks.load_same(lanes, &access);
                                }
                                k += 1 + same;
                                continue;
                            }
                        }
                        k += n;
                        if n > 1 && addr & unaligned == 0 {
                            // Consecutive lanes read consecutive elements: one check for them all
                            // (alignment too: each element is as aligned as the first).
                            let values = &mut scratch.values;
                            values.resize(n, 0);
                            let mut mem = mem!(info[first]);
                            if mem.load_run(addr, size as usize, values).is_ok() {
                                for (j, &v) in values.iter().enumerate() {
                                    at!(d + first + j) = v;
                                }
                                if H::ACTIVE {
                                    let access =
                                        Access { kind: AccessKind::Load, addr, size: size as u32, loc, stored: &[] };
                                    hooks.access_lanes(first as u32, n as u32, &access);
                                }
                                continue;
                            }
                            // Some lane is outside: lane by lane names it.
                        }
                        for (l, ls) in info.iter_mut().enumerate().skip(first).take(n) {
                            let addr = at!(at + l);
                            if addr & unaligned != 0 {
                                misaligned!(addr, size, align, "load", ls.global_id, loc);
                            }
                            let mut mem = mem!(ls);
                            at!(d + l) = match mem.load(addr, size as usize) {
                                Ok(v) => {
                                    observe!(load, l, addr, size, loc);
                                    if step {
                                        ls.effect = (Some(v), None);
                                    }
                                    v
                                }
                                Err(f) => refused_load!(mem, f, ls, l, addr, size, loc),
                            };
                        }
                    }
                }
                Inst::StoreScalar { src, ptr, size, loc, align } => {
                    let step = plain_step!(ptr, size, AtomicOp::Store, loc);
                    let (s, at) = ((base + src as usize) * stride, (base + ptr as usize) * stride);
                    let unaligned = align as u64 - 1;
                    let mut k = 0;
                    while k < act.len() {
                        let (first, n) = run!(at, size, k);
                        let addr = at!(at + first);
                        k += n;
                        for lane in &mut info[first..first + n] {
                            lane.spin.repeats = 0;
                        }
                        if n > 1 && addr & unaligned == 0 {
                            let values = &mut scratch.values;
                            values.clear();
                            values.extend((0..n).map(|j| at!(s + first + j)));
                            let mut mem = mem!(info[first]);
                            if mem.store_run(addr, size as usize, values).is_ok() {
                                if H::ACTIVE {
                                    let bytes = &mut scratch.bytes;
                                    bytes.clear();
                                    for &v in values.iter() {
                                        bytes.extend_from_slice(&v.to_le_bytes()[..size as usize]);
                                    }
                                    let access =
                                        Access { kind: AccessKind::Store, addr, size: size as u32, loc, stored: bytes };
                                    hooks.access_lanes(first as u32, n as u32, &access);
                                }
                                continue;
                            }
                        }
                        for (l, ls) in info.iter_mut().enumerate().skip(first).take(n) {
                            let (addr, value) = (at!(at + l), at!(s + l));
                            if addr & unaligned != 0 {
                                misaligned!(addr, size, align, "store", ls.global_id, loc);
                            }
                            let mut mem = mem!(ls);
                            match mem.store(addr, size as usize, value) {
                                Ok(()) => {
                                    observe!(store, l, addr, size, value, loc);
                                    if step {
                                        ls.effect = (None, Some(value & mask(size * 8)));
                                    }
                                }
                                Err(f) => refused_store!(mem, f, ls, l, addr, size, value, loc),
                            }
                        }
                    }
                }
                Inst::Load { dst, ptr, layout, loc, align } => {
                    let layout = &module.layouts[layout as usize];
                    plain_step!(ptr, layout.size, AtomicOp::Load, loc);
                    for &l in act {
                        let l = l as usize;
                        let addr = r!(ptr, l);
                        let ls = &mut info[l];
                        if addr & (align as u64 - 1) != 0 {
                            misaligned!(addr, layout.size, align, "load", ls.global_id, loc);
                        }
                        let mut mem = mem!(ls);
                        // Check the whole value first, so a partly-outside access is one finding;
                        // one that only the buffer's mode refuses is reported and performed.
                        let want = match mem.check(addr, layout.size as usize, LOAD) {
                            Ok(()) => Some(LOAD),
                            Err(f) => {
                                fault!(mem, f, false, ls.global_id, loc);
                                f.mode_only().then_some(ANY)
                            }
                        };
                        if let Some(want) = want {
                            for (i, leaf) in layout.leaves.iter().enumerate() {
                                let at = addr + leaf.offset as u64;
                                r!(dst as usize + i, l) = mem.load_as(at, leaf.size as usize, want).unwrap_or(0);
                                observe!(load, l, at, leaf.size, loc);
                            }
                        } else {
                            for i in 0..layout.leaves.len() {
                                r!(dst as usize + i, l) = 0;
                            }
                        }
                    }
                }
                Inst::Store { src, ptr, layout, loc, align } => {
                    let layout = &module.layouts[layout as usize];
                    plain_step!(ptr, layout.size, AtomicOp::Store, loc);
                    for &l in act {
                        let l = l as usize;
                        let addr = r!(ptr, l);
                        let ls = &mut info[l];
                        ls.spin.repeats = 0;
                        if addr & (align as u64 - 1) != 0 {
                            misaligned!(addr, layout.size, align, "store", ls.global_id, loc);
                        }
                        let mut mem = mem!(ls);
                        let want = match mem.check(addr, layout.size as usize, STORE) {
                            Ok(()) => Some(STORE),
                            Err(f) => {
                                fault!(mem, f, true, ls.global_id, loc);
                                f.mode_only().then_some(ANY)
                            }
                        };
                        if let Some(want) = want {
                            for (i, leaf) in layout.leaves.iter().enumerate() {
                                let at = addr + leaf.offset as u64;
                                let value = r!(src as usize + i, l);
                                let _ = mem.store_as(at, leaf.size as usize, value, want);
                                observe!(store, l, at, leaf.size, value, loc);
                            }
                        }
                    }
                }
                Inst::CopyMemory { dst, src, size, loc } => {
                    for &l in act {
                        let l = l as usize;
                        let n = r!(size, l) as usize;
                        let (to, from) = (r!(dst, l), r!(src, l));
                        let ls = &mut info[l];
                        let mut mem = mem!(ls);
                        // A side only the buffer's mode refuses is reported, then copied anyway.
                        let mut want = (LOAD, STORE);
                        loop {
                            match mem.copy_as(to, from, n, want) {
                                Ok(()) => {
                                    ls.spin.repeats = 0;
                                    if H::ACTIVE {
                                        let mut mem = mem!(ls);
                                        observe_copy(&mut mem, to, from, n, loc, &mut |a| hooks.access(l as u32, a));
                                    }
                                }
                                Err((f, store)) => {
                                    fault!(mem, f, store, ls.global_id, loc);
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
                Inst::Alloca { dst, size, align } => {
                    for &l in act {
                        let l = l as usize;
                        let ls = &mut info[l];
                        let start = ls.private.len().next_multiple_of(align as usize);
                        if start + size as usize > MAX_PRIVATE_BYTES {
                            return Err(private_too_large(ls.global_id));
                        }
                        ls.private.resize(start + size as usize, 0);
                        r!(dst, l) = address(SPACE_PRIVATE, 0, start as u64);
                    }
                }
                Inst::ExtractDynamic { dst, src, index, index_bits, n, beyond } => {
                    for &l in act {
                        let l = l as usize;
                        let i = r!(index, l) & mask(index_bits);
                        r!(dst, l) = if i < n as u64 { r!(src as usize + i as usize, l) } else { beyond as u64 };
                    }
                }
                Inst::InsertDynamic { dst, src, value, index, index_bits, n } => {
                    for &l in act {
                        let l = l as usize;
                        for i in 0..n as usize {
                            r!(dst as usize + i, l) = r!(src as usize + i, l);
                        }
                        let i = r!(index, l) & mask(index_bits);
                        if i < n as u64 {
                            r!(dst as usize + i as usize, l) = r!(value, l);
                        }
                    }
                }
                Inst::Shuffle { dst, first, n } => {
                    let sources = &func.lanes[first as usize..first as usize + n as usize];
                    for &l in act {
                        let l = l as usize;
                        let mut picked = [0u64; 16];
                        for (i, &s) in sources.iter().enumerate() {
                            picked[i] = r!(s, l);
                        }
                        for (i, &v) in picked[..n as usize].iter().enumerate() {
                            r!(dst as usize + i, l) = v;
                        }
                    }
                }
                Inst::ShuffleDynamic { dst, a, b, na, mask: m, n, mask_bits } => {
                    let na = na as u64;
                    for &l in act {
                        let l = l as usize;
                        let mut picked = [0u64; 16];
                        for (i, lane) in picked.iter_mut().enumerate().take(n as usize) {
                            let sel = (r!(m as usize + i, l) & mask(mask_bits)) % (2 * na);
                            *lane = if sel < na {
                                r!(a as usize + sel as usize, l)
                            } else {
                                r!(b as usize + (sel - na) as usize, l)
                            };
                        }
                        for (i, &v) in picked[..n as usize].iter().enumerate() {
                            r!(dst as usize + i, l) = v;
                        }
                    }
                }
                Inst::Builtin { dst, which: Builtin::GlobalId } => {
                    // The group's first global id plus the lane's local id, per dimension.
                    let r = &self.range;
                    for (dim, &group) in group_id.iter().enumerate() {
                        let first = r.offset[dim] + group * r.local[dim];
                        let d = (base + dst as usize + dim) * stride;
                        each_lane!(|l| at!(d + l) = first + info[l].local_id[dim]);
                    }
                }
                Inst::Builtin { dst, which: Builtin::LocalId } => {
                    for dim in 0..3 {
                        let d = (base + dst as usize + dim) * stride;
                        for &l in act {
                            at!(d + l as usize) = info[l as usize].local_id[dim];
                        }
                    }
                }
                Inst::Builtin { dst, which } if builtin_is_uniform(which) => {
                    // The same for every work-item of the group: computed once.
                    let slots = which.lanes() as usize;
                    let mut out = [0u64; 3];
                    self.builtin(which, [0; 3], [0; 3], 0, group_id, group_size, &mut out);
                    for (i, &v) in out[..slots].iter().enumerate() {
                        let d = (base + dst as usize + i) * stride;
                        for &l in act {
                            at!(d + l as usize) = v;
                        }
                    }
                }
                Inst::Builtin { dst, which } => {
                    let slots = which.lanes() as usize;
                    for &l in act {
                        let l = l as usize;
                        let ls = &info[l];
                        let mut out = [0u64; 3];
                        self.builtin(which, ls.local_id, ls.global_id, l as u64, group_id, group_size, &mut out);
                        for (i, &v) in out[..slots].iter().enumerate() {
                            r!(dst as usize + i, l) = v;
                        }
                    }
                }
                Inst::Math { op, kind, dst, args, n } => {
                    let float_bits = match kind {
                        MathKind::F32 => 32,
                        MathKind::F64 => 64,
                        _ => 0,
                    };
                    let flushing = self.flush_denormals && float_bits != 0;
                    if kind == MathKind::F32 && !flushing && matches!(op, Cl::mad | Cl::fma) {
                        for i in 0..n as usize {
                            let d = (base + dst as usize + i) * stride;
                            let [x, y, z] = args.map(|a| (base + a as usize + i) * stride);
                            for &l in act {
                                let l = l as usize;
                                at!(d + l) =
                                    bits_f32(f32_of(at!(x + l)).mul_add(f32_of(at!(y + l)), f32_of(at!(z + l))));
                            }
                        }
                        continue;
                    }
                    for i in 0..n as usize {
                        for &l in act {
                            let l = l as usize;
                            let (mut a, mut b, mut c) =
                                (r!(args[0] as usize + i, l), r!(args[1] as usize + i, l), r!(args[2] as usize + i, l));
                            if flushing {
                                (a, b, c) = (flush(a, float_bits), flush(b, float_bits), flush(c, float_bits));
                            }
                            let v = math_lane(op, kind, n, a, b, c)
                                .ok_or_else(|| ExecError::Unsupported(format!("OpenCL.std {op:?} for {kind:?}")))?;
                            r!(dst as usize + i, l) = if flushing { flush(v, float_bits) } else { v };
                        }
                    }
                }
                Inst::MathOut { op, bits, out_bits, dst, a, b, out, n, loc } => {
                    let step = out_bits as u64 / 8;
                    let unsupported = || ExecError::Unsupported(format!("OpenCL.std {op:?}"));
                    for &l in act {
                        let l = l as usize;
                        for i in 0..n as usize {
                            let (x, y) = (r!(a as usize + i, l), r!(b as usize + i, l));
                            let (value, second) = match bits {
                                64 => {
                                    let (v, s) =
                                        math::float64_with_out(op, f64_of(x), f64_of(y)).ok_or_else(unsupported)?;
                                    (v.to_bits(), s)
                                }
                                32 => {
                                    let (v, s) =
                                        math::float32_with_out(op, f32_of(x), f32_of(y)).ok_or_else(unsupported)?;
                                    (bits_f32(v), s)
                                }
                                _ => {
                                    // Half: in single precision, rounded back (exact for these functions).
                                    let (hx, hy) = (half::to_f32(x as u16), half::to_f32(y as u16));
                                    let (v, s) = math::float32_with_out(op, hx, hy).ok_or_else(unsupported)?;
                                    (half::from_f64(v as f64, ir::HalfRound::Rte) as u64, s)
                                }
                            };
                            r!(dst as usize + i, l) = value;
                            let stored = match second {
                                math::Second::Float(v) => narrow_float(v, out_bits, Round::Rte),
                                math::Second::Int(v) => v as u64,
                            };
                            let at = r!(out, l) + i as u64 * step;
                            let ls = &mut info[l];
                            ls.spin.repeats = 0;
                            if at & (step - 1) != 0 {
                                misaligned!(at, step, step, "store", ls.global_id, loc);
                            }
                            let mut mem = mem!(ls);
                            match mem.store(at, step as usize, stored) {
                                Ok(()) => {
                                    observe!(store, l, at, step, stored, loc);
                                }
                                Err(f) => refused_store!(mem, f, ls, l, at, step, stored, loc),
                            }
                        }
                    }
                }
                Inst::Geometric { op, bits, dst, a, b, n } => {
                    let results = match op {
                        Geo::Normalize | Geo::FastNormalize => n as usize,
                        Geo::Cross => n as usize,
                        _ => 1,
                    };
                    for &l in act {
                        let l = l as usize;
                        // Operands at 0 and 16, the result at 32 of a scratch frame.
                        let mut frame = [0u64; 48];
                        for i in 0..n as usize {
                            frame[i] = r!(a as usize + i, l);
                            frame[16 + i] = r!(b as usize + i, l);
                        }
                        geometric(op, bits, n as usize, &mut frame, 0, 16, 32);
                        for i in 0..results {
                            r!(dst as usize + i, l) = frame[32 + i];
                        }
                    }
                }
                Inst::VectorMemory { op, dst, offset, ptr, elem, n, loc } => {
                    let (n, elem) = (n as u64, elem as u64);
                    let width = match op {
                        VecMem::LoadHalf { aligned: true } | VecMem::StoreHalf { aligned: true, .. } if n == 3 => 4,
                        _ => n,
                    };
                    for &l in act {
                        let l = l as usize;
                        let start = r!(ptr, l).wrapping_add(r!(offset, l).wrapping_mul(width * elem));
                        let ls = &mut info[l];
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
                            misaligned!(start, size, align, access, ls.global_id, loc);
                        }
                        let mut mem = mem!(ls);
                        for i in 0..n {
                            let at = start + i * elem;
                            let slot = dst as usize + i as usize;
                            match op {
                                VecMem::Load => match mem.load(at, elem as usize) {
                                    Ok(v) => {
                                        observe!(load, l, at, elem, loc);
                                        r!(slot, l) = v
                                    }
                                    Err(f) => r!(slot, l) = refused_load!(mem, f, ls, l, at, elem, loc),
                                },
                                VecMem::LoadHalf { .. } => match mem.load(at, 2) {
                                    Ok(v) => {
                                        observe!(load, l, at, 2, loc);
                                        r!(slot, l) = bits_f32(half::to_f32(v as u16))
                                    }
                                    Err(f) => {
                                        let v = refused_load!(mem, f, ls, l, at, 2, loc);
                                        r!(slot, l) = if f.mode_only() { bits_f32(half::to_f32(v as u16)) } else { 0 };
                                    }
                                },
                                VecMem::Store => {
                                    let v = r!(slot, l);
                                    match mem.store(at, elem as usize, v) {
                                        Ok(()) => {
                                            observe!(store, l, at, elem, v, loc);
                                        }
                                        Err(f) => refused_store!(mem, f, ls, l, at, elem, v, loc),
                                    }
                                }
                                VecMem::StoreHalf { round, f64, .. } => {
                                    let v = r!(slot, l);
                                    let x = if f64 { f64_of(v) } else { f32_of(v) as f64 };
                                    let h = half::from_f64(x, round.unwrap_or(ir::HalfRound::Rte));
                                    match mem.store(at, 2, h as u64) {
                                        Ok(()) => {
                                            observe!(store, l, at, 2, h, loc);
                                        }
                                        Err(f) => refused_store!(mem, f, ls, l, at, 2, h as u64, loc),
                                    }
                                }
                            }
                        }
                    }
                }
                Inst::Atomic { op, bits, order, fail_order, scope, dst, ptr, value, comparator, loc } => {
                    if self.stop_at_atomics && !std::mem::take(granted) {
                        p -= 1;
                        let addr = r!(ptr, act[0] as usize);
                        let size = bits as u32 / 8;
                        leave!(Event::Stop(Yield::AtAtomic { loc, op, addr, size, plain: false }));
                    }
                    let size = bits as usize / 8;
                    let want = match op {
                        AtomicOp::Load => LOAD,
                        AtomicOp::Store => STORE,
                        _ => LOAD | STORE,
                    };
                    let inst = AtomicInst { op, order, fail_order, scope, size: size as u32, loc };
                    // All lanes on `__local` memory: the hooks hear of them in one go, after.
                    let batch = H::ACTIVE
                        && !self.stop_at_atomics
                        && act.iter().all(|&l| r!(ptr, l as usize) >> SPACE_SHIFT == SPACE_LOCAL);
                    scratch.atomics.clear();
                    for &l in act {
                        let l = l as usize;
                        let (addr, v, c) = (r!(ptr, l), r!(value, l), r!(comparator, l));
                        let ls = &mut info[l];
                        if addr & (size as u64 - 1) != 0 {
                            misaligned!(addr, size, size, "atomic", ls.global_id, loc);
                        }
                        let mut mem = mem!(ls);
                        let update = move |old| atomic_update(op, bits, old, v, c);
                        let mut attempt = |mem: &mut Memory, want| {
                            if H::ACTIVE && split(addr).0 == SPACE_GLOBAL {
                                hooks.atomic_section(addr, || mem.atomic_as(addr, size, want, &update))
                            } else {
                                mem.atomic_as(addr, size, want, &update)
                            }
                        };
                        let mut result = attempt(&mut mem, want);
                        if let Err(f) = result
                            && f.mode_only()
                        {
                            // Reported, and performed as a device would.
                            fault!(mem, f, op != AtomicOp::Load, ls.global_id, loc);
                            result = attempt(&mut mem, ANY).map_err(|_| Fault { kind: FaultKind::Bounds, ..f });
                            if result.is_err() {
                                r!(dst, l) = 0;
                                continue;
                            }
                        }
                        match result {
                            Ok((old, new)) => {
                                r!(dst, l) = if op == AtomicOp::FlagTestAndSet { (old != 0) as u64 } else { old };
                                let lane = LaneAtomic { item: l as u32, addr, read: old, wrote: new };
                                if batch {
                                    scratch.atomics.push(lane);
                                } else if H::ACTIVE && observed(addr) {
                                    let mut bytes = [0; 8];
                                    hooks.access(l as u32, &lane.access(&inst, &mut bytes));
                                }
                                if self.stop_at_atomics {
                                    // A stepped atomic: what it read and wrote, for the record.
                                    ls.effect = ((op != AtomicOp::Store).then_some(old), new);
                                }
                                let spin = &mut ls.spin;
                                if new.is_some_and(|n| n != old) {
                                    spin.repeats = 0;
                                } else if spin.loc == loc && spin.addr == addr && spin.value == old {
                                    spin.repeats = spin.repeats.saturating_add(1);
                                } else {
                                    *spin = SpinWatch { loc, addr, value: old, repeats: 1 };
                                }
                            }
                            Err(f) => {
                                fault!(mem, f, op != AtomicOp::Load, ls.global_id, loc);
                                r!(dst, l) = 0;
                            }
                        }
                    }
                    if batch && !scratch.atomics.is_empty() {
                        hooks.local_atomics(&scratch.atomics, &inst);
                    }
                    // A stepped work-item stops before every atomic anyway: its count only grows,
                    // for the stepping scheduler to read (`Choice::unchanged`).
                    if !self.stop_at_atomics && act.iter().all(|&l| info[l as usize].spin.repeats >= SPIN_REPEATS) {
                        for &l in act {
                            info[l as usize].spin.repeats = 0;
                        }
                        let s = info[act[0] as usize].spin;
                        leave!(Event::Stop(Yield::Spin { loc: s.loc, addr: s.addr, value: s.value }));
                    }
                }
                Inst::Barrier { fence, scope, loc, sub_group } => {
                    let site = (func_index as u64) << 32 | p as u64;
                    leave!(Event::Stop(Yield::Barrier { fence, scope, loc, site, sub_group }));
                }
                Inst::Collective { op, bits, dst, src, id, id_n, loc, sub_group } => {
                    let site = (func_index as u64) << 32 | p as u64;
                    let (src, id, dst) =
                        ((base + src as usize) as u32, (base + id as usize) as u32, (base + dst as usize) as u32);
                    leave!(Event::Stop(Yield::Collective { site, loc, op, bits, src, id, id_n, dst, sub_group }));
                }
                Inst::MemoryFence { fence, order, scope, loc } => {
                    if H::ACTIVE {
                        for &l in act {
                            hooks.fence(l, fence, order, scope, loc);
                        }
                    }
                }
                Inst::CastToSpace { dst, src, space } => {
                    unary_lanes!(1, dst, src, |x: u64| if x >> SPACE_SHIFT == space as u64 { x } else { 0 })
                }
                Inst::PointerFence { dst, src } => unary_lanes!(1, dst, src, |x: u64| match x >> SPACE_SHIFT {
                    SPACE_GLOBAL => 0x200,
                    SPACE_LOCAL => 0x100,
                    _ => 0,
                }),
                Inst::AsyncCopy { dst, dst_ptr, src_ptr, count, stride, elem, to_local, event, loc } => {
                    let site = (func_index as u64) << 32 | p as u64;
                    let abs = |r: ir::Reg| (base + r as usize) as u32;
                    let regs = CopyRegs {
                        dst: abs(dst),
                        dst_ptr: abs(dst_ptr),
                        src_ptr: abs(src_ptr),
                        count: abs(count),
                        stride: abs(stride),
                        event: abs(event),
                        elem,
                        to_local,
                    };
                    leave!(Event::Stop(Yield::AsyncCopy { site, loc, regs }));
                }
                Inst::WaitEvents { num, list, loc } => {
                    let site = (func_index as u64) << 32 | p as u64;
                    let (num, list) = ((base + num as usize) as u32, (base + list as usize) as u32);
                    leave!(Event::Stop(Yield::WaitEvents { site, loc, num, list }));
                }
                Inst::ImageRead { dst, image, coord, coord_n, float_coord, sampled, texel, loc } => {
                    for &l in act {
                        let l = l as usize;
                        let handle = r!(image, l);
                        let desc = *globals.image(handle).ok_or_else(|| not_an_image(module, loc))?;
                        let sampler = sampled.then(|| Sampler::from_bits(r!(image as usize + 1, l)));
                        let mut c = [0u64; 4];
                        for (i, v) in c.iter_mut().enumerate().take(coord_n as usize) {
                            *v = r!(coord as usize + i, l);
                        }
                        let coords = image_coord(&c[..coord_n as usize], float_coord);
                        let ls = &mut info[l];
                        let mut mem = mem!(ls);
                        let (texel, outside) = image::read(&desc, sampler, coords, texel, &mut |offset, bytes| {
                            let addr = handle + offset;
                            if mem.read_bytes(addr, bytes).is_ok() {
                                observe!(load, l, addr, bytes.len(), loc);
                            }
                        });
                        if let Some(o) = outside {
                            findings.push(image_oob(self, handle, &desc, false, o, ls.global_id, loc));
                        }
                        for (i, &v) in texel.iter().enumerate() {
                            r!(dst as usize + i, l) = v;
                        }
                    }
                }
                Inst::ImageWrite { image, coord, coord_n, src, texel, loc } => {
                    for &l in act {
                        let l = l as usize;
                        let handle = r!(image, l);
                        let desc = *globals.image(handle).ok_or_else(|| not_an_image(module, loc))?;
                        let mut c = [0u64; 4];
                        for (i, v) in c.iter_mut().enumerate().take(coord_n as usize) {
                            *v = r!(coord as usize + i, l);
                        }
                        let coords = match image_coord(&c[..coord_n as usize], false) {
                            image::Coord::Int(c) => c,
                            image::Coord::Float(_) => unreachable!("integer coordinates were asked for"),
                        };
                        let values = [0, 1, 2, 3].map(|i| r!(src as usize + i, l));
                        let ls = &mut info[l];
                        ls.spin.repeats = 0;
                        let mut mem = mem!(ls);
                        let outside = image::write(&desc, coords, values, texel, &mut |offset, bytes| {
                            let addr = handle + offset;
                            if mem.write_bytes(addr, bytes).is_ok() && H::ACTIVE {
                                let size = bytes.len() as u32;
                                let access = Access { kind: AccessKind::Store, addr, size, loc, stored: bytes };
                                hooks.access(l as u32, &access);
                            }
                        });
                        if let Some(o) = outside {
                            findings.push(image_oob(self, handle, &desc, true, o, ls.global_id, loc));
                        }
                    }
                }
                Inst::ImageQuery { dst, image, query, n, bits } => {
                    let loc = func.locs.get(p - 1).copied().unwrap_or(u32::MAX);
                    for &l in act {
                        let l = l as usize;
                        let desc = globals.image(r!(image, l)).ok_or_else(|| not_an_image(module, loc))?;
                        match query {
                            ImageQuery::Size => {
                                let size = desc.query_size();
                                for (i, &s) in size.iter().enumerate().take(n as usize) {
                                    r!(dst as usize + i, l) = s & mask(bits);
                                }
                            }
                            ImageQuery::Format => r!(dst, l) = (desc.data_type - image::TYPE_BASE) as u64,
                            ImageQuery::Order => r!(dst, l) = (desc.order - image::ORDER_BASE) as u64,
                        }
                    }
                }
                Inst::Printf { dst, fmt, first_arg, num_args } => {
                    let arg_list = &func.args[first_arg as usize..first_arg as usize + num_args as usize];
                    for &l in act {
                        let l = l as usize;
                        let args: Vec<printf::PrintfArg> =
                            arg_list.iter().map(|a| printf_arg(a, |i| r!(a.reg as usize + i, l))).collect();
                        let ls = &mut info[l];
                        let text = {
                            let mut mem = mem!(ls);
                            let fmt = mem.read_c_string(r!(fmt, l));
                            printf::format(&fmt, &args, &mut |p| mem.read_c_string(p))
                        };
                        ls.printf.push_str(&text);
                        *printed = true;
                        r!(dst, l) = 0;
                    }
                }
                Inst::Branch { target } => {
                    spend!();
                    p = target as usize;
                }
                Inst::BranchIf { cond, then, otherwise } => {
                    spend!();
                    let c = (base + cond as usize) * stride;
                    let first = at!(c + act[0] as usize) != 0;
                    if act.iter().all(|&l| (at!(c + l as usize) != 0) == first) {
                        p = if first { then } else { otherwise } as usize;
                    } else {
                        scratch.then.clear();
                        scratch.otherwise.clear();
                        for &l in act {
                            if at!(c + l as usize) != 0 {
                                scratch.then.push(l);
                            } else {
                                scratch.otherwise.push(l);
                            }
                        }
                        leave!(Event::Diverge { at: p - 1, then, otherwise });
                    }
                }
                Inst::Switch { value, bits, table } => {
                    spend!();
                    let t = &func.switch_tables[table as usize];
                    let target = |v: u64| {
                        let v = v & mask(bits);
                        t.cases.iter().find(|c| c.0 & mask(bits) == v).map_or(t.default, |c| c.1)
                    };
                    let first = target(r!(value, act[0] as usize));
                    if act.iter().all(|&l| target(r!(value, l as usize)) == first) {
                        p = first as usize;
                    } else {
                        scratch.cases.clear();
                        scratch.cases.extend(act.iter().map(|&l| (target(r!(value, l as usize)), l)));
                        scratch.cases.sort_by_key(|c| c.0);
                        leave!(Event::DivergeSwitch { at: p - 1 });
                    }
                }
                Inst::Call { func: callee, dst, first_arg, num_args } => {
                    spend!();
                    leave!(Event::Call { callee, dst, first_arg, num_args, return_pc: p as u32 });
                }
                Inst::Return { src, n } => leave!(Event::Return { src, n }),
                Inst::Unreachable { loc } => {
                    return Err(ExecError::Fault(format!("reached unreachable code at {}", module.location(loc))));
                }
                Inst::Assert { cond, bits, has_msg, msg, loc } => {
                    for &l in act {
                        if r!(cond, l as usize) & mask(bits) == 0 {
                            let ls = &mut info[l as usize];
                            let message = has_msg.then(|| mem!(ls).read_c_string(r!(msg, l as usize)));
                            findings.push(assertion_failed(message, ls.global_id, loc));
                        }
                    }
                }
                Inst::Unsupported { what, loc } => {
                    return Err(ExecError::Unsupported(format!(
                        "{} at {}",
                        module.unsupported[what as usize],
                        module.location(loc)
                    )));
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn builtin(
        &self,
        which: Builtin,
        lid: [u64; 3],
        gid: [u64; 3],
        linear: u64,
        group: [u64; 3],
        size: [u64; 3],
        out: &mut [u64],
    ) {
        let r = &self.range;
        let three = |out: &mut [u64], v: [u64; 3]| out[..3].copy_from_slice(&v);
        match which {
            Builtin::GlobalId => three(out, gid),
            Builtin::LocalId => three(out, lid),
            Builtin::GroupId => three(out, group),
            Builtin::NumGroups => three(out, r.groups),
            Builtin::GlobalSize => three(out, r.global),
            Builtin::LocalSize => three(out, size),
            Builtin::EnqueuedLocalSize => three(out, r.local),
            Builtin::GlobalOffset => three(out, r.offset),
            Builtin::WorkDim => out[0] = r.work_dim as u64,
            Builtin::GlobalLinearId => {
                let g = [gid[0] - r.offset[0], gid[1] - r.offset[1], gid[2] - r.offset[2]];
                out[0] = (g[2] * r.global[1] + g[1]) * r.global[0] + g[0];
            }
            Builtin::LocalLinearId => out[0] = linear,
            Builtin::SubgroupSize => {
                let items = size.iter().product::<u64>();
                out[0] = (items - linear / r.sub_group * r.sub_group).min(r.sub_group);
            }
            Builtin::SubgroupMaxSize => out[0] = size.iter().product::<u64>().min(r.sub_group),
            Builtin::NumSubgroups => out[0] = size.iter().product::<u64>().div_ceil(r.sub_group),
            Builtin::SubgroupId => out[0] = linear / r.sub_group,
            Builtin::SubgroupLocalId => out[0] = linear % r.sub_group,
        }
    }
}

/// Builtins whose value is the same for every work-item of a group.
fn builtin_is_uniform(which: Builtin) -> bool {
    matches!(
        which,
        Builtin::GroupId
            | Builtin::NumGroups
            | Builtin::GlobalSize
            | Builtin::LocalSize
            | Builtin::EnqueuedLocalSize
            | Builtin::GlobalOffset
            | Builtin::WorkDim
            | Builtin::SubgroupMaxSize
            | Builtin::NumSubgroups
    )
}

/// Gives back the private memory of a returned call frame.
fn restore_private(lanes: &mut Lanes, active: &[u32], mark: u32) {
    for &l in active {
        lanes.lane[l as usize].private.truncate(mark as usize);
    }
}

#[cold]
#[inline(never)]
fn misaligned(
    launch: &Execution,
    addr: u64,
    size: u32,
    alignment: u32,
    access: &'static str,
    global_id: [u64; 3],
    loc: u32,
) -> Finding {
    let (space, allocation) = allocation_of(launch, addr);
    let offset = split(addr).2 as i64;
    Finding::Misaligned { access, space, allocation, offset, size, alignment, global_id, loc }
}

#[cold]
#[inline(never)]
fn array_index(launch: &Execution, element: u64, index: i64, extent: u32, global_id: [u64; 3], loc: u32) -> Finding {
    let (space, allocation) = allocation_of(launch, element);
    let offset = split(element).2 as i64;
    Finding::ArrayIndex { space, allocation, offset, index, extent: extent as u64, global_id, loc }
}

/// A failed assertion of one work-item; `message` is the assertion's bytes as the kernel holds
/// them (not necessarily UTF-8).
#[cold]
#[inline(never)]
fn assertion_failed(message: Option<Vec<u8>>, global_id: [u64; 3], loc: u32) -> Finding {
    let message = message.map(|m| String::from_utf8_lossy(&m).into_owned());
    Finding::AssertionFailed { message, global_id, loc }
}

/// An image instruction's coordinates: 32-bit integer or float lanes (up to four).
fn image_coord(lanes: &[u64], float: bool) -> image::Coord {
    if float {
        let mut c = [0f32; 4];
        for (c, &v) in c.iter_mut().zip(lanes) {
            *c = f32_of(v);
        }
        image::Coord::Float(c)
    } else {
        let mut c = [0i64; 4];
        for (c, &v) in c.iter_mut().zip(lanes) {
            *c = v as u32 as i32 as i64;
        }
        image::Coord::Int(c)
    }
}

fn not_an_image(module: &ir::Module, loc: u32) -> ExecError {
    ExecError::Fault(format!("an image operation at {} was given something that is not an image", module.location(loc)))
}

fn image_oob(
    launch: &Execution,
    handle: u64,
    desc: &image::ImageDesc,
    store: bool,
    outside: image::OutOfRange,
    global_id: [u64; 3],
    loc: u32,
) -> Finding {
    let (_, index, _) = split(handle);
    let image = launch.globals.names.get(index as usize).cloned().unwrap_or_default();
    Finding::ImageOutOfBounds { store, image, coord: outside.coord, extent: desc.query_size(), global_id, loc }
}

/// A printf argument of one lane; `slot(i)` reads the argument's `i`-th slot.
fn printf_arg(a: &ir::Arg, slot: impl Fn(usize) -> u64) -> printf::PrintfArg {
    let one = |v: u64| match a.kind {
        ir::ArgKind::Int(b) => printf::PrintfArg::Int { bits: b as u32, value: v & mask(b) },
        ir::ArgKind::Float(b) => printf::PrintfArg::Float(float_lane(v, b)),
        _ => printf::PrintfArg::Pointer(v),
    };
    if a.n > 1 { printf::PrintfArg::Vector((0..a.n as usize).map(|i| one(slot(i))).collect()) } else { one(slot(0)) }
}
