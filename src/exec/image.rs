//! Images and samplers: how an image is laid out, how texels convert between storage and the
//! values kernels see, and how a sampler turns coordinates into texels (addressing, nearest and
//! linear filtering), following the OpenCL C specification's image chapter.
//!
//! An image lives in one global allocation, packed: rows of `width` pixels, `height` rows per
//! slice, then slices (3D depth or array layers). Its register value is the address of that
//! allocation; its [`ImageDesc`] sits beside the allocation in [`super::memory::GlobalMemory`].
//! Every texel read or written goes through a callback with its byte offset, so the interpreter
//! checks and reports it like any other access.
//!
//! The sampler bit field and the texel types are part of the value model and live in
//! [`crate::ir::value`]; they are re-exported here for the code that still names them here.

pub use crate::ir::value::{Addressing, Sampler, TexelType};

/// The geometry of an image type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ImageKind {
    D1,
    D1Buffer,
    D1Array,
    D2,
    D2Array,
    D3,
}

/// An image: kind, format (OpenCL `cl_channel_order` and `cl_channel_type` values) and size.
/// Unused dimensions are 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ImageDesc {
    pub kind: ImageKind,
    pub order: u32,
    pub data_type: u32,
    pub width: u64,
    pub height: u64,
    pub depth: u64,
    pub array_size: u64,
}

/// One stored channel of a channel order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Channel {
    R,
    G,
    B,
    A,
    Intensity,
    Luminance,
}

/// Channel orders (name, `cl_channel_order`, stored channels in memory order).
const ORDERS: &[(&str, u32, &[Channel])] = {
    use Channel::*;
    &[
        ("R", 0x10B0, &[R]),
        ("A", 0x10B1, &[A]),
        ("RG", 0x10B2, &[R, G]),
        ("RA", 0x10B3, &[R, A]),
        ("RGBA", 0x10B5, &[R, G, B, A]),
        ("BGRA", 0x10B6, &[B, G, R, A]),
        ("ARGB", 0x10B7, &[A, R, G, B]),
        ("INTENSITY", 0x10B8, &[Intensity]),
        ("LUMINANCE", 0x10B9, &[Luminance]),
        ("ABGR", 0x10C3, &[A, B, G, R]),
    ]
};

/// How a channel is stored: normalized or plain integers of a width in bits, half or float.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    Snorm(u8),
    Unorm(u8),
    Signed(u8),
    Unsigned(u8),
    Half,
    Float,
}

/// Channel data types (name, `cl_channel_type`, storage).
const TYPES: &[(&str, u32, Storage)] = &[
    ("SNORM_INT8", 0x10D0, Storage::Snorm(8)),
    ("SNORM_INT16", 0x10D1, Storage::Snorm(16)),
    ("UNORM_INT8", 0x10D2, Storage::Unorm(8)),
    ("UNORM_INT16", 0x10D3, Storage::Unorm(16)),
    ("SIGNED_INT8", 0x10D7, Storage::Signed(8)),
    ("SIGNED_INT16", 0x10D8, Storage::Signed(16)),
    ("SIGNED_INT32", 0x10D9, Storage::Signed(32)),
    ("UNSIGNED_INT8", 0x10DA, Storage::Unsigned(8)),
    ("UNSIGNED_INT16", 0x10DB, Storage::Unsigned(16)),
    ("UNSIGNED_INT32", 0x10DC, Storage::Unsigned(32)),
    ("HALF_FLOAT", 0x10DD, Storage::Half),
    ("FLOAT", 0x10DE, Storage::Float),
];

/// The first `cl_channel_order` and `cl_channel_type` values: what `get_image_channel_order` and
/// `get_image_channel_data_type` subtract to get SPIR-V's numbering.
pub const ORDER_BASE: u32 = 0x10B0;
pub const TYPE_BASE: u32 = 0x10D0;

/// The `cl_channel_order` named `name` (`RGBA`, `BGRA`, ...; case-insensitive).
pub fn order_named(name: &str) -> Option<u32> {
    ORDERS.iter().find(|o| o.0.eq_ignore_ascii_case(name)).map(|o| o.1)
}

