//! Registers kept as descriptors while the interpreter runs (the arithmetic and the plans are
//! [`crate::exec::affine`]'s): before each instruction that touches a slot which may hold one,
//! either the instruction runs from its operands' descriptors (an id, a sum, a product by a
//! uniform value, a widening, an address `p + i`, a copy, a compare whose lanes all agree: its
//! result becomes a descriptor; a load or store through an address whose lanes form one run or
//! rows: done without reading the lanes' addresses), or the descriptors it reads are written
//! into the register file and those it overwrites are forgotten, and it runs as ever.
//!
//! Descriptors are kept only while every lane of the group is active ([`Executor::full`]):
//! a descriptor describes all the group's lanes. This file cannot see the warp's shape; the
//! descriptors of slots written outside instructions are passed on (a call's arguments to the
//! callee's parameters, `Lanes::pass`) or written out and forgotten (a return's values,
//! `Lanes::forget`).

use super::executor::{Executor, SplitAt};
use crate::exec::affine::{Affine, Held, Touch, compare_lanes, indices_inside, int_op, split_lanes, uniform_row};
use crate::exec::hooks::GroupHooks;
use crate::exec::ops::compare;
use crate::ir::{Builtin, Cmp, Conv, Inst, Reg, value};

/// Whether `inst` reads its register operands in its active lanes only, and only as values (no
/// call, return, collective, shuffle across lanes, atomic, barrier or output): a register it
/// only reads may then hold its value in those lanes alone.
fn lane_local(inst: &Inst) -> bool {
    matches!(
        inst,
        Inst::Mov { .. }
            | Inst::IntBin { .. }
            | Inst::FloatBin { .. }
            | Inst::Compare { .. }
            | Inst::Unary { .. }
            | Inst::Convert { .. }
            | Inst::Select { .. }
            | Inst::Bitcast { .. }
            | Inst::PtrOffset { .. }
            | Inst::LoadScalar { .. }
            | Inst::StoreScalar { .. }
            | Inst::Load { .. }
            | Inst::Store { .. }
            | Inst::Math { .. }
            | Inst::Geometric { .. }
    )
}

impl<H: GroupHooks> Executor<'_, '_, H> {
    /// Before instruction `inst` (at `self.p`) runs, where registers may be descriptors: true
    /// when it ran from descriptors (nothing is left to do), false when it is to run as ever
    /// (what it reads is in the register file, and nothing is known any more of what it
    /// writes).
    #[inline(always)]
    pub(super) fn affine_before(&mut self, inst: &Inst) -> bool {
        let plan = self.plan;
        let Some(&(lo, hi)) = plan.at.get(self.p).filter(|t| t.0 != t.1) else { return false };
        if self.full && plan.follows[self.p] && self.follow(inst).is_some() {
            if !matches!(inst, Inst::BranchIf { .. }) {
                self.p += 1;
            }
            return true;
        }
        // Most touches find nothing to do (a loop's registers while a branch parts the group, or
        // an id whose lanes are written already, read): a scan here, the work out of line.
        let (base, touches) = (self.regs.base(), &plan.touches[lo as usize..hi as usize]);
        let acts = |t: &Touch| match self.affine[base + t.slot as usize].held {
            Held::Unknown => false,
            Held::Lazy => true,
            Held::Known | Held::Varying => t.write,
        };
        if touches.iter().any(acts) {
            self.settle(lo as usize, hi as usize, lane_local(inst));
        }
        false
    }

    /// Materialises the descriptors touches `lo..hi` of the current instruction read, and
    /// forgets those it writes (materialised first: lanes it does not write keep their values).
    /// Where some lanes are inactive and the instruction reads only its active lanes' values
    /// (`lane_local`), a value the same in every lane that it only reads is written in those
    /// lanes alone and stays a descriptor: a reduction's halving stride, read by fewer lanes at
    /// each trip, is not written in all of them every time.
    #[inline(never)]
    fn settle(&mut self, lo: usize, hi: usize, lane_local: bool) {
        let base = self.regs.base();
        for t in &self.plan.touches[lo..hi] {
            let slot = base + t.slot as usize;
            let a = self.affine[slot];
            match a.held {
                Held::Unknown => continue,
                Held::Lazy if lane_local && !t.write && !self.full && a.is_uniform() => {
                    self.write_active(t.slot as usize, a.value());
                    continue;
                }
                Held::Lazy => self.materialise(t.slot as usize, a),
                Held::Known | Held::Varying => {}
            }
            if t.write {
                self.affine[slot].held = Held::Unknown;
            }
        }
    }

