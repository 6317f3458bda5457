//! The last step of the build: checks that a lowered and optimised [`ir::Module`] stays within
//! what the interpreter indexes without checking. Every register range of every instruction lies inside
//! its function's frame (below the length of its register template), every branch target and
//! switch case lands on an instruction of the same function, every table index (layouts,
//! shuffle lanes, access-chain indices, call and printf arguments, switch tables, functions,
//! names of unsupported features) exists, lane counts fit the interpreter's fixed buffers, and
//! no function can run off the end of its code.
//!
//! The register check is made twice: once per variant below, with the widths the interpreter
//! uses, and once over every range [`ir::operands`] reports for the instruction, so that an
//! operand the per-variant list forgot is still caught. A module that passes is what the
//! interpreter may rely on: it can index registers and code with these values without a bounds
//! check of its own (each such unchecked access still needs its own `SAFETY` comment naming this
//! check). Every module the lowering returns has passed it, after [`crate::opt`] has rewritten it.
//!
//! It sees only the IR, not the SPIR-V nor the passes that made it: a failure here means the
//! module was malformed in a way the lowering or the optimiser did not catch itself, and the
//! message names the function and the instruction.

use crate::ir::{self, Inst, Reg, operands};

/// Lanes the interpreter handles in one vector value (its shuffle buffers hold 16).
const MAX_LANES: u64 = 16;

/// The bytes [`Inst::Bitcast`] reinterprets through (its buffer on the stack).
const MAX_BITCAST_BYTES: u64 = 128;

pub fn check_module(module: &ir::Module) -> Result<(), String> {
    check_layouts(module)?;
    for index in 0..module.functions.len() {
        check_function(module, index)?;
    }
    (0..module.kernels.len()).try_for_each(|k| check_kernel(module, k))
}

/// [`check_module`] for one launch of kernel `kernel` of a module specialised for it
/// ([`crate::opt::specialise`]): the layouts, `functions` (those the kernel can reach) and the
/// kernel's signature. The functions it cannot reach are not run, and not checked.
pub fn check_launch(module: &ir::Module, kernel: usize, functions: &[usize]) -> Result<(), String> {
    check_layouts(module)?;
    functions.iter().try_for_each(|&f| check_function(module, f))?;
    check_kernel(module, kernel)
}

fn check_layouts(module: &ir::Module) -> Result<(), String> {
    for layout in &module.layouts {
        for leaf in &layout.leaves {
            if leaf.size == 0 || leaf.size > 8 || leaf.offset as u64 + leaf.size as u64 > layout.size as u64 {
                return Err(format!("a value layout with a {}-byte scalar at offset {}", leaf.size, leaf.offset));
            }
        }
    }
    Ok(())
}

fn check_function(module: &ir::Module, index: usize) -> Result<(), String> {
    let function = module.functions.get(index).ok_or_else(|| format!("no function {index}"))?;
    Checker { module, function }.check().map_err(|e| {
        let name = if function.name.is_empty() { format!("function {index}") } else { function.name.clone() };
        format!("in function '{name}': {e}")
    })
}

/// A kernel's function exists and its parameters match the kernel's arguments: handles take one
/// slot, a by-value argument as many as its layout has scalars, or none where its value is bound
/// in the function's register template (a launch's specialisation).
fn check_kernel(module: &ir::Module, k: usize) -> Result<(), String> {
    let kernel = &module.kernels[k];
    let function = module
        .functions
        .get(kernel.function as usize)
        .ok_or_else(|| format!("kernel '{}' names no function", kernel.info.name))?;
    if kernel.params.len() != function.params.len() || kernel.info.args.len() != function.params.len() {
        return Err(format!("kernel '{}': its arguments do not match its function's parameters", kernel.info.name));
    }
    for (kind, &(_, slots)) in kernel.params.iter().zip(&function.params) {
        let layout = match kind {
            ir::ParamKind::Value { layout } => Some((*layout, slots)),
            ir::ParamKind::ByValPointer { layout } => Some((*layout, 1)),
            _ if slots != 1 => {
                return Err(format!("kernel '{}': a handle argument of {slots} slots", kernel.info.name));
            }
            _ => None,
        };
        if let Some((layout, slots)) = layout {
            let known = module.layouts.get(layout as usize).ok_or("a kernel argument with no layout")?;
            if matches!(kind, ir::ParamKind::Value { .. }) && slots != 0 && known.leaves.len() != slots as usize {
                return Err(format!("kernel '{}': an argument's layout does not match its slots", kernel.info.name));
            }
        }
    }
    Ok(())
}

