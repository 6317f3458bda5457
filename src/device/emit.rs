//! Writes one lowered kernel function as OpenCL C: every register a `ulong` holding the bits the
//! interpreter would hold (see [`crate::ir::value`]), every instruction a statement, branches
//! `goto`s. Which allocation each pointer register points into is found statically ([`roots`]),
//! so a pointer register holds only its byte offset (0 for an argument or a `__local` variable
//! itself; a negative one wraps and fails the bounds check) and a load or store becomes an access
//! to that argument or variable at that offset, checked against its bounds and its shadow. That
//! keeps addresses affine in the work-item id, as in the source, so that a driver that
//! vectorises work-items (pocl) still can; a pointer used in any other way (compared, converted,
//! stored) is refused.

use std::fmt::Write as _;

use rspirv::spirv::OpenclStd100Op as Std;

use super::{Extra, Instrumented, LOCAL_VARIABLE_BASE, MAX_SITES, PRELUDE, Refusal};
use crate::ir::intervals::{ALL, Allocations, LocalAccess, quiet_reads};
use crate::ir::operands::{self, Use};
use crate::ir::value::{self, SPACE_LOCAL};
use crate::ir::{Builtin, Cmp, Conv, FloatOp, Function, Inst, IntOp, Kernel, Module, ParamKind, Reg, Round, UnOp};

/// Where a pointer register points: the allocation every value it can hold belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Root {
    /// Kernel argument `n` (a buffer or a `__local` pointer).
    Arg(usize),
    /// Kernel-declared `__local` variable `n`.
    Var(usize),
    /// Two different allocations meet.
    Mixed,
}

fn join(a: Option<Root>, b: Option<Root>) -> Option<Root> {
    match (a, b) {
        (None, x) | (x, None) => x,
        (Some(x), Some(y)) if x == y => Some(x),
        _ => Some(Root::Mixed),
    }
}

/// The root of every register, by a fixpoint over the instructions that move pointers.
fn roots(module: &Module, kernel: &Kernel, func: &Function) -> Vec<Option<Root>> {
    let mut root = vec![None; func.template.len()];
    let mut written = vec![false; func.template.len()];
    for inst in &func.code {
        operands::for_each(module, func, inst, |r, n, u| {
            if u == Use::Write {
                for w in written.iter_mut().skip(r as usize).take(n as usize) {
                    *w = true;
                }
            }
        });
    }
    for (i, &(reg, _)) in func.params.iter().enumerate() {
        if matches!(kernel.params.get(i), Some(ParamKind::Buffer | ParamKind::Local)) {
            root[reg as usize] = Some(Root::Arg(i));
        }
    }
    for (r, &bits) in func.template.iter().enumerate() {
        let (space, index, _) = value::split(bits);
        if space == SPACE_LOCAL && !written[r] && (index as usize) < module.locals.len() {
            root[r] = Some(Root::Var(index as usize));
        }
    }
    loop {
        let mut changed = false;
        for inst in &func.code {
            let (dst, from) = match *inst {
                Inst::PtrOffset { dst, base, .. } => (dst, join(root[base as usize], None)),
                Inst::Mov { dst, src, n: 1 } => (dst, root[src as usize]),
                Inst::Select { dst, a, b, n: 1, .. } => (dst, join(root[a as usize], root[b as usize])),
                _ => continue,
            };
            let joined = join(root[dst as usize], from);
            if joined != root[dst as usize] {
                root[dst as usize] = joined;
                changed = true;
            }
        }
        if !changed {
            return root;
        }
    }
}

/// The OpenCL C unsigned type of `size` bytes.
fn uty(size: u32) -> Option<&'static str> {
    Some(match size {
        1 => "uchar",
        2 => "ushort",
        4 => "uint",
        8 => "ulong",
        _ => return None,
    })
}

/// The low `bits` bits set ([`value::mask`]), as an OpenCL C literal.
fn mask(bits: u8) -> String {
    format!("0x{:x}UL", value::mask(bits))
}

/// `r` read as a signed `bits`-wide integer, as a `long` expression.
fn sx(r: Reg, bits: u8) -> String {
    if bits >= 64 { format!("(long)r{r}") } else { format!("(long)CR_SX(r{r}, {bits})") }
}

/// `r` read as a float of `bits`.
fn fl(r: Reg, bits: u8) -> Result<String, Refusal> {
    match bits {
        32 => Ok(format!("as_float((uint)r{r})")),
        64 => Ok(format!("as_double(r{r})")),
        _ => Err(Refusal(format!("{bits}-bit floats"))),
    }
}

