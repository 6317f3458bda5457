//! Copies folded into the instruction that computes their value. Leaving SSA form gives every
//! loop-carried value a copy at the end of its block (`acc' = acc + x; acc = mov acc'`), and
//! promotion leaves others: when the copied register is written once, read only by the copy,
//! and the copy follows its writer in the same straight-line code with nothing between them
//! touching the destination, the writer writes the destination itself and the copy goes. In a
//! tight loop that is two instructions of twelve (the tiled multiply of `bench/`).
//!
//! Only instructions that compute each lane and element from the same lane and element of their
//! operands are rewritten, so a writer that also reads the destination (`acc = acc + x`) reads
//! it before writing it; for vectors, a writer that reads the destination at all is left alone.
//!
//! What it cannot see: values. It reasons from register numbers ([`ir::operands`]), read and
//! write counts and the straight-line order of instructions only.

use super::base::{branch_targets, checked_index, counts, straight_line_writer};
use crate::ir::operands::{self, Use};
use crate::ir::{self, Function, Inst, Reg};

/// Folds the copies of `func` into their writers, marking the copies dropped in `keep`;
/// returns how many.
pub fn coalesce_copies(module: &ir::Module, func: &mut Function, keep: &mut [bool]) -> usize {
    let (mut reads, mut writes) = counts(module, func, keep);
    let targets = branch_targets(func);
    let mut folded = 0;
    for q in 0..func.code.len() {
        let Inst::Mov { dst: y, src: x, n } = func.code[q] else { continue };
        let n = n as u64;
        let single = |c: &[u32]| c.iter().skip(x as usize).take(n as usize).all(|&k| k == 1);
        if !keep[q] || n == 0 || operands::overlap(x, n, y, n) || !single(&reads) || !single(&writes) {
            continue;
        }
        let Some(p) = straight_line_writer(module, func, &targets, q, x, n) else { continue };
        if !writes_exactly(module, func, p, x, n) || !lane_wise(&func.code[p]) || !reads_fit(module, func, p, y, n) {
            continue;
        }
        if (p + 1..q).any(|k| keep[k] && touches(module, func, &func.code[k], y, n)) {
            continue;
        }
        set_dst(&mut func.code[p], y);
        keep[q] = false;
        for r in x as usize..(x as u64 + n) as usize {
            reads[r] = 0;
            writes[r] = 0;
        }
        folded += 1;
    }
    folded
}

/// Whether instruction `p` writes exactly registers `x..x + n`.
fn writes_exactly(module: &ir::Module, func: &Function, p: usize, x: Reg, n: u64) -> bool {
    let mut exact = false;
    operands::for_each(module, func, &func.code[p], |r, k, u| exact |= u == Use::Write && r == x && k == n);
    exact
}

/// Whether `inst` computes each lane and element of its result from the same lane and element
/// of its operands only, with one result range named by a `dst` field.
fn lane_wise(inst: &Inst) -> bool {
    matches!(
        inst,
        Inst::IntBin { .. }
            | Inst::FloatBin { .. }
            | Inst::Compare { .. }
            | Inst::Unary { .. }
            | Inst::Convert { .. }
            | Inst::Select { .. }
            | Inst::Math { .. }
            | Inst::PtrOffset { .. }
            | Inst::PtrDiff { .. }
            | Inst::LoadScalar { .. }
    )
}

/// Whether writer `p` may write `y..y + n` itself: it does not read it, or (one register, and an
/// arithmetic instruction, not a load with its runs of lanes) reads exactly it, which a lane-wise
/// instruction does before writing.
fn reads_fit(module: &ir::Module, func: &Function, p: usize, y: Reg, n: u64) -> bool {
    let mut fit = true;
    let arithmetic = !matches!(func.code[p], Inst::LoadScalar { .. });
    operands::for_each(module, func, &func.code[p], |r, k, u| {
        if u == Use::Read && operands::overlap(r, k, y, n) {
            fit &= arithmetic && n == 1 && r == y && k == 1;
        }
    });
    fit && checked_index(func, &func.code[p]) != Some(y)
}

/// Whether `inst` reads or writes any of `y..y + n`.
fn touches(module: &ir::Module, func: &Function, inst: &Inst, y: Reg, n: u64) -> bool {
    let mut any = checked_index(func, inst).is_some_and(|r| operands::overlap(r, 1, y, n));
    operands::for_each(module, func, inst, |r, k, _| any |= operands::overlap(r, k, y, n));
    any
}

/// Points the result of a [`lane_wise`] instruction at `y`.
fn set_dst(inst: &mut Inst, y: Reg) {
    match inst {
        Inst::IntBin { dst, .. }
        | Inst::FloatBin { dst, .. }
        | Inst::Compare { dst, .. }
        | Inst::Unary { dst, .. }
        | Inst::Convert { dst, .. }
        | Inst::Select { dst, .. }
        | Inst::Math { dst, .. }
        | Inst::PtrOffset { dst, .. }
        | Inst::PtrDiff { dst, .. }
        | Inst::LoadScalar { dst, .. } => *dst = y,
        _ => unreachable!("only lane-wise instructions are rewritten"),
    }
}
