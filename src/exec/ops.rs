//! The scalar semantics of the IR's element-wise operations: integer and float arithmetic,
//! comparisons, conversions with their rounding modes, atomics' updates, the OpenCL.std functions
//! applied to one lane, and the geometric functions over one vector.
//!
//! Every function here computes one value from raw slot bits (see [`crate::ir`] for the value
//! model); it knows nothing of registers, lanes, memory or scheduling, which is what lets the
//! executor apply it to any set of work-items and lets these tests check it alone.

use rspirv::spirv::OpenclStd100Op as Cl;

use super::{half, math};
pub use crate::ir::value::int_op;
use crate::ir::value::{int_compare, int_to_pointer, mask, pointer_to_int, sign_extend};
use crate::ir::{self, AtomicOp, Cmp, Conv, FloatOp, Geo, MathKind, Round, UnOp};

pub fn f32_of(v: u64) -> f32 {
    f32::from_bits(v as u32)
}

pub fn f64_of(v: u64) -> f64 {
    f64::from_bits(v)
}

pub fn bits_f32(x: f32) -> u64 {
    x.to_bits() as u64
}

/// Reads a float lane of `bits` width as f64 (exact).
pub fn float_lane(v: u64, bits: u8) -> f64 {
    match bits {
        64 => f64_of(v),
        16 => half::to_f32(v as u16) as f64,
        _ => f32_of(v) as f64,
    }
}

pub trait Float:
    Copy
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Rem<Output = Self>
    + PartialOrd
{
    fn zero() -> Self;
    fn copysign_of(self, s: Self) -> Self;
}
impl Float for f32 {
    fn zero() -> Self {
        0.0
    }
    fn copysign_of(self, s: Self) -> Self {
        self.copysign(s)
    }
}
impl Float for f64 {
    fn zero() -> Self {
        0.0
    }
    fn copysign_of(self, s: Self) -> Self {
        self.copysign(s)
    }
}

#[inline(always)]
pub fn float_op<F: Float>(op: FloatOp, x: F, y: F) -> F {
    match op {
        FloatOp::Add => x + y,
        FloatOp::Sub => x - y,
        FloatOp::Mul => x * y,
        FloatOp::Div => x / y,
        FloatOp::Rem => x % y,
        FloatOp::Mod => {
            // The result takes the sign of the divisor.
            let r = x % y;
            if r != F::zero() && (r < F::zero()) != (y < F::zero()) { r + y } else { r.copysign_of(y) }
        }
    }
}

/// A denormal float of `bits` (32 or 64) as a zero of the same sign; anything else unchanged.
pub fn flush(v: u64, bits: u8) -> u64 {
    match bits {
        32 if v & 0x7f80_0000 == 0 => v & 0x8000_0000,
        64 if v & 0x7ff0_0000_0000_0000 == 0 => v & 0x8000_0000_0000_0000,
        _ => v,
    }
}

/// Float arithmetic under `-cl-denorms-are-zero`: denormal operands and results are zeros.
#[inline(never)]
pub fn flushed_op(op: FloatOp, bits: u8, x: u64, y: u64) -> u64 {
    match bits {
        64 => flush(float_op(op, f64_of(flush(x, 64)), f64_of(flush(y, 64))).to_bits(), 64),
        32 => flush(bits_f32(float_op(op, f32_of(flush(x, 32)), f32_of(flush(y, 32)))), 32),
        _ => half_op(op, x, y),
    }
}

/// Half-precision arithmetic: single precision carries more than twice half's 11 significant
/// bits plus two, so computing there and rounding once to half is correctly rounded.
#[inline(never)]
pub fn half_op(op: FloatOp, x: u64, y: u64) -> u64 {
    let r = float_op(op, half::to_f32(x as u16), half::to_f32(y as u16));
    half::from_f64(r as f64, ir::HalfRound::Rte) as u64
}

