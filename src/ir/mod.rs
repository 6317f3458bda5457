//! Our compact IR: what the SPIR-V lowering produces and the interpreter executes.
//!
//! A function is a flat array of [`Inst`] with branch targets resolved to indices, operating on
//! dense `u64` register slots. Every SPIR-V value occupies consecutive slots, one per scalar leaf
//! (a `float4` takes four, a struct one per field). Slots hold raw bits: integers zero-extended
//! from their width, `float` as its 32 bits, `double` as 64, booleans as 0/1, pointers as tagged
//! addresses (see [`value`]). Constants live in a per-function template that
//! initialises the registers of each call frame, so instructions never carry immediates.
//!
//! This module owns the data and what is derived from the instruction set alone: the value
//! encoding ([`value`]), the registers each instruction reads and writes ([`operands`]) and the
//! textual form ([`dump`]). It knows nothing of SPIR-V or of execution: it imports neither
//! `spirv` nor `exec`, which both build on it. What the interpreter may assume of a module is
//! established by its validation ([`validate`]), which the lowering runs last. A kernel's
//! reflected signature ([`reflect`]) lives here too, so that the lowering can fill it in and the
//! program hand it out without either importing the other.

pub mod dominators;
pub mod dump;
pub mod intervals;
pub mod operands;
pub mod reconverge;
pub mod reflect;
pub mod validate;
pub mod value;
pub mod written;

use rspirv::spirv::OpenclStd100Op;
use serde::{Deserialize, Serialize};

use reflect::KernelInfo;
pub use value::TexelType;

/// A register slot index, relative to the current call frame.
pub type Reg = u32;

/// Integer binary operations; operands and result are `bits` wide.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum IntOp {
    Add,
    Sub,
    Mul,
    UDiv,
    SDiv,
    URem,
    SRem,
    SMod,
    And,
    Or,
    Xor,
    Shl,
    LShr,
    AShr,
}

/// Floating-point binary operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FloatOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Mod,
}

/// Comparisons; each yields a boolean slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Cmp {
    Eq,
    Ne,
    ULt,
    ULe,
    UGt,
    UGe,
    SLt,
    SLe,
    SGt,
    SGe,
    FOrdEq,
    FOrdNe,
    FOrdLt,
    FOrdLe,
    FOrdGt,
    FOrdGe,
    FUnordEq,
    FUnordNe,
    FUnordLt,
    FUnordLe,
    FUnordGt,
    FUnordGe,
    FOrd,
    FUnord,
}

/// One-operand operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum UnOp {
    INeg,
    Not,
    FNeg,
    LogicalNot,
    IsNan,
    IsInf,
    IsFinite,
    IsNormal,
    SignBitSet,
    BitCount,
    BitReverse,
}

/// How a value converts between numeric types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Conv {
    /// Zero-extend or truncate.
    UInt,
    /// Sign-extend or truncate.
    SInt,
    /// Integer to integer with saturation (`convert_T_sat`): source and destination signedness.
    SatInt {
        src_signed: bool,
        dst_signed: bool,
    },
    FloatToUInt {
        sat: bool,
        round: Round,
    },
    FloatToSInt {
        sat: bool,
        round: Round,
    },
    UIntToFloat {
        round: Round,
    },
    SIntToFloat {
        round: Round,
    },
    Float {
        round: Round,
    },
    /// Pointer (`from`: the module's pointer width, 32 or 64) to an integer of `to` bits, as
    /// [`value::pointer_to_int`] encodes it.
    PtrInt,
    /// Integer of `from` bits to a pointer (`to`: the module's pointer width), as
    /// [`value::int_to_pointer`] decodes it.
    IntPtr,
}

/// A rounding mode, as `FPRoundingMode` decorations name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Round {
    /// The conversion's default (to zero for float to int, to nearest even otherwise).
    Default,
    Rte,
    Rtz,
    Rtp,
    Rtn,
}

/// Atomic read-modify-write operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum AtomicOp {
    Load,
    Store,
    Exchange,
    CompareExchange,
    Add,
    Sub,
    SMin,
    UMin,
    SMax,
    UMax,
    And,
    Or,
    Xor,
    Inc,
    Dec,
    FlagTestAndSet,
    FlagClear,
}

