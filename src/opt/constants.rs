//! Constant folding, for the functions whose loops were unrolled: which single-slot registers
//! hold a known integer at each instruction (a forward data flow over the blocks, from the
//! constant registers through `Mov`, integer arithmetic, integer conversions and comparisons),
//! and what that makes of the code:
//!
//! - an integer instruction whose result is known becomes a `Mov` from a constant register, and
//!   one whose known operand leaves the other unchanged (`x + 0`, `x * 1`, `x / 1`, `x & ~0`...)
//!   a `Mov` from the other;
//! - a conditional branch or switch on a known value becomes a branch to where it goes (the data
//!   flow follows only that way out of the block, so what is known on the way not taken does not
//!   blur what is known after the join);
//! - a call's argument of one slot whose value is known is read from a constant register (so that
//!   the launch's specialisation, [`super::specialise()`], sees which arguments are constants);
//! - a `PtrOffset` index whose value is known joins the constant offset (as the interpreter
//!   computes it: sign-extended, times the stride, wrapping);
//! - an array-index check of a known index goes when the index is inside the array, and reads a
//!   constant register otherwise, so that its finding is still reported;
//! - instructions that compute values only (`Mov`, integer arithmetic without division,
//!   comparisons, integer conversions, `PtrOffset`) whose results nothing reads go.
//!
//! Each keeps what every work-item computes, stores and reports: a folded value is the value the
//! instruction computed, from constants, so its shadow for the check of uninitialised values is
//! "defined" either way; a removed computation reported nothing (that check reports uses as an
//! address, a branch condition or a value stored to global memory, none of which these are).
//!
//! What it cannot see: memory, floats, calls' results, and the other passes. A register is
//! known at a block's start only when it is known, with the same value, at the end of every
//! predecessor; a function's parameters and registers at entry are unknown.

use std::collections::{HashMap, VecDeque};

use super::base::{
    constant_registers, counts, fold_compare, fold_convert, fold_int, for_each_successor, only_computes,
    overwritten_after, reachable,
};
use crate::ir::operands::{self, Use};
use crate::ir::{self, Arg, Function, Index, Inst, IntOp, Reg, value};

/// The most (tracked registers × blocks) the data flow keeps (16 bytes each); a larger function
/// is not folded.
const MAX_STATE: usize = 1 << 20;

/// Folds what is known in `func`, marking removed instructions in `keep`; returns how many
/// instructions were folded or removed.
pub fn fold_constants(module: &ir::Module, func: &mut Function, keep: &mut [bool]) -> usize {
    let (_, writes) = counts(module, func, keep);
    let constant = constant_registers(func, &writes);
    let (tracked, states) = trackable(module, func, &constant);
    let blocks = Blocks::of(func);
    if (states as usize).saturating_mul(blocks.starts.len()) > MAX_STATE {
        return 0;
    }
    let flow = Flow { module, func, constant: &constant, tracked: &tracked, states: states as usize };
    let mut planned = Vec::new();
    for (k, state) in flow.entry_states(&blocks).into_iter().enumerate() {
        let Some(mut state) = state else { continue };
        let end = blocks.starts.get(k + 1).copied().unwrap_or(func.code.len());
        for (pc, inst) in func.code.iter().enumerate().take(end).skip(blocks.starts[k]) {
            if keep[pc]
                && let Some(change) = flow.change(&state, inst)
            {
                planned.push((pc, change));
            }
            flow.transfer(inst, &mut state);
        }
    }
    let mut constants: HashMap<u64, Reg> = HashMap::new();
    for (r, &c) in constant.iter().enumerate().rev() {
        if c {
            constants.insert(func.template[r], r as Reg);
        }
    }
    let folded = planned.len();
    for (pc, change) in planned {
        apply(func, pc, change, keep, &mut constants);
    }
    // The code the folded branches no longer reach goes (compaction would drop it), so that what
    // only it read is dead below.
    for (k, live) in keep.iter_mut().zip(reachable(func)) {
        *k &= live;
    }
    folded + remove_dead(module, func, keep)
}

