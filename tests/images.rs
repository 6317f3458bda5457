//! A generated differential sweep of images and samplers: kernels are generated here, run in the
//! emulator and on pocl with the same images and inputs, and every result is compared with pocl
//! and with the answer of the OpenCL C specification, computed here by a small model of its
//! image chapter (format conversions, addressing modes, nearest and linear filtering). Covered:
//! - every channel order and channel type (sampler-less `read_image{f,i,ui}` of stored values at
//!   the edges of each type, `write_image{f,i,ui}` of values at and past them: saturation, NaN,
//!   infinities, half rounding); formats pocl does not support are checked against the model only
//!   (listed when the test runs);
//! - every sampler: normalized and unnormalized coordinates, each addressing mode (none with
//!   in-range coordinates only; repeat and mirrored repeat with normalized coordinates only),
//!   nearest and linear filtering, on 1D, 2D, 3D, 1D array and 2D array images, at coordinates on
//!   texel centres and boundaries, at the edges and outside; samplers passed as arguments and
//!   declared as program-scope constants; integer coordinates with samplers; integer formats
//!   through samplers;
//! - image1d_buffer reads and writes, writes to every kind (3D through
//!   `cl_khr_3d_image_writes`), read_write images (OpenCL C 3.0), and the query builtins
//!   (`get_image_width` ... `get_image_channel_data_type`) on every kind.
//!
//! Results of nearest filtering and of conversions are compared exactly (floats: NaN equals NaN),
//! except normalized-integer reads (see [`Cmp::Ulp`]); linear filtering within an absolute
//! tolerance (see [`LINEAR_TOLERANCE`]). Where pocl departs from the specification the emulator
//! must follow the specification: [`POCL_DEVIATIONS`] lists each such place with the reason.
//! `read_imageh`/`write_imageh` are not generated: pocl has no `cl_khr_fp16`.
//!
//! A failure prints the kernel, its images, the inputs of each differing work-item, and the value
//! from pocl, the emulator and the model.

mod common;

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use clrace::exec::image::{self, ImageDesc, ImageKind};
use clrace::{ArgValue, Launch, Program};
use common::{PoclProgram, Rng, pocl_image_formats, ulp_apart};

/// Linear filtering is compared within this absolute difference per channel. The specification
/// leaves the precision of the filter weights to the implementation; hardware commonly keeps 8
/// fractional bits (an error of at most 2^-9 per weight), and every filtered image here holds
/// values in [-1, 1], so two taps differ by at most 2 and a weight error moves the result by at
/// most 2^-9 * 2 = 2^-8. Both pocl and the emulator compute weights in single precision, far
/// inside this bound; the bound only keeps the test independent of how the blend is ordered.
const LINEAR_TOLERANCE: f64 = 1.0 / 256.0;

/// Where pocl's answer departs from the specification's: the cases (by name; `*` matches any
/// run of characters), the reason, and which work-items of such a case it concerns (None: the
/// values of an image). There the emulator is checked against the specification only, and the
/// test prints what pocl did instead. A departure not listed here fails the test.
struct Deviation {
    cases: &'static str,
    why: &'static str,
    applies: fn(&Case, Option<usize>) -> bool,
}

const POCL_DEVIATIONS: &[Deviation] = &[
    // The specification's table of channel mappings gives (r, 0, 0, 1) for CL_R, in every type.
    Deviation {
        cases: "*_r_signed_int*",
        why: "pocl's read_imagei of an R image returns alpha 0, not 1",
        applies: always,
    },
    Deviation {
        cases: "*_r_unsigned_int*",
        why: "pocl's read_imageui of an R image returns alpha 0, not 1",
        applies: always,
    },
    // RGBA HALF_FLOAT works; the single-channel orders do not.
    Deviation { cases: "fmt_r_half_float", why: HALF_1CH, applies: always },
    Deviation { cases: "fmt_a_half_float", why: HALF_1CH, applies: always },
    // OpenCL C 8.2: the array index is clamp(rint(layer), 0, layers - 1); rint rounds ties to even.
    Deviation {
        cases: "smp_*_array_*",
        why: "pocl rounds an array layer coordinate half-way between two layers up (0.5 -> layer 1), not to even",
        applies: |case, item| {
            item.and_then(|i| case.layer_coords.get(i).copied().flatten()).is_some_and(|l| l.fract().abs() == 0.5)
        },
    },
    // The array index is never normalized (OpenCL C 8.2: only the coordinates within a layer are).
    Deviation {
        cases: "smp_*_array_*_norm_*",
        why: "with normalized coordinates pocl also scales the array layer coordinate by the array size",
        applies: always,
    },
    // The border colour is (0, 0, 0, 1) for orders without alpha (OpenCL C 8.3).
    Deviation {
        cases: "smp_*_r_*_clamp_*",
        why: "pocl's border colour for an R image under CLK_ADDRESS_CLAMP has alpha 0, not 1",
        applies: |case, _| !case.name.contains("clamp_to_edge"),
    },
];

const HALF_1CH: &str = "pocl's read_imagef of a single-channel HALF_FLOAT image returns 234.0 in every lane, and its \
                        write_imagef stores 0";

fn always(_: &Case, _: Option<usize>) -> bool {
    true
}

/// Channel data types.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ty {
    UnormInt8,
    UnormInt16,
    SnormInt8,
    SnormInt16,
    SignedInt8,
    SignedInt16,
    SignedInt32,
    UnsignedInt8,
    UnsignedInt16,
    UnsignedInt32,
    Half,
    Float,
}
use Ty::*;

const TYPES: [Ty; 12] = [
    UnormInt8,
    UnormInt16,
    SnormInt8,
    SnormInt16,
    SignedInt8,
    SignedInt16,
    SignedInt32,
    UnsignedInt8,
    UnsignedInt16,
    UnsignedInt32,
    Half,
    Float,
];

/// What a kernel reads and writes a texel as: `float4`, `int4` or `uint4`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ret {
    F,
    I,
    U,
}

impl Ret {
    fn suffix(self) -> &'static str {
        match self {
            Ret::F => "f",
            Ret::I => "i",
            Ret::U => "ui",
        }
    }
    fn scalar(self) -> &'static str {
        match self {
            Ret::F => "float",
            Ret::I => "int",
            Ret::U => "uint",
        }
    }
    /// The bits of 1 in this type (the alpha of a format without alpha).
    fn one(self) -> u32 {
        if self == Ret::F { 1f32.to_bits() } else { 1 }
    }
    fn format(self, bits: u32) -> String {
        match self {
            Ret::F => format!("{:e}", f32::from_bits(bits)),
            Ret::I => (bits as i32).to_string(),
            Ret::U => bits.to_string(),
        }
    }
}

impl Ty {
    fn name(self) -> &'static str {
        match self {
            UnormInt8 => "UNORM_INT8",
            UnormInt16 => "UNORM_INT16",
            SnormInt8 => "SNORM_INT8",
            SnormInt16 => "SNORM_INT16",
            SignedInt8 => "SIGNED_INT8",
            SignedInt16 => "SIGNED_INT16",
            SignedInt32 => "SIGNED_INT32",
            UnsignedInt8 => "UNSIGNED_INT8",
            UnsignedInt16 => "UNSIGNED_INT16",
            UnsignedInt32 => "UNSIGNED_INT32",
            Half => "HALF_FLOAT",
            Float => "FLOAT",
        }
    }
    fn code(self) -> u32 {
        image::type_named(self.name()).expect("a channel type the emulator names")
    }
    fn bytes(self) -> usize {
        match self {
            UnormInt8 | SnormInt8 | SignedInt8 | UnsignedInt8 => 1,
            UnormInt16 | SnormInt16 | SignedInt16 | UnsignedInt16 | Half => 2,
            SignedInt32 | UnsignedInt32 | Float => 4,
        }
    }
    fn ret(self) -> Ret {
        match self {
            SignedInt8 | SignedInt16 | SignedInt32 => Ret::I,
            UnsignedInt8 | UnsignedInt16 | UnsignedInt32 => Ret::U,
            _ => Ret::F,
        }
    }
    fn normalized(self) -> bool {
        matches!(self, UnormInt8 | UnormInt16 | SnormInt8 | SnormInt16)
    }
    /// Stored values at the edges of the type, as raw channel bits.
    fn edges(self) -> Vec<u32> {
        let f = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
        match self {
            UnormInt8 | UnsignedInt8 => vec![0, 1, 2, 63, 64, 127, 128, 129, 191, 200, 254, 255],
            UnormInt16 | UnsignedInt16 => vec![0, 1, 255, 256, 0x7fff, 0x8000, 0x8001, 40000, 0xfffe, 0xffff],
            SnormInt8 | SignedInt8 => {
                [-128i32, -127, -126, -64, -1, 0, 1, 63, 64, 126, 127].map(|v| v as u32 & 0xff).to_vec()
            }
            SnormInt16 | SignedInt16 => [-32768i32, -32767, -32766, -256, -1, 0, 1, 255, 16384, 32766, 32767]
                .map(|v| v as u32 & 0xffff)
                .to_vec(),
            SignedInt32 => [i32::MIN, i32::MIN + 1, -65536, -32769, -1, 0, 1, 32768, 65536, i32::MAX - 1, i32::MAX]
                .map(|v| v as u32)
                .to_vec(),
            UnsignedInt32 => vec![0, 1, 255, 65535, 65536, 0x7fff_ffff, 0x8000_0000, 0xffff_fffe, 0xffff_ffff],
            // Zeros, one, the largest finite, infinities, NaN, the smallest and largest denormals,
            // the smallest normal, 1/3.
            Half => {
                vec![0, 0x8000, 0x3c00, 0xbc00, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0x0001, 0x03ff, 0x0400, 0x3555]
            }
            Float => f(&[
                0.0,
                -0.0,
                1.0,
                -1.0,
                f32::MAX,
                f32::MIN,
                f32::INFINITY,
                f32::NEG_INFINITY,
                f32::NAN,
                f32::from_bits(1),
                f32::MIN_POSITIVE,
                std::f32::consts::PI,
                -1e-30,
            ]),
        }
    }
    fn mask(self) -> u32 {
        match self.bytes() {
            1 => 0xff,
            2 => 0xffff,
            _ => u32::MAX,
        }
    }
}

