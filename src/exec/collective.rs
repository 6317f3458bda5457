//! Work-group collective functions (`work_group_all/any/broadcast/reduce/scan_*`, and their
//! sub-group forms, a sub-group being the whole work-group here): given every work-item's
//! contribution in local linear order, the result each one receives. And the group's async
//! copies (`async_work_group_copy`, `async_work_group_strided_copy`, `wait_group_events`), which
//! are collectives too: [`AsyncCopies`] makes each copy once for the group, keeps its events and
//! checks that the work-items agree. It sees the lanes' registers and memory at the moment the
//! scheduler completes a call, not how they got there.

use super::execution::{self, CopyRegs, Execution, Group};
use super::half;
use super::hooks::GroupHooks;
use super::memory::{Fault, Memory};
use super::warp::Lanes;
use super::{AsyncProblem, Finding};
use crate::ir::value::{mask, sign_extend};
use crate::ir::{CollectiveOp, GroupArith, HalfRound};

/// One work-item's part in a collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Contribution {
    /// Its value, `bits` wide (a boolean for all/any).
    pub value: u64,
    /// For a broadcast: the local linear id of the work-item whose value it asks for.
    pub source: u64,
}

fn float(v: u64, bits: u8) -> f64 {
    match bits {
        64 => f64::from_bits(v),
        16 => half::to_f32(v as u16) as f64,
        _ => f32::from_bits(v as u32) as f64,
    }
}

fn bits_of(x: f64, bits: u8) -> u64 {
    match bits {
        64 => x.to_bits(),
        16 => half::from_f64(x, HalfRound::Rte) as u64,
        _ => (x as f32).to_bits() as u64,
    }
}

/// The neutral element of an arithmetic (the first value of an exclusive scan).
fn identity(arith: GroupArith, bits: u8) -> u64 {
    let m = mask(bits);
    match arith {
        GroupArith::IAdd | GroupArith::UMax => 0,
        GroupArith::FAdd => bits_of(0.0, bits),
        GroupArith::UMin => m,
        GroupArith::SMin => m >> 1,
        GroupArith::SMax => (m >> 1) + 1,
        GroupArith::FMin => bits_of(f64::INFINITY, bits),
        GroupArith::FMax => bits_of(f64::NEG_INFINITY, bits),
    }
}

fn combine(arith: GroupArith, bits: u8, a: u64, b: u64) -> u64 {
    let m = mask(bits);
    match arith {
        GroupArith::IAdd => a.wrapping_add(b) & m,
        GroupArith::UMin => (a & m).min(b & m),
        GroupArith::UMax => (a & m).max(b & m),
        GroupArith::SMin => (sign_extend(a, bits).min(sign_extend(b, bits)) as u64) & m,
        GroupArith::SMax => (sign_extend(a, bits).max(sign_extend(b, bits)) as u64) & m,
        // Rounded to the type at every step, as a device adding in order would.
        GroupArith::FAdd => bits_of(float(a, bits) + float(b, bits), bits),
        GroupArith::FMin => bits_of(float(a, bits).min(float(b, bits)), bits),
        GroupArith::FMax => bits_of(float(a, bits).max(float(b, bits)), bits),
    }
}

/// The result of each work-item, in the order of `parts` (local linear order).
pub fn results(op: CollectiveOp, bits: u8, parts: &[Contribution]) -> Vec<u64> {
    match op {
        CollectiveOp::All => {
            let all = parts.iter().all(|p| p.value != 0) as u64;
            vec![all; parts.len()]
        }
        CollectiveOp::Any => {
            let any = parts.iter().any(|p| p.value != 0) as u64;
            vec![any; parts.len()]
        }
        CollectiveOp::Broadcast => {
            parts.iter().map(|p| parts.get(p.source as usize).map_or(0, |from| from.value & mask(bits))).collect()
        }
        CollectiveOp::Reduce(arith) => {
            let total = parts.iter().fold(identity(arith, bits), |acc, p| combine(arith, bits, acc, p.value));
            vec![total; parts.len()]
        }
        CollectiveOp::InclusiveScan(arith) => {
            let mut acc = identity(arith, bits);
            parts
                .iter()
                .map(|p| {
                    acc = combine(arith, bits, acc, p.value);
                    acc
                })
                .collect()
        }
        CollectiveOp::ExclusiveScan(arith) => {
            let mut acc = identity(arith, bits);
            parts
                .iter()
                .map(|p| {
                    let before = acc;
                    acc = combine(arith, bits, acc, p.value);
                    before
                })
                .collect()
        }
    }
}

