//! OpenCL.std extended instructions: printf, vector loads and stores (`vload`/`vstore`, with
//! their half forms), `shuffle`, the math functions with a second result stored through a
//! pointer, the geometric functions, and every other builtin as one IR math instruction over
//! the result's lanes. It sees only the function being lowered and the module's types.

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{FPRoundingMode, OpenclStd100Op as Cl};

use super::{FunctionLowering, LowerError, rest};
use crate::ir::{self, Arg, ArgKind, Geo, Inst, MathKind, Reg, VecMem};
use crate::spirv::module::{id, literal};
use crate::spirv::types::Ty;

impl FunctionLowering<'_> {
    pub(super) fn ext_inst(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let set = id(&inst.operands[0])?;
        let number = literal(&inst.operands[1])? as u32;
        if Some(set) != self.m.info.opencl_std {
            self.unsupported(format!("extended instruction {number} of a non-OpenCL.std set"));
            return Ok(());
        }
        let Some(op) = Cl::from_u32(number) else {
            self.unsupported(format!("OpenCL.std instruction {number}"));
            return Ok(());
        };
        let args = rest(inst, 2);
        let needed = operands_needed(op);
        if args.len() < needed {
            return Err(LowerError::ExtInstOperands { op, have: args.len(), needs: needed });
        }
        let dst = inst.result_id.and_then(|r| self.values.get(&r)).map(|v| v.0).unwrap_or(0);
        let rty = inst.result_type.map(|t| self.m.info.ty(t).cloned()).transpose()?.unwrap_or(Ty::Void);
        match op {
            Cl::printf => self.printf(args, dst),
            Cl::vloadn | Cl::vload_half | Cl::vload_halfn | Cl::vloada_halfn => self.vector_load(op, args, dst, &rty),
            Cl::vstoren
            | Cl::vstore_half
            | Cl::vstore_half_r
            | Cl::vstore_halfn
            | Cl::vstore_halfn_r
            | Cl::vstorea_halfn
            | Cl::vstorea_halfn_r => self.vector_store(op, args),
            Cl::shuffle | Cl::shuffle2 => self.shuffle(op, args, dst, &rty),
            Cl::frexp | Cl::modf | Cl::fract | Cl::sincos | Cl::lgamma_r | Cl::remquo => {
                self.math_out(op, args, dst, &rty)
            }
            Cl::cross
            | Cl::length
            | Cl::distance
            | Cl::normalize
            | Cl::fast_length
            | Cl::fast_distance
            | Cl::fast_normalize => self.geometric(op, args, dst),
            Cl::prefetch => Ok(()),
            _ => self.math(op, args, dst, &rty),
        }
    }

    fn printf(&mut self, args: &[Operand], dst: Reg) -> Result<(), LowerError> {
        let fmt = self.reg(&args[0])?;
        let first_arg = self.args.len() as u32;
        for a in &args[1..] {
            let (reg, ty) = self.val(a)?;
            let kind = match ty.scalar() {
                Ty::Int(b) => ArgKind::Int(*b),
                Ty::Float(b) => ArgKind::Float(*b),
                Ty::Pointer(..) => ArgKind::Pointer,
                _ => ArgKind::Other,
            };
            self.args.push(Arg { reg, n: ty.lanes() as u16, kind });
        }
        self.code.push(Inst::Printf { dst, fmt, first_arg, num_args: (args.len() - 1) as u16 });
        Ok(())
    }

    fn vector_load(&mut self, op: Cl, args: &[Operand], dst: Reg, rty: &Ty) -> Result<(), LowerError> {
        let offset = self.reg(&args[0])?;
        let (ptr, pty) = self.val(&args[1])?;
        let op = if op == Cl::vloadn { VecMem::Load } else { VecMem::LoadHalf { aligned: op == Cl::vloada_halfn } };
        let elem = if op == VecMem::Load { rty.scalar().size() } else { pty.pointee().map(Ty::size).unwrap_or(2) };
        let loc = self.loc;
        self.code.push(Inst::VectorMemory { op, dst, offset, ptr, elem: elem as u8, n: rty.lanes() as u16, loc });
        Ok(())
    }

    fn vector_store(&mut self, op: Cl, args: &[Operand]) -> Result<(), LowerError> {
        let (data, dty) = self.val(&args[0])?;
        let offset = self.reg(&args[1])?;
        let ptr = self.reg(&args[2])?;
        let round = match args.get(3) {
            Some(Operand::FPRoundingMode(m)) => Some(half_round(*m)),
            // rspirv reads every ext-inst operand as an id, literals too.
            Some(Operand::IdRef(m)) => FPRoundingMode::from_u32(*m).map(half_round),
            Some(o) => literal(o).ok().and_then(|m| FPRoundingMode::from_u32(m as u32)).map(half_round),
            None => None,
        };
        let op = match op {
            Cl::vstoren => VecMem::Store,
            _ => VecMem::StoreHalf {
                aligned: matches!(op, Cl::vstorea_halfn | Cl::vstorea_halfn_r),
                round,
                f64: dty.bits() == 64,
            },
        };
        let elem = if op == VecMem::Store { dty.scalar().size() } else { 2 };
        let loc = self.loc;
        self.code.push(Inst::VectorMemory { op, dst: data, offset, ptr, elem: elem as u8, n: dty.lanes() as u16, loc });
        Ok(())
    }

    /// `shuffle` and `shuffle2`: lanes chosen by a run-time mask.
    fn shuffle(&mut self, op: Cl, args: &[Operand], dst: Reg, rty: &Ty) -> Result<(), LowerError> {
        let (a, aty) = self.val(&args[0])?;
        let (b, mask_op) = if op == Cl::shuffle2 { (self.reg(&args[1])?, &args[2]) } else { (a, &args[1]) };
        let (mask, mty) = self.val(mask_op)?;
        self.code.push(Inst::ShuffleDynamic {
            dst,
            a,
            b,
            na: aty.lanes() as u16,
            mask,
            n: rty.lanes() as u16,
            mask_bits: mty.bits(),
        });
        Ok(())
    }

    /// The functions with a second result stored through a pointer (`frexp`, `sincos`...).
    fn math_out(&mut self, op: Cl, args: &[Operand], dst: Reg, rty: &Ty) -> Result<(), LowerError> {
        let a = self.reg(&args[0])?;
        let (b, out_op) = if op == Cl::remquo { (self.reg(&args[1])?, &args[2]) } else { (a, &args[1]) };
        let (out, oty) = self.val(out_op)?;
        let out_bits = oty.pointee().map(Ty::bits).unwrap_or(32);
        self.code.push(Inst::MathOut {
            op,
            bits: rty.scalar().bits(),
            out_bits,
            dst,
            a,
            b,
            out,
            n: rty.lanes() as u16,
            loc: self.loc,
        });
        Ok(())
    }

    fn geometric(&mut self, op: Cl, args: &[Operand], dst: Reg) -> Result<(), LowerError> {
        let (a, aty) = self.val(&args[0])?;
        let b = if args.len() > 1 { self.reg(&args[1])? } else { a };
        let geo = match op {
            Cl::cross => Geo::Cross,
            Cl::length => Geo::Length,
            Cl::distance => Geo::Distance,
            Cl::normalize => Geo::Normalize,
            Cl::fast_length => Geo::FastLength,
            Cl::fast_distance => Geo::FastDistance,
            _ => Geo::FastNormalize,
        };
        self.code.push(Inst::Geometric { op: geo, bits: aty.scalar().bits(), dst, a, b, n: aty.lanes() as u16 });
        Ok(())
    }

    /// Every other builtin: up to three operands, scalars splatted to the result's lanes.
    fn math(&mut self, op: Cl, args: &[Operand], dst: Reg, rty: &Ty) -> Result<(), LowerError> {
        let n = rty.lanes();
        let mut regs = [0; 3];
        let mut kind_ty = rty.clone();
        for (i, a) in args.iter().take(3).enumerate() {
            let (r, t) = self.val(a)?;
            if i == 0 && op != Cl::nan {
                kind_ty = t.clone();
            }
            regs[i] = self.broadcast(r, t.lanes(), n);
        }
        let kind = match kind_ty.scalar() {
            Ty::Float(64) => MathKind::F64,
            Ty::Float(32) => MathKind::F32,
            Ty::Float(_) => MathKind::F16,
            t => MathKind::Int(t.bits()),
        };
        self.code.push(Inst::Math { op, kind, dst, args: regs, n: n as u16 });
        Ok(())
    }
}

