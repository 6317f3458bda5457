//! The interpreter: runs one work-item over the IR until it reaches a barrier, finishes, or fails.
//!
//! A work-item's whole state (registers, call frames, private stack, program counter) lives in
//! [`WorkItem`], so it can stop at a barrier anywhere in its call stack and resume later. The hot
//! loop is a `match` over [`Inst`] on a flat code array: no allocation, hashing or dynamic dispatch
//! per instruction.

use rspirv::spirv::OpenclStd100Op as Cl;

use super::hooks::{Access, AccessKind, AtomicAccess, GroupHooks};
use super::image::{self, Sampler};
use super::memory::{
    Fault, GlobalMemory, Memory, SPACE_GLOBAL, SPACE_LOCAL, SPACE_PRIVATE, SPACE_SHIFT, address, split,
};
use super::{ExecError, Finding, half, math, printf};
use crate::ir::{
    self, AtomicOp, Builtin, Cmp, CollectiveOp, Conv, Fence, FloatOp, Geo, ImageQuery, Inst, IntOp, MathKind, Round,
    Scope, UnOp, VecMem,
};
use crate::spirv::{MAX_PRIVATE_BYTES, sign_extend};

/// The NDRange geometry of a launch.
#[derive(Debug, Clone, Copy)]
pub struct NdRange {
    pub work_dim: u32,
    pub offset: [u64; 3],
    pub global: [u64; 3],
    pub local: [u64; 3],
    pub groups: [u64; 3],
    /// Work-items per sub-group.
    pub sub_group: u64,
}

/// What one launch shares between all work-items.
pub struct Launch<'a> {
    pub module: &'a ir::Module,
    pub globals: &'a GlobalMemory,
    pub range: NdRange,
    /// Built with `-cl-denorms-are-zero`: float arithmetic and math flush denormals to zero.
    pub flush_denormals: bool,
}

/// Per-work-group state the work-items share.
pub struct Group {
    pub id: [u64; 3],
    /// This group's size (smaller than the local size at the edges of non-uniform ranges).
    pub size: [u64; 3],
    pub local: Vec<u8>,
    pub local_regions: Vec<(usize, usize)>,
    pub findings: super::findings::FindingLog,
    pub printf: String,
}

/// Why a work-item stopped running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Yield {
    /// At a barrier; `site` tells barrier instructions apart (function and position).
    Barrier {
        fence: Fence,
        scope: Scope,
        loc: u32,
        site: u64,
        sub_group: bool,
    },
    /// Repeated an atomic read of an unchanging value [`SPIN_REPEATS`] times without storing
    /// anything: waiting for another work-item. `addr` and `value` are what it keeps reading.
    Spin {
        loc: u32,
        addr: u64,
        value: u64,
    },
    /// At a collective function (`site` as for barriers), contributing `value`; `source` is the
    /// local id a broadcast asks for. Its result goes to absolute register `dst`.
    Collective {
        site: u64,
        loc: u32,
        op: CollectiveOp,
        bits: u8,
        value: u64,
        source: [u64; 3],
        dst: u32,
        sub_group: bool,
    },
    /// Its instruction budget ran out before the next branch or call; resuming retries it.
    OutOfBudget,
    Done,
}

/// How many times a work-item may re-read the same unchanged value with the same atomic
/// before it yields as spinning.
pub const SPIN_REPEATS: u32 = 64;

/// The last atomic that changed nothing, to recognise a spin loop.
#[derive(Default, Clone, Copy)]
struct SpinWatch {
    loc: u32,
    addr: u64,
    value: u64,
    repeats: u32,
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    func: u32,
    return_pc: u32,
    base: u32,
    /// Absolute register that receives the return value.
    dst: u32,
    private_mark: u32,
}

/// One work-item's resumable state.
#[derive(Default)]
pub struct WorkItem {
    pub local_id: [u64; 3],
    pub global_id: [u64; 3],
    pub local_linear: u64,
    regs: Vec<u64>,
    frames: Vec<Frame>,
    pub private: Vec<u8>,
    func: u32,
    pc: u32,
    base: u32,
    spin: SpinWatch,
    /// The async copies this work-item started with a fresh event: the next event's number.
    copies: u64,
}

#[cold]
fn private_too_large(global_id: [u64; 3]) -> ExecError {
    ExecError::Memory(format!(
        "work-item {global_id:?} needs more than {} MiB of private memory",
        MAX_PRIVATE_BYTES >> 20
    ))
}

/// The most call frames a work-item may stack (recursion is rejected earlier; this bounds depth).
const MAX_FRAMES: usize = 1024;

impl WorkItem {
    /// Resets this work-item to the start of `func` with the given initial registers and private bytes.
    pub fn start(&mut self, func: u32, regs: &[u64], private: &[u8]) {
        self.regs.clear();
        self.regs.extend_from_slice(regs);
        self.private.clear();
        self.private.extend_from_slice(private);
        self.frames.clear();
        self.func = func;
        self.pc = 0;
        self.base = 0;
        self.spin = SpinWatch::default();
        self.copies = 0;
    }

    /// Bytes this work-item holds on the heap: registers, call frames, private memory.
    pub fn footprint(&self) -> u64 {
        (self.regs.capacity() * 8 + self.frames.capacity() * std::mem::size_of::<Frame>() + self.private.capacity())
            as u64
    }

    /// Sets one register of the current call stack (the result of a collective function).
    pub fn set_register(&mut self, absolute: u32, value: u64) {
        self.regs[absolute as usize] = value;
    }

    /// The source location of the instruction this work-item stopped at (for messages).
    pub fn location(&self, module: &ir::Module) -> String {
        let func = &module.functions[self.func as usize];
        let at = (self.pc as usize + 1).min(func.locs.len());
        // The nearest located instruction before, else after (code before the first line); in a
        // kernel's entry stub without lines, the function it is about to call.
        let near =
            |locs: &[u32], at: usize| locs[..at].iter().rev().chain(&locs[at..]).copied().find(|&l| l != u32::MAX);
        let callee = match func.code.get(self.pc as usize) {
            Some(Inst::Call { func: callee, .. }) => near(&module.functions[*callee as usize].locs, 0),
            _ => None,
        };
        let loc = near(&func.locs, at).or(callee);
        loc.map(|l| module.location(l)).unwrap_or_else(|| "unknown location".into())
    }
}

fn mask(bits: u8) -> u64 {
    if bits >= 64 { !0 } else { (1u64 << bits) - 1 }
}

fn f32_of(v: u64) -> f32 {
    f32::from_bits(v as u32)
}

fn f64_of(v: u64) -> f64 {
    f64::from_bits(v)
}

