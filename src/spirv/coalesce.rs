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

use super::peephole::{branch_targets, kept, kept_use_counts, straight_line_writer};
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

/// The read and write counts of the instructions `keep` keeps ([`kept_use_counts`]), with
/// array-index checks counted too: each reads its element address and, through the
/// access-chain table, its index (`use_counts` leaves them out for the passes that move checks;
/// this one moves none, and must not fold away a register a check reads).
pub(super) fn counts(module: &ir::Module, func: &Function, keep: &[bool]) -> (Vec<u32>, Vec<u32>) {
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
fn checked_index(func: &Function, inst: &Inst) -> Option<Reg> {
    match *inst {
        Inst::IndexCheck { index, .. } => func.indices.get(index as usize).map(|i| i.reg),
        _ => None,
    }
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

#[cfg(test)]
mod tests {
    use crate::ir::{self, Function, Inst, IntOp};

    fn add(dst: u32, a: u32, b: u32, n: u16) -> Inst {
        Inst::IntBin { op: IntOp::Add, bits: 32, dst, a, b, n }
    }

    fn mov(dst: u32, src: u32, n: u16) -> Inst {
        Inst::Mov { dst, src, n }
    }

    /// Runs every peephole on one function of `code` (parameters r0 and r1, eight registers).
    fn optimised(code: Vec<Inst>) -> (usize, Vec<Inst>) {
        let locs = vec![u32::MAX; code.len()];
        let f = Function {
            name: "f".into(),
            code,
            locs,
            template: vec![0; 8],
            params: vec![(0, 1), (1, 1)],
            ..Function::default()
        };
        let mut m = ir::Module { functions: vec![f], ..ir::Module::default() };
        let stats = super::super::peephole::optimise(&mut m);
        (stats.coalesced_copies, m.functions.remove(0).code)
    }

    #[test]
    fn a_copy_after_its_writer_becomes_the_writers_result_even_when_it_reads_the_target() {
        let (n, code) = optimised(vec![add(2, 1, 0, 1), mov(1, 2, 1), Inst::Return { src: 1, n: 1 }]);
        assert_eq!(n, 1);
        assert!(matches!(code[..], [Inst::IntBin { dst: 1, a: 1, b: 0, .. }, Inst::Return { src: 1, .. }]), "{code:?}");
    }

    #[test]
    fn a_read_of_the_target_between_writer_and_copy_keeps_the_copy() {
        let body = vec![add(2, 0, 0, 1), add(3, 1, 0, 1), mov(1, 2, 1), add(4, 1, 3, 1), Inst::Return { src: 4, n: 1 }];
        let (n, code) = optimised(body.clone());
        assert_eq!((n, code.len()), (0, body.len()), "{code:?}");
    }

    #[test]
    fn a_vector_writer_that_reads_the_target_keeps_the_copy() {
        // r2:2 = r2:2 + r4:2 computed into r6:2, then copied back: element 1 of the sum must read
        // the old element 1, so the add may not write r2:2 itself.
        let body = vec![add(6, 2, 4, 2), mov(2, 6, 2), Inst::Return { src: 2, n: 2 }];
        let (n, _) = optimised(body);
        assert_eq!(n, 0);
    }

    #[test]
    fn a_copied_value_read_again_later_keeps_its_copy() {
        let body = vec![add(2, 0, 0, 1), mov(1, 2, 1), add(3, 2, 1, 1), Inst::Return { src: 3, n: 1 }];
        let (n, _) = optimised(body);
        assert_eq!(n, 0);
    }
}
