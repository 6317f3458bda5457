//! One remembered access, packed into 64 bits: what the kernel-wide shadow keeps per word or byte
//! and kind of access (see `shadow.rs`), and, with its full stamp, what a group cell keeps.
//!
//! Layout, low bits first: the access site (16 bits, 0 = no record; see [`super::Sites`]), the
//! entity (32 bits: a work-item's global linear id, or a work-group's linear id for group-level
//! accesses), the low 6 bits of the accessor's group stamp (see `group.rs`; kernel-wide, counted
//! from the group's first stamp), an atomic flag, a group-entity flag, and the byte a store wrote
//! (8 bits, for uniform writes).

/// Who made an access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Entity {
    /// A work-item, by global linear id.
    Item(u32),
    /// A work-group acting as a whole (an async copy), by group linear id.
    Group(u32),
}

/// A packed access record; `Record::EMPTY` is no access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Record(u64);

const SITE_BITS: u32 = 16;
const ENTITY_SHIFT: u32 = 16;
/// The entity's id bits.
const ENTITY_BITS: u64 = 0xffff_ffff << ENTITY_SHIFT;
const STAMP_SHIFT: u32 = 48;
/// How many low bits of a stamp a record keeps.
pub const STAMP_BITS: u32 = 6;
const ATOMIC_BIT: u64 = 1 << 54;
const GROUP_BIT: u64 = 1 << 55;
const BYTE_SHIFT: u32 = 56;
/// The bits [`Record::with_step`] uses: the stamp's low bits and the stored byte.
const STEP_FIELDS: u64 = ((1 << STAMP_BITS) - 1) << STAMP_SHIFT | 0xff << BYTE_SHIFT;
/// How many low bits of a lockstep step a per-group record keeps.
pub const STEP_BITS: u32 = STAMP_BITS + 8;

impl Record {
    pub const EMPTY: Record = Record(0);

    #[inline]
    pub fn new(site: u16, entity: Entity, stamp: u32, atomic: bool, byte: u8) -> Record {
        debug_assert!(site != 0, "site 0 means no record");
        let (id, group) = match entity {
            Entity::Item(i) => (i, 0),
            Entity::Group(g) => (g, GROUP_BIT),
        };
        let stamp = (stamp as u64 & ((1 << STAMP_BITS) - 1)) << STAMP_SHIFT;
        Record(
            site as u64
                | (id as u64) << ENTITY_SHIFT
                | stamp
                | if atomic { ATOMIC_BIT } else { 0 }
                | group
                | (byte as u64) << BYTE_SHIFT,
        )
    }

    #[inline(always)]
    pub fn is_empty(self) -> bool {
        self.site() == 0
    }

    #[inline(always)]
    pub fn site(self) -> u16 {
        (self.0 & ((1 << SITE_BITS) - 1)) as u16
    }

    #[inline]
    pub fn entity(self) -> Entity {
        let id = (self.0 >> ENTITY_SHIFT) as u32;
        if self.0 & GROUP_BIT != 0 { Entity::Group(id) } else { Entity::Item(id) }
    }

    /// The same entity as `other`'s (work-item or group, and id), without decoding either.
    #[inline(always)]
    pub fn same_entity(self, other: Record) -> bool {
        (self.0 ^ other.0) & (ENTITY_BITS | GROUP_BIT) == 0
    }

    /// A work-item's plain access: a record, neither atomic nor a work-group's.
    #[inline(always)]
    pub fn plain_item(self) -> bool {
        self.site() != 0 && self.0 & (ATOMIC_BIT | GROUP_BIT) == 0
    }

    /// Neither atomic nor a work-group's: [`Record::plain_item`] of a record known not to be
    /// empty (one whose [`Stamped::stamp`] is not 0).
    #[inline(always)]
    pub fn plain(self) -> bool {
        self.0 & (ATOMIC_BIT | GROUP_BIT) == 0
    }

    /// A work-group's record (an async copy's access), not a work-item's.
    #[inline(always)]
    pub fn by_group(self) -> bool {
        self.0 & GROUP_BIT != 0
    }

