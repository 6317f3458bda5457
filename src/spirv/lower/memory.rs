//! Memory: private variables, loads and stores (scalar or by layout, with the alignment the
//! memory operands require), access chains with their run-time index checks, memory copies,
//! pointer differences and the casts between pointers, integers and address spaces, and loads of
//! builtin variables. It sees the function being lowered and the module's types and constants.

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{BuiltIn, Op, StorageClass};

use super::{FunctionLowering, LowerError, value_layout};
use crate::ir::value::{MAX_PRIVATE_BYTES, SPACE_GLOBAL, SPACE_LOCAL, SPACE_PRIVATE, sign_extend};
use crate::ir::{Builtin, Conv, Index, Inst, Reg};
use crate::spirv::module::{GlobalRef, id};
use crate::spirv::types::Ty;

impl FunctionLowering<'_> {
    /// `OpVariable` in a function: a private allocation, stored its initialiser if it has one.
    pub(super) fn variable(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let (dst, ty) = self.result(inst)?;
        let pointee = ty.pointee().cloned().unwrap_or(Ty::Int(8));
        if pointee.size() > MAX_PRIVATE_BYTES as u64 {
            return Err(LowerError::PrivateTooLarge(pointee.size()));
        }
        self.code.push(Inst::Alloca { dst, size: pointee.size() as u32, align: pointee.align().max(1) as u32 });
        if let Some(init) = inst.operands.get(1) {
            let src = self.reg(init)?;
            self.store(src, dst, &pointee)?;
        }
        Ok(())
    }

    pub(super) fn load(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let (dst, ty) = self.result(inst)?;
        let pid = id(&inst.operands[0])?;
        if let Some(GlobalRef::Builtin(b)) = self.m.info.globals.get(&pid) {
            let which = builtin(*b).ok_or(LowerError::UnsupportedBuiltin(*b))?;
            self.code.push(Inst::Builtin { dst, which, dims: which.lanes() });
            self.builtin_values.insert(inst.result_id.unwrap_or(0), which);
            return Ok(());
        }
        let ptr = self.reg(&inst.operands[0])?;
        let layout = value_layout(&ty)?;
        let align = required_alignment(&inst.operands[1..], &ty);
        if layout.leaves.len() == 1 && layout.leaves[0].offset == 0 {
            self.code.push(Inst::LoadScalar { dst, ptr, size: layout.leaves[0].size, loc: self.loc, align });
        } else {
            let layout = self.m.layout(&ty)?;
            self.code.push(Inst::Load { dst, ptr, layout, loc: self.loc, align });
        }
        Ok(())
    }

    /// `OpStore`, with the alignment its memory operands require.
    pub(super) fn store_op(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let ops = &inst.operands;
        let ptr = self.reg(&ops[0])?;
        let (src, ty) = self.val(&ops[1])?;
        self.store_aligned(src, ptr, &ty, required_alignment(&ops[2..], &ty))
    }

    /// A store of our own making (a variable's initialiser): nothing to check of its alignment.
    fn store(&mut self, src: Reg, ptr: Reg, ty: &Ty) -> Result<(), LowerError> {
        self.store_aligned(src, ptr, ty, 1)
    }

    fn store_aligned(&mut self, src: Reg, ptr: Reg, ty: &Ty, align: u8) -> Result<(), LowerError> {
        let layout = value_layout(ty)?;
        if layout.leaves.len() == 1 && layout.leaves[0].offset == 0 {
            self.code.push(Inst::StoreScalar { src, ptr, size: layout.leaves[0].size, loc: self.loc, align });
        } else {
            let layout = self.m.layout(ty)?;
            self.code.push(Inst::Store { src, ptr, layout, loc: self.loc, align });
        }
        Ok(())
    }

    pub(super) fn access_chain(&mut self, inst: &Instruction, has_element: bool) -> Result<(), LowerError> {
        let (dst, _) = self.result(inst)?;
        let (base, bty) = self.val(&inst.operands[0])?;
        let mut ty = bty.pointee().cloned().ok_or(LowerError::ChainOnNonPointer)?;
        let mut offset: i64 = 0;
        let first_index = self.indices.len() as u32;
        let mut ops = &inst.operands[1..];
        // Run-time indices into arrays, checked against the array's extent once the address is known.
        let mut checks: Vec<(u32, u32)> = Vec::new();
        if has_element {
            offset = offset.wrapping_add(self.chain_index(&ops[0], ty.stride())?);
            ops = &ops[1..];
        }
        for op in ops {
            ty = match ty {
                Ty::Struct(..) => {
                    let field = self.const_value(op).ok_or(LowerError::StructIndexNotConstant)?;
                    offset += *ty.field_offsets().get(field as usize).ok_or(LowerError::StructIndexOutOfRange)? as i64;
                    let Ty::Struct(fields, _) = &ty else { unreachable!() };
                    fields[field as usize].clone()
                }
                Ty::Array(e, n) => {
                    let indexed = self.indices.len();
                    offset = offset.wrapping_add(self.chain_index(op, e.stride())?);
                    if let (true, Ok(extent @ 1..)) = (self.indices.len() > indexed, u32::try_from(n)) {
                        checks.push((indexed as u32, extent));
                    }
                    *e
                }
                Ty::Vector(e, _) => {
                    offset = offset.wrapping_add(self.chain_index(op, e.size())?);
                    *e
                }
                other => return Err(LowerError::ChainIntoNonComposite(other)),
            };
        }
        let num_indices = (self.indices.len() as u32 - first_index) as u16;
        if num_indices == 0 && offset == 0 {
            self.code.push(Inst::Mov { dst, src: base, n: 1 });
        } else {
            self.code.push(Inst::PtrOffset { dst, base, offset, first_index, num_indices });
        }
        for (index, extent) in checks {
            self.code.push(Inst::IndexCheck { index, ptr: dst, extent, loc: self.loc });
        }
        Ok(())
    }

    /// One access-chain index: a constant adds to the returned offset, a register becomes an [`Index`].
    fn chain_index(&mut self, op: &Operand, stride: u64) -> Result<i64, LowerError> {
        if let Some(c) = self.m.info.consts.get(&id(op)?) {
            let value = *c.slots.first().ok_or(LowerError::ChainIndexNotScalar)?;
            return Ok(sign_extend(value, c.ty.bits()).wrapping_mul(stride as i64));
        }
        let (reg, ty) = self.val(op)?;
        self.indices.push(Index { reg, bits: ty.bits(), stride: stride as i64 });
        Ok(0)
    }

    pub(super) fn copy_memory(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let ops = &inst.operands;
        let dst = self.reg(&ops[0])?;
        let (src, sty) = self.val(&ops[1])?;
        let size = match inst.class.opcode {
            Op::CopyMemorySized => self.reg(&ops[2])?,
            _ => self.const_reg(sty.pointee().map(Ty::size).unwrap_or(0)),
        };
        self.code.push(Inst::CopyMemory { dst, src, size, loc: self.loc });
        Ok(())
    }

    pub(super) fn ptr_diff(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let (dst, _) = self.result(inst)?;
        let (a, ty) = self.val(&inst.operands[0])?;
        let b = self.reg(&inst.operands[1])?;
        let elem = ty.pointee().map(Ty::stride).unwrap_or(1).max(1) as u32;
        self.code.push(Inst::PtrDiff { dst, a, b, elem });
        Ok(())
    }

    /// A copy, a pointer cast, or a conversion between a pointer and an integer.
    pub(super) fn pointer_cast(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let (dst, ty) = self.result(inst)?;
        let (src, sty) = self.val(&inst.operands[0])?;
        let n = ty.slots() as u16;
        let pointer_bits = self.m.pointer_bits;
        if matches!(ty, Ty::Int(_)) && matches!(sty, Ty::Pointer(..)) {
            self.code.push(Inst::Convert { conv: Conv::PtrInt, from: pointer_bits, to: ty.bits(), dst, src, n });
        } else if matches!(ty, Ty::Pointer(..)) && matches!(sty, Ty::Int(_)) {
            self.code.push(Inst::Convert { conv: Conv::IntPtr, from: sty.bits(), to: pointer_bits, dst, src, n });
        } else {
            self.code.push(Inst::Mov { dst, src, n });
        }
        Ok(())
    }

    /// `OpGenericCastToPtrExplicit`: a generic pointer to one address space (null if it is not there).
    pub(super) fn cast_to_space(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let (dst, _) = self.result(inst)?;
        let src = self.reg(&inst.operands[0])?;
        let space = match inst.operands.get(1) {
            Some(Operand::StorageClass(StorageClass::CrossWorkgroup)) => SPACE_GLOBAL,
            Some(Operand::StorageClass(StorageClass::Workgroup)) => SPACE_LOCAL,
            Some(Operand::StorageClass(StorageClass::Function)) => SPACE_PRIVATE,
            other => return Err(LowerError::GenericCastTo(other.cloned())),
        };
        self.code.push(Inst::CastToSpace { dst, src, space: space as u8 });
        Ok(())
    }

    /// `OpGenericPtrMemSemantics`: the fence flags of a generic pointer's address space.
    pub(super) fn pointer_fence(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let (dst, _) = self.result(inst)?;
        let src = self.reg(&inst.operands[0])?;
        self.code.push(Inst::PointerFence { dst, src });
        Ok(())
    }
}