/// The work-item values read through SPIR-V `BuiltIn` variables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Builtin {
    GlobalId,
    LocalId,
    GroupId,
    NumGroups,
    GlobalSize,
    LocalSize,
    EnqueuedLocalSize,
    GlobalOffset,
    WorkDim,
    GlobalLinearId,
    LocalLinearId,
    SubgroupSize,
    SubgroupMaxSize,
    NumSubgroups,
    SubgroupId,
    SubgroupLocalId,
}

impl Builtin {
    /// The slots the value takes: three for the per-dimension ids and sizes, else one.
    pub fn lanes(self) -> u8 {
        use Builtin::*;
        match self {
            GlobalId | LocalId | GroupId | NumGroups | GlobalSize | LocalSize | EnqueuedLocalSize | GlobalOffset => 3,
            WorkDim | GlobalLinearId | LocalLinearId | SubgroupSize | SubgroupMaxSize | NumSubgroups | SubgroupId
            | SubgroupLocalId => 1,
        }
    }
}

/// A memory barrier's fence flags (the storage-class bits of its semantics).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Fence {
    pub local: bool,
    pub global: bool,
}

/// The memory order of an atomic or fence (the order bits of its SPIR-V semantics).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum MemOrder {
    #[default]
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    SeqCst,
}

impl MemOrder {
    /// Whether this order makes earlier accesses visible to an acquirer.
    pub fn releases(self) -> bool {
        matches!(self, MemOrder::Release | MemOrder::AcqRel | MemOrder::SeqCst)
    }

    /// Whether this order makes a releaser's accesses visible to later ones.
    pub fn acquires(self) -> bool {
        matches!(self, MemOrder::Acquire | MemOrder::AcqRel | MemOrder::SeqCst)
    }
}

/// The set of work-items an atomic or fence synchronises with (SPIR-V `Scope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize)]
pub enum Scope {
    WorkItem,
    SubGroup,
    WorkGroup,
    #[default]
    Device,
    AllDevices,
}

/// The arithmetic of a work-group reduction or scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum GroupArith {
    IAdd,
    FAdd,
    SMin,
    UMin,
    FMin,
    SMax,
    UMax,
    FMax,
}

/// A work-group (or sub-group) collective function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CollectiveOp {
    All,
    Any,
    /// The value of the work-item whose local id the operand names.
    Broadcast,
    Reduce(GroupArith),
    InclusiveScan(GroupArith),
    ExclusiveScan(GroupArith),
}

/// A half-precision helper in `vload_half`/`vstore_half` form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum HalfRound {
    Rte,
    Rtz,
    Rtp,
    Rtn,
}

