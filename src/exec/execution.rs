//! The state of one running NDRange that every part of the executor shares: its geometry
//! ([`NdRange`]), what all its work-items read ([`Execution`]), what the work-items of one group
//! share ([`Group`]), and why a warp stopped ([`Yield`]); with the reports of memory faults that
//! the interpreter and the collectives both make.
//!
//! It sits below the interpreter, the collectives, the warps and the uninitialised-value check,
//! and sees none of them but the shadow types of the last: it knows no instruction.

use super::Finding;
use super::hooks::{Access, AccessKind};
use super::memory::{
    ANY, Fault, FaultKind, GlobalMemory, INDEX_SHIFT, Memory, SPACE_GLOBAL, SPACE_LOCAL, SPACE_PRIVATE, SPACE_SHIFT,
    STORE, split,
};
use crate::ir::{self, AtomicOp, CollectiveOp, Fence, Scope};

/// The NDRange geometry of a launch.
#[derive(Debug, Clone, Copy)]
pub struct NdRange {
    pub work_dim: u32,
    pub offset: [u64; 3],
    pub global: [u64; 3],
    pub local: [u64; 3],
    pub groups: [u64; 3],
    /// Work-items per sub-group.
    pub sub_group: u64,
}

impl NdRange {
    /// The id of the work-group with linear index `i` (in NDRange order).
    pub fn group_id(&self, i: u64) -> [u64; 3] {
        let [nx, ny, _] = self.groups;
        [i % nx, (i / nx) % ny, i / (nx * ny)]
    }

    /// The size of work-group `id` (smaller than the local size at the edges of ragged ranges).
    pub fn group_size(&self, id: [u64; 3]) -> [u64; 3] {
        [0, 1, 2].map(|d| self.local[d].min(self.global[d] - id[d] * self.local[d]))
    }

    /// The work-items of a full work-group: the lanes a register file is laid out for.
    pub fn lanes_per_group(&self) -> u64 {
        (0..3).map(|d| self.local[d].min(self.global[d])).product()
    }
}

/// What one running NDRange shares between all its work-items: the executor's side of a
/// [`super::Launch`].
pub struct Execution<'a> {
    pub module: &'a ir::Module,
    pub globals: &'a GlobalMemory,
    pub range: NdRange,
    /// Built with `-cl-denorms-are-zero`: float arithmetic and math flush denormals to zero.
    pub flush_denormals: bool,
    /// Where each function's frame starts in the register file (see `group::frame_bases`).
    pub frame_bases: &'a [u32],
    /// Stop every warp before each atomic ([`Yield::AtAtomic`]) until the scheduler grants it
    /// ([`Warp::granted`](super::warp::Warp::granted)): lets a stepping scheduler choose the
    /// order of atomics.
    pub stop_at_atomics: bool,
    /// With [`Execution::stop_at_atomics`]: sorted, disjoint `[start, end)` ranges of tagged
    /// addresses at which plain scalar and composite loads and stores stop too (as
    /// [`Yield::AtAtomic`] with `plain` set). Empty otherwise, and then costs one test per load
    /// or store instruction.
    pub watch: &'a [(u64, u64)],
    /// Tell the hooks which lanes run each time a warp's active lanes may change
    /// ([`GroupHooks::lanes_active`](super::hooks::GroupHooks::lanes_active)): set under
    /// `Policy::SubGroups` only.
    pub report_lanes: bool,
    /// Check 9 is on: the shadow of `noinit` global buffers, and the interpreter runs its
    /// checked instantiation (see [`super::uninit`]).
    pub uninit: Option<&'a super::uninit::GlobalShadow>,
    /// Each function's plan for registers kept as descriptors ([`super::affine::Plan`]).
    pub plans: &'a [super::affine::Plan],
    /// Per function, per instruction, whether it is a `__local` read that no write of the
    /// kernel can race with ([`crate::ir::intervals`]), which the hooks then do not hear of;
    /// empty where none is (and where no hooks listen).
    pub quiet_reads: &'a [Vec<bool>],
}

