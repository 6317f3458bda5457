//! The instructions that compute values in registers: integer, float and comparison operators,
//! selects, casts, vector element moves, pointer arithmetic, work-item builtins and the OpenCL
//! math and geometric functions. Only `MathOut` touches memory (its second result). Each is a
//! method of [`Executor`], inlined into its loop; the scalar meaning of each operation lives in
//! `exec::ops`.

use rspirv::spirv::OpenclStd100Op as Cl;

use super::super::execution::NdRange;
use super::super::ops::{
    bits_f32, compare, convert, f32_of, f64_of, float_op, flush, flushed_op, geometric, half_op, int_op, math_lane,
    narrow_float,
};
use super::super::{ExecError, half, math};
use super::executor::Executor;
use crate::exec::hooks::GroupHooks;
use crate::exec::memory::{SPACE_GLOBAL, SPACE_LOCAL, SPACE_SHIFT};
use crate::ir::value::{extend, extend_shift, mask, sign_extend};
use crate::ir::{self, Builtin, Cmp, Conv, FloatOp, Geo, Inst, IntOp, MathKind, Reg, Round};

impl<H: GroupHooks> Executor<'_, '_, H> {
    #[inline(always)]
    pub(super) fn int_bin(&self, op: IntOp, bits: u8, dst: Reg, ab: (Reg, Reg), n: u16) {
        let m = mask(bits);
        match op {
            IntOp::Add => self.binary(n, dst, ab, |x: u64, y: u64| x.wrapping_add(y) & m),
            IntOp::Sub => self.binary(n, dst, ab, |x: u64, y: u64| x.wrapping_sub(y) & m),
            IntOp::Mul => self.binary(n, dst, ab, |x: u64, y: u64| x.wrapping_mul(y) & m),
            IntOp::And => self.binary(n, dst, ab, |x: u64, y: u64| x & y),
            IntOp::Or => self.binary(n, dst, ab, |x: u64, y: u64| x | y),
            IntOp::Xor => self.binary(n, dst, ab, |x: u64, y: u64| x ^ y),
            // Shift counts are taken modulo the width, as OpenCL C defines them (a power of two
            // here, so a mask).
            IntOp::Shl if bits == 32 || bits == 64 => {
                self.binary(n, dst, ab, |x: u64, y: u64| (x << (y & (bits as u64 - 1))) & m)
            }
            IntOp::LShr if bits == 32 || bits == 64 => {
                self.binary(n, dst, ab, |x: u64, y: u64| (x >> (y & (bits as u64 - 1))) & m)
            }
            IntOp::AShr if bits == 32 || bits == 64 => {
                let shift = extend_shift(bits);
                self.binary(n, dst, ab, |x: u64, y: u64| (extend(x, shift) >> (y & (bits as u64 - 1))) as u64 & m)
            }
            // As `int_op` has them (a zero divisor gives 0), inlined into the lane loop.
            IntOp::UDiv => self.binary(n, dst, ab, |x: u64, y: u64| x.checked_div(y).unwrap_or(0) & m),
            IntOp::URem => self.binary(n, dst, ab, |x: u64, y: u64| x.checked_rem(y).unwrap_or(0) & m),
            // The signed ones on the operands sign-extended to 64 bits (as `int_op`: a zero
            // divisor gives 0, and so does the one quotient that overflows 64 bits).
            IntOp::SDiv => {
                let shift = extend_shift(bits);
                self.binary(n, dst, ab, |x, y| extend(x, shift).checked_div(extend(y, shift)).unwrap_or(0) as u64 & m)
            }
            IntOp::SRem => {
                let shift = extend_shift(bits);
                self.binary(n, dst, ab, |x, y| extend(x, shift).checked_rem(extend(y, shift)).unwrap_or(0) as u64 & m)
            }
            _ => self.binary(n, dst, ab, |x, y| int_op(op, bits, x, y)),
        }
    }

    #[inline(always)]
    pub(super) fn float_bin(&self, op: FloatOp, bits: u8, dst: Reg, ab: (Reg, Reg), n: u16) {
        if self.exec.flush_denormals {
            self.binary(n, dst, ab, |x, y| flushed_op(op, bits, x, y));
        } else {
            match (bits, op) {
                (32, FloatOp::Add) => self.binary(n, dst, ab, |x, y| bits_f32(f32_of(x) + f32_of(y))),
                (32, FloatOp::Sub) => self.binary(n, dst, ab, |x, y| bits_f32(f32_of(x) - f32_of(y))),
                (32, FloatOp::Mul) => self.binary(n, dst, ab, |x, y| bits_f32(f32_of(x) * f32_of(y))),
                (32, _) => self.binary(n, dst, ab, |x, y| bits_f32(float_op(op, f32_of(x), f32_of(y)))),
                (64, _) => self.binary(n, dst, ab, |x, y| float_op(op, f64_of(x), f64_of(y)).to_bits()),
                _ => self.binary(n, dst, ab, |x, y| half_op(op, x, y)),
            }
        }
    }

