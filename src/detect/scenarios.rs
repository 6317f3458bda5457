//! Whole-detector tests on small kernels: what word cells, per-byte fallback and the kernel-wide
//! runs must find, byte for byte, as cells per byte found it. Each kernel is compiled with the
//! system clang (like every other test of the emulator) and run on one and on two threads.

use super::{Detector, Options, Race, RaceScope};
use crate::exec::{ArgValue, Launch, RunOptions, run_hooked};
use crate::program::Program;

/// A launch of `kernel` over `global` work-items in groups of `local`, with one buffer of
/// `bytes` zero bytes per argument.
struct Scenario<'a> {
    kernel: &'a str,
    global: u64,
    local: u64,
    buffers: usize,
    bytes: usize,
}

impl Scenario<'_> {
    /// Runs it on `threads` threads: the bytes the kernel-wide shadow holds at the end, and the
    /// races.
    fn run(&self, source: &str, options: Options, threads: usize) -> (usize, Vec<Race>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("scenario.cl");
        std::fs::write(&path, source).unwrap();
        let program = Program::from_source(source, &path, "").unwrap_or_else(|e| panic!("{e}"));
        let launch = Launch {
            kernel: self.kernel.into(),
            work_dim: 1,
            global_offset: [0; 3],
            global_size: [self.global, 1, 1],
            local_size: [self.local, 1, 1],
            args: (0..self.buffers).map(ArgValue::Buffer).collect(),
        };
        let detector = Detector::new(&program, &launch, options);
        let mut memory = vec![vec![0u8; self.bytes]; self.buffers];
        let options = RunOptions { threads: Some(threads), ..RunOptions::default() };
        run_hooked(&program, &launch, &mut memory, &options, &&detector).unwrap_or_else(|e| panic!("{e}"));
        (detector.kernel_shadow_bytes(), detector.races())
    }
}

/// The races of a [`Scenario`] (the same on one thread and on two).
fn races(
    source: &str,
    kernel: &str,
    global: u64,
    local: u64,
    buffers: usize,
    bytes: usize,
    options: Options,
) -> Vec<Race> {
    let scenario = Scenario { kernel, global, local, buffers, bytes };
    let (_, one) = scenario.run(source, options, 1);
    assert_eq!(one, scenario.run(source, options, 2).1, "reports depend on the thread count");
    one
}

/// (buffer, offset, hazards, write-write, uniform, scope) of each race.
fn summary(races: &[Race]) -> Vec<(String, u64, u64, bool, bool, RaceScope)> {
    races.iter().map(|r| (r.buffer.clone(), r.offset, r.hazards, r.write_write, r.uniform, r.scope)).collect()
}

#[test]
fn a_group_reading_the_word_an_earlier_group_wrote_races_once_on_four_bytes() {
    // Group 1's first work-item reads the last int group 0 stored: the runs kept for group 0's
    // page must turn into records and find the read.
    let source = "kernel void k(global int *out, global int *seen) {
        size_t i = get_global_id(0);
        out[i] = (int)i;
        if (i == 64) seen[0] = out[63];
    }";
    let found = races(source, "k", 256, 64, 2, 1024, Options::default());
    assert_eq!(summary(&found), vec![("out".into(), 63 * 4, 4, false, false, RaceScope::InterGroup)]);
}

#[test]
fn disjoint_groups_over_one_kernel_page_do_not_race() {
    // Every group stores and reads its own ints of one 4 KiB page, in an order other than the
    // addresses' (group g works on slots 15 - g): the page keeps runs, out of order, and finds
    // nothing.
    let source = "kernel void k(global int *out) {
        size_t g = get_group_id(0), l = get_local_id(0);
        size_t slot = (15 - g) * get_local_size(0) + l;
        out[slot] = out[slot] + 1;
    }";
    assert!(races(source, "k", 1024, 64, 1, 4096, Options::default()).is_empty());
    // The same, with every group but the first also reading the first int of the group before
    // it: the runs, kept out of address order, must give back the right records.
    let source = "kernel void k(global int *out, global int *seen) {
        size_t g = get_group_id(0), l = get_local_id(0), n = get_local_size(0);
        size_t slot = (15 - g) * n + l;
        out[slot] = out[slot] + 1;
        if (g > 0 && l == 0) seen[g] = out[(16 - g) * n];
    }";
    let found = races(source, "k", 1024, 64, 2, 4096, Options::default());
    assert_eq!(summary(&found), vec![("out".into(), 256, 60, false, false, RaceScope::InterGroup)]);
}

