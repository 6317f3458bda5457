//! What the passes of [`super`] share: where blocks end and which instructions are branch
//! targets ([`branch_targets`], [`ends_block`], [`successors`]), how many instructions read and
//! write each register ([`use_counts`], [`kept_use_counts`], [`counts`], [`Facts`]), what
//! straight-line code writes ([`straight_line_writer`], [`written_between`],
//! [`overwritten_after`]), which code the entry
//! reaches ([`reachable`]), which instructions only compute ([`only_computes`]), how branch
//! targets are renumbered ([`retarget`], [`retarget_tables`]), which registers are constants
//! ([`constant_registers`]) and the integer arithmetic the passes fold as the
//! interpreter computes it ([`fold_int`], [`fold_compare`], [`fold_convert`]), what a private
//! variable's access becomes once its element lives in a register ([`element_access`]), which
//! register ranges a function names ([`for_each_named`]) and its call graph ([`callees`],
//! [`callees_first`]).
//!
//! It sees the IR alone and no pass: every pass imports it, and it imports none of them.

use crate::ir::operands::{self, Use};
use crate::ir::{self, Cmp, Conv, Function, Inst, IntOp, Reg, value};

/// Whether control never passes from this instruction to the next one in the code.
pub fn ends_block(inst: &Inst) -> bool {
    matches!(inst, Inst::Branch { .. } | Inst::BranchIf { .. } | Inst::Switch { .. } | Inst::Return { .. })
}

/// Every instruction index a branch, conditional branch or switch may go to.
pub fn branch_targets(func: &Function) -> Vec<bool> {
    let mut target = vec![false; func.code.len() + 1];
    let mut mark = |t: u32| {
        if let Some(slot) = target.get_mut(t as usize) {
            *slot = true;
        }
    };
    for inst in &func.code {
        match *inst {
            Inst::Branch { target } => mark(target),
            Inst::BranchIf { then, otherwise, .. } => {
                mark(then);
                mark(otherwise);
            }
            _ => {}
        }
    }
    for table in &func.switch_tables {
        mark(table.default);
        table.cases.iter().for_each(|c| mark(c.1));
    }
    target
}

/// Read and write counts and branch targets of a function, taken once before a pass rewrites
/// it. A pass that only narrows reads, adds registers (counted as never written) and keeps its
/// branches may go on trusting them: they can only make it keep more.
pub struct Facts {
    pub reads: Vec<u32>,
    pub writes: Vec<u32>,
    pub targets: Vec<bool>,
}

impl Facts {
    pub fn of(module: &ir::Module, func: &Function) -> Facts {
        let (reads, writes) = use_counts(module, func);
        Facts { reads, writes, targets: branch_targets(func) }
    }
}

/// How many instructions read and write each register (parameters count as written once, by
/// the caller). Instructions already dropped still count, which only makes the passes keep more.
/// An array-index check's read of its element address is not counted: a merge of offset
/// chains moves the check after the merged offset and has it read that (see
/// `merge_offset_chains` in `peephole`).
pub fn use_counts(module: &ir::Module, func: &Function) -> (Vec<u32>, Vec<u32>) {
    kept_use_counts(module, func, &[])
}

/// The instructions of `func` that `keep` does not mark dropped (those past its end count as kept).
pub fn kept<'f>(func: &'f Function, keep: &'f [bool]) -> impl Iterator<Item = &'f Inst> {
    func.code.iter().enumerate().filter(|&(i, _)| keep.get(i).copied().unwrap_or(true)).map(|(_, inst)| inst)
}

/// [`use_counts`] of the instructions `keep` does not mark dropped ([`kept`]).
pub fn kept_use_counts(module: &ir::Module, func: &Function, keep: &[bool]) -> (Vec<u32>, Vec<u32>) {
    let slots = func.template.len();
    let (mut reads, mut writes) = (vec![0u32; slots], vec![0u32; slots]);
    for inst in kept(func, keep).filter(|i| !matches!(i, Inst::IndexCheck { .. })) {
        operands::for_each(module, func, inst, |r, n, u| {
            let counts = if u == Use::Read { &mut reads } else { &mut writes };
            for c in counts.iter_mut().skip(r as usize).take(n as usize) {
                *c = c.saturating_add(1);
            }
        });
    }
    for &(r, n) in &func.params {
        for c in writes.iter_mut().skip(r as usize).take(n as usize) {
            *c = c.saturating_add(1);
        }
    }
    (reads, writes)
}

