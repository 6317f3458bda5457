//! Runs a launch: checks it against the kernel, lays out its memory, and hands the work-groups,
//! in NDRange order, to worker threads; inside a group the scheduler (`schedule.rs`) advances the
//! work-items. Findings and printf output are put back in NDRange order.

use std::sync::atomic::{AtomicU64, Ordering};

use super::affine;
use super::execution::{Execution, Group, NdRange};
use super::findings::{self, FindingLog, WorkerFindings};
use super::hooks::{GroupHooks, Hooks};
use super::memory::{GlobalMemory, SPACE_GLOBAL, SPACE_LOCAL, SPACE_PRIVATE, address};
use super::meter::Meter;
use super::schedule::{self, NdRangeState, WorkerRun};
use super::stepping::{Policy, Stepping};
use super::uninit;
use super::warp::{ENTRY_FRAME, LaneState, Lanes};
use super::workers;
use super::{ArgValue, ExecError, Launch, MAX_GROUP_ITEMS, MAX_LAUNCH_ITEMS, RunOptions, RunOutcome};
use crate::ir::{self, ParamKind};
use crate::program::Program;

/// The registers and private bytes every work-item starts the kernel with.
struct Entry {
    regs: Vec<u64>,
    /// Where each function's frame starts in the register file (`u32::MAX` for functions the
    /// kernel never calls), and the slots all of them take.
    frame_bases: Vec<u32>,
    slots: usize,
    private: Vec<u8>,
    /// Sizes of the local allocations: kernel-declared variables, then `__local` arguments.
    local_sizes: Vec<usize>,
}

/// What every work-group of one run starts from and shares: the executor's launch, the kernel,
/// what each work-item starts with, the `__local` layout, and the scheduler's state of the run.
#[derive(Clone, Copy)]
struct Setup<'r, 'a> {
    shared: &'r Execution<'a>,
    kernel: &'r ir::Kernel,
    entry: &'r Entry,
    layout: &'r LocalLayout,
    state: &'r NdRangeState,
}

/// How many finished groups a worker adds to `RunOptions::progress` at a time.
const PROGRESS_BATCH: u64 = 16;

