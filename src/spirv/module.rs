//! Module-scope facts gathered before functions are lowered: names, decorations, types,
//! constants (as register slot values) and module-scope variables (as allocations).

use std::collections::{HashMap, HashSet};

use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{BuiltIn, Decoration, FPRoundingMode, FunctionParameterAttribute, Op, StorageClass};

use super::types::Ty;
use crate::ir::value::{SPACE_GLOBAL, SPACE_LOCAL, Sampler, address, sign_extend};
use crate::ir::{OpaqueKind, Variable};

/// `OpSpecConstantOp`s taken out of the module before rspirv reads it: result id to the inner
/// opcode and its operand ids. rspirv cannot parse some of them (a pointer access chain with no
/// trailing index), so the pre-pass of [`super::load_and_lower`] leaves an `OpUndef` in their
/// place and the lowering evaluates them from here.
pub type SpecConstantOps = HashMap<u32, (u32, Vec<u32>)>;

/// A constant: its type and its value as register slots.
#[derive(Debug, Clone)]
pub struct Const {
    pub ty: Ty,
    pub slots: Vec<u64>,
}

/// What a module-scope variable id stands for.
#[derive(Debug, Clone, Copy)]
pub enum GlobalRef {
    Builtin(BuiltIn),
}

/// Everything module-scope the function lowering needs.
#[derive(Default)]
pub struct ModuleInfo {
    pub names: HashMap<u32, String>,
    pub strings: HashMap<u32, String>,
    pub builtins: HashMap<u32, BuiltIn>,
    pub byval: HashSet<u32>,
    pub saturated: HashSet<u32>,
    pub rounding: HashMap<u32, FPRoundingMode>,
    pub types: HashMap<u32, Ty>,
    pub consts: HashMap<u32, Const>,
    /// The constants that are `OpUndef` (zero in `consts`; uninitialised to check 9).
    pub undefs: HashSet<u32>,
    pub globals: HashMap<u32, GlobalRef>,
    pub global_vars: Vec<Variable>,
    pub local_vars: Vec<Variable>,
    pub reqd_local_size: HashMap<u32, [u64; 3]>,
    pub opencl_std: Option<u32>,
    spec_ops: SpecConstantOps,
}

pub fn id(op: &Operand) -> Result<u32, String> {
    match op {
        Operand::IdRef(i) | Operand::IdScope(i) | Operand::IdMemorySemantics(i) => Ok(*i),
        other => Err(format!("expected an id operand, found {other:?}")),
    }
}

pub fn literal(op: &Operand) -> Result<u64, String> {
    match op {
        Operand::LiteralBit32(v) => Ok(*v as u64),
        Operand::LiteralBit64(v) => Ok(*v),
        Operand::LiteralExtInstInteger(v) => Ok(*v as u64),
        Operand::LiteralSpecConstantOpInteger(v) => Ok(*v as u64),
        other => Err(format!("expected a literal operand, found {other:?}")),
    }
}

impl ModuleInfo {
    pub fn gather(module: &Module, spec_ops: SpecConstantOps) -> Result<ModuleInfo, String> {
        let mut info = ModuleInfo { spec_ops, ..ModuleInfo::default() };
        for inst in &module.ext_inst_imports {
            if let Some(Operand::LiteralString(s)) = inst.operands.first()
                && s == "OpenCL.std"
            {
                info.opencl_std = inst.result_id;
            }
        }
        for inst in &module.debug_names {
            if let (Some(Operand::IdRef(t)), Some(Operand::LiteralString(s))) =
                (inst.operands.first(), inst.operands.get(1))
            {
                info.names.insert(*t, s.clone());
            }
        }
        for inst in &module.debug_string_source {
            if inst.class.opcode == Op::String
                && let (Some(r), Some(Operand::LiteralString(s))) = (inst.result_id, inst.operands.first())
            {
                info.strings.insert(r, s.clone());
            }
        }
        for inst in &module.execution_modes {
            if let [Operand::IdRef(f), Operand::ExecutionMode(rspirv::spirv::ExecutionMode::LocalSize), x, y, z, ..] =
                inst.operands.as_slice()
            {
                info.reqd_local_size.insert(*f, [literal(x)?, literal(y)?, literal(z)?]);
            }
        }
        let mut packed = HashSet::new();
        for inst in &module.annotations {
            info.decoration(inst, &mut packed);
        }
        for inst in &module.types_global_values {
            info.global_value(inst, &packed)?;
        }
        Ok(info)
    }

