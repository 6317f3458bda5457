//! Inlining of small helper functions: a call of a small function that only computes (no
//! barrier, collective, asynchronous copy, atomic, fence, private allocation, printf or call of
//! its own) is replaced by the callee's body, so that a work-item no longer leaves its straight
//! run of code, lays a frame and copies arguments and results at every call (CLBlast's GEMM
//! makes a few calls to one-line loaders per multiply-add).
//!
//! The callee's registers get fresh slots at the end of the caller's frame (their template
//! values appended to the caller's, its `OpUndef` registers to the caller's undefined list),
//! but for a constant read as one slot, which reads the caller's constant of its value where
//! there is one, and slots nothing names, which go; its index, lane, argument and switch tables
//! are appended with their registers and targets renumbered. A parameter the callee never
//! writes reads the call's argument register in place; any other is a `Mov` from the argument,
//! with the call's location. Each `Return`
//! becomes a `Mov` of its value into the call's destination (with the return's location)
//! followed, where it is not the callee's last instruction, by a branch to the code after the
//! call. Every instruction keeps its source location, so findings name the same lines.
//!
//! What every work-item computes, stores and reports is unchanged:
//! - a function's frame is laid once per work-group and then keeps its values from call to
//!   call; a callee that read a register before writing it (other than a parameter, a constant
//!   or an `OpUndef` value) would read, inlined, what its copy at this call site left rather
//!   than what the last call anywhere left. Such a callee is not inlined: every register it
//!   reads is written first on every path from its entry (a forward data flow).
//! - the uninitialised-value check sees the same copies: an argument copied into a parameter
//!   becomes a `Mov`, which carries its shadow, and a parameter read in place reads the
//!   argument's own shadow, which nothing changes during the body.
//! - the callee's branches part and join the work-items as they did: its body has one way in
//!   and every way out goes to the code after the call, where the paths met before (at the
//!   return). Barrier and divergence findings name barriers by function and position, and none
//!   is ever inlined.
//! - the branch budget (endless-kernel detection) is charged one unit less per call, and one
//!   unit per branch from a return that is not the callee's last instruction.
//!
//! A callee of at most [`MAX_CALLEE`] instructions qualifies: a helper's body is duplicated at
//! every call site, and the cost saved per call (frame, copies, the end of a straight run) does
//! not grow with the body, so large bodies gain little and grow the code and the register file.
//! A kernel's function may be inlined into another function (its own copy stays for the
//! host's launches); nothing is inlined into a kernel entry that only calls its body (the
//! driver skips those, see `peephole::skip_trampolines`). Callees are inlined after their own
//! calls were, so a helper calling a helper is inlined whole.
//!
//! What it cannot see: values, and the other passes (which fold what inlining makes known
//! afterwards). It reasons from register numbers ([`ir::operands`]) and the control flow of
//! instructions only.

use std::collections::HashMap;

use super::base::{constant_registers, for_each_named, retarget, successors, use_counts};
use crate::ir::operands::{self, Use};
use crate::ir::{self, Arg, Function, Index, Inst, Reg};

/// The most instructions a callee may have to be inlined.
pub const MAX_CALLEE: usize = 200;

/// Replaces every call in `func` of a function that qualifies by its body; returns how many
/// calls were inlined. The callees are read from `module` (which `func` is not in).
pub fn inline_calls(module: &ir::Module, func: &mut Function) -> usize {
    let entry_stub = matches!(func.code[..], [Inst::Call { .. }, Inst::Return { n: 0, .. }]);
    if entry_stub || !func.code.iter().any(|i| matches!(i, Inst::Call { .. })) {
        return 0;
    }
    let mut shapes: Vec<Option<Option<Shape>>> = vec![None; module.functions.len()];
    let own_tables = func.switch_tables.len();
    // The caller's constant registers by value (the lowest of each), which the callees'
    // constants of the same value share.
    let (_, writes) = use_counts(module, func);
    let mut constants: HashMap<u64, Reg> = HashMap::new();
    for (r, &c) in constant_registers(func, &writes).iter().enumerate().rev() {
        if c {
            constants.insert(func.template[r], r as Reg);
        }
    }
    let mut sites: Vec<(usize, Splice)> = Vec::new();
    for pc in 0..func.code.len() {
        let Inst::Call { func: callee, dst, first_arg, num_args } = func.code[pc] else { continue };
        let Some(c) = module.functions.get(callee as usize) else { continue };
        let Some(shape) = shapes[callee as usize].get_or_insert_with(|| Shape::of(module, c)) else { continue };
        let range = first_arg as usize..first_arg as usize + num_args as usize;
        let Some(args) = func.args.get(range).map(<[Arg]>::to_vec) else { continue };
        if args.len() != c.params.len() {
            continue;
        }
        let loc = func.locs.get(pc).copied().unwrap_or(u32::MAX);
        let splice = splice(module, func, (c, shape), Site { dst, args: &args, loc }, &mut constants);
        sites.push((pc, splice));
    }
    if !sites.is_empty() {
        rebuild(func, &sites, own_tables);
    }
    sites.len()
}

