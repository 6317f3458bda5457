//! Register packing: the slots of a function's frame that nothing names any more (registers of
//! code that folding or inlining removed, callee slots an inlined body did not need) go, and the
//! others are renumbered in order, so that the frame is as small as what the code uses. The
//! interpreter keeps a row of the register file per slot with a word per work-item of a group
//! (512 bytes for 64 work-items): CLBlast's GEMM body kept 858 slots, of which its code named
//! fewer than 700 (fewer than 450 once specialised to a launch), and every slot is memory a
//! worker clears and faults in before its first group runs.
//!
//! A slot is named by what `base::for_each_named` visits: an instruction's register ranges, the
//! access-chain indices, shuffle lanes and call and printf arguments of the function's side
//! tables, its parameters and its `OpUndef` values (a range of zero registers names none, and is
//! renamed too, so that it stays inside the frame). Renumbering keeps the
//! order of the slots, so a range of consecutive slots stays consecutive, and each slot keeps its
//! template value: what every instruction reads and writes is unchanged.
//!
//! What it cannot see: values and the other passes. It imports `base` and the IR only, and needs
//! the module only for the widths of ranges that depend on layouts.

use super::base::for_each_named;
use crate::ir::operands::{self, Use};
use crate::ir::{self, Function, Reg};

/// Packs the frame of `func`; returns how many slots went.
pub fn pack_registers(module: &ir::Module, func: &mut Function) -> usize {
    let slots = func.template.len();
    let mut used = vec![false; slots];
    let mut in_range = true;
    let mut mark = |r: Reg, n: u64| {
        in_range &= r as u64 + n <= slots as u64;
        for u in used.iter_mut().skip(r as usize).take(n as usize) {
            *u = true;
        }
    };
    for_each_named(module, func, &mut mark);
    let unused = used.iter().filter(|u| !**u).count();
    // A range outside the frame is validation's to report, on the code as it was.
    if unused == 0 || !in_range {
        return 0;
    }
    // `at[r]`: the slots before `r` that stay, which is `r`'s new number if it stays (and, for a
    // range of zero registers, a number inside the smaller frame).
    let mut at = Vec::with_capacity(slots + 1);
    let mut next: Reg = 0;
    for &u in &used {
        at.push(next);
        next += u as Reg;
    }
    at.push(next);
    let new = |r: Reg| at.get(r as usize).copied().unwrap_or(next);
    for inst in &mut func.code {
        operands::every_range_mut(module, inst, |r, _, _: Use| *r = new(*r));
    }
    func.indices.iter_mut().for_each(|i| i.reg = new(i.reg));
    func.lanes.iter_mut().for_each(|r| *r = new(*r));
    func.args.iter_mut().for_each(|a| a.reg = new(a.reg));
    func.params.iter_mut().chain(&mut func.undefined).for_each(|(r, _)| *r = new(*r));
    let template = std::mem::take(&mut func.template);
    func.template = template.into_iter().zip(&used).filter(|(_, u)| **u).map(|(v, _)| v).collect();
    unused
}
