//! The data-race detector: consumes the emulator's hooks and finds conflicting accesses.
//!
//! # What a race is here
//!
//! Two accesses to the same byte, by different work-items (or a work-item and a work-group's
//! `async_work_group_copy`), race when at least one is a store, they are not both atomic, and
//! nothing orders them. Inside a work-group, a barrier orders the accesses before it against
//! those after it in the address spaces its fence flags name; `sub_group_barrier` does the same
//! within its sub-group. Collective functions (work-group and sub-group ones) order nothing:
//! SPIR-V gives them an execution scope and no memory semantics, so the executor tells the
//! detector of none (`GroupHooks::sub_group_barrier` is for barriers only). Across work-groups
//! barriers order nothing; only OpenCL 2.0 release/acquire does, when its scope covers both
//! sides (`sync.rs`), and relaxed atomics (all OpenCL 1.x atomics) order nothing. An async copy
//! is in flight until a `wait_group_events` names its event. Private and constant memory never
//! race, nor does a buffer no argument of the kernel is written through.
//!
//! # Invariants
//!
//! - Reports do not depend on the thread count or the run: groups are checked on their worker
//!   threads as they run, and merged into the kernel-wide shadow strictly in work-group order.
//! - A cell of a group's shadow keeps up to two writes and two reads of its barrier interval by
//!   distinct work-items, so an access always meets one of another work-item; stamps only grow
//!   on a worker, so cells of earlier groups read as before a barrier and are never cleared.
//! - A word cell stands for four bytes in the same state: only accesses covering the whole
//!   aligned word make one; anything else turns its page into byte cells.
//! - The detector writes no text: a race is data ([`Race`], its reason a [`RaceReason`]) and
//!   the report module words it.
//!
//! # What it can miss
//!
//! - It sees one schedule: the one the emulator ran (groups one per worker, work-items in
//!   lockstep warps). A race on a path another interleaving would take, or on data another
//!   order of atomics would produce, is not seen; schedule exploration covers part of that.
//! - Inside a work-group a byte remembers two writes and two reads of the barrier interval: a
//!   further work-item's access meets only those, so a pair of instructions that would meet only
//!   through the others is not reported (the byte is, with the pairs that did meet).
//! - Kernel-wide, a byte keeps only the last write and the last read merged so far: a group's
//!   access is checked against those, so a pair with an access a group in between overwrote is
//!   not reported as its own pair (the byte still races with the later access).
//! - Reports are one per pair of instructions, access kinds (and lockstep class): further
//!   work-items and bytes of the same pair are counted (`hazards`), not shown.
//! - A record keeps 6 bits of its group's clock: a release/acquire pair more than 63 barriers or
//!   releases from the access it orders can be reported as a race (a false positive, never a
//!   missed race). Work-item ids are 32 bits: no launch beyond 2^32 work-items.
//! - Images are plain bytes: each texel read or written is an access, whatever the image's
//!   flags.
//! - Only one launch at a time: races between launches, with the host, or through SVM the
//!   layer cannot follow are outside what it sees.
//!
//! # Structure
//!
//! Each work-group checks its accesses as they happen against cells on its worker thread
//! (`group.rs`), one per word where the accesses are aligned whole words and one per byte where
//! they are not (`shadow.rs`); when it ends, its global accesses are merged, in work-group order,
//! into one kernel-wide shadow of the last write and last read, which finds the races between
//! groups. A group's result is merged by the thread that ran it when its turn comes (its
//! summaries are in that core's caches), by another only once many wait (`handoff.rs`), and
//! what is left when the run's threads are done at the run's end (`Hooks::run_end`).
//! Memory, kernel-wide: a page of global memory each group touched in one piece
//! (`c[i] = ...`) keeps the groups' runs, a few dozen bytes each, plus the bytes their writes
//! stored (one word, when they are one word over and over); once a second group touches bytes of it, 2 bytes per byte only read and 3 per byte
//! written (a record per word and kind, and a write's stored word), or 8 per byte for both
//! kinds on pages accessed in pieces smaller than words (`packed.rs`). Per worker thread: about
//! 21 bytes per byte its current group touches in words (76 per byte on pages it touches in
//! bytes), and page tables for what it touches, reused by its next group.

mod cell;
mod group;
mod handoff;
pub mod lockstep;
mod packed;
mod pages;
mod race;
mod record;
#[cfg(test)]
mod scenarios;
mod shadow;
mod sync;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU32, AtomicU64, Ordering};

use parking_lot::Mutex;

use cell::find_link;
use group::{GroupState, WorkerShadow, reported_reason};
use handoff::{Line, Pending, Spares, thread_number};
use pages::{KERNEL_PAGE as PAGE, WORD};
pub use race::{AccessType, RaceReason, RaceScope};
use race::{Place, RaceEvent, RaceLog, Reason, Side};
use record::{Entity, Record, Stamped, widen_stamp};
use shadow::{KernelPage, KernelShadow, Payload, Run};
use sync::{Acquired, GlobalSync, Link, covered};

use crate::budget::{MemoryBudget, mib};
use crate::exec::ExecError;
use crate::exec::hooks::Hooks;
use crate::exec::image::ImageDesc;
use crate::exec::{ArgValue, Launch};
use crate::program::{AddressSpace, Program};

/// What the user can change about detection.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Do not report write-write races that store identical bytes.
    pub uniform_writes_benign: bool,
    /// `--sub-group-lockstep=W`: classify every race by what lockstep execution of sub-groups of
    /// W work-items (1 to 64) says about it ([`lockstep`]). The run must use
    /// `Policy::SubGroups(W)` with sub-groups of W.
    pub sub_group_lockstep: Option<u32>,
}

/// Who made one side of a race.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Who {
    WorkItem { global: [u64; 3], local: [u64; 3], group: [u64; 3] },
    WorkGroup { group: [u64; 3] },
}