/// Per-work-group state the work-items share.
pub struct Group {
    pub id: [u64; 3],
    /// This group's size (smaller than the local size at the edges of non-uniform ranges).
    pub size: [u64; 3],
    pub local: Vec<u8>,
    pub local_regions: Vec<(usize, usize)>,
    pub findings: super::findings::FindingLog,
    pub printf: String,
    /// The group's shadow of uninitialised bytes (empty unless [`Execution::uninit`]).
    pub uninit: super::uninit::GroupShadow,
    /// A barrier of the group was released with work-items elsewhere: from then on the code
    /// between two barriers may come from several barrier intervals, and every `__local` read is
    /// told to the hooks ([`Execution::quiet_reads`]).
    pub diverged: bool,
}

/// Why a warp stopped running. For a barrier, spin or collective it is the warp's top entry that
/// stopped (the scheduler splits it off when other lanes of the warp are elsewhere).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Yield {
    /// At a barrier (now behind it); `site` tells barrier instructions apart (function and position).
    Barrier {
        fence: Fence,
        scope: Scope,
        loc: u32,
        site: u64,
        sub_group: bool,
    },
    /// Every active lane repeated an atomic read of an unchanging value
    /// [`SPIN_REPEATS`](super::warp::SPIN_REPEATS) times without storing anything: waiting for
    /// another work-item. `addr` and `value` are what the first lane keeps reading.
    Spin {
        loc: u32,
        addr: u64,
        value: u64,
    },
    /// At a collective function (`site` as for barriers; now behind it). Each lane contributes
    /// absolute slot `src`, a broadcast names a local id in the `id_n` slots from `id`, and the
    /// result goes to absolute slot `dst`.
    Collective {
        site: u64,
        loc: u32,
        op: CollectiveOp,
        bits: u8,
        src: u32,
        id: u32,
        id_n: u8,
        dst: u32,
        sub_group: bool,
    },
    /// At an `async_work_group_copy` (`site` as for barriers; now behind it): a collective the
    /// scheduler completes once every work-item is there (see [`super::collective::AsyncCopies`]).
    AsyncCopy {
        site: u64,
        loc: u32,
        regs: CopyRegs,
    },
    /// At a `wait_group_events` (now behind it): `num` events in the array `list` points to
    /// (absolute slots); completed by the scheduler like [`Yield::AsyncCopy`].
    WaitEvents {
        site: u64,
        loc: u32,
        num: u32,
        list: u32,
    },
    /// Before an atomic at `loc` on `size` bytes at `addr` (only with
    /// [`Execution::stop_at_atomics`], whose warps are single work-items); it runs once the warp is
    /// granted and resumed. `plain`: a plain load or store (`op` says which) into
    /// [`Execution::watch`] bytes.
    AtAtomic {
        loc: u32,
        op: AtomicOp,
        addr: u64,
        size: u32,
        plain: bool,
    },
    /// The instruction budget ran out before the next branch or call; resuming retries it.
    OutOfBudget,
    Done,
}

/// The registers of an `async_work_group_copy` (absolute slots of the register file) and its
/// constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyRegs {
    /// Where the event goes.
    pub dst: u32,
    pub dst_ptr: u32,
    pub src_ptr: u32,
    pub count: u32,
    pub stride: u32,
    /// The event the copy joins (0: a fresh one).
    pub event: u32,
    /// Bytes per element.
    pub elem: u32,
    /// Global to local: the stride steps through the source (else through the destination).
    pub to_local: bool,
}

/// Reports a completed `memmove` of `n` bytes as a load of the source and a store of the
/// destination, in chunks small enough to carry the stored bytes on the stack.
pub fn observe_copy(mem: &mut Memory, to: u64, from: u64, n: usize, loc: u32, report: &mut dyn FnMut(&Access)) {
    const CHUNK: usize = 64;
    let mut done = 0;
    if !observed(to) && !observed(from) {
        return;
    }
    while done < n {
        let len = CHUNK.min(n - done);
        let mut bytes = [0u8; CHUNK];
        let at = done as u64;
        // The copy succeeded, so the destination is in bounds (if write-only, still readable to
        // us): one check for the chunk.
        if observed(to) && mem.read_bytes_as(to + at, &mut bytes[..len], ANY).is_err() {
            bytes[..len].fill(0);
        }
        if observed(from) {
            report(&Access { kind: AccessKind::Load, addr: from + at, size: len as u32, loc, stored: &[] });
        }
        if observed(to) {
            report(&Access { kind: AccessKind::Store, addr: to + at, size: len as u32, loc, stored: &bytes[..len] });
        }
        done += len;
    }
}

