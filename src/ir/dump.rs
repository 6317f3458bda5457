//! A textual form of the IR, for reading lowered code and for golden tests of the lowering.
//!
//! One line per instruction: its index, what it writes, the operation and its operands, and the
//! source location the lowering gave it. Registers print as `r7`, a range of lanes as `r7:4`;
//! branch targets are instruction indices; side tables (access-chain indices, shuffle lanes, call
//! and printf arguments, switch tables, layouts) are printed where they are used. Source files
//! print by file name only, so the text does not depend on where the source was compiled from.
//!
//! It owns the form only and knows nothing of how the IR is produced or run. It is meant for
//! people and for tests, and is built with ordinary `String` formatting: never call it where
//! speed matters.

use std::fmt::{self, Display, Formatter, Write};

use super::{
    Arg, ArgKind, Conv, Fence, Function, Index, Inst, Kernel, Layout, MathKind, MemOrder, Module, ParamKind, Reg,
    Round, Scope, SwitchTable, Variable,
};

/// The column at which a line's source location starts (when the instruction is shorter).
const LOC_COLUMN: usize = 56;

/// `r7` for one slot, `r7:4` for `n` slots.
struct Regs(Reg, u64);

impl Display for Regs {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.1 {
            1 => write!(f, "r{}", self.0),
            n => write!(f, "r{}:{n}", self.0),
        }
    }
}

fn r(reg: Reg) -> Regs {
    Regs(reg, 1)
}

fn rn(reg: Reg, n: impl Into<u64>) -> Regs {
    Regs(reg, n.into())
}

/// A small enum's name in lower case (`SDiv` -> `sdiv`).
fn lower<T: fmt::Debug>(value: T) -> String {
    format!("{value:?}").to_ascii_lowercase()
}

fn round(round: Round) -> &'static str {
    match round {
        Round::Default => "",
        Round::Rte => ".rte",
        Round::Rtz => ".rtz",
        Round::Rtp => ".rtp",
        Round::Rtn => ".rtn",
    }
}

fn conv(c: Conv) -> String {
    let sat = |s: bool| if s { ".sat" } else { "" };
    match c {
        Conv::UInt => "uint".into(),
        Conv::SInt => "sint".into(),
        Conv::SatInt { src_signed, dst_signed } => {
            format!("sat.{}to{}", if src_signed { "s" } else { "u" }, if dst_signed { "s" } else { "u" })
        }
        Conv::FloatToUInt { sat: s, round: m } => format!("ftou{}{}", sat(s), round(m)),
        Conv::FloatToSInt { sat: s, round: m } => format!("ftos{}{}", sat(s), round(m)),
        Conv::UIntToFloat { round: m } => format!("utof{}", round(m)),
        Conv::SIntToFloat { round: m } => format!("stof{}", round(m)),
        Conv::Float { round: m } => format!("ftof{}", round(m)),
        Conv::PtrInt => "ptrint".into(),
        Conv::IntPtr => "intptr".into(),
    }
}

fn fence(fence: Fence) -> &'static str {
    match (fence.local, fence.global) {
        (false, false) => "none",
        (true, false) => "local",
        (false, true) => "global",
        (true, true) => "local+global",
    }
}

fn order(order: MemOrder) -> String {
    lower(order)
}

fn scope(scope: Scope) -> String {
    lower(scope)
}

fn math_kind(kind: MathKind) -> String {
    match kind {
        MathKind::F16 => "f16".into(),
        MathKind::F32 => "f32".into(),
        MathKind::F64 => "f64".into(),
        MathKind::Int(bits) => format!("i{bits}"),
    }
}

fn arg_kind(kind: ArgKind) -> String {
    match kind {
        ArgKind::Int(bits) => format!("i{bits}"),
        ArgKind::Float(bits) => format!("f{bits}"),
        ArgKind::Pointer => "ptr".into(),
        ArgKind::Other => "other".into(),
    }
}

fn args(list: &[Arg]) -> String {
    let shown: Vec<String> = list
        .iter()
        .map(|a| match a.kind {
            ArgKind::Other => rn(a.reg, a.n).to_string(),
            kind => format!("{} {}", rn(a.reg, a.n), arg_kind(kind)),
        })
        .collect();
    shown.join(", ")
}

fn table<T>(table: &[T], first: u32, n: u16) -> &[T] {
    table.get(first as usize..first as usize + n as usize).unwrap_or(&[])
}

