//! A race's report: its text and JSON object, the words for why its accesses were not ordered
//! (from the detector's [`RaceReason`]) and for its lockstep class.

use serde_json::{Value, json};

use super::render::{Rendered, Reporter};
use super::{Format, ids};
use crate::detect::lockstep::LockstepClass;
use crate::detect::{Race, RaceAccess, RaceReason, RaceScope, Who};

impl Reporter<'_> {
    /// One race.
    pub fn race(&self, race: &Race) -> Rendered {
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
                    "reason": self.reason_text(&race.reason),
                    "accesses": accesses,
                });
                if let Some((class, width)) = race.lockstep {
                    object["lockstep"] = json!(class.name());
                    object["sub_group_size"] = json!(width);
                    object["level"] = json!(if class.is_warning() { "warning" } else { "error" });
                }
                Rendered::Json(object)
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
                Rendered::Text(format!(
                    "{title} in {place}, {} {bytes} in all{uniform}\n\
                     \tKernel: {}\n\tWhy: {} ({scope}){lockstep}\n\n\tFirst:  {}\n{}\n\n\tSecond: {}\n{}",
                    race.hazards,
                    self.kernel,
                    self.reason_text(&race.reason),
                    self.access_text(first),
                    self.where_text(first.loc),
                    self.access_text(second),
                    self.where_text(second.loc),
                ))
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

    /// Why the race's accesses were not ordered, in words. Source places are named by file name
    /// only, the same wherever the program lives.
    fn reason_text(&self, reason: &RaceReason) -> String {
        let at = |loc: u32| match self.module.locations.get(loc as usize) {
            Some(l) => {
                let file =
                    std::path::Path::new(&l.file).file_name().map_or(l.file.clone(), |n| n.to_string_lossy().into());
                format!("{file}:{}:{}", l.line, l.column)
            }
            None => "unknown location".to_string(),
        };
        match *reason {
            RaceReason::Relaxed { at: loc, direct: true } => format!(
                "the atomic read at {} took its value from the other side's atomic write, but a relaxed atomic \
                 (OpenCL 1.x atomics are relaxed) does not order the plain accesses around it",
                at(loc)
            ),
            RaceReason::Relaxed { at: loc, direct: false } => format!(
                "the work-groups communicate only through the relaxed atomic at {} (OpenCL 1.x atomics are \
                 relaxed), which orders no plain accesses",
                at(loc)
            ),
            RaceReason::GroupScope { at: loc } => format!(
                "the release/acquire pair read at {} uses memory_scope_work_group, which does not reach across \
                 work-groups",
                at(loc)
            ),
            RaceReason::FenceOnly { group, local } => {
                let (fenced, unfenced) = if local { ("global", "local") } else { ("local", "global") };
                format!(
                    "the barrier between these accesses in work-group {} fences only {fenced} memory, not {unfenced}",
                    ids(group)
                )
            }
            RaceReason::NoBarrier { group } => {
                format!("no barrier between these accesses in work-group {}", ids(group))
            }
            RaceReason::CopyInFlight { group, copy } => format!(
                "the async_work_group_copy at {} is still in flight in work-group {}: a copy is complete only at the \
                 wait_group_events that names its event",
                at(copy),
                ids(group)
            ),
            RaceReason::Groups { first, second } => {
                format!("work-groups {} and {}: barriers do not order accesses across groups", ids(first), ids(second))
            }
        }
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
