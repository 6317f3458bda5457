//! Printing `dump` arguments after a run, byte-for-byte as `oclgrind-kernel` prints them on
//! stdout.
//!
//! Per dumped argument, in declaration order: an empty line, `Argument 'NAME': SIZE bytes`,
//! one `  NAME[i] = v` line per element, and an empty line. Values follow C++ stream output:
//! - integers in decimal; `char`/`uchar` as numbers;
//! - `float`/`double` as `%g` with 6 significant digits (`1e+06`, `0.333333`, `-0`, `inf`,
//!   `-nan`: the sign of a NaN is printed);
//! - with `hex`, `0x` and the value zero-padded on the left to two digits per byte of the type.
//!   Integers are printed as unsigned of their promoted type, so a negative `char` shows 8
//!   digits (`0xffffff80`) and a negative `short` 4 (`0xffff`). Floats are not converted: their
//!   `%g` text is padded (`-1.0f` gives `0x000000-1`).

use std::fmt::Write;

use super::{Dump, ElemType, LaunchFile};

/// The text `oclgrind-kernel` prints on stdout for every `dump` argument of `data`, reading the
/// contents from `buffers` (the buffers after the run). Empty when nothing is dumped.
pub fn format_dumps(data: &LaunchFile, buffers: &[Vec<u8>]) -> String {
    let mut out = String::new();
    for dump in &data.dumps {
        let bytes = buffers.get(dump.buffer).map_or(&[][..], Vec::as_slice);
        format_dump(&mut out, dump, bytes);
    }
    out
}

fn format_dump(out: &mut String, dump: &Dump, bytes: &[u8]) {
    let _ = writeln!(out, "\nArgument '{}': {} bytes", dump.name, bytes.len());
    for (i, elem) in bytes.chunks_exact(dump.elem.size()).enumerate() {
        let value = format_elem(dump.elem, elem, dump.hex);
        let _ = writeln!(out, "  {}[{}] = {}", dump.name, i, value);
    }
    out.push('\n');
}

/// One element (`bytes.len() == elem.size()`, little-endian) as the reference tool prints it.
fn format_elem(elem: ElemType, bytes: &[u8], hex: bool) -> String {
    let text = match elem {
        ElemType::Char => int_text(i8::from_le_bytes(le(bytes)), hex),
        ElemType::UChar => int_text(u8::from_le_bytes(le(bytes)), hex),
        ElemType::Short => int_text(i16::from_le_bytes(le(bytes)), hex),
        ElemType::UShort => int_text(u16::from_le_bytes(le(bytes)), hex),
        ElemType::Int => int_text(i32::from_le_bytes(le(bytes)), hex),
        ElemType::UInt => int_text(u32::from_le_bytes(le(bytes)), hex),
        ElemType::Long => int_text(i64::from_le_bytes(le(bytes)), hex),
        ElemType::ULong => int_text(u64::from_le_bytes(le(bytes)), hex),
        ElemType::Float => {
            let value = f32::from_le_bytes(le(bytes));
            format_g(f64::from(value), value.is_sign_negative())
        }
        ElemType::Double => {
            let value = f64::from_le_bytes(le(bytes));
            format_g(value, value.is_sign_negative())
        }
    };
    if hex { format!("0x{text:0>width$}", width = 2 * elem.size()) } else { text }
}

fn le<const N: usize>(bytes: &[u8]) -> [u8; N] {
    bytes.try_into().expect("element of the dump's type size")
}

/// Decimal, or lowercase hex of the value as an unsigned number of its C-promoted type
/// (`char`, `short` -> 32 and 16 bits as the stream prints them; see the module doc).
fn int_text<T: HexBits + std::fmt::Display>(value: T, hex: bool) -> String {
    if hex { format!("{:x}", value.hex_bits()) } else { value.to_string() }
}

/// The unsigned value a C++ stream prints for an integer in hex mode.
trait HexBits {
    fn hex_bits(self) -> u64;
}

impl HexBits for i8 {
    /// Dumped through `(int)`, so sign-extended to 32 bits.
    fn hex_bits(self) -> u64 {
        u64::from(i32::from(self) as u32)
    }
}

macro_rules! hex_bits_as_unsigned {
    ($($t:ty => $u:ty),*) => {$(
        impl HexBits for $t {
            fn hex_bits(self) -> u64 {
                u64::from(self as $u)
            }
        }
    )*};
}

hex_bits_as_unsigned!(u8 => u8, i16 => u16, u16 => u16, i32 => u32, u32 => u32, i64 => u64, u64 => u64);

