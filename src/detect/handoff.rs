//! How finished groups hand over to the merge and to the next groups: the results waiting for
//! their turn, each for the thread that made it ([`Pending`]), what groups leave for the next
//! ones on their thread ([`Spares`]: worker shadows, summary buffers), and [`Line`], which keeps
//! what workers write at every group's end off the cache lines that others read or write.
//!
//! It keeps and gives back values of any type: what is in them (cells, summaries, results) is
//! `mod.rs`'s and `group.rs`'s business, and it sees none of it.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;

/// A value on cache lines of its own. What workers write at every group's end (the locks, the
/// charged count) must not share a line with what they read at every access (the read-only
/// flags, the sites, the geometry): each write would take that line from the other cores.
#[repr(align(128))]
pub struct Line<T>(pub T);

impl<T> std::ops::Deref for Line<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// Shards of [`Spares`]: worker threads beyond this many share them.
const SHARDS: usize = 8;

/// A number per thread that takes spares, never reused (its shard is this modulo [`SHARDS`]):
/// threads started one after another get different shards. It also names the thread that used a
/// shadow last (cheaper than `std::thread::current`, which counts a reference each time).
static THREADS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static THREAD: usize = THREADS.fetch_add(1, Ordering::Relaxed);
}

/// What groups leave for the next ones, in shards by worker thread, each on cache lines of its
/// own: shadows `S` (each with the thread that used it last) and buffers `B`. A thread takes
/// from its own shard and gives back to it, and a buffer goes back to the shard it came from
/// (its `home`), so that a group's start and end write no line another thread writes too, but
/// when one thread gives back another's buffer.
pub struct Spares<S, B> {
    shards: Box<[ShardLine<S, B>]>,
}

/// A shard, locked, on lines of its own.
type ShardLine<S, B> = Line<Mutex<Shard<S, B>>>;

struct Shard<S, B> {
    shadows: Vec<(usize, S)>,
    buffers: Vec<B>,
}

impl<S, B> Default for Spares<S, B> {
    fn default() -> Spares<S, B> {
        let shard = || Line(Mutex::new(Shard { shadows: Vec::new(), buffers: Vec::new() }));
        Spares { shards: (0..SHARDS).map(|_| shard()).collect() }
    }
}

impl<S: Default, B> Spares<S, B> {
    /// This thread's shard.
    fn home() -> usize {
        thread_number() % SHARDS
    }

    /// The shadow this thread left last, warm in its caches (another thread's would move its
    /// cells between cores); else any (its memory is reused); else a new one.
    pub fn take_shadow(&self) -> S {
        let me = thread_number();
        let home = me % SHARDS;
        let mut shard = self.shards[home].lock();
        if let Some(at) = shard.shadows.iter().rposition(|(owner, _)| *owner == me) {
            return shard.shadows.swap_remove(at).1;
        }
        drop(shard);
        let any = (0..SHARDS).find_map(|k| self.shards[(home + k) % SHARDS].lock().shadows.pop());
        any.map_or_else(S::default, |(_, shadow)| shadow)
    }

    pub fn put_shadow(&self, shadow: S) {
        let me = thread_number();
        self.shards[me % SHARDS].lock().shadows.push((me, shadow));
    }

    /// A buffer this thread's shard holds, else `make(home)` (`home` is the shard to give it
    /// back to).
    pub fn take_buffer(&self, make: impl FnOnce(usize) -> B) -> B {
        let home = Self::home();
        let spare = self.shards[home].lock().buffers.pop();
        spare.unwrap_or_else(|| make(home))
    }

    /// Gives back a buffer to the shard it was made for.
    pub fn put_buffer(&self, home: usize, buffer: B) {
        self.shards[home % SHARDS].lock().buffers.push(buffer);
    }
}

/// This thread's number among those that take spares or hand over results (see [`THREADS`]).
pub fn thread_number() -> usize {
    THREAD.with(|n| *n)
}

/// Finished groups' results waiting for their turn, by group from the next one to merge on, each
/// with the thread that made it: a ring that keeps its room from group to group (no allocation
/// per group, and none freed on another thread than made it).
///
/// A result whose turn has come is taken by the thread that made it ([`Pending::take_next`]):
/// its summaries are in that thread's caches, where another core would fetch them line by line.
/// Another thread takes it only once more than `backlog` results wait, so that a thread that
/// is slow to come back does not hold up the rest without bound.
pub struct Pending<T> {
    /// The group `slots[0]` is for: the next to merge.
    first: u32,
    slots: VecDeque<Option<(usize, T)>>,
    /// Results in `slots`.
    waiting: usize,
}

