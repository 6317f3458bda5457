//! Runs an NDRange of one kernel on the CPU: the launch description, its outcome, and the
//! entry point [`run`].

mod affine;
mod collective;
pub mod cpu;
mod cpu_time;
mod execution;
pub mod findings;
mod group;
mod half;
pub mod hooks;
pub mod image;
mod interp;
pub mod math;
pub mod memory;
mod meter;
mod ops;
pub mod printf;
mod schedule;
mod stepping;
mod uninit;
mod warp;
pub mod workers;
pub use stepping::{Choice, Chooser, Effect, InOrder, Policy, Replay, Stepping};
pub use warp::SPIN_REPEATS;

/// Spinning work-items a deadlock lists.
pub const MAX_DEADLOCK_WAITERS: usize = 8;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::time::{Duration, Instant};

use crate::budget::MemoryBudget;
use crate::program::Program;

/// The value bound to one kernel argument.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgValue {
    /// A global or constant buffer: an index into the `buffers` passed to [`run`]. Two
    /// arguments may name the same buffer.
    Buffer(usize),
    /// A pointer `offset` bytes into buffer `buffer` (an OpenCL sub-buffer).
    SubBuffer { buffer: usize, offset: u64 },
    /// A NULL buffer pointer.
    Null,
    /// A `__local` pointer argument: the size in bytes of the allocation each work-group gets.
    Local(usize),
    /// A by-value argument: its bytes, as the host would pass them to `clSetKernelArg`.
    Value(Vec<u8>),
    /// An image held, packed, in buffer `buffer`.
    Image { buffer: usize, desc: image::ImageDesc },
    /// A sampler: its `CLK_*` bit field (see [`image::Sampler`]).
    Sampler(u32),
}

/// One kernel launch: which kernel, the NDRange and the arguments.
#[derive(Debug, Clone)]
pub struct Launch {
    pub kernel: String,
    pub work_dim: u32,
    pub global_offset: [u64; 3],
    pub global_size: [u64; 3],
    pub local_size: [u64; 3],
    pub args: Vec<ArgValue>,
}

