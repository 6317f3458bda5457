//! Peepholes over a lowered module, run once all its functions are lowered and before
//! [`super::validate`] checks the result. They use only existing [`Inst`] variants (and new
//! layouts), so the interpreter needs nothing new, and each keeps what every work-item computes,
//! stores and reports:
//!
//! - **Index extensions folded into `PtrOffset`.** `x = sext(y)` (or a truncation) whose only use
//!   is an access-chain index of the `PtrOffset` that follows it in the same straight-line code
//!   is dropped, and the index reads `y` with the narrower width instead (an index is read as a
//!   signed integer of its `bits`, so a sign extension is exactly what it does anyway).
//! - **Pointer offsets chained.** `a = b + o1 + i·s` whose only use is the base of a `PtrOffset`
//!   `c = a + o2 + j·t` in the same straight-line code becomes `c = b + (o1 + o2) + i·s + j·t`
//!   (an array of arrays, a struct field of an array element), one instruction instead of two.
//! - **Private copies promoted to registers** ([`promote`]): a struct copied in whole and then
//!   used field by field at constant offsets lives in registers instead of private memory.
//! - **Writes of some lanes of a vector** ([`lane_stores`]): the load clang puts before a store
//!   of a vector with some lanes changed is dropped and the store keeps the changed lanes only.
//! - **Repeated array-index checks dropped** ([`repeated_checks`]): a check of an index a
//!   dominating check already made on the same value.
//! - **Copies forwarded to their readers** ([`forward`]): a copy read only further down its
//!   straight-line block, with its source unchanged until then, goes; the readers read the source.
//! - **Copies folded into their writers** ([`coalesce`]): the copy at the end of a loop body
//!   that carries a value to the next iteration goes when its writer can write the target.
//! - **Jump threading.** A branch (or switch case) whose target is an unconditional branch goes
//!   to that branch's target instead; a conditional branch whose two targets agree becomes an
//!   unconditional one.
//! - **Kernel entries that only call their body skipped**: a kernel starts in the function the
//!   compiler's entry point calls, when that entry does nothing else.
//! - **Compaction.** Code unreachable from the entry, instructions made dead above, and
//!   unconditional branches to the instruction that follows anyway are removed, and every
//!   target is renumbered.
//!
//! What it cannot see: values. It reasons from register numbers ([`ir::operands`]), the
//! straight-line order of instructions and the branch targets only, and gives up wherever that
//! is not enough. Fewer branches also means fewer steps charged to the branch budget, and a loop
//! keeps at least its back edge, so an endless kernel still meets the budget.

use super::{coalesce, forward, lane_stores, promote, repeated_checks};
use crate::ir::operands::{self, Use};
use crate::ir::{self, Conv, Function, Index, Inst};

/// How many unconditional branches a target is followed through (chains are short in
/// practice; the bound keeps a pathological chain linear).
const MAX_HOPS: usize = 32;

/// What the peepholes removed from one module, for tests and the instruction counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    pub folded_extensions: usize,
    pub merged_offsets: usize,
    pub threaded_targets: usize,
    pub promoted_variables: usize,
    pub narrowed_stores: usize,
    pub dropped_checks: usize,
    pub coalesced_copies: usize,
    pub forwarded_copies: usize,
    pub skipped_trampolines: usize,
    pub removed_instructions: usize,
}

