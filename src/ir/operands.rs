//! Which registers an instruction reads and writes, derived once from the [`Inst`] set so that
//! passes over the IR (the lowering's peepholes, checks) need not each list every variant.
//!
//! It sees one instruction with its function and module (for the side tables and layouts that
//! size its operands), never the values: where an operand's extent depends on run time it
//! reports the most the instruction may touch. Where an instruction may either read or write a
//! register range (the `vload`/`vstore` family), the range is reported as both, so a pass that
//! trusts these sets errs on the side of keeping code.

use super::{Function, Geo, Inst, Module, Reg, VecMem};

/// How an instruction uses a register range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    Read,
    Write,
}

/// Calls `visit(first, count, use)` for every register range `inst` (of `func`, in `module`)
/// reads or writes. Ranges of zero registers are not reported.
pub fn for_each(module: &Module, func: &Function, inst: &Inst, mut visit: impl FnMut(Reg, u64, Use)) {
    let mut read = |r: Reg, n: u64| {
        if n > 0 {
            visit(r, n, Use::Read)
        }
    };
    let mut writes: [(Reg, u64); 1] = [(0, 0)];
    let layout = |l: u32| module.layouts.get(l as usize).map_or(0, |l| l.leaves.len() as u64);
    let mut write = |r: Reg, n: u64| writes[0] = (r, n);
    match *inst {
        Inst::Mov { dst, src, n } | Inst::Unary { dst, a: src, n, .. } | Inst::Convert { dst, src, n, .. } => {
            write(dst, n as u64);
            read(src, n as u64);
        }
        Inst::IntBin { dst, a, b, n, .. }
        | Inst::FloatBin { dst, a, b, n, .. }
        | Inst::Compare { dst, a, b, n, .. } => {
            write(dst, n as u64);
            read(a, n as u64);
            read(b, n as u64);
        }
        Inst::Select { dst, cond, a, b, n, cond_lanes } => {
            write(dst, n as u64);
            read(cond, if cond_lanes { n as u64 } else { 1 });
            read(a, n as u64);
            read(b, n as u64);
        }
        Inst::Bitcast { dst, src, from, to } => {
            write(dst, layout(to));
            read(src, layout(from));
        }
        Inst::Reduce { dst, src, n, .. } => {
            write(dst, 1);
            read(src, n as u64);
        }
        Inst::PtrOffset { dst, base, first_index, num_indices, .. } => {
            write(dst, 1);
            read(base, 1);
            let end = first_index as usize + num_indices as usize;
            for index in func.indices.get(first_index as usize..end).unwrap_or(&[]) {
                read(index.reg, 1);
            }
        }
        Inst::PtrDiff { dst, a, b, .. } => {
            write(dst, 1);
            read(a, 1);
            read(b, 1);
        }
        Inst::Load { dst, ptr, layout: l, .. } => {
            write(dst, layout(l));
            read(ptr, 1);
        }
        Inst::LoadScalar { dst, ptr, .. } => {
            write(dst, 1);
            read(ptr, 1);
        }
        Inst::Store { src, ptr, layout: l, .. } => {
            read(src, layout(l));
            read(ptr, 1);
        }
        Inst::StoreScalar { src, ptr, .. } => {
            read(src, 1);
            read(ptr, 1);
        }
        // The index is read through its access chain's table entry, which that chain's
        // `PtrOffset` reads too (and keeps alive); listing it here would keep passes from folding
        // a conversion into the entry, which the check follows.
        Inst::IndexCheck { ptr, .. } => read(ptr, 1),
        Inst::CopyMemory { dst, src, size, .. } => {
            read(dst, 1);
            read(src, 1);
            read(size, 1);
        }
        Inst::Alloca { dst, .. } => write(dst, 1),
        Inst::ExtractDynamic { dst, src, index, n, .. } => {
            write(dst, 1);
            read(src, n as u64);
            read(index, 1);
        }
        Inst::InsertDynamic { dst, src, value, index, n, .. } => {
            write(dst, n as u64);
            read(src, n as u64);
            read(value, 1);
            read(index, 1);
        }
        Inst::Shuffle { dst, first, n } => {
            write(dst, n as u64);
            for &lane in func.lanes.get(first as usize..first as usize + n as usize).unwrap_or(&[]) {
                read(lane, 1);
            }
        }
        Inst::ShuffleDynamic { dst, a, b, na, mask, n, .. } => {
            write(dst, n as u64);
            read(a, na as u64);
            read(b, na as u64);
            read(mask, n as u64);
        }
        Inst::Builtin { dst, which, .. } => write(dst, which.lanes() as u64),
        Inst::Math { dst, args, n, .. } => {
            write(dst, n as u64);
            for a in args {
                read(a, n as u64);
            }
        }
        Inst::MathOut { dst, a, b, out, n, .. } => {
            write(dst, n as u64);
            read(a, n as u64);
            read(b, n as u64);
            read(out, 1);
        }
        Inst::Geometric { op, dst, a, b, n, .. } => {
            let n = n as u64;
            let (reads, writes) = match op {
                Geo::Cross => (3.max(n), 3.max(n)),
                Geo::Normalize | Geo::FastNormalize => (n, n),
                _ => (n, 1),
            };
            write(dst, writes);
            read(a, reads);
            read(b, reads);
        }
        Inst::VectorMemory { op, dst, offset, ptr, n, .. } => {
            if matches!(op, VecMem::Load | VecMem::LoadHalf { .. }) {
                write(dst, n as u64);
            } else {
                read(dst, n as u64);
            }
            read(offset, 1);
            read(ptr, 1);
        }
        Inst::Atomic { dst, ptr, value, comparator, .. } => {
            write(dst, 1);
            read(ptr, 1);
            read(value, 1);
            read(comparator, 1);
        }
        Inst::Collective { dst, src, id, id_n, .. } => {
            write(dst, 1);
            read(src, 1);
            read(id, id_n as u64);
        }
        Inst::CastToSpace { dst, src, .. } | Inst::PointerFence { dst, src } => {
            write(dst, 1);
            read(src, 1);
        }
        Inst::AsyncCopy { dst, dst_ptr, src_ptr, count, stride, event, .. } => {
            write(dst, 1);
            for r in [dst_ptr, src_ptr, count, stride, event] {
                read(r, 1);
            }
        }
        Inst::WaitEvents { num, list, .. } => {
            read(num, 1);
            read(list, 1);
        }
        Inst::ImageRead { dst, image, coord, coord_n, sampled, .. } => {
            write(dst, 4);
            read(image, if sampled { 2 } else { 1 });
            read(coord, coord_n as u64);
        }
        Inst::ImageWrite { image, coord, coord_n, src, .. } => {
            read(image, 1);
            read(coord, coord_n as u64);
            read(src, 4);
        }
        Inst::ImageQuery { dst, image, n, .. } => {
            write(dst, n as u64);
            read(image, 1);
        }
        Inst::Printf { dst, fmt, first_arg, num_args } => {
            write(dst, 1);
            read(fmt, 1);
            for a in func.args.get(first_arg as usize..first_arg as usize + num_args as usize).unwrap_or(&[]) {
                read(a.reg, a.n as u64);
            }
        }
        Inst::BranchIf { cond, .. } => read(cond, 1),
        Inst::Switch { value, .. } => read(value, 1),
        Inst::Call { func: callee, dst, first_arg, num_args } => {
            let returned = module.functions.get(callee as usize).and_then(|f| {
                f.code.iter().filter_map(|i| if let Inst::Return { n, .. } = i { Some(*n as u64) } else { None }).max()
            });
            write(dst, returned.unwrap_or(0));
            for a in func.args.get(first_arg as usize..first_arg as usize + num_args as usize).unwrap_or(&[]) {
                read(a.reg, a.n as u64);
            }
        }
        Inst::Return { src, n } => read(src, n as u64),
        Inst::Assert { cond, has_msg, msg, .. } => {
            read(cond, 1);
            if has_msg {
                read(msg, 1);
            }
        }
        Inst::Branch { .. }
        | Inst::Unreachable { .. }
        | Inst::Unsupported { .. }
        | Inst::Barrier { .. }
        | Inst::MemoryFence { .. } => {}
    }
    let [(r, n)] = writes;
    if n > 0 {
        visit(r, n, Use::Write);
    }
}