/// A work-group gathered at a collective point (an async copy or a wait): the running NDRange,
/// the group's lanes and shared state, and its hooks; what completing the collective reads and
/// writes.
pub struct Gathered<'g, 'a, H> {
    pub exec: &'g Execution<'a>,
    pub lanes: &'g mut Lanes,
    pub group: &'g mut Group,
    pub hooks: &'g mut H,
}

/// The names of a copy's arguments (as OpenCL C names them), in the order [`copy_args`] reads them.
const COPY_ARGS: [&str; 5] = ["dst", "src", "num_gentypes", "stride", "event"];

/// A copy's arguments as lane `l` passes them.
fn copy_args(lanes: &Lanes, regs: &CopyRegs, l: u32) -> [u64; 5] {
    let r = |slot: u32| lanes.regs[slot as usize * lanes.stride + l as usize];
    [r(regs.dst_ptr), r(regs.src_ptr), r(regs.count), r(regs.stride), r(regs.event)]
}

/// An event of the group that no wait has completed yet, and the copy that first used it.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    event: u64,
    loc: u32,
}

/// The async copies of one work-group. A copy is made when every work-item of the group has
/// reached it (or when the rest of the group waits elsewhere), once, with the arguments of the
/// lowest work-item there: the others get the same event, whatever they passed, and a finding
/// says they disagreed. A wait completes the events of the lowest work-item there; a copy of an
/// event no wait names before the group ends, and a wait on an event not in flight, are findings
/// too. The data moves when the copy is made; for the race detector the copy stays in flight
/// until the barrier of the wait that names its event.
#[derive(Debug, Default)]
pub struct AsyncCopies {
    /// The last fresh event handed out (events are 1, 2, ... within a group).
    next_event: u64,
    in_flight: Vec<InFlight>,
    /// The events of the wait being completed, and another work-item's (kept for their memory).
    events: Vec<u64>,
    other: Vec<u64>,
}

impl AsyncCopies {
    /// Forgets everything: a fresh group.
    pub fn reset(&mut self) {
        self.next_event = 0;
        self.in_flight.clear();
    }

    /// Makes the copy at `loc` for `members` (the lanes there, in local linear order; not empty),
    /// tells the hooks, and gives every member its event.
    pub fn copy<H: GroupHooks>(&mut self, at: Gathered<H>, loc: u32, regs: CopyRegs, members: &[u32]) {
        let Gathered { exec, lanes, group, hooks } = at;
        let first = members[0];
        let args = copy_args(lanes, &regs, first);
        let differs = members.iter().find_map(|&l| {
            let other = copy_args(lanes, &regs, l);
            let i = (0..args.len()).find(|&i| other[i] != args[i])?;
            Some((lanes.local_id(l as usize), COPY_ARGS[i]))
        });
        report_non_uniform(false, loc, members, lanes, group, differs);
        let [dst_ptr, src_ptr, n, step, given] = args;
        let event = if given == 0 {
            self.next_event += 1;
            self.next_event
        } else {
            given
        };
        if !self.in_flight.iter().any(|f| f.event == event) {
            self.in_flight.push(InFlight { event, loc });
        }
        if H::ACTIVE {
            hooks.async_copy(first, event, loc);
        }
        let elem = regs.elem as u64;
        let Group { local, local_regions, findings, .. } = group;
        let global_id = lanes.global_id(first as usize);
        let lane = &mut lanes.lane[first as usize];
        let mut mem = Memory { globals: exec.globals, local, local_regions, private: &mut lane.private };
        // Element k comes from source element k (k * stride when gathering into local memory) and
        // goes to destination element k (k * stride when scattering to global memory).
        for k in (0..n).take_while(|_| elem > 0) {
            let (d, s) = if regs.to_local { (k, k.wrapping_mul(step)) } else { (k.wrapping_mul(step), k) };
            let from = src_ptr.wrapping_add(s.wrapping_mul(elem));
            let to = dst_ptr.wrapping_add(d.wrapping_mul(elem));
            if let Err((f, store)) = mem.copy(to, from, elem as usize) {
                findings.push(execution::oob(exec, &mem, f, store, global_id, loc));
                break;
            }
            if H::ACTIVE {
                execution::observe_copy(&mut mem, to, from, elem as usize, loc, &mut |a| hooks.group_access(a));
            }
        }
        for &l in members {
            lanes.regs[regs.dst as usize * lanes.stride + l as usize] = event;
        }
    }