fn builtin(b: BuiltIn) -> Option<Builtin> {
    Some(match b {
        BuiltIn::GlobalInvocationId => Builtin::GlobalId,
        BuiltIn::LocalInvocationId => Builtin::LocalId,
        BuiltIn::WorkgroupId => Builtin::GroupId,
        BuiltIn::NumWorkgroups => Builtin::NumGroups,
        BuiltIn::GlobalSize => Builtin::GlobalSize,
        BuiltIn::WorkgroupSize => Builtin::LocalSize,
        BuiltIn::EnqueuedWorkgroupSize => Builtin::EnqueuedLocalSize,
        BuiltIn::GlobalOffset => Builtin::GlobalOffset,
        BuiltIn::WorkDim => Builtin::WorkDim,
        BuiltIn::GlobalLinearId => Builtin::GlobalLinearId,
        BuiltIn::LocalInvocationIndex => Builtin::LocalLinearId,
        BuiltIn::SubgroupSize => Builtin::SubgroupSize,
        BuiltIn::SubgroupMaxSize => Builtin::SubgroupMaxSize,
        BuiltIn::NumSubgroups | BuiltIn::NumEnqueuedSubgroups => Builtin::NumSubgroups,
        BuiltIn::SubgroupId => Builtin::SubgroupId,
        BuiltIn::SubgroupLocalInvocationId => Builtin::SubgroupLocalId,
        _ => return None,
    })
}

/// The alignment OpenCL requires of a load or store of `ty` with these memory operands: the
/// `Aligned` literal clang gives (the type's alignment, less for a member of a packed struct),
/// capped at the type's own alignment (a `float3` is aligned as a `float4`, a struct as its
/// widest member); 1, which checks nothing, when the operand is missing.
fn required_alignment(memory_operands: &[Operand], ty: &Ty) -> u8 {
    let aligned = match memory_operands {
        [Operand::MemoryAccess(access), Operand::LiteralBit32(n), ..]
            if access.contains(rspirv::spirv::MemoryAccess::ALIGNED) =>
        {
            *n as u64
        }
        _ => return 1,
    };
    let natural = ty.align().max(1);
    let align = aligned.min(natural).clamp(1, 128);
    if align.is_power_of_two() { align as u8 } else { 1 }
}
