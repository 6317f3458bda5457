//! Copies forwarded to their readers: `d = mov s` whose destination is read only further down
//! the same straight-line code, or written again further down it after the readers of the
//! copy's value (the copies of an unrolled loop), with nothing in between writing `s`, goes, and
//! its readers read `s` instead. Promoting a private struct to registers
//! leaves one such copy per field read (`z.re * z.re` reads the field twice: two copies and the
//! multiply), and an escape-time loop of `bench/mandelbrot.cl` spends a third of its
//! instructions on them.
//!
//! The copy's value is what `s` holds at the copy; a reader further down the same block with no
//! write of `s` between reads the same bits from `s`, lane by lane, whatever the active lanes
//! (they do not change inside straight-line code). Readers are rewritten only where they read
//! the copy's whole destination as one operand of their own fields; a destination read any
//! other way (part of it, through a side table such as a call's arguments or an access chain's
//! indices), or read outside the block, keeps its copy. Registers of undefined values are left
//! alone, so the uninitialised-value check sees the same registers.
//!
//! What it cannot see: values. It reasons from register numbers ([`ir::operands`]), read and
//! write counts and the straight-line order of instructions only.

use super::base::{branch_targets, counts, ends_block, written_between};
use crate::ir::operands::{self, Use};
use crate::ir::{self, Function, Inst, Reg};

/// Forwards the copies of `func`, marking those dropped in `keep`; returns how many.
pub fn forward_copies(module: &ir::Module, func: &mut Function, keep: &mut [bool]) -> usize {
    // Counted over the kept instructions: one an earlier peephole dropped reads nothing.
    let (mut reads, _) = counts(module, func, keep);
    let targets = branch_targets(func);
    let mut forwarded = 0;
    for q in 0..func.code.len() {
        let Inst::Mov { dst: d, src: s, n } = func.code[q] else { continue };
        let n = n as u64;
        let slots = |r: Reg| r as usize..(r as u64 + n) as usize;
        let undefined = func
            .undefined
            .iter()
            .any(|&(u, k)| operands::overlap(u, k as u64, s, n) || operands::overlap(u, k as u64, d, n));
        if !keep[q] || n == 0 || operands::overlap(s, n, d, n) || undefined {
            continue;
        }
        let Some((readers, overwritten)) = block_readers(module, func, &targets, keep, q, d, n) else { continue };
        // The copy's value is read only here: every read of the destination is here (each sees
        // this copy's value, so another write of it is never read), or the block writes the
        // destination again after these readers.
        let all_here =
            reads[slots(d)].iter().all(|&k| k as usize == readers.len()) || (overwritten && !readers.is_empty());
        let s_kept = readers.iter().all(|&k| (0..n).all(|i| !written_between(module, func, q + 1, k, s + i as Reg)));
        if !all_here || !s_kept {
            continue;
        }
        for &k in &readers {
            for (operand, _) in plain_reads(module, &mut func.code[k]).into_iter().flatten() {
                if *operand == d {
                    *operand = s;
                }
            }
        }
        keep[q] = false;
        for slot in slots(s) {
            reads[slot] = reads[slot].saturating_add(readers.len() as u32);
        }
        reads[slots(d)].iter_mut().for_each(|k| *k = k.saturating_sub(readers.len() as u32));
        forwarded += 1;
    }
    forwarded
}

/// The kept instructions after copy `q`, up to the end of its straight-line block or the next
/// write of `d..d + n` (then true), that read `d..d + n`, if each reads it as exactly one of its
/// [`plain_reads`]; None if one reads it any other way or the block writes part of it.
fn block_readers(
    module: &ir::Module,
    func: &Function,
    targets: &[bool],
    keep: &[bool],
    q: usize,
    d: Reg,
    n: u64,
) -> Option<(Vec<usize>, bool)> {
    let mut readers = Vec::new();
    for k in q + 1..func.code.len() {
        if targets[k] {
            break;
        }
        let inst = &func.code[k];
        if keep[k] {
            let mut overlapping = 0;
            operands::for_each(module, func, inst, |r, width, u| {
                overlapping += usize::from(u == Use::Read && operands::overlap(r, width, d, n));
            });
            if let Inst::IndexCheck { index, .. } = *inst
                && func.indices.get(index as usize).is_some_and(|i| operands::overlap(i.reg, 1, d, n))
            {
                return None;
            }
            if overlapping > 0 {
                let mut copy = inst.clone();
                let exact = plain_reads(module, &mut copy)?.iter().filter(|(r, w)| **r == d && *w == n).count();
                if exact != overlapping {
                    return None;
                }
                readers.push(k);
            }
            let mut written = (false, false);
            operands::for_each(module, func, inst, |r, width, u| {
                if u == Use::Write && operands::overlap(r, width, d, n) {
                    written.0 = true;
                    written.1 |= r <= d && r as u64 + width >= d as u64 + n;
                }
            });
            match written {
                (true, true) => return Some((readers, true)),
                (true, false) => return None,
                _ => {}
            }
        }
        if ends_block(inst) {
            break;
        }
    }
    Some((readers, false))
}

