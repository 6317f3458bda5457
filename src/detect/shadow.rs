//! Shadow memory: per-byte access state in flat arrays, allocated lazily by pages.
//!
//! Two kinds of cell:
//! - [`GroupCell`] (per work-group, on the worker thread running it): up to two writes and two
//!   reads by distinct work-items in the current barrier interval, for intra-group checks,
//!   plus the group's most telling write and read of its whole life, merged into the kernel-wide
//!   shadow when the group ends. Local memory has only these cells; they live as long as the
//!   worker and are never cleared: stamps from earlier groups read as "before a barrier".
//! - [`KernelCell`] (one per touched byte of global memory for the whole launch, 16 bytes): the
//!   last write and last read merged from finished groups.

use super::record::{Record, Stamped};

/// Bytes of data per page of a group's shadow (small: groups touch little and pages are reused).
pub const GROUP_PAGE: usize = 256;
/// Bytes of data per page of the kernel-wide shadow.
pub const KERNEL_PAGE: usize = 256;

/// Cells whose all-zero bit pattern is their default value, so that fresh pages can come from
/// zeroed memory (which the OS maps lazily) instead of being written cell by cell.
///
/// # Safety
/// Implementors must be valid, and equal to `Default::default()`, when every byte is zero.
pub unsafe trait Zeroed: Copy + Default + PartialEq {}

// SAFETY: every field is an integer (or a struct of integers) whose default is 0.
unsafe impl Zeroed for GroupCell {}
// SAFETY: as above.
unsafe impl Zeroed for KernelCell {}

fn zeroed_page<T: Zeroed>(cells: usize) -> Box<[T]> {
    // SAFETY: `T: Zeroed` promises that zeroed memory holds valid default cells.
    unsafe { Box::<[T]>::new_zeroed_slice(cells).assume_init() }
}

/// Per-group state of one byte. Records carry no stored byte here; the two bytes that matter
/// are kept beside them, so that cells of a word compare equal and share one check.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GroupCell {
    pub write: Stamped,
    /// A write by a work-item other than `write`'s, in the same interval.
    pub other_write: Stamped,
    pub read: Stamped,
    /// A read by a work-item other than `read`'s, in the same interval.
    pub other_read: Stamped,
    /// The group's write and read to merge (a plain one when there was one).
    pub summary_write: Stamped,
    pub summary_read: Stamped,
    /// The bytes `write`, `other_write` and `summary_write` stored.
    pub write_byte: u8,
    pub other_byte: u8,
    pub summary_byte: u8,
}

impl GroupCell {
    /// The same accesses as `other`, stored bytes aside: one check serves both.
    #[inline]
    pub fn same_state(&self, other: &GroupCell) -> bool {
        self.write == other.write
            && self.other_write == other.other_write
            && self.read == other.read
            && self.other_read == other.other_read
            && self.summary_write == other.summary_write
            && self.summary_read == other.summary_read
    }

    /// No access yet by the group whose stamps start at `serial`.
    pub fn untouched(&self, serial: u32) -> bool {
        self.summary_write.stamp < serial && self.summary_read.stamp < serial
    }

    /// Records the first access to an untouched cell: what checking it would do, without checks.
    pub fn record_first(&mut self, now: &Stamped, write: bool, byte: u8) {
        if write {
            self.write = *now;
            self.other_write = Stamped::EMPTY;
            self.summary_write = *now;
            self.write_byte = byte;
            self.summary_byte = byte;
        } else {
            self.read = *now;
            self.summary_read = *now;
        }
    }

    /// This cell (in the same state as `before`) after the update that turned `before` into
    /// `after`, by the access `now` that stores `byte` here.
    #[inline]
    pub fn updated_like(&self, before: &GroupCell, after: &GroupCell, now: &Stamped, byte: u8) -> GroupCell {
        let mut cell = *after;
        if after.write == before.write && after.other_write == before.other_write {
            // A load, or a write that changed neither slot: the bytes stay.
            cell.write_byte = self.write_byte;
            cell.other_byte = self.other_byte;
        } else {
            // A kept write is the new one, or one of the two before (perhaps moved to the other slot).
            let byte_of = |write: &Stamped| match write {
                w if w == now => byte,
                w if w == &before.write => self.write_byte,
                w if w == &before.other_write => self.other_byte,
                _ => 0,
            };
            cell.write_byte = byte_of(&after.write);
            cell.other_byte = byte_of(&after.other_write);
        }
        cell.summary_byte = if after.summary_write != before.summary_write { byte } else { self.summary_byte };
        cell
    }
}