fn index_terms(indices: &[Index]) -> String {
    let terms: Vec<String> = indices.iter().map(|i| format!(" + {}.i{}*{}", r(i.reg), i.bits, i.stride)).collect();
    terms.concat()
}

fn switch_table(t: &SwitchTable) -> String {
    let cases: Vec<String> = t.cases.iter().map(|(value, target)| format!("{value} -> {target}")).collect();
    format!("[{}] default {}", cases.join(", "), t.default)
}

/// A file path shown by its file name.
fn file_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

impl Module {
    /// The source location `loc` as `file.cl:line:column` (file name only), if it has one.
    fn short_location(&self, loc: u32) -> Option<String> {
        let l = self.locations.get(loc as usize)?;
        (l.line > 0).then(|| format!("{}:{}:{}", file_name(&l.file), l.line, l.column))
    }

    /// One instruction of `func` in the dump's form, without its index or location. An
    /// instruction's own `loc` field is shown only where it differs from the line's location.
    pub fn instruction_text(&self, func: &Function, pc: usize) -> String {
        let Some(inst) = func.code.get(pc) else { return String::new() };
        let line_loc = func.locs.get(pc).copied().unwrap_or(u32::MAX);
        let layout = |l: u32| self.layouts.get(l as usize).map_or(0, |l| l.leaves.len() as u64);
        let mut s = match *inst {
            Inst::Mov { dst, src, n } => format!("{} = mov {}", rn(dst, n), rn(src, n)),
            Inst::IntBin { op, bits, dst, a, b, n } => {
                format!("{} = int.{}.{bits} {}, {}", rn(dst, n), lower(op), rn(a, n), rn(b, n))
            }
            Inst::FloatBin { op, bits, dst, a, b, n } => {
                format!("{} = float.{}.{bits} {}, {}", rn(dst, n), lower(op), rn(a, n), rn(b, n))
            }
            Inst::Compare { cmp, bits, dst, a, b, n } => {
                format!("{} = cmp.{}.{bits} {}, {}", rn(dst, n), lower(cmp), rn(a, n), rn(b, n))
            }
            Inst::Unary { op, bits, dst, a, n } => format!("{} = {}.{bits} {}", rn(dst, n), lower(op), rn(a, n)),
            Inst::Convert { conv: c, from, to, dst, src, n } => {
                format!("{} = convert.{}.{from}.{to} {}", rn(dst, n), conv(c), rn(src, n))
            }
            Inst::Select { dst, cond, a, b, n, cond_lanes } => format!(
                "{} = select {} ? {} : {}",
                rn(dst, n),
                rn(cond, if cond_lanes { n } else { 1 }),
                rn(a, n),
                rn(b, n)
            ),
            Inst::Bitcast { dst, src, from, to } => {
                format!("{} = bitcast {} (layout {from} -> {to})", rn(dst, layout(to)), rn(src, layout(from)))
            }
            Inst::Reduce { all, dst, src, n } => {
                format!("{} = {} {}", r(dst), if all { "all" } else { "any" }, rn(src, n))
            }
            Inst::PtrOffset { dst, base, offset, first_index, num_indices } => format!(
                "{} = ptr {} + {offset}{}",
                r(dst),
                r(base),
                index_terms(table(&func.indices, first_index, num_indices))
            ),
            Inst::PtrDiff { dst, a, b, elem } => format!("{} = ptrdiff {}, {} / {elem}", r(dst), r(a), r(b)),
            Inst::Load { dst, ptr, layout: l, loc, .. } => {
                with_loc(format!("{} = load [{}] layout {l}", rn(dst, layout(l)), r(ptr)), loc, line_loc)
            }
            Inst::LoadScalar { dst, ptr, size, loc, .. } => {
                with_loc(format!("{} = load.{size} [{}]", r(dst), r(ptr)), loc, line_loc)
            }
            Inst::Store { src, ptr, layout: l, loc, .. } => {
                with_loc(format!("store [{}] = {} layout {l}", r(ptr), rn(src, layout(l))), loc, line_loc)
            }
            Inst::StoreScalar { src, ptr, size, loc, .. } => {
                with_loc(format!("store.{size} [{}] = {}", r(ptr), r(src)), loc, line_loc)
            }
            Inst::IndexCheck { index, ptr, extent, loc } => {
                let term = match func.indices.get(index as usize) {
                    Some(i) => format!("{}.i{}", r(i.reg), i.bits),
                    None => format!("index {index}"),
                };
                with_loc(format!("check {term} < {extent} for {}", r(ptr)), loc, line_loc)
            }
            Inst::CopyMemory { dst, src, size, loc } => {
                with_loc(format!("copy [{}] = [{}] bytes {}", r(dst), r(src), r(size)), loc, line_loc)
            }
            Inst::Alloca { dst, size, align } => format!("{} = alloca {size} align {align}", r(dst)),
            Inst::ExtractDynamic { dst, src, index, index_bits, n, beyond } => {
                format!("{} = extract {}[{}.i{index_bits}] beyond {beyond}", r(dst), rn(src, n), r(index))
            }
            Inst::InsertDynamic { dst, src, value, index, index_bits, n } => {
                format!("{} = insert {}[{}.i{index_bits}] = {}", rn(dst, n), rn(src, n), r(index), r(value))
            }
            Inst::Shuffle { dst, first, n } => {
                let lanes: Vec<String> = table(&func.lanes, first, n).iter().map(|&l| r(l).to_string()).collect();
                format!("{} = shuffle [{}]", rn(dst, n), lanes.join(", "))
            }
            Inst::ShuffleDynamic { dst, a, b, na, mask, n, mask_bits } => {
                format!("{} = shuffle {}, {} by {}.i{mask_bits}", rn(dst, n), rn(a, na), rn(b, na), rn(mask, n))
            }
            Inst::Builtin { dst, which, dims } if dims < which.lanes() => {
                format!("{} = builtin {}, {dims} read", rn(dst, which.lanes()), lower(which))
            }
            Inst::Builtin { dst, which, .. } => format!("{} = builtin {}", rn(dst, which.lanes()), lower(which)),
            Inst::Math { op, kind, dst, args, n } => format!(
                "{} = math.{}.{} {}, {}, {}",
                rn(dst, n),
                lower(op),
                math_kind(kind),
                rn(args[0], n),
                rn(args[1], n),
                rn(args[2], n)
            ),
            Inst::MathOut { op, bits, out_bits, dst, a, b, out, n, loc } => with_loc(
                format!(
                    "{} = math.{}.f{bits} {}, {}; out.{out_bits} [{}]",
                    rn(dst, n),
                    lower(op),
                    rn(a, n),
                    rn(b, n),
                    r(out)
                ),
                loc,
                line_loc,
            ),
            Inst::Geometric { op, bits, dst, a, b, n } => {
                format!("{} = geo.{}.f{bits} {}, {}", r(dst), lower(op), rn(a, n), rn(b, n))
            }
            Inst::VectorMemory { op, dst, offset, ptr, elem, n, loc } => {
                let what = match op {
                    super::VecMem::Load => "vload".to_string(),
                    super::VecMem::Store => "vstore".to_string(),
                    super::VecMem::LoadHalf { aligned } => format!("vload_half{}", if aligned { ".a" } else { "" }),
                    super::VecMem::StoreHalf { aligned, round, f64 } => format!(
                        "vstore_half{}{}{}",
                        if aligned { ".a" } else { "" },
                        round.map_or(String::new(), |m| format!(".{}", lower(m))),
                        if f64 { ".f64" } else { "" }
                    ),
                };
                with_loc(format!("{what}.{elem}x{n} {} @ [{}] + {}", rn(dst, n), r(ptr), r(offset)), loc, line_loc)
            }
            Inst::Atomic { op, bits, order: o, fail_order, scope: sc, dst, ptr, value, comparator, loc } => with_loc(
                format!(
                    "{} = atomic.{}.{bits} [{}], {}, {} {} fail {} {}",
                    r(dst),
                    lower(op),
                    r(ptr),
                    r(value),
                    r(comparator),
                    order(o),
                    order(fail_order),
                    scope(sc)
                ),
                loc,
                line_loc,
            ),
            Inst::Collective { op, bits, dst, src, id, id_n, loc, sub_group } => {
                let op = match op {
                    super::CollectiveOp::All => "all".to_string(),
                    super::CollectiveOp::Any => "any".to_string(),
                    super::CollectiveOp::Broadcast => "broadcast".to_string(),
                    super::CollectiveOp::Reduce(a) => format!("reduce.{}", lower(a)),
                    super::CollectiveOp::InclusiveScan(a) => format!("scan.inclusive.{}", lower(a)),
                    super::CollectiveOp::ExclusiveScan(a) => format!("scan.exclusive.{}", lower(a)),
                };
                let group = if sub_group { "sub_group" } else { "work_group" };
                let id = if id_n > 0 { format!(" from {}", rn(id, id_n)) } else { String::new() };
                with_loc(format!("{} = {group}.{op}.{bits} {}{id}", r(dst), r(src)), loc, line_loc)
            }
            Inst::Barrier { fence: fc, scope: sc, loc, sub_group } => with_loc(
                format!(
                    "{} fence {} {}",
                    if sub_group { "sub_group_barrier" } else { "barrier" },
                    fence(fc),
                    scope(sc)
                ),
                loc,
                line_loc,
            ),
            Inst::MemoryFence { fence: fc, order: o, scope: sc, loc } => {
                with_loc(format!("fence {} {} {}", fence(fc), order(o), scope(sc)), loc, line_loc)
            }
            Inst::CastToSpace { dst, src, space } => format!("{} = cast_to_space {} space {space}", r(dst), r(src)),
            Inst::PointerFence { dst, src } => format!("{} = get_fence {}", r(dst), r(src)),
            Inst::AsyncCopy { dst, dst_ptr, src_ptr, count, stride, elem, to_local, event, loc } => with_loc(
                format!(
                    "{} = async_copy.{} [{}] = [{}] count {} stride {} elem {elem} event {}",
                    r(dst),
                    if to_local { "to_local" } else { "to_global" },
                    r(dst_ptr),
                    r(src_ptr),
                    r(count),
                    r(stride),
                    r(event)
                ),
                loc,
                line_loc,
            ),
            Inst::WaitEvents { num, list, loc } => {
                with_loc(format!("wait_events {} [{}]", r(num), r(list)), loc, line_loc)
            }
            Inst::ImageRead { dst, image, coord, coord_n, float_coord, sampled, texel, loc } => with_loc(
                format!(
                    "{} = read_image.{} {} at {}.{}",
                    rn(dst, 4u64),
                    lower(texel),
                    rn(image, if sampled { 2u64 } else { 1 }),
                    rn(coord, coord_n),
                    if float_coord { "f" } else { "i" }
                ),
                loc,
                line_loc,
            ),
            Inst::ImageWrite { image, coord, coord_n, src, texel, loc } => with_loc(
                format!("write_image.{} {} at {} = {}", lower(texel), r(image), rn(coord, coord_n), rn(src, 4u64)),
                loc,
                line_loc,
            ),
            Inst::ImageQuery { dst, image, query, n, bits } => {
                format!("{} = image_query.{}.{bits} {}", rn(dst, n), lower(query), r(image))
            }
            Inst::Printf { dst, fmt, first_arg, num_args } => {
                format!("{} = printf {} ({})", r(dst), r(fmt), args(table(&func.args, first_arg, num_args)))
            }
            Inst::Branch { target } => format!("branch {target}"),
            Inst::BranchIf { cond, then, otherwise } => {
                format!("branch {} ? {then} : {otherwise}{}", r(cond), join_text(func, pc))
            }
            Inst::Switch { value, bits, table } => {
                let t = func.switch_tables.get(table as usize).map_or_else(|| "?".into(), switch_table);
                format!("switch.{bits} {} {t}{}", r(value), join_text(func, pc))
            }
            Inst::Call { func: callee, dst, first_arg, num_args } => {
                let name = self.functions.get(callee as usize).map_or("?", |f| f.name.as_str());
                let returned = self.functions.get(callee as usize).map_or(0, returned_slots);
                let a = args(table(&func.args, first_arg, num_args));
                if returned > 0 {
                    format!("{} = call {callee} {name} ({a})", rn(dst, returned))
                } else {
                    format!("call {callee} {name} ({a})")
                }
            }
            Inst::Return { n: 0, .. } => "return".into(),
            Inst::Return { src, n } => format!("return {}", rn(src, n)),
            Inst::Unreachable { loc } => with_loc("unreachable".into(), loc, line_loc),
            Inst::Assert { cond, bits, has_msg, msg, loc } => {
                let message = if has_msg { format!(" {}", r(msg)) } else { String::new() };
                with_loc(format!("assert.{bits} {}{message}", r(cond)), loc, line_loc)
            }
            Inst::Unsupported { what, loc } => with_loc(
                format!("unsupported \"{}\"", self.unsupported.get(what as usize).map_or("?", |s| s.as_str())),
                loc,
                line_loc,
            ),
        };
        s.truncate(s.trim_end().len());
        s
    }