#[test]
fn chars_over_an_earlier_groups_ints_race_per_byte_and_uniform_bytes_per_byte() {
    // Group 0 stores 0x01020304 in ints 0..64; group 1 then stores, in byte 1 of each int, 3 (the
    // byte already there) for even ints and 9 for odd ones. Byte 1 of each int races: the word
    // records split into bytes, and only the odd ints' byte differs.
    let source = "kernel void k(global int *out) {
        size_t i = get_global_id(0);
        if (i < 64) out[i] = 0x01020304;
        else ((global char *)out)[(i - 64) * 4 + 1] = (i % 2 == 0) ? 3 : 9;
    }";
    let found = races(source, "k", 128, 64, 1, 256, Options::default());
    assert_eq!(summary(&found), vec![("out".into(), 1, 64, true, false, RaceScope::InterGroup)]);
    let benign = races(source, "k", 128, 64, 1, 256, Options { uniform_writes_benign: true, ..Options::default() });
    assert_eq!(summary(&benign), vec![("out".into(), 5, 32, true, false, RaceScope::InterGroup)]);
}

#[test]
fn a_word_race_inside_a_group_counts_each_byte_and_compares_each_byte() {
    // Work-items 0 and 1 of one group store ints that share their top three bytes: four racing
    // bytes, three of them uniform; with uniform writes benign, one byte is left.
    let source = "kernel void k(global int *out) {
        size_t i = get_global_id(0);
        if (i < 2) out[0] = 0x0a0b0c00 + (int)i;
    }";
    let found = races(source, "k", 64, 64, 1, 64, Options::default());
    assert_eq!(summary(&found), vec![("out".into(), 0, 4, true, false, RaceScope::IntraGroup)]);
    let benign = races(source, "k", 64, 64, 1, 64, Options { uniform_writes_benign: true, ..Options::default() });
    assert_eq!(summary(&benign), vec![("out".into(), 0, 1, true, false, RaceScope::IntraGroup)]);
}

#[test]
fn a_short_access_splits_a_page_of_the_group_shadow_without_losing_a_write() {
    // Each work-item stores its int, then a short into the int's upper half: its own accesses
    // never race. Work-item 5 then stores work-item 0's int: its int store races on the lower
    // two bytes, its short store on the upper two.
    let source = "kernel void k(global int *out) {
        size_t i = get_global_id(0);
        out[i] = 1;
        ((global short *)out)[2 * i + 1] = 2;
        if (i == 5) out[0] = 3;
    }";
    let mut found = summary(&races(source, "k", 64, 64, 1, 256, Options::default()));
    found.sort_by_key(|r| r.1);
    let intra = |offset| ("out".to_string(), offset, 2, true, false, RaceScope::IntraGroup);
    assert_eq!(found, vec![intra(0), intra(2)]);
}

#[test]
fn ints_over_an_earlier_groups_ints_compare_each_byte_for_uniform_writes() {
    // Group 1 stores over group 0's ints values that differ only in their lowest byte: all four
    // bytes race, and with uniform writes benign only the lowest byte of each int is left.
    let source = "kernel void k(global int *out) {
        size_t i = get_global_id(0);
        out[i % 64] = i < 64 ? 0x01020304 : 0x01020399;
    }";
    let found = races(source, "k", 128, 64, 1, 256, Options::default());
    assert_eq!(summary(&found), vec![("out".into(), 0, 256, true, false, RaceScope::InterGroup)]);
    let benign = races(source, "k", 128, 64, 1, 256, Options { uniform_writes_benign: true, ..Options::default() });
    assert_eq!(summary(&benign), vec![("out".into(), 0, 64, true, false, RaceScope::InterGroup)]);
}

