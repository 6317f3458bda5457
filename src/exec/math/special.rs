//! The special functions the standard library lacks or gets wrong: `sinpi`, `cospi` and `tanpi`
//! with their exact argument reduction, `erf`, `erfc`, `tgamma`, `lgamma` and the sign
//! `lgamma_r` reports. They see nothing else of the library.

use std::f64::consts::{FRAC_2_SQRT_PI, PI};

// ---------------------------------------------------------------------------------------
// sinpi, cospi, tanpi
// ---------------------------------------------------------------------------------------

/// The low part of π: `π - PI` to double precision.
const PI_LO: f64 = 1.2246467991473532e-16;

/// `π * r` as an unevaluated sum `hi + lo`, accurate to about 2^-106 relative.
fn pi_times(r: f64) -> (f64, f64) {
    let hi = PI * r;
    let lo = PI.mul_add(r, -hi) + PI_LO * r;
    (hi, lo)
}

/// `sin(π r)` for `|r| <= 0.25`.
fn sin_pi_small(r: f64) -> f64 {
    let (hi, lo) = pi_times(r);
    hi.sin() + hi.cos() * lo
}

/// `cos(π r)` for `|r| <= 0.25`.
fn cos_pi_small(r: f64) -> f64 {
    let (hi, lo) = pi_times(r);
    hi.cos() - hi.sin() * lo
}

/// Splits finite `y >= 0` (below 2^53) as `y = k/2 + r` with `|r| <= 1/4`; returns
/// `(k mod 4, r)`. Both parts are exact.
fn quarter_reduce(y: f64) -> (u8, f64) {
    let k = (2.0 * y).round();
    let r = y - 0.5 * k;
    ((k % 4.0) as u8, r)
}

/// `sinpi(x) = sin(π x)`, exact at integers and half-integers.
pub(super) fn sinpi(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    let y = x.abs();
    if y >= 2f64.powi(52) {
        return 0.0f64.copysign(x);
    }
    let (quadrant, r) = quarter_reduce(y);
    let v = match quadrant {
        0 => sin_pi_small(r),
        1 => cos_pi_small(r),
        2 => -sin_pi_small(r),
        _ => -cos_pi_small(r),
    };
    if v == 0.0 {
        0.0f64.copysign(x)
    } else if x < 0.0 {
        -v
    } else {
        v
    }
}

/// `cospi(x) = cos(π x)`, exact at integers and half-integers (+0 at the latter).
pub(super) fn cospi(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    let y = x.abs();
    if y >= 2f64.powi(53) {
        return 1.0;
    }
    let (quadrant, r) = quarter_reduce(y);
    let v = match quadrant {
        0 => cos_pi_small(r),
        1 => -sin_pi_small(r),
        2 => -cos_pi_small(r),
        _ => sin_pi_small(r),
    };
    if v == 0.0 { 0.0 } else { v }
}

/// `tanpi(x) = tan(π x)` with the spec's signed zeros at integers and infinities at
/// half-integers.
pub(super) fn tanpi(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    let y = x.abs();
    let v = if y >= 2f64.powi(53) {
        0.0
    } else {
        let (quadrant, r) = quarter_reduce(y);
        match (quadrant, r == 0.0) {
            (0, true) => 0.0,
            (2, true) => -0.0,
            (1, true) => f64::INFINITY,
            (3, true) => f64::NEG_INFINITY,
            (0 | 2, false) => sin_pi_small(r) / cos_pi_small(r),
            _ => -cos_pi_small(r) / sin_pi_small(r),
        }
    };
    if x.is_sign_negative() { -v } else { v }
}

// ---------------------------------------------------------------------------------------
// erf, erfc
// ---------------------------------------------------------------------------------------

/// `exp(-x^2)` times `g`, with `x^2` carried in double-double so its rounding does not
/// spoil the result, and split so a subnormal result is rounded only once.
fn scaled_gauss(x: f64, g: f64) -> f64 {
    let hi = x * x;
    let lo = x.mul_add(x, -hi);
    // exp(-hi - lo) = exp(-hi) (1 - lo) to far below an ulp, with one rounding.
    if hi < 700.0 {
        let e = (-hi).exp();
        g * e.mul_add(-lo, e)
    } else {
        let half = (-0.5 * hi).exp();
        g * half.mul_add(-lo, half) * half
    }
}

/// `erf(x)`.
pub(super) fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let y = x.abs();
    let v = if y < ERF_TAYLOR_TO {
        erf_taylor(y)
    } else if y < 28.0 {
        1.0 - erfc_fraction(y)
    } else {
        1.0
    };
    v.copysign(x)
}