    /// The whole module as text: layouts, variables, kernels, then every function.
    pub fn dump(&self) -> String {
        self.to_string()
    }

    /// The kernel named `name` as text: its line, then its function and every function it may
    /// call, in module order. None if there is no such kernel.
    pub fn dump_kernel(&self, name: &str) -> Option<String> {
        let kernel = self.kernels.iter().find(|k| k.info.name == name)?;
        let mut reached = vec![false; self.functions.len()];
        let mut work = vec![kernel.function as usize];
        while let Some(f) = work.pop() {
            if f >= reached.len() || std::mem::replace(&mut reached[f], true) {
                continue;
            }
            for inst in &self.functions[f].code {
                if let Inst::Call { func, .. } = inst {
                    work.push(*func as usize);
                }
            }
        }
        let mut out = String::new();
        let _ = writeln!(out, "{}", KernelLine(kernel));
        for (index, _) in reached.iter().enumerate().filter(|(_, r)| **r) {
            let _ = write!(out, "\n{}", FunctionDump { module: self, index });
        }
        Some(out)
    }

    fn write_function(&self, out: &mut Formatter<'_>, index: usize, func: &Function) -> fmt::Result {
        let params: Vec<String> = func.params.iter().map(|&(reg, n)| rn(reg, n).to_string()).collect();
        writeln!(
            out,
            "function {index} {} ({}) {} registers, {} instructions",
            if func.name.is_empty() { "(unnamed)" } else { &func.name },
            params.join(", "),
            func.template.len(),
            func.code.len()
        )?;
        let consts: Vec<String> = func
            .template
            .iter()
            .enumerate()
            .filter(|(_, v)| **v != 0)
            .map(|(i, &v)| if v < 0x10000 { format!("r{i} = {v}") } else { format!("r{i} = {v:#x}") })
            .collect();
        for chunk in consts.chunks(8) {
            writeln!(out, "  const {}", chunk.join(", "))?;
        }
        let width = func.code.len().saturating_sub(1).to_string().len();
        let mut line = String::new();
        for pc in 0..func.code.len() {
            line.clear();
            let _ = write!(line, "  {pc:>width$}  {}", self.instruction_text(func, pc));
            if let Some(loc) = func.locs.get(pc).and_then(|&l| self.short_location(l)) {
                let pad = LOC_COLUMN.saturating_sub(line.len()).max(1);
                let _ = write!(line, "{:pad$}; {loc}", "");
            }
            writeln!(out, "{line}")?;
        }
        Ok(())
    }
}