/// The instruction before `p` that writes any of registers `x..x + n`, if it is reached from there by
/// straight-line code only: no instruction after it up to `p` is a branch target, and none
/// between ends a block.
pub fn straight_line_writer(
    module: &ir::Module,
    func: &Function,
    targets: &[bool],
    p: usize,
    x: u32,
    n: u64,
) -> Option<usize> {
    for q in (0..p).rev() {
        if targets[q + 1] || ends_block(&func.code[q]) {
            return None;
        }
        let mut writes_x = false;
        operands::for_each(module, func, &func.code[q], |r, k, u| {
            writes_x |= u == Use::Write && operands::overlap(r, k, x, n);
        });
        if writes_x {
            return Some(q);
        }
    }
    None
}

/// Whether an instruction of `from..to` writes register `y`.
pub fn written_between(module: &ir::Module, func: &Function, from: usize, to: usize, y: u32) -> bool {
    func.code[from..to].iter().any(|inst| {
        let mut writes = false;
        operands::for_each(module, func, inst, |r, n, u| writes |= u == Use::Write && operands::overlap(r, n, y, 1));
        writes
    })
}

/// The instructions control may go to after each one (targets past the end left out).
pub fn successors(func: &Function) -> Vec<Vec<usize>> {
    (0..func.code.len())
        .map(|pc| {
            let mut out = Vec::new();
            for_each_successor(func, pc, |t| out.push(t));
            out
        })
        .collect()
}

/// Calls `f` with each instruction control may go to after the one at `pc` (targets past the
/// end left out), without allocating: [`Function::for_each_successor`].
pub fn for_each_successor(func: &Function, pc: usize, f: impl FnMut(usize)) {
    func.for_each_successor(pc, f)
}

/// Applies `to` to the branch targets of `inst` (switch targets live in their tables).
pub fn retarget(inst: &mut Inst, mut to: impl FnMut(&mut u32)) {
    match inst {
        Inst::Branch { target } => to(target),
        Inst::BranchIf { then, otherwise, .. } => {
            to(then);
            to(otherwise);
        }
        _ => {}
    }
}

/// Applies `to` to the targets of every switch table of `func`.
pub fn retarget_tables(func: &mut Function, mut to: impl FnMut(&mut u32)) {
    for table in &mut func.switch_tables {
        to(&mut table.default);
        table.cases.iter_mut().for_each(|c| to(&mut c.1));
    }
}

/// Whether `inst` only computes the registers it writes from the registers it reads: it cannot
/// fail, report, touch memory or change the flow (a division by zero gives 0).
pub fn only_computes(inst: &Inst) -> bool {
    matches!(
        inst,
        Inst::Mov { .. }
            | Inst::IntBin { .. }
            | Inst::FloatBin { .. }
            | Inst::Compare { .. }
            | Inst::Unary { .. }
            | Inst::Convert { .. }
            | Inst::Select { .. }
            | Inst::Builtin { .. }
            | Inst::PtrOffset { .. }
            | Inst::PtrDiff { .. }
    )
}

/// Whether the straight-line code after `q` (the instructions `keep` keeps) writes all of
/// `x..x + n` before anything reads any of them: the value they hold at `q` is read by nobody
/// after it.
pub fn overwritten_after(module: &ir::Module, func: &Function, keep: &[bool], q: usize, x: Reg, n: u64) -> bool {
    for (inst, _) in func.code.iter().zip(keep).skip(q + 1).filter(|(_, kept)| **kept) {
        let mut reads = checked_index(func, inst).is_some_and(|r| operands::overlap(r, 1, x, n));
        let mut covers = false;
        operands::for_each(module, func, inst, |r, k, u| match u {
            Use::Read => reads |= operands::overlap(r, k, x, n),
            Use::Write => covers |= r <= x && x as u64 + n <= r as u64 + k,
        });
        if reads || ends_block(inst) {
            return false;
        }
        if covers {
            return true;
        }
    }
    false
}

