//! IEEE 754 binary16 (`half`) conversions with explicit rounding, for `vload_half`,
//! `vstore_half*` and conversions to and from half storage.

use crate::ir::HalfRound;

/// Widens a half to f32 (exact).
pub fn to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as i32;
    let mant = (h & 0x3ff) as u32;
    let bits = match exp {
        0 if mant == 0 => sign,
        0 => {
            // Subnormal: value = mant * 2^-24, exact in f32.
            let v = mant as f32 * f32::from_bits(0x3380_0000);
            return if sign != 0 { -v } else { v };
        }
        31 => sign | 0x7f80_0000 | (mant << 13),
        _ => sign | (((exp - 15 + 127) as u32) << 23) | (mant << 13),
    };
    f32::from_bits(bits)
}

/// Narrows an f64 to half with the given rounding (f32 inputs widen exactly first).
pub fn from_f64(x: f64, round: HalfRound) -> u16 {
    let sign: u16 = if x.is_sign_negative() { 0x8000 } else { 0 };
    if x.is_nan() {
        return sign | 0x7e00;
    }
    let a = x.abs();
    let max_finite = 65504.0;
    let toward_zero = match round {
        HalfRound::Rte => false,
        HalfRound::Rtz => true,
        HalfRound::Rtp => sign != 0,
        HalfRound::Rtn => sign == 0,
    };
    if a.is_infinite() {
        return sign | 0x7c00;
    }
    // Scale so that the half's unit in the last place is 1: ulp = 2^(e-10), min 2^-24.
    let e = if a == 0.0 { -24 } else { (a.log2().floor() as i32).max(-14) };
    let ulp = 2f64.powi(e - 10);
    let q = a / ulp;
    let rounded = match round {
        HalfRound::Rte => q.round_ties_even(),
        _ if toward_zero => q.floor(),
        _ => q.ceil(),
    };
    let value = rounded * ulp;
    if value > max_finite {
        return sign | if toward_zero || (round == HalfRound::Rte && a < 65520.0) { 0x7bff } else { 0x7c00 };
    }
    if value < 2f64.powi(-14) {
        return sign | (value / 2f64.powi(-24)) as u16;
    }
    let exp = value.log2().floor() as i32;
    let mant = ((value / 2f64.powi(exp) - 1.0) * 1024.0).round() as u16;
    sign | (((exp + 15) as u16) << 10) | mant
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rounds() {
        for h in [0u16, 0x3c00, 0xc000, 0x7bff, 0x0001, 0x03ff, 0x0400, 0x7c00, 0x3555] {
            assert_eq!(from_f64(to_f32(h) as f64, HalfRound::Rte), h, "{h:#x}");
        }
        assert_eq!(from_f64(1.0 + 1.0 / 4096.0, HalfRound::Rte), 0x3c00);
        assert_eq!(from_f64(1.0 + 1.0 / 4096.0, HalfRound::Rtp), 0x3c01);
        assert_eq!(from_f64(-1.0 - 1.0 / 4096.0, HalfRound::Rtn), 0xbc01);
        assert_eq!(from_f64(1e6, HalfRound::Rte), 0x7c00);
        assert_eq!(from_f64(1e6, HalfRound::Rtz), 0x7bff);
        assert!(to_f32(0x7e00).is_nan());
    }
}
