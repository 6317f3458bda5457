//! Scalar replacement of private arrays: a function's private variable (an `Alloca`) that is
//! only read and written element by element, at constant offsets, with every read of an element
//! after a write of it on every path, becomes one register per element. What unrolling and
//! constant folding leave of a kernel's register block (`float acc[2][2]` indexed by unrolled
//! loop counters) is this shape.
//!
//! Each element store becomes a truncating `Convert` into the element's register (what a store of
//! that size leaves in memory, a `Mov` for 8 bytes), each element load a `Mov` from it, and the
//! `Alloca` and the address arithmetic go. Private memory never races and is never shown to the
//! race detector as shared. The check of uninitialised values sees the same: a load is reached
//! only after a store of the same element, so it read the stored value's bytes, whose shadow
//! the `Convert` carries (the low bytes of the value, with their origin); a fresh variable's
//! uninitialised bytes are never read. A misaligned or out-of-bounds access keeps the variable in
//! memory, where it is reported.
//!
//! What it cannot see: values, and the other passes. It works from register numbers, the
//! straight-line order of instructions and dominators: every address of the variable is its
//! `Alloca`'s register or a `PtrOffset` of it by a constant, read only as the address of a
//! scalar load or store in the same straight-line code (not stored, passed to a call, compared,
//! checked against an array's extent, or indexed at run time), elements do not partly overlap,
//! and the `Alloca` runs once per call (it is in the function's first block).

use super::base::{Facts, disjoint_fields, ends_block, retarget_accesses, straight_line_writer, successors};
use crate::ir::dominators;
use crate::ir::operands::{self, Use};
use crate::ir::{self, Function, Inst, Reg};

/// Replaces every eligible private array of `func` by registers, marking the instructions made
/// dead in `keep`; returns how many arrays were replaced.
pub fn scalarise_arrays(module: &mut ir::Module, func: &mut Function, keep: &mut [bool]) -> usize {
    let facts = Facts::of(module, func);
    // The first block: an `Alloca` there runs once per call, before anything else.
    let first_block =
        (0..func.code.len()).find(|&q| (q > 0 && facts.targets[q]) || ends_block(&func.code[q])).unwrap_or(0);
    let idom = dominators::immediate(&successors(func), 0);
    let mut replaced = 0;
    for p in 0..first_block {
        let Inst::Alloca { dst, size, align } = func.code[p] else { continue };
        if !keep[p] || facts.writes.get(dst as usize) != Some(&1) {
            continue;
        }
        let Some(plan) = plan(module, func, &facts, &idom, (dst, size, align)) else { continue };
        apply(func, keep, p, plan);
        replaced += 1;
    }
    replaced
}

/// One element access: pc, offset, size, whether it stores.
type Access = (usize, u32, u8, bool);

struct Plan {
    /// The `PtrOffset`s of the variable's address (dead once replaced).
    derivations: Vec<usize>,
    accesses: Vec<Access>,
    /// The elements, sorted by offset, disjoint.
    fields: Vec<(u32, u8)>,
}

/// Decides whether the variable `var` (of `size` bytes aligned to `align`) can be replaced.
fn plan(
    module: &ir::Module,
    func: &Function,
    facts: &Facts,
    idom: &[Option<usize>],
    (var, size, align): (Reg, u32, u32),
) -> Option<Plan> {
    let reads = |inst: &Inst, x: Reg| {
        let mut n = 0;
        operands::for_each(module, func, inst, |r, k, u| n += (u == Use::Read && operands::overlap(r, k, x, 1)) as u32);
        n
    };
    // An access through `ptr` at `offset`, if the instruction at `q` is a scalar access of one
    // aligned element inside the variable, reading `ptr` as its address only.
    let access = |q: usize, ptr_reg: Reg, offset: i64| -> Option<Access> {
        let (ptr, width, required, store) = match func.code[q] {
            Inst::LoadScalar { ptr, size, align, .. } => (ptr, size, align, false),
            Inst::StoreScalar { src, ptr, size, align, .. } if src != ptr_reg => (ptr, size, align, true),
            _ => return None,
        };
        let required = (required as u32).max(1);
        let offset = u32::try_from(offset).ok()?;
        let inside = width > 0 && offset as u64 + width as u64 <= size as u64;
        let aligned = offset.is_multiple_of(required) && align.is_multiple_of(required);
        (ptr == ptr_reg && reads(&func.code[q], ptr_reg) == 1 && inside && aligned).then_some((q, offset, width, store))
    };
    let mut derivations = Vec::new();
    let mut accesses = Vec::new();
    for (q, inst) in func.code.iter().enumerate() {
        if reads(inst, var) == 0 {
            continue;
        }
        match *inst {
            Inst::PtrOffset { dst, base, num_indices: 0, .. } if base == var && dst != var => derivations.push(q),
            _ => accesses.push(access(q, var, 0)?),
        }
    }
    // Every read of a derived address is an access whose address comes, in straight-line code,
    // from one of the derivations.
    let mut derived: Vec<Reg> = derivations
        .iter()
        .map(|&q| match func.code[q] {
            Inst::PtrOffset { dst, .. } => dst,
            _ => unreachable!("derivations are offsets"),
        })
        .collect();
    derived.sort_unstable();
    derived.dedup();
    for (q, inst) in func.code.iter().enumerate() {
        for &d in &derived {
            if reads(inst, d) == 0 {
                continue;
            }
            let w = straight_line_writer(module, func, &facts.targets, q, d, 1)?;
            let Inst::PtrOffset { dst, base, offset, num_indices: 0, .. } = func.code[w] else { return None };
            if dst != d || base != var {
                return None;
            }
            accesses.push(access(q, d, offset)?);
        }
    }
    let fields = disjoint_fields(accesses.iter().map(|a| (a.1, a.2)))?;
    // Each load is dominated by a store of its element.
    let stored = |pc: usize, field: (u32, u8)| accesses.iter().any(|a| a.0 == pc && a.3 && (a.1, a.2) == field);
    for &(q, offset, width, store) in &accesses {
        if store {
            continue;
        }
        let mut at = q;
        while let Some(up) = idom[at] {
            if up == at {
                return None;
            }
            if stored(up, (offset, width)) {
                break;
            }
            at = up;
        }
    }
    Some(Plan { derivations, accesses, fields })
}

/// Rewrites `func` as `plan` says; the variable was made at `p`.
fn apply(func: &mut Function, keep: &mut [bool], p: usize, plan: Plan) {
    let first = func.template.len() as Reg;
    func.template.resize(func.template.len() + plan.fields.len(), 0);
    let register = |offset: u32, width: u8| {
        let at = plan.fields.iter().position(|&f| f == (offset, width));
        first + at.expect("every access is a field") as Reg
    };
    let accesses = plan.accesses.iter().map(|&(q, offset, width, _)| (q, offset, width));
    retarget_accesses(func, keep, (p, &plan.derivations), accesses, register);
}