/// A float expression of `bits` back into register bits.
fn unfl(expr: &str, bits: u8) -> String {
    if bits == 64 { format!("as_ulong((double)({expr}))") } else { format!("(ulong)as_uint((float)({expr}))") }
}

/// The state of one emission.
struct Emitter<'a> {
    module: &'a Module,
    func: &'a Function,
    /// The kernel's argument kinds.
    params: &'a [ParamKind],
    roots: Vec<Option<Root>>,
    hooks: bool,
    /// Per argument, whether the kernel writes through it (it gets a shadow), and reads.
    written: Vec<bool>,
    read: Vec<bool>,
    /// Per kernel `__local` variable, whether the kernel uses it, writes it, reads it.
    vars: Vec<(bool, bool, bool)>,
    /// Per instruction, whether it is a `__local` read that no write of its barrier intervals
    /// can meet ([`quiet_reads`]): bounds-checked, without a race hook.
    quiet: Vec<bool>,
    sites: Vec<u32>,
    out: String,
}

pub(super) fn emit(module: &Module, kernel: &Kernel, hooks: bool) -> Result<Instrumented, Refusal> {
    let func = module
        .functions
        .get(kernel.function as usize)
        .ok_or_else(|| Refusal("the kernel's function is missing".into()))?;
    let roots = roots(module, kernel, func);
    let entry = kernel.function as usize;
    // The instrumenter refuses calls: the kernel's function is all it reaches.
    let mut quiet = quiet_reads(module, entry, |f, pc| {
        if f != entry {
            return None;
        }
        let (ptr, write) = memory_access(&func.code[pc])?;
        // Arguments are bits 0 to 63, variables 64 to 127; one past them may be any allocation.
        let bit = |at: usize, below: usize| if at < below { (1 as Allocations) << at } else { ALL };
        let allocations = match roots.get(ptr as usize).copied().flatten()? {
            Root::Arg(i) if kernel.params.get(i) == Some(&ParamKind::Local) => bit(i, 64),
            Root::Var(k) => bit(64 + k, 128),
            _ => return None,
        };
        Some(LocalAccess { allocations, write })
    });
    let mut quiet = std::mem::take(&mut quiet[entry]);
    quiet.resize(func.code.len(), false);
    let mut e = Emitter {
        module,
        func,
        params: &kernel.params,
        roots,
        hooks,
        written: vec![false; kernel.params.len()],
        read: vec![false; kernel.params.len()],
        vars: vec![(false, false, false); module.locals.len()],
        quiet,
        sites: Vec::new(),
        out: String::new(),
    };
    e.scan_uses()?;
    let mut body = String::new();
    std::mem::swap(&mut e.out, &mut body);
    e.body()?;
    std::mem::swap(&mut e.out, &mut body);
    if e.sites.len() > MAX_SITES {
        return Err(Refusal(format!("{} memory accesses (at most {MAX_SITES})", e.sites.len())));
    }
    let extras = e.header(kernel)?;
    let shadow_stride = (0..kernel.params.len()).map(|i| e.stride(e.written[i], e.read[i])).collect();
    e.out.push_str(&body);
    e.out.push_str("}\n");
    Ok(Instrumented {
        source: e.out,
        kernel: kernel.info.name.clone(),
        extras,
        sites: e.sites,
        written: e.written,
        shadow_stride,
        params: kernel.params.clone(),
    })
}

