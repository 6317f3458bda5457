//! SPIR-V types as the lowering sees them: sizes, alignments, register slots and byte layouts.

use rspirv::spirv::StorageClass;

use crate::ir::{Layout, Leaf, OpaqueKind};

/// A SPIR-V type, resolved from its id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Ty {
    Void,
    Bool,
    Int(u8),
    Float(u8),
    Vector(Box<Ty>, u32),
    Array(Box<Ty>, u64),
    Struct(Vec<Ty>, bool),
    Pointer(StorageClass, Box<Ty>),
    /// Events, pipes and other handles: one opaque 8-byte slot.
    Opaque(OpaqueKind),
    /// An image: one slot holding its address.
    Image,
    /// A sampler: one slot holding its `CLK_*` bits.
    Sampler,
    /// An image with its sampler: two slots.
    SampledImage,
    Function,
}

/// The largest type, in bytes: sizes and offsets are 32-bit in the IR.
pub const MAX_TYPE_BYTES: u64 = u32::MAX as u64;

/// How deeply types may nest (arrays of structs of ...): the type walks recurse.
const MAX_TYPE_DEPTH: u32 = 64;

/// How many nodes one type may have once its members are expanded: a type is a tree here, so
/// structs of structs would otherwise grow exponentially with the module's size.
const MAX_TYPE_NODES: u32 = 1 << 16;

impl Ty {
    /// Checks a newly built type (whose members were checked before): its nesting, its size
    /// in nodes and its size in bytes are within the limits above.
    pub fn check(&self) -> Result<(), String> {
        let (depth, nodes) = self.shape();
        if depth > MAX_TYPE_DEPTH {
            return Err(format!("types nested {depth} deep (at most {MAX_TYPE_DEPTH})"));
        }
        if nodes > MAX_TYPE_NODES {
            return Err(format!("a type of {nodes} members (at most {MAX_TYPE_NODES})"));
        }
        let size = match self {
            // The only product: the element was checked, so its stride fits in 33 bits.
            Ty::Array(e, n) => e.stride().checked_mul(*n),
            _ => Some(self.size()),
        };
        match size {
            Some(size) if size <= MAX_TYPE_BYTES => Ok(()),
            _ => Err(format!("a type larger than {MAX_TYPE_BYTES} bytes")),
        }
    }

    /// Nesting depth and node count, saturating.
    fn shape(&self) -> (u32, u32) {
        let children: &[Ty] = match self {
            Ty::Vector(e, _) | Ty::Array(e, _) | Ty::Pointer(_, e) => std::slice::from_ref(&**e),
            Ty::Struct(fields, _) => fields,
            _ => &[],
        };
        let (mut depth, mut nodes) = (0u32, 1u32);
        for child in children {
            let (d, n) = child.shape();
            depth = depth.max(d);
            nodes = nodes.saturating_add(n);
        }
        (depth.saturating_add(1), nodes)
    }

    /// Bytes in memory (3-element vectors take four elements).
    pub fn size(&self) -> u64 {
        match self {
            Ty::Void | Ty::Function => 0,
            Ty::Bool => 1,
            Ty::Int(b) | Ty::Float(b) => (*b as u64).div_ceil(8),
            Ty::Vector(e, n) => e.size() * if *n == 3 { 4 } else { *n as u64 },
            Ty::Array(e, n) => e.stride() * n,
            Ty::Struct(fields, packed) => {
                let mut end: u64 = 0;
                for f in fields {
                    end = if *packed { end } else { end.next_multiple_of(f.align()) } + f.size();
                }
                if *packed { end } else { end.next_multiple_of(self.align()) }
            }
            Ty::Pointer(..) | Ty::Opaque(_) | Ty::Image | Ty::Sampler => 8,
            Ty::SampledImage => 16,
        }
    }

    pub fn align(&self) -> u64 {
        match self {
            Ty::Vector(..) => self.size().max(1),
            Ty::Array(e, _) => e.align(),
            Ty::Struct(fields, packed) => {
                if *packed {
                    1
                } else {
                    fields.iter().map(Ty::align).max().unwrap_or(1)
                }
            }
            _ => self.size().max(1),
        }
    }

    /// Distance between consecutive array elements.
    pub fn stride(&self) -> u64 {
        self.size().next_multiple_of(self.align())
    }

    /// Byte offset of each struct field.
    pub fn field_offsets(&self) -> Vec<u64> {
        let Ty::Struct(fields, packed) = self else { return Vec::new() };
        let mut offsets = Vec::with_capacity(fields.len());
        let mut end: u64 = 0;
        for f in fields {
            let at = if *packed { end } else { end.next_multiple_of(f.align()) };
            offsets.push(at);
            end = at + f.size();
        }
        offsets
    }

