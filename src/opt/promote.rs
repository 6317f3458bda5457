//! Promotion of private variables to registers: a function's private variable (an `Alloca`)
//! whose address is used only at constant offsets inside it — field loads and stores, layout
//! loads and stores of several fields (what the lowering makes of a struct read or written
//! whole), and `memcpy` of its whole size to or from elsewhere (a struct passed by value, or
//! assigned whole) — becomes one register per field, and per piece between fields.
//!
//! Each field load becomes a `Mov` from the field's register, each field store a truncating
//! `Convert` into it (what a store of that size leaves in memory), a layout access of
//! consecutive fields one `Mov` or `Convert` of as many registers, a copy in one [`Inst::Load`]
//! of the source with the variable's layout (the same bytes read, the same bounds check of the
//! whole size, one finding if the source is partly outside), a copy out one [`Inst::Store`] of
//! it; the variable's `Alloca` and address arithmetic disappear. A copy between two variables
//! becomes a layout access of each in turn: variables are promoted in rounds, and one only
//! copied in and out waits until the others have chosen their fields. Private memory never
//! races and is never shown to the race detector as shared, so nothing a report says changes;
//! what changes is that helpers taking and returning structs by value (a complex number through
//! a loop) no longer copy and read a work-item's private memory lane by lane.
//!
//! What it cannot see: values, and `volatile` (the IR does not carry it). A variable used only
//! scalar by scalar stays in memory: clang keeps such a variable there for a reason, most often
//! `volatile`, whose stores the scheduler counts as a spinning work-item's progress (a
//! `volatile` struct copied whole would be promoted). It promotes only variables whose address
//! never leaves those accesses (not passed to a call, not stored, not compared, no index
//! computed at run time), whose every address register is written once, whose fields do not
//! partly overlap, and whose every read finds the bytes it reads written on every path since
//! the `Alloca` (a forward analysis over the variable's pieces), so that no read of memory
//! nothing wrote (what the check of uninitialised values reports) becomes a read of a register.

use super::base::{Facts, disjoint_fields, retarget_accesses, stored_into};
use crate::ir::operands::{self, Use};
use crate::ir::{self, Function, Inst, Layout, Leaf, Reg};

/// Promotes every eligible variable of `func`, marking the instructions made dead in `keep`;
/// returns how many variables were promoted. New layouts go to `module`.
pub fn promote_copied_variables(module: &mut ir::Module, func: &mut Function, keep: &mut [bool]) -> usize {
    // Rounds until nothing changes: promoting one variable turns its copies to and from another
    // into layout accesses of that one, which may then be promoted in turn. Counted per round:
    // a promotion adds registers and rewrites accesses, never a branch or a write count of an
    // existing register.
    // A variable only copied in and out waits until no other can be promoted: by then the
    // variables it is copied to or from have chosen their fields, and its copies to and from
    // them are layout accesses of those fields, which it then takes as its own.
    let mut promoted = 0;
    let mut fieldless = false;
    loop {
        let facts = Facts::of(module, func);
        let before = promoted;
        for p in 0..func.code.len() {
            let Inst::Alloca { dst, size, align } = func.code[p] else { continue };
            if !keep[p] {
                continue;
            }
            let Some(plan) = plan(module, func, keep, &facts, p, (dst, size, align), fieldless) else { continue };
            apply(module, func, keep, p, size, plan);
            promoted += 1;
        }
        match (promoted == before, fieldless) {
            (true, true) => return promoted,
            (true, false) => fieldless = true,
            (false, _) => fieldless = false,
        }
    }
}

/// What promoting one variable changes.
struct Plan {
    /// Registers holding the variable's address or an address inside it, with the offset.
    addresses: Vec<(Reg, u32)>,
    /// The instructions that derive those registers (dead once promoted).
    derivations: Vec<usize>,
    /// Scalar field accesses: pc, offset, size.
    accesses: Vec<(usize, u32, u8)>,
    /// Accesses of several fields, or of the whole variable: pc and how.
    wholes: Vec<(usize, Whole)>,
    /// The registers' leaves: the fields, sorted by offset and disjoint, and the pieces between.
    leaves: Vec<Leaf>,
}