/// The orders (name and the component each stored channel holds, in memory order: `i` intensity,
/// `l` luminance) with the types each may have.
const ORDERS: [(&str, &str); 10] = [
    ("R", "r"),
    ("A", "a"),
    ("RG", "rg"),
    ("RA", "ra"),
    ("RGBA", "rgba"),
    ("BGRA", "bgra"),
    ("ARGB", "argb"),
    ("ABGR", "abgr"),
    ("INTENSITY", "i"),
    ("LUMINANCE", "l"),
];

/// An image format: order name, its channels, channel type.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Fmt {
    order: &'static str,
    channels: &'static str,
    ty: Ty,
}

impl Fmt {
    fn new(order: &str, ty: Ty) -> Fmt {
        let &(order, channels) = ORDERS.iter().find(|o| o.0 == order).expect("a known order");
        Fmt { order, channels, ty }
    }
    /// Whether OpenCL defines this format (INTENSITY and LUMINANCE are float-only, BGRA, ARGB and
    /// ABGR 8-bit only).
    fn valid(self) -> bool {
        match self.order {
            "INTENSITY" | "LUMINANCE" => self.ty.ret() == Ret::F,
            "BGRA" | "ARGB" | "ABGR" => self.ty.bytes() == 1,
            _ => true,
        }
    }
    fn code(self) -> u32 {
        image::order_named(self.order).expect("an order the emulator names")
    }
    fn pixel_size(self) -> usize {
        self.channels.len() * self.ty.bytes()
    }
    fn has_alpha(self) -> bool {
        self.channels.contains('a') || self.channels == "i"
    }
    fn label(self) -> String {
        format!("{}_{}", self.order, self.ty.name()).to_lowercase()
    }
}

/// The specification's value of a stored channel, as the bits of what `read_image{f,i,ui}`
/// returns (OpenCL C 8.3: normalized integers divided by their maximum, signed ones clamped to
/// -1; integers sign- or zero-extended).
fn decode(ty: Ty, raw: u32) -> u32 {
    let float = |v: f64| (v as f32).to_bits();
    match ty {
        UnormInt8 => float(f64::from(raw) / 255.0),
        UnormInt16 => float(f64::from(raw) / 65535.0),
        SnormInt8 => float((f64::from(raw as u8 as i8) / 127.0).max(-1.0)),
        SnormInt16 => float((f64::from(raw as u16 as i16) / 32767.0).max(-1.0)),
        SignedInt8 => raw as u8 as i8 as i32 as u32,
        SignedInt16 => raw as u16 as i16 as i32 as u32,
        Half => half_to_f32(raw as u16).to_bits(),
        _ => raw,
    }
}

/// The specification's stored channel for a value written as `bits` (OpenCL C 8.3): normalized
/// types take `convert_{u,}{char,short}_sat_rte(f * max)` (NaN stores 0), half rounds to nearest
/// even, integers saturate (`convert_T_sat`).
fn encode(ty: Ty, bits: u32) -> u32 {
    let f = f32::from_bits(bits);
    let norm = |scale: f32, lo: f32, hi: f32| {
        let x = f * scale;
        if x.is_nan() { 0 } else { x.clamp(lo, hi).round_ties_even() as i32 as u32 }
    };
    match ty {
        UnormInt8 => norm(255.0, 0.0, 255.0),
        UnormInt16 => norm(65535.0, 0.0, 65535.0),
        SnormInt8 => norm(127.0, -128.0, 127.0) & 0xff,
        SnormInt16 => norm(32767.0, -32768.0, 32767.0) & 0xffff,
        Half => u32::from(f32_to_half(f)),
        Float => bits,
        SignedInt8 => (bits as i32).clamp(-128, 127) as u32 & 0xff,
        SignedInt16 => (bits as i32).clamp(-32768, 32767) as u32 & 0xffff,
        UnsignedInt8 => bits.min(0xff),
        UnsignedInt16 => bits.min(0xffff),
        SignedInt32 | UnsignedInt32 => bits,
    }
}

/// A half's value (exact).
fn half_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let (exponent, mantissa) = (i32::from(h >> 10 & 0x1f), f64::from(h & 0x3ff));
    let magnitude = match exponent {
        0 => mantissa * 2f64.powi(-24),
        31 if mantissa == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        _ => (1024.0 + mantissa) * 2f64.powi(exponent - 25),
    };
    (sign * magnitude) as f32
}

/// A float rounded to the nearest half, ties to even.
fn f32_to_half(f: f32) -> u16 {
    let sign = if f.is_sign_negative() { 0x8000u16 } else { 0 };
    if f.is_nan() {
        return sign | 0x7e00;
    }
    if f.is_infinite() {
        return sign | 0x7c00;
    }
    let a = f64::from(f.abs());
    // The binade (half denormals share the smallest normal's) and the value's multiple of the
    // binade's quantum, 2^(e - 10).
    let mut e = (((f.to_bits() >> 23) & 0xff) as i32 - 127).max(-14);
    let mut n = (a / 2f64.powi(e - 10)).round_ties_even() as u32;
    if n == 2048 {
        e += 1;
        n = 1024;
    }
    if e > 15 {
        return sign | 0x7c00;
    }
    if n < 1024 {
        return sign | n as u16;
    }
    sign | ((e + 15) as u16) << 10 | (n - 1024) as u16
}

/// An image: format, kind, size (unused dimensions 1) and its packed bytes.
#[derive(Clone, Debug)]
struct Img {
    fmt: Fmt,
    kind: ImageKind,
    size: [usize; 3],
    layers: usize,
    data: Vec<u8>,
}

impl Img {
    /// An image whose stored channels come from `raw` (cycled).
    fn new(fmt: Fmt, kind: ImageKind, size: [usize; 3], layers: usize, raw: &[u32]) -> Img {
        let count = size.iter().product::<usize>() * layers * fmt.channels.len();
        let mut data = Vec::with_capacity(count * fmt.ty.bytes());
        for i in 0..count {
            data.extend_from_slice(&raw[i % raw.len()].to_le_bytes()[..fmt.ty.bytes()]);
        }
        Img { fmt, kind, size, layers, data }
    }
    fn desc(&self) -> ImageDesc {
        let [width, height, depth] = self.size.map(|v| v as u64);
        ImageDesc {
            kind: self.kind,
            order: self.fmt.code(),
            data_type: self.fmt.ty.code(),
            width,
            height,
            depth,
            array_size: self.layers as u64,
        }
    }
    fn dims(&self) -> usize {
        match self.kind {
            ImageKind::D1 | ImageKind::D1Buffer | ImageKind::D1Array => 1,
            ImageKind::D2 | ImageKind::D2Array => 2,
            ImageKind::D3 => 3,
        }
    }
    fn arrayed(&self) -> bool {
        matches!(self.kind, ImageKind::D1Array | ImageKind::D2Array)
    }
    fn pixels(&self) -> usize {
        self.size.iter().product::<usize>() * self.layers
    }
    /// The index of pixel `p` in layer `layer`.
    fn index(&self, p: [usize; 3], layer: usize) -> usize {
        let [w, h, _] = self.size;
        let slice = if self.kind == ImageKind::D3 { p[2] } else { layer };
        (slice * h + p[1]) * w + p[0]
    }
    /// The stored channels of pixel `index`.
    fn raw(&self, index: usize) -> Vec<u32> {
        let b = self.fmt.ty.bytes();
        let at = index * self.fmt.pixel_size();
        (0..self.fmt.channels.len())
            .map(|c| {
                let mut word = [0u8; 4];
                word[..b].copy_from_slice(&self.data[at + c * b..at + (c + 1) * b]);
                u32::from_le_bytes(word)
            })
            .collect()
    }
    /// What reading pixel `index` returns (bits of the four lanes).
    fn texel(&self, index: usize) -> [u32; 4] {
        swizzle(self.fmt, &self.raw(index).iter().map(|&r| decode(self.fmt.ty, r)).collect::<Vec<_>>())
    }
    /// The border colour of `CLK_ADDRESS_CLAMP`: transparent black, opaque without alpha.
    fn border(&self) -> [u32; 4] {
        [0, 0, 0, if self.fmt.has_alpha() { 0 } else { self.fmt.ty.ret().one() }]
    }
    /// A description of the stored channels, for failure reports.
    fn dump(&self) -> String {
        let mut out = format!(
            "{} {}/{} size {:?} layers {}:",
            kind_name(self.kind),
            self.fmt.order,
            self.fmt.ty.name(),
            self.size,
            self.layers
        );
        for i in 0..self.pixels() {
            let raw: Vec<String> = self.raw(i).iter().map(|r| format!("{r:#x}")).collect();
            let _ = write!(out, "{}[{}]", if i % 8 == 0 { "\n      " } else { " " }, raw.join(" "));
        }
        out
    }
}

