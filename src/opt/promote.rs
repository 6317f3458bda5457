//! Promotion of private copies to registers: a function's private variable that is filled by one
//! `memcpy` of its whole size (what the lowering makes of a struct passed by value, and what
//! clang makes of a struct assigned whole) and is then only read and written field by field at
//! constant offsets becomes one register per field.
//!
//! The copy becomes one [`Inst::Load`] of the source with a layout of those fields, and pieces
//! covering the bytes between them (the same bytes read, the same bounds check of the whole
//! size, one finding if the source is partly outside), each
//! field load a `Mov` from the field's register, each field store a truncating `Convert` into
//! it (what a store of that size leaves in memory), and the variable's `Alloca` and address
//! arithmetic disappear. Private memory never races and is never shown to the race detector as
//! shared, so nothing a report says changes; what changes is that each call of a helper taking
//! structs by value no longer grows, copies and reads a work-item's private memory lane by lane.
//!
//! What it cannot see: values and control flow beyond straight-line order. It promotes only
//! variables whose address never leaves the function's own field accesses (not passed to a
//! call, not stored, not compared, no index computed at run time), whose every address register
//! is written once, whose fields do not partly overlap, and whose copy follows the `Alloca` in
//! straight-line code before any field access, so every path that reads a field has run the copy.

use super::base::{Facts, disjoint_fields, ends_block, retarget_accesses};
use crate::ir::operands::{self, Use};
use crate::ir::{self, Function, Inst, Layout, Leaf, Reg};

/// Promotes every eligible variable of `func`, marking the instructions made dead in `keep`;
/// returns how many variables were promoted. New layouts go to `module`.
pub fn promote_copied_variables(module: &mut ir::Module, func: &mut Function, keep: &mut [bool]) -> usize {
    // Counted once: a promotion adds registers and rewrites accesses, never a branch or a write
    // count of an existing register.
    let facts = Facts::of(module, func);
    let mut promoted = 0;
    for p in 0..func.code.len() {
        let Inst::Alloca { dst, size, align } = func.code[p] else { continue };
        if !keep[p] {
            continue;
        }
        let Some(plan) = plan(module, func, keep, &facts, p, (dst, size, align)) else { continue };
        apply(module, func, keep, p, size, plan);
        promoted += 1;
    }
    promoted
}

/// What promoting one variable changes.
struct Plan {
    /// Registers holding the variable's address or an address inside it, with the offset.
    addresses: Vec<(Reg, u32)>,
    /// The instructions that derive those registers (dead once promoted).
    derivations: Vec<usize>,
    /// The whole-variable copy: its pc and source register.
    copy: (usize, Reg),
    /// Field accesses: pc, offset, size.
    accesses: Vec<(usize, u32, u8)>,
    /// The fields, sorted by offset, disjoint.
    fields: Vec<(u32, u8)>,
}