pub fn run<H: Hooks>(
    program: &Program,
    launch: &Launch,
    buffers: &mut [Vec<u8>],
    options: &RunOptions,
    hooks: &H,
    stepping: Option<Stepping>,
) -> Result<RunOutcome, ExecError> {
    let index = program
        .module
        .kernels
        .iter()
        .position(|k| k.info.name == launch.kernel)
        .ok_or_else(|| ExecError::Launch(format!("no kernel named '{}' in the program", launch.kernel)))?;
    let mut range = geometry(launch, &program.module.kernels[index])?;
    range.sub_group = options.sub_group_size.max(1) as u64;
    let items = range.global.iter().product();
    let specialised = if options.specialise.applies(items) {
        let values = argument_values(&program.module, &program.module.kernels[index], launch);
        program.specialise_if_repaid(index, &values, |code| options.specialise.repays_alone(items, code))
    } else {
        None
    };
    let module = specialised.as_deref().unwrap_or(&program.module);
    let kernel = &module.kernels[index];
    let mut program_data: Vec<Vec<u8>> = module
        .globals
        .iter()
        .map(|v| {
            let mut bytes = v.init.clone();
            bytes.resize(v.size as usize, 0);
            bytes
        })
        .collect();
    let mut globals = GlobalMemory::new();
    // Check 9: the `noinit` buffers by allocation index (program-scope variables come first).
    let mut noinit = Vec::new();
    for (data, var) in program_data.iter_mut().zip(module.globals.iter()) {
        globals.add(data, var.name.clone(), !var.writable);
    }
    let buffer_base = module.globals.len() as u64 + 1;
    // The buffers the kernel writes through none of its arguments are sealed: read plainly.
    let written = program.written_params(index);
    for (i, buffer) in buffers.iter_mut().enumerate() {
        // Any `__constant` binding makes the buffer read-only.
        let binding = launch.binding(&kernel.info.args, i);
        let name = binding.name(i);
        let constant = binding.args.iter().any(|a| a.space == crate::program::AddressSpace::Constant);
        match &binding.image {
            Some(desc) => {
                desc.check().map_err(|e| ExecError::Unsupported(format!("image '{name}': {e}")))?;
                if (buffer.len() as u64) < desc.byte_size() {
                    return Err(ExecError::Launch(format!(
                        "image '{name}' needs {} bytes, its data has {}",
                        desc.byte_size(),
                        buffer.len()
                    )));
                }
                globals.add_image(buffer, name, *desc);
            }
            None => {
                let index = globals.add(buffer, name, constant);
                if options.check_uninitialized && options.noinit.get(i).copied().unwrap_or(false) {
                    noinit.push((index, buffer.len()));
                }
                globals.set_mode(index, options.buffer_modes.get(i).copied().unwrap_or_default());
                if launch.only_reads(written, i) {
                    globals.seal(index);
                }
            }
        }
    }
    let entry = entry(module, kernel, launch, buffer_base, buffers.len())?;
    let layout = LocalLayout::of(&entry.local_sizes)?;
    let uninit = options.check_uninitialized.then(|| uninit::GlobalShadow::new(&noinit));
    // Groups too small to keep descriptors need no plans (see `affine::MIN_LANES`).
    let lanes_per_group = range.local.iter().product::<u64>();
    let plans: Vec<affine::Plan> = if lanes_per_group >= affine::MIN_LANES as u64 && uninit.is_none() {
        module.functions.iter().map(|f| affine::Plan::new(module, f)).collect()
    } else {
        Vec::new()
    };
    // Reads the detector need not hear of (`ir::intervals`); none to find without hooks.
    let quiet_specialised;
    let quiet = match &specialised {
        _ if !<H::Group as GroupHooks>::ACTIVE => &[][..],
        None => program.quiet_reads(index),
        Some(module) => {
            quiet_specialised = ir::intervals::quiet_local_reads(module, index as u32);
            &quiet_specialised[..]
        }
    };
    let shared = Execution {
        plans: &plans,
        quiet_reads: quiet,
        module,
        globals: &globals,
        range,
        flush_denormals: program.flush_denormals,
        stop_at_atomics: stepping.is_some(),
        watch: stepping.as_ref().map_or(&[], |s| s.watch),
        report_lanes: matches!(options.policy, Policy::SubGroups(_)) && stepping.is_none(),
        frame_bases: &entry.frame_bases,
        uninit: uninit.as_ref(),
    };
    let atomics = module.functions.iter().any(|f| f.code.iter().any(|i| matches!(i, ir::Inst::Atomic { .. })));
    let state = NdRangeState::new(options, atomics);
    let setup = Setup { shared: &shared, kernel, entry: &entry, layout: &layout, state: &state };
    let policy = options.policy;
    if let Some(stepping) = stepping {
        return run_all_stepped(&setup, options, hooks, stepping);
    }
    let memory = options.memory.as_deref();
    let total = range.groups.iter().product::<u64>();
    // Worker threads take groups in NDRange order from one counter, a few at a time (see
    // `group_batch`), so at most a batch per worker is in flight and consumers (the race
    // detector) can merge group results in order with little buffering. Ids are computed from
    // the counter: nothing grows with the groups.
    let threads = options.threads.unwrap_or_else(super::default_threads);
    let threads = (threads.max(1) as u64).min(total.max(1)) as usize;
    let next = AtomicU64::new(0);
    let batch = group_batch(total, threads, atomics);
    // The first group that failed: groups after it are skipped, those before it in a taken batch
    // still run, so that the error reported is the first in NDRange order as with one thread.
    let failed_at = AtomicU64::new(u64::MAX);
    let work = || -> Worker {
        let mut worker = Worker::default();
        let mut meter = Meter::new(memory);
        // The register file's room the thread's last run left (or `warm_registers` made), pages
        // and all.
        let mut lanes = Lanes::kept();
        let mut group: Option<Group> = None;
        let mut run = WorkerRun::new(&shared, policy);
        // Finished groups not yet added to the shared progress count (a display: it is told in
        // batches, so that workers do not all write one cache line at every group).
        let mut unreported = 0;
        // Counted out however the worker ends, so that groups waiting for it are not left waiting.
        let _running = Running(&state);
        'taking: while !state.abort.load(Ordering::Relaxed) {
            let first = next.fetch_add(batch, Ordering::Relaxed);
            if first >= total {
                break;
            }
            state.groups_taken(batch.min(total - first));
            for i in first..(first + batch).min(total) {
                if i > failed_at.load(Ordering::Relaxed) {
                    break 'taking;
                }
                let id = range.group_id(i);
                let at = (&mut meter, &mut lanes, &mut group, &mut run);
                if let Err(e) = run_one(&setup, hooks, at, id) {
                    failed_at.fetch_min(i, Ordering::Relaxed);
                    state.abort.store(true, Ordering::Relaxed);
                    worker.error = Some((i, e));
                    break 'taking;
                }
                unreported += 1;
                if let Some(done) = &options.progress
                    && unreported == PROGRESS_BATCH
                {
                    done.fetch_add(std::mem::take(&mut unreported), Ordering::Relaxed);
                }
                let group = group.as_mut().expect("the group just ran");
                if !group.printf.is_empty() {
                    meter.kept += group.printf.len() as u64;
                    worker.printf.push((i, std::mem::take(&mut group.printf)));
                }
                if !group.findings.is_empty() {
                    let before = worker.findings.len();
                    worker.findings.absorb(i, &mut group.findings);
                    meter.kept += (worker.findings.len() - before) as u64 * findings::FINDING_BYTES;
                }
            }
        }
        if let Some(done) = &options.progress {
            done.fetch_add(unreported, Ordering::Relaxed);
        }
        run.finish(&state);
        lanes.keep();
        worker
    };
    // Every worker counts as running from the start: a group that waits for another must not
    // take itself for the only one while a worker is still starting.
    state.workers_starting(threads);
    state.groups_to_take(total);
    let workers: Vec<Worker> = workers::run_on(threads, &work);
    hooks.run_end();
    // The first failed group in NDRange order gives the error; groups report in NDRange order
    // whatever order they ran in.
    let mut first_error: Option<(u64, ExecError)> = None;
    let mut printf = Vec::new();
    let mut logs = Vec::with_capacity(workers.len());
    for worker in workers {
        if let Some((i, e)) = worker.error
            && first_error.as_ref().is_none_or(|(j, _)| i < *j)
        {
            first_error = Some((i, e));
        }
        printf.extend(worker.printf);
        logs.push(worker.findings);
    }
    if let Some((_, e)) = first_error {
        return Err(e);
    }
    hooks.check()?;
    Ok(outcome(logs, printf))
}

