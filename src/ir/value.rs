//! The value model shared by the lowering, the IR and the executor: how register bits encode
//! pointers (tagged addresses), integers of any width, samplers and texel types, and the limit on
//! private memory.
//!
//! Everything here is plain data and pure functions over `u64` register bits. It owns the
//! encoding only: it cannot see allocations, bounds or memory contents (those belong to
//! [`crate::exec::memory`]), nor how an address was computed (the lowering's business).
//!
//! An address is 64 bits. The top two bits name the address space: 0 is no space, so that NULL
//! is the all-zero word; 1 is global or constant memory; 2 local; 3 private. The next 22 bits
//! number an allocation within its space and the low 40 bits are a byte offset into it. Each
//! allocation starts at offset 0, so an offset's alignment is the access's real alignment, and a
//! pointer cast to an integer and back keeps all of it.
//!
//! A pointer converted to an integer (`OpConvertPtrToU`, a cast to `size_t` or `uint`) is not
//! the tagged address itself, whose low bits are only the offset (a buffer would then convert
//! to 0 in 32 bits, NULL's value): [`pointer_to_int`] adds [`POINTER_BIAS`] to a 64-bit one, and
//! packs a 32-bit module's into space, allocation and offset fields of 32 bits. Either way NULL is
//! 0, any other pointer is not, integer arithmetic moves through the offset as pointer
//! arithmetic does, and [`int_to_pointer`] gives the pointer back.

use serde::{Deserialize, Serialize};

/// Where the space field of an address starts.
pub const SPACE_SHIFT: u32 = 62;
/// Where the allocation index of an address starts.
pub const INDEX_SHIFT: u32 = 40;
/// The byte-offset field of an address.
pub const OFFSET_MASK: u64 = (1 << INDEX_SHIFT) - 1;
/// The allocation-index field of an address, once shifted down by [`INDEX_SHIFT`].
pub const INDEX_MASK: u64 = (1 << (SPACE_SHIFT - INDEX_SHIFT)) - 1;

/// Global and constant memory: buffers and program-scope variables.
pub const SPACE_GLOBAL: u64 = 1;
/// A work-group's `__local` memory.
pub const SPACE_LOCAL: u64 = 2;
/// A work-item's private memory (its call frames' variables).
pub const SPACE_PRIVATE: u64 = 3;

/// The private memory (the variables of its call frames) one work-item may have: a larger
/// private variable is refused when the module is lowered, and a work-item whose frames grow
/// past it (a variable in a loop) stops with an error.
pub const MAX_PRIVATE_BYTES: usize = 16 << 20;

/// Builds an address from its space, allocation index and byte offset.
pub const fn address(space: u64, index: u64, offset: u64) -> u64 {
    (space << SPACE_SHIFT) | (index << INDEX_SHIFT) | offset
}

/// What a 64-bit pointer converted to an integer adds to a non-NULL tagged address: non-zero in
/// the low 32 bits (so that `(uint)(size_t)A` is not 0 either), and aligned to 16 MiB so that
/// the integer keeps the offset's alignment.
pub const POINTER_BIAS: u64 = 1 << 24;

/// The fields of a pointer converted to an integer by a module with 32-bit pointers: the space in
/// the top 2 bits, the allocation index (modulo 64) in the next 6, the offset (modulo 16 MiB) in
/// the low 24. A pointer past them does not convert back to itself.
const INT32_INDEX_SHIFT: u32 = 24;
const INT32_SPACE_SHIFT: u32 = 30;

/// The integer a pointer converts to in a module whose pointers are `pointer_bits` wide (32 or
/// 64): 0 for NULL (and NULL plus `k` for `k`); see the module documentation.
#[inline]
pub const fn pointer_to_int(addr: u64, pointer_bits: u8) -> u64 {
    let (space, index, offset) = split(addr);
    if pointer_bits <= 32 {
        let index = index & ((1 << (INT32_SPACE_SHIFT - INT32_INDEX_SHIFT)) - 1);
        (space << INT32_SPACE_SHIFT) | (index << INT32_INDEX_SHIFT) | (offset & ((1 << INT32_INDEX_SHIFT) - 1))
    } else {
        // Branch-free: pointer differences convert both sides.
        addr.wrapping_add(POINTER_BIAS * (space != 0) as u64)
    }
}

