//! The checker with a spool (`CLRACE_SPOOL`): every admitted launch, once its snapshot is
//! complete, goes to the spool writer instead of a checker, and its snapshot memory is released
//! when the write is done. At exit the layer waits (bounded) for the writer, leaves its ledger
//! and the settings the spool checker must reuse in its run's `layer.json`, and says in one closing
//! line how many launches were spooled and which were not.
//!
//! It sees the checker's ledger and the writer's API: not the files of the spool.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Checker, Job, Ticket};
use crate::layer::config::Config;
use crate::report::Format;
use crate::series::{self, KernelKey, KernelRecord, Totals};
use crate::spool::SpoolWriter;

/// Why a launch admitted to the spool was not in it at exit.
const UNWRITTEN: &str = "it was still being written to the spool at exit";

impl Checker {
    /// Hands a complete snapshot to the spool writer (off the application's thread). The launch
    /// is already counted in `writing` (by `submit`).
    pub(super) fn spool_job(self: &Arc<Self>, writer: &Arc<SpoolWriter>, job: Job, ticket: Ticket) {
        let Ticket { key, bytes, seq, number, reserved, .. } = ticket;
        let Some(record) = job.into_record(seq, number) else {
            writer.release(reserved);
            self.settle(&key, bytes, &Err("its program is of a kind the emulator does not take".into()));
            return;
        };
        let checker = self.clone();
        writer.submit(record, reserved, Box::new(move |written| checker.written(&key, bytes, written)));
    }

    /// The writer is done with a launch of `key`: it is in the spool, or could not be written.
    fn written(&self, key: &KernelKey, bytes: u64, written: Result<u64, String>) {
        self.settle(key, bytes, &written);
        if let Err(e) = written {
            let dir = self.spool.as_ref().map(|w| w.dir().display().to_string()).unwrap_or_default();
            self.note_once("spool write", &format!("launches could not be written to the spool {dir}: {e}"));
        }
    }

    /// A launch of `key` counted in `writing` is done: its memory is released and the ledger
    /// says whether it is in the spool.
    fn settle(&self, key: &KernelKey, bytes: u64, written: &Result<u64, String>) {
        self.memory.release(bytes);
        let mut inner = self.inner.lock();
        // After exit the ledger counted it as unfinished, and was written out.
        if !inner.closed {
            if let Some(n) = inner.writing.get_mut(key) {
                *n = n.saturating_sub(1);
            }
            match written {
                Ok(_) => inner.ledger.spooled(key),
                Err(e) => inner.ledger.failed(key, e),
            }
        }
        drop(inner);
        self.changed.notify_all();
    }

    /// At exit with a spool: waits (within `CLRACE_EXIT_WAIT_MS`, and only when the device is
    /// idle) for the snapshots and the writer, closes admission, writes `layer.json` and, unless
    /// `CLRACE_SPOOL_QUIET=1`, the closing line.
    pub(super) fn finish_spool(&self, writer: &SpoolWriter, device_running: usize) -> Totals {
        let wait = if device_running > 0 { 0 } else { self.config.exit_wait_ms };
        let deadline = Instant::now() + Duration::from_millis(wait);
        {
            let mut inner = self.inner.lock();
            let busy = |inner: &super::Inner| inner.gated > 0 || inner.writing.values().any(|n| *n > 0);
            while busy(&inner) && !self.changed.wait_until(&mut inner, deadline).timed_out() {}
        }
        writer.drain(deadline);
        let mut inner = self.inner.lock();
        inner.closed = true;
        let writing: Vec<(KernelKey, u64)> = inner.writing.drain().filter(|(_, n)| *n > 0).collect();
        for (key, n) in &writing {
            let record = inner.ledger.record(key);
            record.in_flight = record.in_flight.saturating_sub(*n);
            *record.unfinished.entry(UNWRITTEN.to_string()).or_default() += n;
        }
        inner.ledger.at_exit(&[]);
        let mut totals = Totals {
            unfinished: inner.gated + writing.iter().map(|(_, n)| n).sum::<u64>(),
            device_running: device_running as u64,
            ..Totals::default()
        };
        totals.count_ledger(&inner.ledger);
        let spooled: u64 = inner.ledger.kernels().map(|(_, r)| r.spooled).sum();
        let not_spooled: Vec<(KernelKey, KernelRecord)> = inner
            .ledger
            .kernels()
            .filter(|(_, r)| !(r.skipped.is_empty() && r.failed.is_empty() && r.unfinished.is_empty()))
            .map(|(k, r)| (k.clone(), r.clone()))
            .collect();
        let state = json!({
            "format": 1,
            "kernels": inner.ledger.to_json(),
            "spool_mb": self.config.spool_mb,
            "config": self.settings(),
        });
        drop(inner);
        if let Err(e) = writer.write_layer_state(&state) {
            self.output.note(&format!("cannot write the layer's state into the spool: {e}"));
        }
        let style = series::Style {
            format: self.output.format(),
            suppressions: self.config.suppressions.is_some(),
            print_limit: self.config.print_limit,
            print_limit_name: "CLRACE_PRINT_LIMIT=",
            lockstep: self.config.sub_group_lockstep,
        };
        let dir = writer.dir().display().to_string();
        let mut summary = series::summary_json(&totals, &not_spooled, &style);
        summary["launches_spooled"] = spooled.into();
        summary["spool"] = dir.clone().into();
        if let Some(kernels) = summary["kernels"].as_array_mut() {
            for (kernel, (_, record)) in kernels.iter_mut().zip(&not_spooled) {
                kernel["spooled"] = record.spooled.into();
            }
        }
        if !self.config.spool_quiet {
            let text = match self.output.format() {
                Format::Json => format!("{summary}\n"),
                Format::Text => closing_text(&dir, spooled, &totals, &not_spooled),
            };
            self.output.write(&text);
        }
        if let Some(path) = &self.config.summary_file {
            let _ = std::fs::write(path, summary.to_string());
        }
        totals
    }