/// Groups a worker takes from the counter at a time. Consecutive groups share cache lines and
/// shadow pages where they meet (a stencil's columns, a row of output): a worker that runs them
/// one after another finds those warm, where two workers taking turns would each miss them.
/// Kernels with atomics take one group at a time: a group may spin until a later one writes,
/// which must then not sit untaken in the spinning group's batch.
fn group_batch(total: u64, threads: usize, atomics: bool) -> u64 {
    /// Batches per worker at least, so that the last ones still spread over the workers.
    const BATCHES_PER_WORKER: u64 = 32;
    const MAX_BATCH: u64 = 8;
    if atomics || threads == 1 { 1 } else { (total / (threads as u64 * BATCHES_PER_WORKER)).clamp(1, MAX_BATCH) }
}

/// What a run brings back: the workers' findings merged, and the groups' printf output (by
/// group linear index), both in NDRange order whatever order the groups ran in.
fn outcome(logs: Vec<WorkerFindings>, mut printf: Vec<(u64, String)>) -> RunOutcome {
    printf.sort_unstable_by_key(|(i, _)| *i);
    let merged = findings::merge(logs);
    RunOutcome {
        findings: merged.findings,
        finding_counts: merged.counts,
        findings_omitted: merged.omitted,
        printf: printf.into_iter().map(|(_, text)| text).collect(),
    }
}