/// An instruction that reads or writes several of the variable's fields at once.
#[derive(Clone, Copy)]
enum Whole {
    /// A layout load from the variable: its leaves are the variable's leaves `first..first + n`.
    LoadFrom { first: usize, n: usize },
    /// A layout store into the variable, to leaves `first..first + n`, all `width` bytes.
    StoreInto { first: usize, n: usize, width: u8 },
    /// `memcpy` of the whole variable from elsewhere.
    CopyIn,
    /// `memcpy` of the whole variable to elsewhere.
    CopyOut,
}

/// A layout load or store whose address is inside the variable.
struct LayoutAccess {
    pc: usize,
    /// Where in the variable it starts.
    offset: u32,
    layout: u32,
    store: bool,
}

/// Decides whether the variable `var` (of `size` bytes aligned to `align`, made at `p`) can be
/// promoted; one that is only copied in and out, only when `fieldless`.
fn plan(
    module: &ir::Module,
    func: &Function,
    keep: &[bool],
    facts: &Facts,
    p: usize,
    (var, size, align): (Reg, u32, u32),
    fieldless: bool,
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
    // Every read of an address register must be a derivation, a field access, a layout access
    // of fields, or a copy of the whole variable.
    let mut accesses = Vec::new();
    let mut layouts = Vec::new();
    let mut copies = Vec::new();
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
        if reads > 1 {
            return None;
        }
        // The offset of an access of `width` bytes inside the variable, aligned as the access
        // requires (a misaligned one keeps the variable in memory, where the check of alignment
        // sees it).
        let inside = |ptr: Reg, width: u32, required: u8| {
            let offset = offset_of(&addresses, ptr)?;
            let required = (required as u32).max(1);
            let aligned = offset.is_multiple_of(required) && align.is_multiple_of(required);
            (width > 0 && offset + width <= size && aligned).then_some(offset)
        };
        match *inst {
            Inst::LoadScalar { ptr, size: width, align, .. } | Inst::StoreScalar { ptr, size: width, align, .. } => {
                accesses.push((q, inside(ptr, width as u32, align)?, width))
            }
            Inst::Load { ptr, layout, align, .. } | Inst::Store { ptr, layout, align, .. } => {
                let bytes = module.layouts.get(layout as usize)?.size;
                let store = matches!(inst, Inst::Store { .. });
                layouts.push(LayoutAccess { pc: q, offset: inside(ptr, bytes, align)?, layout, store });
            }
            Inst::CopyMemory { dst, src, size: bytes, .. } => {
                let constant = writes.get(bytes as usize) == Some(&0);
                if !constant || func.template.get(bytes as usize) != Some(&(size as u64)) {
                    return None;
                }
                match (dst == var, src == var) {
                    (true, false) => copies.push((q, Whole::CopyIn)),
                    (false, true) => copies.push((q, Whole::CopyOut)),
                    _ => return None,
                }
            }
            _ => return None,
        }
    }
    // The fields: every scalar access and every leaf of a layout access.
    let layout_leaves = |access: &LayoutAccess| {
        let offset = access.offset;
        module.layouts[access.layout as usize].leaves.iter().map(move |l| (offset + l.offset, l.size))
    };
    let fields = if accesses.is_empty() && layouts.is_empty() {
        // Only copied in and out: its registers are the natural pieces of its bytes.
        if copies.is_empty() || !fieldless {
            return None;
        }
        Vec::new()
    } else {
        disjoint_fields(accesses.iter().map(|a| (a.1, a.2)).chain(layouts.iter().flat_map(layout_leaves)))?
    };
    let leaves = covering(&fields, size);
    if leaves.len() > 128 {
        return None;
    }
    let index = |offset: u32, width: u8| leaves.iter().position(|l| (l.offset, l.size) == (offset, width));
    let mut wholes = copies;
    for access in &layouts {
        let parts: Vec<(u32, u8)> = layout_leaves(access).collect();
        let first = index(parts.first()?.0, parts[0].1)?;
        // One move (or truncation) of consecutive registers: the layout's leaves must be
        // consecutive leaves of the variable, and a store's all of one width.
        let consecutive = parts.iter().enumerate().all(|(k, &(o, w))| index(o, w) == Some(first + k));
        let width = parts[0].1;
        if !consecutive || (access.store && parts.iter().any(|&(_, w)| w != width)) {
            return None;
        }
        let n = parts.len();
        let whole = if access.store { Whole::StoreInto { first, n, width } } else { Whole::LoadFrom { first, n } };
        wholes.push((access.pc, whole));
    }
    // A variable clang left in memory although it is only read and written scalar by scalar
    // is one it chose to keep there, `volatile` most likely (the IR does not say): a spinning
    // work-item's stores to private memory are progress to the scheduler, its registers are
    // not, so such a variable stays. Structs used whole (a copy, a layout access) are what
    // clang leaves for other reasons (passed by value to a helper kept out of line).
    if wholes.is_empty() {
        return None;
    }
    // Registers hold what was last written; memory a work-item never wrote is uninitialised
    // (which the check of uninitialised values reports): every read must find its leaves
    // written on every path since the variable was made.
    let all = if leaves.len() == 128 { u128::MAX } else { (1u128 << leaves.len()) - 1 };
    let bits = |first: usize, n: usize| -> u128 { if n >= 128 { all } else { ((1u128 << n) - 1) << first } };
    let mut read = vec![0u128; func.code.len()];
    let mut written = vec![0u128; func.code.len()];
    for &(q, offset, width) in &accesses {
        let leaf = bits(index(offset, width)?, 1);
        match func.code[q] {
            Inst::StoreScalar { .. } => written[q] |= leaf,
            _ => read[q] |= leaf,
        }
    }
    for &(q, whole) in &wholes {
        match whole {
            Whole::LoadFrom { first, n } => read[q] |= bits(first, n),
            Whole::StoreInto { first, n, .. } => written[q] |= bits(first, n),
            Whole::CopyIn => written[q] |= all,
            Whole::CopyOut => read[q] |= all,
        }
    }
    if !written_before_read(func, p, &written, &read) {
        return None;
    }
    Some(Plan { addresses, derivations, accesses, wholes, leaves })
}

