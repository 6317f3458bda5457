//! Registers known to hold, in every lane of a group, an affine function of the lane's place in
//! the group ([`Affine`]): work-item ids, values and addresses computed from them by adding,
//! scaling and widening, and values the same in every lane. The interpreter keeps such a
//! register as its descriptor alone until an instruction needs the lanes (it is then
//! *materialised*: [`Affine::fill`]), so that `get_global_id(0)`, `i = y * w + x` and
//! `&a[i]` cost one descriptor each instead of a pass over the lanes, and a load or store
//! through such an address knows its pattern (one run, rows) without reading the lanes.
//!
//! This module owns the descriptors' arithmetic and each function's [`Plan`] (which
//! instructions may keep or read descriptors, worked out once per launch from the IR). It
//! cannot see the register file nor the lanes that run: the interpreter applies both
//! (`interp::affine`), and [`super::warp::Lanes`] holds one descriptor per register slot.

use crate::ir::value::{mask, sign_extend};
use crate::ir::{Builtin, Cmp, Function, Inst, IntOp, Module, operands};

/// What is known of a register slot's lanes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Held {
    /// Nothing: the register file holds the lanes' values.
    #[default]
    Unknown,
    /// The register file holds the values, and the descriptor describes them.
    Known,
    /// Only the descriptor holds the values: the register file's row is stale.
    Lazy,
    /// The register file holds the values, and they are not all the same (no descriptor
    /// describes them: a value loaded from memory, say). Saves looking again.
    Varying,
}

/// The fewest lanes a group keeps descriptors for: keeping one, and materialising it where an
/// instruction needs the lanes, costs about what a pass over some 64 to 100 lanes does (measured
/// on CLBlast's 64-lane GEMM: 13% more instructions with descriptors), and a smaller group
/// saves less than that.
pub const MIN_LANES: usize = 128;

/// The lanes of a group as a grid: lane `l` is column `l % width` of row `l / width` (a
/// work-group of `width` by `count / width` work-items, the x id the column and the y id the
/// row), `count` lanes in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grid {
    pub width: usize,
    pub count: usize,
}

impl Grid {
    /// The grid of a group of `size` work-items whose lanes are `count`: one exists where the
    /// group is one- or two-dimensional (its lanes are then rows of x ids, one per y id).
    /// Groups of fewer than [`MIN_LANES`] lanes have none.
    pub fn of(size: [u64; 3], count: usize) -> Option<Grid> {
        let width = size[0] as usize;
        (size[2] == 1 && width > 0 && count >= MIN_LANES && count as u64 == size[0] * size[1])
            .then_some(Grid { width, count })
    }

    /// How many rows hold lanes.
    pub fn rows(self) -> usize {
        self.count.div_ceil(self.width)
    }
}

/// The value of a register in lane `l` of a [`Grid`]: `(base + step * column + row_step * row)`
/// in wrapping 64-bit arithmetic, its low `bits` bits (registers hold integers zero-extended from
/// their width). A value the same in every lane has both steps 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Affine {
    pub held: Held,
    pub bits: u8,
    pub base: u64,
    pub step: u64,
    pub row_step: u64,
}

/// A descriptor's lanes read as numbers ([`Affine::exact`]): lane `(column, row)` holds
/// `base + step * column + row_step * row` exactly, from `low` to `high`.
struct Exact {
    base: i128,
    step: i64,
    row_step: i64,
    low: i128,
    high: i128,
}

impl Affine {
    /// A value `v` in every lane (held in the register file).
    pub fn uniform(v: u64) -> Affine {
        Affine { held: Held::Known, bits: 64, base: v, step: 0, row_step: 0 }
    }

    /// An id: `first` plus the column (`row` false) or the row (`row` true), kept lazily.
    pub fn id(first: u64, row: bool) -> Affine {
        let (step, row_step) = if row { (0, 1) } else { (1, 0) };
        Affine { held: Held::Lazy, bits: 64, base: first, step, row_step }
    }

    /// Whether every lane holds the same value.
    pub fn is_uniform(self) -> bool {
        self.step == 0 && self.row_step == 0
    }

    /// The value every lane holds, for a uniform descriptor.
    pub fn value(self) -> u64 {
        self.base & mask(self.bits)
    }

    /// The value in lane `l` of `grid`.
    #[cfg(test)]
    pub fn at(self, grid: Grid, l: usize) -> u64 {
        let (column, row) = ((l % grid.width) as u64, (l / grid.width) as u64);
        self.base.wrapping_add(self.step.wrapping_mul(column)).wrapping_add(self.row_step.wrapping_mul(row))
            & mask(self.bits)
    }

