//! The report of one checked launch, the same for `clrace check`, the layer and any other
//! caller: every finding made a typed record once, suppression rules applied to it, the rest
//! written as text or JSON lines (or kept as SARIF results) within the print limit, and the
//! closing summary counted from what is left.
//!
//! It takes plain data: the check's outcome, the names to report with, and [`Options`]. What a
//! caller keeps across launches of a kernel is a [`Seen`]. It writes nothing itself: the text,
//! the SARIF records and the counts come back in [`Reported`].

use std::collections::HashSet;
use std::path::Path;

use serde_json::json;

use super::record::Subject;
use super::render::{Rendered, Reporter};
use super::summary::counts_of;
use super::{Format, Sources, Summary};
use crate::detect::Race;
use crate::exec::{Launch, RunOutcome};
use crate::explore::Exploration;
use crate::finding::{Finding, Kind};
use crate::ir::Module;
use crate::suppress::Suppressions;

/// A checked launch, as plain data.
pub struct LaunchFindings<'a> {
    pub kernel: &'a str,
    pub module: &'a Module,
    /// The program's source text, for the lines reports show.
    pub sources: &'a Sources,
    /// The launch checked (its NDRange, for the summary).
    pub launch: &'a Launch,
    pub races: &'a [Race],
    pub outcome: &'a RunOutcome,
    pub exploration: Option<&'a Exploration>,
}

/// Whose launch is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Occasion {
    /// A launch checked on its own (`clrace check`): rules count findings by occurrence, and
    /// the summary says when only suppressed findings were found.
    Alone,
    /// Launch `launch` of a kernel an application runs again and again (the layer): a finding
    /// reported for an earlier launch is counted as repeated, not shown again; rules count each
    /// finding once; the summary names the launch, and is written only when something was shown
    /// (always in JSON). With SARIF nothing but the results is made.
    Series { launch: u64 },
}

/// How to report a launch.
pub struct Options<'a> {
    pub format: Format,
    /// Keep SARIF records instead of writing reports.
    pub sarif: bool,
    pub suppressions: Option<&'a Suppressions>,
    /// Findings shown per kernel (0: all), and how the setting is named in the summary's note,
    /// up to the number (`--print-limit `, `CLRACE_PRINT_LIMIT=`).
    pub print_limit: u64,
    pub print_limit_name: &'a str,
    /// With `--sub-group-lockstep`: its width (the summary counts the races it hides).
    pub lockstep: Option<u32>,
    /// The exploration's bound, which its closing line names.
    pub explore_bound: usize,
    pub occasion: Occasion,
    /// A launch of a spool: each report names it, so that a user can check it alone, and the
    /// JSON carries what `clrace merge` needs to join the reports of a sharded check.
    pub spooled: Option<Spooled<'a>>,
}

/// A launch of a spool (issue 28), as its reports name it.
#[derive(Debug, Clone, Copy)]
pub struct Spooled<'a> {
    /// Its SEQ in the spool.
    pub seq: u64,
    /// Its manifest, `DIR/launches/SEQ.json`, which `clrace check` takes alone; None in a
    /// temporary spool (`clrace run`'s), removed once checked.
    pub manifest: Option<&'a Path>,
    /// The name of its kernel's program (the ledger's), which a finding's identity includes.
    pub program: &'a str,
    /// Checked as a shard (`--shard`): SARIF results carry `spooled` and `identity` too, for
    /// `clrace merge` (which takes them out again, as one check's log has neither).
    pub shard: bool,
}

impl Spooled<'_> {
    /// What a text report adds: the launch and how to check it alone.
    fn text(&self) -> String {
        match self.manifest {
            Some(manifest) => format!("spooled launch {}: clrace check {}", self.seq, manifest.display()),
            None => format!("spooled launch {}; `clrace run --spool DIR` keeps the launches to check alone", self.seq),
        }
    }
}

/// What identifies a finding of a spooled launch across launches and shards: a hash of its
/// program, its kernel and [`Finding::key`] (what a series counts as seen before for the
/// kernel). SARIF fingerprints are coarser (two races of different buffers at the same lines
/// share one), so a merge cannot count repeats by them.
pub fn identity(program: &str, finding: &Finding) -> String {
    let hash = blake3::hash(format!("{program}\n{}\n{}", finding.kernel, finding.key).as_bytes());
    hash.to_hex()[..32].to_string()
}

