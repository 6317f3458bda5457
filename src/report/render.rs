//! One finding, or a closing line, worded for people (text) or for tools (a JSON object): the
//! emulator's findings, exploration's, and the summaries (races are in `race.rs`).

use serde_json::{Value, json};

use super::summary::counts_of_exploration;
use super::{Format, Sources, Summary, ids, shown_path};
use crate::exec::{AsyncProblem, Finding};
use crate::explore::compare::{Element, Mode};
use crate::explore::{Delay, Exploration, Found, ScheduleFinding, Side};
use crate::ir::AtomicOp;
use crate::ir::Module;

/// Renders the findings of one kernel launch.
#[derive(Clone, Copy)]
pub struct Reporter<'a> {
    pub kernel: &'a str,
    pub module: &'a Module,
    pub sources: &'a Sources,
    pub format: Format,
}

/// One report in the reporter's format: a text block, or a JSON object.
#[derive(Debug, Clone)]
pub enum Rendered {
    Text(String),
    Json(Value),
}

impl Rendered {
    /// The JSON object (a text report as a JSON string: not for a text reporter's output).
    pub fn into_json(self) -> Value {
        match self {
            Rendered::Json(value) => value,
            Rendered::Text(text) => Value::String(text),
        }
    }

    /// As written out: the text, or the object on one line.
    pub fn into_line(self) -> String {
        match self {
            Rendered::Json(value) => value.to_string(),
            Rendered::Text(text) => text,
        }
    }
}

/// A source location's parts.
pub(super) struct Place<'a> {
    pub file: &'a str,
    pub line: u32,
    pub column: u32,
}

