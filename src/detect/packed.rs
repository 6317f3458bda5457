//! The kernel-wide records of a page kept per byte, packed into 8 bytes per byte for both kinds.
//!
//! A byte's last write and last read are each 64-bit [`Record`]s; stored side by side they cost
//! 16 bytes per byte. Records of one page differ little: a few sites, a few stamps, work-items
//! near each other. So a record is split into a *head* (its site, flags, stamp bits and the high
//! bits of its entity) kept once in the page's table, and what is left (the entity's low
//! [`LOW_BITS`] bits and, for a write, the stored byte), kept per byte with the head's index.
//! The write and the read of a byte fit one `u64`, so a page costs 8 bytes per byte plus its
//! table (at most [`MAX_HEADS`] records: under 1/8 byte per byte).
//!
//! A page whose records need more heads than the table holds, after dropping the ones no byte
//! refers to any more, goes back to two full records per byte ([`ByteRecords::Wide`]). That takes
//! more than 63 combinations of site, stamp and work-item range on one 4 KiB page; no kernel of
//! the test corpus or the benchmarks does it.
//!
//! This module sees only records; which accesses they stand for, and when they are checked, is
//! the merge's business (`mod.rs`).

use super::pages::{KERNEL_PAGE, zeroed};
use super::record::Record;

/// Bits of a slot half naming its head (0: no record).
const HEAD_BITS: u32 = 6;
/// Heads a page's table holds.
pub const MAX_HEADS: usize = (1 << HEAD_BITS) - 1;
/// Low bits of the entity kept per byte.
pub const LOW_BITS: u32 = 22;
const HEAD_MASK: u64 = (1 << HEAD_BITS) - 1;
const LOW_MASK: u64 = (1 << LOW_BITS) - 1;
/// Bit of a slot where the read's half starts (the write's half also holds the stored byte).
const READ_SHIFT: u32 = HEAD_BITS + LOW_BITS + 8;
const WRITE_HALF: u64 = (1 << READ_SHIFT) - 1;

/// The per-byte records of one kernel page.
pub enum ByteRecords {
    /// Per byte, write and read packed as heads' indices and entity low bits.
    Packed { slots: Box<[u64]>, heads: Vec<Record> },
    /// Per byte, the full write (with its stored byte) and the full read.
    Wide { writes: Box<[Record]>, reads: Box<[Record]> },
}

impl ByteRecords {
    /// A page with no records; adds the bytes it holds to `made`.
    pub fn new(made: &mut usize) -> ByteRecords {
        *made += KERNEL_PAGE * std::mem::size_of::<u64>();
        ByteRecords::Packed { slots: zeroed(KERNEL_PAGE), heads: Vec::new() }
    }

    /// The write (with its stored byte) and the read of byte `b`.
    #[inline]
    pub fn get(&self, b: usize) -> (Record, Record) {
        match self {
            ByteRecords::Packed { slots, heads } => {
                let slot = slots[b];
                (unpack(heads, slot & WRITE_HALF), unpack(heads, slot >> READ_SHIFT))
            }
            ByteRecords::Wide { writes, reads } => (writes[b], reads[b]),
        }
    }

    /// Sets the write of byte `b` (its stored byte in the record); adds any bytes held anew to
    /// `made`.
    #[inline]
    pub fn set_write(&mut self, b: usize, write: Record, made: &mut usize) {
        if let ByteRecords::Packed { slots, heads } = self
            && let Some(head) = head_index(heads, slots, write, made)
        {
            slots[b] = slots[b] & !WRITE_HALF | pack(head, write);
            return;
        }
        self.widen(made);
        if let ByteRecords::Wide { writes, .. } = self {
            writes[b] = write;
        }
    }

    /// Sets the read of byte `b`; adds any bytes held anew to `made`.
    #[inline]
    pub fn set_read(&mut self, b: usize, read: Record, made: &mut usize) {
        debug_assert_eq!(read.byte(), 0, "a read stores no byte");
        if let ByteRecords::Packed { slots, heads } = self
            && let Some(head) = head_index(heads, slots, read, made)
        {
            slots[b] = slots[b] & WRITE_HALF | pack(head, read) << READ_SHIFT;
            return;
        }
        self.widen(made);
        if let ByteRecords::Wide { reads, .. } = self {
            reads[b] = read;
        }
    }