/// One access of a scripted group: `rows` rows of `count` lanes from `first` on, row `r`
/// `stride` bytes after row `r - 1`, each lane `size` bytes on from its row's start.
struct Step {
    first: u32,
    count: u32,
    store: bool,
    addr: u64,
    size: u32,
    rows: u32,
    stride: u64,
}

/// How [`scripted`] tells the detector of each step.
#[derive(Clone, Copy)]
enum Told {
    /// One `access_rows` call.
    Rows,
    /// One `access_lanes` call per row.
    Lanes,
    /// One `access` call per lane.
    Each,
}

/// Runs the scripted groups through a detector, each step told as `told` says, and returns the
/// races.
fn scripted(program: &Program, launch: &Launch, groups: &[Vec<Step>], told: Told) -> Vec<Race> {
    use crate::exec::hooks::{Access, AccessKind, GroupHooks, Hooks};
    let detector = Detector::new(program, launch, Options::default());
    let hooks = &detector;
    for (g, steps) in groups.iter().enumerate() {
        let mut group = hooks.group_start([g as u64, 0, 0], [64, 1, 1]);
        for (s, step) in steps.iter().enumerate() {
            let loc = (g * 10 + s) as u32;
            let row_bytes = (step.count * step.size) as usize;
            let bytes = row_bytes * step.rows as usize;
            let stored: Vec<u8> = if step.store { (0..bytes).map(|b| (b * 7 % 251) as u8).collect() } else { vec![] };
            let kind = if step.store { AccessKind::Store } else { AccessKind::Load };
            let access = Access { kind, addr: step.addr, size: step.size, loc, stored: &stored };
            if let Told::Rows = told {
                group.access_rows(step.first, (step.count, step.rows), step.stride, &access);
                continue;
            }
            for r in 0..step.rows {
                let first = step.first + r * step.count;
                let addr = step.addr.wrapping_add((r as u64).wrapping_mul(step.stride));
                let stored = stored.get(r as usize * row_bytes..(r as usize + 1) * row_bytes).unwrap_or(&[]);
                let row = Access { addr, stored, ..access };
                if let Told::Lanes = told {
                    group.access_lanes(first, step.count, &row);
                    continue;
                }
                let size = step.size as usize;
                for k in 0..step.count {
                    let stored = stored.get(k as usize * size..(k as usize + 1) * size).unwrap_or(&[]);
                    let addr = addr + k as u64 * step.size as u64;
                    group.access(first + k, &Access { addr, stored, ..row });
                }
            }
        }
        hooks.group_end(group);
    }
    detector.races()
}

/// A program with enough source lines that each scripted step can have a location of its own,
/// and a launch of its kernel over three groups of 64 with two buffers.
fn scripted_program() -> (Program, Launch) {
    let source = "kernel void k(global int *a, global int *b) {
        size_t i = get_global_id(0);
        a[i] = b[i] + 1;
        a[i + 1] = b[i + 1] * 3;
        a[i + 2] = b[i + 2] - 5;
        a[i + 3] = b[i + 3] / 7;
        a[i + 4] = b[i + 4] % 9;
        a[i + 5] = b[i + 5] ^ 11;
        a[i + 6] = b[i + 6] | 13;
        a[i + 7] = b[i + 7] & 15;
        a[i + 8] = b[i + 8] << 1;
        a[i + 9] = b[i + 9] >> 2;
        a[i + 10] = b[i + 10] + 12;
        a[i + 11] = b[i + 11] * 14;
    }";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lanes.cl");
    std::fs::write(&path, source).unwrap();
    let program = Program::from_source(source, &path, "").unwrap_or_else(|e| panic!("{e}"));
    let launch = Launch {
        kernel: "k".into(),
        work_dim: 1,
        global_offset: [0; 3],
        global_size: [192, 1, 1],
        local_size: [64, 1, 1],
        args: vec![ArgValue::Buffer(0), ArgValue::Buffer(1)],
    };
    assert!(program.module().locations.len() > 12, "one location per step");
    (program, launch)
}