/// What the splices of a callee that may be inlined share, per slot of its frame.
#[derive(Clone)]
struct Shape {
    /// Named by an instruction, a side table, a parameter or an undefined value: needs a slot.
    used: Vec<bool>,
    /// A constant read only as a single slot: may share a caller's constant of its value.
    shared: Vec<bool>,
    /// Per parameter: never written, and every range touching it within it (see [`read_only`]).
    read_only: Vec<bool>,
    /// The slots its returns copy (the call's destination's width).
    returned: u64,
}

impl Shape {
    /// The shape of `callee`, or None when it may not be inlined.
    fn of(module: &ir::Module, callee: &Function) -> Option<Shape> {
        if !inlinable(module, callee) {
            return None;
        }
        let slots = callee.template.len();
        let (mut used, mut multi) = (vec![false; slots], vec![false; slots]);
        let mut in_range = true;
        let mut mark = |r: Reg, n: u64| {
            in_range &= r as u64 + n <= slots as u64;
            for s in r as usize..(r as u64 + n).min(slots as u64) as usize {
                used[s] = true;
                multi[s] |= n > 1;
            }
        };
        for_each_named(module, callee, &mut mark);
        if !in_range {
            return None;
        }
        let (_, writes) = use_counts(module, callee);
        let constant = constant_registers(callee, &writes);
        let shared = (0..slots).map(|s| constant[s] && !multi[s]).collect();
        let read_only = callee.params.iter().map(|&(p, n)| read_only(module, callee, p, n as u64)).collect();
        let returned = callee.code.iter().filter_map(|i| if let Inst::Return { n, .. } = i { Some(*n) } else { None });
        Some(Shape { used, shared, read_only, returned: returned.max().unwrap_or(0) as u64 })
    }
}

/// Whether `callee` may be inlined (see the module doc).
fn inlinable(module: &ir::Module, callee: &Function) -> bool {
    let Some(last) = callee.code.last() else { return false };
    let stays = |inst: &Inst| {
        !matches!(
            inst,
            Inst::Barrier { .. }
                | Inst::Collective { .. }
                | Inst::AsyncCopy { .. }
                | Inst::WaitEvents { .. }
                | Inst::Atomic { .. }
                | Inst::MemoryFence { .. }
                | Inst::Alloca { .. }
                | Inst::Printf { .. }
                | Inst::Call { .. }
        )
    };
    let falls_off = !matches!(
        last,
        Inst::Return { .. }
            | Inst::Branch { .. }
            | Inst::BranchIf { .. }
            | Inst::Switch { .. }
            | Inst::Unreachable { .. }
    );
    callee.code.len() <= MAX_CALLEE
        && callee.locs.len() == callee.code.len()
        && !falls_off
        && callee.code.iter().all(stays)
        && callee.code.iter().any(|i| matches!(i, Inst::Return { .. }))
        && writes_before_reads(module, callee)
}

/// A fixed-size set of register slots.
#[derive(Clone, PartialEq, Eq)]
struct Slots(Vec<u64>);

impl Slots {
    fn new(len: usize) -> Slots {
        Slots(vec![0; len.div_ceil(64)])
    }

    fn insert(&mut self, r: u64, n: u64) {
        for s in r..r + n {
            if let Some(w) = self.0.get_mut((s / 64) as usize) {
                *w |= 1 << (s % 64);
            }
        }
    }

    fn contains(&self, s: u64) -> bool {
        self.0.get((s / 64) as usize).is_some_and(|w| w & (1 << (s % 64)) != 0)
    }

    /// Keeps only what `other` holds too; whether anything went.
    fn intersect(&mut self, other: &Slots) -> bool {
        let mut changed = false;
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            changed |= *a & !b != 0;
            *a &= b;
        }
        changed
    }
}

