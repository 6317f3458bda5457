//! Lowers a loaded SPIR-V module to [`crate::ir`] in one pass per function: dense registers,
//! constants in a register template, phis turned into copies on their edges, branch targets
//! resolved to instruction indices, builtins and OpenCL.std calls as IR ops, a source location on
//! every memory access, and each kernel's signature reflected.
//!
//! This file holds the module- and function-wide state, kernel reflection and the dispatch of each
//! instruction to its family: `memory` (variables, loads, stores, access chains, pointer casts),
//! `values` (arithmetic, comparisons, conversions), `composite` (vectors and aggregates),
//! `control` (branches, phi copies, calls), `sync` (barriers, atomics, collectives, async copies),
//! `image` and `ext_inst` (OpenCL.std). Failures are [`LowerError`]s (`error`). The families see
//! the loaded module and the IR being built, never the program or the executor.

use std::collections::{HashMap, HashSet};

use rspirv::dr::{self, Instruction, Operand};
use rspirv::spirv::{Op, StorageClass};

use super::module::{Const, ModuleInfo, SpecConstantOps, id, literal};
use super::types::Ty;
use crate::ir::reflect::{AddressSpace, KernelArg, KernelInfo};
use crate::ir::{self, Arg, Builtin, Index, Inst, Reg};

mod composite;
mod control;
mod error;
mod ext_inst;
mod image;
mod memory;
mod sync;
mod values;

pub use error::LowerError;

/// Labels for edge trampolines, beyond any real SPIR-V id.
const TRAMPOLINE_BASE: u32 = 0x8000_0000;

/// Register slots one function's frame may have: every work-item holds a copy of its frames,
/// so this bounds the memory a work-item needs (2 MiB). Kernels use hundreds.
pub const MAX_FRAME_SLOTS: usize = 1 << 18;

/// Register slots all the functions of a module may have together (their templates).
const MAX_MODULE_SLOTS: u64 = 1 << 22;

/// Lowers `module` to IR as it comes: the optimiser and the validation run after it (see
/// `Program::from_spirv`).
pub fn lower(module: &dr::Module, spec_ops: SpecConstantOps) -> Result<ir::Module, LowerError> {
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
        pointer_bits: pointer_bits(module),
    };
    lowering.out.globals = lowering.info.global_vars.clone().into();
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
        let lowered = FunctionLowering::new(&mut lowering, &func_ids).lower(f).map_err(|e| {
            if name.is_empty() { e } else { LowerError::InFunction { name: name.clone(), error: Box::new(e) } }
        })?;
        lowering.module_slots += lowered.template.len() as u64;
        if lowering.module_slots > MAX_MODULE_SLOTS {
            return Err(LowerError::ModuleSlots);
        }
        lowering.out.functions.push(ir::Function { name, ..lowered });
    }
    for ep in &module.entry_points {
        let kernel = lowering.kernel(module, ep, &func_ids)?;
        lowering.out.kernels.push(kernel);
    }
    Ok(lowering.out)
}

/// The memory layout of a value of type `ty`, if it fits in registers.
fn value_layout(ty: &Ty) -> Result<ir::Layout, LowerError> {
    match ty.slots() as usize {
        n if n <= MAX_FRAME_SLOTS => Ok(ty.layout()),
        n => Err(LowerError::ValueSlots(n)),
    }
}

/// Fails on a recursive call graph: OpenCL C forbids recursion, but clang does not diagnose it.
fn check_recursion(module: &dr::Module, func_ids: &HashMap<u32, u32>) -> Result<(), LowerError> {
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
            return Err(LowerError::Recursion { function: name });
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
    /// The module's pointer width: 32 under `Physical32` addressing, else 64 (what a pointer
    /// converted to an integer holds, see [`crate::ir::value::pointer_to_int`]).
    pointer_bits: u8,
}

/// 32 for a module with `Physical32` addressing, else 64.
fn pointer_bits(module: &dr::Module) -> u8 {
    let model = module.memory_model.as_ref().and_then(|m| m.operands.first());
    if matches!(model, Some(dr::Operand::AddressingModel(rspirv::spirv::AddressingModel::Physical32))) {
        32
    } else {
        64
    }
}

impl Lowering {
    fn layout(&mut self, ty: &Ty) -> Result<u32, LowerError> {
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
        std::sync::Arc::make_mut(&mut self.out.locations).push(ir::SourceLoc { file: name, line, column });
        let l = self.out.locations.len() as u32 - 1;
        self.locations.insert((file, line, column), l);
        l
    }