/// The `cl_channel_type` named `name` (`UNORM_INT8`, `FLOAT`, ...; case-insensitive).
pub fn type_named(name: &str) -> Option<u32> {
    TYPES.iter().find(|t| t.0.eq_ignore_ascii_case(name)).map(|t| t.1)
}

/// How channels of `cl_channel_type` `data_type` are stored, if it is a supported type.
pub fn storage_of(data_type: u32) -> Option<Storage> {
    TYPES.iter().find(|t| t.1 == data_type).map(|t| t.2)
}

/// The name of a channel data type, or its number in hex.
pub fn type_name(data_type: u32) -> String {
    TYPES.iter().find(|t| t.1 == data_type).map_or_else(|| format!("{data_type:#x}"), |t| t.0.to_string())
}

/// The name of a channel order, or its number in hex.
pub fn order_name(order: u32) -> String {
    ORDERS.iter().find(|o| o.1 == order).map_or_else(|| format!("{order:#x}"), |o| o.0.to_string())
}

impl ImageDesc {
    fn channels(&self) -> &'static [Channel] {
        ORDERS.iter().find(|o| o.1 == self.order).map_or(&[], |o| o.2)
    }

    fn storage(&self) -> Option<Storage> {
        storage_of(self.data_type)
    }

    /// Why the emulator cannot use this image, if it cannot.
    pub fn check(&self) -> Result<(), String> {
        if self.channels().is_empty() {
            return Err(format!("image channel order {} is not supported", order_name(self.order)));
        }
        let Some(storage) = self.storage() else {
            return Err(format!("image channel type {} is not supported", type_name(self.data_type)));
        };
        let only_single = matches!(self.channels()[0], Channel::Intensity | Channel::Luminance);
        let only_8bit = matches!(self.order, 0x10B6 | 0x10B7 | 0x10C3);
        let normalized_or_float = !matches!(storage, Storage::Signed(_) | Storage::Unsigned(_));
        if (only_single && !normalized_or_float) || (only_8bit && storage_bits(storage) != 8) {
            return Err(format!(
                "the image format {}/{} is not a valid OpenCL image format",
                order_name(self.order),
                type_name(self.data_type)
            ));
        }
        if self.width == 0 || self.height == 0 || self.depth == 0 || self.array_size == 0 {
            return Err("an image dimension is 0".into());
        }
        let sizes = [self.width, self.height, self.depth, self.array_size];
        if sizes.iter().try_fold(self.pixel_size(), |bytes, &n| bytes.checked_mul(n)).is_none_or(|b| b > 1 << 40) {
            return Err("the image is larger than 1 TiB".into());
        }
        Ok(())
    }

    /// Bytes per pixel.
    pub fn pixel_size(&self) -> u64 {
        let bits = self.storage().map_or(8, storage_bits);
        self.channels().len() as u64 * (bits as u64 / 8)
    }

    /// Bytes of the whole image, packed.
    pub fn byte_size(&self) -> u64 {
        self.pixel_size() * self.width * self.height * self.depth * self.array_size
    }

    /// Width, height and depth (1 where the kind has no such dimension).
    pub fn extent(&self) -> [u64; 3] {
        [self.width, self.height, self.depth]
    }

    /// How many coordinates address a pixel inside one layer (1, 2 or 3).
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

    /// What a size query (`get_image_dim`, `get_image_width`, ...) returns: the extent of each
    /// dimension, then the array size for image arrays.
    pub fn query_size(&self) -> [u64; 4] {
        let mut out = [0; 4];
        let dims = self.dims();
        out[..dims].copy_from_slice(&self.extent()[..dims]);
        if self.arrayed() {
            out[dims] = self.array_size;
        }
        out
    }

    /// The byte offset of pixel `p` (x, y, z) in layer `layer`.
    fn offset(&self, p: [i64; 3], layer: u64) -> u64 {
        let pixel = self.pixel_size();
        let slices = if self.dims() == 3 { p[2] as u64 } else { layer };
        ((slices * self.height + p[1] as u64) * self.width + p[0] as u64) * pixel
    }

    /// The pixel holding byte `offset`: x, y, then z or the array layer.
    pub fn pixel_at(&self, offset: u64) -> [u64; 3] {
        let pixel = offset / self.pixel_size().max(1);
        let (x, row) = (pixel % self.width, pixel / self.width);
        match self.kind {
            ImageKind::D1Array => [x, 0, row],
            _ => [x, row % self.height, row / self.height],
        }
    }

    /// The color outside the image under `CLK_ADDRESS_CLAMP`: transparent black, opaque when the
    /// format has no alpha.
    fn border(&self) -> [f32; 4] {
        let alpha = self.channels().iter().any(|c| matches!(c, Channel::A | Channel::Intensity));
        [0.0, 0.0, 0.0, if alpha { 0.0 } else { 1.0 }]
    }
}