/// `erfc(x)`.
pub(super) fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        x
    } else if x < ERFC_FRACTION_FROM {
        1.0 - erf(x)
    } else if x < 28.0 {
        erfc_fraction(x)
    } else {
        0.0
    }
}

/// Below this erfc is `1 - erf`, above it the continued fraction.
const ERFC_FRACTION_FROM: f64 = 0.5;
/// `2/√π` as an unevaluated sum `hi + lo`.
const TWO_OVER_SQRT_PI_LO: f64 = 1.533545961316588e-17;
/// Below this erf uses its Maclaurin series, above it `1 - erfc`.
const ERF_TAYLOR_TO: f64 = 0.75;

/// `erf(y)` for `0 <= y < ERF_TAYLOR_TO` by its Maclaurin series
/// `2/√π y (1 + t)`, `t = Σ_{n>=1} (-1)^n y^(2n) / (n! (2n+1))`. The leading term
/// `2/√π y` is formed in double-double so the result is rounded essentially once.
fn erf_taylor(y: f64) -> f64 {
    let y2 = y * y;
    let (mut term, mut t) = (1.0, 0.0);
    for n in 1..60 {
        term *= -y2 / f64::from(n);
        let contribution = term / f64::from(2 * n + 1);
        t += contribution;
        if contribution.abs() < 1e-17 * t.abs() {
            break;
        }
    }
    let lead = FRAC_2_SQRT_PI * y;
    let lead_err = FRAC_2_SQRT_PI.mul_add(y, -lead);
    lead + (lead_err + TWO_OVER_SQRT_PI_LO * y + lead * t)
}

/// `erfc(x)` for `0.5 <= x < 28` by the continued fraction
/// `erfc(x) = 2x exp(-x^2) / √π / (2x²+1 - 1·2/(2x²+5 - 3·4/(2x²+9 - ...)))`,
/// evaluated backwards from a depth that grows as `x` shrinks.
fn erfc_fraction(x: f64) -> f64 {
    let t = 2.0 * x * x;
    let depth = (100.0 / (x * x)) as u32 + 20;
    let mut f = t + 1.0 + 4.0 * f64::from(depth);
    for k in (1..=depth).rev() {
        let k = f64::from(k);
        f = t + 1.0 + 4.0 * (k - 1.0) - (2.0 * k - 1.0) * (2.0 * k) / f;
    }
    scaled_gauss(x, FRAC_2_SQRT_PI * x / f)
}

// ---------------------------------------------------------------------------------------
// tgamma, lgamma
// ---------------------------------------------------------------------------------------

/// Taylor coefficients of `lgamma(2 + z)`: `1 - γ`, then `(-1)^k (ζ(k) - 1) / k` for
/// k = 2..=30 (computed to 40 digits offline).
const LGAMMA2: [f64; 30] = [
    0.42278433509846713,
    0.3224670334241132,
    -0.0673523010531981,
    0.020580808427784546,
    -0.007385551028673986,
    0.0028905103307415234,
    -0.001192753911703261,
    0.0005096695247430425,
    -0.00022315475845357939,
    9.945751278180853e-05,
    -4.492623673813314e-05,
    2.050721277567069e-05,
    -9.439488275268397e-06,
    4.374866789907488e-06,
    -2.039215753801366e-06,
    9.55141213040742e-07,
    -4.492469198764566e-07,
    2.1207184805554665e-07,
    -1.0043224823968099e-07,
    4.7698101693639804e-08,
    -2.2711094608943164e-08,
    1.0838659214896955e-08,
    -5.183475041970047e-09,
    2.4836745438024785e-09,
    -1.1921401405860912e-09,
    5.731367241678862e-10,
    -2.7595228851242334e-10,
    1.330476437424449e-10,
    -6.4229645638381e-11,
    3.1044247747322276e-11,
];

/// Stirling series coefficients `B_2k / (2k (2k-1))` for k = 1..=11.
const STIRLING: [f64; 11] = [
    0.08333333333333333,
    -0.002777777777777778,
    0.0007936507936507937,
    -0.0005952380952380953,
    0.0008417508417508417,
    -0.0019175269175269176,
    0.00641025641025641,
    -0.029550653594771242,
    0.17964437236883057,
    -1.3924322169059011,
    13.402864044168393,
];

/// `ln(2π) / 2`.
const HALF_LN_2PI: f64 = 0.9189385332046728;
/// `√(2π)`.
const SQRT_2PI: f64 = 2.5066282746310007;
/// Where the Stirling series takes over from the Taylor series with recurrences.
const STIRLING_FROM: f64 = 8.0;

