//! What the scheduler concludes when a group cannot go on: a deadlock it can prove, a
//! barrier that only some work-items can ever reach again, or a forward-progress hang it cannot
//! tell from slow progress. It owns the proofs (the group's state compared with itself one round
//! later) and the hang's message; it cannot see other groups, only what the launch shares about
//! them (`NdRangeState`), which its caller consults.

use super::{ExecError, Finding, Group, GroupHooks, GroupRun, Lanes, PassContext, SPIN_REPEATS, State, Warp};

/// A group's state at a divergent barrier (see [`GroupRun::endless_divergence`]).
pub(super) struct Snapshot {
    site: u64,
    regs: Vec<u64>,
    private: Vec<Vec<u8>>,
    local: Vec<u8>,
    warps: Vec<Warp>,
}

impl GroupRun<'_, '_> {
    /// Called when every running group is stuck and every group of the launch has started:
    /// decides whether this group can never finish, and then reports it
    /// ([`Finding::Deadlock`]). That a pass changed nothing is not proof enough: a loop that
    /// re-reads a flag a bounded number of times, counting in a register, looks the same for
    /// a pass. So the group runs one more pass, and it is a deadlock only if that pass again
    /// changed nothing and left every register, private byte and `__local` byte of the group and
    /// every warp's place exactly as they were. Its spinning work-items then repeat a cycle
    /// that stores nothing (a store ends a spin) and reads only memory no running work-item
    /// writes (every running group is stuck, none is left to start): they can only go round it
    /// for ever, and the work-items at barriers wait for them. Otherwise clrace cannot tell,
    /// and the caller reports a forward-progress hang.
    pub(super) fn deadlocked<H: GroupHooks>(
        &mut self,
        group: &mut Group,
        lanes: &mut Lanes,
        hooks: &mut H,
        cx: &mut PassContext<H>,
    ) -> Result<bool, ExecError> {
        if !self.states.iter().any(|s| matches!(s, State::Spinning { .. })) {
            return Ok(false);
        }
        let before =
            (lanes.regs.clone(), live_private(lanes), group.local.clone(), self.warps.clone(), self.states.clone());
        if self.pass(group, lanes, hooks, cx)? {
            return Ok(false);
        }
        let same_warps = self.warps.len() == before.3.len()
            && self.warps.iter().zip(&before.3).all(|(a, b)| a.same_place(b) && a.active() == b.active());
        if !same_warps
            || self.states != before.4
            || lanes.regs != before.0
            || live_private(lanes) != before.1
            || group.local != before.2
        {
            return Ok(false);
        }
        let mut spinners: Vec<(u32, u32, u64)> = Vec::new();
        let mut at_barrier = 0;
        for (warp, state) in self.warps.iter().zip(&self.states) {
            match *state {
                // Each lane's own address (the state keeps the first lane's).
                State::Spinning { loc, .. } => {
                    spinners.extend(warp.active().iter().map(|&l| (l, loc, lanes.lane[l as usize].spin.addr)))
                }
                s if s.waits() => at_barrier += warp.active().len(),
                _ => {}
            }
        }
        spinners.sort_unstable();
        group.findings.push(Finding::Deadlock {
            group: group.id,
            waiting: spinners
                .iter()
                .take(crate::exec::MAX_DEADLOCK_WAITERS)
                .map(|&(l, loc, addr)| (lanes.global_id(l as usize), loc, addr))
                .collect(),
            spinning: spinners.len(),
            at_barrier,
        });
        Ok(true)
    }

    /// A barrier at `site` is released while some work-items of the group have returned: whether
    /// the group is exactly as it was the last time that happened at the same site (every
    /// register, private and `__local` byte of its work-items, and every warp's place). Then
    /// its work-items go round the same cycle again: between the two releases they reached no
    /// other barrier (or they would not be at the same site with the same state), every value
    /// they read along the way is in a register of its own (the registers are per instruction),
    /// so what they read then is what they read now, and they will reach this barrier in this
    /// state for ever. The run of the group stops there: a work-group barrier that some
    /// work-items can never reach cannot be waited out. Remembers the group's state for the
    /// next release otherwise.
    pub(super) fn endless_divergence(&mut self, site: u64, group: &Group, lanes: &Lanes) -> bool {
        let private = live_private(lanes);
        if let Some(s) = &self.divergent
            && s.site == site
            && s.regs == lanes.regs
            && s.private == private
            && s.local == group.local
            && s.warps.len() == self.warps.len()
            && s.warps.iter().zip(&self.warps).all(|(a, b)| a.same_place(b) && a.active() == b.active())
        {
            return true;
        }
        self.divergent = Some(Snapshot {
            site,
            regs: lanes.regs.clone(),
            private,
            local: group.local.clone(),
            warps: self.warps.clone(),
        });
        false
    }

    pub(super) fn hang_error(&self, group: &Group, lanes: &Lanes, alone: bool) -> ExecError {
        let spinner = self.states.iter().enumerate().find_map(|(k, s)| match s {
            State::Spinning { loc, .. } => Some((k, *loc)),
            _ => None,
        });
        let Some((k, loc)) = spinner else {
            return ExecError::Hang(format!(
                "work-group {:?} cannot go on: no work-item can run and none spins",
                group.id
            ));
        };
        let lanes_in = |pred: &dyn Fn(&State) -> bool| -> usize {
            (0..self.warps.len()).filter(|&k| pred(&self.states[k])).map(|k| self.warps[k].active().len()).sum()
        };
        let waiting = lanes_in(&|s| s.waits());
        let spinning = lanes_in(&|s| matches!(s, State::Spinning { .. }));
        let lane = self.warps[k].active()[0] as usize;
        let why = if alone {
            "no other work-item or work-group can change the value it waits for"
        } else {
            "the other running work-groups made no progress either (OpenCL does not guarantee forward progress \
             between work-groups)"
        };
        ExecError::Hang(format!(
            "forward-progress hang in work-group {:?}: work-item {:?} (local {:?}) keeps re-reading an unchanged value \
             at {} ({SPIN_REPEATS} times in a row); {spinning} work-item(s) spin and {waiting} wait at a barrier; {why}",
            group.id,
            lanes.global_id(lane),
            lanes.local_id(lane),
            self.launch.module.location(loc)
        ))
    }
}

/// Each lane's private memory, empty for the lanes that have returned.
fn live_private(lanes: &Lanes) -> Vec<Vec<u8>> {
    let lanes_and_done = lanes.lane[..lanes.count].iter().zip(&lanes.done);
    lanes_and_done.map(|(l, &done)| if done { Vec::new() } else { l.private.clone() }).collect()
}