    /// Writes every lane's value into `out` (the lanes `0..grid.count` of a register row).
    pub fn fill(self, grid: Grid, out: &mut [u64]) {
        #[cfg(target_arch = "x86_64")]
        if super::cpu::wide() {
            // SAFETY: `cpu::wide` found AVX2 on this CPU.
            return unsafe { self.fill_v3(grid, out) };
        }
        self.fill_body(grid, out)
    }

    /// [`Affine::fill`] compiled with AVX2 (four lanes an instruction). Call only where
    /// [`super::cpu::wide`] holds.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn fill_v3(self, grid: Grid, out: &mut [u64]) {
        self.fill_body(grid, out)
    }

    #[inline(always)]
    fn fill_body(self, grid: Grid, out: &mut [u64]) {
        let m = mask(self.bits);
        let out = &mut out[..grid.count];
        // The first row from the columns' steps, then each row the one before plus the row's
        // step (loops over whole rows, which the compiler vectorises).
        let width = grid.width.min(grid.count);
        let mut v = self.base;
        if width == grid.count {
            // One row.
            for o in out {
                *o = v & m;
                v = v.wrapping_add(self.step);
            }
            return;
        }
        for o in &mut out[..width] {
            *o = v;
            v = v.wrapping_add(self.step);
        }
        let (first, rest) = out.split_at_mut(width);
        for (r, row) in rest.chunks_mut(width).enumerate() {
            let add = self.row_step.wrapping_mul(r as u64 + 1);
            for (o, &f) in row.iter_mut().zip(first.iter()) {
                *o = f.wrapping_add(add) & m;
            }
        }
        for o in first {
            *o &= m;
        }
    }

    /// The same lanes' values as a 64-bit descriptor whose sum needs no masking, reading each
    /// lane's `bits`-bit value as signed (sign-extended) or not, where that sum stays inside the
    /// width's range over the whole grid (a 32-bit index of a buffer, say, which never wraps);
    /// None where some lane's value wraps.
    pub fn widened(self, grid: Grid, signed: bool) -> Option<Affine> {
        if self.bits >= 64 {
            return Some(self);
        }
        let exact = self.exact(grid, signed)?;
        Some(Affine {
            held: self.held,
            bits: 64,
            // Under 64 bits, every reading fits 64 bits.
            base: exact.base as i64 as u64,
            step: exact.step as u64,
            row_step: exact.row_step as u64,
        })
    }

    /// The lanes' `bits`-bit values read as signed numbers or not, as an exact sum (base and
    /// steps as the numbers they stand for), with the least and the greatest value of any lane
    /// of `grid` (those of two of its corners); None where some lane's sum leaves the width's
    /// range (its value wraps: no sum gives it), or a step times the grid's side leaves 64 bits.
    #[inline]
    fn exact(self, grid: Grid, signed: bool) -> Option<Exact> {
        let bits = self.bits.clamp(1, 64);
        let base = reading(self.base, bits, signed);
        // One value in every lane never wraps: its reading is in range.
        if self.is_uniform() {
            return Some(Exact { base, step: 0, row_step: 0, low: base, high: base });
        }
        // The steps as the signed numbers they stand for (the smaller of the two readings).
        let (step, row_step) = (sign_extend(self.step, bits), sign_extend(self.row_step, bits));
        let (columns, rows) = ((grid.width.min(grid.count) - 1) as i64, (grid.rows() - 1) as i64);
        let (across, down) = (step.checked_mul(columns)? as i128, row_step.checked_mul(rows)? as i128);
        let low = base + across.min(0) + down.min(0);
        let high = base + across.max(0) + down.max(0);
        let (lo, hi) = if signed { (-(1i128 << (bits - 1)), 1i128 << (bits - 1)) } else { (0, 1i128 << bits) };
        (low >= lo && high < hi).then_some(Exact { base, step, row_step, low, high })
    }

    /// The least and the greatest of the lanes' values over `grid`, read as `bits`-bit numbers,
    /// signed or not (a descriptor narrower than `bits` holds zero-extended values); None where
    /// some lane's value wraps.
    fn bounds(self, grid: Grid, bits: u8, signed: bool) -> Option<(i128, i128)> {
        if self.bits > bits {
            return self.narrowed(bits).bounds(grid, bits, signed);
        }
        // Zero-extended from fewer bits, a value's sign bit is clear: it reads unsigned.
        let exact = self.exact(grid, signed && self.bits == bits)?;
        Some((exact.low, exact.high))
    }

    /// `self + other` (or `-`, `negate`) in `bits` bits: both at least that wide (the low bits
    /// of a sum depend only on the low bits of its terms).
    pub fn add(self, other: Affine, bits: u8, negate: bool) -> Affine {
        let o = |v: u64| if negate { v.wrapping_neg() } else { v };
        Affine {
            held: Held::Lazy,
            bits,
            base: self.base.wrapping_add(o(other.base)),
            step: self.step.wrapping_add(o(other.step)),
            row_step: self.row_step.wrapping_add(o(other.row_step)),
        }
    }

    /// `self * k` in `bits` bits (at most `self`'s width).
    pub fn scale(self, k: u64, bits: u8) -> Affine {
        Affine {
            held: Held::Lazy,
            bits,
            base: self.base.wrapping_mul(k),
            step: self.step.wrapping_mul(k),
            row_step: self.row_step.wrapping_mul(k),
        }
    }

    /// The same values in `bits` bits (fewer than or as many as `self`'s).
    pub fn narrowed(self, bits: u8) -> Affine {
        Affine { held: Held::Lazy, bits: bits.min(self.bits), ..self }
    }
}