/// Whether every register `func` reads is, on every path from its entry, a parameter, a
/// register nothing in it writes (a constant or an `OpUndef` value), or written before.
fn writes_before_reads(module: &ir::Module, func: &Function) -> bool {
    let slots = func.template.len();
    let mut in_range = true;
    let mut ever = Slots::new(slots);
    for inst in &func.code {
        operands::for_each(module, func, inst, |r, n, u| {
            in_range &= r as u64 + n <= slots as u64;
            if u == Use::Write {
                ever.insert(r as u64, n);
            }
        });
    }
    if !in_range || func.params.iter().any(|&(p, n)| p as usize + n as usize > slots) {
        return false;
    }
    let mut entry = Slots::new(slots);
    for &(p, n) in &func.params {
        entry.insert(p as u64, n as u64);
    }
    let successors = successors(func);
    // `before[pc]`: the slots written on every path to `pc` seen so far (None: not reached).
    let mut before: Vec<Option<Slots>> = vec![None; func.code.len()];
    before[0] = Some(entry);
    let mut work = vec![0usize];
    while let Some(pc) = work.pop() {
        let Some(mut after) = before[pc].clone() else { continue };
        operands::for_each(module, func, &func.code[pc], |r, n, u| {
            if u == Use::Write {
                after.insert(r as u64, n);
            }
        });
        for &s in &successors[pc] {
            match &mut before[s] {
                Some(known) => {
                    if known.intersect(&after) {
                        work.push(s);
                    }
                }
                none => {
                    *none = Some(after.clone());
                    work.push(s);
                }
            }
        }
    }
    func.code.iter().zip(&before).all(|(inst, written)| {
        let Some(written) = written else { return true };
        let mut ok = true;
        operands::for_each(module, func, inst, |r, n, u| {
            if u == Use::Read {
                ok &= (r as u64..r as u64 + n).all(|s| !ever.contains(s) || written.contains(s));
            }
        });
        ok
    })
}

/// Whether parameter slots `p..p + n` of `func` can be read in place from the argument: no
/// instruction writes them, and every register range that touches them lies within them (so
/// that renaming the first register of a range renames all of it).
fn read_only(module: &ir::Module, func: &Function, p: Reg, n: u64) -> bool {
    func.code.iter().all(|inst| {
        let mut ok = true;
        operands::for_each(module, func, inst, |r, k, u| {
            if operands::overlap(r, k, p, n) {
                ok &= u == Use::Read && r >= p && r as u64 + k <= p as u64 + n;
            }
        });
        ok
    })
}

/// A call being inlined: its destination, arguments and source location.
struct Site<'a> {
    dst: Reg,
    args: &'a [Arg],
    loc: u32,
}

/// A callee's body made ready to replace one call: its code and locations, branch targets
/// counted from the splice's first instruction (its length for the code after the call), and
/// the switch tables appended to the caller for it, whose targets are counted the same way.
struct Splice {
    code: Vec<Inst>,
    locs: Vec<u32>,
    tables: std::ops::Range<usize>,
}

