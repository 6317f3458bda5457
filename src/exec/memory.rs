//! Emulated memory: tagged addresses, the allocations they point into, and bounds-checked access.
//!
//! Addresses are tagged as [`crate::ir::value`] describes (space, allocation, offset); every
//! allocation starts at offset 0, so alignment inside it is the real alignment. An access is
//! checked against its allocation before any byte is touched; a bad one yields [`Fault`] and
//! touches nothing.
//!
//! Global memory is shared by every work-item of a launch; it is the one place with raw pointers:
//! the buffers outlive the launch that borrows them, and concurrent access from work-groups in
//! parallel is exactly what the kernel does on a device (racy kernels are the point of this tool).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use super::image::ImageDesc;

// Re-exported for the code that still takes the address model from here; its home is `ir::value`.
pub use crate::ir::value::{
    INDEX_MASK, INDEX_SHIFT, OFFSET_MASK, SPACE_GLOBAL, SPACE_LOCAL, SPACE_PRIVATE, SPACE_SHIFT, address, split,
};

/// One global allocation: a buffer argument or a program-scope variable.
#[derive(Clone, Copy)]
pub struct Region {
    base: *mut u8,
    len: usize,
    pub writable: bool,
}

// SAFETY: a Region points into a buffer that the launch borrows mutably for its whole duration
// (see `GlobalMemory::new`); work-items access it only through the bounds-checked methods below.
unsafe impl Send for Region {}
unsafe impl Sync for Region {}

/// The global allocations of one launch, indexed by allocation number (0 is NULL).
pub struct GlobalMemory {
    regions: Vec<Region>,
    pub names: Vec<String>,
    pub constant: Vec<bool>,
    /// The description of each allocation that holds an image.
    pub images: Vec<Option<ImageDesc>>,
}

impl GlobalMemory {
    /// Creates an empty table whose index 0 is the NULL allocation.
    pub fn new() -> GlobalMemory {
        let null = Region { base: std::ptr::null_mut(), len: 0, writable: false };
        GlobalMemory { regions: vec![null], names: vec!["NULL".into()], constant: vec![false], images: vec![None] }
    }

    /// Adds an allocation over `bytes`, which must stay alive and unmoved while this table is used.
    pub fn add(&mut self, bytes: &mut [u8], name: String, constant: bool) -> u64 {
        let region = Region { base: bytes.as_mut_ptr(), len: bytes.len(), writable: !constant };
        self.regions.push(region);
        self.names.push(name);
        self.constant.push(constant);
        self.images.push(None);
        (self.regions.len() - 1) as u64
    }

    /// Adds an image allocation over `bytes` (see [`GlobalMemory::add`]).
    pub fn add_image(&mut self, bytes: &mut [u8], name: String, desc: ImageDesc) -> u64 {
        let index = self.add(bytes, name, false);
        self.images[index as usize] = Some(desc);
        index
    }

    /// The image an address points to, if it is the start of an image allocation.
    pub fn image(&self, addr: u64) -> Option<&ImageDesc> {
        let (space, index, offset) = split(addr);
        if space != SPACE_GLOBAL || offset != 0 {
            return None;
        }
        self.images.get(index as usize)?.as_ref()
    }

    pub fn len(&self, index: u64) -> Option<usize> {
        self.regions.get(index as usize).map(|r| r.len)
    }
}

impl Default for GlobalMemory {
    fn default() -> Self {
        GlobalMemory::new()
    }
}

/// Why an access failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    pub addr: u64,
    pub size: u32,
}

/// The memory one work-item sees: the launch's globals, its group's local arena and its own
/// private stack.
pub struct Memory<'a> {
    pub globals: &'a GlobalMemory,
    pub local: &'a mut [u8],
    /// (start, length) in `local` of each local allocation.
    pub local_regions: &'a [(usize, usize)],
    pub private: &'a mut Vec<u8>,
}