    /// Completes the `wait_group_events` at `loc` for `members` (in local linear order; not
    /// empty): `num` events in the array at `list` (absolute slots).
    pub fn wait<H: GroupHooks>(&mut self, at: Gathered<H>, loc: u32, (num, list): (u32, u32), members: &[u32]) {
        let Gathered { exec, lanes, group, hooks } = at;
        let stride = lanes.stride;
        let first = members[0];
        let operands = |lanes: &Lanes, l: u32| {
            let r = |slot: u32| lanes.regs[slot as usize * stride + l as usize];
            (r(num), r(list))
        };
        let mut events = std::mem::take(&mut self.events);
        let mut other = std::mem::take(&mut self.other);
        let (n, at) = operands(lanes, first);
        read_events(exec, group, lanes, first as usize, (n, at), &mut events, loc);
        let mut differs = None;
        for &l in &members[1..] {
            let (m, at) = operands(lanes, l);
            read_events(exec, group, lanes, l as usize, (m, at), &mut other, loc);
            if m != n || other != events {
                let what = if m != n { "num_events" } else { "event_list" };
                differs = Some((lanes.local_id(l as usize), what));
                break;
            }
        }
        report_non_uniform(true, loc, members, lanes, group, differs);
        for &event in &events {
            if self.in_flight.iter().any(|f| f.event == event) {
                if H::ACTIVE {
                    hooks.wait_event(first, event);
                }
            } else {
                group.findings.push(Finding::AsyncCopy {
                    problem: AsyncProblem::InvalidEvent,
                    wait: true,
                    group: group.id,
                    reached: members.len() as u64,
                    items: lanes.count as u64,
                    differs: None,
                    first: lanes.local_id(first as usize),
                    event,
                    loc,
                });
            }
        }
        self.in_flight.retain(|f| !events.contains(&f.event));
        self.events = events;
        self.other = other;
    }

    /// The group has finished: every copy whose event is still in flight is a finding.
    pub fn finish(&mut self, group: &mut Group) {
        for f in self.in_flight.drain(..) {
            group.findings.push(Finding::AsyncCopy {
                problem: AsyncProblem::Unwaited,
                wait: false,
                group: group.id,
                reached: 0,
                items: 0,
                differs: None,
                first: [0; 3],
                event: f.event,
                loc: f.loc,
            });
        }
    }
}

