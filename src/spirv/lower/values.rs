//! Values: integer and float arithmetic, comparisons, unary operations, conversions and
//! bitcasts, selects, vector reductions and dot products. Each becomes one IR instruction over
//! the result's lanes; it sees only the function being lowered and the module's decorations.

use rspirv::dr::Instruction;
use rspirv::spirv::{FPRoundingMode, Op};

use super::{FunctionLowering, LowerError};
use crate::ir::{Cmp, Conv, FloatOp, Geo, Inst, IntOp, Round, UnOp};
use crate::spirv::types::Ty;

impl FunctionLowering<'_> {
    pub(super) fn bitcast(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let (dst, ty) = self.result(inst)?;
        let (src, sty) = self.val(&inst.operands[0])?;
        let (n, pointer_bits) = (ty.slots() as u16, self.m.pointer_bits);
        // A pointer and an integer: the conversions `OpConvertPtrToU` and `OpConvertUToPtr` make.
        if matches!(ty, Ty::Int(_)) && matches!(sty, Ty::Pointer(..)) {
            self.code.push(Inst::Convert { conv: Conv::PtrInt, from: pointer_bits, to: ty.bits(), dst, src, n });
            return Ok(());
        }
        if matches!(ty, Ty::Pointer(..)) && matches!(sty, Ty::Int(_)) {
            self.code.push(Inst::Convert { conv: Conv::IntPtr, from: sty.bits(), to: pointer_bits, dst, src, n });
            return Ok(());
        }
        let same_shape = ty.slots() == sty.slots() && ty.bits() == sty.bits();
        if same_shape || (matches!(ty, Ty::Pointer(..)) && matches!(sty, Ty::Pointer(..))) {
            self.code.push(Inst::Mov { dst, src, n });
        } else {
            let from = self.m.layout(&sty)?;
            let to = self.m.layout(&ty)?;
            self.code.push(Inst::Bitcast { dst, src, from, to });
        }
        Ok(())
    }

    pub(super) fn convert(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let (dst, ty) = self.result(inst)?;
        let (src, sty) = self.val(&inst.operands[0])?;
        let r = inst.result_id.unwrap_or(0);
        let sat = self.m.info.saturated.contains(&r);
        let round = match self.m.info.rounding.get(&r) {
            Some(FPRoundingMode::RTE) => Round::Rte,
            Some(FPRoundingMode::RTZ) => Round::Rtz,
            Some(FPRoundingMode::RTP) => Round::Rtp,
            Some(FPRoundingMode::RTN) => Round::Rtn,
            _ => Round::Default,
        };
        let conv = match inst.class.opcode {
            Op::UConvert if sat => Conv::SatInt { src_signed: false, dst_signed: false },
            Op::SConvert if sat => Conv::SatInt { src_signed: true, dst_signed: true },
            Op::SatConvertSToU => Conv::SatInt { src_signed: true, dst_signed: false },
            Op::SatConvertUToS => Conv::SatInt { src_signed: false, dst_signed: true },
            Op::UConvert => Conv::UInt,
            Op::SConvert => Conv::SInt,
            Op::FConvert => Conv::Float { round },
            Op::ConvertFToU => Conv::FloatToUInt { sat, round },
            Op::ConvertFToS => Conv::FloatToSInt { sat, round },
            Op::ConvertSToF => Conv::SIntToFloat { round },
            _ => Conv::UIntToFloat { round },
        };
        self.code.push(Inst::Convert { conv, from: sty.bits(), to: ty.bits(), dst, src, n: ty.lanes() as u16 });
        Ok(())
    }

    pub(super) fn int_binary(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let (dst, ty) = self.result(inst)?;
        let a = self.reg(&inst.operands[0])?;
        let (b, bty) = self.val(&inst.operands[1])?;
        let b = self.broadcast(b, bty.lanes(), ty.lanes());
        let op = match inst.class.opcode {
            Op::IAdd => IntOp::Add,
            Op::ISub => IntOp::Sub,
            Op::IMul => IntOp::Mul,
            Op::UDiv => IntOp::UDiv,
            Op::SDiv => IntOp::SDiv,
            Op::UMod => IntOp::URem,
            Op::SRem => IntOp::SRem,
            Op::SMod => IntOp::SMod,
            Op::BitwiseAnd | Op::LogicalAnd => IntOp::And,
            Op::BitwiseOr | Op::LogicalOr => IntOp::Or,
            Op::BitwiseXor => IntOp::Xor,
            Op::ShiftLeftLogical => IntOp::Shl,
            Op::ShiftRightLogical => IntOp::LShr,
            _ => IntOp::AShr,
        };
        self.code.push(Inst::IntBin { op, bits: ty.bits(), dst, a, b, n: ty.lanes() as u16 });
        Ok(())
    }

    pub(super) fn float_binary(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let (dst, ty) = self.result(inst)?;
        let a = self.reg(&inst.operands[0])?;
        let (b, bty) = self.val(&inst.operands[1])?;
        let b = self.broadcast(b, bty.lanes(), ty.lanes());
        let op = match inst.class.opcode {
            Op::FAdd => FloatOp::Add,
            Op::FSub => FloatOp::Sub,
            Op::FMul | Op::VectorTimesScalar => FloatOp::Mul,
            Op::FDiv => FloatOp::Div,
            Op::FRem => FloatOp::Rem,
            _ => FloatOp::Mod,
        };
        self.code.push(Inst::FloatBin { op, bits: ty.bits(), dst, a, b, n: ty.lanes() as u16 });
        Ok(())
    }

    pub(super) fn compare(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let (dst, ty) = self.result(inst)?;
        let (a, aty) = self.val(&inst.operands[0])?;
        let b = self.reg(&inst.operands[1])?;
        let cmp = match inst.class.opcode {
            Op::IEqual | Op::LogicalEqual => Cmp::Eq,
            Op::INotEqual | Op::LogicalNotEqual => Cmp::Ne,
            Op::ULessThan => Cmp::ULt,
            Op::ULessThanEqual => Cmp::ULe,
            Op::UGreaterThan => Cmp::UGt,
            Op::UGreaterThanEqual => Cmp::UGe,
            Op::SLessThan => Cmp::SLt,
            Op::SLessThanEqual => Cmp::SLe,
            Op::SGreaterThan => Cmp::SGt,
            Op::SGreaterThanEqual => Cmp::SGe,
            Op::FOrdEqual => Cmp::FOrdEq,
            Op::FOrdNotEqual => Cmp::FOrdNe,
            Op::FOrdLessThan => Cmp::FOrdLt,
            Op::FOrdLessThanEqual => Cmp::FOrdLe,
            Op::FOrdGreaterThan => Cmp::FOrdGt,
            Op::FOrdGreaterThanEqual => Cmp::FOrdGe,
            Op::FUnordEqual => Cmp::FUnordEq,
            Op::FUnordNotEqual => Cmp::FUnordNe,
            Op::FUnordLessThan => Cmp::FUnordLt,
            Op::FUnordLessThanEqual => Cmp::FUnordLe,
            Op::FUnordGreaterThan => Cmp::FUnordGt,
            Op::FUnordGreaterThanEqual => Cmp::FUnordGe,
            Op::Ordered => Cmp::FOrd,
            _ => Cmp::FUnord,
        };
        self.code.push(Inst::Compare { cmp, bits: aty.bits(), dst, a, b, n: ty.lanes() as u16 });
        Ok(())
    }

    pub(super) fn unary(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let (dst, ty) = self.result(inst)?;
        let (a, aty) = self.val(&inst.operands[0])?;
        let op = match inst.class.opcode {
            Op::SNegate => UnOp::INeg,
            Op::Not => UnOp::Not,
            Op::FNegate => UnOp::FNeg,
            Op::LogicalNot => UnOp::LogicalNot,
            Op::IsNan => UnOp::IsNan,
            Op::IsInf => UnOp::IsInf,
            Op::IsFinite => UnOp::IsFinite,
            Op::IsNormal => UnOp::IsNormal,
            Op::SignBitSet => UnOp::SignBitSet,
            Op::BitCount => UnOp::BitCount,
            _ => UnOp::BitReverse,
        };
        self.code.push(Inst::Unary { op, bits: aty.bits(), dst, a, n: ty.lanes() as u16 });
        Ok(())
    }

    /// `OpAny` and `OpAll` over a boolean vector.
    pub(super) fn reduce(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let (dst, _) = self.result(inst)?;
        let (src, ty) = self.val(&inst.operands[0])?;
        self.code.push(Inst::Reduce { all: inst.class.opcode == Op::All, dst, src, n: ty.lanes() as u16 });
        Ok(())
    }

    pub(super) fn select(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let ops = &inst.operands;
        let (dst, ty) = self.result(inst)?;
        let (cond, cty) = self.val(&ops[0])?;
        let a = self.reg(&ops[1])?;
        let b = self.reg(&ops[2])?;
        let cond_lanes = matches!(cty, Ty::Vector(..));
        self.code.push(Inst::Select { dst, cond, a, b, n: ty.slots() as u16, cond_lanes });
        Ok(())
    }

    pub(super) fn dot(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let (dst, ty) = self.result(inst)?;
        let (a, aty) = self.val(&inst.operands[0])?;
        let b = self.reg(&inst.operands[1])?;
        self.code.push(Inst::Geometric { op: Geo::Dot, bits: ty.bits(), dst, a, b, n: aty.lanes() as u16 });
        Ok(())
    }
}