/// Runs every peephole on every function of `module`.
pub fn optimise(module: &mut ir::Module) -> Stats {
    let mut stats = Stats::default();
    for i in 0..module.functions.len() {
        // Taken out so the pass can read the rest of the module (callees' return widths);
        // recursion is refused before lowering, so no function calls itself.
        let mut func = std::mem::take(&mut module.functions[i]);
        let mut keep = vec![true; func.code.len()];
        stats.folded_extensions += fold_index_extensions(module, &mut func, &mut keep);
        stats.merged_offsets += merge_offset_chains(module, &mut func, &mut keep);
        stats.promoted_variables += promote::promote_copied_variables(module, &mut func, &mut keep);
        stats.narrowed_stores += lane_stores::narrow_lane_stores(module, &mut func, &mut keep);
        stats.forwarded_copies += forward::forward_copies(module, &mut func, &mut keep);
        stats.dropped_checks += repeated_checks::drop_repeated_checks(module, &func, &mut keep);
        stats.threaded_targets += thread_jumps(&mut func);
        stats.removed_instructions += compact(&mut func, &keep);
        // After compaction, so that blocks joined by a removed branch are one straight line.
        let mut keep = vec![true; func.code.len()];
        let coalesced = coalesce::coalesce_copies(module, &mut func, &mut keep);
        if coalesced > 0 {
            stats.coalesced_copies += coalesced;
            stats.removed_instructions += compact(&mut func, &keep);
        }
        module.functions[i] = func;
    }
    stats.skipped_trampolines = skip_trampolines(module);
    stats
}

/// Points every kernel whose entry function only calls the function holding its body, with
/// the entry's parameters in order, at that function: one call frame less per work-item (the
/// compiler emits such an entry for every kernel). Returns how many were pointed past theirs.
fn skip_trampolines(module: &mut ir::Module) -> usize {
    let mut skipped = 0;
    for k in 0..module.kernels.len() {
        let entry = &module.functions[module.kernels[k].function as usize];
        let [Inst::Call { func: callee, first_arg, num_args, .. }, Inst::Return { n: 0, .. }] = entry.code[..] else {
            continue;
        };
        let args = entry.args.get(first_arg as usize..first_arg as usize + num_args as usize).unwrap_or(&[]);
        let Some(body) = module.functions.get(callee as usize) else { continue };
        let passed_on = args.len() == entry.params.len()
            && body.params.len() == entry.params.len()
            && args
                .iter()
                .zip(&entry.params)
                .zip(&body.params)
                .all(|((a, &(r, n)), &(_, m))| a.reg == r && a.n == n && m == n);
        if passed_on {
            module.kernels[k].function = callee;
            skipped += 1;
        }
    }
    skipped
}

/// Whether control never passes from this instruction to the next one in the code.
pub(super) fn ends_block(inst: &Inst) -> bool {
    matches!(inst, Inst::Branch { .. } | Inst::BranchIf { .. } | Inst::Switch { .. } | Inst::Return { .. })
}