/// The instructions reachable from the entry (instruction 0).
pub fn reachable(func: &Function) -> Vec<bool> {
    let mut seen = vec![false; func.code.len()];
    let mut work = vec![0usize];
    while let Some(pc) = work.pop() {
        if pc >= seen.len() || std::mem::replace(&mut seen[pc], true) {
            continue;
        }
        for_each_successor(func, pc, |t| work.push(t));
    }
    seen
}

/// The read and write counts of the instructions `keep` keeps ([`kept_use_counts`]), with
/// array-index checks counted too: each reads its element address and, through the
/// access-chain table, its index (`use_counts` leaves them out for the passes that move checks;
/// this one moves none, and must not fold away a register a check reads).
pub fn counts(module: &ir::Module, func: &Function, keep: &[bool]) -> (Vec<u32>, Vec<u32>) {
    let (mut reads, writes) = kept_use_counts(module, func, keep);
    for inst in kept(func, keep) {
        if let Inst::IndexCheck { ptr, .. } = *inst {
            for r in [Some(ptr), checked_index(func, inst)].into_iter().flatten() {
                if let Some(c) = reads.get_mut(r as usize) {
                    *c = c.saturating_add(1);
                }
            }
        }
    }
    (reads, writes)
}

/// The index register an array-index check reads through its table entry.
pub fn checked_index(func: &Function, inst: &Inst) -> Option<Reg> {
    match *inst {
        Inst::IndexCheck { index, .. } => func.indices.get(index as usize).map(|i| i.reg),
        _ => None,
    }
}

/// The registers that hold their template value for ever: never written (not a parameter, not
/// an `OpUndef` value, which the check of uninitialised values treats as such).
pub fn constant_registers(func: &Function, writes: &[u32]) -> Vec<bool> {
    let mut constant: Vec<bool> = writes.iter().map(|&w| w == 0).collect();
    for &(r, n) in &func.undefined {
        for c in constant.iter_mut().skip(r as usize).take(n as usize) {
            *c = false;
        }
    }
    constant
}

/// What the interpreter computes for `x op y` on `bits`-wide integers ([`value::int_op`], the
/// interpreter's own definition).
pub fn fold_int(op: IntOp, bits: u8, x: u64, y: u64) -> u64 {
    value::int_op(op, bits, x, y)
}

/// The distinct fields `(offset, width)` of a private variable's element accesses, sorted by
/// offset; `None` when there is none or two of them overlap (the variable is not a set of
/// separate elements).
pub fn disjoint_fields(accesses: impl Iterator<Item = (u32, u8)>) -> Option<Vec<(u32, u8)>> {
    let mut fields: Vec<(u32, u8)> = accesses.collect();
    fields.sort_unstable();
    fields.dedup();
    if fields.is_empty() || fields.windows(2).any(|w| w[0].0 + w[0].1 as u32 > w[1].0) {
        return None;
    }
    Some(fields)
}

/// Turns each element access `(pc, offset, width)` of the private variable made at `p` into a
/// move to or from its element's register (`register(offset, width)`, see [`element_access`]),
/// and drops the variable and the pointers `derivations` derived from it.
pub fn retarget_accesses(
    func: &mut Function,
    keep: &mut [bool],
    (p, derivations): (usize, &[usize]),
    accesses: impl Iterator<Item = (usize, u32, u8)>,
    register: impl Fn(u32, u8) -> Reg,
) {
    for (q, offset, width) in accesses {
        func.code[q] = element_access(&func.code[q], register(offset, width), width)
            .unwrap_or_else(|| unreachable!("planned on an element access, found {:?}", func.code[q]));
    }
    keep[p] = false;
    for &q in derivations {
        keep[q] = false;
    }
}

