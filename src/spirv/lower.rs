//! Lowers a loaded SPIR-V module to [`crate::ir`] in one pass per function: dense registers,
//! constants in a register template, phis turned into copies on their edges, branch targets
//! resolved to instruction indices, builtins and OpenCL.std calls as IR ops, a source location on
//! every memory access, and each kernel's signature reflected.

use std::collections::{HashMap, HashSet};

use rspirv::dr::{self, Instruction, Operand};
use rspirv::spirv::{BuiltIn, FPRoundingMode, Op, OpenclStd100Op as Cl, StorageClass};

use super::module::{Const, GlobalRef, ModuleInfo, SpecConstantOps, id, literal};
use super::types::Ty;
use crate::ir::reflect::{AddressSpace, KernelArg, KernelInfo};
use crate::ir::value::{MAX_PRIVATE_BYTES, SPACE_GLOBAL, SPACE_LOCAL, SPACE_PRIVATE, sign_extend};
use crate::ir::{
    self, Arg, ArgKind, AtomicOp, Builtin, Cmp, CollectiveOp, Conv, Fence, FloatOp, Geo, GroupArith, ImageQuery, Index,
    Inst, IntOp, MathKind, MemOrder, Reg, Round, Scope, TexelType, UnOp, VecMem,
};

/// Labels for edge trampolines, beyond any real SPIR-V id.
const TRAMPOLINE_BASE: u32 = 0x8000_0000;

/// Register slots one function's frame may have: every work-item holds a copy of its frames,
/// so this bounds the memory a work-item needs (2 MiB). Kernels use hundreds.
pub const MAX_FRAME_SLOTS: usize = 1 << 18;

/// Register slots all the functions of a module may have together (their templates).
const MAX_MODULE_SLOTS: u64 = 1 << 22;

pub fn lower(module: &dr::Module, spec_ops: SpecConstantOps) -> Result<ir::Module, String> {
    let info = ModuleInfo::gather(module, spec_ops)?;
    let bodyless =
        module.functions.iter().filter(|f| f.blocks.is_empty()).filter_map(|f| f.def.as_ref()?.result_id).collect();
    let mut lowering = Lowering {
        info,
        out: ir::Module::default(),
        layouts: HashMap::new(),
        locations: HashMap::new(),
        bodyless,
        module_slots: 0,
    };
    lowering.out.globals = lowering.info.global_vars.clone();
    lowering.out.locals = lowering.info.local_vars.clone();
    let func_ids: HashMap<u32, u32> =
        module.functions.iter().enumerate().filter_map(|(i, f)| Some((f.def.as_ref()?.result_id?, i as u32))).collect();
    check_recursion(module, &func_ids)?;
    for f in &module.functions {
        let name = f
            .def
            .as_ref()
            .and_then(|d| d.result_id)
            .and_then(|r| lowering.info.names.get(&r).cloned())
            .unwrap_or_default();
        let lowered = FunctionLowering::new(&mut lowering, &func_ids)
            .lower(f)
            .map_err(|e| if name.is_empty() { e } else { format!("in function '{name}': {e}") })?;
        lowering.module_slots += lowered.template.len() as u64;
        if lowering.module_slots > MAX_MODULE_SLOTS {
            return Err(format!("the functions' values need more than {MAX_MODULE_SLOTS} register slots"));
        }
        lowering.out.functions.push(ir::Function { name, ..lowered });
    }
    for ep in &module.entry_points {
        let kernel = lowering.kernel(module, ep, &func_ids)?;
        lowering.out.kernels.push(kernel);
    }
    crate::opt::optimise(&mut lowering.out);
    ir::reconverge::annotate(&mut lowering.out);
    ir::validate::check_module(&lowering.out)?;
    Ok(lowering.out)
}

/// The memory layout of a value of type `ty`, if it fits in registers.
fn value_layout(ty: &Ty) -> Result<ir::Layout, String> {
    match ty.slots() as usize {
        n if n <= MAX_FRAME_SLOTS => Ok(ty.layout()),
        n => Err(format!("a value of {n} register slots (at most {MAX_FRAME_SLOTS})")),
    }
}

/// Fails on a recursive call graph: OpenCL C forbids recursion, but clang does not diagnose it.
fn check_recursion(module: &dr::Module, func_ids: &HashMap<u32, u32>) -> Result<(), String> {
    let callees: Vec<Vec<u32>> = module
        .functions
        .iter()
        .map(|f| {
            f.blocks
                .iter()
                .flat_map(|b| &b.instructions)
                .filter(|i| i.class.opcode == Op::FunctionCall)
                .filter_map(|i| id(&i.operands[0]).ok().and_then(|c| func_ids.get(&c).copied()))
                .collect()
        })
        .collect();
    // 0 = unvisited, 1 = on the stack, 2 = done.
    fn visit(f: usize, callees: &[Vec<u32>], state: &mut [u8]) -> bool {
        match state[f] {
            1 => return false,
            2 => return true,
            _ => {}
        }
        state[f] = 1;
        let ok = callees[f].iter().all(|&c| visit(c as usize, callees, state));
        state[f] = 2;
        ok
    }
    let mut state = vec![0u8; callees.len()];
    for f in 0..callees.len() {
        if !visit(f, &callees, &mut state) {
            let name = module.functions[f].def.as_ref().and_then(|d| d.result_id).unwrap_or(0);
            return Err(format!("recursion is not allowed in OpenCL C (function %{name} calls itself)"));
        }
    }
    Ok(())
}

/// Module-wide lowering state.
struct Lowering {
    info: ModuleInfo,
    out: ir::Module,
    layouts: HashMap<Ty, u32>,
    locations: HashMap<(u32, u32, u32), u32>,
    /// Functions declared without a body (imported, or `inline` definitions clang left out).
    bodyless: HashSet<u32>,
    /// Register slots of the functions lowered so far, against [`MAX_MODULE_SLOTS`].
    module_slots: u64,
}

impl Lowering {
    fn layout(&mut self, ty: &Ty) -> Result<u32, String> {
        if let Some(&l) = self.layouts.get(ty) {
            return Ok(l);
        }
        self.out.layouts.push(value_layout(ty)?);
        let l = self.out.layouts.len() as u32 - 1;
        self.layouts.insert(ty.clone(), l);
        Ok(l)
    }

    fn location(&mut self, file: u32, line: u32, column: u32) -> u32 {
        if let Some(&l) = self.locations.get(&(file, line, column)) {
            return l;
        }
        let name = self.info.strings.get(&file).cloned().unwrap_or_default();
        self.out.locations.push(ir::SourceLoc { file: name, line, column });
        let l = self.out.locations.len() as u32 - 1;
        self.locations.insert((file, line, column), l);
        l
    }

    fn kernel(
        &mut self,
        module: &dr::Module,
        ep: &Instruction,
        func_ids: &HashMap<u32, u32>,
    ) -> Result<ir::Kernel, String> {
        let fid = id(&ep.operands[1])?;
        let Some(Operand::LiteralString(name)) = ep.operands.get(2) else {
            return Err("entry point without a name".into());
        };
        let function = *func_ids.get(&fid).ok_or("entry point names no function")?;
        let f = &module.functions[function as usize];
        // The translator wraps the kernel body in a function that only calls it: names live there.
        let inner: Option<&dr::Function> = f
            .blocks
            .iter()
            .flat_map(|b| &b.instructions)
            .find(|i| i.class.opcode == Op::FunctionCall)
            .and_then(|call| func_ids.get(&id(&call.operands[0]).ok()?))
            .map(|&i| &module.functions[i as usize]);
        let type_names: Vec<String> = self
            .info
            .strings
            .values()
            .find_map(|s| s.strip_prefix(&format!("kernel_arg_type.{name}.")))
            .map(|s| s.split(',').map(str::to_string).collect())
            .unwrap_or_default();
        let mut args = Vec::new();
        let mut params = Vec::new();
        for (i, p) in f.parameters.iter().enumerate() {
            let pid = p.result_id.unwrap_or(0);
            let ty = self.info.ty(p.result_type.unwrap_or(0))?.clone();
            let arg_name = self
                .info
                .names
                .get(&pid)
                .or_else(|| inner.and_then(|g| g.parameters.get(i)).and_then(|q| self.info.names.get(&q.result_id?)))
                .cloned()
                .unwrap_or_default();
            let (space, kind, size, pointee_size) = match &ty {
                Ty::Pointer(StorageClass::Function, t) if self.info.byval.contains(&pid) => {
                    (AddressSpace::Private, ir::ParamKind::ByValPointer { layout: self.layout(t)? }, t.size(), 0)
                }
                Ty::Pointer(sc, t) => {
                    let space = match sc {
                        StorageClass::Workgroup => AddressSpace::Local,
                        StorageClass::UniformConstant => AddressSpace::Constant,
                        _ => AddressSpace::Global,
                    };
                    let kind = if space == AddressSpace::Local { ir::ParamKind::Local } else { ir::ParamKind::Buffer };
                    (space, kind, 8, t.size().max(1))
                }
                Ty::Image => (AddressSpace::Global, ir::ParamKind::Image, 8, 0),
                Ty::Sampler => (AddressSpace::Private, ir::ParamKind::Sampler, 8, 0),
                Ty::Opaque(what) => (AddressSpace::Private, ir::ParamKind::Unsupported(what), 8, 0),
                t => (AddressSpace::Private, ir::ParamKind::Value { layout: self.layout(t)? }, t.size(), 0),
            };
            let type_name = type_names.get(i).filter(|s| !s.is_empty()).cloned().unwrap_or_else(|| match &ty {
                Ty::Pointer(_, t) => format!("{}*", t.c_name()),
                t => t.c_name(),
            });
            args.push(KernelArg {
                name: arg_name,
                space,
                is_pointer: matches!(kind, ir::ParamKind::Buffer | ir::ParamKind::Local),
                type_name,
                size: size as usize,
                pointee_size: pointee_size as usize,
                handle: match kind {
                    ir::ParamKind::Image => Some(crate::ir::reflect::Handle::Image),
                    ir::ParamKind::Sampler => Some(crate::ir::reflect::Handle::Sampler),
                    _ => None,
                },
            });
            params.push(kind);
        }
        let required_local_size = self.info.reqd_local_size.get(&fid).copied();
        Ok(ir::Kernel { info: KernelInfo { name: name.clone(), args, required_local_size }, function, params })
    }
}

