//! Which `__local` reads no write can race with: those that share no barrier interval with a
//! write to the same allocation.
//!
//! A group's accesses to `__local` memory are ordered by the barriers that fence it; two accesses
//! conflict only between two such barriers. The code a work-item may run there is a barrier
//! interval: what is reachable from the kernel's entry, or from just after such a barrier,
//! without passing another one. Barriers are reached by every work-item of a group (OpenCL
//! requires it), so the work-items between two barriers all run code of one interval. A read that
//! shares no interval with a write to its allocation can thus race with nothing: a tiled
//! kernel's loop over its tiles, between the barrier after the tiles are written and the next.
//! The device's instrumenter leaves such reads without a hook; the emulator does not tell the
//! race detector of them.
//!
//! Intervals are followed through calls: a call goes on at its callee's entry and a return after
//! every call of its function (a helper called from two places is taken in both at once, which
//! can only join intervals). [`quiet_reads`] takes any naming of allocations;
//! [`quiet_local_reads`] names them for a kernel of a module by tracing pointers to their origins
//! ([`super::written`]), a callee's parameters reaching what its calls' arguments reach: a read
//! counts only when every value its pointer may hold points into `__local` memory (a `__local`
//! argument or variable), and a write goes to every `__local` allocation its pointer may reach
//! (all of them for a pointer of unknown origin). An asynchronous copy into `__local` memory
//! writes until a wait names its event, intervals later maybe: no read of what one may write is
//! quiet.
//!
//! What it cannot see: whether barriers are in fact reached by every work-item (the emulator stops
//! honouring these marks in a group once a barrier there is released with work-items elsewhere),
//! and pointer arithmetic that leaves its allocation by more than the address's offset field holds
//! (2^40 bytes).

use super::written::{Tracer, written_pointer};
use super::{Inst, Module, ParamKind, Reg};

/// The allocations an access may go to, one bit each: the kernel's arguments (bit `i`, for
/// argument `i`, below 64) and its `__local` variables (bit `64 + k`), as the caller names them.
pub type Allocations = u128;

/// Every allocation.
pub const ALL: Allocations = Allocations::MAX;

/// A `__local` access: the allocations it may go to and whether it writes.
#[derive(Clone, Copy)]
pub struct LocalAccess {
    pub allocations: Allocations,
    pub write: bool,
}

/// Per function of `module` (empty for those function `entry`, a kernel's, does not reach), per
/// instruction, whether it is a `__local` read that shares no barrier interval with a write to
/// an allocation it may read. `local(f, pc)` names the `__local` access at `pc` of function `f`,
/// if any (a read only when it reads `__local` memory alone).
///
/// The intervals are followed through calls: a call goes on at its callee's entry, a return at
/// the instruction after every call of its function that the kernel reaches (a function called
/// from two places is taken in both at once, which can only join intervals).
pub fn quiet_reads(
    module: &Module,
    entry: usize,
    local: impl Fn(usize, usize) -> Option<LocalAccess>,
) -> Vec<Vec<bool>> {
    let reached = reached_from(module, entry);
    // Every instruction of the functions reached is a node, numbered function by function.
    let mut first = vec![usize::MAX; module.functions.len()];
    let mut nodes = 0;
    for &f in &reached {
        first[f] = nodes;
        nodes += module.functions[f].code.len();
    }
    // Where each function's returns go on: after each call of it.
    let mut returns_to: Vec<Vec<usize>> = vec![Vec::new(); module.functions.len()];
    for &f in &reached {
        for (pc, inst) in module.functions[f].code.iter().enumerate() {
            if let Inst::Call { func, .. } = *inst {
                returns_to[func as usize].push(first[f] + pc + 1);
            }
        }
    }
    let mut place = Vec::with_capacity(nodes);
    for &f in &reached {
        place.extend((0..module.functions[f].code.len()).map(|pc| (f, pc)));
    }
    let ends_interval = |(f, pc): (usize, usize)| matches!(module.functions[f].code[pc], Inst::Barrier { fence, sub_group: false, .. } if fence.local);
    let accesses: Vec<Option<LocalAccess>> = place.iter().map(|&(f, pc)| local(f, pc)).collect();
    let starts = reached.first().map(|&f| first[f]).into_iter().chain(
        (0..nodes).filter(|&n| ends_interval(place[n]) && n + 1 < nodes && place[n + 1].0 == place[n].0).map(|n| n + 1),
    );
    let mut met = vec![false; nodes];
    let mut visited = vec![usize::MAX; nodes];
    let (mut work, mut reads) = (Vec::new(), Vec::new());
    for (interval, start) in starts.enumerate() {
        reads.clear();
        let mut written: Allocations = 0;
        work.push(start);
        while let Some(n) = work.pop() {
            if visited[n] == interval {
                continue;
            }
            visited[n] = interval;
            match accesses[n] {
                Some(LocalAccess { allocations, write: true }) => written |= allocations,
                Some(LocalAccess { allocations, write: false }) => reads.push((n, allocations)),
                None => {}
            }
            if ends_interval(place[n]) {
                continue;
            }
            let (f, pc) = place[n];
            let func = &module.functions[f];
            match func.code[pc] {
                Inst::Call { func: callee, .. } if first[callee as usize] != usize::MAX => {
                    work.push(first[callee as usize])
                }
                Inst::Return { .. } => work.extend_from_slice(&returns_to[f]),
                _ => func.for_each_successor(pc, |next| work.push(first[f] + next)),
            }
        }
        for &(n, allocations) in &reads {
            met[n] |= written & allocations != 0;
        }
    }
    let mut quiet = vec![Vec::new(); module.functions.len()];
    for &f in &reached {
        let nodes = first[f]..first[f] + module.functions[f].code.len();
        let marks: Vec<bool> = nodes.map(|n| !met[n] && accesses[n].is_some_and(|a| !a.write)).collect();
        if marks.contains(&true) {
            quiet[f] = marks;
        }
    }
    quiet
}

