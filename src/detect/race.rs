//! Races as the detector finds them (one event per racing byte) and as it reports them: one per
//! pair of instructions and access kinds, shown at its lowest address with the first pair of
//! entities found there, counting the distinct bytes the pair raced on.

use super::lockstep::LockstepClass;
use super::record::Entity;
use super::sync::Link;

/// How an access touched memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AccessType {
    Load,
    Store,
    Atomic,
}

impl AccessType {
    pub fn name(self) -> &'static str {
        match self {
            AccessType::Load => "load",
            AccessType::Store => "store",
            AccessType::Atomic => "atomic",
        }
    }
}

/// One side of a race.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Side {
    pub entity: Entity,
    /// The instruction's source location (an index into `ir::Module::locations`).
    pub loc: u32,
    pub access: AccessType,
}

/// Where a racing byte is: global or local memory, allocation, offset; for local memory also the
/// work-group whose copy it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Place {
    pub local: bool,
    pub allocation: u32,
    pub offset: u64,
    pub group: u32,
}

/// Whether the two sides were in one work-group or in two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RaceScope {
    IntraGroup,
    InterGroup,
}

/// One racing byte.
#[derive(Debug, Clone, Copy)]
pub struct RaceEvent {
    pub place: Place,
    /// The earlier access, then the later one.
    pub first: Side,
    pub second: Side,
    /// Both sides wrote (else one read).
    pub write_write: bool,
    /// Both stored this same byte value.
    pub uniform: bool,
    pub scope: RaceScope,
    pub reason: Reason,
    /// With `--sub-group-lockstep`: what lockstep says about this pair.
    pub lockstep: Option<LockstepClass>,
}

/// Why two accesses were not ordered, as the detector keeps it for every racing byte: compact,
/// with sites and linear group numbers; [`RaceReason`] is what a reported race carries.
#[derive(Debug, Clone, Copy)]
pub enum Reason {
    /// An atomic took its value from the other side's write without ordering anything.
    /// `direct`: the link joins the two racing work-items themselves (else their groups).
    Missed { link: Link, direct: bool },
    /// A barrier of work-group `group` lies between the accesses but does not fence the space
    /// (`local`: local memory was not fenced; else global).
    FenceOnly { group: [u64; 3], local: bool },
    /// No barrier between the accesses in work-group `group`.
    NoBarrier { group: [u64; 3] },
    /// Two work-groups (linear ids): barriers do not order across them.
    Groups { first: u32, second: u32 },
    /// The earlier side is an `async_work_group_copy` of work-group `group`, started at access
    /// site `site`, that no `wait_group_events` has completed yet.
    CopyInFlight { group: [u64; 3], site: u16 },
}

/// Why the two accesses of a reported race were not ordered: the facts its report words
/// (locations are indices into the module's locations, groups are work-group ids).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RaceReason {
    /// The atomic read at `at` took its value from an atomic write without ordering anything: a
    /// relaxed atomic. `direct`: it joins the two racing work-items themselves (else only their
    /// work-groups, through others).
    Relaxed { at: u32, direct: bool },
    /// The release/acquire pair read at `at` has work-group scope, which does not reach across
    /// work-groups.
    GroupScope { at: u32 },
    /// A barrier of work-group `group` lies between the accesses but does not fence the space
    /// they are in (`local`: local memory was not fenced; else global).
    FenceOnly { group: [u64; 3], local: bool },
    /// No barrier between the accesses in work-group `group`.
    NoBarrier { group: [u64; 3] },
    /// Two work-groups: barriers do not order accesses across them.
    Groups { first: [u64; 3], second: [u64; 3] },
    /// The earlier side is the `async_work_group_copy` at `copy` of work-group `group`, which no
    /// `wait_group_events` has completed yet.
    CopyInFlight { group: [u64; 3], copy: u32 },
}

/// The dedup key: the two (instruction, access type) pairs, in a fixed order, and the lockstep
/// class (a pair of instructions that raced in two ways is reported once for each).
pub type RaceKey = ((u32, AccessType), (u32, AccessType), Option<LockstepClass>);

fn key(event: &RaceEvent) -> RaceKey {
    let a = (event.first.loc, event.first.access);
    let b = (event.second.loc, event.second.access);
    if a <= b { (a, b, event.lockstep) } else { (b, a, event.lockstep) }
}

/// A run of racing bytes `start..end` of one allocation (and, for local memory, one group's copy).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct ByteRun {
    local: bool,
    allocation: u32,
    group: u32,
    start: u64,
    end: u64,
}

impl ByteRun {
    fn same_memory(&self, other: &ByteRun) -> bool {
        (self.local, self.allocation, self.group) == (other.local, other.allocation, other.group)
    }
}

/// Distinct bytes as runs. Racing bytes come mostly in ascending order (the bytes of one access,
/// then of the next work-item's), so adding one usually extends the last run; the runs are
/// sorted and merged only when they have doubled since the last time, which keeps adding
/// amortised constant and the memory proportional to the distinct runs.
#[derive(Debug, Clone, Default)]
struct ByteSet {
    runs: Vec<ByteRun>,
    /// How many runs were left by the last merge.
    merged: usize,
}