/// Where the paths of the branch at `pc` meet again (` join N`, ` join exit`), if known.
fn join_text(func: &Function, pc: usize) -> String {
    match func.joins.get(pc) {
        Some(&u32::MAX) => " join exit".into(),
        Some(j) => format!(" join {j}"),
        None => String::new(),
    }
}

/// The most slots any `Return` of `func` gives back.
fn returned_slots(func: &Function) -> u64 {
    func.code
        .iter()
        .filter_map(|i| if let Inst::Return { n, .. } = i { Some(*n as u64) } else { None })
        .max()
        .unwrap_or(0)
}

/// `text` with ` @loc N` appended when the instruction's own location is not the line's.
fn with_loc(mut text: String, loc: u32, line_loc: u32) -> String {
    if loc != line_loc {
        if loc == u32::MAX {
            text.push_str(" @loc none");
        } else {
            let _ = write!(text, " @loc {loc}");
        }
    }
    text
}

fn write_layout(out: &mut Formatter<'_>, index: usize, layout: &Layout) -> fmt::Result {
    let leaves: Vec<String> = layout.leaves.iter().map(|l| format!("{}:{}", l.offset, l.size)).collect();
    writeln!(out, "layout {index}: {} bytes [{}]", layout.size, leaves.join(", "))
}

