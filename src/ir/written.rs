//! Which parameters of a kernel it may write memory through: a buffer bound only to parameters
//! the kernel never writes through is only read during the launch, so no access to it can race,
//! and the race detector need not follow its reads (`bench/stencil.cl`'s input, five loads of
//! six).
//!
//! Every instruction that writes memory (stores, vector stores, writing atomics, copies, the
//! pointer outputs of math builtins, async copies, image writes) names a pointer register; the
//! analysis follows that register back to where its value came from: a parameter, through
//! pointer offsets, copies, selects, address-space casts and phi copies (every instruction that
//! writes the register), or a constant (a program-scope variable, `__local` or private memory,
//! none of them a kernel argument's buffer). A call writes through the caller's registers it
//! passes for the callee's written parameters. Any other origin (a pointer loaded from memory,
//! made from an integer, returned by a call) is unknown, and an unknown writer makes every
//! parameter count as written. The same tracing tells which `__local` variables and arguments a
//! pointer may point into, for [`super::intervals`].
//!
//! What it cannot see: values. It reasons from register numbers ([`super::operands`]) and gives
//! up wherever they are not enough.

use super::operands::{self, Use};
use super::value::{SPACE_LOCAL, split};
use super::{Function, Inst, Module, ParamKind, Reg, VecMem};

/// Per parameter of the kernel's function: whether the kernel may write memory through it. None
/// when some write goes through a pointer of unknown origin (then any may be written).
pub fn written_params(module: &Module, kernel: u32) -> Option<Vec<bool>> {
    let kernel = module.kernels.get(kernel as usize)?;
    let mut memo: Vec<Option<Option<Vec<bool>>>> = vec![None; module.functions.len()];
    let written = writes_of(module, kernel.function as usize, &mut memo, 0)?;
    // A write through a by-value argument is through a pointer made from an integer.
    let pointer = |p: usize| {
        matches!(
            kernel.params.get(p),
            Some(ParamKind::Buffer | ParamKind::Local | ParamKind::ByValPointer { .. } | ParamKind::Image)
        )
    };
    written.iter().enumerate().all(|(p, &w)| !w || pointer(p)).then_some(written)
}

/// Where a register's value may come from: a bit per parameter of its function, a bit per
/// kernel `__local` variable (index of [`Module::locals`]; all of them for an index past 63),
/// whether some other allocation the function names itself (private memory, a program-scope
/// variable), and whether anything else.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Origins {
    pub(super) params: u64,
    pub(super) locals: u64,
    pub(super) other: bool,
    pub(super) unknown: bool,
}

impl Origins {
    fn join(self, other: Origins) -> Origins {
        Origins {
            params: self.params | other.params,
            locals: self.locals | other.locals,
            other: self.other || other.other,
            unknown: self.unknown || other.unknown,
        }
    }

    /// The allocation a constant address names (NULL: none).
    fn of_constant(bits: u64) -> Origins {
        let (space, index, _) = split(bits);
        match space {
            _ if bits == 0 => Origins::default(),
            SPACE_LOCAL => Origins { locals: 1u64.checked_shl(index as u32).unwrap_or(u64::MAX), ..Origins::default() },
            _ => Origins { other: true, ..Origins::default() },
        }
    }
}

/// [`written_params`] of function `f`, memoised; calls are followed (the lowering refuses
/// recursion, and `depth` bounds a call chain all the same).
fn writes_of(module: &Module, f: usize, memo: &mut [Option<Option<Vec<bool>>>], depth: usize) -> Option<Vec<bool>> {
    if let Some(known) = &memo[f] {
        return known.clone();
    }
    let func = &module.functions[f];
    let result = if depth > 64 || func.params.len() > 64 { None } else { analyse(module, func, memo, depth) };
    memo[f] = Some(result.clone());
    result
}