/// A copy a phi needs on one edge: destination register, source value id, slot count.
type PhiCopy = (Reg, u32, u16);

/// Per-function lowering state.
struct FunctionLowering<'a> {
    m: &'a mut Lowering,
    func_ids: &'a HashMap<u32, u32>,
    values: HashMap<u32, (Reg, Ty)>,
    const_regs: HashMap<u32, Reg>,
    template: Vec<u64>,
    code: Vec<Inst>,
    locs: Vec<u32>,
    block_pc: HashMap<u32, u32>,
    /// Copies to make on the edge (predecessor, successor): (destination, source id, slots).
    phis: HashMap<(u32, u32), Vec<PhiCopy>>,
    trampolines: Vec<(u32, u32, u32)>,
    indices: Vec<Index>,
    lanes: Vec<Reg>,
    args: Vec<Arg>,
    switch_tables: Vec<ir::SwitchTable>,
    /// `OpUndef` registers (see `ir::Function::undefined`).
    undefined: Vec<(Reg, u16)>,
    loc: u32,
    zero: Option<Reg>,
    /// Values loaded from builtin variables, for lanes past the third dimension.
    builtin_values: HashMap<u32, Builtin>,
    /// `OpCompositeExtract` results that name their member's registers inside the composite
    /// (see [`Self::extracted_in_place`]): no code.
    in_place: HashSet<u32>,
    /// [`Self::alloc`] was asked for more than [`MAX_FRAME_SLOTS`].
    frame_overflow: bool,
}

/// The slot offset of the member of `ty` that an `OpCompositeExtract`'s indices name; None past
/// the end of a vector (`get_global_id(3)`).
fn extracted_member(ty: &Ty, inst: &Instruction) -> Result<Option<u32>, String> {
    let (mut slot, mut ty) = (0, ty);
    for o in rest(inst, 1) {
        let Some((s, member)) = ty.member(literal(o)?) else { return Ok(None) };
        slot += s;
        ty = member;
    }
    Ok(Some(slot))
}

/// The operand slice after `n` leading operands.
fn rest(inst: &Instruction, n: usize) -> &[Operand] {
    inst.operands.get(n..).unwrap_or(&[])
}

impl<'a> FunctionLowering<'a> {
    fn new(m: &'a mut Lowering, func_ids: &'a HashMap<u32, u32>) -> Self {
        FunctionLowering {
            m,
            func_ids,
            values: HashMap::new(),
            const_regs: HashMap::new(),
            template: Vec::new(),
            code: Vec::new(),
            locs: Vec::new(),
            block_pc: HashMap::new(),
            phis: HashMap::new(),
            trampolines: Vec::new(),
            indices: Vec::new(),
            lanes: Vec::new(),
            args: Vec::new(),
            switch_tables: Vec::new(),
            undefined: Vec::new(),
            loc: u32::MAX,
            zero: None,
            builtin_values: HashMap::new(),
            in_place: HashSet::new(),
            frame_overflow: false,
        }
    }

    /// Reserves `slots` registers. Past [`MAX_FRAME_SLOTS`] it reserves nothing and remembers the
    /// overflow, which fails the function once its instructions are lowered.
    fn alloc(&mut self, slots: u32) -> Reg {
        let r = self.template.len() as Reg;
        if self.template.len() + slots as usize > MAX_FRAME_SLOTS {
            self.frame_overflow = true;
            return 0;
        }
        self.template.resize(self.template.len() + slots as usize, 0);
        r
    }

    fn check_frame(&self) -> Result<(), String> {
        if self.frame_overflow {
            return Err(format!("its values need more than {MAX_FRAME_SLOTS} register slots"));
        }
        Ok(())
    }

    fn lower(mut self, f: &dr::Function) -> Result<ir::Function, String> {
        let mut params = Vec::new();
        for p in &f.parameters {
            let ty = self.m.info.ty(p.result_type.unwrap_or(0))?.clone();
            let r = self.alloc(ty.slots());
            params.push((r, ty.slots() as u16));
            let pid = p.result_id.unwrap_or(0);
            // A struct passed by value arrives as a pointer to the caller's object: the callee
            // works on its own copy, so that its changes stay out of the caller.
            if let Ty::Pointer(StorageClass::Function, pointee) = &ty
                && self.m.info.byval.contains(&pid)
            {
                let copy = self.alloc(1);
                let (size, align) = (pointee.size() as u32, pointee.align().max(1) as u32);
                let size_reg = self.const_reg(size as u64);
                self.code.push(Inst::Alloca { dst: copy, size, align });
                self.code.push(Inst::CopyMemory { dst: copy, src: r, size: size_reg, loc: u32::MAX });
                self.values.insert(pid, (copy, ty));
                continue;
            }
            self.values.insert(pid, (r, ty));
        }
        self.locs.resize(self.code.len(), u32::MAX);
        let phis: HashSet<u32> = f
            .blocks
            .iter()
            .flat_map(|b| &b.instructions)
            .filter(|i| i.class.opcode == Op::Phi)
            .filter_map(|i| i.result_id)
            .collect();
        for block in &f.blocks {
            for inst in &block.instructions {
                if let (Some(r), Some(t)) = (inst.result_id, inst.result_type) {
                    let ty = self.m.info.ty(t)?.clone();
                    let reg = match self.extracted_in_place(inst, &phis) {
                        Some(reg) => {
                            self.in_place.insert(r);
                            reg
                        }
                        None => self.alloc(ty.slots()),
                    };
                    self.values.insert(r, (reg, ty));
                }
            }
        }
        self.check_frame()?;
        for block in &f.blocks {
            let label = block.label.as_ref().and_then(|l| l.result_id).unwrap_or(0);
            for inst in block.instructions.iter().filter(|i| i.class.opcode == Op::Phi) {
                let (dst, ty) = self.values[&inst.result_id.unwrap_or(0)].clone();
                for pair in inst.operands.chunks(2) {
                    let (value, pred) = (id(&pair[0])?, id(&pair[1])?);
                    self.phis.entry((pred, label)).or_default().push((dst, value, ty.slots() as u16));
                }
            }
        }
        for block in &f.blocks {
            let label = block.label.as_ref().and_then(|l| l.result_id).unwrap_or(0);
            self.block_pc.insert(label, self.code.len() as u32);
            for inst in &block.instructions {
                self.instruction(label, inst)?;
                self.locs.resize(self.code.len(), self.loc);
            }
        }
        if f.blocks.is_empty() {
            self.unsupported("a function with no body".into());
        }
        self.emit_trampolines()?;
        self.locs.resize(self.code.len(), u32::MAX);
        self.resolve_targets()?;
        self.check_frame()?;
        Ok(ir::Function {
            name: String::new(),
            // Filled in once the peepholes have settled the code (`reconverge::annotate`).
            joins: Vec::new(),
            code: self.code,
            locs: self.locs,
            template: self.template,
            params,
            indices: self.indices,
            lanes: self.lanes,
            args: self.args,
            switch_tables: self.switch_tables,
            undefined: self.undefined,
        })
    }

