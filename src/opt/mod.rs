//! The optimiser: rewrites of a lowered module, run once all its functions are lowered and
//! before [`crate::ir::validate`] checks the result. They use only existing [`ir::Inst`] variants
//! (and new layouts), so the interpreter needs nothing new, and each keeps what every work-item
//! computes, stores and reports. [`optimise`] runs them in this order, function by function:
//!
//! - **Index extensions folded into `PtrOffset`, pointer offsets chained** (`peephole`).
//! - **Private variables promoted to registers** (`promote`): a struct used only at constant
//!   offsets (field by field, by layout loads and stores, or copied whole to or from elsewhere)
//!   and written on every path before it is read lives in registers instead of private memory.
//! - **Writes of some lanes of a vector** (`lane_stores`): the load clang puts before a store
//!   of a vector with some lanes changed is dropped and the store keeps the changed lanes only.
//! - **Copies forwarded to their readers** (`forward`): a copy read only further down its
//!   straight-line block, with its source unchanged until then, goes; the readers read the source.
//! - **Repeated array-index checks dropped** (`repeated_checks`): a check of an index a
//!   dominating check already made on the same value.
//! - **Jump threading, then compaction** (`peephole`): branches to branches go straight to the
//!   end of the chain; unreachable code, instructions made dead above and branches to the next
//!   instruction are removed, and every target is renumbered.
//! - **Copies folded into their writers** (`coalesce`): a truncation to the width its value
//!   already has is a copy, and the copy at the end of a loop body that carries a value to the
//!   next iteration goes when its writer can write the target.
//! - **Kernel entries that only call their body skipped** (`peephole`), once for the module.
//!
//! Functions are taken callees first. After the passes above, in a function where it finds
//! something to do:
//!
//! - **Small counted loops over private arrays unrolled** (`unroll`): a loop of at most 16
//!   iterations with constant bounds whose counter indexes a private array becomes one copy of
//!   its body per iteration, the counter a constant in each.
//! - **Small helpers inlined** (`inline`): a call of a function of at most 200 instructions
//!   that only computes (no barrier, collective, atomic, private allocation, printf or call)
//!   becomes the callee's body in registers of the caller. After the first round of passes, so
//!   that the dropping of repeated array-index checks sees what it saw before; after unrolling,
//!   so that each copy of a loop body has its own registers for its calls; before the folding
//!   below, which then folds the callee's constant arguments and removes what it computed for
//!   nothing.
//! - **Constants folded** (`constants`): integer values known from constants become constants,
//!   known indices join their `PtrOffset`'s offset, array-index checks of known indices inside
//!   the array go, branches and switches on known values go one way (the code only they reached
//!   goes), `x + 0`, `x * 1` and the like become copies, and computations nothing reads (or only
//!   code no longer reached reads) go.
//! - **Private arrays replaced by registers** (`scalars`): a private array accessed only by
//!   element at constant offsets, each element read only after it is written, becomes one
//!   register per element; constants are folded again.
//! - **The passes above again**, but for the dropping of repeated array-index checks (a check in
//!   one copy of a body would drop the same check in the next, which the loop ran each time; a
//!   check inlined at two calls is one instruction's, counted at each call).
//!
//! Then, in every function, **loop invariants are hoisted** (`hoist`): an instruction that only
//! computes, inside a loop, from registers the loop does not write, into a register only it
//! writes, runs once before the loop (innermost loops first, so it leaves every loop it is
//! invariant in). After them all, so that it sees the code every pass above left.
//!
//! Last, every function's frame is **packed** (`registers`): the slots nothing names go, the
//! others are renumbered in order; and each work-item function is told how many of its value's
//! slots the function reads (`builtins`: `get_global_id(0)` reads one of three, which is all the
//! executor then writes).
//!
//! A launch may then run code specialised to its by-value arguments ([`specialise()`], for
//! [`crate::program::Program::specialise`]): they become constants of the kernel's function
//! (and constant arguments of a call constants of a callee that call alone reaches), and constant
//! folding runs again over the functions that changed, then the folding of copies into their
//! writers (the branches folded away joined straight-line code), and their frames are packed
//! again (and the slots their work-item functions read counted again).
//!
//! The passes share what `base` derives from a function (block ends, branch targets, read and
//! write counts, constant registers and the integer arithmetic the interpreter folds alike). Each imports `base` and the IR only: no pass imports another, nor this driver.
//!
//! What it cannot see: values, SPIR-V and execution. It reasons from register numbers
//! ([`ir::operands`]), the straight-line order of instructions and the branch targets only, and
//! gives up wherever that is not enough. Fewer branches also means fewer steps charged to the
//! branch budget, and a loop keeps at least its back edge, so an endless kernel still meets the
//! budget.