/// Something wrong that the kernel did, reported with where it happened.
#[derive(Debug, Clone, PartialEq)]
pub enum Finding {
    /// A load or store outside its allocation; the load yielded 0, the store was dropped.
    OutOfBounds {
        store: bool,
        /// `global`, `constant`, `local` or `private`.
        space: &'static str,
        /// The argument or variable name of the allocation, when known.
        allocation: String,
        offset: i64,
        size: u32,
        alloc_size: u64,
        global_id: [u64; 3],
        /// The instruction's source location (see [`crate::ir::Module::location`]).
        loc: u32,
    },
    /// An image read without a sampler (or with `CLK_ADDRESS_NONE`), or an image write, at
    /// coordinates outside the image. The read yielded the border color, the write was dropped.
    ImageOutOfBounds {
        store: bool,
        /// The image argument's name.
        image: String,
        /// The coordinates the kernel gave (x, y, z or array layer; unused ones 0).
        coord: [i64; 4],
        /// The image's size by dimension, then its array size (unused ones 0).
        extent: [u64; 4],
        global_id: [u64; 3],
        loc: u32,
    },
    /// A load from a buffer the host made write-only, or a store to one it made read-only
    /// (`CL_MEM_WRITE_ONLY` / `CL_MEM_READ_ONLY`). The access was performed.
    AccessMode {
        store: bool,
        /// The buffer's mode: read-only (the access was a store) or write-only (a load).
        mode: memory::BufferMode,
        allocation: String,
        offset: i64,
        size: u32,
        global_id: [u64; 3],
        loc: u32,
    },
    /// A load, store or atomic through a pointer not aligned as OpenCL requires for its type.
    /// When in bounds, the access was performed (an atomic one byte by byte in global memory).
    Misaligned {
        /// `load`, `store` or `atomic`.
        access: &'static str,
        /// `global`, `constant`, `local` or `private`.
        space: &'static str,
        allocation: String,
        offset: i64,
        size: u32,
        alignment: u32,
        global_id: [u64; 3],
        loc: u32,
    },
    /// An index into a fixed-size array (a member of a struct, a private or `__local` array)
    /// outside the array, found when the element's address is computed: the address may still
    /// lie inside the enclosing allocation.
    ArrayIndex {
        space: &'static str,
        allocation: String,
        /// The byte offset in the allocation of the element the index names.
        offset: i64,
        index: i64,
        /// Elements in the array.
        extent: u64,
        global_id: [u64; 3],
        loc: u32,
    },
    /// A value read from memory that nothing had written (private or `__local` memory, or a
    /// global buffer the launch marked `noinit`), used as an address, as a branch or switch
    /// condition, or stored to global memory (check 9, [`RunOptions::check_uninitialized`]).
    Uninitialized {
        /// `address`, `branch` or `store`.
        used: &'static str,
        /// Where the uninitialised bytes were read: `private`, `local` or `global`.
        space: &'static str,
        allocation: String,
        global_id: [u64; 3],
        loc: u32,
    },
    /// A work-item's assertion (`CLRACE_ASSERT` from `clrace.h`, or `__assert`) did not hold;
    /// the work-item carried on.
    AssertionFailed {
        /// The asserted expression as the source spells it (`CLRACE_ASSERT`), or None (`__assert`).
        message: Option<String>,
        global_id: [u64; 3],
        loc: u32,
    },
    /// Work-items of one group reached different barriers, or some finished while others waited
    /// at a barrier. The barrier was released for all of them and the run went on.
    BarrierDivergence {
        group: [u64; 3],
        /// The local id of a work-item waiting at the barrier at `barrier` (a source location).
        waiting: [u64; 3],
        barrier: u32,
        /// The local id of a work-item elsewhere: at the barrier at `other_barrier`, or at the end
        /// of the kernel (None).
        other: [u64; 3],
        other_barrier: Option<u32>,
    },
    /// Under lockstep per sub-group ([`Policy::SubGroups`]): lanes of one sub-group spin, at
    /// the atomic at `loc`, on a value that only lanes of their own sub-group which lockstep has
    /// masked off (on another path of the same warp) can change: on lockstep hardware they spin
    /// for ever. The run went on as if the sub-group could part (which its result then reflects).
    SubGroupLivelock {
        group: [u64; 3],
        /// The sub-group (local linear id / `width`) and its width.
        sub_group: u32,
        width: u32,
        loc: u32,
        /// Local linear ids of the spinning lanes and of the lanes masked off, at most 64 each.
        spinning: Vec<u32>,
        masked: Vec<u32>,
        /// The global id of the first spinning lane.
        global_id: [u64; 3],
    },
    /// The group can never finish: every work-item not finished either waits at a barrier or
    /// re-reads, with the same atomic, a value only a waiting work-item could change, and its
    /// whole state came back unchanged (see `schedule::GroupRun::deadlocked`). The group's run
    /// ended there; the work-items that had finished ran as usual.
    Deadlock {
        group: [u64; 3],
        /// The spinning work-items (global id, the atomic's source location, the tagged address it
        /// re-reads), at most [`MAX_DEADLOCK_WAITERS`], in local-id order.
        waiting: Vec<([u64; 3], u32, u64)>,
        /// How many work-items spin, and how many wait at a barrier.
        spinning: usize,
        at_barrier: usize,
    },
    /// An `async_work_group_copy` (or strided copy) or `wait_group_events` used against its
    /// contract: not reached by every work-item of the group or with arguments that differ
    /// between them, a copy whose event no wait named before the group finished, or a wait on an
    /// event that no copy of the group has in flight. See `collective::AsyncCopies` for what
    /// the run then does.
    AsyncCopy {
        problem: AsyncProblem,
        /// The call at `loc` is a `wait_group_events` (else a copy).
        wait: bool,
        group: [u64; 3],
        /// Work-items that reached the call, of `items` in the group (non-uniform only).
        reached: u64,
        items: u64,
        /// A work-item whose arguments differ from those of `first`, the lowest one there, and the
        /// first argument that differs (non-uniform only).
        differs: Option<([u64; 3], &'static str)>,
        first: [u64; 3],
        /// The event waited on (invalid-event only).
        event: u64,
        loc: u32,
    },
}

/// What an [`Finding::AsyncCopy`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AsyncProblem {
    NonUniform,
    Unwaited,
    InvalidEvent,
}

impl AsyncProblem {
    /// The name reports give it.
    pub fn name(self) -> &'static str {
        match self {
            AsyncProblem::NonUniform => "non-uniform",
            AsyncProblem::Unwaited => "unwaited",
            AsyncProblem::InvalidEvent => "invalid-event",
        }
    }
}

