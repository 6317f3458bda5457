//! The closing summary of a checked launch: counts of its findings by kind, by occurrence,
//! less what rules suppressed, plus what exploration found. It reads findings as the emulator
//! and exploration give them, and suppressed ones as their typed records.

use crate::exec::{Finding, Launch, RunOutcome};
use crate::explore::{Exploration, Found, ScheduleFinding};
use crate::finding::{self, Kind};

/// Counts for the closing summary.
#[derive(Debug, Clone, Copy, Default)]
pub struct Summary {
    pub races: usize,
    pub out_of_bounds: usize,
    pub divergences: usize,
    /// Loads from write-only and stores to read-only buffers (`access-mode`).
    pub access_modes: usize,
    /// Accesses through misaligned pointers (`misaligned`).
    pub misaligned: usize,
    /// Async copies and waits used against their contract (`async-copy` findings).
    pub async_copies: usize,
    /// Uninitialised values used where it matters (`uninitialized`, check 9).
    pub uninitialized: usize,
    pub work_groups: u64,
    pub work_items: u64,
    /// Occurrences of findings not shown: past the first [`crate::exec::findings::MAX_KEPT`]
    /// distinct ones.
    pub omitted: u64,
    /// With schedule exploration: the schedules run and whether the search was truncated.
    pub schedules: Option<(usize, bool)>,
    /// Failed assertions (`clrace.h`), every occurrence counted.
    pub assertions: usize,
    /// With `--sub-group-lockstep=W`: W, and how many of `races` are hidden by lockstep
    /// (warnings: they do not make the exit status 1).
    pub lockstep: Option<u32>,
    pub hidden: usize,
    /// Sub-group livelocks (each counted by occurrence).
    pub livelocks: usize,
    /// Work-groups the check found deadlocked (exploration's deadlocks are counted apart).
    pub deadlocks: usize,
}

impl Summary {
    /// The summary of a run of `launch` that found `races` races and these emulator findings.
    pub fn of(races: usize, findings: &[Finding], launch: &Launch) -> Summary {
        let count = |pick: fn(&Finding) -> bool| findings.iter().filter(|f| pick(f)).count();
        Summary {
            races,
            out_of_bounds: count(|f| {
                matches!(f, Finding::OutOfBounds { .. } | Finding::ImageOutOfBounds { .. } | Finding::ArrayIndex { .. })
            }),
            divergences: count(|f| matches!(f, Finding::BarrierDivergence { .. })),
            access_modes: count(|f| matches!(f, Finding::AccessMode { .. })),
            misaligned: count(|f| matches!(f, Finding::Misaligned { .. })),
            async_copies: count(|f| matches!(f, Finding::AsyncCopy { .. })),
            uninitialized: count(|f| matches!(f, Finding::Uninitialized { .. })),
            work_groups: (0..3)
                .map(|d| launch.global_size[d].div_ceil(launch.local_size[d].max(1)))
                .fold(1, u64::saturating_mul),
            work_items: launch.global_size.iter().fold(1, |n, &s| n.saturating_mul(s)),
            omitted: 0,
            schedules: None,
            assertions: count(|f| matches!(f, Finding::AssertionFailed { .. })),
            lockstep: None,
            hidden: 0,
            livelocks: count(|f| matches!(f, Finding::SubGroupLivelock { .. })),
            deadlocks: count(|f| matches!(f, Finding::Deadlock { .. })),
        }
    }

    /// Findings that make the exit status 1: everything but races hidden by lockstep.
    pub fn errors(&self) -> usize {
        self.races.saturating_sub(self.hidden)
            + self.out_of_bounds
            + self.divergences
            + self.livelocks
            + self.deadlocks
            + self.access_modes
            + self.misaligned
            + self.async_copies
            + self.uninitialized
            + self.assertions
    }

