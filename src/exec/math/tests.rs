//! Unit tests of the builtin library: exact results, edge cases, and accuracy against
//! high-precision references.

use super::special::{erf, erfc, lgamma, tgamma};
use super::*;

/// How far `got` is from `exact` in units of the last place of `f64` at `exact`.
fn ulp_error_f64(got: f64, exact: f64) -> f64 {
    if got == exact || (got.is_nan() && exact.is_nan()) {
        return 0.0;
    }
    let binade = ilogb64(exact).clamp(-1022, 1023);
    (got - exact).abs() / ldexp(1.0, binade - 52)
}

fn f64_of(op: Cl, a: f64) -> f64 {
    float64(op, a, 0.0, 0.0).unwrap()
}

fn f32_of(op: Cl, a: f32) -> f32 {
    float32(op, a, 0.0, 0.0).unwrap()
}

fn same(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

fn assert_same(got: f64, want: f64) {
    assert!(same(got, want), "got {got:e} ({:#x}), want {want:e}", got.to_bits());
}

fn assert_ulps(op: &str, x: f64, got: f64, exact: f64, bound: f64) {
    let e = ulp_error_f64(got, exact);
    assert!(e <= bound, "{op}({x:e}) = {got:e}, want {exact:e}: {e} ulp > {bound}");
}

/// Checks an f64 function against correctly rounded 50-digit references; the bound is the
/// spec's plus the half ulp of rounding in the reference itself.
fn check_refs(op: Cl, bound: f64, refs: &[(f64, f64)]) {
    for &(x, exact) in refs {
        assert_ulps(&format!("{op:?}"), x, f64_of(op, x), exact, bound + 0.5);
    }
}

#[test]
fn min_max_family() {
    let nan = f64::NAN;
    assert_same(f64_of_2(Cl::fmax, nan, 1.0), 1.0);
    assert_same(f64_of_2(Cl::fmax, 1.0, nan), 1.0);
    assert!(f64_of_2(Cl::fmin, nan, nan).is_nan());
    assert_same(f64_of_2(Cl::fmin, 2.0, nan), 2.0);
    assert_same(f64_of_2(Cl::fmax, -0.0, 0.0), 0.0);
    assert_same(f64_of_2(Cl::fmax, 0.0, -0.0), 0.0);
    assert_same(f64_of_2(Cl::fmin, 0.0, -0.0), -0.0);
    assert_same(f64_of_2(Cl::fmin, -0.0, 0.0), -0.0);
    assert_same(f64_of_2(Cl::fmax, -3.0, 2.0), 2.0);
    assert_same(f64_of_2(Cl::fmax_common, 1.0, 2.0), 2.0);
    assert_same(f64_of_2(Cl::fmin_common, 1.0, 2.0), 1.0);
    assert_same(f64_of_2(Cl::maxmag, -3.0, 2.0), -3.0);
    assert_same(f64_of_2(Cl::maxmag, -2.0, 2.0), 2.0);
    assert_same(f64_of_2(Cl::minmag, -3.0, 2.0), 2.0);
    assert_same(f64_of_2(Cl::minmag, -2.0, 2.0), -2.0);
    assert_same(f64_of_2(Cl::minmag, nan, 2.0), 2.0);
    assert_same(float64(Cl::fclamp, 5.0, 0.0, 1.0).unwrap(), 1.0);
    assert_same(float64(Cl::fclamp, -5.0, 0.0, 1.0).unwrap(), 0.0);
    assert_same(float64(Cl::fclamp, nan, 0.0, 1.0).unwrap(), 0.0);
    assert_eq!(float32(Cl::fmax, f32::NAN, 3.0, 0.0), Some(3.0));
}

fn f64_of_2(op: Cl, a: f64, b: f64) -> f64 {
    float64(op, a, b, 0.0).unwrap()
}

#[test]
fn rounding_family() {
    for (x, round, rint) in [(0.5, 1.0, 0.0), (1.5, 2.0, 2.0), (2.5, 3.0, 2.0), (-2.5, -3.0, -2.0)] {
        assert_same(f64_of(Cl::round, x), round);
        assert_same(f64_of(Cl::rint, x), rint);
    }
    assert_same(f64_of(Cl::round, -0.4), -0.0);
    assert_same(f64_of(Cl::rint, -0.5), -0.0);
    assert_same(f64_of(Cl::ceil, -0.5), -0.0);
    assert_same(f64_of(Cl::floor, -0.5), -1.0);
    assert_same(f64_of(Cl::trunc, -1.7), -1.0);
    assert_eq!(f32_of(Cl::rint, 8388609.0), 8388609.0);
    assert_eq!(f32_of(Cl::round, 0.49999997), 0.0);
    assert_same(f64_of_2(Cl::copysign, 3.0, -0.0), -3.0);
    assert_same(f64_of_2(Cl::fdim, 3.0, 5.0), 0.0);
    assert_same(f64_of_2(Cl::fdim, 5.0, 3.0), 2.0);
    assert!(f64_of_2(Cl::fdim, f64::NAN, 3.0).is_nan());
    assert_same(f64_of(Cl::fabs, -0.0), 0.0);
}

#[test]
fn fma_and_sqrt_are_correctly_rounded() {
    // (1 + 2^-23)^2 - 1 loses its last bit without a fused multiply-add.
    let a = 1.0 + f32::EPSILON;
    assert_eq!(float32(Cl::fma, a, a, -1.0,), Some(2.0 * f32::EPSILON + f32::EPSILON * f32::EPSILON));
    assert_eq!(float32(Cl::mad, a, a, -1.0), float32(Cl::fma, a, a, -1.0));
    // A double rounding case: the exact result is just above a float halfway point.
    let (x, y, z) = (1.0f32 + f32::EPSILON, 1.0 - f32::EPSILON / 2.0, 2f32.powi(-60));
    let exact = f64::from(x).mul_add(f64::from(y), f64::from(z));
    assert_eq!(float32(Cl::fma, x, y, z), Some(x.mul_add(y, z)));
    assert!(ulp_error_f32(x.mul_add(y, z), exact) <= 0.5);
    assert_eq!(f32_of(Cl::sqrt, 2.0), 2f32.sqrt());
    assert!(f32_of(Cl::sqrt, -1.0).is_nan());
    assert_same(f64_of(Cl::sqrt, -0.0), -0.0);
    assert_eq!(float32(Cl::half_divide, 1.0, 3.0, 0.0), Some(1.0 / 3.0));
    assert_eq!(f32_of(Cl::native_recip, 3.0), 1.0 / 3.0);
}

#[test]
fn common_functions() {
    assert_same(f64_of(Cl::sign, -0.0), -0.0);
    assert_same(f64_of(Cl::sign, 0.0), 0.0);
    assert_same(f64_of(Cl::sign, -7.0), -1.0);
    assert_same(f64_of(Cl::sign, f64::INFINITY), 1.0);
    assert_same(f64_of(Cl::sign, f64::NAN), 0.0);
    assert_same(f64_of_2(Cl::step, 1.0, 0.5), 0.0);
    assert_same(f64_of_2(Cl::step, 1.0, 1.0), 1.0);
    assert_same(float64(Cl::smoothstep, 0.0, 2.0, 1.0).unwrap(), 0.5);
    assert_same(float64(Cl::smoothstep, 0.0, 2.0, 3.0).unwrap(), 1.0);
    assert_same(float64(Cl::smoothstep, 0.0, 2.0, -3.0).unwrap(), 0.0);
    // Past the edges before any arithmetic: inf - (-MAX) over MAX - (-MAX) would be inf / inf.
    assert_same(float64(Cl::smoothstep, -f64::MAX, f64::MAX, f64::INFINITY).unwrap(), 1.0);
    assert_same(float64(Cl::smoothstep, -f64::MAX, f64::MAX, f64::NEG_INFINITY).unwrap(), 0.0);
    assert_same(float64(Cl::smoothstep, -1.0, 1.0, f64::INFINITY).unwrap(), 1.0);
    assert_same(float32(Cl::smoothstep, -f32::MAX, f32::MAX, f32::NEG_INFINITY).unwrap().into(), 0.0);
    assert_same(float64(Cl::smoothstep, 0.0, 1.0, f64::NAN).unwrap(), 0.0);
    assert_same(float64(Cl::mix, 2.0, 4.0, 0.25).unwrap(), 2.5);
    assert_eq!(f32_of(Cl::degrees, std::f32::consts::PI), 180.0);
    assert_eq!(f32_of(Cl::radians, 180.0), std::f32::consts::PI);
    assert_same(f64_of(Cl::length, -3.0), 3.0);
    assert_same(f64_of_2(Cl::distance, 1.0, 4.0), 3.0);
    assert_same(f64_of(Cl::normalize, -0.25), -1.0);
    assert_same(f64_of(Cl::normalize, -0.0), -0.0);
    assert_same(f64_of(Cl::fast_normalize, f64::INFINITY), 1.0);
    assert_eq!(float32(Cl::cross, 1.0, 2.0, 3.0), None);
}

#[test]
fn nan_takes_payload_bits() {
    let n = float32(Cl::nan, f32::from_bits(5), 0.0, 0.0).unwrap();
    assert_eq!(n.to_bits(), 0x7fc0_0005);
    let n = float64(Cl::nan, f64::from_bits(0x1234), 0.0, 0.0).unwrap();
    assert_eq!(n.to_bits(), 0x7ff8_0000_0000_1234);
    let n = float32(Cl::nan, f32::from_bits(u32::MAX), 0.0, 0.0).unwrap();
    assert!(n.is_nan());
}

#[test]
fn exponent_family() {
    assert_eq!(ilogb32(1.0), 0);
    assert_eq!(ilogb32(f32::from_bits(1)), -149);
    assert_eq!(ilogb64(f64::from_bits(1)), -1074);
    assert_eq!(ilogb64(-0.75), -1);
    assert_eq!(ilogb64(0.0), i32::MIN);
    assert_eq!(ilogb64(f64::INFINITY), i32::MAX);
    assert_eq!(ilogb64(f64::NAN), i32::MAX);
    assert_eq!(f32_of(Cl::logb, f32::from_bits(1)), -149.0);
    assert_same(f64_of(Cl::logb, -0.0), f64::NEG_INFINITY);
    assert_same(f64_of(Cl::logb, f64::NEG_INFINITY), f64::INFINITY);
    assert_same(f64_of(Cl::logb, 1000.0), 9.0);
    let frexp = |x| float64_with_out(Cl::frexp, x, 0.0).unwrap();
    assert_eq!(frexp(8.0), (0.5, Second::Int(4)));
    assert_eq!(frexp(-0.0).1, Second::Int(0));
    assert_eq!(frexp(f64::from_bits(1)), (0.5, Second::Int(-1073)));
    let frexp32 = |x| float32_with_out(Cl::frexp, x, 0.0).unwrap();
    assert_eq!(frexp32(f32::from_bits(3)), (0.75, Second::Int(-147)));
    assert_eq!(frexp32(f32::INFINITY), (f32::INFINITY, Second::Int(0)));
}

#[test]
fn ldexp_rounds_once() {
    assert_eq!(with_int64(Cl::ldexp, 1.5, -1074), Some(2.0 * f64::from_bits(1)));
    assert_eq!(with_int64(Cl::ldexp, 2.5, -1074), Some(2.0 * f64::from_bits(1)));
    assert_eq!(with_int64(Cl::ldexp, 1.0, 1024), Some(f64::INFINITY));
    assert_eq!(with_int64(Cl::ldexp, f64::MAX, -2098), Some(f64::from_bits(1)));
    assert_eq!(with_int64(Cl::ldexp, f64::from_bits(1), 1074), Some(1.0));
    assert_eq!(with_int64(Cl::ldexp, -3.0, i32::MIN), Some(-0.0));
    assert_eq!(with_int32(Cl::ldexp, 1.5, -149), Some(2.0 * f32::from_bits(1)));
    assert_eq!(with_int32(Cl::ldexp, 1.0, 128), Some(f32::INFINITY));
    assert_eq!(with_int32(Cl::ldexp, f32::from_bits(1), i32::MAX), Some(f32::INFINITY));
    assert_eq!(with_int32(Cl::ldexp, f32::MAX, -277), Some(f32::from_bits(1)));
    let nan = with_int32(Cl::ldexp, f32::NAN, 3).unwrap();
    assert!(nan.is_nan());
}

#[test]
fn modf_fract_sincos() {
    let modf = |x| float64_with_out(Cl::modf, x, 0.0).unwrap();
    assert_eq!(modf(-3.5), (-0.5, Second::Float(-3.0)));
    let (frac, int) = modf(-3.0);
    assert_same(frac, -0.0);
    assert_eq!(int, Second::Float(-3.0));
    let (frac, int) = modf(f64::NEG_INFINITY);
    assert_same(frac, -0.0);
    assert_eq!(int, Second::Float(f64::NEG_INFINITY));
    let fract32 = |x| float32_with_out(Cl::fract, x, 0.0).unwrap();
    assert_eq!(fract32(-1e-10), (FRACT_MAX32, Second::Float(-1.0)));
    assert_eq!(fract32(-1.25), (0.75, Second::Float(-2.0)));
    assert_eq!(fract32(f32::INFINITY), (0.0, Second::Float(f64::INFINITY)));
    // Integral values have the fraction +0 (x - floor(x)), negative ones and -0 included.
    let (f, i) = fract32(f32::NEG_INFINITY);
    assert_eq!((f.to_bits(), i), (0, Second::Float(f64::NEG_INFINITY)));
    let (f, i) = fract32(-0.0);
    assert_eq!(f.to_bits(), 0);
    assert!(matches!(i, Second::Float(z) if z.to_bits() == (-0.0f64).to_bits()));
    assert_eq!(fract32(-2.0), (0.0, Second::Float(-2.0)));
    assert_eq!(fract32(-2.0).0.to_bits(), 0);
    let (f, _) = float64_with_out(Cl::fract, -0.0, 0.0).unwrap();
    assert_eq!(f.to_bits(), 0);
    assert!(fract32(f32::NAN).0.is_nan());
    let (f, _) = float64_with_out(Cl::fract, -1e-30, 0.0).unwrap();
    assert_eq!(f, FRACT_MAX64);
    let (s, c) = float32_with_out(Cl::sincos, 1.0, 0.0).unwrap();
    assert_eq!(s, 1f32.sin());
    assert_eq!(c, Second::Float(f64::from(1f64.cos() as f32)));
}

#[test]
fn remainder_and_remquo() {
    let remquo = |x, y| float64_with_out(Cl::remquo, x, y).unwrap();
    assert_eq!(remquo(5.0, 3.0), (-1.0, Second::Int(2)));
    assert_eq!(remquo(7.0, 2.0), (-1.0, Second::Int(4)));
    assert_eq!(remquo(-7.0, 2.0), (1.0, Second::Int(-4)));
    assert_eq!(remquo(5.0, -2.0), (1.0, Second::Int(-2)));
    assert_eq!(remquo(3.0, 2.0), (-1.0, Second::Int(2)));
    assert_eq!(remquo(1.0, 2.0), (1.0, Second::Int(0)));
    assert_eq!(remquo(1.5, f64::INFINITY), (1.5, Second::Int(0)));
    assert!(remquo(f64::INFINITY, 2.0).0.is_nan());
    assert!(remquo(1.0, 0.0).0.is_nan());
    let (r, _) = remquo(-4.0, 2.0);
    assert_same(r, -0.0);
    // References from glibc's remquo (whose quotient agrees modulo 8).
    let quo_mod8 = |s: Second| match s {
        Second::Int(q) => q.rem_euclid(8),
        Second::Float(_) => panic!(),
    };
    let (r, q) = remquo(1e300, 3.0);
    assert_eq!((r, quo_mod8(q)), (0.0, 0));
    let (r, q) = remquo(-1e300, 7.0);
    assert_eq!((r, quo_mod8(q)), (-1.0, 7));
    let (r, q) = float32_with_out(Cl::remquo, 2e10, 3.0).unwrap();
    assert_eq!((r, quo_mod8(q)), (-1.0, 3));
    let tiny = f64::from_bits(1);
    assert_same(f64_of_2(Cl::remainder, 1e-320, 3.0 * tiny), -tiny);
    assert_same(f64_of_2(Cl::remainder, f64::MAX, tiny), 0.0);
    assert_eq!(float32(Cl::remainder, 14.5, 16.0, 0.0), Some(-1.5));
    assert_eq!(float32(Cl::fmod, -7.0, 2.0, 0.0), Some(-1.0));
}

#[test]
fn nextafter_steps_one_ulp() {
    assert_eq!(float32(Cl::nextafter, 0.0, 1.0, 0.0), Some(f32::from_bits(1)));
    assert_eq!(float32(Cl::nextafter, 0.0, -1.0, 0.0).map(f32::to_bits), Some(0x8000_0001));
    assert_eq!(float32(Cl::nextafter, 1.0, 2.0, 0.0), Some(1.0 + f32::EPSILON));
    assert_eq!(float32(Cl::nextafter, f32::MAX, f32::INFINITY, 0.0), Some(f32::INFINITY));
    assert_same(f64_of_2(Cl::nextafter, -0.0, 0.0), 0.0);
    assert_same(f64_of_2(Cl::nextafter, 1.0, 0.0), 1.0 - f64::EPSILON / 2.0);
    assert!(f64_of_2(Cl::nextafter, f64::NAN, 0.0).is_nan());
}

#[test]
fn pi_scaled_trig_edge_cases() {
    assert_same(f64_of(Cl::sinpi, 1.0), 0.0);
    assert_same(f64_of(Cl::sinpi, -1.0), -0.0);
    assert_same(f64_of(Cl::sinpi, -0.0), -0.0);
    assert_same(f64_of(Cl::sinpi, 0.5), 1.0);
    assert_same(f64_of(Cl::sinpi, 1e300), 0.0);
    assert_same(f64_of(Cl::cospi, 0.5), 0.0);
    assert_same(f64_of(Cl::cospi, -1.5), 0.0);
    assert_same(f64_of(Cl::cospi, 1.0), -1.0);
    assert_same(f64_of(Cl::cospi, 2f64.powi(52) + 1.0), -1.0);
    assert_same(f64_of(Cl::tanpi, 0.5), f64::INFINITY);
    assert_same(f64_of(Cl::tanpi, 1.5), f64::NEG_INFINITY);
    assert_same(f64_of(Cl::tanpi, -0.5), f64::NEG_INFINITY);
    assert_same(f64_of(Cl::tanpi, 1.0), -0.0);
    assert_same(f64_of(Cl::tanpi, -1.0), 0.0);
    assert_same(f64_of(Cl::tanpi, 2.0), 0.0);
    assert_same(f64_of(Cl::tanpi, -2.0), -0.0);
    assert!(f64_of(Cl::tanpi, f64::INFINITY).is_nan());
    assert!(f64_of(Cl::sinpi, f64::NAN).is_nan());
    assert_eq!(f32_of(Cl::sinpi, 0.5), 1.0);
    assert_eq!(f32_of(Cl::cospi, 0.25), std::f32::consts::FRAC_1_SQRT_2);
    assert_same(f64_of_2(Cl::atan2pi, 0.0, -0.0), 1.0);
    assert_same(f64_of_2(Cl::atan2pi, -0.0, -1.0), -1.0);
    assert_same(f64_of(Cl::asinpi, -1.0), -0.5);
}

#[test]
fn pi_scaled_trig_accuracy() {
    check_refs(
        Cl::sinpi,
        4.0,
        &[
            (1e-300, 3.1415926535897936e-300),
            (0.1, 0.30901699437494745),
            (0.25, std::f64::consts::FRAC_1_SQRT_2),
            (0.3, 0.8090169943749475),
            (0.7, 0.8090169943749475),
            (1.2, -0.587785252292473),
            (-2.6, -0.9510565162951535),
            (123456.789, 0.6153863701685053),
            (4503599627370495.5, -1.0),
        ],
    );
    check_refs(
        Cl::cospi,
        4.0,
        &[
            (1e-300, 1.0),
            (0.1, 0.9510565162951535),
            (0.25, std::f64::consts::FRAC_1_SQRT_2),
            (0.3, 0.5877852522924731),
            (0.7, -0.587785252292473),
            (1.2, -0.8090169943749475),
            (-2.6, -0.3090169943749477),
            (123456.789, -0.7882256119987674),
            (12345.25, -std::f64::consts::FRAC_1_SQRT_2),
        ],
    );
    check_refs(
        Cl::tanpi,
        6.0,
        &[
            (1e-300, 3.1415926535897936e-300),
            (0.1, 0.32491969623290634),
            (0.3, 1.3763819204711734),
            (0.49, 31.82051595377393),
            (0.7, -1.376381920471174),
            (1.2, 0.7265425280053607),
            (-2.6, 3.0776835371752504),
            (123456.789, -0.7807236415574219),
        ],
    );
    check_refs(
        Cl::asinpi,
        5.0,
        &[(1e-300, 3.183098861837907e-301), (0.3, 0.09698668402067828), (-0.9, -0.3564337068712937), (1.0, 0.5)],
    );
    check_refs(Cl::acospi, 5.0, &[(-1.0, 1.0), (-0.3, 0.5969866840206783), (0.0, 0.5), (0.9, 0.14356629312870625)]);
    check_refs(
        Cl::atanpi,
        5.0,
        &[(1e-300, 3.183098861837907e-301), (0.3, 0.09277357907774234), (-7.0, -0.4548327646991335), (1e300, 0.5)],
    );
}

#[test]
fn exp_log_hyperbolic_accuracy() {
    check_refs(
        Cl::exp10,
        3.0,
        &[
            (-307.5, 3.162277660168379e-308),
            (-1.5, 0.03162277660168379),
            (0.3, 1.9952623149688795),
            (2.0, 100.0),
            (10.7, 50118723362.72715),
            (308.2, 1.584893192461072e308),
        ],
    );
    check_refs(
        Cl::acosh,
        4.0,
        &[
            (1.0000000000000002, 2.1073424255447014e-08),
            (1.001, 0.04471763360830685),
            (1.5, 0.9624236501192069),
            (2.0, 1.3169578969248168),
            (10.0, 2.993222846126381),
            (1e10, 23.7189981105004),
            (1e300, 691.4686750787737),
        ],
    );
    check_refs(
        Cl::atanh,
        5.0,
        &[
            (1e-300, 1e-300),
            (0.1, 0.10033534773107558),
            (-0.5, -0.5493061443340549),
            (0.9, 1.4722194895832204),
            (-0.9999, -4.951718775643099),
            (0.9999999999999999, 18.714973875118524),
        ],
    );
    assert_same(f64_of(Cl::acosh, 1.0), 0.0);
    assert!(f64_of(Cl::acosh, 0.5).is_nan());
    assert_same(f64_of(Cl::atanh, -1.0), f64::NEG_INFINITY);
    assert_same(f64_of(Cl::atanh, -0.0), -0.0);
    assert!(f64_of(Cl::atanh, 1.5).is_nan());
    assert_same(f64_of(Cl::exp10, f64::NEG_INFINITY), 0.0);
    assert_eq!(f32_of(Cl::exp10, 3.0), 1000.0);
}

#[test]
fn erf_accuracy() {
    check_refs(
        Cl::erf,
        16.0,
        &[
            (1e-310, 1.1283791670955e-310),
            (1e-20, 1.1283791670955125e-20),
            (0.1, 0.1124629160182849),
            (0.5, 0.5204998778130465),
            (0.74, 0.7046780778547458),
            (0.76, 0.7175367528055908),
            (1.0, 0.8427007929497149),
            (1.5, 0.9661051464753108),
            (2.0, 0.9953222650189527),
            (3.0, 0.9999779095030014),
            (5.0, 0.9999999999984626),
            (-0.3, -0.3286267594591274),
            (-2.5, -0.999593047982555),
        ],
    );
    check_refs(
        Cl::erfc,
        16.0,
        &[
            (-3.0, 1.9999779095030015),
            (-0.5, 1.5204998778130465),
            (0.0, 1.0),
            (0.1, 0.887537083981715),
            (0.49, 0.4883317388114769),
            (0.51, 0.4707563801588296),
            (1.0, 0.15729920705028513),
            (2.0, 0.004677734981047266),
            (4.0, 1.541725790028002e-08),
            (10.0, 2.088487583762545e-45),
            (20.0, 5.395865611607901e-176),
            (26.0, 5.663192408856143e-296),
            (27.0, 5.23705e-319),
        ],
    );
    assert_same(f64_of(Cl::erf, -0.0), -0.0);
    assert_same(f64_of(Cl::erf, f64::NEG_INFINITY), -1.0);
    assert_same(f64_of(Cl::erfc, f64::INFINITY), 0.0);
    assert_same(f64_of(Cl::erfc, f64::NEG_INFINITY), 2.0);
    assert!(f64_of(Cl::erfc, f64::NAN).is_nan());
}

#[test]
fn gamma_accuracy() {
    check_refs(
        Cl::tgamma,
        16.0,
        &[
            (1e-300, 9.999999999999999e299),
            (1e-10, 9999999999.422785),
            (0.1, 9.51350769866873),
            (0.5, 1.772453850905516),
            (1.5, 0.886226925452758),
            (2.5, 1.329340388179137),
            (3.7, 4.170651783796604),
            (7.9, 4122.709484285445),
            (8.1, 6169.593697484543),
            (20.5, 5.406242982335075e17),
            (100.3, 3.711481867182677e156),
            (170.5, 5.56209241456e305),
            (-0.1, -10.686287021193193),
            (-0.5, -3.544907701811032),
            (-1.5, 2.363271801207355),
            (-2.7, -0.931082784838964),
            (-20.3, -6.435466204989327e-19),
            (-100.6, -2.2226080823396195e-159),
            (-170.6, -2.0829008361502995e-308),
            (-177.7, 5e-324),
        ],
    );
    // lgamma has no spec bound; it is within a few ulp away from its zeros.
    check_refs(
        Cl::lgamma,
        8.0,
        &[
            (1e-300, 690.7755278982137),
            (1e-10, 23.025850929882736),
            (0.1, 2.252712651734206),
            (0.5, 0.5723649429247001),
            (0.9, 0.06637623973474295),
            (1.1, -0.049872441259839764),
            (1.5, -0.12078223763524522),
            (1.9, -0.03898427592308336),
            (2.1, 0.04543773854448518),
            (3.7, 1.428072326665388),
            (10.0, 12.801827480081469),
            (1000.0, 5905.220423209181),
            (1e10, 220258509288.81058),
            (1e300, 6.897755278982137e302),
            (-0.1, 2.3689613327287886),
            (-0.7, 1.4524729387568078),
            (-1.5, 0.860047015376481),
            (-20.3, -41.887292480135244),
            (-1000.5, -5914.437701116852),
        ],
    );
    for (x, want) in [(1.0, 1.0), (2.0, 1.0), (5.0, 24.0), (10.0, 362880.0)] {
        assert_same(f64_of(Cl::tgamma, x), want);
    }
    assert_same(f64_of(Cl::tgamma, 0.0), f64::INFINITY);
    assert_same(f64_of(Cl::tgamma, -0.0), f64::NEG_INFINITY);
    assert_same(f64_of(Cl::tgamma, 172.0), f64::INFINITY);
    assert_same(f64_of(Cl::tgamma, f64::INFINITY), f64::INFINITY);
    assert_same(f64_of(Cl::tgamma, -1000.5), -0.0);
    assert_same(f64_of(Cl::tgamma, -1001.5), 0.0);
    assert!(f64_of(Cl::tgamma, -3.0).is_nan());
    assert!(f64_of(Cl::tgamma, f64::NEG_INFINITY).is_nan());
    assert_same(f64_of(Cl::lgamma, 1.0), 0.0);
    assert_same(f64_of(Cl::lgamma, 2.0), 0.0);
    assert_same(f64_of(Cl::lgamma, -0.0), f64::INFINITY);
    assert_same(f64_of(Cl::lgamma, -4.0), f64::INFINITY);
    assert_same(f64_of(Cl::lgamma, f64::NEG_INFINITY), f64::INFINITY);
    let lgamma_r = |x| float64_with_out(Cl::lgamma_r, x, 0.0).unwrap().1;
    assert_eq!(lgamma_r(-0.5), Second::Int(-1));
    assert_eq!(lgamma_r(-1.5), Second::Int(1));
    assert_eq!(lgamma_r(-2.5), Second::Int(-1));
    assert_eq!(lgamma_r(-0.0), Second::Int(-1));
    assert_eq!(lgamma_r(3.0), Second::Int(1));
    assert_eq!(lgamma_r(-3.0), Second::Int(0));
    let (l, s) = float32_with_out(Cl::lgamma_r, -0.5, 0.0).unwrap();
    assert_eq!((l, s), (1.2655121, Second::Int(-1)));
}

#[test]
fn powers_and_roots() {
    let pown = |x, n| with_int64(Cl::pown, x, n).unwrap();
    assert_same(pown(2.0, -2), 0.25);
    assert_same(pown(-0.0, -1), f64::NEG_INFINITY);
    assert_same(pown(-0.0, -2), f64::INFINITY);
    assert_same(pown(-0.0, 3), -0.0);
    assert_same(pown(f64::NAN, 0), 1.0);
    assert_same(pown(-3.0, 3), -27.0);
    let powr = |x, y| f64_of_2(Cl::powr, x, y);
    assert!(powr(-1.0, 2.0).is_nan());
    assert!(powr(0.0, 0.0).is_nan());
    assert!(powr(f64::INFINITY, 0.0).is_nan());
    assert!(powr(1.0, f64::INFINITY).is_nan());
    assert_same(powr(-0.0, -1.0), f64::INFINITY);
    assert_same(powr(0.0, 2.0), 0.0);
    assert_same(powr(f64::INFINITY, -1.0), 0.0);
    assert_same(powr(2.0, 10.0), 1024.0);
    assert_same(f64_of_2(Cl::pow, -2.0, 3.0), -8.0);
    let rootn = |x, n| with_int64(Cl::rootn, x, n).unwrap();
    assert!(rootn(8.0, 0).is_nan());
    assert!(rootn(-4.0, 2).is_nan());
    assert_same(rootn(-0.0, 3), -0.0);
    assert_same(rootn(-0.0, -3), f64::NEG_INFINITY);
    assert_same(rootn(0.0, -2), f64::INFINITY);
    assert_same(rootn(-0.0, 2), 0.0);
    assert_same(rootn(f64::NEG_INFINITY, 3), f64::NEG_INFINITY);
    assert_same(rootn(f64::INFINITY, -2), 0.0);
    assert_same(rootn(f64::NEG_INFINITY, -3), -0.0);
    assert_same(rootn(f64::from_bits(1), 2), 2f64.powi(-537));
    let refs = [
        (27.0, 3, 3.0),
        (-27.0, 3, -3.0),
        (2.0, 2, std::f64::consts::SQRT_2),
        (1e-310, 2, 9.999999999999986e-156),
        (1e-310, 3, 4.641588833612774e-104),
        (1.7e308, 2, 1.3038404810405297e154),
        (1.7e308, -3, 1.8051655059781124e-103),
        (5e-324, -7, 1.5367463556376298e46),
        (3.0, -2, 0.5773502691896257),
        (1e300, 17, 4.436687330978612e17),
        (1e-300, 1000, 0.5011872336272722),
        (7.0, 100000, 1.00001945929082),
    ];
    for (x, n, exact) in refs {
        assert_ulps("rootn", x, rootn(x, n), exact, 16.5);
    }
    assert_eq!(with_int32(Cl::rootn, -8.0, 3), Some(-2.0));
    assert_eq!(with_int32(Cl::pown, 3.0, 4), Some(81.0));
    assert_eq!(with_int32(Cl::pown, 10.0, 39), Some(f32::INFINITY));
    assert_eq!(with_int32(Cl::sin, 1.0, 1), None);
}

#[test]
fn entry_points_reject_other_ops() {
    assert_eq!(float32(Cl::frexp, 1.0, 0.0, 0.0), None);
    assert_eq!(float32(Cl::ldexp, 1.0, 0.0, 0.0), None);
    assert_eq!(float32(Cl::s_abs, 1.0, 0.0, 0.0), None);
    assert_eq!(float64(Cl::ilogb, 1.0, 0.0, 0.0), None);
    assert_eq!(float64_with_out(Cl::sin, 1.0, 0.0), None);
    assert_eq!(integer(Cl::sin, 32, 1, 0, 0), None);
    assert_eq!(integer(Cl::s_abs, 24, 1, 0, 0), None);
}

#[test]
fn integer_abs_and_saturation() {
    assert_eq!(integer(Cl::s_abs, 8, 0x80, 0, 0), Some(0x80));
    assert_eq!(integer(Cl::s_abs, 32, 0xffff_fffb, 0, 0), Some(5));
    assert_eq!(integer(Cl::s_abs, 64, 1 << 63, 0, 0), Some(1 << 63));
    assert_eq!(integer(Cl::u_abs, 16, 0xfffb, 0, 0), Some(0xfffb));
    assert_eq!(integer(Cl::s_abs_diff, 8, 0x7f, 0x80, 0), Some(0xff));
    assert_eq!(integer(Cl::u_abs_diff, 8, 3, 250, 0), Some(247));
    assert_eq!(integer(Cl::s_abs_diff, 64, i64::MAX as u64, 1 << 63, 0), Some(u64::MAX));
    assert_eq!(integer(Cl::s_add_sat, 8, 100, 100, 0), Some(127));
    assert_eq!(integer(Cl::s_add_sat, 8, 0x80, 0xff, 0), Some(0x80));
    assert_eq!(integer(Cl::u_add_sat, 32, 0xffff_fff0, 0x20, 0), Some(0xffff_ffff));
    assert_eq!(integer(Cl::s_sub_sat, 64, 1 << 63, 1, 0), Some(1 << 63));
    assert_eq!(integer(Cl::s_sub_sat, 16, 0x7fff, 0xffff, 0), Some(0x7fff));
    assert_eq!(integer(Cl::u_sub_sat, 16, 3, 5, 0), Some(0));
    assert_eq!(integer(Cl::u_mad_sat, 64, u64::MAX, u64::MAX, 5), Some(u64::MAX));
    assert_eq!(integer(Cl::u_mad_sat, 8, 10, 20, 5), Some(205));
    assert_eq!(integer(Cl::s_mad_sat, 64, 1 << 62, 4, 0), Some(i64::MAX as u64));
    assert_eq!(integer(Cl::s_mad_sat, 64, 1 << 62, (-4i64) as u64, 0), Some(1 << 63));
    assert_eq!(integer(Cl::s_mad_sat, 32, 0xffff_fffe, 3, 2), Some(0xffff_fffc));
}

#[test]
fn integer_averages_and_ordering() {
    assert_eq!(integer(Cl::u_hadd, 8, 255, 255, 0), Some(255));
    assert_eq!(integer(Cl::u_rhadd, 8, 255, 254, 0), Some(255));
    assert_eq!(integer(Cl::s_hadd, 8, 0xff, 0xfe, 0), Some(0xfe)); // (-1 + -2) >> 1 = -2
    assert_eq!(integer(Cl::s_rhadd, 8, 0xff, 0xfe, 0), Some(0xff)); // (-3 + 1) >> 1 = -1
    assert_eq!(integer(Cl::s_hadd, 64, i64::MAX as u64, i64::MAX as u64, 0), Some(i64::MAX as u64));
    assert_eq!(integer(Cl::u_rhadd, 64, u64::MAX, u64::MAX, 0), Some(u64::MAX));
    assert_eq!(integer(Cl::s_max, 32, 0xffff_ffff, 1, 0), Some(1));
    assert_eq!(integer(Cl::u_max, 32, 0xffff_ffff, 1, 0), Some(0xffff_ffff));
    assert_eq!(integer(Cl::s_min, 16, 0x8000, 0x7fff, 0), Some(0x8000));
    assert_eq!(integer(Cl::u_min, 16, 0x8000, 0x7fff, 0), Some(0x7fff));
    assert_eq!(integer(Cl::s_clamp, 32, 0xffff_fff0, 0xffff_fffe, 5), Some(0xffff_fffe));
    assert_eq!(integer(Cl::u_clamp, 32, 0xffff_fff0, 2, 5), Some(5));
}

#[test]
fn integer_bits() {
    for bits in [8, 16, 32, 64] {
        assert_eq!(integer(Cl::clz, bits, 0, 0, 0), Some(bits.into()));
        assert_eq!(integer(Cl::ctz, bits, 0, 0, 0), Some(bits.into()));
        assert_eq!(integer(Cl::clz, bits, 1, 0, 0), Some(u64::from(bits) - 1));
        assert_eq!(integer(Cl::popcount, bits, u64::MAX, 0, 0), Some(bits.into()));
    }
    assert_eq!(integer(Cl::ctz, 32, 0x80, 0, 0), Some(7));
    assert_eq!(integer(Cl::clz, 16, 0x00f0, 0, 0), Some(8));
    assert_eq!(integer(Cl::popcount, 8, 0x1_0f, 0, 0), Some(4));
    assert_eq!(integer(Cl::rotate, 8, 0x81, 1, 0), Some(0x03));
    assert_eq!(integer(Cl::rotate, 8, 0x81, 9, 0), Some(0x03));
    assert_eq!(integer(Cl::rotate, 32, 0x8000_0001, 0xffff_ffff, 0), Some(0xc000_0000));
    assert_eq!(integer(Cl::rotate, 32, 0x1234_5678, 32, 0), Some(0x1234_5678));
    assert_eq!(integer(Cl::rotate, 64, 1 << 63, 65, 0), Some(1));
}

#[test]
fn integer_products() {
    assert_eq!(integer(Cl::u_mul_hi, 32, 0xffff_ffff, 0xffff_ffff, 0), Some(0xffff_fffe));
    assert_eq!(integer(Cl::s_mul_hi, 32, 0xffff_ffff, 0xffff_ffff, 0), Some(0));
    assert_eq!(integer(Cl::s_mul_hi, 32, 0xffff_ffff, 2, 0), Some(0xffff_ffff));
    assert_eq!(integer(Cl::u_mul_hi, 64, u64::MAX, u64::MAX, 0), Some(u64::MAX - 1));
    assert_eq!(integer(Cl::s_mul_hi, 64, 1 << 63, 1 << 63, 0), Some(1 << 62));
    assert_eq!(integer(Cl::s_mul_hi, 64, 1 << 63, 1, 0), Some(u64::MAX));
    assert_eq!(integer(Cl::u_mad_hi, 8, 0xff, 0xff, 3), Some(0x01));
    assert_eq!(integer(Cl::s_mad_hi, 8, 0x80, 0x80, 0xff), Some(0x3f));
    assert_eq!(integer(Cl::s_mul24, 32, 0x00ff_ffff, 2, 0), Some(0xffff_fffe));
    assert_eq!(integer(Cl::u_mul24, 32, 0x01ff_ffff, 2, 0), Some(0x01ff_fffe));
    assert_eq!(integer(Cl::s_mad24, 32, 0x00ff_ffff, 3, 4), Some(1));
    assert_eq!(integer(Cl::u_mad24, 32, 0x00ff_ffff, 0x00ff_ffff, 1), Some(0xfe00_0002));
    assert_eq!(integer(Cl::u_upsample, 8, 0x12, 0x34, 0), Some(0x1234));
    assert_eq!(integer(Cl::s_upsample, 32, 0xffff_ffff, 0x8000_0000, 0), Some(0xffff_ffff_8000_0000));
    assert_eq!(integer(Cl::u_upsample, 64, 1, 1, 0), None);
}

/// One `float` function of the ULP sweep: its op, the spec bound, the sampled domain and
/// an independent `f64` reference.
struct Sweep {
    op: Cl,
    bound: f64,
    lo: f64,
    hi: f64,
    reference: fn(f64, f64) -> f64,
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Alternately uniform over `[lo, hi]` and log-uniform in magnitude, as a float.
    fn sample(&mut self, lo: f64, hi: f64) -> f32 {
        let x = if self.next() & 1 == 0 {
            lo + (hi - lo) * self.unit()
        } else {
            let top = lo.abs().max(hi.abs());
            let magnitude = (top.ln() + (1e-30f64.ln() - top.ln()) * self.unit()).exp();
            let signed = if lo < 0.0 && self.next() & 1 == 0 { -magnitude } else { magnitude };
            signed.clamp(lo, hi)
        };
        x as f32
    }
}

/// `sin(π x)` for a float `x`: exact reduction modulo 2, exact zeros.
fn sinpi_reference(x: f64) -> f64 {
    let r = x % 2.0;
    if r.fract() == 0.0 { 0.0 } else { (std::f64::consts::PI * r).sin() }
}

/// `cos(π x)` for a float `x`: exact reduction modulo 2, exact zeros.
fn cospi_reference(x: f64) -> f64 {
    let r = (x % 2.0).abs();
    if r == 0.5 || r == 1.5 { 0.0 } else { (std::f64::consts::PI * r).cos() }
}

/// `tan(π x)` for a float `x`, with the spec's infinities at half-integers.
fn tanpi_reference(x: f64) -> f64 {
    match x % 2.0 {
        0.5 | -1.5 => f64::INFINITY,
        1.5 | -0.5 => f64::NEG_INFINITY,
        r if r.fract() == 0.0 => 0.0,
        r => (std::f64::consts::PI * r).tan(),
    }
}

fn sweep_cases() -> Vec<Sweep> {
    use std::f64::consts::PI;
    macro_rules! case {
        ($op:ident, $bound:expr, $lo:expr, $hi:expr, $f:expr) => {
            Sweep { op: Cl::$op, bound: $bound, lo: $lo, hi: $hi, reference: $f }
        };
    }
    vec![
        case!(acos, 4.0, -1.0, 1.0, |x, _| x.acos()),
        case!(acosh, 4.0, 1.0, 1e30, |x, _| x.acosh()),
        case!(acospi, 5.0, -1.0, 1.0, |x, _| x.acos() / PI),
        case!(asin, 4.0, -1.0, 1.0, |x, _| x.asin()),
        case!(asinh, 4.0, -1e30, 1e30, |x, _| x.asinh()),
        case!(asinpi, 5.0, -1.0, 1.0, |x, _| x.asin() / PI),
        case!(atan, 5.0, -1e30, 1e30, |x, _| x.atan()),
        case!(atan2, 6.0, -1e10, 1e10, |x, y| x.atan2(y)),
        case!(atanh, 5.0, -1.0, 1.0, |x, _| x.atanh()),
        case!(atanpi, 5.0, -1e30, 1e30, |x, _| x.atan() / PI),
        case!(atan2pi, 6.0, -1e10, 1e10, |x, y| x.atan2(y) / PI),
        case!(cbrt, 2.0, -1e38, 1e38, |x, _| x.cbrt()),
        case!(cos, 4.0, -1e5, 1e5, |x, _| x.cos()),
        case!(cosh, 4.0, -88.0, 88.0, |x, _| x.cosh()),
        case!(cospi, 4.0, -1e4, 1e4, |x, _| cospi_reference(x)),
        case!(erf, 16.0, -5.0, 5.0, |x, _| erf(x)),
        case!(erfc, 16.0, -3.0, 10.0, |x, _| erfc(x)),
        case!(exp, 3.0, -100.0, 88.0, |x, _| x.exp()),
        case!(exp2, 3.0, -140.0, 127.0, |x, _| x.exp2()),
        case!(exp10, 3.0, -40.0, 38.0, |x, _| 10f64.powf(x)),
        case!(expm1, 3.0, -20.0, 88.0, |x, _| x.exp_m1()),
        case!(hypot, 4.0, -1e30, 1e30, |x, y| x.hypot(y)),
        case!(lgamma, 16.0, -30.0, 1e4, |x, _| lgamma(x)),
        case!(log, 3.0, 0.0, 1e38, |x, _| x.ln()),
        case!(log2, 3.0, 0.0, 1e38, |x, _| x.log2()),
        case!(log10, 3.0, 0.0, 1e38, |x, _| x.log10()),
        case!(log1p, 2.0, -1.0, 1e38, |x, _| x.ln_1p()),
        case!(pow, 16.0, 0.0, 50.0, |x, y| x.powf(y)),
        case!(powr, 16.0, 0.0, 50.0, |x, y| x.powf(y)),
        case!(rsqrt, 2.0, 0.0, 1e38, |x, _| 1.0 / x.sqrt()),
        case!(sin, 4.0, -1e5, 1e5, |x, _| x.sin()),
        case!(sinh, 4.0, -88.0, 88.0, |x, _| x.sinh()),
        case!(sinpi, 4.0, -1e4, 1e4, |x, _| sinpi_reference(x)),
        case!(tan, 5.0, -1e5, 1e5, |x, _| x.tan()),
        case!(tanh, 5.0, -20.0, 20.0, |x, _| x.tanh()),
        case!(tanpi, 6.0, -1e4, 1e4, |x, _| tanpi_reference(x)),
        case!(tgamma, 16.0, -40.0, 35.0, |x, _| tgamma(x)),
        case!(degrees, 2.0, -1e30, 1e30, |x, _| x.to_degrees()),
        case!(radians, 2.0, -1e30, 1e30, |x, _| x.to_radians()),
    ]
}

/// The largest ULP error of `case` over 10k sample points.
fn sweep(case: &Sweep, rng: &mut Rng) -> (f64, f32) {
    let mut worst = (0.0, 0.0);
    for _ in 0..10_000 {
        let x = rng.sample(case.lo, case.hi);
        let y = rng.sample(case.lo, case.hi);
        let y = if matches!(case.op, Cl::pow | Cl::powr) { y - 25.0 } else { y };
        let got = float32(case.op, x, y, 0.0).unwrap();
        let exact = (case.reference)(x.into(), y.into());
        let e = ulp_error_f32(got, exact);
        if e > worst.0 {
            worst = (e, x);
        }
    }
    worst
}

#[test]
fn f32_transcendentals_within_spec_ulp() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    println!("{:<10} {:>8} {:>6}  worst at", "function", "max ulp", "spec");
    for case in sweep_cases() {
        let (e, x) = sweep(&case, &mut rng);
        println!("{:<10} {e:>8.3} {:>6}  {x:e}", format!("{:?}", case.op), case.bound);
        assert!(e <= case.bound, "{:?}: {e} ulp at {x:e}", case.op);
    }
    // ldexp, pown and rootn take an int operand.
    for _ in 0..10_000 {
        let x = rng.sample(-1e3, 1e3);
        let n = (rng.next() % 41) as i32 - 20;
        let pown = with_int32(Cl::pown, x, n).unwrap();
        assert!(ulp_error_f32(pown, f64::from(x).powi(n)) <= 16.0, "pown({x}, {n})");
        let n = if n == 0 { 3 } else { n };
        let root = with_int32(Cl::rootn, x.abs(), n).unwrap();
        let exact = f64::from(x.abs()).powf(1.0 / f64::from(n));
        assert!(ulp_error_f32(root, exact) <= 16.0, "rootn({x}, {n})");
    }
}

#[test]
fn ulp_error_helper() {
    assert_eq!(ulp_error_f32(1.0, 1.0), 0.0);
    assert_eq!(ulp_error_f32(1.0 + f32::EPSILON, 1.0), 1.0);
    assert_eq!(ulp_error_f32(f32::from_bits(2), 0.0), 2.0);
    assert_eq!(ulp_error_f32(f32::INFINITY, 1e39), 0.0);
    assert_eq!(ulp_error_f32(f32::INFINITY, -1e39), f64::INFINITY);
    assert_eq!(ulp_error_f32(f32::NAN, f64::NAN), 0.0);
    assert_eq!(ulp_error_f32(0.0, f64::NAN), f64::INFINITY);
}
