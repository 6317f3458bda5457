//! Final-state comparison: which bytes of the buffers a kernel can write differ between the
//! canonical run and an alternate one, grouped into ranges of whole elements.
//!
//! It sees buffer bytes and each buffer's element type (from the argument's type name); it
//! cannot see which work-item wrote a byte, nor tell an intended difference (a work queue's
//! order) from a bug unless told to compare a buffer as a multiset.

use crate::exec::Launch;
use crate::program::{AddressSpace, KernelArg};

/// How a buffer's elements are read in reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Element {
    Signed(u8),
    Unsigned(u8),
    Float(u8),
    /// Unknown type: bytes.
    Byte,
}

impl Element {
    /// The element of an argument type as reflection spells it (`int*`, `float4*`, `uint`).
    pub fn of_type(type_name: &str) -> Element {
        let base = type_name.trim_end_matches('*').trim();
        let base = base.trim_end_matches(|c: char| c.is_ascii_digit());
        match base {
            "char" => Element::Signed(1),
            "uchar" | "unsigned char" => Element::Unsigned(1),
            "short" => Element::Signed(2),
            "ushort" | "unsigned short" => Element::Unsigned(2),
            "int" => Element::Signed(4),
            "uint" | "unsigned int" => Element::Unsigned(4),
            "long" => Element::Signed(8),
            "ulong" | "unsigned long" => Element::Unsigned(8),
            "float" => Element::Float(4),
            "double" => Element::Float(8),
            _ => Element::Byte,
        }
    }

    pub fn size(self) -> usize {
        match self {
            Element::Signed(n) | Element::Unsigned(n) | Element::Float(n) => n as usize,
            Element::Byte => 1,
        }
    }

    /// The type's OpenCL name.
    pub fn name(self) -> &'static str {
        match self {
            Element::Signed(1) => "char",
            Element::Signed(2) => "short",
            Element::Signed(4) => "int",
            Element::Signed(_) => "long",
            Element::Unsigned(1) => "uchar",
            Element::Unsigned(2) => "ushort",
            Element::Unsigned(4) => "uint",
            Element::Unsigned(_) => "ulong",
            Element::Float(4) => "float",
            Element::Float(_) => "double",
            Element::Byte => "byte",
        }
    }
}

/// How one buffer is compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Byte for byte.
    Bytes,
    /// As a multiset of 4-byte elements (their order may vary).
    Multiset,
}

/// A buffer the kernel could write, and how to compare it.
#[derive(Debug, Clone, PartialEq)]
pub struct Compared {
    pub buffer: usize,
    /// Its argument's name.
    pub name: String,
    pub element: Element,
    pub mode: Mode,
}

/// The buffers of `launch` the kernel (reflected as `params`) could write: those bound to a
/// non-`__constant` argument, in buffer order, compared byte for byte.
pub fn writable_buffers(launch: &Launch, params: &[KernelArg]) -> Vec<Compared> {
    let count = launch.args.iter().filter_map(|a| a.buffer()).max().map_or(0, |b| b + 1);
    (0..count)
        .filter_map(|buffer| {
            let binding = launch.binding(params, buffer);
            let first = *binding.args.first()?;
            if binding.args.iter().any(|a| a.space == AddressSpace::Constant) {
                return None;
            }
            let element = if binding.image.is_some() { Element::Byte } else { Element::of_type(&first.type_name) };
            Some(Compared { buffer, name: binding.name(buffer), element, mode: Mode::Bytes })
        })
        .collect()
}

/// A range of bytes that differs, as whole elements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    pub offset: u64,
    pub canonical: Vec<u8>,
    pub alternate: Vec<u8>,
}