impl Emitter<'_> {
    /// The root of a pointer an access goes through, or why it has none.
    fn root(&self, ptr: Reg, pc: usize) -> Result<Root, Refusal> {
        match self.roots.get(ptr as usize).copied().flatten() {
            Some(Root::Mixed) => Err(self.refuse(pc, "a pointer into more than one allocation")),
            Some(root) => Ok(root),
            None => {
                Err(self.refuse(pc, "an access through a pointer not derived from an argument or __local variable"))
            }
        }
    }

    fn refuse(&self, pc: usize, what: &str) -> Refusal {
        let loc = self.func.locs.get(pc).copied().unwrap_or(u32::MAX);
        Refusal(format!("{what} at {}", self.module.location(loc)))
    }

    /// Marks what the kernel reads and writes, so that read-only memory gets no shadow.
    fn scan_uses(&mut self) -> Result<(), Refusal> {
        for (pc, inst) in self.func.code.iter().enumerate() {
            if !covered(inst) {
                let name = format!("{inst:?}");
                let name = name.split([' ', '{', '(']).next().unwrap_or("instruction");
                return Err(self.refuse(pc, &format!("the instruction {name}")));
            }
            self.pointers_as_pointers(pc, inst)?;
            let Some((ptr, write)) = memory_access(inst) else { continue };
            // A read without a hook needs no read summary beside the write record.
            let hooked_read = !write && !self.quiet[pc];
            match self.root(ptr, pc)? {
                Root::Arg(i) => {
                    self.written[i] |= write;
                    self.read[i] |= hooked_read;
                }
                Root::Var(k) => {
                    self.vars[k].0 = true;
                    self.vars[k].1 |= write;
                    self.vars[k].2 |= hooked_read;
                }
                Root::Mixed => unreachable!("root() refuses mixed pointers"),
            }
        }
        Ok(())
    }

    /// Shadow words per 4-byte word of memory written (and read): a write record (and a read
    /// summary); none for memory never written.
    fn stride(&self, written: bool, read: bool) -> u32 {
        match (written, read) {
            (false, _) => 0,
            (true, false) => 1,
            (true, true) => 2,
        }
    }

    /// Refuses an instruction that reads a pointer register other than as an address: its
    /// register holds only an offset, which compares or converts differently from the pointer.
    fn pointers_as_pointers(&self, pc: usize, inst: &Inst) -> Result<(), Refusal> {
        let allowed = match *inst {
            Inst::PtrOffset { base, .. } => Some(base),
            Inst::LoadScalar { ptr, .. } | Inst::Load { ptr, .. } | Inst::IndexCheck { ptr, .. } => Some(ptr),
            Inst::StoreScalar { ptr, .. } | Inst::Store { ptr, .. } => Some(ptr),
            Inst::Mov { n: 1, .. } | Inst::Select { n: 1, .. } => return Ok(()),
            _ => None,
        };
        let mut bad = false;
        operands::for_each(self.module, self.func, inst, |r, n, u| {
            if u == Use::Read {
                for reg in r..r + n as Reg {
                    let is_pointer = matches!(self.roots.get(reg as usize), Some(Some(_)));
                    bad |= is_pointer && Some(reg) != allowed;
                }
            }
        });
        if bad { Err(self.refuse(pc, "a pointer used as a value (compared, converted or stored)")) } else { Ok(()) }
    }

    /// The prelude, the kernel's signature, its declarations and its setup.
    fn header(&mut self, kernel: &Kernel) -> Result<Vec<Extra>, Refusal> {
        let mut out = String::from(PRELUDE);
        let mut params = Vec::new();
        let mut setup = String::new();
        for (i, (kind, &(reg, slots))) in kernel.params.iter().zip(&self.func.params).enumerate() {
            match *kind {
                ParamKind::Buffer => {
                    params.push(format!("__global uchar *a{i}"));
                    let _ = writeln!(setup, "  r{reg} = 0UL;");
                }
                ParamKind::Local => {
                    // Declared `ulong` (8-byte aligned pointee), addressed by bytes in the body as
                    // every pointer: declared `uchar`, every launch of the two gate kernels with a
                    // `__local` argument failed on NVIDIA's driver, their own source ran
                    // (docs/on-device.md; bench/device/reduce_uchar_local.cl tells whether the
                    // pointee's alignment is the cause, on the next GPU run).
                    params.push(format!("__local ulong *a{i}_"));
                    let _ = writeln!(setup, "  __local uchar *a{i} = (__local uchar *)a{i}_;\n  r{reg} = 0UL;");
                }
                ParamKind::Value { layout } => {
                    let leaves = &self.module.layouts[layout as usize].leaves;
                    let ty = match (leaves.as_slice(), slots) {
                        ([leaf], 1) if leaf.offset == 0 => uty(leaf.size as u32),
                        _ => None,
                    }
                    .ok_or_else(|| Refusal(format!("argument {i}: an aggregate or vector passed by value")))?;
                    params.push(format!("{ty} a{i}"));
                    let _ = writeln!(setup, "  r{reg} = (ulong)a{i};");
                }
                other => return Err(Refusal(format!("argument {i}: {other:?} arguments"))),
            }
        }
        let mut extras = Vec::new();
        if self.hooks {
            params.push("__global ulong *cr_shadow".into());
            params.push("__global uint *cr_fx".into());
            params.push("__constant ulong *cr_meta".into());
            extras.extend([Extra::Shadow, Extra::Findings, Extra::Meta]);
            for (i, kind) in kernel.params.iter().enumerate() {
                if *kind == ParamKind::Local && self.written[i] {
                    params.push(format!("__local ulong *cr_ls{i}"));
                    extras.push(Extra::LocalShadow { arg: i });
                }
            }
        }
        let _ = writeln!(out, "\n__kernel void {}({})\n{{", kernel.info.name, params.join(", "));
        for (k, &(used, written, read)) in self.vars.iter().enumerate() {
            if !used {
                continue;
            }
            let var = &self.module.locals[k];
            let _ = writeln!(
                out,
                "  __local uchar cr_v{k}[{}] __attribute__((aligned({})));",
                var.size.max(1),
                var.align.clamp(1, 128)
            );
            if self.hooks && written {
                let words = var.size.div_ceil(4).max(1) * self.stride(written, read);
                let _ = writeln!(out, "  __local ulong cr_vs{k}[{words}];");
            }
        }
        for (r, &bits) in self.func.template.iter().enumerate() {
            // A kernel `__local` variable's address constant becomes its offset, 0.
            let bits = if matches!(self.roots[r], Some(Root::Var(_))) { 0 } else { bits };
            let _ = writeln!(out, "  ulong r{r} = 0x{bits:x}UL;");
        }
        out.push_str(&setup);
        if self.hooks {
            out.push_str(
                "  uint cr_lt = (uint)(get_local_size(0) * get_local_size(1) * get_local_size(2));\n  \
                 uint cr_lin = (uint)(get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2)));\n  \
                 uint cr_grp = (uint)(get_group_id(0) + get_num_groups(0) * (get_group_id(1) + get_num_groups(1) * get_group_id(2)));\n  \
                 uint cr_gb = cr_grp * cr_lt, cr_item = cr_gb + cr_lin;\n  \
                 uint cr_eg = 0, cr_el = 0;\n  \
                 ulong cr_mg = CR_VALID | cr_item, cr_ml = CR_VALID | cr_item;\n",
            );
            let mut any = false;
            for (k, &(used, written, read)) in self.vars.iter().enumerate() {
                if used && written {
                    let words = self.module.locals[k].size.div_ceil(4).max(1) * self.stride(written, read);
                    let _ = writeln!(out, "  for (uint i = cr_lin; i < {words}u; i += cr_lt) cr_vs{k}[i] = 0;");
                    any = true;
                }
            }
            for extra in &extras {
                if let Extra::LocalShadow { arg } = extra {
                    let _ = writeln!(
                        out,
                        "  for (uint i = cr_lin; i < (uint)((cr_meta[{}] + 3) / 4 * {}); i += cr_lt) cr_ls{arg}[i] = 0;",
                        2 * arg,
                        self.stride(self.written[*arg], self.read[*arg])
                    );
                    any = true;
                }
            }
            if any {
                out.push_str("  barrier(CLK_LOCAL_MEM_FENCE);\n");
            }
        }
        self.out = out;
        Ok(extras)
    }

    /// Every instruction of the kernel's function.
    fn body(&mut self) -> Result<(), Refusal> {
        let mut targets = vec![false; self.func.code.len() + 1];
        for inst in &self.func.code {
            match *inst {
                Inst::Branch { target } => targets[target as usize] = true,
                Inst::BranchIf { then, otherwise, .. } => {
                    targets[then as usize] = true;
                    targets[otherwise as usize] = true;
                }
                Inst::Switch { table, .. } => {
                    let t = &self.func.switch_tables[table as usize];
                    targets[t.default as usize] = true;
                    for &(_, to) in &t.cases {
                        targets[to as usize] = true;
                    }
                }
                _ => {}
            }
        }
        for (pc, inst) in self.func.code.iter().enumerate() {
            if targets[pc] {
                let _ = writeln!(self.out, "L{pc}: ;");
            }
            self.inst(pc, inst)?;
        }
        Ok(())
    }

    /// Appends `r{dst+l} = f(l);` for each of `n` lanes.
    fn lanes(&mut self, dst: Reg, n: u16, f: impl Fn(Reg) -> Result<String, Refusal>) -> Result<(), Refusal> {
        for l in 0..n as Reg {
            let expr = f(l)?;
            let _ = writeln!(self.out, "  r{} = {expr};", dst + l);
        }
        Ok(())
    }

    fn inst(&mut self, pc: usize, inst: &Inst) -> Result<(), Refusal> {
        match *inst {
            Inst::Mov { dst, src, n } => self.lanes(dst, n, |l| Ok(format!("r{}", src + l)))?,
            Inst::IntBin { op, bits, dst, a, b, n } => self.lanes(dst, n, |l| Ok(int_bin(op, bits, a + l, b + l)))?,
            Inst::FloatBin { op, bits, dst, a, b, n } => self.lanes(dst, n, |l| {
                let (x, y) = (fl(a + l, bits)?, fl(b + l, bits)?);
                let expr = match op {
                    FloatOp::Add => format!("{x} + {y}"),
                    FloatOp::Sub => format!("{x} - {y}"),
                    FloatOp::Mul => format!("{x} * {y}"),
                    FloatOp::Div => format!("{x} / {y}"),
                    FloatOp::Rem => format!("fmod({x}, {y})"),
                    FloatOp::Mod => return Err(Refusal("float modulo".into())),
                };
                Ok(unfl(&expr, bits))
            })?,
            Inst::Compare { cmp, bits, dst, a, b, n } => self.lanes(dst, n, |l| compare(cmp, bits, a + l, b + l))?,
            Inst::Unary { op, bits, dst, a, n } => self.lanes(dst, n, |l| {
                let r = a + l;
                Ok(match op {
                    UnOp::INeg => format!("(0UL - r{r}) & {}", mask(bits)),
                    UnOp::Not => format!("~r{r} & {}", mask(bits)),
                    UnOp::LogicalNot => format!("(ulong)(r{r} == 0)"),
                    UnOp::FNeg => unfl(&format!("-{}", fl(r, bits)?), bits),
                    _ => return Err(Refusal(format!("unary {op:?}"))),
                })
            })?,
            Inst::Convert { conv, from, to, dst, src, n } => {
                self.lanes(dst, n, |l| convert(conv, from, to, src + l))?
            }
            Inst::Select { dst, cond, a, b, n, cond_lanes } => self.lanes(dst, n, |l| {
                let c = if cond_lanes { cond + l } else { cond };
                Ok(format!("r{c} ? r{} : r{}", a + l, b + l))
            })?,
            Inst::PtrOffset { dst, base, offset, first_index, num_indices } => {
                let mut expr = format!("r{base} + (ulong){offset}L");
                let indices = &self.func.indices[first_index as usize..][..num_indices as usize];
                for ix in indices {
                    let _ = write!(expr, " + (ulong)({} * {}L)", sx(ix.reg, ix.bits), ix.stride);
                }
                let _ = writeln!(self.out, "  r{dst} = {expr};");
            }
            Inst::LoadScalar { dst, ptr, size, loc, .. } => self.access(pc, ptr, size as u32, dst, false, loc)?,
            Inst::StoreScalar { src, ptr, size, loc, .. } => self.access(pc, ptr, size as u32, src, true, loc)?,
            Inst::Load { dst, ptr, layout, loc, .. } => {
                let size = self.scalar_layout(pc, layout)?;
                self.access(pc, ptr, size, dst, false, loc)?
            }
            Inst::Store { src, ptr, layout, loc, .. } => {
                let size = self.scalar_layout(pc, layout)?;
                self.access(pc, ptr, size, src, true, loc)?
            }
            Inst::IndexCheck { index, ptr, extent, loc } => {
                if self.hooks {
                    let ix = self.func.indices[index as usize];
                    let buf = self.buffer_number(self.root(ptr, pc)?);
                    let site = self.site(loc);
                    let _ = writeln!(
                        self.out,
                        "  if ((ulong){} >= {extent}UL) cr_report(cr_fx, CR_OOB, 0, {site}, cr_item, cr_item, {buf}, r{ptr});",
                        sx(ix.reg, ix.bits)
                    );
                }
            }
            Inst::Builtin { dst, which, .. } => self.builtin(pc, dst, which)?,
            Inst::Math { op, kind, dst, args, n } => {
                let bits = match kind {
                    crate::ir::MathKind::F32 => 32,
                    crate::ir::MathKind::F64 => 64,
                    other => return Err(self.refuse(pc, &format!("math on {other:?}"))),
                };
                self.lanes(dst, n, |l| {
                    let [x, y, z] = [args[0] + l, args[1] + l, args[2] + l];
                    let expr = match op {
                        // As the source's `a * b + c` (contraction is the compiler's choice).
                        Std::mad => format!("{} * {} + {}", fl(x, bits)?, fl(y, bits)?, fl(z, bits)?),
                        Std::fma => format!("fma({}, {}, {})", fl(x, bits)?, fl(y, bits)?, fl(z, bits)?),
                        Std::fmin => format!("fmin({}, {})", fl(x, bits)?, fl(y, bits)?),
                        Std::fmax => format!("fmax({}, {})", fl(x, bits)?, fl(y, bits)?),
                        Std::fabs => format!("fabs({})", fl(x, bits)?),
                        Std::sqrt => format!("sqrt({})", fl(x, bits)?),
                        other => return Err(Refusal(format!("math function {other:?}"))),
                    };
                    Ok(unfl(&expr, bits))
                })?
            }
            Inst::Barrier { fence, sub_group: false, .. } => {
                let flags = match (fence.local, fence.global) {
                    (true, true) => "CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE",
                    (false, true) => "CLK_GLOBAL_MEM_FENCE",
                    _ => "CLK_LOCAL_MEM_FENCE",
                };
                let _ = writeln!(self.out, "  barrier({flags});");
                if self.hooks {
                    if fence.local {
                        self.out
                            .push_str("  cr_el++; cr_ml = CR_VALID | ((ulong)(cr_el & 0xffffu) << 32) | cr_item;\n");
                    }
                    if fence.global {
                        self.out
                            .push_str("  cr_eg++; cr_mg = CR_VALID | ((ulong)(cr_eg & 0xffffu) << 32) | cr_item;\n");
                    }
                }
            }
            Inst::Branch { target } => {
                let _ = writeln!(self.out, "  goto L{target};");
            }
            Inst::BranchIf { cond, then, otherwise } => {
                let _ = writeln!(self.out, "  if (r{cond}) goto L{then}; else goto L{otherwise};");
            }
            Inst::Switch { value, bits, table } => {
                let t = &self.func.switch_tables[table as usize];
                let _ = writeln!(self.out, "  switch (r{value} & {}) {{", mask(bits));
                for &(case, to) in &t.cases {
                    let _ = writeln!(self.out, "  case 0x{case:x}UL: goto L{to};");
                }
                let _ = writeln!(self.out, "  default: goto L{};\n  }}", t.default);
            }
            Inst::Return { n: 0, .. } | Inst::Unreachable { .. } => self.out.push_str("  return;\n"),
            _ => unreachable!("scan_uses refuses what `covered` does not list"),
        }
        Ok(())
    }

    /// The size of a one-scalar layout, or a refusal (vectors and aggregates in memory).
    fn scalar_layout(&self, pc: usize, layout: u32) -> Result<u32, Refusal> {
        match self.module.layouts[layout as usize].leaves.as_slice() {
            [leaf] if leaf.offset == 0 => Ok(leaf.size as u32),
            _ => Err(self.refuse(pc, "a vector or aggregate load or store")),
        }
    }

    /// A new site for an access at module location `loc`.
    fn site(&mut self, loc: u32) -> usize {
        self.sites.push(loc);
        self.sites.len()
    }

    fn buffer_number(&self, root: Root) -> u32 {
        match root {
            Root::Arg(i) => i as u32,
            Root::Var(k) => LOCAL_VARIABLE_BASE + k as u32,
            Root::Mixed => u32::MAX,
        }
    }

    /// A load into `reg` or a store from `reg` of `size` bytes through `ptr`.
    fn access(&mut self, pc: usize, ptr: Reg, size: u32, reg: Reg, write: bool, loc: u32) -> Result<(), Refusal> {
        let ty = uty(size).ok_or_else(|| self.refuse(pc, &format!("a {size}-byte access")))?;
        let root = self.root(ptr, pc)?;
        let (data, space, limit, shadow, record, local) = match root {
            Root::Arg(i) if self.params.get(i) == Some(&ParamKind::Local) => (
                format!("a{i}"),
                "__local",
                format!("cr_meta[{}]", 2 * i),
                self.written[i].then(|| format!("cr_ls{i}")),
                "cr_ml",
                true,
            ),
            Root::Arg(i) => (
                format!("a{i}"),
                "__global",
                format!("cr_meta[{}]", 2 * i),
                self.written[i].then(|| format!("cr_shadow + cr_meta[{}]", 2 * i + 1)),
                "cr_mg",
                false,
            ),
            Root::Var(k) => (
                format!("cr_v{k}"),
                "__local",
                format!("{}UL", self.module.locals[k].size),
                self.vars[k].1.then(|| format!("cr_vs{k}")),
                "cr_ml",
                true,
            ),
            Root::Mixed => unreachable!("root() refuses mixed pointers"),
        };
        let stmt = if write {
            format!("*({space} {ty} *)({data} + o) = ({ty})r{reg};")
        } else {
            format!("r{reg} = (ulong)*({space} {ty} *)({data} + o);")
        };
        if !self.hooks {
            let _ = writeln!(self.out, "  {{ ulong o = r{ptr}; {stmt} }}");
            return Ok(());
        }
        let site = self.site(loc);
        let buf = self.buffer_number(root);
        let _ = write!(self.out, "  {{ ulong o = r{ptr};\n    if (o + {size}UL > {limit}) {{ ");
        let _ = write!(self.out, "cr_report(cr_fx, CR_OOB, 0, {site}, cr_item, cr_item, {buf}, o);");
        if !write {
            let _ = write!(self.out, " r{reg} = 0;");
        }
        self.out.push_str(" }\n    else {");
        let stride = match root {
            Root::Arg(i) => self.stride(self.written[i], self.read[i]),
            Root::Var(k) => self.stride(self.vars[k].1, self.vars[k].2),
            Root::Mixed => 0,
        };
        let space_letter = if local { 'l' } else { 'g' };
        if let Some(shadow) = shadow.filter(|_| write || !self.quiet[pc]) {
            for w in 0..size.div_ceil(4) {
                let at = format!("{shadow} + ((o >> 2) + {w}) * {stride}");
                let rec = format!("{record} | ((ulong){site} << 48)");
                let _ = if stride == 1 {
                    write!(self.out, " cr_write_{space_letter}({at}, {rec}, cr_gb, cr_lt, cr_fx, {buf}, o);")
                } else {
                    let w = write as u8;
                    write!(self.out, " cr_access_{space_letter}({at}, {rec}, cr_gb, cr_lt, {w}, cr_fx, {buf}, o);")
                };
            }
        }
        let _ = writeln!(self.out, " {stmt} }} }}");
        Ok(())
    }

    fn builtin(&mut self, pc: usize, dst: Reg, which: Builtin) -> Result<(), Refusal> {
        let per_dim = match which {
            Builtin::GlobalId => "get_global_id",
            Builtin::LocalId => "get_local_id",
            Builtin::GroupId => "get_group_id",
            Builtin::NumGroups => "get_num_groups",
            Builtin::GlobalSize => "get_global_size",
            Builtin::LocalSize | Builtin::EnqueuedLocalSize => "get_local_size",
            Builtin::GlobalOffset => "get_global_offset",
            Builtin::WorkDim => {
                let _ = writeln!(self.out, "  r{dst} = (ulong)get_work_dim();");
                return Ok(());
            }
            other => return Err(self.refuse(pc, &format!("the builtin {other:?}"))),
        };
        for d in 0..3 {
            let _ = writeln!(self.out, "  r{} = (ulong){per_dim}({d});", dst + d);
        }
        Ok(())
    }
}

