//! Runs a launch: checks it against the kernel, lays out its memory, and hands the work-groups,
//! in NDRange order, to worker threads; inside a group the scheduler (`schedule.rs`) advances the
//! work-items. Findings and printf output are put back in NDRange order.

use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;

use super::hooks::Hooks;
use super::interp::{self, Group, NdRange, WorkItem};
use super::memory::{GlobalMemory, SPACE_GLOBAL, SPACE_LOCAL, SPACE_PRIVATE, address};
use super::schedule::{self, LaunchState};
use super::{ArgValue, ExecError, Launch, RunOptions, RunOutcome};
use crate::ir::{self, ParamKind};
use crate::program::Program;

/// The registers and private bytes every work-item starts the kernel with.
struct Entry {
    regs: Vec<u64>,
    private: Vec<u8>,
    /// Sizes of the local allocations: kernel-declared variables, then `__local` arguments.
    local_sizes: Vec<usize>,
}

pub fn run<H: Hooks>(
    program: &Program,
    launch: &Launch,
    buffers: &mut [Vec<u8>],
    options: &RunOptions,
    hooks: &H,
) -> Result<RunOutcome, ExecError> {
    let module = &program.module;
    let kernel = module
        .kernels
        .iter()
        .find(|k| k.info.name == launch.kernel)
        .ok_or_else(|| ExecError::Launch(format!("no kernel named '{}' in the program", launch.kernel)))?;
    let mut range = geometry(launch, kernel)?;
    range.sub_group = options.sub_group_size.max(1) as u64;
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
    for (data, var) in program_data.iter_mut().zip(&module.globals) {
        globals.add(data, var.name.clone(), !var.writable);
    }
    let buffer_base = module.globals.len() as u64 + 1;
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
                globals.add(buffer, name, constant);
            }
        }
    }
    let entry = entry(module, kernel, launch, buffer_base, buffers.len())?;
    let shared = interp::Launch { module, globals: &globals, range, flush_denormals: program.flush_denormals };

    let ids: Vec<[u64; 3]> = (0..range.groups[2])
        .flat_map(|z| (0..range.groups[1]).flat_map(move |y| (0..range.groups[0]).map(move |x| [x, y, z])))
        .collect();
    let state = LaunchState::new(options);
    let run_one = |items: &mut Vec<WorkItem>, id: &[u64; 3]| -> Result<Group, ExecError> {
        let size = [0, 1, 2].map(|d| range.local[d].min(range.global[d] - id[d] * range.local[d]));
        let mut group = new_group(*id, size, &entry, module);
        if state.abort.load(Ordering::Relaxed) {
            return Ok(group);
        }
        if let Err(e) = state.check_time(|| format!("work-group {}", schedule::ids(*id))).and_then(|()| hooks.check()) {
            state.abort.store(true, Ordering::Relaxed);
            return Err(e);
        }
        start_items(&shared, kernel, &entry, &group, items);
        let mut observer = hooks.group_start(*id, size);
        schedule::run_group(&shared, &mut group, items, &mut observer, &state)?;
        hooks.group_end(observer);
        Ok(group)
    };
    // Worker threads take groups in NDRange order, so at most one group per worker is in flight
    // and consumers (the race detector) can merge group results in order with little buffering.
    let threads = options.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let threads = threads.clamp(1, ids.len().max(1));
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<Result<Group, ExecError>>>> = ids.iter().map(|_| Mutex::new(None)).collect();
    let work = || {
        let mut items = Vec::new();
        state.worker_started();
        loop {
            let i = next.fetch_add(1, Ordering::SeqCst);
            let Some(id) = ids.get(i) else { break };
            *results[i].lock() = Some(run_one(&mut items, id));
        }
        state.worker_finished();
    };
    if threads == 1 {
        work();
    } else {
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(work);
            }
        });
    }
    let results = results.into_iter().map(|r| r.into_inner().expect("every group ran"));
    // Groups report in NDRange order whatever order they ran in.
    let mut outcome = RunOutcome::default();
    for group in results {
        let mut group = group?;
        outcome.findings.append(&mut group.findings);
        outcome.printf.push_str(&group.printf);
    }
    hooks.check()?;
    Ok(outcome)
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
    let mut local_sizes: Vec<usize> = module.locals.iter().map(|v| v.size as usize).collect();
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
                for (k, leaf) in layout.leaves.iter().enumerate().take(slots as usize) {
                    regs[reg + k] = read_le(&bytes[leaf.offset as usize..leaf.offset as usize + leaf.size as usize]);
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
    Ok(Entry { regs, private, local_sizes })
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

fn new_group(id: [u64; 3], size: [u64; 3], entry: &Entry, module: &ir::Module) -> Group {
    let mut local_regions = Vec::with_capacity(entry.local_sizes.len());
    let mut end = 0usize;
    for &s in &entry.local_sizes {
        let start = end.next_multiple_of(16);
        local_regions.push((start, s));
        end = start + s;
    }
    let mut local = vec![0u8; end];
    for (var, &(start, len)) in module.locals.iter().zip(&local_regions) {
        let n = var.init.len().min(len);
        local[start..start + n].copy_from_slice(&var.init[..n]);
    }
    Group { id, size, local, local_regions, findings: Vec::new(), printf: String::new() }
}

/// Puts one work-item per position of `group` at the kernel's entry.
fn start_items(launch: &interp::Launch, kernel: &ir::Kernel, entry: &Entry, group: &Group, items: &mut Vec<WorkItem>) {
    let r = &launch.range;
    let count = (group.size[0] * group.size[1] * group.size[2]) as usize;
    items.resize_with(count, WorkItem::default);
    items.truncate(count);
    let mut linear = 0;
    for z in 0..group.size[2] {
        for y in 0..group.size[1] {
            for x in 0..group.size[0] {
                let wi = &mut items[linear];
                wi.local_id = [x, y, z];
                wi.local_linear = linear as u64;
                wi.global_id = [0, 1, 2].map(|d| r.offset[d] + group.id[d] * r.local[d] + wi.local_id[d]);
                wi.start(kernel.function, &entry.regs, &entry.private);
                linear += 1;
            }
        }
    }
}