/// What a successful run produced besides the buffers it wrote.
#[derive(Debug, Default)]
pub struct RunOutcome {
    /// One finding per instruction (see [`findings`]), at its first occurrence in NDRange order;
    /// at most [`findings::MAX_KEPT`].
    pub findings: Vec<Finding>,
    /// How many times each of `findings` occurred.
    pub finding_counts: Vec<u64>,
    /// Occurrences of findings not kept (past [`findings::MAX_KEPT`] distinct ones).
    pub findings_omitted: u64,
    /// The output of the kernel's `printf` calls.
    pub printf: String,
}

/// Why a run could not complete.
#[derive(Debug)]
pub enum ExecError {
    /// The launch does not fit the kernel (unknown kernel, wrong argument count or kind, bad sizes).
    Launch(String),
    /// The kernel uses something the emulator cannot execute.
    Unsupported(String),
    /// The kernel ran past the instruction budget.
    Budget(String),
    /// Work-items wait for each other in a way that can never end.
    Hang(String),
    /// Anything else that stopped the kernel (e.g. unbounded recursion).
    Fault(String),
    /// The run passed its deadline or its CPU time, or was cancelled. The message starts with
    /// `wall-time limit exceeded`, `CPU-time limit exceeded` or `run cancelled` and names where
    /// the run was.
    Timeout(String),
    /// The memory budget ([`RunOptions::memory`]) would be exceeded.
    Memory(String),
}

/// What the arguments bound to one buffer say about it.
pub struct BufferBinding<'a> {
    /// The kernel's reflection of each argument bound to the buffer, in argument order.
    pub args: Vec<&'a crate::program::KernelArg>,
    /// The image the buffer holds, if an argument binds it as one.
    pub image: Option<image::ImageDesc>,
}

impl BufferBinding<'_> {
    /// The buffer's name in messages: its first argument's, or `buffer N`.
    pub fn name(&self, buffer: usize) -> String {
        self.args.first().map_or_else(|| format!("buffer {buffer}"), |a| a.name.clone())
    }
}

impl Launch {
    /// The arguments (reflected as `params`) bound to buffer `buffer`.
    pub fn binding<'a>(&self, params: &'a [crate::program::KernelArg], buffer: usize) -> BufferBinding<'a> {
        let bound = || params.iter().zip(&self.args).filter(|(_, v)| v.buffer() == Some(buffer));
        BufferBinding {
            args: bound().map(|(a, _)| a).collect(),
            image: bound().find_map(|(_, v)| match v {
                ArgValue::Image { desc, .. } => Some(*desc),
                _ => None,
            }),
        }
    }

    /// Whether the launch only reads buffer `buffer`: some argument is bound to it, and the
    /// kernel writes through none of them (`written`, per parameter, from
    /// [`crate::program::Program::written_params`]; None, when it cannot tell, reads nothing
    /// only).
    pub fn only_reads(&self, written: Option<&[bool]>, buffer: usize) -> bool {
        let Some(written) = written else { return false };
        let mut bound = self.args.iter().enumerate().filter(|(_, v)| v.buffer() == Some(buffer)).peekable();
        bound.peek().is_some() && bound.all(|(p, _)| written.get(p) == Some(&false))
    }
}

impl ArgValue {
    /// The buffer this argument points into, if it is a buffer.
    pub fn buffer(&self) -> Option<usize> {
        match self {
            ArgValue::Buffer(b) | ArgValue::SubBuffer { buffer: b, .. } | ArgValue::Image { buffer: b, .. } => Some(*b),
            _ => None,
        }
    }
}

impl std::fmt::Display for ExecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExecError::Launch(m) => write!(f, "invalid launch: {m}"),
            ExecError::Unsupported(m) => write!(f, "unsupported: {m}"),
            ExecError::Budget(m) => write!(f, "instruction budget exhausted: {m}"),
            ExecError::Hang(m) => write!(f, "{m}"),
            ExecError::Fault(m) => write!(f, "execution failed: {m}"),
            ExecError::Timeout(m) => write!(f, "{m}"),
            ExecError::Memory(m) => write!(f, "memory limit exceeded: {m}"),
        }
    }
}

impl std::error::Error for ExecError {}

