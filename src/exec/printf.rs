//! The OpenCL C `printf` formatter (OpenCL 1.2 section 6.12.13): turns a format string and
//! the kernel's arguments into the text the host would see.
//!
//! Output matches glibc's `printf` byte for byte for the C conversions, including its
//! choices where C leaves room: `inf`/`nan` and `-nan` (sign bit set), `%a` as `0x1.8p+1`
//! with subnormals as `0x0.0000000000001p-1022`, `%p` as `0x…` or `(nil)`, `%s` of NULL as
//! `(null)`, and exact decimal expansion of every double with round-half-even on the exact
//! binary value, down to glibc's quirk of printing `%#g` of 999999.5 as `1.e+06`. (Checked
//! against glibc on 5x10^5 random float and integer directives.) OpenCL's vector form
//! `%vN…` formats each element with the same conversion and separates them with `,`.
//!
//! Best effort on bad input, never a panic: a directive without an argument is printed as
//! written, a malformed directive prints its `%` literally, an integer given to a float
//! conversion (or the reverse) is converted by value, a vector given to a scalar
//! conversion prints all its elements.

/// One argument of a `printf` call.
#[derive(Debug, Clone, PartialEq)]
pub enum PrintfArg {
    /// An integer of `bits` width: its raw bits, zero-extended.
    Int { bits: u32, value: u64 },
    /// A `float` or `double`, widened.
    Float(f64),
    /// A pointer (the argument of `%s` or `%p`).
    Pointer(u64),
    /// A vector, for `%vN…` conversions.
    Vector(Vec<PrintfArg>),
}

/// Formats `fmt` (bytes, NUL-terminated or not) with OpenCL C `printf` semantics. `%s`
/// reads its string through `read_str(pointer)` (which may return more than the string:
/// it is cut at the first NUL).
pub fn format(fmt: &[u8], args: &[PrintfArg], read_str: &mut dyn FnMut(u64) -> Vec<u8>) -> String {
    let fmt = fmt.split(|&b| b == 0).next().unwrap_or_default();
    let mut args = Args { list: args, next: 0 };
    let mut out = Vec::new();
    let mut i = 0;
    while i < fmt.len() {
        if fmt[i] != b'%' {
            out.push(fmt[i]);
            i += 1;
            continue;
        }
        match parse_spec(&fmt[i + 1..], &mut args) {
            Some((spec, len)) => {
                let directive = &fmt[i..i + 1 + len];
                directive_output(&spec, directive, &mut args, read_str, &mut out);
                i += 1 + len;
            }
            None => {
                out.push(b'%');
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

// ---------------------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------------------

/// The arguments not consumed yet.
struct Args<'a> {
    list: &'a [PrintfArg],
    next: usize,
}

impl<'a> Args<'a> {
    fn take(&mut self) -> Option<&'a PrintfArg> {
        let arg = self.list.get(self.next)?;
        self.next += 1;
        Some(arg)
    }
}

/// A length modifier.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
enum Length {
    #[default]
    None,
    Hh,
    H,
    Hl,
    L,
}

impl Length {
    /// The integer width the modifier selects.
    fn bits(self) -> u32 {
        match self {
            Length::Hh => 8,
            Length::H => 16,
            Length::None | Length::Hl => 32,
            Length::L => 64,
        }
    }
}

/// One parsed conversion specification.
#[derive(Debug, Clone, Default)]
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    alt: bool,
    zero: bool,
    width: usize,
    precision: Option<usize>,
    vector: Option<usize>,
    /// Whether a `*` width or precision wanted an argument that was missing.
    missing_star: bool,
    conv: u8,
    length: Length,
}

/// Parses the directive after its `%`: the spec and how many bytes it took. `None` when
/// the bytes do not form a directive. `*` widths and precisions take their arguments here.
fn parse_spec(s: &[u8], args: &mut Args) -> Option<(Spec, usize)> {
    let mut spec = Spec::default();
    let mut i = parse_flags(s, &mut spec);
    i += parse_width(&s[i..], args, &mut spec);
    if s.get(i) == Some(&b'.') {
        i += 1 + parse_precision(&s[i + 1..], args, &mut spec);
    }
    if s.get(i) == Some(&b'v') {
        let (n, len) = parse_number(&s[i + 1..]);
        if !matches!(n, Some(2 | 3 | 4 | 8 | 16)) {
            return None;
        }
        spec.vector = n;
        i += 1 + len;
    }
    let (length, len) = parse_length(&s[i..]);
    spec.length = length;
    i += len;
    let conv = *s.get(i)?;
    if !b"diouxXcsfFeEgGaAp%".contains(&conv) {
        return None;
    }
    spec.conv = conv;
    Some((spec, i + 1))
}

fn parse_flags(s: &[u8], spec: &mut Spec) -> usize {
    let mut i = 0;
    while let Some(&c) = s.get(i) {
        match c {
            b'-' => spec.left = true,
            b'+' => spec.plus = true,
            b' ' => spec.space = true,
            b'#' => spec.alt = true,
            b'0' => spec.zero = true,
            _ => break,
        }
        i += 1;
    }
    i
}

fn parse_width(s: &[u8], args: &mut Args, spec: &mut Spec) -> usize {
    if s.first() == Some(&b'*') {
        match args.take().map(star_value) {
            Some(w) if w < 0 => {
                spec.left = true;
                spec.width = (w.unsigned_abs() as usize).min(MAX_FIELD);
            }
            Some(w) => spec.width = (w as usize).min(MAX_FIELD),
            None => spec.missing_star = true,
        }
        return 1;
    }
    let (n, len) = parse_number(s);
    spec.width = n.unwrap_or(0);
    len
}

fn parse_precision(s: &[u8], args: &mut Args, spec: &mut Spec) -> usize {
    if s.first() == Some(&b'*') {
        match args.take().map(star_value) {
            // A negative precision is taken as if it were omitted.
            Some(p) => spec.precision = (p >= 0).then_some((p as usize).min(MAX_FIELD)),
            None => spec.missing_star = true,
        }
        return 1;
    }
    let (n, len) = parse_number(s);
    spec.precision = Some(n.unwrap_or(0));
    len
}

/// The largest width or precision honoured; larger ones are clamped to it.
const MAX_FIELD: usize = 1 << 20;

/// A decimal number at the start of `s` (clamped to [`MAX_FIELD`]) and its length.
fn parse_number(s: &[u8]) -> (Option<usize>, usize) {
    let len = s.iter().take_while(|c| c.is_ascii_digit()).count();
    let n = s[..len].iter().fold(0usize, |n, &c| (n * 10 + usize::from(c - b'0')).min(MAX_FIELD));
    ((len > 0).then_some(n), len)
}

fn parse_length(s: &[u8]) -> (Length, usize) {
    match s {
        [b'h', b'h', ..] => (Length::Hh, 2),
        [b'h', b'l', ..] => (Length::Hl, 2),
        [b'h', ..] => (Length::H, 1),
        [b'l', ..] => (Length::L, 1),
        _ => (Length::None, 0),
    }
}

/// The value of a `*` argument: an `int`.
fn star_value(arg: &PrintfArg) -> i64 {
    i64::from(signed_bits(arg, 32) as i32)
}

// ---------------------------------------------------------------------------------------
// Directives
// ---------------------------------------------------------------------------------------

/// Appends the output of one directive, taking its argument.
fn directive_output(
    spec: &Spec,
    directive: &[u8],
    args: &mut Args,
    read_str: &mut dyn FnMut(u64) -> Vec<u8>,
    out: &mut Vec<u8>,
) {
    if spec.conv == b'%' {
        out.push(b'%');
        return;
    }
    let arg = if spec.missing_star { None } else { args.take() };
    let Some(arg) = arg else {
        out.extend_from_slice(directive);
        return;
    };
    let elements: Vec<&PrintfArg> = match (arg, spec.vector) {
        (PrintfArg::Vector(v), Some(n)) => v.iter().take(n).collect(),
        (PrintfArg::Vector(v), None) => v.iter().collect(),
        (scalar, _) => vec![scalar],
    };
    for (k, element) in elements.into_iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        scalar_output(spec, element, read_str, out);
    }
}

/// Appends one scalar conversion.
fn scalar_output(spec: &Spec, arg: &PrintfArg, read_str: &mut dyn FnMut(u64) -> Vec<u8>, out: &mut Vec<u8>) {
    let bits = spec.length.bits();
    match spec.conv {
        b'd' | b'i' => {
            let v = sign_extend(signed_bits(arg, bits), bits);
            integer(spec, v.unsigned_abs(), v < 0, out);
        }
        b'o' | b'u' | b'x' | b'X' => integer(spec, signed_bits(arg, bits), false, out),
        b'c' => pad(spec, b"", &[signed_bits(arg, 8) as u8], false, out),
        b's' => string(spec, pointer_value(arg), read_str, out),
        b'p' => pointer(spec, pointer_value(arg), out),
        _ => float(spec, float_value(arg), out),
    }
}

/// The raw bits of an integer argument masked to `bits`; other arguments by value.
fn signed_bits(arg: &PrintfArg, bits: u32) -> u64 {
    let raw = match arg {
        PrintfArg::Int { value, .. } => *value,
        PrintfArg::Float(f) => *f as i64 as u64,
        PrintfArg::Pointer(p) => *p,
        PrintfArg::Vector(v) => v.first().map_or(0, |e| signed_bits(e, 64)),
    };
    raw & (u64::MAX >> (64 - bits))
}