    fn decoration(&mut self, inst: &Instruction, packed: &mut HashSet<u32>) {
        if inst.class.opcode != Op::Decorate {
            return;
        }
        let Some(Operand::IdRef(target)) = inst.operands.first() else { return };
        match inst.operands.get(1..) {
            Some([Operand::Decoration(Decoration::BuiltIn), Operand::BuiltIn(b), ..]) => {
                self.builtins.insert(*target, *b);
            }
            Some([Operand::Decoration(Decoration::FuncParamAttr), Operand::FunctionParameterAttribute(a), ..])
                if *a == FunctionParameterAttribute::ByVal =>
            {
                self.byval.insert(*target);
            }
            Some([Operand::Decoration(Decoration::SaturatedConversion), ..]) => {
                self.saturated.insert(*target);
            }
            Some([Operand::Decoration(Decoration::FPRoundingMode), Operand::FPRoundingMode(m), ..]) => {
                self.rounding.insert(*target, *m);
            }
            Some([Operand::Decoration(Decoration::CPacked), ..]) => {
                packed.insert(*target);
            }
            _ => {}
        }
    }

    pub fn ty(&self, id: u32) -> Result<&Ty, String> {
        self.types.get(&id).ok_or_else(|| format!("unknown type %{id}"))
    }

    fn global_value(&mut self, inst: &Instruction, packed: &HashSet<u32>) -> Result<(), String> {
        let ops = &inst.operands;
        let result = inst.result_id.unwrap_or(0);
        let ty = match inst.class.opcode {
            Op::TypeVoid => Some(Ty::Void),
            Op::TypeBool => Some(Ty::Bool),
            Op::TypeInt => match literal(&ops[0])? {
                w @ (8 | 16 | 32 | 64) => Some(Ty::Int(w as u8)),
                w => return Err(format!("OpTypeInt %{result} of {w} bits (OpenCL has 8, 16, 32 and 64)")),
            },
            Op::TypeFloat => match literal(&ops[0])? {
                w @ (16 | 32 | 64) => Some(Ty::Float(w as u8)),
                w => return Err(format!("OpTypeFloat %{result} of {w} bits (OpenCL has 16, 32 and 64)")),
            },
            Op::TypeVector => {
                let component = self.ty(id(&ops[0])?)?.clone();
                if !matches!(component, Ty::Int(_) | Ty::Float(_) | Ty::Bool) {
                    return Err(format!("OpTypeVector %{result} of {component:?} components"));
                }
                match literal(&ops[1])? {
                    n @ (2 | 3 | 4 | 8 | 16) => Some(Ty::Vector(Box::new(component), n as u32)),
                    n => {
                        return Err(format!("OpTypeVector %{result} of {n} components (OpenCL has 2, 3, 4, 8 and 16)"));
                    }
                }
            }
            Op::TypeArray => {
                let len = self.consts.get(&id(&ops[1])?).ok_or("array length is not a constant")?;
                let len = match (&len.ty, len.slots.as_slice()) {
                    (Ty::Int(_), &[n]) => n,
                    _ => return Err(format!("OpTypeArray %{result}: its length is not an integer constant")),
                };
                Some(Ty::Array(Box::new(self.ty(id(&ops[0])?)?.clone()), len))
            }
            Op::TypeStruct => {
                let fields = ops.iter().map(|o| Ok(self.ty(id(o)?)?.clone())).collect::<Result<Vec<_>, String>>()?;
                Some(Ty::Struct(fields, packed.contains(&result)))
            }
            Op::TypePointer => {
                let Operand::StorageClass(sc) = ops[0] else { return Err("bad OpTypePointer".into()) };
                // Pointers to opaque or forward-declared types point to bytes.
                let pointee = self.types.get(&id(&ops[1])?).cloned().unwrap_or(Ty::Int(8));
                Some(Ty::Pointer(sc, Box::new(pointee)))
            }
            Op::TypeForwardPointer => None,
            Op::TypeFunction => Some(Ty::Function),
            Op::TypeEvent | Op::TypeDeviceEvent => Some(Ty::Opaque(OpaqueKind::Event)),
            Op::TypeSampler => Some(Ty::Sampler),
            Op::TypeImage => Some(Ty::Image),
            Op::TypeSampledImage => Some(Ty::SampledImage),
            Op::TypeOpaque => Some(Ty::Opaque(OpaqueKind::Opaque)),
            Op::TypePipe | Op::TypeQueue | Op::TypeReserveId => Some(Ty::Opaque(OpaqueKind::Pipe)),
            _ => None,
        };
        if let Some(ty) = ty {
            ty.check().map_err(|e| format!("type %{result}: {e}"))?;
            self.types.insert(result, ty);
            return Ok(());
        }
        let value = match inst.class.opcode {
            Op::Constant | Op::SpecConstant => {
                let ty = self.ty(inst.result_type.unwrap_or(0))?.clone();
                if !matches!(ty, Ty::Int(_) | Ty::Float(_)) {
                    return Err(format!("OpConstant %{result} of type {ty:?}"));
                }
                let mut v = literal(&ops[0])?;
                if let Some(hi) = ops.get(1) {
                    v |= literal(hi)? << 32;
                }
                Some(Const { ty, slots: vec![v] })
            }
            Op::ConstantTrue | Op::SpecConstantTrue => Some(Const { ty: Ty::Bool, slots: vec![1] }),
            Op::ConstantFalse | Op::SpecConstantFalse => Some(Const { ty: Ty::Bool, slots: vec![0] }),
            Op::Undef if self.spec_ops.contains_key(&result) => Some(self.spec_constant_op(inst)?),
            Op::ConstantNull | Op::Undef => {
                if inst.class.opcode == Op::Undef {
                    self.undefs.insert(result);
                }
                let ty = self.ty(inst.result_type.unwrap_or(0))?.clone();
                let slots = vec![0; constant_slots(&ty, result)?];
                Some(Const { ty, slots })
            }
            Op::ConstantComposite | Op::SpecConstantComposite => {
                let ty = self.ty(inst.result_type.unwrap_or(0))?.clone();
                let want = constant_slots(&ty, result)?;
                let mut slots = Vec::new();
                for o in ops {
                    let c = self.consts.get(&id(o)?).ok_or("composite member is not a constant")?;
                    if slots.len() + c.slots.len() > want {
                        break;
                    }
                    slots.extend_from_slice(&c.slots);
                }
                if slots.len() != want {
                    return Err(format!("constant %{result} does not have the {want} values of its type"));
                }
                Some(Const { ty, slots })
            }
            Op::ConstantSampler => {
                let [
                    Operand::SamplerAddressingMode(a),
                    Operand::LiteralBit32(normalized),
                    Operand::SamplerFilterMode(f),
                ] = ops.as_slice()
                else {
                    return Err("bad OpConstantSampler".into());
                };
                let sampler = Sampler::from_spirv(*a as u32, *normalized, *f as u32);
                Some(Const { ty: Ty::Sampler, slots: vec![sampler.bits()] })
            }
            Op::Variable => {
                self.module_variable(inst)?;
                None
            }
            _ => None,
        };
        if let Some(c) = value {
            self.consts.insert(result, c);
        }
        Ok(())
    }

