//! One check of one launch, the same for `clrace check` and the layer: the emulator's run with
//! the race detector (or without it), then, when asked, the exploration of the launch's
//! schedules from its inputs, with what the run reported already left out of what the
//! exploration found.
//!
//! It owns the order of those steps and what they must agree on: under exploration the run
//! takes its work-groups one at a time, in NDRange order, so that groups racing through atomics
//! cannot end differently from run to run (the exploration still spreads its schedules over the
//! threads it is given), and its schedules, run work-item by work-item, are never classed as
//! lockstep is. It cannot see where the launch came from (a launch file or an
//! application's call), nor how the findings are reported, counted or suppressed.

use crate::detect::{self, Detector, Race};
use crate::exec::{ExecError, Launch, RunOptions, RunOutcome, run_hooked, run_with};
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
    let (outcome, races) = match plan.races {
        Some(options) => {
            let detector = Detector::with_memory(program, launch, options, run.memory.clone());
            let outcome = run_hooked(program, launch, buffers, &run, &&detector)?;
            (outcome, detector.races())
        }
        None => (run_with(program, launch, buffers, &run)?, Vec::new()),
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
