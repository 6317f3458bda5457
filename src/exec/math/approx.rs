//! The approximate functions, evaluated in `f64` (`float` callers round the result once). They
//! see the bit-level helpers and the special functions.

use std::f64::consts::{LN_2, PI};

use rspirv::spirv::OpenclStd100Op as Cl;

use super::exact::{frexp, ldexp};
use super::special::{cospi, erf, erfc, lgamma, sinpi, tanpi, tgamma};

// ---------------------------------------------------------------------------------------
// Approximate functions, evaluated in f64
// ---------------------------------------------------------------------------------------

/// The functions that are not exact, in `f64`; `float` callers round the result once.
pub(super) fn approx(op: Cl, a: f64, b: f64, c: f64) -> Option<f64> {
    approx_trig(op, a, b)
        .or_else(|| approx_exp_log(op, a, b))
        .or_else(|| approx_special(op, a))
        .or_else(|| approx_common(op, a, b, c))
}

/// Trigonometric, inverse and hyperbolic functions.
fn approx_trig(op: Cl, a: f64, b: f64) -> Option<f64> {
    Some(match op {
        Cl::sin | Cl::half_sin | Cl::native_sin => a.sin(),
        Cl::cos | Cl::half_cos | Cl::native_cos => a.cos(),
        Cl::tan | Cl::half_tan | Cl::native_tan => a.tan(),
        Cl::asin => a.asin(),
        Cl::acos => a.acos(),
        Cl::atan => a.atan(),
        Cl::atan2 => a.atan2(b),
        Cl::sinpi => sinpi(a),
        Cl::cospi => cospi(a),
        Cl::tanpi => tanpi(a),
        Cl::asinpi => a.asin() / PI,
        Cl::acospi => a.acos() / PI,
        Cl::atanpi => a.atan() / PI,
        Cl::atan2pi => a.atan2(b) / PI,
        Cl::sinh => a.sinh(),
        Cl::cosh => a.cosh(),
        Cl::tanh => a.tanh(),
        // Rust's asinh overflows to inf above ~1.3e154: ln(2|x|) there.
        Cl::asinh if a.abs() > 2f64.powi(28) => (a.abs().ln() + LN_2).copysign(a),
        Cl::asinh => a.asinh(),
        Cl::acosh => acosh(a),
        Cl::atanh => atanh(a),
        _ => return None,
    })
}

/// Exponentials, logarithms, powers and roots.
fn approx_exp_log(op: Cl, a: f64, b: f64) -> Option<f64> {
    Some(match op {
        Cl::exp | Cl::half_exp | Cl::native_exp => a.exp(),
        Cl::exp2 | Cl::half_exp2 | Cl::native_exp2 => a.exp2(),
        Cl::exp10 | Cl::half_exp10 | Cl::native_exp10 => 10f64.powf(a),
        Cl::expm1 => a.exp_m1(),
        Cl::log | Cl::half_log | Cl::native_log => a.ln(),
        Cl::log2 | Cl::half_log2 | Cl::native_log2 => a.log2(),
        Cl::log10 | Cl::half_log10 | Cl::native_log10 => a.log10(),
        Cl::log1p => a.ln_1p(),
        Cl::pow => a.powf(b),
        Cl::powr | Cl::half_powr | Cl::native_powr => powr(a, b),
        Cl::rsqrt | Cl::half_rsqrt | Cl::native_rsqrt => 1.0 / a.sqrt(),
        Cl::cbrt => a.cbrt(),
        Cl::hypot => a.hypot(b),
        _ => return None,
    })
}

/// Error and gamma functions.
fn approx_special(op: Cl, a: f64) -> Option<f64> {
    Some(match op {
        Cl::erf => erf(a),
        Cl::erfc => erfc(a),
        Cl::tgamma => tgamma(a),
        Cl::lgamma => lgamma(a),
        _ => return None,
    })
}

/// The common functions that are not exact.
fn approx_common(op: Cl, a: f64, b: f64, c: f64) -> Option<f64> {
    Some(match op {
        Cl::degrees => a * (180.0 / PI),
        Cl::radians => a * (PI / 180.0),
        Cl::smoothstep => smoothstep(a, b, c),
        _ => return None,
    })
}

