//! The hooks see every access, atomic, barrier and fence with what the detector needs.

use parking_lot::Mutex;

use clrace::exec::hooks::{Access, AccessKind, GroupHooks, Hooks};
use clrace::exec::memory::split;
use clrace::exec::{RunOptions, run_hooked};
use clrace::ir::{AtomicOp, Fence, MemOrder, Scope};
use clrace::{ArgValue, Launch, Program};

#[derive(Debug, Clone, PartialEq)]
enum Event {
    GroupStart([u64; 3], [u64; 3]),
    /// item (None for the group), kind, space, allocation, offset, size, location line, stored bytes
    Access(Option<u32>, AccessKind, u64, u64, u64, u32, u32, Vec<u8>),
    Barrier(Fence, Scope),
    Fence(u32, Fence, MemOrder, Scope),
    GroupEnd,
}

/// Records every event of a launch, group by group.
struct Recorder {
    program: Program,
    groups: Mutex<Vec<Vec<Event>>>,
    /// A global allocation whose plain accesses these hooks say they do not hear.
    deaf: Option<u64>,
}

struct GroupRecord<'a> {
    program: &'a Program,
    events: Vec<Event>,
    deaf: Option<u64>,
}

impl GroupRecord<'_> {
    fn record(&mut self, item: Option<u32>, a: &Access) {
        let (space, allocation, offset) = split(a.addr);
        let line = self.program.module().locations.get(a.loc as usize).map_or(0, |l| l.line);
        self.events.push(Event::Access(item, a.kind, space, allocation, offset, a.size, line, a.stored.to_vec()));
    }
}

impl<'a> Hooks for &'a Recorder {
    type Group = GroupRecord<'a>;

    fn group_start(&self, id: [u64; 3], size: [u64; 3]) -> GroupRecord<'a> {
        GroupRecord { program: &self.program, events: vec![Event::GroupStart(id, size)], deaf: self.deaf }
    }

    fn group_end(&self, mut group: GroupRecord<'a>) {
        group.events.push(Event::GroupEnd);
        self.groups.lock().push(group.events);
    }
}

impl GroupHooks for GroupRecord<'_> {
    fn access(&mut self, item: u32, access: &Access) {
        self.record(Some(item), access);
    }

    fn group_access(&mut self, access: &Access) {
        self.record(None, access);
    }

    fn hears_plain(&self, addr: u64) -> bool {
        let (space, allocation, _) = split(addr);
        !(space == 1 && Some(allocation) == self.deaf)
    }

    fn barrier(&mut self, fence: Fence, scope: Scope, _loc: u32) {
        self.events.push(Event::Barrier(fence, scope));
    }

    fn fence(&mut self, item: u32, fence: Fence, order: MemOrder, scope: Scope, _loc: u32) {
        self.events.push(Event::Fence(item, fence, order, scope));
    }
}

fn record(source: &str, kernel: &str, local: u64, args: Vec<ArgValue>, buffers: &mut [Vec<u8>]) -> Vec<Event> {
    record_deaf(source, kernel, local, args, buffers, None)
}

/// [`record`] with hooks that do not hear plain accesses to global allocation `deaf`.
fn record_deaf(
    source: &str,
    kernel: &str,
    local: u64,
    args: Vec<ArgValue>,
    buffers: &mut [Vec<u8>],
    deaf: Option<u64>,
) -> Vec<Event> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hooks.cl");
    std::fs::write(&path, source).unwrap();
    let program = Program::from_source(source, &path, "-cl-std=CL3.0").unwrap_or_else(|e| panic!("{e}"));
    let launch = Launch {
        kernel: kernel.into(),
        work_dim: 1,
        global_offset: [0; 3],
        global_size: [local, 1, 1],
        local_size: [local, 1, 1],
        args,
    };
    let recorder = Recorder { program, groups: Mutex::new(Vec::new()), deaf };
    let options = RunOptions { threads: Some(1), ..RunOptions::default() };
    run_hooked(&recorder.program, &launch, buffers, &options, &&recorder).unwrap();
    let mut groups = recorder.groups.into_inner();
    assert_eq!(groups.len(), 1, "one work-group");
    groups.pop().unwrap()
}