/// The ranges of whole `element`s where `alternate` differs from `canonical` (adjacent
/// differing elements form one range).
pub fn differences(canonical: &[u8], alternate: &[u8], element: Element) -> Vec<Difference> {
    let size = element.size();
    let len = canonical.len().min(alternate.len());
    let mut out = Vec::new();
    let mut at = 0;
    while at < len {
        let Some(first) = canonical[at..len].iter().zip(&alternate[at..len]).position(|(a, b)| a != b) else { break };
        let start = (at + first) / size * size;
        let mut end = (start + size).min(len);
        while end < len {
            let next = (end + size).min(len);
            if canonical[end..next] == alternate[end..next] {
                break;
            }
            end = next;
        }
        out.push(Difference {
            offset: start as u64,
            canonical: canonical[start..end].to_vec(),
            alternate: alternate[start..end].to_vec(),
        });
        at = end;
    }
    out
}

/// `canonical` and `alternate` as multisets of 4-byte elements: None when equal, else the
/// elements only `canonical` has and those only `alternate` has (each sorted, concatenated
/// bytes), at the offset of the first differing byte.
pub fn multiset_difference(canonical: &[u8], alternate: &[u8]) -> Option<Difference> {
    let offset = canonical.iter().zip(alternate).position(|(a, b)| a != b)?;
    let sorted = |b: &[u8]| {
        let mut v: Vec<[u8; 4]> = b.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]).collect();
        v.sort_unstable();
        v
    };
    let (a, b) = (sorted(canonical), sorted(alternate));
    let (mut i, mut j) = (0, 0);
    let (mut only_a, mut only_b) = (Vec::new(), Vec::new());
    while i < a.len() || j < b.len() {
        match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x == y => (i, j) = (i + 1, j + 1),
            (Some(x), Some(y)) if x < y => {
                only_a.extend_from_slice(x);
                i += 1;
            }
            (Some(_), Some(y)) | (None, Some(y)) => {
                only_b.extend_from_slice(y);
                j += 1;
            }
            (Some(x), None) => {
                only_a.extend_from_slice(x);
                i += 1;
            }
            (None, None) => break,
        }
    }
    // Bytes past the last whole element are compared as they are.
    let tail = canonical.len() / 4 * 4;
    let tails_differ = canonical[tail..] != alternate[alternate.len().min(tail)..];
    (!only_a.is_empty() || !only_b.is_empty() || tails_differ).then_some(Difference {
        offset: offset as u64,
        canonical: only_a,
        alternate: only_b,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(v: &[i32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn differing_bytes_are_grouped_into_ranges_of_whole_elements() {
        let a = ints(&[0, 1, 2, 3, 4, 5]);
        let b = ints(&[1, 0, 2, 3, 9, 5]);
        let d = differences(&a, &b, Element::Signed(4));
        assert_eq!(d.len(), 2);
        assert_eq!((d[0].offset, d[0].canonical.clone(), d[0].alternate.clone()), (0, ints(&[0, 1]), ints(&[1, 0])));
        assert_eq!((d[1].offset, d[1].canonical.clone(), d[1].alternate.clone()), (16, ints(&[4]), ints(&[9])));
        assert!(differences(&a, &a, Element::Signed(4)).is_empty());
        // A byte-typed buffer reports exact bytes.
        let d = differences(&[1, 2, 3], &[1, 9, 3], Element::Byte);
        assert_eq!((d[0].offset, d[0].canonical.clone()), (1, vec![2]));
    }

    #[test]
    fn a_multiset_ignores_order_but_not_values() {
        let a = ints(&[0, 1, 2, 3]);
        assert_eq!(multiset_difference(&a, &ints(&[3, 2, 1, 0])), None);
        let d = multiset_difference(&a, &ints(&[3, 2, 1, 1])).expect("a value changed");
        assert_eq!((d.offset, d.canonical, d.alternate), (0, ints(&[0]), ints(&[1])));
    }

    #[test]
    fn element_types_come_from_the_argument_type() {
        assert_eq!(Element::of_type("int*"), Element::Signed(4));
        assert_eq!(Element::of_type("float4*"), Element::Float(4));
        assert_eq!(Element::of_type("uint"), Element::Unsigned(4));
        assert_eq!(Element::of_type("struct node*"), Element::Byte);
    }
}
