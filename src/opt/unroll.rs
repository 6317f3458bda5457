//! Full unrolling of small counted loops whose counter indexes a private array: the loops of
//! trip count 2 to 16 that tuned library kernels (CLBlast's register blocks) run over arrays of
//! per-work-item values with `#pragma unroll`, which at `-O0` stay loops over private memory.
//!
//! The loop is recognised in the shape the lowering gives a `for` with constant bounds: the
//! counter set by a `Mov` of a constant in the straight-line code before the header, the header
//! `t = cmp c, B` and `branch t ? body : exit` (or the other way round), the body, and the latch
//! `c = add c, S` (or `sub`) followed by the branch back to the header. A branch to the exit
//! follows the copies where the exit is not the instruction after the loop. The body is
//! replaced by one copy per iteration, each preceded by `c = mov K` with that iteration's
//! counter (a new constant register where none holds it); the header, the latch and their
//! branches go, and after the copies the counter gets the value that ended the loop when code
//! after the loop reads it. Every copied instruction keeps its source location; branch targets
//! inside the body are renumbered into its copy (a branch to the latch goes to the next copy),
//! and each copy gets its own index-table entries, so that later passes may rewrite one copy's
//! without touching another's. Innermost loops go first, so an enclosing loop sees its inner
//! loops already unrolled.
//!
//! What every work-item computes, stores and reports is unchanged: the trace of each work-item
//! is the loop's, without the header's comparison and branch and the latch's branch (the
//! comparison's result is read by its branch only), and with the counter written by a `Mov`
//! where the latch added to it. The trip count does not depend on the work-item, so no
//! divergence is lost or added. Fewer branches are charged to the branch budget, which is
//! fine for a loop that ends.
//!
//! What it cannot see: values other than the constant registers, and the other passes (the
//! constant folding that makes the copies' indices constants runs after it). It gives up on a
//! loop whose body has another way in or out, a switch, a barrier, a collective, an
//! asynchronous copy, a return, `Unreachable` or `Unsupported`, whose counter or condition is
//! written or read elsewhere in ways the shape does not allow, whose counter indexes no
//! private array, or whose copies would grow the function past a bound.

use std::collections::HashMap;

use super::base::{checked_index, constant_registers, counts, ends_block, fold_compare, fold_int, retarget};
use crate::ir::operands::{self, Use};
use crate::ir::{self, Function, Inst, IntOp, Reg};

/// The most iterations a loop may have to be unrolled.
const MAX_TRIP: usize = 16;
/// The most instructions one unrolled loop may become.
const MAX_COPIED: usize = 1024;
/// The most instructions unrolling may add to one function.
const MAX_GROWTH: usize = 4096;

/// Unrolls every eligible loop of `func`, innermost first; returns how many were unrolled.
pub fn unroll_loops(module: &ir::Module, func: &mut Function) -> usize {
    let limit = func.code.len() + MAX_GROWTH;
    let (_, writes) = counts(module, func, &[]);
    let constant = constant_registers(func, &writes);
    // Constant registers by value, for the counters of the copies (new ones are added as needed).
    let mut constants: HashMap<u64, Reg> = HashMap::new();
    for (r, &c) in constant.iter().enumerate().rev() {
        if c {
            constants.insert(func.template[r], r as Reg);
        }
    }
    let mut unrolled = 0;
    while let Some(plan) = find(module, func, limit) {
        apply(func, &plan, &mut constants);
        unrolled += 1;
    }
    unrolled
}

/// One loop to unroll.
struct Plan {
    /// The header's comparison; the latch's branch back to it.
    header: usize,
    back: usize,
    /// Where the loop goes when it ends.
    exit: usize,
    counter: Reg,
    /// The counter's value in each iteration, then the value that ends the loop.
    values: Vec<u64>,
    /// Whether code outside the loop reads the counter (it then gets its final value).
    read_after: bool,
}