/// Every instruction index a branch, conditional branch or switch may go to.
pub(super) fn branch_targets(func: &Function) -> Vec<bool> {
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

/// The index width that reads `src` as the original index read `convert(src)`, if there is one:
/// a sign extension (or truncation) to at least the index's width is the index's own reading of
/// the narrower value; a zero extension is not (the index would sign-extend), but a truncation
/// to at least the index's width is.
fn folded_bits(conv: Conv, from: u8, to: u8, index_bits: u8) -> Option<u8> {
    if index_bits > to || from == 0 {
        return None;
    }
    match conv {
        Conv::SInt => Some(from.min(index_bits)),
        Conv::UInt | Conv::PtrInt if index_bits <= from => Some(index_bits),
        _ => None,
    }
}

/// Read and write counts and branch targets of a function, taken once before a pass rewrites
/// it. A pass that only narrows reads, adds registers (counted as never written) and keeps its
/// branches may go on trusting them: they can only make it keep more.
pub(super) struct Facts {
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
/// [`merge_offset_chains`]).
pub(super) fn use_counts(module: &ir::Module, func: &Function) -> (Vec<u32>, Vec<u32>) {
    kept_use_counts(module, func, &[])
}

/// The instructions of `func` that `keep` does not mark dropped (those past its end count as kept).
pub(super) fn kept<'f>(func: &'f Function, keep: &'f [bool]) -> impl Iterator<Item = &'f Inst> {
    func.code.iter().enumerate().filter(|&(i, _)| keep.get(i).copied().unwrap_or(true)).map(|(_, inst)| inst)
}

/// [`use_counts`] of the instructions `keep` does not mark dropped ([`kept`]).
pub(super) fn kept_use_counts(module: &ir::Module, func: &Function, keep: &[bool]) -> (Vec<u32>, Vec<u32>) {
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

/// Merges a `PtrOffset` whose result is only the base of a following `PtrOffset` into it.
/// Marks the merged ones in `keep`; returns how many were merged.
fn merge_offset_chains(module: &ir::Module, func: &mut Function, keep: &mut [bool]) -> usize {
    let (mut reads, writes) = use_counts(module, func);
    let targets = branch_targets(func);
    let mut merged = 0;
    for p in 0..func.code.len() {
        let Inst::PtrOffset { dst, base: a, offset: o2, first_index: f2, num_indices: n2 } = func.code[p] else {
            continue;
        };
        if !keep[p] || reads.get(a as usize) != Some(&1) || writes.get(a as usize) != Some(&1) {
            continue;
        }
        let Some(q) = straight_line_writer(module, func, &targets, p, a, 1) else { continue };
        let Inst::PtrOffset { dst: written, base: b, offset: o1, first_index: f1, num_indices: n1 } = func.code[q]
        else {
            continue;
        };
        let (Some(offset), Some(num_indices)) = (o1.checked_add(o2), n1.checked_add(n2)) else { continue };
        let first = func.indices.len();
        let outer = f1 as usize..f1 as usize + n1 as usize;
        let inner = f2 as usize..f2 as usize + n2 as usize;
        let (Some(outer_idx), true) = (func.indices.get(outer.clone()), inner.end <= func.indices.len()) else {
            continue;
        };
        let mut stable = std::iter::once(b).chain(outer_idx.iter().map(|i| i.reg));
        if written != a || !keep[q] || b == a || stable.any(|r| written_between(module, func, q + 1, p, r)) {
            continue;
        }
        let Ok(first_index) = u32::try_from(first) else { continue };
        func.indices.extend_from_within(outer.clone());
        func.indices.extend_from_within(inner.clone());
        func.code[p] = Inst::PtrOffset { dst, base: b, offset, first_index, num_indices };
        // The array-index checks of both follow their indices to the new entries; those of `q`,
        // which read its result, go after `p` and read the merged one (the code between is
        // straight-line, so the order within it is free but for what reads what).
        for inst in &mut func.code {
            if let Inst::IndexCheck { index, .. } = inst {
                let at = *index as usize;
                if inner.contains(&at) {
                    *index = first_index + n1 as u32 + (*index - f2);
                } else if outer.contains(&at) {
                    *index = first_index + (*index - f1);
                }
            }
        }
        let between: Vec<(Inst, bool)> =
            func.code[q + 1..=p].iter().cloned().zip(keep[q + 1..=p].iter().copied()).collect();
        let reads_a = |i: &Inst| matches!(i, Inst::IndexCheck { ptr, .. } if *ptr == a);
        let (checks, rest): (Vec<_>, Vec<_>) = between.into_iter().partition(|(i, _)| reads_a(i));
        for (k, (mut inst, kept)) in rest.into_iter().chain(checks).enumerate() {
            if let Inst::IndexCheck { ptr, .. } = &mut inst
                && *ptr == a
            {
                *ptr = dst;
            }
            func.code[q + 1 + k] = inst;
            keep[q + 1 + k] = kept;
        }
        reads[a as usize] = 0;
        keep[q] = false;
        merged += 1;
    }
    merged
}

/// Folds sign extensions and truncations that feed only an access-chain index into it.
/// Marks the dropped conversions in `keep`; returns how many were folded.
fn fold_index_extensions(module: &ir::Module, func: &mut Function, keep: &mut [bool]) -> usize {
    let (mut reads, writes) = use_counts(module, func);
    let targets = branch_targets(func);
    let mut folded = 0;
    for p in 0..func.code.len() {
        let Inst::PtrOffset { first_index, num_indices, .. } = func.code[p] else { continue };
        for k in first_index as usize..first_index as usize + num_indices as usize {
            let Index { reg: x, bits, stride } = func.indices[k];
            if reads.get(x as usize) != Some(&1) || writes.get(x as usize) != Some(&1) {
                continue;
            }
            let Some(q) = straight_line_writer(module, func, &targets, p, x, 1) else { continue };
            let Inst::Convert { conv, from, to, dst, src: y, n: 1 } = func.code[q] else { continue };
            let Some(new_bits) = folded_bits(conv, from, to, bits) else { continue };
            if dst != x || !keep[q] || written_between(module, func, q + 1, p, y) {
                continue;
            }
            func.indices[k] = Index { reg: y, bits: new_bits, stride };
            reads[x as usize] = 0;
            keep[q] = false;
            folded += 1;
        }
    }
    folded
}

/// The instruction before `p` that writes any of registers `x..x + n`, if it is reached from there by
/// straight-line code only: no instruction after it up to `p` is a branch target, and none
/// between ends a block.
pub(super) fn straight_line_writer(
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
pub(super) fn written_between(module: &ir::Module, func: &Function, from: usize, to: usize, y: u32) -> bool {
    func.code[from..to].iter().any(|inst| {
        let mut writes = false;
        operands::for_each(module, func, inst, |r, n, u| writes |= u == Use::Write && operands::overlap(r, n, y, 1));
        writes
    })
}

/// Where control lands when it goes to `t`: past any unconditional branches there.
fn landing(code: &[Inst], mut t: u32) -> u32 {
    for _ in 0..MAX_HOPS {
        match code.get(t as usize) {
            Some(&Inst::Branch { target }) if target != t => t = target,
            _ => break,
        }
    }
    t
}

/// Retargets branches and switch cases past unconditional branches; returns how many targets
/// changed.
fn thread_jumps(func: &mut Function) -> usize {
    let mut changed = 0;
    let mut retarget = |code: &[Inst], t: &mut u32| {
        let to = landing(code, *t);
        if to != *t {
            *t = to;
            changed += 1;
        }
    };
    for pc in 0..func.code.len() {
        let mut inst = func.code[pc].clone();
        match &mut inst {
            Inst::Branch { target } => retarget(&func.code, target),
            Inst::BranchIf { cond: _, then, otherwise } => {
                retarget(&func.code, then);
                retarget(&func.code, otherwise);
                if then == otherwise {
                    inst = Inst::Branch { target: *then };
                }
            }
            _ => continue,
        }
        func.code[pc] = inst;
    }
    let code = &func.code;
    for table in &mut func.switch_tables {
        retarget(code, &mut table.default);
        for case in &mut table.cases {
            retarget(code, &mut case.1);
        }
    }
    changed
}

/// The instructions control may go to after each one (targets past the end left out).
pub(super) fn successors(func: &Function) -> Vec<Vec<usize>> {
    let n = func.code.len();
    let targets = |pc: usize| -> Vec<usize> {
        match func.code[pc] {
            Inst::Branch { target } => vec![target as usize],
            Inst::BranchIf { then, otherwise, .. } => vec![then as usize, otherwise as usize],
            Inst::Switch { table, .. } => func
                .switch_tables
                .get(table as usize)
                .map_or_else(Vec::new, |t| t.cases.iter().map(|c| c.1 as usize).chain([t.default as usize]).collect()),
            Inst::Return { .. } => vec![],
            _ => vec![pc + 1],
        }
    };
    (0..n).map(|pc| targets(pc).into_iter().filter(|&t| t < n).collect()).collect()
}

/// The instructions reachable from the entry (instruction 0).
fn reachable(func: &Function) -> Vec<bool> {
    let successors = successors(func);
    let mut seen = vec![false; successors.len()];
    let mut work = vec![0usize];
    while let Some(pc) = work.pop() {
        if pc >= seen.len() || std::mem::replace(&mut seen[pc], true) {
            continue;
        }
        work.extend(&successors[pc]);
    }
    seen
}

/// Removes the instructions not in `keep`, those not reachable, and unconditional branches to
/// where control would go anyway, then renumbers targets. Returns how many were removed.
fn compact(func: &mut Function, keep: &[bool]) -> usize {
    let n = func.code.len();
    let live = reachable(func);
    // `land[i]`: the first kept instruction at or after `i` (n: none), filled from the end, so
    // that a branch can be compared with where falling through would land.
    let mut land = vec![n; n + 1];
    let mut kept = vec![false; n];
    for i in (0..n).rev() {
        let redundant_branch = match func.code[i] {
            Inst::Branch { target } => {
                let t = target as usize;
                t > i && t <= n && land[t] == land[i + 1] && land[t] < n
            }
            _ => false,
        };
        kept[i] = keep[i] && live[i] && !redundant_branch;
        land[i] = if kept[i] { i } else { land[i + 1] };
    }
    let removed = kept.iter().filter(|k| !**k).count();
    if removed == 0 {
        return 0;
    }
    let mut new_index = vec![0u32; n + 1];
    let mut next = 0u32;
    for i in 0..n {
        new_index[i] = next;
        next += kept[i] as u32;
    }
    new_index[n] = next;
    let map = |t: u32| new_index[land[(t as usize).min(n)]];
    let (code, locs) = (std::mem::take(&mut func.code), std::mem::take(&mut func.locs));
    for ((mut inst, loc), _) in code.into_iter().zip(locs).zip(&kept).filter(|(_, k)| **k) {
        match &mut inst {
            Inst::Branch { target } => *target = map(*target),
            Inst::BranchIf { then, otherwise, .. } => {
                *then = map(*then);
                *otherwise = map(*otherwise);
            }
            _ => {}
        }
        func.code.push(inst);
        func.locs.push(loc);
    }
    for table in &mut func.switch_tables {
        table.default = map(table.default);
        for case in &mut table.cases {
            case.1 = map(case.1);
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{IntOp, SwitchTable};

    fn function(code: Vec<Inst>, slots: usize) -> Function {
        let locs = (0..code.len() as u32).collect();
        Function { name: "f".into(), code, locs, template: vec![0; slots], ..Function::default() }
    }

    fn module(functions: Vec<Function>) -> ir::Module {
        ir::Module { functions, ..ir::Module::default() }
    }

    fn add(dst: u32, a: u32) -> Inst {
        Inst::IntBin { op: IntOp::Add, bits: 32, dst, a, b: a, n: 1 }
    }

    #[test]
    fn branches_to_branches_are_threaded_and_fallthrough_branches_removed() {
        // 0: add; 1: branch 2; 2: branch 4; 3: add (unreachable); 4: br r0 ? 5 : 6;
        // 5: branch 7; 6: branch 7; 7: return
        let code = vec![
            add(1, 0),
            Inst::Branch { target: 2 },
            Inst::Branch { target: 4 },
            add(2, 0),
            Inst::BranchIf { cond: 0, then: 5, otherwise: 6 },
            Inst::Branch { target: 7 },
            Inst::Branch { target: 7 },
            Inst::Return { src: 0, n: 0 },
        ];
        let mut m = module(vec![function(code, 3)]);
        let stats = optimise(&mut m);
        let f = &m.functions[0];
        // The conditional branch's targets both land on the return: it becomes a branch to the
        // next instruction, and goes too.
        assert!(matches!(f.code[..], [Inst::IntBin { .. }, Inst::Return { .. }]), "{:?}", f.code);
        assert_eq!(f.locs, [0, 7], "each instruction keeps its own location");
        assert_eq!(stats.removed_instructions, 6);
        assert!(stats.threaded_targets >= 3);
    }

    #[test]
    fn loops_keep_their_back_edge_and_targets_are_renumbered() {
        // 0: branch 1; 1: add; 2: br r1 ? 3 : 5; 3: branch 4; 4: branch 1; 5: switch; 6: return
        let code = vec![
            Inst::Branch { target: 1 },
            add(1, 1),
            Inst::BranchIf { cond: 1, then: 3, otherwise: 5 },
            Inst::Branch { target: 4 },
            Inst::Branch { target: 1 },
            Inst::Switch { value: 1, bits: 32, table: 0 },
            Inst::Return { src: 0, n: 0 },
        ];
        let mut f = function(code, 2);
        f.switch_tables.push(SwitchTable { cases: vec![(1, 3), (2, 6)], default: 0 });
        let mut m = module(vec![f]);
        optimise(&mut m);
        let f = &m.functions[0];
        let [
            Inst::IntBin { .. },
            Inst::BranchIf { then: 0, otherwise: 2, .. },
            Inst::Switch { .. },
            Inst::Return { .. },
        ] = f.code[..]
        else {
            panic!("{:?}", f.code)
        };
        // Case 1 went to 3 -> 4 -> 1 (now 0), case 2 to the return, the default to 0 -> 1 (now 0).
        assert_eq!(f.switch_tables[0].cases, [(1, 0), (2, 3)]);
        assert_eq!(f.switch_tables[0].default, 0);
    }

    #[test]
    fn an_endless_branch_cycle_stays_a_cycle() {
        let code = vec![Inst::Branch { target: 1 }, Inst::Branch { target: 0 }];
        let mut m = module(vec![function(code, 1)]);
        optimise(&mut m);
        assert!(matches!(m.functions[0].code[..], [Inst::Branch { target: 0 }]), "{:?}", m.functions[0].code);
    }

    fn chain(conv: Conv, from: u8, to: u8, bits: u8, between: Option<Inst>) -> Function {
        // r0 = param pointer, r1 = param index; r2 = convert r1; [between]; r3 = ptr r0 + r2
        let mut code = vec![Inst::Convert { conv, from, to, dst: 2, src: 1, n: 1 }];
        code.extend(between);
        code.push(Inst::PtrOffset { dst: 3, base: 0, offset: 0, first_index: 0, num_indices: 1 });
        code.push(Inst::Return { src: 3, n: 1 });
        let mut f = function(code, 5);
        f.params = vec![(0, 1), (1, 1)];
        f.indices = vec![Index { reg: 2, bits, stride: 4 }];
        f
    }

    fn fold(f: Function) -> (Function, Stats) {
        let mut m = module(vec![f]);
        let stats = optimise(&mut m);
        (m.functions.pop().unwrap(), stats)
    }

    #[test]
    fn a_sign_extension_feeding_only_an_index_folds_into_its_width() {
        let (f, stats) = fold(chain(Conv::SInt, 32, 64, 64, None));
        assert_eq!(stats.folded_extensions, 1);
        assert!(matches!(f.code[..], [Inst::PtrOffset { .. }, Inst::Return { .. }]), "{:?}", f.code);
        assert_eq!((f.indices[0].reg, f.indices[0].bits, f.indices[0].stride), (1, 32, 4));
        // A truncation to the index's width reads the same low bits of the source.
        let (f, _) = fold(chain(Conv::UInt, 64, 32, 32, None));
        assert_eq!((f.indices[0].reg, f.indices[0].bits), (1, 32));
        // Something unrelated in between does not matter.
        let (f, _) = fold(chain(Conv::SInt, 16, 64, 64, Some(add(4, 0))));
        assert_eq!((f.indices[0].reg, f.indices[0].bits, f.code.len()), (1, 16, 3));
    }

    #[test]
    fn extensions_stay_where_folding_would_change_the_index() {
        // A zero extension: the index would read the source as signed.
        let (f, stats) = fold(chain(Conv::UInt, 32, 64, 64, None));
        assert_eq!((stats.folded_extensions, f.indices[0].reg), (0, 2));
        // The source is written again before the PtrOffset.
        let (_, stats) = fold(chain(Conv::SInt, 32, 64, 64, Some(add(1, 0))));
        assert_eq!(stats.folded_extensions, 0);
        // The extended value has another reader.
        let (_, stats) = fold(chain(Conv::SInt, 32, 64, 64, Some(add(4, 2))));
        assert_eq!(stats.folded_extensions, 0);
        // A float conversion is no extension.
        let (_, stats) = fold(chain(Conv::SIntToFloat { round: ir::Round::Default }, 32, 64, 64, None));
        assert_eq!(stats.folded_extensions, 0);
        // A branch target between them: another path may enter without the conversion.
        // 0: br r1 ? 1 : 2; 1: r2 = convert r1; 2: add; 3: ptr r0 + r2; 4: return
        let mut f = chain(Conv::SInt, 32, 64, 64, Some(add(4, 0)));
        f.code.insert(0, Inst::BranchIf { cond: 1, then: 1, otherwise: 2 });
        f.locs.insert(0, 9);
        let (_, stats) = fold(f);
        assert_eq!(stats.folded_extensions, 0);
    }

    #[test]
    fn a_pointer_offset_feeding_only_another_merges_into_it() {
        // r0 = base, r1, r2 = indices; r3 = r0 + 8 + r1*64; [between]; r4 = r3 + 4 + r2*4
        let chain = |between: Option<Inst>| {
            let mut code = vec![Inst::PtrOffset { dst: 3, base: 0, offset: 8, first_index: 0, num_indices: 1 }];
            code.extend(between);
            code.push(Inst::PtrOffset { dst: 4, base: 3, offset: 4, first_index: 1, num_indices: 1 });
            code.push(Inst::Return { src: 4, n: 1 });
            let mut f = function(code, 6);
            f.params = vec![(0, 1), (1, 1), (2, 1)];
            f.indices = vec![Index { reg: 1, bits: 64, stride: 64 }, Index { reg: 2, bits: 32, stride: 4 }];
            fold(f)
        };
        let (f, stats) = chain(None);
        assert_eq!(stats.merged_offsets, 1);
        let [Inst::PtrOffset { dst: 4, base: 0, offset: 12, first_index, num_indices: 2 }, Inst::Return { .. }] =
            f.code[..]
        else {
            panic!("{:?}", f.code)
        };
        let merged = &f.indices[first_index as usize..first_index as usize + 2];
        assert_eq!(merged.iter().map(|i| (i.reg, i.bits, i.stride)).collect::<Vec<_>>(), [(1, 64, 64), (2, 32, 4)]);
        // The outer index changes in between: the two stay apart.
        assert_eq!(chain(Some(add(1, 5))).1.merged_offsets, 0);
        // The intermediate pointer has another use.
        assert_eq!(chain(Some(add(5, 3))).1.merged_offsets, 0);
        // Something unrelated in between does not matter.
        assert_eq!(chain(Some(add(5, 5))).1.merged_offsets, 1);
    }

    #[test]
    fn array_index_checks_follow_a_merge_of_their_chains() {
        // tile[i][j]: r3 = r0 + r1*64; check r1 < 16 for r3; r4 = r3 + r2*4; check r2 < 16 for r4.
        let check = |index, ptr| Inst::IndexCheck { index, ptr, extent: 16, loc: 0 };
        let code = vec![
            Inst::PtrOffset { dst: 3, base: 0, offset: 0, first_index: 0, num_indices: 1 },
            check(0, 3),
            Inst::PtrOffset { dst: 4, base: 3, offset: 0, first_index: 1, num_indices: 1 },
            check(1, 4),
            Inst::Return { src: 4, n: 1 },
        ];
        let mut f = function(code, 6);
        f.params = vec![(0, 1), (1, 1), (2, 1)];
        f.indices = vec![Index { reg: 1, bits: 64, stride: 64 }, Index { reg: 2, bits: 32, stride: 4 }];
        let (f, stats) = fold(f);
        assert_eq!(stats.merged_offsets, 1, "the check does not keep the chains apart");
        let [
            Inst::PtrOffset { dst: 4, base: 0, first_index, num_indices: 2, .. },
            Inst::IndexCheck { index: i, ptr: 4, .. },
            Inst::IndexCheck { index: j, ptr: 4, .. },
            Inst::Return { .. },
        ] = f.code[..]
        else {
            panic!("{:?}", f.code)
        };
        // Both checks read the merged chain's entries, after it is computed.
        assert_eq!((i, j), (first_index, first_index + 1));
        assert_eq!((f.indices[i as usize].reg, f.indices[j as usize].reg), (1, 2));
    }
}
