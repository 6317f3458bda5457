//! Synchronisation: barriers and memory fences, atomics, work-group and sub-group collectives,
//! and the asynchronous copies with their waits. Scopes and memory semantics are read from
//! constant operands here; it sees only the function being lowered and the module's constants.

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{Op, StorageClass};

use super::{FunctionLowering, LowerError};
use crate::ir::{AtomicOp, CollectiveOp, Fence, GroupArith, Inst, MemOrder, Scope};
use crate::spirv::types::Ty;

impl FunctionLowering<'_> {
    /// A scope operand (a constant id); device scope if it is not a constant.
    fn scope(&self, op: &Operand) -> Scope {
        scope_of(self.const_value(op).unwrap_or(1))
    }

    pub(super) fn control_barrier(&mut self, inst: &Instruction) {
        let ops = &inst.operands;
        let sub_group = self.const_value(&ops[0]) == Some(3);
        let scope = self.scope(&ops[1]);
        let sem = self.const_value(&ops[2]).unwrap_or(0x300);
        self.code.push(Inst::Barrier { fence: fence(sem), scope, loc: self.loc, sub_group });
    }

    pub(super) fn memory_barrier(&mut self, inst: &Instruction) {
        let ops = &inst.operands;
        let scope = self.scope(&ops[0]);
        let sem = self.const_value(&ops[1]).unwrap_or(0x310);
        self.code.push(Inst::MemoryFence { fence: fence(sem), order: order_of(sem), scope, loc: self.loc });
    }

    /// A work-group or sub-group collective (sub-groups span the whole work-group here).
    pub(super) fn collective(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let ops = &inst.operands;
        let (dst, _) = self.result(inst)?;
        let loc = self.loc;
        let arith = |op: Op| match op {
            Op::GroupIAdd => GroupArith::IAdd,
            Op::GroupFAdd => GroupArith::FAdd,
            Op::GroupSMin => GroupArith::SMin,
            Op::GroupUMin => GroupArith::UMin,
            Op::GroupFMin => GroupArith::FMin,
            Op::GroupSMax => GroupArith::SMax,
            Op::GroupUMax => GroupArith::UMax,
            _ => GroupArith::FMax,
        };
        let (op, src, id, id_n) = match inst.class.opcode {
            Op::GroupAll | Op::GroupAny => {
                let all = inst.class.opcode == Op::GroupAll;
                (if all { CollectiveOp::All } else { CollectiveOp::Any }, self.reg(&ops[1])?, 0, 0)
            }
            Op::GroupBroadcast => {
                let src = self.reg(&ops[1])?;
                let (id, ty) = self.val(&ops[2])?;
                (CollectiveOp::Broadcast, src, id, ty.lanes() as u8)
            }
            other => {
                let operation = match &ops[1] {
                    Operand::GroupOperation(g) => *g,
                    o => return Err(LowerError::GroupOperationExpected(o.clone())),
                };
                let op = match operation {
                    rspirv::spirv::GroupOperation::Reduce => CollectiveOp::Reduce(arith(other)),
                    rspirv::spirv::GroupOperation::InclusiveScan => CollectiveOp::InclusiveScan(arith(other)),
                    rspirv::spirv::GroupOperation::ExclusiveScan => CollectiveOp::ExclusiveScan(arith(other)),
                    g => {
                        self.unsupported(format!("group operation {g:?}"));
                        return Ok(());
                    }
                };
                (op, self.reg(&ops[2])?, 0, 0)
            }
        };
        let value_ty = match inst.class.opcode {
            Op::GroupAll | Op::GroupAny => Ty::Int(1),
            _ => self.m.info.ty(inst.result_type.unwrap_or(0))?.clone(),
        };
        if value_ty.lanes() != 1 {
            self.unsupported(format!("collective function on {}", value_ty.c_name()));
            return Ok(());
        }
        let bits = value_ty.bits();
        let sub_group = self.const_value(&ops[0]) == Some(3);
        self.code.push(Inst::Collective { op, bits, dst, src, id, id_n, loc, sub_group });
        Ok(())
    }

    pub(super) fn atomic(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let ops = &inst.operands;
        let (ptr, pty) = self.val(&ops[0])?;
        let bits = pty.pointee().map(Ty::bits).unwrap_or(32);
        // Atomics without a result (store, flag clear) still write the old value somewhere.
        let dst = match inst.result_id.and_then(|r| self.values.get(&r)) {
            Some(v) => v.0,
            None => self.alloc(1),
        };
        let zero = self.zero_reg();
        // Every atomic but the flag ones has (pointer, scope, semantics, ...) operands.
        let scope = self.scope(&ops[1]);
        let sem = self.const_value(&ops[2]).unwrap_or(0x10);
        let (order, mut fail_order) = (order_of(sem), order_of(sem));
        let (op, value, comparator) = match inst.class.opcode {
            Op::AtomicLoad => (AtomicOp::Load, zero, zero),
            Op::AtomicStore => (AtomicOp::Store, self.reg(&ops[3])?, zero),
            Op::AtomicExchange => (AtomicOp::Exchange, self.reg(&ops[3])?, zero),
            Op::AtomicCompareExchange | Op::AtomicCompareExchangeWeak => {
                fail_order = order_of(self.const_value(&ops[3]).unwrap_or(0x10));
                (AtomicOp::CompareExchange, self.reg(&ops[4])?, self.reg(&ops[5])?)
            }
            Op::AtomicIIncrement => (AtomicOp::Inc, zero, zero),
            Op::AtomicIDecrement => (AtomicOp::Dec, zero, zero),
            Op::AtomicFlagTestAndSet => (AtomicOp::FlagTestAndSet, zero, zero),
            Op::AtomicFlagClear => (AtomicOp::FlagClear, zero, zero),
            other => {
                let op = match other {
                    Op::AtomicIAdd => AtomicOp::Add,
                    Op::AtomicISub => AtomicOp::Sub,
                    Op::AtomicSMin => AtomicOp::SMin,
                    Op::AtomicUMin => AtomicOp::UMin,
                    Op::AtomicSMax => AtomicOp::SMax,
                    Op::AtomicUMax => AtomicOp::UMax,
                    Op::AtomicAnd => AtomicOp::And,
                    Op::AtomicOr => AtomicOp::Or,
                    _ => AtomicOp::Xor,
                };
                (op, self.reg(&ops[3])?, zero)
            }
        };
        let bits = if matches!(op, AtomicOp::FlagTestAndSet | AtomicOp::FlagClear) { 32 } else { bits };
        let loc = self.loc;
        self.code.push(Inst::Atomic { op, bits, order, fail_order, scope, dst, ptr, value, comparator, loc });
        Ok(())
    }

    /// `async_work_group_copy` and its strided form.
    pub(super) fn async_copy(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let ops = &inst.operands;
        let (dst, _) = self.result(inst)?;
        let (dst_ptr, dty) = self.val(&ops[1])?;
        let src_ptr = self.reg(&ops[2])?;
        let count = self.reg(&ops[3])?;
        let stride = self.reg(&ops[4])?;
        let event = self.reg(&ops[5])?;
        let elem = dty.pointee().map(Ty::size).unwrap_or(1) as u32;
        let to_local = matches!(dty, Ty::Pointer(StorageClass::Workgroup, _));
        self.code.push(Inst::AsyncCopy { dst, dst_ptr, src_ptr, count, stride, elem, to_local, event, loc: self.loc });
        Ok(())
    }

    /// `wait_group_events`: the wait, then a work-group barrier on both memories.
    pub(super) fn wait_events(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let num = self.reg(&inst.operands[1])?;
        let list = self.reg(&inst.operands[2])?;
        self.code.push(Inst::WaitEvents { num, list, loc: self.loc });
        self.code.push(Inst::Barrier {
            fence: Fence { local: true, global: true },
            scope: Scope::WorkGroup,
            loc: self.loc,
            sub_group: false,
        });
        Ok(())
    }
}

/// The fence flags in a memory-semantics mask.
fn fence(semantics: u64) -> Fence {
    // Image memory (0x800) lives in global allocations here.
    Fence { local: semantics & 0x100 != 0, global: semantics & 0xA00 != 0 }
}

/// The memory order in a memory-semantics mask (the strongest bit set wins).
fn order_of(semantics: u64) -> MemOrder {
    if semantics & 0x10 != 0 {
        MemOrder::SeqCst
    } else if semantics & 0x8 != 0 || semantics & 0x6 == 0x6 {
        MemOrder::AcqRel
    } else if semantics & 0x4 != 0 {
        MemOrder::Release
    } else if semantics & 0x2 != 0 {
        MemOrder::Acquire
    } else {
        MemOrder::Relaxed
    }
}

/// A SPIR-V `Scope` value.
fn scope_of(value: u64) -> Scope {
    match value {
        0 => Scope::AllDevices,
        2 => Scope::WorkGroup,
        3 => Scope::SubGroup,
        4 => Scope::WorkItem,
        _ => Scope::Device,
    }
}
