//! The instructions that end a run of straight-line code or stop the warp: branches and switches
//! (which spend the budget and may part the lanes), calls, barriers, collectives, async copies
//! and waits; and memory fences, which only the hooks hear of. Methods of [`Executor`], inlined
//! into its loop; the warp's shape changes in the caller, `Execution::run`.

use super::super::execution::CopyRegs;
use super::super::execution::Yield;
use super::super::hooks::GroupHooks;
use super::executor::{Active, Event, Executor, SplitAt};
use crate::exec::affine::Split;
use crate::ir::value::mask;
use crate::ir::{self, Fence, Inst, MemOrder, Reg, Scope};

impl<H: GroupHooks> Executor<'_, '_, H> {
    /// Spends one unit of budget per active lane before a branch or call; without enough, the
    /// event that yields to get more (the branch runs again then).
    #[inline(always)]
    fn spend(&mut self) -> Option<Event> {
        let lanes = self.act.lanes.len() as u64;
        if *self.budget < lanes {
            self.p -= 1;
            return Some(Event::Stop(Yield::OutOfBudget));
        }
        *self.budget -= lanes;
        None
    }

    /// Where this instruction is, to tell barrier instructions apart (function and position).
    #[inline(always)]
    fn site(&self) -> u64 {
        (self.func_index as u64) << 32 | self.p as u64
    }

    #[inline(always)]
    pub(super) fn branch(&mut self, target: u32) -> Option<Event> {
        let out = self.spend();
        if out.is_none() {
            self.p = target as usize;
        }
        out
    }

    /// A conditional branch: all lanes one way, or the lanes parted (in `Scratch::then` and
    /// `otherwise`).
    #[inline(always)]
    pub(super) fn branch_if(&mut self, cond: Reg, then: u32, otherwise: u32) -> Option<Event> {
        if let Some(out) = self.spend() {
            return Some(out);
        }
        // Right after a compare split over the group's lanes, its result: no pass over them.
        if let Some(SplitAt { at, dst, split }) = self.split.take()
            && at + 2 == self.p
            && dst == cond
            && self.full
        {
            return self.branch_split(split, then, otherwise);
        }
        let (regs, act) = (self.regs, self.act.lanes);
        let c = regs.slot(cond as usize);
        // One pass counts the lanes that take `then`: all or none go one way.
        let mut taken = 0;
        self.act.each(|l| taken += (regs.get(c + l) != 0) as usize);
        if taken == act.len() || taken == 0 {
            self.p = if taken != 0 { then } else { otherwise } as usize;
            return None;
        }
        let taken_by = move |l: usize| regs.get(c + l) != 0;
        let scratch = &mut *self.scratch;
        part(self.act, taken, taken_by, (&mut scratch.then, &mut scratch.otherwise));
        Some(Event::Diverge { at: self.p - 1, then, otherwise })
    }

    /// [`Executor::branch_if`] on a condition that holds in lanes `lo..hi` of the group only (or
    /// outside them): the lists are slices of the active lanes, which are all the group's.
    fn branch_split(&mut self, Split { lo, hi, inside }: Split, then: u32, otherwise: u32) -> Option<Event> {
        let lanes = self.act.lanes;
        let within = hi - lo;
        if within == 0 || within == lanes.len() {
            let all = (within != 0) == inside;
            self.p = if all { then } else { otherwise } as usize;
            return None;
        }
        let scratch = &mut *self.scratch;
        let (yes, no) = if inside {
            (&mut scratch.then, &mut scratch.otherwise)
        } else {
            (&mut scratch.otherwise, &mut scratch.then)
        };
        yes.clear();
        yes.extend_from_slice(&lanes[lo..hi]);
        no.clear();
        no.extend_from_slice(&lanes[..lo]);
        no.extend_from_slice(&lanes[hi..]);
        Some(Event::Diverge { at: self.p - 1, then, otherwise })
    }

    /// A switch: all lanes to one target, or the lanes parted (in `Scratch::cases`).
    #[inline(always)]
    pub(super) fn switch(&mut self, value: Reg, bits: u8, table: u32) -> Option<Event> {
        if let Some(out) = self.spend() {
            return Some(out);
        }
        let (regs, act) = (self.regs, self.act.lanes);
        let t = &self.func.switch_tables[table as usize];
        let target = |v: u64| {
            let v = v & mask(bits);
            t.cases.iter().find(|c| c.0 & mask(bits) == v).map_or(t.default, |c| c.1)
        };
        let first = target(regs.r(value as usize, act[0] as usize));
        if act.iter().all(|&l| target(regs.r(value as usize, l as usize)) == first) {
            self.p = first as usize;
            return None;
        }
        let cases = &mut self.scratch.cases;
        cases.clear();
        cases.extend(act.iter().map(|&l| (target(regs.r(value as usize, l as usize)), l)));
        cases.sort_by_key(|c| c.0);
        Some(Event::DivergeSwitch { at: self.p - 1 })
    }

    #[inline(always)]
    pub(super) fn call(&mut self, callee: u32, dst: Reg, first_arg: u32, num_args: u16) -> Event {
        if let Some(out) = self.spend() {
            return out;
        }
        Event::Call { callee, dst, first_arg, num_args, return_pc: self.p as u32 }
    }