    /// Evaluates a set-aside `OpSpecConstantOp`: casts pass their operand through, access chains
    /// offset a constant address.
    fn spec_constant_op(&self, inst: &Instruction) -> Result<Const, String> {
        let result = inst.result_id.unwrap_or(0);
        let ty = self.ty(inst.result_type.unwrap_or(0))?.clone();
        let (opcode, operands) = &self.spec_ops[&result];
        let value = |i: usize| -> Result<&Const, String> {
            let id = operands.get(i).ok_or("OpSpecConstantOp is missing an operand")?;
            self.consts.get(id).ok_or_else(|| format!("OpSpecConstantOp operand %{id} is not a constant"))
        };
        let op = Op::from_u32(*opcode).ok_or_else(|| format!("OpSpecConstantOp with unknown opcode {opcode}"))?;
        let slots = match op {
            Op::Bitcast | Op::PtrCastToGeneric | Op::GenericCastToPtr | Op::ConvertPtrToU | Op::ConvertUToPtr => {
                value(0)?.slots.clone()
            }
            Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::InBoundsPtrAccessChain => {
                let base = value(0)?;
                let mut pointee = base.ty.pointee().cloned().ok_or("access chain on a non-pointer")?;
                let mut addr = *base.slots.first().ok_or("access chain on a non-scalar constant")? as i64;
                let mut rest = 1;
                if matches!(op, Op::PtrAccessChain | Op::InBoundsPtrAccessChain) {
                    addr = addr.wrapping_add(index_value(value(1)?).wrapping_mul(pointee.stride() as i64));
                    rest = 2;
                }
                for i in rest..operands.len() {
                    let index = index_value(value(i)?);
                    let (offset, next) = match &pointee {
                        Ty::Struct(fields, _) => {
                            let offsets = pointee.field_offsets();
                            let at = offsets.get(index as usize).ok_or("struct index out of range")?;
                            (*at as i64, fields[index as usize].clone())
                        }
                        Ty::Array(e, _) => (index.wrapping_mul(e.stride() as i64), (**e).clone()),
                        Ty::Vector(e, _) => (index.wrapping_mul(e.size() as i64), (**e).clone()),
                        other => return Err(format!("access chain into {other:?}")),
                    };
                    addr = addr.wrapping_add(offset);
                    pointee = next;
                }
                vec![addr as u64]
            }
            other => return Err(format!("OpSpecConstantOp {other:?} is not supported")),
        };
        Ok(Const { ty, slots })
    }