/// What the interpreter computes for an integer comparison of `bits`-wide operands.
pub fn fold_compare(cmp: Cmp, bits: u8, x: u64, y: u64) -> Option<u64> {
    value::int_compare(cmp, bits, x, y).map(u64::from)
}

/// What the interpreter computes for an integer conversion (extension or truncation).
pub fn fold_convert(conv: Conv, from: u8, to: u8, x: u64) -> Option<u64> {
    match conv {
        Conv::UInt => Some(x & value::mask(from) & value::mask(to)),
        Conv::SInt => Some(value::sign_extend(x, from) as u64 & value::mask(to)),
        _ => None,
    }
}

/// A private variable's scalar load or store (`inst`) of the element now in register `field`
/// (`width` bytes): the load a `Mov` from it, the store a truncating `Convert` into it (a `Mov`
/// for 8 bytes), what memory would have kept of the value. `None` for any other instruction.
pub fn element_access(inst: &Inst, field: Reg, width: u8) -> Option<Inst> {
    Some(match *inst {
        Inst::LoadScalar { dst, .. } => Inst::Mov { dst, src: field, n: 1 },
        Inst::StoreScalar { src, .. } => stored_into(field, src, width, 1),
        _ => return None,
    })
}

/// What a store of `n` values of `width` bytes each from registers `src..` into elements now in
/// registers `field..` becomes: a truncating `Convert` (what memory keeps of each value), a `Mov`
/// for 8 bytes.
pub fn stored_into(field: Reg, src: Reg, width: u8, n: u16) -> Inst {
    if width == 8 {
        return Inst::Mov { dst: field, src, n };
    }
    let bits = width * 8;
    Inst::Convert { conv: Conv::UInt, from: bits, to: bits, dst: field, src, n }
}

/// Calls `mark(first, count)` for every register range something in `func` names: its
/// instructions' operands ([`operands::for_each`]), its access-chain indices, shuffle lanes, call
/// and printf arguments, parameters and `OpUndef` values.
pub fn for_each_named(module: &ir::Module, func: &Function, mut mark: impl FnMut(Reg, u64)) {
    for inst in &func.code {
        operands::for_each(module, func, inst, |r, n, _| mark(r, n));
    }
    for_each_in_side_tables(func, &mut mark);
    func.params.iter().chain(&func.undefined).for_each(|&(r, n)| mark(r, n as u64));
}

/// Calls `mark(first, count)` for every register range the side tables of `func` name (all of
/// them read by the instructions that point there): access-chain indices, shuffle lanes, call
/// and printf arguments.
pub fn for_each_in_side_tables(func: &Function, mut mark: impl FnMut(Reg, u64)) {
    func.indices.iter().for_each(|i| mark(i.reg, 1));
    func.lanes.iter().for_each(|&r| mark(r, 1));
    func.args.iter().for_each(|a| mark(a.reg, a.n as u64));
}

/// The functions function `f` of `module` calls, once per call.
pub fn callees(module: &ir::Module, f: usize) -> Vec<usize> {
    let n = module.functions.len();
    module.functions[f]
        .code
        .iter()
        .filter_map(|i| match *i {
            Inst::Call { func, .. } if (func as usize) < n => Some(func as usize),
            _ => None,
        })
        .collect()
}

/// The functions reached from `roots` (each root included), each after the functions it calls:
/// a depth-first postorder of the call graph, which has no cycle (recursion is refused before
/// lowering).
pub fn callees_first(module: &ir::Module, roots: impl IntoIterator<Item = usize>) -> Vec<usize> {
    let n = module.functions.len();
    let mut order = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    for root in roots {
        if std::mem::replace(&mut seen[root], true) {
            continue;
        }
        let mut stack = vec![(root, callees(module, root), 0usize)];
        while let Some((f, calls, next)) = stack.last_mut() {
            if let Some(&c) = calls.get(*next) {
                *next += 1;
                if !std::mem::replace(&mut seen[c], true) {
                    let calls = callees(module, c);
                    stack.push((c, calls, 0));
                }
            } else {
                order.push(*f);
                stack.pop();
            }
        }
    }
    order
}
