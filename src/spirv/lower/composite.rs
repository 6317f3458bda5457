//! Composites: extracting and inserting members of vectors, arrays and structs (moves between
//! their slots), building them from parts, and vector shuffles and dynamic lane access. It sees
//! only the function being lowered and the types of its values.

use rspirv::dr::Instruction;

use super::{FunctionLowering, LowerError, extracted_member, rest};
use crate::ir::Inst;
use crate::spirv::module::literal;

impl FunctionLowering<'_> {
    /// `OpCompositeExtract`: a move of the member's slots, none when the result names them in
    /// place, and the builtin's default past the third dimension.
    pub(super) fn composite_extract(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        if inst.result_id.is_some_and(|r| self.in_place.contains(&r)) {
            return Ok(());
        }
        let ops = &inst.operands;
        let (dst, ty) = self.result(inst)?;
        let (src, sty) = self.val(&ops[0])?;
        let Some(slot) = extracted_member(&sty, inst)? else {
            // get_global_id(3) and friends: past the third dimension.
            let beyond = self.beyond_value(&ops[0]);
            let r = self.const_reg(beyond as u64);
            self.code.push(Inst::Mov { dst, src: r, n: 1 });
            return Ok(());
        };
        self.code.push(Inst::Mov { dst, src: src + slot, n: ty.slots() as u16 });
        Ok(())
    }

    pub(super) fn composite_insert(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let ops = &inst.operands;
        let (dst, ty) = self.result(inst)?;
        let (obj, oty) = self.val(&ops[0])?;
        let src = self.reg(&ops[1])?;
        self.code.push(Inst::Mov { dst, src, n: ty.slots() as u16 });
        let mut t = ty.clone();
        let mut slot = 0;
        for o in rest(inst, 2) {
            let (s, m) = t.member(literal(o)?).ok_or(LowerError::CompositeInsertIndex)?;
            slot += s;
            t = m.clone();
        }
        self.code.push(Inst::Mov { dst: dst + slot, src: obj, n: oty.slots() as u16 });
        Ok(())
    }

    pub(super) fn composite_construct(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let (dst, ty) = self.result(inst)?;
        let mut slot = 0;
        for o in &inst.operands {
            let (src, t) = self.val(o)?;
            self.code.push(Inst::Mov { dst: dst + slot, src, n: t.slots() as u16 });
            slot += t.slots();
        }
        if slot != ty.slots() {
            return Err(LowerError::CompositeConstructComponents);
        }
        Ok(())
    }

    /// `OpVectorShuffle`: the selected lanes' registers in the lane table, undefined lanes read 0.
    pub(super) fn vector_shuffle(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let ops = &inst.operands;
        let (dst, ty) = self.result(inst)?;
        let (a, aty) = self.val(&ops[0])?;
        let (b, bty) = self.val(&ops[1])?;
        let first = self.lanes.len() as u32;
        let selectors = rest(inst, 2);
        if selectors.len() != ty.lanes() as usize {
            return Err(LowerError::ShuffleLanes { selectors: selectors.len(), lanes: ty.lanes() });
        }
        for o in selectors {
            let lane = literal(o)? as u32;
            if lane != 0xffff_ffff && lane as u64 >= aty.lanes() as u64 + bty.lanes() as u64 {
                return Err(LowerError::ShuffleComponent { lane, a: aty.lanes(), b: bty.lanes() });
            }
            let src = if lane == 0xffff_ffff {
                self.zero_reg()
            } else if lane < aty.lanes() {
                a + lane
            } else {
                b + lane - aty.lanes()
            };
            self.lanes.push(src);
        }
        self.code.push(Inst::Shuffle { dst, first, n: ty.lanes() as u16 });
        Ok(())
    }

    pub(super) fn extract_dynamic(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let ops = &inst.operands;
        let (dst, _) = self.result(inst)?;
        let (src, ty) = self.val(&ops[0])?;
        let (index, ity) = self.val(&ops[1])?;
        let beyond = self.beyond_value(&ops[0]);
        self.code.push(Inst::ExtractDynamic { dst, src, index, index_bits: ity.bits(), n: ty.lanes() as u16, beyond });
        Ok(())
    }

    pub(super) fn insert_dynamic(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let ops = &inst.operands;
        let (dst, ty) = self.result(inst)?;
        let src = self.reg(&ops[0])?;
        let value = self.reg(&ops[1])?;
        let (index, ity) = self.val(&ops[2])?;
        self.code.push(Inst::InsertDynamic { dst, src, value, index, index_bits: ity.bits(), n: ty.lanes() as u16 });
        Ok(())
    }
}