fn storage_bits(s: Storage) -> u8 {
    match s {
        Storage::Snorm(b) | Storage::Unorm(b) | Storage::Signed(b) | Storage::Unsigned(b) => b,
        Storage::Half => 16,
        Storage::Float => 32,
    }
}

/// Coordinates as a kernel passes them: up to four lanes, integer or float.
#[derive(Debug, Clone, Copy)]
pub enum Coord {
    Int([i64; 4]),
    Float([f32; 4]),
}

/// A texel access outside the image: the coordinates as the kernel gave them (x, y, z or layer).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutOfRange {
    pub coord: [i64; 4],
}

/// What a texel holds once decoded: floats for normalized and float formats, 32-bit integers
/// (sign-extended for signed formats) for integer ones.
type Texel = [f32; 4];
type IntTexel = [u32; 4];

/// Reads a texel. `sampler` is None for sampler-less reads. `fetch(offset, bytes)` reads one
/// pixel's bytes (`bytes.len()` = pixel size) at `offset`. Returns the four result lanes as
/// register bits, and the coordinates of an access outside the image, if any (its texel reads as
/// the border color).
pub fn read(
    desc: &ImageDesc,
    sampler: Option<Sampler>,
    coord: Coord,
    texel: TexelType,
    fetch: &mut dyn FnMut(u64, &mut [u8]),
) -> ([u64; 4], Option<OutOfRange>) {
    let dims = desc.dims();
    let mut outside = None;
    let sampler = sampler.unwrap_or(Sampler { normalized: false, addressing: Addressing::None, linear: false });
    let layer = layer_of(desc, coord, &mut outside);
    let floats: [f32; 4] = match coord {
        Coord::Int(c) => c.map(|v| v as f32),
        Coord::Float(c) => c,
    };
    let integer = desc.storage().is_some_and(|s| matches!(s, Storage::Signed(_) | Storage::Unsigned(_)));
    if sampler.linear && !integer {
        let mut taps = [[0i64; 3]; 2];
        let mut weights = [[0f32; 2]; 3];
        for d in 0..3 {
            if d >= dims {
                weights[d] = [1.0, 0.0];
                continue;
            }
            let size = desc.extent()[d] as i64;
            let (i0, i1, a) = linear_taps(floats[d], size, sampler);
            taps[0][d] = i0;
            taps[1][d] = i1;
            weights[d] = [1.0 - a, a];
            if sampler.addressing == Addressing::None
                && !(0.0..=size as f32).contains(&unnormalize(floats[d], size, sampler))
            {
                outside.get_or_insert(OutOfRange { coord: coord_as_int(coord) });
            }
        }
        let mut sum = [0f32; 4];
        for corner in 0..(1 << dims) {
            let p = [0, 1, 2].map(|d| taps[(corner >> d) & 1][d]);
            let w: f32 = (0..3).map(|d| weights[d][(corner >> d) & 1]).product();
            let t = fetch_float(desc, p, layer, fetch);
            for c in 0..4 {
                sum[c] += w * t[c];
            }
        }
        return (float_lanes(sum, texel), outside);
    }
    let mut p = [0i64; 3];
    for d in 0..dims {
        let size = desc.extent()[d] as i64;
        p[d] = match coord {
            Coord::Int(c) if !sampler.normalized => address(c[d], size, sampler.addressing),
            _ => nearest(floats[d], size, sampler),
        };
        if sampler.addressing == Addressing::None && !(0..size).contains(&p[d]) {
            outside.get_or_insert(OutOfRange { coord: coord_as_int(coord) });
        }
    }
    if integer {
        let t = fetch_int(desc, p, layer, fetch);
        (t.map(|v| v as u64), outside)
    } else {
        (float_lanes(fetch_float(desc, p, layer, fetch), texel), outside)
    }
}