/// One side of a reported race.
#[derive(Debug, Clone, PartialEq)]
pub struct RaceAccess {
    pub access: AccessType,
    pub who: Who,
    /// The instruction's location: an index into the module's locations.
    pub loc: u32,
}

/// One reported race: a pair of instructions (and access kinds) that raced.
#[derive(Debug, Clone, PartialEq)]
pub struct Race {
    pub write_write: bool,
    /// Local memory (else global).
    pub local: bool,
    /// The kernel argument or `__local` variable the bytes belong to.
    pub buffer: String,
    /// The lowest byte offset in it where the pair raced.
    pub offset: u64,
    /// When the allocation is an image: the pixel at `offset` (x, y, then z or array layer).
    pub pixel: Option<[u64; 3]>,
    /// Distinct bytes the pair raced on.
    pub hazards: u64,
    pub uniform: bool,
    pub scope: RaceScope,
    pub reason: RaceReason,
    /// The earlier access, then the later one, at `offset`.
    pub accesses: [RaceAccess; 2],
    /// With [`Options::sub_group_lockstep`]: its class, and the sub-group width.
    pub lockstep: Option<(lockstep::LockstepClass, u32)>,
}

/// The NDRange, to turn ids into linear numbers and back.
#[derive(Debug, Clone, Copy)]
struct Geometry {
    global: [u64; 3],
    local: [u64; 3],
    offset: [u64; 3],
    groups: [u64; 3],
}

impl Geometry {
    fn group_linear(&self, id: [u64; 3]) -> u32 {
        ((id[2] * self.groups[1] + id[1]) * self.groups[0] + id[0]) as u32
    }

    fn group_size(&self, id: [u64; 3]) -> [u64; 3] {
        [0, 1, 2].map(|d| self.local[d].min(self.global[d] - id[d] * self.local[d]))
    }

    #[cfg(test)]
    fn global_linear(&self, group: [u64; 3], local_linear: u32, size: [u64; 3]) -> u32 {
        let l = local_linear as u64;
        let lid = [l % size[0], (l / size[0]) % size[1], l / (size[0] * size[1])];
        let g = [0, 1, 2].map(|d| group[d] * self.local[d] + lid[d]);
        ((g[2] * self.global[1] + g[1]) * self.global[0] + g[0]) as u32
    }

    /// Appends the global linear id of each work-item of a group of `size`, in local linear
    /// order (row by row: no division per work-item).
    fn extend_global_linear(&self, group: [u64; 3], size: [u64; 3], out: &mut Vec<u32>) {
        let first = [0, 1, 2].map(|d| group[d] * self.local[d]);
        for z in first[2]..first[2] + size[2] {
            for y in first[1]..first[1] + size[1] {
                let row = (z * self.global[1] + y) * self.global[0] + first[0];
                out.extend((row..row + size[0]).map(|g| g as u32));
            }
        }
    }

    /// Global id (with the offset), local id and group id of a global linear id.
    fn ids(&self, linear: u32) -> ([u64; 3], [u64; 3], [u64; 3]) {
        let l = linear as u64;
        let g = [l % self.global[0], (l / self.global[0]) % self.global[1], l / (self.global[0] * self.global[1])];
        let group = [0, 1, 2].map(|d| g[d] / self.local[d]);
        let local = [0, 1, 2].map(|d| g[d] % self.local[d]);
        ([0, 1, 2].map(|d| g[d] + self.offset[d]), local, group)
    }

    fn group_of(&self, entity: Entity) -> u32 {
        match entity {
            Entity::Item(i) => self.group_linear(self.ids(i).2),
            Entity::Group(g) => g,
        }
    }

    fn local_linear(&self, item: u32) -> u32 {
        let (_, local, group) = self.ids(item);
        let size = self.group_size(group);
        ((local[2] * size[1] + local[1]) * size[0] + local[0]) as u32
    }

    fn group_id(&self, linear: u32) -> [u64; 3] {
        let l = linear as u64;
        [l % self.groups[0], (l / self.groups[0]) % self.groups[1], l / (self.groups[0] * self.groups[1])]
    }
}

/// Access sites: the source locations of memory instructions, numbered in 16 bits on first use
/// so that a record can hold one.
struct Sites {
    by_loc: Vec<AtomicU16>,
    locs: Vec<AtomicU32>,
    /// The next number to give; taken under the lock, so that no number is wasted.
    next: Mutex<u32>,
}

impl Sites {
    fn new(locations: usize) -> Sites {
        // Number 0 means none, then one per location (and the index past the last stands for
        // locations beyond the table): the table is made at every launch, no larger than that.
        let numbers = (locations + 2).min(1 << 16);
        Sites {
            by_loc: (0..=locations).map(|_| AtomicU16::new(0)).collect(),
            locs: (0..numbers).map(|_| AtomicU32::new(u32::MAX)).collect(),
            next: Mutex::new(1),
        }
    }

    /// The site of a module location (`u32::MAX` for none); the last number stands for overflow.
    #[inline]
    fn site(&self, loc: u32) -> u16 {
        let index = (loc as usize).min(self.by_loc.len() - 1);
        let known = self.by_loc[index].load(Ordering::Relaxed);
        if known != 0 {
            return known;
        }
        self.number(loc, index)
    }

    /// A location's first use, once per launch: numbered under the lock.
    #[cold]
    #[inline(never)]
    fn number(&self, loc: u32, index: usize) -> u16 {
        let mut next = self.next.lock();
        let known = self.by_loc[index].load(Ordering::Relaxed);
        if known != 0 {
            return known;
        }
        let fresh = (*next).min(self.locs.len() as u32 - 1) as u16;
        *next += 1;
        self.locs[fresh as usize].store(loc, Ordering::Relaxed);
        self.by_loc[index].store(fresh, Ordering::Relaxed);
        fresh
    }

    fn loc(&self, site: u16) -> u32 {
        self.locs[site as usize].load(Ordering::Relaxed)
    }
}

