//! Reading one typed value from text, and the per-type arithmetic of `range=`.
//!
//! Owns the number syntax of launch files, which is that of C++ stream extraction (what the
//! reference tool uses):
//! - integers: optional sign, then decimal digits, or with `hex` hexadecimal digits after an
//!   optional `0x`; a value that does not fit the type fails; unsigned types accept a leading
//!   `-` and wrap (`-1` as `uint` is 4294967295), as `strtoul` does;
//! - `char`/`uchar` are read as an `int`, then range-checked (a separate error);
//! - floating point: `[+-]digits[.digits][e[+-]digits]`, always decimal (`hex` does not apply);
//!   no `inf`/`nan`; a value that overflows to infinity fails, one that underflows is kept.
//!
//! Reading stops at the first character that cannot continue the number and reports how many
//! bytes it used; the caller decides what the rest means.

/// Why a value could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ScanError {
    /// Not a number of this type (bad syntax or out of range).
    Invalid,
    /// A `char`/`uchar` value outside the type's range.
    CharRange,
}

/// One element type of a launch-file buffer, as the Rust type that stores it.
pub(super) trait Elem: Copy {
    /// Reads a value from the start of `text`: the value and the bytes it used.
    fn scan(text: &str, hex: bool) -> Result<(Self, usize), ScanError>;
    /// Appends the value's little-endian bytes.
    fn put(self, out: &mut Vec<u8>);
    /// The next value of a range: `self + inc`, wrapping for integers.
    fn step(self, inc: Self) -> Self;
    /// The value `k` steps on, when it does not depend on taking them one by one (integers,
    /// wrapping); None for floats, whose sums round at every step.
    fn nth(self, inc: Self, k: u64) -> Option<Self>;
    /// The element count of `range=start:inc:end`: `(end - start + inc) / inc`, the
    /// subtraction done in the type's own arithmetic (C promotion rules: 8- and 16-bit types
    /// in `int`) and the division in `f64`. Not necessarily an integer.
    fn range_count(start: Self, inc: Self, end: Self) -> f64;
}

/// The textual form of an integer: sign, magnitude (`None` if it overflows `u64`), length.
struct IntText {
    negative: bool,
    magnitude: Option<u64>,
    len: usize,
}

fn scan_int_text(text: &str, hex: bool) -> Option<IntText> {
    let bytes = text.as_bytes();
    let mut i = 0;
    let negative = bytes.first() == Some(&b'-');
    if matches!(bytes.first(), Some(b'-' | b'+')) {
        i = 1;
    }
    let radix = if hex { 16 } else { 10 };
    // In hex a leading "0" counts as a digit on its own, but "0x" is only a prefix.
    let mut lone_zero = false;
    if hex && bytes.get(i) == Some(&b'0') {
        i += 1;
        lone_zero = true;
        if matches!(bytes.get(i), Some(b'x' | b'X')) {
            i += 1;
            lone_zero = false;
        }
    }
    let digits_start = i;
    let mut magnitude = Some(0u64);
    while let Some(digit) = bytes.get(i).and_then(|&b| digit_value(b, radix)) {
        magnitude =
            magnitude.and_then(|m| m.checked_mul(u64::from(radix))).and_then(|m| m.checked_add(u64::from(digit)));
        i += 1;
    }
    if i == digits_start && !lone_zero {
        return None;
    }
    Some(IntText { negative, magnitude, len: i })
}

/// The value of the ASCII digit `b` in base 10 or 16 (either case), if it is one.
pub(super) fn digit_value(b: u8, radix: u32) -> Option<u32> {
    let value = match b {
        b'0'..=b'9' => b - b'0',
        b'a'..=b'f' => b - b'a' + 10,
        b'A'..=b'F' => b - b'A' + 10,
        _ => return None,
    };
    (u32::from(value) < radix).then_some(u32::from(value))
}

/// Reads an integer as C++ reads a `long`: the magnitude must fit the signed range.
fn scan_i64(text: &str, hex: bool) -> Result<(i64, usize), ScanError> {
    let int = scan_int_text(text, hex).ok_or(ScanError::Invalid)?;
    let magnitude = int.magnitude.ok_or(ScanError::Invalid)?;
    let value = if int.negative { 0i64.checked_sub_unsigned(magnitude) } else { i64::try_from(magnitude).ok() };
    value.map(|v| (v, int.len)).ok_or(ScanError::Invalid)
}

/// The length of the longest prefix of `text` that a C++ stream takes as a floating-point
/// number (which may still be malformed, e.g. `1e`).
fn float_text_len(text: &str) -> usize {
    let bytes = text.as_bytes();
    let digits_from = |mut i: usize| {
        while bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        i
    };
    let mut i = usize::from(matches!(bytes.first(), Some(b'-' | b'+')));
    let int_end = digits_from(i);
    let mut mantissa_digits = int_end > i;
    i = int_end;
    if bytes.get(i) == Some(&b'.') {
        let frac_end = digits_from(i + 1);
        mantissa_digits |= frac_end > i + 1;
        i = frac_end;
    }
    if mantissa_digits && matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(bytes.get(i), Some(b'-' | b'+')) {
            i += 1;
        }
        i = digits_from(i);
    }
    i
}