/// One IR instruction. `n` is the number of lanes for element-wise operations.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Inst {
    Mov {
        dst: Reg,
        src: Reg,
        n: u16,
    },
    IntBin {
        op: IntOp,
        bits: u8,
        dst: Reg,
        a: Reg,
        b: Reg,
        n: u16,
    },
    /// Integer op with a scalar `b` broadcast over the lanes of `a` (shifts by a scalar).
    /// Element-wise float arithmetic on `bits`-wide floats (16, 32 or 64).
    FloatBin {
        op: FloatOp,
        bits: u8,
        dst: Reg,
        a: Reg,
        b: Reg,
        n: u16,
    },
    Compare {
        cmp: Cmp,
        bits: u8,
        dst: Reg,
        a: Reg,
        b: Reg,
        n: u16,
    },
    Unary {
        op: UnOp,
        bits: u8,
        dst: Reg,
        a: Reg,
        n: u16,
    },
    Convert {
        conv: Conv,
        from: u8,
        to: u8,
        dst: Reg,
        src: Reg,
        n: u16,
    },
    /// `dst = cond ? a : b`, lane-wise when `cond_lanes` is true, else one condition for all.
    Select {
        dst: Reg,
        cond: Reg,
        a: Reg,
        b: Reg,
        n: u16,
        cond_lanes: bool,
    },
    /// Reinterprets the bytes of `src` (laid out as `from`) as `to`.
    Bitcast {
        dst: Reg,
        src: Reg,
        from: u32,
        to: u32,
    },
    /// Any / All over boolean lanes.
    Reduce {
        all: bool,
        dst: Reg,
        src: Reg,
        n: u16,
    },
    /// `dst = base + offset + Σ index·stride` (see [`Function::indices`]).
    PtrOffset {
        dst: Reg,
        base: Reg,
        offset: i64,
        first_index: u32,
        num_indices: u16,
    },
    /// `dst = a - b` in units of `elem` bytes.
    PtrDiff {
        dst: Reg,
        a: Reg,
        b: Reg,
        elem: u32,
    },
    /// A typed load of layout `layout` (see [`Module::layouts`]). `align` (a power of two) is
    /// the alignment OpenCL requires of `ptr`: the type's, or less for a packed struct's member
    /// (the `Aligned` operand clang gives, at most the value's size); 1 checks nothing.
    Load {
        dst: Reg,
        ptr: Reg,
        layout: u32,
        loc: u32,
        align: u8,
    },
    /// Fast path: a load of one scalar of `size` bytes.
    LoadScalar {
        dst: Reg,
        ptr: Reg,
        size: u8,
        loc: u32,
        align: u8,
    },
    Store {
        src: Reg,
        ptr: Reg,
        layout: u32,
        loc: u32,
        align: u8,
    },
    StoreScalar {
        src: Reg,
        ptr: Reg,
        size: u8,
        loc: u32,
        align: u8,
    },
    /// Checks that the index of entry `index` of [`Function::indices`] (the access chain's own,
    /// so that passes folding its register keep the two in step) names an element of an array
    /// of `extent` elements; `ptr` holds the element's address (the access chain's result).
    /// Emitted only for indices into array types that are not constants.
    IndexCheck {
        index: u32,
        ptr: Reg,
        extent: u32,
        loc: u32,
    },
    /// `memcpy(dst, src, size)`; the size in a register.
    CopyMemory {
        dst: Reg,
        src: Reg,
        size: Reg,
        loc: u32,
    },
    /// Reserves `size` bytes of private memory for the current frame, aligned, and yields its address.
    Alloca {
        dst: Reg,
        size: u32,
        align: u32,
    },
    /// Reads a lane chosen at run time: `dst = src[index]`; an index past the end reads `beyond`
    /// (OpenCL wants 0 for ids and 1 for sizes of dimensions past the third).
    ExtractDynamic {
        dst: Reg,
        src: Reg,
        index: Reg,
        index_bits: u8,
        n: u16,
        beyond: u8,
    },
    /// `dst = src; dst[index] = value`.
    InsertDynamic {
        dst: Reg,
        src: Reg,
        value: Reg,
        index: Reg,
        index_bits: u8,
        n: u16,
    },
    /// `dst[i] = srcs[sel[i]]` for a lane list held in [`Function::indices`]' lane table.
    Shuffle {
        dst: Reg,
        first: u32,
        n: u16,
    },
    /// Dynamic OpenCL `shuffle`/`shuffle2`: lanes of `a` (then `b`) chosen by `mask`'s lanes.
    ShuffleDynamic {
        dst: Reg,
        a: Reg,
        b: Reg,
        na: u16,
        mask: Reg,
        n: u16,
        mask_bits: u8,
    },
    /// A work-item function's value: `which.lanes()` slots from `dst`, of which the first
    /// `dims` are read by the function (1 to 3 for the per-dimension ids and sizes, set by
    /// `opt`'s last pass; else all): the executor writes those only.
    Builtin {
        dst: Reg,
        which: Builtin,
        dims: u8,
    },
    /// An OpenCL.std function applied lane-wise; `kind` says the element type.
    Math {
        #[serde(with = "opencl_op")]
        op: OpenclStd100Op,
        kind: MathKind,
        dst: Reg,
        args: [Reg; 3],
        n: u16,
    },
    /// An OpenCL.std function with a second result stored through a pointer (`frexp`, `sincos`...).
    MathOut {
        #[serde(with = "opencl_op")]
        op: OpenclStd100Op,
        /// The float width of the operands and result (16, 32 or 64).
        bits: u8,
        out_bits: u8,
        dst: Reg,
        a: Reg,
        b: Reg,
        out: Reg,
        n: u16,
        loc: u32,
    },
    /// Geometric functions over whole vectors: dot, length, distance, normalize, cross.
    Geometric {
        op: Geo,
        /// The float width of the operands (16, 32 or 64).
        bits: u8,
        dst: Reg,
        a: Reg,
        b: Reg,
        n: u16,
    },
    /// `vloadn` / `vstoren` / `vload_half` / `vstore_half` family.
    VectorMemory {
        op: VecMem,
        dst: Reg,
        offset: Reg,
        ptr: Reg,
        elem: u8,
        n: u16,
        loc: u32,
    },
    /// An atomic operation; `fail_order` is the order of a compare-exchange that did not store.
    Atomic {
        op: AtomicOp,
        bits: u8,
        order: MemOrder,
        fail_order: MemOrder,
        scope: Scope,
        dst: Reg,
        ptr: Reg,
        value: Reg,
        comparator: Reg,
        loc: u32,
    },
    /// A collective function: every work-item of the group contributes `src` (`bits` wide) and,
    /// once all have arrived, receives its result in `dst`. For a broadcast, `id` holds
    /// `id_n` local id components.
    Collective {
        op: CollectiveOp,
        bits: u8,
        dst: Reg,
        src: Reg,
        id: Reg,
        id_n: u8,
        loc: u32,
        /// Among the work-items of one sub-group (else of the work-group).
        sub_group: bool,
    },
    /// A work-group (or, with `sub_group`, sub-group) barrier whose memory fence covers `fence`
    /// at `scope`.
    Barrier {
        fence: Fence,
        scope: Scope,
        loc: u32,
        sub_group: bool,
    },
    /// A memory fence without execution barrier (`atomic_work_item_fence`, `mem_fence`).
    MemoryFence {
        fence: Fence,
        order: MemOrder,
        scope: Scope,
        loc: u32,
    },
    /// `to_global`/`to_local`/`to_private`: `src` if it points into address space `space`
    /// (a [`value`] space number), NULL otherwise.
    CastToSpace {
        dst: Reg,
        src: Reg,
        space: u8,
    },
    /// `get_fence`: the fence flags (SPIR-V semantics storage bits) of the space `src` points to.
    PointerFence {
        dst: Reg,
        src: Reg,
    },
    /// A work-group copy (`async_work_group_copy`, `async_work_group_strided_copy`): a collective,
    /// made once for the whole group with the arguments every work-item must pass alike.
    AsyncCopy {
        dst: Reg,
        dst_ptr: Reg,
        src_ptr: Reg,
        count: Reg,
        stride: Reg,
        elem: u32,
        to_local: bool,
        event: Reg,
        loc: u32,
    },
    /// `wait_group_events`: each of the `num` events in the private array at `list` is complete
    /// at the barrier that follows (the lowering emits one right after).
    WaitEvents {
        num: Reg,
        list: Reg,
        loc: u32,
    },
    /// `read_image*`: the texel at `coord` (`coord_n` lanes, float or int) of the image in
    /// `image`, as four lanes of `texel`. With `sampled`, `image` holds a sampled image: the
    /// image, then the sampler.
    ImageRead {
        dst: Reg,
        image: Reg,
        coord: Reg,
        coord_n: u8,
        float_coord: bool,
        sampled: bool,
        texel: TexelType,
        loc: u32,
    },
    /// `write_image*`: stores the four lanes of `src` at integer `coord`.
    ImageWrite {
        image: Reg,
        coord: Reg,
        coord_n: u8,
        src: Reg,
        texel: TexelType,
        loc: u32,
    },
    /// `get_image_*`: `n` lanes of `bits`-wide results.
    ImageQuery {
        dst: Reg,
        image: Reg,
        query: ImageQuery,
        n: u8,
        bits: u8,
    },
    Printf {
        dst: Reg,
        fmt: Reg,
        first_arg: u32,
        num_args: u16,
    },
    Branch {
        target: u32,
    },
    BranchIf {
        cond: Reg,
        then: u32,
        otherwise: u32,
    },
    /// Jumps through the table at [`Function::switch_tables`]`[table]`.
    Switch {
        value: Reg,
        bits: u8,
        table: u32,
    },
    Call {
        func: u32,
        dst: Reg,
        first_arg: u32,
        num_args: u16,
    },
    Return {
        src: Reg,
        n: u16,
    },
    Unreachable {
        loc: u32,
    },
    /// A kernel assertion (`__clrace_assert(cond, msg)` from `clrace.h`, or GPUVerify's
    /// `__assert(cond)`): every active lane whose `cond` (of `bits` bits) is 0 fails it, a
    /// finding; the run goes on. `msg` points at the message (a NUL-terminated string in
    /// constant memory) when `has_msg`.
    Assert {
        cond: Reg,
        bits: u8,
        has_msg: bool,
        msg: Reg,
        loc: u32,
    },
    /// An instruction we lowered but cannot execute; running it is an error naming it.
    Unsupported {
        what: u32,
        loc: u32,
    },
}