#[inline(always)]
pub fn compare(cmp: Cmp, bits: u8, x: u64, y: u64) -> bool {
    let (fx, fy) = (float_lane(x, bits), float_lane(y, bits));
    let unordered = fx.is_nan() || fy.is_nan();
    match cmp {
        Cmp::FOrdEq => fx == fy,
        Cmp::FOrdNe => !unordered && fx != fy,
        Cmp::FOrdLt => fx < fy,
        Cmp::FOrdLe => fx <= fy,
        Cmp::FOrdGt => fx > fy,
        Cmp::FOrdGe => fx >= fy,
        Cmp::FUnordEq => unordered || fx == fy,
        Cmp::FUnordNe => fx != fy,
        Cmp::FUnordLt => unordered || fx < fy,
        Cmp::FUnordLe => unordered || fx <= fy,
        Cmp::FUnordGt => unordered || fx > fy,
        Cmp::FUnordGe => unordered || fx >= fy,
        Cmp::FOrd => !unordered,
        Cmp::FUnord => unordered,
        // The integer comparisons (`int_compare` has them all).
        _ => int_compare(cmp, bits, x, y).unwrap_or(false),
    }
}

#[inline(always)]
pub fn unary(op: UnOp, bits: u8, x: u64) -> u64 {
    let f = float_lane(x, bits);
    match op {
        UnOp::INeg => x.wrapping_neg() & mask(bits),
        UnOp::Not => !x & mask(bits),
        UnOp::FNeg => x ^ (1u64 << (bits - 1)),
        UnOp::LogicalNot => (x == 0) as u64,
        UnOp::IsNan => f.is_nan() as u64,
        UnOp::IsInf => f.is_infinite() as u64,
        UnOp::IsFinite => f.is_finite() as u64,
        UnOp::IsNormal => {
            (match bits {
                32 => f32_of(x).is_normal(),
                16 => !matches!((x >> 10) & 0x1f, 0 | 0x1f),
                _ => f.is_normal(),
            }) as u64
        }
        UnOp::SignBitSet => (x >> (bits - 1)) & 1,
        UnOp::BitCount => (x & mask(bits)).count_ones() as u64,
        UnOp::BitReverse => (x.reverse_bits() >> (64 - bits as u32)) & mask(bits),
    }
}

/// Rounds an exact value to an integer by a rounding mode (default: toward zero).
pub fn round_to_int(x: f64, round: Round) -> f64 {
    match round {
        Round::Default | Round::Rtz => x.trunc(),
        Round::Rte => x.round_ties_even(),
        Round::Rtp => x.ceil(),
        Round::Rtn => x.floor(),
    }
}

/// Stores an f64 into a float slot of `bits`, rounding by `round`.
pub fn narrow_float(x: f64, to: u8, round: Round) -> u64 {
    match to {
        64 => x.to_bits(),
        16 => {
            let r = match round {
                Round::Rtz => ir::HalfRound::Rtz,
                Round::Rtp => ir::HalfRound::Rtp,
                Round::Rtn => ir::HalfRound::Rtn,
                _ => ir::HalfRound::Rte,
            };
            half::from_f64(x, r) as u64
        }
        _ => {
            let mut r = x as f32;
            if !x.is_nan() && r as f64 != x {
                match round {
                    Round::Rtz if (r as f64).abs() > x.abs() => r = step_toward_zero(r),
                    Round::Rtp if (r as f64) < x => r = r.next_up(),
                    Round::Rtn if (r as f64) > x => r = r.next_down(),
                    _ => {}
                }
            }
            bits_f32(r)
        }
    }
}

pub fn step_toward_zero(r: f32) -> f32 {
    if r > 0.0 { r.next_down() } else { r.next_up() }
}

