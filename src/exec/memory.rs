//! Emulated memory: the allocations tagged addresses point into, and bounds-checked access.
//!
//! Addresses are tagged as [`crate::ir::value`] describes (space, allocation, offset); every
//! allocation starts at offset 0, so alignment inside it is the real alignment. An access is
//! checked against its allocation before any byte is touched; a bad one yields [`Fault`] and
//! touches nothing. This module cannot see who accesses memory or in which order: races are the
//! detector's business, reached through the interpreter's hooks.
//!
//! Global memory is shared by every work-item of a launch, and work-groups run in parallel on
//! several threads, so a racy kernel makes our threads race on its buffers. Every access to a
//! global allocation is therefore an atomic one: relaxed loads and stores of the access's width
//! where the host address is aligned to it (they compile to the plain instructions), byte-wise
//! relaxed ones otherwise, and the kernel's own atomics as read-modify-write atomics of their
//! width. Under the Rust memory model no access here is a data race. What that model still does
//! not define is two racing atomic accesses to partially overlapping bytes with different sizes
//! (a kernel writing an `int` in one work-group while another reads one of its bytes): the bytes
//! then read are whatever the hardware's loads give, as on a device, and such a kernel has a
//! data race that the detector reports. Local and private memory belong to one work-group and one
//! work-item, are reached through `&mut` slices, and need none of this; nor does a sealed global
//! allocation ([`GlobalMemory::seal`]: one the launch only reads, and `__constant` memory), which
//! refuses every write, so that plain loads of it, vectorised over a run, race with nothing.
//!
//! A buffer the host created `CL_MEM_READ_ONLY` or `CL_MEM_WRITE_ONLY` ([`BufferMode`]) carries
//! the accesses it refuses in its region, tested in the same comparison as its bounds: an access
//! it refuses fails with [`FaultKind::Mode`], and the caller, having reported it, may perform it
//! anyway with the mode ignored (`*_as` with [`ANY`]), as a device would.

use std::sync::atomic::{AtomicU8, AtomicU16, AtomicU32, AtomicU64, Ordering};

use super::image::ImageDesc;

// Re-exported for the code that still takes the address model from here; its home is `ir::value`.
pub use crate::ir::value::{
    INDEX_MASK, INDEX_SHIFT, OFFSET_MASK, SPACE_GLOBAL, SPACE_LOCAL, SPACE_PRIVATE, SPACE_SHIFT, address, split,
};

/// What the host lets a kernel do with a buffer: its `CL_MEM_READ_ONLY` / `CL_MEM_WRITE_ONLY`
/// flag (`ro` / `wo` in a launch file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BufferMode {
    #[default]
    ReadWrite,
    ReadOnly,
    WriteOnly,
}

/// The kind of access asked of memory, as a bit set: a load, a store, or both (an atomic
/// read-modify-write). [`ANY`] asks nothing of a buffer's mode, only of its bounds (only NULL,
/// which has no bytes, refuses it).
pub type Want = u8;
pub const LOAD: Want = 1;
pub const STORE: Want = 2;
pub const ANY: Want = 4;
/// Added by every method that writes: refused by `__constant` allocations (and NULL) even to
/// [`ANY`], which only a buffer's mode yields to.
const WRITE: Want = 8;

/// One global allocation: a buffer argument or a program-scope variable.
#[derive(Clone, Copy)]
pub struct Region {
    base: *mut u8,
    len: usize,
    /// The [`Want`] bits this allocation refuses: [`STORE`] for `__constant` memory and
    /// read-only buffers, [`LOAD`] for write-only buffers.
    deny: Want,
    /// Refused stores are out of bounds (a `__constant` allocation), not a mode violation.
    constant: bool,
}

impl Region {
    /// Nothing writes the allocation while the launch runs: it refuses [`WRITE`] (`__constant`
    /// memory, a buffer [`GlobalMemory::seal`] sealed, NULL), so a refused write is out of bounds
    /// and reads are plain ones.
    #[inline(always)]
    fn sealed(&self) -> bool {
        self.deny & WRITE != 0
    }
}

// SAFETY: a Region points into a buffer that the launch borrows mutably for its whole duration
// (see `GlobalMemory::add`), so no other code touches those bytes meanwhile; the threads that
// share it reach it only through the bounds-checked methods below, and only with atomic accesses
// (see `shared`), which may race with each other without undefined behaviour, or, in a sealed
// allocation, which refuses every write, with plain reads.
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
        let null = Region { base: std::ptr::null_mut(), len: 0, deny: LOAD | STORE | ANY | WRITE, constant: true };
        GlobalMemory { regions: vec![null], names: vec!["NULL".into()], constant: vec![false], images: vec![None] }
    }

    /// Adds an allocation over `bytes`, which must stay alive and unmoved, and be touched by nothing
    /// else, while this table is used. Whatever the host wrote before the launch happens before
    /// the work-items' accesses (the threads are started after), and the host reads it back after
    /// they have been joined.
    /// A `constant` allocation refuses every write, and is sealed.
    pub fn add(&mut self, bytes: &mut [u8], name: String, constant: bool) -> u64 {
        let deny = if constant { STORE | WRITE } else { 0 };
        let region = Region { base: bytes.as_mut_ptr(), len: bytes.len(), deny, constant };
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

    /// Sets the host's access mode of allocation `index` (a buffer argument; not `__constant`).
    pub fn set_mode(&mut self, index: u64, mode: BufferMode) {
        if let Some(region) = self.regions.get_mut(index as usize).filter(|r| !r.constant) {
            region.deny = (region.deny & WRITE)
                | match mode {
                    BufferMode::ReadWrite => 0,
                    BufferMode::ReadOnly => STORE,
                    BufferMode::WriteOnly => LOAD,
                };
        }
    }

    /// Seals allocation `index` (a buffer the launch only reads: bound to no argument the kernel
    /// writes through, [`crate::exec::Launch::only_reads`]): from now on it refuses every write,
    /// even one that ignores the buffer's mode, as out of bounds (only an address that strayed
    /// from another allocation could reach it to write), so nothing writes it while the launch
    /// runs, and its loads are plain ones.
    pub fn seal(&mut self, index: u64) {
        if let Some(region) = self.regions.get_mut(index as usize) {
            region.deny |= WRITE;
        }
    }

    /// The host's access mode of allocation `index`.
    pub fn mode(&self, index: u64) -> BufferMode {
        match self.regions.get(index as usize) {
            Some(r) if !r.constant && r.deny & !WRITE == STORE => BufferMode::ReadOnly,
            Some(r) if !r.constant && r.deny & !WRITE == LOAD => BufferMode::WriteOnly,
            _ => BufferMode::ReadWrite,
        }
    }

    /// The host address of `size` bytes at `offset` in allocation `index`, if they lie inside it
    /// and it allows the access `want`. NULL (index 0) has no bytes. Bounds and mode are one test
    /// on the way that succeeds. A sealed allocation's bytes are [`Place::Own`]: nothing writes
    /// them.
    #[inline(always)]
    fn locate(&self, index: u64, offset: usize, size: usize, want: Want) -> Result<Place, FaultKind> {
        let region = self.regions.get(index as usize).ok_or(FaultKind::Bounds)?;
        let end = offset.checked_add(size).ok_or(FaultKind::Bounds)?;
        if end > region.len || region.deny & want != 0 {
            return Err(refused(region, end, want));
        }
        // SAFETY: offset + size <= len, so the result stays inside (or one past the end of) the
        // live buffer `base` points into (see `GlobalMemory::add`); NULL has length 0.
        let p = unsafe { region.base.add(offset) };
        Ok(if region.sealed() { Place::Own(p) } else { Place::Shared(p) })
    }
}

