//! One finding of a checked launch as a typed record: what suppressions, SARIF, the summaries
//! and the layer's memory of earlier launches read, made once per finding by the report module
//! (`report::Reporter::record`) from the detector's, the emulator's and exploration's data.
//!
//! It owns the finding kinds and their names in reports. It cannot see how a finding was found
//! nor how it is worded: the record carries its JSON report object already made, for the JSON
//! lines and for the fields SARIF lists, and the text report is made apart.

use serde_json::Value;

/// The kind of a finding, as reports and suppression rules name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Race,
    OutOfBounds,
    ImageOutOfBounds,
    BarrierDivergence,
    SubGroupLivelock,
    AccessMode,
    Misaligned,
    AsyncCopy,
    AssertionFailed,
    Uninitialized,
    /// Exploration: an output that differs between schedules.
    ScheduleDependentResult,
    /// Exploration: a schedule in which no waiting work-item can go on.
    Deadlock,
}

impl Kind {
    /// Every kind, in the order suppression rules list them.
    pub const ALL: [Kind; 12] = [
        Kind::Race,
        Kind::OutOfBounds,
        Kind::ImageOutOfBounds,
        Kind::BarrierDivergence,
        Kind::AccessMode,
        Kind::Misaligned,
        Kind::AsyncCopy,
        Kind::AssertionFailed,
        Kind::ScheduleDependentResult,
        Kind::Deadlock,
        Kind::SubGroupLivelock,
        Kind::Uninitialized,
    ];

    /// The `kind` of its reports.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Race => "race",
            Kind::OutOfBounds => "out-of-bounds",
            Kind::ImageOutOfBounds => "image-out-of-bounds",
            Kind::BarrierDivergence => "barrier-divergence",
            Kind::SubGroupLivelock => "sub-group-livelock",
            Kind::AccessMode => "access-mode",
            Kind::Misaligned => "misaligned",
            Kind::AsyncCopy => "async-copy",
            Kind::AssertionFailed => "assertion-failed",
            Kind::Uninitialized => "uninitialized",
            Kind::ScheduleDependentResult => "schedule-dependent-result",
            Kind::Deadlock => "deadlock",
        }
    }

    /// Exploration's own kinds, which no summary count but exploration's includes.
    pub fn explored(self) -> bool {
        matches!(self, Kind::ScheduleDependentResult | Kind::Deadlock)
    }
}

/// A source place of a finding, as its reports name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// What was done there (`load`, `store`, `atomic`, `index`...), when the report says.
    pub access: Option<&'static str>,
    /// The file as shown (relative to the current directory when inside it); empty if unknown.
    pub file: String,
    pub line: u32,
    pub column: u32,
}

/// One finding of a checked launch.
#[derive(Debug, Clone)]
pub struct Finding {
    pub kind: Kind,
    pub kernel: String,
    /// For a race: both sides wrote (rule `race/write-write`; else `race/read-write`).
    pub write_write: bool,
    /// For a race: both sides stored the same bytes.
    pub uniform: bool,
    /// A race that sub-group lockstep hides: a warning, which makes no exit status 1.
    pub hidden: bool,
    /// How many times it occurred (the emulator counts its findings; 1 for the others).
    pub count: u64,
    /// Where it happened: both accesses of a race, else its own place (none when unknown).
    pub places: Vec<Place>,
    /// What identifies it across launches of its kernel: its kind, places and memory, not the
    /// work-items or offsets, which vary with the data.
    pub key: String,
    /// Its JSON report object (the schema in the README), keys in report order.
    pub json: Value,
}

impl Finding {
    /// The SARIF rule it falls under.
    pub fn rule_id(&self) -> String {
        match self.kind {
            Kind::Race if self.write_write => "race/write-write".to_string(),
            Kind::Race => "race/read-write".to_string(),
            kind => kind.name().to_string(),
        }
    }

    /// Error, or warning for the benign classes (uniform races, races lockstep hides).
    pub fn is_warning(&self) -> bool {
        self.uniform || self.hidden
    }
}
