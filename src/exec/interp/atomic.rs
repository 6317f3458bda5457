//! Atomic instructions: each lane's read-modify-write, in lane order, told to the hooks (as one
//! batch when every lane is on `__local` memory), and the spin watch that notices a work-item
//! re-reading an unchanging value. Lanes that all update `__local` values in bounds (histogram
//! bins) take one loop with the operation fixed; anything else goes lane by lane through the
//! general path. A method of [`Executor`], inlined into its loop.

use super::super::execution::Yield;
use super::super::hooks::{AtomicInst, GroupHooks, LaneAtomic};
use super::super::memory::{
    ANY, Fault, FaultKind, LOAD, Memory, SPACE_GLOBAL, SPACE_LOCAL, SPACE_SHIFT, STORE, local_word, split, update_local,
};
use super::super::ops::atomic_update;
use super::super::warp::SPIN_REPEATS;
use super::executor::{Event, Executor};
use crate::exec::execution::{observed, oob};
use crate::ir::{AtomicOp, Inst, Reg};

impl<H: GroupHooks> Executor<'_, '_, H> {
    /// An atomic of every active lane; the event that stops the warp before it (a stepping
    /// scheduler's turn) or after it (every lane spins), if any.
    #[inline(always)]
    pub(super) fn atomic(&mut self, inst: &Inst) -> Option<Event> {
        let Inst::Atomic { op, bits, order, fail_order, scope, dst, ptr, value, comparator, loc } = *inst else {
            unreachable!()
        };
        let (regs, act) = (self.regs, self.act.lanes);
        let stop_at_atomics = self.exec.stop_at_atomics;
        if stop_at_atomics && !std::mem::take(self.granted) {
            self.p -= 1;
            let addr = regs.r(ptr as usize, act[0] as usize);
            let size = bits as u32 / 8;
            return Some(Event::Stop(Yield::AtAtomic { loc, op, addr, size, plain: false }));
        }
        let size = bits as usize / 8;
        let inst = AtomicInst { op, order, fail_order, scope, size: size as u32, loc };
        self.scratch.atomics.clear();
        // All lanes on `__local` memory: the hooks hear of them in one go, after.
        let batch;
        if !stop_at_atomics && self.local_words(ptr, size) {
            batch = H::ACTIVE;
            let regs = (dst, ptr, value, comparator);
            // The common updates with the operation and width fixed, so each loop is a few
            // instructions per lane.
            macro_rules! fixed {
                ($($op:ident),*) => {
                    match (size, op) {
                        $(
                            (4, AtomicOp::$op) => {
                                self.local_atomics::<4>(|o, v, c| atomic_update(AtomicOp::$op, 32, o, v, c), op, regs, loc, batch)
                            }
                            (8, AtomicOp::$op) => {
                                self.local_atomics::<8>(|o, v, c| atomic_update(AtomicOp::$op, 64, o, v, c), op, regs, loc, batch)
                            }
                        )*
                        (4, _) => self.local_atomics::<4>(|o, v, c| atomic_update(op, 32, o, v, c), op, regs, loc, batch),
                        _ => self.local_atomics::<8>(|o, v, c| atomic_update(op, 64, o, v, c), op, regs, loc, batch),
                    }
                };
            }
            fixed!(Inc, Add, Dec, Sub);
        } else {
            batch = H::ACTIVE
                && !stop_at_atomics
                && act.iter().all(|&l| regs.r(ptr as usize, l as usize) >> SPACE_SHIFT == SPACE_LOCAL);
            self.atomics_lane_by_lane(&inst, (op, bits), (dst, ptr, value, comparator), batch);
        }
        if batch && !self.scratch.atomics.is_empty() {
            self.sink.hooks.local_atomics(&self.scratch.atomics, &inst);
        }
        // A stepped work-item stops before every atomic anyway: its count only grows, for the
        // stepping scheduler to read (`Choice::unchanged`).
        if !stop_at_atomics && act.iter().all(|&l| self.lanes[l as usize].spin.repeats >= SPIN_REPEATS) {
            for &l in act {
                self.lanes[l as usize].spin.repeats = 0;
            }
            let s = self.lanes[act[0] as usize].spin;
            return Some(Event::Stop(Yield::Spin { loc: s.loc, addr: s.addr, value: s.value }));
        }
        None
    }

    /// Whether every active lane's address in `ptr` is a `size`-byte value of `__local` memory,
    /// aligned and in bounds; if so, where each starts in the local arena, in `Scratch::values`.
    #[inline(always)]
    fn local_words(&mut self, ptr: Reg, size: usize) -> bool {
        let regs = self.regs;
        let at = regs.slot(ptr as usize);
        let arena = self.space.local().len();
        let regions = self.space.local_regions;
        let words = &mut self.scratch.values;
        words.clear();
        for &l in self.act.lanes {
            match local_word(regions, regs.get(at + l as usize), size, size) {
                Some(w) if w + size <= arena => words.push(w as u64),
                _ => return false,
            }
        }
        true
    }