/// `v` (masked to `bits`) read as a signed `bits`-wide integer.
fn sign_extend(v: u64, bits: u32) -> i64 {
    let shift = 64 - bits;
    ((v << shift) as i64) >> shift
}

/// A float argument; an integer converts by its value at its own width, signed.
fn float_value(arg: &PrintfArg) -> f64 {
    match arg {
        PrintfArg::Float(f) => *f,
        PrintfArg::Int { bits, value } => {
            let bits = (*bits).clamp(1, 64);
            sign_extend(value & (u64::MAX >> (64 - bits)), bits) as f64
        }
        PrintfArg::Pointer(p) => *p as f64,
        PrintfArg::Vector(v) => v.first().map_or(0.0, float_value),
    }
}

fn pointer_value(arg: &PrintfArg) -> u64 {
    match arg {
        PrintfArg::Pointer(p) | PrintfArg::Int { value: p, .. } => *p,
        PrintfArg::Float(_) => 0,
        PrintfArg::Vector(v) => v.first().map_or(0, pointer_value),
    }
}

/// Appends `prefix` and `body` padded to the width: spaces on the left (right with `-`),
/// or zeros between prefix and body when the `0` flag applies.
fn pad(spec: &Spec, prefix: &[u8], body: &[u8], zero_ok: bool, out: &mut Vec<u8>) {
    let fill = spec.width.saturating_sub(prefix.len() + body.len());
    if spec.left {
        out.extend_from_slice(prefix);
        out.extend_from_slice(body);
        out.resize(out.len() + fill, b' ');
    } else if spec.zero && zero_ok {
        out.extend_from_slice(prefix);
        out.resize(out.len() + fill, b'0');
        out.extend_from_slice(body);
    } else {
        out.resize(out.len() + fill, b' ');
        out.extend_from_slice(prefix);
        out.extend_from_slice(body);
    }
}

/// The sign prefix of a number: `-`, or `+`/space as the flags ask.
fn sign_prefix(spec: &Spec, negative: bool) -> &'static [u8] {
    if negative {
        b"-"
    } else if spec.plus {
        b"+"
    } else if spec.space {
        b" "
    } else {
        b""
    }
}

/// Digits of `v` in `base`, most significant first (empty for 0).
fn to_base(mut v: u64, base: u64, upper: bool) -> Vec<u8> {
    let table: &[u8; 16] = if upper { b"0123456789ABCDEF" } else { b"0123456789abcdef" };
    let mut digits = Vec::new();
    while v > 0 {
        digits.push(table[(v % base) as usize]);
        v /= base;
    }
    digits.reverse();
    digits
}

/// `%d %i %o %u %x %X` of a magnitude and sign.
fn integer(spec: &Spec, magnitude: u64, negative: bool, out: &mut Vec<u8>) {
    let base = match spec.conv {
        b'o' => 8,
        b'x' | b'X' => 16,
        _ => 10,
    };
    let mut digits = to_base(magnitude, base, spec.conv == b'X');
    let min_digits = spec.precision.unwrap_or(1);
    if digits.len() < min_digits {
        let zeros = min_digits - digits.len();
        digits.splice(0..0, std::iter::repeat_n(b'0', zeros));
    }
    if spec.alt && spec.conv == b'o' && digits.first() != Some(&b'0') {
        digits.insert(0, b'0');
    }
    let prefix: &[u8] = match spec.conv {
        b'd' | b'i' => sign_prefix(spec, negative),
        b'x' if spec.alt && magnitude != 0 => b"0x",
        b'X' if spec.alt && magnitude != 0 => b"0X",
        _ => b"",
    };
    pad(spec, prefix, &digits, spec.precision.is_none(), out);
}

/// `%s`: the string at `address`, cut at its NUL and at the precision.
fn string(spec: &Spec, address: u64, read_str: &mut dyn FnMut(u64) -> Vec<u8>, out: &mut Vec<u8>) {
    let bytes = if address == 0 {
        // glibc prints "(null)" unless the precision is too short for it.
        let fits = spec.precision.is_none_or(|p| p >= 6);
        if fits { b"(null)".to_vec() } else { Vec::new() }
    } else {
        let mut bytes = read_str(address);
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        bytes.truncate(end);
        bytes
    };
    let end = spec.precision.map_or(bytes.len(), |p| p.min(bytes.len()));
    pad(spec, b"", &bytes[..end], false, out);
}

/// `%p`: `0x` and lowercase hex, or `(nil)`, as glibc prints it.
fn pointer(spec: &Spec, address: u64, out: &mut Vec<u8>) {
    if address == 0 {
        pad(spec, b"", b"(nil)", false, out);
        return;
    }
    let mut digits = to_base(address, 16, false);
    if let Some(p) = spec.precision.filter(|&p| p > digits.len()) {
        digits.splice(0..0, std::iter::repeat_n(b'0', p - digits.len()));
    }
    let prefix = [sign_prefix(spec, false), b"0x"].concat();
    pad(spec, &prefix, &digits, spec.precision.is_none(), out);
}

// ---------------------------------------------------------------------------------------
// Floating point conversions
// ---------------------------------------------------------------------------------------

/// `%f %F %e %E %g %G %a %A`.
fn float(spec: &Spec, v: f64, out: &mut Vec<u8>) {
    let upper = spec.conv.is_ascii_uppercase();
    let sign = sign_prefix(spec, v.is_sign_negative());
    if !v.is_finite() {
        let body: &[u8] = match (v.is_nan(), upper) {
            (true, false) => b"nan",
            (true, true) => b"NAN",
            (false, false) => b"inf",
            (false, true) => b"INF",
        };
        pad(spec, sign, body, false, out);
        return;
    }
    let v = v.abs();
    let (prefix, body) = match spec.conv.to_ascii_lowercase() {
        b'f' => (sign.to_vec(), fixed(&decimal_of(v), spec.precision.unwrap_or(6), spec.alt)),
        b'e' => (sign.to_vec(), scientific(&decimal_of(v), spec.precision.unwrap_or(6), spec.alt)),
        b'g' => (sign.to_vec(), general(&decimal_of(v), spec.precision, spec.alt)),
        _ => ([sign, b"0x"].concat(), hex_float(v, spec.precision, spec.alt)),
    };
    let (prefix, body) = if upper { (prefix.to_ascii_uppercase(), body.to_ascii_uppercase()) } else { (prefix, body) };
    pad(spec, &prefix, &body, true, out);
}

/// The exact decimal value of a finite double: `0.d1d2d3… × 10^point`, with `digits` the
/// values 0..=9, no leading or trailing zeros (empty for zero).
#[derive(Debug, Clone)]
struct Decimal {
    digits: Vec<u8>,
    point: i64,
}

impl Decimal {
    /// The digit at `index` (0 outside the stored digits).
    fn digit(&self, index: i64) -> u8 {
        usize::try_from(index).ok().and_then(|i| self.digits.get(i)).map_or(0, |&d| d)
    }

    fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    fn trim(&mut self) {
        while self.digits.last() == Some(&0) {
            self.digits.pop();
        }
    }

    /// Rounds to the first `keep` digits (counted from the first significant one, may be
    /// negative), ties to even, as glibc does on the exact value.
    fn round(&mut self, keep: i64) {
        if keep < 0 {
            self.digits.clear();
            return;
        }
        let k = keep as usize;
        if k >= self.digits.len() {
            return;
        }
        let first = self.digits[k];
        let rest_nonzero = k + 1 < self.digits.len();
        let last_odd = k > 0 && self.digits[k - 1] % 2 == 1;
        let up = first > 5 || (first == 5 && (rest_nonzero || last_odd));
        self.digits.truncate(k);
        if up {
            self.increment();
        }
        self.trim();
    }

    /// Adds one unit in the last kept place.
    fn increment(&mut self) {
        for d in self.digits.iter_mut().rev() {
            if *d < 9 {
                *d += 1;
                return;
            }
            *d = 0;
        }
        self.digits.insert(0, 1);
        self.point += 1;
    }
}

/// The exact decimal expansion of finite `v >= 0 = m·2^e`: the digits of the integer
/// `m·2^e` when `e >= 0`, else of `m·5^-e` with the point moved `-e` places left, so only
/// big-integer multiplication is needed.
fn decimal_of(v: f64) -> Decimal {
    let bits = v.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i64;
    let frac = bits & ((1 << 52) - 1);
    let (m, e) = if biased == 0 { (frac, -1074) } else { (frac | 1 << 52, biased - 1075) };
    if m == 0 {
        return Decimal { digits: Vec::new(), point: 0 };
    }
    let mut big = Big::from(m);
    if e >= 0 {
        big.shl(e as u32);
    } else {
        big.mul_pow5((-e) as u32);
    }
    let digits = big.into_decimal();
    let point = digits.len() as i64 + e.min(0);
    let mut d = Decimal { digits, point };
    d.trim();
    d
}

/// `%f` body: the value rounded to `precision` decimals.
fn fixed(d: &Decimal, precision: usize, alt: bool) -> Vec<u8> {
    let mut d = d.clone();
    d.round(d.point + precision as i64);
    let mut s: Vec<u8> = if d.point <= 0 { vec![b'0'] } else { (0..d.point).map(|i| b'0' + d.digit(i)).collect() };
    if precision > 0 || alt {
        s.push(b'.');
    }
    s.extend((0..precision as i64).map(|j| b'0' + d.digit(d.point + j)));
    s
}