/// What was reported for earlier launches of a kernel (empty for a launch checked alone).
#[derive(Debug, Default)]
pub struct Seen {
    /// The identities ([`Finding::key`]) of the findings reported, suppressed or not.
    reported: HashSet<String>,
    /// Findings shown, against the print limit.
    shown: u64,
}

/// Distinct findings reported by kind, as the layer's closing summary counts them (and as
/// `clrace run` reads them back from it: absent counts are 0).
#[derive(Debug, Default, Clone, Copy, serde::Deserialize)]
#[serde(default)]
pub struct Tally {
    pub races: u64,
    /// Of buffers, images and arrays.
    pub out_of_bounds: u64,
    /// Barrier divergences and sub-group livelocks.
    pub divergences: u64,
    pub access_modes: u64,
    pub misaligned: u64,
    pub async_copies: u64,
    pub uninitialized: u64,
    /// Failed assertions, schedule-dependent results and deadlocks.
    #[serde(rename = "other_findings")]
    pub other: u64,
    /// Races lockstep hides: warnings, not in `races`.
    pub hidden: u64,
}

impl Tally {
    fn count(&mut self, finding: &Finding) {
        self.count_kind(finding.kind, finding.hidden);
    }

    /// Counts a finding from its JSON record, as `clrace merge` reads reports back (a race that
    /// lockstep hides says so in its `lockstep` field). False for a record of no known kind.
    pub fn count_record(&mut self, record: &serde_json::Value) -> bool {
        let Some(kind) = Kind::ALL.into_iter().find(|k| record["kind"] == k.name()) else { return false };
        let hidden = record["lockstep"] == crate::detect::lockstep::LockstepClass::Hidden.name();
        self.count_kind(kind, hidden);
        true
    }

    fn count_kind(&mut self, kind: Kind, hidden: bool) {
        if hidden {
            self.hidden += 1;
            return;
        }
        let count = match kind {
            Kind::Race => &mut self.races,
            Kind::OutOfBounds | Kind::ImageOutOfBounds => &mut self.out_of_bounds,
            Kind::BarrierDivergence | Kind::SubGroupLivelock => &mut self.divergences,
            Kind::AccessMode => &mut self.access_modes,
            Kind::Misaligned => &mut self.misaligned,
            Kind::AsyncCopy => &mut self.async_copies,
            Kind::Uninitialized => &mut self.uninitialized,
            Kind::AssertionFailed | Kind::ScheduleDependentResult | Kind::Deadlock => &mut self.other,
        };
        *count += 1;
    }

    /// Findings that make the exit status 1: all but the races lockstep hides.
    pub fn errors(&self) -> u64 {
        self.races
            + self.out_of_bounds
            + self.divergences
            + self.access_modes
            + self.misaligned
            + self.async_copies
            + self.uninitialized
            + self.other
    }

    /// Adds another launch's.
    pub fn add(&mut self, other: &Tally) {
        self.races += other.races;
        self.out_of_bounds += other.out_of_bounds;
        self.divergences += other.divergences;
        self.access_modes += other.access_modes;
        self.misaligned += other.misaligned;
        self.async_copies += other.async_copies;
        self.uninitialized += other.uninitialized;
        self.other += other.other;
        self.hidden += other.hidden;
    }
}

/// What reporting a launch made.
#[derive(Debug, Default)]
pub struct Reported {
    /// The reports and the closing lines, ready to write (without SARIF).
    pub text: String,
    /// With SARIF, for a launch checked alone: the closing lines (for people, beside the log).
    pub closing: Option<String>,
    /// With SARIF: the records of the findings to log.
    pub sarif: Vec<Finding>,
    /// Whether it has findings that make the exit status 1: any not suppressed (new or seen
    /// before) but races lockstep hides, or, alone, findings past the emulator's limit.
    pub found: bool,
    /// The new findings not suppressed, by kind.
    pub tally: Tally,
    /// Findings suppressed: alone by occurrence; in a series, those not seen before.
    pub suppressed: u64,
    /// Findings reported for an earlier launch (a series).
    pub repeated: u64,
    /// Findings past the print limit.
    pub not_printed: u64,
}