    #[inline(always)]
    pub(super) fn compare(&self, cmp: Cmp, bits: u8, dst: Reg, ab: (Reg, Reg), n: u16) {
        let m = mask(bits);
        let shift = extend_shift(bits);
        let sx = |x| extend(x, shift);
        match cmp {
            Cmp::Eq => self.binary(n, dst, ab, |x: u64, y: u64| (x & m == y & m) as u64),
            Cmp::Ne => self.binary(n, dst, ab, |x: u64, y: u64| (x & m != y & m) as u64),
            Cmp::ULt => self.binary(n, dst, ab, |x: u64, y: u64| ((x & m) < (y & m)) as u64),
            Cmp::ULe => self.binary(n, dst, ab, |x: u64, y: u64| ((x & m) <= (y & m)) as u64),
            Cmp::UGt => self.binary(n, dst, ab, |x: u64, y: u64| ((x & m) > (y & m)) as u64),
            Cmp::UGe => self.binary(n, dst, ab, |x: u64, y: u64| ((x & m) >= (y & m)) as u64),
            Cmp::SLt => self.binary(n, dst, ab, |x, y| (sx(x) < sx(y)) as u64),
            Cmp::SLe => self.binary(n, dst, ab, |x, y| (sx(x) <= sx(y)) as u64),
            Cmp::SGt => self.binary(n, dst, ab, |x, y| (sx(x) > sx(y)) as u64),
            Cmp::SGe => self.binary(n, dst, ab, |x, y| (sx(x) >= sx(y)) as u64),
            Cmp::FOrdLt if bits == 32 => self.binary(n, dst, ab, |x, y| (f32_of(x) < f32_of(y)) as u64),
            Cmp::FOrdGt if bits == 32 => self.binary(n, dst, ab, |x, y| (f32_of(x) > f32_of(y)) as u64),
            Cmp::FOrdLe if bits == 32 => self.binary(n, dst, ab, |x, y| (f32_of(x) <= f32_of(y)) as u64),
            Cmp::FOrdGe if bits == 32 => self.binary(n, dst, ab, |x, y| (f32_of(x) >= f32_of(y)) as u64),
            _ => self.binary(n, dst, ab, |x, y| compare(cmp, bits, x, y) as u64),
        }
    }

    /// `cond` (one slot for every element, or one per element with `cond_lanes`) picks `a` or `b`.
    #[inline(always)]
    pub(super) fn select(&self, dst: Reg, (cond, cond_lanes): (Reg, bool), (a, b): (Reg, Reg), n: u16) {
        let regs = self.regs;
        for i in 0..n as usize {
            let c = regs.slot(cond as usize + if cond_lanes { i } else { 0 });
            let (d, x, y) = (regs.slot(dst as usize + i), regs.slot(a as usize + i), regs.slot(b as usize + i));
            let pick = |c: u64, x, y| if c != 0 { x } else { y };
            if !self.act.wide().is_some_and(|range| regs.update3(d, (c, x, y), range, pick)) {
                self.act.each(|l| regs.set(d + l, pick(regs.get(c + l), regs.get(x + l), regs.get(y + l))));
            }
        }
    }

    /// A conversion, element by element: the integer ones (zero- or sign-extension and
    /// truncation) with their masks and shift computed once, the rest through `ops::convert`.
    #[inline(always)]
    pub(super) fn convert(&self, conv: Conv, (from, to): (u8, u8), dst: Reg, src: Reg, n: u16) {
        match conv {
            Conv::UInt => {
                let m = mask(from) & mask(to);
                self.unary(n, dst, src, |x| x & m)
            }
            Conv::SInt => {
                let (shift, m) = (extend_shift(from), mask(to));
                self.unary(n, dst, src, |x| extend(x, shift) as u64 & m)
            }
            _ => self.unary(n, dst, src, |x| convert(conv, from, to, x)),
        }
    }