/// The address register of a load or store, and whether it stores.
fn memory_access(inst: &Inst) -> Option<(Reg, bool)> {
    match *inst {
        Inst::LoadScalar { ptr, .. } | Inst::Load { ptr, .. } => Some((ptr, false)),
        Inst::StoreScalar { ptr, .. } | Inst::Store { ptr, .. } => Some((ptr, true)),
        _ => None,
    }
}

/// Whether [`Emitter::inst`] writes `inst` out at all (its operands may still be refused).
fn covered(inst: &Inst) -> bool {
    matches!(
        inst,
        Inst::Mov { .. }
            | Inst::IntBin { .. }
            | Inst::FloatBin { .. }
            | Inst::Compare { .. }
            | Inst::Unary { .. }
            | Inst::Convert { .. }
            | Inst::Select { .. }
            | Inst::PtrOffset { .. }
            | Inst::LoadScalar { .. }
            | Inst::StoreScalar { .. }
            | Inst::Load { .. }
            | Inst::Store { .. }
            | Inst::IndexCheck { .. }
            | Inst::Builtin { .. }
            | Inst::Math { .. }
            | Inst::Barrier { sub_group: false, .. }
            | Inst::Branch { .. }
            | Inst::BranchIf { .. }
            | Inst::Switch { .. }
            | Inst::Return { n: 0, .. }
            | Inst::Unreachable { .. }
    )
}