    fn kernel(
        &mut self,
        module: &dr::Module,
        ep: &Instruction,
        func_ids: &HashMap<u32, u32>,
    ) -> Result<ir::Kernel, LowerError> {
        let fid = id(&ep.operands[1])?;
        let Some(Operand::LiteralString(name)) = ep.operands.get(2) else {
            return Err(LowerError::EntryPointWithoutName);
        };
        let function = *func_ids.get(&fid).ok_or(LowerError::EntryPointWithoutFunction)?;
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
                Ty::Opaque(what) => (AddressSpace::Private, ir::ParamKind::Unsupported(*what), 8, 0),
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
fn extracted_member(ty: &Ty, inst: &Instruction) -> Result<Option<u32>, LowerError> {
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

    fn check_frame(&self) -> Result<(), LowerError> {
        if self.frame_overflow {
            return Err(LowerError::FrameSlots);
        }
        Ok(())
    }

    fn lower(mut self, f: &dr::Function) -> Result<ir::Function, LowerError> {
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
    fn val(&mut self, op: &Operand) -> Result<(Reg, Ty), LowerError> {
        let i = id(op)?;
        if let Some(v) = self.values.get(&i) {
            return Ok(v.clone());
        }
        if let Some(&r) = self.const_regs.get(&i) {
            return Ok((r, self.m.info.consts[&i].ty.clone()));
        }
        let Some(Const { ty, slots }) = self.m.info.consts.get(&i).cloned() else {
            return Err(LowerError::UnknownOperand(i));
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

    fn reg(&mut self, op: &Operand) -> Result<Reg, LowerError> {
        Ok(self.val(op)?.0)
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

    fn unsupported(&mut self, what: String) {
        self.m.out.unsupported.push(what);
        let what = self.m.out.unsupported.len() as u32 - 1;
        self.code.push(Inst::Unsupported { what, loc: self.loc });
    }

    fn result(&self, inst: &Instruction) -> Result<(Reg, Ty), LowerError> {
        let r = inst.result_id.ok_or(LowerError::InstructionWithoutResult)?;
        self.values.get(&r).cloned().ok_or(LowerError::NoRegister(r))
    }

    /// Lowers one instruction of the block `label`: the annotations here, every other family in
    /// its own file.
    fn instruction(&mut self, label: u32, inst: &Instruction) -> Result<(), LowerError> {
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
            Op::Variable => self.variable(inst)?,
            Op::Load => self.load(inst)?,
            Op::Store => self.store_op(inst)?,
            Op::AccessChain | Op::InBoundsAccessChain => self.access_chain(inst, false)?,
            Op::PtrAccessChain | Op::InBoundsPtrAccessChain => self.access_chain(inst, true)?,
            Op::CopyMemory | Op::CopyMemorySized => self.copy_memory(inst)?,
            Op::PtrDiff => self.ptr_diff(inst)?,
            Op::Bitcast => self.bitcast(inst)?,
            Op::CopyObject | Op::PtrCastToGeneric | Op::GenericCastToPtr | Op::ConvertPtrToU | Op::ConvertUToPtr => {
                self.pointer_cast(inst)?
            }
            Op::GenericCastToPtrExplicit => self.cast_to_space(inst)?,
            Op::GenericPtrMemSemantics => self.pointer_fence(inst)?,
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
            Op::Any | Op::All => self.reduce(inst)?,
            Op::Select => self.select(inst)?,
            Op::Dot => self.dot(inst)?,
            Op::CompositeExtract => self.composite_extract(inst)?,
            Op::CompositeInsert => self.composite_insert(inst)?,
            Op::CompositeConstruct => self.composite_construct(inst)?,
            Op::VectorShuffle => self.vector_shuffle(inst)?,
            Op::VectorExtractDynamic => self.extract_dynamic(inst)?,
            Op::VectorInsertDynamic => self.insert_dynamic(inst)?,
            Op::Branch => self.branch(label, inst)?,
            Op::BranchConditional => self.branch_conditional(label, inst)?,
            Op::Switch => self.switch(label, inst)?,
            Op::Return => self.code.push(Inst::Return { src: 0, n: 0 }),
            Op::ReturnValue => self.return_value(inst)?,
            Op::Unreachable => self.code.push(Inst::Unreachable { loc: self.loc }),
            Op::FunctionCall => self.function_call(inst)?,
            Op::ControlBarrier => self.control_barrier(inst),
            Op::MemoryBarrier => self.memory_barrier(inst),
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
            Op::GroupAsyncCopy => self.async_copy(inst)?,
            Op::GroupWaitEvents => self.wait_events(inst)?,
            Op::ExtInst => self.ext_inst(inst)?,
            Op::SampledImage => self.sampled_image(inst)?,
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
}