/// Limits of one run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// How many branches and calls the whole launch may take before it is stopped (exactly: the
    /// work-groups draw from one pool).
    pub budget: u64,
    /// Worker threads for work-groups; `None` uses every core.
    pub threads: Option<usize>,
    /// Work-items per sub-group (the last sub-group of a work-group may be smaller).
    pub sub_group_size: u32,
    /// How work-items are put into lockstep warps (see [`Policy`]).
    pub policy: Policy,
    /// What the emulator's input-sized allocations (and a detector given the same budget) are
    /// charged against; `None` is unlimited.
    pub memory: Option<Arc<MemoryBudget>>,
    /// When the run must end ([`ExecError::Timeout`]); checked at least every 64K branches and
    /// calls and at every work-group start.
    pub deadline: Option<Instant>,
    /// The CPU time the run's worker threads may use together ([`ExecError::Timeout`]): each
    /// reads its own CPU clock where the deadline is checked. Unlike the deadline, it does not
    /// depend on how loaded the machine is.
    pub cpu_limit: Option<Duration>,
    /// Set by another thread to abandon the run ([`ExecError::Timeout`]), checked as often as
    /// the deadline.
    pub cancel: Option<Arc<AtomicBool>>,
    /// Counts the work-groups that have finished, for a progress display.
    pub progress: Option<Arc<AtomicU64>>,
    /// The host's access mode of each buffer passed to [`run`] (by index; missing ones are
    /// read-write): loads from write-only and stores to read-only buffers are findings.
    pub buffer_modes: Vec<memory::BufferMode>,
    /// Check 9: report uninitialised values used as addresses, branch conditions or values
    /// stored to global memory. Off, the interpreter runs without any of its shadow.
    pub check_uninitialized: bool,
    /// The buffers passed to [`run`] (by index; missing ones are not) whose contents count as
    /// uninitialised under [`RunOptions::check_uninitialized`] (`noinit` in a launch file).
    pub noinit: Vec<bool>,
    /// When to run code specialised for this launch's by-value arguments (see [`Specialise`]).
    pub specialise: Specialise,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            budget: DEFAULT_BUDGET,
            threads: None,
            sub_group_size: DEFAULT_SUB_GROUP_SIZE,
            policy: Policy::Lockstep,
            memory: None,
            deadline: None,
            cpu_limit: None,
            cancel: None,
            progress: None,
            buffer_modes: Vec::new(),
            check_uninitialized: false,
            noinit: Vec::new(),
            specialise: Specialise::Large,
        }
    }
}

/// When a launch runs code specialised for its by-value arguments: each a constant of the
/// kernel's code, and what they decide folded ([`crate::program::Program::specialise`]). The
/// results are the same either way; only the time differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Specialise {
    /// Never: the code runs as built.
    Off,
    /// For launches of at least [`Specialise::LARGE`] work-items, which repay the cost of
    /// specialising: at once when they have [`Specialise::ITEMS_PER_INSTRUCTION`] work-items
    /// per instruction of the kernel's code, else from the second launch with the same
    /// arguments on.
    #[default]
    Large,
    /// For every launch (tests compare it with [`Specialise::Off`]).
    Always,
}

impl Specialise {
    /// The fewest work-items a launch must have for [`Specialise::Large`] to specialise it:
    /// specialising costs about as much as running each of the kernel's instructions a few
    /// thousand times, which smaller launches do not repay.
    pub const LARGE: u64 = 256;

    /// Work-items per instruction the kernel reaches that a [`Specialise::Large`] launch needs
    /// to repay specialising on its own: folding costs a few thousand instructions per
    /// instruction of code, and a launch saves at most a few per work-item and instruction
    /// (CLBlast's GEMM, 900 instructions, 1024 work-items: 3.0 M spent, 2.1 M saved, and more
    /// than that in time, which the allocations of folding take).
    pub const ITEMS_PER_INSTRUCTION: u64 = 4;

    /// Whether a launch of `items` work-items may run specialised code.
    pub fn applies(self, items: u64) -> bool {
        match self {
            Specialise::Off => false,
            Specialise::Large => items >= Self::LARGE,
            Specialise::Always => true,
        }
    }

    /// Whether a launch of `items` work-items of a kernel reaching `code` instructions repays
    /// specialising on its own; one that does not is specialised at its second launch with the
    /// same arguments ([`crate::program::Program::specialise_if_repaid`]).
    pub fn repays_alone(self, items: u64, code: usize) -> bool {
        match self {
            Specialise::Off => false,
            Specialise::Large => items >= (code as u64).saturating_mul(Self::ITEMS_PER_INSTRUCTION),
            Specialise::Always => true,
        }
    }
}

/// The default sub-group size.
pub const DEFAULT_SUB_GROUP_SIZE: u32 = 32;