/// Writes a texel given as four lanes of register bits. `store(offset, bytes)` writes one
/// pixel. An out-of-range write stores nothing and is returned.
pub fn write(
    desc: &ImageDesc,
    coord: [i64; 4],
    lanes: [u64; 4],
    texel: TexelType,
    store: &mut dyn FnMut(u64, &[u8]),
) -> Option<OutOfRange> {
    let dims = desc.dims();
    let mut outside = None;
    let layer = layer_of(desc, Coord::Int(coord), &mut outside);
    for d in 0..dims {
        if !(0..desc.extent()[d] as i64).contains(&coord[d]) {
            outside = Some(OutOfRange { coord });
        }
    }
    if outside.is_some() {
        return outside;
    }
    // Only the coordinates within a layer address the pixel: for a 1D array the second lane is
    // the layer, not a row.
    let mut p = [0i64; 3];
    p[..dims].copy_from_slice(&coord[..dims]);
    let storage = desc.storage().unwrap_or(Storage::Float);
    let mut bytes = [0u8; 16];
    let width = (storage_bits(storage) / 8) as usize;
    for (k, channel) in desc.channels().iter().enumerate() {
        let c = match channel {
            Channel::R | Channel::Intensity | Channel::Luminance => 0,
            Channel::G => 1,
            Channel::B => 2,
            Channel::A => 3,
        };
        let raw = match (storage, texel) {
            (Storage::Signed(_) | Storage::Unsigned(_), _) => encode_int(storage, lanes[c] as u32),
            (_, TexelType::Half) => encode_float(storage, super::half::to_f32(lanes[c] as u16)),
            (_, TexelType::Float) => encode_float(storage, f32::from_bits(lanes[c] as u32)),
            (_, TexelType::Int) => encode_float(storage, lanes[c] as u32 as i32 as f32),
        };
        bytes[k * width..(k + 1) * width].copy_from_slice(&raw.to_le_bytes()[..width]);
    }
    store(desc.offset(p, layer), &bytes[..desc.pixel_size() as usize]);
    None
}

/// The array layer a coordinate names (0 for images that are not arrays).
fn layer_of(desc: &ImageDesc, coord: Coord, outside: &mut Option<OutOfRange>) -> u64 {
    if !desc.arrayed() {
        return 0;
    }
    let last = desc.array_size as i64 - 1;
    let layer = match coord {
        Coord::Int(c) => {
            if !(0..=last).contains(&c[desc.dims()]) {
                *outside = Some(OutOfRange { coord: c });
            }
            c[desc.dims()]
        }
        Coord::Float(c) => round_even(c[desc.dims()]) as i64,
    };
    layer.clamp(0, last) as u64
}

fn coord_as_int(coord: Coord) -> [i64; 4] {
    match coord {
        Coord::Int(c) => c,
        Coord::Float(c) => c.map(|v| v.floor() as i64),
    }
}

fn round_even(v: f32) -> f32 {
    v.round_ties_even()
}

/// An integer coordinate under an addressing mode; -1 and `size` stand for the border.
fn address(i: i64, size: i64, addressing: Addressing) -> i64 {
    match addressing {
        Addressing::Clamp => i.clamp(-1, size),
        Addressing::None => i,
        _ => i.clamp(0, size - 1),
    }
}

fn unnormalize(s: f32, size: i64, sampler: Sampler) -> f32 {
    if sampler.normalized { s * size as f32 } else { s }
}

