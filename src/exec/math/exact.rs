//! The exact functions, computed in the operand type, and the bit-level helpers on `f64` that
//! they and the other functions share. They see only the float plumbing of `mod.rs`.

use rspirv::spirv::OpenclStd100Op as Cl;

use super::{Real, ilogb64};

// ---------------------------------------------------------------------------------------
// Exact functions, computed in the operand type
// ---------------------------------------------------------------------------------------

/// The functions whose result is exact or a single correct rounding in the type itself.
pub(super) fn exact<T: Real>(op: Cl, a: T, b: T, c: T) -> Option<T> {
    Some(match op {
        Cl::fabs | Cl::length | Cl::fast_length => a.abs(),
        Cl::distance | Cl::fast_distance => (a - b).abs(),
        Cl::normalize | Cl::fast_normalize => normalize(a),
        Cl::ceil => a.ceil(),
        Cl::floor => a.floor(),
        Cl::trunc => a.trunc(),
        Cl::round => a.round(),
        Cl::rint => a.round_ties_even(),
        Cl::copysign => a.copysign(b),
        Cl::fdim => fdim(a, b),
        Cl::fmod => a % b,
        Cl::remainder => T::narrow(rem_quo(a.widen(), b.widen()).0),
        Cl::fma | Cl::mad => a.mul_add(b, c),
        Cl::sqrt | Cl::half_sqrt | Cl::native_sqrt => a.sqrt(),
        Cl::half_divide | Cl::native_divide => a / b,
        Cl::half_recip | Cl::native_recip => T::ONE / a,
        Cl::fmax => fmax(a, b),
        Cl::fmin => fmin(a, b),
        Cl::fmax_common => common_max(a, b),
        Cl::fmin_common => common_min(a, b),
        Cl::maxmag => maxmag(a, b),
        Cl::minmag => minmag(a, b),
        Cl::fclamp => fmin(fmax(a, b), c),
        Cl::logb => T::narrow(logb(a.widen())),
        Cl::nextafter => nextafter(a, b),
        Cl::step => step(a, b),
        // The spec's formula, rounded in the operand type at each step (as pocl does).
        Cl::mix => a + (b - a) * c,
        Cl::sign => sign(a),
        Cl::nan => T::quiet_nan(a),
        _ => return None,
    })
}

/// `fmax`: the larger operand; a NaN operand yields the other one; `+0` beats `-0`.
fn fmax<T: Real>(x: T, y: T) -> T {
    if x.is_nan() || (x == y && x.is_sign_negative()) {
        y
    } else if y.is_nan() || x >= y {
        x
    } else {
        y
    }
}

/// `fmin`: the smaller operand; a NaN operand yields the other one; `-0` beats `+0`.
fn fmin<T: Real>(x: T, y: T) -> T {
    if x.is_nan() || (x == y && y.is_sign_negative()) {
        y
    } else if y.is_nan() || x <= y {
        x
    } else {
        y
    }
}

/// `max` on floats (`fmax_common`): `y` if `x < y`, otherwise `x`.
fn common_max<T: Real>(x: T, y: T) -> T {
    if x < y { y } else { x }
}

/// `min` on floats (`fmin_common`): `y` if `y < x`, otherwise `x`.
fn common_min<T: Real>(x: T, y: T) -> T {
    if y < x { y } else { x }
}

/// `maxmag`: the operand of larger magnitude, `fmax` on a tie.
fn maxmag<T: Real>(x: T, y: T) -> T {
    if x.abs() > y.abs() {
        x
    } else if y.abs() > x.abs() {
        y
    } else {
        fmax(x, y)
    }
}

/// `minmag`: the operand of smaller magnitude, `fmin` on a tie.
fn minmag<T: Real>(x: T, y: T) -> T {
    if x.abs() < y.abs() {
        x
    } else if y.abs() < x.abs() {
        y
    } else {
        fmin(x, y)
    }
}

/// `fdim`: `x - y` if `x > y`, `+0` otherwise, NaN if either is NaN.
fn fdim<T: Real>(x: T, y: T) -> T {
    if x.is_nan() || y.is_nan() {
        x + y
    } else if x > y {
        x - y
    } else {
        T::ZERO
    }
}

/// `nextafter`: the next representable value after `x` towards `y`.
fn nextafter<T: Real>(x: T, y: T) -> T {
    if x.is_nan() || y.is_nan() {
        x + y
    } else if x < y {
        x.next_up()
    } else if x > y {
        x.next_down()
    } else {
        y
    }
}

/// `step(edge, x)`: 0 if `x < edge`, otherwise 1.
fn step<T: Real>(edge: T, x: T) -> T {
    if x < edge { T::ZERO } else { T::ONE }
}

/// `sign`: 1 for positive, -1 for negative, the zero itself for zeros, 0 for NaN.
fn sign<T: Real>(x: T) -> T {
    if x.is_nan() {
        T::ZERO
    } else if x == T::ZERO {
        x
    } else {
        T::ONE.copysign(x)
    }
}

