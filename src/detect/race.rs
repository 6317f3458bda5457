//! Races as the detector finds them (one event per racing byte) and as it reports them: one per
//! pair of instructions and access kinds, shown at its lowest address with the first pair of
//! entities found there, counting the distinct bytes the pair raced on.

use std::collections::{HashMap, HashSet};

use super::record::Entity;

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
#[derive(Debug, Clone)]
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
    pub reason: String,
}

/// The dedup key: the two (instruction, access type) pairs, in a fixed order.
pub type RaceKey = ((u32, AccessType), (u32, AccessType));

fn key(event: &RaceEvent) -> RaceKey {
    let a = (event.first.loc, event.first.access);
    let b = (event.second.loc, event.second.access);
    if a <= b { (a, b) } else { (b, a) }
}

/// A deduplicated race: the event shown, and the distinct bytes.
#[derive(Debug, Clone)]
pub struct Aggregate {
    pub shown: RaceEvent,
    /// Every racing byte of the pair was a uniform write.
    pub all_uniform: bool,
    bytes: HashSet<Place>,
    /// Bytes counted in earlier groups' local memory (each group's local memory is its own).
    counted: u64,
}

impl Aggregate {
    pub fn hazards(&self) -> u64 {
        self.counted + self.bytes.len() as u64
    }
}

/// The races of one work-group, or of the whole launch, by key.
#[derive(Debug, Default)]
pub struct RaceLog {
    /// Racing bytes recorded so far.
    pub events: u64,
    races: HashMap<RaceKey, Aggregate>,
    /// Keys in the order they were first found, for a stable report order.
    order: Vec<RaceKey>,
}

impl RaceLog {
    /// Records one racing byte.
    pub fn add(&mut self, event: RaceEvent) {
        self.events += 1;
        let k = key(&event);
        match self.races.get_mut(&k) {
            Some(agg) => {
                agg.all_uniform &= event.uniform;
                agg.bytes.insert(event.place);
                if event.place < agg.shown.place {
                    agg.shown = event;
                }
            }
            None => {
                let bytes = HashSet::from([event.place]);
                self.order.push(k);
                self.races.insert(k, Aggregate { all_uniform: event.uniform, shown: event, bytes, counted: 0 });
            }
        }
    }

    /// Folds a finished group's log into the launch's (called in group order).
    pub fn absorb(&mut self, group: RaceLog) {
        let RaceLog { mut races, order, events } = group;
        self.events += events;
        for k in order {
            let mut agg = races.remove(&k).expect("ordered keys are present");
            // Local bytes of different groups are different memory: count them now, keep global ones.
            let local = agg.bytes.iter().filter(|p| p.local).count() as u64;
            agg.bytes.retain(|p| !p.local);
            agg.counted += local;
            match self.races.get_mut(&k) {
                Some(mine) => {
                    mine.all_uniform &= agg.all_uniform;
                    mine.counted += agg.counted;
                    mine.bytes.extend(agg.bytes);
                    if agg.shown.place < mine.shown.place {
                        mine.shown = agg.shown;
                    }
                }
                None => {
                    self.order.push(k);
                    self.races.insert(k, agg);
                }
            }
        }
    }

    /// Roughly the bytes the log holds (for memory accounting).
    pub fn bytes(&self) -> usize {
        let per_race = std::mem::size_of::<Aggregate>() + 2 * std::mem::size_of::<RaceKey>();
        self.races.values().map(|a| per_race + a.bytes.len() * 2 * std::mem::size_of::<Place>()).sum()
    }

    /// The races, in the order they were found.
    pub fn into_aggregates(mut self) -> Vec<Aggregate> {
        self.order.iter().map(|k| self.races.remove(k).expect("ordered keys are present")).collect()
    }
}
