//! The small peepholes of [`super::optimise`], each a rewrite of one or two instructions:
//!
//! - **Index extensions folded into `PtrOffset`.** `x = sext(y)` (or a truncation) whose only use
//!   is an access-chain index of the `PtrOffset` that follows it in the same straight-line code
//!   is dropped, and the index reads `y` with the narrower width instead (an index is read as a
//!   signed integer of its `bits`, so a sign extension is exactly what it does anyway).
//! - **Pointer offsets chained.** `a = b + o1 + i·s` whose only use is the base of a `PtrOffset`
//!   `c = a + o2 + j·t` in the same straight-line code becomes `c = b + (o1 + o2) + i·s + j·t`
//!   (an array of arrays, a struct field of an array element), one instruction instead of two.
//! - **Jump threading.** A branch (or switch case) whose target is an unconditional branch goes
//!   to that branch's target instead; a conditional branch whose two targets agree becomes an
//!   unconditional one.
//! - **Kernel entries that only call their body skipped**: a kernel starts in the function the
//!   compiler's entry point calls, when that entry does nothing else.
//! - **Compaction.** Code unreachable from the entry, instructions made dead above, and
//!   unconditional branches to the instruction that follows anyway are removed, and every
//!   target is renumbered.
//!
//! What it cannot see: values, and the other passes. It reasons from register numbers
//! ([`ir::operands`]), the straight-line order of instructions and the branch targets only
//! ([`super::base`]).

use super::base::{
    branch_targets, reachable, retarget, retarget_tables, straight_line_writer, use_counts, written_between,
};
use crate::ir::{self, Conv, Function, Index, Inst};

/// How many unconditional branches a target is followed through (chains are short in
/// practice; the bound keeps a pathological chain linear).
const MAX_HOPS: usize = 32;

/// Points every kernel whose entry function only calls the function holding its body, with
/// the entry's parameters in order, at that function: one call frame less per work-item (the
/// compiler emits such an entry for every kernel). Returns how many were pointed past theirs.
pub fn skip_trampolines(module: &mut ir::Module) -> usize {
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
        Conv::UInt if index_bits <= from => Some(index_bits),
        _ => None,
    }
}

/// Merges a `PtrOffset` whose result is only the base of a following `PtrOffset` into it.
/// Marks the merged ones in `keep`; returns how many were merged.
pub fn merge_offset_chains(module: &ir::Module, func: &mut Function, keep: &mut [bool]) -> usize {
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
pub fn fold_index_extensions(module: &ir::Module, func: &mut Function, keep: &mut [bool]) -> usize {
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
pub fn thread_jumps(func: &mut Function) -> usize {
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

/// Removes the instructions not in `keep`, those not reachable, and unconditional branches to
/// where control would go anyway, then renumbers targets. Returns how many were removed.
pub fn compact(func: &mut Function, keep: &[bool]) -> usize {
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
        retarget(&mut inst, |t| *t = map(*t));
        func.code.push(inst);
        func.locs.push(loc);
    }
    retarget_tables(func, |t| *t = map(*t));
    removed
}