/// The value every lane of `row` holds, if they all hold one (not empty). The first two lanes
/// and the last tell most rows that differ, before a pass over all of them without early exit
/// (which the compiler vectorises).
#[inline(always)]
pub fn uniform_row(row: &[u64]) -> Option<u64> {
    let v = *row.first()?;
    let mut all = row.get(1).is_none_or(|&x| x == v) && row[row.len() - 1] == v;
    if all {
        for &x in row {
            all &= x == v;
        }
    }
    all.then_some(v)
}

/// The low `bits` bits of `v` as the number they stand for, read as signed or not.
#[inline(always)]
fn reading(v: u64, bits: u8, signed: bool) -> i128 {
    if signed { sign_extend(v, bits) as i128 } else { (v & mask(bits)) as i128 }
}

/// An integer operation a descriptor follows: `a op b` in `bits` bits, where both operands'
/// descriptors are at least that wide. None for the others.
pub fn int_op(op: IntOp, bits: u8, a: Affine, b: Affine) -> Option<Affine> {
    if a.bits < bits || b.bits < bits || !matches!(bits, 8 | 16 | 32 | 64) {
        return None;
    }
    match op {
        IntOp::Add => Some(a.add(b, bits, false)),
        IntOp::Sub => Some(a.add(b, bits, true)),
        IntOp::Mul if b.is_uniform() => Some(a.scale(b.value(), bits)),
        IntOp::Mul if a.is_uniform() => Some(b.scale(a.value(), bits)),
        // Shift counts modulo the width, as the interpreter takes them.
        IntOp::Shl if b.is_uniform() && (bits == 32 || bits == 64) => {
            Some(a.scale(1u64 << (b.value() & (bits as u64 - 1)), bits))
        }
        _ => None,
    }
}

/// Integer compare `cmp` in `bits` bits of every lane of `a` with the same lane of `b`, where
/// one of them holds one value in every lane and the other's lanes all lie on one side of it
/// (a border test `x == 0` or `x < w - 1` of a group away from the border): the result, the same
/// in every lane. None where lanes may differ, for two varying operands, or for a float compare.
pub fn compare_lanes(cmp: Cmp, bits: u8, a: Affine, b: Affine, grid: Grid) -> Option<bool> {
    if !matches!(bits, 8 | 16 | 32 | 64) {
        return None;
    }
    // `x op v`, with the uniform operand on the right (`v < x` is `x > v`).
    let (x, v, op) = match (a.is_uniform(), b.is_uniform()) {
        (false, true) => (a, b.value(), cmp),
        (true, false) => {
            let mirrored = match cmp {
                Cmp::ULt => Cmp::UGt,
                Cmp::ULe => Cmp::UGe,
                Cmp::UGt => Cmp::ULt,
                Cmp::UGe => Cmp::ULe,
                Cmp::SLt => Cmp::SGt,
                Cmp::SLe => Cmp::SGe,
                Cmp::SGt => Cmp::SLt,
                Cmp::SGe => Cmp::SLe,
                other => other,
            };
            (b, a.value(), mirrored)
        }
        _ => return None,
    };
    let (signed, equality) = match op {
        Cmp::Eq | Cmp::Ne => (false, true),
        Cmp::ULt | Cmp::ULe | Cmp::UGt | Cmp::UGe => (false, false),
        Cmp::SLt | Cmp::SLe | Cmp::SGt | Cmp::SGe => (true, false),
        _ => return None,
    };
    // Equality holds in no lane where the value lies outside the lanes' range, read either way
    // (the one that does not wrap).
    let ((lo, hi), v) = match x.bounds(grid, bits, signed) {
        Some(range) => (range, reading(v, bits, signed)),
        None if equality => (x.bounds(grid, bits, true)?, reading(v, bits, true)),
        None => return None,
    };
    // Every lane's result when all lanes lie below, at or below, above, or at or above `v`.
    let (below, at_most, above, at_least) = (hi < v, hi <= v, lo > v, lo >= v);
    match op {
        Cmp::Eq if below || above => Some(false),
        Cmp::Ne if below || above => Some(true),
        Cmp::ULt | Cmp::SLt if below || at_least => Some(below),
        Cmp::ULe | Cmp::SLe if at_most || above => Some(at_most),
        Cmp::UGt | Cmp::SGt if above || at_most => Some(above),
        Cmp::UGe | Cmp::SGe if at_least || below => Some(at_least),
        _ => None,
    }
}