/// Stored channel values (bits as read) placed into (r, g, b, a): missing colour channels 0,
/// missing alpha 1.
fn swizzle(fmt: Fmt, stored: &[u32]) -> [u32; 4] {
    let ret = fmt.ty.ret();
    let mut out = [0, 0, 0, ret.one()];
    for (channel, &v) in fmt.channels.chars().zip(stored) {
        match channel {
            'r' => out[0] = v,
            'g' => out[1] = v,
            'b' => out[2] = v,
            'a' => out[3] = v,
            'i' => out = [v; 4],
            _ => out[..3].fill(v),
        }
    }
    out
}

/// The stored channels of a written value (bits of four lanes): intensity and luminance store
/// the red component.
fn unswizzle(fmt: Fmt, value: [u32; 4]) -> Vec<u32> {
    fmt.channels
        .chars()
        .map(|channel| {
            let lane = match channel {
                'g' => 1,
                'b' => 2,
                'a' => 3,
                _ => 0,
            };
            encode(fmt.ty, value[lane])
        })
        .collect()
}

fn kind_name(kind: ImageKind) -> &'static str {
    match kind {
        ImageKind::D1 => "image1d",
        ImageKind::D1Buffer => "image1d_buffer",
        ImageKind::D1Array => "image1d_array",
        ImageKind::D2 => "image2d",
        ImageKind::D2Array => "image2d_array",
        ImageKind::D3 => "image3d",
    }
}

/// How float results are compared (with pocl and with the model). Integers are always exact.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Cmp {
    /// The same bits; any NaN equals any NaN.
    Exact,
    /// Within this many ulp (NaN equals NaN). Reads of normalized integers: the specification
    /// allows 1.5 ulp (OpenCL C 8.3.1.1); pocl multiplies by the reciprocal of the maximum, the
    /// model divides, so they may be 2 ulp apart.
    Ulp(u64),
    /// Within this absolute difference (NaN equals NaN): linear filtering.
    Abs(f64),
}

impl Cmp {
    fn same(self, ret: Ret, a: u32, b: u32) -> bool {
        if ret != Ret::F {
            return a == b;
        }
        let (x, y) = (f32::from_bits(a), f32::from_bits(b));
        match self {
            Cmp::Exact => a == b || (x.is_nan() && y.is_nan()),
            Cmp::Ulp(n) => ulp_apart(u64::from(a), u64::from(b), 32).is_some_and(|d| d <= n),
            Cmp::Abs(t) => (x.is_nan() && y.is_nan()) || (f64::from(x) - f64::from(y)).abs() <= t,
        }
    }
}

/// One argument of a generated kernel, with what the specification says it holds after the run.
#[derive(Clone, Debug)]
enum Arg {
    /// An image and its expected bytes afterwards (its own bytes when the kernel only reads it).
    Image { img: Img, expect: Vec<u8> },
    /// A sampler argument: its `CLK_*` bits.
    Sampler(u32),
    /// An input buffer.
    Input(Vec<u8>),
    /// An output buffer of `lanes` values of `ret` per work-item (bits), and the expected values.
    Results { ret: Ret, lanes: usize, expect: Vec<u32> },
}

/// One generated kernel and its launch.
struct Case {
    name: String,
    /// Program-scope declarations and the kernel.
    source: String,
    args: Vec<Arg>,
    items: usize,
    /// What each work-item reads (coordinates, values), for failure reports.
    inputs: Vec<String>,
    /// The float array-layer coordinate each work-item samples at, if any.
    layer_coords: Vec<Option<f32>>,
    cmp: Cmp,
    /// Whether pocl supports every format the case uses (else: model only).
    on_pocl: bool,
}

impl Case {
    fn launch(&self) -> Launch {
        let mut buffer = 0;
        let args = self
            .args
            .iter()
            .map(|a| match a {
                Arg::Sampler(bits) => ArgValue::Sampler(*bits),
                Arg::Image { img, .. } => {
                    buffer += 1;
                    ArgValue::Image { buffer: buffer - 1, desc: img.desc() }
                }
                Arg::Input(_) | Arg::Results { .. } => {
                    buffer += 1;
                    ArgValue::Buffer(buffer - 1)
                }
            })
            .collect();
        let local = (1..=16).rev().find(|l| self.items.is_multiple_of(*l)).unwrap_or(1);
        Launch {
            kernel: self.name.clone(),
            work_dim: 1,
            global_offset: [0; 3],
            global_size: [self.items as u64, 1, 1],
            local_size: [local as u64, 1, 1],
            args,
        }
    }
    fn buffers(&self) -> Vec<Vec<u8>> {
        self.args
            .iter()
            .filter_map(|a| match a {
                Arg::Sampler(_) => None,
                Arg::Image { img, .. } => Some(img.data.clone()),
                Arg::Input(bytes) => Some(bytes.clone()),
                // A pattern no result has, so a missing store shows.
                Arg::Results { lanes, .. } => Some(vec![0xa5; self.items * lanes * 4]),
            })
            .collect()
    }
    fn describe(&self, item: usize) -> String {
        self.inputs.get(item).cloned().unwrap_or_default()
    }
}

/// What one case produced: (buffer, element, lane) differences, as report lines.
#[derive(Default)]
struct Outcome {
    failures: Vec<String>,
    /// Where pocl departs from the model in a listed way: the first few values, the reasons and
    /// how many values.
    deviations: Vec<String>,
    reasons: Vec<&'static str>,
    deviating: usize,
}

/// Why pocl's value for work-item `item` of `case` (None: an image's value) may depart from the
/// specification's, if it may.
fn deviation(case: &Case, item: Option<usize>) -> Option<&'static str> {
    POCL_DEVIATIONS.iter().find(|d| glob(d.cases, &case.name) && (d.applies)(case, item)).map(|d| d.why)
}

/// `*` matches any run of characters (and nothing else is special).
fn glob(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, tail)) => {
            text.starts_with(head) && (0..=text.len() - head.len()).any(|i| glob(tail, &text[head.len() + i..]))
        }
    }
}

/// One value after a run: what it is (for reports), which work-item it belongs to (None: an
/// image's value), how it is typed and compared, and the three answers.
struct Value {
    what: String,
    item: Option<usize>,
    ret: Ret,
    cmp: Cmp,
    pocl: Option<u32>,
    emu: u32,
    spec: u32,
}

/// Compares one value three ways: the emulator must give the specification's answer, and pocl's
/// unless it departs from the specification in a listed way.
fn compare_value(case: &Case, v: Value, out: &mut Outcome) {
    let Value { what, item, ret, cmp, pocl, emu, spec } = v;
    let show = |v: Option<u32>| v.map_or("-".to_string(), |v| ret.format(v));
    let line = format!("{what}: pocl {}, emulator {}, specification {}", show(pocl), show(Some(emu)), show(Some(spec)));
    if !cmp.same(ret, emu, spec) {
        out.failures.push(format!("{line}  <- the emulator departs from the specification"));
    } else if pocl.is_some_and(|p| !cmp.same(ret, p, spec)) {
        match deviation(case, item) {
            Some(why) => {
                if !out.reasons.contains(&why) {
                    out.reasons.push(why);
                }
                out.deviating += 1;
                if out.deviations.len() < 2 {
                    out.deviations.push(line);
                }
            }
            None => {
                out.failures.push(format!("{line}  <- pocl departs from the specification (not in POCL_DEVIATIONS)"))
            }
        }
    } else if pocl.is_some_and(|p| !cmp.same(ret, p, emu)) {
        out.failures.push(format!("{line}  <- the emulator and pocl differ"));
    }
}