fn bits_f32(x: f32) -> u64 {
    x.to_bits() as u64
}

/// Reads a float lane of `bits` width as f64 (exact).
fn float_lane(v: u64, bits: u8) -> f64 {
    match bits {
        64 => f64_of(v),
        16 => half::to_f32(v as u16) as f64,
        _ => f32_of(v) as f64,
    }
}

impl<'a> Launch<'a> {
    /// Runs `wi` until it yields. `budget` counts down branches and calls; at 0 the work-item
    /// yields [`Yield::OutOfBudget`] before the branch or call.
    pub fn run<H: GroupHooks>(
        &self,
        wi: &mut WorkItem,
        group: &mut Group,
        hooks: &mut H,
        budget: &mut u64,
    ) -> Result<Yield, ExecError> {
        let module = self.module;
        let mut mem = Memory {
            globals: self.globals,
            local: &mut group.local,
            local_regions: &group.local_regions,
            private: &mut wi.private,
        };
        let findings = &mut group.findings;
        let printf_out = &mut group.printf;
        'frames: loop {
            let func = &module.functions[wi.func as usize];
            let code = &func.code[..];
            let base = wi.base as usize;
            let mut pc = wi.pc as usize;
            let regs = &mut wi.regs[base..];
            let item = wi.local_linear as u32;
            macro_rules! fault {
                ($f:expr, $store:expr, $loc:expr) => {
                    findings.push(oob(self, &mem, $f, $store, wi.global_id, $loc))
                };
            }
            // Reports a plain access to the hooks; a store ends any spin.
            macro_rules! observe {
                (load, $addr:expr, $size:expr, $loc:expr) => {
                    if H::ACTIVE {
                        let access =
                            Access { kind: AccessKind::Load, addr: $addr, size: $size as u32, loc: $loc, stored: &[] };
                        hooks.access(item, &access);
                    }
                };
                (store, $addr:expr, $size:expr, $value:expr, $loc:expr) => {
                    wi.spin.repeats = 0;
                    if H::ACTIVE {
                        let bytes = ($value as u64).to_le_bytes();
                        let size = ($size as usize).min(8);
                        let access = Access {
                            kind: AccessKind::Store,
                            addr: $addr,
                            size: size as u32,
                            loc: $loc,
                            stored: &bytes[..size],
                        };
                        hooks.access(item, &access);
                    }
                };
            }
            // Spends one unit of budget before a branch or call, or yields to get more.
            macro_rules! spend {
                () => {
                    if *budget == 0 {
                        wi.pc = (pc - 1) as u32;
                        return Ok(Yield::OutOfBudget);
                    }
                    *budget -= 1;
                };
            }
            loop {
                let inst = &code[pc];
                pc += 1;
                match *inst {
                    Inst::Mov { dst, src, n: 1 } => regs[dst as usize] = regs[src as usize],
                    Inst::Mov { dst, src, n } => {
                        regs.copy_within(src as usize..src as usize + n as usize, dst as usize);
                    }
                    Inst::IntBin { op, bits, dst, a, b, n } => {
                        for i in 0..n as usize {
                            let (x, y) = (regs[a as usize + i], regs[b as usize + i]);
                            regs[dst as usize + i] = int_op(op, bits, x, y);
                        }
                    }
                    Inst::FloatBin { op, bits, dst, a, b, n } => {
                        for i in 0..n as usize {
                            let (x, y) = (regs[a as usize + i], regs[b as usize + i]);
                            regs[dst as usize + i] = if self.flush_denormals {
                                flushed_op(op, bits, x, y)
                            } else {
                                match bits {
                                    64 => float_op(op, f64_of(x), f64_of(y)).to_bits(),
                                    32 => bits_f32(float_op(op, f32_of(x), f32_of(y))),
                                    _ => half_op(op, x, y),
                                }
                            };
                        }
                    }
                    Inst::Compare { cmp, bits, dst, a, b, n } => {
                        for i in 0..n as usize {
                            let (x, y) = (regs[a as usize + i], regs[b as usize + i]);
                            regs[dst as usize + i] = compare(cmp, bits, x, y) as u64;
                        }
                    }
                    Inst::Unary { op, bits, dst, a, n } => {
                        for i in 0..n as usize {
                            regs[dst as usize + i] = unary(op, bits, regs[a as usize + i]);
                        }
                    }
                    Inst::Convert { conv, from, to, dst, src, n } => {
                        for i in 0..n as usize {
                            regs[dst as usize + i] = convert(conv, from, to, regs[src as usize + i]);
                        }
                    }
                    Inst::Select { dst, cond, a, b, n, cond_lanes } => {
                        for i in 0..n as usize {
                            let c = regs[cond as usize + if cond_lanes { i } else { 0 }];
                            regs[dst as usize + i] = if c != 0 { regs[a as usize + i] } else { regs[b as usize + i] };
                        }
                    }
                    Inst::Bitcast { dst, src, from, to } => {
                        let mut bytes = [0u8; 128];
                        for (i, leaf) in module.layouts[from as usize].leaves.iter().enumerate() {
                            let at = leaf.offset as usize;
                            bytes[at..at + leaf.size as usize]
                                .copy_from_slice(&regs[src as usize + i].to_le_bytes()[..leaf.size as usize]);
                        }
                        for (i, leaf) in module.layouts[to as usize].leaves.iter().enumerate() {
                            let mut word = [0u8; 8];
                            let at = leaf.offset as usize;
                            word[..leaf.size as usize].copy_from_slice(&bytes[at..at + leaf.size as usize]);
                            regs[dst as usize + i] = u64::from_le_bytes(word);
                        }
                    }
                    Inst::Reduce { all, dst, src, n } => {
                        let lanes = &regs[src as usize..src as usize + n as usize];
                        regs[dst as usize] =
                            if all { lanes.iter().all(|&v| v != 0) } else { lanes.iter().any(|&v| v != 0) } as u64;
                    }
                    Inst::PtrOffset { dst, base: b, offset, first_index, num_indices } => {
                        let mut addr = regs[b as usize].wrapping_add(offset as u64);
                        for index in &func.indices[first_index as usize..first_index as usize + num_indices as usize] {
                            let i = sign_extend(regs[index.reg as usize], index.bits);
                            addr = addr.wrapping_add(i.wrapping_mul(index.stride) as u64);
                        }
                        regs[dst as usize] = addr;
                    }
                    Inst::PtrDiff { dst, a, b, elem } => {
                        regs[dst as usize] =
                            ((regs[a as usize].wrapping_sub(regs[b as usize]) as i64) / elem as i64) as u64;
                    }
                    Inst::LoadScalar { dst, ptr, size, loc } => {
                        let addr = regs[ptr as usize];
                        regs[dst as usize] = match mem.load(addr, size as usize) {
                            Ok(v) => {
                                observe!(load, addr, size, loc);
                                v
                            }
                            Err(f) => {
                                fault!(f, false, loc);
                                0
                            }
                        };
                    }
                    Inst::StoreScalar { src, ptr, size, loc } => {
                        let addr = regs[ptr as usize];
                        match mem.store(addr, size as usize, regs[src as usize]) {
                            Ok(()) => {
                                observe!(store, addr, size, regs[src as usize], loc);
                            }
                            Err(f) => fault!(f, true, loc),
                        }
                    }
                    Inst::Load { dst, ptr, layout, loc } => {
                        let addr = regs[ptr as usize];
                        let layout = &module.layouts[layout as usize];
                        // Check the whole value first, so a partly-outside access is one finding.
                        if let Err(f) = mem.check(addr, layout.size as usize, false) {
                            fault!(f, false, loc);
                            regs[dst as usize..dst as usize + layout.leaves.len()].fill(0);
                        } else {
                            for (i, leaf) in layout.leaves.iter().enumerate() {
                                let at = addr + leaf.offset as u64;
                                regs[dst as usize + i] = mem.load(at, leaf.size as usize).unwrap_or(0);
                                observe!(load, at, leaf.size, loc);
                            }
                        }
                    }
                    Inst::Store { src, ptr, layout, loc } => {
                        let addr = regs[ptr as usize];
                        let layout = &module.layouts[layout as usize];
                        if let Err(f) = mem.check(addr, layout.size as usize, true) {
                            fault!(f, true, loc);
                        } else {
                            for (i, leaf) in layout.leaves.iter().enumerate() {
                                let at = addr + leaf.offset as u64;
                                let _ = mem.store(at, leaf.size as usize, regs[src as usize + i]);
                                observe!(store, at, leaf.size, regs[src as usize + i], loc);
                            }
                        }
                    }
                    Inst::CopyMemory { dst, src, size, loc } => {
                        let n = regs[size as usize] as usize;
                        let (to, from) = (regs[dst as usize], regs[src as usize]);
                        match mem.copy(to, from, n) {
                            Ok(()) => {
                                wi.spin.repeats = 0;
                                if H::ACTIVE {
                                    observe_copy(&mut mem, to, from, n, loc, &mut |a| hooks.access(item, a));
                                }
                            }
                            Err((f, store)) => fault!(f, store, loc),
                        }
                    }
                    Inst::Alloca { dst, size, align } => {
                        let start = mem.private.len().next_multiple_of(align as usize);
                        if start + size as usize > MAX_PRIVATE_BYTES {
                            return Err(private_too_large(wi.global_id));
                        }
                        mem.private.resize(start + size as usize, 0);
                        regs[dst as usize] = address(SPACE_PRIVATE, 0, start as u64);
                    }
                    Inst::ExtractDynamic { dst, src, index, index_bits, n, beyond } => {
                        let i = regs[index as usize] & mask(index_bits);
                        regs[dst as usize] = if i < n as u64 { regs[src as usize + i as usize] } else { beyond as u64 };
                    }
                    Inst::InsertDynamic { dst, src, value, index, index_bits, n } => {
                        regs.copy_within(src as usize..src as usize + n as usize, dst as usize);
                        let i = regs[index as usize] & mask(index_bits);
                        if i < n as u64 {
                            regs[dst as usize + i as usize] = regs[value as usize];
                        }
                    }
                    Inst::Shuffle { dst, first, n } => {
                        let mut lanes = [0u64; 16];
                        for (i, &r) in func.lanes[first as usize..first as usize + n as usize].iter().enumerate() {
                            lanes[i] = regs[r as usize];
                        }
                        regs[dst as usize..dst as usize + n as usize].copy_from_slice(&lanes[..n as usize]);
                    }
                    Inst::ShuffleDynamic { dst, a, b, na, mask: m, n, mask_bits } => {
                        let mut lanes = [0u64; 16];
                        let na = na as u64;
                        for (i, lane) in lanes.iter_mut().enumerate().take(n as usize) {
                            let sel = (regs[m as usize + i] & mask(mask_bits)) % (2 * na);
                            *lane = if sel < na {
                                regs[a as usize + sel as usize]
                            } else {
                                regs[b as usize + (sel - na) as usize]
                            };
                        }
                        regs[dst as usize..dst as usize + n as usize].copy_from_slice(&lanes[..n as usize]);
                    }
                    Inst::Builtin { dst, which } => self.builtin(
                        which,
                        wi.local_id,
                        wi.global_id,
                        wi.local_linear,
                        group.id,
                        group.size,
                        &mut regs[dst as usize..],
                    ),
                    Inst::Math { op, kind, dst, args, n } => {
                        for i in 0..n as usize {
                            let lane = |r: u32| regs[r as usize + i];
                            let (mut a, mut b, mut c) = (lane(args[0]), lane(args[1]), lane(args[2]));
                            let float_bits = match kind {
                                MathKind::F32 => 32,
                                MathKind::F64 => 64,
                                _ => 0,
                            };
                            if self.flush_denormals && float_bits != 0 {
                                (a, b, c) = (flush(a, float_bits), flush(b, float_bits), flush(c, float_bits));
                            }
                            let v = math_lane(op, kind, n, a, b, c)
                                .ok_or_else(|| ExecError::Unsupported(format!("OpenCL.std {op:?} for {kind:?}")))?;
                            regs[dst as usize + i] =
                                if self.flush_denormals && float_bits != 0 { flush(v, float_bits) } else { v };
                        }
                    }
                    Inst::MathOut { op, bits, out_bits, dst, a, b, out, n, loc } => {
                        let step = out_bits as u64 / 8;
                        let unsupported = || ExecError::Unsupported(format!("OpenCL.std {op:?}"));
                        for i in 0..n as usize {
                            let (x, y) = (regs[a as usize + i], regs[b as usize + i]);
                            let (r, second) = match bits {
                                64 => {
                                    let (r, s) =
                                        math::float64_with_out(op, f64_of(x), f64_of(y)).ok_or_else(unsupported)?;
                                    (r.to_bits(), s)
                                }
                                32 => {
                                    let (r, s) =
                                        math::float32_with_out(op, f32_of(x), f32_of(y)).ok_or_else(unsupported)?;
                                    (bits_f32(r), s)
                                }
                                _ => {
                                    // Half: in single precision, rounded back (exact for these functions).
                                    let (hx, hy) = (half::to_f32(x as u16), half::to_f32(y as u16));
                                    let (r, s) = math::float32_with_out(op, hx, hy).ok_or_else(unsupported)?;
                                    (half::from_f64(r as f64, ir::HalfRound::Rte) as u64, s)
                                }
                            };
                            regs[dst as usize + i] = r;
                            let stored = match second {
                                math::Second::Float(v) => narrow_float(v, out_bits, Round::Rte),
                                math::Second::Int(v) => v as u64,
                            };
                            let at = regs[out as usize] + i as u64 * step;
                            match mem.store(at, step as usize, stored) {
                                Ok(()) => {
                                    observe!(store, at, step, stored, loc);
                                }
                                Err(f) => fault!(f, true, loc),
                            }
                        }
                    }
                    Inst::Geometric { op, bits, dst, a, b, n } => {
                        geometric(op, bits, n as usize, regs, a as usize, b as usize, dst as usize);
                    }
                    Inst::VectorMemory { op, dst, offset, ptr, elem, n, loc } => {
                        let off = regs[offset as usize];
                        let p = regs[ptr as usize];
                        let (n, elem) = (n as u64, elem as u64);
                        let lanes = match op {
                            VecMem::LoadHalf { aligned: true } | VecMem::StoreHalf { aligned: true, .. } if n == 3 => 4,
                            _ => n,
                        };
                        let start = p.wrapping_add(off.wrapping_mul(lanes * elem));
                        for i in 0..n {
                            let at = start + i * elem;
                            let r = dst as usize + i as usize;
                            match op {
                                VecMem::Load => match mem.load(at, elem as usize) {
                                    Ok(v) => {
                                        observe!(load, at, elem, loc);
                                        regs[r] = v
                                    }
                                    Err(f) => {
                                        fault!(f, false, loc);
                                        regs[r] = 0;
                                    }
                                },
                                VecMem::LoadHalf { .. } => match mem.load(at, 2) {
                                    Ok(v) => {
                                        observe!(load, at, 2, loc);
                                        regs[r] = bits_f32(half::to_f32(v as u16))
                                    }
                                    Err(f) => {
                                        fault!(f, false, loc);
                                        regs[r] = 0;
                                    }
                                },
                                VecMem::Store => match mem.store(at, elem as usize, regs[r]) {
                                    Ok(()) => {
                                        observe!(store, at, elem, regs[r], loc);
                                    }
                                    Err(f) => fault!(f, true, loc),
                                },
                                VecMem::StoreHalf { round, f64, .. } => {
                                    let x = if f64 { f64_of(regs[r]) } else { f32_of(regs[r]) as f64 };
                                    let h = half::from_f64(x, round.unwrap_or(ir::HalfRound::Rte));
                                    match mem.store(at, 2, h as u64) {
                                        Ok(()) => {
                                            observe!(store, at, 2, h, loc);
                                        }
                                        Err(f) => fault!(f, true, loc),
                                    }
                                }
                            }
                        }
                    }
                    Inst::Atomic { op, bits, order, fail_order, scope, dst, ptr, value, comparator, loc } => {
                        let size = bits as usize / 8;
                        let (addr, v, c) = (regs[ptr as usize], regs[value as usize], regs[comparator as usize]);
                        let update = |old| atomic_update(op, bits, old, v, c);
                        let result = if H::ACTIVE {
                            hooks.atomic_section(addr, || mem.atomic(addr, size, update))
                        } else {
                            mem.atomic(addr, size, update)
                        };
                        match result {
                            Ok((old, new)) => {
                                regs[dst as usize] =
                                    if op == AtomicOp::FlagTestAndSet { (old != 0) as u64 } else { old };
                                if H::ACTIVE {
                                    let order = if new.is_some() { order } else { fail_order };
                                    let atomic = AtomicAccess { op, order, scope, wrote: new.is_some(), read: old };
                                    let bytes = new.unwrap_or(0).to_le_bytes();
                                    let stored = if new.is_some() { &bytes[..size] } else { &[] };
                                    let kind = AccessKind::Atomic(atomic);
                                    hooks.access(item, &Access { kind, addr, size: size as u32, loc, stored });
                                }
                                if new.is_some_and(|n| n != old) {
                                    wi.spin.repeats = 0;
                                } else if wi.spin.loc == loc && wi.spin.addr == addr && wi.spin.value == old {
                                    wi.spin.repeats += 1;
                                    if wi.spin.repeats >= SPIN_REPEATS {
                                        wi.spin.repeats = 0;
                                        wi.pc = pc as u32;
                                        return Ok(Yield::Spin { loc, addr, value: old });
                                    }
                                } else {
                                    wi.spin = SpinWatch { loc, addr, value: old, repeats: 1 };
                                }
                            }
                            Err(f) => {
                                fault!(f, op != AtomicOp::Load, loc);
                                regs[dst as usize] = 0;
                            }
                        }
                    }
                    Inst::Barrier { fence, scope, loc, sub_group } => {
                        wi.pc = pc as u32;
                        let site = (wi.func as u64) << 32 | pc as u64;
                        return Ok(Yield::Barrier { fence, scope, loc, site, sub_group });
                    }
                    Inst::Collective { op, bits, dst, src, id, id_n, loc, sub_group } => {
                        let mut source = [0u64; 3];
                        for (d, slot) in source.iter_mut().enumerate().take(id_n as usize) {
                            *slot = regs[id as usize + d];
                        }
                        let value = regs[src as usize];
                        wi.pc = pc as u32;
                        let site = (wi.func as u64) << 32 | pc as u64;
                        let dst = wi.base + dst;
                        return Ok(Yield::Collective { site, loc, op, bits, value, source, dst, sub_group });
                    }
                    Inst::MemoryFence { fence, order, scope, loc } => {
                        if H::ACTIVE {
                            hooks.fence(item, fence, order, scope, loc);
                        }
                    }
                    Inst::CastToSpace { dst, src, space } => {
                        let p = regs[src as usize];
                        regs[dst as usize] = if p >> SPACE_SHIFT == space as u64 { p } else { 0 };
                    }
                    Inst::PointerFence { dst, src } => {
                        regs[dst as usize] = match regs[src as usize] >> SPACE_SHIFT {
                            SPACE_GLOBAL => 0x200,
                            SPACE_LOCAL => 0x100,
                            _ => 0,
                        };
                    }
                    Inst::AsyncCopy { dst, dst_ptr, src_ptr, count, stride, elem, to_local, event, loc } => {
                        let (count, stride, elem) = (regs[count as usize], regs[stride as usize], elem as u64);
                        let group_items = group.size.iter().product::<u64>().max(1);
                        // A copy given no event gets a fresh one: the work-item's count of such
                        // copies, the same for every work-item of the group (the copy is uniform).
                        let event = match regs[event as usize] {
                            0 => {
                                wi.copies += 1;
                                wi.copies
                            }
                            given => given,
                        };
                        if H::ACTIVE {
                            hooks.async_copy(item, event, loc);
                        }
                        let mut k = wi.local_linear;
                        while k < count {
                            let (d, s) = if to_local { (k, k * stride) } else { (k * stride, k) };
                            let from = regs[src_ptr as usize] + s * elem;
                            let to = regs[dst_ptr as usize] + d * elem;
                            if let Err((f, store)) = mem.copy(to, from, elem as usize) {
                                fault!(f, store, loc);
                                break;
                            }
                            if H::ACTIVE {
                                observe_copy(&mut mem, to, from, elem as usize, loc, &mut |a| hooks.group_access(a));
                            }
                            k += group_items;
                        }
                        regs[dst as usize] = event;
                    }
                    Inst::WaitEvents { num, list, loc } => {
                        let (num, list) = (regs[num as usize], regs[list as usize]);
                        for i in 0..num {
                            match mem.load(list.wrapping_add(i.wrapping_mul(8)), 8) {
                                Ok(event) if H::ACTIVE => hooks.wait_event(item, event),
                                Ok(_) => {}
                                Err(f) => {
                                    fault!(f, false, loc);
                                    break;
                                }
                            }
                        }
                    }
                    Inst::ImageRead { dst, image, coord, coord_n, float_coord, sampled, texel, loc } => {
                        let handle = regs[image as usize];
                        let desc = *self.globals.image(handle).ok_or_else(|| not_an_image(module, loc))?;
                        let sampler = sampled.then(|| Sampler::from_bits(regs[image as usize + 1]));
                        let coord = image_coord(&regs[coord as usize..coord as usize + coord_n as usize], float_coord);
                        let (texel, outside) = image::read(&desc, sampler, coord, texel, &mut |offset, bytes| {
                            let addr = handle + offset;
                            if mem.read_bytes(addr, bytes).is_ok() {
                                observe!(load, addr, bytes.len(), loc);
                            }
                        });
                        if let Some(o) = outside {
                            findings.push(image_oob(self, handle, &desc, false, o, wi.global_id, loc));
                        }
                        regs[dst as usize..dst as usize + 4].copy_from_slice(&texel);
                    }
                    Inst::ImageWrite { image, coord, coord_n, src, texel, loc } => {
                        let handle = regs[image as usize];
                        let desc = *self.globals.image(handle).ok_or_else(|| not_an_image(module, loc))?;
                        let coord = match image_coord(&regs[coord as usize..coord as usize + coord_n as usize], false) {
                            image::Coord::Int(c) => c,
                            image::Coord::Float(_) => unreachable!("integer coordinates were asked for"),
                        };
                        let lanes = [0, 1, 2, 3].map(|i| regs[src as usize + i]);
                        wi.spin.repeats = 0;
                        let outside = image::write(&desc, coord, lanes, texel, &mut |offset, bytes| {
                            let addr = handle + offset;
                            if mem.write_bytes(addr, bytes).is_ok() && H::ACTIVE {
                                let size = bytes.len() as u32;
                                hooks.access(item, &Access { kind: AccessKind::Store, addr, size, loc, stored: bytes });
                            }
                        });
                        if let Some(o) = outside {
                            findings.push(image_oob(self, handle, &desc, true, o, wi.global_id, loc));
                        }
                    }
                    Inst::ImageQuery { dst, image, query, n, bits } => {
                        let handle = regs[image as usize];
                        let loc = func.locs.get(pc - 1).copied().unwrap_or(u32::MAX);
                        let desc = self.globals.image(handle).ok_or_else(|| not_an_image(module, loc))?;
                        match query {
                            ImageQuery::Size => {
                                let size = desc.query_size();
                                for i in 0..n as usize {
                                    regs[dst as usize + i] = size[i] & mask(bits);
                                }
                            }
                            ImageQuery::Format => regs[dst as usize] = (desc.data_type - image::TYPE_BASE) as u64,
                            ImageQuery::Order => regs[dst as usize] = (desc.order - image::ORDER_BASE) as u64,
                        }
                    }
                    Inst::Printf { dst, fmt, first_arg, num_args } => {
                        let args: Vec<printf::PrintfArg> = func.args
                            [first_arg as usize..first_arg as usize + num_args as usize]
                            .iter()
                            .map(|a| printf_arg(a, regs))
                            .collect();
                        let fmt = mem.read_c_string(regs[fmt as usize]);
                        let text = printf::format(&fmt, &args, &mut |p| mem.read_c_string(p));
                        printf_out.push_str(&text);
                        regs[dst as usize] = 0;
                    }
                    Inst::Branch { target } => {
                        spend!();
                        pc = target as usize;
                    }
                    Inst::BranchIf { cond, then, otherwise } => {
                        spend!();
                        pc = if regs[cond as usize] != 0 { then } else { otherwise } as usize;
                    }
                    Inst::Switch { value, bits, table } => {
                        spend!();
                        let v = regs[value as usize] & mask(bits);
                        let t = &func.switch_tables[table as usize];
                        pc = t.cases.iter().find(|c| c.0 & mask(bits) == v).map_or(t.default, |c| c.1) as usize;
                    }
                    Inst::Call { func: callee, dst, first_arg, num_args } => {
                        spend!();
                        if wi.frames.len() >= MAX_FRAMES {
                            return Err(ExecError::Fault("call stack too deep".into()));
                        }
                        let target = &module.functions[callee as usize];
                        let new_base = wi.regs.len();
                        wi.regs.extend_from_slice(&target.template);
                        for (arg, &(param, n)) in func.args[first_arg as usize..first_arg as usize + num_args as usize]
                            .iter()
                            .zip(&target.params)
                        {
                            let from = base + arg.reg as usize;
                            wi.regs.copy_within(from..from + n as usize, new_base + param as usize);
                        }
                        wi.frames.push(Frame {
                            func: wi.func,
                            return_pc: pc as u32,
                            base: wi.base,
                            dst: wi.base + dst,
                            private_mark: mem.private.len() as u32,
                        });
                        wi.func = callee;
                        wi.pc = 0;
                        wi.base = new_base as u32;
                        continue 'frames;
                    }
                    Inst::Return { src, n } => {
                        let Some(frame) = wi.frames.pop() else {
                            return Ok(Yield::Done);
                        };
                        let from = base + src as usize;
                        wi.regs.copy_within(from..from + n as usize, frame.dst as usize);
                        wi.regs.truncate(base);
                        mem.private.truncate(frame.private_mark as usize);
                        wi.func = frame.func;
                        wi.pc = frame.return_pc;
                        wi.base = frame.base;
                        continue 'frames;
                    }
                    Inst::Unreachable { loc } => {
                        return Err(ExecError::Fault(format!("reached unreachable code at {}", module.location(loc))));
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

/// Reports a completed `memmove` of `n` bytes as a load of the source and a store of the
/// destination, in chunks small enough to carry the stored bytes on the stack.
fn observe_copy(mem: &mut Memory, to: u64, from: u64, n: usize, loc: u32, report: &mut dyn FnMut(&Access)) {
    const CHUNK: usize = 64;
    let mut done = 0;
    while done < n {
        let len = CHUNK.min(n - done);
        let mut bytes = [0u8; CHUNK];
        for (i, b) in bytes[..len].iter_mut().enumerate() {
            *b = mem.load(to + (done + i) as u64, 1).unwrap_or(0) as u8;
        }
        let at = done as u64;
        report(&Access { kind: AccessKind::Load, addr: from + at, size: len as u32, loc, stored: &[] });
        report(&Access { kind: AccessKind::Store, addr: to + at, size: len as u32, loc, stored: &bytes[..len] });
        done += len;
    }
}

fn oob(launch: &Launch, mem: &Memory, f: Fault, store: bool, global_id: [u64; 3], loc: u32) -> Finding {
    let (space, index, offset) = split(f.addr);
    let (space_name, allocation, alloc_size) = match space {
        1 => {
            let constant = launch.globals.constant.get(index as usize).copied().unwrap_or(false);
            let name = launch.globals.names.get(index as usize).cloned().unwrap_or_else(|| "invalid".into());
            (if constant { "constant" } else { "global" }, name, launch.globals.len(index).unwrap_or(0) as u64)
        }
        SPACE_LOCAL => {
            let len = mem.local_regions.get(index as usize).map_or(0, |r| r.1) as u64;
            let name = launch
                .module
                .locals
                .get(index as usize)
                .map(|v| v.name.clone())
                .unwrap_or_else(|| format!("local argument {index}"));
            ("local", name, len)
        }
        SPACE_PRIVATE => ("private", "private memory".into(), mem.private.len() as u64),
        _ if f.addr == 0 => ("global", "NULL".into(), 0),
        _ => ("unknown", "invalid pointer".into(), 0),
    };
    Finding::OutOfBounds {
        store,
        space: space_name,
        allocation,
        offset: offset as i64,
        size: f.size,
        alloc_size,
        global_id,
        loc,
    }
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
    launch: &Launch,
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

fn printf_arg(a: &ir::Arg, regs: &[u64]) -> printf::PrintfArg {
    let one = |v: u64| match a.kind {
        ir::ArgKind::Int(b) => printf::PrintfArg::Int { bits: b as u32, value: v & mask(b) },
        ir::ArgKind::Float(b) => printf::PrintfArg::Float(float_lane(v, b)),
        _ => printf::PrintfArg::Pointer(v),
    };
    let lanes = &regs[a.reg as usize..a.reg as usize + a.n as usize];
    if a.n > 1 { printf::PrintfArg::Vector(lanes.iter().map(|&v| one(v)).collect()) } else { one(lanes[0]) }
}

#[inline(always)]
fn int_op(op: IntOp, bits: u8, x: u64, y: u64) -> u64 {
    let m = mask(bits);
    let (sx, sy) = (sign_extend(x, bits), sign_extend(y, bits));
    let shift = (y % bits.max(1) as u64) as u32;
    let r = match op {
        IntOp::Add => x.wrapping_add(y),
        IntOp::Sub => x.wrapping_sub(y),
        IntOp::Mul => x.wrapping_mul(y),
        IntOp::UDiv => x.checked_div(y).unwrap_or(0),
        IntOp::SDiv => sx.checked_div(sy).unwrap_or(0) as u64,
        IntOp::URem => x.checked_rem(y).unwrap_or(0),
        IntOp::SRem => sx.checked_rem(sy).unwrap_or(0) as u64,
        IntOp::SMod => {
            let r = sx.checked_rem(sy).unwrap_or(0);
            (if r != 0 && (r < 0) != (sy < 0) { r + sy } else { r }) as u64
        }
        IntOp::And => x & y,
        IntOp::Or => x | y,
        IntOp::Xor => x ^ y,
        IntOp::Shl => x << shift,
        IntOp::LShr => x >> shift,
        IntOp::AShr => (sx >> shift) as u64,
    };
    r & m
}

trait Float:
    Copy
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Rem<Output = Self>
    + PartialOrd
{
    fn zero() -> Self;
    fn copysign_of(self, s: Self) -> Self;
}
impl Float for f32 {
    fn zero() -> Self {
        0.0
    }
    fn copysign_of(self, s: Self) -> Self {
        self.copysign(s)
    }
}
impl Float for f64 {
    fn zero() -> Self {
        0.0
    }
    fn copysign_of(self, s: Self) -> Self {
        self.copysign(s)
    }
}

#[inline(always)]
fn float_op<F: Float>(op: FloatOp, x: F, y: F) -> F {
    match op {
        FloatOp::Add => x + y,
        FloatOp::Sub => x - y,
        FloatOp::Mul => x * y,
        FloatOp::Div => x / y,
        FloatOp::Rem => x % y,
        FloatOp::Mod => {
            // The result takes the sign of the divisor.
            let r = x % y;
            if r != F::zero() && (r < F::zero()) != (y < F::zero()) { r + y } else { r.copysign_of(y) }
        }
    }
}

/// A denormal float of `bits` (32 or 64) as a zero of the same sign; anything else unchanged.
fn flush(v: u64, bits: u8) -> u64 {
    match bits {
        32 if v & 0x7f80_0000 == 0 => v & 0x8000_0000,
        64 if v & 0x7ff0_0000_0000_0000 == 0 => v & 0x8000_0000_0000_0000,
        _ => v,
    }
}

/// Float arithmetic under `-cl-denorms-are-zero`: denormal operands and results are zeros.
#[inline(never)]
fn flushed_op(op: FloatOp, bits: u8, x: u64, y: u64) -> u64 {
    match bits {
        64 => flush(float_op(op, f64_of(flush(x, 64)), f64_of(flush(y, 64))).to_bits(), 64),
        32 => flush(bits_f32(float_op(op, f32_of(flush(x, 32)), f32_of(flush(y, 32)))), 32),
        _ => half_op(op, x, y),
    }
}

/// Half-precision arithmetic: single precision carries more than twice half's 11 significant
/// bits plus two, so computing there and rounding once to half is correctly rounded.
#[inline(never)]
fn half_op(op: FloatOp, x: u64, y: u64) -> u64 {
    let r = float_op(op, half::to_f32(x as u16), half::to_f32(y as u16));
    half::from_f64(r as f64, ir::HalfRound::Rte) as u64
}

#[inline(always)]
fn compare(cmp: Cmp, bits: u8, x: u64, y: u64) -> bool {
    let (fx, fy) = (float_lane(x, bits), float_lane(y, bits));
    let unordered = fx.is_nan() || fy.is_nan();
    let (sx, sy) = (sign_extend(x, bits), sign_extend(y, bits));
    let (ux, uy) = (x & mask(bits), y & mask(bits));
    match cmp {
        Cmp::Eq => ux == uy,
        Cmp::Ne => ux != uy,
        Cmp::ULt => ux < uy,
        Cmp::ULe => ux <= uy,
        Cmp::UGt => ux > uy,
        Cmp::UGe => ux >= uy,
        Cmp::SLt => sx < sy,
        Cmp::SLe => sx <= sy,
        Cmp::SGt => sx > sy,
        Cmp::SGe => sx >= sy,
        Cmp::FOrdEq => fx == fy,
        Cmp::FOrdNe => !unordered && fx != fy,
        Cmp::FOrdLt => fx < fy,
        Cmp::FOrdLe => fx <= fy,
        Cmp::FOrdGt => fx > fy,
        Cmp::FOrdGe => fx >= fy,
        Cmp::FUnordEq => unordered || fx == fy,
        Cmp::FUnordNe => fx != fy,
        Cmp::FUnordLt => unordered || fx < fy,
        Cmp::FUnordLe => unordered || fx <= fy,
        Cmp::FUnordGt => unordered || fx > fy,
        Cmp::FUnordGe => unordered || fx >= fy,
        Cmp::FOrd => !unordered,
        Cmp::FUnord => unordered,
    }
}

#[inline(always)]
fn unary(op: UnOp, bits: u8, x: u64) -> u64 {
    let f = float_lane(x, bits);
    match op {
        UnOp::INeg => x.wrapping_neg() & mask(bits),
        UnOp::Not => !x & mask(bits),
        UnOp::FNeg => x ^ (1u64 << (bits - 1)),
        UnOp::LogicalNot => (x == 0) as u64,
        UnOp::IsNan => f.is_nan() as u64,
        UnOp::IsInf => f.is_infinite() as u64,
        UnOp::IsFinite => f.is_finite() as u64,
        UnOp::IsNormal => {
            (match bits {
                32 => f32_of(x).is_normal(),
                16 => !matches!((x >> 10) & 0x1f, 0 | 0x1f),
                _ => f.is_normal(),
            }) as u64
        }
        UnOp::SignBitSet => (x >> (bits - 1)) & 1,
        UnOp::BitCount => (x & mask(bits)).count_ones() as u64,
        UnOp::BitReverse => (x.reverse_bits() >> (64 - bits as u32)) & mask(bits),
    }
}

/// Rounds an exact value to an integer by a rounding mode (default: toward zero).
fn round_to_int(x: f64, round: Round) -> f64 {
    match round {
        Round::Default | Round::Rtz => x.trunc(),
        Round::Rte => x.round_ties_even(),
        Round::Rtp => x.ceil(),
        Round::Rtn => x.floor(),
    }
}

/// Stores an f64 into a float slot of `bits`, rounding by `round`.
fn narrow_float(x: f64, to: u8, round: Round) -> u64 {
    match to {
        64 => x.to_bits(),
        16 => {
            let r = match round {
                Round::Rtz => ir::HalfRound::Rtz,
                Round::Rtp => ir::HalfRound::Rtp,
                Round::Rtn => ir::HalfRound::Rtn,
                _ => ir::HalfRound::Rte,
            };
            half::from_f64(x, r) as u64
        }
        _ => {
            let mut r = x as f32;
            if !x.is_nan() && r as f64 != x {
                match round {
                    Round::Rtz if (r as f64).abs() > x.abs() => r = step_toward_zero(r),
                    Round::Rtp if (r as f64) < x => r = r.next_up(),
                    Round::Rtn if (r as f64) > x => r = r.next_down(),
                    _ => {}
                }
            }
            bits_f32(r)
        }
    }
}

fn step_toward_zero(r: f32) -> f32 {
    if r > 0.0 { r.next_down() } else { r.next_up() }
}

/// Converts an exact integer to a float slot with a rounding mode.
fn int_to_float(v: i128, to: u8, round: Round) -> u64 {
    let nearest = v as f64;
    if to == 64 {
        let exact = nearest as i128 == v;
        let r = match round {
            _ if exact => nearest,
            Round::Rtz if (nearest as i128).abs() > v.abs() => {
                if nearest > 0.0 {
                    nearest.next_down()
                } else {
                    nearest.next_up()
                }
            }
            Round::Rtp if (nearest as i128) < v => nearest.next_up(),
            Round::Rtn if (nearest as i128) > v => nearest.next_down(),
            _ => nearest,
        };
        return r.to_bits();
    }
    // Through f64 is exact for |v| < 2^53; larger values round twice only in the last bit, so
    // decide the f32 rounding against the exact integer.
    let mut r = v as f32;
    let rv = r as i128;
    if rv != v {
        match round {
            Round::Rtz if rv.abs() > v.abs() => r = step_toward_zero(r),
            Round::Rtp if rv < v => r = r.next_up(),
            Round::Rtn if rv > v => r = r.next_down(),
            _ => {}
        }
    }
    if to == 16 {
        return narrow_float(r as f64, 16, round);
    }
    bits_f32(r)
}

#[inline]
fn convert(conv: Conv, from: u8, to: u8, x: u64) -> u64 {
    match conv {
        Conv::UInt | Conv::PtrInt => x & mask(from) & mask(to),
        Conv::SInt => sign_extend(x, from) as u64 & mask(to),
        _ => convert_slow(conv, from, to, x),
    }
}

/// The conversions that saturate or involve floats, kept out of the hot loop.
#[inline(never)]
fn convert_slow(conv: Conv, from: u8, to: u8, x: u64) -> u64 {
    let m = mask(to);
    match conv {
        Conv::UInt | Conv::PtrInt | Conv::SInt => convert(conv, from, to, x),
        Conv::SatInt { src_signed, dst_signed } => {
            let v: i128 = if src_signed { sign_extend(x, from) as i128 } else { (x & mask(from)) as i128 };
            let (lo, hi) = int_range(to, dst_signed);
            (v.clamp(lo, hi) as u64) & m
        }
        Conv::FloatToSInt { sat, round } | Conv::FloatToUInt { sat, round } => {
            let signed = matches!(conv, Conv::FloatToSInt { .. });
            let f = round_to_int(float_lane(x, from), round);
            let (lo, hi) = int_range(to, signed);
            // Out-of-range values are undefined without `_sat`; saturating them too is one of
            // the allowed answers and keeps the host free of undefined behaviour.
            let _ = sat;
            let v: i128 = if f.is_nan() { 0 } else { (f.clamp(lo as f64, hi as f64) as i128).clamp(lo, hi) };
            (v as u64) & m
        }
        Conv::SIntToFloat { round } => int_to_float(sign_extend(x, from) as i128, to, round),
        Conv::UIntToFloat { round } => int_to_float((x & mask(from)) as i128, to, round),
        Conv::Float { round } => narrow_float(float_lane(x, from), to, round),
    }
}

fn int_range(bits: u8, signed: bool) -> (i128, i128) {
    if signed { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) } else { (0, (1i128 << bits) - 1) }
}

fn atomic_update(op: AtomicOp, bits: u8, old: u64, v: u64, c: u64) -> Option<u64> {
    let m = mask(bits);
    let (so, sv) = (sign_extend(old, bits), sign_extend(v, bits));
    Some(
        match op {
            AtomicOp::Load => return None,
            AtomicOp::Store | AtomicOp::Exchange => v,
            AtomicOp::CompareExchange => {
                if old & m == c & m {
                    v
                } else {
                    return None;
                }
            }
            AtomicOp::Add => old.wrapping_add(v),
            AtomicOp::Sub => old.wrapping_sub(v),
            AtomicOp::Inc => old.wrapping_add(1),
            AtomicOp::Dec => old.wrapping_sub(1),
            AtomicOp::SMin => so.min(sv) as u64,
            AtomicOp::SMax => so.max(sv) as u64,
            AtomicOp::UMin => (old & m).min(v & m),
            AtomicOp::UMax => (old & m).max(v & m),
            AtomicOp::And => old & v,
            AtomicOp::Or => old | v,
            AtomicOp::Xor => old ^ v,
            AtomicOp::FlagTestAndSet => 1,
            AtomicOp::FlagClear => 0,
        } & m,
    )
}

/// One lane of an OpenCL.std function. `n` tells scalar from vector for `select`.
fn math_lane(op: Cl, kind: MathKind, n: u16, a: u64, b: u64, c: u64) -> Option<u64> {
    let bits = match kind {
        MathKind::F16 => 16,
        MathKind::F32 => 32,
        MathKind::F64 => 64,
        MathKind::Int(b) => b,
    };
    match op {
        Cl::bitselect => return Some((a & !c) | (b & c)),
        Cl::select => {
            let pick = if n == 1 { c != 0 } else { (c >> (bits - 1)) & 1 != 0 };
            return Some(if pick { b } else { a });
        }
        _ => {}
    }
    match kind {
        MathKind::F16 => {
            // In single precision, then rounded to half: within half's (looser) error bounds.
            let f = |v: u64| bits_f32(half::to_f32(v as u16));
            let single = match op {
                Cl::ilogb => return Some(math::ilogb32(half::to_f32(a as u16)) as u32 as u64),
                Cl::ldexp | Cl::pown | Cl::rootn => math::with_int32(op, half::to_f32(a as u16), b as u32 as i32)?,
                Cl::nan => return Some(0x7e00 | (a & 0x01ff)),
                _ => math::float32(op, half::to_f32(a as u16), f32_of(f(b)), f32_of(f(c)))?,
            };
            Some(half::from_f64(single as f64, ir::HalfRound::Rte) as u64)
        }
        MathKind::F32 => match op {
            Cl::ilogb => Some(math::ilogb32(f32_of(a)) as u32 as u64),
            Cl::ldexp | Cl::pown | Cl::rootn => math::with_int32(op, f32_of(a), b as u32 as i32).map(bits_f32),
            Cl::nan => Some(bits_f32(f32::from_bits(0x7fc0_0000 | (a as u32 & 0x003f_ffff)))),
            _ => math::float32(op, f32_of(a), f32_of(b), f32_of(c)).map(bits_f32),
        },
        MathKind::F64 => match op {
            Cl::ilogb => Some(math::ilogb64(f64_of(a)) as u32 as u64),
            Cl::ldexp | Cl::pown | Cl::rootn => math::with_int64(op, f64_of(a), b as u32 as i32).map(f64::to_bits),
            Cl::nan => Some(f64::from_bits(0x7ff8_0000_0000_0000 | (a & 0x0007_ffff_ffff_ffff)).to_bits()),
            _ => math::float64(op, f64_of(a), f64_of(b), f64_of(c)).map(f64::to_bits),
        },
        MathKind::Int(bits) => match op {
            Cl::u_upsample | Cl::s_upsample => Some(((a & mask(bits)) << bits) | (b & mask(bits))),
            _ => math::integer(op, bits as u32, a & mask(bits), b & mask(bits), c & mask(bits)),
        },
    }
}

fn geometric(op: Geo, bits: u8, n: usize, regs: &mut [u64], a: usize, b: usize, dst: usize) {
    let get = |regs: &[u64], r: usize, i: usize| float_lane(regs[r + i], bits);
    let put = |regs: &mut [u64], r: usize, v: f64| regs[r] = narrow_float(v, bits, Round::Rte);
    let dot = |regs: &[u64], x: usize, y: usize| (0..n).map(|i| get(regs, x, i) * get(regs, y, i)).sum::<f64>();
    match op {
        Geo::Dot => {
            let d = dot(regs, a, b);
            put(regs, dst, d);
        }
        Geo::Length | Geo::FastLength => {
            let l = dot(regs, a, a).sqrt();
            put(regs, dst, l);
        }
        Geo::Distance | Geo::FastDistance => {
            let d = (0..n).map(|i| (get(regs, a, i) - get(regs, b, i)).powi(2)).sum::<f64>().sqrt();
            put(regs, dst, d);
        }
        Geo::Normalize | Geo::FastNormalize => {
            let l = dot(regs, a, a).sqrt();
            let vals: Vec<f64> = (0..n).map(|i| get(regs, a, i)).collect();
            for (i, v) in vals.into_iter().enumerate() {
                put(regs, dst + i, if l == 0.0 { v } else { v / l });
            }
        }
        Geo::Cross => {
            let x: Vec<f64> = (0..3).map(|i| get(regs, a, i)).collect();
            let y: Vec<f64> = (0..3).map(|i| get(regs, b, i)).collect();
            let c = [x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0]];
            for (i, v) in c.into_iter().enumerate() {
                put(regs, dst + i, v);
            }
            if n == 4 {
                put(regs, dst + 3, 0.0);
            }
        }
    }
}