impl Memory<'_> {
    /// A host pointer to `size` bytes at `addr`, if the whole range is inside one allocation.
    #[inline]
    fn locate(&mut self, addr: u64, size: usize, write: bool) -> Result<*mut u8, Fault> {
        let (space, index, offset) = split(addr);
        let fault = Fault { addr, size: size as u32 };
        let offset = offset as usize;
        match space {
            SPACE_GLOBAL => {
                let region = self.globals.regions.get(index as usize).ok_or(fault)?;
                if offset + size > region.len || (write && !region.writable) || index == 0 {
                    return Err(fault);
                }
                // SAFETY: offset + size <= len of a live buffer (see `GlobalMemory::add`).
                Ok(unsafe { region.base.add(offset) })
            }
            SPACE_LOCAL => {
                let &(start, len) = self.local_regions.get(index as usize).ok_or(fault)?;
                if offset + size > len {
                    return Err(fault);
                }
                Ok(self.local[start + offset..start + offset + size].as_mut_ptr())
            }
            SPACE_PRIVATE if index == 0 && offset + size <= self.private.len() => {
                Ok(self.private[offset..offset + size].as_mut_ptr())
            }
            _ => Err(fault),
        }
    }

    /// Reads `size` (1, 2, 4 or 8) bytes as a little-endian integer.
    #[inline(always)]
    pub fn load(&mut self, addr: u64, size: usize) -> Result<u64, Fault> {
        let p = self.locate(addr, size, false)?;
        // SAFETY: `locate` checked that `size` bytes at `p` lie inside one allocation.
        Ok(unsafe {
            match size {
                4 => u32::from_le(p.cast::<u32>().read_unaligned()) as u64,
                8 => u64::from_le(p.cast::<u64>().read_unaligned()),
                2 => u16::from_le(p.cast::<u16>().read_unaligned()) as u64,
                1 => *p as u64,
                _ => {
                    let mut bytes = [0u8; 8];
                    std::ptr::copy_nonoverlapping(p, bytes.as_mut_ptr(), size.min(8));
                    u64::from_le_bytes(bytes)
                }
            }
        })
    }

    /// Writes the low `size` bytes of `value`.
    #[inline(always)]
    pub fn store(&mut self, addr: u64, size: usize, value: u64) -> Result<(), Fault> {
        let p = self.locate(addr, size, true)?;
        // SAFETY: as in `load`.
        unsafe {
            match size {
                4 => p.cast::<u32>().write_unaligned((value as u32).to_le()),
                8 => p.cast::<u64>().write_unaligned(value.to_le()),
                2 => p.cast::<u16>().write_unaligned((value as u16).to_le()),
                1 => *p = value as u8,
                _ => std::ptr::copy_nonoverlapping(value.to_le_bytes().as_ptr(), p, size.min(8)),
            }
        }
        Ok(())
    }

    /// Reads `out.len()` bytes at `addr`.
    pub fn read_bytes(&mut self, addr: u64, out: &mut [u8]) -> Result<(), Fault> {
        let p = self.locate(addr, out.len(), false)?;
        // SAFETY: `locate` checked the whole range.
        unsafe { std::ptr::copy_nonoverlapping(p, out.as_mut_ptr(), out.len()) };
        Ok(())
    }

    /// Writes `bytes` at `addr`.
    pub fn write_bytes(&mut self, addr: u64, bytes: &[u8]) -> Result<(), Fault> {
        let p = self.locate(addr, bytes.len(), true)?;
        // SAFETY: `locate` checked the whole range.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
        Ok(())
    }

    /// Checks that `size` bytes at `addr` lie inside one allocation (and are writable for `write`).
    #[inline]
    pub fn check(&mut self, addr: u64, size: usize, write: bool) -> Result<(), Fault> {
        self.locate(addr, size, write).map(|_| ())
    }

    /// `memmove(dst, src, size)`. Returns which side failed: `Err((fault, true))` for the store.
    pub fn copy(&mut self, dst: u64, src: u64, size: usize) -> Result<(), (Fault, bool)> {
        let from = self.locate(src, size, false).map_err(|f| (f, false))?;
        let to = self.locate(dst, size, true).map_err(|f| (f, true))?;
        // SAFETY: both ranges were checked by `locate`; `copy` allows them to overlap.
        unsafe { std::ptr::copy(from, to, size) };
        Ok(())
    }

    /// Reads a NUL-terminated string (at most 64 KiB).
    pub fn read_c_string(&mut self, addr: u64) -> Vec<u8> {
        let mut out = Vec::new();
        while out.len() < 65536 {
            match self.load(addr + out.len() as u64, 1) {
                Ok(0) | Err(_) => break,
                Ok(b) => out.push(b as u8),
            }
        }
        out
    }

    /// Applies `f` atomically to the `size`-byte (4 or 8) value at `addr`. `f` returns the new
    /// value, or None to leave memory unchanged; the result is the old value and what was stored.
    pub fn atomic(
        &mut self,
        addr: u64,
        size: usize,
        f: impl Fn(u64) -> Option<u64>,
    ) -> Result<(u64, Option<u64>), Fault> {
        let p = self.locate(addr, size, true)?;
        if !(p as usize).is_multiple_of(size) {
            return Err(Fault { addr, size: size as u32 });
        }
        // SAFETY: `p` is aligned and in bounds; atomics make concurrent work-groups safe.
        let old = unsafe {
            if size == 8 {
                let a = AtomicU64::from_ptr(p as *mut u64);
                a.fetch_update(Ordering::SeqCst, Ordering::SeqCst, &f).unwrap_or_else(|v| v)
            } else {
                let a = AtomicU32::from_ptr(p as *mut u32);
                a.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |v| f(v as u64).map(|n| n as u32))
                    .unwrap_or_else(|v| v) as u64
            }
        };
        // `f` is pure, so replaying it on the value it last saw tells what was stored.
        let stored = f(old).map(|n| if size == 8 { n } else { n & 0xffff_ffff });
        Ok((old, stored))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_bounds_and_null() {
        let mut buf = vec![0u8; 8];
        let mut globals = GlobalMemory::new();
        let idx = globals.add(&mut buf, "a".into(), false);
        let mut local = vec![0u8; 4];
        let mut private = vec![0u8; 16];
        let mut mem = Memory { globals: &globals, local: &mut local, local_regions: &[(0, 4)], private: &mut private };
        let a = address(SPACE_GLOBAL, idx, 4);
        mem.store(a, 4, 0xdeadbeef).unwrap();
        assert_eq!(mem.load(a, 4).unwrap(), 0xdeadbeef);
        assert!(mem.load(a + 2, 4).is_err());
        assert!(mem.load(0, 4).is_err());
        assert!(mem.load(address(SPACE_LOCAL, 0, 1), 4).is_err());
        assert_eq!(mem.atomic(a, 4, |v| Some(v + 1)).unwrap(), (0xdeadbeef, Some(0xdeadbef0)));
        assert_eq!(mem.load(a, 4).unwrap(), 0xdeadbef0);
    }
}