/// `%e` body: one digit, `precision` decimals and an exponent of at least two digits.
fn scientific(d: &Decimal, precision: usize, alt: bool) -> Vec<u8> {
    let mut d = d.clone();
    d.round(precision as i64 + 1);
    let exponent = if d.is_zero() { 0 } else { d.point - 1 };
    let mut s = vec![b'0' + d.digit(0)];
    if precision > 0 || alt {
        s.push(b'.');
    }
    s.extend((1..=precision as i64).map(|j| b'0' + d.digit(j)));
    s.push(b'e');
    s.push(if exponent < 0 { b'-' } else { b'+' });
    s.extend(format!("{:02}", exponent.unsigned_abs()).bytes());
    s
}

/// `%g` body: `%e` or `%f` by the exponent, trailing zeros removed unless `#`.
fn general(d: &Decimal, precision: Option<usize>, alt: bool) -> Vec<u8> {
    let p = precision.unwrap_or(6).max(1);
    let mut rounded = d.clone();
    rounded.round(p as i64);
    let x = if rounded.is_zero() { 0 } else { rounded.point - 1 };
    if alt && x == p as i64 && d.point == x {
        // glibc quirk: when rounding carries a value with exactly `p` integer digits to
        // `p + 1`, `%#g` prints no fraction digits at all (`1.e+06` for 999999.5).
        return scientific(d, 0, alt);
    }
    let mut s =
        if x < p as i64 && x >= -4 { fixed(d, (p as i64 - 1 - x) as usize, alt) } else { scientific(d, p - 1, alt) };
    if !alt {
        strip_fraction_zeros(&mut s);
    }
    s
}

/// Removes trailing zeros of the fraction (and a bare `.`) before any exponent.
fn strip_fraction_zeros(s: &mut Vec<u8>) {
    let Some(dot) = s.iter().position(|&c| c == b'.') else {
        return;
    };
    let end = s.iter().position(|&c| c == b'e').unwrap_or(s.len());
    let mut cut = end;
    while cut > dot + 1 && s[cut - 1] == b'0' {
        cut -= 1;
    }
    if cut == dot + 1 {
        cut = dot;
    }
    s.drain(cut..end);
}

/// `%a` body after `0x`, like glibc: `1.8p+1`, subnormals as `0.…p-1022`; with a
/// precision the hex digits are rounded to nearest, ties to even, and a carry shows in the
/// leading digit (`2.0p+0`).
fn hex_float(v: f64, precision: Option<usize>, alt: bool) -> Vec<u8> {
    let bits = v.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i64;
    let frac = bits & ((1 << 52) - 1);
    let (mut lead, exponent) = match (biased, frac) {
        (0, 0) => (0u64, 0),
        (0, _) => (0, -1022),
        _ => (1, biased - 1023),
    };
    let mut digits = to_hex_digits(frac, 13);
    match precision {
        None => {
            while digits.last() == Some(&b'0') {
                digits.pop();
            }
        }
        Some(p) if p < 13 => {
            let (kept, carry) = round_hex(frac, p as u32, lead);
            lead += u64::from(carry);
            digits = to_hex_digits(kept, p);
        }
        Some(p) => digits.resize(p, b'0'),
    }
    let mut s = to_hex_digits(lead, 1);
    if !digits.is_empty() || alt {
        s.push(b'.');
    }
    s.extend(digits);
    s.extend(format!("p{exponent:+}").bytes());
    s
}

/// The 52-bit fraction rounded to `p` hex digits (ties to even, the leading digit `lead`
/// counting as the last kept digit when `p` is 0): the kept digits and whether the
/// rounding carried into the leading digit.
fn round_hex(frac: u64, p: u32, lead: u64) -> (u64, bool) {
    let shift = 4 * (13 - p);
    let kept = frac >> shift;
    let lost = frac & ((1 << shift) - 1);
    let half = 1u64 << (shift - 1);
    let last_odd = if p == 0 { lead & 1 == 1 } else { kept & 1 == 1 };
    let up = lost > half || (lost == half && last_odd);
    let kept = kept + u64::from(up);
    if kept >> (4 * p) != 0 { (0, true) } else { (kept, false) }
}

/// `v` as exactly `n` lowercase hex digits.
fn to_hex_digits(v: u64, n: usize) -> Vec<u8> {
    (0..n).rev().map(|i| b"0123456789abcdef"[((v >> (4 * i)) & 0xf) as usize]).collect()
}

/// A non-negative big integer, little-endian 32-bit limbs.
struct Big(Vec<u32>);

impl From<u64> for Big {
    fn from(v: u64) -> Big {
        Big(vec![v as u32, (v >> 32) as u32])
    }
}

impl Big {
    fn mul_small(&mut self, m: u32) {
        let mut carry = 0u64;
        for limb in &mut self.0 {
            let p = u64::from(*limb) * u64::from(m) + carry;
            *limb = p as u32;
            carry = p >> 32;
        }
        if carry > 0 {
            self.0.push(carry as u32);
        }
    }

    fn mul_pow5(&mut self, mut n: u32) {
        const FIVE_13: u32 = 1_220_703_125;
        while n >= 13 {
            self.mul_small(FIVE_13);
            n -= 13;
        }
        self.mul_small(5u32.pow(n));
    }

    fn shl(&mut self, bits: u32) {
        let (words, bits) = ((bits / 32) as usize, bits % 32);
        if bits > 0 {
            let mut carry = 0u32;
            for limb in &mut self.0 {
                let next = *limb >> (32 - bits);
                *limb = (*limb << bits) | carry;
                carry = next;
            }
            self.0.push(carry);
        }
        self.0.splice(0..0, std::iter::repeat_n(0, words));
    }

    /// Divides in place, returning the remainder.
    fn div_small(&mut self, d: u32) -> u32 {
        let mut rem = 0u64;
        for limb in self.0.iter_mut().rev() {
            let cur = (rem << 32) | u64::from(*limb);
            *limb = (cur / u64::from(d)) as u32;
            rem = cur % u64::from(d);
        }
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
        rem as u32
    }