mod base;
mod builtins;
mod coalesce;
mod constants;
mod forward;
mod hoist;
mod inline;
mod lane_stores;
mod peephole;
mod promote;
mod registers;
mod repeated_checks;
mod scalars;
mod specialise;
#[cfg(test)]
mod tests;
mod unroll;

use crate::ir;
use peephole::{compact, fold_index_extensions, merge_offset_chains, skip_trampolines, thread_jumps};

/// What the peepholes removed from one module, for tests and the instruction counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    pub folded_extensions: usize,
    pub merged_offsets: usize,
    pub threaded_targets: usize,
    pub promoted_variables: usize,
    pub narrowed_stores: usize,
    pub dropped_checks: usize,
    pub coalesced_copies: usize,
    pub copied_truncations: usize,
    pub forwarded_copies: usize,
    pub skipped_trampolines: usize,
    pub removed_instructions: usize,
    pub unrolled_loops: usize,
    pub folded_constants: usize,
    pub scalarised_arrays: usize,
    pub inlined_calls: usize,
    pub hoisted_instructions: usize,
    pub packed_slots: usize,
    pub narrowed_builtins: usize,
}

/// Which of the optional passes [`optimise_with`] runs (the tests compare runs with and without).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Passes {
    pub inline: bool,
    pub hoist: bool,
    pub pack: bool,
}

impl Passes {
    /// Every pass: what [`optimise`] runs.
    pub const ALL: Passes = Passes { inline: true, hoist: true, pack: true };
    /// Every pass but packing: the registers a test names keep their numbers.
    #[cfg(test)]
    pub const UNPACKED: Passes = Passes { pack: false, ..Passes::ALL };
}

/// Runs every peephole on every function of `module`, callees before their callers (so that a
/// helper is inlined already optimised, with its own helpers inlined).
pub fn optimise(module: &mut ir::Module) -> Stats {
    optimise_with(module, Passes::ALL)
}

/// [`optimise`] with the optional passes `passes` names (the tests compare them).
fn optimise_with(module: &mut ir::Module, passes: Passes) -> Stats {
    let mut stats = Stats::default();
    for i in base::callees_first(module, 0..module.functions.len()) {
        // Taken out so the pass can read the rest of the module (callees' return widths and
        // bodies); recursion is refused before lowering, so no function calls itself.
        let mut func = std::mem::take(&mut module.functions[i]);
        optimise_function(module, &mut func, &mut stats, passes);
        module.functions[i] = func;
    }
    stats.skipped_trampolines = skip_trampolines(module);
    for i in 0..module.functions.len() {
        let mut func = std::mem::take(&mut module.functions[i]);
        if passes.pack {
            stats.packed_slots += registers::pack_registers(module, &mut func);
        }
        stats.narrowed_builtins += builtins::narrow_builtins(module, &mut func);
        module.functions[i] = func;
    }
    stats
}

/// The passes on one function taken out of `module` (see the module doc for their order), with
/// the optional ones `passes` names.
fn optimise_function(module: &mut ir::Module, func: &mut ir::Function, stats: &mut Stats, passes: Passes) {
    peepholes(module, func, stats, true);
    let unrolled = unroll::unroll_loops(module, func);
    // After the first peepholes: the dropping of repeated array-index checks must not see
    // a callee's checks (nor the branches of its body) where it saw a call before. After
    // unrolling: each copy of a loop body gets its own registers for the callee's.
    let inlined = if passes.inline { inline::inline_calls(module, func) } else { 0 };
    stats.inlined_calls += inlined;
    if unrolled > 0 || inlined > 0 {
        // The copies' counters are constants (and an inlined body's constant arguments):
        // fold what they make known, put the private arrays they index in registers, and
        // run the peepholes again over the result.
        stats.unrolled_loops += unrolled;
        fold(module, func, stats);
        let mut keep = vec![true; func.code.len()];
        stats.scalarised_arrays += scalars::scalarise_arrays(module, func, &mut keep);
        stats.removed_instructions += compact(func, &keep);
        // Again: the stores made register writes may now be dead or known.
        fold(module, func, stats);
        peepholes(module, func, stats, false);
    }
    if passes.hoist {
        stats.hoisted_instructions += hoist::hoist_invariants(module, func);
    }
}

/// Constant folding, then compaction (which drops the code that folded branches left unreached).
fn fold(module: &ir::Module, func: &mut ir::Function, stats: &mut Stats) {
    let mut keep = vec![true; func.code.len()];
    stats.folded_constants += constants::fold_constants(module, func, &mut keep);
    stats.removed_instructions += compact(func, &keep);
}

/// The most instructions the functions of one kernel may have for its launches to be
/// specialised: folding costs a few thousand instructions per instruction of code (CLBlast's
/// GEMM kernel, about 900 instructions: 3.0 M, under a millisecond), which only a large launch
/// repays.
pub const MAX_SPECIALISED: usize = 20_000;