struct Checker<'a> {
    module: &'a ir::Module,
    function: &'a ir::Function,
}

impl Checker<'_> {
    /// `n` registers from `r` lie in the frame.
    fn regs(&self, r: Reg, n: u64) -> Result<(), String> {
        if r as u64 + n > self.function.template.len() as u64 {
            return Err(format!(
                "registers {r}..{} are outside the frame of {} registers",
                r as u64 + n,
                self.function.template.len()
            ));
        }
        Ok(())
    }

    fn lanes(&self, n: u64) -> Result<(), String> {
        if n > MAX_LANES {
            return Err(format!("a vector of {n} lanes (at most {MAX_LANES} are supported)"));
        }
        Ok(())
    }

    fn target(&self, pc: u32) -> Result<(), String> {
        if pc as usize >= self.function.code.len() {
            return Err(format!("a branch to instruction {pc} of {}", self.function.code.len()));
        }
        Ok(())
    }

    fn layout(&self, layout: u32) -> Result<&ir::Layout, String> {
        self.module.layouts.get(layout as usize).ok_or_else(|| format!("unknown value layout {layout}"))
    }

    fn range<T>(&self, table: &[T], first: u32, n: u64, what: &str) -> Result<(), String> {
        if first as u64 + n > table.len() as u64 {
            return Err(format!("{what} {first}..{} of {}", first as u64 + n, table.len()));
        }
        Ok(())
    }

    fn check(&self) -> Result<(), String> {
        let f = self.function;
        if f.locs.len() != f.code.len() {
            return Err("source locations do not match the code".into());
        }
        // The lockstep executor pops a path when it reaches its join: a join must be an
        // instruction of the function or the exit.
        if f.joins.len() != f.code.len() || f.joins.iter().any(|&j| j != u32::MAX && j as usize >= f.code.len()) {
            return Err("reconvergence points do not match the code".into());
        }
        match f.code.last() {
            Some(
                Inst::Branch { .. }
                | Inst::BranchIf { .. }
                | Inst::Switch { .. }
                | Inst::Return { .. }
                | Inst::Unreachable { .. }
                | Inst::Unsupported { .. },
            ) => {}
            _ => return Err("the code does not end with a branch or return".into()),
        }
        for &(r, n) in &f.params {
            self.regs(r, n as u64)?;
        }
        for index in &f.indices {
            self.regs(index.reg, 1)?;
        }
        for &lane in &f.lanes {
            self.regs(lane, 1)?;
        }
        for arg in &f.args {
            self.regs(arg.reg, arg.n as u64)?;
        }
        for table in &f.switch_tables {
            self.target(table.default)?;
            for case in &table.cases {
                self.target(case.1)?;
            }
        }
        for (pc, inst) in f.code.iter().enumerate() {
            self.instruction(inst).map_err(|e| format!("instruction {pc} ({}): {e}", name(inst)))?;
            let mut outside = Ok(());
            operands::for_each(self.module, f, inst, |r, n, _| {
                if outside.is_ok() {
                    outside = self.regs(r, n);
                }
            });
            outside.map_err(|e| format!("instruction {pc} ({}): {e}", name(inst)))?;
        }
        Ok(())
    }

    fn instruction(&self, inst: &Inst) -> Result<(), String> {
        let r = |reg: Reg, n: u64| self.regs(reg, n);
        match *inst {
            Inst::Mov { dst, src, n } | Inst::Unary { dst, a: src, n, .. } | Inst::Convert { dst, src, n, .. } => {
                r(dst, n as u64)?;
                r(src, n as u64)?;
            }
            Inst::IntBin { dst, a, b, n, .. }
            | Inst::FloatBin { dst, a, b, n, .. }
            | Inst::Compare { dst, a, b, n, .. } => {
                for reg in [dst, a, b] {
                    r(reg, n as u64)?;
                }
            }
            Inst::Select { dst, cond, a, b, n, cond_lanes } => {
                for reg in [dst, a, b] {
                    r(reg, n as u64)?;
                }
                r(cond, if cond_lanes { n as u64 } else { 1 })?;
            }
            Inst::Bitcast { dst, src, from, to } => {
                for (reg, layout) in [(src, from), (dst, to)] {
                    let layout = self.layout(layout)?;
                    if layout.size as u64 > MAX_BITCAST_BYTES {
                        return Err(format!("a bitcast of {} bytes", layout.size));
                    }
                    r(reg, layout.leaves.len() as u64)?;
                }
            }
            Inst::Reduce { dst, src, n, .. } => {
                r(dst, 1)?;
                r(src, n as u64)?;
            }
            Inst::PtrOffset { dst, base, first_index, num_indices, .. } => {
                r(dst, 1)?;
                r(base, 1)?;
                self.range(&self.function.indices, first_index, num_indices as u64, "access-chain indices")?;
            }
            Inst::PtrDiff { dst, a, b, elem } => {
                if elem == 0 {
                    return Err("a pointer difference in elements of 0 bytes".into());
                }
                for reg in [dst, a, b] {
                    r(reg, 1)?;
                }
            }
            Inst::Load { dst: reg, ptr, layout, align, .. } | Inst::Store { src: reg, ptr, layout, align, .. } => {
                if !align.is_power_of_two() {
                    return Err(format!("an access aligned to {align} bytes"));
                }
                r(ptr, 1)?;
                r(reg, self.layout(layout)?.leaves.len() as u64)?;
            }
            Inst::IndexCheck { index, ptr, .. } => {
                let entry = self.function.indices.get(index as usize).ok_or("an index check past the index table")?;
                r(entry.reg, 1)?;
                r(ptr, 1)?;
            }
            Inst::LoadScalar { dst: reg, ptr, size, align, .. }
            | Inst::StoreScalar { src: reg, ptr, size, align, .. } => {
                if size == 0 || size > 8 {
                    return Err(format!("a scalar access of {size} bytes"));
                }
                if !align.is_power_of_two() {
                    return Err(format!("an access aligned to {align} bytes"));
                }
                r(reg, 1)?;
                r(ptr, 1)?;
            }
            Inst::CopyMemory { dst, src, size, .. } => {
                for reg in [dst, src, size] {
                    r(reg, 1)?;
                }
            }
            Inst::Alloca { dst, align, .. } => {
                if !align.is_power_of_two() {
                    return Err(format!("private memory aligned to {align} bytes"));
                }
                r(dst, 1)?;
            }
            Inst::ExtractDynamic { dst, src, index, n, .. } => {
                r(dst, 1)?;
                r(index, 1)?;
                r(src, n as u64)?;
            }
            Inst::InsertDynamic { dst, src, value, index, n, .. } => {
                r(dst, n as u64)?;
                r(src, n as u64)?;
                r(value, 1)?;
                r(index, 1)?;
            }
            Inst::Shuffle { dst, first, n } => {
                self.lanes(n as u64)?;
                self.range(&self.function.lanes, first, n as u64, "shuffle lanes")?;
                r(dst, n as u64)?;
            }
            Inst::ShuffleDynamic { dst, a, b, na, mask, n, .. } => {
                self.lanes(n as u64)?;
                if na == 0 {
                    return Err("a shuffle of vectors with no lanes".into());
                }
                r(dst, n as u64)?;
                r(mask, n as u64)?;
                r(a, na as u64)?;
                r(b, na as u64)?;
            }
            Inst::Builtin { dst, which, dims } => {
                if !(1..=which.lanes()).contains(&dims) {
                    return Err(format!("builtin {which:?} reads {dims} of its {} slots", which.lanes()));
                }
                r(dst, which.lanes() as u64)?
            }
            Inst::Math { dst, args, n, .. } => {
                for reg in [dst, args[0], args[1], args[2]] {
                    r(reg, n as u64)?;
                }
            }
            Inst::MathOut { bits, out_bits, dst, a, b, out, n, .. } => {
                if !matches!(bits, 16 | 32 | 64) || !matches!(out_bits, 8 | 16 | 32 | 64) {
                    return Err(format!("a math function on {bits}-bit values with a {out_bits}-bit result"));
                }
                for reg in [dst, a, b] {
                    r(reg, n as u64)?;
                }
                r(out, 1)?;
            }
            Inst::Geometric { op, dst, a, b, n, .. } => {
                let n = n as u64;
                self.lanes(n)?;
                let (reads, writes) = match op {
                    ir::Geo::Cross => (3.max(n), 3.max(n)),
                    ir::Geo::Normalize | ir::Geo::FastNormalize => (n, n),
                    _ => (n, 1),
                };
                r(a, reads)?;
                r(b, reads)?;
                r(dst, writes)?;
            }
            Inst::VectorMemory { dst, offset, ptr, elem, n, .. } => {
                if elem == 0 || elem > 8 {
                    return Err(format!("vector elements of {elem} bytes"));
                }
                r(dst, n as u64)?;
                r(offset, 1)?;
                r(ptr, 1)?;
            }
            Inst::Atomic { bits, dst, ptr, value, comparator, .. } => {
                if !matches!(bits, 8 | 16 | 32 | 64) {
                    return Err(format!("an atomic on {bits}-bit values"));
                }
                for reg in [dst, ptr, value, comparator] {
                    r(reg, 1)?;
                }
            }
            Inst::Collective { dst, src, id, id_n, .. } => {
                if id_n > 3 {
                    return Err(format!("a broadcast from a local id of {id_n} components"));
                }
                r(dst, 1)?;
                r(src, 1)?;
                r(id, id_n as u64)?;
            }
            Inst::CastToSpace { dst, src, .. } | Inst::PointerFence { dst, src } => {
                r(dst, 1)?;
                r(src, 1)?;
            }
            Inst::AsyncCopy { dst, dst_ptr, src_ptr, count, stride, event, .. } => {
                for reg in [dst, dst_ptr, src_ptr, count, stride, event] {
                    r(reg, 1)?;
                }
            }
            Inst::WaitEvents { num, list, .. } => {
                r(num, 1)?;
                r(list, 1)?;
            }
            Inst::ImageRead { dst, image, coord, coord_n, sampled, .. } => {
                r(dst, 4)?;
                r(image, if sampled { 2 } else { 1 })?;
                r(coord, coord_n as u64)?;
            }
            Inst::ImageWrite { image, coord, coord_n, src, .. } => {
                r(image, 1)?;
                r(coord, coord_n as u64)?;
                r(src, 4)?;
            }
            Inst::ImageQuery { dst, image, n, .. } => {
                if n > 4 {
                    return Err(format!("an image query of {n} lanes"));
                }
                r(dst, n as u64)?;
                r(image, 1)?;
            }
            Inst::Printf { dst, fmt, first_arg, num_args } => {
                r(dst, 1)?;
                r(fmt, 1)?;
                self.range(&self.function.args, first_arg, num_args as u64, "printf arguments")?;
            }
            Inst::Branch { target } => self.target(target)?,
            Inst::BranchIf { cond, then, otherwise } => {
                r(cond, 1)?;
                self.target(then)?;
                self.target(otherwise)?;
            }
            Inst::Switch { value, table, .. } => {
                r(value, 1)?;
                if table as usize >= self.function.switch_tables.len() {
                    return Err(format!("unknown switch table {table}"));
                }
            }
            Inst::Call { func, dst, first_arg, num_args } => self.call(func, dst, first_arg, num_args)?,
            Inst::Return { src, n } => r(src, n as u64)?,
            Inst::Unreachable { .. } | Inst::Barrier { .. } | Inst::MemoryFence { .. } => {}
            Inst::Assert { cond, has_msg, msg, .. } => {
                r(cond, 1)?;
                if has_msg {
                    r(msg, 1)?;
                }
            }
            Inst::Unsupported { what, .. } => {
                if what as usize >= self.module.unsupported.len() {
                    return Err("an unsupported feature without a name".into());
                }
            }
        }
        Ok(())
    }

    /// A call passes as many arguments as the callee has parameters, each as wide, and has room
    /// for what any of the callee's returns gives back.
    fn call(&self, func: u32, dst: Reg, first_arg: u32, num_args: u16) -> Result<(), String> {
        let callee = self.module.functions.get(func as usize).ok_or_else(|| format!("a call to function {func}"))?;
        self.range(&self.function.args, first_arg, num_args as u64, "call arguments")?;
        if callee.params.len() != num_args as usize {
            return Err(format!("a call with {num_args} arguments to a function of {}", callee.params.len()));
        }
        let args = &self.function.args[first_arg as usize..first_arg as usize + num_args as usize];
        for (arg, &(_, n)) in args.iter().zip(&callee.params) {
            if arg.n != n {
                return Err(format!("an argument of {} slots for a parameter of {n}", arg.n));
            }
        }
        let returned = callee.code.iter().filter_map(|i| if let Inst::Return { n, .. } = i { Some(*n) } else { None });
        self.regs(dst, returned.max().unwrap_or(0) as u64)
    }
}