    /// The summary of a run of `launch` that found `races` races and ended with `outcome`:
    /// findings counted by occurrence.
    pub fn of_run(races: usize, outcome: &RunOutcome, launch: &Launch) -> Summary {
        let count = |pick: fn(&Finding) -> bool| {
            let counts = outcome.findings.iter().zip(counts_of(outcome));
            counts.filter(|(f, _)| pick(f)).map(|(_, n)| n as usize).sum()
        };
        Summary {
            out_of_bounds: count(|f| {
                matches!(f, Finding::OutOfBounds { .. } | Finding::ImageOutOfBounds { .. } | Finding::ArrayIndex { .. })
            }),
            divergences: count(|f| matches!(f, Finding::BarrierDivergence { .. })),
            livelocks: count(|f| matches!(f, Finding::SubGroupLivelock { .. })),
            deadlocks: count(|f| matches!(f, Finding::Deadlock { .. })),
            access_modes: count(|f| matches!(f, Finding::AccessMode { .. })),
            misaligned: count(|f| matches!(f, Finding::Misaligned { .. })),
            async_copies: count(|f| matches!(f, Finding::AsyncCopy { .. })),
            uninitialized: count(|f| matches!(f, Finding::Uninitialized { .. })),
            assertions: count(|f| matches!(f, Finding::AssertionFailed { .. })),
            omitted: outcome.findings_omitted,
            ..Summary::of(races, &[], launch)
        }
    }

    /// Takes a suppressed finding out of the counts, as often as it occurred. Exploration's own
    /// findings (schedule-dependent results, deadlocks) are in no count of the summary.
    pub fn take_suppressed(&mut self, finding: &finding::Finding) {
        let weight = finding.count as usize;
        if finding.hidden {
            self.hidden = self.hidden.saturating_sub(1);
        }
        let count = match finding.kind {
            Kind::Race => &mut self.races,
            Kind::BarrierDivergence => &mut self.divergences,
            Kind::SubGroupLivelock => &mut self.livelocks,
            Kind::AccessMode => &mut self.access_modes,
            Kind::Misaligned => &mut self.misaligned,
            Kind::AsyncCopy => &mut self.async_copies,
            Kind::Uninitialized => &mut self.uninitialized,
            Kind::AssertionFailed => &mut self.assertions,
            // The check's deadlocks name their work-group; exploration's have delays instead.
            Kind::Deadlock if finding.json.get("group_id").is_some() => &mut self.deadlocks,
            Kind::ScheduleDependentResult | Kind::Deadlock => return,
            Kind::OutOfBounds | Kind::ImageOutOfBounds => &mut self.out_of_bounds,
        };
        *count = count.saturating_sub(weight);
    }

    /// Adds the findings of the usual kinds an exploration found beyond the normal check (the
    /// emulator's counted by occurrence in the schedule that showed them), and its schedules.
    pub fn add_exploration(&mut self, e: &Exploration) {
        self.schedules = Some((e.schedules, e.truncated));
        for f in &e.findings {
            let ScheduleFinding::Found { found, .. } = f else { continue };
            let (finding, count) = match found {
                Found::Race(_) => {
                    self.races += 1;
                    continue;
                }
                Found::Emulator { finding, count } => (finding, *count as usize),
            };
            let counter = match finding {
                Finding::OutOfBounds { .. } | Finding::ImageOutOfBounds { .. } | Finding::ArrayIndex { .. } => {
                    &mut self.out_of_bounds
                }
                Finding::BarrierDivergence { .. } => &mut self.divergences,
                Finding::AssertionFailed { .. } => &mut self.assertions,
                Finding::AccessMode { .. } => &mut self.access_modes,
                Finding::Misaligned { .. } => &mut self.misaligned,
                Finding::AsyncCopy { .. } => &mut self.async_copies,
                Finding::SubGroupLivelock { .. } => &mut self.livelocks,
                Finding::Deadlock { .. } => &mut self.deadlocks,
                Finding::Uninitialized { .. } => &mut self.uninitialized,
            };
            *counter += count;
        }
    }
}

/// The occurrence count of each finding of `outcome` (1 where none is recorded).
pub(super) fn counts_of(outcome: &RunOutcome) -> impl Iterator<Item = u64> + '_ {
    (0..outcome.findings.len()).map(|i| outcome.finding_counts.get(i).copied().unwrap_or(1))
}

/// Schedule-dependent results and deadlocks an exploration found.
pub fn counts_of_exploration(e: &Exploration) -> (usize, usize) {
    let count = |pick: fn(&ScheduleFinding) -> bool| e.findings.iter().filter(|f| pick(f)).count();
    (count(|f| matches!(f, ScheduleFinding::Result { .. })), count(|f| matches!(f, ScheduleFinding::Deadlock { .. })))
}