/// C's `%g` (precision 6), which is what C++ streams print for floating point by default.
/// `negative` is the sign bit, printed for zero and NaN too.
pub(super) fn format_g(value: f64, negative: bool) -> String {
    const PRECISION: i32 = 6;
    let sign = if negative { "-" } else { "" };
    if value.is_nan() {
        return format!("{sign}nan");
    }
    if value.is_infinite() {
        return format!("{sign}inf");
    }
    if value == 0.0 {
        return format!("{sign}0");
    }
    // The exponent after rounding to PRECISION significant digits decides the style.
    let scientific = format!("{:.*e}", (PRECISION - 1) as usize, value);
    let (mantissa, exponent) = scientific.split_once('e').expect("`{:e}` has an exponent");
    let exponent: i32 = exponent.parse().expect("`{:e}` exponent is an integer");
    if (-4..PRECISION).contains(&exponent) {
        let fixed = format!("{:.*}", (PRECISION - 1 - exponent) as usize, value);
        trim_fraction(&fixed).to_string()
    } else {
        let exp_sign = if exponent < 0 { '-' } else { '+' };
        format!("{}e{exp_sign}{:02}", trim_fraction(mantissa), exponent.abs())
    }
}

/// Drops trailing zeros of a fraction, and the point if nothing is left after it.
fn trim_fraction(text: &str) -> &str {
    if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.') } else { text }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::Launch;

    fn g32(value: f32) -> String {
        format_g(f64::from(value), value.is_sign_negative())
    }

    fn g64(value: f64) -> String {
        format_g(value, value.is_sign_negative())
    }

    #[test]
    fn g_format_matches_observed_floats() {
        // Inputs and outputs observed from oclgrind-kernel 21.10 dumping a float buffer.
        let cases: [(f32, &str); 19] = [
            (1e-05, "1e-05"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (0.1, "0.1"),
            (1.0 / 3.0, "0.333333"),
            (-0.0, "-0"),
            (1e6, "1e+06"),
            (1e38, "1e+38"),
            (0.0001, "0.0001"),
            (0.00001234, "1.234e-05"),
            (100000.0, "100000"),
            (999999.5, "1e+06"),
            (9999995.0, "1e+07"),
            (0.000_1 - 1e-12, "0.0001"),
            (1.5e-7, "1.5e-07"),
            (-2.5, "-2.5"),
            (1e-40, "9.99995e-41"),
            (f32::MAX, "3.40282e+38"),
            (f32::MIN_POSITIVE, "1.17549e-38"),
        ];
        for (value, expected) in cases {
            assert_eq!(g32(value), expected, "{value:e}");
        }
        assert_eq!(g32(f32::NAN), "nan");
        assert_eq!(g32(-f32::NAN), "-nan");
        assert_eq!(g32(f32::INFINITY), "inf");
        assert_eq!(g32(f32::NEG_INFINITY), "-inf");
    }

    #[test]
    fn g_format_matches_observed_doubles() {
        let cases: [(f64, &str); 7] = [
            (1e300, "1e+300"),
            (4.9e-324, "4.94066e-324"),
            (f64::MAX, "1.79769e+308"),
            (123456789012.0, "1.23457e+11"),
            (0.000123456789, "0.000123457"),
            (1.0 / 3.0, "0.333333"),
            (1.0, "1"),
        ];
        for (value, expected) in cases {
            assert_eq!(g64(value), expected, "{value:e}");
        }
        assert_eq!(g64(-f64::NAN), "-nan");
    }

    #[test]
    fn g_format_rounds_ties_to_even_like_printf() {
        assert_eq!(g64(1234565.0), "1.23456e+06");
        assert_eq!(g64(1234575.0), "1.23458e+06");
        assert_eq!(g64(123456.5), "123456");
        assert_eq!(g64(12345.25), "12345.2");
        assert_eq!(g64(0.5), "0.5");
    }

    fn one_dump(name: &str, elem: ElemType, hex: bool) -> LaunchFile {
        let launch = Launch {
            kernel: "k".into(),
            work_dim: 3,
            global_offset: [0; 3],
            global_size: [1; 3],
            local_size: [1; 3],
            args: vec![],
        };
        let dump = Dump { arg_index: 0, name: name.into(), buffer: 0, elem, hex };
        LaunchFile { launch, buffers: vec![], dumps: vec![dump], modes: vec![], noinit: vec![] }
    }

    fn bytes_of<T: super::super::scalar::Elem>(values: &[T]) -> Vec<u8> {
        let mut out = Vec::new();
        values.iter().for_each(|v| v.put(&mut out));
        out
    }

    #[test]
    fn hex_char_dump_as_observed() {
        // oclgrind-kernel 21.10, `<size=4 hex dump>` on a char buffer holding 0x01 -1 7f -80.
        let expected = "\nArgument 'in': 4 bytes\n  in[0] = 0x01\n  in[1] = 0xffffffff\n  \
                        in[2] = 0x7f\n  in[3] = 0xffffff80\n\n";
        let data = one_dump("in", ElemType::Char, true);
        let buffers = [bytes_of::<i8>(&[1, -1, 127, -128])];
        assert_eq!(format_dumps(&data, &buffers), expected);
    }

    #[test]
    fn decimal_char_and_uchar_dumps_as_observed() {
        let data = one_dump("out", ElemType::Char, false);
        let buffers = [bytes_of::<i8>(&[1, -1, 127, -128])];
        let expected = "\nArgument 'out': 4 bytes\n  out[0] = 1\n  out[1] = -1\n  out[2] = 127\n  \
                        out[3] = -128\n\n";
        assert_eq!(format_dumps(&data, &buffers), expected);
        let data = one_dump("in", ElemType::UChar, true);
        let buffers = [vec![1, 255, 0, 128]];
        let expected = "\nArgument 'in': 4 bytes\n  in[0] = 0x01\n  in[1] = 0xff\n  in[2] = 0x00\n  \
                        in[3] = 0x80\n\n";
        assert_eq!(format_dumps(&data, &buffers), expected);
    }

    #[test]
    fn hex_integer_dumps_as_observed() {
        let short = one_dump("in", ElemType::Short, true);
        let expected = "\nArgument 'in': 8 bytes\n  in[0] = 0x0001\n  in[1] = 0x7fff\n  \
                        in[2] = 0xffff\n  in[3] = 0x8000\n\n";
        let buffers = [bytes_of::<i16>(&[1, 0x7fff, -1, i16::MIN])];
        assert_eq!(format_dumps(&short, &buffers), expected);

        let int = one_dump("in", ElemType::Int, true);
        let expected = "\nArgument 'in': 16 bytes\n  in[0] = 0x00000001\n  in[1] = 0x7fffffff\n  \
                        in[2] = 0xffffffff\n  in[3] = 0x80000000\n\n";
        let buffers = [bytes_of::<i32>(&[1, i32::MAX, -1, i32::MIN])];
        assert_eq!(format_dumps(&int, &buffers), expected);

        let long = one_dump("in", ElemType::Long, true);
        let expected = "\nArgument 'in': 16 bytes\n  in[0] = 0xffffffffffffffff\n  \
                        in[1] = 0x8000000000000000\n\n";
        let buffers = [bytes_of::<i64>(&[-1, i64::MIN])];
        assert_eq!(format_dumps(&long, &buffers), expected);
    }

    #[test]
    fn decimal_integer_dumps_as_observed() {
        let data = one_dump("out", ElemType::ULong, false);
        let expected = "\nArgument 'out': 16 bytes\n  out[0] = 18446744073709551615\n  \
                        out[1] = 9223372036854775808\n\n";
        let buffers = [bytes_of::<u64>(&[u64::MAX, 1 << 63])];
        assert_eq!(format_dumps(&data, &buffers), expected);
        let data = one_dump("out", ElemType::Long, false);
        let expected = "\nArgument 'out': 8 bytes\n  out[0] = -9223372036854775808\n\n";
        assert_eq!(format_dumps(&data, &[bytes_of::<i64>(&[i64::MIN])]), expected);
    }

    #[test]
    fn hex_float_dumps_pad_the_decimal_text() {
        // oclgrind-kernel 21.10, `<size=16 dump hex>` (float) and `<size=32 dump hex>` (double)
        // holding -1 1.5 123456789 0.000001.
        let float = one_dump("in", ElemType::Float, true);
        let expected = "\nArgument 'in': 16 bytes\n  in[0] = 0x000000-1\n  in[1] = 0x000001.5\n  \
                        in[2] = 0x1.23457e+08\n  in[3] = 0x0001e-06\n\n";
        let buffers = [bytes_of::<f32>(&[-1.0, 1.5, 123456789.0, 0.000001])];
        assert_eq!(format_dumps(&float, &buffers), expected);

        let double = one_dump("in", ElemType::Double, true);
        let expected = "\nArgument 'in': 32 bytes\n  in[0] = 0x00000000000000-1\n  \
                        in[1] = 0x00000000000001.5\n  in[2] = 0x000001.23457e+08\n  \
                        in[3] = 0x000000000001e-06\n\n";
        let buffers = [bytes_of::<f64>(&[-1.0, 1.5, 123456789.0, 0.000001])];
        assert_eq!(format_dumps(&double, &buffers), expected);
    }

    #[test]
    fn consecutive_dumps_are_separated_by_two_newlines() {
        // oclgrind-kernel 21.10 on a kernel writing NaN, -NaN, inf, -inf, -0 into `out`
        // (float) and NaN into `outd` (double).
        let mut data = one_dump("out", ElemType::Float, false);
        let second = Dump { arg_index: 1, name: "outd".into(), buffer: 1, elem: ElemType::Double, hex: false };
        data.dumps.push(second);
        let buffers = [
            bytes_of::<f32>(&[f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0]),
            bytes_of::<f64>(&[f64::NAN]),
        ];
        let expected = "\nArgument 'out': 20 bytes\n  out[0] = nan\n  out[1] = -nan\n  out[2] = inf\n  \
                        out[3] = -inf\n  out[4] = -0\n\n\nArgument 'outd': 8 bytes\n  outd[0] = nan\n\n";
        assert_eq!(format_dumps(&data, &buffers), expected);
    }

    #[test]
    fn no_dumps_print_nothing() {
        let mut data = one_dump("x", ElemType::Int, false);
        data.dumps.clear();
        assert_eq!(format_dumps(&data, &[]), "");
    }
}
