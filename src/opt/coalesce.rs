//! Copies folded into the instruction that computes their value. Leaving SSA form gives every
//! loop-carried value a copy at the end of its block (`acc' = acc + x; acc = mov acc'`), and
//! promotion leaves others: when the copy follows its writer in the same straight-line code
//! with nothing between them touching the destination, and the value copied is read by the copy
//! alone (the copied register is written once and read once, or nothing reads it between the
//! writer and the copy and the straight-line code after the copy writes it again before
//! anything reads it), the writer writes the destination itself and the copy goes. In a tight
//! loop that is two instructions of twelve (the tiled multiply of `bench/`).
//!
//! Truncations to the width their value already has are copies (`truncations_to_copies`): a
//! private array put in registers keeps each element as memory would, truncating what is
//! stored to it (`acc[i] = mad(...)` is `t = mad(...); acc_i = convert.uint.32.32 t`), and a
//! float result or a 32-bit load is 32 bits already. Four of the 31 instructions of CLBlast's
//! GEMM inner loop, and four more after its loads.
//!
//! Only instructions that compute each lane and element from the same lane and element of their
//! operands are rewritten, so a writer that also reads the destination (`acc = acc + x`) reads
//! it before writing it; for vectors, a writer that reads the destination at all is left alone.
//!
//! What it cannot see: values. It reasons from register numbers ([`ir::operands`]), read and
//! write counts and the straight-line order of instructions only.

use rspirv::spirv::OpenclStd100Op as Cl;

use super::base::{branch_targets, checked_index, counts, overwritten_after, straight_line_writer};
use crate::ir::operands::{self, Use};
use crate::ir::{self, Conv, Function, Inst, MathKind, Reg};

/// Rewrites as copies the integer conversions of `func` from one width to the same width whose
/// operand the straight-line code before them wrote, in whole, with a value of at most that
/// width (directly, or through copies of it); returns how many.
pub fn truncations_to_copies(module: &ir::Module, func: &mut Function) -> usize {
    let targets = branch_targets(func);
    let mut rewritten = 0;
    for q in 0..func.code.len() {
        let Inst::Convert { conv: Conv::UInt | Conv::SInt, from, to, dst, src, n } = func.code[q] else { continue };
        if from != to {
            continue;
        }
        // The value's writer, through the copies of it (an inlined call's result is one).
        let mut value = (q, src);
        let width = loop {
            let Some(p) = straight_line_writer(module, func, &targets, value.0, value.1, n as u64) else { break None };
            if !writes_exactly(module, func, p, value.1, n as u64) {
                break None;
            }
            match func.code[p] {
                Inst::Mov { src, .. } => value = (p, src),
                ref inst => break value_width(inst),
            }
        };
        if width.is_some_and(|w| w <= to) {
            func.code[q] = Inst::Mov { dst, src, n };
            rewritten += 1;
        }
    }
    rewritten
}

/// The most bits the values `inst` writes take (the higher bits are zeros), where the
/// interpreter makes that so: integer results are masked to their width, float results are the
/// bits of a float, loads are zero-extended, comparisons are 0 or 1.
fn value_width(inst: &Inst) -> Option<u8> {
    match *inst {
        Inst::LoadScalar { size, .. } => Some(size * 8),
        Inst::IntBin { bits, .. } => Some(bits),
        Inst::FloatBin { bits: bits @ (32 | 64), .. } => Some(bits),
        Inst::Compare { .. } => Some(1),
        Inst::Convert { conv: Conv::UInt | Conv::SInt, to, .. } => Some(to),
        // `select` and `bitselect` pass their operands' bits through.
        Inst::Math { kind: MathKind::F32, op, .. } if !matches!(op, Cl::select | Cl::bitselect) => Some(32),
        _ => None,
    }
}

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
        if !keep[q] || n == 0 || operands::overlap(x, n, y, n) {
            continue;
        }
        let once = single(&reads) && single(&writes);
        if !once && !overwritten_after(module, func, keep, q, x, n) {
            continue;
        }
        let Some(p) = straight_line_writer(module, func, &targets, q, x, n) else { continue };
        if !writes_exactly(module, func, p, x, n) || !lane_wise(&func.code[p]) || !reads_fit(module, func, p, y, n) {
            continue;
        }
        let between = |r: Reg| (p + 1..q).any(|k| keep[k] && touches(module, func, &func.code[k], r, n));
        if between(y) || (!once && between(x)) {
            continue;
        }
        set_dst(&mut func.code[p], y);
        keep[q] = false;
        for r in x as usize..(x as u64 + n) as usize {
            reads[r] = reads[r].saturating_sub(1);
            writes[r] = writes[r].saturating_sub(1);
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
