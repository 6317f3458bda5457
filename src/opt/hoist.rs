//! Loop-invariant code hoisted out of its loop (`hoist_invariants`). An instruction that only
//! computes (integer and float arithmetic, comparisons, conversions, selects, pointer offsets,
//! work-item ids and sizes) inside a loop, from registers that nothing in the loop writes, into
//! registers that nothing else in the function writes and nothing in the loop reads before it,
//! runs once before the loop instead of at every iteration. CLBlast's GEMM recomputes
//! `get_local_id` and products of it in every iteration of its inner loops: a third of the
//! inner loop's instructions.
//!
//! A loop here is the code from a header to the last branch back to it, entered only by falling
//! into the header from the instruction before it (no branch from outside the range goes into
//! it): the hoisted instructions go between that instruction and the header, so they run at
//! each entry of the loop, with the values their operands have then, which the loop does not
//! change. Loops are taken innermost first, so an instruction invariant in several nested loops
//! leaves them all.
//!
//! Why each work-item computes the same: the instructions moved cannot fail, report or touch
//! memory; their operands hold the same value at every iteration; their result register has
//! that one writer, and no instruction of the loop reads it before the writer, so every read
//! sees the value it saw before (code lowered from SPIR-V reads a value only where its
//! definition has run). The branch budget is unchanged (no branch moves). A loop that runs no
//! iteration now computes its invariants once, for nothing.
//!
//! What it cannot see: values. It reasons from register numbers ([`ir::operands`]), write
//! counts, branch targets and the order of instructions only.

use super::base::{self, ends_block, for_each_successor, only_computes, retarget, retarget_tables};
use crate::ir::operands::{self, Use};
use crate::ir::{self, Function};

/// Moves the loop invariants of `func` before their loops; returns how many instructions moved
/// (once per loop they left).
///
/// One pass over the loops, innermost first: a move permutes the instructions of one loop's
/// range only, so the loops around it keep their bounds, and the loops inside it, whose bounds
/// moved, were taken already. A loop that overlaps a changed range without holding it (code
/// laid out across loops) is left alone.
pub fn hoist_invariants(module: &ir::Module, func: &mut Function) -> usize {
    let loops = loops(func);
    if loops.is_empty() {
        return 0;
    }
    let (_, writes) = base::use_counts(module, func);
    let mut changed: Vec<(usize, usize)> = Vec::new();
    let mut moved = 0;
    for (h, t) in loops {
        if changed.iter().any(|&(ch, ct)| ch <= t && h <= ct && !(h <= ch && ct <= t)) {
            continue;
        }
        let invariant = invariants(module, func, &writes, h, t);
        if !invariant.is_empty() {
            moved += invariant.len();
            move_before(func, h, t, &invariant);
            changed.push((h, t));
        }
    }
    moved
}

/// The loops of `func` as `(header, last branch back to it)`, innermost (shortest) first.
fn loops(func: &Function) -> Vec<(usize, usize)> {
    let mut last = vec![None; func.code.len()];
    for pc in 0..func.code.len() {
        for_each_successor(func, pc, |t| {
            if t <= pc {
                last[t] = Some(pc);
            }
        });
    }
    let mut out: Vec<(usize, usize)> = last.iter().enumerate().filter_map(|(h, t)| t.map(|t| (h, t))).collect();
    out.sort_by_key(|&(h, t)| (t - h, h));
    out
}

/// Whether loop `h..=t` is entered only by falling into `h` from the instruction before it (or
/// is the function's start), every branch into the range coming from inside it.
fn entered_at_header(func: &Function, h: usize, t: usize) -> bool {
    if h > 0 && ends_block(&func.code[h - 1]) {
        return false;
    }
    let mut from_outside = false;
    for pc in (0..h).chain(t + 1..func.code.len()) {
        for_each_successor(func, pc, |to| from_outside |= (h..=t).contains(&to) && !(pc + 1 == h && to == h));
    }
    !from_outside
}

/// The instructions of loop `h..=t` that may run once before it, in order (see the module doc);
/// `writes` counts each register's writers in the function.
fn invariants(module: &ir::Module, func: &Function, writes: &[u32], h: usize, t: usize) -> Vec<usize> {
    let code = &func.code;
    if !code[h..=t].iter().any(only_computes) || !entered_at_header(func, h, t) {
        return Vec::new();
    }
    let slots = func.template.len();
    // Writers of each register inside the loop, less those already found invariant.
    let mut written = vec![0u32; slots];
    for inst in &code[h..=t] {
        operands::for_each(module, func, inst, |r, n, u| {
            if u == Use::Write {
                written.iter_mut().skip(r as usize).take(n as usize).for_each(|w| *w += 1);
            }
        });
    }
    let mut read = vec![false; slots];
    let mut out = Vec::new();
    for (p, inst) in code.iter().enumerate().take(t + 1).skip(h) {
        if only_computes(inst) {
            let mut free = true;
            operands::for_each(module, func, inst, |r, n, u| {
                let range = r as usize..(r as usize + n as usize).min(slots);
                free &= match u {
                    Use::Read => range.clone().all(|s| written[s] == 0),
                    Use::Write => range.clone().all(|s| writes[s] == 1 && !read[s]),
                } && range.len() as u64 == n;
            });
            if free {
                out.push(p);
                operands::for_each(module, func, inst, |r, n, u| {
                    if u == Use::Write {
                        written.iter_mut().skip(r as usize).take(n as usize).for_each(|w| *w -= 1);
                    }
                });
                continue;
            }
        }
        let mut mark = |r: ir::Reg, n: u64| read.iter_mut().skip(r as usize).take(n as usize).for_each(|x| *x = true);
        operands::for_each(module, func, inst, |r, n, u| {
            if u == Use::Read {
                mark(r, n)
            }
        });
        if let Some(r) = base::checked_index(func, inst) {
            mark(r, 1);
        }
    }
    out
}

/// Moves instructions `moved` (in order, inside `h..=t`) to just before loop `h..=t`, and
/// renumbers the branches into the loop: a branch to a moved instruction goes to the first one
/// after it that stayed (the back edges to the header, to the header's new place).
fn move_before(func: &mut Function, h: usize, t: usize, moved: &[usize]) {
    let mut is_moved = vec![false; t + 1 - h];
    moved.iter().for_each(|&p| is_moved[p - h] = true);
    // Where each instruction of the range lands as a branch target.
    // The instructions that stay fill the range's end, in order: `stayed` is the new place of
    // the first one at or after `q`.
    let mut land = vec![0u32; t + 1 - h];
    let mut stayed = (t + 1) as u32;
    for q in (h..=t).rev() {
        if !is_moved[q - h] {
            stayed -= 1;
        }
        land[q - h] = stayed;
    }
    let map = |target: u32| match (target as usize).checked_sub(h) {
        Some(i) if i < land.len() => land[i],
        _ => target,
    };
    let (code, locs) = (std::mem::take(&mut func.code), std::mem::take(&mut func.locs));
    let order =
        (0..h).chain(moved.iter().copied()).chain((h..=t).filter(|&q| !is_moved[q - h])).chain(t + 1..code.len());
    for q in order {
        let mut inst = code[q].clone();
        retarget(&mut inst, |t| *t = map(*t));
        func.code.push(inst);
        func.locs.push(locs[q]);
    }
    retarget_tables(func, |t| *t = map(*t));
}