/// Each register's place in a state (`UNTRACKED` for the others), and how many are tracked: the
/// registers only foldable instructions write, from constants and tracked registers (a few
/// rounds narrow the set; a register left in that cannot be known only costs room). Leaving a
/// register out only makes it unknown: the data flow stays sound for any choice.
fn trackable(module: &ir::Module, func: &Function, constant: &[bool]) -> (Vec<u32>, u32) {
    let slots = func.template.len();
    let mut maybe = vec![false; slots];
    for dst in func.code.iter().filter_map(foldable_dst) {
        if let Some(m) = maybe.get_mut(dst as usize) {
            *m = true;
        }
    }
    let mut clear = |r: Reg, n: u64| maybe.iter_mut().skip(r as usize).take(n as usize).for_each(|m| *m = false);
    for inst in func.code.iter().filter(|i| foldable_dst(i).is_none()) {
        operands::for_each(module, func, inst, |r, n, u| {
            if u == Use::Write {
                clear(r, n);
            }
        });
    }
    for &(p, n) in &func.params {
        clear(p, n as u64);
    }
    for _ in 0..8 {
        let mut changed = false;
        for inst in &func.code {
            let Some(dst) = foldable_dst(inst).filter(|&d| maybe.get(d as usize) == Some(&true)) else { continue };
            let mut known = true;
            operands::for_each(module, func, inst, |r, n, u| {
                if u == Use::Read {
                    known &=
                        n == 1 && (constant.get(r as usize) == Some(&true) || maybe.get(r as usize) == Some(&true));
                }
            });
            if !known {
                maybe[dst as usize] = false;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let mut places = vec![UNTRACKED; slots];
    let mut states = 0;
    for (place, _) in places.iter_mut().zip(&maybe).filter(|(_, m)| **m) {
        *place = states;
        states += 1;
    }
    (places, states)
}

/// The register a foldable instruction writes.
fn foldable_dst(inst: &Inst) -> Option<Reg> {
    match *inst {
        Inst::Mov { dst, n: 1, .. }
        | Inst::IntBin { dst, n: 1, .. }
        | Inst::Convert { dst, n: 1, .. }
        | Inst::Compare { dst, n: 1, .. } => Some(dst),
        _ => None,
    }
}

/// The blocks of a function: their first instructions, in order, and their successors.
struct Blocks {
    starts: Vec<usize>,
    successors: Vec<Vec<usize>>,
    /// The block of each instruction.
    block_of: Vec<usize>,
}

impl Blocks {
    fn of(func: &Function) -> Blocks {
        let n = func.code.len();
        let targets = super::base::branch_targets(func);
        let mut start = vec![false; n];
        for pc in 0..n {
            start[pc] = pc == 0 || targets[pc] || super::base::ends_block(&func.code[pc - 1]);
        }
        let starts: Vec<usize> = (0..n).filter(|&pc| start[pc]).collect();
        let mut block_of = vec![0usize; n];
        for (k, &s) in starts.iter().enumerate() {
            let end = starts.get(k + 1).copied().unwrap_or(n);
            block_of[s..end].fill(k);
        }
        let successors = (0..starts.len())
            .map(|k| {
                let last = starts.get(k + 1).copied().unwrap_or(n) - 1;
                let mut out = Vec::new();
                for_each_successor(func, last, |s| out.push(block_of[s]));
                out
            })
            .collect();
        Blocks { starts, successors, block_of }
    }
}

/// What is known of the tracked registers: their value, where known.
type State = Vec<Option<u64>>;

/// A register no state holds.
const UNTRACKED: u32 = u32::MAX;

struct Flow<'a> {
    module: &'a ir::Module,
    func: &'a Function,
    constant: &'a [bool],
    /// Per register: its place in a [`State`], or [`UNTRACKED`].
    tracked: &'a [u32],
    /// The tracked registers.
    states: usize,
}

impl Flow<'_> {
    /// Where `r` is in a state, if it is tracked.
    fn place(&self, r: Reg) -> Option<usize> {
        self.tracked.get(r as usize).filter(|&&s| s != UNTRACKED).map(|&s| s as usize)
    }

    /// The value of `r` in `state`, where known.
    fn value(&self, state: &State, r: Reg) -> Option<u64> {
        if self.constant.get(r as usize) == Some(&true) {
            return self.func.template.get(r as usize).copied();
        }
        self.place(r).and_then(|s| state[s])
    }

    /// The value `inst` computes in `state`, where it is a foldable instruction with known operands.
    fn result(&self, state: &State, inst: &Inst) -> Option<u64> {
        let v = |r| self.value(state, r);
        match *inst {
            Inst::Mov { src, n: 1, .. } => v(src),
            Inst::IntBin { op, bits, a, b, n: 1, .. } => Some(fold_int(op, bits, v(a)?, v(b)?)),
            Inst::Convert { conv, from, to, src, n: 1, .. } => fold_convert(conv, from, to, v(src)?),
            Inst::Compare { cmp, bits, a, b, n: 1, .. } => fold_compare(cmp, bits, v(a)?, v(b)?),
            _ => None,
        }
    }

    /// Runs `inst` on `state`.
    fn transfer(&self, inst: &Inst, state: &mut State) {
        let known = self.result(state, inst);
        operands::for_each(self.module, self.func, inst, |r, n, u| {
            if u == Use::Write {
                for reg in r..r + n as Reg {
                    if let Some(s) = self.place(reg) {
                        state[s] = None;
                    }
                }
            }
        });
        if let (Some(v), Some(dst)) = (known, foldable_dst(inst))
            && let Some(s) = self.place(dst)
        {
            state[s] = Some(v);
        }
    }

    /// Where a conditional branch or switch goes when `state` knows its operand.
    fn known_target(&self, state: &State, inst: &Inst) -> Option<u32> {
        match *inst {
            Inst::BranchIf { cond, then, otherwise } => {
                Some(if self.value(state, cond)? != 0 { then } else { otherwise })
            }
            Inst::Switch { value, bits, table } => {
                // As the interpreter looks the value up: masked to the switch's width.
                let v = self.value(state, value)? & value::mask(bits);
                let t = self.func.switch_tables.get(table as usize)?;
                Some(t.cases.iter().find(|c| c.0 & value::mask(bits) == v).map_or(t.default, |c| c.1))
            }
            _ => None,
        }
    }

    /// What is known at the start of each block (None: a block the entry does not reach).
    fn entry_states(&self, blocks: &Blocks) -> Vec<Option<State>> {
        let n = blocks.starts.len();
        let mut entry: Vec<Option<State>> = vec![None; n];
        entry[0] = Some(vec![None; self.states]);
        let mut work: VecDeque<usize> = VecDeque::from([0]);
        let mut queued = vec![false; n];
        queued[0] = true;
        let mut state = State::new();
        while let Some(k) = work.pop_front() {
            queued[k] = false;
            state.clone_from(entry[k].as_ref().expect("queued blocks have a state"));
            let end = blocks.starts.get(k + 1).copied().unwrap_or(self.func.code.len());
            for inst in &self.func.code[blocks.starts[k]..end] {
                self.transfer(inst, &mut state);
            }
            // A branch on a known value goes one way only.
            let taken = self.known_target(&state, &self.func.code[end - 1]);
            let ways: &[usize] = match taken {
                Some(t) if (t as usize) < self.func.code.len() => &[blocks.block_of[t as usize]],
                Some(_) => &[],
                None => &blocks.successors[k],
            };
            for &s in ways {
                let changed = match &mut entry[s] {
                    slot @ None => {
                        *slot = Some(state.clone());
                        true
                    }
                    Some(known) => {
                        let mut changed = false;
                        for (a, b) in known.iter_mut().zip(&state) {
                            if a.is_some() && *a != *b {
                                *a = None;
                                changed = true;
                            }
                        }
                        changed
                    }
                };
                if changed && !queued[s] {
                    queued[s] = true;
                    work.push_back(s);
                }
            }
        }
        entry
    }
}

/// The register holding constant `v`, added to the template if none does yet.
fn constant_reg(func: &mut Function, constants: &mut HashMap<u64, Reg>, v: u64) -> Reg {
    *constants.entry(v).or_insert_with(|| {
        func.template.push(v);
        (func.template.len() - 1) as Reg
    })
}

/// What folding changes in one instruction.
enum Change {
    /// It writes this constant to its single register.
    Constant(u64),
    /// Its known indices join the offset, which becomes this; the others stay.
    Offset(i64, Vec<Index>),
    /// An array-index check of an index inside the array: it goes.
    Drop,
    /// An array-index check of an index outside the array: it reads this constant.
    Outside(u64),
    /// It copies this register (its known operand leaves the other unchanged).
    Copy(Reg),
    /// A conditional branch or switch on a known value: it branches here.
    Jump(u32),
    /// A call: these of its arguments (by position) are known, and are read from constants.
    Arguments(Vec<(usize, u64)>),
}

impl Flow<'_> {
    /// What folding changes in `inst` with what `state` knows before it.
    fn change(&self, state: &State, inst: &Inst) -> Option<Change> {
        let func = self.func;
        let constant = |r: Reg| self.constant.get(r as usize) == Some(&true);
        match *inst {
            Inst::Mov { src, .. } if constant(src) => None,
            Inst::IntBin { op, bits, dst, a, b, n: 1 } => match self.result(state, inst) {
                Some(v) => Some(Change::Constant(v)),
                None => {
                    let kept = unchanged_operand(op, bits, (a, self.value(state, a)), (b, self.value(state, b)))?;
                    Some(if kept == dst { Change::Drop } else { Change::Copy(kept) })
                }
            },
            Inst::Mov { .. } | Inst::IntBin { .. } | Inst::Convert { .. } | Inst::Compare { .. } => {
                self.result(state, inst).map(Change::Constant)
            }
            Inst::BranchIf { .. } | Inst::Switch { .. } => self.known_target(state, inst).map(Change::Jump),
            Inst::Call { first_arg, num_args, .. } => {
                let args = func.args.get(first_arg as usize..first_arg as usize + num_args as usize)?;
                let known: Vec<(usize, u64)> = args
                    .iter()
                    .enumerate()
                    .filter(|(_, a)| a.n == 1 && !constant(a.reg))
                    .filter_map(|(k, a)| Some((k, self.value(state, a.reg)?)))
                    .collect();
                (!known.is_empty()).then_some(Change::Arguments(known))
            }
            Inst::PtrOffset { offset, first_index, num_indices, .. } => {
                let range = first_index as usize..first_index as usize + num_indices as usize;
                let mut offset = offset;
                let mut left = Vec::new();
                for &index in &func.indices[range] {
                    match self.value(state, index.reg) {
                        Some(v) => {
                            offset = offset.wrapping_add(value::sign_extend(v, index.bits).wrapping_mul(index.stride))
                        }
                        None => left.push(index),
                    }
                }
                (left.len() < num_indices as usize).then_some(Change::Offset(offset, left))
            }
            Inst::IndexCheck { index, extent, .. } => {
                let entry = func.indices[index as usize];
                let v = self.value(state, entry.reg)?;
                if (value::sign_extend(v, entry.bits) as u64) < extent as u64 {
                    Some(Change::Drop)
                } else {
                    (!constant(entry.reg)).then_some(Change::Outside(v))
                }
            }
            _ => None,
        }
    }
}