    /// For an `OpCompositeExtract` of a value held in registers that only its definition
    /// writes (not a phi's, which the copies on each incoming edge write): the registers of the
    /// member inside it, which the result then names instead of a copy. Blocks come in an order
    /// where each follows its dominators, so the composite is known here; and since the
    /// composite's definition dominates the extract, every path from a redefinition (the next
    /// loop iteration) to a use of the result passes the extract again, so the member read in
    /// place is always the one extracted.
    fn extracted_in_place(&self, inst: &Instruction, phis: &HashSet<u32>) -> Option<Reg> {
        if inst.class.opcode != Op::CompositeExtract {
            return None;
        }
        let composite = id(inst.operands.first()?).ok()?;
        let (reg, ty) = self.values.get(&composite).filter(|_| !phis.contains(&composite))?;
        let slot = extracted_member(ty, inst).ok()??;
        Some(reg + slot)
    }

    /// The register and type of an operand, materialising constants in the template.
    fn val(&mut self, op: &Operand) -> Result<(Reg, Ty), String> {
        let i = id(op)?;
        if let Some(v) = self.values.get(&i) {
            return Ok(v.clone());
        }
        if let Some(&r) = self.const_regs.get(&i) {
            return Ok((r, self.m.info.consts[&i].ty.clone()));
        }
        let Some(Const { ty, slots }) = self.m.info.consts.get(&i).cloned() else {
            return Err(format!("operand %{i} is not a value we know (forward reference to a non-value?)"));
        };
        let r = self.alloc(slots.len() as u32);
        self.template[r as usize..r as usize + slots.len()].copy_from_slice(&slots);
        self.const_regs.insert(i, r);
        if self.m.info.undefs.contains(&i) {
            self.undefined.push((r, slots.len() as u16));
        }
        Ok((r, ty))
    }

    /// What a lane past the end of vector `op` reads: 1 for the size builtins, else 0.
    fn beyond_value(&self, op: &Operand) -> u8 {
        let sizes = [Builtin::GlobalSize, Builtin::LocalSize, Builtin::EnqueuedLocalSize, Builtin::NumGroups];
        let from = id(op).ok().and_then(|i| self.builtin_values.get(&i));
        from.is_some_and(|b| sizes.contains(b)) as u8
    }

    fn reg(&mut self, op: &Operand) -> Result<Reg, String> {
        Ok(self.val(op)?.0)
    }

    /// A scope operand (a constant id); device scope if it is not a constant.
    fn scope(&self, op: &Operand) -> Scope {
        scope_of(self.const_value(op).unwrap_or(1))
    }

    fn const_value(&self, op: &Operand) -> Option<u64> {
        self.m.info.consts.get(&id(op).ok()?).and_then(|c| c.slots.first().copied())
    }

    fn zero_reg(&mut self) -> Reg {
        if let Some(z) = self.zero {
            return z;
        }
        let z = self.alloc(1);
        self.zero = Some(z);
        z
    }

    /// A constant register holding `value`.
    fn const_reg(&mut self, value: u64) -> Reg {
        let r = self.alloc(1);
        self.template[r as usize] = value;
        r
    }

    /// `src` widened to `n` lanes (a scalar is splatted into fresh registers).
    fn broadcast(&mut self, src: Reg, have: u32, n: u32) -> Reg {
        if have >= n {
            return src;
        }
        let r = self.alloc(n);
        for i in 0..n {
            self.code.push(Inst::Mov { dst: r + i, src, n: 1 });
        }
        r
    }

