//! Images: binding an image to a sampler, image reads, writes and queries. The interpreter reads
//! and writes whole operands, so their shapes are checked here; it sees only the function being
//! lowered and the types of its values.

use rspirv::dr::Instruction;
use rspirv::spirv::Op;

use super::{FunctionLowering, LowerError};
use crate::ir::{ImageQuery, Inst, TexelType};
use crate::spirv::types::Ty;

impl FunctionLowering<'_> {
    /// `OpSampledImage`: the image and the sampler in two consecutive slots.
    pub(super) fn sampled_image(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let (dst, _) = self.result(inst)?;
        let image = self.reg(&inst.operands[0])?;
        let sampler = self.reg(&inst.operands[1])?;
        self.code.push(Inst::Mov { dst, src: image, n: 1 });
        self.code.push(Inst::Mov { dst: dst + 1, src: sampler, n: 1 });
        Ok(())
    }

    /// Image reads, writes and queries.
    pub(super) fn image(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let ops = &inst.operands;
        let texel_type = |ty: &Ty| match ty.scalar() {
            Ty::Float(16) => TexelType::Half,
            Ty::Float(_) => TexelType::Float,
            _ => TexelType::Int,
        };
        let (image, ity) = self.val(&ops[0])?;
        let loc = self.loc;
        let op = inst.class.opcode;
        // The interpreter reads and writes whole operands: check their shapes once, here.
        let sampled = op == Op::ImageSampleExplicitLod;
        if ity != if sampled { Ty::SampledImage } else { Ty::Image } {
            return Err(LowerError::NotAnImage(op));
        }
        let four_lanes = |ty: &Ty| match ty {
            Ty::Vector(_, 4) => Ok(()),
            _ => Err(LowerError::TexelLanes(op)),
        };
        let coordinates = |ty: &Ty| match ty.lanes() {
            1..=4 => Ok(ty.lanes() as u8),
            _ => Err(LowerError::ImageCoordinates { op, lanes: ty.lanes() }),
        };
        if op == Op::ImageWrite {
            let (coord, cty) = self.val(&ops[1])?;
            let (src, sty) = self.val(&ops[2])?;
            four_lanes(&sty)?;
            let (coord_n, texel) = (coordinates(&cty)?, texel_type(&sty));
            self.code.push(Inst::ImageWrite { image, coord, coord_n, src, texel, loc });
            return Ok(());
        }
        let (dst, ty) = self.result(inst)?;
        let (query, n, bits) = match op {
            Op::ImageQueryFormat => (ImageQuery::Format, 1, 32),
            Op::ImageQueryOrder => (ImageQuery::Order, 1, 32),
            Op::ImageQuerySize | Op::ImageQuerySizeLod if ty.lanes() <= 4 => {
                (ImageQuery::Size, ty.lanes() as u8, ty.bits())
            }
            Op::ImageQuerySize | Op::ImageQuerySizeLod => {
                return Err(LowerError::ImageQueryLanes { op, lanes: ty.lanes() });
            }
            _ => {
                let (coord, cty) = self.val(&ops[1])?;
                four_lanes(&ty)?;
                self.code.push(Inst::ImageRead {
                    dst,
                    image,
                    coord,
                    coord_n: coordinates(&cty)?,
                    float_coord: matches!(cty.scalar(), Ty::Float(_)),
                    sampled,
                    texel: texel_type(&ty),
                    loc,
                });
                return Ok(());
            }
        };
        self.code.push(Inst::ImageQuery { dst, image, query, n, bits });
        Ok(())
    }
}