/// The threads a run takes when it is not told how many: the cores this process may use, asked
/// once per process (`std::thread::available_parallelism` reads the cgroup's CPU quota files at
/// every call: about 40 microseconds, which every launch of an application paid).
pub fn default_threads() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Has each of the calling thread's `threads` workers fault in room for its register file for
/// groups of `local` work-items of `kernel`, while the caller goes on preparing the launch (its
/// buffers): a worker's first group then finds the file in memory. Returns at once; nothing for
/// one thread, an unknown kernel or a group size not known yet (a 0).
pub fn warm_workers(program: &Program, kernel: &str, local: [u64; 3], threads: usize) {
    let lanes = local.iter().product::<u64>();
    if lanes == 0 || lanes > MAX_GROUP_ITEMS {
        return;
    }
    if let Some(words) = group::register_words(program, kernel, lanes) {
        workers::ahead(threads, move || warp::warm_registers(words));
    }
}

/// The most work-items one work-group may have: each has its own registers and private memory,
/// created when the group starts.
pub const MAX_GROUP_ITEMS: u64 = 1 << 16;

/// The most work-items a launch may have: the race detector numbers them in 32 bits.
pub const MAX_LAUNCH_ITEMS: u64 = 1 << 32;

/// The default instruction budget: branches and calls per launch.
pub const DEFAULT_BUDGET: u64 = 20_000_000_000;

/// Runs `launch` of a kernel of `program`, reading and writing `buffers` in place.
pub fn run(program: &Program, launch: &Launch, buffers: &mut [Vec<u8>]) -> Result<RunOutcome, ExecError> {
    run_with(program, launch, buffers, &RunOptions::default())
}

/// [`run`] with explicit limits.
pub fn run_with(
    program: &Program,
    launch: &Launch,
    buffers: &mut [Vec<u8>],
    options: &RunOptions,
) -> Result<RunOutcome, ExecError> {
    group::run(program, launch, buffers, options, &hooks::NoHooks, None)
}

/// [`run_with`], reporting every access, atomic, barrier and fence to `hooks`.
pub fn run_hooked<H: hooks::Hooks>(
    program: &Program,
    launch: &Launch,
    buffers: &mut [Vec<u8>],
    options: &RunOptions,
    hooks: &H,
) -> Result<RunOutcome, ExecError> {
    group::run(program, launch, buffers, options, hooks, None)
}

/// [`run_with`] with every work-item alone and all work-groups alive at once, stopping before
/// each atomic for `chooser` to pick which waiting work-item (of any group) runs it next
/// (`options.threads` and `options.policy` are not used). Returns the outcome and the choices
/// made, in order: [`Replay`] with them repeats the run exactly.
pub fn run_stepped(
    program: &Program,
    launch: &Launch,
    buffers: &mut [Vec<u8>],
    options: &RunOptions,
    chooser: &mut dyn Chooser,
) -> Result<(RunOutcome, Vec<Choice>), ExecError> {
    run_stepped_hooked(program, launch, buffers, options, chooser, &hooks::NoHooks)
}

/// [`run_stepped`], reporting every access, atomic, barrier and fence to `hooks`. Every group
/// is started (its observer made, in NDRange order) before any runs, the groups' steps
/// interleave on this thread as `chooser` decides, and the observers are ended in NDRange order
/// once all have finished.
pub fn run_stepped_hooked<H: hooks::Hooks>(
    program: &Program,
    launch: &Launch,
    buffers: &mut [Vec<u8>],
    options: &RunOptions,
    chooser: &mut dyn Chooser,
    hooks: &H,
) -> Result<(RunOutcome, Vec<Choice>), ExecError> {
    run_stepped_watching(program, launch, buffers, options, chooser, hooks, &[])
        .map(|(outcome, record, _)| (outcome, record))
}

/// [`run_stepped_hooked`] in which plain loads and stores that overlap the `watch` ranges
/// (sorted, disjoint `[start, end)` of tagged addresses) stop for `chooser` too, as atomics
/// do; their choices have `plain` set. Returns also what each choice did, in order.
pub fn run_stepped_watching<H: hooks::Hooks>(
    program: &Program,
    launch: &Launch,
    buffers: &mut [Vec<u8>],
    options: &RunOptions,
    chooser: &mut dyn Chooser,
    hooks: &H,
    watch: &[(u64, u64)],
) -> Result<(RunOutcome, Vec<Choice>, Vec<Effect>), ExecError> {
    let (mut record, mut effects) = (Vec::new(), Vec::new());
    let stepping = Stepping { chooser, record: &mut record, effects: &mut effects, watch };
    let outcome = group::run(program, launch, buffers, options, hooks, Some(stepping))?;
    Ok((outcome, record, effects))
}