/// Converts an exact integer to a float slot with a rounding mode.
pub fn int_to_float(v: i128, to: u8, round: Round) -> u64 {
    let nearest = v as f64;
    if to == 64 {
        let exact = nearest as i128 == v;
        let r = match round {
            _ if exact => nearest,
            Round::Rtz if (nearest as i128).abs() > v.abs() => {
                if nearest > 0.0 {
                    nearest.next_down()
                } else {
                    nearest.next_up()
                }
            }
            Round::Rtp if (nearest as i128) < v => nearest.next_up(),
            Round::Rtn if (nearest as i128) > v => nearest.next_down(),
            _ => nearest,
        };
        return r.to_bits();
    }
    // Through f64 is exact for |v| < 2^53; larger values round twice only in the last bit, so
    // decide the f32 rounding against the exact integer.
    let mut r = v as f32;
    let rv = r as i128;
    if rv != v {
        match round {
            Round::Rtz if rv.abs() > v.abs() => r = step_toward_zero(r),
            Round::Rtp if rv < v => r = r.next_up(),
            Round::Rtn if rv > v => r = r.next_down(),
            _ => {}
        }
    }
    if to == 16 {
        return narrow_float(r as f64, 16, round);
    }
    bits_f32(r)
}

#[inline]
pub fn convert(conv: Conv, from: u8, to: u8, x: u64) -> u64 {
    match conv {
        Conv::UInt => x & mask(from) & mask(to),
        Conv::SInt => sign_extend(x, from) as u64 & mask(to),
        // A pointer difference converts both pointers: kept as cheap as the casts it replaced.
        Conv::PtrInt => pointer_to_int(x, from) & mask(to),
        _ => convert_slow(conv, from, to, x),
    }
}

/// The conversions that saturate or involve floats, kept out of the hot loop.
#[inline(never)]
pub fn convert_slow(conv: Conv, from: u8, to: u8, x: u64) -> u64 {
    let m = mask(to);
    match conv {
        Conv::UInt | Conv::SInt | Conv::PtrInt => convert(conv, from, to, x),
        Conv::IntPtr => int_to_pointer(x & mask(from), to),
        Conv::SatInt { src_signed, dst_signed } => {
            let v: i128 = if src_signed { sign_extend(x, from) as i128 } else { (x & mask(from)) as i128 };
            let (lo, hi) = int_range(to, dst_signed);
            (v.clamp(lo, hi) as u64) & m
        }
        Conv::FloatToSInt { sat, round } | Conv::FloatToUInt { sat, round } => {
            let signed = matches!(conv, Conv::FloatToSInt { .. });
            let f = round_to_int(float_lane(x, from), round);
            let (lo, hi) = int_range(to, signed);
            // Out-of-range values are undefined without `_sat`; saturating them too is one of
            // the allowed answers and keeps the host free of undefined behaviour.
            let _ = sat;
            let v: i128 = if f.is_nan() { 0 } else { (f.clamp(lo as f64, hi as f64) as i128).clamp(lo, hi) };
            (v as u64) & m
        }
        Conv::SIntToFloat { round } => int_to_float(sign_extend(x, from) as i128, to, round),
        Conv::UIntToFloat { round } => int_to_float((x & mask(from)) as i128, to, round),
        Conv::Float { round } => narrow_float(float_lane(x, from), to, round),
    }
}

pub fn int_range(bits: u8, signed: bool) -> (i128, i128) {
    if signed { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) } else { (0, (1i128 << bits) - 1) }
}