    /// Reinterprets the bytes of a value of layout `from` as layout `to`.
    #[inline(always)]
    pub(super) fn bitcast(&self, dst: Reg, src: Reg, from: u32, to: u32) {
        let regs = self.regs;
        let (from, to) = (&self.module.layouts[from as usize], &self.module.layouts[to as usize]);
        for &l in self.act.lanes {
            let l = l as usize;
            let mut bytes = [0u8; 128];
            for (i, leaf) in from.leaves.iter().enumerate() {
                let at = leaf.offset as usize;
                bytes[at..at + leaf.size as usize]
                    .copy_from_slice(&regs.r(src as usize + i, l).to_le_bytes()[..leaf.size as usize]);
            }
            for (i, leaf) in to.leaves.iter().enumerate() {
                let mut word = [0u8; 8];
                let at = leaf.offset as usize;
                word[..leaf.size as usize].copy_from_slice(&bytes[at..at + leaf.size as usize]);
                regs.set_r(dst as usize + i, l, u64::from_le_bytes(word));
            }
        }
    }

    /// `all` or `any` of the `n` elements at `src`.
    #[inline(always)]
    pub(super) fn reduce(&self, all: bool, dst: Reg, src: Reg, n: u16) {
        let regs = self.regs;
        for &l in self.act.lanes {
            let l = l as usize;
            let lane = |i: usize| regs.r(src as usize + i, l) != 0;
            regs.set_r(dst as usize, l, if all { (0..n as usize).all(lane) } else { (0..n as usize).any(lane) } as u64);
        }
    }

    #[inline(always)]
    pub(super) fn ptr_offset(&self, dst: Reg, b: Reg, offset: i64, first_index: u32, num_indices: u16) {
        let regs = self.regs;
        let indices = &self.func.indices[first_index as usize..first_index as usize + num_indices as usize];
        let (d, from) = (regs.slot(dst as usize), regs.slot(b as usize));
        // Each index's slot, sign-extension shift and stride, decoded once for all lanes.
        let decode = |index: &ir::Index| (regs.slot(index.reg as usize), extend_shift(index.bits), index.stride);
        let pow2 = |step: i64| step > 0 && step.count_ones() == 1;
        match indices {
            // The common `p + i` of an array access, without the index loop.
            [index] => {
                let (i, si, step) = decode(index);
                // `$ext` sign-extends the index, `$scale` multiplies it by the stride.
                macro_rules! one {
                    ($ext:expr, $scale:expr) => {
                        self.act.each(|l| {
                            let start = regs.get(from + l).wrapping_add(offset as u64);
                            let x: i64 = $ext(regs.get(i + l));
                            regs.set(d + l, start.wrapping_add($scale(x)));
                        })
                    };
                }
                // 64- and 32-bit indices, the common widths, with their extension as one
                // instruction (what `extend` gives for their shifts, 0 and 32).
                macro_rules! by_width {
                    ($scale:expr) => {
                        match si {
                            0 => one!(|x: u64| x as i64, $scale),
                            32 => one!(|x: u64| x as u32 as i32 as i64, $scale),
                            _ => one!(|x: u64| extend(x, si), $scale),
                        }
                    };
                }
                // A stride that is a power of two (an element size, a row of a tile) as a shift,
                // the same bits as the wrapping product, which vectorises where a 64-bit multiply
                // does not.
                if pow2(step) {
                    let k = step.trailing_zeros();
                    by_width!(|x: i64| (x as u64) << k)
                } else {
                    by_width!(|x: i64| x.wrapping_mul(step) as u64)
                }
            }
            // `p[i][j]` of a two-dimensional array (a local tile).
            [first, second] => {
                let ((i, si, si_step), (j, sj, sj_step)) = (decode(first), decode(second));
                if pow2(si_step) && pow2(sj_step) {
                    // Both strides powers of two (a tile of floats): shifts, as above.
                    let (ki, kj) = (si_step.trailing_zeros(), sj_step.trailing_zeros());
                    self.act.each(|l| {
                        let start = regs.get(from + l).wrapping_add(offset as u64);
                        let x = (extend(regs.get(i + l), si) as u64) << ki;
                        let y = (extend(regs.get(j + l), sj) as u64) << kj;
                        regs.set(d + l, start.wrapping_add(x).wrapping_add(y));
                    });
                    return;
                }
                self.act.each(|l| {
                    let start = regs.get(from + l).wrapping_add(offset as u64);
                    let x = extend(regs.get(i + l), si).wrapping_mul(si_step);
                    let y = extend(regs.get(j + l), sj).wrapping_mul(sj_step);
                    regs.set(d + l, start.wrapping_add(x as u64).wrapping_add(y as u64));
                });
            }
            _ => {
                for &l in self.act.lanes {
                    let l = l as usize;
                    let mut addr = regs.get(from + l).wrapping_add(offset as u64);
                    for index in indices {
                        let i = sign_extend(regs.r(index.reg as usize, l), index.bits);
                        addr = addr.wrapping_add(i.wrapping_mul(index.stride) as u64);
                    }
                    regs.set(d + l, addr);
                }
            }
        }
    }