/// Makes `change` to the instruction at `pc`.
fn apply(func: &mut Function, pc: usize, change: Change, keep: &mut [bool], constants: &mut HashMap<u64, Reg>) {
    func.code[pc] = match (change, func.code[pc].clone()) {
        (Change::Constant(v), inst) => {
            let dst = foldable_dst(&inst).expect("a foldable instruction");
            Inst::Mov { dst, src: constant_reg(func, constants, v), n: 1 }
        }
        (Change::Offset(offset, left), Inst::PtrOffset { dst, base, .. }) => {
            let first_index = if left.is_empty() { 0 } else { func.indices.len() as u32 };
            let num_indices = left.len() as u16;
            func.indices.extend(left);
            Inst::PtrOffset { dst, base, offset, first_index, num_indices }
        }
        (Change::Drop, _) => {
            keep[pc] = false;
            return;
        }
        (Change::Copy(src), inst) => {
            let dst = foldable_dst(&inst).expect("a foldable instruction");
            Inst::Mov { dst, src, n: 1 }
        }
        (Change::Jump(target), _) => Inst::Branch { target },
        (Change::Arguments(known), Inst::Call { func: callee, dst, first_arg, num_args }) => {
            let mut args: Vec<Arg> = func.args[first_arg as usize..first_arg as usize + num_args as usize].to_vec();
            for (k, v) in known {
                args[k].reg = constant_reg(func, constants, v);
            }
            let first_arg = func.args.len() as u32;
            func.args.extend(args);
            Inst::Call { func: callee, dst, first_arg, num_args }
        }
        (Change::Outside(v), Inst::IndexCheck { index, ptr, extent, loc }) => {
            let reg = constant_reg(func, constants, v);
            func.indices.push(Index { reg, ..func.indices[index as usize] });
            Inst::IndexCheck { index: (func.indices.len() - 1) as u32, ptr, extent, loc }
        }
        (_, inst) => unreachable!("a change planned for another instruction: {inst:?}"),
    };
}