/// Where an integer compare holds over the lanes of a one-row grid ([`split_lanes`]): lanes
/// `lo..hi` hold `inside`, the others `!inside`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split {
    pub lo: usize,
    pub hi: usize,
    pub inside: bool,
}

impl Split {
    /// Writes the compare's result in every lane of `out` (1 where it holds, 0 elsewhere).
    pub fn fill(self, out: &mut [u64]) {
        #[cfg(target_arch = "x86_64")]
        if super::cpu::wide() {
            // SAFETY: `cpu::wide` found AVX2 on this CPU.
            return unsafe { self.fill_v3(out) };
        }
        self.fill_body(out)
    }

    /// [`Split::fill`] compiled with AVX2. Call only where [`super::cpu::wide`] holds.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn fill_v3(self, out: &mut [u64]) {
        self.fill_body(out)
    }

    #[inline(always)]
    fn fill_body(self, out: &mut [u64]) {
        let (within, outside) = (self.inside as u64, !self.inside as u64);
        let (before, rest) = out.split_at_mut(self.lo.min(out.len()));
        let (range, after) = rest.split_at_mut((self.hi - self.lo).min(rest.len()));
        before.fill(outside);
        range.fill(within);
        after.fill(outside);
    }
}

/// Integer compare `cmp` in `bits` bits of every lane of `a` with the same lane of `b`, where one
/// of them holds one value in every lane and the other's lanes, in a group of one row, read as
/// the compare reads them (signed or not, in its width), step by the same amount from lane to
/// lane without wrapping (a reduction's `lid < s`, a `lid == 0`): the compare then holds in one
/// range of lanes, or outside one (`!=`), worked out from the lanes' first reading and step. None
/// for other operands and grids, and for a float compare.
pub fn split_lanes(cmp: Cmp, bits: u8, a: Affine, b: Affine, grid: Grid) -> Option<Split> {
    if grid.width < grid.count || !matches!(bits, 8 | 16 | 32 | 64) {
        return None;
    }
    let (x, on_left) = match (a.is_uniform(), b.is_uniform()) {
        (false, true) => (a, true),
        (true, false) => (b, false),
        _ => return None,
    };
    let value = if on_left { b.value() } else { a.value() };
    let n = grid.count;
    // The lanes' readings `first + step * l` as the compare reads them (exact: none wraps), and
    // the other operand's reading.
    let readings = |signed: bool| {
        let x = if x.bits > bits { x.narrowed(bits) } else { x };
        // Zero-extended from fewer bits, a value's sign bit is clear: it reads unsigned.
        let exact = x.exact(grid, signed && x.bits == bits)?;
        Some((exact.base, exact.step as i128, reading(value, bits, signed)))
    };
    // The compare as `lane OP value`: the operands' order turned round where the lane is right.
    let (order, signed) = match cmp {
        Cmp::ULt | Cmp::SLt => (if on_left { Order::Lt } else { Order::Gt }, cmp == Cmp::SLt),
        Cmp::ULe | Cmp::SLe => (if on_left { Order::Le } else { Order::Ge }, cmp == Cmp::SLe),
        Cmp::UGt | Cmp::SGt => (if on_left { Order::Gt } else { Order::Lt }, cmp == Cmp::SGt),
        Cmp::UGe | Cmp::SGe => (if on_left { Order::Ge } else { Order::Le }, cmp == Cmp::SGe),
        // Equality is the same whichever way it reads: whichever does not wrap.
        Cmp::Eq | Cmp::Ne => {
            let (first, step, w) = readings(false).or_else(|| readings(true))?;
            let at = match step {
                0 => (first == w).then_some((0, n)),
                _ => {
                    let l = (w - first) / step;
                    ((w - first) % step == 0 && (0..n as i128).contains(&l)).then_some((l as usize, l as usize + 1))
                }
            };
            let (lo, hi) = at.unwrap_or((0, 0));
            return Some(Split { lo, hi, inside: cmp == Cmp::Eq });
        }
        _ => return None,
    };
    let (first, step, w) = readings(signed)?;
    // `lane < t` holds in a prefix (rising lanes) or a suffix (falling ones): its lanes.
    let below = |t: i128| -> (usize, usize) {
        let clamp = |k: i128| k.clamp(0, n as i128) as usize;
        match step.cmp(&0) {
            std::cmp::Ordering::Equal => (0, if first < t { n } else { 0 }),
            // first + step * l < t  <=>  l < ceil((t - first) / step)
            std::cmp::Ordering::Greater => (0, clamp(-(first - t).div_euclid(step))),
            // first - |step| * l < t  <=>  l > (first - t) / |step|
            std::cmp::Ordering::Less => (clamp((first - t).div_euclid(-step) + 1), n),
        }
    };
    // The other lanes of one such range: the range on the other side of it.
    let rest = |(lo, hi): (usize, usize)| if lo == 0 { (hi, n) } else { (0, lo) };
    let (lo, hi) = match order {
        Order::Lt => below(w),
        Order::Le => below(w + 1),
        Order::Ge => rest(below(w)),
        Order::Gt => rest(below(w + 1)),
    };
    // As one range where it holds: every lane is `0..n`, none `0..0`.
    let (lo, hi) = if lo >= hi { (0, 0) } else { (lo, hi) };
    Some(Split { lo, hi, inside: true })
}