impl ByteSet {
    fn insert(&mut self, place: Place) {
        let byte = ByteRun {
            local: place.local,
            allocation: place.allocation,
            group: place.group,
            start: place.offset,
            end: place.offset + 1,
        };
        if let Some(last) = self.runs.last_mut()
            && last.same_memory(&byte)
        {
            if last.end == byte.start {
                last.end += 1;
                return;
            }
            if (last.start..last.end).contains(&byte.start) {
                return;
            }
        }
        self.runs.push(byte);
        if self.runs.len() >= 2 * self.merged.max(32) {
            self.normalise();
        }
    }

    /// Sorts the runs and merges those that overlap or touch.
    fn normalise(&mut self) {
        self.runs.sort_unstable();
        let mut out: Vec<ByteRun> = Vec::with_capacity(self.runs.len());
        for run in self.runs.drain(..) {
            match out.last_mut() {
                Some(last) if last.same_memory(&run) && run.start <= last.end => last.end = last.end.max(run.end),
                _ => out.push(run),
            }
        }
        self.runs = out;
        self.merged = self.runs.len();
    }

    fn extend(&mut self, other: ByteSet) {
        self.runs.extend(other.runs);
        self.normalise();
    }

    /// Takes out the local-memory bytes and returns how many distinct ones there were.
    fn take_local(&mut self) -> u64 {
        self.normalise();
        let local = self.runs.iter().filter(|r| r.local).map(|r| r.end - r.start).sum();
        self.runs.retain(|r| !r.local);
        self.merged = self.runs.len();
        local
    }

    fn len(&mut self) -> u64 {
        self.normalise();
        self.runs.iter().map(|r| r.end - r.start).sum()
    }
}

/// A deduplicated race: the event shown, and the distinct bytes.
#[derive(Debug, Clone)]
pub struct Aggregate {
    key: RaceKey,
    pub shown: RaceEvent,
    /// Every racing byte of the pair was a uniform write.
    pub all_uniform: bool,
    bytes: ByteSet,
    /// Bytes counted in earlier groups' local memory (each group's local memory is its own).
    counted: u64,
}

impl Aggregate {
    pub fn hazards(&mut self) -> u64 {
        self.counted + self.bytes.len()
    }
}

/// The races of one work-group, or of the whole launch, by key.
#[derive(Debug, Default)]
pub struct RaceLog {
    /// Racing bytes recorded so far.
    pub events: u64,
    /// The races in the order they were first found, for a stable report order.
    races: Vec<Aggregate>,
    /// The races by key, sorted by key: looked up by binary search, no hashing.
    index: Vec<(RaceKey, usize)>,
    /// The race the last byte was added to: the next byte usually belongs to it too.
    last: Option<usize>,
}

impl RaceLog {
    /// Records one racing byte.
    pub fn add(&mut self, event: RaceEvent) {
        self.events += 1;
        let k = key(&event);
        let found = match self.last {
            Some(i) if self.races[i].key == k => Some(i),
            _ => self.find(&k).ok(),
        };
        match found {
            Some(i) => {
                self.last = Some(i);
                let agg = &mut self.races[i];
                agg.all_uniform &= event.uniform;
                agg.bytes.insert(event.place);
                if event.place < agg.shown.place {
                    agg.shown = event;
                }
            }
            None => {
                let mut bytes = ByteSet::default();
                bytes.insert(event.place);
                self.last = Some(self.races.len());
                self.insert(k);
                self.races.push(Aggregate { key: k, all_uniform: event.uniform, shown: event, bytes, counted: 0 });
            }
        }
    }

    /// The race of key `k`, or where its key would go in the index.
    fn find(&self, k: &RaceKey) -> Result<usize, usize> {
        self.index.binary_search_by(|(key, _)| key.cmp(k)).map(|at| self.index[at].1)
    }

    /// Indexes a new race under `k`, to be pushed next.
    fn insert(&mut self, k: RaceKey) {
        let at = self.find(&k).expect_err("a new key");
        self.index.insert(at, (k, self.races.len()));
    }

    /// Folds a finished group's log into the launch's (called in group order).
    pub fn absorb(&mut self, group: RaceLog) {
        self.events += group.events;
        for mut agg in group.races {
            // Local bytes of different groups are different memory: count them now, keep global ones.
            agg.counted += agg.bytes.take_local();
            match self.find(&agg.key).ok() {
                Some(i) => {
                    let mine = &mut self.races[i];
                    mine.all_uniform &= agg.all_uniform;
                    mine.counted += agg.counted;
                    mine.bytes.extend(agg.bytes);
                    if agg.shown.place < mine.shown.place {
                        mine.shown = agg.shown;
                    }
                }
                None => {
                    self.insert(agg.key);
                    self.races.push(agg);
                }
            }
        }
    }

    /// Roughly the bytes the log holds (for memory accounting).
    pub fn bytes(&self) -> usize {
        let per_race = std::mem::size_of::<Aggregate>() + 2 * std::mem::size_of::<RaceKey>();
        self.races.iter().map(|a| per_race + a.bytes.runs.capacity() * std::mem::size_of::<ByteRun>()).sum()
    }

    /// The races, in the order they were found.
    pub fn into_aggregates(self) -> Vec<Aggregate> {
        self.races
    }
}