    /// Turns packed records into full ones (no-op when they are full already); the bytes it
    /// holds anew, net of those it drops, go to `made`.
    #[cold]
    #[inline(never)]
    fn widen(&mut self, made: &mut usize) {
        let ByteRecords::Packed { heads, .. } = self else { return };
        let packed = KERNEL_PAGE * std::mem::size_of::<u64>() + heads.capacity() * std::mem::size_of::<Record>();
        let mut writes = zeroed::<Record>(KERNEL_PAGE);
        let mut reads = zeroed::<Record>(KERNEL_PAGE);
        for b in 0..KERNEL_PAGE {
            (writes[b], reads[b]) = self.get(b);
        }
        *made += 2 * KERNEL_PAGE * std::mem::size_of::<Record>() - packed;
        *self = ByteRecords::Wide { writes, reads };
    }

    /// Whether the records are packed (else full).
    #[cfg(test)]
    pub fn packed(&self) -> bool {
        matches!(self, ByteRecords::Packed { .. })
    }
}

/// A slot half: the head's index, the entity's low bits, and above them the stored byte (a
/// read's is 0, so its half ends below the byte).
fn pack(head: u64, record: Record) -> u64 {
    head | (record.entity_low(LOW_BITS) as u64) << HEAD_BITS | (record.byte() as u64) << (HEAD_BITS + LOW_BITS)
}

/// The record of a slot half made by [`pack`].
fn unpack(heads: &[Record], half: u64) -> Record {
    match half & HEAD_MASK {
        0 => Record::EMPTY,
        h => {
            let low = (half >> HEAD_BITS & LOW_MASK) as u32;
            Record::from_head(heads[h as usize - 1], low, LOW_BITS, (half >> (HEAD_BITS + LOW_BITS)) as u8)
        }
    }
}

/// The index (from 1) of `record`'s head in `heads`, added if new; `None` when the table is full
/// even after dropping heads no slot uses. An empty record has index 0.
#[inline]
fn head_index(heads: &mut Vec<Record>, slots: &mut [u64], record: Record, made: &mut usize) -> Option<u64> {
    if record.is_empty() {
        return Some(0);
    }
    let head = record.head(LOW_BITS);
    // Runs of bytes share a head: the last one added is the likeliest.
    if let Some(i) = heads.iter().rposition(|&h| h == head) {
        return Some(i as u64 + 1);
    }
    if heads.len() == MAX_HEADS && !drop_unused_heads(heads, slots) {
        return None;
    }
    let capacity = heads.capacity();
    heads.push(head);
    *made += (heads.capacity() - capacity) * std::mem::size_of::<Record>();
    Some(heads.len() as u64)
}

