//! Control flow: branches and switches (through phi-copy trampolines on the edges that need
//! them), returns, calls, and the assertions `clrace.h` and GPUVerify declare. Branch targets are
//! block labels until [`FunctionLowering::resolve_targets`] turns them into instruction indices. It
//! sees the function being lowered and the module's function ids, nothing of the executor.

use rspirv::dr::{Instruction, Operand};

use super::{FunctionLowering, LowerError, TRAMPOLINE_BASE, rest};
use crate::ir::{self, Arg, ArgKind, Inst, Reg};
use crate::spirv::module::{id, literal};
use crate::spirv::types::Ty;

impl FunctionLowering<'_> {
    fn emit_phi_copies(&mut self, copies: &[(Reg, u32, u16)]) -> Result<(), LowerError> {
        let mut sources = Vec::with_capacity(copies.len());
        for &(_, src, _) in copies {
            sources.push(self.reg(&Operand::IdRef(src))?);
        }
        // A parallel copy: go through temporaries when a destination is also a source.
        let overlapping = copies.iter().any(|&(dst, _, n)| {
            sources.iter().zip(copies).any(|(&s, &(_, _, sn))| s < dst + n as Reg && dst < s + sn as Reg)
        });
        if overlapping && copies.len() > 1 {
            let temps: Vec<Reg> = copies.iter().map(|&(_, _, n)| self.alloc(n as u32)).collect();
            for ((&src, &(_, _, n)), &t) in sources.iter().zip(copies).zip(&temps) {
                self.code.push(Inst::Mov { dst: t, src, n });
            }
            for (&(dst, _, n), &t) in copies.iter().zip(&temps) {
                self.code.push(Inst::Mov { dst, src: t, n });
            }
        } else {
            for (&src, &(dst, _, n)) in sources.iter().zip(copies) {
                if src != dst {
                    self.code.push(Inst::Mov { dst, src, n });
                }
            }
        }
        Ok(())
    }

    /// The branch target for the edge `from -> to`: `to` itself, or a trampoline doing its phi copies.
    fn edge(&mut self, from: u32, to: u32) -> u32 {
        if self.phis.contains_key(&(from, to)) {
            let label = TRAMPOLINE_BASE + self.trampolines.len() as u32;
            self.trampolines.push((label, from, to));
            label
        } else {
            to
        }
    }

    pub(super) fn emit_trampolines(&mut self) -> Result<(), LowerError> {
        for (label, from, to) in std::mem::take(&mut self.trampolines) {
            self.block_pc.insert(label, self.code.len() as u32);
            let copies = self.phis[&(from, to)].clone();
            self.emit_phi_copies(&copies)?;
            self.code.push(Inst::Branch { target: to });
        }
        Ok(())
    }

    pub(super) fn resolve_targets(&mut self) -> Result<(), LowerError> {
        let pcs = &self.block_pc;
        let at = |label: u32| pcs.get(&label).copied().ok_or(LowerError::UnknownBlock(label));
        for inst in &mut self.code {
            match inst {
                Inst::Branch { target } => *target = at(*target)?,
                Inst::BranchIf { then, otherwise, .. } => {
                    *then = at(*then)?;
                    *otherwise = at(*otherwise)?;
                }
                _ => {}
            }
        }
        for table in &mut self.switch_tables {
            table.default = at(table.default)?;
            for case in &mut table.cases {
                case.1 = at(case.1)?;
            }
        }
        Ok(())
    }

    /// A call of `name` as an assertion, when it is one: `__clrace_assert(int cond, __constant
    /// char *msg)` (`clrace.h`) or GPUVerify's `__assert(bool cond)`, declared and not defined.
    /// Calls of those names with other parameters are left to be undefined functions.
    fn assertion(&mut self, name: &str, inst: &Instruction) -> Result<Option<Inst>, LowerError> {
        let args = rest(inst, 1);
        // C++ for OpenCL mangles them (`int, const __constant char *`; `bool`).
        let name = match name {
            "_Z15__clrace_assertiPU3AS2Kc" => "__clrace_assert",
            "_Z8__assertb" => "__assert",
            other => other,
        };
        let with_message = match (name, args.len()) {
            ("__clrace_assert", 2) => true,
            ("__assert", 1) => false,
            _ => return Ok(None),
        };
        let (cond, ty) = self.val(&args[0])?;
        let bits = match ty {
            Ty::Int(b) => b,
            Ty::Bool => 1,
            _ => return Ok(None),
        };
        let msg = if with_message {
            match self.val(&args[1])? {
                (reg, Ty::Pointer(..)) => reg,
                _ => return Ok(None),
            }
        } else {
            0
        };
        Ok(Some(Inst::Assert { cond, bits, has_msg: with_message, msg, loc: self.loc }))
    }

    /// `OpBranch`: the phi copies of the edge, then the jump.
    pub(super) fn branch(&mut self, label: u32, inst: &Instruction) -> Result<(), LowerError> {
        let target = id(&inst.operands[0])?;
        if let Some(copies) = self.phis.get(&(label, target)).cloned() {
            self.emit_phi_copies(&copies)?;
        }
        self.code.push(Inst::Branch { target });
        Ok(())
    }

    pub(super) fn branch_conditional(&mut self, label: u32, inst: &Instruction) -> Result<(), LowerError> {
        let ops = &inst.operands;
        let cond = self.reg(&ops[0])?;
        let then = self.edge(label, id(&ops[1])?);
        let otherwise = self.edge(label, id(&ops[2])?);
        self.code.push(Inst::BranchIf { cond, then, otherwise });
        Ok(())
    }

    pub(super) fn switch(&mut self, label: u32, inst: &Instruction) -> Result<(), LowerError> {
        let ops = &inst.operands;
        let (value, ty) = self.val(&ops[0])?;
        let default = self.edge(label, id(&ops[1])?);
        let mut cases = Vec::new();
        for pair in rest(inst, 2).chunks(2) {
            cases.push((literal(&pair[0])?, self.edge(label, id(&pair[1])?)));
        }
        self.switch_tables.push(ir::SwitchTable { cases, default });
        self.code.push(Inst::Switch { value, bits: ty.bits(), table: self.switch_tables.len() as u32 - 1 });
        Ok(())
    }

    pub(super) fn return_value(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let (src, ty) = self.val(&inst.operands[0])?;
        self.code.push(Inst::Return { src, n: ty.slots() as u16 });
        Ok(())
    }

    /// A call: of a function with a body, an assertion, or an unsupported call of a declaration.
    pub(super) fn function_call(&mut self, inst: &Instruction) -> Result<(), LowerError> {
        let ops = &inst.operands;
        let dst = inst.result_id.and_then(|r| self.values.get(&r)).map(|v| v.0).unwrap_or(0);
        let callee = id(&ops[0])?;
        if self.m.bodyless.contains(&callee) {
            let name = self.m.info.names.get(&callee).cloned().unwrap_or_else(|| format!("%{callee}"));
            if let Some(assert) = self.assertion(&name, inst)? {
                self.code.push(assert);
                return Ok(());
            }
            self.unsupported(format!(
                "call to '{name}', which has no body in the program (it is declared but never defined)"
            ));
            return Ok(());
        }
        let func = *self.func_ids.get(&callee).ok_or(LowerError::UnknownCallee)?;
        let first_arg = self.args.len() as u32;
        for o in rest(inst, 1) {
            let (reg, ty) = self.val(o)?;
            self.args.push(Arg { reg, n: ty.slots() as u16, kind: ArgKind::Other });
        }
        self.code.push(Inst::Call { func, dst, first_arg, num_args: (ops.len() - 1) as u16 });
        Ok(())
    }
}