#[inline(always)]
pub fn atomic_update(op: AtomicOp, bits: u8, old: u64, v: u64, c: u64) -> Option<u64> {
    let m = mask(bits);
    let (so, sv) = (sign_extend(old, bits), sign_extend(v, bits));
    Some(
        match op {
            AtomicOp::Load => return None,
            AtomicOp::Store | AtomicOp::Exchange => v,
            AtomicOp::CompareExchange => {
                if old & m == c & m {
                    v
                } else {
                    return None;
                }
            }
            AtomicOp::Add => old.wrapping_add(v),
            AtomicOp::Sub => old.wrapping_sub(v),
            AtomicOp::Inc => old.wrapping_add(1),
            AtomicOp::Dec => old.wrapping_sub(1),
            AtomicOp::SMin => so.min(sv) as u64,
            AtomicOp::SMax => so.max(sv) as u64,
            AtomicOp::UMin => (old & m).min(v & m),
            AtomicOp::UMax => (old & m).max(v & m),
            AtomicOp::And => old & v,
            AtomicOp::Or => old | v,
            AtomicOp::Xor => old ^ v,
            AtomicOp::FlagTestAndSet => 1,
            AtomicOp::FlagClear => 0,
        } & m,
    )
}

/// One lane of an OpenCL.std function. `n` tells scalar from vector for `select`.
pub fn math_lane(op: Cl, kind: MathKind, n: u16, a: u64, b: u64, c: u64) -> Option<u64> {
    let bits = match kind {
        MathKind::F16 => 16,
        MathKind::F32 => 32,
        MathKind::F64 => 64,
        MathKind::Int(b) => b,
    };
    match op {
        Cl::bitselect => return Some((a & !c) | (b & c)),
        Cl::select => {
            let pick = if n == 1 { c != 0 } else { (c >> (bits - 1)) & 1 != 0 };
            return Some(if pick { b } else { a });
        }
        _ => {}
    }
    match kind {
        MathKind::F16 => {
            // In single precision, then rounded to half: within half's (looser) error bounds.
            let f = |v: u64| bits_f32(half::to_f32(v as u16));
            let single = match op {
                Cl::ilogb => return Some(math::ilogb32(half::to_f32(a as u16)) as u32 as u64),
                Cl::ldexp | Cl::pown | Cl::rootn => math::with_int32(op, half::to_f32(a as u16), b as u32 as i32)?,
                Cl::nan => return Some(0x7e00 | (a & 0x01ff)),
                _ => math::float32(op, half::to_f32(a as u16), f32_of(f(b)), f32_of(f(c)))?,
            };
            Some(half::from_f64(single as f64, ir::HalfRound::Rte) as u64)
        }
        MathKind::F32 => match op {
            Cl::ilogb => Some(math::ilogb32(f32_of(a)) as u32 as u64),
            Cl::ldexp | Cl::pown | Cl::rootn => math::with_int32(op, f32_of(a), b as u32 as i32).map(bits_f32),
            Cl::nan => Some(bits_f32(f32::from_bits(0x7fc0_0000 | (a as u32 & 0x003f_ffff)))),
            _ => math::float32(op, f32_of(a), f32_of(b), f32_of(c)).map(bits_f32),
        },
        MathKind::F64 => match op {
            Cl::ilogb => Some(math::ilogb64(f64_of(a)) as u32 as u64),
            Cl::ldexp | Cl::pown | Cl::rootn => math::with_int64(op, f64_of(a), b as u32 as i32).map(f64::to_bits),
            Cl::nan => Some(f64::from_bits(0x7ff8_0000_0000_0000 | (a & 0x0007_ffff_ffff_ffff)).to_bits()),
            _ => math::float64(op, f64_of(a), f64_of(b), f64_of(c)).map(f64::to_bits),
        },
        MathKind::Int(bits) => match op {
            Cl::u_upsample | Cl::s_upsample => Some(((a & mask(bits)) << bits) | (b & mask(bits))),
            _ => math::integer(op, bits as u32, a & mask(bits), b & mask(bits), c & mask(bits)),
        },
    }
}