/// Runs the whole launch on this thread with every work-group alive at once, so that
/// `chooser` can order atomics across groups (see [`schedule::run_stepped`]).
fn run_all_stepped<H: Hooks>(
    setup: &Setup,
    options: &RunOptions,
    hooks: &H,
    stepping: Stepping,
) -> Result<RunOutcome, ExecError> {
    let Setup { shared, kernel, entry, layout, state } = *setup;
    let range = &shared.range;
    let total = range.groups.iter().product::<u64>();
    let stride = range.lanes_per_group();
    let per_group = stride * (std::mem::size_of::<LaneState>() + schedule::STATE_BYTES) as u64 + layout.end as u64;
    let mut meter = Meter::new(options.memory.as_deref());
    let fixed = per_group.saturating_mul(total);
    meter.need(fixed, || format!("a stepped run of {total} work-groups held at once"))?;
    let mut groups = Vec::with_capacity(total as usize);
    state.worker_started();
    for i in 0..total {
        let id = range.group_id(i);
        let size = range.group_size(id);
        let mut group = new_group(id, size, layout, shared.module)?;
        let mut lanes = Lanes::default();
        start_lanes(shared, entry, &group, &mut lanes, stride as usize)?;
        if shared.uninit.is_some() {
            group.uninit.start(&group.local_regions, shared.module, shared.frame_bases, stride as usize);
        }
        let observer = hooks.group_start(id, size);
        groups.push((i, group, lanes, observer));
    }
    let result = schedule::run_stepped(shared, &mut groups, kernel.function, state, &mut meter, fixed, stepping);
    state.worker_finished();
    result?;
    let mut worker = WorkerFindings::default();
    let mut printf = Vec::new();
    for (i, mut group, _, observer) in groups {
        hooks.group_end(observer);
        if !group.printf.is_empty() {
            printf.push((i, std::mem::take(&mut group.printf)));
        }
        worker.absorb(i, &mut group.findings);
    }
    hooks.run_end();
    hooks.check()?;
    Ok(outcome(vec![worker], printf))
}

/// A worker thread counted in [`NdRangeState`]'s running workers until it is dropped.
struct Running<'s>(&'s NdRangeState);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.worker_finished();
    }
}

/// What one worker thread brings back from the groups it ran.
#[derive(Default)]
struct Worker {
    /// The group that failed (its linear index) and why; the worker stopped there.
    error: Option<(u64, ExecError)>,
    /// The printf output of each group that printed, by linear index.
    printf: Vec<(u64, String)>,
    findings: WorkerFindings,
}

/// Runs group `id` on this worker, reusing its lanes and group.
fn run_one<H: Hooks>(
    setup: &Setup,
    hooks: &H,
    (meter, lanes, group, run): (&mut Meter, &mut Lanes, &mut Option<Group>, &mut WorkerRun),
    id: [u64; 3],
) -> Result<(), ExecError> {
    let Setup { shared, kernel, entry, layout, state } = *setup;
    let range = &shared.range;
    state.check_time(|| format!("work-group {}", schedule::ids(id)))?;
    hooks.check()?;
    let size = range.group_size(id);
    let count = size.iter().product::<u64>();
    let stride = range.lanes_per_group();
    let per_item = (std::mem::size_of::<LaneState>() + schedule::STATE_BYTES) as u64
        + entry.slots as u64 * 8
        + entry.private.len() as u64;
    let footprint = stride * per_item + layout.end as u64;
    meter.need(footprint, || {
        format!("work-group {} ({count} work-items, {} bytes of __local memory)", schedule::ids(id), layout.end)
    })?;
    let group = match group {
        Some(group) => {
            reset_group(group, id, size, layout, shared.module);
            group
        }
        None => group.insert(new_group(id, size, layout, shared.module)?),
    };
    start_lanes(shared, entry, group, lanes, stride as usize)?;
    if shared.uninit.is_some() {
        group.uninit.start(&group.local_regions, shared.module, shared.frame_bases, stride as usize);
    }
    let mut observer = hooks.group_start(id, size);
    let fixed = stride * (std::mem::size_of::<LaneState>() + schedule::STATE_BYTES) as u64 + layout.end as u64;
    schedule::run_group(run, group, lanes, kernel.function, (&mut observer, state), meter, fixed)?;
    hooks.group_end(observer);
    Ok(())
}