/// The store of `tmp` at the end shares the barrier interval of the read of `tmp` before it, which
/// the hooks therefore hear (without it they would not: see below).
const OBSERVED: &str = "kernel void observed(global int *a, local int *tmp, global atomic_int *c) {
    int l = get_local_id(0);
    tmp[l] = a[l];
    barrier(CLK_LOCAL_MEM_FENCE);
    a[l] = tmp[(l + 1) % 4] * 2;
    atomic_fetch_add_explicit(c, 1, memory_order_relaxed, memory_scope_work_group);
    atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_release, memory_scope_device);
    tmp[l] = 0;
}
";

#[test]
fn every_access_barrier_atomic_and_fence_is_seen() {
    let events = record_observed(OBSERVED);
    assert_eq!(events, observed_events(true));
}

#[test]
fn a_local_read_no_write_of_its_barrier_interval_can_meet_goes_untold() {
    // Without the last store, nothing writes `tmp` between the barrier and the kernel's end: the
    // read of `tmp` can race with nothing, and the hooks do not hear of it.
    let source = OBSERVED.replace("    tmp[l] = 0;\n", "");
    let mut expected = observed_events(false);
    expected.retain(|e| !matches!(e, Event::Access(_, AccessKind::Store, 2, _, _, _, 8, _)));
    assert_eq!(record_observed(&source), expected);
}

/// The events of [`OBSERVED`] (or of a variant of it) run by one group of four work-items.
fn record_observed(source: &str) -> Vec<Event> {
    let a: Vec<u8> = [5i32, 6, 7, 8].iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut buffers = vec![a, vec![0; 4]];
    let args = vec![ArgValue::Buffer(0), ArgValue::Local(16), ArgValue::Buffer(1)];
    record(source, "observed", 4, args, &mut buffers)
}

/// What the hooks hear of [`OBSERVED`], with the read of `tmp` after the barrier or without it.
fn observed_events(tmp_read: bool) -> Vec<Event> {
    let (global, local) = (1, 2);
    // Buffers follow the program's own global variables (none here): allocation 1 is `a`.
    let (a, c) = (1, 2);
    // Work-items run in lockstep: each instruction for work-items 0..4 before the next one.
    let mut expected = vec![Event::GroupStart([0, 0, 0], [4, 1, 1])];
    for l in 0..4u32 {
        expected.push(Event::Access(Some(l), AccessKind::Load, global, a, 4 * l as u64, 4, 3, vec![]));
    }
    for l in 0..4u32 {
        let value = (5 + l as i32).to_le_bytes().to_vec();
        expected.push(Event::Access(Some(l), AccessKind::Store, local, 0, 4 * l as u64, 4, 3, value));
    }
    expected.push(Event::Barrier(Fence { local: true, global: false }, Scope::WorkGroup));
    for l in (0..4u32).filter(|_| tmp_read) {
        let next = (l + 1) % 4;
        expected.push(Event::Access(Some(l), AccessKind::Load, local, 0, 4 * next as u64, 4, 5, vec![]));
    }
    for l in 0..4u32 {
        let next = (l + 1) % 4;
        let doubled = (2 * (5 + next as i32)).to_le_bytes().to_vec();
        expected.push(Event::Access(Some(l), AccessKind::Store, global, a, 4 * l as u64, 4, 5, doubled));
    }
    for l in 0..4u32 {
        let atomic = clrace::exec::hooks::AtomicAccess {
            op: AtomicOp::Add,
            order: MemOrder::Relaxed,
            scope: Scope::WorkGroup,
            wrote: true,
            read: l as u64,
        };
        let stored = (l + 1).to_le_bytes().to_vec();
        expected.push(Event::Access(Some(l), AccessKind::Atomic(atomic), global, c, 0, 4, 6, stored));
    }
    for l in 0..4u32 {
        expected.push(Event::Fence(l, Fence { local: false, global: true }, MemOrder::Release, Scope::Device));
    }
    for l in 0..4u32 {
        expected.push(Event::Access(Some(l), AccessKind::Store, local, 0, 4 * l as u64, 4, 8, vec![0; 4]));
    }
    expected.push(Event::GroupEnd);
    expected
}

