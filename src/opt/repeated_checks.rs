//! Array-index checks made again on the same value: `tile[y][k]` in a loop checks `y` at every
//! iteration although `y` is the work-item's and was checked before the loop. A check is dropped
//! when an identical one (same index register, width and extent) runs before it on every path
//! from the entry (it dominates it) and the register holds the same value at both: it is written
//! at most once in the function, by an instruction on no cycle (so never again once the first
//! check has run), or the two checks are in one piece of straight-line code with no write of it
//! between. Every out-of-bounds index is still reported, at the first check that sees it (one
//! finding per instruction, as before).
//!
//! What it cannot see: values. It reasons from register numbers, write counts and the control
//! flow graph of instructions only.

use super::base::{branch_targets, ends_block, successors, use_counts, written_between};
use crate::ir::dominators;
use crate::ir::operands::{self, Use};
use crate::ir::{self, Function, Inst};

/// Drops the repeated checks of `func`, marking them in `keep`; returns how many.
pub fn drop_repeated_checks(module: &ir::Module, func: &Function, keep: &mut [bool]) -> usize {
    let checks: Vec<usize> =
        (0..func.code.len()).filter(|&p| keep[p] && matches!(func.code[p], Inst::IndexCheck { .. })).collect();
    if checks.len() < 2 {
        return 0;
    }
    let successors = successors(func);
    let idom = dominators::immediate(&successors, 0);
    let targets = branch_targets(func);
    let (_, writes) = use_counts(module, func);
    // The single writer of each register, where there is one.
    let mut writer = vec![None; func.template.len()];
    for (pc, inst) in func.code.iter().enumerate() {
        operands::for_each(module, func, inst, |r, n, u| {
            if u == Use::Write {
                for x in r..r + n as u32 {
                    if let Some(w) = writer.get_mut(x as usize) {
                        *w = Some(pc);
                    }
                }
            }
        });
    }
    let key = |p: usize| {
        let Inst::IndexCheck { index, extent, .. } = func.code[p] else { unreachable!("a check") };
        let i = func.indices[index as usize];
        (i.reg, i.bits, extent)
    };
    let mut dropped = 0;
    for &p in &checks {
        let (reg, _, _) = key(p);
        let once = match writes.get(reg as usize) {
            Some(0) => true,
            Some(1) => writer[reg as usize].is_none_or(|w| !on_cycle(&successors, w) && dominates(&idom, w, p)),
            _ => false,
        };
        // The nearest dominating check of the same key, if its value is the same here.
        let mut a = p;
        while let Some(up) = idom[a].filter(|&up| up != a) {
            a = up;
            if a == p || !keep[a] || !matches!(func.code[a], Inst::IndexCheck { .. }) || key(a) != key(p) {
                continue;
            }
            let straight = (a + 1..=p).all(|q| !targets[q] && !ends_block(&func.code[q - 1]))
                && !written_between(module, func, a + 1, p, reg);
            let written_first = writer[reg as usize].is_none_or(|w| dominates(&idom, w, a));
            if once && written_first || straight {
                keep[p] = false;
                dropped += 1;
            }
            break;
        }
    }
    dropped
}

/// Whether `a` runs before `b` on every path from the entry (or is `b`).
fn dominates(idom: &[Option<usize>], a: usize, mut b: usize) -> bool {
    loop {
        if a == b {
            return true;
        }
        match idom[b] {
            Some(up) if up != b => b = up,
            _ => return false,
        }
    }
}

/// Whether instruction `w` can run again after it has run (it lies on a cycle).
fn on_cycle(successors: &[Vec<usize>], w: usize) -> bool {
    let mut seen = vec![false; successors.len()];
    let mut work: Vec<usize> = successors[w].clone();
    while let Some(pc) = work.pop() {
        if pc == w {
            return true;
        }
        if !std::mem::replace(&mut seen[pc], true) {
            work.extend(&successors[pc]);
        }
    }
    false
}