/// Whether the ranges `a..a + an` and `b..b + bn` share a register.
pub fn overlap(a: Reg, an: u64, b: Reg, bn: u64) -> bool {
    (a as u64) < b as u64 + bn && (b as u64) < a as u64 + an
}

/// The mutable twin of [`for_each`]: calls `visit(&mut first, count, use)` for every register
/// range held in `inst` itself, with the counts and uses [`for_each`] reports, so that a pass
/// can rename them (the inliner gives a callee's registers fresh slots in its caller). The
/// registers an instruction reads through its function's side tables (the indices of a
/// `PtrOffset`, the lanes of a `Shuffle`, the arguments of a `Call` or `Printf`) are not in the
/// instruction and are not visited: a pass renames those tables itself. Ranges of zero registers
/// are not visited; an `IndexCheck`'s index, read through its table entry, is not either.
pub fn for_each_mut(module: &Module, inst: &mut Inst, mut visit: impl FnMut(&mut Reg, u64, Use)) {
    every_range_mut(module, inst, |r, n, u| {
        if n > 0 {
            visit(r, n, u)
        }
    })
}

/// [`for_each_mut`] with the ranges of zero registers too (a `Return` of nothing, the result of
/// a call of a function that returns nothing): a pass that renumbers every register of a
/// function renames those as well, so that each still names a slot of the frame.
pub fn every_range_mut(module: &Module, inst: &mut Inst, mut v: impl FnMut(&mut Reg, u64, Use)) {
    let layout = |l: u32| module.layouts.get(l as usize).map_or(0, |l| l.leaves.len() as u64);
    use Use::{Read, Write};
    match inst {
        Inst::Mov { dst, src, n } | Inst::Unary { dst, a: src, n, .. } | Inst::Convert { dst, src, n, .. } => {
            let n = *n as u64;
            v(dst, n, Write);
            v(src, n, Read);
        }
        Inst::IntBin { dst, a, b, n, .. }
        | Inst::FloatBin { dst, a, b, n, .. }
        | Inst::Compare { dst, a, b, n, .. } => {
            let n = *n as u64;
            v(dst, n, Write);
            v(a, n, Read);
            v(b, n, Read);
        }
        Inst::Select { dst, cond, a, b, n, cond_lanes } => {
            let n = *n as u64;
            v(dst, n, Write);
            v(cond, if *cond_lanes { n } else { 1 }, Read);
            v(a, n, Read);
            v(b, n, Read);
        }
        Inst::Bitcast { dst, src, from, to } => {
            v(dst, layout(*to), Write);
            v(src, layout(*from), Read);
        }
        Inst::Reduce { dst, src, n, .. } => {
            v(dst, 1, Write);
            v(src, *n as u64, Read);
        }
        Inst::PtrOffset { dst, base, .. } => {
            v(dst, 1, Write);
            v(base, 1, Read);
        }
        Inst::PtrDiff { dst, a, b, .. } => {
            v(dst, 1, Write);
            v(a, 1, Read);
            v(b, 1, Read);
        }
        Inst::Load { dst, ptr, layout: l, .. } => {
            v(dst, layout(*l), Write);
            v(ptr, 1, Read);
        }
        Inst::LoadScalar { dst, ptr, .. } => {
            v(dst, 1, Write);
            v(ptr, 1, Read);
        }
        Inst::Store { src, ptr, layout: l, .. } => {
            v(src, layout(*l), Read);
            v(ptr, 1, Read);
        }
        Inst::StoreScalar { src, ptr, .. } => {
            v(src, 1, Read);
            v(ptr, 1, Read);
        }
        Inst::IndexCheck { ptr, .. } => v(ptr, 1, Read),
        Inst::CopyMemory { dst, src, size, .. } => {
            v(dst, 1, Read);
            v(src, 1, Read);
            v(size, 1, Read);
        }
        Inst::Alloca { dst, .. } => v(dst, 1, Write),
        Inst::ExtractDynamic { dst, src, index, n, .. } => {
            v(dst, 1, Write);
            v(src, *n as u64, Read);
            v(index, 1, Read);
        }
        Inst::InsertDynamic { dst, src, value, index, n, .. } => {
            let n = *n as u64;
            v(dst, n, Write);
            v(src, n, Read);
            v(value, 1, Read);
            v(index, 1, Read);
        }
        Inst::Shuffle { dst, n, .. } => v(dst, *n as u64, Write),
        Inst::ShuffleDynamic { dst, a, b, na, mask, n, .. } => {
            v(dst, *n as u64, Write);
            v(a, *na as u64, Read);
            v(b, *na as u64, Read);
            v(mask, *n as u64, Read);
        }
        Inst::Builtin { dst, which, .. } => v(dst, which.lanes() as u64, Write),
        Inst::Math { dst, args, n, .. } => {
            let n = *n as u64;
            v(dst, n, Write);
            for a in args {
                v(a, n, Read);
            }
        }
        Inst::MathOut { dst, a, b, out, n, .. } => {
            let n = *n as u64;
            v(dst, n, Write);
            v(a, n, Read);
            v(b, n, Read);
            v(out, 1, Read);
        }
        Inst::Geometric { op, dst, a, b, n, .. } => {
            let n = *n as u64;
            let (reads, writes) = match op {
                Geo::Cross => (3.max(n), 3.max(n)),
                Geo::Normalize | Geo::FastNormalize => (n, n),
                _ => (n, 1),
            };
            v(dst, writes, Write);
            v(a, reads, Read);
            v(b, reads, Read);
        }
        Inst::VectorMemory { op, dst, offset, ptr, n, .. } => {
            let load = matches!(op, VecMem::Load | VecMem::LoadHalf { .. });
            v(dst, *n as u64, if load { Write } else { Read });
            v(offset, 1, Read);
            v(ptr, 1, Read);
        }
        Inst::Atomic { dst, ptr, value, comparator, .. } => {
            v(dst, 1, Write);
            v(ptr, 1, Read);
            v(value, 1, Read);
            v(comparator, 1, Read);
        }
        Inst::Collective { dst, src, id, id_n, .. } => {
            v(dst, 1, Write);
            v(src, 1, Read);
            v(id, *id_n as u64, Read);
        }
        Inst::CastToSpace { dst, src, .. } | Inst::PointerFence { dst, src } => {
            v(dst, 1, Write);
            v(src, 1, Read);
        }
        Inst::AsyncCopy { dst, dst_ptr, src_ptr, count, stride, event, .. } => {
            v(dst, 1, Write);
            for r in [dst_ptr, src_ptr, count, stride, event] {
                v(r, 1, Read);
            }
        }
        Inst::WaitEvents { num, list, .. } => {
            v(num, 1, Read);
            v(list, 1, Read);
        }
        Inst::ImageRead { dst, image, coord, coord_n, sampled, .. } => {
            v(dst, 4, Write);
            v(image, if *sampled { 2 } else { 1 }, Read);
            v(coord, *coord_n as u64, Read);
        }
        Inst::ImageWrite { image, coord, coord_n, src, .. } => {
            v(image, 1, Read);
            v(coord, *coord_n as u64, Read);
            v(src, 4, Read);
        }
        Inst::ImageQuery { dst, image, n, .. } => {
            v(dst, *n as u64, Write);
            v(image, 1, Read);
        }
        Inst::Printf { dst, fmt, .. } => {
            v(dst, 1, Write);
            v(fmt, 1, Read);
        }
        Inst::BranchIf { cond, .. } => v(cond, 1, Read),
        Inst::Switch { value, .. } => v(value, 1, Read),
        Inst::Call { func: callee, dst, .. } => {
            let returned = module.functions.get(*callee as usize).and_then(|f| {
                f.code.iter().filter_map(|i| if let Inst::Return { n, .. } = i { Some(*n as u64) } else { None }).max()
            });
            v(dst, returned.unwrap_or(0), Write);
        }
        Inst::Return { src, n } => v(src, *n as u64, Read),
        Inst::Assert { cond, has_msg, msg, .. } => {
            v(cond, 1, Read);
            if *has_msg {
                v(msg, 1, Read);
            }
        }
        Inst::Branch { .. }
        | Inst::Unreachable { .. }
        | Inst::Unsupported { .. }
        | Inst::Barrier { .. }
        | Inst::MemoryFence { .. } => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{
        Arg, ArgKind, AtomicOp, Builtin, Cmp, CollectiveOp, Conv, Fence, FloatOp, Function, ImageQuery, Index, IntOp,
        Layout, Leaf, MathKind, MemOrder, Scope, TexelType, UnOp,
    };
    use rspirv::spirv::OpenclStd100Op;

    /// Which variant an instruction is, by an exhaustive match: a new variant fails to compile
    /// here until it is given a number (and a sample in [`samples`]).
    fn variant(inst: &Inst) -> usize {
        match inst {
            Inst::Mov { .. } => 0,
            Inst::IntBin { .. } => 1,
            Inst::FloatBin { .. } => 2,
            Inst::Compare { .. } => 3,
            Inst::Unary { .. } => 4,
            Inst::Convert { .. } => 5,
            Inst::Select { .. } => 6,
            Inst::Bitcast { .. } => 7,
            Inst::Reduce { .. } => 8,
            Inst::PtrOffset { .. } => 9,
            Inst::PtrDiff { .. } => 10,
            Inst::Load { .. } => 11,
            Inst::LoadScalar { .. } => 12,
            Inst::Store { .. } => 13,
            Inst::StoreScalar { .. } => 14,
            Inst::IndexCheck { .. } => 15,
            Inst::CopyMemory { .. } => 16,
            Inst::Alloca { .. } => 17,
            Inst::ExtractDynamic { .. } => 18,
            Inst::InsertDynamic { .. } => 19,
            Inst::Shuffle { .. } => 20,
            Inst::ShuffleDynamic { .. } => 21,
            Inst::Builtin { .. } => 22,
            Inst::Math { .. } => 23,
            Inst::MathOut { .. } => 24,
            Inst::Geometric { .. } => 25,
            Inst::VectorMemory { .. } => 26,
            Inst::Atomic { .. } => 27,
            Inst::Collective { .. } => 28,
            Inst::Barrier { .. } => 29,
            Inst::MemoryFence { .. } => 30,
            Inst::CastToSpace { .. } => 31,
            Inst::PointerFence { .. } => 32,
            Inst::AsyncCopy { .. } => 33,
            Inst::WaitEvents { .. } => 34,
            Inst::ImageRead { .. } => 35,
            Inst::ImageWrite { .. } => 36,
            Inst::ImageQuery { .. } => 37,
            Inst::Printf { .. } => 38,
            Inst::Branch { .. } => 39,
            Inst::BranchIf { .. } => 40,
            Inst::Switch { .. } => 41,
            Inst::Call { .. } => 42,
            Inst::Return { .. } => 43,
            Inst::Unreachable { .. } => 44,
            Inst::Assert { .. } => 45,
            Inst::Unsupported { .. } => 46,
        }
    }
    const VARIANTS: usize = 47;

    /// One or more instructions of every variant, each with distinct registers (2 upwards).
    fn samples() -> Vec<Inst> {
        let (d, a, b, c) = (2, 10, 20, 30);
        let l = 0;
        let op = OpenclStd100Op::fma;
        vec![
            Inst::Mov { dst: d, src: a, n: 3 },
            Inst::IntBin { op: IntOp::Add, bits: 32, dst: d, a, b, n: 2 },
            Inst::FloatBin { op: FloatOp::Mul, bits: 32, dst: d, a, b, n: 4 },
            Inst::Compare { cmp: Cmp::SLt, bits: 32, dst: d, a, b, n: 1 },
            Inst::Unary { op: UnOp::Not, bits: 32, dst: d, a, n: 2 },
            Inst::Convert { conv: Conv::UInt, from: 32, to: 64, dst: d, src: a, n: 1 },
            Inst::Select { dst: d, cond: c, a, b, n: 4, cond_lanes: true },
            Inst::Select { dst: d, cond: c, a, b, n: 4, cond_lanes: false },
            Inst::Bitcast { dst: d, src: a, from: 0, to: 1 },
            Inst::Reduce { all: true, dst: d, src: a, n: 4 },
            Inst::PtrOffset { dst: d, base: a, offset: 8, first_index: 0, num_indices: 2 },
            Inst::PtrDiff { dst: d, a, b, elem: 4 },
            Inst::Load { dst: d, ptr: a, layout: 1, loc: l, align: 4 },
            Inst::LoadScalar { dst: d, ptr: a, size: 4, loc: l, align: 4 },
            Inst::Store { src: d, ptr: a, layout: 0, loc: l, align: 4 },
            Inst::StoreScalar { src: d, ptr: a, size: 4, loc: l, align: 4 },
            Inst::IndexCheck { index: 1, ptr: a, extent: 8, loc: l },
            Inst::CopyMemory { dst: d, src: a, size: b, loc: l },
            Inst::Alloca { dst: d, size: 16, align: 4 },
            Inst::ExtractDynamic { dst: d, src: a, index: b, index_bits: 32, n: 4, beyond: 0 },
            Inst::InsertDynamic { dst: d, src: a, value: b, index: c, index_bits: 32, n: 4 },
            Inst::Shuffle { dst: d, first: 0, n: 3 },
            Inst::ShuffleDynamic { dst: d, a, b, na: 4, mask: c, n: 2, mask_bits: 32 },
            Inst::Builtin { dst: d, which: Builtin::GlobalId, dims: 3 },
            Inst::Builtin { dst: d, which: Builtin::WorkDim, dims: 1 },
            Inst::Math { op, kind: MathKind::F32, dst: d, args: [a, b, c], n: 2 },
            Inst::MathOut { op: OpenclStd100Op::frexp, bits: 32, out_bits: 32, dst: d, a, b, out: c, n: 2, loc: l },
            Inst::Geometric { op: Geo::Dot, bits: 32, dst: d, a, b, n: 4 },
            Inst::Geometric { op: Geo::Cross, bits: 32, dst: d, a, b, n: 3 },
            Inst::Geometric { op: Geo::Normalize, bits: 32, dst: d, a, b, n: 2 },
            Inst::VectorMemory { op: VecMem::Load, dst: d, offset: a, ptr: b, elem: 4, n: 4, loc: l },
            Inst::VectorMemory { op: VecMem::Store, dst: d, offset: a, ptr: b, elem: 4, n: 4, loc: l },
            Inst::Atomic {
                op: AtomicOp::CompareExchange,
                bits: 32,
                order: MemOrder::Relaxed,
                fail_order: MemOrder::Relaxed,
                scope: Scope::Device,
                dst: d,
                ptr: a,
                value: b,
                comparator: c,
                loc: l,
            },
            Inst::Collective {
                op: CollectiveOp::Broadcast,
                bits: 32,
                dst: d,
                src: a,
                id: b,
                id_n: 2,
                loc: l,
                sub_group: false,
            },
            Inst::Barrier { fence: Fence::default(), scope: Scope::WorkGroup, loc: l, sub_group: false },
            Inst::MemoryFence { fence: Fence::default(), order: MemOrder::AcqRel, scope: Scope::Device, loc: l },
            Inst::CastToSpace { dst: d, src: a, space: 1 },
            Inst::PointerFence { dst: d, src: a },
            Inst::AsyncCopy {
                dst: d,
                dst_ptr: a,
                src_ptr: b,
                count: c,
                stride: 40,
                elem: 4,
                to_local: true,
                event: 50,
                loc: l,
            },
            Inst::WaitEvents { num: a, list: b, loc: l },
            Inst::ImageRead {
                dst: d,
                image: a,
                coord: b,
                coord_n: 2,
                float_coord: true,
                sampled: true,
                texel: TexelType::Float,
                loc: l,
            },
            Inst::ImageWrite { image: a, coord: b, coord_n: 2, src: c, texel: TexelType::Int, loc: l },
            Inst::ImageQuery { dst: d, image: a, query: ImageQuery::Size, n: 2, bits: 32 },
            Inst::Printf { dst: d, fmt: a, first_arg: 0, num_args: 2 },
            Inst::Branch { target: 0 },
            Inst::BranchIf { cond: c, then: 0, otherwise: 1 },
            Inst::Switch { value: a, bits: 32, table: 0 },
            Inst::Call { func: 1, dst: d, first_arg: 0, num_args: 2 },
            Inst::Return { src: a, n: 2 },
            Inst::Return { src: a, n: 0 },
            Inst::Unreachable { loc: l },
            Inst::Assert { cond: c, bits: 32, has_msg: true, msg: a, loc: l },
            Inst::Assert { cond: c, bits: 32, has_msg: false, msg: a, loc: l },
            Inst::Unsupported { what: 0, loc: l },
        ]
    }

    /// A module whose layouts, side tables and callee the samples refer to: function 0 has two
    /// indices (registers 60, 61), three shuffle lanes (70..73) and two arguments (80:2, 90);
    /// function 1 returns two slots.
    fn module() -> Module {
        let leaf = |offset| Leaf { offset, size: 4 };
        let caller = Function {
            indices: vec![Index { reg: 60, bits: 32, stride: 4 }, Index { reg: 61, bits: 32, stride: 8 }],
            lanes: vec![70, 71, 72],
            args: vec![Arg { reg: 80, n: 2, kind: ArgKind::Other }, Arg { reg: 90, n: 1, kind: ArgKind::Other }],
            template: vec![0; 100],
            ..Function::default()
        };
        let callee = Function { code: vec![Inst::Return { src: 0, n: 2 }], ..Function::default() };
        let layouts = vec![
            Layout { size: 8, leaves: vec![leaf(0), leaf(4)] },
            Layout { size: 12, leaves: vec![leaf(0), leaf(4), leaf(8)] },
        ];
        Module { functions: vec![caller, callee], layouts, ..Module::default() }
    }

    fn reported(module: &Module, inst: &Inst) -> Vec<(Reg, u64, Use)> {
        let mut got = Vec::new();
        for_each(module, &module.functions[0], inst, |r, n, u| got.push((r, n, u)));
        got
    }

    /// The registers `for_each` reports through the side tables (held outside the instruction).
    fn through_tables(inst: &Inst) -> Vec<(Reg, u64, Use)> {
        match inst {
            Inst::PtrOffset { .. } => vec![(60, 1, Use::Read), (61, 1, Use::Read)],
            Inst::Shuffle { .. } => vec![(70, 1, Use::Read), (71, 1, Use::Read), (72, 1, Use::Read)],
            Inst::Printf { .. } | Inst::Call { .. } => vec![(80, 2, Use::Read), (90, 1, Use::Read)],
            _ => vec![],
        }
    }

    fn sorted(mut v: Vec<(Reg, u64, Use)>) -> Vec<(Reg, u64, bool)> {
        let mut out: Vec<(Reg, u64, bool)> = v.drain(..).map(|(r, n, u)| (r, n, u == Use::Write)).collect();
        out.sort_unstable();
        out
    }

    #[test]
    fn the_mutable_twin_visits_what_for_each_reports_on_every_variant() {
        let module = module();
        let samples = samples();
        let mut seen = [false; VARIANTS];
        for inst in &samples {
            seen[variant(inst)] = true;
            let mut expected = reported(&module, inst);
            let tables = through_tables(inst);
            expected.retain(|e| !tables.contains(e));
            assert_eq!(reported(&module, inst).len(), expected.len() + tables.len(), "{inst:?}");
            let mut visited = Vec::new();
            for_each_mut(&module, &mut inst.clone(), |r, n, u| visited.push((*r, n, u)));
            assert_eq!(sorted(visited), sorted(expected), "{inst:?}");
        }
        assert!(seen.iter().all(|&s| s), "a sample of every variant: {seen:?}");
    }

    #[test]
    fn renaming_through_the_twin_moves_every_range_for_each_reports() {
        let module = module();
        for inst in samples() {
            let mut renamed = inst.clone();
            for_each_mut(&module, &mut renamed, |r, _, _| *r += 1000);
            let tables = through_tables(&inst);
            let shifted: Vec<(Reg, u64, Use)> = reported(&module, &inst)
                .into_iter()
                .map(|(r, n, u)| if tables.contains(&(r, n, u)) { (r, n, u) } else { (r + 1000, n, u) })
                .collect();
            assert_eq!(sorted(reported(&module, &renamed)), sorted(shifted), "{inst:?}");
        }
    }
}