/// The operand that `a op b` on `bits`-wide integers equals (with the other operand's value where
/// known): `x + 0`, `x - 0`, `x | 0`, `x ^ 0`, shifts by 0, `x * 1`, `x / 1` and `x & ~0` are
/// `x`, and so are the commutative ones with `x` on the right. Register values are kept masked
/// to their width, so the copy is what the interpreter's masked result would be.
fn unchanged_operand(op: IntOp, bits: u8, (a, x): (Reg, Option<u64>), (b, y): (Reg, Option<u64>)) -> Option<Reg> {
    let ones = value::mask(bits);
    let right_neutral = |v: u64| match op {
        IntOp::Add | IntOp::Sub | IntOp::Or | IntOp::Xor | IntOp::Shl | IntOp::LShr | IntOp::AShr => v == 0,
        IntOp::Mul | IntOp::UDiv | IntOp::SDiv => v == 1,
        IntOp::And => v == ones,
        _ => false,
    };
    let left_neutral = |v: u64| match op {
        IntOp::Add | IntOp::Or | IntOp::Xor => v == 0,
        IntOp::Mul => v == 1,
        IntOp::And => v == ones,
        _ => false,
    };
    if y.is_some_and(right_neutral) {
        Some(a)
    } else if x.is_some_and(left_neutral) {
        Some(b)
    } else {
        None
    }
}