#[test]
fn async_copies_are_group_accesses() {
    let source = "kernel void staged(global const int *in, global int *out) {
    local int tile[8];
    event_t e = async_work_group_copy(tile, in, 8, 0);
    wait_group_events(1, &e);
    out[get_local_id(0)] = tile[7 - get_local_id(0)];
}
";
    let input: Vec<u8> = (0..8i32).flat_map(|v| v.to_le_bytes()).collect();
    let mut buffers = vec![input, vec![0; 32]];
    let events = record(source, "staged", 8, vec![ArgValue::Buffer(0), ArgValue::Buffer(1)], &mut buffers);
    let group: Vec<_> = events.iter().filter(|e| matches!(e, Event::Access(None, ..))).collect();
    assert_eq!(group.len(), 16, "a load and a store per element: {group:?}");
    for k in 0..8u64 {
        let bytes = (k as i32).to_le_bytes().to_vec();
        assert!(group.contains(&&Event::Access(None, AccessKind::Load, 1, 1, 4 * k, 4, 3, vec![])));
        assert!(group.contains(&&Event::Access(None, AccessKind::Store, 2, 0, 4 * k, 4, 3, bytes)));
    }
    let out: Vec<i32> = buffers[1].chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(out, vec![7, 6, 5, 4, 3, 2, 1, 0]);
}

#[test]
fn private_memory_is_not_reported() {
    // A private array indexed by a runtime value (kept in memory), a struct passed by value to an
    // out-of-line helper (a private copy), and a private copy to global memory.
    let source = "typedef struct { int v[4]; } quad;
__attribute__((noinline)) int pick(quad q, int i) { return q.v[i & 3]; }
kernel void own(global int *out, global const int *in) {
    int l = get_local_id(0);
    quad q;
    for (int i = 0; i < 4; i++) q.v[i] = in[(l + i) & 3];
    out[l] = pick(q, in[l]) + q.v[in[3 - l] & 3];
}
";
    let input: Vec<u8> = (0..4i32).flat_map(|v| v.to_le_bytes()).collect();
    let mut buffers = vec![vec![0; 16], input];
    let events = record(source, "own", 4, vec![ArgValue::Buffer(0), ArgValue::Buffer(1)], &mut buffers);
    let private = clrace::exec::memory::SPACE_PRIVATE;
    let spaces: Vec<u64> = events
        .iter()
        .filter_map(|e| match e {
            Event::Access(_, _, space, ..) => Some(*space),
            _ => None,
        })
        .collect();
    assert!(!spaces.contains(&private), "{events:?}");
    // The global loads and stores are all there: 4 loads of the copy loop, 2 index loads, 1 store, per work-item.
    assert_eq!(spaces.len(), 4 * 7, "{events:?}");
    let out: Vec<i32> = buffers[0].chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect();
    let expect: Vec<i32> = (0..4).map(|l| ((l + l) & 3) + ((l + ((3 - l) & 3)) & 3)).collect();
    assert_eq!(out, expect);
}

/// The second barrier fences global memory only: the read of `tmp` after it shares a barrier
/// interval with the odd work-items' stores, so the hooks hear of it.
const SCATTERED: &str = "kernel void scattered(global int *a, local int *tmp) {
    int l = get_local_id(0);
    tmp[2 * l] = a[l];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l & 1) tmp[2 * l + 1] = 10 * l;
    barrier(CLK_GLOBAL_MEM_FENCE);
    a[l] = tmp[(3 * l) % 16];
}
";