/// The functions function `func` reaches through calls, itself first, callers before callees
/// (breadth first).
fn reached_from(module: &Module, func: usize) -> Vec<usize> {
    if func >= module.functions.len() {
        return Vec::new();
    }
    let mut seen = vec![false; module.functions.len()];
    seen[func] = true;
    let mut order = vec![func];
    let mut k = 0;
    while let Some(&f) = order.get(k) {
        k += 1;
        for inst in &module.functions[f].code {
            if let Inst::Call { func: callee, .. } = *inst
                && let Some(s) = seen.get_mut(callee as usize)
                && !*s
            {
                *s = true;
                order.push(callee as usize);
            }
        }
    }
    order
}

/// Where a pointer may point, in allocations: the `__local` ones it may reach, and whether some
/// other allocation (a buffer, private memory) or an unknown one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Reach {
    local: Allocations,
    other: bool,
    unknown: bool,
}

impl Reach {
    fn join(self, o: Reach) -> Reach {
        Reach { local: self.local | o.local, other: self.other || o.other, unknown: self.unknown || o.unknown }
    }
}

/// [`quiet_reads`] of kernel `kernel` (an index of [`Module::kernels`]), with allocations found
/// by tracing pointers (above); a callee's parameter reaches what the arguments of every call of
/// it reach. Per function index; all empty when no read is quiet.
pub fn quiet_local_reads(module: &Module, kernel: u32) -> Vec<Vec<bool>> {
    let none = || vec![Vec::new(); module.functions.len()];
    let Some(k) = module.kernels.get(kernel as usize) else { return none() };
    let reached = reached_from(module, k.function as usize);
    let reads =
        |f: &usize| module.functions[*f].code.iter().any(|i| matches!(i, Inst::Load { .. } | Inst::LoadScalar { .. }));
    if !reached.iter().any(reads) || reached.iter().any(|&f| module.functions[f].params.len() > 64) {
        return none();
    }
    let mut tracers: Vec<Option<Tracer>> = (0..module.functions.len()).map(|_| None).collect();
    for &f in &reached {
        tracers[f] = Some(Tracer::new(module, &module.functions[f]));
    }
    // What each parameter of each function reached may point to: the kernel's from their kinds,
    // a callee's from its calls' arguments, to a fixed point (the lowering refuses recursion, so
    // a few rounds, callers first; it gives up after many).
    let mut params: Vec<Vec<Reach>> = module.functions.iter().map(|f| vec![Reach::default(); f.params.len()]).collect();
    for (i, kind) in k.params.iter().enumerate() {
        if let Some(p) = params[k.function as usize].get_mut(i) {
            *p = match kind {
                ParamKind::Local => Reach { local: 1 << i, ..Reach::default() },
                ParamKind::Buffer | ParamKind::Image | ParamKind::ByValPointer { .. } => {
                    Reach { other: true, ..Reach::default() }
                }
                _ => Reach { unknown: true, ..Reach::default() },
            };
        }
    }
    let reach = |tracer: &mut Tracer, params: &[Reach], r| {
        let o = tracer.origins(r);
        let mut reach = Reach { local: (o.locals as Allocations) << 64, other: o.other, unknown: o.unknown };
        for (p, &pr) in params.iter().enumerate() {
            if o.params & (1 << p) != 0 {
                reach = reach.join(pr);
            }
        }
        reach
    };
    for round in 0.. {
        if round == 64 {
            return none();
        }
        let mut changed = false;
        for &f in &reached {
            let func = &module.functions[f];
            for inst in &func.code {
                let Inst::Call { func: callee, first_arg, num_args, .. } = *inst else { continue };
                let args = func.args.get(first_arg as usize..first_arg as usize + num_args as usize).unwrap_or(&[]);
                for (j, arg) in args.iter().enumerate() {
                    let tracer = tracers[f].as_mut().expect("a tracer for each function reached");
                    let from = (arg.reg..arg.reg + arg.n as Reg)
                        .fold(Reach::default(), |acc, r| acc.join(reach(tracer, &params[f], r)));
                    if let Some(p) = params[callee as usize].get_mut(j) {
                        let joined = p.join(from);
                        changed |= joined != *p;
                        *p = joined;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    let mut accesses: Vec<Vec<Option<LocalAccess>>> = vec![Vec::new(); module.functions.len()];
    for &f in &reached {
        let tracer = tracers[f].as_mut().expect("a tracer for each function reached");
        accesses[f] = module.functions[f]
            .code
            .iter()
            .map(|inst| {
                if let Inst::Load { ptr, .. } | Inst::LoadScalar { ptr, .. } = *inst {
                    let r = reach(tracer, &params[f], ptr);
                    return (!r.unknown && !r.other && r.local != 0)
                        .then_some(LocalAccess { allocations: r.local, write: false });
                }
                let r = reach(tracer, &params[f], written_pointer(inst)?);
                let allocations = if r.unknown { ALL } else { r.local };
                (allocations != 0).then_some(LocalAccess { allocations, write: true })
            })
            .collect();
    }
    // An asynchronous copy writes until a wait names its event, which may be intervals later:
    // no read of what a copy may write is quiet.
    let mut copied: Allocations = 0;
    for &f in &reached {
        for (inst, access) in module.functions[f].code.iter().zip(&accesses[f]) {
            if let (Inst::AsyncCopy { .. }, Some(access)) = (inst, access) {
                copied |= access.allocations;
            }
        }
    }
    quiet_reads(module, k.function as usize, |f, pc| {
        accesses[f].get(pc).copied().flatten().filter(|a| a.write || a.allocations & copied == 0)
    })
}

#[cfg(test)]
mod tests {
    use crate::Program;

    /// The source lines of kernel 0's quiet reads, in any function it reaches.
    fn quiet_lines(source: &str) -> Vec<u32> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("quiet.cl");
        std::fs::write(&path, source).unwrap();
        let program = Program::from_source(source, &path, "").unwrap_or_else(|e| panic!("{e}"));
        let module = program.module();
        let quiet = super::quiet_local_reads(module, 0);
        let mut lines: Vec<u32> = (quiet.iter().enumerate())
            .flat_map(|(f, marks)| marks.iter().enumerate().filter(|&(_, &q)| q).map(move |(pc, _)| (f, pc)))
            .map(|(f, pc)| module.locations[module.functions[f].locs[pc] as usize].line)
            .collect();
        lines.sort();
        lines.dedup();
        lines
    }

    #[test]
    fn a_tile_read_between_barriers_is_quiet_and_its_writes_are_not() {
        let source = "kernel void k(global const float *in, global float *out, local float *arg) {
    local float tile[64];
    int l = get_local_id(0);
    tile[l] = in[get_global_id(0)];
    arg[l] = in[l];
    barrier(CLK_LOCAL_MEM_FENCE);
    float sum = 0.0f;
    for (int k = 0; k < 64; k++) sum += tile[k] * arg[k];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = sum;
}";
        assert_eq!(quiet_lines(source), vec![8]);
    }

    #[test]
    fn a_read_that_a_write_of_its_interval_may_meet_is_not_quiet() {
        // The reduction's reads share its loop's interval with its writes; the read of `other`
        // shares none with a write to `other`, but the loop's barrier fences only global memory.
        let source = "kernel void k(global float *out, local float *s, local float *other) {
    int l = get_local_id(0);
    for (int step = 1; step < 64; step *= 2) {
        if (l % (2 * step) == 0) s[l] += s[l + step];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    other[l] = s[0];
    barrier(CLK_GLOBAL_MEM_FENCE);
    out[l] = other[(l + 1) & 63];
}";
        assert_eq!(quiet_lines(source), Vec::<u32>::new());
    }

    #[test]
    fn writes_through_calls_and_unknown_pointers_meet_the_reads_they_may_reach() {
        // `put` takes an atomic: it stays a call, which writes `a` only.
        let source = "void put(local int *p, int i) { atomic_inc(p + i); }
kernel void k(global int *out, local int *a, local int *b, ulong at) {
    int l = get_local_id(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[l] = a[l];
    barrier(CLK_LOCAL_MEM_FENCE);
    *(local int *)at = 2;
    out[l] += b[l];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[l] += a[l + 1];
    barrier(CLK_LOCAL_MEM_FENCE);
    put(a, l);
    out[l] += a[l + 2];
    out[l] += b[l + 2];
}";
        assert_eq!(quiet_lines(source), vec![5, 10, 14]);
    }

    #[test]
    fn intervals_go_on_through_calls_and_returns() {
        // A body with barriers (not inlined) reading the kernel's tile between them is quiet;
        // the kernel's own read after the call shares the body's last interval with the
        // kernel's write after it, and the body's first read the kernel's write before the call.
        let source = "void body(global const float *in, global float *out, local float *tile) {
    int l = get_local_id(0);
    out[l] = tile[l];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[l] += tile[(l + 1) & 63];
    barrier(CLK_LOCAL_MEM_FENCE);
}
kernel void k(global const float *in, global float *out) {
    local float tile[64];
    tile[get_local_id(0)] = in[get_global_id(0)];
    body(in, out, tile);
    out[0] = tile[0];
    tile[1] = 2.0f;
}";
        assert_eq!(quiet_lines(source), vec![5]);
    }
}