/// Checks the buffers after a run against pocl's (when it ran) and the model.
fn check(case: &Case, pocl: Option<&[Vec<u8>]>, emu: &[Vec<u8>]) -> Outcome {
    let mut out = Outcome::default();
    let mut buffer = 0;
    let word = |b: &[u8], i: usize, size: usize| {
        let mut w = [0u8; 4];
        w[..size].copy_from_slice(&b[i * size..(i + 1) * size]);
        u32::from_le_bytes(w)
    };
    for (index, arg) in case.args.iter().enumerate() {
        match arg {
            Arg::Sampler(_) => continue,
            Arg::Input(_) => {}
            Arg::Results { ret, lanes, expect } => {
                for (k, &spec) in expect.iter().enumerate() {
                    let (item, lane) = (k / lanes, k % lanes);
                    let value = Value {
                        what: format!("argument {index}, work-item {item} ({}), lane {lane}", case.describe(item)),
                        item: Some(item),
                        ret: *ret,
                        cmp: case.cmp,
                        pocl: pocl.map(|p| word(&p[buffer], k, 4)),
                        emu: word(&emu[buffer], k, 4),
                        spec,
                    };
                    compare_value(case, value, &mut out);
                }
            }
            Arg::Image { img, expect } => {
                let (size, channels) = (img.fmt.ty.bytes(), img.fmt.channels.len());
                for k in 0..expect.len() / size {
                    let (pixel, channel) = (k / channels, k % channels);
                    let what =
                        format!("argument {index} ({}), pixel {pixel}, stored channel {channel}", kind_name(img.kind));
                    let p = pocl.map(|p| word(&p[buffer], k, size));
                    let (e, s) = (word(&emu[buffer], k, size), word(expect, k, size));
                    // Half channels compare as their float values, exactly (NaN equals NaN).
                    let (ret, pocl, emu, spec) = match img.fmt.ty {
                        Half => {
                            let f = |h: u32| half_to_f32(h as u16).to_bits();
                            (Ret::F, p.map(f), f(e), f(s))
                        }
                        Float => (Ret::F, p, e, s),
                        _ => (Ret::U, p, e, s),
                    };
                    compare_value(case, Value { what, item: None, ret, cmp: Cmp::Exact, pocl, emu, spec }, &mut out);
                }
            }
        }
        buffer += 1;
    }
    if out.deviating > out.deviations.len() {
        out.deviations.push(format!("... {} values where pocl departs from the specification in all", out.deviating));
    }
    out
}

/// Runs every case in the emulator and (where it supports the formats) on pocl, one program per
/// side for all cases, and panics with every failure.
fn sweep(group: &str, options: &str, cases: Vec<Case>) {
    let start = Instant::now();
    let path = Path::new("images.cl");
    let all: String = cases.iter().map(|c| c.source.as_str()).collect::<Vec<_>>().join("\n");
    let on_pocl: String = cases.iter().filter(|c| c.on_pocl).map(|c| c.source.as_str()).collect::<Vec<_>>().join("\n");
    let batch = Program::from_source(&all, path, options);
    let pocl_batch = PoclProgram::build(&on_pocl, options);
    let mut failures = Vec::new();
    let mut deviations = Vec::new();
    let mut model_only = 0;
    for case in &cases {
        let fail = |failures: &mut Vec<String>, msg: String| {
            failures.push(format!(
                "{}: {msg}\n  kernel:\n{}\n  images:{}",
                case.name,
                indent(&case.source),
                images(case)
            ))
        };
        let launch = case.launch();
        let buffers = case.buffers();
        let pocl = if case.on_pocl {
            let own;
            let program = match &pocl_batch {
                Ok(p) => p,
                Err(_) => {
                    own = PoclProgram::build(&case.source, options);
                    match &own {
                        Ok(p) => p,
                        Err(e) => {
                            fail(&mut failures, format!("pocl cannot build it: {e}"));
                            continue;
                        }
                    }
                }
            };
            match program.run(&launch, &buffers) {
                Ok(b) => Some(b),
                Err(e) => {
                    fail(&mut failures, format!("pocl cannot run it: {e}"));
                    continue;
                }
            }
        } else {
            model_only += 1;
            None
        };
        let own;
        let program = match &batch {
            Ok(p) => p,
            Err(_) => {
                own = Program::from_source(&case.source, path, options);
                match &own {
                    Ok(p) => p,
                    Err(e) => {
                        fail(&mut failures, format!("emulator build failed: {e}"));
                        continue;
                    }
                }
            }
        };
        let mut got = buffers.clone();
        match clrace::run(program, &launch, &mut got) {
            Ok(outcome) if !outcome.findings.is_empty() => {
                let listed: Vec<String> = outcome.findings.iter().take(4).map(|f| format!("{f:?}")).collect();
                fail(&mut failures, format!("unexpected emulator findings:\n    {}", listed.join("\n    ")));
                continue;
            }
            Ok(_) => {}
            Err(e) => {
                fail(&mut failures, format!("emulator run failed: {e}"));
                continue;
            }
        }
        let outcome = check(case, pocl.as_deref(), &got);
        if !outcome.failures.is_empty() {
            let shown: Vec<&String> = outcome.failures.iter().take(100000).collect();
            let more = outcome.failures.len().saturating_sub(shown.len());
            let lines: Vec<String> = shown.iter().map(|l| format!("    {l}")).collect();
            let tail = if more > 0 { format!("\n    ... and {more} more") } else { String::new() };
            fail(&mut failures, format!("{} differences:\n{}{tail}", outcome.failures.len(), lines.join("\n")));
        }
        if !outcome.deviations.is_empty() {
            let why = outcome.reasons.join("; ");
            deviations.push(format!("{} ({why}):\n    {}", case.name, outcome.deviations.join("\n    ")));
        }
    }
    eprintln!(
        "{group}: {} kernels ({} checked against the specification only), {} with listed pocl deviations, {} \
         failures, {:.1?}",
        cases.len(),
        model_only,
        deviations.len(),
        failures.len(),
        start.elapsed()
    );
    for d in &deviations {
        eprintln!("  pocl deviation: {d}");
    }
    if !failures.is_empty() {
        panic!("{group}: {} failing kernels:\n{}", failures.len(), failures.join("\n\n"));
    }
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
}

fn images(case: &Case) -> String {
    let mut out = String::new();
    for (i, arg) in case.args.iter().enumerate() {
        if let Arg::Image { img, .. } = arg {
            let _ = write!(out, "\n    argument {i}: {}", img.dump());
        }
    }
    out
}

/// Little-endian bytes of 32-bit words.
fn words(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// The formats pocl supports for 2D images, and whether `fmt` is one of them.
fn pocl_supports(formats: &[(u32, u32)], fmt: Fmt) -> bool {
    formats.contains(&(fmt.code(), fmt.ty.code()))
}

fn pocl_formats(kind: ImageKind) -> Vec<(u32, u32)> {
    pocl_image_formats(kind).unwrap_or_else(|e| panic!("pocl: {e}"))
}

// ---------------------------------------------------------------------------------------------
// Formats: sampler-less reads and writes of every format.

/// Values written as floats: zeros, ones, halves, values past each end (saturation), infinities,
/// NaN, half's rounding boundaries, then pseudo-random ones (away from rounding ties of the
/// normalized types, where the specification allows either neighbour).
fn float_writes(ty: Ty, count: usize, rng: &mut Rng) -> Vec<u32> {
    let mut v: Vec<f32> = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        0.25,
        0.75,
        2.0,
        -2.0,
        1e10,
        -1e10,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        1.0 / 255.0,
        -1.0 / 127.0,
        1e-30,
    ];
    if ty == Half {
        // 65504 is the largest half; 65520 rounds to infinity; 1 + 2^-11 and 1 + 3 * 2^-11 are
        // ties; 2^-24 is the smallest denormal and 2^-25 a tie with zero.
        v.extend([65504.0, 65519.0, 65520.0, -65520.0, 1.0 + 1.0 / 2048.0, 1.0 + 3.0 / 2048.0, 5.960_464_5e-8]);
        v.extend([2.980_232_2e-8, 1e-5, 100_000.0, 1.0 / 3.0, std::f32::consts::PI]);
    }
    if ty == Float {
        v.extend([f32::MAX, f32::MIN_POSITIVE, f32::from_bits(1), -f32::from_bits(0x0040_0000)]);
    }
    let scale = match ty {
        UnormInt8 => 255.0,
        UnormInt16 => 65535.0,
        SnormInt8 => 127.0,
        SnormInt16 => 32767.0,
        _ => 0.0,
    };
    while v.len() < count {
        let x = rng.range(-1.25, 1.25);
        let scaled = x * scale;
        if scale == 0.0 || (scaled - scaled.floor() - 0.5).abs() > 0.02 {
            v.push(x);
        }
    }
    v.iter().map(|x| x.to_bits()).collect()
}