fn write_variable(out: &mut Formatter<'_>, what: &str, index: usize, v: &Variable) -> fmt::Result {
    writeln!(
        out,
        "{what} {index} {}: {} bytes align {}{}{}",
        v.name,
        v.size,
        v.align,
        if v.writable { "" } else { " constant" },
        if v.init.is_empty() { String::new() } else { format!(" init {} bytes", v.init.len()) }
    )
}

fn param_kind(kind: &ParamKind) -> String {
    match kind {
        ParamKind::Buffer => "buffer".into(),
        ParamKind::Local => "local".into(),
        ParamKind::Value { layout } => format!("value(layout {layout})"),
        ParamKind::ByValPointer { layout } => format!("byval(layout {layout})"),
        ParamKind::Image => "image".into(),
        ParamKind::Sampler => "sampler".into(),
        ParamKind::Unsupported(what) => format!("unsupported({what})"),
    }
}

/// A kernel's line: its name, function and parameter kinds.
struct KernelLine<'a>(&'a Kernel);

impl Display for KernelLine<'_> {
    fn fmt(&self, out: &mut Formatter<'_>) -> fmt::Result {
        let params: Vec<String> = self.0.params.iter().map(param_kind).collect();
        write!(out, "kernel {} = function {} ({})", self.0.info.name, self.0.function, params.join(", "))
    }
}