fn scan_float<F: std::str::FromStr + Copy>(text: &str, is_finite: fn(F) -> bool) -> Result<(F, usize), ScanError> {
    let len = float_text_len(text);
    match text[..len].parse::<F>() {
        Ok(value) if is_finite(value) => Ok((value, len)),
        _ => Err(ScanError::Invalid),
    }
}

/// Reads a `short`/`int`/`long`: as a `long`, then range-checked.
fn scan_signed<T: TryFrom<i64>>(text: &str, hex: bool) -> Result<(T, usize), ScanError> {
    let (value, len) = scan_i64(text, hex)?;
    let value = T::try_from(value).map_err(|_| ScanError::Invalid)?;
    Ok((value, len))
}

/// Reads an unsigned type, whose magnitude must fit; `neg` wraps a negated value.
fn scan_unsigned<T: TryFrom<u64>>(text: &str, hex: bool, neg: fn(T) -> T) -> Result<(T, usize), ScanError> {
    let int = scan_int_text(text, hex).ok_or(ScanError::Invalid)?;
    let magnitude = int.magnitude.ok_or(ScanError::Invalid)?;
    let value = T::try_from(magnitude).map_err(|_| ScanError::Invalid)?;
    Ok((if int.negative { neg(value) } else { value }, int.len))
}

/// Reads a `char`/`uchar`: as an `int`, then range-checked with its own error.
fn scan_char<T: TryFrom<i32>>(text: &str, hex: bool) -> Result<(T, usize), ScanError> {
    let (value, len) = scan_signed::<i32>(text, hex)?;
    let value = T::try_from(value).map_err(|_| ScanError::CharRange)?;
    Ok((value, len))
}

/// `range_count` for 8- and 16-bit types, which C promotes to `int`.
fn promoted_count<T: Into<i32>>(start: T, inc: T, end: T) -> f64 {
    let (start, inc, end) = (start.into(), inc.into(), end.into());
    f64::from(end - start + inc) / f64::from(inc)
}

macro_rules! int_elem {
    ($t:ty, $scan:expr, promoted) => {
        int_elem!(@impl $t, $scan, promoted_count);
    };
    ($t:ty, $scan:expr, wrapping) => {
        int_elem!(@impl $t, $scan, |start: $t, inc: $t, end: $t| {
            end.wrapping_sub(start).wrapping_add(inc) as f64 / inc as f64
        });
    };
    (@impl $t:ty, $scan:expr, $count:expr) => {
        impl Elem for $t {
            fn scan(text: &str, hex: bool) -> Result<(Self, usize), ScanError> {
                $scan(text, hex)
            }
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn step(self, inc: Self) -> Self {
                self.wrapping_add(inc)
            }
            fn nth(self, inc: Self, k: u64) -> Option<Self> {
                Some(self.wrapping_add(inc.wrapping_mul(k as Self)))
            }
            fn range_count(start: Self, inc: Self, end: Self) -> f64 {
                $count(start, inc, end)
            }
        }
    };
}

int_elem!(i8, scan_char, promoted);
int_elem!(u8, scan_char, promoted);
int_elem!(i16, scan_signed, promoted);
int_elem!(u16, |t, h| scan_unsigned(t, h, u16::wrapping_neg), promoted);
int_elem!(i32, scan_signed, wrapping);
int_elem!(u32, |t, h| scan_unsigned(t, h, u32::wrapping_neg), wrapping);
int_elem!(i64, scan_signed, wrapping);
int_elem!(u64, |t, h| scan_unsigned(t, h, u64::wrapping_neg), wrapping);

impl Elem for f32 {
    fn scan(text: &str, _hex: bool) -> Result<(Self, usize), ScanError> {
        scan_float(text, f32::is_finite)
    }
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn step(self, inc: Self) -> Self {
        self + inc
    }
    fn nth(self, _: Self, _: u64) -> Option<Self> {
        None
    }
    fn range_count(start: Self, inc: Self, end: Self) -> f64 {
        f64::from(end - start + inc) / f64::from(inc)
    }
}