#[test]
fn lanes_checked_in_one_go_find_what_lanes_one_by_one_find() {
    use crate::exec::memory::{SPACE_GLOBAL, SPACE_LOCAL, address};
    let (program, launch) = scripted_program();
    let (a, b) = (|o| address(SPACE_GLOBAL, 1, o), |o| address(SPACE_GLOBAL, 2, o));
    let step = |first, count, store, addr, size| Step { first, count, store, addr, size, rows: 1, stride: 0 };
    let first_group = vec![
        step(0, 64, true, a(0), 4),
        // Each lane reads the int the next lane stored.
        step(0, 64, false, a(4), 4),
        step(0, 32, true, b(0), 8),
        // One char splits b's second page into byte cells; then 8-byte loads over it and the next.
        step(3, 1, true, b(300), 1),
        step(0, 64, false, b(256), 8),
        // Lanes of four words: each lane reads the four the next lane stored.
        step(0, 16, true, b(1024), 16),
        step(0, 16, false, b(1040), 16),
        // Not aligned: lane by lane.
        step(0, 16, true, a(2), 4),
        step(0, 64, true, address(SPACE_LOCAL, 0, 0), 4),
        step(1, 63, false, address(SPACE_LOCAL, 0, 0), 4),
    ];
    let second_group = vec![
        step(0, 64, true, a(0), 4),
        step(0, 64, false, b(0), 16),
        // A store by consecutive lanes in two pieces, then another lane's store into it.
        step(0, 32, true, a(1024), 4),
        step(32, 32, true, a(1152), 4),
        step(5, 1, true, a(1040), 4),
    ];
    // Reads of what the second group stored, in pieces that do not start with its first word.
    let third_group = vec![step(0, 8, false, a(1088), 4), step(8, 56, false, a(1024), 4)];
    let groups = [first_group, second_group, third_group];
    let batched = scripted(&program, &launch, &groups, Told::Lanes);
    assert_eq!(batched, scripted(&program, &launch, &groups, Told::Each));
    let scopes: Vec<RaceScope> = batched.iter().map(|r| r.scope).collect();
    assert!(scopes.contains(&RaceScope::IntraGroup) && scopes.contains(&RaceScope::InterGroup), "{batched:#?}");
    assert!(batched.iter().any(|r| r.local), "{batched:#?}");
}

#[test]
fn rows_checked_in_one_go_find_what_rows_one_by_one_find() {
    use crate::exec::memory::{SPACE_GLOBAL, SPACE_LOCAL, address};
    let (program, launch) = scripted_program();
    let (a, b, local) =
        (|o| address(SPACE_GLOBAL, 1, o), |o| address(SPACE_GLOBAL, 2, o), |o| address(SPACE_LOCAL, 0, o));
    let rows = |first, (count, rows), stride, store, addr, size| Step { first, count, store, addr, size, rows, stride };
    let first_group = vec![
        // A 16x4 tile of `__local` words stored by rows of 16, 24 words apart, then read by rows
        // that each start where the row above ends (every lane but the first row's reads a word
        // another lane stored), and rows running downwards over the first.
        rows(0, (16, 4), 96, true, local(0), 4),
        rows(0, (16, 4), 96, false, local(4), 4),
        rows(0, (16, 4), 96u64.wrapping_neg(), false, local(288), 4),
        // Blocks of 4 lanes, 8 words apart (a sorting network's step), stored then loaded.
        rows(0, (4, 16), 32, true, local(1024), 4),
        rows(0, (4, 16), 32, false, local(1028), 4),
        // Rows of a global buffer a page apart, one row of them read back by another lane.
        rows(0, (16, 4), 4096, true, a(0), 4),
        rows(0, (8, 2), 8192, false, a(4), 4),
        // Rows of 8-byte parts, and rows not aligned to their size (taken lane by lane).
        rows(0, (8, 4), 256, true, b(0), 8),
        rows(0, (8, 2), 258, true, b(2048), 4),
    ];
    // A second group over the first one's global rows: races between groups.
    let second_group = vec![rows(0, (16, 4), 4096, false, a(0), 4), rows(0, (8, 4), 256, true, b(0), 8)];
    let groups = [first_group, second_group];
    let one_call = scripted(&program, &launch, &groups, Told::Rows);
    assert_eq!(one_call, scripted(&program, &launch, &groups, Told::Lanes));
    assert_eq!(one_call, scripted(&program, &launch, &groups, Told::Each));
    let scopes: Vec<RaceScope> = one_call.iter().map(|r| r.scope).collect();
    assert!(scopes.contains(&RaceScope::IntraGroup) && scopes.contains(&RaceScope::InterGroup), "{one_call:#?}");
    assert!(one_call.iter().any(|r| r.local), "{one_call:#?}");
}