/// Scalar `normalize`: the sign of `x` as ±1, zeros and NaN unchanged.
fn normalize<T: Real>(x: T) -> T {
    if x.is_nan() || x == T::ZERO { x } else { T::ONE.copysign(x) }
}

// ---------------------------------------------------------------------------------------
// Bit-level helpers on f64
// ---------------------------------------------------------------------------------------

/// `|x| = m * 2^e` with integer `m < 2^53`; `x` finite (zero gives `m = 0`).
pub(super) fn decompose(x: f64) -> (u64, i32) {
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1 << 52) - 1);
    if biased == 0 { (frac, -1074) } else { (frac | 1 << 52, biased - 1075) }
}

/// `±m * 2^e` rounded to the nearest `f64`, ties to even; `0 < m < 2^53`.
fn compose(negative: bool, m: u64, e: i64) -> f64 {
    debug_assert!(m > 0 && m < 1 << 53);
    let shift = i64::from(m.leading_zeros()) - 11;
    let magnitude = normalized_bits(m << shift, e - shift + 1075);
    f64::from_bits(magnitude | u64::from(negative) << 63)
}

/// The bits of `m * 2^(biased - 1075)` with `m` in `[2^52, 2^53)`, rounded to nearest even; saturates to infinity.
fn normalized_bits(m: u64, biased: i64) -> u64 {
    if biased >= 2047 {
        return f64::INFINITY.to_bits();
    }
    if biased >= 1 {
        return ((biased as u64) << 52) + (m - (1 << 52));
    }
    let shift = 1 - biased;
    if shift > 54 {
        return 0;
    }
    let kept = m >> shift;
    let lost = m & ((1 << shift) - 1);
    let half = 1u64 << (shift - 1);
    let up = lost > half || (lost == half && kept & 1 == 1);
    kept + u64::from(up)
}

/// `ldexp`: `x * 2^n`, correctly rounded.
pub(super) fn ldexp(x: f64, n: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let (m, e) = decompose(x);
    compose(x.is_sign_negative(), m, i64::from(e) + i64::from(n))
}

/// `frexp`: `(m, e)` with `x = m * 2^e` and `|m|` in `[0.5, 1)`; `(x, 0)` for 0, inf, NaN.
pub(super) fn frexp(x: f64) -> (f64, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    let e = ilogb64(x) + 1;
    (ldexp(x, -e), e)
}

/// `logb`: the unbiased exponent as a float; -inf for 0, +inf for inf.
fn logb(x: f64) -> f64 {
    if x.is_nan() {
        x
    } else if x.is_infinite() {
        f64::INFINITY
    } else if x == 0.0 {
        f64::NEG_INFINITY
    } else {
        ilogb64(x).into()
    }
}

/// The round-to-nearest remainder `x - n*y` (n the integer nearest `x/y`, ties even) and the
/// 7 low bits of `n` carrying the sign of `x/y`. Exact: an integer long division.
pub(super) fn rem_quo(x: f64, y: f64) -> (f64, i64) {
    if x.is_nan() || y.is_nan() || x.is_infinite() || y == 0.0 {
        return (f64::NAN, 0);
    }
    if y.is_infinite() || x == 0.0 {
        return (x, 0);
    }
    let (mx, ex) = decompose(x);
    let (my, ey) = decompose(y);
    let (r, q, unit) = if ex < ey {
        // Then |x| < |y| (a y with ey > ex is normal): the truncated quotient is 0.
        (mx, 0u64, ex)
    } else {
        let (r, q) = long_division(mx, my, (ex - ey) as u32);
        (r, q, ey)
    };
    // Compare 2 * r * 2^unit with |y| = my * 2^ey, in units of 2^unit (unit <= ey).
    let twice_r = u128::from(r) << 1;
    // A y with ey > ex is normal, so beyond a shift of 60 |x| is far below |y| / 2.
    let my_scaled = u128::from(my) << (ey - unit).clamp(0, 60);
    let round_up = twice_r > my_scaled || (twice_r == my_scaled && q & 1 == 1);
    let negative = x.is_sign_negative();
    let (magnitude, q) = if round_up {
        // |y| - r: exact by Sterbenz since r is within [|y|/2, |y|).
        (y.abs() - ldexp(r as f64, unit), q.wrapping_add(1))
    } else {
        (ldexp(r as f64, unit), q)
    };
    let rem = if negative != round_up { -magnitude } else { magnitude };
    let quo = (q & 0x7f) as i64;
    let quo = if x.is_sign_negative() != y.is_sign_negative() { -quo } else { quo };
    (rem, quo)
}

/// `(mx * 2^shift) divmod my`: the remainder and the low 64 bits of the quotient.
fn long_division(mx: u64, my: u64, shift: u32) -> (u64, u64) {
    let (mut r, mut q) = (mx % my, mx / my);
    for _ in 0..shift {
        r <<= 1;
        q <<= 1;
        if r >= my {
            r -= my;
            q |= 1;
        }
    }
    (r, q)
}