/// The pointer an integer converts to: the inverse of [`pointer_to_int`].
#[inline]
pub const fn int_to_pointer(x: u64, pointer_bits: u8) -> u64 {
    if pointer_bits <= 32 {
        let x = x & mask(32);
        let index = (x >> INT32_INDEX_SHIFT) & ((1 << (INT32_SPACE_SHIFT - INT32_INDEX_SHIFT)) - 1);
        address(x >> INT32_SPACE_SHIFT, index, x & ((1 << INT32_INDEX_SHIFT) - 1))
    } else if x >> SPACE_SHIFT == 0 {
        x
    } else {
        x.wrapping_sub(POINTER_BIAS)
    }
}

/// The space, allocation index and offset of an address.
#[inline]
pub const fn split(addr: u64) -> (u64, u64, u64) {
    (addr >> SPACE_SHIFT, (addr >> INDEX_SHIFT) & INDEX_MASK, addr & OFFSET_MASK)
}

/// Reads the low `bits` bits of `value` as a two's complement integer (64 or more: all of it).
#[inline]
pub const fn sign_extend(value: u64, bits: u8) -> i64 {
    extend(value, extend_shift(bits))
}

/// The shift with which [`extend`] sign-extends a `bits`-wide integer held in 64 bits (0 for 64
/// or more): a loop over many values of one width works it out once.
#[inline(always)]
pub const fn extend_shift(bits: u8) -> u32 {
    if bits >= 64 { 0 } else { (64 - bits as u32) & 63 }
}

/// [`sign_extend`] of `value` given `extend_shift(bits)`.
#[inline(always)]
pub const fn extend(value: u64, shift: u32) -> i64 {
    (value.wrapping_shl(shift) as i64).wrapping_shr(shift)
}

/// The low `bits` bits set (64 or more: every bit). Registers hold integers zero-extended from
/// their width, so results are masked with this.
#[inline]
pub const fn mask(bits: u8) -> u64 {
    if bits >= 64 { !0 } else { (1u64 << bits) - 1 }
}

/// The addressing mode of a sampler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Addressing {
    None,
    ClampToEdge,
    Clamp,
    Repeat,
    MirroredRepeat,
}

/// A sampler as kernels see it: the `CLK_*` bit field of a `sampler_t` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sampler {
    pub normalized: bool,
    pub addressing: Addressing,
    pub linear: bool,
}

impl Sampler {
    /// Decodes `CLK_NORMALIZED_COORDS_* | CLK_ADDRESS_* | CLK_FILTER_*`.
    pub fn from_bits(bits: u64) -> Sampler {
        let addressing = match (bits >> 1) & 7 {
            1 => Addressing::ClampToEdge,
            2 => Addressing::Clamp,
            3 => Addressing::Repeat,
            4 => Addressing::MirroredRepeat,
            _ => Addressing::None,
        };
        Sampler { normalized: bits & 1 != 0, addressing, linear: bits & 0x20 != 0 }
    }

    /// The `CLK_*` bit field.
    pub fn bits(self) -> u64 {
        let addressing = match self.addressing {
            Addressing::None => 0,
            Addressing::ClampToEdge => 1,
            Addressing::Clamp => 2,
            Addressing::Repeat => 3,
            Addressing::MirroredRepeat => 4,
        };
        self.normalized as u64 | addressing << 1 | if self.linear { 0x20 } else { 0x10 }
    }

    /// The sampler of a SPIR-V `OpConstantSampler` (addressing mode, normalized flag, filter mode
    /// as SPIR-V numbers them).
    pub fn from_spirv(addressing: u32, normalized: u32, filter: u32) -> Sampler {
        Sampler::from_bits(
            ((addressing as u64) << 1) | (normalized != 0) as u64 | if filter == 1 { 0x20 } else { 0x10 },
        )
    }
}

