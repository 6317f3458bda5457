//! What a launch's specialisation ([`super::specialise()`]) changes beyond the other passes: the
//! functions one kernel reaches and how many call paths lead to each ([`Reach`]), by-value
//! kernel arguments bound as constants of the kernel's function ([`bind_kernel_values`]), and
//! constant arguments of calls bound as constants of the callee ([`bind_call_constants`]), so
//! that constant folding then folds what they decide (a GEMM's transposition flags and sizes,
//! a stencil's width) as if they had been written in the source.
//!
//! A bound parameter's register holds its value in the function's template and is never written,
//! which is what makes it a constant to the passes. Only what runs the same is bound:
//! - a kernel argument's slots, from the launch's bytes, which the executor would have copied
//!   into the same registers at every work-item's start; the parameter keeps its place with no
//!   slots, so that the executor copies nothing (see [`crate::ir::validate::check_launch`]);
//! - a call's argument of one slot that reads a constant register, into a callee that only this
//!   call reaches (one call path from the kernel): a frame is laid once per work-group and keeps
//!   its values from call to call, so a callee bound at one site must be the callee of no other.
//!   The parameter must not be written in the callee (a written one would keep the written value
//!   to the next call). The argument and the parameter both go, in the same position.
//!
//! What it cannot see: values other than constants, and execution. It works on a module that
//! runs one kernel: other kernels' functions may be left out of it, and callees are bound in
//! place, so the module is good for that kernel's launch only.

use super::base::{callees, callees_first, constant_registers, use_counts};
use crate::ir::{self, Arg, Function, Inst, ParamKind};

/// The functions a kernel reaches, callers before callees, and the number of call paths from
/// the kernel to each (saturating).
pub struct Reach {
    /// Callers first (a reverse postorder of the call graph from the kernel's function).
    pub order: Vec<usize>,
    /// Per function of the module: call paths from the kernel (0: not reached).
    pub paths: Vec<u32>,
}

impl Reach {
    pub fn of(module: &ir::Module, kernel_function: usize) -> Reach {
        let mut order = callees_first(module, [kernel_function]);
        order.reverse();
        // With no recursion the call graph is acyclic: callers first, each function's paths are
        // complete before its callees take them.
        let mut paths = vec![0u32; module.functions.len()];
        paths[kernel_function] = 1;
        for &f in &order {
            for c in callees(module, f) {
                paths[c] = paths[c].saturating_add(paths[f]);
            }
        }
        Reach { order, paths }
    }

    /// The instructions of the functions reached.
    pub fn code_len(&self, module: &ir::Module) -> usize {
        self.order.iter().map(|&f| module.functions[f].code.len()).sum()
    }
}

/// Binds the by-value arguments of `kernel` that `values` gives (per argument, its slots) in
/// its function `func`: their slots' template values become the launch's, and their parameters
/// take no slots. Returns how many arguments were bound.
pub fn bind_kernel_values(kernel: &ir::Kernel, func: &mut Function, values: &[Option<Vec<u64>>]) -> usize {
    let mut bound = 0;
    for (i, kind) in kernel.params.iter().enumerate() {
        let (Some(&(reg, slots)), Some(Some(value))) = (func.params.get(i), values.get(i)) else { continue };
        let fits = reg as usize + slots as usize <= func.template.len();
        if !matches!(kind, ParamKind::Value { .. }) || slots == 0 || value.len() != slots as usize || !fits {
            continue;
        }
        func.template[reg as usize..reg as usize + slots as usize].copy_from_slice(value);
        func.params[i].1 = 0;
        bound += 1;
    }
    bound
}

/// Binds, in every callee of `func` that only this call reaches (`paths` 1), the parameters whose
/// arguments read constant registers of `func` and that the callee never writes: the callee's
/// template takes the value, and the parameter and the argument go. `func` is taken out of
/// `module`, whose callees this changes. Returns how many parameters were bound.
pub fn bind_call_constants(module: &mut ir::Module, func: &mut Function, paths: &[u32]) -> usize {
    let (_, writes) = use_counts(module, func);
    let constant = constant_registers(func, &writes);
    let mut bound = 0;
    for pc in 0..func.code.len() {
        let Inst::Call { func: callee, dst, first_arg, num_args } = func.code[pc] else { continue };
        let c = callee as usize;
        if paths.get(c) != Some(&1) || module.functions[c].code.is_empty() {
            continue;
        }
        let range = first_arg as usize..first_arg as usize + num_args as usize;
        let Some(args) = func.args.get(range) else { continue };
        let target = &module.functions[c];
        if args.len() != target.params.len() {
            continue;
        }
        // Written in the callee: written more than once (its parameters count once, by the call).
        let (_, callee_writes) = use_counts(module, target);
        let written = |r: u32| callee_writes.get(r as usize).is_none_or(|&w| w > 1);
        let fixed: Vec<bool> = args
            .iter()
            .zip(&target.params)
            .map(|(a, &(p, n))| a.n == 1 && n == 1 && constant.get(a.reg as usize) == Some(&true) && !written(p))
            .collect();
        if !fixed.contains(&true) {
            continue;
        }
        let kept: Vec<Arg> = args.iter().zip(&fixed).filter(|(_, f)| !**f).map(|(a, _)| *a).collect();
        let values: Vec<(u32, u64)> = args
            .iter()
            .zip(&target.params)
            .zip(&fixed)
            .filter(|(_, f)| **f)
            .map(|((a, &(p, _)), _)| (p, func.template[a.reg as usize]))
            .collect();
        let target = &mut module.functions[c];
        for &(p, v) in &values {
            target.template[p as usize] = v;
        }
        let mut keep = fixed.iter().map(|f| !f);
        target.params.retain(|_| keep.next().unwrap_or(true));
        bound += values.len();
        let first = func.args.len() as u32;
        let num = kept.len() as u16;
        func.args.extend(kept);
        func.code[pc] = Inst::Call { func: callee, dst, first_arg: first, num_args: num };
    }
    bound
}
