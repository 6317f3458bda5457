//! The typed record of each finding ([`crate::finding::Finding`]): its kind, places, weight and
//! identity taken from the finding's own data, and its JSON report object made once.

use super::render::{Rendered, Reporter};
use super::{Format, shown_path};
use crate::detect::Race;
use crate::exec::Finding as Emulated;
use crate::explore::{Found, ScheduleFinding};
use crate::finding::{Finding, Kind, Place};

/// A finding as the check gave it.
#[derive(Debug, Clone, Copy)]
pub enum Subject<'a> {
    Race(&'a Race),
    /// The emulator's, with how many times it occurred.
    Emulator {
        finding: &'a Emulated,
        count: u64,
    },
    /// Exploration's: its own kinds, or one of the others seen under a schedule only.
    Schedule(&'a ScheduleFinding),
}

/// The typed parts of a record, before its JSON object.
struct Parts {
    kind: Kind,
    write_write: bool,
    uniform: bool,
    hidden: bool,
    count: u64,
    places: Vec<Place>,
    /// The memory it names (a buffer or an image), for its identity.
    memory: Option<String>,
}

impl Reporter<'_> {
    /// The record of one finding (its JSON object made whatever this reporter's format).
    pub fn record(&self, subject: Subject) -> Finding {
        let object = Reporter { format: Format::Json, ..*self }.render(subject);
        let parts = self.parts(subject);
        let key = key(&parts, subject);
        Finding {
            kind: parts.kind,
            kernel: self.kernel.to_string(),
            write_write: parts.write_write,
            uniform: parts.uniform,
            hidden: parts.hidden,
            count: parts.count,
            places: parts.places,
            key,
            json: object.into_json(),
        }
    }

    /// The report of one finding, in this reporter's format.
    pub fn render(&self, subject: Subject) -> Rendered {
        match subject {
            Subject::Race(race) => self.race(race),
            Subject::Emulator { finding, count } => self.finding_counted(finding, count),
            Subject::Schedule(finding) => self.schedule_finding(finding),
        }
    }

    fn at(&self, access: Option<&'static str>, loc: u32) -> Place {
        let p = self.place(loc);
        Place { access, file: shown_path(p.file), line: p.line, column: p.column }
    }

    fn parts(&self, subject: Subject) -> Parts {
        let alone = |kind: Kind, places: Vec<Place>, memory: Option<&String>| Parts {
            kind,
            write_write: false,
            uniform: false,
            hidden: false,
            count: 1,
            places,
            memory: memory.cloned(),
        };
        match subject {
            Subject::Race(race) => Parts {
                kind: Kind::Race,
                write_write: race.write_write,
                uniform: race.uniform,
                hidden: race.lockstep.is_some_and(|(class, _)| class.is_warning()),
                count: 1,
                places: race.accesses.iter().map(|a| self.at(Some(a.access.name()), a.loc)).collect(),
                memory: Some(race.buffer.clone()),
            },
            Subject::Emulator { finding, count } => {
                let (kind, access, loc, memory) = emulated(finding);
                Parts { count, ..alone(kind, vec![self.at(access, loc)], memory) }
            }
            Subject::Schedule(ScheduleFinding::Found { found: Found::Race(race), .. }) => {
                self.parts(Subject::Race(race))
            }
            Subject::Schedule(ScheduleFinding::Found { found: Found::Emulator { finding, count }, .. }) => {
                self.parts(Subject::Emulator { finding, count: *count })
            }
            Subject::Schedule(ScheduleFinding::Result { buffer, delays, .. }) => {
                let places = delays.last().map(|d| self.at(None, d.loc)).into_iter().collect();
                alone(Kind::ScheduleDependentResult, places, Some(buffer))
            }
            Subject::Schedule(ScheduleFinding::Deadlock { waiting, .. }) => {
                let places = waiting.first().map(|w| self.at(None, w.loc)).into_iter().collect();
                alone(Kind::Deadlock, places, None)
            }
        }
    }
}

/// An emulator finding's kind, what it did at its place, the place, and the memory it names.
fn emulated(finding: &Emulated) -> (Kind, Option<&'static str>, u32, Option<&String>) {
    let load_or_store = |store: bool| Some(if store { "store" } else { "load" });
    match finding {
        Emulated::OutOfBounds { store, allocation, loc, .. } => {
            (Kind::OutOfBounds, load_or_store(*store), *loc, Some(allocation))
        }
        Emulated::ImageOutOfBounds { store, image, loc, .. } => {
            (Kind::ImageOutOfBounds, load_or_store(*store), *loc, Some(image))
        }
        Emulated::AccessMode { store, allocation, loc, .. } => {
            (Kind::AccessMode, load_or_store(*store), *loc, Some(allocation))
        }
        Emulated::Misaligned { access, allocation, loc, .. } => {
            (Kind::Misaligned, Some(access), *loc, Some(allocation))
        }
        Emulated::ArrayIndex { allocation, loc, .. } => (Kind::OutOfBounds, Some("index"), *loc, Some(allocation)),
        Emulated::Uninitialized { allocation, loc, .. } => (Kind::Uninitialized, None, *loc, Some(allocation)),
        Emulated::AssertionFailed { loc, .. } => (Kind::AssertionFailed, None, *loc, None),
        Emulated::BarrierDivergence { barrier, .. } => (Kind::BarrierDivergence, None, *barrier, None),
        Emulated::SubGroupLivelock { loc, .. } => (Kind::SubGroupLivelock, None, *loc, None),
        Emulated::Deadlock { waiting, .. } => (Kind::Deadlock, None, waiting.first().map_or(0, |w| w.1), None),
        Emulated::AsyncCopy { loc, .. } => (Kind::AsyncCopy, None, *loc, None),
    }
}

/// What identifies a finding across launches of one kernel: its kind and where it happened
/// (both sides of a race, with the race's type and memory), not the work-items or the offsets,
/// which vary with the data.
fn key(parts: &Parts, subject: Subject) -> String {
    let place = |p: &Place| format!("{}:{}:{}:{}", p.access.unwrap_or("-"), p.file, p.line, p.column);
    let first = parts.places.first();
    let line_column = first.map_or_else(|| "-".to_string(), |p| format!("{}:{}", p.line, p.column));
    match parts.kind {
        Kind::Race => {
            let race = match subject {
                Subject::Race(race) => Some(race),
                Subject::Schedule(ScheduleFinding::Found { found: Found::Race(race), .. }) => Some(race),
                _ => None,
            };
            let space = race.map_or("", |r| if r.local { "local" } else { "global" });
            let sides: Vec<String> = parts.places.iter().map(place).collect();
            format!("race {} {space} {:?} {}", parts.write_write, parts.memory, sides.join(" "))
        }
        Kind::BarrierDivergence => format!("divergence {line_column}"),
        Kind::AsyncCopy => {
            let problem = match subject {
                Subject::Emulator { finding: Emulated::AsyncCopy { problem, .. }, .. }
                | Subject::Schedule(ScheduleFinding::Found {
                    found: Found::Emulator { finding: Emulated::AsyncCopy { problem, .. }, .. },
                    ..
                }) => problem.name(),
                _ => "",
            };
            format!("async-copy {problem} {line_column}")
        }
        kind => format!("{} {:?} {}", kind.name(), parts.memory, first.map_or_else(|| "-".to_string(), place)),
    }
}
