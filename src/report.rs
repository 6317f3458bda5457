//! Reports: races and other findings rendered for people (text) or for tools (JSON Lines, one
//! object per line, schema in the README). Both name buffers by kernel argument or `__local`
//! variable with a byte offset, give every work-item's global, local and group ids, and show the
//! source line of each access.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::detect::lockstep::LockstepClass;
use crate::detect::{Race, RaceAccess, RaceScope, Who};
use crate::exec::{AsyncProblem, Finding, Launch, RunOutcome};
use crate::explore::compare::{Element, Mode};
use crate::explore::{Delay, Exploration, Found, ScheduleFinding, Side};
use crate::ir::AtomicOp;
use crate::ir::Module;

/// How reports are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Text,
    Json,
}

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
        }
    }

    /// Findings that make the exit status 1: everything but races hidden by lockstep.
    pub fn errors(&self) -> usize {
        self.races.saturating_sub(self.hidden)
            + self.out_of_bounds
            + self.divergences
            + self.livelocks
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
            access_modes: count(|f| matches!(f, Finding::AccessMode { .. })),
            misaligned: count(|f| matches!(f, Finding::Misaligned { .. })),
            async_copies: count(|f| matches!(f, Finding::AsyncCopy { .. })),
            uninitialized: count(|f| matches!(f, Finding::Uninitialized { .. })),
            assertions: count(|f| matches!(f, Finding::AssertionFailed { .. })),
            omitted: outcome.findings_omitted,
            ..Summary::of(races, &[], launch)
        }
    }
}

impl Summary {
    /// Takes a suppressed finding out of the counts: its JSON report, counted as often as its
    /// `count` says (once without one). Exploration's own findings (schedule-dependent results,
    /// deadlocks) are in no count of the summary.
    pub fn take_suppressed(&mut self, report: &Value) {
        let weight = report["count"].as_u64().unwrap_or(1) as usize;
        if report["level"] == "warning" {
            self.hidden = self.hidden.saturating_sub(1);
        }
        let count = match report["kind"].as_str() {
            Some("race") => &mut self.races,
            Some("barrier-divergence") => &mut self.divergences,
            Some("sub-group-livelock") => &mut self.livelocks,
            Some("access-mode") => &mut self.access_modes,
            Some("misaligned") => &mut self.misaligned,
            Some("async-copy") => &mut self.async_copies,
            Some("uninitialized") => &mut self.uninitialized,
            Some("assertion-failed") => &mut self.assertions,
            Some("schedule-dependent-result" | "deadlock") => return,
            _ => &mut self.out_of_bounds,
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
                Finding::Uninitialized { .. } => &mut self.uninitialized,
            };
            *counter += count;
        }
    }
}

/// The occurrence count of each finding of `outcome` (1 where none is recorded).
fn counts_of(outcome: &RunOutcome) -> impl Iterator<Item = u64> + '_ {
    (0..outcome.findings.len()).map(|i| outcome.finding_counts.get(i).copied().unwrap_or(1))
}

/// Source text by file name, read on first use.
pub struct Sources {
    /// Program files and their text, which may not be readable by their recorded names.
    programs: Vec<(PathBuf, String)>,
    files: RefCell<HashMap<String, Option<Vec<String>>>>,
}

impl Sources {
    pub fn new(programs: Vec<(PathBuf, String)>) -> Sources {
        Sources { programs, files: RefCell::new(HashMap::new()) }
    }

    /// Line `line` (1-based) of `file`, trimmed, if the file can be read.
    pub fn line(&self, file: &str, line: u32) -> Option<String> {
        let mut files = self.files.borrow_mut();
        let lines = files.entry(file.to_string()).or_insert_with(|| {
            let same_name = |p: &Path| p.file_name().is_some_and(|n| Path::new(file).file_name() == Some(n));
            let known = self.programs.iter().find(|(path, _)| same_name(path));
            let text = match known {
                Some((_, text)) => Some(text.clone()),
                None => std::fs::read_to_string(file).ok(),
            };
            text.map(|t| t.lines().map(str::to_string).collect())
        });
        let text = lines.as_ref()?.get(line.checked_sub(1)? as usize)?;
        Some(text.trim().to_string())
    }
}