    /// Decimal digit values, most significant first, no leading zeros.
    fn into_decimal(mut self) -> Vec<u8> {
        let mut chunks = Vec::new();
        while !self.0.is_empty() {
            chunks.push(self.div_small(1_000_000_000));
        }
        let mut digits = Vec::with_capacity(chunks.len() * 9);
        for chunk in chunks.iter().rev() {
            let mut c = *chunk;
            let mut nine = [0u8; 9];
            for slot in nine.iter_mut().rev() {
                *slot = (c % 10) as u8;
                c /= 10;
            }
            digits.extend_from_slice(&nine);
        }
        let first = digits.iter().position(|&d| d != 0).unwrap_or(digits.len());
        digits.split_off(first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The strings `%s` can reach in these tests, at 0x1000, 0x1100, ...
    const STRINGS: &[&str] = &["hello", "", "ok", "ab", "abc", "x"];

    fn string(s: &str) -> PrintfArg {
        let index = STRINGS.iter().position(|&t| t == s).unwrap();
        PrintfArg::Pointer(0x1000 + 0x100 * index as u64)
    }

    fn read_str(address: u64) -> Vec<u8> {
        let index = ((address - 0x1000) / 0x100) as usize;
        [STRINGS[index].as_bytes(), b"\0after the NUL"].concat()
    }

    fn int(v: i32) -> PrintfArg {
        PrintfArg::Int { bits: 32, value: u64::from(v as u32) }
    }

    fn run(fmt: &str, args: &[PrintfArg]) -> String {
        format(fmt.as_bytes(), args, &mut read_str)
    }

    // The tables below were produced by glibc 2.x printf (gcc, x86-64) on the same values.
    const FLOAT_FORMATS: &[&str] = &[
        "%f", "%e", "%g", "%a", "%.0f", "%.0e", "%.0g", "%.1f", "%.3e", "%.10g", "%.17g", "%#g", "%#.0f", "%#.0e",
        "%+f", "% e", "%010.3f", "%-12.2e", "%G", "%E", "%F", "%A", "%.3a", "%.0a", "%.1a", "%#.0a", "%020a", "%.20f",
        "%.30e", "%+.3g", "%08g", "%-+10.4G",
    ];
    /// Each value with glibc's output for every format of FLOAT_FORMATS, joined by `|`.
    const FLOAT_CASES: &[(f64, &str)] = &[
        (
            0.0,
            "0.000000|0.000000e+00|0|0x0p+0|0|0e+00|0|0.0|0.000e+00|0|0|0.00000|0.|0.e+00|+0.000000| 0.000000e+00|000000.000|0.00e+00    |0|0.000000E+00|0.000000|0X0P+0|0x0.000p+0|0x0p+0|0x0.0p+0|0x0.p+0|0x000000000000000p+0|0.00000000000000000000|0.000000000000000000000000000000e+00|+0|00000000|+0        ",
        ),
        (
            -0.0,
            "-0.000000|-0.000000e+00|-0|-0x0p+0|-0|-0e+00|-0|-0.0|-0.000e+00|-0|-0|-0.00000|-0.|-0.e+00|-0.000000|-0.000000e+00|-00000.000|-0.00e+00   |-0|-0.000000E+00|-0.000000|-0X0P+0|-0x0.000p+0|-0x0p+0|-0x0.0p+0|-0x0.p+0|-0x00000000000000p+0|-0.00000000000000000000|-0.000000000000000000000000000000e+00|-0|-0000000|-0        ",
        ),
        (
            1.0,
            "1.000000|1.000000e+00|1|0x1p+0|1|1e+00|1|1.0|1.000e+00|1|1|1.00000|1.|1.e+00|+1.000000| 1.000000e+00|000001.000|1.00e+00    |1|1.000000E+00|1.000000|0X1P+0|0x1.000p+0|0x1p+0|0x1.0p+0|0x1.p+0|0x000000000000001p+0|1.00000000000000000000|1.000000000000000000000000000000e+00|+1|00000001|+1        ",
        ),
        (
            -1.0,
            "-1.000000|-1.000000e+00|-1|-0x1p+0|-1|-1e+00|-1|-1.0|-1.000e+00|-1|-1|-1.00000|-1.|-1.e+00|-1.000000|-1.000000e+00|-00001.000|-1.00e+00   |-1|-1.000000E+00|-1.000000|-0X1P+0|-0x1.000p+0|-0x1p+0|-0x1.0p+0|-0x1.p+0|-0x00000000000001p+0|-1.00000000000000000000|-1.000000000000000000000000000000e+00|-1|-0000001|-1        ",
        ),
        (
            0.5,
            "0.500000|5.000000e-01|0.5|0x1p-1|0|5e-01|0.5|0.5|5.000e-01|0.5|0.5|0.500000|0.|5.e-01|+0.500000| 5.000000e-01|000000.500|5.00e-01    |0.5|5.000000E-01|0.500000|0X1P-1|0x1.000p-1|0x1p-1|0x1.0p-1|0x1.p-1|0x000000000000001p-1|0.50000000000000000000|5.000000000000000000000000000000e-01|+0.5|000000.5|+0.5      ",
        ),
        (
            1.5,
            "1.500000|1.500000e+00|1.5|0x1.8p+0|2|2e+00|2|1.5|1.500e+00|1.5|1.5|1.50000|2.|2.e+00|+1.500000| 1.500000e+00|000001.500|1.50e+00    |1.5|1.500000E+00|1.500000|0X1.8P+0|0x1.800p+0|0x2p+0|0x1.8p+0|0x2.p+0|0x0000000000001.8p+0|1.50000000000000000000|1.500000000000000000000000000000e+00|+1.5|000001.5|+1.5      ",
        ),
        (
            2.5,
            "2.500000|2.500000e+00|2.5|0x1.4p+1|2|2e+00|2|2.5|2.500e+00|2.5|2.5|2.50000|2.|2.e+00|+2.500000| 2.500000e+00|000002.500|2.50e+00    |2.5|2.500000E+00|2.500000|0X1.4P+1|0x1.400p+1|0x1p+1|0x1.4p+1|0x1.p+1|0x0000000000001.4p+1|2.50000000000000000000|2.500000000000000000000000000000e+00|+2.5|000002.5|+2.5      ",
        ),
        (
            0.125,
            "0.125000|1.250000e-01|0.125|0x1p-3|0|1e-01|0.1|0.1|1.250e-01|0.125|0.125|0.125000|0.|1.e-01|+0.125000| 1.250000e-01|000000.125|1.25e-01    |0.125|1.250000E-01|0.125000|0X1P-3|0x1.000p-3|0x1p-3|0x1.0p-3|0x1.p-3|0x000000000000001p-3|0.12500000000000000000|1.250000000000000000000000000000e-01|+0.125|0000.125|+0.125    ",
        ),
        (
            0.375,
            "0.375000|3.750000e-01|0.375|0x1.8p-2|0|4e-01|0.4|0.4|3.750e-01|0.375|0.375|0.375000|0.|4.e-01|+0.375000| 3.750000e-01|000000.375|3.75e-01    |0.375|3.750000E-01|0.375000|0X1.8P-2|0x1.800p-2|0x2p-2|0x1.8p-2|0x2.p-2|0x0000000000001.8p-2|0.37500000000000000000|3.750000000000000000000000000000e-01|+0.375|0000.375|+0.375    ",
        ),
        (
            1e-5,
            "0.000010|1.000000e-05|1e-05|0x1.4f8b588e368f1p-17|0|1e-05|1e-05|0.0|1.000e-05|1e-05|1.0000000000000001e-05|1.00000e-05|0.|1.e-05|+0.000010| 1.000000e-05|000000.000|1.00e-05    |1E-05|1.000000E-05|0.000010|0X1.4F8B588E368F1P-17|0x1.4f9p-17|0x1p-17|0x1.5p-17|0x1.p-17|0x1.4f8b588e368f1p-17|0.00001000000000000000|1.000000000000000081803053914031e-05|+1e-05|0001e-05|+1E-05    ",
        ),
        (
            123.456,
            "123.456000|1.234560e+02|123.456|0x1.edd2f1a9fbe77p+6|123|1e+02|1e+02|123.5|1.235e+02|123.456|123.456|123.456|123.|1.e+02|+123.456000| 1.234560e+02|000123.456|1.23e+02    |123.456|1.234560E+02|123.456000|0X1.EDD2F1A9FBE77P+6|0x1.eddp+6|0x2p+6|0x1.fp+6|0x2.p+6|0x1.edd2f1a9fbe77p+6|123.45600000000000306954|1.234560000000000030695446184836e+02|+123|0123.456|+123.5    ",
        ),
        (
            1e100,
            "10000000000000000159028911097599180468360808563945281389781327557747838772170381060813469985856815104.000000|1.000000e+100|1e+100|0x1.249ad2594c37dp+332|10000000000000000159028911097599180468360808563945281389781327557747838772170381060813469985856815104|1e+100|1e+100|10000000000000000159028911097599180468360808563945281389781327557747838772170381060813469985856815104.0|1.000e+100|1e+100|1e+100|1.00000e+100|10000000000000000159028911097599180468360808563945281389781327557747838772170381060813469985856815104.|1.e+100|+10000000000000000159028911097599180468360808563945281389781327557747838772170381060813469985856815104.000000| 1.000000e+100|10000000000000000159028911097599180468360808563945281389781327557747838772170381060813469985856815104.000|1.00e+100   |1E+100|1.000000E+100|10000000000000000159028911097599180468360808563945281389781327557747838772170381060813469985856815104.000000|0X1.249AD2594C37DP+332|0x1.24ap+332|0x1p+332|0x1.2p+332|0x1.p+332|0x1.249ad2594c37dp+332|10000000000000000159028911097599180468360808563945281389781327557747838772170381060813469985856815104.00000000000000000000|1.000000000000000015902891109760e+100|+1e+100|001e+100|+1E+100   ",
        ),
        (
            1e300,
            "1000000000000000052504760255204420248704468581108159154915854115511802457988908195786371375080447864043704443832883878176942523235360430575644792184786706982848387200926575803737830233794788090059368953234970799945081119038967640880074652742780142494579258788820056842838115669472196386865459400540160.000000|1.000000e+300|1e+300|0x1.7e43c8800759cp+996|1000000000000000052504760255204420248704468581108159154915854115511802457988908195786371375080447864043704443832883878176942523235360430575644792184786706982848387200926575803737830233794788090059368953234970799945081119038967640880074652742780142494579258788820056842838115669472196386865459400540160|1e+300|1e+300|1000000000000000052504760255204420248704468581108159154915854115511802457988908195786371375080447864043704443832883878176942523235360430575644792184786706982848387200926575803737830233794788090059368953234970799945081119038967640880074652742780142494579258788820056842838115669472196386865459400540160.0|1.000e+300|1e+300|1.0000000000000001e+300|1.00000e+300|1000000000000000052504760255204420248704468581108159154915854115511802457988908195786371375080447864043704443832883878176942523235360430575644792184786706982848387200926575803737830233794788090059368953234970799945081119038967640880074652742780142494579258788820056842838115669472196386865459400540160.|1.e+300|+1000000000000000052504760255204420248704468581108159154915854115511802457988908195786371375080447864043704443832883878176942523235360430575644792184786706982848387200926575803737830233794788090059368953234970799945081119038967640880074652742780142494579258788820056842838115669472196386865459400540160.000000| 1.000000e+300|1000000000000000052504760255204420248704468581108159154915854115511802457988908195786371375080447864043704443832883878176942523235360430575644792184786706982848387200926575803737830233794788090059368953234970799945081119038967640880074652742780142494579258788820056842838115669472196386865459400540160.000|1.00e+300   |1E+300|1.000000E+300|1000000000000000052504760255204420248704468581108159154915854115511802457988908195786371375080447864043704443832883878176942523235360430575644792184786706982848387200926575803737830233794788090059368953234970799945081119038967640880074652742780142494579258788820056842838115669472196386865459400540160.000000|0X1.7E43C8800759CP+996|0x1.7e4p+996|0x1p+996|0x1.8p+996|0x1.p+996|0x1.7e43c8800759cp+996|1000000000000000052504760255204420248704468581108159154915854115511802457988908195786371375080447864043704443832883878176942523235360430575644792184786706982848387200926575803737830233794788090059368953234970799945081119038967640880074652742780142494579258788820056842838115669472196386865459400540160.00000000000000000000|1.000000000000000052504760255204e+300|+1e+300|001e+300|+1E+300   ",
        ),
        (
            5e-324,
            "0.000000|4.940656e-324|4.94066e-324|0x0.0000000000001p-1022|0|5e-324|5e-324|0.0|4.941e-324|4.940656458e-324|4.9406564584124654e-324|4.94066e-324|0.|5.e-324|+0.000000| 4.940656e-324|000000.000|4.94e-324   |4.94066E-324|4.940656E-324|0.000000|0X0.0000000000001P-1022|0x0.000p-1022|0x0p-1022|0x0.0p-1022|0x0.p-1022|0x0.0000000000001p-1022|0.00000000000000000000|4.940656458412465441765687928682e-324|+4.94e-324|4.94066e-324|+4.941E-324",
        ),
        (
            2.2250738585072014e-308,
            "0.000000|2.225074e-308|2.22507e-308|0x1p-1022|0|2e-308|2e-308|0.0|2.225e-308|2.225073859e-308|2.2250738585072014e-308|2.22507e-308|0.|2.e-308|+0.000000| 2.225074e-308|000000.000|2.23e-308   |2.22507E-308|2.225074E-308|0.000000|0X1P-1022|0x1.000p-1022|0x1p-1022|0x1.0p-1022|0x1.p-1022|0x000000000001p-1022|0.00000000000000000000|2.225073858507201383090232717332e-308|+2.23e-308|2.22507e-308|+2.225E-308",
        ),
        (
            1.7976931348623157e308,
            "179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368.000000|1.797693e+308|1.79769e+308|0x1.fffffffffffffp+1023|179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368|2e+308|2e+308|179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368.0|1.798e+308|1.797693135e+308|1.7976931348623157e+308|1.79769e+308|179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368.|2.e+308|+179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368.000000| 1.797693e+308|179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368.000|1.80e+308   |1.79769E+308|1.797693E+308|179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368.000000|0X1.FFFFFFFFFFFFFP+1023|0x2.000p+1023|0x2p+1023|0x2.0p+1023|0x2.p+1023|0x1.fffffffffffffp+1023|179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368.00000000000000000000|1.797693134862315708145274237317e+308|+1.8e+308|1.79769e+308|+1.798E+308",
        ),
        (
            0.1,
            "0.100000|1.000000e-01|0.1|0x1.999999999999ap-4|0|1e-01|0.1|0.1|1.000e-01|0.1|0.10000000000000001|0.100000|0.|1.e-01|+0.100000| 1.000000e-01|000000.100|1.00e-01    |0.1|1.000000E-01|0.100000|0X1.999999999999AP-4|0x1.99ap-4|0x2p-4|0x1.ap-4|0x2.p-4|0x1.999999999999ap-4|0.10000000000000000555|1.000000000000000055511151231258e-01|+0.1|000000.1|+0.1      ",
        ),
        (
            9.9999,
            "9.999900|9.999900e+00|9.9999|0x1.3fff2e48e8a72p+3|10|1e+01|1e+01|10.0|1.000e+01|9.9999|9.9999000000000002|9.99990|10.|1.e+01|+9.999900| 9.999900e+00|000010.000|1.00e+01    |9.9999|9.999900E+00|9.999900|0X1.3FFF2E48E8A72P+3|0x1.400p+3|0x1p+3|0x1.4p+3|0x1.p+3|0x1.3fff2e48e8a72p+3|9.99990000000000023306|9.999900000000000233058017329313e+00|+10|009.9999|+10       ",
        ),
        (
            999999.5,
            "999999.500000|9.999995e+05|1e+06|0x1.e847fp+19|1000000|1e+06|1e+06|999999.5|1.000e+06|999999.5|999999.5|1.e+06|1000000.|1.e+06|+999999.500000| 9.999995e+05|999999.500|1.00e+06    |1E+06|9.999995E+05|999999.500000|0X1.E847FP+19|0x1.e84p+19|0x2p+19|0x1.fp+19|0x2.p+19|0x00000001.e847fp+19|999999.50000000000000000000|9.999995000000000000000000000000e+05|+1e+06|0001e+06|+1E+06    ",
        ),
        (
            0.0001,
            "0.000100|1.000000e-04|0.0001|0x1.a36e2eb1c432dp-14|0|1e-04|0.0001|0.0|1.000e-04|0.0001|0.0001|0.000100000|0.|1.e-04|+0.000100| 1.000000e-04|000000.000|1.00e-04    |0.0001|1.000000E-04|0.000100|0X1.A36E2EB1C432DP-14|0x1.a37p-14|0x2p-14|0x1.ap-14|0x2.p-14|0x1.a36e2eb1c432dp-14|0.00010000000000000000|1.000000000000000047921736023859e-04|+0.0001|000.0001|+0.0001   ",
        ),
        (
            0.0001234,
            "0.000123|1.234000e-04|0.0001234|0x1.02c9dedbc309dp-13|0|1e-04|0.0001|0.0|1.234e-04|0.0001234|0.00012339999999999999|0.000123400|0.|1.e-04|+0.000123| 1.234000e-04|000000.000|1.23e-04    |0.0001234|1.234000E-04|0.000123|0X1.02C9DEDBC309DP-13|0x1.02dp-13|0x1p-13|0x1.0p-13|0x1.p-13|0x1.02c9dedbc309dp-13|0.00012339999999999999|1.233999999999999908160269734836e-04|+0.000123|0.0001234|+0.0001234",
        ),
        (
            123456789.0,
            "123456789.000000|1.234568e+08|1.23457e+08|0x1.d6f3454p+26|123456789|1e+08|1e+08|123456789.0|1.235e+08|123456789|123456789|1.23457e+08|123456789.|1.e+08|+123456789.000000| 1.234568e+08|123456789.000|1.23e+08    |1.23457E+08|1.234568E+08|123456789.000000|0X1.D6F3454P+26|0x1.d6fp+26|0x2p+26|0x1.dp+26|0x2.p+26|0x000001.d6f3454p+26|123456789.00000000000000000000|1.234567890000000000000000000000e+08|+1.23e+08|1.23457e+08|+1.235E+08",
        ),
        (
            100000.0,
            "100000.000000|1.000000e+05|100000|0x1.86ap+16|100000|1e+05|1e+05|100000.0|1.000e+05|100000|100000|100000.|100000.|1.e+05|+100000.000000| 1.000000e+05|100000.000|1.00e+05    |100000|1.000000E+05|100000.000000|0X1.86AP+16|0x1.86ap+16|0x2p+16|0x1.8p+16|0x2.p+16|0x0000000001.86ap+16|100000.00000000000000000000|1.000000000000000000000000000000e+05|+1e+05|00100000|+1E+05    ",
        ),
        (
            1000000.0,
            "1000000.000000|1.000000e+06|1e+06|0x1.e848p+19|1000000|1e+06|1e+06|1000000.0|1.000e+06|1000000|1000000|1.00000e+06|1000000.|1.e+06|+1000000.000000| 1.000000e+06|1000000.000|1.00e+06    |1E+06|1.000000E+06|1000000.000000|0X1.E848P+19|0x1.e84p+19|0x2p+19|0x1.fp+19|0x2.p+19|0x000000001.e848p+19|1000000.00000000000000000000|1.000000000000000000000000000000e+06|+1e+06|0001e+06|+1E+06    ",
        ),
        (
            1e-4,
            "0.000100|1.000000e-04|0.0001|0x1.a36e2eb1c432dp-14|0|1e-04|0.0001|0.0|1.000e-04|0.0001|0.0001|0.000100000|0.|1.e-04|+0.000100| 1.000000e-04|000000.000|1.00e-04    |0.0001|1.000000E-04|0.000100|0X1.A36E2EB1C432DP-14|0x1.a37p-14|0x2p-14|0x1.ap-14|0x2.p-14|0x1.a36e2eb1c432dp-14|0.00010000000000000000|1.000000000000000047921736023859e-04|+0.0001|000.0001|+0.0001   ",
        ),
        (
            1e-5,
            "0.000010|1.000000e-05|1e-05|0x1.4f8b588e368f1p-17|0|1e-05|1e-05|0.0|1.000e-05|1e-05|1.0000000000000001e-05|1.00000e-05|0.|1.e-05|+0.000010| 1.000000e-05|000000.000|1.00e-05    |1E-05|1.000000E-05|0.000010|0X1.4F8B588E368F1P-17|0x1.4f9p-17|0x1p-17|0x1.5p-17|0x1.p-17|0x1.4f8b588e368f1p-17|0.00001000000000000000|1.000000000000000081803053914031e-05|+1e-05|0001e-05|+1E-05    ",
        ),
        (
            3.0,
            "3.000000|3.000000e+00|3|0x1.8p+1|3|3e+00|3|3.0|3.000e+00|3|3|3.00000|3.|3.e+00|+3.000000| 3.000000e+00|000003.000|3.00e+00    |3|3.000000E+00|3.000000|0X1.8P+1|0x1.800p+1|0x2p+1|0x1.8p+1|0x2.p+1|0x0000000000001.8p+1|3.00000000000000000000|3.000000000000000000000000000000e+00|+3|00000003|+3        ",
        ),
        (
            1.0 / 3.0,
            "0.333333|3.333333e-01|0.333333|0x1.5555555555555p-2|0|3e-01|0.3|0.3|3.333e-01|0.3333333333|0.33333333333333331|0.333333|0.|3.e-01|+0.333333| 3.333333e-01|000000.333|3.33e-01    |0.333333|3.333333E-01|0.333333|0X1.5555555555555P-2|0x1.555p-2|0x1p-2|0x1.5p-2|0x1.p-2|0x1.5555555555555p-2|0.33333333333333331483|3.333333333333333148296162562474e-01|+0.333|0.333333|+0.3333   ",
        ),
        (
            1.15625,
            "1.156250|1.156250e+00|1.15625|0x1.28p+0|1|1e+00|1|1.2|1.156e+00|1.15625|1.15625|1.15625|1.|1.e+00|+1.156250| 1.156250e+00|000001.156|1.16e+00    |1.15625|1.156250E+00|1.156250|0X1.28P+0|0x1.280p+0|0x1p+0|0x1.2p+0|0x1.p+0|0x000000000001.28p+0|1.15625000000000000000|1.156250000000000000000000000000e+00|+1.16|01.15625|+1.156    ",
        ),
        (
            1.09375,
            "1.093750|1.093750e+00|1.09375|0x1.18p+0|1|1e+00|1|1.1|1.094e+00|1.09375|1.09375|1.09375|1.|1.e+00|+1.093750| 1.093750e+00|000001.094|1.09e+00    |1.09375|1.093750E+00|1.093750|0X1.18P+0|0x1.180p+0|0x1p+0|0x1.2p+0|0x1.p+0|0x000000000001.18p+0|1.09375000000000000000|1.093750000000000000000000000000e+00|+1.09|01.09375|+1.094    ",
        ),
        (
            1.96875,
            "1.968750|1.968750e+00|1.96875|0x1.f8p+0|2|2e+00|2|2.0|1.969e+00|1.96875|1.96875|1.96875|2.|2.e+00|+1.968750| 1.968750e+00|000001.969|1.97e+00    |1.96875|1.968750E+00|1.968750|0X1.F8P+0|0x1.f80p+0|0x2p+0|0x2.0p+0|0x2.p+0|0x000000000001.f8p+0|1.96875000000000000000|1.968750000000000000000000000000e+00|+1.97|01.96875|+1.969    ",
        ),
        (
            1.9999999999999998,
            "2.000000|2.000000e+00|2|0x1.fffffffffffffp+0|2|2e+00|2|2.0|2.000e+00|2|1.9999999999999998|2.00000|2.|2.e+00|+2.000000| 2.000000e+00|000002.000|2.00e+00    |2|2.000000E+00|2.000000|0X1.FFFFFFFFFFFFFP+0|0x2.000p+0|0x2p+0|0x2.0p+0|0x2.p+0|0x1.fffffffffffffp+0|1.99999999999999977796|1.999999999999999777955395074969e+00|+2|00000002|+2        ",
        ),
        (
            1.0,
            "1.000000|1.000000e+00|1|0x1p+0|1|1e+00|1|1.0|1.000e+00|1|1|1.00000|1.|1.e+00|+1.000000| 1.000000e+00|000001.000|1.00e+00    |1|1.000000E+00|1.000000|0X1P+0|0x1.000p+0|0x1p+0|0x1.0p+0|0x1.p+0|0x000000000000001p+0|1.00000000000000000000|1.000000000000000000000000000000e+00|+1|00000001|+1        ",
        ),
        (
            1.0000000000000004,
            "1.000000|1.000000e+00|1|0x1.0000000000002p+0|1|1e+00|1|1.0|1.000e+00|1|1.0000000000000004|1.00000|1.|1.e+00|+1.000000| 1.000000e+00|000001.000|1.00e+00    |1|1.000000E+00|1.000000|0X1.0000000000002P+0|0x1.000p+0|0x1p+0|0x1.0p+0|0x1.p+0|0x1.0000000000002p+0|1.00000000000000044409|1.000000000000000444089209850063e+00|+1|00000001|+1        ",
        ),
        (
            6.02214076e23,
            "602214075999999987023872.000000|6.022141e+23|6.02214e+23|0x1.fe185ca57c517p+78|602214075999999987023872|6e+23|6e+23|602214075999999987023872.0|6.022e+23|6.02214076e+23|6.0221407599999999e+23|6.02214e+23|602214075999999987023872.|6.e+23|+602214075999999987023872.000000| 6.022141e+23|602214075999999987023872.000|6.02e+23    |6.02214E+23|6.022141E+23|602214075999999987023872.000000|0X1.FE185CA57C517P+78|0x1.fe2p+78|0x2p+78|0x2.0p+78|0x2.p+78|0x1.fe185ca57c517p+78|602214075999999987023872.00000000000000000000|6.022140759999999870238720000000e+23|+6.02e+23|6.02214e+23|+6.022E+23",
        ),
        (
            -2.5e-10,
            "-0.000000|-2.500000e-10|-2.5e-10|-0x1.12e0be826d695p-32|-0|-3e-10|-3e-10|-0.0|-2.500e-10|-2.5e-10|-2.5000000000000002e-10|-2.50000e-10|-0.|-3.e-10|-0.000000|-2.500000e-10|-00000.000|-2.50e-10   |-2.5E-10|-2.500000E-10|-0.000000|-0X1.12E0BE826D695P-32|-0x1.12ep-32|-0x1p-32|-0x1.1p-32|-0x1.p-32|-0x1.12e0be826d695p-32|-0.00000000025000000000|-2.500000000000000155703978644450e-10|-2.5e-10|-2.5e-10|-2.5E-10  ",
        ),
        (
            4.35,
            "4.350000|4.350000e+00|4.35|0x1.1666666666666p+2|4|4e+00|4|4.3|4.350e+00|4.35|4.3499999999999996|4.35000|4.|4.e+00|+4.350000| 4.350000e+00|000004.350|4.35e+00    |4.35|4.350000E+00|4.350000|0X1.1666666666666P+2|0x1.166p+2|0x1p+2|0x1.1p+2|0x1.p+2|0x1.1666666666666p+2|4.34999999999999964473|4.349999999999999644728632119950e+00|+4.35|00004.35|+4.35     ",
        ),
        (
            0.045,
            "0.045000|4.500000e-02|0.045|0x1.70a3d70a3d70ap-5|0|4e-02|0.04|0.0|4.500e-02|0.045|0.044999999999999998|0.0450000|0.|4.e-02|+0.045000| 4.500000e-02|000000.045|4.50e-02    |0.045|4.500000E-02|0.045000|0X1.70A3D70A3D70AP-5|0x1.70ap-5|0x1p-5|0x1.7p-5|0x1.p-5|0x1.70a3d70a3d70ap-5|0.04499999999999999833|4.499999999999999833466546306227e-02|+0.045|0000.045|+0.045    ",
        ),
        (
            f64::INFINITY,
            "inf|inf|inf|inf|inf|inf|inf|inf|inf|inf|inf|inf|inf|inf|+inf| inf|       inf|inf         |INF|INF|INF|INF|inf|inf|inf|inf|                 inf|inf|inf|+inf|     inf|+INF      ",
        ),
        (
            f64::NEG_INFINITY,
            "-inf|-inf|-inf|-inf|-inf|-inf|-inf|-inf|-inf|-inf|-inf|-inf|-inf|-inf|-inf|-inf|      -inf|-inf        |-INF|-INF|-INF|-INF|-inf|-inf|-inf|-inf|                -inf|-inf|-inf|-inf|    -inf|-INF      ",
        ),
        (
            f64::NAN,
            "nan|nan|nan|nan|nan|nan|nan|nan|nan|nan|nan|nan|nan|nan|+nan| nan|       nan|nan         |NAN|NAN|NAN|NAN|nan|nan|nan|nan|                 nan|nan|nan|+nan|     nan|+NAN      ",
        ),
        (
            -f64::NAN,
            "-nan|-nan|-nan|-nan|-nan|-nan|-nan|-nan|-nan|-nan|-nan|-nan|-nan|-nan|-nan|-nan|      -nan|-nan        |-NAN|-NAN|-NAN|-NAN|-nan|-nan|-nan|-nan|                -nan|-nan|-nan|-nan|    -nan|-NAN      ",
        ),
        (
            1.2e-322,
            "0.000000|1.185758e-322|1.18576e-322|0x0.0000000000018p-1022|0|1e-322|1e-322|0.0|1.186e-322|1.18575755e-322|1.1857575500189917e-322|1.18576e-322|0.|1.e-322|+0.000000| 1.185758e-322|000000.000|1.19e-322   |1.18576E-322|1.185758E-322|0.000000|0X0.0000000000018P-1022|0x0.000p-1022|0x0p-1022|0x0.0p-1022|0x0.p-1022|0x0.0000000000018p-1022|0.00000000000000000000|1.185757550018991706023765102884e-322|+1.19e-322|1.18576e-322|+1.186E-322",
        ),
    ];
    const INT_FORMATS: &[&str] = &[
        "%d", "%i", "%u", "%o", "%x", "%X", "%hhd", "%hd", "%hhu", "%hx", "%hho", "%#o", "%#x", "%#X", "%+d", "% d",
        "%5d", "%-5d", "%05d", "%.3d", "%.0d", "%8.3d", "%-+6d", "%#.0o", "%#5x", "%08X", "%+.0d",
    ];
    const LONG_FORMATS: &[&str] = &["%ld", "%lu", "%lx", "%lo", "%li", "%#lX", "%+ld", "%20ld", "%-20lu", "%.25lx"];
    /// Each value with glibc's output for INT_FORMATS (passed as a 32-bit int) then
    /// LONG_FORMATS (passed as a 64-bit long), joined by `|`.
    const INT_CASES: &[(u64, &str)] = &[
        (
            0x0,
            "0|0|0|0|0|0|0|0|0|0|0|0|0|0|+0| 0|    0|0    |00000|000||     000|+0    |0|    0|00000000|+|0|0|0|0|0|0|+0|                   0|0                   |0000000000000000000000000",
        ),
        (
            0x1,
            "1|1|1|1|1|1|1|1|1|1|1|01|0x1|0X1|+1| 1|    1|1    |00001|001|1|     001|+1    |01|  0x1|00000001|+1|1|1|1|1|1|0X1|+1|                   1|1                   |0000000000000000000000001",
        ),
        (
            0xffffffffffffffff,
            "-1|-1|4294967295|37777777777|ffffffff|FFFFFFFF|-1|-1|255|ffff|377|037777777777|0xffffffff|0XFFFFFFFF|-1|-1|   -1|-1   |-0001|-001|-1|    -001|-1    |037777777777|0xffffffff|FFFFFFFF|-1|-1|18446744073709551615|ffffffffffffffff|1777777777777777777777|-1|0XFFFFFFFFFFFFFFFF|-1|                  -1|18446744073709551615|000000000ffffffffffffffff",
        ),
        (
            0x7,
            "7|7|7|7|7|7|7|7|7|7|7|07|0x7|0X7|+7| 7|    7|7    |00007|007|7|     007|+7    |07|  0x7|00000007|+7|7|7|7|7|7|0X7|+7|                   7|7                   |0000000000000000000000007",
        ),
        (
            0x2a,
            "42|42|42|52|2a|2A|42|42|42|2a|52|052|0x2a|0X2A|+42| 42|   42|42   |00042|042|42|     042|+42   |052| 0x2a|0000002A|+42|42|42|2a|52|42|0X2A|+42|                  42|42                  |000000000000000000000002a",
        ),
        (
            0x7f,
            "127|127|127|177|7f|7F|127|127|127|7f|177|0177|0x7f|0X7F|+127| 127|  127|127  |00127|127|127|     127|+127  |0177| 0x7f|0000007F|+127|127|127|7f|177|127|0X7F|+127|                 127|127                 |000000000000000000000007f",
        ),
        (
            0x80,
            "128|128|128|200|80|80|-128|128|128|80|200|0200|0x80|0X80|+128| 128|  128|128  |00128|128|128|     128|+128  |0200| 0x80|00000080|+128|128|128|80|200|128|0X80|+128|                 128|128                 |0000000000000000000000080",
        ),
        (
            0xff,
            "255|255|255|377|ff|FF|-1|255|255|ff|377|0377|0xff|0XFF|+255| 255|  255|255  |00255|255|255|     255|+255  |0377| 0xff|000000FF|+255|255|255|ff|377|255|0XFF|+255|                 255|255                 |00000000000000000000000ff",
        ),
        (
            0x100,
            "256|256|256|400|100|100|0|256|0|100|0|0400|0x100|0X100|+256| 256|  256|256  |00256|256|256|     256|+256  |0400|0x100|00000100|+256|256|256|100|400|256|0X100|+256|                 256|256                 |0000000000000000000000100",
        ),
        (
            0xffffffffffffff7f,
            "-129|-129|4294967167|37777777577|ffffff7f|FFFFFF7F|127|-129|127|ff7f|177|037777777577|0xffffff7f|0XFFFFFF7F|-129|-129| -129|-129 |-0129|-129|-129|    -129|-129  |037777777577|0xffffff7f|FFFFFF7F|-129|-129|18446744073709551487|ffffffffffffff7f|1777777777777777777577|-129|0XFFFFFFFFFFFFFF7F|-129|                -129|18446744073709551487|000000000ffffffffffffff7f",
        ),
        (
            0x7fff,
            "32767|32767|32767|77777|7fff|7FFF|-1|32767|255|7fff|377|077777|0x7fff|0X7FFF|+32767| 32767|32767|32767|32767|32767|32767|   32767|+32767|077777|0x7fff|00007FFF|+32767|32767|32767|7fff|77777|32767|0X7FFF|+32767|               32767|32767               |0000000000000000000007fff",
        ),
        (
            0xffffffffffff8000,
            "-32768|-32768|4294934528|37777700000|ffff8000|FFFF8000|0|-32768|0|8000|0|037777700000|0xffff8000|0XFFFF8000|-32768|-32768|-32768|-32768|-32768|-32768|-32768|  -32768|-32768|037777700000|0xffff8000|FFFF8000|-32768|-32768|18446744073709518848|ffffffffffff8000|1777777777777777700000|-32768|0XFFFFFFFFFFFF8000|-32768|              -32768|18446744073709518848|000000000ffffffffffff8000",
        ),
        (
            0xffff,
            "65535|65535|65535|177777|ffff|FFFF|-1|-1|255|ffff|377|0177777|0xffff|0XFFFF|+65535| 65535|65535|65535|65535|65535|65535|   65535|+65535|0177777|0xffff|0000FFFF|+65535|65535|65535|ffff|177777|65535|0XFFFF|+65535|               65535|65535               |000000000000000000000ffff",
        ),
        (
            0x10000,
            "65536|65536|65536|200000|10000|10000|0|0|0|0|0|0200000|0x10000|0X10000|+65536| 65536|65536|65536|65536|65536|65536|   65536|+65536|0200000|0x10000|00010000|+65536|65536|65536|10000|200000|65536|0X10000|+65536|               65536|65536               |0000000000000000000010000",
        ),
        (
            0x7fffffff,
            "2147483647|2147483647|2147483647|17777777777|7fffffff|7FFFFFFF|-1|-1|255|ffff|377|017777777777|0x7fffffff|0X7FFFFFFF|+2147483647| 2147483647|2147483647|2147483647|2147483647|2147483647|2147483647|2147483647|+2147483647|017777777777|0x7fffffff|7FFFFFFF|+2147483647|2147483647|2147483647|7fffffff|17777777777|2147483647|0X7FFFFFFF|+2147483647|          2147483647|2147483647          |000000000000000007fffffff",
        ),
        (
            0xffffffff80000000,
            "-2147483648|-2147483648|2147483648|20000000000|80000000|80000000|0|0|0|0|0|020000000000|0x80000000|0X80000000|-2147483648|-2147483648|-2147483648|-2147483648|-2147483648|-2147483648|-2147483648|-2147483648|-2147483648|020000000000|0x80000000|80000000|-2147483648|-2147483648|18446744071562067968|ffffffff80000000|1777777777760000000000|-2147483648|0XFFFFFFFF80000000|-2147483648|         -2147483648|18446744071562067968|000000000ffffffff80000000",
        ),
        (
            0xffffffff,
            "-1|-1|4294967295|37777777777|ffffffff|FFFFFFFF|-1|-1|255|ffff|377|037777777777|0xffffffff|0XFFFFFFFF|-1|-1|   -1|-1   |-0001|-001|-1|    -001|-1    |037777777777|0xffffffff|FFFFFFFF|-1|4294967295|4294967295|ffffffff|37777777777|4294967295|0XFFFFFFFF|+4294967295|          4294967295|4294967295          |00000000000000000ffffffff",
        ),
        (
            0x2540be400,
            "1410065408|1410065408|1410065408|12402762000|540be400|540BE400|0|-7168|0|e400|0|012402762000|0x540be400|0X540BE400|+1410065408| 1410065408|1410065408|1410065408|1410065408|1410065408|1410065408|1410065408|+1410065408|012402762000|0x540be400|540BE400|+1410065408|10000000000|10000000000|2540be400|112402762000|10000000000|0X2540BE400|+10000000000|         10000000000|10000000000         |00000000000000002540be400",
        ),
        (
            0x8000000000000000,
            "0|0|0|0|0|0|0|0|0|0|0|0|0|0|+0| 0|    0|0    |00000|000||     000|+0    |0|    0|00000000|+|-9223372036854775808|9223372036854775808|8000000000000000|1000000000000000000000|-9223372036854775808|0X8000000000000000|-9223372036854775808|-9223372036854775808|9223372036854775808 |0000000008000000000000000",
        ),
        (
            0xffffffffffffffff,
            "-1|-1|4294967295|37777777777|ffffffff|FFFFFFFF|-1|-1|255|ffff|377|037777777777|0xffffffff|0XFFFFFFFF|-1|-1|   -1|-1   |-0001|-001|-1|    -001|-1    |037777777777|0xffffffff|FFFFFFFF|-1|-1|18446744073709551615|ffffffffffffffff|1777777777777777777777|-1|0XFFFFFFFFFFFFFFFF|-1|                  -1|18446744073709551615|000000000ffffffffffffffff",
        ),
        (
            0x11f71fb04cb,
            "1912276171|1912276171|1912276171|16176602313|71fb04cb|71FB04CB|-53|1227|203|4cb|313|016176602313|0x71fb04cb|0X71FB04CB|+1912276171| 1912276171|1912276171|1912276171|1912276171|1912276171|1912276171|1912276171|+1912276171|016176602313|0x71fb04cb|71FB04CB|+1912276171|1234567890123|1234567890123|11f71fb04cb|21756176602313|1234567890123|0X11F71FB04CB|+1234567890123|       1234567890123|1234567890123       |0000000000000011f71fb04cb",
        ),
    ];
    /// (format, arguments, glibc output)
    fn misc_cases() -> Vec<(&'static str, Vec<PrintfArg>, &'static str)> {
        vec![
            ("%s", vec![string("hello")], "hello"),
            ("%10s|", vec![string("hello")], "     hello|"),
            ("%-10s|", vec![string("hello")], "hello     |"),
            ("%.3s", vec![string("hello")], "hel"),
            ("%10.3s|", vec![string("hello")], "       hel|"),
            ("%s", vec![string("")], ""),
            ("%c", vec![int(65)], "A"),
            ("%5c|", vec![int(66)], "    B|"),
            ("%-5c|", vec![int(67)], "C    |"),
            ("100%%", vec![], "100%"),
            ("%5%|", vec![], "%|"),
            ("%p", vec![PrintfArg::Pointer(0x0)], "(nil)"),
            ("%p", vec![PrintfArg::Pointer(0x1234abcd)], "0x1234abcd"),
            ("%20p|", vec![PrintfArg::Pointer(0xdeadbeef)], "          0xdeadbeef|"),
            ("%-20p|", vec![PrintfArg::Pointer(0x0)], "(nil)               |"),
            ("%*d|", vec![int(8), int(42)], "      42|"),
            ("%-*d|", vec![int(8), int(42)], "42      |"),
            ("%*d|", vec![int(-8), int(42)], "42      |"),
            ("%.*f", vec![int(2), PrintfArg::Float(1.23456)], "1.23"),
            ("%.*f", vec![int(-2), PrintfArg::Float(1.23456)], "1.234560"),
            ("%*.*e|", vec![int(14), int(3), PrintfArg::Float(1234.5)], "     1.234e+03|"),
            ("x=%d, y=%.2f, s=%s", vec![int(3), PrintfArg::Float(0.5), string("ok")], "x=3, y=0.50, s=ok"),
            ("%05s|", vec![string("ab")], "   ab|"),
            ("%05c|", vec![int(97)], "    a|"),
            ("%.0s|", vec![string("abc")], "|"),
            ("%+s", vec![string("x")], "x"),
            ("%#p", vec![PrintfArg::Pointer(0x10)], "0x10"),
            ("%+p", vec![PrintfArg::Pointer(0x10)], "+0x10"),
            ("%010p", vec![PrintfArg::Pointer(0x10)], "0x00000010"),
        ]
    }

    #[test]
    fn floats_match_glibc() {
        for &(value, expected) in FLOAT_CASES {
            let expected: Vec<&str> = expected.split('|').collect();
            assert_eq!(expected.len(), FLOAT_FORMATS.len());
            for (fmt, want) in FLOAT_FORMATS.iter().zip(expected) {
                let got = run(fmt, &[PrintfArg::Float(value)]);
                assert_eq!(got, want, "printf(\"{fmt}\", {value:e})");
            }
        }
    }

    #[test]
    fn integers_match_glibc() {
        let formats: Vec<(&str, u32)> =
            INT_FORMATS.iter().map(|f| (*f, 32)).chain(LONG_FORMATS.iter().map(|f| (*f, 64))).collect();
        for &(value, expected) in INT_CASES {
            let expected: Vec<&str> = expected.split('|').collect();
            assert_eq!(expected.len(), formats.len());
            for (&(fmt, bits), want) in formats.iter().zip(expected) {
                let value = value & (u64::MAX >> (64 - bits));
                let got = run(fmt, &[PrintfArg::Int { bits, value }]);
                assert_eq!(got, want, "printf(\"{fmt}\", {value:#x})");
            }
        }
    }

    #[test]
    fn strings_chars_pointers_stars_match_glibc() {
        for (fmt, args, want) in misc_cases() {
            assert_eq!(run(fmt, &args), want, "printf(\"{fmt}\", {args:?})");
        }
    }

    fn floats(values: &[f64]) -> PrintfArg {
        PrintfArg::Vector(values.iter().map(|&v| PrintfArg::Float(v)).collect())
    }

    fn ints(bits: u32, values: &[i64]) -> PrintfArg {
        let mask = u64::MAX >> (64 - bits);
        let elements = values.iter().map(|&v| PrintfArg::Int { bits, value: v as u64 & mask });
        PrintfArg::Vector(elements.collect())
    }

    #[test]
    fn vectors() {
        let v4 = [floats(&[1.0, 2.0, 3.0, 4.0])];
        assert_eq!(run("%v4f", &v4), "1.000000,2.000000,3.000000,4.000000");
        assert_eq!(run("%v4hlf", &v4), "1.000000,2.000000,3.000000,4.000000");
        assert_eq!(run("[%5.1v4hlf]", &v4), "[  1.0,  2.0,  3.0,  4.0]");
        assert_eq!(run("%-4.0v2hle|", &[floats(&[1.5, -0.0])]), "2e+00,-0e+00|");
        assert_eq!(run("%v2hhd", &[ints(8, &[-1, 5])]), "-1,5");
        assert_eq!(run("%v2hhu", &[ints(8, &[-1, 5])]), "255,5");
        assert_eq!(run("%v3hx", &[ints(16, &[-1, 1, 10])]), "ffff,1,a");
        assert_eq!(run("%#v2hlX", &[ints(32, &[255, 0])]), "0XFF,0");
        assert_eq!(run("%+v2ld", &[ints(64, &[i64::MIN, 7])]), "-9223372036854775808,+7");
        let sixteen: Vec<i64> = (0..16).collect();
        assert_eq!(run("%v16hhu", &[ints(8, &sixteen)]), "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15");
        assert_eq!(run("%v8hg", &[floats(&[0.5; 8])]), "0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5");
        assert_eq!(run("a%v2hlab", &[floats(&[1.0, 3.0])]), "a0x1p+0,0x1.8p+1b");
    }

    #[test]
    fn vector_mismatches_are_best_effort() {
        // A scalar for a vector conversion prints alone; a short vector prints what it has;
        // a vector for a scalar conversion prints every element.
        assert_eq!(run("%v4hld", &[int(3)]), "3");
        assert_eq!(run("%v4hld", &[ints(32, &[1, 2])]), "1,2");
        assert_eq!(run("%v2hld", &[ints(32, &[1, 2, 3])]), "1,2");
        assert_eq!(run("%d", &[ints(32, &[1, 2])]), "1,2");
        // Not a vector size: the directive is not recognised and prints literally.
        assert_eq!(run("%v5d", &[int(1)]), "%v5d");
    }

    #[test]
    fn integer_widths_reinterpret_raw_bits() {
        let long = |v: i64| PrintfArg::Int { bits: 64, value: v as u64 };
        assert_eq!(run("%d", &[long(0x1_0000_0005)]), "5");
        assert_eq!(run("%d", &[long(-1)]), "-1");
        assert_eq!(run("%u", &[long(-1)]), "4294967295");
        assert_eq!(run("%ld", &[long(-1)]), "-1");
        assert_eq!(run("%hhd", &[int(300)]), "44");
        assert_eq!(run("%hd", &[int(40000)]), "-25536");
        assert_eq!(run("%hhx", &[int(-1)]), "ff");
        // A char widened by zero-extension stays positive under %d.
        assert_eq!(run("%d", &[PrintfArg::Int { bits: 8, value: 0xff }]), "255");
    }

    #[test]
    fn mismatched_and_missing_arguments() {
        assert_eq!(run("%d", &[PrintfArg::Float(-2.7)]), "-2");
        assert_eq!(run("%f", &[int(-3)]), "-3.000000");
        assert_eq!(run("%.1f", &[PrintfArg::Int { bits: 8, value: 0xff }]), "-1.0");
        assert_eq!(run("%x", &[PrintfArg::Pointer(0xabc)]), "abc");
        assert_eq!(run("%d and %5.2f!", &[]), "%d and %5.2f!");
        assert_eq!(run("%d and %f", &[int(1)]), "1 and %f");
        assert_eq!(run("%*d", &[]), "%*d");
        assert_eq!(run("%s", &[PrintfArg::Pointer(0)]), "(null)");
        assert_eq!(run("%.3s|", &[PrintfArg::Pointer(0)]), "|");
        assert_eq!(run("%s", &[PrintfArg::Float(1.0)]), "(null)");
        assert_eq!(run("%c%c", &[int(0x4f), int(0x14b)]), "OK");
    }

    #[test]
    fn malformed_formats_print_literally() {
        assert_eq!(run("100%", &[]), "100%");
        assert_eq!(run("%y%d", &[int(1)]), "%y1");
        assert_eq!(run("%-", &[]), "%-");
        assert_eq!(run("%v", &[]), "%v");
        assert_eq!(run("%lld", &[int(1)]), "%lld");
        assert_eq!(run("", &[]), "");
    }

    #[test]
    fn format_stops_at_nul_and_strings_at_theirs() {
        assert_eq!(format(b"ab\0%d", &[int(1)], &mut read_str), "ab");
        assert_eq!(run("<%s>", &[string("ok")]), "<ok>");
        assert_eq!(run("<%10.1s>", &[string("ok")]), "<         o>");
        let mut bytes_read = |_| b"caf\xc3\xa9".to_vec();
        let utf8 = format(b"%s!", &[PrintfArg::Pointer(8)], &mut bytes_read);
        assert_eq!(utf8, "caf\u{e9}!");
        let lossy = format(b"%c", &[int(0xff)], &mut read_str);
        assert_eq!(lossy, "\u{fffd}");
    }

    #[test]
    fn long_expansions_match_glibc() {
        let tiny = [PrintfArg::Float(f64::from_bits(1))];
        let s = run("%.400f", &tiny);
        assert_eq!(s.len(), 402);
        assert_eq!(&s[320..], "0000049406564584124654417656879286822137236505980261432476442558568250067550727021");
        let s = run("%.1074f", &tiny);
        assert_eq!(s.len(), 1076);
        assert!(s.ends_with("3664809941164205702637090279242767544565229087538682506419718265533447265625"));
        let s = run("%.760e", &tiny);
        assert_eq!(s.len(), 767);
        assert!(s.starts_with("4.9406564584124654417656879286822137236505980261432476442558568250067550727020875186529983636163599237979656469544571773"));
        assert!(s.ends_with("7675445652290875386825064197182655334472656250000000000e-324"));
        assert_eq!(run("%40.0f|", &[PrintfArg::Float(0.5)]).len(), 41);
        // A width beyond memory is not honoured but must not panic either.
        assert!(run("%99999999999999999999d", &[int(1)]).len() > 1);
    }
}