    #[inline(always)]
    pub(super) fn barrier(&self, fence: Fence, scope: Scope, loc: u32, sub_group: bool) -> Event {
        Event::Stop(Yield::Barrier { fence, scope, loc, site: self.site(), sub_group })
    }

    /// A work-group or sub-group function: each lane's operands and result as absolute slots.
    #[inline(always)]
    pub(super) fn collective(&self, inst: &Inst) -> Event {
        let Inst::Collective { op, bits, dst, src, id, id_n, loc, sub_group } = *inst else { unreachable!() };
        let base = self.regs.base();
        let (src, id, dst) = ((base + src as usize) as u32, (base + id as usize) as u32, (base + dst as usize) as u32);
        Event::Stop(Yield::Collective { site: self.site(), loc, op, bits, src, id, id_n, dst, sub_group })
    }

    #[inline(always)]
    pub(super) fn async_copy(&self, inst: &Inst) -> Event {
        let Inst::AsyncCopy { dst, dst_ptr, src_ptr, count, stride, elem, to_local, event, loc } = *inst else {
            unreachable!()
        };
        let base = self.regs.base();
        let abs = |r: ir::Reg| (base + r as usize) as u32;
        let regs = CopyRegs {
            dst: abs(dst),
            dst_ptr: abs(dst_ptr),
            src_ptr: abs(src_ptr),
            count: abs(count),
            stride: abs(stride),
            event: abs(event),
            elem,
            to_local,
        };
        Event::Stop(Yield::AsyncCopy { site: self.site(), loc, regs })
    }

    #[inline(always)]
    pub(super) fn wait_events(&self, num: Reg, list: Reg, loc: u32) -> Event {
        let base = self.regs.base();
        let (num, list) = ((base + num as usize) as u32, (base + list as usize) as u32);
        Event::Stop(Yield::WaitEvents { site: self.site(), loc, num, list })
    }

    #[inline(always)]
    pub(super) fn fence(&mut self, fence: Fence, order: MemOrder, scope: Scope, loc: u32) {
        if H::ACTIVE {
            for &l in self.act.lanes {
                self.sink.hooks.fence(l, fence, order, scope, loc);
            }
        }
    }
}

/// Parts the lanes of `act` into those that take a branch (`taken_by`), `taken` of them (neither
/// none nor all), and the others: into `yes` and `no`, each in lane order.
///
/// The places in the list of the lanes that take it sum to the least `taken` places can exactly
/// when they are the first ones, and to the most when they are the last (a tree reduction's
/// `lid < s`): each list is then one slice of `act`. Otherwise every lane is written to both
/// lists and each list's end moves on only for its own, with no branch on the condition.
#[inline(always)]
fn part(act: Active, taken: usize, taken_by: impl Fn(usize) -> bool, (yes, no): (&mut Vec<u32>, &mut Vec<u32>)) {
    let (lanes, n) = (act.lanes, act.lanes.len());
    let mut places = 0;
    match act.dense {
        Some((lo, hi)) => (lo..hi).for_each(|l| places += taken_by(l) as usize * (l - lo)),
        None => lanes.iter().enumerate().for_each(|(k, &l)| places += taken_by(l as usize) as usize * k),
    }
    yes.clear();
    no.clear();
    if places == taken * (taken - 1) / 2 {
        yes.extend_from_slice(&lanes[..taken]);
        no.extend_from_slice(&lanes[taken..]);
    } else if places == taken * (2 * n - taken - 1) / 2 {
        yes.extend_from_slice(&lanes[n - taken..]);
        no.extend_from_slice(&lanes[..n - taken]);
    } else {
        // One spare element each: the lane after a list's last one is written there, then cut.
        yes.resize(taken + 1, 0);
        no.resize(n - taken + 1, 0);
        let (mut y, mut o) = (0, 0);
        let (ys, os) = (&mut yes[..], &mut no[..]);
        for &l in lanes {
            let t = taken_by(l as usize) as usize;
            ys[y] = l;
            os[o] = l;
            (y, o) = (y + t, o + 1 - t);
        }
        yes.truncate(y);
        no.truncate(o);
    }
}

#[cfg(test)]
mod tests {
    use super::super::executor::dense;
    use super::*;

    /// Every condition on eight lanes, as one range and as a list with gaps: the same parts as
    /// filtering the lanes one by one.
    #[test]
    fn parts_match_filtering() {
        let lists: [Vec<u32>; 3] = [(0..8).collect(), (3..11).collect(), vec![0, 2, 3, 5, 8, 9, 12, 13]];
        let (mut yes, mut no) = (Vec::new(), Vec::new());
        for lanes in &lists {
            let act = Active { lanes, dense: dense(lanes) };
            for bits in 1..255u32 {
                let taken_by = |l: usize| bits >> lanes.iter().position(|&x| x as usize == l).unwrap() & 1 == 1;
                let want: (Vec<u32>, Vec<u32>) = lanes.iter().partition(|&&l| taken_by(l as usize));
                part(act, bits.count_ones() as usize, taken_by, (&mut yes, &mut no));
                assert_eq!((&yes, &no), (&want.0, &want.1), "lanes {lanes:?}, condition {bits:08b}");
            }
        }
    }
}