impl Elem for f64 {
    fn scan(text: &str, _hex: bool) -> Result<(Self, usize), ScanError> {
        scan_float(text, f64::is_finite)
    }
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn step(self, inc: Self) -> Self {
        self + inc
    }
    fn nth(self, _: Self, _: u64) -> Option<Self> {
        None
    }
    fn range_count(start: Self, inc: Self, end: Self) -> f64 {
        (end - start + inc) / inc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok<T: Elem>(text: &str, hex: bool) -> (T, usize) {
        T::scan(text, hex).unwrap_or_else(|e| panic!("{text}: {e:?}"))
    }

    #[test]
    fn decimal_integers() {
        assert_eq!(ok::<i32>("-42", false), (-42, 3));
        assert_eq!(ok::<i32>("+7 8", false), (7, 2));
        assert_eq!(ok::<i32>("010", false), (10, 3));
        assert_eq!(ok::<i32>("1.5", false), (1, 1));
        assert_eq!(ok::<i32>("0x10", false), (0, 1));
        assert_eq!(ok::<i32>("-2147483648", false), (i32::MIN, 11));
        assert_eq!(i32::scan("2147483648", false), Err(ScanError::Invalid));
        assert_eq!(ok::<i64>("-9223372036854775808", false).0, i64::MIN);
        assert_eq!(i64::scan("9223372036854775808", false), Err(ScanError::Invalid));
        assert_eq!(i16::scan("32768", false), Err(ScanError::Invalid));
        assert_eq!(i32::scan("-", false), Err(ScanError::Invalid));
        assert_eq!(i32::scan("x", false), Err(ScanError::Invalid));
    }

    #[test]
    fn unsigned_wraps_negatives() {
        assert_eq!(ok::<u32>("-1", false).0, u32::MAX);
        assert_eq!(ok::<u16>("-1", false).0, u16::MAX);
        assert_eq!(ok::<u64>("18446744073709551615", false).0, u64::MAX);
        assert_eq!(u64::scan("18446744073709551616", false), Err(ScanError::Invalid));
        assert_eq!(u32::scan("4294967296", false), Err(ScanError::Invalid));
    }

    #[test]
    fn hex_integers() {
        assert_eq!(ok::<u32>("ff", true), (255, 2));
        assert_eq!(ok::<u32>("0xFF", true), (255, 4));
        assert_eq!(ok::<i32>("-80000000", true).0, i32::MIN);
        assert_eq!(i32::scan("ffffffff", true), Err(ScanError::Invalid));
        assert_eq!(i16::scan("ffff", true), Err(ScanError::Invalid));
        assert_eq!(ok::<i32>("0", true), (0, 1));
        assert_eq!(ok::<i32>("00x1", true), (0, 2));
        assert_eq!(i32::scan("0x", true), Err(ScanError::Invalid));
        assert_eq!(ok::<u64>("ffffffffffffffff", true).0, u64::MAX);
    }

    #[test]
    fn chars_are_range_checked_ints() {
        assert_eq!(ok::<i8>("-128", false).0, -128);
        assert_eq!(i8::scan("128", false), Err(ScanError::CharRange));
        assert_eq!(ok::<u8>("255", false).0, 255);
        assert_eq!(u8::scan("-1", false), Err(ScanError::CharRange));
        assert_eq!(ok::<i8>("7f", true).0, 127);
        assert_eq!(i8::scan("80", true), Err(ScanError::CharRange));
        assert_eq!(i8::scan("z", false), Err(ScanError::Invalid));
    }

    #[test]
    fn floats() {
        assert_eq!(ok::<f32>("1.5e+2", false), (150.0, 6));
        assert_eq!(ok::<f32>(".5", false), (0.5, 2));
        assert_eq!(ok::<f32>("5.", false), (5.0, 2));
        assert_eq!(ok::<f32>("-.5e-1,", false), (-0.05, 6));
        assert_eq!(ok::<f32>("1e3x", false), (1000.0, 3));
        assert_eq!(ok::<f32>("0x10", true), (0.0, 1));
        assert_eq!(ok::<f32>("1e-50", false).0, 0.0);
        assert_eq!(ok::<f32>("3.40282356e38", false).0, f32::MAX);
        assert_eq!(f32::scan("3.4028236e38", false), Err(ScanError::Invalid));
        assert_eq!(f64::scan("1e400", false), Err(ScanError::Invalid));
        for bad in ["1e", "1e+", ".", "-", "--1", "e5", "nan", "inf"] {
            assert_eq!(f64::scan(bad, false), Err(ScanError::Invalid), "{bad}");
        }
        assert!(ok::<f64>("-0", false).0.is_sign_negative());
    }

    #[test]
    fn range_counts() {
        assert_eq!(i32::range_count(0, 1, 3), 4.0);
        assert_eq!(i32::range_count(3, -1, 0), 4.0);
        assert_eq!(u8::range_count(0, 1, 255), 256.0);
        assert_eq!(u32::range_count(u32::MAX - 1, 1, u32::MAX), 2.0);
        assert_eq!(u32::range_count(0, 1, u32::MAX), 0.0);
        assert_eq!(i8::range_count(10, -3, 1), 4.0);
        assert_eq!(f32::range_count(0.0, 0.1, 0.7), 8.0);
        // In float arithmetic 0:0.1:1 is not a whole number of steps; in double it is.
        assert_ne!(f32::range_count(0.0, 0.1, 1.0).fract(), 0.0);
        assert_eq!(f64::range_count(0.0, 0.1, 1.0), 11.0);
        assert!(i32::range_count(0, 0, 3).is_infinite());
    }
}