    /// The atomics of the active lanes when [`Executor::local_words`] found them all on
    /// `__local` values (a histogram's bins): each lane's update in lane order, without the
    /// general path's checks; the hooks hear of them as one batch (`batch`).
    #[inline(always)]
    fn local_atomics<const N: usize>(
        &mut self,
        update: impl Fn(u64, u64, u64) -> Option<u64>,
        op: AtomicOp,
        (dst, ptr, value, comparator): (Reg, Reg, Reg, Reg),
        loc: u32,
        batch: bool,
    ) {
        let regs = self.regs;
        let (d, a) = (regs.slot(dst as usize), regs.slot(ptr as usize));
        let (v, c) = (regs.slot(value as usize), regs.slot(comparator as usize));
        let local = self.space.local();
        for (&l, &at) in self.act.lanes.iter().zip(&self.scratch.values) {
            let l = l as usize;
            let (addr, x, y) = (regs.get(a + l), regs.get(v + l), regs.get(c + l));
            let Some((old, new)) = update_local::<N>(local, at as usize, |o| update(o, x, y)) else { continue };
            regs.set(d + l, if op == AtomicOp::FlagTestAndSet { (old != 0) as u64 } else { old });
            if batch {
                self.scratch.atomics.push(LaneAtomic { item: l as u32, addr, read: old, wrote: new });
            }
            self.lanes[l].spin.atomic(loc, addr, old, new);
        }
        self.flags.spinning = true;
    }

    /// The atomics of the active lanes one by one, through the general path (any space, any
    /// fault, a stepping scheduler's record).
    #[inline(always)]
    fn atomics_lane_by_lane(
        &mut self,
        inst: &AtomicInst,
        (op, bits): (AtomicOp, u8),
        (dst, ptr, value, comparator): (Reg, Reg, Reg, Reg),
        batch: bool,
    ) {
        let (regs, act) = (self.regs, self.act.lanes);
        let (size, loc, stop_at_atomics) = (bits as usize / 8, inst.loc, self.exec.stop_at_atomics);
        let want = match op {
            AtomicOp::Load => LOAD,
            AtomicOp::Store => STORE,
            _ => LOAD | STORE,
        };
        for &l in act {
            let l = l as usize;
            let (addr, v, c) = (regs.r(ptr as usize, l), regs.r(value as usize, l), regs.r(comparator as usize, l));
            let ls = &mut self.lanes[l];
            if addr & (size as u64 - 1) != 0 {
                self.sink.misaligned(addr, size as u64, size as u64, "atomic", self.ids.global(l), loc);
            }
            let mut mem = self.space.of(&mut ls.private);
            let hooks = &mut *self.sink.hooks;
            let update = move |old| atomic_update(op, bits, old, v, c);
            let mut attempt = |mem: &mut Memory, want| {
                if H::ACTIVE && split(addr).0 == SPACE_GLOBAL {
                    hooks.atomic_section(addr, || mem.atomic_as(addr, size, want, &update))
                } else {
                    mem.atomic_as(addr, size, want, &update)
                }
            };
            // `__local` memory (histogram bins) first, without the general path.
            let mut result = match mem.atomic_local(addr, size, &update) {
                Some(done) => Ok(done),
                None => attempt(&mut mem, want),
            };
            if let Err(f) = result
                && f.mode_only()
            {
                // Reported, and performed as a device would (`attempt` holds the hooks).
                self.sink.findings.push(oob(self.exec, &mem, f, op != AtomicOp::Load, self.ids.global(l), loc));
                result = attempt(&mut mem, ANY).map_err(|_| Fault { kind: FaultKind::Bounds, ..f });
                if result.is_err() {
                    regs.set_r(dst as usize, l, 0);
                    continue;
                }
            }
            match result {
                Ok((old, new)) => {
                    regs.set_r(dst as usize, l, if op == AtomicOp::FlagTestAndSet { (old != 0) as u64 } else { old });
                    let lane = LaneAtomic { item: l as u32, addr, read: old, wrote: new };
                    if batch {
                        self.scratch.atomics.push(lane);
                    } else if H::ACTIVE && observed(addr) {
                        let mut bytes = [0; 8];
                        self.sink.hooks.access(l as u32, &lane.access(inst, &mut bytes));
                    }
                    if stop_at_atomics {
                        // A stepped atomic: what it read and wrote, for the record.
                        ls.effect = ((op != AtomicOp::Store).then_some(old), new);
                    }
                    ls.spin.atomic(loc, addr, old, new);
                    self.flags.spinning = true;
                }
                Err(f) => {
                    self.sink.fault(&mem, f, op != AtomicOp::Load, self.ids.global(l), loc);
                    regs.set_r(dst as usize, l, 0);
                }
            }
        }
    }
}