/// Values written as integers: the edges of every integer type and pseudo-random ones.
fn int_writes(ret: Ret, count: usize, rng: &mut Rng) -> Vec<u32> {
    let mut v: Vec<u32> = match ret {
        Ret::I => [i32::MIN, -65536, -32769, -32768, -32767, -129, -128, -127, -1, 0, 1, 126, 127, 128, 255, 256]
            .into_iter()
            .chain([32767, 32768, 65535, 65536, i32::MAX])
            .map(|x| x as u32)
            .collect(),
        _ => vec![0, 1, 127, 128, 254, 255, 256, 32767, 32768, 65535, 65536, 0x7fff_ffff, 0x8000_0000, u32::MAX],
    };
    while v.len() < count {
        let x = rng.next() as u32;
        v.push(x >> (rng.below(4) * 8));
    }
    v
}

/// Stored values for an image read: the type's edges first, then pseudo-random ones.
fn stored_values(ty: Ty, count: usize, rng: &mut Rng) -> Vec<u32> {
    let mut v = ty.edges();
    while v.len() < count {
        let x = match ty {
            Half => u32::from(f32_to_half(rng.range(-4.0, 4.0))),
            Float => rng.range(-1000.0, 1000.0).to_bits(),
            _ => rng.next() as u32 & ty.mask(),
        };
        v.push(x);
    }
    v
}

/// The coordinate of work-item `i`'s pixel in an image of `kind`, `size` and layers, as an
/// OpenCL C expression over `i` and as (x, y, z or layer).
fn pixel_coord(kind: ImageKind, size: [usize; 3]) -> String {
    let [w, h, _] = size;
    match kind {
        ImageKind::D1 | ImageKind::D1Buffer => "i".into(),
        ImageKind::D1Array => format!("(int2)(i % {w}, i / {w})"),
        ImageKind::D2 => format!("(int2)(i % {w}, i / {w})"),
        ImageKind::D2Array | ImageKind::D3 => format!("(int4)(i % {w}, i / {w} % {h}, i / {}, 0)", w * h),
    }
}

/// Where pixel `i` of an image lies, for reports.
fn pixel_at(img: &Img, i: usize) -> String {
    let [w, h, _] = img.size;
    match img.dims() + usize::from(img.arrayed()) {
        1 => format!("pixel {i}"),
        2 => format!("pixel ({}, {})", i % w, i / w),
        _ => format!("pixel ({}, {}, {})", i % w, i / w % h, i / (w * h)),
    }
}

/// `#pragma` lines a kernel writing to an image of `kind` needs.
fn write_pragma(kind: ImageKind) -> &'static str {
    if kind == ImageKind::D3 { "#pragma OPENCL EXTENSION cl_khr_3d_image_writes : enable\n" } else { "" }
}

/// A kernel that, per pixel of an image of `kind`, reads `src` without a sampler into `out` and
/// writes its value of `values` to the same pixel of `dst` (stored values and written values at
/// the edges of the format's type).
fn read_write_case(prefix: &str, fmt: Fmt, kind: ImageKind, size: [usize; 3], layers: usize, on_pocl: bool) -> Case {
    let mut rng = Rng(u64::from(fmt.code()) << 16 ^ u64::from(fmt.ty.code()) ^ (kind as u64) << 40);
    let items = size.iter().product::<usize>() * layers;
    let lanes = items * 4;
    let ret = fmt.ty.ret();
    let src = Img::new(fmt, kind, size, layers, &stored_values(fmt.ty, lanes, &mut rng));
    let values = match ret {
        Ret::F => float_writes(fmt.ty, lanes, &mut rng),
        _ => int_writes(ret, lanes, &mut rng),
    };
    let dst = Img::new(fmt, kind, size, layers, &[0]);
    let mut dst_expect = Vec::new();
    let mut read_expect = Vec::new();
    let mut inputs = Vec::new();
    for i in 0..items {
        read_expect.extend(src.texel(i));
        let value: [u32; 4] = values[i * 4..i * 4 + 4].try_into().unwrap();
        for raw in unswizzle(fmt, value) {
            dst_expect.extend_from_slice(&raw.to_le_bytes()[..fmt.ty.bytes()]);
        }
        let shown: Vec<String> = value.iter().map(|&v| ret.format(v)).collect();
        inputs.push(format!("{}, stored {:x?}, writes ({})", pixel_at(&src, i), src.raw(i), shown.join(", ")));
    }
    let name = format!("{prefix}{}", fmt.label());
    let (s, v, t) = (ret.suffix(), format!("{}4", ret.scalar()), kind_name(kind));
    let source = format!(
        "{}kernel void {name}(read_only {t}_t src, write_only {t}_t dst, global const {v} *values, global {v} *out)
{{
    int i = get_global_id(0);
    out[i] = read_image{s}(src, {p});
    write_image{s}(dst, {p}, values[i]);
}}
",
        write_pragma(kind),
        p = pixel_coord(kind, size)
    );
    Case {
        name,
        source,
        args: vec![
            Arg::Image { expect: src.data.clone(), img: src },
            Arg::Image { img: dst, expect: dst_expect },
            Arg::Input(words(&values)),
            Arg::Results { ret, lanes: 4, expect: read_expect },
        ],
        items,
        inputs,
        layer_coords: Vec::new(),
        cmp: if fmt.ty.normalized() { Cmp::Ulp(2) } else { Cmp::Exact },
        on_pocl,
    }
}

#[test]
fn formats() {
    let supported = pocl_formats(ImageKind::D2);
    let mut cases = Vec::new();
    let mut skipped = Vec::new();
    for (order, _) in ORDERS {
        for ty in TYPES {
            let fmt = Fmt::new(order, ty);
            if !fmt.valid() {
                continue;
            }
            let on_pocl = pocl_supports(&supported, fmt);
            if !on_pocl {
                skipped.push(format!("{order}/{}", ty.name()));
            }
            cases.push(read_write_case("fmt_", fmt, ImageKind::D2, [8, 2, 1], 1, on_pocl));
        }
    }
    eprintln!("formats pocl does not support (checked against the specification only): {}", skipped.join(" "));
    let extensions = common::pocl_extensions().unwrap_or_else(|e| panic!("pocl: {e}"));
    if extensions.split_whitespace().any(|e| e == "cl_khr_fp16") {
        eprintln!("pocl now has cl_khr_fp16: read_imageh/write_imageh could be compared with it too");
    } else {
        eprintln!("not generated: read_imageh/write_imageh (pocl has no cl_khr_fp16)");
    }
    sweep("formats", "", cases);
}

// ---------------------------------------------------------------------------------------------
// Samplers.

/// The addressing modes, as the kernel-side constants number them (`CLK_ADDRESS_*` = mode << 1).
const ADDRESSING: [&str; 5] = ["none", "clamp_to_edge", "clamp", "repeat", "mirrored_repeat"];
const NONE: u32 = 0;
const CLAMP_TO_EDGE: u32 = 1;
const CLAMP: u32 = 2;
const REPEAT: u32 = 3;
const MIRRORED_REPEAT: u32 = 4;

/// A sampler's modes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Smp {
    normalized: bool,
    addressing: u32,
    linear: bool,
}

impl Smp {
    /// The `CLK_*` bits of the sampler, as an argument carries them.
    fn bits(self) -> u32 {
        u32::from(self.normalized) | self.addressing << 1 | if self.linear { 0x20 } else { 0x10 }
    }
    /// The sampler as an OpenCL C constant expression.
    fn clk(self) -> String {
        format!(
            "CLK_NORMALIZED_COORDS_{} | CLK_ADDRESS_{} | CLK_FILTER_{}",
            if self.normalized { "TRUE" } else { "FALSE" },
            ADDRESSING[self.addressing as usize].to_uppercase(),
            if self.linear { "LINEAR" } else { "NEAREST" }
        )
    }
    fn label(self) -> String {
        format!(
            "{}_{}_{}",
            if self.normalized { "norm" } else { "unnorm" },
            ADDRESSING[self.addressing as usize],
            if self.linear { "linear" } else { "nearest" }
        )
    }
}