/// The end of a text summary line: how many findings were suppressed or not printed.
pub fn shown_note(suppressed: u64, not_printed: u64, limit_name: &str, limit: u64) -> String {
    let mut note = String::new();
    if suppressed > 0 {
        note.push_str(&format!("; {suppressed} finding(s) suppressed"));
    }
    if not_printed > 0 {
        note.push_str(&format!("; {not_printed} finding(s) not printed ({limit_name}{limit})"));
    }
    note
}

/// Reports the findings of one checked launch: the races, the emulator's findings and the
/// exploration's, in that order.
pub fn report(checked: &LaunchFindings, options: &Options, seen: &mut Seen) -> Reported {
    let reporter =
        Reporter { kernel: checked.kernel, module: checked.module, sources: checked.sources, format: options.format };
    let series = matches!(options.occasion, Occasion::Series { .. });
    let outcome = checked.outcome;
    let subjects = checked
        .races
        .iter()
        .map(Subject::Race)
        .chain(
            outcome
                .findings
                .iter()
                .zip(counts_of(outcome))
                .map(|(finding, count)| Subject::Emulator { finding, count }),
        )
        .chain(checked.exploration.iter().flat_map(|e| &e.findings).map(Subject::Schedule));
    let separator = if options.format == Format::Text { "\n" } else { "" };
    let mut summary = Summary::of_run(checked.races.len(), outcome, checked.launch);
    if let Some(e) = checked.exploration {
        summary.add_exploration(e);
    }
    summary.lockstep = options.lockstep;
    summary.hidden = checked.races.iter().filter(|r| r.lockstep.is_some_and(|(class, _)| class.is_warning())).count();
    let mut out = Reported::default();
    // Suppressed in this launch, by finding (a series' summary line counts these).
    let mut suppressed_here = 0u64;
    // With a spooled launch: the identities of all its findings, and of the suppressed ones.
    let (mut identities, mut suppressed_identities) = (Vec::new(), Vec::new());
    for subject in subjects {
        let mut record = reporter.record(subject);
        let new = !series || seen.reported.insert(record.key.clone());
        let weight = if series { 1 } else { record.count };
        if let Some(spooled) = &options.spooled {
            let id = identity(spooled.program, &record);
            identities.push(id.clone());
            mark_spooled(&mut record, spooled, id, options.sarif);
        }
        if options.suppressions.and_then(|s| s.suppress(&record, weight)).is_some() {
            out.suppressed += if series { u64::from(new) } else { weight };
            suppressed_here += 1;
            if let Some(id) = identities.last() {
                suppressed_identities.push(id.clone());
            }
            summary.take_suppressed(&record);
            continue;
        }
        // Races that lockstep hides are warnings: they do not count as found (the exit status).
        out.found |= !record.hidden;
        if !new {
            out.repeated += 1;
            continue;
        }
        out.tally.count(&record);
        if options.sarif {
            out.sarif.push(record);
        } else if options.print_limit == 0 || seen.shown < options.print_limit {
            seen.shown += 1;
            let report = match (options.format, &options.spooled) {
                (Format::Json, _) => record.json.to_string(),
                (Format::Text, None) => reporter.render(subject).into_line(),
                (Format::Text, Some(spooled)) => {
                    format!("{}\n\t{}", reporter.render(subject).into_line(), spooled.text())
                }
            };
            out.text.push_str(&format!("{separator}{report}\n"));
        } else {
            out.not_printed += 1;
        }
    }
    match options.occasion {
        Occasion::Alone => {
            out.found |= summary.omitted > 0;
            let closing = closing_alone(&reporter, checked, options, &summary, &out);
            match closing {
                Some(line) if options.sarif => out.closing = Some(line),
                Some(line) => out.text.push_str(&format!("{separator}{line}\n")),
                None => {}
            }
        }
        Occasion::Series { .. } if options.sarif => {}
        Occasion::Series { launch } => {
            let shown_any = !out.text.is_empty() || out.not_printed > 0;
            let line = reporter.summary(&summary).filter(|_| shown_any || options.format == Format::Json);
            let line = line.map(|line| match line {
                Rendered::Json(mut value) => {
                    value["launch"] = launch.into();
                    value["repeated_findings"] = out.repeated.into();
                    if options.suppressions.is_some() {
                        value["suppressed"] = suppressed_here.into();
                    }
                    if out.not_printed > 0 {
                        value["not_printed"] = out.not_printed.into();
                    }
                    if let Some(spooled) = &options.spooled {
                        value["spooled"] = spooled.seq.into();
                        value["program"] = spooled.program.into();
                        value["findings"] = std::mem::take(&mut identities).into();
                        value["suppressed_findings"] = std::mem::take(&mut suppressed_identities).into();
                    }
                    value.to_string()
                }
                Rendered::Text(line) => {
                    let line = line
                        + &shown_note(suppressed_here, out.not_printed, options.print_limit_name, options.print_limit);
                    match &options.spooled {
                        Some(spooled) => format!("{line} ({})", spooled.text()),
                        None => line,
                    }
                }
            });
            if let Some(line) = line {
                out.text.push_str(&format!("{separator}{line}\n"));
            }
            if let (Some(e), Format::Text) = (checked.exploration, options.format) {
                out.text.push_str(&format!("{}\n", reporter.exploration_line(e, options.explore_bound)));
            }
        }
    }
    out
}

