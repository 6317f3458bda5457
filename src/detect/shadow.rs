//! Shadow memory: per-byte access state in flat arrays, allocated lazily by pages.
//!
//! Two kinds of cell:
//! - [`GroupCell`] (per work-group, on the worker thread running it): the last write and up to
//!   two reads by distinct work-items in the current barrier interval, for intra-group checks,
//!   plus the group's most telling write and read of its whole life, merged into the kernel-wide
//!   shadow when the group ends. Local memory has only these cells; they live as long as the
//!   worker and are never cleared: stamps from earlier groups read as "before a barrier".
//! - [`KernelCell`] (one per touched byte of global memory for the whole launch, 16 bytes): the
//!   last write and last read merged from finished groups.

use super::record::{Record, Stamped};

/// Bytes of data per shadow page.
pub const PAGE: usize = 256;

/// Per-group state of one byte.
#[derive(Debug, Clone, Copy, Default)]
pub struct GroupCell {
    pub write: Stamped,
    pub read: Stamped,
    /// A read by a work-item other than `read`'s, in the same interval.
    pub other_read: Stamped,
    /// The group's write and read to merge (a plain one when there was one).
    pub summary_write: Stamped,
    pub summary_read: Stamped,
}

/// The kernel-wide state of one byte of global memory.
#[derive(Debug, Clone, Copy, Default)]
pub struct KernelCell {
    pub write: Record,
    pub read: Record,
}

/// Lazily allocated pages of cells covering one allocation.
pub struct Pages<T> {
    pages: Vec<Option<Box<[T]>>>,
    /// Per page, the mark last set by [`Pages::mark`].
    marks: Vec<u32>,
}

impl<T> Default for Pages<T> {
    fn default() -> Self {
        Pages { pages: Vec::new(), marks: Vec::new() }
    }
}

impl<T: Default + Clone> Pages<T> {
    /// Page `index`, allocated on first use.
    pub fn page(&mut self, index: usize) -> &mut [T] {
        if index >= self.pages.len() {
            self.pages.resize_with(index + 1, || None);
        }
        self.pages[index].get_or_insert_with(|| vec![T::default(); PAGE].into_boxed_slice())
    }

    /// Marks page `index` with `mark`; true if it did not carry that mark yet.
    pub fn mark(&mut self, index: usize, mark: u32) -> bool {
        if index >= self.marks.len() {
            self.marks.resize(index + 1, 0);
        }
        std::mem::replace(&mut self.marks[index], mark) != mark
    }
}

/// The cells of one address space, by allocation index.
pub struct SpaceShadow<T> {
    allocations: Vec<Pages<T>>,
}

impl<T> Default for SpaceShadow<T> {
    fn default() -> Self {
        SpaceShadow { allocations: Vec::new() }
    }
}

impl<T: Default + Clone> SpaceShadow<T> {
    pub fn allocation(&mut self, index: usize) -> &mut Pages<T> {
        if index >= self.allocations.len() {
            self.allocations.resize_with(index + 1, Pages::default);
        }
        &mut self.allocations[index]
    }
}
