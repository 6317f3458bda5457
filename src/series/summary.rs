//! The closing summary of an application's launches: the totals over every kernel, one text
//! line (and a line per kernel not every launch of which was checked) or the JSON
//! `layer-summary` object. The layer writes it at exit; the spool checker writes the same one
//! once the spooled launches are checked.
//!
//! It renders counts it is given: it cannot see how they were counted.

use serde_json::Value;

use super::ledger::{KernelKey, KernelRecord, Ledger};
use crate::report::{self, Format, Tally};

/// Totals for the closing summary.
#[derive(Debug, Default, Clone, Copy)]
pub struct Totals {
    pub checked: u64,
    pub skipped: u64,
    pub failed: u64,
    pub unfinished: u64,
    /// Distinct findings reported, by kind (each counted once per kernel and instruction), and
    /// the races lockstep hides (`CLRACE_SUB_GROUP_LOCKSTEP`): warnings, not in the races.
    pub found: Tally,
    pub repeated: u64,
    pub held_back: u64,
    /// The application's launches still on the device at exit (then no check was waited for).
    pub device_running: u64,
    /// Findings a suppression rule matched (`CLRACE_SUPPRESSIONS`), not in the counts above.
    pub suppressed: u64,
    /// Findings counted but not shown, past `CLRACE_PRINT_LIMIT` for their kernel.
    pub not_printed: u64,
}

impl Totals {
    pub fn found(&self) -> bool {
        self.found.errors() > 0
    }

    /// Adds the ledger's counts (checked, skipped, failed, repeated findings); returns the
    /// kernels the summary names: those not every launch of which was checked, or whose
    /// findings were seen again.
    pub fn count_ledger(&mut self, ledger: &Ledger) -> Vec<(KernelKey, KernelRecord)> {
        let mut kernels = Vec::new();
        for (key, record) in ledger.kernels() {
            self.checked += record.checked;
            self.skipped += record.skipped.values().sum::<u64>();
            self.failed += record.failed.values().sum::<u64>();
            self.repeated += record.repeated_findings;
            let unchecked = record.launches - record.checked;
            if unchecked > 0 || record.repeated_findings > 0 {
                kernels.push((key.clone(), record.clone()));
            }
        }
        kernels
    }
}

/// How the summary is written: its format and the settings it names.
#[derive(Debug, Clone, Copy)]
pub struct Style<'a> {
    pub format: Format,
    /// Whether suppression rules are in use (JSON then counts `suppressed`).
    pub suppressions: bool,
    /// The print limit and how the setting is named (`CLRACE_PRINT_LIMIT=`).
    pub print_limit: u64,
    pub print_limit_name: &'a str,
    /// With sub-group lockstep: its width (the races it hides are counted apart).
    pub lockstep: Option<u32>,
}

/// The closing summary, ready to write: the text lines, or the JSON object on one line.
/// `unfinished_note` ends the text line (checks not done at exit; may be empty).
pub fn render(t: &Totals, kernels: &[(KernelKey, KernelRecord)], style: &Style, unfinished_note: &str) -> String {
    match style.format {
        Format::Json => format!("{}\n", json(t, kernels, style)),
        Format::Text => text(t, kernels, style, unfinished_note),
    }
}

fn text(t: &Totals, kernels: &[(KernelKey, KernelRecord)], style: &Style, unfinished_note: &str) -> String {
    let mut text = format!(
        "clrace: {} launch(es) checked: {} race(s), {} out-of-bounds access(es), {} barrier divergence(s); {} launch(es) not checked{unfinished_note}\n",
        t.checked,
        t.found.races,
        t.found.out_of_bounds,
        t.found.divergences,
        t.skipped + t.failed + t.unfinished,
    );
    for (n, what) in [
        (t.found.access_modes, "access-mode violation(s)"),
        (t.found.misaligned, "misaligned access(es)"),
        (t.found.async_copies, "async-copy finding(s)"),
        (t.found.uninitialized, "uninitialized value(s) used"),
    ] {
        if n > 0 {
            text.insert_str(text.len() - 1, &format!("; {n} {what}"));
        }
    }
    let shown = report::shown_note(t.suppressed, t.not_printed, style.print_limit_name, style.print_limit);
    text.insert_str(text.len() - 1, &shown);
    if let Some(width) = style.lockstep {
        let note = format!("; {} more race(s) hidden by lockstep of width {width} (warnings)", t.found.hidden);
        text.insert_str(text.len() - 1, &note);
    }
    for (key, record) in kernels {
        text.push_str(&kernel_line(key, record));
    }
    text
}

/// One summary line for a kernel not every launch of which was checked.
fn kernel_line(key: &KernelKey, record: &KernelRecord) -> String {
    let mut parts = Vec::new();
    for (why, n) in record.skipped.iter().chain(&record.failed).chain(&record.unfinished) {
        parts.push(format!("{n} not checked: {why}"));
    }
    if record.repeated_findings > 0 {
        parts.push(format!("{} finding(s) seen again in later launches, not repeated", record.repeated_findings));
    }
    format!(
        "clrace:   kernel '{}' ({}): {} launch(es), {} checked; {}\n",
        key.name,
        key.program,
        record.launches,
        record.checked,
        parts.join("; ")
    )
}

/// The closing summary as JSON: `suppressed` when rules are in use, `not_printed` when some
/// findings were not shown, the lockstep width and the races it hid.
pub fn json(t: &Totals, kernels: &[(KernelKey, KernelRecord)], style: &Style) -> Value {
    let reasons = |m: &std::collections::BTreeMap<String, u64>| {
        m.iter().map(|(why, n)| serde_json::json!({"reason": why, "launches": n})).collect::<Vec<_>>()
    };
    let kernels: Vec<Value> = kernels
        .iter()
        .map(|(key, r)| {
            let mut kernel = serde_json::json!({
                "kernel": key.name,
                "program": key.program,
                "launches": r.launches,
                "checked": r.checked,
                "skipped": reasons(&r.skipped),
                "failed": reasons(&r.failed),
                "repeated_findings": r.repeated_findings,
            });
            if !r.unfinished.is_empty() {
                kernel["unfinished"] = reasons(&r.unfinished).into();
            }
            kernel
        })
        .collect();
    let mut value = serde_json::json!({
        "kind": "layer-summary",
        "launches_checked": t.checked,
        "launches_skipped": t.skipped,
        "launches_failed": t.failed,
        "launches_unfinished": t.unfinished,
        "races": t.found.races,
        "out_of_bounds": t.found.out_of_bounds,
        "divergences": t.found.divergences,
        "async_copies": t.found.async_copies,
        "other_findings": t.found.other,
        "repeated_findings": t.repeated,
        "launches_held_back": t.held_back,
        "device_launches_at_exit": t.device_running,
        "kernels": kernels,
    });
    for (field, n) in [
        ("access_modes", t.found.access_modes),
        ("misaligned", t.found.misaligned),
        ("uninitialized", t.found.uninitialized),
    ] {
        if n > 0 {
            value[field] = n.into();
        }
    }
    if style.suppressions {
        value["suppressed"] = t.suppressed.into();
    }
    if t.not_printed > 0 {
        value["not_printed"] = t.not_printed.into();
    }
    if let Some(width) = style.lockstep {
        value["sub_group_lockstep"] = width.into();
        value["hidden"] = t.found.hidden.into();
    }
    value
}