/// Marks in `keep` the computations whose results nothing reads (until none is left), or that
/// straight-line code overwrites before anything reads them; returns how many.
///
/// The read counts are taken once and lowered as readers go; the code is walked from the end,
/// so a chain of computations each read only by the next goes in one walk (a loop's needs
/// another).
fn remove_dead(module: &ir::Module, func: &Function, keep: &mut [bool]) -> usize {
    let (mut reads, _) = counts(module, func, keep);
    let mut removed = 0;
    loop {
        let mut changed = false;
        for (pc, inst) in func.code.iter().enumerate().rev() {
            if !keep[pc] || !only_computes(inst) {
                continue;
            }
            let mut read = false;
            operands::for_each(module, func, inst, |r, n, u| {
                if u == Use::Write {
                    read |= (r..r + n as Reg).any(|r| reads.get(r as usize).is_some_and(|&c| c > 0));
                }
            });
            // Dead too when the straight-line code after it writes its one register again first.
            if !read || foldable_dst(inst).is_some_and(|x| overwritten_after(module, func, keep, pc, x, 1)) {
                keep[pc] = false;
                removed += 1;
                changed = true;
                operands::for_each(module, func, inst, |r, n, u| {
                    if u == Use::Read {
                        reads.iter_mut().skip(r as usize).take(n as usize).for_each(|c| *c = c.saturating_sub(1));
                    }
                });
            }
        }
        if !changed {
            return removed;
        }
    }
}
