//! The interpreter: runs a warp (lanes that share a program counter, see [`super::warp`]) over
//! the IR in lockstep until it reaches a barrier, spins, finishes, or fails.
//!
//! Each instruction is decoded once and applied to every active lane of the warp's top entry;
//! registers are slot-major, so a lane loop walks one array. A conditional branch whose lanes
//! disagree parts the warp into paths that meet again at the branch's immediate post-dominator
//! (`ir::Function::joins`). The hot loop allocates nothing and does not hash, format or dispatch
//! dynamically; the scalar meaning of each operation lives in [`super::ops`].
//!
//! This file moves the warp: it runs the top entry's straight-line code ([`Execution::run`]),
//! then parts, pops, calls or returns as the code asks. The run state of that code is
//! [`executor::Executor`], whose loop decodes each instruction and hands it to the method of its
//! family: `arith` (values in registers), `access` (plain memory), `atomic`, `control`
//! (branches, calls, barriers, collectives), `images`, `output` (printf, assert); `faults`
//! builds the findings they report. What every part of the executor shares (the NDRange, the
//! group, why a warp stopped) lives below in [`super::execution`].

mod access;
mod affine;
mod arith;
mod atomic;
mod control;
mod executor;
mod faults;
mod images;
mod output;

use super::ExecError;
use super::execution::{Execution, Group, Yield};
use super::hooks::GroupHooks;
use super::warp::{Lanes, Warp};
use crate::ir::reconverge::EXIT;
use crate::ir::{self, Inst};
pub use executor::Scratch;
use executor::{Borrowed, Entry, Event, Executor, dense};

/// The most call frames a warp may stack (recursion is rejected earlier; this bounds depth).
const MAX_FRAMES: usize = 1024;

/// The source location of a warp's next instruction (for messages).
pub fn location(module: &ir::Module, warp: &Warp) -> String {
    let func = &module.functions[warp.func as usize];
    let pc = warp.top().map_or(0, |e| e.pc) as usize;
    let at = (pc + 1).min(func.locs.len());
    // The nearest located instruction before, else after (code before the first line); in a
    // kernel's entry stub without lines, the function it is about to call.
    let near = |locs: &[u32], at: usize| locs[..at].iter().rev().chain(&locs[at..]).copied().find(|&l| l != u32::MAX);
    let callee = match func.code.get(pc) {
        Some(Inst::Call { func: callee, .. }) => near(&module.functions[*callee as usize].locs, 0),
        _ => None,
    };
    let loc = near(&func.locs, at).or(callee);
    loc.map(|l| module.location(l)).unwrap_or_else(|| "unknown location".into())
}

impl<'a> Execution<'a> {
    /// Runs `warp` until it yields. `budget` counts down branches and calls, one per active
    /// lane; when it has less than the active lanes need, the warp yields
    /// [`Yield::OutOfBudget`] before the branch or call.
    pub fn run<H: GroupHooks>(
        &self,
        warp: &mut Warp,
        lanes: &mut Lanes,
        group: &mut Group,
        hooks: &mut H,
        budget: &mut u64,
        scratch: &mut Scratch,
    ) -> Result<Yield, ExecError> {
        if self.uninit.is_some() {
            self.run_as::<H, true>(warp, lanes, group, hooks, budget, scratch)
        } else {
            self.run_as::<H, false>(warp, lanes, group, hooks, budget, scratch)
        }
    }