#[test]
fn bytes_written_and_read_by_two_groups_cost_eight_shadow_bytes_each() {
    // Each work-item reads the byte of the next group's work-item and writes its own: every byte
    // of the buffer has a write and a read of two groups, per byte (the worst case of the
    // kernel-wide shadow). Both records of a byte are packed into 8 bytes.
    let source = "kernel void k(global uchar *c) {
        size_t i = get_global_id(0);
        c[i] = c[(i + 64) % 65536] + 1;
    }";
    let scenario = Scenario { kernel: "k", global: 65536, local: 64, buffers: 1, bytes: 65536 };
    let (bytes, found) = scenario.run(source, Options::default(), 2);
    assert_eq!(found.len(), 1, "one race: a group's store to the bytes the group before it loaded");
    // The last group reads what the first one wrote: every byte races.
    assert_eq!((found[0].hazards, found[0].scope), (65536, RaceScope::InterGroup));
    assert!(bytes >= 8 * 65536, "records for every byte: {bytes}");
    assert!(bytes <= 8 * 65536 + 16 * 256, "at most 8 bytes per byte and a few heads per page: {bytes}");
}

#[test]
fn a_result_left_for_a_thread_that_ran_no_more_groups_is_merged_at_the_run_end() {
    use crate::exec::hooks::{Access, AccessKind, GroupHooks, Hooks};
    use crate::exec::memory::{SPACE_GLOBAL, address};
    let (program, launch) = scripted_program();
    let stored = [1u8; 4];
    let store = Access { kind: AccessKind::Store, addr: address(SPACE_GLOBAL, 1, 0), size: 4, loc: 3, stored: &stored };
    let run = |end: &dyn Fn(&Detector)| {
        let detector = Detector::new(&program, &launch, Options::default());
        let hooks = &detector;
        // Group 1 ends first, on a thread of its own, and waits for group 0, which this thread
        // runs and merges: group 1's result is then next, but its thread runs no more groups.
        std::thread::scope(|s| {
            s.spawn(|| {
                let mut group = hooks.group_start([1, 0, 0], [64, 1, 1]);
                group.access(0, &store);
                hooks.group_end(group);
            });
        });
        let mut group = hooks.group_start([0, 0, 0], [64, 1, 1]);
        group.access(0, &Access { loc: 2, ..store });
        hooks.group_end(group);
        let before = detector.kernel_shadow_bytes();
        end(&detector);
        (before, detector.kernel_shadow_bytes(), detector.races())
    };
    // Told of the run's end, the detector merges it: the two groups' stores race.
    let (before, after, races) = run(&|d: &Detector| (&d).run_end());
    assert!(after > before, "group 1's result merged at the run's end, not before");
    assert_eq!(races.len(), 1);
    assert!(races[0].write_write && !races[0].local);
    // Asked for its races without that, it merges it then.
    assert_eq!(run(&|_: &Detector| {}).2, races);
}