/// Validates the NDRange and completes it (group counts; `local` defaults).
fn geometry(launch: &Launch, kernel: &ir::Kernel) -> Result<NdRange, ExecError> {
    if !(1..=3).contains(&launch.work_dim) {
        return Err(ExecError::Launch(format!("work_dim must be 1, 2 or 3, not {}", launch.work_dim)));
    }
    if let Some(d) = (0..3).find(|&d| launch.global_size[d] == 0 || launch.local_size[d] == 0) {
        return Err(ExecError::Launch(format!("global and local sizes must be non-zero (dimension {d})")));
    }
    let groups = [0, 1, 2].map(|d| launch.global_size[d].div_ceil(launch.local_size[d]));
    if let Some(d) = (0..3).find(|&d| launch.global_offset[d].checked_add(launch.global_size[d]).is_none()) {
        return Err(ExecError::Launch(format!(
            "global offset {} plus global size {} overflows 64 bits (dimension {d})",
            launch.global_offset[d], launch.global_size[d]
        )));
    }
    let items = launch.global_size.iter().try_fold(1u64, |n, &s| n.checked_mul(s)).filter(|&n| n <= MAX_LAUNCH_ITEMS);
    if items.is_none() {
        return Err(ExecError::Launch(format!(
            "global size {:?} has more than 2^32 work-items, the most clrace can check",
            launch.global_size
        )));
    }
    let group_items: u64 = (0..3).map(|d| launch.local_size[d].min(launch.global_size[d])).product();
    if group_items > MAX_GROUP_ITEMS {
        return Err(ExecError::Launch(format!(
            "work-group size {:?} has {group_items} work-items; clrace runs at most {MAX_GROUP_ITEMS} per work-group",
            launch.local_size
        )));
    }
    if let Some(req) = kernel.info.required_local_size
        && req != launch.local_size
    {
        return Err(ExecError::Launch(format!(
            "kernel requires work-group size {:?}, launch uses {:?}",
            req, launch.local_size
        )));
    }
    if launch.args.len() != kernel.params.len() {
        return Err(ExecError::Launch(format!(
            "kernel '{}' takes {} arguments, the launch gives {}",
            kernel.info.name,
            kernel.params.len(),
            launch.args.len()
        )));
    }
    Ok(NdRange {
        work_dim: launch.work_dim,
        offset: launch.global_offset,
        global: launch.global_size,
        local: launch.local_size,
        groups,
        sub_group: 0,
    })
}

/// The slots of each by-value argument of the launch, as [`entry`] copies them into the
/// kernel's registers (`None` for the other arguments, and for values of the wrong size, which
/// `entry` refuses).
fn argument_values(module: &ir::Module, kernel: &ir::Kernel, launch: &Launch) -> Vec<Option<Vec<u64>>> {
    kernel
        .params
        .iter()
        .zip(&launch.args)
        .map(|(kind, value)| match (kind, value) {
            (ParamKind::Value { layout }, ArgValue::Value(bytes)) => {
                let layout = module.layouts.get(*layout as usize)?;
                (bytes.len() >= layout.size as usize).then(|| value_slots(layout, bytes))
            }
            _ => None,
        })
        .collect()
}

