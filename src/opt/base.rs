//! What the passes of [`super`] share: where blocks end and which instructions are branch
//! targets ([`branch_targets`], [`ends_block`], [`successors`]), how many instructions read and
//! write each register ([`use_counts`], [`kept_use_counts`], [`counts`], [`Facts`]), and what
//! straight-line code writes ([`straight_line_writer`], [`written_between`]).
//!
//! It sees the IR alone and no pass: every pass imports it, and it imports none of them.

use crate::ir::operands::{self, Use};
use crate::ir::{self, Function, Inst, Reg};

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