/// Whether every instruction's `read` leaves were written (`written`, per instruction) on every
/// path from the variable's making at `p` to it: a forward analysis of the leaves written for
/// sure, met by intersection where paths join.
fn written_before_read(func: &Function, p: usize, written: &[u128], read: &[u128]) -> bool {
    let mut sure: Vec<Option<u128>> = vec![None; func.code.len()];
    let mut work = vec![0];
    sure[0] = Some(0);
    while let Some(pc) = work.pop() {
        let here = sure[pc].unwrap_or(0);
        let after = if pc == p { 0 } else { here | written[pc] };
        func.for_each_successor(pc, |next| {
            let met = sure[next].map_or(after, |old| old & after);
            if sure[next] != Some(met) {
                sure[next] = Some(met);
                work.push(next);
            }
        });
    }
    sure.iter().zip(read).all(|(sure, &read)| sure.is_none_or(|sure| sure & read == read))
}

/// Rewrites `func` as `plan` says.
fn apply(module: &mut ir::Module, func: &mut Function, keep: &mut [bool], p: usize, size: u32, plan: Plan) {
    let leaves = plan.leaves;
    let first = func.template.len() as Reg;
    func.template.resize(func.template.len() + leaves.len(), 0);
    let register = |offset: u32, width: u8| {
        let at = leaves.iter().position(|l| (l.offset, l.size) == (offset, width));
        first + at.expect("every field is a leaf") as Reg
    };
    let layout = module.layouts.len() as u32;
    module.layouts.push(Layout { size, leaves: leaves.clone() });
    for &(q, whole) in &plan.wholes {
        func.code[q] = match (whole, &func.code[q]) {
            (Whole::CopyIn, &Inst::CopyMemory { src, loc, .. }) => {
                Inst::Load { dst: first, ptr: src, layout, loc, align: 1 }
            }
            (Whole::CopyOut, &Inst::CopyMemory { dst, loc, .. }) => {
                Inst::Store { src: first, ptr: dst, layout, loc, align: 1 }
            }
            (Whole::LoadFrom { first: at, n }, &Inst::Load { dst, .. }) => {
                Inst::Mov { dst, src: first + at as Reg, n: n as u16 }
            }
            (Whole::StoreInto { first: at, n, width }, &Inst::Store { src, .. }) => {
                stored_into(first + at as Reg, src, width, n as u16)
            }
            (_, other) => unreachable!("planned on a whole access, found {other:?}"),
        };
    }
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