impl<T> Default for Pending<T> {
    fn default() -> Pending<T> {
        Pending { first: 0, slots: VecDeque::new(), waiting: 0 }
    }
}

impl<T> Pending<T> {
    /// Keeps the result of `group` (a group not merged yet), made by thread `owner`, for its turn.
    pub fn insert(&mut self, group: u32, owner: usize, result: T) {
        let at = (group - self.first) as usize;
        if at >= self.slots.len() {
            self.slots.resize_with(at + 1, || None);
        }
        self.slots[at] = Some((owner, result));
        self.waiting += 1;
    }

    /// Whether `group` is the next to merge; its turn is then taken (it merges without going in).
    pub fn take_turn(&mut self, group: u32) -> bool {
        if group != self.first {
            return false;
        }
        // Its slot, if a later group's made one, is empty.
        self.slots.pop_front();
        self.first += 1;
        true
    }

    /// The next group's result, when it has come and it is thread `me`'s, or more than
    /// `backlog` results wait (`usize::MAX`: only `me`'s; 0: whoever's).
    pub fn take_next(&mut self, me: usize, backlog: usize) -> Option<T> {
        if !self.next_ready(me, backlog) {
            return None;
        }
        let (_, result) = self.slots.pop_front()??;
        self.first += 1;
        self.waiting -= 1;
        Some(result)
    }

    /// Whether [`Pending::take_next`] would give a result.
    fn next_ready(&self, me: usize, backlog: usize) -> bool {
        matches!(self.slots.front(), Some(Some((owner, _))) if *owner == me || self.waiting > backlog)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_out_in_group_order_whatever_order_they_went_in() {
        let mut pending = Pending::default();
        let anyone = 0;
        pending.insert(2, 7, "two");
        pending.insert(1, 7, "one");
        assert!(!pending.next_ready(7, anyone), "group 0 has not come");
        assert_eq!(pending.take_next(7, anyone), None);
        // Group 0 merges without going in; then 1 and 2 are next in turn.
        assert!(!pending.take_turn(1));
        assert!(pending.take_turn(0));
        let mut next = || pending.take_next(7, anyone);
        assert_eq!((next(), next(), next()), (Some("one"), Some("two"), None));
        assert!(pending.take_turn(3));
        pending.insert(5, 8, "five");
        pending.insert(4, 8, "four");
        assert_eq!((pending.take_next(7, anyone), pending.take_next(7, anyone)), (Some("four"), Some("five")));
    }

    #[test]
    fn a_result_whose_turn_has_come_waits_for_its_thread_until_too_many_wait() {
        let mut pending = Pending::default();
        pending.insert(0, 1, "thread 1's");
        pending.insert(1, 2, "thread 2's");
        pending.insert(2, 2, "thread 2's too");
        // Thread 2's results are behind thread 1's: thread 2 takes nothing, thread 1 its own.
        assert!(!pending.next_ready(2, 8));
        assert_eq!(pending.take_next(2, 8), None);
        assert_eq!(pending.take_next(1, 8), Some("thread 1's"));
        // Now thread 2's are next: thread 1 leaves them to it while few wait.
        assert_eq!(pending.take_next(1, 8), None);
        assert_eq!(pending.take_next(1, 2), None, "two wait: not more than two");
        assert_eq!(pending.take_next(1, 1), Some("thread 2's"), "more than one waits: thread 1 takes it");
        assert_eq!(pending.take_next(2, usize::MAX), Some("thread 2's too"));
        assert!(!pending.next_ready(2, 0), "none left");
    }

    #[test]
    fn a_thread_gets_back_its_own_shadow_and_its_buffers_come_home() {
        let spares: Spares<Vec<u8>, (usize, u32)> = Spares::default();
        spares.put_shadow(vec![1]);
        let other = std::thread::scope(|s| {
            s.spawn(|| {
                spares.put_shadow(vec![2]);
                let buffer = spares.take_buffer(|home| (home, 7));
                (Spares::<Vec<u8>, (usize, u32)>::home(), buffer)
            })
            .join()
            .unwrap()
        });
        assert_eq!(spares.take_shadow(), vec![1], "this thread's, not the other's");
        // The other thread has ended: its shadow is anyone's.
        assert_eq!(spares.take_shadow(), vec![2]);
        assert_eq!(spares.take_shadow(), Vec::<u8>::new(), "none left: a new one");
        // A buffer of the other thread's shard, given back here, goes to that shard.
        let (home, buffer) = other;
        assert_eq!(buffer.0, home);
        spares.put_buffer(buffer.0, buffer);
        assert_eq!(spares.shards[home].lock().buffers.len(), 1);
    }
}
