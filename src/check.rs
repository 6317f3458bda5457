//! One check of one launch, the same for `clrace check` and the layer: the emulator's run with
//! the race detector (or without it), then, when asked, the exploration of the launch's
//! schedules from its inputs, with what the run reported already left out of what the
//! exploration found.
//!
//! It owns the order of those steps and what they must agree on: under exploration the run
//! takes its work-groups one at a time, in NDRange order, so that groups racing through atomics
//! cannot end differently from run to run (the exploration still spreads its schedules over the
//! threads it is given), and its schedules, run work-item by work-item, are never classed as
//! lockstep is. A group that waits for a later one cannot finish that way (the later one never
//! starts while it waits): when that run hangs, the check is run again from the inputs as the
//! exploration's canonical schedule, every group alive at once on one thread (as the default
//! check keeps them alive on its threads), which is deterministic too. It cannot see where the launch came from (a launch file or an
//! application's call), nor how the findings are reported, counted or suppressed.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::detect::{self, Detector, Race};
use crate::exec::hooks::NoHooks;
use crate::exec::{ExecError, Launch, RunOptions, RunOutcome, run_hooked, run_stepped_hooked, run_with};
use crate::explore::chooser::Scheduler;
use crate::explore::{self, Exploration};
use crate::program::Program;

/// What to check.
pub struct Plan<'a> {
    /// Run the race detector, with these options (None: the emulator's own checks only).
    pub races: Option<detect::Options>,
    /// The run's limits and settings.
    pub run: RunOptions,
    /// Explore the schedules from these inputs (the launch's buffers before the run), with these
    /// options.
    pub explore: Option<(&'a [Vec<u8>], explore::Options)>,
    /// Free the run's buffers before exploring (their final state is not wanted afterwards).
    pub release_buffers: bool,
}

/// What a check found.
pub struct Checked {
    pub outcome: RunOutcome,
    pub races: Vec<Race>,
    /// The exploration, when asked for: its findings beyond the run's, or why it could not be
    /// done (the run's results stand either way).
    pub exploration: Option<Result<Exploration, ExecError>>,
}

/// Checks `launch` of `program` on `buffers` as `plan` says.
pub fn check(program: &Program, launch: &Launch, buffers: &mut [Vec<u8>], plan: Plan) -> Result<Checked, ExecError> {
    let mut run = plan.run;
    if plan.explore.is_some() {
        run.threads = Some(1);
    }
    let first = match plan.races {
        Some(options) => {
            let detector = Detector::with_memory(program, launch, options, run.memory.clone());
            run_hooked(program, launch, buffers, &run, &&detector).map(|outcome| (outcome, detector.races()))
        }
        None => run_with(program, launch, buffers, &run).map(|outcome| (outcome, Vec::new())),
    };
    let (outcome, races) = match (first, plan.explore.as_ref()) {
        // One group at a time, a group that waits for a later one hangs: run the check as the
        // exploration's canonical schedule instead, with every group alive.
        (Err(ExecError::Hang(_)), Some((inputs, _))) if launch_groups(launch) > 1 => {
            buffers.clone_from_slice(inputs);
            all_groups_alive(program, launch, buffers, &run, plan.races)?
        }
        (first, _) => first?,
    };
    if plan.release_buffers {
        buffers.iter_mut().for_each(|b| *b = Vec::new());
    }
    let exploration = plan.explore.map(|(inputs, mut options)| {
        // Explored schedules run work-item by work-item, never in lockstep: their races have no
        // lockstep class.
        options.races = options.races.map(|r| detect::Options { sub_group_lockstep: None, ..r });
        let mut found = explore::explore(program, launch, inputs, &options)?;
        found.drop_reported(&races, &outcome.findings);
        Ok(found)
    });
    Ok(Checked { outcome, races, exploration })
}

/// The work-groups of `launch`.
fn launch_groups(launch: &Launch) -> u64 {
    (0..3).map(|d| launch.global_size[d].div_ceil(launch.local_size[d].max(1))).product()
}

/// The check run as the exploration's canonical schedule (see [`explore::chooser`]): every
/// work-group alive at once on one thread, each work-item running to its next atomic, the
/// lowest that does not spin going first. A schedule in which every waiting work-item spins on
/// what nobody changes is still a hang here (the exploration reports it as a deadlock).
fn all_groups_alive(
    program: &Program,
    launch: &Launch,
    buffers: &mut [Vec<u8>],
    run: &RunOptions,
    races: Option<detect::Options>,
) -> Result<(RunOutcome, Vec<Race>), ExecError> {
    let groups = launch_groups(launch);
    let items: u64 = launch.local_size.iter().map(|&l| l.max(1)).product();
    let cancel = Arc::new(AtomicBool::new(false));
    let options = RunOptions { cancel: Some(cancel.clone()), ..run.clone() };
    let mut canonical = Scheduler::new(&[], groups, items, cancel);
    let result = match races {
        Some(detect) => {
            let detector = Detector::with_memory(program, launch, detect, options.memory.clone());
            run_stepped_hooked(program, launch, buffers, &options, &mut canonical, &&detector)
                .map(|(outcome, _)| (outcome, detector.races()))
        }
        None => run_stepped_hooked(program, launch, buffers, &options, &mut canonical, &NoHooks)
            .map(|(outcome, _)| (outcome, Vec::new())),
    };
    if canonical.deadlock.is_some() {
        return Err(ExecError::Hang(
            "forward-progress hang: with every work-group alive at once, every waiting work-item re-reads a value \
             no other one changes"
                .into(),
        ));
    }
    result
}