/// A group's global-memory summary of a run of cells (bytes or words) whose accesses are the
/// same but for the work-item, which may step by one from cell to cell (`c[i] = ...` by work-item
/// `i`): one run then stands for a whole group's stores to a buffer.
pub struct MergeSummary {
    allocation: u32,
    offset: u64,
    /// Cells in the run, and bytes per cell (1 or 4).
    cells: u32,
    cell_bytes: u8,
    /// How much the work-item id grows per cell, for the write and for the read (0 or 1).
    write_stride: u8,
    read_stride: u8,
    /// The group's write and read of the run's first cell (records without stored bytes).
    write: Stamped,
    read: Stamped,
    /// Where the bytes the writes stored start in [`Summaries::data`] (when there is a write).
    data: u32,
    /// Once the run has two cells (and its strides): the write and read the next cell must have
    /// to continue it.
    next_write: Stamped,
    next_read: Stamped,
}

impl MergeSummary {
    /// The write and read of cell `k` of the run.
    #[inline]
    fn at(&self, k: u32) -> (Stamped, Stamped) {
        (self.write.advanced(k * self.write_stride as u32), self.read.advanced(k * self.read_stride as u32))
    }

    fn bytes(&self) -> usize {
        self.cells as usize * self.cell_bytes as usize
    }

    /// Whether `write` and `read` at the cell after the run's last continue it; sets the strides
    /// when that cell is the second.
    #[inline]
    pub fn extends(&mut self, write: &Stamped, read: &Stamped) -> bool {
        if self.cells >= 2 {
            if *write != self.next_write || *read != self.next_read {
                return false;
            }
            self.cells += 1;
            self.next_write = write.advanced(self.write_stride as u32);
            self.next_read = read.advanced(self.read_stride as u32);
            return true;
        }
        self.second(write, read)
    }

    /// [`MergeSummary::extends`] for the run's second cell, which sets the strides.
    #[inline(never)]
    fn second(&mut self, write: &Stamped, read: &Stamped) -> bool {
        let stride = |base: &Stamped, next: &Stamped| {
            if next == base {
                Some(0)
            } else if *next == base.advanced(1) && !base.record.is_empty() {
                Some(1)
            } else {
                None
            }
        };
        match (stride(&self.write, write), stride(&self.read, read)) {
            (Some(w), Some(r)) => {
                (self.write_stride, self.read_stride) = (w, r);
                self.cells += 1;
                self.next_write = write.advanced(w as u32);
                self.next_read = read.advanced(r as u32);
                true
            }
            _ => false,
        }
    }
}

/// A group's summaries and the bytes its writes stored, in buffers that circulate between groups
/// and the merge.
#[derive(Default)]
pub struct Summaries {
    runs: Vec<MergeSummary>,
    data: Vec<u8>,
    /// The shard of [`Spares`] it goes back to once merged: its worker thread's.
    home: usize,
}

impl Summaries {
    /// Adds the summary of one cell at `offset`, extending the last run when it continues it
    /// (never across a kernel-wide page).
    #[inline]
    pub fn add<P: Payload>(&mut self, allocation: u32, offset: u64, write: Stamped, read: Stamped, data: P) {
        let store = |bytes: &mut Vec<u8>| {
            if !write.record.is_empty() {
                data.put(bytes);
            }
        };
        if let Some(run) = self.runs.last_mut()
            && run.allocation == allocation
            && run.cell_bytes as usize == P::BYTES
            && run.offset + run.bytes() as u64 == offset
            && !(offset as usize).is_multiple_of(PAGE)
            && run.extends(&write, &read)
        {
            store(&mut self.data);
            return;
        }
        let at = self.data.len() as u32;
        store(&mut self.data);
        self.runs.push(MergeSummary {
            allocation,
            offset,
            cells: 1,
            cell_bytes: P::BYTES as u8,
            write_stride: 0,
            read_stride: 0,
            write,
            read,
            data: at,
            next_write: Stamped::EMPTY,
            next_read: Stamped::EMPTY,
        });
    }

    /// [`Summaries::add`] for `n` word cells, cell `k` at `offset + 4k` with `summary(k)` its
    /// write, read and stored word: while the last run goes on cell after cell (`c[i] = ...`),
    /// each cell is compared with what continues it and nothing else.
    #[inline]
    pub fn add_words(
        &mut self,
        allocation: u32,
        offset: u64,
        n: usize,
        summary: impl Fn(usize) -> (Stamped, Stamped, u32),
    ) {
        let mut k = 0;
        while k < n {
            let (write, read, data) = summary(k);
            k += 1;
            if write.record.is_empty() && read.record.is_empty() {
                continue;
            }
            self.add(allocation, offset + ((k - 1) * WORD) as u64, write, read, data);
            let Summaries { runs, data, .. } = self;
            let Some(run) = runs.last_mut().filter(|r| r.cells >= 2) else { continue };
            let (mut next_write, mut next_read) = (run.next_write, run.next_read);
            let start = k;
            // Up to the next kernel-wide page, where runs end.
            let in_page = (offset as usize + k * WORD) % PAGE;
            let end = if in_page == 0 { k } else { n.min(k + (PAGE - in_page) / WORD) };
            while k < end {
                let (write, read, stored) = summary(k);
                if write != next_write || read != next_read {
                    break;
                }
                if !write.record.is_empty() {
                    data.extend_from_slice(&stored.to_le_bytes());
                }
                next_write = write.advanced(run.write_stride as u32);
                next_read = read.advanced(run.read_stride as u32);
                k += 1;
            }
            run.cells += (k - start) as u32;
            (run.next_write, run.next_read) = (next_write, next_read);
        }
    }