/// The texel index nearest-filtering picks along one dimension.
fn nearest(s: f32, size: i64, sampler: Sampler) -> i64 {
    match (sampler.addressing, sampler.normalized) {
        (Addressing::Repeat, true) => {
            let i = ((s - s.floor()) * size as f32).floor() as i64;
            if i > size - 1 { i - size } else { i }
        }
        (Addressing::MirroredRepeat, true) => {
            let mirrored = (s - 2.0 * round_even(0.5 * s)).abs();
            ((mirrored * size as f32).floor() as i64).min(size - 1)
        }
        (addressing, _) => address(unnormalize(s, size, sampler).floor() as i64, size, addressing),
    }
}

/// The two texel indices linear filtering blends along one dimension, and the second's weight.
fn linear_taps(s: f32, size: i64, sampler: Sampler) -> (i64, i64, f32) {
    let frac = |x: f32| x - x.floor();
    match (sampler.addressing, sampler.normalized) {
        (Addressing::Repeat, true) => {
            let u = (s - s.floor()) * size as f32 - 0.5;
            let mut i0 = u.floor() as i64;
            let mut i1 = i0 + 1;
            if i0 < 0 {
                i0 += size;
            }
            if i1 > size - 1 {
                i1 -= size;
            }
            (i0, i1, frac(u))
        }
        (Addressing::MirroredRepeat, true) => {
            let mirrored = (s - 2.0 * round_even(0.5 * s)).abs();
            let u = mirrored * size as f32 - 0.5;
            let i0 = u.floor() as i64;
            (i0.max(0), (i0 + 1).min(size - 1), frac(u))
        }
        (addressing, _) => {
            let u = unnormalize(s, size, sampler) - 0.5;
            let i = u.floor() as i64;
            let edge = if addressing == Addressing::None { Addressing::Clamp } else { addressing };
            (address(i, size, edge), address(i + 1, size, edge), frac(u))
        }
    }
}

/// Whether pixel `p` lies inside the image (else it reads as the border color).
fn inside(desc: &ImageDesc, p: [i64; 3]) -> bool {
    (0..3).all(|d| (0..desc.extent()[d] as i64).contains(&p[d]))
}

/// The stored channel values of pixel `p`, or None outside the image.
fn fetch_raw(desc: &ImageDesc, p: [i64; 3], layer: u64, fetch: &mut dyn FnMut(u64, &mut [u8])) -> Option<[u32; 4]> {
    if !inside(desc, p) {
        return None;
    }
    let mut bytes = [0u8; 16];
    let size = desc.pixel_size() as usize;
    fetch(desc.offset(p, layer), &mut bytes[..size]);
    let width = size / desc.channels().len();
    let mut raw = [0u32; 4];
    for (k, r) in raw.iter_mut().enumerate().take(desc.channels().len()) {
        let mut word = [0u8; 4];
        word[..width].copy_from_slice(&bytes[k * width..(k + 1) * width]);
        *r = u32::from_le_bytes(word);
    }
    Some(raw)
}

/// Places stored channels into (r, g, b, a), with `zero` and `one` for the missing ones.
fn swizzle<T: Copy>(desc: &ImageDesc, stored: [T; 4], zero: T, one: T) -> [T; 4] {
    let mut out = [zero, zero, zero, one];
    for (k, channel) in desc.channels().iter().enumerate() {
        match channel {
            Channel::R => out[0] = stored[k],
            Channel::G => out[1] = stored[k],
            Channel::B => out[2] = stored[k],
            Channel::A => out[3] = stored[k],
            Channel::Intensity => out = [stored[k]; 4],
            Channel::Luminance => out[..3].fill(stored[k]),
        }
    }
    out
}

fn fetch_float(desc: &ImageDesc, p: [i64; 3], layer: u64, fetch: &mut dyn FnMut(u64, &mut [u8])) -> Texel {
    let Some(raw) = fetch_raw(desc, p, layer, fetch) else { return desc.border() };
    let storage = desc.storage().unwrap_or(Storage::Float);
    swizzle(desc, raw.map(|r| decode_float(storage, r)), 0.0, 1.0)
}