    /// Register slots a value of this type occupies.
    pub fn slots(&self) -> u32 {
        match self {
            Ty::Void | Ty::Function => 0,
            Ty::Vector(_, n) => *n,
            Ty::Array(e, n) => e.slots().saturating_mul(*n as u32),
            Ty::Struct(fields, _) => fields.iter().fold(0u32, |sum, f| sum.saturating_add(f.slots())),
            Ty::SampledImage => 2,
            _ => 1,
        }
    }

    /// The scalar leaves of a value in memory, in slot order.
    pub fn layout(&self) -> Layout {
        let mut leaves = Vec::new();
        self.push_leaves(0, &mut leaves);
        Layout { size: self.size() as u32, leaves }
    }

    fn push_leaves(&self, base: u64, out: &mut Vec<Leaf>) {
        match self {
            Ty::Vector(e, n) => {
                for i in 0..*n as u64 {
                    e.push_leaves(base + i * e.size(), out);
                }
            }
            Ty::Array(e, n) => {
                for i in 0..*n {
                    e.push_leaves(base + i * e.stride(), out);
                }
            }
            Ty::Struct(fields, _) => {
                for (f, off) in fields.iter().zip(self.field_offsets()) {
                    f.push_leaves(base + off, out);
                }
            }
            Ty::Void | Ty::Function => {}
            // Its two slots: the image, then the sampler.
            Ty::SampledImage => {
                out.push(Leaf { offset: base as u32, size: 8 });
                out.push(Leaf { offset: base as u32 + 8, size: 8 });
            }
            _ => out.push(Leaf { offset: base as u32, size: self.size() as u8 }),
        }
    }

    /// The element type of a vector, or the type itself.
    pub fn scalar(&self) -> &Ty {
        match self {
            Ty::Vector(e, _) => e,
            t => t,
        }
    }

    /// Lanes of a vector, 1 for a scalar.
    pub fn lanes(&self) -> u32 {
        match self {
            Ty::Vector(_, n) => *n,
            _ => 1,
        }
    }

    /// Width in bits of a scalar (or of a vector's element); pointers are 64.
    pub fn bits(&self) -> u8 {
        match self.scalar() {
            Ty::Int(b) | Ty::Float(b) => *b,
            Ty::Bool => 1,
            _ => 64,
        }
    }

    /// The pointee of a pointer type.
    pub fn pointee(&self) -> Option<&Ty> {
        match self {
            Ty::Pointer(_, t) => Some(t),
            _ => None,
        }
    }

    /// The slot offset and type of a member `index` of a composite.
    pub fn member(&self, index: u64) -> Option<(u32, &Ty)> {
        match self {
            Ty::Vector(e, n) if index < *n as u64 => Some((index as u32, e)),
            Ty::Array(e, n) if index < *n => Some((index as u32 * e.slots(), e)),
            Ty::Struct(fields, _) => {
                let f = fields.get(index as usize)?;
                Some((fields[..index as usize].iter().map(Ty::slots).sum(), f))
            }
            _ => None,
        }
    }

    /// A name in OpenCL C spelling, for reflected argument types without metadata.
    pub fn c_name(&self) -> String {
        match self {
            Ty::Bool => "bool".into(),
            Ty::Int(8) => "uchar".into(),
            Ty::Int(16) => "ushort".into(),
            Ty::Int(32) => "uint".into(),
            Ty::Int(64) => "ulong".into(),
            Ty::Float(16) => "half".into(),
            Ty::Float(32) => "float".into(),
            Ty::Float(64) => "double".into(),
            Ty::Vector(e, n) => format!("{}{n}", e.c_name()),
            Ty::Pointer(_, t) => format!("{}*", t.c_name()),
            Ty::Struct(..) => "struct".into(),
            Ty::Image | Ty::SampledImage => "image".into(),
            Ty::Sampler => "sampler_t".into(),
            _ => "void".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_layout_rules() {
        let f = Ty::Float(32);
        let s = Ty::Struct(vec![Ty::Int(8), Ty::Float(64), Ty::Int(16)], false);
        assert_eq!(s.size(), 24);
        assert_eq!(s.field_offsets(), vec![0, 8, 16]);
        let v3 = Ty::Vector(Box::new(f.clone()), 3);
        assert_eq!((v3.size(), v3.align(), v3.slots()), (16, 16, 3));
        let packed = Ty::Struct(vec![Ty::Int(8), Ty::Int(32)], true);
        assert_eq!(packed.size(), 5);
        let arr = Ty::Array(Box::new(v3), 2);
        assert_eq!(arr.layout().leaves.iter().map(|l| l.offset).collect::<Vec<_>>(), vec![0, 4, 8, 16, 20, 24]);
    }
}