#[test]
fn strided_and_divergent_accesses_are_heard_lane_by_lane_in_order() {
    let a: Vec<u8> = (0..8i32).map(|v| 100 + v).flat_map(|v| v.to_le_bytes()).collect();
    let mut buffers = vec![a];
    let args = vec![ArgValue::Buffer(0), ArgValue::Local(64)];
    let events = record(SCATTERED, "scattered", 8, args, &mut buffers);

    let (global, local, a) = (1, 2, 1);
    let word = |v: i32| v.to_le_bytes().to_vec();
    let mut expected = vec![Event::GroupStart([0, 0, 0], [8, 1, 1])];
    for l in 0..8u32 {
        expected.push(Event::Access(Some(l), AccessKind::Load, global, a, 4 * l as u64, 4, 3, vec![]));
    }
    // Every other word: each work-item a run of its own.
    for l in 0..8u32 {
        let offset = 8 * l as u64;
        expected.push(Event::Access(Some(l), AccessKind::Store, local, 0, offset, 4, 3, word(100 + l as i32)));
    }
    expected.push(Event::Barrier(Fence { local: true, global: false }, Scope::WorkGroup));
    // Only the odd work-items store.
    for l in (1..8u32).step_by(2) {
        let offset = 8 * l as u64 + 4;
        expected.push(Event::Access(Some(l), AccessKind::Store, local, 0, offset, 4, 5, word(10 * l as i32)));
    }
    expected.push(Event::Barrier(Fence { local: false, global: true }, Scope::WorkGroup));
    // What `tmp` holds: the even words from `a`, the odd ones from the odd work-items (else 0).
    let tmp = |i: u32| match (i % 2, i / 2 % 2) {
        (0, _) => 100 + i as i32 / 2,
        (_, 1) => 10 * (i as i32 / 2),
        _ => 0,
    };
    for l in 0..8u32 {
        let i = 3 * l % 16;
        expected.push(Event::Access(Some(l), AccessKind::Load, local, 0, 4 * i as u64, 4, 7, vec![]));
    }
    for l in 0..8u32 {
        let value = word(tmp(3 * l % 16));
        expected.push(Event::Access(Some(l), AccessKind::Store, global, a, 4 * l as u64, 4, 7, value));
    }
    expected.push(Event::GroupEnd);
    assert_eq!(events, expected);
    let out: Vec<i32> = buffers[0].chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(out, (0..8).map(|l| tmp(3 * l % 16)).collect::<Vec<_>>());
}

const STRIDED: &str = "kernel void strided(global const int *in, global const int *b, global int *out) {
    int l = get_local_id(0);
    out[l] = in[2 * l] + b[2 * l];
}
";

#[test]
fn plain_accesses_the_hooks_do_not_hear_go_untold_and_still_run() {
    let words = |f: fn(i32) -> i32| (0..16).map(f).flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>();
    let mut buffers = vec![words(|i| 10 * i), words(|i| i), vec![0; 32]];
    let args = vec![ArgValue::Buffer(0), ArgValue::Buffer(1), ArgValue::Buffer(2)];
    // Allocation 0 is the null pointer's: the buffers are 1, 2 and 3.
    let (global, deaf, heard, out) = (1, 1, 2, 3);
    let events = record_deaf(STRIDED, "strided", 8, args, &mut buffers, Some(deaf));

    let mut expected = vec![Event::GroupStart([0, 0, 0], [8, 1, 1])];
    // The strided loads of `in` go untold; those of `b` are heard lane by lane.
    for l in 0..8u32 {
        expected.push(Event::Access(Some(l), AccessKind::Load, global, heard, 8 * l as u64, 4, 3, vec![]));
    }
    let sum = |l: u32| 10 * 2 * l as i32 + 2 * l as i32;
    for l in 0..8u32 {
        let value = sum(l).to_le_bytes().to_vec();
        expected.push(Event::Access(Some(l), AccessKind::Store, global, out, 4 * l as u64, 4, 3, value));
    }
    expected.push(Event::GroupEnd);
    assert_eq!(events, expected);
    let got: Vec<i32> = buffers[2].chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(got, (0..8).map(sum).collect::<Vec<_>>());
}