/// Every valid sampler: repeat and mirrored repeat need normalized coordinates.
fn all_samplers() -> Vec<Smp> {
    let mut out = Vec::new();
    for normalized in [false, true] {
        for addressing in 0..if normalized { 5 } else { 3 } {
            for linear in [false, true] {
                out.push(Smp { normalized, addressing, linear });
            }
        }
    }
    out
}

/// The texel index along one dimension of `size` texels for an integer index under an addressing
/// mode, or None for the border (`CLK_ADDRESS_CLAMP` outside the image).
/// (`CLK_ADDRESS_NONE` outside the image is undefined; it happens here only for a linear tap of
/// weight 0, which reads the border.)
fn address(i: i64, size: i64, addressing: u32) -> Option<i64> {
    match addressing {
        CLAMP_TO_EDGE => Some(i.clamp(0, size - 1)),
        NONE | CLAMP if !(0..size).contains(&i) => None,
        _ => Some(i),
    }
}

/// The specification's nearest-filter texel index along one dimension (OpenCL C 8.2), in single
/// precision as written there.
fn nearest_index(s: f32, size: i64, smp: Smp) -> Option<i64> {
    let w = size as f32;
    match smp.addressing {
        REPEAT => {
            let i = ((s - s.floor()) * w).floor() as i64;
            Some(if i > size - 1 { i - size } else { i })
        }
        MIRRORED_REPEAT => {
            let mirrored = (s - 2.0 * (0.5 * s).round_ties_even()).abs();
            Some(((mirrored * w).floor() as i64).min(size - 1))
        }
        _ => address((if smp.normalized { s * w } else { s }).floor() as i64, size, smp.addressing),
    }
}

/// The specification's linear-filter taps along one dimension: the two indices (None for the
/// border) and the weight of the second.
fn linear_taps(s: f32, size: i64, smp: Smp) -> (Option<i64>, Option<i64>, f32) {
    let w = size as f32;
    let frac = |x: f32| x - x.floor();
    match smp.addressing {
        REPEAT => {
            let u = (s - s.floor()) * w;
            let i0 = (u - 0.5).floor() as i64;
            let i1 = i0 + 1;
            let i0 = if i0 < 0 { i0 + size } else { i0 };
            let i1 = if i1 > size - 1 { i1 - size } else { i1 };
            (Some(i0), Some(i1), frac(u - 0.5))
        }
        MIRRORED_REPEAT => {
            let u = (s - 2.0 * (0.5 * s).round_ties_even()).abs() * w;
            let i0 = (u - 0.5).floor() as i64;
            (Some(i0.max(0)), Some((i0 + 1).min(size - 1)), frac(u - 0.5))
        }
        _ => {
            let u = if smp.normalized { s * w } else { s };
            let i0 = (u - 0.5).floor() as i64;
            (address(i0, size, smp.addressing), address(i0 + 1, size, smp.addressing), frac(u - 0.5))
        }
    }
}

/// What a sampled read of `img` at float coordinates `c` returns, by the specification: the
/// array layer is `clamp(rint(c[layer]), 0, layers - 1)`; nearest filtering returns one texel,
/// linear filtering blends 2, 4 or 8 (the border colour for taps outside under
/// `CLK_ADDRESS_CLAMP`), computed here in double precision.
fn sample(img: &Img, smp: Smp, c: [f32; 4]) -> [u32; 4] {
    let dims = img.dims();
    let layer =
        if img.arrayed() { (c[dims].round_ties_even() as i64).clamp(0, img.layers as i64 - 1) as usize } else { 0 };
    let fetch = |p: [Option<i64>; 3]| -> [u32; 4] {
        match p {
            [Some(x), Some(y), Some(z)] => img.texel(img.index([x as usize, y as usize, z as usize], layer)),
            _ => img.border(),
        }
    };
    if !smp.linear || img.fmt.ty.ret() != Ret::F {
        let mut p = [Some(0); 3];
        for d in 0..dims {
            p[d] = nearest_index(c[d], img.size[d] as i64, smp);
        }
        return fetch(p);
    }
    let mut taps = [[Some(0); 3]; 2];
    let mut weights = [[1.0f64, 0.0]; 3];
    for d in 0..dims {
        let (i0, i1, a) = linear_taps(c[d], img.size[d] as i64, smp);
        taps[0][d] = i0;
        taps[1][d] = i1;
        weights[d] = [1.0 - f64::from(a), f64::from(a)];
    }
    let mut sum = [0f64; 4];
    for corner in 0..1 << dims {
        let p = [0, 1, 2].map(|d| taps[(corner >> d) & 1][d]);
        let weight: f64 = (0..3).map(|d| weights[d][(corner >> d) & 1]).product();
        let t = fetch(p);
        for lane in 0..4 {
            sum[lane] += weight * f64::from(f32::from_bits(t[lane]));
        }
    }
    sum.map(|v| (v as f32).to_bits())
}

/// What a sampled read at integer coordinates returns (unnormalized coordinates, nearest
/// filtering): the addressing mode applies to the integers, the layer is used as given.
fn sample_int(img: &Img, smp: Smp, c: [i32; 4]) -> [u32; 4] {
    let dims = img.dims();
    let layer = if img.arrayed() { c[dims] as usize } else { 0 };
    let mut p = [0usize; 3];
    for d in 0..dims {
        match address(i64::from(c[d]), img.size[d] as i64, smp.addressing) {
            Some(i) => p[d] = i as usize,
            None => return img.border(),
        }
    }
    img.texel(img.index(p, layer))
}

/// Coordinates along one dimension of `size` texels for a sampler: texel centres and
/// boundaries, the edges and (unless the mode is `none`) points outside; normalized for
/// normalized samplers (sizes are powers of two, so boundaries stay exact), with points several
/// image sizes away for repeat and mirrored repeat. `none` keeps every tap inside the image.
fn axis_coords(size: usize, smp: Smp) -> Vec<f32> {
    let w = size as f32;
    let unnormalized: Vec<f32> = match (smp.addressing, smp.linear) {
        (NONE, false) => vec![0.0, 0.25, 0.5, 0.999, 1.0, 1.5, w / 2.0 + 0.3, w - 1.0, w - 0.5, w - 0.001],
        (NONE, true) => vec![0.5, 0.75, 1.0, 1.25, 1.5, 2.0, w - 1.5, w - 1.0, w - 0.75, w - 0.5],
        _ => vec![
            -2.75,
            -1.0,
            -0.5,
            -0.25,
            0.0,
            0.25,
            0.5,
            0.75,
            1.0,
            1.5,
            w / 2.0,
            w - 1.0,
            w - 0.5,
            w - 0.25,
            w,
            w + 0.5,
            w + 1.75,
        ],
    };
    if !smp.normalized {
        return unnormalized;
    }
    let mut v: Vec<f32> = unnormalized.iter().map(|u| u / w).collect();
    if matches!(smp.addressing, REPEAT | MIRRORED_REPEAT) {
        // -1e-9 - floor(-1e-9) rounds to 1.0: the texel index comes out as `size` and must wrap.
        v.extend([-2.3, -1.5, -1.0, -0.6, -1e-9, 1.2, 1.5, 2.0, 2.6, 3.0 + 0.5 / w]);
    }
    v
}

/// Array layer coordinates: in range, on rounding ties (rint rounds them to even), outside.
const LAYER_COORDS: [f32; 13] = [-1.0, -0.5, 0.0, 0.4, 0.5, 0.6, 1.0, 1.49, 1.5, 2.5, 2.6, 3.0, 9.0];

/// At most this many work-items per sampler kernel: larger coordinate products are sampled.
const MAX_ITEMS: usize = 384;

/// Every combination of one value per axis, or `MAX_ITEMS` pseudo-random ones when there are
/// more.
fn combine<T: Copy + Default>(axes: &[Vec<T>], rng: &mut Rng) -> Vec<[T; 4]> {
    let total: usize = axes.iter().map(Vec::len).product();
    let pick = |k: usize, rng: &mut Rng| {
        let mut c = [T::default(); 4];
        let mut rest = k;
        for (d, axis) in axes.iter().enumerate() {
            c[d] = if total <= MAX_ITEMS { axis[rest % axis.len()] } else { axis[rng.below(axis.len())] };
            rest /= axis.len();
        }
        c
    };
    (0..total.min(MAX_ITEMS)).map(|k| pick(k, rng)).collect()
}