/// Renders the findings of one kernel launch.
pub struct Reporter<'a> {
    pub kernel: &'a str,
    pub module: &'a Module,
    pub sources: &'a Sources,
    pub format: Format,
}

/// A source location's parts.
struct Place<'a> {
    file: &'a str,
    line: u32,
    column: u32,
}

/// A source path as people want to read it: relative to the current directory when inside it.
fn shown_path(file: &str) -> String {
    let relative =
        std::env::current_dir().ok().and_then(|cwd| Path::new(file).strip_prefix(cwd).ok().map(Path::to_path_buf));
    relative.map_or_else(|| file.to_string(), |p| p.display().to_string())
}

fn ids(v: [u64; 3]) -> String {
    format!("({},{},{})", v[0], v[1], v[2])
}

impl Reporter<'_> {
    fn place(&self, loc: u32) -> Place<'_> {
        match self.module.locations.get(loc as usize) {
            Some(l) => Place { file: &l.file, line: l.line, column: l.column },
            None => Place { file: "", line: 0, column: 0 },
        }
    }

    /// `At file:line:col` and the source line, for text reports.
    fn where_text(&self, loc: u32) -> String {
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

    fn where_json(&self, loc: u32, object: &mut serde_json::Map<String, Value>) {
        let p = self.place(loc);
        object.insert("file".into(), json!(shown_path(p.file)));
        object.insert("line".into(), json!(p.line));
        object.insert("column".into(), json!(p.column));
        object.insert("source".into(), json!(self.sources.line(p.file, p.line)));
    }

    /// One race.
    pub fn race(&self, race: &Race) -> String {
        let race_type = if race.write_write { "write-write" } else { "read-write" };
        let space = if race.local { "local" } else { "global" };
        let scope = match race.scope {
            RaceScope::IntraGroup => "intra-group",
            RaceScope::InterGroup => "inter-group",
        };
        match self.format {
            Format::Json => {
                let accesses: Vec<Value> = race.accesses.iter().map(|a| self.access_json(a)).collect();
                let mut object = json!({
                    "kind": "race",
                    "kernel": self.kernel,
                    "race_type": race_type,
                    "address_space": space,
                    "buffer": race.buffer,
                    "offset": race.offset,
                    "pixel": race.pixel,
                    "hazards": race.hazards,
                    "uniform": race.uniform,
                    "scope": scope,
                    "reason": race.reason,
                    "accesses": accesses,
                });
                if let Some((class, width)) = race.lockstep {
                    object["lockstep"] = json!(class.name());
                    object["sub_group_size"] = json!(width);
                    object["level"] = json!(if class.is_warning() { "warning" } else { "error" });
                }
                object.to_string()
            }
            Format::Text => {
                let title = if race.write_write { "Write-write" } else { "Read-write" };
                let uniform = if race.uniform { " (uniform: both stored the same bytes)" } else { "" };
                let bytes = if race.hazards == 1 { "byte" } else { "bytes" };
                let [first, second] = &race.accesses;
                let place = match race.pixel {
                    Some([x, y, z]) => {
                        format!("image '{}' at pixel ({x}, {y}, {z}), byte offset {}", race.buffer, race.offset)
                    }
                    None => format!("{space} memory: '{}' at byte offset {}", race.buffer, race.offset),
                };
                let (warning, lockstep) = match race.lockstep {
                    Some((class, width)) => (class.is_warning(), lockstep_text(class, width)),
                    None => (false, String::new()),
                };
                let title = if warning {
                    format!("Warning: {} data race", title.to_lowercase())
                } else {
                    format!("{title} data race")
                };
                format!(
                    "{title} in {place}, {} {bytes} in all{uniform}\n\
                     \tKernel: {}\n\tWhy: {} ({scope}){lockstep}\n\n\tFirst:  {}\n{}\n\n\tSecond: {}\n{}",
                    race.hazards,
                    self.kernel,
                    race.reason,
                    self.access_text(first),
                    self.where_text(first.loc),
                    self.access_text(second),
                    self.where_text(second.loc),
                )
            }
        }
    }

    fn access_text(&self, a: &RaceAccess) -> String {
        match a.who {
            Who::WorkItem { global, local, group } => {
                format!("{} by Global{} Local{} Group{}", a.access.name(), ids(global), ids(local), ids(group))
            }
            Who::WorkGroup { group } => format!("{} by work-group Group{}", a.access.name(), ids(group)),
        }
    }

    fn access_json(&self, a: &RaceAccess) -> Value {
        let mut object = serde_json::Map::new();
        object.insert("access".into(), json!(a.access.name()));
        match a.who {
            Who::WorkItem { global, local, group } => {
                object.insert("entity".into(), json!("work-item"));
                object.insert("global_id".into(), json!(global));
                object.insert("local_id".into(), json!(local));
                object.insert("group_id".into(), json!(group));
            }
            Who::WorkGroup { group } => {
                object.insert("entity".into(), json!("work-group"));
                object.insert("global_id".into(), Value::Null);
                object.insert("local_id".into(), Value::Null);
                object.insert("group_id".into(), json!(group));
            }
        }
        self.where_json(a.loc, &mut object);
        Value::Object(object)
    }

    /// One emulator finding (out-of-bounds access, barrier divergence).
    pub fn finding(&self, finding: &Finding) -> String {
        self.render_finding(finding, None)
    }

    /// One emulator finding that occurred `count` times (its first occurrence in NDRange order
    /// is the one shown): when the count is above 1, JSON gains a `count` field and text an
    /// `Occurrences:` line.
    pub fn finding_counted(&self, finding: &Finding, count: u64) -> String {
        self.render_finding(finding, Some(count))
    }

    /// Every finding of a run, each with its count, one report per item.
    pub fn findings<'o>(&'o self, outcome: &'o RunOutcome) -> impl Iterator<Item = String> + 'o {
        outcome.findings.iter().zip(counts_of(outcome)).map(|(f, n)| self.finding_counted(f, n))
    }

    fn render_finding(&self, finding: &Finding, count: Option<u64>) -> String {
        let mut report = self.finding_alone(finding, count);
        if let (Some(n), Format::Text) = (count, self.format)
            && n > 1
        {
            report.push_str(&format!("\n\tOccurrences: {n} (the first in NDRange order is shown)"));
        }
        report
    }

    /// A finding's JSON object, with its count when known.
    fn finding_json(mut object: serde_json::Map<String, Value>, count: Option<u64>) -> String {
        if let Some(n) = count.filter(|&n| n > 1) {
            object.insert("count".into(), json!(n));
        }
        Value::Object(object).to_string()
    }

    fn finding_alone(&self, finding: &Finding, count: Option<u64>) -> String {
        match (finding, self.format) {
            (
                Finding::OutOfBounds { store, space, allocation, offset, size, alloc_size, global_id, loc },
                Format::Text,
            ) => {
                let access = if *store { "write" } else { "read" };
                format!(
                    "Invalid {access} of size {size} at {space} memory: '{allocation}' ({alloc_size} bytes), offset {offset}\n\
                     \tKernel: {}\n\tWork-item: Global{}\n{}",
                    self.kernel,
                    ids(*global_id),
                    self.where_text(*loc)
                )
            }
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
            (Finding::AssertionFailed { message, global_id, loc }, Format::Text) => {
                let what = message
                    .as_deref()
                    .map_or_else(|| "Assertion failed".to_string(), |m| format!("Assertion failed: {m}"));
                format!(
                    "{what}\n\tKernel: {}\n\tWork-item: Global{}\n{}",
                    self.kernel,
                    ids(*global_id),
                    self.where_text(*loc)
                )
            }
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
            (Finding::AsyncCopy { .. }, Format::Text) => self.async_copy_text(finding),
            (Finding::AsyncCopy { .. }, Format::Json) => Self::finding_json(self.async_copy_json(finding), count),
        }
    }

    /// An access-mode, misaligned or array-index finding (checks 10, 12 and 13).
    fn memory_check_finding(&self, finding: &Finding, count: Option<u64>) -> String {
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
            Format::Text => format!(
                "{title}\n\tKernel: {}\n\tWork-item: Global{}\n{}",
                self.kernel,
                ids(*global_id),
                self.where_text(*loc)
            ),
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
    pub fn summary(&self, s: &Summary) -> Option<String> {
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
                Some(object.to_string())
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
                if s.omitted > 0 {
                    line.push_str(&format!(
                        "; {} more finding(s) at other instructions were counted but not shown",
                        s.omitted
                    ));
                }
                Some(line)
            }
            Format::Text => None,
        }
    }

    /// One finding of schedule exploration.
    pub fn schedule_finding(&self, finding: &ScheduleFinding) -> String {
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
                Value::Object(object).to_string()
            }
            (ScheduleFinding::Result { buffer, element, mode, difference, delays, conflict }, Format::Text) => {
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
                object.to_string()
            }
            (ScheduleFinding::Deadlock { waiting, waiting_count, message, delays }, Format::Text) => {
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
            }
        }
    }

    /// A race or emulator finding seen under exploration only, as its usual report plus the
    /// delays of the schedule that showed it (JSON: `delays`; text: `Delayed:` lines).
    fn found_in_schedule(&self, found: &Found, delays: &[Delay]) -> String {
        let usual = match found {
            Found::Race(race) => self.race(race),
            Found::Emulator { finding, count } => self.finding_counted(finding, *count),
        };
        match self.format {
            Format::Json => {
                let mut value: Value = serde_json::from_str(&usual).unwrap_or_default();
                value["delays"] = Value::Array(delays.iter().map(|d| self.delay_json(d)).collect());
                value.to_string()
            }
            Format::Text => format!("{usual}\n\tFound under schedule exploration{}", self.delays_text(delays)),
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

/// The text line of a race's lockstep class.
fn lockstep_text(class: LockstepClass, width: u32) -> String {
    let why = match class {
        LockstepClass::InterSubGroup => {
            "the work-items are in different sub-groups (or work-groups), which lockstep does not order: an error"
        }
        LockstepClass::Hidden => {
            "both work-items are in one sub-group and ran in lockstep between the two accesses, which hides this race \
             on lockstep hardware; OpenCL promises no lockstep (another sub-group size, independent thread scheduling \
             or a CPU driver breaks it): a warning; order the accesses with sub_group_barrier()"
        }
        LockstepClass::SameInstruction => {
            "both work-items of one sub-group stored different values with the same instruction at once, which even \
             lockstep does not order: an error"
        }
        LockstepClass::Divergent => {
            "the accesses are on the two sides of a divergent branch of one sub-group, whose paths lockstep runs in an \
             order nothing specifies: an error"
        }
    };
    format!("\n\tLockstep: {} (sub-groups of {width}): {why}", class.name())
}

/// Schedule-dependent results and deadlocks an exploration found.
pub fn counts_of_exploration(e: &Exploration) -> (usize, usize) {
    let count = |pick: fn(&ScheduleFinding) -> bool| e.findings.iter().filter(|f| pick(f)).count();
    (count(|f| matches!(f, ScheduleFinding::Result { .. })), count(|f| matches!(f, ScheduleFinding::Deadlock { .. })))
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