    /// [`Summaries::add_words`] for word cells that work-items stored in turn and did not
    /// read, as many as `stored` holds words: cell `k` at `offset + 4k`, its write
    /// `write.advanced(k)` (a write), its stored word `stored[4k..4k + 4]`; the cells stay in
    /// one kernel-wide page. Makes the runs `add_words` makes, without comparing cell by cell.
    pub fn add_stores(&mut self, allocation: u32, offset: u64, write: Stamped, stored: &[u8]) {
        let n = stored.len() / WORD;
        let adjacent = self.runs.last().filter(|run| {
            run.allocation == allocation
                && run.cell_bytes as usize == WORD
                && run.offset + run.bytes() as u64 == offset
                && !(offset as usize).is_multiple_of(PAGE)
        });
        // Whether the first cell continues the last run (as `extends` says), and whether the
        // others then do as well (a stride of one work-item per cell).
        let continued = adjacent.map(|run| {
            let first = run.cells < 2 || (run.next_write == write && run.next_read == Stamped::EMPTY);
            (first, run.cells >= 2 && run.write_stride == 1)
        });
        match continued {
            Some((true, false)) => {
                return self.add_words(allocation, offset, n, |k| {
                    (write.advanced(k as u32), Stamped::EMPTY, u32::from_stored(stored, k * WORD))
                });
            }
            Some((true, true)) => {
                let run = self.runs.last_mut().expect("adjacent");
                run.cells += n as u32;
                run.next_write = write.advanced(n as u32);
            }
            _ => {
                let long = n >= 2;
                self.runs.push(MergeSummary {
                    allocation,
                    offset,
                    cells: n as u32,
                    cell_bytes: WORD as u8,
                    write_stride: long as u8,
                    read_stride: 0,
                    write,
                    read: Stamped::EMPTY,
                    data: self.data.len() as u32,
                    next_write: if long { write.advanced(n as u32) } else { Stamped::EMPTY },
                    next_read: Stamped::EMPTY,
                });
            }
        }
        self.data.extend_from_slice(&stored[..n * WORD]);
    }

    fn clear(&mut self) {
        self.runs.clear();
        self.data.clear();
    }

    fn bytes(&self) -> usize {
        self.runs.len() * std::mem::size_of::<MergeSummary>() + self.data.len()
    }
}

/// What a finished group hands to the launch.
pub struct GroupResult {
    group: u32,
    /// The group's first and last stamps.
    stamps: (u32, u32),
    summaries: Summaries,
    acquired: Vec<Acquired>,
    links: Vec<Link>,
    races: RaceLog,
    /// Bytes charged for it while it waits for its turn.
    charged: usize,
}

impl GroupResult {
    /// The bytes it holds while waiting to be merged.
    fn bytes(&self) -> usize {
        self.summaries.bytes() + (self.acquired.len() + self.links.len()) * 32 + self.races.bytes()
    }
}

/// The kernel-wide state, merged in group order.
#[derive(Default)]
struct Merged {
    shadow: KernelShadow,
    /// Each merged group's first and last stamps, by group.
    stamps: Vec<(u32, u32)>,
    /// Merged groups' acquired releases and failed syncs, when they have any.
    history: BTreeMap<u32, (Vec<Acquired>, Vec<Link>)>,
    races: RaceLog,
    /// Bytes of this state charged to the memory budget.
    charged: usize,
}

impl Merged {
    /// Bytes this state holds that grow with the launch: the shadow and per-group tables.
    fn bytes(&self) -> usize {
        self.shadow.bytes() + self.stamps.len() * 8 + self.history.len() * 64
    }
}

/// Results waiting for their turn beyond which a thread merges others' as well as its own (see
/// [`Pending`]): a few batches of groups of each of a few workers.
const BACKLOG: usize = 64;

/// What every group of the launch shares.
pub struct Shared {
    geometry: Geometry,
    options: Options,
    sites: Sites,
    sync: GlobalSync,
    /// Global allocation names and read-only flags, by allocation index.
    global_names: Vec<String>,
    read_only: Vec<bool>,
    /// The image held by each global allocation, if any.
    images: Vec<Option<ImageDesc>>,
    local_names: Vec<String>,
    /// Worker shadows and emptied summary buffers between groups.
    spares: Spares<Box<WorkerShadow>, Summaries>,
    /// Finished groups waiting for their turn to merge.
    pending: Line<Mutex<Pending<GroupResult>>>,
    merged: Line<Mutex<Merged>>,
    memory: Option<Arc<MemoryBudget>>,
    /// Bytes charged to `memory`, given back when the detector is dropped.
    charged: Line<AtomicU64>,
    /// Set, with the message in `failure`, when a charge did not fit.
    failed: Line<AtomicBool>,
    failure: Mutex<Option<String>>,
}

impl Shared {
    /// Charges `bytes` of the detector's memory; when they do not fit, remembers the failure
    /// (the run then ends at the next poll) and returns false.
    fn charge(&self, bytes: usize) -> bool {
        let Some(memory) = &self.memory else { return true };
        if memory.try_charge(bytes as u64) {
            self.charged.fetch_add(bytes as u64, Ordering::Relaxed);
            return true;
        }
        let mut failure = self.failure.lock();
        if failure.is_none() {
            *failure = Some(format!(
                "the race detector's shadow memory would pass the limit of {} MiB ({} MiB in use)",
                mib(memory.limit()),
                mib(memory.used())
            ));
        }
        self.failed.store(true, Ordering::Relaxed);
        false
    }

    /// `result`, charged for the memory it holds while it waits for its turn.
    fn charged_while_waiting(&self, mut result: GroupResult) -> GroupResult {
        let bytes = result.bytes();
        result.charged = if self.charge(bytes) { bytes } else { 0 };
        result
    }

    /// Gives back `bytes` charged by [`Shared::charge`].
    fn release(&self, bytes: usize) {
        if bytes == 0 {
            return;
        }
        if let Some(memory) = &self.memory {
            memory.release(bytes as u64);
            self.charged.fetch_sub(bytes as u64, Ordering::Relaxed);
        }
    }