/// The image each kind is sampled from: a different format per kind, values in [-1, 1]; sizes
/// are powers of two.
fn sampled_image(kind: ImageKind, rng: &mut Rng) -> Img {
    let (fmt, size, layers) = match kind {
        ImageKind::D1 => (Fmt::new("RGBA", SnormInt8), [8, 1, 1], 1),
        ImageKind::D2 => (Fmt::new("RGBA", Float), [8, 4, 1], 1),
        ImageKind::D3 => (Fmt::new("RGBA", Half), [4, 4, 2], 1),
        ImageKind::D1Array => (Fmt::new("R", UnormInt16), [8, 1, 1], 3),
        ImageKind::D2Array => (Fmt::new("BGRA", UnormInt8), [4, 4, 1], 3),
        ImageKind::D1Buffer => unreachable!("image1d_buffer has no sampler"),
    };
    let count = size.iter().product::<usize>() * layers * fmt.channels.len();
    let raw: Vec<u32> = (0..count)
        .map(|_| match fmt.ty {
            Float => rng.range(-1.0, 1.0).to_bits(),
            Half => u32::from(f32_to_half(rng.range(-1.0, 1.0))),
            SnormInt8 => (rng.next() as u8 as i8).max(-127) as u32 & 0xff,
            ty => rng.next() as u32 & ty.mask(),
        })
        .collect();
    Img::new(fmt, kind, size, layers, &raw)
}

/// An integer-format image sampled with nearest filtering.
fn sampled_int_image(kind: ImageKind, rng: &mut Rng) -> Img {
    let (fmt, size, layers) = match kind {
        ImageKind::D2 => (Fmt::new("RGBA", SignedInt16), [8, 4, 1], 1),
        ImageKind::D1Array => (Fmt::new("RGBA", UnsignedInt8), [8, 1, 1], 3),
        _ => (Fmt::new("RGBA", UnsignedInt32), [4, 4, 2], 1),
    };
    let raw = stored_values(fmt.ty, size.iter().product::<usize>() * layers * 4, rng);
    Img::new(fmt, kind, size, layers, &raw)
}

/// How a generated kernel gets its sampler.
#[derive(Clone, Copy, PartialEq, Eq)]
enum SamplerFrom {
    Argument,
    /// A program-scope `constant sampler_t`.
    Constant,
}

/// The coordinate type and swizzle of a kind's read: float or int, 1, 2 or 4 lanes.
fn coord_expr(kind: ImageKind) -> &'static str {
    match kind {
        ImageKind::D1 | ImageKind::D1Buffer => ".x",
        ImageKind::D2 | ImageKind::D1Array => ".xy",
        ImageKind::D3 | ImageKind::D2Array => "",
    }
}

/// A kernel that reads `img` through sampler `smp` at one coordinate per work-item, float
/// coordinates unless `int_coords`.
fn sampler_case(img: &Img, smp: Smp, from: SamplerFrom, int_coords: bool, rng: &mut Rng) -> Case {
    let kind = img.kind;
    let ret = img.fmt.ty.ret();
    let dims = img.dims();
    let constant = if from == SamplerFrom::Constant { "_const" } else { "" };
    let coords = if int_coords { "_intcoord" } else { "" };
    let name = format!("smp_{}_{}_{}{constant}{coords}", &kind_name(kind)[5..], img.fmt.label(), smp.label());
    let (coord_ty, inputs, expect, values): (&str, Vec<String>, Vec<u32>, Vec<u32>);
    let mut layer_coords = Vec::new();
    if int_coords {
        let mut axes: Vec<Vec<i32>> = (0..dims)
            .map(|d| {
                let n = img.size[d] as i32;
                if smp.addressing == NONE { (0..n).collect() } else { vec![-5, -1, 0, 1, n / 2, n - 1, n, n + 3] }
            })
            .collect();
        if img.arrayed() {
            axes.push((0..img.layers as i32).collect());
        }
        let points = combine(&axes, rng);
        coord_ty = "int4";
        inputs = points.iter().map(|c| format!("coordinates {:?}", &c[..axes.len()])).collect();
        expect = points.iter().flat_map(|&c| sample_int(img, smp, c)).collect();
        values = points.iter().flat_map(|c| c.map(|v| v as u32)).collect();
    } else {
        let mut axes: Vec<Vec<f32>> = (0..dims).map(|d| axis_coords(img.size[d], smp)).collect();
        if img.arrayed() {
            axes.push(LAYER_COORDS.to_vec());
        }
        let points = combine(&axes, rng);
        coord_ty = "float4";
        inputs = points.iter().map(|c| format!("coordinates {:?}", &c[..axes.len()])).collect();
        expect = points.iter().flat_map(|&c| sample(img, smp, c)).collect();
        if img.arrayed() {
            layer_coords = points.iter().map(|c| Some(c[dims])).collect();
        }
        values = points.iter().flat_map(|c| c.map(f32::to_bits)).collect();
    }
    let (declaration, parameter) = match from {
        SamplerFrom::Argument => (String::new(), "sampler_t smp, "),
        SamplerFrom::Constant => (format!("constant sampler_t smp_{name} = {};\n", smp.clk()), ""),
    };
    let sampler = if from == SamplerFrom::Constant { format!("smp_{name}") } else { "smp".to_string() };
    let source = format!(
        "{declaration}kernel void {name}(read_only {}_t img, {parameter}global const {coord_ty} *coords,
                         global {}4 *out)
{{
    int i = get_global_id(0);
    out[i] = read_image{}(img, {sampler}, coords[i]{});
}}
",
        kind_name(kind),
        ret.scalar(),
        ret.suffix(),
        coord_expr(kind)
    );
    let mut args = vec![Arg::Image { img: img.clone(), expect: img.data.clone() }];
    if from == SamplerFrom::Argument {
        args.push(Arg::Sampler(smp.bits()));
    }
    args.push(Arg::Input(words(&values)));
    args.push(Arg::Results { ret, lanes: 4, expect });
    let cmp = match (smp.linear && ret == Ret::F, img.fmt.ty.normalized()) {
        (true, _) => Cmp::Abs(LINEAR_TOLERANCE),
        (false, true) => Cmp::Ulp(2),
        (false, false) => Cmp::Exact,
    };
    Case { name, source, args, items: inputs.len(), inputs, layer_coords, cmp, on_pocl: true }
}

/// Every sampler on one kind (sampler arguments), float coordinates; integer coordinates with
/// the modes that allow them; on 2D images every sampler again as a program-scope constant.
fn sampler_cases(kind: ImageKind) -> Vec<Case> {
    let mut rng = Rng(0x5eed ^ kind as u64);
    let img = sampled_image(kind, &mut rng);
    let mut cases = Vec::new();
    for smp in all_samplers() {
        cases.push(sampler_case(&img, smp, SamplerFrom::Argument, false, &mut rng));
        if kind == ImageKind::D2 {
            cases.push(sampler_case(&img, smp, SamplerFrom::Constant, false, &mut rng));
        }
        if !smp.normalized && !smp.linear {
            cases.push(sampler_case(&img, smp, SamplerFrom::Argument, true, &mut rng));
        }
    }
    cases
}

#[test]
fn samplers_1d() {
    sweep("samplers 1d", "", sampler_cases(ImageKind::D1));
}

#[test]
fn samplers_2d() {
    sweep("samplers 2d", "", sampler_cases(ImageKind::D2));
}

#[test]
fn samplers_3d() {
    sweep("samplers 3d", "", sampler_cases(ImageKind::D3));
}

#[test]
fn samplers_1d_array() {
    sweep("samplers 1d array", "", sampler_cases(ImageKind::D1Array));
}

#[test]
fn samplers_2d_array() {
    sweep("samplers 2d array", "", sampler_cases(ImageKind::D2Array));
}

/// Integer formats through samplers (nearest filtering only: linear filtering of integer
/// formats is undefined), float and integer coordinates, with constant samplers on 3D images.
#[test]
fn samplers_integer_formats() {
    let mut rng = Rng(0x1_2345);
    let mut cases = Vec::new();
    for kind in [ImageKind::D2, ImageKind::D1Array, ImageKind::D3] {
        let img = sampled_int_image(kind, &mut rng);
        for smp in all_samplers().into_iter().filter(|s| !s.linear) {
            let from = if kind == ImageKind::D3 { SamplerFrom::Constant } else { SamplerFrom::Argument };
            cases.push(sampler_case(&img, smp, from, false, &mut rng));
            if !smp.normalized {
                cases.push(sampler_case(&img, smp, from, true, &mut rng));
            }
        }
    }
    sweep("samplers on integer formats", "", cases);
}

// ---------------------------------------------------------------------------------------------
// Every kind: reads and writes without a sampler, queries.

/// Sizes of each kind for the reads, writes and queries: (width, height, depth), layers.
fn kind_size(kind: ImageKind) -> ([usize; 3], usize) {
    match kind {
        ImageKind::D1 => ([13, 1, 1], 1),
        ImageKind::D1Buffer => ([21, 1, 1], 1),
        ImageKind::D1Array => ([7, 1, 1], 5),
        ImageKind::D2 => ([9, 6, 1], 1),
        ImageKind::D2Array => ([5, 4, 1], 3),
        ImageKind::D3 => ([6, 5, 3], 1),
    }
}