/// The kernel-wide state of one byte of global memory.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct KernelCell {
    pub write: Record,
    pub read: Record,
}

impl KernelCell {
    /// The same accesses as `other`, stored bytes aside.
    pub fn same_state(&self, other: &KernelCell) -> bool {
        self.write.same_access(other.write) && self.read.same_access(other.read)
    }
}

/// Lazily allocated pages of cells covering one allocation.
struct Pages<T> {
    pages: Vec<Option<Box<[T]>>>,
    /// Per page, the mark last set by [`SpaceShadow::mark`] and the cells touched since.
    marks: Vec<(u32, u16, u16)>,
}

impl<T> Default for Pages<T> {
    fn default() -> Self {
        Pages { pages: Vec::new(), marks: Vec::new() }
    }
}

/// The cells of one address space, by allocation index, in pages of `PAGE` bytes of data, with a
/// free list of pages.
pub struct SpaceShadow<T, const PAGE: usize> {
    allocations: Vec<Pages<T>>,
    spare: Vec<Box<[T]>>,
    /// Bytes of pages and page tables made so far (pages are reused, never freed).
    bytes: usize,
}

impl<T, const PAGE: usize> Default for SpaceShadow<T, PAGE> {
    fn default() -> Self {
        SpaceShadow { allocations: Vec::new(), spare: Vec::new(), bytes: 0 }
    }
}

impl<T: Zeroed, const PAGE: usize> SpaceShadow<T, PAGE> {
    /// Bytes of pages and page tables this shadow has made (for memory accounting).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    fn pages(&mut self, allocation: usize) -> &mut Pages<T> {
        if allocation >= self.allocations.len() {
            self.bytes += (allocation + 1 - self.allocations.len()) * std::mem::size_of::<Pages<T>>();
            self.allocations.resize_with(allocation + 1, Pages::default);
        }
        &mut self.allocations[allocation]
    }

    /// Page `index` of an allocation, made (or taken from the free list) on first use.
    pub fn page(&mut self, allocation: usize, index: usize) -> &mut [T] {
        if allocation < self.allocations.len()
            && let Some(Some(_)) = self.allocations[allocation].pages.get(index)
        {
            return self.allocations[allocation].pages[index].as_deref_mut().expect("present");
        }
        let fresh = match self.spare.pop() {
            Some(page) => page,
            None => {
                self.bytes += PAGE * std::mem::size_of::<T>();
                zeroed_page(PAGE)
            }
        };
        let pages = self.pages(allocation);
        let mut grown = 0;
        if index >= pages.pages.len() {
            grown = (index + 1 - pages.pages.len()) * std::mem::size_of::<Option<Box<[T]>>>();
            pages.pages.resize_with(index + 1, || None);
        }
        self.bytes += grown;
        let pages = &mut self.allocations[allocation];
        pages.pages[index].insert(fresh)
    }

    /// Marks cells `start..end` of a page as touched under `mark`; true if the page did not
    /// carry that mark yet (its touched range then starts afresh).
    pub fn mark(&mut self, allocation: usize, index: usize, mark: u32, start: usize, end: usize) -> bool {
        let pages = self.pages(allocation);
        if index >= pages.marks.len() {
            let grown = (index + 1 - pages.marks.len()) * std::mem::size_of::<(u32, u16, u16)>();
            pages.marks.resize(index + 1, (0, 0, 0));
            self.bytes += grown;
        }
        let pages = &mut self.allocations[allocation];
        let entry = &mut pages.marks[index];
        let fresh = entry.0 != mark;
        if fresh {
            *entry = (mark, start as u16, end as u16);
        } else {
            entry.1 = entry.1.min(start as u16);
            entry.2 = entry.2.max(end as u16);
        }
        fresh
    }

    /// The cells of a page touched under its current mark.
    pub fn touched(&self, allocation: usize, index: usize) -> std::ops::Range<usize> {
        let (_, start, end) = self.allocations[allocation].marks[index];
        start as usize..end as usize
    }

    /// Keeps a page for reuse, so memory follows what is in use. Its cells are left as they are:
    /// users that release pages tell old cells from new ones by stamps.
    pub fn release(&mut self, allocation: usize, index: usize) {
        if let Some(page) = self.allocations.get_mut(allocation).and_then(|p| p.pages.get_mut(index)?.take()) {
            self.spare.push(page);
        }
    }
}