    /// Writes `v` in the active lanes of frame slot `s` (the others keep what they hold).
    fn write_active(&mut self, s: usize, v: u64) {
        let slot = self.regs.slot(s);
        match self.act.dense {
            Some(range) => {
                // SAFETY: slot `s` is a slot of the current frame and `range` active lanes (below
                // the stride); no other slice of the file lives.
                unsafe { self.regs.row_mut(slot, range) }.fill(v);
            }
            None => {
                for &l in self.act.lanes {
                    self.regs.set(slot + l as usize, v);
                }
            }
        }
    }

    /// Writes the lanes of descriptor `a` of frame slot `s` into the register file.
    fn materialise(&mut self, s: usize, a: Affine) {
        let Some(grid) = self.grid else { return };
        // SAFETY: slot `s` is a slot of the current frame and `0..count` the group's lanes
        // (below the stride); no other slice of the file lives.
        let out = unsafe { self.regs.row_mut(self.regs.slot(s), (0, grid.count)) };
        a.fill(grid, out);
        self.affine[self.regs.base() + s].held = Held::Known;
    }

    /// What is known of frame slot `s`: its descriptor, or, for a slot nothing is known of, a
    /// uniform descriptor where all the group's lanes hold one value (kept for later).
    #[inline(always)]
    fn known(&mut self, s: usize) -> Option<Affine> {
        let slot = self.regs.base() + s;
        let a = self.affine[slot];
        match a.held {
            Held::Known | Held::Lazy => Some(a),
            Held::Varying => None,
            Held::Unknown => {
                let grid = self.grid?;
                // SAFETY: as in `materialise`, to read.
                let row = unsafe { self.regs.row(self.regs.slot(s), (0, grid.count)) };
                let found = uniform_row(row).map(Affine::uniform);
                self.affine[slot] = found.unwrap_or(Affine { held: Held::Varying, ..a });
                found
            }
        }
    }

    /// The descriptor of frame slot `s`, if it has one (an address: one the same in every lane
    /// is no run nor rows, so it is not looked for).
    #[inline(always)]
    fn described(&self, s: usize) -> Option<Affine> {
        let a = self.affine[self.regs.base() + s];
        matches!(a.held, Held::Known | Held::Lazy).then_some(a)
    }

    /// `a` as a 64-bit value read unsigned (an address, or an operand of a wider operation).
    fn wide(&self, a: Affine) -> Option<Affine> {
        a.widened(self.grid?, false)
    }