/// An order compare with the varying operand on the left (see [`split_lanes`]).
#[derive(Clone, Copy)]
enum Order {
    Lt,
    Le,
    Gt,
    Ge,
}

/// Whether the interpreter may keep instruction `inst`'s result as a descriptor, or run it
/// from its operands' descriptors (a load or store through an address it knows).
pub fn follows(inst: &Inst) -> bool {
    match *inst {
        Inst::Builtin { which, .. } => matches!(which, Builtin::GlobalId | Builtin::LocalId),
        Inst::IntBin { n, .. } => n == 1,
        Inst::Convert { conv, n, .. } => n == 1 && matches!(conv, crate::ir::Conv::UInt | crate::ir::Conv::SInt),
        Inst::PtrOffset { .. } => true,
        Inst::Mov { n, .. } => n == 1,
        // Integer compares only: a float compare of one value in every lane is rare, and
        // following it would make every float operation on its operands settle first.
        Inst::Compare { cmp, n, .. } => {
            n == 1
                && matches!(
                    cmp,
                    Cmp::Eq
                        | Cmp::Ne
                        | Cmp::ULt
                        | Cmp::ULe
                        | Cmp::UGt
                        | Cmp::UGe
                        | Cmp::SLt
                        | Cmp::SLe
                        | Cmp::SGt
                        | Cmp::SGe
                )
        }
        Inst::BranchIf { .. } => true,
        Inst::LoadScalar { .. } | Inst::StoreScalar { .. } => true,
        // An array-index check whose index every lane holds inside the array passes without
        // reading the lanes (nor the element's address, which only a finding names).
        Inst::IndexCheck { .. } => true,
        _ => false,
    }
}

/// Whether every lane of `a` over `grid`, read as a signed `bits`-bit index (as the interpreter's
/// array-index check reads it: a negative index is outside), lies in `0..extent`. False where
/// some lane's reading wraps, or the width is not an integer's.
pub fn indices_inside(a: Affine, grid: Grid, bits: u8, extent: u64) -> bool {
    matches!(bits, 8 | 16 | 32 | 64)
        && a.bounds(grid, bits, true).is_some_and(|(low, high)| low >= 0 && high < extent as i128)
}

/// A register slot an instruction reads or writes that may hold a descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Touch {
    pub slot: u32,
    pub write: bool,
}

/// For one function: which slots of each instruction may hold descriptors (the results of
/// instructions that [`follows`] accepts, and their operands, which may be found uniform), and
/// which instructions it accepts. An instruction touching none needs nothing done before it
/// runs; one touching some materialises what it reads and forgets what it writes, unless the
/// interpreter ran it from descriptors.
#[derive(Debug, Default)]
pub struct Plan {
    /// Per instruction: its touches, `touches[start..end]` (reads first, then writes).
    pub at: Vec<(u32, u32)>,
    pub touches: Vec<Touch>,
    pub follows: Vec<bool>,
}