fn analyse(
    module: &Module,
    func: &Function,
    memo: &mut [Option<Option<Vec<bool>>>],
    depth: usize,
) -> Option<Vec<bool>> {
    let mut tracer = Tracer::new(module, func);
    let mut written = Origins::default();
    for inst in &func.code {
        if let Some(ptr) = written_pointer(inst) {
            written = written.join(tracer.origins(ptr));
        }
        if let Inst::Call { func: callee, first_arg, num_args, .. } = *inst {
            let callee_writes = writes_of(module, callee as usize, memo, depth + 1)?;
            let args = func.args.get(first_arg as usize..first_arg as usize + num_args as usize).unwrap_or(&[]);
            for (arg, _) in args.iter().zip(&callee_writes).filter(|(_, w)| **w) {
                for slot in arg.reg..arg.reg + arg.n as Reg {
                    written = written.join(tracer.origins(slot));
                }
            }
        }
        if written.unknown {
            return None;
        }
    }
    Some((0..func.params.len()).map(|p| written.params & (1 << p) != 0).collect())
}

/// The pointer register through which `inst` may write memory (calls aside), if any.
pub(super) fn written_pointer(inst: &Inst) -> Option<Reg> {
    match *inst {
        Inst::Store { ptr, .. } | Inst::StoreScalar { ptr, .. } => Some(ptr),
        Inst::VectorMemory { op: VecMem::Store | VecMem::StoreHalf { .. }, ptr, .. } => Some(ptr),
        Inst::Atomic { op, ptr, .. } if op != super::AtomicOp::Load => Some(ptr),
        Inst::CopyMemory { dst, .. } => Some(dst),
        Inst::MathOut { out, .. } => Some(out),
        Inst::AsyncCopy { dst_ptr, .. } => Some(dst_ptr),
        Inst::ImageWrite { image, .. } => Some(image),
        _ => None,
    }
}

/// Follows registers of one function back to their origins.
pub(super) struct Tracer<'a> {
    func: &'a Function,
    /// The instructions writing each register `r`: `writers[starts[r]..starts[r + 1]]` (one
    /// list for all, made in two passes: a function has hundreds of registers).
    starts: Vec<u32>,
    writers: Vec<u32>,
    /// The parameter each register belongs to, if any.
    param_of: Vec<Option<usize>>,
    /// The registers one trace has visited (cleared before each).
    seen: Vec<bool>,
}

impl<'a> Tracer<'a> {
    pub(super) fn new(module: &'a Module, func: &'a Function) -> Tracer<'a> {
        let slots = func.template.len();
        let written = |each: &mut dyn FnMut(usize, usize)| {
            for (p, inst) in func.code.iter().enumerate() {
                operands::for_each(module, func, inst, |r, n, u| {
                    if u == Use::Write {
                        for slot in (r as usize..slots).take(n as usize) {
                            each(slot, p);
                        }
                    }
                });
            }
        };
        let mut starts = vec![0u32; slots + 1];
        written(&mut |slot, _| starts[slot + 1] += 1);
        for r in 0..slots {
            starts[r + 1] += starts[r];
        }
        let mut next = starts.clone();
        let mut writers = vec![0u32; starts[slots] as usize];
        written(&mut |slot, p| {
            writers[next[slot] as usize] = p as u32;
            next[slot] += 1;
        });
        let mut param_of = vec![None; slots];
        for (i, &(r, n)) in func.params.iter().enumerate() {
            for slot in param_of.iter_mut().skip(r as usize).take(n as usize) {
                *slot = Some(i);
            }
        }
        Tracer { func, starts, writers, param_of, seen: vec![false; slots] }
    }

    /// The instructions writing register `r` (none for a register past the frame).
    fn writers(&self, r: usize) -> &[u32] {
        match (self.starts.get(r), self.starts.get(r + 1)) {
            (Some(&from), Some(&to)) => &self.writers[from as usize..to as usize],
            _ => &[],
        }
    }

    pub(super) fn origins(&mut self, r: Reg) -> Origins {
        let mut seen = std::mem::take(&mut self.seen);
        seen.fill(false);
        let origins = self.trace(r, &mut seen);
        self.seen = seen;
        origins
    }

    fn trace(&self, r: Reg, seen: &mut [bool]) -> Origins {
        let unknown = Origins { unknown: true, ..Origins::default() };
        let Some(visited) = seen.get_mut(r as usize) else { return unknown };
        if *visited {
            // A cycle (a pointer carried round a loop) adds no origin of its own.
            return Origins::default();
        }
        *visited = true;
        let mut origins = Origins::default();
        if let Some(p) = self.param_of[r as usize] {
            origins.params |= 1 << p;
        }
        let writers = self.writers(r as usize);
        if self.param_of[r as usize].is_none() {
            // The template's value, which the register holds before any writer: NULL or a
            // constant address (a program-scope variable's, which is no kernel argument's
            // buffer; a `__local` variable's).
            origins = origins.join(Origins::of_constant(self.func.template[r as usize]));
        }
        for &p in writers {
            let from = match self.func.code[p as usize] {
                Inst::Mov { dst, src, .. } => self.trace(src + (r - dst), seen),
                Inst::PtrOffset { base, .. } => self.trace(base, seen),
                Inst::CastToSpace { src, .. } | Inst::PointerFence { src, .. } => self.trace(src, seen),
                Inst::Select { dst, a, b, .. } => {
                    let lane = r - dst;
                    self.trace(a + lane, seen).join(self.trace(b + lane, seen))
                }
                // Private memory, which no kernel argument's buffer is.
                Inst::Alloca { .. } => Origins { other: true, ..Origins::default() },
                _ => unknown,
            };
            origins = origins.join(from);
            if origins.unknown {
                break;
            }
        }
        origins
    }
}