/// Why `region` refused an access `want` ending at byte `end`.
#[cold]
#[inline(never)]
fn refused(region: &Region, end: usize, want: Want) -> FaultKind {
    if end > region.len || region.constant || region.deny & want & WRITE != 0 {
        FaultKind::Bounds
    } else {
        FaultKind::Mode(region.deny & want)
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
    pub kind: FaultKind,
}

/// What was wrong with a failed access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// Outside its allocation (or a store to `__constant` memory).
    Bounds,
    /// Inside its allocation, but the buffer's [`BufferMode`] refuses these [`Want`] bits.
    Mode(Want),
}

impl Fault {
    /// Whether only the buffer's access mode refused the access: it is in bounds, and may be
    /// performed with [`ANY`].
    pub fn mode_only(&self) -> bool {
        matches!(self.kind, FaultKind::Mode(_))
    }
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

/// Where a checked access lands: in shared global memory, or in memory that no other thread
/// writes while the access runs (this work-item's group's or its own, or a sealed global
/// allocation, which only yields reads).
#[derive(Clone, Copy)]
enum Place {
    Shared(*mut u8),
    Own(*mut u8),
}

impl Place {
    #[inline(always)]
    fn ptr(self) -> *mut u8 {
        match self {
            Place::Shared(p) | Place::Own(p) => p,
        }
    }

    /// The same memory, `offset` bytes on (what may be accessed there is the caller's to know:
    /// the pointer is only computed, not read).
    #[inline(always)]
    fn at(self, offset: usize) -> Place {
        match self {
            Place::Shared(p) => Place::Shared(p.wrapping_add(offset)),
            Place::Own(p) => Place::Own(p.wrapping_add(offset)),
        }
    }
}

impl Memory<'_> {
    /// Where `size` bytes at `addr` are, if the whole range is inside one allocation that allows
    /// the access `want` (local and private memory allow everything).
    #[inline(always)]
    fn locate(&mut self, addr: u64, size: usize, want: Want) -> Result<Place, Fault> {
        let (space, index, offset) = split(addr);
        // A size of 4 GiB or more is reported as the largest the finding holds.
        let fault = Fault { addr, size: u32::try_from(size).unwrap_or(u32::MAX), kind: FaultKind::Bounds };
        let offset = offset as usize;
        // A length from the kernel (a `memcpy`'s) may be near 2^64: past every end, not around.
        let end = offset.checked_add(size).ok_or(fault)?;
        match space {
            SPACE_GLOBAL => self.globals.locate(index, offset, size, want).map_err(|kind| Fault { kind, ..fault }),
            SPACE_LOCAL => {
                let &(start, len) = self.local_regions.get(index as usize).ok_or(fault)?;
                if end > len {
                    return Err(fault);
                }
                Ok(Place::Own(self.local[start + offset..start + end].as_mut_ptr()))
            }
            SPACE_PRIVATE if index == 0 && end <= self.private.len() => {
                Ok(Place::Own(self.private[offset..end].as_mut_ptr()))
            }
            _ => Err(fault),
        }
    }

    /// Reads `size` (1, 2, 4 or 8; at most 8) bytes as a little-endian integer.
    #[inline(always)]
    pub fn load(&mut self, addr: u64, size: usize) -> Result<u64, Fault> {
        self.load_as(addr, size, LOAD)
    }

    /// [`Memory::load`] asking `want` of the buffer's mode ([`ANY`]: bounds only).
    #[inline(always)]
    pub fn load_as(&mut self, addr: u64, size: usize, want: Want) -> Result<u64, Fault> {
        Ok(match self.locate(addr, size, want)? {
            // SAFETY: `locate` checked that `size` bytes at `p` lie inside one global allocation.
            Place::Shared(p) => unsafe { shared::load(p, size) },
            // SAFETY: `locate` checked that `size` bytes at `p` lie inside a slice we borrow
            // mutably, so nothing else accesses them.
            Place::Own(p) => unsafe { own_load(p, size) },
        })
    }

    /// Writes the low `size` bytes of `value` (at most 8).
    #[inline(always)]
    pub fn store(&mut self, addr: u64, size: usize, value: u64) -> Result<(), Fault> {
        self.store_as(addr, size, value, STORE)
    }

    /// [`Memory::store`] asking `want` of the buffer's mode ([`ANY`]: bounds only).
    #[inline(always)]
    pub fn store_as(&mut self, addr: u64, size: usize, value: u64, want: Want) -> Result<(), Fault> {
        match self.locate(addr, size, want | WRITE)? {
            // SAFETY: `locate` checked that `size` bytes at `p` lie inside one writable global
            // allocation.
            Place::Shared(p) => unsafe { shared::store(p, size, value) },
            // SAFETY: as in `load`.
            Place::Own(p) => unsafe { own_store(p, size, value) },
        }
        Ok(())
    }

    /// Reads `out.len()` consecutive values of `size` bytes (at most 8) starting at `addr` into
    /// `out`: one bounds check for the whole run (the same load by consecutive work-items),
    /// nothing read when it is refused. Memory no other thread writes is read in one loop over
    /// slices, which the compiler vectorises.
    #[inline(never)]
    pub fn load_run(&mut self, addr: u64, size: usize, out: &mut [u64]) -> Result<(), Fault> {
        #[cfg(target_arch = "x86_64")]
        if super::cpu::wide() {
            // SAFETY: `cpu::wide` found AVX2 on this CPU.
            return unsafe { self.load_run_v3(addr, size, out) };
        }
        self.load_run_body(addr, size, out)
    }