/// The body of `callee` for the call `site` of `func`: gives the callee's slots registers of the
/// caller (fresh ones, its arguments for parameters read in place, `constants` of the caller
/// for its constants), appends its undefined registers and side tables to `func`, renumbered,
/// and returns the code.
fn splice(
    module: &ir::Module,
    func: &mut Function,
    (callee, shape): (&Function, &Shape),
    site: Site,
    constants: &mut HashMap<u64, Reg>,
) -> Splice {
    // Where each used callee slot goes (slots nothing names go nowhere).
    let mut map: Vec<Reg> = vec![Reg::MAX; callee.template.len()];
    let mut moved = Vec::new();
    for ((&(p, n), arg), &read_only) in callee.params.iter().zip(site.args).zip(&shape.read_only) {
        if read_only && !operands::overlap(arg.reg, n as u64, site.dst, shape.returned) {
            for k in 0..n as Reg {
                map[(p + k) as usize] = arg.reg + k;
            }
        }
    }
    for (s, slot) in map.iter_mut().enumerate() {
        if !shape.used[s] || *slot != Reg::MAX {
            continue;
        }
        let value = callee.template[s];
        *slot = match constants.get(&value) {
            Some(&r) if shape.shared[s] => r,
            _ => {
                let r = func.template.len() as Reg;
                func.template.push(value);
                if shape.shared[s] {
                    constants.insert(value, r);
                }
                r
            }
        };
    }
    let rename = |r: Reg| map[r as usize];
    for ((&(p, n), arg), &read_only) in callee.params.iter().zip(site.args).zip(&shape.read_only) {
        if n > 0 && !(read_only && rename(p) == arg.reg) {
            moved.push(Inst::Mov { dst: rename(p), src: arg.reg, n });
        }
    }
    func.undefined.extend(callee.undefined.iter().map(|&(r, n)| (rename(r), n)));
    let first_index = func.indices.len() as u32;
    func.indices.extend(callee.indices.iter().map(|i| Index { reg: rename(i.reg), ..*i }));
    let first_lane = func.lanes.len() as u32;
    func.lanes.extend(callee.lanes.iter().map(|&r| rename(r)));
    let first_arg = func.args.len() as u32;
    func.args.extend(callee.args.iter().map(|a| Arg { reg: rename(a.reg), ..*a }));
    let first_table = func.switch_tables.len();
    func.switch_tables.extend(callee.switch_tables.iter().cloned());
    let tables = first_table..func.switch_tables.len();

    let mut locs = vec![site.loc; moved.len()];
    let mut code = moved;
    // `at[j]`: where callee instruction `j` starts in the splice; `at[len]`: after it.
    let end = callee.code.len();
    let mut at = vec![0u32; end + 1];
    for (j, inst) in callee.code.iter().enumerate() {
        at[j] = code.len() as u32;
        let loc = callee.locs[j];
        let mut inst = inst.clone();
        if let Inst::Return { src, n } = inst {
            if n > 0 {
                code.push(Inst::Mov { dst: site.dst, src: rename(src), n });
                locs.push(loc);
            }
            if j + 1 < end {
                code.push(Inst::Branch { target: end as u32 });
                locs.push(loc);
            }
            continue;
        }
        operands::for_each_mut(module, &mut inst, |r, _, _| *r = rename(*r));
        match &mut inst {
            Inst::PtrOffset { first_index: f, .. } => *f += first_index,
            Inst::IndexCheck { index, .. } => *index += first_index,
            Inst::Shuffle { first, .. } => *first += first_lane,
            Inst::Printf { first_arg: f, .. } | Inst::Call { first_arg: f, .. } => *f += first_arg,
            Inst::Switch { table, .. } => *table += first_table as u32,
            _ => {}
        }
        code.push(inst);
        locs.push(loc);
    }
    at[end] = code.len() as u32;
    let to = |t: &mut u32| *t = at.get(*t as usize).copied().unwrap_or(at[end]);
    for inst in &mut code[at[0] as usize..] {
        retarget(inst, to);
    }
    for table in &mut func.switch_tables[tables.clone()] {
        to(&mut table.default);
        table.cases.iter_mut().for_each(|c| to(&mut c.1));
    }
    Splice { code, locs, tables }
}

/// Replaces the calls at `sites` (in order) by their splices and renumbers every target: the
/// caller's own (and its first `own_tables` switch tables') to where its instructions went, the
/// splices' from where each was put.
fn rebuild(func: &mut Function, sites: &[(usize, Splice)], own_tables: usize) {
    let n = func.code.len();
    let mut new_pc = vec![0u32; n + 1];
    let mut next = 0u32;
    let mut s = sites.iter().peekable();
    for (pc, slot) in new_pc.iter_mut().enumerate().take(n) {
        *slot = next;
        next += match s.next_if(|(p, _)| *p == pc) {
            Some((_, splice)) => splice.code.len() as u32,
            None => 1,
        };
    }
    new_pc[n] = next;
    let map = |t: &mut u32| *t = new_pc.get(*t as usize).copied().unwrap_or(*t);
    let (code, locs) = (std::mem::take(&mut func.code), std::mem::take(&mut func.locs));
    let mut s = sites.iter().peekable();
    for (pc, (mut inst, loc)) in code.into_iter().zip(locs).enumerate() {
        if let Some((_, splice)) = s.next_if(|(p, _)| *p == pc) {
            let start = new_pc[pc];
            for mut inst in splice.code.iter().cloned() {
                retarget(&mut inst, |t| *t += start);
                func.code.push(inst);
            }
            func.locs.extend_from_slice(&splice.locs);
            for table in &mut func.switch_tables[splice.tables.clone()] {
                table.default += start;
                table.cases.iter_mut().for_each(|c| c.1 += start);
            }
            continue;
        }
        retarget(&mut inst, map);
        func.code.push(inst);
        func.locs.push(loc);
    }
    for table in &mut func.switch_tables[..own_tables] {
        map(&mut table.default);
        table.cases.iter_mut().for_each(|c| map(&mut c.1));
    }
    func.joins.clear();
}