impl Reporter<'_> {
    pub(super) fn place(&self, loc: u32) -> Place<'_> {
        match self.module.locations.get(loc as usize) {
            Some(l) => Place { file: &l.file, line: l.line, column: l.column },
            None => Place { file: "", line: 0, column: 0 },
        }
    }

    /// `At file:line:col` and the source line, for text reports.
    pub(super) fn where_text(&self, loc: u32) -> String {
        let p = self.place(loc);
        if p.line == 0 {
            return "\tAt an unknown location".to_string();
        }
        let mut out = format!("\tAt {}:{}:{}", shown_path(p.file), p.line, p.column);
        if let Some(text) = self.sources.line(p.file, p.line) {
            out.push_str(&format!("\n\t    {text}"));
        }
        out
    }

    pub(super) fn where_json(&self, loc: u32, object: &mut serde_json::Map<String, Value>) {
        let p = self.place(loc);
        object.insert("file".into(), json!(shown_path(p.file)));
        object.insert("line".into(), json!(p.line));
        object.insert("column".into(), json!(p.column));
        object.insert("source".into(), json!(self.sources.line(p.file, p.line)));
    }

    /// One emulator finding that occurred `count` times (its first occurrence in NDRange order
    /// is the one shown): when the count is above 1, JSON gains a `count` field and text an
    /// `Occurrences:` line.
    pub fn finding_counted(&self, finding: &Finding, count: u64) -> Rendered {
        self.render_finding(finding, Some(count))
    }

    fn render_finding(&self, finding: &Finding, count: Option<u64>) -> Rendered {
        let mut report = self.finding_alone(finding, count);
        if let (Some(n), Rendered::Text(report)) = (count, &mut report)
            && n > 1
        {
            report.push_str(&format!("\n\tOccurrences: {n} (the first in NDRange order is shown)"));
        }
        report
    }

    /// A finding's JSON object, with its count when known.
    fn finding_json(mut object: serde_json::Map<String, Value>, count: Option<u64>) -> Rendered {
        if let Some(n) = count.filter(|&n| n > 1) {
            object.insert("count".into(), json!(n));
        }
        Rendered::Json(Value::Object(object))
    }

    fn finding_alone(&self, finding: &Finding, count: Option<u64>) -> Rendered {
        match (finding, self.format) {
            (
                Finding::OutOfBounds { store, space, allocation, offset, size, alloc_size, global_id, loc },
                Format::Text,
            ) => Rendered::Text({
                let access = if *store { "write" } else { "read" };
                format!(
                    "Invalid {access} of size {size} at {space} memory: '{allocation}' ({alloc_size} bytes), offset {offset}\n\
                     \tKernel: {}\n\tWork-item: Global{}\n{}",
                    self.kernel,
                    ids(*global_id),
                    self.where_text(*loc)
                )
            }),
            (
                Finding::OutOfBounds { store, space, allocation, offset, size, alloc_size, global_id, loc },
                Format::Json,
            ) => {
                let mut object = serde_json::Map::new();
                object.insert("kind".into(), json!("out-of-bounds"));
                object.insert("kernel".into(), json!(self.kernel));
                object.insert("buffer".into(), json!(allocation));
                object.insert("address_space".into(), json!(space));
                object.insert("offset".into(), json!(offset));
                object.insert("size".into(), json!(size));
                object.insert("buffer_size".into(), json!(alloc_size));
                object.insert("access".into(), json!(if *store { "store" } else { "load" }));
                self.where_json(*loc, &mut object);
                object.insert("global_id".into(), json!(global_id));
                Self::finding_json(object, count)
            }
            (Finding::ImageOutOfBounds { store, image, coord, extent, global_id, loc }, Format::Text) => {
                Rendered::Text({
                    let access = if *store { "write" } else { "read" };
                    let dims = extent.iter().filter(|&&e| e > 0).count().max(1);
                    let list = |v: &[String]| v.join(", ");
                    format!(
                        "Invalid {access} of image '{image}' ({}) at coordinate ({})\n\tKernel: {}\n\tWork-item: Global{}\n{}",
                        list(&extent[..dims].iter().map(u64::to_string).collect::<Vec<_>>()).replace(", ", "x"),
                        list(&coord[..dims].iter().map(i64::to_string).collect::<Vec<_>>()),
                        self.kernel,
                        ids(*global_id),
                        self.where_text(*loc)
                    )
                })
            }
            (Finding::ImageOutOfBounds { store, image, coord, extent, global_id, loc }, Format::Json) => {
                let dims = extent.iter().filter(|&&e| e > 0).count().max(1);
                let mut object = serde_json::Map::new();
                object.insert("kind".into(), json!("image-out-of-bounds"));
                object.insert("kernel".into(), json!(self.kernel));
                object.insert("image".into(), json!(image));
                object.insert("coordinate".into(), json!(coord[..dims]));
                object.insert("image_size".into(), json!(extent[..dims]));
                object.insert("access".into(), json!(if *store { "store" } else { "load" }));
                self.where_json(*loc, &mut object);
                object.insert("global_id".into(), json!(global_id));
                Self::finding_json(object, count)
            }
            (
                Finding::AccessMode { .. }
                | Finding::Misaligned { .. }
                | Finding::ArrayIndex { .. }
                | Finding::Uninitialized { .. },
                _,
            ) => self.memory_check_finding(finding, count),
            (Finding::AssertionFailed { message, global_id, loc }, Format::Text) => Rendered::Text({
                let what = message
                    .as_deref()
                    .map_or_else(|| "Assertion failed".to_string(), |m| format!("Assertion failed: {m}"));
                format!(
                    "{what}\n\tKernel: {}\n\tWork-item: Global{}\n{}",
                    self.kernel,
                    ids(*global_id),
                    self.where_text(*loc)
                )
            }),
            (Finding::AssertionFailed { message, global_id, loc }, Format::Json) => {
                let mut object = serde_json::Map::new();
                object.insert("kind".into(), json!("assertion-failed"));
                object.insert("kernel".into(), json!(self.kernel));
                object.insert("message".into(), json!(message));
                self.where_json(*loc, &mut object);
                object.insert("global_id".into(), json!(global_id));
                // The delays of the schedule it failed in (none outside exploration).
                object.insert("delays".into(), json!([]));
                Self::finding_json(object, count)
            }
            (Finding::BarrierDivergence { group, waiting, barrier, other, other_barrier }, Format::Text) => {
                Rendered::Text({
                    let elsewhere = match other_barrier {
                        Some(l) => format!("a different barrier\n{}", self.where_text(*l)),
                        None => "the end of the kernel".to_string(),
                    };
                    format!(
                        "Barrier divergence in work-group {}\n\tKernel: {}\n\tLocal{} waits at the barrier\n{}\n\tLocal{} reached {elsewhere}",
                        ids(*group),
                        self.kernel,
                        ids(*waiting),
                        self.where_text(*barrier),
                        ids(*other),
                    )
                })
            }
            (Finding::BarrierDivergence { group, waiting, barrier, other, other_barrier }, Format::Json) => {
                let mut object = serde_json::Map::new();
                object.insert("kind".into(), json!("barrier-divergence"));
                object.insert("kernel".into(), json!(self.kernel));
                self.where_json(*barrier, &mut object);
                object.insert("group_id".into(), json!(group));
                object.insert("waiting_local_id".into(), json!(waiting));
                object.insert("other_local_id".into(), json!(other));
                let other_at = match other_barrier {
                    Some(l) => {
                        let p = self.place(*l);
                        json!({"file": shown_path(p.file), "line": p.line, "column": p.column})
                    }
                    None => Value::Null,
                };
                object.insert("other_barrier".into(), other_at);
                Self::finding_json(object, count)
            }
            (Finding::SubGroupLivelock { group, sub_group, width, loc, spinning, masked, global_id }, Format::Text) => {
                Rendered::Text({
                    let list = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
                    format!(
                        "Sub-group livelock in work-group {} (lockstep of width {width})\n\tKernel: {}\n\tWork-item: Global{}\n{}\n\
                     \tWhy: lanes [{}] of sub-group {sub_group} keep re-reading an unchanged value while lockstep has masked off lanes [{}] of their own sub-group, on another path of the branch, which lockstep hardware runs only after this one ends: it never does\n\
                     \tThe run went on as if the sub-group could part",
                        ids(*group),
                        self.kernel,
                        ids(*global_id),
                        self.where_text(*loc),
                        list(spinning),
                        list(masked),
                    )
                })
            }
            (Finding::SubGroupLivelock { group, sub_group, width, loc, spinning, masked, global_id }, Format::Json) => {
                let mut object = serde_json::Map::new();
                object.insert("kind".into(), json!("sub-group-livelock"));
                object.insert("kernel".into(), json!(self.kernel));
                self.where_json(*loc, &mut object);
                object.insert("global_id".into(), json!(global_id));
                object.insert("group_id".into(), json!(group));
                object.insert("sub_group".into(), json!(sub_group));
                object.insert("sub_group_size".into(), json!(width));
                object.insert("spinning_lanes".into(), json!(spinning));
                object.insert("masked_lanes".into(), json!(masked));
                Self::finding_json(object, count)
            }
            (Finding::Deadlock { group, waiting, spinning, at_barrier }, Format::Text) => Rendered::Text({
                let mut out = format!(
                    "Deadlock in work-group {}: no waiting work-item can ever go on\n\tKernel: {}",
                    ids(*group),
                    self.kernel
                );
                for (global_id, loc, _) in waiting {
                    out.push_str(&format!(
                        "\n\tGlobal{} waits at an atomic\n{}",
                        ids(*global_id),
                        self.where_text(*loc)
                    ));
                }
                if *spinning > waiting.len() {
                    out.push_str(&format!("\n\t... {spinning} work-item(s) wait at atomics in all"));
                }
                out.push_str(&format!(
                    "\n\tWhy: each re-reads, with the same atomic, a value that only a waiting work-item could change, \
                     {at_barrier} work-item(s) wait at a barrier, and the work-group's state came back unchanged: \
                     the work-group's run ends here"
                ));
                out
            }),
            (Finding::Deadlock { group, waiting, spinning, at_barrier }, Format::Json) => {
                let mut object = serde_json::Map::new();
                object.insert("kind".into(), json!("deadlock"));
                object.insert("kernel".into(), json!(self.kernel));
                if let Some((global_id, loc, _)) = waiting.first() {
                    self.where_json(*loc, &mut object);
                    object.insert("global_id".into(), json!(global_id));
                }
                object.insert("group_id".into(), json!(group));
                let listed: Vec<Value> = waiting
                    .iter()
                    .map(|(global_id, loc, addr)| {
                        let p = self.place(*loc);
                        let (_, _, offset) = crate::exec::memory::split(*addr);
                        json!({"global_id": global_id, "file": shown_path(p.file), "line": p.line, "address_offset": offset})
                    })
                    .collect();
                object.insert("waiting".into(), Value::Array(listed));
                object.insert("waiting_count".into(), json!(spinning));
                object.insert("at_barrier".into(), json!(at_barrier));
                Self::finding_json(object, count)
            }
            (Finding::AsyncCopy { .. }, Format::Text) => Rendered::Text(self.async_copy_text(finding)),
            (Finding::AsyncCopy { .. }, Format::Json) => Self::finding_json(self.async_copy_json(finding), count),
        }
    }

    /// An access-mode, misaligned or array-index finding (checks 10, 12 and 13).
    fn memory_check_finding(&self, finding: &Finding, count: Option<u64>) -> Rendered {
        let mut object = serde_json::Map::new();
        let (title, global_id, loc) = match finding {
            Finding::AccessMode { store, mode, allocation, offset, size, global_id, loc } => {
                let mode = match mode {
                    crate::exec::memory::BufferMode::WriteOnly => "write-only",
                    _ => "read-only",
                };
                object.insert("kind".into(), json!("access-mode"));
                object.insert("kernel".into(), json!(self.kernel));
                object.insert("buffer".into(), json!(allocation));
                object.insert("mode".into(), json!(mode));
                object.insert("access".into(), json!(if *store { "store" } else { "load" }));
                object.insert("offset".into(), json!(offset));
                object.insert("size".into(), json!(size));
                let title = if *store {
                    format!("Invalid write to read-only buffer '{allocation}': {size} byte(s) at offset {offset}")
                } else {
                    format!("Invalid read from write-only buffer '{allocation}': {size} byte(s) at offset {offset}")
                };
                (title, global_id, loc)
            }
            Finding::Misaligned { access, space, allocation, offset, size, alignment, global_id, loc } => {
                object.insert("kind".into(), json!("misaligned"));
                object.insert("kernel".into(), json!(self.kernel));
                object.insert("address_space".into(), json!(space));
                object.insert("buffer".into(), json!(allocation));
                object.insert("offset".into(), json!(offset));
                object.insert("size".into(), json!(size));
                object.insert("alignment".into(), json!(alignment));
                object.insert("access".into(), json!(access));
                let title = format!(
                    "Misaligned {access} of size {size} at {space} memory: '{allocation}', offset {offset} is not aligned to {alignment} bytes"
                );
                (title, global_id, loc)
            }
            Finding::ArrayIndex { space, allocation, offset, index, extent, global_id, loc } => {
                object.insert("kind".into(), json!("out-of-bounds"));
                object.insert("object".into(), json!("array"));
                object.insert("kernel".into(), json!(self.kernel));
                object.insert("buffer".into(), json!(allocation));
                object.insert("address_space".into(), json!(space));
                object.insert("offset".into(), json!(offset));
                object.insert("index".into(), json!(index));
                object.insert("array_size".into(), json!(extent));
                object.insert("access".into(), json!("index"));
                let title = format!(
                    "Index {index} exceeds the static array size ({extent}) in {space} memory: '{allocation}', element at offset {offset}"
                );
                (title, global_id, loc)
            }
            Finding::Uninitialized { used, space, allocation, global_id, loc } => {
                object.insert("kind".into(), json!("uninitialized"));
                object.insert("kernel".into(), json!(self.kernel));
                object.insert("address_space".into(), json!(space));
                object.insert("buffer".into(), json!(allocation));
                object.insert("use".into(), json!(used));
                let title = match *used {
                    "address" => "Uninitialized address: a value nothing wrote is used as an address",
                    "branch" => "Uninitialized value in a branch condition",
                    _ => "Uninitialized value stored to global memory",
                };
                let title = format!("{title} (read from {space} memory '{allocation}' before it was written)");
                (title, global_id, loc)
            }
            _ => unreachable!("not a memory check finding"),
        };
        match self.format {
            Format::Text => Rendered::Text(format!(
                "{title}\n\tKernel: {}\n\tWork-item: Global{}\n{}",
                self.kernel,
                ids(*global_id),
                self.where_text(*loc)
            )),
            Format::Json => {
                self.where_json(*loc, &mut object);
                object.insert("global_id".into(), json!(global_id));
                Self::finding_json(object, count)
            }
        }
    }

    /// An async-copy finding as text.
    fn async_copy_text(&self, finding: &Finding) -> String {
        let Finding::AsyncCopy { problem, wait, group, reached, items, differs, first, event, loc } = *finding else {
            return String::new();
        };
        let call = if wait { "wait_group_events" } else { "async_work_group_copy" };
        let (title, detail) = match problem {
            AsyncProblem::NonUniform => {
                let why = match differs {
                    Some((local, argument)) => {
                        format!("Local{} passes a different {argument} than Local{}", ids(local), ids(first))
                    }
                    None => format!("only {reached} of its {items} work-items reached it"),
                };
                let then = if wait {
                    format!("The wait completed the events Local{} named", ids(first))
                } else {
                    format!("The copy was made once, with the arguments of Local{}", ids(first))
                };
                (format!("Non-uniform {call} in work-group {}: {why}", ids(group)), then)
            }
            AsyncProblem::Unwaited => (
                format!("Async copy never waited for in work-group {}", ids(group)),
                format!("No wait_group_events named its event ({event}) before the work-group finished"),
            ),
            AsyncProblem::InvalidEvent => (
                format!("Invalid event in {call} in work-group {}", ids(group)),
                format!(
                    "Local{} waits for event {event}, which no async copy of the work-group has in flight",
                    ids(first)
                ),
            ),
        };
        format!("{title}\n\tKernel: {}\n{}\n\t{detail}", self.kernel, self.where_text(loc))
    }

    /// An async-copy finding's JSON object.
    fn async_copy_json(&self, finding: &Finding) -> serde_json::Map<String, Value> {
        let mut object = serde_json::Map::new();
        let Finding::AsyncCopy { problem, wait, group, reached, items, differs, first, event, loc } = *finding else {
            return object;
        };
        object.insert("kind".into(), json!("async-copy"));
        object.insert("kernel".into(), json!(self.kernel));
        object.insert("problem".into(), json!(problem.name()));
        object.insert("function".into(), json!(if wait { "wait_group_events" } else { "async_work_group_copy" }));
        self.where_json(loc, &mut object);
        object.insert("group_id".into(), json!(group));
        match problem {
            AsyncProblem::NonUniform => {
                object.insert("reached".into(), json!(reached));
                object.insert("work_group_size".into(), json!(items));
                object.insert("first_local_id".into(), json!(first));
                let (local, argument) = differs.map_or((Value::Null, Value::Null), |(l, a)| (json!(l), json!(a)));
                object.insert("other_local_id".into(), local);
                object.insert("argument".into(), argument);
            }
            AsyncProblem::Unwaited => {
                object.insert("event".into(), json!(event));
            }
            AsyncProblem::InvalidEvent => {
                object.insert("local_id".into(), json!(first));
                object.insert("event".into(), json!(event));
            }
        }
        object
    }

    /// The closing line: in JSON always (so a clean run is told from one that never ran); in
    /// text only when something was found.
    pub fn summary(&self, s: &Summary) -> Option<Rendered> {
        match self.format {
            Format::Json => {
                let mut object = json!({
                    "kind": "summary",
                    "kernel": self.kernel,
                    "races": s.races,
                    "out_of_bounds": s.out_of_bounds,
                    "divergences": s.divergences,
                    "work_groups": s.work_groups,
                    "work_items": s.work_items,
                });
                if s.omitted > 0 {
                    object["omitted"] = json!(s.omitted);
                }
                if s.access_modes > 0 {
                    object["access_modes"] = json!(s.access_modes);
                }
                if s.misaligned > 0 {
                    object["misaligned"] = json!(s.misaligned);
                }
                if s.async_copies > 0 {
                    object["async_copies"] = json!(s.async_copies);
                }
                if s.uninitialized > 0 {
                    object["uninitialized"] = json!(s.uninitialized);
                }
                if s.assertions > 0 {
                    object["assertions_failed"] = json!(s.assertions);
                }
                if let Some((schedules, truncated)) = s.schedules {
                    object["schedules"] = json!(schedules);
                    object["schedules_truncated"] = json!(truncated);
                }
                if let Some(width) = s.lockstep {
                    object["sub_group_lockstep"] = json!(width);
                    object["hidden"] = json!(s.hidden);
                }
                if s.lockstep.is_some() || s.livelocks > 0 {
                    object["livelocks"] = json!(s.livelocks);
                }
                if s.deadlocks > 0 {
                    object["deadlocks"] = json!(s.deadlocks);
                }
                Some(Rendered::Json(object))
            }
            Format::Text
                if s.races
                    + s.out_of_bounds
                    + s.divergences
                    + s.access_modes
                    + s.misaligned
                    + s.async_copies
                    + s.uninitialized
                    + s.assertions
                    + s.livelocks
                    + s.deadlocks
                    > 0
                    || s.omitted > 0 =>
            {
                let hidden = match s.lockstep {
                    Some(width) => format!(" ({} hidden by lockstep of width {width}: warnings)", s.hidden),
                    None => String::new(),
                };
                let livelocks =
                    if s.livelocks > 0 { format!(", {} sub-group livelock(s)", s.livelocks) } else { String::new() };
                let mut line = format!(
                    "clrace: kernel '{}': {} race(s){hidden}, {} out-of-bounds access(es), {} barrier divergence(s){livelocks} in {} work-group(s) of {} work-item(s)",
                    self.kernel, s.races, s.out_of_bounds, s.divergences, s.work_groups, s.work_items
                );
                if s.access_modes > 0 {
                    line.push_str(&format!("; {} access-mode violation(s)", s.access_modes));
                }
                if s.misaligned > 0 {
                    line.push_str(&format!("; {} misaligned access(es)", s.misaligned));
                }
                if s.async_copies > 0 {
                    line.push_str(&format!("; {} async-copy finding(s)", s.async_copies));
                }
                if s.uninitialized > 0 {
                    line.push_str(&format!("; {} uninitialized value(s) used", s.uninitialized));
                }
                if s.assertions > 0 {
                    line.push_str(&format!("; {} failed assertion(s)", s.assertions));
                }
                if s.deadlocks > 0 {
                    line.push_str(&format!("; {} deadlocked work-group(s)", s.deadlocks));
                }
                if s.omitted > 0 {
                    line.push_str(&format!(
                        "; {} more finding(s) at other instructions were counted but not shown",
                        s.omitted
                    ));
                }
                Some(Rendered::Text(line))
            }
            Format::Text => None,
        }
    }

    /// One finding of schedule exploration.
    pub fn schedule_finding(&self, finding: &ScheduleFinding) -> Rendered {
        match (finding, self.format) {
            (ScheduleFinding::Found { found, delays }, _) => self.found_in_schedule(found, delays),
            (ScheduleFinding::Result { buffer, element, mode, difference, delays, conflict }, Format::Json) => {
                let mut object = serde_json::Map::new();
                object.insert("kind".into(), json!("schedule-dependent-result"));
                object.insert("kernel".into(), json!(self.kernel));
                object.insert("buffer".into(), json!(buffer));
                object.insert("offset".into(), json!(difference.offset));
                let (element, compare) = match mode {
                    Mode::Bytes => (*element, "bytes"),
                    Mode::Multiset => (multiset_element(*element), "multiset"),
                };
                object.insert("compare".into(), json!(compare));
                object.insert("element".into(), json!(element.name()));
                object.insert("canonical".into(), Value::Array(elements(&difference.canonical, element)));
                object.insert("alternate".into(), Value::Array(elements(&difference.alternate, element)));
                object.insert("delays".into(), Value::Array(delays.iter().map(|d| self.delay_json(d)).collect()));
                if let Some((first, second)) = conflict {
                    object.insert(
                        "conflict".into(),
                        json!({"first": self.side_json(first), "second": self.side_json(second)}),
                    );
                }
                // Where it shows, for tools that want one place (SARIF): the last delay.
                if let Some(last) = delays.last() {
                    self.where_json(last.loc, &mut object);
                    object.insert("global_id".into(), json!(last.global_id));
                }
                Rendered::Json(Value::Object(object))
            }
            (ScheduleFinding::Result { buffer, element, mode, difference, delays, conflict }, Format::Text) => {
                Rendered::Text({
                    let (element, what) = match mode {
                        Mode::Bytes => (*element, format!("'{buffer}' at byte offset {}", difference.offset)),
                        Mode::Multiset => (
                            multiset_element(*element),
                            format!(
                                "'{buffer}' (compared as a multiset; first change at byte offset {})",
                                difference.offset
                            ),
                        ),
                    };
                    let values = |b: &[u8]| {
                        let v: Vec<String> = elements(b, element).iter().map(Value::to_string).collect();
                        format!("[{}]", v.join(", "))
                    };
                    let (canonical, alternate) = match mode {
                        Mode::Bytes => ("canonical", "alternate"),
                        Mode::Multiset => ("only canonical", "only alternate"),
                    };
                    let mut out = format!(
                        "Schedule-dependent result in global memory: {what}, as {}\n\tKernel: {}\n\t{canonical}: {}\n\t{alternate}: {}",
                        element.name(),
                        self.kernel,
                        values(&difference.canonical),
                        values(&difference.alternate),
                    );
                    out.push_str(&self.delays_text(delays));
                    if let Some((first, second)) = conflict {
                        out.push_str(&format!(
                            "\n\tOrder flipped: the {} had run before the {}",
                            self.side_text(first),
                            self.side_text(second)
                        ));
                    }
                    out
                })
            }
            (ScheduleFinding::Deadlock { waiting, waiting_count, message, delays }, Format::Json) => {
                let first_waiter = waiting.first();
                let waiting: Vec<Value> = waiting
                    .iter()
                    .map(|w| {
                        let p = self.place(w.loc);
                        let (_, _, offset) = crate::exec::memory::split(w.addr);
                        json!({"global_id": w.global_id, "file": shown_path(p.file), "line": p.line, "address_offset": offset})
                    })
                    .collect();
                let mut object = json!({
                    "kind": "deadlock",
                    "kernel": self.kernel,
                    "waiting": waiting,
                    "waiting_count": waiting_count,
                    "message": message,
                    "delays": delays.iter().map(|d| self.delay_json(d)).collect::<Vec<_>>(),
                });
                // Where it shows, for tools that want one place (SARIF): the first waiter.
                if let (Some(first), Value::Object(map)) = (first_waiter, &mut object) {
                    self.where_json(first.loc, map);
                    map.insert("global_id".into(), json!(first.global_id));
                }
                Rendered::Json(object)
            }
            (ScheduleFinding::Deadlock { waiting, waiting_count, message, delays }, Format::Text) => Rendered::Text({
                let mut out = format!("Deadlock: no waiting work-item can ever go on\n\tKernel: {}", self.kernel);
                if let Some(m) = message {
                    out.push_str(&format!("\n\t{m}"));
                }
                for w in waiting {
                    out.push_str(&format!(
                        "\n\tGlobal{} waits at an atomic\n{}",
                        ids(w.global_id),
                        self.where_text(w.loc)
                    ));
                }
                if *waiting_count > waiting.len() {
                    out.push_str(&format!("\n\t... {} work-item(s) wait in all", waiting_count));
                }
                out.push_str(&self.delays_text(delays));
                out
            }),
        }
    }

    /// A race or emulator finding seen under exploration only, as its usual report plus the
    /// delays of the schedule that showed it (JSON: `delays`; text: `Delayed:` lines).
    fn found_in_schedule(&self, found: &Found, delays: &[Delay]) -> Rendered {
        let usual = match found {
            Found::Race(race) => self.race(race),
            Found::Emulator { finding, count } => self.finding_counted(finding, *count),
        };
        match usual {
            Rendered::Json(mut value) => {
                value["delays"] = Value::Array(delays.iter().map(|d| self.delay_json(d)).collect());
                Rendered::Json(value)
            }
            Rendered::Text(usual) => {
                Rendered::Text(format!("{usual}\n\tFound under schedule exploration{}", self.delays_text(delays)))
            }
        }
    }

    fn short_place(&self, loc: u32) -> String {
        let p = self.place(loc);
        format!("{}:{}", shown_path(p.file), p.line)
    }

    /// A delayed atomic or plain access: file, line, the work-item's global id and the operation.
    pub fn delay_json(&self, d: &Delay) -> Value {
        let p = self.place(d.loc);
        json!({"file": shown_path(p.file), "line": p.line, "global_id": d.global_id, "operation": d.operation()})
    }

    /// One side of a flipped conflict: the delay's fields, and the values it read and wrote
    /// (as signed integers of its size; null when it read or wrote nothing).
    fn side_json(&self, side: &Side) -> Value {
        let mut value = self.delay_json(&side.at);
        value["read"] = side_value(side.read, side.size).map_or(Value::Null, |v| json!(v));
        value["wrote"] = side_value(side.wrote, side.size).map_or(Value::Null, |v| json!(v));
        value
    }

    /// `atomic_add of Global(0,0,0) at queue.cl:4 (read 0, wrote 1)`.
    fn side_text(&self, side: &Side) -> String {
        let mut values = Vec::new();
        if let Some(v) = side_value(side.read, side.size) {
            values.push(format!("read {v}"));
        }
        match side_value(side.wrote, side.size) {
            Some(v) => values.push(format!("wrote {v}")),
            None if side.at.op == AtomicOp::CompareExchange => values.push("failed".to_string()),
            None => {}
        }
        let values = if values.is_empty() { String::new() } else { format!(" ({})", values.join(", ")) };
        format!(
            "{} of Global{} at {}{values}",
            side.at.operation(),
            ids(side.at.global_id),
            self.short_place(side.at.loc)
        )
    }

    fn delays_text(&self, delays: &[Delay]) -> String {
        if delays.is_empty() {
            return "\n\tSchedule: the canonical one".to_string();
        }
        let mut out = String::new();
        for d in delays {
            let what = if d.plain { d.operation() } else { "atomic" };
            out.push_str(&format!("\n\tDelayed: the {what} of Global{}\n{}", ids(d.global_id), self.where_text(d.loc)));
        }
        out
    }

    /// The text line that closes an exploration: always shown when exploring.
    pub fn exploration_line(&self, e: &Exploration, bound: usize) -> String {
        let (results, deadlocks) = counts_of_exploration(e);
        let mut line = format!(
            "clrace: kernel '{}': explored {} schedule(s) (bound {bound}){}: {results} schedule-dependent result(s), {deadlocks} deadlock(s)",
            self.kernel,
            e.schedules,
            if e.truncated { ", truncated" } else { "" }
        );
        let usual = e.findings.iter().filter(|f| matches!(f, ScheduleFinding::Found { .. })).count();
        if usual > 0 {
            line.push_str(&format!(", {usual} other finding(s) not seen by the check"));
        }
        for (delays, why) in &e.failures {
            let at: Vec<String> =
                delays.iter().map(|d| format!("Global{} at {}", ids(d.global_id), self.short_place(d.loc))).collect();
            line.push_str(&format!("\nclrace: a schedule delaying {} failed: {why}", at.join(", ")));
        }
        line
    }
}