/// A call at `loc` reached by only `members` of the group, or whose arguments `differs`, is a
/// non-uniform finding.
fn report_non_uniform(
    wait: bool,
    loc: u32,
    members: &[u32],
    lanes: &Lanes,
    group: &mut Group,
    differs: Option<([u64; 3], &'static str)>,
) {
    let items = lanes.count as u64;
    if members.len() as u64 == items && differs.is_none() {
        return;
    }
    group.findings.push(Finding::AsyncCopy {
        problem: AsyncProblem::NonUniform,
        wait,
        group: group.id,
        reached: members.len() as u64,
        items,
        differs,
        first: lanes.local_id(members[0] as usize),
        event: 0,
        loc,
    });
}

/// Reads the `n` events at `at` that lane `l` names into `out`; an access outside memory is an
/// out-of-bounds finding and ends the list.
fn read_events(
    exec: &Execution,
    group: &mut Group,
    lanes: &mut Lanes,
    l: usize,
    (n, at): (u64, u64),
    out: &mut Vec<u64>,
    loc: u32,
) {
    out.clear();
    let Group { local, local_regions, findings, .. } = group;
    let global_id = lanes.global_id(l);
    let mut mem = Memory { globals: exec.globals, local, local_regions, private: &mut lanes.lane[l].private };
    for i in 0..n {
        match mem.load(at.wrapping_add(i.wrapping_mul(8)), 8) {
            Ok(event) => out.push(event),
            Err(f @ Fault { .. }) => {
                findings.push(execution::oob(exec, &mem, f, false, global_id, loc));
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(values: &[i32]) -> Vec<Contribution> {
        values.iter().map(|&v| Contribution { value: v as u32 as u64, source: 0 }).collect()
    }

    fn signed(results: Vec<u64>) -> Vec<i32> {
        results.into_iter().map(|v| v as u32 as i32).collect()
    }

    #[test]
    fn integer_reductions_and_scans() {
        let parts = ints(&[3, -1, 4, -1, 5]);
        assert_eq!(signed(results(CollectiveOp::Reduce(GroupArith::IAdd), 32, &parts)), vec![10; 5]);
        assert_eq!(signed(results(CollectiveOp::Reduce(GroupArith::SMin), 32, &parts)), vec![-1; 5]);
        assert_eq!(
            signed(results(CollectiveOp::Reduce(GroupArith::UMax), 32, &parts)),
            vec![-1; 5],
            "-1 is 0xffffffff"
        );
        assert_eq!(signed(results(CollectiveOp::InclusiveScan(GroupArith::IAdd), 32, &parts)), vec![3, 2, 6, 5, 10]);
        assert_eq!(signed(results(CollectiveOp::ExclusiveScan(GroupArith::IAdd), 32, &parts)), vec![0, 3, 2, 6, 5]);
        assert_eq!(
            signed(results(CollectiveOp::ExclusiveScan(GroupArith::SMax), 32, &parts)),
            vec![i32::MIN, 3, 3, 4, 4],
            "an exclusive max scan starts from the smallest value"
        );
        assert_eq!(
            results(CollectiveOp::ExclusiveScan(GroupArith::UMin), 32, &parts)[0],
            u32::MAX as u64,
            "an exclusive unsigned min scan starts from the largest value"
        );
    }

    #[test]
    fn float_scans_add_in_order() {
        let parts: Vec<Contribution> =
            [1.0f32, 1e8, -1e8, 0.5].iter().map(|f| Contribution { value: f.to_bits() as u64, source: 0 }).collect();
        let scan: Vec<f32> = results(CollectiveOp::InclusiveScan(GroupArith::FAdd), 32, &parts)
            .into_iter()
            .map(|v| f32::from_bits(v as u32))
            .collect();
        assert_eq!(scan, vec![1.0, 1e8, 0.0, 0.5], "each step rounds to float, in local id order");
        let min = results(CollectiveOp::ExclusiveScan(GroupArith::FMin), 32, &parts)[0];
        assert_eq!(f32::from_bits(min as u32), f32::INFINITY);
    }

    #[test]
    fn half_reductions_round_to_half() {
        let parts: Vec<Contribution> =
            [0x3c00u64, 0x4000, 0x3800, 0xbc00].iter().map(|&v| Contribution { value: v, source: 0 }).collect();
        assert_eq!(results(CollectiveOp::Reduce(GroupArith::FAdd), 16, &parts), vec![0x4100; 4], "1 + 2 + 0.5 - 1");
        assert_eq!(results(CollectiveOp::Reduce(GroupArith::FMin), 16, &parts), vec![0xbc00; 4]);
        assert_eq!(results(CollectiveOp::ExclusiveScan(GroupArith::FMax), 16, &parts)[0], 0xfc00, "-inf");
    }

    #[test]
    fn all_any_and_broadcast() {
        let flags = ints(&[1, 1, 0]);
        assert_eq!(results(CollectiveOp::All, 1, &flags), vec![0; 3]);
        assert_eq!(results(CollectiveOp::Any, 1, &flags), vec![1; 3]);
        let parts: Vec<Contribution> = [10u64, 20, 30].iter().map(|&v| Contribution { value: v, source: 2 }).collect();
        assert_eq!(results(CollectiveOp::Broadcast, 32, &parts), vec![30; 3]);
    }
}