/// The slots of a by-value argument of `layout` (its scalars, little-endian, in order).
fn value_slots(layout: &ir::Layout, bytes: &[u8]) -> Vec<u64> {
    layout
        .leaves
        .iter()
        .map(|leaf| read_le(&bytes[leaf.offset as usize..leaf.offset as usize + leaf.size as usize]))
        .collect()
}

/// Builds the kernel's starting registers from the launch arguments.
fn entry(
    module: &ir::Module,
    kernel: &ir::Kernel,
    launch: &Launch,
    buffer_base: u64,
    num_buffers: usize,
) -> Result<Entry, ExecError> {
    let function = &module.functions[kernel.function as usize];
    let mut regs = function.template.clone();
    let mut private = Vec::new();
    let (frame_bases, slots) = frame_bases(module, kernel.function);
    // The program's other kernels' `__local` variables take no room in this kernel's groups.
    let reached = locals_reached(module, &frame_bases);
    let mut local_sizes: Vec<usize> =
        module.locals.iter().zip(reached).map(|(v, reached)| if reached { v.size as usize } else { 0 }).collect();
    for (i, ((kind, value), &(reg, slots))) in kernel.params.iter().zip(&launch.args).zip(&function.params).enumerate()
    {
        let arg = &kernel.info.args[i];
        let bad = |what: &str| ExecError::Launch(format!("argument {i} ('{}'): {what}", arg.name));
        let reg = reg as usize;
        match (kind, value) {
            (ParamKind::Buffer, ArgValue::Buffer(b)) if *b < num_buffers => {
                regs[reg] = address(SPACE_GLOBAL, buffer_base + *b as u64, 0)
            }
            (ParamKind::Buffer, ArgValue::SubBuffer { buffer, offset }) if *buffer < num_buffers => {
                regs[reg] = address(SPACE_GLOBAL, buffer_base + *buffer as u64, *offset)
            }
            (ParamKind::Buffer, ArgValue::Null) => regs[reg] = 0,
            (ParamKind::Local, ArgValue::Local(size)) => {
                regs[reg] = address(SPACE_LOCAL, local_sizes.len() as u64, 0);
                local_sizes.push(*size);
            }
            (ParamKind::Value { layout }, ArgValue::Value(bytes)) => {
                let layout = &module.layouts[*layout as usize];
                check_size(bytes, layout.size, &bad)?;
                // A specialised kernel's bound argument takes no slots: its value is in the template.
                for (k, v) in value_slots(layout, bytes).into_iter().enumerate().take(slots as usize) {
                    regs[reg + k] = v;
                }
            }
            (ParamKind::ByValPointer { layout }, ArgValue::Value(bytes)) => {
                let layout = &module.layouts[*layout as usize];
                check_size(bytes, layout.size, &bad)?;
                let start = private.len().next_multiple_of(16);
                private.resize(start, 0);
                private.extend_from_slice(&bytes[..layout.size as usize]);
                regs[reg] = address(SPACE_PRIVATE, 0, start as u64);
            }
            (ParamKind::Image, ArgValue::Image { buffer, .. }) if *buffer < num_buffers => {
                regs[reg] = address(SPACE_GLOBAL, buffer_base + *buffer as u64, 0)
            }
            (ParamKind::Sampler, ArgValue::Sampler(bits)) => regs[reg] = *bits as u64,
            (ParamKind::Image, _) => return Err(bad("expects an image")),
            (ParamKind::Sampler, _) => return Err(bad("expects a sampler")),
            (ParamKind::Unsupported(what), _) => {
                return Err(ExecError::Unsupported(format!("{what} arguments (argument {i}, '{}')", arg.name)));
            }
            (ParamKind::Buffer, _) => return Err(bad("expects a buffer")),
            (ParamKind::Local, _) => return Err(bad("expects a __local size")),
            _ => return Err(bad("expects a value")),
        }
    }
    Ok(Entry { regs, frame_bases, slots, private, local_sizes })
}