    /// Merges, in order, the results that wait for their turn, whoever made them: the run's
    /// threads are done, and a result whose turn came after its thread's last group stayed.
    fn merge_waiting(&self) {
        self.merged.lock().merge_ready(self, thread_number(), 0);
    }

    /// The memory error, once a charge failed.
    fn check(&self) -> Result<(), ExecError> {
        if !self.failed.load(Ordering::Relaxed) {
            return Ok(());
        }
        Err(ExecError::Memory(self.failure.lock().clone().unwrap_or_default()))
    }

    #[inline(always)]
    fn read_only(&self, allocation: u32) -> bool {
        self.read_only.get(allocation as usize).copied().unwrap_or(false)
    }
}

/// The race detector for one launch: attach it with [`crate::exec::run_hooked`], then
/// [`Detector::races`].
pub struct Detector {
    shared: Shared,
}

impl Detector {
    /// A detector whose memory is not accounted.
    pub fn new(program: &Program, launch: &Launch, options: Options) -> Detector {
        Detector::with_memory(program, launch, options, None)
    }

    /// A detector that charges its shadow memory and kernel-wide records to `memory` (give
    /// the run the same budget in [`crate::exec::RunOptions::memory`]). When a charge does not
    /// fit, the run ends with [`ExecError::Memory`] at its next poll (within 64K branches and
    /// calls, or at the next work-group start). The charges are given back when the detector
    /// is dropped.
    pub fn with_memory(
        program: &Program,
        launch: &Launch,
        options: Options,
        memory: Option<Arc<MemoryBudget>>,
    ) -> Detector {
        let module = program.module();
        let groups = [0, 1, 2].map(|d| launch.global_size[d].div_ceil(launch.local_size[d].max(1)));
        let geometry =
            Geometry { global: launch.global_size, local: launch.local_size, offset: launch.global_offset, groups };
        let kernel = program.kernel(&launch.kernel);
        let args = kernel.map(|k| k.args.as_slice()).unwrap_or(&[]);
        // Global allocations: NULL, program-scope variables, then the launch's buffers.
        let mut global_names = vec!["NULL".to_string()];
        let mut read_only = vec![true];
        for var in module.globals.iter() {
            global_names.push(var.name.clone());
            read_only.push(!var.writable);
        }
        let mut images = vec![None; global_names.len()];
        // A buffer the kernel writes through none of its arguments is only read: nothing races there.
        let kernel_index = module.kernels.iter().position(|k| k.info.name == launch.kernel);
        let written = kernel_index.and_then(|k| program.written_params(k));
        let buffers = launch.args.iter().filter_map(ArgValue::buffer);
        for b in 0..buffers.max().map_or(0, |m| m + 1) {
            let binding = launch.binding(args, b);
            global_names.push(binding.name(b));
            let bound = &binding.args;
            let constant = bound.iter().all(|a| a.space == AddressSpace::Constant);
            read_only.push((constant || launch.only_reads(written, b)) && !bound.is_empty());
            images.push(binding.image);
        }
        // Local allocations: kernel-declared variables, then `__local` arguments.
        let mut local_names: Vec<String> = module.locals.iter().map(|v| short_name(&v.name)).collect();
        for (arg, value) in args.iter().zip(&launch.args) {
            if matches!(value, ArgValue::Local(_)) {
                local_names.push(arg.name.clone());
            }
        }
        Detector {
            shared: Shared {
                geometry,
                options,
                sites: Sites::new(module.locations.len()),
                sync: GlobalSync::new(),
                global_names,
                read_only,
                images,
                local_names,
                spares: Spares::default(),
                pending: Line(Mutex::new(Pending::default())),
                merged: Line(Mutex::new(Merged::default())),
                memory,
                charged: Line(AtomicU64::new(0)),
                failed: Line(AtomicBool::new(false)),
                failure: Mutex::new(None),
            },
        }
    }

    /// Bytes the kernel-wide shadow holds now.
    #[cfg(test)]
    fn kernel_shadow_bytes(&self) -> usize {
        self.shared.merged.lock().shadow.bytes()
    }

    /// The races found, deduplicated, in the order they were found (stable across runs).
    pub fn races(self) -> Vec<Race> {
        let shared = &self.shared;
        shared.merge_waiting();
        let merged = std::mem::take(&mut *shared.merged.lock());
        let g = shared.geometry;
        merged
            .races
            .into_aggregates()
            .into_iter()
            .map(|mut agg| {
                let hazards = agg.hazards();
                let e = &agg.shown;
                let side = |s: &Side| RaceAccess {
                    access: s.access,
                    loc: s.loc,
                    who: match s.entity {
                        Entity::Item(i) => {
                            let (global, local, group) = g.ids(i);
                            Who::WorkItem { global, local, group }
                        }
                        Entity::Group(id) => Who::WorkGroup { group: g.group_id(id) },
                    },
                };
                let names = if e.place.local { &shared.local_names } else { &shared.global_names };
                Race {
                    write_write: e.write_write,
                    local: e.place.local,
                    buffer: names.get(e.place.allocation as usize).cloned().unwrap_or_else(|| "unknown".into()),
                    offset: e.place.offset,
                    pixel: (!e.place.local)
                        .then(|| shared.images.get(e.place.allocation as usize).copied().flatten())
                        .flatten()
                        .map(|image| image.pixel_at(e.place.offset)),
                    hazards,
                    uniform: agg.all_uniform,
                    scope: e.scope,
                    reason: reported_reason(shared, &e.reason),
                    accesses: [side(&e.first), side(&e.second)],
                    lockstep: e.lockstep.zip(shared.options.sub_group_lockstep),
                }
            })
            .collect()
    }
}

impl Drop for Detector {
    fn drop(&mut self) {
        if let Some(memory) = &self.shared.memory {
            memory.release(self.shared.charged.load(Ordering::Relaxed));
        }
    }
}

/// `kernel.tile` (how the compiler names kernel-scope `__local` variables) as `tile`.
fn short_name(name: &str) -> String {
    name.rsplit('.').next().unwrap_or(name).to_string()
}