impl Display for Module {
    fn fmt(&self, out: &mut Formatter<'_>) -> fmt::Result {
        for (i, layout) in self.layouts.iter().enumerate() {
            write_layout(out, i, layout)?;
        }
        for (i, v) in self.globals.iter().enumerate() {
            write_variable(out, "global", i + 1, v)?;
        }
        for (i, v) in self.locals.iter().enumerate() {
            write_variable(out, "local", i, v)?;
        }
        for kernel in &self.kernels {
            writeln!(out, "{}", KernelLine(kernel))?;
        }
        for (i, func) in self.functions.iter().enumerate() {
            writeln!(out)?;
            self.write_function(out, i, func)?;
        }
        Ok(())
    }
}

/// One function of a module, displayed as [`Module::dump`] shows it.
pub struct FunctionDump<'a> {
    pub module: &'a Module,
    pub index: usize,
}

impl Display for FunctionDump<'_> {
    fn fmt(&self, out: &mut Formatter<'_>) -> fmt::Result {
        match self.module.functions.get(self.index) {
            Some(func) => self.module.write_function(out, self.index, func),
            None => writeln!(out, "no function {}", self.index),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;

    #[test]
    fn one_instruction_a_line_with_registers_targets_tables_and_locations() {
        let func = Function {
            name: "f".into(),
            joins: Vec::new(),
            code: vec![
                Inst::PtrOffset { dst: 2, base: 0, offset: 8, first_index: 0, num_indices: 1 },
                Inst::LoadScalar { dst: 3, ptr: 2, size: 4, loc: 0, align: 4 },
                Inst::Switch { value: 3, bits: 32, table: 0 },
                Inst::IntBin { op: IntOp::SDiv, bits: 32, dst: 4, a: 3, b: 1, n: 2 },
                Inst::Return { src: 4, n: 1 },
            ],
            locs: vec![u32::MAX, 0, 0, 1, 1],
            template: vec![0, 0, 0, 0, 0, 0, 70000],
            params: vec![(0, 1), (1, 1)],
            indices: vec![Index { reg: 1, bits: 32, stride: -4 }],
            lanes: vec![],
            args: vec![],
            switch_tables: vec![SwitchTable { cases: vec![(7, 4), (9, 3)], default: 4 }],
            undefined: vec![],
        };
        let module = Module {
            functions: vec![func],
            locations: vec![
                SourceLoc { file: "/some/dir/k.cl".into(), line: 3, column: 9 },
                SourceLoc { file: String::new(), line: 0, column: 0 },
            ]
            .into(),
            ..Module::default()
        };
        let want = "\nfunction 0 f (r0, r1) 7 registers, 5 instructions
  const r6 = 0x11170
  0  r2 = ptr r0 + 8 + r1.i32*-4
  1  r3 = load.4 [r2]                                   ; k.cl:3:9
  2  switch.32 r3 [7 -> 4, 9 -> 3] default 4            ; k.cl:3:9
  3  r4:2 = int.sdiv.32 r3:2, r1:2
  4  return r4
";
        assert_eq!(module.dump(), want);
    }
}