/// The smallest loop of `func` that can be unrolled within `limit` instructions for the function.
fn find(module: &ir::Module, func: &Function, limit: usize) -> Option<Plan> {
    let (reads, writes) = counts(module, func, &[]);
    let constant = constant_registers(func, &writes);
    let sources = branch_sources(func);
    let mut loops: Vec<(usize, usize)> = func
        .code
        .iter()
        .enumerate()
        .filter_map(|(b, inst)| match *inst {
            Inst::Branch { target } if (target as usize) < b => Some((target as usize, b)),
            _ => None,
        })
        .collect();
    loops.sort_by_key(|&(h, b)| b - h);
    let cx = Context { module, func, reads: &reads, writes: &writes, constant: &constant, sources: &sources };
    loops.into_iter().find_map(|(h, b)| cx.plan(h, b, limit))
}

/// What [`find`] derives once per search.
struct Context<'a> {
    module: &'a ir::Module,
    func: &'a Function,
    reads: &'a [u32],
    writes: &'a [u32],
    constant: &'a [bool],
    /// For each instruction, the branches and switches that go to it.
    sources: &'a [Vec<usize>],
}

impl Context<'_> {
    fn is_constant(&self, r: Reg) -> bool {
        self.constant.get(r as usize).copied().unwrap_or(false)
    }

    /// Whether the loop with header `h` and back branch `b` has the shape of a counted loop
    /// that can be unrolled; its plan if so.
    fn plan(&self, h: usize, b: usize, limit: usize) -> Option<Plan> {
        let (func, code) = (self.func, &self.func.code);
        if b < h + 3 || self.sources[h] != [b] || !self.sources[h + 1].is_empty() || !self.sources[b].is_empty() {
            return None;
        }
        let Inst::Compare { cmp, bits, dst: t, a: x, b: y, n: 1 } = code[h] else { return None };
        let Inst::BranchIf { cond, then, otherwise } = code[h + 1] else { return None };
        let (body, latch) = (h + 2, b - 1);
        let (go_on, exit) = match (then as usize, otherwise as usize) {
            (t, e) if t == body => (1, e),
            (t, e) if e == body => (0, t),
            _ => return None,
        };
        if (h..=b).contains(&exit) {
            return None;
        }
        let Inst::IntBin { op, bits: step_bits, dst: c, a: sa, b: sb, n: 1 } = code[latch] else { return None };
        let step = match (op, sa == c, sb == c) {
            (IntOp::Add | IntOp::Sub, true, false) => sb,
            (IntOp::Add, false, true) => sa,
            _ => return None,
        };
        let bound_left = match (x == c, y == c) {
            (true, false) if self.is_constant(y) => false,
            (false, true) if self.is_constant(x) => true,
            _ => return None,
        };
        let bound = if bound_left { x } else { y };
        let once =
            |r: Reg, reads: u32| self.writes.get(r as usize) == Some(&1) && self.reads.get(r as usize) == Some(&reads);
        if cond != t || !once(t, 1) || !self.is_constant(step) || self.writes.get(c as usize) != Some(&2) {
            return None;
        }
        if func.params.iter().any(|&(r, n)| operands::overlap(r, n as u64, c, 1)) {
            return None;
        }
        let start = self.initial(h, c)?;
        // The trip count, as the interpreter would run the header and the latch.
        let (tb, sv) = (func.template[bound as usize], func.template[step as usize]);
        let mut values = vec![start];
        loop {
            let v = *values.last().expect("the start");
            let (l, r) = if bound_left { (tb, v) } else { (v, tb) };
            if fold_compare(cmp, bits, l, r)? != go_on {
                break;
            }
            if values.len() > MAX_TRIP {
                return None;
            }
            values.push(fold_int(op, step_bits, v, sv));
        }
        let trip = values.len() - 1;
        if !self.closed(body, latch) || !self.indexes_private(c, body, latch) {
            return None;
        }
        let read_after = code.iter().enumerate().any(|(q, inst)| (q < h || q > b) && self.reads_reg(inst, c));
        let copied = trip * (latch - body + 1) + read_after as usize + (exit != b + 1) as usize;
        if copied > MAX_COPIED || code.len() - (b + 1 - h) + copied > limit {
            return None;
        }
        Some(Plan { header: h, back: b, exit, counter: c, values, read_after })
    }

    /// The counter's initial value: a `Mov` of a constant in the straight-line code before the
    /// header `h`, with no other way into that code after it.
    fn initial(&self, h: usize, c: Reg) -> Option<u64> {
        let code = &self.func.code;
        for q in (0..h).rev() {
            if (q + 1 < h && !self.sources[q + 1].is_empty()) || ends_block(&code[q]) {
                return None;
            }
            let mut writes = false;
            operands::for_each(self.module, self.func, &code[q], |r, n, u| {
                writes |= u == Use::Write && operands::overlap(r, n, c, 1)
            });
            if writes {
                return match code[q] {
                    Inst::Mov { dst, src, n: 1 } if dst == c && self.is_constant(src) => {
                        Some(self.func.template[src as usize])
                    }
                    _ => None,
                };
            }
        }
        None
    }

    /// Whether the body `body..latch` is entered only at its start (from the header) and left only
    /// through the latch, and holds nothing that may not be copied.
    fn closed(&self, body: usize, latch: usize) -> bool {
        let inside = |t: usize| (body..=latch).contains(&t);
        let entered =
            (body..=latch).all(|q| self.sources[q].iter().all(|&s| s + 1 == body || (body..latch).contains(&s)));
        entered
            && self.func.code[body..latch].iter().all(|inst| match *inst {
                Inst::Branch { target } => inside(target as usize),
                Inst::BranchIf { then, otherwise, .. } => inside(then as usize) && inside(otherwise as usize),
                Inst::Switch { .. }
                | Inst::Barrier { .. }
                | Inst::Collective { .. }
                | Inst::AsyncCopy { .. }
                | Inst::WaitEvents { .. }
                | Inst::Return { .. }
                | Inst::Unreachable { .. }
                | Inst::Unsupported { .. } => false,
                _ => true,
            })
    }

    /// Whether the counter, or a value computed from it in the body, is an index of an address
    /// into a variable of the function's private memory (an `Alloca`).
    fn indexes_private(&self, c: Reg, body: usize, latch: usize) -> bool {
        let (func, code) = (self.func, &self.func.code);
        let slots = func.template.len();
        let mut alloca = vec![false; slots];
        for inst in code {
            if let Inst::Alloca { dst, .. } = *inst
                && self.writes.get(dst as usize) == Some(&1)
            {
                alloca[dst as usize] = true;
            }
        }
        let mut derived = vec![false; slots];
        derived[c as usize] = true;
        // Twice: an inner loop's back edge may carry a derived value to its start.
        for _ in 0..2 {
            for inst in &code[body..latch] {
                if !matches!(
                    inst,
                    Inst::Mov { .. }
                        | Inst::IntBin { .. }
                        | Inst::Convert { .. }
                        | Inst::Unary { .. }
                        | Inst::Select { .. }
                ) {
                    continue;
                }
                let (mut reads, mut written) = (false, None);
                operands::for_each(self.module, func, inst, |r, n, u| match u {
                    Use::Read => reads |= (r..r + n as Reg).any(|r| derived.get(r as usize) == Some(&true)),
                    Use::Write => written = Some((r, n)),
                });
                if let (true, Some((r, n))) = (reads, written) {
                    derived.iter_mut().skip(r as usize).take(n as usize).for_each(|d| *d = true);
                }
            }
        }
        code[body..latch].iter().any(|inst| match *inst {
            Inst::PtrOffset { base, first_index, num_indices, .. } if alloca.get(base as usize) == Some(&true) => {
                let range = first_index as usize..first_index as usize + num_indices as usize;
                func.indices.get(range).unwrap_or(&[]).iter().any(|i| derived.get(i.reg as usize) == Some(&true))
            }
            _ => false,
        })
    }

    /// Whether `inst` reads register `c` (an array-index check through its table entry too).
    fn reads_reg(&self, inst: &Inst, c: Reg) -> bool {
        let mut reads = checked_index(self.func, inst) == Some(c);
        operands::for_each(self.module, self.func, inst, |r, n, u| {
            reads |= u == Use::Read && operands::overlap(r, n, c, 1)
        });
        reads
    }
}