/// Adds to a spooled launch's finding record its SEQ (`spooled`) and identity, and in JSON
/// Lines its SARIF fingerprint (a SARIF result has it already). A SARIF result is left as it is
/// but for a shard.
fn mark_spooled(record: &mut Finding, spooled: &Spooled, identity: String, sarif: bool) {
    if sarif && !spooled.shard {
        return;
    }
    let fingerprint = (!sarif).then(|| crate::sarif::fingerprint(record));
    let Some(object) = record.json.as_object_mut() else { return };
    object.insert("spooled".into(), spooled.seq.into());
    if let Some(fingerprint) = fingerprint {
        object.insert("fingerprint".into(), fingerprint.into());
    }
    object.insert("identity".into(), identity.into());
}

/// The closing lines of a launch checked alone: the summary (in JSON always; in text when
/// something was found or suppressed) and the exploration's line, or in JSON its failed
/// schedules as notes before the summary.
fn closing_alone(
    reporter: &Reporter,
    checked: &LaunchFindings,
    options: &Options,
    summary: &Summary,
    out: &Reported,
) -> Option<String> {
    let text = Reporter { format: Format::Text, ..*reporter };
    let line = match options.format {
        Format::Json if !options.sarif => reporter.summary(summary).map(|line| {
            let mut value = line.into_json();
            if options.suppressions.is_some() {
                value["suppressed"] = out.suppressed.into();
            }
            if out.not_printed > 0 {
                value["not_printed"] = out.not_printed.into();
            }
            value.to_string()
        }),
        _ => {
            let mut line = text.summary(summary).map(Rendered::into_line);
            if line.is_none() && out.suppressed > 0 {
                line = Some(format!("clrace: kernel '{}': nothing found but what was suppressed", checked.kernel));
            }
            line.map(|line| {
                line + &shown_note(out.suppressed, out.not_printed, options.print_limit_name, options.print_limit)
            })
        }
    };
    match checked.exploration {
        Some(e) if options.sarif || options.format == Format::Text => {
            let explored = text.exploration_line(e, options.explore_bound);
            Some(line.map_or(explored.clone(), |s| format!("{s}\n{explored}")))
        }
        Some(e) if !e.failures.is_empty() => {
            // JSON: each alternate schedule that failed is a note before the summary.
            let notes = e.failures.iter().map(|(delays, why)| {
                let delays: Vec<_> = delays.iter().map(|d| reporter.delay_json(d)).collect();
                json!({"kind": "note", "message": format!("a schedule failed: {why}"), "delays": delays}).to_string()
            });
            let notes: Vec<String> = notes.chain(line).collect();
            Some(notes.join("\n"))
        }
        _ => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::{AccessType, RaceAccess, RaceReason, RaceScope, Who};
    use crate::ir::SourceLoc;

    fn module() -> Module {
        let loc = |line| SourceLoc { file: "/src/k.cl".into(), line, column: 5 };
        Module { locations: vec![loc(3), loc(4)].into(), ..Module::default() }
    }

    fn race(item: u64, offset: u64, second_loc: u32) -> Race {
        let side = |global: u64, loc| RaceAccess {
            access: AccessType::Store,
            who: Who::WorkItem { global: [global, 0, 0], local: [global, 0, 0], group: [0, 0, 0] },
            loc,
        };
        Race {
            write_write: true,
            local: false,
            buffer: "out".into(),
            offset,
            pixel: None,
            hazards: 4,
            uniform: false,
            scope: RaceScope::IntraGroup,
            reason: RaceReason::NoBarrier { group: [0, 0, 0] },
            accesses: [side(item, 0), side(item + 1, second_loc)],
            lockstep: None,
        }
    }

    fn launch() -> Launch {
        Launch {
            kernel: "k".into(),
            work_dim: 1,
            global_offset: [0; 3],
            global_size: [8, 1, 1],
            local_size: [8, 1, 1],
            args: Vec::new(),
        }
    }

    fn options<'a>(occasion: Occasion, suppressions: Option<&'a Suppressions>) -> Options<'a> {
        Options {
            format: Format::Json,
            sarif: false,
            suppressions,
            print_limit: 0,
            print_limit_name: "--print-limit ",
            lockstep: None,
            explore_bound: 0,
            occasion,
            spooled: None,
        }
    }

    fn reported(races: &[Race], options: &Options, seen: &mut Seen) -> Reported {
        let (module, sources, launch, outcome) = (module(), Sources::new(Vec::new()), launch(), RunOutcome::default());
        let findings = LaunchFindings {
            kernel: "k",
            module: &module,
            sources: &sources,
            launch: &launch,
            races,
            outcome: &outcome,
            exploration: None,
        };
        report(&findings, options, seen)
    }

    #[test]
    fn a_finding_is_the_same_across_launches_whatever_the_work_items_and_offsets() {
        let (module, sources) = (module(), Sources::new(Vec::new()));
        let reporter = Reporter { kernel: "k", module: &module, sources: &sources, format: Format::Json };
        let key = |race: &Race| reporter.record(Subject::Race(race)).key;
        assert_eq!(key(&race(0, 0, 1)), key(&race(7, 64, 1)));
        assert_ne!(key(&race(0, 0, 1)), key(&race(0, 0, 0)));
    }

    #[test]
    fn a_spooled_findings_identity_is_its_kernels_and_programs_too() {
        let (module, sources) = (module(), Sources::new(Vec::new()));
        let reporter = |kernel| Reporter { kernel, module: &module, sources: &sources, format: Format::Json };
        let id = |kernel, program, race: &Race| identity(program, &reporter(kernel).record(Subject::Race(race)));
        assert_eq!(id("k", "p.cl", &race(0, 0, 1)), id("k", "p.cl", &race(7, 64, 1)));
        assert_ne!(id("k", "p.cl", &race(0, 0, 1)), id("j", "p.cl", &race(0, 0, 1)));
        assert_ne!(id("k", "p.cl", &race(0, 0, 1)), id("k", "q.cl", &race(0, 0, 1)));
    }

    #[test]
    fn a_series_shows_a_finding_once_and_counts_it_again_as_repeated() {
        let options = options(Occasion::Series { launch: 1 }, None);
        let mut seen = Seen::default();
        let first = reported(&[race(0, 0, 1)], &options, &mut seen);
        assert!(first.found && first.repeated == 0 && first.tally.races == 1);
        assert!(first.text.starts_with(r#"{"kind":"race","kernel":"k""#), "{}", first.text);
        let again = reported(&[race(3, 12, 1)], &options, &mut seen);
        assert!(again.found && again.repeated == 1 && again.tally.races == 0);
        assert!(!again.text.contains(r#""kind":"race""#) && again.text.contains(r#""repeated_findings":1"#));
    }

    #[test]
    fn a_suppressed_finding_is_counted_apart_and_leaves_the_exit_status_alone() {
        let rules = Suppressions::parse("race:k.cl:4").unwrap();
        let options = Options { format: Format::Text, ..options(Occasion::Alone, Some(&rules)) };
        let out = reported(&[race(0, 0, 1)], &options, &mut Seen::default());
        assert!(!out.found);
        assert_eq!((out.suppressed, out.tally.races), (1, 0));
        assert_eq!(out.text, "\nclrace: kernel 'k': nothing found but what was suppressed; 1 finding(s) suppressed\n");
        assert_eq!(rules.rules[0].hits(), 1);
    }
}