/// The instruction's kind, for messages.
fn name(inst: &Inst) -> String {
    let debug = format!("{inst:?}");
    debug.split([' ', '{']).next().unwrap_or("").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Function, IntOp, Module, SwitchTable};

    fn module(code: Vec<Inst>, slots: usize) -> Module {
        let locs = vec![u32::MAX; code.len()];
        let joins = vec![u32::MAX; code.len()];
        let f = Function { name: "f".into(), code, locs, joins, template: vec![0; slots], ..Function::default() };
        Module { functions: vec![f], ..Module::default() }
    }

    fn ret() -> Inst {
        Inst::Return { src: 0, n: 0 }
    }

    #[test]
    fn registers_must_lie_in_the_frame() {
        let add = |dst, n| Inst::IntBin { op: IntOp::Add, bits: 32, dst, a: 0, b: 1, n };
        assert!(check_module(&module(vec![add(2, 1), ret()], 3)).is_ok());
        let err = check_module(&module(vec![add(3, 1), ret()], 3)).unwrap_err();
        assert!(err.contains("instruction 0") && err.contains("outside the frame"), "{err}");
        // A vector's last lane counts too.
        assert!(check_module(&module(vec![add(0, 4), ret()], 3)).is_err());
        assert!(check_module(&module(vec![ret(), Inst::Return { src: 2, n: 2 }], 3)).is_err());
    }

    #[test]
    fn targets_must_land_on_instructions_and_code_must_not_run_off_its_end() {
        assert!(check_module(&module(vec![Inst::Branch { target: 0 }], 1)).is_ok());
        let err = check_module(&module(vec![Inst::Branch { target: 1 }], 1)).unwrap_err();
        assert!(err.contains("a branch to instruction 1 of 1"), "{err}");
        let cond = Inst::BranchIf { cond: 0, then: 0, otherwise: 7 };
        assert!(check_module(&module(vec![cond, ret()], 1)).is_err());
        let mut m = module(vec![Inst::Switch { value: 0, bits: 32, table: 0 }, ret()], 1);
        m.functions[0].switch_tables.push(SwitchTable { cases: vec![(1, 1), (2, 2)], default: 0 });
        assert!(check_module(&m).is_err(), "a case past the end");
        m.functions[0].switch_tables[0].cases[1].1 = 1;
        assert!(check_module(&m).is_ok());
        let err = check_module(&module(vec![ret(), Inst::Mov { dst: 0, src: 0, n: 1 }], 1)).unwrap_err();
        assert!(err.contains("does not end"), "{err}");
    }

    #[test]
    fn side_table_registers_are_checked() {
        let mut m =
            module(vec![Inst::PtrOffset { dst: 0, base: 0, offset: 0, first_index: 0, num_indices: 1 }, ret()], 2);
        m.functions[0].indices.push(ir::Index { reg: 1, bits: 64, stride: 4 });
        assert!(check_module(&m).is_ok());
        m.functions[0].indices[0].reg = 2;
        assert!(check_module(&m).is_err());
        m.functions[0].indices.clear();
        assert!(check_module(&m).unwrap_err().contains("access-chain indices"));
    }
}