/// For each instruction, the branches and switches that may go to it.
fn branch_sources(func: &Function) -> Vec<Vec<usize>> {
    let mut sources = vec![Vec::new(); func.code.len() + 1];
    let mut add = |t: u32, from: usize| {
        if let Some(s) = sources.get_mut(t as usize) {
            s.push(from);
        }
    };
    for (pc, inst) in func.code.iter().enumerate() {
        match *inst {
            Inst::Branch { target } => add(target, pc),
            Inst::BranchIf { then, otherwise, .. } => {
                add(then, pc);
                add(otherwise, pc);
            }
            Inst::Switch { table, .. } => {
                if let Some(t) = func.switch_tables.get(table as usize) {
                    add(t.default, pc);
                    t.cases.iter().for_each(|c| add(c.1, pc));
                }
            }
            _ => {}
        }
    }
    sources
}

/// The register holding constant `v`, added to the template if none does yet.
fn constant(func: &mut Function, constants: &mut HashMap<u64, Reg>, v: u64) -> Reg {
    *constants.entry(v).or_insert_with(|| {
        func.template.push(v);
        (func.template.len() - 1) as Reg
    })
}

/// Replaces the loop of `plan` by its copies.
fn apply(func: &mut Function, plan: &Plan, constants: &mut HashMap<u64, Reg>) {
    let (h, b, c) = (plan.header, plan.back, plan.counter);
    let (body, latch) = (h + 2, b - 1);
    let step_loc = func.locs[latch];
    let trip = plan.values.len() - 1;
    let len = latch - body + 1;
    let exit_branch = plan.exit != b + 1;
    let new_len = trip * len + plan.read_after as usize + exit_branch as usize;
    let exit_loc = func.locs[h + 1];
    let delta = new_len as i64 - (b + 1 - h) as i64;
    let outside = |t: u32| if t as usize > b { (t as i64 + delta) as u32 } else { t };
    let old = std::mem::take(&mut func.code);
    let old_locs = std::mem::take(&mut func.locs);
    let mut code = Vec::with_capacity((old.len() as i64 + delta) as usize);
    let mut locs = Vec::with_capacity(code.capacity());
    let retarget = |inst: &mut Inst, map: &dyn Fn(u32) -> u32| retarget(inst, |t| *t = map(*t));
    for (inst, &loc) in old[..h].iter().zip(&old_locs[..h]) {
        let mut inst = inst.clone();
        retarget(&mut inst, &outside);
        code.push(inst);
        locs.push(loc);
    }
    for k in 0..trip {
        let start = code.len();
        let value = constant(func, constants, plan.values[k]);
        code.push(Inst::Mov { dst: c, src: value, n: 1 });
        locs.push(step_loc);
        let inside = |t: u32| (start + 1 + (t as usize - body)) as u32;
        let mut entries: HashMap<u32, u32> = HashMap::new();
        for inst in &old[body..latch] {
            if let Inst::PtrOffset { first_index, num_indices, .. } = *inst {
                let first = func.indices.len() as u32;
                for i in 0..num_indices as u32 {
                    entries.insert(first_index + i, first + i);
                }
                func.indices.extend_from_within(first_index as usize..first_index as usize + num_indices as usize);
            }
        }
        for (inst, &loc) in old[body..latch].iter().zip(&old_locs[body..latch]) {
            let mut inst = inst.clone();
            retarget(&mut inst, &inside);
            match &mut inst {
                Inst::PtrOffset { first_index, num_indices, .. } if *num_indices > 0 => {
                    *first_index = entries[first_index]
                }
                Inst::IndexCheck { index, .. } => {
                    *index = match entries.get(index) {
                        Some(&copied) => copied,
                        None => {
                            let entry = func.indices[*index as usize];
                            func.indices.push(entry);
                            (func.indices.len() - 1) as u32
                        }
                    };
                }
                _ => {}
            }
            code.push(inst);
            locs.push(loc);
        }
    }
    if plan.read_after {
        let value = constant(func, constants, plan.values[trip]);
        code.push(Inst::Mov { dst: c, src: value, n: 1 });
        locs.push(step_loc);
    }
    if exit_branch {
        code.push(Inst::Branch { target: outside(plan.exit as u32) });
        locs.push(exit_loc);
    }
    for (inst, &loc) in old[b + 1..].iter().zip(&old_locs[b + 1..]) {
        let mut inst = inst.clone();
        retarget(&mut inst, &outside);
        code.push(inst);
        locs.push(loc);
    }
    for table in &mut func.switch_tables {
        table.default = outside(table.default);
        table.cases.iter_mut().for_each(|case| case.1 = outside(case.1));
    }
    func.code = code;
    func.locs = locs;
}