/// What [`Inst::ImageQuery`] asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ImageQuery {
    /// Width, height, depth (by dimension), then the array size for arrays.
    Size,
    /// The channel data type, numbered as SPIR-V does (`CL_SNORM_INT8` is 0).
    Format,
    /// The channel order, numbered as SPIR-V does (`CL_R` is 0).
    Order,
}

/// Element kind for [`Inst::Math`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum MathKind {
    /// Half precision, computed in single precision and rounded back.
    F16,
    F32,
    F64,
    Int(u8),
}

/// Whole-vector geometric functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Geo {
    Dot,
    Length,
    Distance,
    Normalize,
    Cross,
    FastLength,
    FastDistance,
    FastNormalize,
}

/// Vector memory builtins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum VecMem {
    Load,
    Store,
    LoadHalf { aligned: bool },
    StoreHalf { aligned: bool, round: Option<HalfRound>, f64: bool },
}

/// The byte layout of a value in memory: its scalar leaves in slot order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layout {
    pub size: u32,
    pub leaves: Vec<Leaf>,
}

/// One scalar of a [`Layout`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Leaf {
    pub offset: u32,
    pub size: u8,
}

/// One index of an [`Inst::PtrOffset`]: register `reg`, `bits` wide (signed), times `stride`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Index {
    pub reg: Reg,
    pub bits: u8,
    pub stride: i64,
}