/// The element type a kernel reads or writes texels as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TexelType {
    /// `float4` (`read_imagef`/`write_imagef`).
    Float,
    /// `half4`.
    Half,
    /// `int4` or `uint4`; the image's channel type says which.
    Int,
}

/// An integer operation on `bits`-wide operands, as the interpreter computes it everywhere: a
/// zero divisor gives 0 (and so does the one signed quotient that overflows 64 bits), shift
/// counts are taken modulo the width.
#[inline(always)]
pub fn int_op(op: super::IntOp, bits: u8, x: u64, y: u64) -> u64 {
    use super::IntOp;
    let m = mask(bits);
    let (sx, sy) = (sign_extend(x, bits), sign_extend(y, bits));
    let shift = (y % bits.max(1) as u64) as u32;
    let r = match op {
        IntOp::Add => x.wrapping_add(y),
        IntOp::Sub => x.wrapping_sub(y),
        IntOp::Mul => x.wrapping_mul(y),
        IntOp::UDiv => x.checked_div(y).unwrap_or(0),
        IntOp::SDiv => sx.checked_div(sy).unwrap_or(0) as u64,
        IntOp::URem => x.checked_rem(y).unwrap_or(0),
        IntOp::SRem => sx.checked_rem(sy).unwrap_or(0) as u64,
        IntOp::SMod => {
            let r = sx.checked_rem(sy).unwrap_or(0);
            (if r != 0 && (r < 0) != (sy < 0) { r + sy } else { r }) as u64
        }
        IntOp::And => x & y,
        IntOp::Or => x | y,
        IntOp::Xor => x ^ y,
        IntOp::Shl => x << shift,
        IntOp::LShr => x >> shift,
        IntOp::AShr => (sx >> shift) as u64,
    };
    r & m
}

/// An integer comparison of `bits`-wide operands (unsigned ones on the masked values, signed
/// ones on the sign-extended values); `None` for the float comparisons.
#[inline(always)]
pub fn int_compare(cmp: super::Cmp, bits: u8, x: u64, y: u64) -> Option<bool> {
    use super::Cmp;
    let m = mask(bits);
    let (ux, uy) = (x & m, y & m);
    let (sx, sy) = (sign_extend(x, bits), sign_extend(y, bits));
    Some(match cmp {
        Cmp::Eq => ux == uy,
        Cmp::Ne => ux != uy,
        Cmp::ULt => ux < uy,
        Cmp::ULe => ux <= uy,
        Cmp::UGt => ux > uy,
        Cmp::UGe => ux >= uy,
        Cmp::SLt => sx < sy,
        Cmp::SLe => sx <= sy,
        Cmp::SGt => sx > sy,
        Cmp::SGe => sx >= sy,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_split_into_their_parts() {
        let a = address(SPACE_LOCAL, 5, 0x1234);
        assert_eq!(split(a), (SPACE_LOCAL, 5, 0x1234));
        assert_eq!(split(0), (0, 0, 0));
        let top = address(SPACE_PRIVATE, INDEX_MASK, OFFSET_MASK);
        assert_eq!(top, u64::MAX);
        assert_eq!(split(top), (SPACE_PRIVATE, INDEX_MASK, OFFSET_MASK));
    }

    #[test]
    fn widths_extend_and_mask() {
        assert_eq!(sign_extend(0xff, 8), -1);
        assert_eq!(sign_extend(0x7f, 8), 127);
        assert_eq!(sign_extend(0x8000_0000, 32), -(1 << 31));
        assert_eq!(sign_extend(u64::MAX, 64), -1);
        assert_eq!(sign_extend(1, 1), -1);
        assert_eq!(mask(1), 1);
        assert_eq!(mask(32), 0xffff_ffff);
        assert_eq!(mask(64), u64::MAX);
    }

    #[test]
    fn sampler_bits_round_trip() {
        for bits in [0x10, 0x11, 0x13, 0x15, 0x17, 0x19, 0x20, 0x21, 0x29] {
            assert_eq!(Sampler::from_bits(bits).bits(), bits, "{bits:#x}");
        }
        let s = Sampler::from_spirv(4, 1, 1);
        assert!(s.normalized && s.linear && s.addressing == Addressing::MirroredRepeat);
    }
}