    fn module_variable(&mut self, inst: &Instruction) -> Result<(), String> {
        let result = inst.result_id.unwrap_or(0);
        let ptr_ty = self.ty(inst.result_type.unwrap_or(0))?.clone();
        let Ty::Pointer(sc, pointee) = &ptr_ty else { return Err("variable of non-pointer type".into()) };
        if let Some(b) = self.builtins.get(&result) {
            self.globals.insert(result, GlobalRef::Builtin(*b));
            return Ok(());
        }
        if pointee.size() > MAX_VARIABLE_BYTES {
            return Err(format!(
                "module-scope variable %{result} of {} bytes (at most {MAX_VARIABLE_BYTES})",
                pointee.size()
            ));
        }
        let init = match inst.operands.get(1) {
            Some(o) => {
                let c = self.consts.get(&id(o)?).ok_or("variable initialiser is not a constant")?;
                if c.ty.size() != pointee.size() {
                    return Err(format!("variable %{result} has an initialiser of another size"));
                }
                serialize(&c.ty, &c.slots)
            }
            None => Vec::new(),
        };
        // clang keeps the constant part of a private aggregate's initialiser (`constinit`) in a
        // module-scope constant, which the translator puts in the Function storage class: it is
        // only ever copied from, so one read-only copy serves every work-item.
        let private_constant = *sc == StorageClass::Function && inst.operands.get(1).is_some();
        let var = Variable {
            name: self.names.get(&result).cloned().unwrap_or_default(),
            size: pointee.size() as u32,
            align: pointee.align() as u32,
            init,
            writable: *sc != StorageClass::UniformConstant && !private_constant,
        };
        let addr = match sc {
            StorageClass::Workgroup => {
                self.local_vars.push(var);
                address(SPACE_LOCAL, self.local_vars.len() as u64 - 1, 0)
            }
            StorageClass::UniformConstant | StorageClass::CrossWorkgroup | StorageClass::Function
                if *sc != StorageClass::Function || private_constant =>
            {
                self.global_vars.push(var);
                address(SPACE_GLOBAL, self.global_vars.len() as u64, 0)
            }
            StorageClass::Function => {
                return Err(
                    "module-scope variable in storage class Function without an initialiser is not supported".into()
                );
            }
            other => return Err(format!("module-scope variable in storage class {other:?} is not supported")),
        };
        self.consts.insert(result, Const { ty: ptr_ty.clone(), slots: vec![addr] });
        Ok(())
    }
}

/// The bytes a module-scope variable may have: the emulator allocates them for every launch
/// (`__global`) or every work-group (`__local`).
pub const MAX_VARIABLE_BYTES: u64 = 1 << 28;

/// The most register slots one constant may have (a `__constant` table's initialiser).
pub const MAX_CONSTANT_SLOTS: u32 = 1 << 22;

/// The slots of a constant of type `ty`, if not too many.
fn constant_slots(ty: &Ty, result: u32) -> Result<usize, String> {
    match ty.slots() {
        n if n <= MAX_CONSTANT_SLOTS => Ok(n as usize),
        n => Err(format!("constant %{result} of {n} values (at most {MAX_CONSTANT_SLOTS})")),
    }
}

/// A constant index, sign-extended from its width.
fn index_value(c: &Const) -> i64 {
    let bits = match c.ty {
        Ty::Int(b) => b,
        _ => 64,
    };
    sign_extend(c.slots.first().copied().unwrap_or(0), bits)
}

/// Lays out a constant's slots as the bytes of its type in memory.
pub fn serialize(ty: &Ty, slots: &[u64]) -> Vec<u8> {
    let layout = ty.layout();
    let mut bytes = vec![0u8; layout.size as usize];
    for (leaf, v) in layout.leaves.iter().zip(slots) {
        let at = leaf.offset as usize;
        bytes[at..at + leaf.size as usize].copy_from_slice(&v.to_le_bytes()[..leaf.size as usize]);
    }
    bytes
}