const ALL_KINDS: [ImageKind; 6] =
    [ImageKind::D1, ImageKind::D1Buffer, ImageKind::D1Array, ImageKind::D2, ImageKind::D2Array, ImageKind::D3];

/// A kernel that writes every size and format query of an image of `kind` (-1 where the kind has
/// no such query), from one work-item; `access` is the image's access qualifier.
fn query_case(fmt: Fmt, kind: ImageKind, access: &str) -> Case {
    let (size, layers) = kind_size(kind);
    let img = Img::new(fmt, kind, size, layers, &[0x11]);
    let t = kind_name(kind);
    let name = format!("query_{}_{access}_{}", &t[5..], fmt.label());
    let has_height = matches!(kind, ImageKind::D2 | ImageKind::D2Array | ImageKind::D3);
    let mut body = String::from("    for (int k = 0; k < 10; k++) out[k] = -1;\n    out[0] = get_image_width(img);\n");
    let mut expect = vec![u32::MAX; 10];
    expect[0] = size[0] as u32;
    if has_height {
        body += "    out[1] = get_image_height(img);\n";
        expect[1] = size[1] as u32;
    }
    if kind == ImageKind::D3 {
        body += "    out[2] = get_image_depth(img);\n    int4 d = get_image_dim(img);\n";
        body += "    out[4] = d.x; out[5] = d.y; out[6] = d.z; out[7] = d.w;\n";
        expect[2] = size[2] as u32;
        expect[4..8].copy_from_slice(&[size[0] as u32, size[1] as u32, size[2] as u32, 0]);
    } else if has_height {
        body += "    int2 d = get_image_dim(img);\n    out[4] = d.x; out[5] = d.y;\n";
        expect[4..6].copy_from_slice(&[size[0] as u32, size[1] as u32]);
    }
    if img.arrayed() {
        body += "    out[3] = (int)get_image_array_size(img);\n";
        expect[3] = layers as u32;
    }
    body += "    out[8] = get_image_channel_order(img);\n    out[9] = get_image_channel_data_type(img);\n";
    expect[8] = fmt.code();
    expect[9] = fmt.ty.code();
    let pragma = if access == "write_only" { write_pragma(kind) } else { "" };
    let source = format!("{pragma}kernel void {name}({access} {t}_t img, global int *out)\n{{\n{body}}}\n");
    Case {
        name,
        source,
        args: vec![Arg::Image { expect: img.data.clone(), img }, Arg::Results { ret: Ret::I, lanes: 10, expect }],
        items: 1,
        inputs: vec!["out[] = width, height, depth, array size, dim.x, .y, .z, .w, order, type".into()],
        layer_coords: Vec::new(),
        cmp: Cmp::Exact,
        on_pocl: true,
    }
}

/// Sampler-less reads and writes on every kind (image1d_buffer included, 3D writes through
/// `cl_khr_3d_image_writes`) in three formats each, and every query on every kind, read-only and
/// write-only.
#[test]
fn kinds() {
    let formats = [
        Fmt::new("RGBA", UnormInt8),
        Fmt::new("R", SignedInt16),
        Fmt::new("RGBA", UnsignedInt32),
        Fmt::new("RGBA", Float),
        Fmt::new("A", UnormInt16),
        Fmt::new("BGRA", SnormInt8),
    ];
    let mut cases = Vec::new();
    for (k, kind) in ALL_KINDS.into_iter().enumerate() {
        let supported = pocl_formats(kind);
        let (size, layers) = kind_size(kind);
        let prefix = format!("rw_{}_", &kind_name(kind)[5..]);
        for j in 0..3 {
            let fmt = formats[(k + j * 2) % formats.len()];
            cases.push(read_write_case(&prefix, fmt, kind, size, layers, pocl_supports(&supported, fmt)));
        }
        for (fmt, access) in [(formats[k], "read_only"), (formats[(k + 1) % formats.len()], "write_only")] {
            let mut case = query_case(fmt, kind, access);
            // pocl 3.1 has no get_image_channel_order/_data_type for image1d_buffer_t: the
            // kernel builds, then aborts the process when it is loaded (undefined symbol).
            case.on_pocl = kind != ImageKind::D1Buffer;
            cases.push(case);
        }
    }
    sweep("kinds", "", cases);
}

// ---------------------------------------------------------------------------------------------
// read_write images (OpenCL C 3.0).

/// A read_write kernel per kind: each work-item reads its pixel, writes it back plus its value
/// of `values` (saturating on the store), then, after an image fence, reads the pixel again.
fn read_write_image_case(fmt: Fmt, kind: ImageKind) -> Case {
    let (size, layers) = kind_size(kind);
    let mut rng = Rng(0x7777 ^ kind as u64);
    let items = size.iter().product::<usize>() * layers;
    let ret = fmt.ty.ret();
    // Stored values and increments whose sums are exact (floats) or saturate on the store
    // (integers): normalized values are whole multiples of the type's step.
    let raw: Vec<u32> = (0..items * 4)
        .map(|_| match fmt.ty {
            Float => ((rng.below(64) as f32 - 32.0) * 0.25).to_bits(),
            Half => u32::from(f32_to_half((rng.below(64) as f32 - 32.0) * 0.125)),
            ty => rng.next() as u32 & ty.mask(),
        })
        .collect();
    let img = Img::new(fmt, kind, size, layers, &raw);
    let values: Vec<u32> = (0..items * 4)
        .map(|_| match fmt.ty {
            UnormInt8 => (rng.below(100) as f32 / 255.0).to_bits(),
            Float | Half => ((rng.below(16) as f32 - 8.0) * 0.5).to_bits(),
            _ => (rng.below(200) as u32).wrapping_sub(if ret == Ret::I { 100 } else { 0 }),
        })
        .collect();
    let mut after = img.clone();
    let mut expect = Vec::new();
    let mut inputs = Vec::new();
    let pixel = fmt.pixel_size();
    for i in 0..items {
        let old = img.texel(i);
        let add: [u32; 4] = values[i * 4..i * 4 + 4].try_into().unwrap();
        let new: [u32; 4] = std::array::from_fn(|c| match ret {
            Ret::F => (f32::from_bits(old[c]) + f32::from_bits(add[c])).to_bits(),
            _ => old[c].wrapping_add(add[c]),
        });
        let stored: Vec<u8> =
            unswizzle(fmt, new).iter().flat_map(|r| r.to_le_bytes()[..fmt.ty.bytes()].to_vec()).collect();
        after.data[i * pixel..(i + 1) * pixel].copy_from_slice(&stored);
        expect.extend(after.texel(i));
        let shown: Vec<String> = add.iter().map(|&v| ret.format(v)).collect();
        inputs.push(format!("{}, stored {:x?}, adds ({})", pixel_at(&img, i), img.raw(i), shown.join(", ")));
    }
    let t = kind_name(kind);
    let name = format!("rwimg_{}_{}", &t[5..], fmt.label());
    let (s, v, p) = (ret.suffix(), format!("{}4", ret.scalar()), pixel_coord(kind, size));
    let source = format!(
        "kernel void {name}(read_write {t}_t img, global const {v} *values, global {v} *out)
{{
    int i = get_global_id(0);
    {v} old = read_image{s}(img, {p});
    write_image{s}(img, {p}, old + values[i]);
    atomic_work_item_fence(CLK_IMAGE_MEM_FENCE, memory_order_acq_rel, memory_scope_work_item);
    out[i] = read_image{s}(img, {p});
}}
"
    );
    Case {
        name,
        source,
        args: vec![
            Arg::Image { img, expect: after.data.clone() },
            Arg::Input(words(&values)),
            Arg::Results { ret, lanes: 4, expect },
        ],
        items,
        inputs,
        layer_coords: Vec::new(),
        cmp: if fmt.ty.normalized() { Cmp::Ulp(2) } else { Cmp::Exact },
        on_pocl: true,
    }
}

/// read_write images of every kind (OpenCL C 3.0 with `__opencl_c_read_write_images`).
#[test]
fn read_write_images() {
    let cases = vec![
        read_write_image_case(Fmt::new("RGBA", Float), ImageKind::D1),
        read_write_image_case(Fmt::new("RGBA", UnsignedInt32), ImageKind::D1Buffer),
        read_write_image_case(Fmt::new("RGBA", UnormInt8), ImageKind::D1Array),
        read_write_image_case(Fmt::new("RGBA", Half), ImageKind::D2),
        read_write_image_case(Fmt::new("RGBA", SignedInt16), ImageKind::D2Array),
        read_write_image_case(Fmt::new("BGRA", UnsignedInt8), ImageKind::D3),
    ];
    sweep("read_write images", "-cl-std=CL3.0", cases);
}