/// Whether the hooks hear of an access at `addr`: not in private memory, which is each
/// work-item's own (see [`GroupHooks`](super::hooks::GroupHooks)).
#[inline(always)]
pub fn observed(addr: u64) -> bool {
    addr >> SPACE_SHIFT != SPACE_PRIVATE
}

pub fn oob(exec: &Execution, mem: &Memory, f: Fault, store: bool, global_id: [u64; 3], loc: u32) -> Finding {
    let (_, index, offset) = split(f.addr);
    if let FaultKind::Mode(denied) = f.kind {
        return Finding::AccessMode {
            store: denied & STORE != 0,
            mode: exec.globals.mode(index),
            allocation: exec.globals.names.get(index as usize).cloned().unwrap_or_default(),
            offset: offset as i64,
            size: f.size,
            global_id,
            loc,
        };
    }
    // An address before the start of its allocation has borrowed from the index field: name the
    // allocation it was computed from, with a negative offset.
    let (space, index, offset) = from_start(f.addr);
    let (space_name, allocation, alloc_size) = match space {
        1 => {
            let constant = exec.globals.constant.get(index as usize).copied().unwrap_or(false);
            let name = exec.globals.names.get(index as usize).cloned().unwrap_or_else(|| "invalid".into());
            (if constant { "constant" } else { "global" }, name, exec.globals.len(index).unwrap_or(0) as u64)
        }
        SPACE_LOCAL => {
            let len = mem.local_regions.get(index as usize).map_or(0, |r| r.1) as u64;
            let name = exec
                .module
                .locals
                .get(index as usize)
                .map(|v| v.name.clone())
                .unwrap_or_else(|| format!("local argument {index}"));
            ("local", name, len)
        }
        SPACE_PRIVATE => ("private", "private memory".into(), mem.private.len() as u64),
        _ if index == 0 && offset <= 0 => ("global", "NULL".into(), 0),
        _ => ("unknown", "invalid pointer".into(), 0),
    };
    Finding::OutOfBounds { store, space: space_name, allocation, offset, size: f.size, alloc_size, global_id, loc }
}

/// The space, allocation index and byte offset of `addr`, read as a pointer at most 2^39 bytes
/// before the start of its allocation when its offset is that close to the top of the offset
/// field (no allocation is that large): `in - 2044` is allocation `in` at offset -2044, not
/// the allocation before it at offset 2^40 - 2044.
pub(crate) fn from_start(addr: u64) -> (u64, u64, i64) {
    let (space, index, offset) = split(addr);
    if offset < 1 << (INDEX_SHIFT - 1) {
        return (space, index, offset as i64);
    }
    let (space, index, _) = split(addr.wrapping_add(1 << INDEX_SHIFT));
    (space, index, offset as i64 - (1 << INDEX_SHIFT))
}

/// The address space and name of the allocation `addr` points into, for a report.
pub fn allocation_of(exec: &Execution, addr: u64) -> (&'static str, String) {
    let (space, index, _) = split(addr);
    match space {
        SPACE_GLOBAL => {
            let constant = exec.globals.constant.get(index as usize).copied().unwrap_or(false);
            let name = exec.globals.names.get(index as usize).cloned().unwrap_or_else(|| "invalid".into());
            (if constant { "constant" } else { "global" }, name)
        }
        SPACE_LOCAL => {
            let name = exec.module.locals.get(index as usize).map(|v| v.name.clone());
            ("local", name.unwrap_or_else(|| format!("local argument {index}")))
        }
        SPACE_PRIVATE => ("private", "private memory".into()),
        _ => ("unknown", "invalid pointer".into()),
    }
}
