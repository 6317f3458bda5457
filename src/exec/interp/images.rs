//! The image instructions: texel reads (sampled or not), writes and queries. Methods of
//! [`Executor`], inlined into its loop; the texel formats, addressing and filtering live in
//! `exec::image`, which reaches memory through the callbacks given here.

use super::super::ExecError;
use super::super::hooks::{Access, AccessKind, GroupHooks};
use super::super::image::{self, Sampler};
use super::super::ops::f32_of;
use super::executor::Executor;
use super::faults;
use crate::exec::execution::observed;
use crate::ir::value::mask;
use crate::ir::{ImageQuery, Inst, Reg, TexelType};

impl<H: GroupHooks> Executor<'_, '_, H> {
    #[inline(always)]
    pub(super) fn image_read(&mut self, inst: &Inst) -> Result<(), ExecError> {
        let Inst::ImageRead { dst, image, coord, coord_n, float_coord, sampled, texel, loc } = *inst else {
            unreachable!()
        };
        let (regs, module, globals) = (self.regs, self.module, self.space.globals);
        for &l in self.act.lanes {
            let l = l as usize;
            let handle = regs.r(image as usize, l);
            let desc = *globals.image(handle).ok_or_else(|| faults::not_an_image(module, loc))?;
            let sampler = sampled.then(|| Sampler::from_bits(regs.r(image as usize + 1, l)));
            let mut c = [0u64; 4];
            for (i, v) in c.iter_mut().enumerate().take(coord_n as usize) {
                *v = regs.r(coord as usize + i, l);
            }
            let coords = image_coord(&c[..coord_n as usize], float_coord);
            let ls = &mut self.lanes[l];
            let mut mem = self.space.of(&mut ls.private);
            let hooks = &mut *self.sink.hooks;
            let (texel, outside) = image::read(&desc, sampler, coords, texel, &mut |offset, bytes| {
                let addr = handle + offset;
                if mem.read_bytes(addr, bytes).is_ok() && H::ACTIVE && observed(addr) {
                    let size = bytes.len() as u32;
                    hooks.access(l as u32, &Access { kind: AccessKind::Load, addr, size, loc, stored: &[] });
                }
            });
            if let Some(o) = outside {
                self.sink.findings.push(faults::image_oob(self.exec, handle, &desc, false, o, self.ids.global(l), loc));
            }
            for (i, &v) in texel.iter().enumerate() {
                regs.set_r(dst as usize + i, l, v);
            }
        }
        Ok(())
    }

    #[inline(always)]
    pub(super) fn image_write(
        &mut self,
        image: Reg,
        (coord, coord_n): (Reg, u8),
        src: Reg,
        texel: TexelType,
        loc: u32,
    ) -> Result<(), ExecError> {
        let (regs, module, globals) = (self.regs, self.module, self.space.globals);
        for &l in self.act.lanes {
            let l = l as usize;
            let handle = regs.r(image as usize, l);
            let desc = *globals.image(handle).ok_or_else(|| faults::not_an_image(module, loc))?;
            let mut c = [0u64; 4];
            for (i, v) in c.iter_mut().enumerate().take(coord_n as usize) {
                *v = regs.r(coord as usize + i, l);
            }
            let coords = match image_coord(&c[..coord_n as usize], false) {
                image::Coord::Int(c) => c,
                image::Coord::Float(_) => unreachable!("integer coordinates were asked for"),
            };
            let values = [0, 1, 2, 3].map(|i| regs.r(src as usize + i, l));
            let ls = &mut self.lanes[l];
            ls.spin.repeats = 0;
            let mut mem = self.space.of(&mut ls.private);
            let hooks = &mut *self.sink.hooks;
            let outside = image::write(&desc, coords, values, texel, &mut |offset, bytes| {
                let addr = handle + offset;
                if mem.write_bytes(addr, bytes).is_ok() && H::ACTIVE {
                    let size = bytes.len() as u32;
                    let access = Access { kind: AccessKind::Store, addr, size, loc, stored: bytes };
                    hooks.access(l as u32, &access);
                }
            });
            if let Some(o) = outside {
                self.sink.findings.push(faults::image_oob(self.exec, handle, &desc, true, o, self.ids.global(l), loc));
            }
        }
        Ok(())
    }

    #[inline(always)]
    pub(super) fn image_query(
        &self,
        dst: Reg,
        image: Reg,
        query: ImageQuery,
        n: u8,
        bits: u8,
    ) -> Result<(), ExecError> {
        let (regs, module, globals) = (self.regs, self.module, self.space.globals);
        let loc = self.func.locs.get(self.p - 1).copied().unwrap_or(u32::MAX);
        for &l in self.act.lanes {
            let l = l as usize;
            let desc = globals.image(regs.r(image as usize, l)).ok_or_else(|| faults::not_an_image(module, loc))?;
            match query {
                ImageQuery::Size => {
                    let size = desc.query_size();
                    for (i, &s) in size.iter().enumerate().take(n as usize) {
                        regs.set_r(dst as usize + i, l, s & mask(bits));
                    }
                }
                ImageQuery::Format => regs.set_r(dst as usize, l, (desc.data_type - image::TYPE_BASE) as u64),
                ImageQuery::Order => regs.set_r(dst as usize, l, (desc.order - image::ORDER_BASE) as u64),
            }
        }
        Ok(())
    }
}

/// An image instruction's coordinates: 32-bit integer or float lanes (up to four).
fn image_coord(lanes: &[u64], float: bool) -> image::Coord {
    if float {
        let mut c = [0f32; 4];
        for (c, &v) in c.iter_mut().zip(lanes) {
            *c = f32_of(v);
        }
        image::Coord::Float(c)
    } else {
        let mut c = [0i64; 4];
        for (c, &v) in c.iter_mut().zip(lanes) {
            *c = v as u32 as i32 as i64;
        }
        image::Coord::Int(c)
    }
}