fn int_bin(op: IntOp, bits: u8, a: Reg, b: Reg) -> String {
    let m = mask(bits);
    let shift = format!("(r{b} % {bits}UL)");
    match op {
        IntOp::Add => format!("(r{a} + r{b}) & {m}"),
        IntOp::Sub => format!("(r{a} - r{b}) & {m}"),
        IntOp::Mul => format!("(r{a} * r{b}) & {m}"),
        IntOp::UDiv => format!("r{b} ? r{a} / r{b} : 0UL"),
        IntOp::URem => format!("r{b} ? r{a} % r{b} : 0UL"),
        IntOp::SDiv | IntOp::SRem | IntOp::SMod => {
            let (x, y) = (sx(a, bits), sx(b, bits));
            let core = match op {
                IntOp::SDiv => format!("{x} / {y}"),
                IntOp::SRem => format!("{x} % {y}"),
                _ => format!("(({x} % {y}) != 0 && (({x} % {y}) < 0) != ({y} < 0) ? {x} % {y} + {y} : {x} % {y})"),
            };
            // Division by zero and the one overflowing quotient give 0, as the interpreter does.
            format!("(r{b} && !({x} == LONG_MIN && {y} == -1L)) ? (ulong)({core}) & {m} : 0UL")
        }
        IntOp::And => format!("r{a} & r{b}"),
        IntOp::Or => format!("r{a} | r{b}"),
        IntOp::Xor => format!("r{a} ^ r{b}"),
        IntOp::Shl => format!("(r{a} << {shift}) & {m}"),
        IntOp::LShr => format!("r{a} >> {shift}"),
        IntOp::AShr => format!("(ulong)({} >> {shift}) & {m}", sx(a, bits)),
    }
}