/// Which of the module's `__local` variables the kernel can reach: those whose address is a
/// constant of a function it runs (`frame_bases` not `u32::MAX`), the only place a
/// kernel-scope variable's address comes from (instructions carry no immediates, and nothing
/// program-wide may hold a `__local` address). A program's kernels each declare their own
/// tiles; a group of one kernel then zeroes and holds only its own (CLBlast's programs
/// declare tens of kilobytes over all their kernels). A constant that only looks like such an
/// address keeps a variable for nothing, never drops one.
fn locals_reached(module: &ir::Module, frame_bases: &[u32]) -> Vec<bool> {
    let mut reached = vec![false; module.locals.len()];
    let functions = module.functions.iter().zip(frame_bases).filter(|(_, base)| **base != u32::MAX);
    for (function, _) in functions {
        for &value in &function.template {
            let (space, index, _) = ir::value::split(value);
            if space == SPACE_LOCAL
                && let Some(reached) = reached.get_mut(index as usize)
            {
                *reached = true;
            }
        }
    }
    reached
}

/// The register-file words a worker needs for groups of `lanes` work-items of `kernel` as built
/// (a specialised kernel needs at most as many); `None` when there is no such kernel.
pub fn register_words(program: &Program, kernel: &str, lanes: u64) -> Option<usize> {
    let module = &program.module;
    let kernel = module.kernels.iter().find(|k| k.info.name == kernel)?;
    let (_, slots) = frame_bases(module, kernel.function);
    slots.checked_mul(usize::try_from(lanes).ok()?)
}

/// A frame of its own for every function the kernel can reach, the kernel's first: with no
/// recursion a function is never twice on one call stack, so frames never need to move and a
/// function's constants are laid out once.
fn frame_bases(module: &ir::Module, kernel: u32) -> (Vec<u32>, usize) {
    let mut bases = vec![u32::MAX; module.functions.len()];
    let mut next = 0usize;
    let mut stack = vec![kernel];
    while let Some(f) = stack.pop() {
        if bases[f as usize] != u32::MAX {
            continue;
        }
        bases[f as usize] = next as u32;
        let function = &module.functions[f as usize];
        next += function.template.len();
        stack.extend(function.code.iter().filter_map(|i| match i {
            ir::Inst::Call { func, .. } => Some(*func),
            _ => None,
        }));
    }
    (bases, next)
}

fn check_size(bytes: &[u8], size: u32, bad: &dyn Fn(&str) -> ExecError) -> Result<(), ExecError> {
    if bytes.len() < size as usize {
        return Err(bad(&format!("needs {size} bytes, got {}", bytes.len())));
    }
    Ok(())
}

fn read_le(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(word)
}

/// Where each local allocation starts in a group's `__local` memory (16-byte aligned).
struct LocalLayout {
    regions: Vec<(usize, usize)>,
    end: usize,
}

impl LocalLayout {
    fn of(sizes: &[usize]) -> Result<LocalLayout, ExecError> {
        let mut regions = Vec::with_capacity(sizes.len());
        let mut end = 0usize;
        for &s in sizes {
            let start = end.checked_next_multiple_of(16);
            let Some((start, next)) = start.and_then(|start| Some((start, start.checked_add(s)?))) else {
                return Err(ExecError::Launch("the __local allocations' total size overflows".into()));
            };
            regions.push((start, s));
            end = next;
        }
        Ok(LocalLayout { regions, end })
    }
}

/// A group's `__local` memory, zeroed, with kernel-scope variables' initial values.
fn fill_local(local: &mut [u8], layout: &LocalLayout, module: &ir::Module) {
    local.fill(0);
    for (var, &(start, len)) in module.locals.iter().zip(&layout.regions) {
        let n = var.init.len().min(len);
        local[start..start + n].copy_from_slice(&var.init[..n]);
    }
}