    /// The low [`STAMP_BITS`] of the accessor's stamp.
    pub fn stamp_low(self) -> u32 {
        ((self.0 >> STAMP_SHIFT) & ((1 << STAMP_BITS) - 1)) as u32
    }

    #[inline(always)]
    pub fn atomic(self) -> bool {
        self.0 & ATOMIC_BIT != 0
    }

    pub fn byte(self) -> u8 {
        (self.0 >> BYTE_SHIFT) as u8
    }

    /// This record with another stored byte.
    pub fn with_byte(self, byte: u8) -> Record {
        Record(self.0 & !(0xff << BYTE_SHIFT) | (byte as u64) << BYTE_SHIFT)
    }

    /// The same access by the work-item (or group) `k` places after this one's.
    #[inline]
    pub fn advanced(self, k: u32) -> Record {
        if self.is_empty() { self } else { Record(self.0 + ((k as u64) << ENTITY_SHIFT)) }
    }

    /// [`Record::advanced`] of a record that is not empty, without testing it.
    #[inline(always)]
    pub fn advanced_full(self, k: u32) -> Record {
        debug_assert!(!self.is_empty());
        Record(self.0 + ((k as u64) << ENTITY_SHIFT))
    }

    /// This record with the low [`STEP_BITS`] of a lockstep step (see `lockstep.rs`) in place of
    /// its stamp's low bits and its stored byte, which the per-group shadow does not use (it keeps
    /// the full stamp beside the record, and the stored bytes beside the cell). Only for records
    /// of the per-group shadow; [`Record::canonical`] restores them before they leave it.
    #[inline]
    pub fn with_step(self, step: u32) -> Record {
        let step = step as u64 & ((1 << STEP_BITS) - 1);
        let low = (step & ((1 << STAMP_BITS) - 1)) << STAMP_SHIFT;
        let high = (step >> STAMP_BITS) << BYTE_SHIFT;
        Record(self.0 & !STEP_FIELDS | low | high)
    }

    /// The step bits [`Record::with_step`] put in.
    pub fn step_low(self) -> u32 {
        (self.stamp_low() | (self.byte() as u32) << STAMP_BITS) & ((1 << STEP_BITS) - 1)
    }

    /// This record as the kernel-wide shadow keeps it: the low bits of `stamp` (which the caller
    /// counts from the group's first stamp) and no stored byte
    /// (undoing [`Record::with_step`]; the same record when there was none).
    #[inline]
    pub fn canonical(self, stamp: u32) -> Record {
        if self.is_empty() {
            return self;
        }
        let low = (stamp as u64 & ((1 << STAMP_BITS) - 1)) << STAMP_SHIFT;
        Record(self.0 & !STEP_FIELDS | low)
    }

    /// This record without the low `bits` of its entity and without its stored byte: what the
    /// records of nearby work-items at one site and stamp share (see `packed.rs`).
    #[inline]
    pub fn head(self, bits: u32) -> Record {
        Record(self.0 & !(((1 << bits) - 1) << ENTITY_SHIFT | 0xff << BYTE_SHIFT))
    }

    /// The low `bits` of the entity's id.
    #[inline]
    pub fn entity_low(self, bits: u32) -> u32 {
        (self.0 >> ENTITY_SHIFT) as u32 & ((1 << bits) - 1)
    }

    /// The record whose [`Record::head`] is `head`, with `low` as the low `bits` of its entity
    /// and `byte` as its stored byte.
    #[inline]
    pub fn from_head(head: Record, low: u32, bits: u32, byte: u8) -> Record {
        debug_assert_eq!(head, head.head(bits));
        Record(head.0 | ((low & ((1 << bits) - 1)) as u64) << ENTITY_SHIFT | (byte as u64) << BYTE_SHIFT)
    }

    /// Equal but for the stored byte.
    pub fn same_access(self, other: Record) -> bool {
        (self.0 ^ other.0) & !(0xff << BYTE_SHIFT) == 0
    }
}