    fn emit_phi_copies(&mut self, copies: &[(Reg, u32, u16)]) -> Result<(), String> {
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

    fn emit_trampolines(&mut self) -> Result<(), String> {
        for (label, from, to) in std::mem::take(&mut self.trampolines) {
            self.block_pc.insert(label, self.code.len() as u32);
            let copies = self.phis[&(from, to)].clone();
            self.emit_phi_copies(&copies)?;
            self.code.push(Inst::Branch { target: to });
        }
        Ok(())
    }

    fn resolve_targets(&mut self) -> Result<(), String> {
        let pcs = &self.block_pc;
        let at = |label: u32| pcs.get(&label).copied().ok_or_else(|| format!("branch to unknown block %{label}"));
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
    fn assertion(&mut self, name: &str, inst: &Instruction) -> Result<Option<Inst>, String> {
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

    fn unsupported(&mut self, what: String) {
        self.m.out.unsupported.push(what);
        let what = self.m.out.unsupported.len() as u32 - 1;
        self.code.push(Inst::Unsupported { what, loc: self.loc });
    }

    fn result(&self, inst: &Instruction) -> Result<(Reg, Ty), String> {
        let r = inst.result_id.ok_or("instruction without a result")?;
        self.values.get(&r).cloned().ok_or_else(|| format!("no register for %{r}"))
    }

    fn instruction(&mut self, label: u32, inst: &Instruction) -> Result<(), String> {
        let ops = &inst.operands;
        match inst.class.opcode {
            Op::Line => {
                self.loc = self.m.location(id(&ops[0])?, literal(&ops[1])? as u32, literal(&ops[2])? as u32);
            }
            Op::NoLine => self.loc = u32::MAX,
            Op::Nop | Op::LoopMerge | Op::SelectionMerge | Op::LifetimeStart | Op::LifetimeStop | Op::Phi => {}
            Op::Undef => {
                if let Ok((r, ty)) = self.result(inst) {
                    self.undefined.push((r, ty.slots() as u16));
                }
            }
            Op::Variable => {
                let (dst, ty) = self.result(inst)?;
                let pointee = ty.pointee().cloned().unwrap_or(Ty::Int(8));
                if pointee.size() > MAX_PRIVATE_BYTES as u64 {
                    return Err(format!(
                        "a private variable of {} bytes (a work-item may have {} bytes)",
                        pointee.size(),
                        MAX_PRIVATE_BYTES
                    ));
                }
                self.code.push(Inst::Alloca { dst, size: pointee.size() as u32, align: pointee.align().max(1) as u32 });
                if let Some(init) = ops.get(1) {
                    let src = self.reg(init)?;
                    self.store(src, dst, &pointee)?;
                }
            }
            Op::Load => self.load(inst)?,
            Op::Store => {
                let ptr = self.reg(&ops[0])?;
                let (src, ty) = self.val(&ops[1])?;
                self.store_aligned(src, ptr, &ty, required_alignment(&ops[2..], &ty))?;
            }
            Op::AccessChain | Op::InBoundsAccessChain => self.access_chain(inst, false)?,
            Op::PtrAccessChain | Op::InBoundsPtrAccessChain => self.access_chain(inst, true)?,
            Op::CopyMemory | Op::CopyMemorySized => {
                let dst = self.reg(&ops[0])?;
                let (src, sty) = self.val(&ops[1])?;
                let size = match inst.class.opcode {
                    Op::CopyMemorySized => self.reg(&ops[2])?,
                    _ => self.const_reg(sty.pointee().map(Ty::size).unwrap_or(0)),
                };
                self.code.push(Inst::CopyMemory { dst, src, size, loc: self.loc });
            }
            Op::PtrDiff => {
                let (dst, _) = self.result(inst)?;
                let (a, ty) = self.val(&ops[0])?;
                let b = self.reg(&ops[1])?;
                let elem = ty.pointee().map(Ty::stride).unwrap_or(1).max(1) as u32;
                self.code.push(Inst::PtrDiff { dst, a, b, elem });
            }
            Op::Bitcast => self.bitcast(inst)?,
            Op::CopyObject | Op::PtrCastToGeneric | Op::GenericCastToPtr | Op::ConvertPtrToU | Op::ConvertUToPtr => {
                let (dst, ty) = self.result(inst)?;
                let (src, sty) = self.val(&ops[0])?;
                let n = ty.slots() as u16;
                if matches!(ty, Ty::Int(b) if b < 64) && matches!(sty, Ty::Pointer(..)) {
                    self.code.push(Inst::Convert { conv: Conv::PtrInt, from: 64, to: ty.bits(), dst, src, n });
                } else {
                    self.code.push(Inst::Mov { dst, src, n });
                }
            }
            Op::UConvert
            | Op::SConvert
            | Op::FConvert
            | Op::ConvertFToU
            | Op::ConvertFToS
            | Op::ConvertSToF
            | Op::ConvertUToF
            | Op::SatConvertSToU
            | Op::SatConvertUToS => self.convert(inst)?,
            Op::IAdd
            | Op::ISub
            | Op::IMul
            | Op::UDiv
            | Op::SDiv
            | Op::UMod
            | Op::SRem
            | Op::SMod
            | Op::BitwiseAnd
            | Op::BitwiseOr
            | Op::BitwiseXor
            | Op::ShiftLeftLogical
            | Op::ShiftRightLogical
            | Op::ShiftRightArithmetic
            | Op::LogicalAnd
            | Op::LogicalOr => self.int_binary(inst)?,
            Op::FAdd | Op::FSub | Op::FMul | Op::FDiv | Op::FRem | Op::FMod | Op::VectorTimesScalar => {
                self.float_binary(inst)?
            }
            Op::IEqual
            | Op::INotEqual
            | Op::LogicalEqual
            | Op::LogicalNotEqual
            | Op::ULessThan
            | Op::ULessThanEqual
            | Op::UGreaterThan
            | Op::UGreaterThanEqual
            | Op::SLessThan
            | Op::SLessThanEqual
            | Op::SGreaterThan
            | Op::SGreaterThanEqual
            | Op::FOrdEqual
            | Op::FOrdNotEqual
            | Op::FOrdLessThan
            | Op::FOrdLessThanEqual
            | Op::FOrdGreaterThan
            | Op::FOrdGreaterThanEqual
            | Op::FUnordEqual
            | Op::FUnordNotEqual
            | Op::FUnordLessThan
            | Op::FUnordLessThanEqual
            | Op::FUnordGreaterThan
            | Op::FUnordGreaterThanEqual
            | Op::Ordered
            | Op::Unordered => self.compare(inst)?,
            Op::SNegate
            | Op::Not
            | Op::FNegate
            | Op::LogicalNot
            | Op::IsNan
            | Op::IsInf
            | Op::IsFinite
            | Op::IsNormal
            | Op::SignBitSet
            | Op::BitCount
            | Op::BitReverse => self.unary(inst)?,
            Op::Any | Op::All => {
                let (dst, _) = self.result(inst)?;
                let (src, ty) = self.val(&ops[0])?;
                self.code.push(Inst::Reduce { all: inst.class.opcode == Op::All, dst, src, n: ty.lanes() as u16 });
            }
            Op::Select => {
                let (dst, ty) = self.result(inst)?;
                let (cond, cty) = self.val(&ops[0])?;
                let a = self.reg(&ops[1])?;
                let b = self.reg(&ops[2])?;
                let cond_lanes = matches!(cty, Ty::Vector(..));
                self.code.push(Inst::Select { dst, cond, a, b, n: ty.slots() as u16, cond_lanes });
            }
            Op::Dot => {
                let (dst, ty) = self.result(inst)?;
                let (a, aty) = self.val(&ops[0])?;
                let b = self.reg(&ops[1])?;
                self.code.push(Inst::Geometric { op: Geo::Dot, bits: ty.bits(), dst, a, b, n: aty.lanes() as u16 });
            }
            Op::CompositeExtract => {
                if inst.result_id.is_some_and(|r| self.in_place.contains(&r)) {
                    return Ok(());
                }
                let (dst, ty) = self.result(inst)?;
                let (src, sty) = self.val(&ops[0])?;
                let Some(slot) = extracted_member(&sty, inst)? else {
                    // get_global_id(3) and friends: past the third dimension.
                    let beyond = self.beyond_value(&ops[0]);
                    let r = self.const_reg(beyond as u64);
                    self.code.push(Inst::Mov { dst, src: r, n: 1 });
                    return Ok(());
                };
                self.code.push(Inst::Mov { dst, src: src + slot, n: ty.slots() as u16 });
            }
            Op::CompositeInsert => {
                let (dst, ty) = self.result(inst)?;
                let (obj, oty) = self.val(&ops[0])?;
                let src = self.reg(&ops[1])?;
                self.code.push(Inst::Mov { dst, src, n: ty.slots() as u16 });
                let mut t = ty.clone();
                let mut slot = 0;
                for o in rest(inst, 2) {
                    let (s, m) = t.member(literal(o)?).ok_or("CompositeInsert index out of range")?;
                    slot += s;
                    t = m.clone();
                }
                self.code.push(Inst::Mov { dst: dst + slot, src: obj, n: oty.slots() as u16 });
            }
            Op::CompositeConstruct => {
                let (dst, ty) = self.result(inst)?;
                let mut slot = 0;
                for o in ops {
                    let (src, t) = self.val(o)?;
                    self.code.push(Inst::Mov { dst: dst + slot, src, n: t.slots() as u16 });
                    slot += t.slots();
                }
                if slot != ty.slots() {
                    return Err("CompositeConstruct with the wrong number of components".into());
                }
            }
            Op::VectorShuffle => {
                let (dst, ty) = self.result(inst)?;
                let (a, aty) = self.val(&ops[0])?;
                let (b, bty) = self.val(&ops[1])?;
                let first = self.lanes.len() as u32;
                let selectors = rest(inst, 2);
                if selectors.len() != ty.lanes() as usize {
                    return Err(format!("OpVectorShuffle of {} components for {} lanes", selectors.len(), ty.lanes()));
                }
                for o in selectors {
                    let lane = literal(o)? as u32;
                    if lane != 0xffff_ffff && lane as u64 >= aty.lanes() as u64 + bty.lanes() as u64 {
                        return Err(format!(
                            "OpVectorShuffle selects component {lane} of two vectors of {} and {} components",
                            aty.lanes(),
                            bty.lanes()
                        ));
                    }
                    let src = if lane == 0xffff_ffff {
                        self.zero_reg()
                    } else if lane < aty.lanes() {
                        a + lane
                    } else {
                        b + lane - aty.lanes()
                    };
                    self.lanes.push(src);
                }
                self.code.push(Inst::Shuffle { dst, first, n: ty.lanes() as u16 });
            }
            Op::VectorExtractDynamic => {
                let (dst, _) = self.result(inst)?;
                let (src, ty) = self.val(&ops[0])?;
                let (index, ity) = self.val(&ops[1])?;
                let beyond = self.beyond_value(&ops[0]);
                self.code.push(Inst::ExtractDynamic {
                    dst,
                    src,
                    index,
                    index_bits: ity.bits(),
                    n: ty.lanes() as u16,
                    beyond,
                });
            }
            Op::VectorInsertDynamic => {
                let (dst, ty) = self.result(inst)?;
                let src = self.reg(&ops[0])?;
                let value = self.reg(&ops[1])?;
                let (index, ity) = self.val(&ops[2])?;
                self.code.push(Inst::InsertDynamic {
                    dst,
                    src,
                    value,
                    index,
                    index_bits: ity.bits(),
                    n: ty.lanes() as u16,
                });
            }
            Op::Branch => {
                let target = id(&ops[0])?;
                if let Some(copies) = self.phis.get(&(label, target)).cloned() {
                    self.emit_phi_copies(&copies)?;
                }
                self.code.push(Inst::Branch { target });
            }
            Op::BranchConditional => {
                let cond = self.reg(&ops[0])?;
                let then = self.edge(label, id(&ops[1])?);
                let otherwise = self.edge(label, id(&ops[2])?);
                self.code.push(Inst::BranchIf { cond, then, otherwise });
            }
            Op::Switch => {
                let (value, ty) = self.val(&ops[0])?;
                let default = self.edge(label, id(&ops[1])?);
                let mut cases = Vec::new();
                for pair in rest(inst, 2).chunks(2) {
                    cases.push((literal(&pair[0])?, self.edge(label, id(&pair[1])?)));
                }
                self.switch_tables.push(ir::SwitchTable { cases, default });
                self.code.push(Inst::Switch { value, bits: ty.bits(), table: self.switch_tables.len() as u32 - 1 });
            }
            Op::Return => self.code.push(Inst::Return { src: 0, n: 0 }),
            Op::ReturnValue => {
                let (src, ty) = self.val(&ops[0])?;
                self.code.push(Inst::Return { src, n: ty.slots() as u16 });
            }
            Op::Unreachable => self.code.push(Inst::Unreachable { loc: self.loc }),
            Op::FunctionCall => {
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
                let func = *self.func_ids.get(&callee).ok_or("call to an unknown function")?;
                let first_arg = self.args.len() as u32;
                for o in rest(inst, 1) {
                    let (reg, ty) = self.val(o)?;
                    self.args.push(Arg { reg, n: ty.slots() as u16, kind: ArgKind::Other });
                }
                self.code.push(Inst::Call { func, dst, first_arg, num_args: (ops.len() - 1) as u16 });
            }
            Op::ControlBarrier => {
                let sub_group = self.const_value(&ops[0]) == Some(3);
                let scope = self.scope(&ops[1]);
                let sem = self.const_value(&ops[2]).unwrap_or(0x300);
                self.code.push(Inst::Barrier { fence: fence(sem), scope, loc: self.loc, sub_group });
            }
            Op::MemoryBarrier => {
                let scope = self.scope(&ops[0]);
                let sem = self.const_value(&ops[1]).unwrap_or(0x310);
                self.code.push(Inst::MemoryFence { fence: fence(sem), order: order_of(sem), scope, loc: self.loc });
            }
            Op::GenericCastToPtrExplicit => {
                let (dst, _) = self.result(inst)?;
                let src = self.reg(&ops[0])?;
                let space = match ops.get(1) {
                    Some(Operand::StorageClass(StorageClass::CrossWorkgroup)) => SPACE_GLOBAL,
                    Some(Operand::StorageClass(StorageClass::Workgroup)) => SPACE_LOCAL,
                    Some(Operand::StorageClass(StorageClass::Function)) => SPACE_PRIVATE,
                    other => return Err(format!("OpGenericCastToPtrExplicit to {other:?}")),
                };
                self.code.push(Inst::CastToSpace { dst, src, space: space as u8 });
            }
            Op::GenericPtrMemSemantics => {
                let (dst, _) = self.result(inst)?;
                let src = self.reg(&ops[0])?;
                self.code.push(Inst::PointerFence { dst, src });
            }
            Op::AtomicLoad
            | Op::AtomicStore
            | Op::AtomicExchange
            | Op::AtomicCompareExchange
            | Op::AtomicCompareExchangeWeak
            | Op::AtomicIIncrement
            | Op::AtomicIDecrement
            | Op::AtomicIAdd
            | Op::AtomicISub
            | Op::AtomicSMin
            | Op::AtomicUMin
            | Op::AtomicSMax
            | Op::AtomicUMax
            | Op::AtomicAnd
            | Op::AtomicOr
            | Op::AtomicXor
            | Op::AtomicFlagTestAndSet
            | Op::AtomicFlagClear => self.atomic(inst)?,
            Op::GroupAll
            | Op::GroupAny
            | Op::GroupBroadcast
            | Op::GroupIAdd
            | Op::GroupFAdd
            | Op::GroupSMin
            | Op::GroupUMin
            | Op::GroupFMin
            | Op::GroupSMax
            | Op::GroupUMax
            | Op::GroupFMax => self.collective(inst)?,
            Op::GroupAsyncCopy => {
                let (dst, _) = self.result(inst)?;
                let (dst_ptr, dty) = self.val(&ops[1])?;
                let src_ptr = self.reg(&ops[2])?;
                let count = self.reg(&ops[3])?;
                let stride = self.reg(&ops[4])?;
                let event = self.reg(&ops[5])?;
                let elem = dty.pointee().map(Ty::size).unwrap_or(1) as u32;
                let to_local = matches!(dty, Ty::Pointer(StorageClass::Workgroup, _));
                self.code.push(Inst::AsyncCopy {
                    dst,
                    dst_ptr,
                    src_ptr,
                    count,
                    stride,
                    elem,
                    to_local,
                    event,
                    loc: self.loc,
                });
            }
            Op::GroupWaitEvents => {
                let num = self.reg(&ops[1])?;
                let list = self.reg(&ops[2])?;
                self.code.push(Inst::WaitEvents { num, list, loc: self.loc });
                self.code.push(Inst::Barrier {
                    fence: Fence { local: true, global: true },
                    scope: Scope::WorkGroup,
                    loc: self.loc,
                    sub_group: false,
                });
            }
            Op::ExtInst => self.ext_inst(inst)?,
            Op::SampledImage => {
                let (dst, _) = self.result(inst)?;
                let image = self.reg(&ops[0])?;
                let sampler = self.reg(&ops[1])?;
                self.code.push(Inst::Mov { dst, src: image, n: 1 });
                self.code.push(Inst::Mov { dst: dst + 1, src: sampler, n: 1 });
            }
            Op::ImageSampleExplicitLod
            | Op::ImageRead
            | Op::ImageWrite
            | Op::ImageQuerySizeLod
            | Op::ImageQuerySize
            | Op::ImageQueryFormat
            | Op::ImageQueryOrder => self.image(inst)?,
            other => self.unsupported(format!("SPIR-V opcode Op{other:?}")),
        }
        Ok(())
    }

    /// Image reads, writes and queries.
    fn image(&mut self, inst: &Instruction) -> Result<(), String> {
        let ops = &inst.operands;
        let texel_type = |ty: &Ty| match ty.scalar() {
            Ty::Float(16) => TexelType::Half,
            Ty::Float(_) => TexelType::Float,
            _ => TexelType::Int,
        };
        let (image, ity) = self.val(&ops[0])?;
        let loc = self.loc;
        let op = inst.class.opcode;
        // The interpreter reads and writes whole operands: check their shapes once, here.
        let sampled = op == Op::ImageSampleExplicitLod;
        if ity != if sampled { Ty::SampledImage } else { Ty::Image } {
            return Err(format!("Op{op:?} on a value that is not an image of the right kind"));
        }
        let four_lanes = |ty: &Ty| match ty {
            Ty::Vector(_, 4) => Ok(()),
            _ => Err(format!("Op{op:?} needs a 4-component texel")),
        };
        let coordinates = |ty: &Ty| match ty.lanes() {
            1..=4 => Ok(ty.lanes() as u8),
            _ => Err(format!("Op{op:?} with {} coordinates", ty.lanes())),
        };
        if op == Op::ImageWrite {
            let (coord, cty) = self.val(&ops[1])?;
            let (src, sty) = self.val(&ops[2])?;
            four_lanes(&sty)?;
            let (coord_n, texel) = (coordinates(&cty)?, texel_type(&sty));
            self.code.push(Inst::ImageWrite { image, coord, coord_n, src, texel, loc });
            return Ok(());
        }
        let (dst, ty) = self.result(inst)?;
        let (query, n, bits) = match op {
            Op::ImageQueryFormat => (ImageQuery::Format, 1, 32),
            Op::ImageQueryOrder => (ImageQuery::Order, 1, 32),
            Op::ImageQuerySize | Op::ImageQuerySizeLod if ty.lanes() <= 4 => {
                (ImageQuery::Size, ty.lanes() as u8, ty.bits())
            }
            Op::ImageQuerySize | Op::ImageQuerySizeLod => return Err(format!("Op{op:?} with {} lanes", ty.lanes())),
            _ => {
                let (coord, cty) = self.val(&ops[1])?;
                four_lanes(&ty)?;
                self.code.push(Inst::ImageRead {
                    dst,
                    image,
                    coord,
                    coord_n: coordinates(&cty)?,
                    float_coord: matches!(cty.scalar(), Ty::Float(_)),
                    sampled,
                    texel: texel_type(&ty),
                    loc,
                });
                return Ok(());
            }
        };
        self.code.push(Inst::ImageQuery { dst, image, query, n, bits });
        Ok(())
    }

    fn load(&mut self, inst: &Instruction) -> Result<(), String> {
        let (dst, ty) = self.result(inst)?;
        let pid = id(&inst.operands[0])?;
        if let Some(GlobalRef::Builtin(b)) = self.m.info.globals.get(&pid) {
            let which = builtin(*b).ok_or_else(|| format!("unsupported builtin variable {b:?}"))?;
            self.code.push(Inst::Builtin { dst, which });
            self.builtin_values.insert(inst.result_id.unwrap_or(0), which);
            return Ok(());
        }
        let ptr = self.reg(&inst.operands[0])?;
        let layout = value_layout(&ty)?;
        let align = required_alignment(&inst.operands[1..], &ty);
        if layout.leaves.len() == 1 && layout.leaves[0].offset == 0 {
            self.code.push(Inst::LoadScalar { dst, ptr, size: layout.leaves[0].size, loc: self.loc, align });
        } else {
            let layout = self.m.layout(&ty)?;
            self.code.push(Inst::Load { dst, ptr, layout, loc: self.loc, align });
        }
        Ok(())
    }

    /// A store of our own making (a variable's initialiser): nothing to check of its alignment.
    fn store(&mut self, src: Reg, ptr: Reg, ty: &Ty) -> Result<(), String> {
        self.store_aligned(src, ptr, ty, 1)
    }

    fn store_aligned(&mut self, src: Reg, ptr: Reg, ty: &Ty, align: u8) -> Result<(), String> {
        let layout = value_layout(ty)?;
        if layout.leaves.len() == 1 && layout.leaves[0].offset == 0 {
            self.code.push(Inst::StoreScalar { src, ptr, size: layout.leaves[0].size, loc: self.loc, align });
        } else {
            let layout = self.m.layout(ty)?;
            self.code.push(Inst::Store { src, ptr, layout, loc: self.loc, align });
        }
        Ok(())
    }

    fn access_chain(&mut self, inst: &Instruction, has_element: bool) -> Result<(), String> {
        let (dst, _) = self.result(inst)?;
        let (base, bty) = self.val(&inst.operands[0])?;
        let mut ty = bty.pointee().cloned().ok_or("access chain on a non-pointer")?;
        let mut offset: i64 = 0;
        let first_index = self.indices.len() as u32;
        let mut ops = &inst.operands[1..];
        // Run-time indices into arrays, checked against the array's extent once the address is known.
        let mut checks: Vec<(u32, u32)> = Vec::new();
        if has_element {
            offset = offset.wrapping_add(self.chain_index(&ops[0], ty.stride())?);
            ops = &ops[1..];
        }
        for op in ops {
            ty = match ty {
                Ty::Struct(..) => {
                    let field = self.const_value(op).ok_or("struct index must be constant")?;
                    offset += *ty.field_offsets().get(field as usize).ok_or("struct index out of range")? as i64;
                    let Ty::Struct(fields, _) = &ty else { unreachable!() };
                    fields[field as usize].clone()
                }
                Ty::Array(e, n) => {
                    let indexed = self.indices.len();
                    offset = offset.wrapping_add(self.chain_index(op, e.stride())?);
                    if let (true, Ok(extent @ 1..)) = (self.indices.len() > indexed, u32::try_from(n)) {
                        checks.push((indexed as u32, extent));
                    }
                    *e
                }
                Ty::Vector(e, _) => {
                    offset = offset.wrapping_add(self.chain_index(op, e.size())?);
                    *e
                }
                other => return Err(format!("access chain into non-composite type {other:?}")),
            };
        }
        let num_indices = (self.indices.len() as u32 - first_index) as u16;
        if num_indices == 0 && offset == 0 {
            self.code.push(Inst::Mov { dst, src: base, n: 1 });
        } else {
            self.code.push(Inst::PtrOffset { dst, base, offset, first_index, num_indices });
        }
        for (index, extent) in checks {
            self.code.push(Inst::IndexCheck { index, ptr: dst, extent, loc: self.loc });
        }
        Ok(())
    }

    /// One access-chain index: a constant adds to the returned offset, a register becomes an [`Index`].
    fn chain_index(&mut self, op: &Operand, stride: u64) -> Result<i64, String> {
        if let Some(c) = self.m.info.consts.get(&id(op)?) {
            let value = *c.slots.first().ok_or("an access-chain index that is not a scalar")?;
            return Ok(sign_extend(value, c.ty.bits()).wrapping_mul(stride as i64));
        }
        let (reg, ty) = self.val(op)?;
        self.indices.push(Index { reg, bits: ty.bits(), stride: stride as i64 });
        Ok(0)
    }

    fn bitcast(&mut self, inst: &Instruction) -> Result<(), String> {
        let (dst, ty) = self.result(inst)?;
        let (src, sty) = self.val(&inst.operands[0])?;
        let same_shape = ty.slots() == sty.slots() && ty.bits() == sty.bits();
        if same_shape || (matches!(ty, Ty::Pointer(..)) && matches!(sty, Ty::Pointer(..))) {
            self.code.push(Inst::Mov { dst, src, n: ty.slots() as u16 });
        } else {
            let from = self.m.layout(&sty)?;
            let to = self.m.layout(&ty)?;
            self.code.push(Inst::Bitcast { dst, src, from, to });
        }
        Ok(())
    }

    fn convert(&mut self, inst: &Instruction) -> Result<(), String> {
        let (dst, ty) = self.result(inst)?;
        let (src, sty) = self.val(&inst.operands[0])?;
        let r = inst.result_id.unwrap_or(0);
        let sat = self.m.info.saturated.contains(&r);
        let round = match self.m.info.rounding.get(&r) {
            Some(FPRoundingMode::RTE) => Round::Rte,
            Some(FPRoundingMode::RTZ) => Round::Rtz,
            Some(FPRoundingMode::RTP) => Round::Rtp,
            Some(FPRoundingMode::RTN) => Round::Rtn,
            _ => Round::Default,
        };
        let conv = match inst.class.opcode {
            Op::UConvert if sat => Conv::SatInt { src_signed: false, dst_signed: false },
            Op::SConvert if sat => Conv::SatInt { src_signed: true, dst_signed: true },
            Op::SatConvertSToU => Conv::SatInt { src_signed: true, dst_signed: false },
            Op::SatConvertUToS => Conv::SatInt { src_signed: false, dst_signed: true },
            Op::UConvert => Conv::UInt,
            Op::SConvert => Conv::SInt,
            Op::FConvert => Conv::Float { round },
            Op::ConvertFToU => Conv::FloatToUInt { sat, round },
            Op::ConvertFToS => Conv::FloatToSInt { sat, round },
            Op::ConvertSToF => Conv::SIntToFloat { round },
            _ => Conv::UIntToFloat { round },
        };
        self.code.push(Inst::Convert { conv, from: sty.bits(), to: ty.bits(), dst, src, n: ty.lanes() as u16 });
        Ok(())
    }

    fn int_binary(&mut self, inst: &Instruction) -> Result<(), String> {
        let (dst, ty) = self.result(inst)?;
        let a = self.reg(&inst.operands[0])?;
        let (b, bty) = self.val(&inst.operands[1])?;
        let b = self.broadcast(b, bty.lanes(), ty.lanes());
        let op = match inst.class.opcode {
            Op::IAdd => IntOp::Add,
            Op::ISub => IntOp::Sub,
            Op::IMul => IntOp::Mul,
            Op::UDiv => IntOp::UDiv,
            Op::SDiv => IntOp::SDiv,
            Op::UMod => IntOp::URem,
            Op::SRem => IntOp::SRem,
            Op::SMod => IntOp::SMod,
            Op::BitwiseAnd | Op::LogicalAnd => IntOp::And,
            Op::BitwiseOr | Op::LogicalOr => IntOp::Or,
            Op::BitwiseXor => IntOp::Xor,
            Op::ShiftLeftLogical => IntOp::Shl,
            Op::ShiftRightLogical => IntOp::LShr,
            _ => IntOp::AShr,
        };
        self.code.push(Inst::IntBin { op, bits: ty.bits(), dst, a, b, n: ty.lanes() as u16 });
        Ok(())
    }

    fn float_binary(&mut self, inst: &Instruction) -> Result<(), String> {
        let (dst, ty) = self.result(inst)?;
        let a = self.reg(&inst.operands[0])?;
        let (b, bty) = self.val(&inst.operands[1])?;
        let b = self.broadcast(b, bty.lanes(), ty.lanes());
        let op = match inst.class.opcode {
            Op::FAdd => FloatOp::Add,
            Op::FSub => FloatOp::Sub,
            Op::FMul | Op::VectorTimesScalar => FloatOp::Mul,
            Op::FDiv => FloatOp::Div,
            Op::FRem => FloatOp::Rem,
            _ => FloatOp::Mod,
        };
        self.code.push(Inst::FloatBin { op, bits: ty.bits(), dst, a, b, n: ty.lanes() as u16 });
        Ok(())
    }

    fn compare(&mut self, inst: &Instruction) -> Result<(), String> {
        let (dst, ty) = self.result(inst)?;
        let (a, aty) = self.val(&inst.operands[0])?;
        let b = self.reg(&inst.operands[1])?;
        let cmp = match inst.class.opcode {
            Op::IEqual | Op::LogicalEqual => Cmp::Eq,
            Op::INotEqual | Op::LogicalNotEqual => Cmp::Ne,
            Op::ULessThan => Cmp::ULt,
            Op::ULessThanEqual => Cmp::ULe,
            Op::UGreaterThan => Cmp::UGt,
            Op::UGreaterThanEqual => Cmp::UGe,
            Op::SLessThan => Cmp::SLt,
            Op::SLessThanEqual => Cmp::SLe,
            Op::SGreaterThan => Cmp::SGt,
            Op::SGreaterThanEqual => Cmp::SGe,
            Op::FOrdEqual => Cmp::FOrdEq,
            Op::FOrdNotEqual => Cmp::FOrdNe,
            Op::FOrdLessThan => Cmp::FOrdLt,
            Op::FOrdLessThanEqual => Cmp::FOrdLe,
            Op::FOrdGreaterThan => Cmp::FOrdGt,
            Op::FOrdGreaterThanEqual => Cmp::FOrdGe,
            Op::FUnordEqual => Cmp::FUnordEq,
            Op::FUnordNotEqual => Cmp::FUnordNe,
            Op::FUnordLessThan => Cmp::FUnordLt,
            Op::FUnordLessThanEqual => Cmp::FUnordLe,
            Op::FUnordGreaterThan => Cmp::FUnordGt,
            Op::FUnordGreaterThanEqual => Cmp::FUnordGe,
            Op::Ordered => Cmp::FOrd,
            _ => Cmp::FUnord,
        };
        self.code.push(Inst::Compare { cmp, bits: aty.bits(), dst, a, b, n: ty.lanes() as u16 });
        Ok(())
    }

    fn unary(&mut self, inst: &Instruction) -> Result<(), String> {
        let (dst, ty) = self.result(inst)?;
        let (a, aty) = self.val(&inst.operands[0])?;
        let op = match inst.class.opcode {
            Op::SNegate => UnOp::INeg,
            Op::Not => UnOp::Not,
            Op::FNegate => UnOp::FNeg,
            Op::LogicalNot => UnOp::LogicalNot,
            Op::IsNan => UnOp::IsNan,
            Op::IsInf => UnOp::IsInf,
            Op::IsFinite => UnOp::IsFinite,
            Op::IsNormal => UnOp::IsNormal,
            Op::SignBitSet => UnOp::SignBitSet,
            Op::BitCount => UnOp::BitCount,
            _ => UnOp::BitReverse,
        };
        self.code.push(Inst::Unary { op, bits: aty.bits(), dst, a, n: ty.lanes() as u16 });
        Ok(())
    }

    /// A work-group or sub-group collective (sub-groups span the whole work-group here).
    fn collective(&mut self, inst: &Instruction) -> Result<(), String> {
        let ops = &inst.operands;
        let (dst, _) = self.result(inst)?;
        let loc = self.loc;
        let arith = |op: Op| match op {
            Op::GroupIAdd => GroupArith::IAdd,
            Op::GroupFAdd => GroupArith::FAdd,
            Op::GroupSMin => GroupArith::SMin,
            Op::GroupUMin => GroupArith::UMin,
            Op::GroupFMin => GroupArith::FMin,
            Op::GroupSMax => GroupArith::SMax,
            Op::GroupUMax => GroupArith::UMax,
            _ => GroupArith::FMax,
        };
        let (op, src, id, id_n) = match inst.class.opcode {
            Op::GroupAll | Op::GroupAny => {
                let all = inst.class.opcode == Op::GroupAll;
                (if all { CollectiveOp::All } else { CollectiveOp::Any }, self.reg(&ops[1])?, 0, 0)
            }
            Op::GroupBroadcast => {
                let src = self.reg(&ops[1])?;
                let (id, ty) = self.val(&ops[2])?;
                (CollectiveOp::Broadcast, src, id, ty.lanes() as u8)
            }
            other => {
                let operation = match &ops[1] {
                    Operand::GroupOperation(g) => *g,
                    o => return Err(format!("group operation expected, found {o:?}")),
                };
                let op = match operation {
                    rspirv::spirv::GroupOperation::Reduce => CollectiveOp::Reduce(arith(other)),
                    rspirv::spirv::GroupOperation::InclusiveScan => CollectiveOp::InclusiveScan(arith(other)),
                    rspirv::spirv::GroupOperation::ExclusiveScan => CollectiveOp::ExclusiveScan(arith(other)),
                    g => {
                        self.unsupported(format!("group operation {g:?}"));
                        return Ok(());
                    }
                };
                (op, self.reg(&ops[2])?, 0, 0)
            }
        };
        let value_ty = match inst.class.opcode {
            Op::GroupAll | Op::GroupAny => Ty::Int(1),
            _ => self.m.info.ty(inst.result_type.unwrap_or(0))?.clone(),
        };
        if value_ty.lanes() != 1 {
            self.unsupported(format!("collective function on {}", value_ty.c_name()));
            return Ok(());
        }
        let bits = value_ty.bits();
        let sub_group = self.const_value(&ops[0]) == Some(3);
        self.code.push(Inst::Collective { op, bits, dst, src, id, id_n, loc, sub_group });
        Ok(())
    }

    fn atomic(&mut self, inst: &Instruction) -> Result<(), String> {
        let ops = &inst.operands;
        let (ptr, pty) = self.val(&ops[0])?;
        let bits = pty.pointee().map(Ty::bits).unwrap_or(32);
        // Atomics without a result (store, flag clear) still write the old value somewhere.
        let dst = match inst.result_id.and_then(|r| self.values.get(&r)) {
            Some(v) => v.0,
            None => self.alloc(1),
        };
        let zero = self.zero_reg();
        // Every atomic but the flag ones has (pointer, scope, semantics, ...) operands.
        let scope = self.scope(&ops[1]);
        let sem = self.const_value(&ops[2]).unwrap_or(0x10);
        let (order, mut fail_order) = (order_of(sem), order_of(sem));
        let (op, value, comparator) = match inst.class.opcode {
            Op::AtomicLoad => (AtomicOp::Load, zero, zero),
            Op::AtomicStore => (AtomicOp::Store, self.reg(&ops[3])?, zero),
            Op::AtomicExchange => (AtomicOp::Exchange, self.reg(&ops[3])?, zero),
            Op::AtomicCompareExchange | Op::AtomicCompareExchangeWeak => {
                fail_order = order_of(self.const_value(&ops[3]).unwrap_or(0x10));
                (AtomicOp::CompareExchange, self.reg(&ops[4])?, self.reg(&ops[5])?)
            }
            Op::AtomicIIncrement => (AtomicOp::Inc, zero, zero),
            Op::AtomicIDecrement => (AtomicOp::Dec, zero, zero),
            Op::AtomicFlagTestAndSet => (AtomicOp::FlagTestAndSet, zero, zero),
            Op::AtomicFlagClear => (AtomicOp::FlagClear, zero, zero),
            other => {
                let op = match other {
                    Op::AtomicIAdd => AtomicOp::Add,
                    Op::AtomicISub => AtomicOp::Sub,
                    Op::AtomicSMin => AtomicOp::SMin,
                    Op::AtomicUMin => AtomicOp::UMin,
                    Op::AtomicSMax => AtomicOp::SMax,
                    Op::AtomicUMax => AtomicOp::UMax,
                    Op::AtomicAnd => AtomicOp::And,
                    Op::AtomicOr => AtomicOp::Or,
                    _ => AtomicOp::Xor,
                };
                (op, self.reg(&ops[3])?, zero)
            }
        };
        let bits = if matches!(op, AtomicOp::FlagTestAndSet | AtomicOp::FlagClear) { 32 } else { bits };
        let loc = self.loc;
        self.code.push(Inst::Atomic { op, bits, order, fail_order, scope, dst, ptr, value, comparator, loc });
        Ok(())
    }

    fn ext_inst(&mut self, inst: &Instruction) -> Result<(), String> {
        let set = id(&inst.operands[0])?;
        let number = literal(&inst.operands[1])? as u32;
        if Some(set) != self.m.info.opencl_std {
            self.unsupported(format!("extended instruction {number} of a non-OpenCL.std set"));
            return Ok(());
        }
        let Some(op) = Cl::from_u32(number) else {
            self.unsupported(format!("OpenCL.std instruction {number}"));
            return Ok(());
        };
        let args = rest(inst, 2);
        // The operands indexed below (the grammar leaves extended instructions' operands open).
        let needed = match op {
            Cl::printf | Cl::cross | Cl::length | Cl::normalize | Cl::fast_length | Cl::fast_normalize => 1,
            Cl::vloadn | Cl::vload_half | Cl::vload_halfn | Cl::vloada_halfn | Cl::shuffle => 2,
            Cl::frexp | Cl::modf | Cl::fract | Cl::sincos | Cl::lgamma_r | Cl::distance | Cl::fast_distance => 2,
            Cl::vstoren
            | Cl::vstore_half
            | Cl::vstore_half_r
            | Cl::vstore_halfn
            | Cl::vstore_halfn_r
            | Cl::vstorea_halfn
            | Cl::vstorea_halfn_r
            | Cl::shuffle2
            | Cl::remquo => 3,
            _ => 0,
        };
        if args.len() < needed {
            return Err(format!("OpenCL.std {op:?} with {} operands (it needs {needed})", args.len()));
        }
        let dst = inst.result_id.and_then(|r| self.values.get(&r)).map(|v| v.0).unwrap_or(0);
        let rty = inst.result_type.map(|t| self.m.info.ty(t).cloned()).transpose()?.unwrap_or(Ty::Void);
        let loc = self.loc;
        match op {
            Cl::printf => {
                let fmt = self.reg(&args[0])?;
                let first_arg = self.args.len() as u32;
                for a in &args[1..] {
                    let (reg, ty) = self.val(a)?;
                    let kind = match ty.scalar() {
                        Ty::Int(b) => ArgKind::Int(*b),
                        Ty::Float(b) => ArgKind::Float(*b),
                        Ty::Pointer(..) => ArgKind::Pointer,
                        _ => ArgKind::Other,
                    };
                    self.args.push(Arg { reg, n: ty.lanes() as u16, kind });
                }
                self.code.push(Inst::Printf { dst, fmt, first_arg, num_args: (args.len() - 1) as u16 });
            }
            Cl::vloadn | Cl::vload_half | Cl::vload_halfn | Cl::vloada_halfn => {
                let offset = self.reg(&args[0])?;
                let (ptr, pty) = self.val(&args[1])?;
                let op =
                    if op == Cl::vloadn { VecMem::Load } else { VecMem::LoadHalf { aligned: op == Cl::vloada_halfn } };
                let elem =
                    if op == VecMem::Load { rty.scalar().size() } else { pty.pointee().map(Ty::size).unwrap_or(2) };
                self.code.push(Inst::VectorMemory {
                    op,
                    dst,
                    offset,
                    ptr,
                    elem: elem as u8,
                    n: rty.lanes() as u16,
                    loc,
                });
            }
            Cl::vstoren
            | Cl::vstore_half
            | Cl::vstore_half_r
            | Cl::vstore_halfn
            | Cl::vstore_halfn_r
            | Cl::vstorea_halfn
            | Cl::vstorea_halfn_r => {
                let (data, dty) = self.val(&args[0])?;
                let offset = self.reg(&args[1])?;
                let ptr = self.reg(&args[2])?;
                let round = match args.get(3) {
                    Some(Operand::FPRoundingMode(m)) => Some(half_round(*m)),
                    // rspirv reads every ext-inst operand as an id, literals too.
                    Some(Operand::IdRef(m)) => FPRoundingMode::from_u32(*m).map(half_round),
                    Some(o) => literal(o).ok().and_then(|m| FPRoundingMode::from_u32(m as u32)).map(half_round),
                    None => None,
                };
                let op = match op {
                    Cl::vstoren => VecMem::Store,
                    _ => VecMem::StoreHalf {
                        aligned: matches!(op, Cl::vstorea_halfn | Cl::vstorea_halfn_r),
                        round,
                        f64: dty.bits() == 64,
                    },
                };
                let elem = if op == VecMem::Store { dty.scalar().size() } else { 2 };
                self.code.push(Inst::VectorMemory {
                    op,
                    dst: data,
                    offset,
                    ptr,
                    elem: elem as u8,
                    n: dty.lanes() as u16,
                    loc,
                });
            }
            Cl::shuffle | Cl::shuffle2 => {
                let (a, aty) = self.val(&args[0])?;
                let (b, mask_op) = if op == Cl::shuffle2 { (self.reg(&args[1])?, &args[2]) } else { (a, &args[1]) };
                let (mask, mty) = self.val(mask_op)?;
                self.code.push(Inst::ShuffleDynamic {
                    dst,
                    a,
                    b,
                    na: aty.lanes() as u16,
                    mask,
                    n: rty.lanes() as u16,
                    mask_bits: mty.bits(),
                });
            }
            Cl::frexp | Cl::modf | Cl::fract | Cl::sincos | Cl::lgamma_r | Cl::remquo => {
                let a = self.reg(&args[0])?;
                let (b, out_op) = if op == Cl::remquo { (self.reg(&args[1])?, &args[2]) } else { (a, &args[1]) };
                let (out, oty) = self.val(out_op)?;
                let out_bits = oty.pointee().map(Ty::bits).unwrap_or(32);
                self.code.push(Inst::MathOut {
                    op,
                    bits: rty.scalar().bits(),
                    out_bits,
                    dst,
                    a,
                    b,
                    out,
                    n: rty.lanes() as u16,
                    loc,
                });
            }
            Cl::cross
            | Cl::length
            | Cl::distance
            | Cl::normalize
            | Cl::fast_length
            | Cl::fast_distance
            | Cl::fast_normalize => {
                let (a, aty) = self.val(&args[0])?;
                let b = if args.len() > 1 { self.reg(&args[1])? } else { a };
                let geo = match op {
                    Cl::cross => Geo::Cross,
                    Cl::length => Geo::Length,
                    Cl::distance => Geo::Distance,
                    Cl::normalize => Geo::Normalize,
                    Cl::fast_length => Geo::FastLength,
                    Cl::fast_distance => Geo::FastDistance,
                    _ => Geo::FastNormalize,
                };
                self.code.push(Inst::Geometric {
                    op: geo,
                    bits: aty.scalar().bits(),
                    dst,
                    a,
                    b,
                    n: aty.lanes() as u16,
                });
            }
            Cl::prefetch => {}
            _ => {
                let n = rty.lanes();
                let mut regs = [0; 3];
                let mut kind_ty = rty.clone();
                for (i, a) in args.iter().take(3).enumerate() {
                    let (r, t) = self.val(a)?;
                    if i == 0 && op != Cl::nan {
                        kind_ty = t.clone();
                    }
                    regs[i] = self.broadcast(r, t.lanes(), n);
                }
                let kind = match kind_ty.scalar() {
                    Ty::Float(64) => MathKind::F64,
                    Ty::Float(32) => MathKind::F32,
                    Ty::Float(_) => MathKind::F16,
                    t => MathKind::Int(t.bits()),
                };
                self.code.push(Inst::Math { op, kind, dst, args: regs, n: n as u16 });
            }
        }
        Ok(())
    }
}

fn half_round(m: FPRoundingMode) -> ir::HalfRound {
    match m {
        FPRoundingMode::RTZ => ir::HalfRound::Rtz,
        FPRoundingMode::RTP => ir::HalfRound::Rtp,
        FPRoundingMode::RTN => ir::HalfRound::Rtn,
        _ => ir::HalfRound::Rte,
    }
}

/// The fence flags in a memory-semantics mask.
fn fence(semantics: u64) -> Fence {
    // Image memory (0x800) lives in global allocations here.
    Fence { local: semantics & 0x100 != 0, global: semantics & 0xA00 != 0 }
}

/// The memory order in a memory-semantics mask (the strongest bit set wins).
fn order_of(semantics: u64) -> MemOrder {
    if semantics & 0x10 != 0 {
        MemOrder::SeqCst
    } else if semantics & 0x8 != 0 || semantics & 0x6 == 0x6 {
        MemOrder::AcqRel
    } else if semantics & 0x4 != 0 {
        MemOrder::Release
    } else if semantics & 0x2 != 0 {
        MemOrder::Acquire
    } else {
        MemOrder::Relaxed
    }
}

/// A SPIR-V `Scope` value.
fn scope_of(value: u64) -> Scope {
    match value {
        0 => Scope::AllDevices,
        2 => Scope::WorkGroup,
        3 => Scope::SubGroup,
        4 => Scope::WorkItem,
        _ => Scope::Device,
    }
}

fn builtin(b: BuiltIn) -> Option<Builtin> {
    Some(match b {
        BuiltIn::GlobalInvocationId => Builtin::GlobalId,
        BuiltIn::LocalInvocationId => Builtin::LocalId,
        BuiltIn::WorkgroupId => Builtin::GroupId,
        BuiltIn::NumWorkgroups => Builtin::NumGroups,
        BuiltIn::GlobalSize => Builtin::GlobalSize,
        BuiltIn::WorkgroupSize => Builtin::LocalSize,
        BuiltIn::EnqueuedWorkgroupSize => Builtin::EnqueuedLocalSize,
        BuiltIn::GlobalOffset => Builtin::GlobalOffset,
        BuiltIn::WorkDim => Builtin::WorkDim,
        BuiltIn::GlobalLinearId => Builtin::GlobalLinearId,
        BuiltIn::LocalInvocationIndex => Builtin::LocalLinearId,
        BuiltIn::SubgroupSize => Builtin::SubgroupSize,
        BuiltIn::SubgroupMaxSize => Builtin::SubgroupMaxSize,
        BuiltIn::NumSubgroups | BuiltIn::NumEnqueuedSubgroups => Builtin::NumSubgroups,
        BuiltIn::SubgroupId => Builtin::SubgroupId,
        BuiltIn::SubgroupLocalInvocationId => Builtin::SubgroupLocalId,
        _ => return None,
    })
}

/// The alignment OpenCL requires of a load or store of `ty` with these memory operands: the
/// `Aligned` literal clang gives (the type's alignment, less for a member of a packed struct),
/// capped at the type's own alignment (a `float3` is aligned as a `float4`, a struct as its
/// widest member); 1, which checks nothing, when the operand is missing.
fn required_alignment(memory_operands: &[Operand], ty: &Ty) -> u8 {
    let aligned = match memory_operands {
        [Operand::MemoryAccess(access), Operand::LiteralBit32(n), ..]
            if access.contains(rspirv::spirv::MemoryAccess::ALIGNED) =>
        {
            *n as u64
        }
        _ => return 1,
    };
    let natural = ty.align().max(1);
    let align = aligned.min(natural).clamp(1, 128);
    if align.is_power_of_two() { align as u8 } else { 1 }
}