/// The register operands `inst` reads through its own fields, with their widths in slots as
/// [`operands::for_each`] reports them; None for the instructions not listed. An access chain's
/// indices are read through a side table and are not among them: [`block_readers`] keeps a copy
/// whose reader reads it any way this list does not show.
fn plain_reads<'a>(module: &ir::Module, inst: &'a mut Inst) -> Option<Vec<(&'a mut Reg, u64)>> {
    let layout = |l: u32| module.layouts.get(l as usize).map_or(0, |l| l.leaves.len() as u64);
    Some(match inst {
        Inst::Mov { src, n, .. } | Inst::Unary { a: src, n, .. } | Inst::Convert { src, n, .. } => {
            vec![(src, *n as u64)]
        }
        Inst::IntBin { a, b, n, .. } | Inst::FloatBin { a, b, n, .. } | Inst::Compare { a, b, n, .. } => {
            let n = *n as u64;
            vec![(a, n), (b, n)]
        }
        Inst::Select { cond, a, b, n, cond_lanes, .. } => {
            let n = *n as u64;
            vec![(cond, if *cond_lanes { n } else { 1 }), (a, n), (b, n)]
        }
        Inst::Math { args, n, .. } => {
            let n = *n as u64;
            args.iter_mut().map(|a| (a, n)).collect()
        }
        Inst::PtrDiff { a, b, .. } => vec![(a, 1), (b, 1)],
        Inst::PtrOffset { base, .. } => vec![(base, 1)],
        Inst::Load { ptr, .. } | Inst::LoadScalar { ptr, .. } => vec![(ptr, 1)],
        Inst::Store { src, ptr, layout: l, .. } => {
            let width = layout(*l);
            vec![(src, width), (ptr, 1)]
        }
        Inst::StoreScalar { src, ptr, .. } => vec![(src, 1), (ptr, 1)],
        Inst::CopyMemory { dst, src, size, .. } => vec![(dst, 1), (src, 1), (size, 1)],
        Inst::CastToSpace { src, .. } | Inst::PointerFence { src, .. } => vec![(src, 1)],
        Inst::BranchIf { cond, .. } => vec![(cond, 1)],
        Inst::Return { src, n } => vec![(src, *n as u64)],
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{FloatOp, IntOp};
    use rspirv::spirv::OpenclStd100Op as Cl;

    fn function(code: Vec<Inst>) -> Function {
        let locs = vec![u32::MAX; code.len()];
        Function {
            name: "f".into(),
            code,
            locs,
            template: vec![0; 16],
            params: vec![(0, 1), (1, 1)],
            ..Function::default()
        }
    }

    fn run(code: Vec<Inst>) -> (usize, Vec<Inst>, Vec<bool>) {
        let module = ir::Module::default();
        let mut func = function(code);
        let mut keep = vec![true; func.code.len()];
        let forwarded = forward_copies(&module, &mut func, &mut keep);
        (forwarded, func.code, keep)
    }

    fn fmul(dst: Reg, a: Reg, b: Reg) -> Inst {
        Inst::FloatBin { op: FloatOp::Mul, bits: 32, dst, a, b, n: 1 }
    }

    fn mov(dst: Reg, src: Reg) -> Inst {
        Inst::Mov { dst, src, n: 1 }
    }

    #[test]
    fn field_copies_go_and_their_readers_read_the_field() {
        let code = vec![mov(2, 0), mov(3, 0), fmul(4, 2, 3), Inst::Return { src: 4, n: 1 }];
        let (forwarded, code, keep) = run(code);
        assert_eq!(forwarded, 2);
        assert_eq!(keep, [false, false, true, true]);
        assert!(matches!(code[2], Inst::FloatBin { dst: 4, a: 0, b: 0, .. }), "{:?}", code[2]);
    }

    #[test]
    fn a_copy_stays_when_its_source_is_written_before_a_reader() {
        // r2 = r0; r0 = r0 + r1; r3 = r2 * r2: r3 must see r0's old value.
        let add = Inst::IntBin { op: IntOp::Add, bits: 32, dst: 0, a: 0, b: 1, n: 1 };
        let (forwarded, code, _) = run(vec![mov(2, 0), add, fmul(3, 2, 2), Inst::Return { src: 3, n: 1 }]);
        assert_eq!(forwarded, 0);
        assert!(matches!(code[2], Inst::FloatBin { dst: 3, a: 2, b: 2, .. }), "{:?}", code[2]);
    }

    #[test]
    fn a_copy_read_in_another_block_stays() {
        let code = vec![
            mov(2, 0),
            Inst::BranchIf { cond: 1, then: 2, otherwise: 3 },
            fmul(3, 2, 2),
            Inst::Return { src: 2, n: 1 },
        ];
        let (forwarded, _, keep) = run(code);
        assert_eq!(forwarded, 0);
        assert!(keep[0]);
    }

    #[test]
    fn a_copy_written_twice_stays() {
        // A phi's register: written on both paths, read after they meet.
        let code = vec![mov(2, 0), mov(2, 1), fmul(3, 2, 2), Inst::Return { src: 3, n: 1 }];
        let (forwarded, _, keep) = run(code);
        assert_eq!(forwarded, 0);
        assert_eq!(keep, [true, true, true, true]);
    }

    #[test]
    fn a_copy_written_again_after_its_readers_goes() {
        // The copies of an unrolled loop: r2 = r0; r3 = r2 * r1; r2 = r1; r4 = r2 * r3.
        let code = vec![mov(2, 0), fmul(3, 2, 1), mov(2, 1), fmul(4, 2, 3), Inst::Return { src: 4, n: 1 }];
        let (forwarded, code, keep) = run(code);
        // The first copy's value dies at the second copy; the second's is read by the last
        // reader of its register.
        assert_eq!(forwarded, 2);
        assert_eq!(keep, [false, true, false, true, true]);
        assert!(matches!(code[1], Inst::FloatBin { dst: 3, a: 0, b: 1, .. }), "{:?}", code[1]);
        assert!(matches!(code[3], Inst::FloatBin { dst: 4, a: 1, b: 3, .. }), "{:?}", code[3]);
        // A register read again after the block keeps the copy whose value may reach it.
        let code = vec![
            mov(2, 0),
            Inst::BranchIf { cond: 1, then: 2, otherwise: 2 },
            fmul(3, 2, 1),
            Inst::Return { src: 2, n: 1 },
        ];
        let (forwarded, _, keep) = run(code);
        assert_eq!((forwarded, keep[0]), (0, true));
        // A `mad` reads each of its arguments as one operand.
        let mad = Inst::Math { op: Cl::mad, kind: ir::MathKind::F32, dst: 3, args: [2, 1, 2], n: 1 };
        let (forwarded, code, _) = run(vec![mov(2, 0), mad, mov(2, 1), Inst::Return { src: 3, n: 1 }]);
        assert_eq!(forwarded, 1);
        assert!(matches!(code[1], Inst::Math { args: [0, 1, 0], .. }), "{:?}", code[1]);
        // A copy read in part stays, even when its destination is written again.
        let wide = Inst::Mov { dst: 4, src: 0, n: 2 };
        let part = fmul(5, 4, 4);
        let (forwarded, _, _) =
            run(vec![wide, part, Inst::Mov { dst: 4, src: 1, n: 2 }, Inst::Return { src: 5, n: 1 }]);
        assert_eq!(forwarded, 0, "a reader of one slot of a two-slot copy");
    }

    #[test]
    fn a_copy_read_in_part_or_through_a_side_table_stays() {
        let wide = Inst::Mov { dst: 4, src: 0, n: 2 };
        let part = fmul(6, 5, 5);
        let (forwarded, _, _) = run(vec![wide, part, Inst::Return { src: 6, n: 1 }]);
        assert_eq!(forwarded, 0, "a reader of one slot of a two-slot copy");
        let call = Inst::Call { func: 0, dst: 3, first_arg: 0, num_args: 1 };
        let mut func = function(vec![mov(2, 0), call, Inst::Return { src: 3, n: 1 }]);
        func.args = vec![ir::Arg { reg: 2, n: 1, kind: ir::ArgKind::Other }];
        let module = ir::Module { functions: vec![Function::default()], ..ir::Module::default() };
        let mut keep = vec![true; 3];
        assert_eq!(forward_copies(&module, &mut func, &mut keep), 0, "a call's argument");
    }

    #[test]
    fn chains_of_copies_collapse_to_the_first_source() {
        let code = vec![mov(2, 0), mov(3, 2), fmul(4, 3, 1), Inst::Return { src: 4, n: 1 }];
        let (forwarded, code, keep) = run(code);
        assert_eq!(forwarded, 2);
        assert_eq!(keep, [false, false, true, true]);
        assert!(matches!(code[2], Inst::FloatBin { dst: 4, a: 0, b: 1, .. }), "{:?}", code[2]);
    }
}