impl Plan {
    /// The plan of `func` (of `module`).
    pub fn new(module: &Module, func: &Function) -> Plan {
        let slots = func.template.len();
        let mut held = vec![false; slots];
        // The slots `r..r + n` inside the frame.
        let range = |r: u32, n: u64| r as usize..(r as u64 + n).min(slots as u64) as usize;
        let mut mark = |r: u32, n: u64| {
            if let Some(held) = held.get_mut(range(r, n)) {
                held.fill(true);
            }
        };
        let follows: Vec<bool> = func.code.iter().map(follows).collect();
        // Parameters and a call's arguments are described by `Lanes::pass`: forgotten when
        // an instruction writes them.
        for &(p, n) in &func.params {
            mark(p, n as u64);
        }
        for (inst, &f) in func.code.iter().zip(&follows) {
            if f || matches!(inst, Inst::Call { .. }) {
                operands::for_each(module, func, inst, |r, n, u| {
                    // A store's value is not read through a descriptor; the rest may be.
                    if !(matches!(inst, Inst::StoreScalar { src, .. } if *src == r) && u == operands::Use::Read) {
                        mark(r, n)
                    }
                });
            }
            // An index check reads its index through its table entry, which `for_each` leaves
            // out: held too, so that what is known of it is forgotten when it is written.
            if let Inst::IndexCheck { index, .. } = *inst
                && let Some(i) = func.indices.get(index as usize)
            {
                mark(i.reg, 1);
            }
        }
        let mut plan = Plan { at: Vec::with_capacity(func.code.len()), touches: Vec::new(), follows };
        let mut writes = Vec::new();
        for inst in &func.code {
            let start = plan.touches.len() as u32;
            writes.clear();
            let mut touch = |r: u32, n: u64, u: operands::Use| {
                for s in range(r, n).filter(|&s| held[s]) {
                    let touch = Touch { slot: s as u32, write: u == operands::Use::Write };
                    if touch.write { writes.push(touch) } else { plan.touches.push(touch) }
                }
            };
            operands::for_each(module, func, inst, &mut touch);
            // An index check reads its index through its table entry, which `for_each` leaves out.
            if let Inst::IndexCheck { index, .. } = *inst
                && let Some(i) = func.indices.get(index as usize)
            {
                touch(i.reg, 1, operands::Use::Read);
            }
            plan.touches.extend_from_slice(&writes);
            plan.at.push((start, plan.touches.len() as u32));
        }
        plan
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lanes(a: Affine, grid: Grid) -> Vec<u64> {
        let mut out = vec![0; grid.count];
        a.fill(grid, &mut out);
        out
    }

    /// `fill` and `at` agree, lane by lane, for one- and two-dimensional grids.
    #[test]
    fn fill_gives_each_lane_its_value() {
        let a = Affine { held: Held::Lazy, bits: 32, base: 0xffff_fff0, step: 4, row_step: 4096 };
        for grid in [Grid { width: 16, count: 256 }, Grid { width: 64, count: 64 }, Grid { width: 5, count: 15 }] {
            let out = lanes(a, grid);
            for (l, &v) in out.iter().enumerate() {
                assert_eq!(v, a.at(grid, l));
                let exact =
                    (0xffff_fff0u64 + 4 * (l % grid.width) as u64 + 4096 * (l / grid.width) as u64) & 0xffff_ffff;
                assert_eq!(v, exact);
            }
        }
    }

    /// Widening keeps every lane's value where no lane wraps, and refuses where one does.
    #[test]
    fn widening_keeps_the_lanes_or_refuses() {
        let grid = Grid { width: 16, count: 256 };
        // -8 + x: signed it spans -8..8, unsigned it wraps.
        let a = Affine { held: Held::Lazy, bits: 32, base: (-8i64) as u64 & 0xffff_ffff, step: 1, row_step: 0 };
        let w = a.widened(grid, true).expect("no signed wrap");
        for l in 0..grid.count {
            assert_eq!(w.at(grid, l) as i64, ((a.at(grid, l) as u32) as i32) as i64);
        }
        assert_eq!(a.widened(grid, false), None);
        // A row step going down past zero wraps unsigned too.
        let down = Affine { base: 100, row_step: (-10i64) as u64, ..a };
        assert_eq!(down.widened(grid, false), None);
        let w = down.widened(grid, true).expect("fits signed");
        for l in 0..grid.count {
            assert_eq!(w.at(grid, l) as i64, ((down.at(grid, l) as u32) as i32) as i64);
        }
        // Near the top of the unsigned range: wraps past 2^32 in the last lanes.
        let top = Affine { held: Held::Lazy, bits: 32, base: 0xffff_ff00, step: 1, row_step: 17 };
        // Its last lane, 0xffff_ff00 + 15 + 17 * 15, is past 2^32 - 1; one less per row fits exactly.
        let edge = Affine { row_step: 16, ..top };
        assert!(edge.widened(grid, false).is_some());
        assert_eq!(top.widened(grid, false), None);
        let fits = Affine { base: 0xffff_0000, ..top };
        let w = fits.widened(grid, false).expect("fits unsigned");
        for l in 0..grid.count {
            assert_eq!(w.at(grid, l), fits.at(grid, l));
        }
    }

    /// A compare decided for the whole grid gives what every lane gives; lanes on both sides of
    /// the value, or wrapping, are left to the lanes.
    /// `f` of every integer compare, in 16, 32 and 64 bits, of each descriptor with each value
    /// the same in every lane, in both operand orders.
    fn each_compare(descriptors: &[Affine], values: &[u64], mut f: impl FnMut(Cmp, u8, Affine, Affine)) {
        let cmps = [Cmp::Eq, Cmp::Ne, Cmp::ULt, Cmp::ULe, Cmp::UGt, Cmp::UGe, Cmp::SLt, Cmp::SLe, Cmp::SGt, Cmp::SGe];
        for &a in descriptors {
            for &v in values {
                let u = Affine::uniform(v);
                for cmp in cmps {
                    for bits in [16u8, 32, 64] {
                        f(cmp, bits, a, u);
                        f(cmp, bits, u, a);
                    }
                }
            }
        }
    }

    #[test]
    fn compares_decided_for_the_grid_agree_with_every_lane() {
        use crate::exec::ops::compare;
        let grid = Grid { width: 16, count: 256 };
        let descriptors = [
            // An x id from 16 and a y id from 32 (a group away from the border), 32 bits.
            Affine { bits: 32, ..Affine::id(16, false) },
            Affine { bits: 32, ..Affine::id(32, true) },
            // x - 20 across zero: signed it spans -4..11, unsigned it wraps.
            Affine { held: Held::Lazy, bits: 32, base: (-4i64) as u64 & 0xffff_ffff, step: 1, row_step: 0 },
            // A row index y * 1024 + x, 64 bits, and the same narrowed to 16 bits (wraps).
            Affine { held: Held::Lazy, bits: 64, base: 5000, step: 1, row_step: 1024 },
            Affine { held: Held::Lazy, bits: 16, base: 5000, step: 1, row_step: 1024 },
            // Stepping down by rows: the greatest value is the first lane's.
            Affine { held: Held::Lazy, bits: 32, base: 300, step: 2, row_step: (-17i64) as u64 },
        ];
        let values = [0u64, 1, 3, 15, 16, 31, 32, 47, 48, 299, 300, 330, 5000, 20390, 0xffff_fffc, u64::MAX, 1 << 40];
        let mut decided = 0;
        each_compare(&descriptors, &values, |cmp, bits, x, y| {
            let Some(holds) = compare_lanes(cmp, bits, x, y, grid) else { return };
            decided += 1;
            for l in 0..grid.count {
                assert_eq!(
                    compare(cmp, bits, x.at(grid, l), y.at(grid, l)),
                    holds,
                    "{cmp:?} {bits} {x:?} {y:?} lane {l}"
                );
            }
        });
        // Most of them decide (the border tests of a group away from the border among them).
        assert!(decided > 500, "{decided} decided");
        let x = Affine { bits: 32, ..Affine::id(16, false) };
        assert_eq!(compare_lanes(Cmp::Eq, 32, x, Affine::uniform(0), grid), Some(false));
        assert_eq!(compare_lanes(Cmp::SLt, 32, Affine::uniform(0), x, grid), Some(true));
        // A value some lanes hold, lanes on both sides, two varying operands: not decided.
        assert_eq!(compare_lanes(Cmp::Eq, 32, x, Affine::uniform(20), grid), None);
        assert_eq!(compare_lanes(Cmp::ULt, 32, x, Affine::uniform(20), grid), None);
        assert_eq!(compare_lanes(Cmp::Eq, 32, x, Affine::id(0, true), grid), None);
        // Unsigned, x - 20 wraps: only equality, read signed, is decided.
        let wraps = descriptors[2];
        assert_eq!(compare_lanes(Cmp::ULt, 32, wraps, Affine::uniform(100), grid), None);
        assert_eq!(compare_lanes(Cmp::Eq, 32, wraps, Affine::uniform(100), grid), Some(false));
        assert_eq!(compare_lanes(Cmp::SLt, 32, wraps, Affine::uniform(100), grid), Some(true));
    }

    /// Every split compare, lane by lane: lanes `lo..hi` hold `inside`, the others do not.
    #[test]
    fn split_compares_agree_with_every_lane() {
        use crate::exec::ops::compare;
        let grid = Grid { width: 256, count: 256 };
        let descriptors = [
            // A local id, a global id from 4096, 64 and 32 bits.
            Affine::id(0, false),
            Affine { bits: 32, ..Affine::id(4096, false) },
            // lid - 100 across zero: signed it spans -100..155, unsigned it wraps.
            Affine { held: Held::Lazy, bits: 32, base: (-100i64) as u64 & 0xffff_ffff, step: 1, row_step: 0 },
            // Stepping down by 3, and by 2 in 16 bits from near the top (wraps unsigned at 65536).
            Affine { held: Held::Lazy, bits: 64, base: 1000, step: (-3i64) as u64, row_step: 0 },
            Affine { held: Held::Lazy, bits: 16, base: 65_400, step: 2, row_step: 0 },
            // A 64-bit value compared in 32 bits.
            Affine { held: Held::Lazy, bits: 64, base: (1 << 32) + 7, step: 5, row_step: 0 },
        ];
        let values =
            [0u64, 1, 2, 64, 127, 128, 255, 256, 300, 232, 233, 1000, 4096, 4200, 65_500, 0xffff_fff0, u64::MAX];
        let mut split = 0;
        each_compare(&descriptors, &values, |cmp, bits, x, y| {
            let Some(Split { lo, hi, inside }) = split_lanes(cmp, bits, x, y, grid) else { return };
            split += 1;
            for l in 0..grid.count {
                let want = if (lo..hi).contains(&l) { inside } else { !inside };
                let got = compare(cmp, bits, x.at(grid, l), y.at(grid, l));
                assert_eq!(got, want, "{cmp:?} {bits} {x:?} {y:?} lane {l}: {lo}..{hi} {inside}");
            }
        });
        assert!(split > 800, "{split} split");
        // A reduction's `lid < s` and `lid == 0`, and the wrapping unsigned reading refused.
        let lid = Affine::id(0, false);
        let s = Affine::uniform(128);
        assert_eq!(split_lanes(Cmp::ULt, 64, lid, s, grid), Some(Split { lo: 0, hi: 128, inside: true }));
        assert_eq!(split_lanes(Cmp::UGt, 64, s, lid, grid), Some(Split { lo: 0, hi: 128, inside: true }));
        assert_eq!(split_lanes(Cmp::Eq, 64, lid, Affine::uniform(0), grid), Some(Split { lo: 0, hi: 1, inside: true }));
        assert_eq!(
            split_lanes(Cmp::Ne, 64, lid, Affine::uniform(9), grid),
            Some(Split { lo: 9, hi: 10, inside: false })
        );
        assert_eq!(split_lanes(Cmp::ULt, 32, descriptors[2], s, grid), None);
        // Two rows, two varying operands: not split.
        assert_eq!(split_lanes(Cmp::ULt, 64, lid, s, Grid { width: 16, count: 256 }), None);
        assert_eq!(split_lanes(Cmp::ULt, 64, lid, lid, grid), None);
    }

    /// Sums, differences, products and shifts follow the lanes' own arithmetic.
    #[test]
    fn operations_follow_the_lanes() {
        let grid = Grid { width: 8, count: 32 };
        let x = Affine::id(1000, false);
        let y = Affine::id(7, true);
        let w = Affine::uniform(0x1_0000_0003);
        for (op, bits) in [(IntOp::Add, 32), (IntOp::Sub, 32), (IntOp::Mul, 32), (IntOp::Shl, 64), (IntOp::Mul, 16)] {
            let (a, b) = if op == IntOp::Mul || op == IntOp::Shl { (y, w) } else { (x, y) };
            let c = int_op(op, bits, a, b).expect("followed");
            for l in 0..grid.count {
                let (va, vb) = (a.at(grid, l), b.at(grid, l));
                let m = mask(bits);
                let expected = match op {
                    IntOp::Add => va.wrapping_add(vb) & m,
                    IntOp::Sub => va.wrapping_sub(vb) & m,
                    IntOp::Mul => va.wrapping_mul(vb) & m,
                    _ => (va << (vb & (bits as u64 - 1))) & m,
                };
                assert_eq!(c.at(grid, l), expected, "{op:?} {bits} lane {l}");
            }
        }
        // Two varying factors are not affine; a narrower operand is not followed.
        assert_eq!(int_op(IntOp::Mul, 32, x, y), None);
        assert_eq!(int_op(IntOp::Add, 64, x.narrowed(32), y), None);
    }
}
