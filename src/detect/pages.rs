//! The page sizes both shadows are cut into, and pages that start as zeroed memory.
//!
//! It sits below `shadow.rs` and `packed.rs`, which both allocate pages; it knows no cell or
//! record, only the promise ([`Zeroed`]) that all-zero bytes are a type's default.

/// Bytes of data per page of a group's shadow (small: groups touch little and pages are reused).
pub const GROUP_PAGE: usize = 256;
/// Bytes of data per page of the kernel-wide shadow.
pub const KERNEL_PAGE: usize = 4096;
/// Bytes per word cell.
pub const WORD: usize = 4;

/// Types whose all-zero bit pattern is their default value, so that fresh pages can come from
/// zeroed memory (which the OS maps lazily) instead of being written cell by cell.
///
/// # Safety
/// Implementors must be valid, and equal to `Default::default()`, when every byte is zero.
pub unsafe trait Zeroed: Copy + Default + PartialEq {}

// SAFETY: integers.
unsafe impl Zeroed for u32 {}
// SAFETY: as above.
unsafe impl Zeroed for u64 {}

/// `cells` default values, from zeroed memory.
pub fn zeroed<T: Zeroed>(cells: usize) -> Box<[T]> {
    // SAFETY: `T: Zeroed` promises that zeroed memory holds valid default values.
    unsafe { Box::<[T]>::new_zeroed_slice(cells).assume_init() }
}