/// The instructions of the functions that kernel `kernel` of `module` reaches (its own and its
/// callees'), what specialising it costs in proportion to; `None` for no such kernel.
pub fn reached_code(module: &ir::Module, kernel: usize) -> Option<usize> {
    let entry = module.kernels.get(kernel)?.function as usize;
    Some(specialise::Reach::of(module, entry).code_len(module))
}

/// A copy of `module` made for one launch of its kernel `kernel`, whose by-value arguments are
/// `values` (per argument, its slots as the executor would copy them; `None` for the others):
/// the arguments are constants of the kernel's function, constant arguments of calls constants
/// of the callees that only the kernel's one call path reaches (`specialise`), and those
/// functions folded again, callers first (a condition on an argument becomes a branch to where
/// it goes, the code it skips goes; a division by an argument a constant), their copies folded
/// into their writers again and their frames packed. Returns the module and the functions the kernel reaches, callers first (the functions
/// it does not reach are left empty, and the module is good for this kernel only); `None` when
/// nothing could be bound or the kernel reaches more than [`MAX_SPECIALISED`] instructions. The
/// caller annotates and validates the result (see [`crate::program`]).
pub fn specialise(module: &ir::Module, kernel: usize, values: &[Option<Vec<u64>>]) -> Option<(ir::Module, Vec<usize>)> {
    let entry = module.kernels.get(kernel)?.function as usize;
    let reach = specialise::Reach::of(module, entry);
    if reach.code_len(module) > MAX_SPECIALISED {
        return None;
    }
    let mut out = ir::Module {
        functions: (0..module.functions.len())
            .map(|f| if reach.paths[f] > 0 { module.functions[f].clone() } else { ir::Function::default() })
            .collect(),
        kernels: module.kernels.clone(),
        layouts: module.layouts.clone(),
        globals: module.globals.clone(),
        locals: module.locals.clone(),
        locations: module.locations.clone(),
        unsupported: module.unsupported.clone(),
    };
    let mut bound = specialise::bind_kernel_values(&module.kernels[kernel], &mut out.functions[entry], values);
    let mut stats = Stats::default();
    // Callers first: a caller folded knows which of its calls' arguments are constants.
    let single: Vec<usize> = reach.order.iter().copied().filter(|&f| reach.paths[f] == 1).collect();
    for &f in &single {
        let mut func = std::mem::take(&mut out.functions[f]);
        fold(&out, &mut func, &mut stats);
        bound += specialise::bind_call_constants(&mut out, &mut func, &reach.paths);
        out.functions[f] = func;
    }
    if bound == 0 {
        return None;
    }
    for &f in &single {
        let mut func = std::mem::take(&mut out.functions[f]);
        // The folded branches joined straight-line code: copies may now fold into their writers.
        coalesce(&out, &mut func, &mut stats);
        registers::pack_registers(&out, &mut func);
        // Afresh: the passes above may have renamed or dropped reads.
        builtins::narrow_builtins(&out, &mut func);
        out.functions[f] = func;
    }
    Some((out, reach.order))
}

/// The passes that run on every function, in order (see the module doc). Repeated array-index
/// checks are dropped only with `checks`: not again after unrolling, where a check in one copy
/// of a loop body would drop the same check in the next copies, which the loop ran (and
/// counted in its findings) at every iteration.
fn peepholes(module: &mut ir::Module, func: &mut ir::Function, stats: &mut Stats, checks: bool) {
    let mut keep = vec![true; func.code.len()];
    stats.folded_extensions += fold_index_extensions(module, func, &mut keep);
    stats.merged_offsets += merge_offset_chains(module, func, &mut keep);
    stats.promoted_variables += promote::promote_copied_variables(module, func, &mut keep);
    stats.narrowed_stores += lane_stores::narrow_lane_stores(module, func, &mut keep);
    stats.forwarded_copies += forward::forward_copies(module, func, &mut keep);
    if checks {
        stats.dropped_checks += repeated_checks::drop_repeated_checks(module, func, &mut keep);
    }
    stats.threaded_targets += thread_jumps(func);
    stats.removed_instructions += compact(func, &keep);
    // After compaction, so that blocks joined by a removed branch are one straight line.
    coalesce(module, func, stats);
}

/// Truncations to their value's width made copies, then copies folded into their writers,
/// then compaction.
fn coalesce(module: &ir::Module, func: &mut ir::Function, stats: &mut Stats) {
    stats.copied_truncations += coalesce::truncations_to_copies(module, func);
    let mut keep = vec![true; func.code.len()];
    let coalesced = coalesce::coalesce_copies(module, func, &mut keep);
    if coalesced > 0 {
        stats.coalesced_copies += coalesced;
        stats.removed_instructions += compact(func, &keep);
    }
}