    /// [`Execution::run`], with the uninitialised-value check (`U`) or without it. Out of line:
    /// each instantiation keeps the straight-line loop inlined as a single one did.
    #[inline(never)]
    fn run_as<H: GroupHooks, const U: bool>(
        &self,
        warp: &mut Warp,
        lanes: &mut Lanes,
        group: &mut Group,
        hooks: &mut H,
        budget: &mut u64,
        scratch: &mut Scratch,
    ) -> Result<Yield, ExecError> {
        let module = self.module;
        let stride = lanes.stride;
        'frames: loop {
            let func_index = warp.func;
            let func = &module.functions[func_index as usize];
            let base = warp.base as usize;
            loop {
                let Some(top) = warp.top() else { return Ok(Yield::Done) };
                if top.pc == EXIT {
                    // Paths that met only at the exit: their lanes have all returned.
                    if warp.frames.is_empty() {
                        warp.pop();
                    } else if let Some(frame) = warp.returned() {
                        restore_private(lanes, warp.active(), frame.private_mark);
                    }
                    continue 'frames;
                }
                let mut granted = std::mem::take(&mut warp.granted);
                if H::ACTIVE && self.report_lanes {
                    hooks.lanes_active(warp.lanes(top));
                }
                let entry = Entry { func_index, base, act: warp.lanes(top), pc: top.pc as usize };
                let parts = Borrowed {
                    lanes: &mut *lanes,
                    group: &mut *group,
                    hooks: &mut *hooks,
                    budget: &mut *budget,
                    granted: &mut granted,
                    scratch: &mut *scratch,
                };
                let event = self.straight::<H, U>(entry, top.join, parts);
                warp.granted = granted;
                let (event, pc) = event?;
                match event {
                    Event::Join => warp.pop(),
                    Event::Stop(y) => {
                        warp.set_pc(pc as u32);
                        return Ok(y);
                    }
                    Event::Diverge { at, then, otherwise } => {
                        let join = func.joins[at];
                        warp.diverge(join, &[(otherwise, &scratch.otherwise), (then, &scratch.then)]);
                    }
                    Event::DivergeSwitch { at } => {
                        let join = func.joins[at];
                        scratch.then.clear();
                        let mut paths: Vec<(u32, std::ops::Range<usize>)> = Vec::new();
                        for chunk in scratch.cases.chunk_by(|a, b| a.0 == b.0) {
                            let start = scratch.then.len();
                            scratch.then.extend(chunk.iter().map(|c| c.1));
                            paths.push((chunk[0].0, start..scratch.then.len()));
                        }
                        // The first case's lanes run first: they go on top.
                        let paths: Vec<(u32, &[u32])> =
                            paths.into_iter().rev().map(|(t, r)| (t, &scratch.then[r])).collect();
                        warp.diverge(join, &paths);
                    }
                    Event::Call { callee, dst, first_arg, num_args, return_pc } => {
                        if warp.frames.len() >= MAX_FRAMES {
                            return Err(ExecError::Fault("call stack too deep".into()));
                        }
                        let target = &module.functions[callee as usize];
                        // The group's start made room for every frame (`group::frame_bases`).
                        let new_base = self.frame_bases[callee as usize] as usize;
                        let act = warp.active();
                        lanes.lay(callee, new_base as u32, &target.template);
                        let args = &func.args[first_arg as usize..first_arg as usize + num_args as usize];
                        for (arg, &(param, n)) in args.iter().zip(&target.params) {
                            lanes.pass(base + arg.reg as usize, new_base + param as usize, n as usize, act);
                            for k in 0..n as usize {
                                let from = (base + arg.reg as usize + k) * stride;
                                let to = (new_base + param as usize + k) * stride;
                                copy_lanes(&mut lanes.regs, from, to, act);
                            }
                            if U {
                                let (from, to) = (base + arg.reg as usize, new_base + param as usize);
                                group.uninit.copy_slots(from, to, n as usize, stride, act);
                            }
                        }
                        let mark = lanes.lane[act[0] as usize].private.len() as u32;
                        warp.call(callee, new_base as u32, return_pc, (base + dst as usize) as u32, mark);
                        continue 'frames;
                    }
                    Event::Return { src, n } => {
                        let Some(&frame) = warp.frames.last() else {
                            match dense(warp.active()) {
                                Some((lo, hi)) => lanes.done[lo..hi].fill(true),
                                None => warp.active().iter().for_each(|&l| lanes.done[l as usize] = true),
                            }
                            warp.finished_top();
                            if warp.depth() == 0 {
                                return Ok(Yield::Done);
                            }
                            continue 'frames;
                        };
                        lanes.forget(frame.dst as usize, n as usize);
                        for k in 0..n as usize {
                            let from = (base + src as usize + k) * stride;
                            let to = (frame.dst as usize + k) * stride;
                            copy_lanes(&mut lanes.regs, from, to, warp.active());
                        }
                        if U {
                            let (from, to) = (base + src as usize, frame.dst as usize);
                            group.uninit.copy_slots(from, to, n as usize, stride, warp.active());
                        }
                        if let Some(frame) = warp.returned() {
                            restore_private(lanes, warp.active(), frame.private_mark);
                        }
                        continue 'frames;
                    }
                }
            }
        }
    }

    /// Runs the lanes of `entry` from its first instruction until something changes the warp's
    /// shape or stops it, or they reach `join`: the event, and where the entry goes on. The loop
    /// is compiled twice, for the baseline CPU and for x86-64-v3 ([`super::cpu`]); this picks the
    /// copy the CPU can run.
    #[inline(always)]
    fn straight<H: GroupHooks, const U: bool>(
        &self,
        entry: Entry,
        join: u32,
        parts: Borrowed<H>,
    ) -> Result<(Event, usize), ExecError> {
        #[cfg(target_arch = "x86_64")]
        if super::cpu::wide() {
            // SAFETY: `cpu::wide` found every feature `straight_v3` is compiled with on this CPU.
            return unsafe { self.straight_v3::<H, U>(entry, join, parts) };
        }
        self.straight_baseline::<H, U>(entry, join, parts)
    }

    /// [`Execution::straight`] for the baseline CPU. Out of line, as one function per
    /// instantiation: the loop's state lives in its registers.
    #[inline(never)]
    fn straight_baseline<H: GroupHooks, const U: bool>(
        &self,
        entry: Entry,
        join: u32,
        parts: Borrowed<H>,
    ) -> Result<(Event, usize), ExecError> {
        self.straight_body::<H, U>(entry, join, parts)
    }

    /// [`Execution::straight`] compiled for x86-64-v3. Call only where [`super::cpu::wide`] holds.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma,bmi1,bmi2,lzcnt,movbe,popcnt,f16c")]
    #[inline(never)]
    fn straight_v3<H: GroupHooks, const U: bool>(
        &self,
        entry: Entry,
        join: u32,
        parts: Borrowed<H>,
    ) -> Result<(Event, usize), ExecError> {
        self.straight_body::<H, U>(entry, join, parts)
    }

    /// The loop itself, inlined into each copy.
    #[inline(always)]
    fn straight_body<H: GroupHooks, const U: bool>(
        &self,
        entry: Entry,
        join: u32,
        parts: Borrowed<H>,
    ) -> Result<(Event, usize), ExecError> {
        let mut ex = Executor::new::<U>(self, entry, parts);
        let event = ex.straight::<U>(join)?;
        Ok((event, ex.p))
    }
}

/// Gives back the private memory of a returned call frame.
fn restore_private(lanes: &mut Lanes, active: &[u32], mark: u32) {
    for &l in active {
        lanes.lane[l as usize].private.truncate(mark as usize);
    }
}

/// Copies the words of lanes `act` (sorted) from the slot at word `from` to the slot at word `to`:
/// one block copy when the lanes are one range (a call's arguments for a whole group).
fn copy_lanes(regs: &mut [u64], from: usize, to: usize, act: &[u32]) {
    match dense(act) {
        Some((lo, hi)) => regs.copy_within(from + lo..from + hi, to + lo),
        None => {
            for &l in act {
                regs[to + l as usize] = regs[from + l as usize];
            }
        }
    }
}