fn compare(cmp: Cmp, bits: u8, a: Reg, b: Reg) -> Result<String, Refusal> {
    use Cmp::*;
    let (ua, ub) = (format!("r{a}"), format!("r{b}"));
    let (sa, sb) = (sx(a, bits), sx(b, bits));
    let float = || -> Result<(String, String), Refusal> { Ok((fl(a, bits)?, fl(b, bits)?)) };
    let expr = match cmp {
        Eq => format!("{ua} == {ub}"),
        Ne => format!("{ua} != {ub}"),
        ULt => format!("{ua} < {ub}"),
        ULe => format!("{ua} <= {ub}"),
        UGt => format!("{ua} > {ub}"),
        UGe => format!("{ua} >= {ub}"),
        SLt => format!("{sa} < {sb}"),
        SLe => format!("{sa} <= {sb}"),
        SGt => format!("{sa} > {sb}"),
        SGe => format!("{sa} >= {sb}"),
        _ => {
            let (x, y) = float()?;
            match cmp {
                FOrdEq => format!("{x} == {y}"),
                FOrdNe => format!("({x} < {y} || {x} > {y})"),
                FOrdLt => format!("{x} < {y}"),
                FOrdLe => format!("{x} <= {y}"),
                FOrdGt => format!("{x} > {y}"),
                FOrdGe => format!("{x} >= {y}"),
                FUnordEq => format!("!({x} < {y} || {x} > {y})"),
                FUnordNe => format!("{x} != {y}"),
                FUnordLt => format!("!({x} >= {y})"),
                FUnordLe => format!("!({x} > {y})"),
                FUnordGt => format!("!({x} <= {y})"),
                FUnordGe => format!("!({x} < {y})"),
                FOrd => format!("(!isnan({x}) && !isnan({y}))"),
                _ => format!("(isnan({x}) || isnan({y}))"),
            }
        }
    };
    Ok(format!("(ulong)({expr})"))
}

fn convert(conv: Conv, from: u8, to: u8, src: Reg) -> Result<String, Refusal> {
    let m = mask(to);
    Ok(match conv {
        Conv::UInt => format!("r{src} & {m}"),
        Conv::SInt => {
            format!("{} & {m}", if from >= 64 { format!("r{src}") } else { format!("CR_SX(r{src}, {from})") })
        }
        Conv::FloatToUInt { sat: false, round: Round::Default } => format!("(ulong){} & {m}", fl(src, from)?),
        Conv::FloatToSInt { sat: false, round: Round::Default } => format!("(ulong)(long){} & {m}", fl(src, from)?),
        Conv::UIntToFloat { round: Round::Default } => unfl(&format!("r{src}"), to),
        Conv::SIntToFloat { round: Round::Default } => unfl(&sx(src, from), to),
        Conv::Float { round: Round::Default } => unfl(&fl(src, from)?, to),
        other => return Err(Refusal(format!("the conversion {other:?}"))),
    })
}