    /// Runs `inst` from descriptors, when it can: Some when it did.
    #[inline(always)]
    fn follow(&mut self, inst: &Inst) -> Option<()> {
        let base = self.regs.base();
        let result = match *inst {
            Inst::Builtin { dst, which, dims } => {
                let r = &self.exec.range;
                let slots = (dims as usize).min(which.lanes() as usize);
                for dim in 0..slots {
                    let first = match which {
                        Builtin::GlobalId => r.offset[dim] + self.group_id[dim] * r.local[dim],
                        _ => 0,
                    };
                    // A two-dimensional grid's rows are y ids; z ids are all the first.
                    let a = match dim {
                        0 => Affine::id(first, false),
                        1 => Affine::id(first, true),
                        _ => Affine { held: Held::Lazy, ..Affine::uniform(first) },
                    };
                    self.affine[base + dst as usize + dim] = a;
                }
                return Some(());
            }
            Inst::IntBin { op, bits, dst, a, b, .. } => {
                let (mut x, mut y) = (self.known(a as usize)?, self.known(b as usize)?);
                if x.is_uniform() && y.is_uniform() {
                    // Any operation of one value in every lane: computed once.
                    return self.set(dst, Affine::uniform(value::int_op(op, bits, x.value(), y.value())));
                }
                if x.bits < bits {
                    x = self.wide(x)?;
                }
                if y.bits < bits {
                    y = self.wide(y)?;
                }
                (dst, int_op(op, bits, x, y)?)
            }
            Inst::Convert { conv, from, to, dst, src, .. } => {
                let x = self.known(src as usize)?;
                let c = match conv {
                    Conv::UInt => x.narrowed(from.min(to)),
                    // Narrowing, or a value whose sign bit is clear: its low bits.
                    Conv::SInt if to <= from || x.bits < from => x.narrowed(to),
                    Conv::SInt => Affine { bits: from, ..x }.widened(self.grid?, true)?.narrowed(to),
                    _ => return None,
                };
                (dst, c)
            }
            Inst::PtrOffset { dst, base: p, offset, first_index, num_indices } => {
                let start = self.known(p as usize)?;
                let mut at = self.wide(start)?;
                let indices = &self.func.indices[first_index as usize..first_index as usize + num_indices as usize];
                for index in indices {
                    let i = self.known(index.reg as usize)?;
                    // The index sign-extended from its width (a narrower value has its sign bit
                    // clear).
                    let i = if i.bits < index.bits {
                        self.wide(i)?
                    } else {
                        Affine { bits: index.bits.min(64), ..i }.widened(self.grid?, true)?
                    };
                    at = at.add(i.scale(index.stride as u64, 64), 64, false);
                }
                (dst, Affine { base: at.base.wrapping_add(offset as u64), ..at })
            }
            Inst::Compare { cmp, bits, dst, a, b, n } => {
                let (x, y) = (self.known(a as usize)?, self.known(b as usize)?);
                let holds = if x.is_uniform() && y.is_uniform() {
                    Some(compare(cmp, bits, x.value(), y.value()))
                } else if self.undecided.0[base + dst as usize] == self.undecided.1 {
                    // Lanes found on both sides of the value once in this group: not looked at
                    // again.
                    None
                } else {
                    self.compare_across(cmp, bits, dst, (x, y))
                };
                // Lanes on both sides: perhaps one range of them holds.
                let Some(holds) = holds else { return self.compare_split(cmp, bits, (dst, n), (x, y)) };
                (dst, Affine::uniform(holds as u64))
            }
            Inst::BranchIf { cond, then, otherwise } => {
                // One way for every lane: what `branch_if` does then, budget and all (short of
                // budget, it stops there).
                let c = self.described(cond as usize)?;
                let lanes = self.act.lanes.len() as u64;
                if !c.is_uniform() || *self.budget < lanes {
                    return None;
                }
                *self.budget -= lanes;
                self.p = if c.value() != 0 { then } else { otherwise } as usize;
                return Some(());
            }
            Inst::IndexCheck { index, extent, .. } => {
                let entry = *self.func.indices.get(index as usize)?;
                let i = self.known(entry.reg as usize)?;
                return indices_inside(i, self.grid?, entry.bits, extent as u64).then_some(());
            }
            Inst::Mov { dst, src, .. } => (dst, Affine { held: Held::Lazy, ..self.known(src as usize)? }),
            Inst::LoadScalar { dst, ptr, size, loc, align } => {
                if self.watching {
                    return None;
                }
                let a = self.described(ptr as usize)?;
                if !self.affine_load(dst, ptr, (size, align), loc, a) {
                    return None;
                }
                self.affine[base + dst as usize] = Affine::default();
                return Some(());
            }
            Inst::StoreScalar { src, ptr, size, loc, align } => {
                if self.watching {
                    return None;
                }
                let a = self.described(ptr as usize)?;
                let value = self.affine[base + src as usize];
                if value.held == Held::Lazy {
                    self.materialise(src as usize, value);
                }
                return self.affine_store(src, (size, align), loc, a).then_some(());
            }
            _ => return None,
        };
        let (dst, a) = result;
        self.set(dst, a)
    }

    /// Integer compare `cmp` of descriptors `x` and `y`, one of them not uniform, into frame
    /// slot `dst`: its result where it is the same in every lane (lanes all on one side of a
    /// uniform value); None, remembered for the rest of the group, where lanes may differ.
    /// Out of line: the interpreter's loop stays small.
    #[inline(never)]
    fn compare_across(&mut self, cmp: Cmp, bits: u8, dst: Reg, (x, y): (Affine, Affine)) -> Option<bool> {
        let holds = compare_lanes(cmp, bits, x, y, self.grid?);
        if holds.is_none() {
            let slot = self.regs.base() + dst as usize;
            self.undecided.0[slot] = self.undecided.1;
        }
        holds
    }

    /// Integer compare `cmp` of descriptors `x` and `y` (one uniform, lanes on both sides of
    /// it) into frame slot `dst`, where it holds in one range of the group's lanes or outside one
    /// ([`split_lanes`]): its lanes written in three fills, nothing kept of it as a descriptor,
    /// and the split kept for a branch right after it ([`Executor::split`]). None, with nothing
    /// done, for other compares (the lanes then compute it).
    #[inline(never)]
    fn compare_split(&mut self, cmp: Cmp, bits: u8, (dst, n): (Reg, u16), (x, y): (Affine, Affine)) -> Option<()> {
        let grid = self.grid?;
        if n != 1 {
            return None;
        }
        let split = split_lanes(cmp, bits, x, y, grid)?;
        // SAFETY: `dst` is a slot of the current frame and `0..count` the group's lanes (below
        // the stride); no other slice of the file lives.
        let out = unsafe { self.regs.row_mut(self.regs.slot(dst as usize), (0, grid.count)) };
        split.fill(out);
        self.affine[self.regs.base() + dst as usize] = Affine::default();
        self.split = Some(SplitAt { at: self.p, dst, split });
        Some(())
    }

    /// Frame slot `s` is now descriptor `a` alone (its lanes are not written).
    #[inline(always)]
    fn set(&mut self, s: Reg, a: Affine) -> Option<()> {
        self.affine[self.regs.base() + s as usize] = Affine { held: Held::Lazy, ..a };
        Some(())
    }
}