/// `smoothstep(edge0, edge1, x)`: Hermite interpolation of `x` between the edges. `x` at or past
/// an edge gives 0 or 1 before any arithmetic, so an infinite `x` (or edges whose distance
/// overflows) cannot turn into `inf / inf`; a NaN `x` gives 0, as the clamp of the definition
/// does (pocl agrees).
fn smoothstep(edge0: f64, edge1: f64, x: f64) -> f64 {
    if x <= edge0 {
        return 0.0;
    }
    if x >= edge1 {
        return 1.0;
    }
    // OpenCL's clamp is fmin(fmax(t, 0), 1), which takes a NaN to 0 (Rust's clamp keeps it).
    #[allow(clippy::manual_clamp)]
    let t = ((x - edge0) / (edge1 - edge0)).max(0.0).min(1.0);
    t * t * (3.0 - 2.0 * t)
}

/// `powr`: `x^y` for `x >= 0` as `exp(y * log(x))`, with the spec's special cases.
fn powr(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() || x < 0.0 {
        return f64::NAN;
    }
    if x == 0.0 || x.is_infinite() {
        // log(x) is ∓inf: the result is exp(±inf) unless y is 0.
        return if y == 0.0 {
            f64::NAN
        } else if (x == 0.0) == (y < 0.0) {
            f64::INFINITY
        } else {
            0.0
        };
    }
    if x == 1.0 && y.is_infinite() {
        return f64::NAN;
    }
    x.powf(y)
}

/// `acosh`, accurate also just above 1 where `ln(x + sqrt(x^2 - 1))` cancels.
fn acosh(x: f64) -> f64 {
    if x.is_nan() || x < 1.0 {
        f64::NAN
    } else if x < 2.0 {
        let t = x - 1.0;
        (t + (2.0 * t + t * t).sqrt()).ln_1p()
    } else if x < 2f64.powi(28) {
        (2.0 * x - 1.0 / (x + (x * x - 1.0).sqrt())).ln()
    } else {
        x.ln() + LN_2
    }
}

/// `atanh(x) = ½ log1p(2|x| / (1 - |x|))` with the sign of `x`; folding the sign out keeps
/// the argument of `log1p` away from -1, where it would amplify rounding errors.
fn atanh(x: f64) -> f64 {
    let y = x.abs();
    (0.5 * (2.0 * y / (1.0 - y)).ln_1p()).copysign(x)
}

/// `rootn`: the real `n`-th root of `x`.
pub(super) fn rootn(x: f64, n: i32) -> f64 {
    let odd = n % 2 != 0;
    if n == 0 || x.is_nan() || (x < 0.0 && !odd) {
        return f64::NAN;
    }
    let magnitude = if x == 0.0 {
        if n > 0 { 0.0 } else { f64::INFINITY }
    } else if x.is_infinite() {
        if n > 0 { f64::INFINITY } else { 0.0 }
    } else {
        root_positive(x.abs(), n)
    };
    if odd { magnitude.copysign(x) } else { magnitude }
}

/// `x^(1/n)` for finite `x > 0`: `pow` with `1/n`, polished by a Newton step. For small
/// `|n|` the argument is first brought near 1 by an exact power-of-two scaling so the Newton
/// residual neither overflows nor loses bits to subnormals.
fn root_positive(x: f64, n: i32) -> f64 {
    let magnitude = n.unsigned_abs();
    if magnitude > 64 {
        return root_newton(x, n);
    }
    let (m, e) = frexp(x);
    let k = magnitude as i32;
    let (q, rem) = (e.div_euclid(k), e.rem_euclid(k));
    let scale = if n > 0 { q } else { -q };
    ldexp(root_newton(ldexp(m, rem), n), scale)
}

/// `pow(x, 1/n)` with one Newton correction using the residual `y^n / x - 1`.
fn root_newton(x: f64, n: i32) -> f64 {
    let nf = f64::from(n);
    let y = x.powf(1.0 / nf);
    let p = y.powf(nf);
    if !p.is_normal() || !x.is_normal() || !y.is_normal() {
        return y;
    }
    let residual = p / x - 1.0;
    y - y * (residual / nf)
}