pub fn geometric(op: Geo, bits: u8, n: usize, regs: &mut [u64], a: usize, b: usize, dst: usize) {
    let get = |regs: &[u64], r: usize, i: usize| float_lane(regs[r + i], bits);
    let put = |regs: &mut [u64], r: usize, v: f64| regs[r] = narrow_float(v, bits, Round::Rte);
    let dot = |regs: &[u64], x: usize, y: usize| (0..n).map(|i| get(regs, x, i) * get(regs, y, i)).sum::<f64>();
    match op {
        Geo::Dot => {
            let d = dot(regs, a, b);
            put(regs, dst, d);
        }
        Geo::Length | Geo::FastLength => {
            let l = dot(regs, a, a).sqrt();
            put(regs, dst, l);
        }
        Geo::Distance | Geo::FastDistance => {
            let d = (0..n).map(|i| (get(regs, a, i) - get(regs, b, i)).powi(2)).sum::<f64>().sqrt();
            put(regs, dst, d);
        }
        Geo::Normalize | Geo::FastNormalize => {
            let l = dot(regs, a, a).sqrt();
            let vals: Vec<f64> = (0..n).map(|i| get(regs, a, i)).collect();
            for (i, v) in vals.into_iter().enumerate() {
                put(regs, dst + i, if l == 0.0 { v } else { v / l });
            }
        }
        Geo::Cross => {
            let x: Vec<f64> = (0..3).map(|i| get(regs, a, i)).collect();
            let y: Vec<f64> = (0..3).map(|i| get(regs, b, i)).collect();
            let c = [x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0]];
            for (i, v) in c.into_iter().enumerate() {
                put(regs, dst + i, v);
            }
            if n == 4 {
                put(regs, dst + 3, 0.0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::IntOp;

    const F32_ONE: u64 = 0x3f80_0000;

    #[test]
    fn integer_arithmetic_wraps_at_its_width_and_division_by_zero_gives_zero() {
        assert_eq!(int_op(IntOp::Add, 32, 0xffff_ffff, 1), 0);
        assert_eq!(int_op(IntOp::Sub, 8, 0, 1), 0xff);
        assert_eq!(int_op(IntOp::Mul, 16, 0x100, 0x100), 0);
        assert_eq!(int_op(IntOp::UDiv, 32, 7, 0), 0);
        assert_eq!(int_op(IntOp::SRem, 32, 7, 0), 0);
        // -7 / 2 rounds toward zero; -7 rem 2 keeps the dividend's sign, mod the divisor's.
        let minus7 = (-7i32) as u32 as u64;
        assert_eq!(int_op(IntOp::SDiv, 32, minus7, 2), (-3i32) as u32 as u64);
        assert_eq!(int_op(IntOp::SRem, 32, minus7, 2), (-1i32) as u32 as u64);
        assert_eq!(int_op(IntOp::SMod, 32, minus7, 2), 1);
    }

    #[test]
    fn shifts_take_the_count_modulo_the_width() {
        assert_eq!(int_op(IntOp::Shl, 32, 1, 33), 2);
        assert_eq!(int_op(IntOp::LShr, 8, 0x80, 9), 0x40);
        assert_eq!(int_op(IntOp::AShr, 8, 0x80, 1), 0xc0);
    }

    #[test]
    fn float_mod_takes_the_divisors_sign() {
        assert_eq!(float_op(FloatOp::Mod, -5.0f32, 3.0), 1.0);
        assert_eq!(float_op(FloatOp::Rem, -5.0f32, 3.0), -2.0);
        assert!(float_op(FloatOp::Mod, 0.0f64, -3.0).is_sign_negative());
    }

    #[test]
    fn comparisons_tell_ordered_from_unordered_and_signed_from_unsigned() {
        let nan = f32::NAN.to_bits() as u64;
        assert!(!compare(Cmp::FOrdNe, 32, nan, F32_ONE));
        assert!(compare(Cmp::FUnordNe, 32, nan, F32_ONE));
        assert!(compare(Cmp::FUnord, 32, nan, nan));
        assert!(compare(Cmp::SLt, 8, 0xff, 0));
        assert!(!compare(Cmp::ULt, 8, 0xff, 0));
        // Only the low `bits` count.
        assert!(compare(Cmp::Eq, 16, 0x1_0005, 5));
    }

    #[test]
    fn conversions_extend_saturate_and_round() {
        assert_eq!(convert(Conv::SInt, 8, 32, 0x80), 0xffff_ff80);
        assert_eq!(convert(Conv::UInt, 8, 32, 0x180), 0x80);
        let sat = Conv::SatInt { src_signed: true, dst_signed: false };
        assert_eq!(convert(sat, 32, 8, (-5i32) as u32 as u64), 0);
        assert_eq!(convert(sat, 32, 8, 300), 255);
        let to_int = |round| Conv::FloatToSInt { sat: false, round };
        let two_and_half = 2.5f32.to_bits() as u64;
        assert_eq!(convert(to_int(Round::Default), 32, 32, two_and_half), 2);
        assert_eq!(convert(to_int(Round::Rte), 32, 32, two_and_half), 2);
        assert_eq!(convert(to_int(Round::Rtp), 32, 32, two_and_half), 3);
        let nan = f32::NAN.to_bits() as u64;
        assert_eq!(convert(to_int(Round::Default), 32, 32, nan), 0, "NaN converts to 0");
        // 2^24 + 1 is not a float: rounding picks a neighbour by mode.
        let big = (1u64 << 24) + 1;
        let rtp = convert(Conv::UIntToFloat { round: Round::Rtp }, 32, 32, big);
        let rtz = convert(Conv::UIntToFloat { round: Round::Rtz }, 32, 32, big);
        assert_eq!((f32_of(rtp), f32_of(rtz)), (16_777_218.0, 16_777_216.0));
    }

    #[test]
    fn narrowing_a_double_rounds_by_mode() {
        let x = 1.0 + f64::EPSILON; // between two floats, nearer to 1
        assert_eq!(f32_of(narrow_float(x, 32, Round::Rte)), 1.0);
        assert_eq!(f32_of(narrow_float(x, 32, Round::Rtp)), 1.0f32.next_up());
        assert_eq!(f32_of(narrow_float(-x, 32, Round::Rtz)), -1.0);
    }

    #[test]
    fn atomic_updates_say_whether_they_store() {
        assert_eq!(atomic_update(AtomicOp::CompareExchange, 32, 5, 9, 5), Some(9));
        assert_eq!(atomic_update(AtomicOp::CompareExchange, 32, 5, 9, 4), None);
        assert_eq!(atomic_update(AtomicOp::Load, 32, 5, 9, 0), None);
        assert_eq!(atomic_update(AtomicOp::Inc, 32, 0xffff_ffff, 0, 0), Some(0));
        assert_eq!(atomic_update(AtomicOp::SMin, 32, 3, (-1i32) as u32 as u64, 0), Some(0xffff_ffff));
        assert_eq!(atomic_update(AtomicOp::UMin, 32, 3, (-1i32) as u32 as u64, 0), Some(3));
    }

    #[test]
    fn unary_operations_work_at_their_width() {
        assert_eq!(unary(UnOp::BitReverse, 8, 0b0000_0011), 0b1100_0000);
        assert_eq!(unary(UnOp::BitCount, 16, 0xf_ffff), 16);
        assert_eq!(unary(UnOp::FNeg, 32, F32_ONE), 0xbf80_0000);
        assert_eq!(unary(UnOp::INeg, 32, 1), 0xffff_ffff);
        assert_eq!(unary(UnOp::IsNormal, 16, 0x0001), 0, "a half denormal");
    }

    #[test]
    fn denormals_flush_to_zeros_of_their_sign() {
        let tiny = f32::from_bits(1).to_bits() as u64 | 0x8000_0000;
        assert_eq!(flush(tiny, 32), 0x8000_0000);
        assert_eq!(flush(F32_ONE, 32), F32_ONE);
        let sum = flushed_op(FloatOp::Add, 32, 1, 1);
        assert_eq!(sum, 0, "two denormals add to a flushed zero");
    }
}