impl<'d> Hooks for &'d Detector {
    type Group = GroupState<'d>;

    fn group_start(&self, group_id: [u64; 3], size: [u64; 3]) -> GroupState<'d> {
        GroupState::new(&self.shared, self.shared.spares.take_shadow(), group_id, size)
    }

    fn check(&self) -> Result<(), ExecError> {
        self.shared.check()
    }

    fn group_end(&self, group: GroupState<'d>) {
        let shared = &self.shared;
        let (shadow, result) = group.finish();
        shared.spares.put_shadow(shadow);
        let me = thread_number();
        // A thread that finds the merge taken leaves its result, charged while it waits, for its
        // own next group's end (or the run's end) and goes back to running groups.
        let Some(mut merged) = shared.merged.try_lock() else {
            shared.pending.lock().insert(result.group, me, shared.charged_while_waiting(result));
            return;
        };
        // Its own result merges at once when it is next (always, on one thread): never queued,
        // nor charged; and no result of this thread's waits behind it (a thread's groups end in
        // order). Otherwise it waits, and this thread's earlier results merge if their turn has
        // come (others' too once more than `BACKLOG` wait).
        let mut pending = shared.pending.lock();
        if pending.take_turn(result.group) {
            drop(pending);
            merged.merge_next(shared, result);
            return;
        }
        pending.insert(result.group, me, shared.charged_while_waiting(result));
        drop(pending);
        merged.merge_ready(shared, me, BACKLOG);
    }

    fn run_end(&self) {
        self.shared.merge_waiting();
    }
}

impl Merged {
    /// Merges, in order, the waiting results that thread `me` may take (see
    /// [`Pending::take_next`]: its own, or any once more than `backlog` wait). The queue's lock
    /// is let go before each merge: a group ending meanwhile queues its result instead of waiting.
    fn merge_ready(&mut self, shared: &Shared, me: usize, backlog: usize) {
        loop {
            let next = shared.pending.lock().take_next(me, backlog);
            let Some(result) = next else { break };
            self.merge_next(shared, result);
        }
    }

    /// Merges the next group's result, gives back what it was charged while it waited, and
    /// charges what the kernel-wide state grew by.
    fn merge_next(&mut self, shared: &Shared, result: GroupResult) {
        let waited = result.charged;
        self.merge(shared, result);
        shared.release(waited);
        let grown = self.bytes().saturating_sub(self.charged);
        if grown > 0 && shared.charge(grown) {
            self.charged += grown;
        }
    }

    /// Merges one finished group (the next in order) into the kernel-wide shadow.
    fn merge(&mut self, shared: &Shared, result: GroupResult) {
        let GroupResult { group, stamps, mut summaries, acquired, links, races, charged: _ } = result;
        debug_assert_eq!(group as usize, self.stamps.len(), "groups merge in order");
        self.stamps.push(stamps);
        let mut inter = RaceLog::default();
        let cx = InterContext {
            shared,
            stamps: &self.stamps,
            history: &self.history,
            group,
            acquired: &acquired,
            links: &links,
        };
        let (mut made, mut freed) = (0, 0);
        for s in &summaries.runs {
            let start = s.offset as usize % PAGE;
            let len = s.bytes();
            let data = if s.write.record.is_empty() { &[][..] } else { &summaries.data[s.data as usize..][..len] };
            let page = self.shadow.page(s.allocation as usize, s.offset as usize / PAGE);
            let run = Run {
                start: start as u16,
                len: len as u16,
                cell_bytes: s.cell_bytes,
                write_stride: s.write_stride,
                read_stride: s.read_stride,
                write: s.write.record,
                read: s.read.record,
                repeated: false,
            };
            // Bytes no earlier group touched cannot race: the page keeps the run as it is.
            if page.defer(run, data, &mut made) {
                continue;
            }
            page.materialize(&mut made, &mut freed);
            // Byte cells can merge as words when each word's four are one access.
            let words = s.cell_bytes as usize == WORD || (s.write_stride == 0 && s.read_stride == 0);
            if words && start.is_multiple_of(WORD) && len.is_multiple_of(WORD) && !page.bytes_mode() {
                for w in 0..len / WORD {
                    let (write, read) = s.at(if s.cell_bytes as usize == WORD { w as u32 } else { 0 });
                    let stored = data.get(w * WORD..w * WORD + WORD).map_or(0, |b| u32::from_stored(b, 0));
                    let offset = s.offset + (w * WORD) as u64;
                    let cell = MergedCell { allocation: s.allocation, offset, write, read };
                    cx.merge_word(page, &mut inter, cell, stored, &mut made);
                }
            } else {
                page.split(&mut made, &mut freed);
                for i in 0..len {
                    let (write, read) = s.at((i / s.cell_bytes as usize) as u32);
                    let write = write.with_byte(data.get(i).copied().unwrap_or(0));
                    let offset = s.offset + i as u64;
                    cx.merge_byte(
                        page,
                        &mut inter,
                        MergedCell { allocation: s.allocation, offset, write, read },
                        &mut made,
                    );
                }
            }
        }
        self.shadow.account(made, freed);
        self.races.absorb(races);
        self.races.absorb(inter);
        if !acquired.is_empty() || !links.is_empty() {
            self.history.insert(group, (acquired, links));
        }
        summaries.clear();
        shared.spares.put_buffer(summaries.home, summaries);
    }
}

/// One cell of a merged group's summary: where it is, and the group's write and read of it.
#[derive(Clone, Copy)]
struct MergedCell {
    allocation: u32,
    offset: u64,
    write: Stamped,
    read: Stamped,
}

/// What an inter-group check needs to know about the group being merged and those before it.
struct InterContext<'a> {
    shared: &'a Shared,
    /// Each merged group's first and last stamps, by group.
    stamps: &'a [(u32, u32)],
    history: &'a BTreeMap<u32, (Vec<Acquired>, Vec<Link>)>,
    group: u32,
    acquired: &'a [Acquired],
    links: &'a [Link],
}