    /// Element `index` of the `n` at `src` (`beyond` past the end).
    #[inline(always)]
    pub(super) fn extract_dynamic(&self, dst: Reg, src: Reg, (index, index_bits): (Reg, u8), n: u16, beyond: u8) {
        let regs = self.regs;
        for &l in self.act.lanes {
            let l = l as usize;
            let i = regs.r(index as usize, l) & mask(index_bits);
            let v = if i < n as u64 { regs.r(src as usize + i as usize, l) } else { beyond as u64 };
            regs.set_r(dst as usize, l, v);
        }
    }

    /// The `n` elements at `src` with element `index` (if any) replaced by `value`.
    #[inline(always)]
    pub(super) fn insert_dynamic(&self, dst: Reg, src: Reg, value: Reg, (index, index_bits): (Reg, u8), n: u16) {
        let regs = self.regs;
        for &l in self.act.lanes {
            let l = l as usize;
            for i in 0..n as usize {
                regs.set_r(dst as usize + i, l, regs.r(src as usize + i, l));
            }
            let i = regs.r(index as usize, l) & mask(index_bits);
            if i < n as u64 {
                regs.set_r(dst as usize + i as usize, l, regs.r(value as usize, l));
            }
        }
    }

    #[inline(always)]
    pub(super) fn shuffle(&self, dst: Reg, first: u32, n: u16) {
        let regs = self.regs;
        let sources = &self.func.lanes[first as usize..first as usize + n as usize];
        for &l in self.act.lanes {
            let l = l as usize;
            let mut picked = [0u64; 16];
            for (i, &s) in sources.iter().enumerate() {
                picked[i] = regs.r(s as usize, l);
            }
            for (i, &v) in picked[..n as usize].iter().enumerate() {
                regs.set_r(dst as usize + i, l, v);
            }
        }
    }

    #[inline(always)]
    pub(super) fn shuffle_dynamic(&self, inst: &Inst) {
        let Inst::ShuffleDynamic { dst, a, b, na, mask: m, n, mask_bits } = *inst else { unreachable!() };
        let regs = self.regs;
        let na = na as u64;
        for &l in self.act.lanes {
            let l = l as usize;
            let mut picked = [0u64; 16];
            for (i, lane) in picked.iter_mut().enumerate().take(n as usize) {
                let sel = (regs.r(m as usize + i, l) & mask(mask_bits)) % (2 * na);
                *lane = if sel < na {
                    regs.r(a as usize + sel as usize, l)
                } else {
                    regs.r(b as usize + (sel - na) as usize, l)
                };
            }
            for (i, &v) in picked[..n as usize].iter().enumerate() {
                regs.set_r(dst as usize + i, l, v);
            }
        }
    }

    /// A work-item function's value into its first `dims` slots (those the function reads).
    #[inline(always)]
    pub(super) fn builtin(&self, dst: Reg, which: Builtin, dims: u8) {
        let regs = self.regs;
        let (group_id, group_size) = (self.group_id, self.group_size);
        let slots = (dims as usize).min(which.lanes() as usize);
        match which {
            Builtin::GlobalId => {
                // The group's first global id plus the lane's local id, per dimension.
                let r = &self.exec.range;
                for (dim, &group) in group_id.iter().enumerate().take(slots) {
                    let first = r.offset[dim] + group * r.local[dim];
                    let (d, ids) = (regs.slot(dst as usize + dim), self.ids.row(dim));
                    self.act.each(|l| regs.set(d + l, first + ids[l]));
                }
            }
            Builtin::LocalId => {
                for dim in 0..slots {
                    let (d, ids) = (regs.slot(dst as usize + dim), self.ids.row(dim));
                    self.act.each(|l| regs.set(d + l, ids[l]));
                }
            }
            _ if builtin_is_uniform(which) => {
                // The same for every work-item of the group: computed once.
                let mut out = [0u64; 3];
                builtin_value(&self.exec.range, which, ([0; 3], [0; 3], 0), (group_id, group_size), &mut out);
                for (i, &v) in out[..slots].iter().enumerate() {
                    let d = regs.slot(dst as usize + i);
                    for &l in self.act.lanes {
                        regs.set(d + l as usize, v);
                    }
                }
            }
            _ => {
                for &l in self.act.lanes {
                    let l = l as usize;
                    let mut out = [0u64; 3];
                    let lane = (self.ids.local(l), self.ids.global(l), l as u64);
                    builtin_value(&self.exec.range, which, lane, (group_id, group_size), &mut out);
                    for (i, &v) in out[..slots].iter().enumerate() {
                        regs.set_r(dst as usize + i, l, v);
                    }
                }
            }
        }
    }