/// Decides whether the variable `var` (of `size` bytes aligned to `align`, made at `p`) can be
/// promoted.
fn plan(
    module: &ir::Module,
    func: &Function,
    keep: &[bool],
    facts: &Facts,
    p: usize,
    (var, size, align): (Reg, u32, u32),
) -> Option<Plan> {
    let writes = &facts.writes;
    let written_once = |r: Reg| writes.get(r as usize) == Some(&1);
    if !written_once(var) {
        return None;
    }
    // Every register derived from the variable's address by a move or a constant offset,
    // found to a fixed point (a loop may place a derivation before its source in the code).
    let mut addresses = vec![(var, 0u32)];
    let mut derivations = Vec::new();
    let offset_of = |addresses: &[(Reg, u32)], r: Reg| addresses.iter().find(|a| a.0 == r).map(|a| a.1);
    loop {
        let before = addresses.len();
        for (q, inst) in func.code.iter().enumerate() {
            if !keep[q] || derivations.contains(&q) {
                continue;
            }
            let derived = match *inst {
                Inst::Mov { dst, src, n: 1 } => offset_of(&addresses, src).map(|o| (dst, o as i64)),
                Inst::PtrOffset { dst, base, offset, num_indices: 0, .. } => {
                    offset_of(&addresses, base).map(|o| (dst, o as i64 + offset))
                }
                _ => None,
            };
            if let Some((dst, offset)) = derived {
                if !written_once(dst) || !(0..=size as i64).contains(&offset) || offset_of(&addresses, dst).is_some() {
                    return None;
                }
                addresses.push((dst, offset as u32));
                derivations.push(q);
            }
        }
        if addresses.len() == before {
            break;
        }
    }
    // Every read of an address register must be a derivation, a field access or the copy.
    let mut copy = None;
    let mut accesses = Vec::new();
    for (q, inst) in func.code.iter().enumerate() {
        if !keep[q] {
            continue;
        }
        let mut reads = 0;
        operands::for_each(module, func, inst, |r, n, u| {
            if u == Use::Read {
                reads += addresses.iter().filter(|a| operands::overlap(r, n, a.0, 1)).count();
            }
        });
        if reads == 0 || derivations.contains(&q) {
            continue;
        }
        // A field inside the variable, aligned as the access requires (a misaligned one keeps
        // the variable in memory, where the check of alignment sees it).
        let field = |ptr: Reg, width: u8, required: u8| {
            let offset = offset_of(&addresses, ptr)?;
            let required = (required as u32).max(1);
            let aligned = offset.is_multiple_of(required) && align.is_multiple_of(required);
            (width > 0 && offset + width as u32 <= size && aligned).then_some((q, offset, width))
        };
        match *inst {
            Inst::LoadScalar { ptr, size: width, align, .. } if reads == 1 => accesses.push(field(ptr, width, align)?),
            Inst::StoreScalar { ptr, size: width, align, .. } if reads == 1 => accesses.push(field(ptr, width, align)?),
            Inst::CopyMemory { dst, src, size: bytes, .. } if reads == 1 && dst == var && copy.is_none() => {
                let constant = writes.get(bytes as usize) == Some(&0);
                if !constant || func.template.get(bytes as usize) != Some(&(size as u64)) {
                    return None;
                }
                copy = Some((q, src));
            }
            _ => return None,
        }
    }
    let copy = copy?;
    // The copy follows the variable in straight-line code, with no field access between.
    let straight = (p + 1..=copy.0).all(|q| !facts.targets[q] && !ends_block(&func.code[q - 1]));
    if copy.0 < p || !straight || accesses.iter().any(|a| a.0 < copy.0 && a.0 > p) {
        return None;
    }
    let fields = disjoint_fields(accesses.iter().map(|a| (a.1, a.2)))?;
    Some(Plan { addresses, derivations, copy, accesses, fields })
}

/// Rewrites `func` as `plan` says.
fn apply(module: &mut ir::Module, func: &mut Function, keep: &mut [bool], p: usize, size: u32, plan: Plan) {
    let leaves = covering(&plan.fields, size);
    let first = func.template.len() as Reg;
    func.template.resize(func.template.len() + leaves.len(), 0);
    let register = |offset: u32, width: u8| {
        let at = leaves.iter().position(|l| (l.offset, l.size) == (offset, width));
        first + at.expect("every field is a leaf") as Reg
    };
    let layout = module.layouts.len() as u32;
    module.layouts.push(Layout { size, leaves: leaves.clone() });
    let (copy, src) = plan.copy;
    let Inst::CopyMemory { loc, .. } = func.code[copy] else { unreachable!("planned on a copy") };
    func.code[copy] = Inst::Load { dst: first, ptr: src, layout, loc, align: 1 };
    retarget_accesses(func, keep, (p, &plan.derivations), plan.accesses.iter().copied(), register);
    debug_assert!(plan.addresses.iter().all(|a| a.1 <= size));
}

/// The leaves of the promoted copy: the fields, and between and after them naturally aligned
/// pieces of at most 8 bytes, so that the load reads every byte the copy read (a race on bytes
/// no field uses is still a race of the copy).
fn covering(fields: &[(u32, u8)], size: u32) -> Vec<Leaf> {
    let mut leaves = Vec::with_capacity(fields.len());
    let mut at = 0u32;
    let fill = |leaves: &mut Vec<Leaf>, at: &mut u32, end: u32| {
        while *at < end {
            let mut width = 8u32;
            while width > 1 && (!(*at).is_multiple_of(width) || *at + width > end) {
                width /= 2;
            }
            leaves.push(Leaf { offset: *at, size: width as u8 });
            *at += width;
        }
    };
    for &(offset, size) in fields {
        fill(&mut leaves, &mut at, offset);
        leaves.push(Leaf { offset, size });
        at = offset + size as u32;
    }
    fill(&mut leaves, &mut at, size);
    leaves
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_leaves_cover_every_byte_with_aligned_pieces() {
        let leaves = super::covering(&[(1, 1), (8, 4)], 24);
        let got: Vec<_> = leaves.iter().map(|l| (l.offset, l.size)).collect();
        assert_eq!(got, [(0, 1), (1, 1), (2, 2), (4, 4), (8, 4), (12, 4), (16, 8)]);
    }
}