impl InterContext<'_> {
    /// The race of `new` (this group's access) with `old` (an earlier group's record), if they
    /// conflict and no release/acquire pair orders them.
    #[inline]
    fn check(&self, old: Record, old_writes: bool, new: Stamped, new_writes: bool, place: Place) -> Option<RaceEvent> {
        if old.is_empty() || new.record.is_empty() || (old.atomic() && new.record.atomic()) {
            return None;
        }
        self.race(old, old_writes, new, new_writes, place)
    }

    fn log(&self, inter: &mut RaceLog, event: RaceEvent) {
        if !(event.uniform && self.shared.options.uniform_writes_benign) {
            inter.add(event);
        }
    }

    /// Checks the word at `offset` against its records (a page of word records) and updates
    /// them with the merged group's `write` (which stored `data`) and `read`.
    #[inline]
    fn merge_word(&self, page: &mut KernelPage, inter: &mut RaceLog, cell: MergedCell, data: u32, made: &mut usize) {
        let MergedCell { allocation, offset, write, read } = cell;
        let cell = offset as usize % PAGE / WORD;
        let (old_write, old_stored, old_read) = page.word(cell);
        if !old_write.is_empty() || !old_read.is_empty() {
            // What a record per byte would say at the word's first byte; the other bytes differ
            // only in place and in whether the two writes stored the same byte.
            let place = Place { local: false, allocation, offset, group: 0 };
            let old_first = old_write.with_byte(old_stored.byte(0));
            let new_first = write.with_byte(data.byte(0));
            let mut found = [None; 3];
            if !write.record.is_empty() {
                found[0] = self.check(old_first, true, new_first, true, place);
                found[1] = self.check(old_read, false, new_first, true, place);
            }
            if !read.record.is_empty() {
                found[2] = self.check(old_first, true, read, false, place);
            }
            if found.iter().any(Option::is_some) {
                self.log_word(inter, &found, old_stored, data);
            }
        }
        if !write.record.is_empty() && (old_write.is_empty() || old_write.atomic() || !write.record.atomic()) {
            page.set_word_write(cell, write.record, data, made);
        }
        if !read.record.is_empty() && (old_read.is_empty() || old_read.atomic() || !read.record.atomic()) {
            page.set_read(cell, read.record, made);
        }
    }

    /// Logs a word's races byte by byte, in the order records per byte would have found them.
    #[cold]
    #[inline(never)]
    fn log_word(&self, inter: &mut RaceLog, found: &[Option<RaceEvent>], old_stored: u32, data: u32) {
        for i in 0..WORD {
            for event in found.iter().flatten() {
                let mut event = *event;
                event.place.offset += i as u64;
                event.uniform = event.write_write && old_stored.byte(i) == data.byte(i);
                self.log(inter, event);
            }
        }
    }

    /// Checks the byte at `offset` against its records (a page of byte records) and updates them
    /// with the merged group's `write` (with its stored byte) and `read`.
    fn merge_byte(&self, page: &mut KernelPage, inter: &mut RaceLog, cell: MergedCell, made: &mut usize) {
        let MergedCell { allocation, offset, write, read } = cell;
        let cell = offset as usize % PAGE;
        let (old_write, old_read) = page.byte(cell);
        let place = Place { local: false, allocation, offset, group: 0 };
        if !write.record.is_empty() {
            if let Some(event) = self.check(old_write, true, write, true, place) {
                self.log(inter, event);
            }
            if let Some(event) = self.check(old_read, false, write, true, place) {
                self.log(inter, event);
            }
        }
        if !read.record.is_empty()
            && let Some(event) = self.check(old_write, true, read, false, place)
        {
            self.log(inter, event);
        }
        // Keep the plain access when the new one is atomic: it races with more.
        if !write.record.is_empty() && (old_write.is_empty() || old_write.atomic() || !write.record.atomic()) {
            page.set_byte_write(cell, write.record, made);
        }
        if !read.record.is_empty() && (old_read.is_empty() || old_read.atomic() || !read.record.atomic()) {
            page.set_read(cell, read.record, made);
        }
    }

    /// A race between `old` (an earlier group's record) and `new` (this group's), unless a
    /// release/acquire pair orders them.
    #[cold]
    #[inline(never)]
    fn race(&self, old: Record, old_writes: bool, new: Stamped, new_writes: bool, place: Place) -> Option<RaceEvent> {
        let g = &self.shared.geometry;
        let (a, b) = (old.entity(), new.record.entity());
        let old_group = g.group_of(a);
        // The record's stamp bits count from its group's first stamp.
        let (old_first, old_last) = self.stamps.get(old_group as usize).copied().unwrap_or((0, 0));
        let old_stamp = old_first.wrapping_add(widen_stamp(old.stamp_low(), old_last.wrapping_sub(old_first)));
        let history = self.history.get(&old_group);
        if let (Entity::Item(x), Entity::Item(y)) = (a, b) {
            let forward = covered(self.acquired, Some(g.local_linear(y)), new.stamp, old_group, x, old_stamp, 1);
            let backward = history.is_some_and(|(acquired, _)| {
                covered(acquired, Some(g.local_linear(x)), old_stamp, self.group, y, new.stamp, 1)
            });
            if forward || backward {
                return None;
            }
        }
        // A failed synchronisation between these two work-items; else one through which either
        // group tried to learn of the other side (a relaxed counter in a chain of groups).
        let old_links: &[Link] = history.map_or(&[], |(_, links)| links);
        let direct = find_link(self.links, a, b).or_else(|| find_link(old_links, a, b));
        let through_others = || {
            let involves = |e: Entity| {
                let group = g.group_of(e);
                group == old_group || group == self.group
            };
            self.links.iter().chain(old_links).find(|l| involves(l.reader) && l.why == sync::MissedSync::Relaxed)
        };
        let link = direct.map(|l| (l, true)).or_else(|| through_others().map(|l| (l, false)));
        let reason = match link {
            Some((link, direct)) => Reason::Missed { link: *link, direct },
            None => Reason::Groups { first: old_group, second: self.group },
        };
        let kind = |record: Record, writes: bool| match (record.atomic(), writes) {
            (true, _) => AccessType::Atomic,
            (false, true) => AccessType::Store,
            (false, false) => AccessType::Load,
        };
        let uniform = old_writes && new_writes && old.byte() == new.record.byte();
        Some(RaceEvent {
            place,
            first: Side { entity: a, loc: self.shared.sites.loc(old.site()), access: kind(old, old_writes) },
            second: Side {
                entity: b,
                loc: self.shared.sites.loc(new.record.site()),
                access: kind(new.record, new_writes),
            },
            write_write: old_writes && new_writes,
            uniform,
            scope: RaceScope::InterGroup,
            reason,
            lockstep: self.shared.options.sub_group_lockstep.map(|_| lockstep::LockstepClass::InterSubGroup),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_summaries_make_the_runs_cell_by_cell_summaries_make() {
        let at =
            |item: u32, site: u16| Stamped { record: Record::new(site, Entity::Item(item), 7, false, 0), stamp: 7 };
        // Stores by consecutive work-items, a gap, a read-only stretch crossing a kernel page,
        // a break in the stride, then stores by one work-item.
        let mut cells: Vec<(Stamped, Stamped, u32)> = Vec::new();
        cells.extend((0..5).map(|i| (at(10 + i, 1), Stamped::EMPTY, 0x100 + i)));
        cells.push((Stamped::EMPTY, Stamped::EMPTY, 0));
        cells.extend((0..PAGE as u32 / WORD as u32 + 3).map(|i| (Stamped::EMPTY, at(i, 2), 0)));
        cells.extend((0..3).map(|i| (at(50 + 2 * i, 3), Stamped::EMPTY, i)));
        cells.extend((0..4).map(|i| (at(9, 4), at(9, 5), i)));
        let offset = (PAGE - 6 * WORD) as u64;
        let mut one_by_one = Summaries::default();
        for (k, &(write, read, data)) in cells.iter().enumerate() {
            if !(write.record.is_empty() && read.record.is_empty()) {
                one_by_one.add(3, offset + (k * WORD) as u64, write, read, data);
            }
        }
        let mut words = Summaries::default();
        words.add_words(3, offset, cells.len(), |k| cells[k]);
        let runs = |s: &Summaries| {
            s.runs
                .iter()
                .map(|r| (r.offset, r.cells, r.write_stride, r.read_stride, r.write, r.read, r.data))
                .collect::<Vec<_>>()
        };
        assert_eq!(runs(&words), runs(&one_by_one));
        assert_eq!(words.data, one_by_one.data);
        assert!(words.runs.len() >= 6, "the gap, the page, the stride and the work-item each end a run");
    }

    #[test]
    fn store_runs_make_the_runs_word_summaries_make() {
        let at = |item: u32| Stamped { record: Record::new(4, Entity::Item(item), 9, false, 0), stamp: 9 };
        // Pieces of stores by consecutive work-items (offset in words, first work-item, words):
        // one going on from the last, one after a gap, a lone word then one continuing it, one
        // crossing into a kernel page, one by the same work-items again, one after a run whose
        // work-item does not step.
        let base = (PAGE - 20 * WORD) as u64;
        let pieces = [(0, 100, 4), (4, 104, 4), (10, 200, 3), (13, 203, 1), (14, 204, 1), (15, 205, 2)];
        let more = [(17, 207, 3), (20, 210, 4), (24, 210, 2), (26, 300, 1)];
        let mut words = Summaries::default();
        let mut stores = Summaries::default();
        words.add_words(3, base - 8, 2, |_| (at(50), Stamped::EMPTY, 7));
        stores.add_words(3, base - 8, 2, |_| (at(50), Stamped::EMPTY, 7));
        for &(w, item, n) in pieces.iter().chain(&more) {
            let offset = base + (w * WORD) as u64;
            let data = |k: usize| 0x1000 * item + k as u32;
            words.add_words(3, offset, n, |k| (at(item + k as u32), Stamped::EMPTY, data(k)));
            let bytes: Vec<u8> = (0..n).flat_map(|k| data(k).to_le_bytes()).collect();
            stores.add_stores(3, offset, at(item), &bytes);
        }
        let runs = |s: &Summaries| {
            s.runs
                .iter()
                .map(|r| (r.offset, r.cells, r.write_stride, r.read_stride, r.write, r.data, r.next_write, r.next_read))
                .collect::<Vec<_>>()
        };
        assert_eq!(runs(&stores), runs(&words));
        assert_eq!(stores.data, words.data);
    }

    #[test]
    fn geometry_round_trips_ids() {
        let g = Geometry { global: [10, 6, 1], local: [4, 3, 1], offset: [100, 0, 0], groups: [3, 2, 1] };
        // Group (2,1,0) is an edge group of size 2x3.
        let size = g.group_size([2, 1, 0]);
        assert_eq!(size, [2, 3, 1]);
        let linear = g.global_linear([2, 1, 0], 3, size); // local (1,1,0) -> global (9,4,0)
        assert_eq!(linear, 4 * 10 + 9);
        assert_eq!(g.ids(linear), ([109, 4, 0], [1, 1, 0], [2, 1, 0]));
        assert_eq!(g.local_linear(linear), 3);
        let mut all = Vec::new();
        g.extend_global_linear([2, 1, 0], size, &mut all);
        assert_eq!(all, (0..6).map(|l| g.global_linear([2, 1, 0], l, size)).collect::<Vec<_>>());
        assert_eq!(g.group_linear([2, 1, 0]), 5);
        assert_eq!(g.group_id(5), [2, 1, 0]);
    }
}