    /// An OpenCL.std function of up to three operands, element by element.
    #[inline(always)]
    pub(super) fn math(&self, op: Cl, kind: MathKind, dst: Reg, args: [Reg; 3], n: u16) -> Result<(), ExecError> {
        let regs = self.regs;
        let float_bits = match kind {
            MathKind::F32 => 32,
            MathKind::F64 => 64,
            _ => 0,
        };
        let flushing = self.exec.flush_denormals && float_bits != 0;
        if kind == MathKind::F32 && !flushing && matches!(op, Cl::mad | Cl::fma) {
            for i in 0..n as usize {
                let d = regs.slot(dst as usize + i);
                let [x, y, z] = args.map(|a| regs.slot(a as usize + i));
                let mad = |a, b, c| bits_f32(f32_of(a).mul_add(f32_of(b), f32_of(c)));
                if !self.act.wide().is_some_and(|range| regs.update3(d, (x, y, z), range, mad)) {
                    for &l in self.act.lanes {
                        let l = l as usize;
                        regs.set(d + l, mad(regs.get(x + l), regs.get(y + l), regs.get(z + l)));
                    }
                }
            }
            return Ok(());
        }
        for i in 0..n as usize {
            for &l in self.act.lanes {
                let l = l as usize;
                let [mut a, mut b, mut c] = args.map(|a| regs.r(a as usize + i, l));
                if flushing {
                    (a, b, c) = (flush(a, float_bits), flush(b, float_bits), flush(c, float_bits));
                }
                let v = math_lane(op, kind, n, a, b, c)
                    .ok_or_else(|| ExecError::Unsupported(format!("OpenCL.std {op:?} for {kind:?}")))?;
                regs.set_r(dst as usize + i, l, if flushing { flush(v, float_bits) } else { v });
            }
        }
        Ok(())
    }

    /// An OpenCL.std function with a second result stored through a pointer (`frexp`, `modf`,
    /// `sincos`, ...).
    #[inline(always)]
    pub(super) fn math_out(&mut self, inst: &Inst) -> Result<(), ExecError> {
        let Inst::MathOut { op, bits, out_bits, dst, a, b, out, n, loc } = *inst else { unreachable!() };
        let regs = self.regs;
        let step = out_bits as u64 / 8;
        let unsupported = || ExecError::Unsupported(format!("OpenCL.std {op:?}"));
        for &l in self.act.lanes {
            let l = l as usize;
            for i in 0..n as usize {
                let (x, y) = (regs.r(a as usize + i, l), regs.r(b as usize + i, l));
                let (value, second) = match bits {
                    64 => {
                        let (v, s) = math::float64_with_out(op, f64_of(x), f64_of(y)).ok_or_else(unsupported)?;
                        (v.to_bits(), s)
                    }
                    32 => {
                        let (v, s) = math::float32_with_out(op, f32_of(x), f32_of(y)).ok_or_else(unsupported)?;
                        (bits_f32(v), s)
                    }
                    _ => {
                        // Half: in single precision, rounded back (exact for these functions).
                        let (hx, hy) = (half::to_f32(x as u16), half::to_f32(y as u16));
                        let (v, s) = math::float32_with_out(op, hx, hy).ok_or_else(unsupported)?;
                        (half::from_f64(v as f64, ir::HalfRound::Rte) as u64, s)
                    }
                };
                regs.set_r(dst as usize + i, l, value);
                let stored = match second {
                    math::Second::Float(v) => narrow_float(v, out_bits, Round::Rte),
                    math::Second::Int(v) => v as u64,
                };
                let at = regs.r(out as usize, l) + i as u64 * step;
                let ls = &mut self.lanes[l];
                ls.spin.repeats = 0;
                if at & (step - 1) != 0 {
                    self.sink.misaligned(at, step, step, "store", self.ids.global(l), loc);
                }
                let mut mem = self.space.of(&mut ls.private);
                match mem.store(at, step as usize, stored) {
                    Ok(()) => self.sink.store(l, at, step, stored, loc),
                    Err(f) => self.sink.refused_store(&mut mem, f, (l, self.ids.global(l)), (at, step), stored, loc),
                }
            }
        }
        Ok(())
    }