/// `Σ c[i] x^i` by Horner's rule.
fn horner(x: f64, coeffs: &[f64]) -> f64 {
    coeffs.iter().rev().fold(0.0, |acc, &c| acc.mul_add(x, c))
}

/// `lgamma(2 + z)` for `|z| <= 0.5`.
fn lgamma2(z: f64) -> f64 {
    z * horner(z, &LGAMMA2)
}

/// The Stirling correction `lgamma(y) - ((y - 1/2) ln y - y + ln(2π)/2)` for `y >= 8`.
fn stirling_correction(y: f64) -> f64 {
    let r = 1.0 / y;
    r * horner(r * r, &STIRLING)
}

/// `Γ(y)` for `8 <= y < 172` as two finite factors whose product is `Γ(y)`:
/// `y^((y-1/2)/2)` and `y^((y-1/2)/2) e^-y √(2π) e^(correction)`.
fn gamma_factors(y: f64) -> (f64, f64) {
    let t = y.powf((y - 0.5) * 0.5);
    let rest = t * (-y).exp() * SQRT_2PI * stirling_correction(y).exp();
    (t, rest)
}

/// `(y - 1) (y - 2) ... (y - m)`, each factor exact.
fn falling_product(y: f64, m: u32) -> f64 {
    (1..=m).map(|j| y - f64::from(j)).product()
}

/// `Γ(y)` for `-0.5 < y` (nonzero) below the overflow threshold.
fn gamma_positive(y: f64) -> f64 {
    if y == y.floor() && y <= 23.0 {
        // (y-1)! is exact in f64 up to 22!.
        falling_product(y, y as u32 - 1)
    } else if y >= STIRLING_FROM {
        let (t, rest) = gamma_factors(y);
        t * rest
    } else if y >= 1.5 {
        let m = (y - 1.5).floor() as u32;
        let z = (y - f64::from(m)) - 2.0;
        lgamma2(z).exp() * falling_product(y, m)
    } else if y >= 0.5 {
        lgamma2(y - 1.0).exp() / y
    } else {
        lgamma2(y).exp() / (y * (1.0 + y))
    }
}

/// `tgamma(x) = Γ(x)`.
pub(super) fn tgamma(x: f64) -> f64 {
    if x.is_nan() || x == f64::INFINITY {
        return x;
    }
    if x == 0.0 {
        return 1.0 / x;
    }
    if x == f64::NEG_INFINITY || (x < 0.0 && x == x.floor()) {
        return f64::NAN;
    }
    if x >= 172.0 {
        return f64::INFINITY;
    }
    if x > -0.5 {
        return gamma_positive(x);
    }
    // Reflection: Γ(x) = π / (sin(πx) (-x) Γ(-x)), with -x exact.
    let y = -x;
    let s = sinpi(x);
    if y > 190.0 {
        0.0f64.copysign(s)
    } else if y >= STIRLING_FROM {
        let (t, rest) = gamma_factors(y);
        (PI / (s * y * rest)) / t
    } else {
        PI / (s * y * gamma_positive(y))
    }
}

/// `ln |Γ(y)|` for `-0.5 < y` (nonzero, finite).
fn lgamma_positive(y: f64) -> f64 {
    if y >= STIRLING_FROM {
        (y - 0.5) * y.ln() - y + HALF_LN_2PI + stirling_correction(y)
    } else if y >= 1.5 {
        let m = (y - 1.5).floor() as u32;
        let z = (y - f64::from(m)) - 2.0;
        lgamma2(z) + falling_product(y, m).ln()
    } else if y >= 0.5 {
        lgamma2(y - 1.0) - y.ln()
    } else {
        lgamma2(y) - y.abs().ln() - y.ln_1p()
    }
}

/// `lgamma(x) = ln |Γ(x)|`; +inf at the poles.
pub(super) fn lgamma(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x.is_infinite() || (x <= 0.0 && x == x.floor()) {
        return f64::INFINITY;
    }
    if x > -0.5 {
        return lgamma_positive(x);
    }
    // Reflection: |Γ(x)| = π / |sin(πx) (-x) Γ(-x)|, with -x exact.
    let y = -x;
    (PI / (sinpi(x) * y).abs()).ln() - lgamma_positive(y)
}

/// The sign of `Γ(x)` as `lgamma_r` reports it: ±1, or 0 where Γ is undefined.
pub(super) fn lgamma_sign(x: f64) -> i64 {
    if x.is_nan() || x == f64::NEG_INFINITY || (x < 0.0 && x == x.floor()) {
        0
    } else if x == 0.0 {
        if x.is_sign_negative() { -1 } else { 1 }
    } else if x > 0.0 {
        1
    } else if x > -0.5 || sinpi(x) < 0.0 {
        -1
    } else {
        1
    }
}
