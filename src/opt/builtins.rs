//! How much of a work-item function's value a function reads. `get_global_id(0)` loads the
//! three-slot id and reads its first slot only (every one-dimensional kernel); the executor,
//! told so by `Inst::Builtin::dims`, then writes one slot per work-item instead of three.
//!
//! A slot counts as read where an instruction reads it ([`operands::for_each`]) or a side table
//! of the function names it ([`for_each_in_side_tables`]):
//! registers are a function's own, so nothing else can read them. The count of slots is worked
//! out afresh each time, so the pass may run again after passes that rename or drop reads.
//!
//! What it cannot see: values and the other passes. It imports `base` and the IR only.

use super::base::for_each_in_side_tables;
use crate::ir::operands::{self, Use};
use crate::ir::{self, Function, Inst};

/// Sets the slots each work-item function of `func` has read (`dims`): up to the last one read,
/// at least one. Returns how many read fewer than their value's slots.
pub fn narrow_builtins(module: &ir::Module, func: &mut Function) -> usize {
    let mut read = vec![false; func.template.len()];
    let mut mark = |r: ir::Reg, n: u64| {
        for slot in read.iter_mut().skip(r as usize).take(n as usize) {
            *slot = true;
        }
    };
    for inst in &func.code {
        operands::for_each(module, func, inst, |r, n, u| {
            if u == Use::Read {
                mark(r, n)
            }
        });
    }
    for_each_in_side_tables(func, &mut mark);
    let mut narrowed = 0;
    for inst in &mut func.code {
        if let Inst::Builtin { dst, which, dims } = inst {
            let slots = which.lanes();
            let last_read = (0..slots).rev().find(|&i| read.get(*dst as usize + i as usize).copied().unwrap_or(true));
            *dims = last_read.map_or(1, |i| i + 1);
            narrowed += usize::from(*dims < slots);
        }
    }
    narrowed
}