    /// A pointer kept if it points into address space `space`, else null (`to_global` and the like).
    #[inline(always)]
    pub(super) fn cast_to_space(&self, dst: Reg, src: Reg, space: u8) {
        self.unary(1, dst, src, |x: u64| if x >> SPACE_SHIFT == space as u64 { x } else { 0 })
    }

    /// The fence flags a pointer's address space asks for (`get_fence`).
    #[inline(always)]
    pub(super) fn pointer_fence(&self, dst: Reg, src: Reg) {
        self.unary(1, dst, src, |x: u64| match x >> SPACE_SHIFT {
            SPACE_GLOBAL => 0x200,
            SPACE_LOCAL => 0x100,
            _ => 0,
        })
    }

    #[inline(always)]
    pub(super) fn geometric(&self, op: Geo, bits: u8, dst: Reg, (a, b): (Reg, Reg), n: u16) {
        let regs = self.regs;
        let results = match op {
            Geo::Normalize | Geo::FastNormalize => n as usize,
            Geo::Cross => n as usize,
            _ => 1,
        };
        for &l in self.act.lanes {
            let l = l as usize;
            // Operands at 0 and 16, the result at 32 of a scratch frame.
            let mut frame = [0u64; 48];
            for i in 0..n as usize {
                frame[i] = regs.r(a as usize + i, l);
                frame[16 + i] = regs.r(b as usize + i, l);
            }
            geometric(op, bits, n as usize, &mut frame, 0, 16, 32);
            for i in 0..results {
                regs.set_r(dst as usize + i, l, frame[32 + i]);
            }
        }
    }
}

/// Builtins whose value is the same for every work-item of a group.
fn builtin_is_uniform(which: Builtin) -> bool {
    matches!(
        which,
        Builtin::GroupId
            | Builtin::NumGroups
            | Builtin::GlobalSize
            | Builtin::LocalSize
            | Builtin::EnqueuedLocalSize
            | Builtin::GlobalOffset
            | Builtin::WorkDim
            | Builtin::SubgroupMaxSize
            | Builtin::NumSubgroups
    )
}

/// The value of builtin `which` for the work-item with local id `lid`, global id `gid` and
/// local linear id `linear` in the group `group` of size `size`, in the NDRange `r`.
fn builtin_value(
    r: &NdRange,
    which: Builtin,
    (lid, gid, linear): ([u64; 3], [u64; 3], u64),
    (group, size): ([u64; 3], [u64; 3]),
    out: &mut [u64],
) {
    let three = |out: &mut [u64], v: [u64; 3]| out[..3].copy_from_slice(&v);
    match which {
        Builtin::GlobalId => three(out, gid),
        Builtin::LocalId => three(out, lid),
        Builtin::GroupId => three(out, group),
        Builtin::NumGroups => three(out, r.groups),
        Builtin::GlobalSize => three(out, r.global),
        Builtin::LocalSize => three(out, size),
        Builtin::EnqueuedLocalSize => three(out, r.local),
        Builtin::GlobalOffset => three(out, r.offset),
        Builtin::WorkDim => out[0] = r.work_dim as u64,
        Builtin::GlobalLinearId => {
            let g = [gid[0] - r.offset[0], gid[1] - r.offset[1], gid[2] - r.offset[2]];
            out[0] = (g[2] * r.global[1] + g[1]) * r.global[0] + g[0];
        }
        Builtin::LocalLinearId => out[0] = linear,
        Builtin::SubgroupSize => {
            let items = size.iter().product::<u64>();
            out[0] = (items - linear / r.sub_group * r.sub_group).min(r.sub_group);
        }
        Builtin::SubgroupMaxSize => out[0] = size.iter().product::<u64>().min(r.sub_group),
        Builtin::NumSubgroups => out[0] = size.iter().product::<u64>().div_ceil(r.sub_group),
        Builtin::SubgroupId => out[0] = linear / r.sub_group,
        Builtin::SubgroupLocalId => out[0] = linear % r.sub_group,
    }
}