fn new_group(id: [u64; 3], size: [u64; 3], layout: &LocalLayout, module: &ir::Module) -> Result<Group, ExecError> {
    let mut local = Vec::new();
    local.try_reserve_exact(layout.end).map_err(|_| {
        ExecError::Memory(format!("cannot allocate {} bytes of __local memory for a work-group", layout.end))
    })?;
    local.resize(layout.end, 0);
    fill_local(&mut local, layout, module);
    let local_regions = layout.regions.clone();
    let findings = FindingLog::default();
    Ok(Group {
        id,
        size,
        local,
        local_regions,
        findings,
        printf: String::new(),
        uninit: Default::default(),
        diverged: false,
    })
}

/// Makes a finished group the fresh group `id`, reusing its memory.
fn reset_group(group: &mut Group, id: [u64; 3], size: [u64; 3], layout: &LocalLayout, module: &ir::Module) {
    group.id = id;
    group.size = size;
    fill_local(&mut group.local, layout, module);
    group.findings.clear();
    group.printf.clear();
    group.diverged = false;
}

/// Puts one lane per position of `group` at the kernel's entry. The register file is laid out
/// for `stride` lanes (the launch's work-group size) once per worker: the entry frame's constants
/// and arguments never change, and every other slot is written before it is read.
fn start_lanes(
    launch: &Execution,
    entry: &Entry,
    group: &Group,
    lanes: &mut Lanes,
    stride: usize,
) -> Result<(), ExecError> {
    let r = &launch.range;
    let count = (group.size[0] * group.size[1] * group.size[2]) as usize;
    if lanes.stride != stride {
        lanes.renew(stride);
    }
    if let Some(more) = stride.checked_sub(lanes.lane.len()).filter(|&n| n > 0) {
        lanes.lane.try_reserve_exact(more).map_err(|_| {
            ExecError::Memory(format!("cannot allocate {count} work-items for work-group {}", schedule::ids(group.id)))
        })?;
        lanes.lane.resize_with(stride, LaneState::default);
    }
    if !lanes.ensure_slots(entry.slots) {
        return Err(ExecError::Memory(format!(
            "cannot allocate {} registers for each of {stride} work-items",
            entry.slots
        )));
    }
    lanes.lay(ENTRY_FRAME, 0, &entry.regs);
    lanes.count = count;
    lanes.forget_all(group.size, count, launch.uninit.is_none());
    // Local ids depend only on the group's shape, the same for every full group.
    if lanes.shape != group.size || lanes.ids.len() != 3 * stride {
        lanes.shape = group.size;
        lanes.ids.clear();
        lanes.ids.resize(3 * stride, 0);
        let mut linear = 0;
        for z in 0..group.size[2] {
            for y in 0..group.size[1] {
                for x in 0..group.size[0] {
                    for (d, id) in [x, y, z].into_iter().enumerate() {
                        lanes.ids[d * stride + linear] = id;
                    }
                    linear += 1;
                }
            }
        }
    }
    lanes.origin = [0, 1, 2].map(|d| r.offset[d] + group.id[d] * r.local[d]);
    lanes.done.clear();
    lanes.done.resize(stride, false);
    // Each lane's own state is reset only where some lane of an earlier group changed it: most
    // kernels never do, and touching every lane's state costs a short kernel more than it runs.
    let flags = std::mem::take(&mut lanes.flags);
    let private = flags.private || !entry.private.is_empty();
    lanes.flags.private = !entry.private.is_empty();
    if private || flags.spinning || flags.printed {
        // Every lane, not only this group's: a smaller group at the edge leaves the others as
        // they were, and the flags are cleared now.
        for lane in &mut lanes.lane {
            if private {
                lane.private.clear();
                lane.private.extend_from_slice(&entry.private);
            }
            if flags.spinning {
                lane.spin = Default::default();
            }
            lane.printf.clear();
        }
    }
    Ok(())
}
