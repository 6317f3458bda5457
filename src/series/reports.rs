//! What the reports of an application's launches added up to so far: for each kernel what
//! earlier launches reported (so a finding seen again is counted, not shown again), the
//! distinct findings by kind, what was suppressed or not printed, and the SARIF results kept
//! for the log. Launches are reported one at a time, in the order the caller gives: the layer
//! as its checks end, the spool checker in the order of the spool.
//!
//! It calls the one report pipeline (`report::report`) and keeps its results: it cannot see how
//! a launch was checked, nor where the text goes.

use std::collections::HashMap;

use super::ledger::{KernelKey, Ledger};
use super::summary::Totals;
use crate::report::{self, LaunchFindings, Reported, Seen, Tally};

/// The reports of an application's launches so far.
#[derive(Default)]
pub struct Reports {
    /// What was reported for each kernel's earlier launches, and how many findings it showed.
    seen: HashMap<KernelKey, Seen>,
    /// Distinct findings reported, by kind, and the races lockstep hides: warnings.
    found: Tally,
    suppressed: u64,
    not_printed: u64,
    /// With SARIF: the results so far, for the log.
    sarif: crate::sarif::Log,
}

impl Reports {
    /// Reports one checked launch of `key` (its repeated findings are counted in `ledger`).
    pub fn report(
        &mut self,
        ledger: &mut Ledger,
        key: &KernelKey,
        findings: &LaunchFindings,
        options: &report::Options,
    ) -> Reported {
        let reported = report::report(findings, options, self.seen.entry(key.clone()).or_default());
        ledger.record(key).repeated_findings += reported.repeated;
        self.not_printed += reported.not_printed;
        self.suppressed += reported.suppressed;
        self.found.add(&reported.tally);
        for record in &reported.sarif {
            self.sarif.add_with_text(record, |file| findings.sources.program_text(file));
        }
        reported
    }

    /// The totals so far: the findings' (the ledger's counts are added by the summary).
    pub fn totals(&self) -> Totals {
        Totals { found: self.found, suppressed: self.suppressed, not_printed: self.not_printed, ..Totals::default() }
    }

    /// The SARIF log of every result so far.
    pub fn sarif_log(&self) -> String {
        self.sarif.render()
    }
}