/// The full stamp of a record, given the latest stamp its group had reached (`last`): the
/// largest value not above `last` with the record's low bits.
pub fn widen_stamp(low: u32, last: u32) -> u32 {
    let mask = (1u32 << STAMP_BITS) - 1;
    let back = last.wrapping_sub(low) & mask;
    last.wrapping_sub(back)
}

/// A record with its full stamp, as the per-group shadow keeps it: 12 bytes, aligned to 4 so
/// that six of them pack a group cell without padding. An empty record is stamped 0
/// ([`Stamped::EMPTY`], and zeroed cells) and every access at least 1 (a worker's stamps start
/// there and only grow), so a stamp at or after any barrier's says the record is not empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(C, packed(4))]
pub struct Stamped {
    pub record: Record,
    pub stamp: u32,
}

impl Stamped {
    pub const EMPTY: Stamped = Stamped { record: Record::EMPTY, stamp: 0 };

    /// Equal but for the stored byte.
    pub fn same_access(&self, other: &Stamped) -> bool {
        self.stamp == other.stamp && self.record.same_access(other.record)
    }

    /// The same access by the work-item `k` places after this one's.
    #[inline]
    pub fn advanced(self, k: u32) -> Stamped {
        Stamped { record: self.record.advanced(k), stamp: self.stamp }
    }

    pub fn with_byte(self, byte: u8) -> Stamped {
        Stamped { record: self.record.with_byte(byte), stamp: self.stamp }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_field() {
        let r = Record::new(0xbeef, Entity::Item(0xdead_beef), 0x1234_5677, true, 0xa5);
        assert_eq!(
            (r.site(), r.entity(), r.stamp_low(), r.atomic(), r.byte()),
            (0xbeef, Entity::Item(0xdead_beef), 0x37, true, 0xa5)
        );
        let g = Record::new(1, Entity::Group(7), 0, false, 0);
        assert_eq!((g.entity(), g.atomic(), g.is_empty()), (Entity::Group(7), false, false));
        assert!(Record::EMPTY.is_empty());
    }

    #[test]
    fn same_entity_compares_kind_and_id_only() {
        let a = Record::new(3, Entity::Item(42), 5, false, 1);
        assert!(a.same_entity(Record::new(9, Entity::Item(42), 17, true, 200)));
        assert!(!a.same_entity(Record::new(3, Entity::Item(43), 5, false, 1)));
        assert!(!a.same_entity(Record::new(3, Entity::Group(42), 5, false, 1)));
        assert!(Record::new(3, Entity::Group(42), 5, false, 1).by_group() && !a.by_group());
    }

    #[test]
    fn a_step_rides_in_the_unused_bits_and_leaves_without_trace() {
        let r = Record::new(9, Entity::Item(77), 0x45, false, 0);
        let s = r.with_step(0x2abc);
        assert_eq!((s.site(), s.entity(), s.atomic(), s.step_low()), (9, Entity::Item(77), false, 0x2abc));
        assert_eq!(s.canonical(0x45), r);
        assert_eq!(r.canonical(0x45), r);
    }

    #[test]
    fn a_head_and_its_low_bits_make_the_record_again() {
        let r = Record::new(0x1234, Entity::Group(0xabcd_ef01), 0x2a, true, 0x5c);
        let head = r.head(22);
        assert_eq!((head.site(), head.atomic(), head.byte(), head.stamp_low()), (0x1234, true, 0, 0x2a));
        assert_eq!(head.entity(), Entity::Group(0xabcd_ef01 & !0x3f_ffff));
        assert_eq!(Record::from_head(head, r.entity_low(22), 22, r.byte()), r);
    }

    #[test]
    fn widens_stamps_below_the_last_one() {
        assert_eq!(widen_stamp(5, 69), 69);
        assert_eq!(widen_stamp(4, 69), 68);
        assert_eq!(widen_stamp(6, 69), 6);
        assert_eq!(widen_stamp(63, 64), 63);
    }
}
