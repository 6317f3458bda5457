//! Large byte buffers for launch inputs and snapshots: zeroed memory that the system maps when
//! first touched, and, from [`HUGE_FROM`] bytes up, on transparent huge pages where the system
//! offers them on request (`/sys/kernel/mm/transparent_hugepage/enabled` set to `madvise` or
//! `always`).
//!
//! A 16 MiB buffer is 4,096 page faults of 4 KiB, each several microseconds in a virtual machine,
//! taken by whoever first writes the buffer: the launch-file reader filling it, the driver copying
//! a snapshot into it, or the kernel's first stores. On 2 MiB pages the same buffer is 8 faults.
//! The request is advice: where the system has no huge page free (or refuses), the memory is
//! ordinary pages and nothing else changes. This module sees sizes and the allocator, not what
//! the bytes are for.

/// Buffers of at least this many bytes are advised onto huge pages (the size of one on x86-64
/// and AArch64 with 4 KiB base pages).
pub const HUGE_FROM: usize = 2 << 20;

/// `size` zero bytes, or None if there is no memory for them. No byte is written here: the
/// allocator's zeroed memory comes from the system's zero pages, so untouched parts cost nothing.
pub fn zeroed(size: usize) -> Option<Vec<u8>> {
    if size == 0 {
        return Some(Vec::new());
    }
    let layout = std::alloc::Layout::array::<u8>(size).ok()?;
    // SAFETY: `layout` has a non-zero size (checked above).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return None;
    }
    advise_huge_pages(ptr as usize, size);
    // SAFETY: `ptr` comes from the global allocator with the layout of `size` bytes of `u8`
    // (alignment 1), which is what a `Vec<u8>` of capacity `size` frees with; all `size` bytes
    // are initialised (zeroed).
    Some(unsafe { Vec::from_raw_parts(ptr, size, size) })
}

/// An empty vector with room for exactly `capacity` bytes, or None if there is no memory for
/// them; the room is advised onto huge pages as in [`zeroed`].
pub fn with_capacity(capacity: usize) -> Option<Vec<u8>> {
    let mut data = Vec::new();
    data.try_reserve_exact(capacity).ok()?;
    advise_huge_pages(data.as_ptr() as usize, data.capacity());
    Some(data)
}

/// The system's base page size (4 KiB on x86-64 and on AArch64 as Linux ships it).
const PAGE: usize = 4096;

/// The first and the end address of the whole pages inside `[start, start + len)` (the end at or
/// below the first where none is whole).
fn whole_pages(start: usize, len: usize) -> (usize, usize) {
    (start.next_multiple_of(PAGE), (start + len) / PAGE * PAGE)
}

/// Has the system map every page of `chunk` now (zeroed, where it was never touched), changing
/// no byte: the faults a first store would take are taken here instead. One `MADV_POPULATE_WRITE`
/// for the pages wholly inside `chunk` where the system has it (Linux 5.14), a store of each
/// page's own byte otherwise and at the ends.
pub fn map_in(chunk: &mut [u8]) {
    if chunk.is_empty() {
        return;
    }
    let start = chunk.as_ptr() as usize;
    let (first, end) = whole_pages(start, chunk.len());
    #[cfg(target_os = "linux")]
    let populated = end > first && {
        // SAFETY: MADV_POPULATE_WRITE faults pages in as a write would, without changing their
        // contents or protection; the range lies inside `chunk`, memory we hold mutably.
        unsafe { libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_POPULATE_WRITE) == 0 }
    };
    #[cfg(not(target_os = "linux"))]
    let populated = false;
    let mut at = 0;
    while at < chunk.len() {
        let page_end = ((start + at) / PAGE + 1) * PAGE - start;
        let inside = start + at >= first && start + at < end;
        if !(populated && inside) {
            // A volatile store: the compiler may not drop a store of the byte's own value.
            let byte = &mut chunk[at];
            // SAFETY: `byte` is a valid, aligned, exclusive reference.
            unsafe { std::ptr::write_volatile(byte, std::ptr::read_volatile(byte)) };
        }
        at = page_end;
    }
}

/// Asks the system to back the whole 4 KiB pages inside `[start, start + len)` with huge pages
/// when `len` is at least [`HUGE_FROM`]; the system only does so for the 2 MiB-aligned parts.
fn advise_huge_pages(start: usize, len: usize) {
    #[cfg(target_os = "linux")]
    {
        if len < HUGE_FROM {
            return;
        }
        let (first, end) = whole_pages(start, len);
        if end <= first {
            return;
        }
        // SAFETY: madvise with MADV_HUGEPAGE changes no memory contents and no protection; it
        // only marks how the kernel may back the range. The range lies inside an allocation this
        // function's caller owns, so no other mapping is affected. Its result is ignored on
        // purpose: advice the system declines leaves ordinary pages.
        unsafe {
            libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (start, len);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapping_in_changes_no_byte() {
        for (size, from) in [(1, 0), (4095, 1), (HUGE_FROM + 4097, 7), (3 * 4096, 4096)] {
            let mut data = zeroed(size + from).expect("memory");
            for (i, b) in data.iter_mut().enumerate().step_by(1000) {
                *b = i as u8 | 1;
            }
            let before = data.clone();
            map_in(&mut data[from..]);
            assert!(data == before, "size {size} from {from}");
        }
    }

    #[test]
    fn zeroed_buffers_read_as_zero_whatever_their_size() {
        for size in [0, 1, 4095, HUGE_FROM - 1, HUGE_FROM, 3 * HUGE_FROM + 17] {
            let data = zeroed(size).expect("memory");
            assert_eq!(data.len(), size);
            assert!(data.iter().all(|&b| b == 0), "size {size}");
        }
    }

    #[test]
    fn reserved_buffers_take_writes_up_to_their_capacity() {
        let mut data = with_capacity(HUGE_FROM + 5).expect("memory");
        assert!(data.is_empty());
        data.extend((0..HUGE_FROM + 5).map(|i| i as u8));
        assert_eq!(data.capacity(), HUGE_FROM + 5);
        assert_eq!(data[HUGE_FROM + 4], (HUGE_FROM + 4) as u8);
    }

    #[test]
    fn a_size_the_machine_cannot_hold_is_none_not_an_abort() {
        assert!(zeroed(usize::MAX / 2).is_none());
        assert!(with_capacity(usize::MAX / 2).is_none());
    }
}