/// Drops the heads no slot refers to and renumbers the slots; false when it freed none.
#[cold]
#[inline(never)]
fn drop_unused_heads(heads: &mut Vec<Record>, slots: &mut [u64]) -> bool {
    let mut used = [false; MAX_HEADS + 1];
    for &slot in slots.iter() {
        used[(slot & HEAD_MASK) as usize] = true;
        used[(slot >> READ_SHIFT & HEAD_MASK) as usize] = true;
    }
    let mut renumbered = [0u64; MAX_HEADS + 1];
    let mut kept = 0;
    for i in 1..=heads.len() {
        if used[i] {
            heads[kept] = heads[i - 1];
            kept += 1;
            renumbered[i] = kept as u64;
        }
    }
    if kept == heads.len() {
        return false;
    }
    heads.truncate(kept);
    for slot in slots.iter_mut() {
        let write = renumbered[(*slot & HEAD_MASK) as usize];
        let read = renumbered[(*slot >> READ_SHIFT & HEAD_MASK) as usize];
        *slot = *slot & !(HEAD_MASK | HEAD_MASK << READ_SHIFT) | write | read << READ_SHIFT;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::super::record::Entity;
    use super::*;

    fn record(site: u16, item: u32, stamp: u32, atomic: bool, byte: u8) -> Record {
        Record::new(site, Entity::Item(item), stamp, atomic, byte)
    }

    /// A small deterministic generator (xorshift), so that the tests need no dependency.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    #[test]
    fn a_run_of_byte_accesses_costs_eight_bytes_per_byte_and_reads_back_exactly() {
        let mut made = 0;
        let mut page = ByteRecords::new(&mut made);
        for b in 0..KERNEL_PAGE {
            // Work-item b wrote byte b; work-item b + 4096 of another group read it.
            page.set_write(b, record(3, 70_000 + b as u32, 5, false, b as u8), &mut made);
            page.set_read(b, record(4, 74_096 + b as u32, 9, b % 2 == 0, 0), &mut made);
        }
        for b in 0..KERNEL_PAGE {
            assert_eq!(
                page.get(b),
                (record(3, 70_000 + b as u32, 5, false, b as u8), record(4, 74_096 + b as u32, 9, b % 2 == 0, 0))
            );
        }
        assert!(page.packed());
        // Four heads at most (two sites, one read flag each way), in a table of a few entries.
        assert!(made <= KERNEL_PAGE * 8 + 8 * 8, "{made} bytes");
    }

    #[test]
    fn records_of_every_field_round_trip_while_the_table_has_room() {
        let mut made = 0;
        let mut page = ByteRecords::new(&mut made);
        let mut model = vec![(Record::EMPTY, Record::EMPTY); KERNEL_PAGE];
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        // Entities anywhere in 32 bits, but few distinct heads: 4 sites x 4 stamps x 2 flags
        // with two entity ranges would be 64; keep to 3 x 3 x 2 x 3 = 54.
        let ranges = [0u32, 0x0040_0000, 0xffc0_0000];
        for _ in 0..20_000 {
            let b = (rng.next() % KERNEL_PAGE as u64) as usize;
            let r = rng.next();
            let entity = ranges[(r % 3) as usize] + (r >> 8) as u32 % (1 << LOW_BITS);
            let rec = record(1 + (r >> 40) as u16 % 3, entity, (r >> 44) as u32 % 3, r >> 50 & 1 == 1, (r >> 52) as u8);
            if r >> 60 & 1 == 0 {
                page.set_write(b, rec, &mut made);
                model[b].0 = rec;
            } else {
                let rec = rec.with_byte(0);
                page.set_read(b, rec, &mut made);
                model[b].1 = rec;
            }
            if r >> 61 & 7 == 0 {
                page.set_write(b, Record::EMPTY, &mut made);
                model[b].0 = Record::EMPTY;
            }
        }
        assert!(page.packed(), "54 heads fit the table");
        for (b, expected) in model.iter().enumerate() {
            assert_eq!(page.get(b), *expected, "byte {b}");
        }
    }

    #[test]
    fn heads_no_byte_uses_make_room_and_a_full_table_widens_without_loss() {
        let mut made = 0;
        let mut page = ByteRecords::new(&mut made);
        // Byte 0 is overwritten by 200 sites in turn: only the last one's head is in use.
        for site in 1..=200 {
            page.set_write(0, record(site, 1, 0, false, 7), &mut made);
        }
        assert!(page.packed());
        assert_eq!(page.get(0), (record(200, 1, 0, false, 7), Record::EMPTY));
        // 100 bytes of 100 sites at once cannot be packed: the page keeps full records.
        for b in 0..100 {
            page.set_read(b + 1, record(b as u16 + 1, 2 + b as u32, 0, false, 0), &mut made);
        }
        assert!(!page.packed());
        assert_eq!(page.get(0), (record(200, 1, 0, false, 7), Record::EMPTY));
        for b in 0..100 {
            assert_eq!(page.get(b + 1), (Record::EMPTY, record(b as u16 + 1, 2 + b as u32, 0, false, 0)));
        }
        assert_eq!(made, 2 * KERNEL_PAGE * 8, "full records replace the packed ones");
    }
}
