//! The integer OpenCL.std functions on 8- to 64-bit values, signed and unsigned, and the bit
//! operations; none of the float code.

use rspirv::spirv::OpenclStd100Op as Cl;

// ---------------------------------------------------------------------------------------
// Integer functions
// ---------------------------------------------------------------------------------------

/// An integer OpenCL.std function on `bits`-wide values (8, 16, 32 or 64). Operands are the
/// raw bit patterns zero-extended into `u64`; so is the result. The op decides signedness
/// (`s_*` / `u_*`); `clz`, `ctz`, `popcount` and `rotate` work on bits. For `u_upsample` and
/// `s_upsample`, `a` is `hi`, `b` is `lo` (both `bits` wide) and the result is `2 * bits`
/// wide. `None` for other ops or widths.
pub fn integer(op: Cl, bits: u32, a: u64, b: u64, c: u64) -> Option<u64> {
    if !matches!(bits, 8 | 16 | 32 | 64) {
        return None;
    }
    let w = Width(bits);
    let (a, b, c) = (a & w.mask(), b & w.mask(), c & w.mask());
    if matches!(op, Cl::u_upsample | Cl::s_upsample) {
        return upsample(w, a, b);
    }
    signed_op(op, w, w.sext(a), w.sext(b), w.sext(c))
        .or_else(|| unsigned_op(op, w, a.into(), b.into(), c.into()))
        .or_else(|| bit_op(op, w, a, b))
        .map(|r| r & w.mask())
}

/// An integer width in bits.
#[derive(Clone, Copy)]
struct Width(u32);

impl Width {
    fn mask(self) -> u64 {
        u64::MAX >> (64 - self.0)
    }
    fn sext(self, v: u64) -> i128 {
        let shift = 128 - self.0;
        (i128::from(v) << shift) >> shift
    }
    fn smin(self) -> i128 {
        -(1i128 << (self.0 - 1))
    }
    fn smax(self) -> i128 {
        (1i128 << (self.0 - 1)) - 1
    }
    fn umax(self) -> u128 {
        self.mask().into()
    }
    fn sat_s(self, v: i128) -> u64 {
        v.clamp(self.smin(), self.smax()) as u64
    }
    fn sat_u(self, v: u128) -> u64 {
        v.min(self.umax()) as u64
    }
}

/// The low 24 bits of `v`, sign-extended.
fn sext24(v: i128) -> i128 {
    ((v as i32) << 8 >> 8).into()
}

/// The signed (`s_*`) integer functions, on sign-extended operands.
fn signed_op(op: Cl, w: Width, a: i128, b: i128, c: i128) -> Option<u64> {
    Some(match op {
        Cl::s_abs => a.unsigned_abs() as u64,
        Cl::s_abs_diff => (a - b).unsigned_abs() as u64,
        Cl::s_add_sat => w.sat_s(a + b),
        Cl::s_sub_sat => w.sat_s(a - b),
        Cl::s_hadd => ((a + b) >> 1) as u64,
        Cl::s_rhadd => ((a + b + 1) >> 1) as u64,
        Cl::s_clamp => a.max(b).min(c) as u64,
        Cl::s_max => a.max(b) as u64,
        Cl::s_min => a.min(b) as u64,
        Cl::s_mul_hi => ((a * b) >> w.0) as u64,
        Cl::s_mad_hi => (((a * b) >> w.0) + c) as u64,
        Cl::s_mad_sat => w.sat_s(a * b + c),
        Cl::s_mul24 => (sext24(a) * sext24(b)) as u64,
        Cl::s_mad24 => (sext24(a) * sext24(b) + c) as u64,
        _ => return None,
    })
}

/// The unsigned (`u_*`) integer functions, on zero-extended operands.
fn unsigned_op(op: Cl, w: Width, a: u128, b: u128, c: u128) -> Option<u64> {
    Some(match op {
        Cl::u_abs => a as u64,
        Cl::u_abs_diff => a.abs_diff(b) as u64,
        Cl::u_add_sat => w.sat_u(a + b),
        Cl::u_sub_sat => a.saturating_sub(b) as u64,
        Cl::u_hadd => ((a + b) >> 1) as u64,
        Cl::u_rhadd => ((a + b + 1) >> 1) as u64,
        Cl::u_clamp => a.max(b).min(c) as u64,
        Cl::u_max => a.max(b) as u64,
        Cl::u_min => a.min(b) as u64,
        Cl::u_mul_hi => ((a * b) >> w.0) as u64,
        Cl::u_mad_hi => (((a * b) >> w.0) + c) as u64,
        Cl::u_mad_sat => w.sat_u((a * b).saturating_add(c)),
        Cl::u_mul24 => ((a & 0xff_ffff) * (b & 0xff_ffff)) as u64,
        Cl::u_mad24 => ((a & 0xff_ffff) * (b & 0xff_ffff) + c) as u64,
        _ => return None,
    })
}

/// The bit-counting and rotation functions, on masked operands.
fn bit_op(op: Cl, w: Width, a: u64, b: u64) -> Option<u64> {
    Some(match op {
        Cl::clz => (a.leading_zeros() - (64 - w.0)).into(),
        Cl::ctz => a.trailing_zeros().min(w.0).into(),
        Cl::popcount => a.count_ones().into(),
        Cl::rotate => rotate(w, a, b),
        _ => return None,
    })
}

/// `rotate(v, i)`: `v` rotated left by `i` modulo the width.
fn rotate(w: Width, v: u64, i: u64) -> u64 {
    let n = (i % u64::from(w.0)) as u32;
    if n == 0 { v } else { (v << n | v >> (w.0 - n)) & w.mask() }
}

/// `upsample(hi, lo)`: `hi << bits | lo`, 2·bits wide; `None` for 64-bit operands.
fn upsample(w: Width, hi: u64, lo: u64) -> Option<u64> {
    (w.0 < 64).then(|| hi << w.0 | lo)
}