/// A printf or call argument: the register and how many slots it spans, with the arg's kind.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Arg {
    pub reg: Reg,
    pub n: u16,
    pub kind: ArgKind,
}

/// How a printf argument is to be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ArgKind {
    Int(u8),
    Float(u8),
    Pointer,
    Other,
}

/// A switch table: (case value, target) pairs and the default target.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SwitchTable {
    pub cases: Vec<(u64, u32)>,
    pub default: u32,
}

/// A lowered function.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Function {
    pub name: String,
    pub code: Vec<Inst>,
    /// Where the work-items that part at each `BranchIf` or `Switch` meet again: the pc of its
    /// immediate post-dominator, `u32::MAX` for the function's exit (and for other instructions).
    pub joins: Vec<u32>,
    /// The source location of each instruction of `code` (`u32::MAX` where none), for messages.
    pub locs: Vec<u32>,
    /// Initial register values: constants at their slots, zero elsewhere.
    pub template: Vec<u64>,
    /// Slots of the parameters, in order, with their slot counts.
    pub params: Vec<(Reg, u16)>,
    pub indices: Vec<Index>,
    /// Lane sources for [`Inst::Shuffle`]: registers (a zero register for undefined lanes).
    pub lanes: Vec<Reg>,
    pub args: Vec<Arg>,
    pub switch_tables: Vec<SwitchTable>,
    /// The registers of `OpUndef` values (first slot, slots): never written, and uninitialised
    /// to the uninitialised-value check.
    pub undefined: Vec<(Reg, u16)>,
}