/// A value an event read or wrote, as a signed integer of its `size` bytes (None past 8 bytes).
fn side_value(value: Option<u64>, size: u32) -> Option<i64> {
    let v = value?;
    match size {
        1..=8 => Some(crate::ir::value::sign_extend(v, (size * 8) as u8)),
        _ => None,
    }
}

/// A multiset compares 4-byte elements: the buffer's type when it has that size, else `int`.
fn multiset_element(element: Element) -> Element {
    if element.size() == 4 { element } else { Element::Signed(4) }
}

/// Bytes as JSON numbers of `element` (a partial last element as bytes).
fn elements(bytes: &[u8], element: Element) -> Vec<Value> {
    let size = element.size();
    let mut out: Vec<Value> = bytes
        .chunks_exact(size)
        .map(|c| {
            let mut raw = [0u8; 8];
            raw[..size].copy_from_slice(c);
            let bits = u64::from_le_bytes(raw);
            match element {
                Element::Signed(n) => json!(crate::ir::value::sign_extend(bits, n * 8)),
                Element::Unsigned(_) | Element::Byte => json!(bits),
                Element::Float(4) => json!(f32::from_bits(bits as u32) as f64),
                Element::Float(_) => json!(f64::from_bits(bits)),
            }
        })
        .collect();
    out.extend(bytes.chunks_exact(size).remainder().iter().map(|&b| json!(b)));
    out
}