fn fetch_int(desc: &ImageDesc, p: [i64; 3], layer: u64, fetch: &mut dyn FnMut(u64, &mut [u8])) -> IntTexel {
    let border = desc.border().map(|v| v as u32);
    let Some(raw) = fetch_raw(desc, p, layer, fetch) else { return border };
    let stored = match desc.storage() {
        Some(Storage::Signed(b)) => raw.map(|r| (((r << (32 - b)) as i32) >> (32 - b)) as u32),
        _ => raw,
    };
    swizzle(desc, stored, 0, 1)
}

/// A stored channel as a float, normalized for the `*NORM*` types.
fn decode_float(storage: Storage, raw: u32) -> f32 {
    match storage {
        Storage::Unorm(8) => (raw as f64 / 255.0) as f32,
        Storage::Unorm(_) => (raw as f64 / 65535.0) as f32,
        Storage::Snorm(8) => ((raw as u8 as i8) as f64 / 127.0).max(-1.0) as f32,
        Storage::Snorm(_) => ((raw as u16 as i16) as f64 / 32767.0).max(-1.0) as f32,
        Storage::Half => super::half::to_f32(raw as u16),
        Storage::Float => f32::from_bits(raw),
        Storage::Signed(b) => (((raw << (32 - b)) as i32) >> (32 - b)) as f32,
        Storage::Unsigned(_) => raw as f32,
    }
}

/// A float converted for storage: scaled, rounded to nearest even and saturated for the
/// normalized types (NaN stores 0).
fn encode_float(storage: Storage, v: f32) -> u32 {
    let scaled = |scale: f32, lo: f32, hi: f32| {
        if v.is_nan() { 0.0 } else { round_even((v * scale).clamp(lo, hi)) }
    };
    match storage {
        Storage::Unorm(8) => scaled(255.0, 0.0, 255.0) as u32,
        Storage::Unorm(_) => scaled(65535.0, 0.0, 65535.0) as u32,
        Storage::Snorm(8) => scaled(127.0, -128.0, 127.0) as i32 as u32 & 0xff,
        Storage::Snorm(_) => scaled(32767.0, -32768.0, 32767.0) as i32 as u32 & 0xffff,
        Storage::Half => super::half::from_f64(v as f64, crate::ir::HalfRound::Rte) as u32,
        Storage::Float => v.to_bits(),
        Storage::Signed(_) | Storage::Unsigned(_) => encode_int(storage, v as i32 as u32),
    }
}

/// An integer converted for storage with saturation (`convert_T_sat`), read as signed for signed
/// formats and unsigned for unsigned ones.
fn encode_int(storage: Storage, v: u32) -> u32 {
    match storage {
        Storage::Signed(32) | Storage::Unsigned(32) => v,
        Storage::Signed(b) => {
            let max = (1i64 << (b - 1)) - 1;
            (v as i32 as i64).clamp(-max - 1, max) as u32 & ((1 << b) - 1)
        }
        Storage::Unsigned(b) => (v as u64).min((1 << b) - 1) as u32,
        _ => v,
    }
}