    /// The settings a spool checker must use to report as the layer would have.
    fn settings(&self) -> Value {
        settings_json(&self.config)
    }
}

/// The settings of `c` a spool checker must use to report as the layer would have: in
/// `layer.json` at exit, and in the run's `settings.json` from the start.
pub(super) fn settings_json(c: &Config) -> Value {
    let format = if c.sarif {
        "sarif"
    } else if c.format == Format::Json {
        "json"
    } else {
        "text"
    };
    // The checker may run elsewhere: the rules' file by its full name where it exists.
    let suppressions = c.suppressions_path.as_ref().map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()));
    json!({
        "print_limit": c.print_limit,
        "suppressions": suppressions,
        "format": format,
        "sub_group_lockstep": c.sub_group_lockstep,
        "uniform_writes_benign": c.uniform_writes_benign,
        "check_uninitialized": c.check_uninitialized,
        "sub_group_size": c.sub_group_size,
        "budget": c.budget,
        "check_timeout_s": c.check_timeout_ms / 1000,
    })
}

/// The closing line with a spool, and a line for each kernel some launches of which were not
/// spooled, with the reasons.
fn closing_text(dir: &str, spooled: u64, totals: &Totals, kernels: &[(KernelKey, KernelRecord)]) -> String {
    let not_spooled = totals.skipped + totals.failed + totals.unfinished;
    let mut text = format!(
        "clrace: {spooled} launch(es) spooled to {dir}: check them with `clrace check {dir}`; {not_spooled} launch(es) not spooled\n"
    );
    for (key, record) in kernels {
        let reasons: BTreeMap<&String, u64> =
            record.skipped.iter().chain(&record.failed).chain(&record.unfinished).map(|(w, n)| (w, *n)).collect();
        let parts: Vec<String> = reasons.iter().map(|(why, n)| format!("{n} not spooled: {why}")).collect();
        text.push_str(&format!(
            "clrace:   kernel '{}' ({}): {} launch(es), {} spooled; {}\n",
            key.name,
            key.program,
            record.launches,
            record.spooled,
            parts.join("; ")
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closing_line_counts_the_spooled_launches_and_names_the_rest_by_kernel() {
        let key = KernelKey { program: "p.cl".into(), name: "k".into() };
        let mut record = KernelRecord { launches: 5, spooled: 3, ..KernelRecord::default() };
        record.skipped.insert("the spool is full (CLRACE_SPOOL_MB=1)".into(), 2);
        let totals = Totals { skipped: 2, ..Totals::default() };
        let text = closing_text("/tmp/s", 3, &totals, &[(key, record)]);
        assert_eq!(
            text,
            "clrace: 3 launch(es) spooled to /tmp/s: check them with `clrace check /tmp/s`; 2 launch(es) not spooled\n\
             clrace:   kernel 'k' (p.cl): 5 launch(es), 3 spooled; 2 not spooled: the spool is full (CLRACE_SPOOL_MB=1)\n"
        );
    }
}