#[cfg(test)]
mod tests {
    use crate::Program;

    fn written(source: &str) -> Option<Vec<bool>> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("written.cl");
        std::fs::write(&path, source).unwrap();
        let program = Program::from_source(source, &path, "").unwrap_or_else(|e| panic!("{e}"));
        super::written_params(program.module(), 0)
    }

    #[test]
    fn stores_through_offsets_copies_and_calls_count() {
        let source = "void put(global float *p, int i, float v) { p[i] = v; }
kernel void k(global const float *in, global float *out, global float *via, global int *n, int m) {
    int i = get_global_id(0);
    out[i] = in[i] + in[i + 1];
    put(via, i, in[i]);
    atomic_inc(n);
}";
        assert_eq!(written(source), Some(vec![false, true, true, true, false]));
    }

    #[test]
    fn selects_and_loop_carried_pointers_are_followed() {
        let source = "kernel void k(global float *a, global float *b, global const float *c, int n) {
    global float *p = get_global_id(0) & 1 ? a : b;
    for (int i = 0; i < n; i++) { *p = c[i]; p += 2; }
}";
        assert_eq!(written(source), Some(vec![true, true, false, false]));
    }

    #[test]
    fn a_pointer_of_unknown_origin_makes_everything_written() {
        let source = "kernel void k(global float *a, global float *b, global const float *in, int i) {
    global float *table[2] = {a, b};
    *table[i & 1] = in[0];
}";
        assert_eq!(written(source), None);
        let source = "kernel void k(global float *out, global const float *in, ulong at) {
    *(global float *)at = in[0];
    out[0] = 1.0f;
}";
        assert_eq!(written(source), None);
        let source = "kernel void k(global float *out, global const float *in) {
    *(global float *)((ulong)in + 4) = in[0];
    out[0] = 1.0f;
}";
        assert_eq!(written(source), None);
    }

    #[test]
    fn local_and_private_writes_name_no_parameter() {
        let source = "kernel void k(global const float *in, global float *out, local float *tmp) {
    local float tile[4];
    float priv[4];
    int l = get_local_id(0);
    tile[l & 3] = in[l];
    priv[l & 3] = in[l];
    tmp[l] = tile[(l + 1) & 3] + priv[(l + 2) & 3];
    out[l] = tmp[l];
}";
        assert_eq!(written(source), Some(vec![false, true, true]));
    }
}