    /// [`Memory::load_run`] compiled with AVX2 (its conversions four values an instruction).
    /// Call only where [`super::cpu::wide`] holds.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn load_run_v3(&mut self, addr: u64, size: usize, out: &mut [u64]) -> Result<(), Fault> {
        self.load_run_body(addr, size, out)
    }

    #[inline(always)]
    fn load_run_body(&mut self, addr: u64, size: usize, out: &mut [u64]) -> Result<(), Fault> {
        let n = out.len();
        let place = self.locate(addr, size * n, LOAD)?;
        // One loop per width, so that each element is one plain load.
        match size {
            4 => load_each::<4>(place, out),
            8 => load_each::<8>(place, out),
            2 => load_each::<2>(place, out),
            1 => load_each::<1>(place, out),
            _ => {
                for (j, o) in out.iter_mut().enumerate() {
                    // SAFETY: `locate` checked the whole run, so each element lies inside it
                    // (and, for `Own`, inside memory no other thread writes).
                    *o = unsafe {
                        let p = place.ptr().add(j * size);
                        match place {
                            Place::Shared(_) => shared::load(p, size),
                            Place::Own(_) => own_load(p, size),
                        }
                    };
                }
            }
        }
        Ok(())
    }

    /// Writes `n` values, the `j`th `value(j)` of `size` bytes (at most 8), one after the other
    /// from `addr`: one bounds check for the whole run, nothing written when it is refused.
    #[inline(never)]
    pub fn store_run(&mut self, addr: u64, size: usize, n: usize, value: impl Fn(usize) -> u64) -> Result<(), Fault> {
        let place = self.locate(addr, size * n, STORE | WRITE)?;
        match size {
            4 => store_each::<4>(place, n, value),
            8 => store_each::<8>(place, n, value),
            2 => store_each::<2>(place, n, value),
            1 => store_each::<1>(place, n, value),
            _ => {
                for j in 0..n {
                    // SAFETY: as in `load_run`, for writes to a range `locate` checked writable.
                    unsafe {
                        let p = place.ptr().add(j * size);
                        match place {
                            Place::Shared(_) => shared::store(p, size, value(j)),
                            Place::Own(_) => own_store(p, size, value(j)),
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Reads `size` bytes (1, 2, 4 or 8) at each of `n` addresses `addr(j)`, `j` in `0..n`, which
    /// lie between `lo` and `hi` (their smallest and largest) in one allocation and are multiples
    /// of `size`: one bounds check for that span, then `out(j, value)` in order. Refused, with
    /// nothing read, when the span is not inside one allocation that allows loads or `size` is
    /// another width. An address outside the span or between elements breaks the caller's
    /// promise: it is read as the nearest end of the span, or the element it falls in (never
    /// outside the span).
    #[inline(never)]
    pub fn load_gather(
        &mut self,
        (lo, hi): (u64, u64),
        size: usize,
        n: usize,
        addr: impl Fn(usize) -> u64,
        mut out: impl FnMut(usize, u64),
    ) -> Result<(), Fault> {
        let (place, last) = self.locate_span((lo, hi), size, LOAD)?;
        // Offsets from `lo` rounded down to whole elements: where `lo` is aligned, so is each.
        let offset = |j| (addr(j).wrapping_sub(lo).min(last) & !(size as u64 - 1)) as usize;
        macro_rules! each {
            ($n:literal) => {
                match place {
                    // SAFETY (all arms): `offset` is at most `last`, so the `$n` bytes lie in the
                    // span `locate_span` checked: a global allocation (atomic access) or memory no
                    // other thread writes (`own_load`); where `p` is aligned to `$n`, so is every
                    // element's start.
                    Place::Shared(p) if (p as usize).is_multiple_of($n) => {
                        for j in 0..n {
                            out(j, unsafe { shared::load_aligned::<$n>(p.add(offset(j))) })
                        }
                    }
                    Place::Shared(p) => {
                        for j in 0..n {
                            out(j, unsafe { shared::load(p.add(offset(j)), $n) })
                        }
                    }
                    Place::Own(p) => {
                        for j in 0..n {
                            out(j, unsafe { own_load(p.add(offset(j)), $n) })
                        }
                    }
                }
            };
        }
        match size {
            4 => each!(4),
            8 => each!(8),
            2 => each!(2),
            _ => each!(1),
        }
        Ok(())
    }

    /// Reads rows of `n` consecutive values of `size` bytes (1, 2, 4 or 8), row `r` from
    /// `start(r)`, into `out` (row `r` at `out[r * n..]`; `out.len() / n` rows): one bounds check
    /// for the span from `lo` to `hi` (the last element of the row that ends highest), refused
    /// with nothing read as it is. The caller promises that each row lies in the span, its start
    /// a multiple of `size`; a row that does not is read as the nearest row inside it (never
    /// outside the span).
    #[inline(never)]
    pub fn load_rows(
        &mut self,
        span: (u64, u64),
        (size, n): (usize, usize),
        start: impl Fn(usize) -> u64,
        out: &mut [u64],
    ) -> Result<(), Fault> {
        #[cfg(target_arch = "x86_64")]
        if super::cpu::wide() {
            // SAFETY: `cpu::wide` found AVX2 on this CPU.
            return unsafe { self.load_rows_v3((span, (size, n)), start, out) };
        }
        self.load_rows_body(span, (size, n), start, out)
    }

    /// [`Memory::load_rows`] (the span and the rows' shape together) compiled with AVX2. Call
    /// only where [`super::cpu::wide`] holds.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn load_rows_v3(
        &mut self,
        rows: ((u64, u64), (usize, usize)),
        at: impl Fn(usize) -> u64,
        out: &mut [u64],
    ) -> Result<(), Fault> {
        self.load_rows_body(rows.0, rows.1, at, out)
    }

    #[inline(always)]
    fn load_rows_body(
        &mut self,
        (lo, hi): (u64, u64),
        (size, n): (usize, usize),
        start: impl Fn(usize) -> u64,
        out: &mut [u64],
    ) -> Result<(), Fault> {
        let row = self.locate_rows((lo, hi), size, n, LOAD)?;
        let rows = out.chunks_exact_mut(n).enumerate();
        macro_rules! each {
            ($n:literal) => {
                for (r, out) in rows {
                    load_each::<$n>(row(start(r)), out)
                }
            };
        }
        match size {
            4 => each!(4),
            8 => each!(8),
            2 => each!(2),
            _ => each!(1),
        }
        Ok(())
    }

    /// Writes rows as [`Memory::load_rows`] reads them, value `j` of row `r` `value(r, j)`, in
    /// row order: one bounds check for the span, refused with nothing written as it is.
    #[inline(never)]
    pub fn store_rows(
        &mut self,
        (lo, hi): (u64, u64),
        (size, n, rows): (usize, usize, usize),
        start: impl Fn(usize) -> u64,
        value: impl Fn(usize, usize) -> u64,
    ) -> Result<(), Fault> {
        let row = self.locate_rows((lo, hi), size, n, STORE | WRITE)?;
        let at = |r: usize| row(start(r));
        match size {
            4 => (0..rows).for_each(|r| store_each::<4>(at(r), n, |j| value(r, j))),
            8 => (0..rows).for_each(|r| store_each::<8>(at(r), n, |j| value(r, j))),
            2 => (0..rows).for_each(|r| store_each::<2>(at(r), n, |j| value(r, j))),
            _ => (0..rows).for_each(|r| store_each::<1>(at(r), n, |j| value(r, j))),
        }
        Ok(())
    }

    /// [`Memory::locate_span`] for rows of `n` elements of `size` bytes: where a row starting at
    /// an address goes, as the nearest row inside the span (its `n` elements end inside it) that
    /// starts at a whole element.
    #[inline(always)]
    fn locate_rows(
        &mut self,
        (lo, hi): (u64, u64),
        size: usize,
        n: usize,
        want: Want,
    ) -> Result<impl Fn(u64) -> Place, Fault> {
        let (place, last) = self.locate_span((lo, hi), size, want)?;
        let row = n.checked_sub(1).and_then(|k| k.checked_mul(size)).map(|b| b as u64);
        let Some(starts) = row.and_then(|b| last.checked_sub(b)) else {
            return Err(Fault { addr: hi, size: size as u32, kind: FaultKind::Bounds });
        };
        Ok(move |start: u64| place.at((start.wrapping_sub(lo).min(starts) & !(size as u64 - 1)) as usize))
    }

    /// Writes the low `size` bytes (1, 2, 4 or 8) of `value(j)` at `addr(j)` for `j` in `0..n`,
    /// in that order, as [`Memory::load_gather`] reads: one bounds check for the span between
    /// `lo` and `hi`, refused with nothing written as it is.
    #[inline(never)]
    pub fn store_scatter(
        &mut self,
        (lo, hi): (u64, u64),
        size: usize,
        n: usize,
        addr: impl Fn(usize) -> u64,
        value: impl Fn(usize) -> u64,
    ) -> Result<(), Fault> {
        let (place, last) = self.locate_span((lo, hi), size, STORE | WRITE)?;
        let offset = |j| (addr(j).wrapping_sub(lo).min(last) & !(size as u64 - 1)) as usize;
        macro_rules! each {
            ($n:literal) => {
                match place {
                    // SAFETY (all arms): as in `load_gather`, for writes to a span checked
                    // writable.
                    Place::Shared(p) if (p as usize).is_multiple_of($n) => {
                        for j in 0..n {
                            unsafe { shared::store_aligned::<$n>(p.add(offset(j)), value(j)) }
                        }
                    }
                    Place::Shared(p) => {
                        for j in 0..n {
                            unsafe { shared::store(p.add(offset(j)), $n, value(j)) }
                        }
                    }
                    Place::Own(p) => {
                        for j in 0..n {
                            unsafe { own_store(p.add(offset(j)), $n, value(j)) }
                        }
                    }
                }
            };
        }
        match size {
            4 => each!(4),
            8 => each!(8),
            2 => each!(2),
            _ => each!(1),
        }
        Ok(())
    }

    /// Where the span from `lo` to `hi + size` is, when `lo` and `hi` name the same allocation
    /// and it allows `want` over the whole span, and `size` is 1, 2, 4 or 8; with the largest
    /// offset from `lo` an access of `size` bytes may start at.
    #[inline(always)]
    fn locate_span(&mut self, (lo, hi): (u64, u64), size: usize, want: Want) -> Result<(Place, u64), Fault> {
        let fault = Fault { addr: hi, size: size as u32, kind: FaultKind::Bounds };
        if lo >> INDEX_SHIFT != hi >> INDEX_SHIFT || hi < lo || !matches!(size, 1 | 2 | 4 | 8) {
            return Err(fault);
        }
        let last = hi - lo;
        let span = usize::try_from(last).ok().and_then(|l| l.checked_add(size)).ok_or(fault)?;
        Ok((self.locate(lo, span, want)?, last))
    }

    /// Reads `out.len()` bytes at `addr`.
    pub fn read_bytes(&mut self, addr: u64, out: &mut [u8]) -> Result<(), Fault> {
        self.read_bytes_as(addr, out, LOAD)
    }

    /// [`Memory::read_bytes`] asking `want` of the buffer's mode ([`ANY`]: bounds only).
    pub fn read_bytes_as(&mut self, addr: u64, out: &mut [u8], want: Want) -> Result<(), Fault> {
        match self.locate(addr, out.len(), want)? {
            // SAFETY: `locate` checked the whole range, inside one global allocation.
            Place::Shared(p) => unsafe { shared::read(p, out) },
            // SAFETY: `locate` checked the whole range, inside a slice we borrow mutably or a
            // sealed allocation (which nothing writes); `out` is another allocation, so they do
            // not overlap.
            Place::Own(p) => unsafe { std::ptr::copy_nonoverlapping(p, out.as_mut_ptr(), out.len()) },
        }
        Ok(())
    }

    /// Writes `bytes` at `addr`.
    pub fn write_bytes(&mut self, addr: u64, bytes: &[u8]) -> Result<(), Fault> {
        match self.locate(addr, bytes.len(), STORE | WRITE)? {
            // SAFETY: `locate` checked the whole range, inside one writable global allocation.
            Place::Shared(p) => unsafe { shared::write(p, bytes) },
            // SAFETY: as in `read_bytes`.
            Place::Own(p) => unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) },
        }
        Ok(())
    }

    /// Checks that `size` bytes at `addr` lie inside one allocation that allows `want`.
    #[inline]
    pub fn check(&mut self, addr: u64, size: usize, want: Want) -> Result<(), Fault> {
        self.locate(addr, size, want).map(|_| ())
    }

    /// `memmove(dst, src, size)`. Returns which side failed: `Err((fault, true))` for the store.
    pub fn copy(&mut self, dst: u64, src: u64, size: usize) -> Result<(), (Fault, bool)> {
        self.copy_as(dst, src, size, (LOAD, STORE))
    }

    /// [`Memory::copy`] asking `want` (for the source, for the destination) of the buffers' modes.
    pub fn copy_as(&mut self, dst: u64, src: u64, size: usize, want: (Want, Want)) -> Result<(), (Fault, bool)> {
        let from = self.locate(src, size, want.0).map_err(|f| (f, false))?;
        let to = self.locate(dst, size, want.1 | WRITE).map_err(|f| (f, true))?;
        match (from, to) {
            // SAFETY: both ranges were checked by `locate` and lie in memory no other thread
            // writes: the destination in memory we borrow mutably (the local arena or the
            // private stack), the source there too or in a sealed allocation (distinct memory);
            // `copy` allows overlap.
            (Place::Own(from), Place::Own(to)) => unsafe { std::ptr::copy(from, to, size) },
            // SAFETY: both ranges were checked by `locate`; at least one is shared, and
            // `shared::copy` touches both with atomic accesses only, in memmove order.
            _ => unsafe { shared::copy(to.ptr(), from.ptr(), size) },
        }
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

    /// [`Memory::atomic_as`] of a 4- or 8-byte value in `__local` memory, which this work-item's
    /// group holds alone (a plain read-modify-write is atomic there, and no buffer mode applies):
    /// the same result, or None where `addr` is not such a value in bounds (the caller then
    /// takes the general path, which says why).
    #[inline(always)]
    pub fn atomic_local(
        &mut self,
        addr: u64,
        size: usize,
        f: &impl Fn(u64) -> Option<u64>,
    ) -> Option<(u64, Option<u64>)> {
        let at = local_word(self.local_regions, addr, size, 1)?;
        match size {
            4 => update_local::<4>(self.local, at, f),
            _ => update_local::<8>(self.local, at, f),
        }
    }

    /// Applies `f` atomically to the `size`-byte (4 or 8) value at `addr`. `f` returns the new
    /// value, or None to leave memory unchanged; the result is the old value and what was stored.
    pub fn atomic(
        &mut self,
        addr: u64,
        size: usize,
        f: impl Fn(u64) -> Option<u64>,
    ) -> Result<(u64, Option<u64>), Fault> {
        self.atomic_as(addr, size, LOAD | STORE, &f)
    }

    /// [`Memory::atomic`] asking `want` of the buffer's mode. A value not aligned to its size
    /// (which OpenCL leaves undefined, and the caller reports) is still read and written, but
    /// in global memory byte by byte, so not atomically against other work-groups' threads.
    pub fn atomic_as(
        &mut self,
        addr: u64,
        size: usize,
        want: Want,
        f: &impl Fn(u64) -> Option<u64>,
    ) -> Result<(u64, Option<u64>), Fault> {
        // Only an atomic that may store (`want` holds STORE) asks WRITE, which `__constant` and
        // sealed allocations refuse; one that only loads stores nothing, whatever `f` says.
        let stores = want & STORE != 0;
        let place = self.locate(addr, size, if stores { want | WRITE } else { want })?;
        let f = &|v: u64| f(v).filter(|_| stores);
        let p = place.ptr();
        // Local and private memory are this group's or this work-item's alone: a plain
        // read-modify-write is atomic there (no lock prefix, which histogram bins pay per lane).
        // A sealed allocation, which only a load reaches here, is read plainly: nothing writes it.
        if matches!(place, Place::Own(_)) || !(p as usize).is_multiple_of(size) {
            return Ok(plain_update(place, size, f));
        }
        // SAFETY: `p` is in bounds (`locate`) and aligned to `size` (just checked), and every
        // other access to global memory is atomic too (see `shared`).
        let old = unsafe {
            if size == 8 {
                let a = AtomicU64::from_ptr(p as *mut u64);
                a.fetch_update(Ordering::SeqCst, Ordering::SeqCst, f).unwrap_or_else(|v| v)
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

/// [`Memory::load_run`] of `out.len()` values of `N` bytes at `place`, which `locate` checked
/// for all of them. Where the first is aligned, so is every other: the loop then has no alignment
/// test. Memory no other thread writes is read as a slice, in a loop the compiler vectorises.
#[inline(always)]
fn load_each<const N: usize>(place: Place, out: &mut [u64]) {
    let n = out.len();
    match place {
        Place::Shared(p) if (p as usize).is_multiple_of(N) => {
            for (j, o) in out.iter_mut().enumerate() {
                // SAFETY: element `j` lies inside the run `locate` checked, in a global
                // allocation, and is aligned as its first is.
                *o = unsafe { shared::load_aligned::<N>(p.add(j * N)) };
            }
        }
        Place::Shared(p) => {
            for (j, o) in out.iter_mut().enumerate() {
                // SAFETY: element `j` lies inside the run `locate` checked, in a global allocation.
                *o = unsafe { shared::load(p.add(j * N), N) };
            }
        }
        Place::Own(p) => {
            // SAFETY: the `n` elements lie inside the run `locate` checked, in memory no other
            // thread writes while this runs (local or private memory we borrow mutably, or a
            // sealed allocation); `out` is the register file, another allocation.
            let elements = unsafe { std::slice::from_raw_parts(p.cast_const().cast::<[u8; N]>(), n) };
            widen::<N>(elements, out);
        }
    }
}

/// Each little-endian element of `N` bytes (1, 2, 4 or 8) zero-extended into `out`, in a loop
/// the compiler vectorises (four values an instruction where the caller is compiled with AVX2:
/// `load_run_v3`, `load_rows_v3`).
#[inline(always)]
fn widen<const N: usize>(elements: &[[u8; N]], out: &mut [u64]) {
    let value = |e: &[u8; N]| match N {
        1 => e[0] as u64,
        2 => u16::from_le_bytes([e[0], e[1]]) as u64,
        4 => u32::from_le_bytes([e[0], e[1], e[2], e[3]]) as u64,
        _ => u64::from_le_bytes(std::array::from_fn(|i| e[i])),
    };
    // Blocks of 8 as arrays: all 8 read before any is written, which the compiler vectorises
    // with no loop set-up and no run-time overlap test (a short row of a two-dimensional group
    // is one or two of them); then the rest one by one.
    let (blocks, rest) = elements.as_chunks::<8>();
    let (outs, out_rest) = out.as_chunks_mut::<8>();
    for (o, e) in outs.iter_mut().zip(blocks) {
        *o = std::array::from_fn(|k| value(&e[k]));
    }
    for (o, e) in out_rest.iter_mut().zip(rest) {
        *o = value(e);
    }
}

/// [`Memory::store_run`] of `n` values of `N` bytes at `place`, which `locate` checked writable
/// for all of them (aligned as [`load_each`] finds them).
#[inline(always)]
fn store_each<const N: usize>(place: Place, n: usize, value: impl Fn(usize) -> u64) {
    match place {
        Place::Shared(p) if (p as usize).is_multiple_of(N) => {
            for j in 0..n {
                // SAFETY: as in `load_each`, for writes to a writable global allocation.
                unsafe { shared::store_aligned::<N>(p.add(j * N), value(j)) };
            }
        }
        Place::Shared(p) => {
            for j in 0..n {
                // SAFETY: as in `load_each`, for writes to a writable global allocation.
                unsafe { shared::store(p.add(j * N), N, value(j)) };
            }
        }
        Place::Own(p) => {
            for j in 0..n {
                // SAFETY: as in `load_each`, for writes to memory we borrow mutably.
                unsafe { own_store(p.add(j * N), N, value(j)) };
            }
        }
    }
}

/// Where `size` bytes at `addr` lie in a work-item's private memory of `len` bytes, if `addr`
/// is a private address and they lie inside it: what [`Memory`] accepts there.
#[inline(always)]
pub fn private_range(len: usize, addr: u64, size: usize) -> Option<std::ops::Range<usize>> {
    let (space, index, offset) = split(addr);
    let offset = offset as usize;
    let end = offset.checked_add(size).filter(|&end| end <= len)?;
    (space == SPACE_PRIVATE && index == 0).then_some(offset..end)
}

/// [`Memory::load`] of private memory `private` without building a [`Memory`]: the value, or
/// None where `addr` is not a private address inside it (the caller then takes the general
/// path, which reports why).
#[inline(always)]
pub fn load_private(private: &[u8], addr: u64, size: usize) -> Option<u64> {
    Some(le_word(&private[private_range(private.len(), addr, size)?]))
}

/// [`Memory::store`] of the low `size` bytes (at most 8) of `value` to private memory `private`:
/// false (and nothing written) where [`load_private`] would give None.
#[inline(always)]
pub fn store_private(private: &mut [u8], addr: u64, size: usize, value: u64) -> bool {
    let Some(range) = private_range(private.len(), addr, size) else { return false };
    set_le_word(&mut private[range], value);
    true
}

/// Where the `size`-byte (4 or 8) value at `__local` address `addr` starts in a group's local
/// arena whose regions are `regions`, when it lies inside its region at an offset that is a
/// multiple of `align` (a power of two).
#[inline(always)]
pub fn local_word(regions: &[(usize, usize)], addr: u64, size: usize, align: usize) -> Option<usize> {
    let (space, index, offset) = split(addr);
    if space != SPACE_LOCAL || !(size == 4 || size == 8) || offset as usize & (align - 1) != 0 {
        return None;
    }
    let &(start, len) = regions.get(index as usize)?;
    (offset as usize + size <= len).then_some(start + offset as usize)
}

/// The read-modify-write `f` of the `N`-byte (4 or 8) value at `at` of a group's local arena
/// `local` (the group holds it alone: a plain update is atomic there): the old value and what
/// was stored; None, with nothing done, where the value is not inside the arena.
#[inline(always)]
pub fn update_local<const N: usize>(
    local: &mut [u8],
    at: usize,
    f: impl Fn(u64) -> Option<u64>,
) -> Option<(u64, Option<u64>)> {
    let bytes: &mut [u8; N] = local.get_mut(at..at + N)?.try_into().ok()?;
    let (old, keep) = match N {
        4 => (u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as u64, 0xffff_ffff),
        _ => (u64::from_le_bytes(*bytes.first_chunk::<8>()?), u64::MAX),
    };
    let stored = f(old).map(|n| n & keep);
    if let Some(n) = stored {
        bytes.copy_from_slice(&n.to_le_bytes()[..N]);
    }
    Some((old, stored))
}

/// The little-endian integer of `bytes` (its first 8 when longer): the common widths without a
/// call to `memcpy`.
#[inline(always)]
fn le_word(bytes: &[u8]) -> u64 {
    match *bytes {
        [a] => a as u64,
        [a, b] => u16::from_le_bytes([a, b]) as u64,
        [a, b, c, d] => u32::from_le_bytes([a, b, c, d]) as u64,
        [a, b, c, d, e, f, g, h, ..] => u64::from_le_bytes([a, b, c, d, e, f, g, h]),
        _ => {
            let mut word = [0u8; 8];
            word[..bytes.len()].copy_from_slice(bytes);
            u64::from_le_bytes(word)
        }
    }
}

/// Writes the low bytes of `value` over `bytes` (at most 8 of them, as [`le_word`] reads them).
#[inline(always)]
fn set_le_word(bytes: &mut [u8], value: u64) {
    let le = value.to_le_bytes();
    match bytes.len() {
        1 => bytes[0] = le[0],
        2 => bytes.copy_from_slice(&le[..2]),
        4 => bytes.copy_from_slice(&le[..4]),
        8 => bytes.copy_from_slice(&le),
        n => {
            let n = n.min(8);
            bytes[..n].copy_from_slice(&le[..n]);
        }
    }
}

/// The read-modify-write of an atomic on memory nobody else accesses, or of a misaligned one
/// (the byte-wise view of `shared`): a load, `f`, and a store when it returns a value.
#[inline]
fn plain_update(place: Place, size: usize, f: impl Fn(u64) -> Option<u64>) -> (u64, Option<u64>) {
    let keep = if size == 8 { u64::MAX } else { 0xffff_ffff };
    // SAFETY: `locate` checked the `size` bytes at the place: inside a global allocation for
    // `Shared` (accessed byte by byte with atomics, see `shared`) or inside memory this
    // work-item's group or the work-item itself borrows mutably for `Own` (or a sealed
    // allocation, which nothing writes: `atomic_as` hands one over only for a load, whose `f`
    // stores nothing).
    unsafe {
        let old = match place {
            Place::Shared(p) => shared::load(p, size),
            Place::Own(p) => own_load(p, size),
        };
        let stored = f(old).map(|n| n & keep);
        if let Some(n) = stored {
            match place {
                Place::Shared(p) => shared::store(p, size, n),
                Place::Own(p) => own_store(p, size, n),
            }
        }
        (old, stored)
    }
}

/// Relaxed atomic access to the bytes of global allocations, which other threads may access at
/// the same time. Aligned loads and stores of 2, 4 and 8 bytes are one atomic access of their
/// width; anything else goes byte by byte. Relaxed is enough: the emulator promises the kernel no
/// ordering beyond what its own atomics and barriers give (barriers synchronise through the
/// scheduler's locks), and the detector models ordering itself.
///
/// Every function requires that its range lies inside one allocation of a live
/// [`GlobalMemory`] (or inside memory the caller borrows mutably), which is what `locate`
/// checks; nothing in it is ever accessed non-atomically while the launch runs.
mod shared {
    use super::*;

    /// Whether `p` is aligned to `size`, a power of two.
    #[inline(always)]
    fn aligned(p: *const u8, size: usize) -> bool {
        (p as usize) & (size - 1) == 0
    }

    /// # Safety
    /// `p..p + size` lies in a global allocation (see the module doc); `size` <= 8.
    #[inline(always)]
    pub unsafe fn load(p: *mut u8, size: usize) -> u64 {
        // SAFETY (all arms): the range is valid for reads (the caller's contract), each atomic
        // view is aligned for its type (checked by `aligned`, and trivially for bytes), and all
        // other accesses to these bytes during the launch are atomic too.
        unsafe {
            match size {
                4 if aligned(p, 4) => u32::from_le(AtomicU32::from_ptr(p.cast()).load(Ordering::Relaxed)) as u64,
                8 if aligned(p, 8) => u64::from_le(AtomicU64::from_ptr(p.cast()).load(Ordering::Relaxed)),
                2 if aligned(p, 2) => u16::from_le(AtomicU16::from_ptr(p.cast()).load(Ordering::Relaxed)) as u64,
                _ => {
                    let mut v = 0u64;
                    for i in 0..size.min(8) {
                        v |= (AtomicU8::from_ptr(p.add(i)).load(Ordering::Relaxed) as u64) << (8 * i);
                    }
                    v
                }
            }
        }
    }

    /// [`load`] of `N` bytes (1, 2, 4 or 8) at an address aligned to `N`.
    ///
    /// # Safety
    /// `p..p + N` lies in a global allocation, and `p` is aligned to `N`.
    #[inline(always)]
    pub unsafe fn load_aligned<const N: usize>(p: *mut u8) -> u64 {
        debug_assert!((p as usize).is_multiple_of(N));
        // SAFETY: as in `load`, with the alignment the caller promises.
        unsafe {
            match N {
                4 => u32::from_le(AtomicU32::from_ptr(p.cast()).load(Ordering::Relaxed)) as u64,
                8 => u64::from_le(AtomicU64::from_ptr(p.cast()).load(Ordering::Relaxed)),
                2 => u16::from_le(AtomicU16::from_ptr(p.cast()).load(Ordering::Relaxed)) as u64,
                _ => AtomicU8::from_ptr(p).load(Ordering::Relaxed) as u64,
            }
        }
    }

    /// [`store`] of the low `N` bytes (1, 2, 4 or 8) of `value` at an address aligned to `N`.
    ///
    /// # Safety
    /// `p..p + N` lies in a writable global allocation, and `p` is aligned to `N`.
    #[inline(always)]
    pub unsafe fn store_aligned<const N: usize>(p: *mut u8, value: u64) {
        debug_assert!((p as usize).is_multiple_of(N));
        // SAFETY: as in `store`, with the alignment the caller promises.
        unsafe {
            match N {
                4 => AtomicU32::from_ptr(p.cast()).store((value as u32).to_le(), Ordering::Relaxed),
                8 => AtomicU64::from_ptr(p.cast()).store(value.to_le(), Ordering::Relaxed),
                2 => AtomicU16::from_ptr(p.cast()).store((value as u16).to_le(), Ordering::Relaxed),
                _ => AtomicU8::from_ptr(p).store(value as u8, Ordering::Relaxed),
            }
        }
    }

    /// # Safety
    /// `p..p + size` lies in a writable global allocation; `size` <= 8.
    #[inline(always)]
    pub unsafe fn store(p: *mut u8, size: usize, value: u64) {
        // SAFETY: as in `load`, for writes.
        unsafe {
            match size {
                4 if aligned(p, 4) => AtomicU32::from_ptr(p.cast()).store((value as u32).to_le(), Ordering::Relaxed),
                8 if aligned(p, 8) => AtomicU64::from_ptr(p.cast()).store(value.to_le(), Ordering::Relaxed),
                2 if aligned(p, 2) => AtomicU16::from_ptr(p.cast()).store((value as u16).to_le(), Ordering::Relaxed),
                _ => {
                    for i in 0..size.min(8) {
                        AtomicU8::from_ptr(p.add(i)).store((value >> (8 * i)) as u8, Ordering::Relaxed);
                    }
                }
            }
        }
    }

    /// # Safety
    /// `p..p + out.len()` lies in a global allocation.
    pub unsafe fn read(p: *mut u8, out: &mut [u8]) {
        for (i, b) in out.iter_mut().enumerate() {
            // SAFETY: `p + i` is inside the range the caller vouches for; bytes need no alignment.
            *b = unsafe { AtomicU8::from_ptr(p.add(i)) }.load(Ordering::Relaxed);
        }
    }

    /// # Safety
    /// `p..p + bytes.len()` lies in a writable global allocation.
    pub unsafe fn write(p: *mut u8, bytes: &[u8]) {
        for (i, &b) in bytes.iter().enumerate() {
            // SAFETY: as in `read`.
            unsafe { AtomicU8::from_ptr(p.add(i)) }.store(b, Ordering::Relaxed);
        }
    }

    /// `memmove` with atomic byte accesses on both sides.
    ///
    /// # Safety
    /// Each of `to..to + size` and `from..from + size` lies in a global allocation (writable for
    /// `to`) or in memory the caller borrows mutably.
    pub unsafe fn copy(to: *mut u8, from: *mut u8, size: usize) {
        let byte = |i: usize| {
            // SAFETY: `i < size`, so both addresses are inside the ranges the caller vouches for.
            unsafe {
                AtomicU8::from_ptr(to.add(i))
                    .store(AtomicU8::from_ptr(from.add(i)).load(Ordering::Relaxed), Ordering::Relaxed)
            }
        };
        // Forward unless the destination starts inside the source, as memmove does.
        if (to as usize) > (from as usize) && (to as usize) < (from as usize).wrapping_add(size) {
            (0..size).rev().for_each(byte);
        } else {
            (0..size).for_each(byte);
        }
    }
}

/// Reads `size` (at most 8) bytes of local or private memory, or of a sealed allocation, as a
/// little-endian integer.
///
/// # Safety
/// `p..p + size` lies inside memory that no other thread writes while this runs: local or
/// private memory the caller borrows mutably, or a sealed allocation (which refuses writes).
#[inline(always)]
unsafe fn own_load(p: *mut u8, size: usize) -> u64 {
    // SAFETY: the range is valid and nothing writes it meanwhile (the caller's contract);
    // unaligned reads are fine.
    unsafe {
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
    }
}

/// Writes the low `size` (at most 8) bytes of `value` to local or private memory.
///
/// # Safety
/// `p..p + size` lies inside local or private memory the caller borrows mutably (never a sealed
/// allocation, which refuses the writes that would lead here).
#[inline(always)]
unsafe fn own_store(p: *mut u8, size: usize, value: u64) {
    // SAFETY: as in `own_load`, for writes.
    unsafe {
        match size {
            4 => p.cast::<u32>().write_unaligned((value as u32).to_le()),
            8 => p.cast::<u64>().write_unaligned(value.to_le()),
            2 => p.cast::<u16>().write_unaligned((value as u16).to_le()),
            1 => *p = value as u8,
            _ => std::ptr::copy_nonoverlapping(value.to_le_bytes().as_ptr(), p, size.min(8)),
        }
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

    fn global(buf: &mut [u8]) -> (GlobalMemory, u64) {
        let mut globals = GlobalMemory::new();
        let idx = globals.add(buf, "g".into(), false);
        (globals, idx)
    }

    #[test]
    fn buffer_modes_refuse_in_bounds_accesses_that_any_performs() {
        let (mut ro, mut wo, mut constant) = (vec![1u8; 8], vec![2u8; 8], vec![3u8; 8]);
        let mut globals = GlobalMemory::new();
        let r = globals.add(&mut ro, "ro".into(), false);
        let w = globals.add(&mut wo, "wo".into(), false);
        let c = globals.add(&mut constant, "c".into(), true);
        globals.set_mode(r, BufferMode::ReadOnly);
        globals.set_mode(w, BufferMode::WriteOnly);
        globals.set_mode(c, BufferMode::WriteOnly);
        assert_eq!(
            [r, w, c].map(|i| globals.mode(i)),
            [BufferMode::ReadOnly, BufferMode::WriteOnly, BufferMode::ReadWrite]
        );
        let (mut local, mut private) = (vec![0u8; 0], vec![0u8; 0]);
        let mut mem = Memory { globals: &globals, local: &mut local, local_regions: &[], private: &mut private };
        let (ra, wa, ca) = (address(SPACE_GLOBAL, r, 0), address(SPACE_GLOBAL, w, 4), address(SPACE_GLOBAL, c, 0));
        assert_eq!(mem.load(ra, 4), Ok(0x0101_0101));
        assert_eq!(mem.store(ra, 4, 9).unwrap_err().kind, FaultKind::Mode(STORE));
        assert_eq!(mem.load(wa, 4).unwrap_err().kind, FaultKind::Mode(LOAD));
        assert_eq!(mem.atomic(wa, 4, |v| Some(v + 1)).unwrap_err().kind, FaultKind::Mode(LOAD));
        // Out of bounds is out of bounds whatever the mode; a store to __constant memory too.
        assert_eq!(mem.load(wa + 4, 4).unwrap_err().kind, FaultKind::Bounds);
        assert_eq!(mem.store(ca, 4, 0).unwrap_err().kind, FaultKind::Bounds);
        assert_eq!(mem.store_as(ca, 4, 0, ANY).unwrap_err().kind, FaultKind::Bounds, "constant is never written");
        // ANY asks bounds only: the refused accesses are performed.
        mem.store_as(ra, 4, 9, ANY).unwrap();
        assert_eq!(mem.load_as(wa, 4, ANY), Ok(0x0202_0202));
        assert!(mem.load_as(0, 1, ANY).is_err(), "NULL refuses even ANY");
        assert_eq!(&ro[..4], &[9, 0, 0, 0]);
    }

    #[test]
    fn a_sealed_allocation_is_read_as_before_and_refuses_every_write() {
        let mut ro: Vec<u8> = (0..64).collect();
        let mut rw = vec![0u8; 16];
        let mut globals = GlobalMemory::new();
        let s = globals.add(&mut ro, "s".into(), false);
        let w = globals.add(&mut rw, "w".into(), false);
        globals.set_mode(s, BufferMode::ReadOnly);
        globals.seal(s);
        // A later mode keeps the seal; the mode reads as the host set it.
        globals.set_mode(s, BufferMode::ReadOnly);
        assert_eq!(globals.mode(s), BufferMode::ReadOnly);
        let (mut local, mut private) = (vec![0u8; 0], vec![0u8; 0]);
        let mut mem = Memory { globals: &globals, local: &mut local, local_regions: &[], private: &mut private };
        let g = |o: u64| address(SPACE_GLOBAL, s, o);
        let word = |o: u64| u32::from_le_bytes([o as u8, o as u8 + 1, o as u8 + 2, o as u8 + 3]) as u64;
        // Every way of reading gives the bytes: one value, a run (aligned and not, each width),
        // rows, a gather, bytes, an atomic load.
        assert_eq!(mem.load(g(4), 4), Ok(word(4)));
        for (offset, size, n) in [(0, 4, 13), (1, 4, 9), (0, 8, 7), (2, 2, 20), (3, 1, 33)] {
            let mut run = vec![u64::MAX; n];
            mem.load_run(g(offset), size, &mut run).unwrap();
            let bytes = |j: usize| offset as usize + j * size..offset as usize + (j + 1) * size;
            let each: Vec<u64> = (0..n).map(|j| bytes(j).rev().fold(0, |v, b| v << 8 | b as u64)).collect();
            assert_eq!(run, each, "{offset} {size} {n}");
        }
        let mut rows = [0u64; 8];
        mem.load_rows((g(0), g(52)), (4, 4), |r| g(40 * r as u64), &mut rows).unwrap();
        assert_eq!(rows, [0, 4, 8, 12, 40, 44, 48, 52].map(word));
        let mut gathered = [0u64; 3];
        mem.load_gather((g(8), g(60)), 4, 3, |j| g([60, 8, 20][j]), |j, v| gathered[j] = v).unwrap();
        assert_eq!(gathered, [60, 8, 20].map(word));
        let mut bytes = [0u8; 3];
        mem.read_bytes(g(61), &mut bytes).unwrap();
        assert_eq!(bytes, [61, 62, 63]);
        assert_eq!(mem.atomic_as(g(8), 4, LOAD, &|_| None), Ok((word(8), None)));
        // A load whose `f` would store still stores nothing.
        assert_eq!(mem.atomic_as(g(8), 4, LOAD, &|v| Some(v + 1)), Ok((word(8), None)));
        // Every write is refused as out of bounds, even one that ignores the mode.
        let refused = |r: Result<(), Fault>| r.unwrap_err().kind;
        assert_eq!(refused(mem.store_as(g(0), 4, 1, ANY)), FaultKind::Bounds);
        assert_eq!(refused(mem.store_run(g(0), 4, 2, |_| 1)), FaultKind::Bounds);
        assert_eq!(
            refused(mem.store_rows((g(0), g(16)), (4, 2, 2), |r| g(16 * r as u64), |_, _| 1)),
            FaultKind::Bounds
        );
        assert_eq!(refused(mem.store_scatter((g(0), g(8)), 4, 2, |j| g(8 * j as u64), |_| 1)), FaultKind::Bounds);
        assert_eq!(refused(mem.write_bytes(g(0), &[1])), FaultKind::Bounds);
        assert_eq!(mem.atomic(g(0), 4, |v| Some(v + 1)).unwrap_err().kind, FaultKind::Bounds);
        assert_eq!(
            mem.copy_as(g(0), address(SPACE_GLOBAL, w, 0), 4, (LOAD, STORE)).unwrap_err().0.kind,
            FaultKind::Bounds
        );
        // Copied from, it is read.
        mem.copy_as(address(SPACE_GLOBAL, w, 0), g(4), 4, (LOAD, STORE)).unwrap();
        assert_eq!(mem.load(address(SPACE_GLOBAL, w, 0), 4), Ok(word(4)));
        assert_eq!(ro, (0..64).collect::<Vec<u8>>(), "nothing written");
    }

    #[test]
    fn a_misaligned_atomic_is_performed_in_global_and_local_memory() {
        let mut buf = vec![0u8; 16];
        let (globals, idx) = global(&mut buf);
        let (mut local, mut private) = (vec![0u8; 8], vec![0u8; 0]);
        let mut mem = Memory { globals: &globals, local: &mut local, local_regions: &[(0, 8)], private: &mut private };
        for a in [address(SPACE_GLOBAL, idx, 1), address(SPACE_LOCAL, 0, 3)] {
            assert_eq!(mem.atomic(a, 4, |v| Some(v + 0x0102_0304)), Ok((0, Some(0x0102_0304))));
            assert_eq!(mem.atomic(a, 4, |v| Some(v + 1)), Ok((0x0102_0304, Some(0x0102_0305))));
        }
        assert_eq!(&local[3..7], &[5, 3, 2, 1]);
        assert_eq!(&buf[1..5], &[5, 3, 2, 1]);
    }

    #[test]
    fn unaligned_and_odd_sized_global_accesses_go_byte_by_byte() {
        let mut buf = vec![0u8; 24];
        let (globals, idx) = global(&mut buf);
        let (mut local, mut private) = (vec![0u8; 0], vec![0u8; 0]);
        let mut mem = Memory { globals: &globals, local: &mut local, local_regions: &[], private: &mut private };
        for (offset, size, value) in
            [(1, 4, 0x1122_3344), (3, 8, 0x0102_0304_0506_0708), (9, 2, 0xbeef), (13, 3, 0xabcdef)]
        {
            let a = address(SPACE_GLOBAL, idx, offset);
            mem.store(a, size, value).unwrap();
            assert_eq!(mem.load(a, size).unwrap(), value, "offset {offset} size {size}");
        }
        let a = address(SPACE_GLOBAL, idx, 16);
        mem.store(a, 8, 0x8877_6655_4433_2211).unwrap();
        assert_eq!(mem.load(a + 1, 2).unwrap(), 0x3322);
        let mut out = [0u8; 5];
        mem.read_bytes(a + 2, &mut out).unwrap();
        assert_eq!(out, [0x33, 0x44, 0x55, 0x66, 0x77]);
        mem.write_bytes(a, &[9, 8]).unwrap();
        assert_eq!(mem.load(a, 4).unwrap(), 0x4433_0809);
        assert_eq!(&buf[16..24], &[9, 8, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88]);
    }

    #[test]
    fn runs_read_and_write_each_element_aligned_or_not_and_nothing_when_refused() {
        let mut buf = vec![0u8; 40];
        let (globals, idx) = global(&mut buf);
        let (mut local, mut private) = (vec![0u8; 16], vec![0u8; 0]);
        let mut mem = Memory { globals: &globals, local: &mut local, local_regions: &[(0, 16)], private: &mut private };
        let value = |j: usize| 0x0102_0304_0506_0708u64.wrapping_mul(j as u64 + 1);
        // Aligned and unaligned starts, the four widths and an odd one; global and local memory.
        let runs = [(0, 4, 5), (2, 4, 3), (8, 8, 2), (1, 8, 2), (4, 2, 6), (3, 2, 4), (5, 1, 7), (1, 3, 5)];
        for (space, limit) in [(SPACE_GLOBAL, 40), (SPACE_LOCAL, 16)] {
            let base = address(space, if space == SPACE_GLOBAL { idx } else { 0 }, 0);
            for (offset, size, n) in runs.into_iter().filter(|&(o, size, n)| o + size * n <= limit) {
                let a = base + offset as u64;
                let width = |v: u64| if size == 8 { v } else { v & ((1 << (8 * size)) - 1) };
                mem.store_run(a, size, n, value).unwrap();
                let mut read = vec![u64::MAX; n];
                mem.load_run(a, size, &mut read).unwrap();
                assert_eq!(read, (0..n).map(|j| width(value(j))).collect::<Vec<_>>(), "{offset} {size} {n}");
                for (j, &v) in read.iter().enumerate() {
                    assert_eq!(mem.load(a + (j * size) as u64, size), Ok(v), "element {j}, read alone");
                }
            }
            // A run that ends past the allocation is refused whole: nothing read, nothing written.
            let before = mem.load(base, 8).unwrap();
            let mut read = vec![u64::MAX; limit / 4 + 1];
            assert_eq!(mem.load_run(base, 4, &mut read).unwrap_err().kind, FaultKind::Bounds);
            assert!(mem.store_run(base, 4, limit / 4 + 1, |_| 0).is_err());
            assert!(read.iter().all(|&v| v == u64::MAX));
            assert_eq!(mem.load(base, 8), Ok(before));
        }
    }

    #[test]
    fn rows_read_and_write_each_row_from_its_start_with_one_check_of_the_span() {
        let mut buf = vec![0u8; 64];
        let (globals, idx) = global(&mut buf);
        let (mut local, mut private) = (vec![0u8; 0], vec![0u8; 0]);
        let mut mem = Memory { globals: &globals, local: &mut local, local_regions: &[], private: &mut private };
        let g = |o: u64| address(SPACE_GLOBAL, idx, o);
        // Three rows of four words, out of order and apart: at 32, 0 and 48 bytes.
        let starts = [g(32), g(0), g(48)];
        let span = (g(0), g(48 + 12));
        mem.store_rows(span, (4, 4, 3), |r| starts[r], |r, j| (10 * r + j) as u64).unwrap();
        let mut read = [0u64; 12];
        mem.load_rows(span, (4, 4), |r| starts[r], &mut read).unwrap();
        assert_eq!(read, [0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23]);
        assert_eq!((mem.load(g(0), 4), mem.load(g(36), 4), mem.load(g(60), 4)), (Ok(10), Ok(1), Ok(23)));
        // Eight-byte rows of two.
        mem.store_rows((g(16), g(24)), (8, 2, 1), |_| g(16), |_, j| 0x0102_0304_0506_0708 << j).unwrap();
        assert_eq!(mem.load(g(24), 8), Ok(0x0204_0608_0a0c_0e10));
        // A span past the allocation, or one shorter than a row, is refused: nothing is touched.
        let mut row = [u64::MAX; 4];
        let past = (g(0), g(64));
        assert_eq!(mem.load_rows(past, (4, 4), |_| g(0), &mut row).unwrap_err().kind, FaultKind::Bounds);
        assert!(mem.store_rows(past, (4, 4, 1), |_| g(0), |_, _| 0).is_err());
        assert!(mem.load_rows((g(0), g(4)), (4, 4), |_| g(0), &mut row).is_err());
        assert_eq!(row, [u64::MAX; 4]);
        assert_eq!(mem.load(g(0), 4), Ok(10));
    }

    #[test]
    fn copies_overlap_like_memmove_in_global_and_across_spaces() {
        let mut buf: Vec<u8> = (0..16).collect();
        let (globals, idx) = global(&mut buf);
        let mut local = vec![0u8; 8];
        let mut private = vec![0u8; 8];
        let mut mem = Memory { globals: &globals, local: &mut local, local_regions: &[(0, 8)], private: &mut private };
        let g = |o| address(SPACE_GLOBAL, idx, o);
        mem.copy(g(2), g(0), 8).unwrap();
        mem.copy(g(8), g(10), 4).unwrap();
        mem.copy(address(SPACE_LOCAL, 0, 0), g(0), 8).unwrap();
        mem.copy(address(SPACE_PRIVATE, 0, 0), address(SPACE_LOCAL, 0, 4), 4).unwrap();
        let err = mem.copy(g(12), g(0), 8).unwrap_err();
        assert!(err.1, "the store side faults");
        assert_eq!(buf, [0, 1, 0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 12, 13, 14, 15]);
        assert_eq!(local, [0, 1, 0, 1, 2, 3, 4, 5]);
        assert_eq!(&private[..4], &[2, 3, 4, 5]);
    }

    #[test]
    fn threads_share_global_memory_and_atomics_count_exactly() {
        let mut buf = vec![0u8; 64];
        let (globals, idx) = global(&mut buf);
        let threads = 4;
        std::thread::scope(|s| {
            for t in 0..threads {
                let globals = &globals;
                s.spawn(move || {
                    let (mut local, mut private) = (vec![0u8; 0], vec![0u8; 0]);
                    let mut mem = Memory { globals, local: &mut local, local_regions: &[], private: &mut private };
                    for i in 0..10_000u64 {
                        mem.atomic(address(SPACE_GLOBAL, idx, 0), 4, |v| Some(v + 1)).unwrap();
                        mem.atomic(address(SPACE_GLOBAL, idx, 8), 8, |v| Some(v + 2)).unwrap();
                        let own = address(SPACE_GLOBAL, idx, 16 + 8 * t);
                        mem.store(own, 8, i).unwrap();
                        assert_eq!(mem.load(own, 8).unwrap(), i);
                        // Racy plain accesses to one shared word: each read sees some whole value.
                        mem.store(address(SPACE_GLOBAL, idx, 48), 4, 0x0101_0101 * (t + 1)).unwrap();
                        let seen = mem.load(address(SPACE_GLOBAL, idx, 48), 4).unwrap();
                        assert!(seen.is_multiple_of(0x0101_0101) && seen / 0x0101_0101 <= threads, "{seen:#x}");
                    }
                });
            }
        });
        assert_eq!(u32::from_le_bytes(buf[0..4].try_into().unwrap()), 4 * 10_000);
        assert_eq!(u64::from_le_bytes(buf[8..16].try_into().unwrap()), 8 * 10_000);
    }
}
