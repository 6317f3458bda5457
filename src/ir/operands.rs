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
        Inst::Builtin { dst, which } => write(dst, which.lanes() as u64),
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