/// A float texel as register lanes of the kernel's texel type.
fn float_lanes(t: Texel, texel: TexelType) -> [u64; 4] {
    match texel {
        TexelType::Half => t.map(|v| super::half::from_f64(v as f64, crate::ir::HalfRound::Rte) as u64),
        TexelType::Int => t.map(|v| v as i32 as u32 as u64),
        TexelType::Float => t.map(|v| v.to_bits() as u64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(order: &str, ty: &str, kind: ImageKind, w: u64, h: u64) -> ImageDesc {
        let (order, data_type) = (order_named(order).unwrap(), type_named(ty).unwrap());
        ImageDesc { kind, order, data_type, width: w, height: h, depth: 1, array_size: 1 }
    }

    fn run_read(desc: &ImageDesc, data: &[u8], sampler: Option<Sampler>, coord: Coord, t: TexelType) -> [u64; 4] {
        read(desc, sampler, coord, t, &mut |off, out| {
            out.copy_from_slice(&data[off as usize..off as usize + out.len()])
        })
        .0
    }

    #[test]
    fn unorm_bgra_swizzles_and_normalizes() {
        let desc = image("BGRA", "UNORM_INT8", ImageKind::D2, 2, 1);
        let data = [0, 51, 255, 255, 10, 20, 30, 40];
        let out = run_read(&desc, &data, None, Coord::Int([0, 0, 0, 0]), TexelType::Float);
        assert_eq!(out.map(|v| f32::from_bits(v as u32)), [1.0, 0.2, 0.0, 1.0]);
    }

    #[test]
    fn missing_channels_read_zero_and_opaque_alpha() {
        let desc = image("R", "SIGNED_INT16", ImageKind::D1, 1, 1);
        let out = run_read(&desc, &[0xfe, 0xff], None, Coord::Int([0; 4]), TexelType::Int);
        assert_eq!(out, [0xffff_fffe, 0, 0, 1]);
    }

    #[test]
    fn linear_filter_blends_neighbours() {
        let desc = image("R", "FLOAT", ImageKind::D1, 2, 1);
        let data: Vec<u8> = [0f32, 1.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        let s = Sampler { normalized: false, addressing: Addressing::ClampToEdge, linear: true };
        let out = run_read(&desc, &data, Some(s), Coord::Float([1.25, 0.0, 0.0, 0.0]), TexelType::Float);
        assert_eq!(f32::from_bits(out[0] as u32), 0.75);
    }

    #[test]
    fn clamp_reads_border_and_repeat_wraps() {
        let desc = image("RGBA", "UNSIGNED_INT8", ImageKind::D2, 2, 2);
        let data: Vec<u8> = (1..=16).collect();
        let clamp = Sampler { normalized: false, addressing: Addressing::Clamp, linear: false };
        assert_eq!(run_read(&desc, &data, Some(clamp), Coord::Int([5, 0, 0, 0]), TexelType::Int), [0; 4]);
        let repeat = Sampler { normalized: true, addressing: Addressing::Repeat, linear: false };
        let out = run_read(&desc, &data, Some(repeat), Coord::Float([1.25, 0.75, 0.0, 0.0]), TexelType::Int);
        assert_eq!(out, [9, 10, 11, 12]);
    }

    #[test]
    fn writes_saturate_and_report_outside() {
        let desc = image("RG", "UNORM_INT8", ImageKind::D2, 1, 1);
        let mut stored = Vec::new();
        let lanes = [2.0f32, 0.5, 0.0, 0.0].map(|v| v.to_bits() as u64);
        assert!(write(&desc, [0; 4], lanes, TexelType::Float, &mut |_, b| stored = b.to_vec()).is_none());
        assert_eq!(stored, [255, 128]);
        let outside = write(&desc, [1, 0, 0, 0], lanes, TexelType::Float, &mut |_, _| panic!("stored"));
        assert_eq!(outside, Some(OutOfRange { coord: [1, 0, 0, 0] }));
    }

    #[test]
    fn array_writes_address_the_layer_once() {
        let mut desc = image("R", "UNSIGNED_INT8", ImageKind::D1Array, 3, 1);
        desc.array_size = 4;
        let mut offsets = Vec::new();
        for layer in 0..4 {
            assert!(write(&desc, [1, layer, 0, 0], [7; 4], TexelType::Int, &mut |o, _| offsets.push(o)).is_none());
        }
        assert_eq!(offsets, [1, 4, 7, 10]);
        let mut desc = image("RG", "UNSIGNED_INT8", ImageKind::D2Array, 2, 2);
        desc.array_size = 2;
        let mut at = 0;
        assert!(write(&desc, [1, 1, 1, 0], [7; 4], TexelType::Int, &mut |o, _| at = o).is_none());
        assert_eq!(at, 2 * 2 * 2 + 2 * 2 + 2);
    }

    #[test]
    fn sampler_bits_round_trip() {
        let s = Sampler::from_spirv(2, 1, 1);
        assert_eq!(s, Sampler { normalized: true, addressing: Addressing::Clamp, linear: true });
        assert_eq!(Sampler::from_bits(s.bits()), s);
    }
}