impl Function {
    /// Calls `f` with each instruction control may go to after the one at `pc` (targets past
    /// the end left out), without allocating.
    pub fn for_each_successor(&self, pc: usize, mut f: impl FnMut(usize)) {
        let n = self.code.len();
        let mut go = |t: usize| {
            if t < n {
                f(t)
            }
        };
        match self.code[pc] {
            Inst::Branch { target } => go(target as usize),
            Inst::BranchIf { then, otherwise, .. } => {
                go(then as usize);
                go(otherwise as usize);
            }
            Inst::Switch { table, .. } => {
                if let Some(t) = self.switch_tables.get(table as usize) {
                    t.cases.iter().for_each(|c| go(c.1 as usize));
                    go(t.default as usize);
                }
            }
            Inst::Return { .. } => {}
            _ => go(pc + 1),
        }
    }
}

/// Where an instruction came from in the source.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SourceLoc {
    pub file: String,
    pub line: u32,
    pub column: u32,
}

/// How a kernel parameter is fed from the launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ParamKind {
    /// A global or constant buffer pointer.
    Buffer,
    /// A `__local` pointer sized by the host.
    Local,
    /// A by-value argument in `slots` registers with this layout.
    Value { layout: u32 },
    /// A by-value aggregate passed by pointer (`ByVal`): copied into private memory.
    ByValPointer { layout: u32 },
    /// An image (`image2d_t`, ...): its register holds the image's address.
    Image,
    /// A `sampler_t`: its register holds the `CLK_*` bit field.
    Sampler,
    /// An argument kind the emulator cannot feed yet (pipes, queues, events).
    Unsupported(OpaqueKind),
}

/// A kind of kernel argument the emulator cannot feed yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum OpaqueKind {
    Event,
    /// A pipe, device queue or reservation id.
    Pipe,
    Opaque,
}

impl std::fmt::Display for OpaqueKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            OpaqueKind::Event => "event",
            OpaqueKind::Pipe => "pipe",
            OpaqueKind::Opaque => "opaque",
        })
    }
}

/// A lowered kernel.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Kernel {
    pub info: KernelInfo,
    /// The function to call; its parameters are the kernel arguments.
    pub function: u32,
    pub params: Vec<ParamKind>,
}

/// A module-scope variable with storage (program-scope `__constant`/`__global`, kernel `__local`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Variable {
    pub name: String,
    pub size: u32,
    pub align: u32,
    /// Initial bytes (empty = zero-filled).
    pub init: Vec<u8>,
    pub writable: bool,
}

/// A whole lowered program.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Module {
    pub functions: Vec<Function>,
    pub kernels: Vec<Kernel>,
    pub layouts: Vec<Layout>,
    /// Program-scope `__constant` and `__global` variables: global allocations 1..=len.
    /// Shared, as `locations`: a launch's specialised copy keeps them.
    pub globals: std::sync::Arc<Vec<Variable>>,
    /// Kernel-declared `__local` variables: local allocations 0..len of every work-group.
    pub locals: Vec<Variable>,
    /// Shared: a launch's specialised copy of the module ([`crate::opt::specialise`]) keeps them.
    pub locations: std::sync::Arc<Vec<SourceLoc>>,
    /// Names of what [`Inst::Unsupported`] stands for.
    pub unsupported: Vec<String>,
}

impl Module {
    /// Renders a location for messages: `file:line:column`, or `unknown location`.
    pub fn location(&self, loc: u32) -> String {
        match self.locations.get(loc as usize) {
            Some(l) if l.line > 0 => format!("{}:{}:{}", l.file, l.line, l.column),
            _ => "unknown location".to_string(),
        }
    }
}

/// An OpenCL.std instruction number as SPIR-V numbers it.
mod opencl_op {
    use rspirv::spirv::OpenclStd100Op;
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<S: Serializer>(op: &OpenclStd100Op, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(*op as u32)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<OpenclStd100Op, D::Error> {
        let number = u32::deserialize(d)?;
        OpenclStd100Op::from_u32(number).ok_or_else(|| D::Error::custom(format!("no OpenCL.std instruction {number}")))
    }
}

#[cfg(test)]
mod tests {
    /// The interpreter walks arrays of instructions: keep them within 40 bytes (the size set by
    /// `AsyncCopy`, eight registers and a flag); a larger variant should move operands to a side
    /// table like [`super::Function::indices`].
    #[test]
    fn instructions_stay_small() {
        assert!(size_of::<super::Inst>() <= 40, "{}", size_of::<super::Inst>());
    }
}