/// The operands `op`'s lowering indexes (the grammar leaves extended instructions' operands open).
fn operands_needed(op: Cl) -> usize {
    match op {
        Cl::printf | Cl::cross | Cl::length | Cl::normalize | Cl::fast_length | Cl::fast_normalize => 1,
        Cl::vloadn | Cl::vload_half | Cl::vload_halfn | Cl::vloada_halfn | Cl::shuffle => 2,
        Cl::frexp | Cl::modf | Cl::fract | Cl::sincos | Cl::lgamma_r | Cl::distance | Cl::fast_distance => 2,
        Cl::vstoren
        | Cl::vstore_half
        | Cl::vstore_half_r
        | Cl::vstore_halfn
        | Cl::vstore_halfn_r
        | Cl::vstorea_halfn
        | Cl::vstorea_halfn_r
        | Cl::shuffle2
        | Cl::remquo => 3,
        _ => 0,
    }
}

fn half_round(m: FPRoundingMode) -> ir::HalfRound {
    match m {
        FPRoundingMode::RTZ => ir::HalfRound::Rtz,
        FPRoundingMode::RTP => ir::HalfRound::Rtp,
        FPRoundingMode::RTN => ir::HalfRound::Rtn,
        _ => ir::HalfRound::Rte,
    }
}
