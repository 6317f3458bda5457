//! A generated differential sweep of OpenCL C builtins: kernels are generated here from the
//! tables below, run in the emulator and on pocl with the same deterministic inputs (edge values
//! of each type: 0, -0, 1, -1, min and max, the sign bit alone, NaN, infinities and denormals,
//! then pseudo-random values), and every output element is compared. Covered:
//! - integer builtins (abs .. upsample, popcount, ctz, mad24, mul24) for every integer type at
//!   widths 1, 2, 3, 4, 8 and 16;
//! - relational builtins (comparisons, classification, any, all, bitselect, select) for float
//!   and double at the same widths;
//! - conversions `convert_T[_sat][_rte|_rtz|_rtp|_rtn]` between every pair of integer and float
//!   types at widths 1 and 4, and `as_T` reinterpretation;
//! - common functions and math functions for float (widths 1 and 4) and double (width 1),
//!   compared within the ulp bounds of the OpenCL 1.2 specification (table 7.1; NaN equals NaN);
//! - vector data: vloadN/vstoreN at unaligned offsets, vload_half/vstore_half with every
//!   rounding mode, shuffle and shuffle2.
//!
//! A kernel computes several builtins ("slots") over the same inputs; each work-item loads one
//! vector from each input buffer and stores every slot's result into that slot's region of an
//! output buffer. A failure names the kernel, builtin, type, width, work-item, lane and inputs.
//! Known gaps of the emulator are listed in [`KNOWN`] and skipped; kernels pocl itself cannot
//! build are left out where they would be generated, with a comment.

mod common;

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use clrace::{ArgValue, Launch, Program};
use common::{PoclProgram, Rng, ulp_apart};

/// Scalar lanes in each input buffer (work-items times vector width, 4 lanes for a 3-vector).
const LANES: usize = 1024;
/// Extra elements after each input buffer, for loads at an offset.
const PAD: usize = 32;
/// Differences printed per slot.
const SHOWN: usize = 4;

/// Slot keys (`builtin(type)`, e.g. `add_sat(char4)`; `*` matches anything) whose differences
/// from pocl are known gaps of the emulator and skipped, each after a
/// `// known difference: <why>` line. Empty: every generated slot agrees with pocl. Where both
/// sides are right (the sign of a zero from fmin/fmax/fract, NaN payloads) the slot's [`Cmp`]
/// says what is compared instead.
const KNOWN: &[&str] = &[];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ty {
    Char,
    UChar,
    Short,
    UShort,
    Int,
    UInt,
    Long,
    ULong,
    Float,
    Double,
}
use Ty::*;

const INTS: [Ty; 8] = [Char, UChar, Short, UShort, Int, UInt, Long, ULong];
const ALL: [Ty; 10] = [Char, UChar, Short, UShort, Int, UInt, Long, ULong, Float, Double];

impl Ty {
    fn name(self) -> &'static str {
        match self {
            Char => "char",
            UChar => "uchar",
            Short => "short",
            UShort => "ushort",
            Int => "int",
            UInt => "uint",
            Long => "long",
            ULong => "ulong",
            Float => "float",
            Double => "double",
        }
    }
    fn size(self) -> usize {
        match self {
            Char | UChar => 1,
            Short | UShort => 2,
            Int | UInt | Float => 4,
            Long | ULong | Double => 8,
        }
    }
    fn bits(self) -> u32 {
        8 * self.size() as u32
    }
    fn is_float(self) -> bool {
        matches!(self, Float | Double)
    }
    fn signed(self) -> bool {
        matches!(self, Char | Short | Int | Long | Float | Double)
    }
    fn unsigned(self) -> Ty {
        match self {
            Char => UChar,
            Short => UShort,
            Int | Float => UInt,
            Long | Double => ULong,
            t => t,
        }
    }
    /// The signed integer type of the same size (the result type of vector relationals).
    fn int_of_size(self) -> Ty {
        match self.unsigned() {
            UChar => Char,
            UShort => Short,
            UInt => Int,
            _ => Long,
        }
    }
    fn vec(self, w: usize) -> String {
        if w == 1 { self.name().to_string() } else { format!("{}{w}", self.name()) }
    }
    fn mask(self) -> u64 {
        if self.bits() == 64 { u64::MAX } else { (1u64 << self.bits()) - 1 }
    }
    fn int_value(self, v: u64) -> i128 {
        let v = v & self.mask();
        if self.signed() && v >> (self.bits() - 1) & 1 == 1 { v as i128 - (1i128 << self.bits()) } else { v as i128 }
    }
    /// A value given as f64 as this type's bits (floats round, integers truncate).
    fn bits_of(self, x: f64) -> u64 {
        match self {
            Float => (x as f32).to_bits() as u64,
            Double => x.to_bits(),
            _ => (x as i128 as u64) & self.mask(),
        }
    }
    fn to_f64(self, v: u64) -> f64 {
        match self {
            Float => f32::from_bits(v as u32) as f64,
            Double => f64::from_bits(v),
            _ => self.int_value(v) as f64,
        }
    }
    fn format(self, v: u64) -> String {
        match self {
            Float => format!("{:e} ({:#010x})", f32::from_bits(v as u32), v as u32),
            Double => format!("{:e} ({v:#018x})", f64::from_bits(v)),
            _ => self.int_value(v).to_string(),
        }
    }
}

/// The edge values of a type, as bits.
fn edges(t: Ty) -> Vec<u64> {
    match t {
        Float => [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            0.5,
            -0.5,
            1.5,
            -2.5,
            3.7,
            -0.1,
            10.0,
            -100.0,
            1e10,
            -1e-10,
            8388607.5,
            std::f32::consts::PI,
            f32::MAX,
            f32::MIN,
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
            f32::from_bits(1),
            f32::from_bits(0x007f_ffff),
            -f32::from_bits(0x0000_1234),
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            2.0,
            -3.0,
            0.75,
            1e-30,
        ]
        .iter()
        .map(|x| x.to_bits() as u64)
        .collect(),
        Double => [
            0.0f64,
            -0.0,
            1.0,
            -1.0,
            0.5,
            -0.5,
            1.5,
            -2.5,
            3.7,
            -0.1,
            10.0,
            -100.0,
            1e10,
            -1e-10,
            4503599627370495.5,
            std::f64::consts::PI,
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
            f64::from_bits(1),
            f64::from_bits(0x000f_ffff_ffff_ffff),
            -f64::from_bits(0x1234),
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            2.0,
            -3.0,
            0.75,
            1e-300,
        ]
        .iter()
        .map(|x| x.to_bits())
        .collect(),
        _ => {
            let m = t.mask();
            let sign = 1u64 << (t.bits() - 1);
            let half = 1u64 << (t.bits() / 2);
            vec![
                0,
                1,
                m,
                2,
                m - 1,
                sign,
                sign - 1,
                sign + 1,
                0x5555_5555_5555_5555 & m,
                0xaaaa_aaaa_aaaa_aaaa & m,
                half,
                half - 1,
                7,
                100,
                m - 99,
            ]
        }
    }
}

/// `LANES + PAD` inputs for input buffer `which` (0, 1, 2) of type `t`: every pair of edge values
/// for the first two buffers (the third cycles through them), then pseudo-random values.
fn inputs(t: Ty, which: usize, extra: &[u64]) -> Vec<u64> {
    let mut e = edges(t);
    e.extend_from_slice(extra);
    let n = e.len();
    let mut rng = Rng(0x5eed ^ (which as u64) << 32 ^ t as u64);
    (0..LANES + PAD)
        .map(|j| {
            if j < n * n {
                return match which {
                    0 => e[j % n],
                    1 => e[j / n],
                    _ => e[(j * 7 + j / n) % n],
                };
            }
            let r = rng.next();
            match (t, r % 3) {
                (Float, 0) => r >> 32,
                (Double, 0) => r >> 2 | (r & 1) << 63,
                (Float | Double, 1) => t.bits_of(rng.unit() * 20.0 - 10.0),
                (Float | Double, _) => {
                    let sign = if r & 8 != 0 { -1.0 } else { 1.0 };
                    t.bits_of(sign * (1.0 + rng.unit()) * 2f64.powi((r >> 8 & 127) as i32 - 64))
                }
                (_, 0) => r & t.mask(),
                (_, _) => t.bits_of((rng.unit() * 600.0 - 300.0).round()),
            }
        })
        .collect()
}

fn to_bytes(t: Ty, values: &[u64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()[..t.size()].to_vec()).collect()
}

fn from_bytes(t: Ty, bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b[..t.size()].copy_from_slice(bytes);
    u64::from_le_bytes(b)
}

/// How a slot's elements are compared.
#[derive(Clone, Copy, Debug)]
enum Cmp {
    Exact,
    /// Floats within this many ulp (NaN equals NaN).
    Ulp(u64),
    /// As `Ulp`, and a zero equals a zero of either sign (whose sign the builtin leaves open).
    UlpAnyZero(u64),
    /// Half bits, any NaN equal to any NaN (the payload of a NaN stored as half is open).
    Half,
}

/// How a slot's result is stored.
#[derive(Clone, Debug)]
enum Code {
    /// An expression of the slot's result type, stored with vstoreN.
    Expr(String),
    /// A statement that stores the result itself: `{out}` is the slot's base pointer.
    Stmt(String),
}

/// One builtin computed by a kernel.
#[derive(Clone, Debug)]
struct Slot {
    /// The builtin's name, used with the input type for the key of [`KNOWN`].
    builtin: String,
    /// Statements run before the slot (declarations of out-parameters).
    pre: String,
    code: Code,
    /// Scalar type of the result.
    out: Ty,
    /// Result lanes per work-item.
    lanes: usize,
    cmp: Cmp,
}

/// One generated kernel: three inputs `a`, `b`, `c` of `input` type at `width`, and its slots.
struct Kernel {
    name: String,
    input: Ty,
    width: usize,
    /// Values of the three input buffers (bits).
    inputs: [Vec<u64>; 3],
    /// Type name of the input buffers in the source (default: the input type).
    input_decl: Option<&'static str>,
    prelude: String,
    slots: Vec<Slot>,
}

impl Kernel {
    fn new(name: String, input: Ty, width: usize) -> Kernel {
        let inputs = [inputs(input, 0, &[]), inputs(input, 1, &[]), inputs(input, 2, &[])];
        Kernel { name, input, width, inputs, input_decl: None, prelude: String::new(), slots: Vec::new() }
    }
    /// Work-items of the launch.
    fn items(&self) -> usize {
        LANES / if self.width == 3 { 4 } else { self.width }
    }
    fn vec(&self) -> String {
        self.input.vec(self.width)
    }
    /// A slot whose result has the input's width, compared as `cmp`.
    fn slot(&mut self, builtin: &str, expr: String, out: Ty, cmp: Cmp) {
        self.slots.push(Slot {
            builtin: builtin.into(),
            pre: String::new(),
            code: Code::Expr(expr),
            out,
            lanes: self.width,
            cmp,
        });
    }
    fn key(&self, slot: &Slot) -> String {
        format!("{}({})", slot.builtin, self.vec())
    }
    /// The output buffer types, in order of first use.
    fn outputs(&self) -> Vec<Ty> {
        let mut out: Vec<Ty> = Vec::new();
        for s in &self.slots {
            if !out.contains(&s.out) {
                out.push(s.out);
            }
        }
        out
    }
    /// (output buffer, element offset) of every slot.
    fn layout(&self) -> Vec<(usize, usize)> {
        let outputs = self.outputs();
        let mut next = vec![0usize; outputs.len()];
        self.slots
            .iter()
            .map(|s| {
                let buf = outputs.iter().position(|&t| t == s.out).unwrap();
                let at = next[buf];
                next[buf] += self.items() * s.lanes;
                (buf, at)
            })
            .collect()
    }
    fn source(&self) -> String {
        let decl = self.input_decl.unwrap_or(self.input.name());
        let mut s = format!(
            "kernel void {}(global const {decl} *ga, global const {decl} *gb, global const {decl} *gc",
            self.name
        );
        for (i, t) in self.outputs().iter().enumerate() {
            let _ = write!(s, ", global {} *o{i}", t.name());
        }
        s.push_str(")\n{\n    size_t gid = get_global_id(0);\n");
        if self.input_decl.is_none() {
            let v = self.vec();
            let load =
                |p: &str| if self.width == 1 { format!("{p}[gid]") } else { format!("vload{}(gid, {p})", self.width) };
            let _ = writeln!(s, "    {v} a = {}, b = {}, c = {};", load("ga"), load("gb"), load("gc"));
        }
        s.push_str(&self.prelude);
        for (slot, (buf, at)) in self.slots.iter().zip(self.layout()) {
            s.push_str(&slot.pre);
            let base = format!("o{buf} + {at}");
            match &slot.code {
                Code::Expr(e) if slot.lanes == 1 => {
                    let _ = writeln!(s, "    o{buf}[{at} + gid] = {e};");
                }
                Code::Expr(e) => {
                    let _ = writeln!(s, "    vstore{}({e}, gid, {base});", slot.lanes);
                }
                Code::Stmt(st) => {
                    let _ = writeln!(s, "    {};", st.replace("{out}", &format!("({base})")));
                }
            }
        }
        s.push_str("}\n");
        s
    }
    /// The input buffers followed by output buffers filled with a marker.
    fn buffers(&self) -> Vec<Vec<u8>> {
        let mut buffers: Vec<Vec<u8>> = self.inputs.iter().map(|v| to_bytes(self.input, v)).collect();
        let outputs = self.outputs();
        let mut sizes = vec![0usize; outputs.len()];
        for (s, (buf, _)) in self.slots.iter().zip(self.layout()) {
            sizes[buf] += self.items() * s.lanes * s.out.size();
        }
        buffers.extend(sizes.into_iter().map(|n| vec![0xa5u8; n]));
        buffers
    }
    fn launch(&self) -> Launch {
        let items = self.items() as u64;
        Launch {
            kernel: self.name.clone(),
            work_dim: 1,
            global_offset: [0; 3],
            global_size: [items, 1, 1],
            local_size: [items.min(32), 1, 1],
            args: (0..3 + self.outputs().len()).map(ArgValue::Buffer).collect(),
        }
    }
    /// The inputs of lane `lane` of work-item `item`, as text.
    fn describe_inputs(&self, slot: &Slot, item: usize, lane: usize) -> String {
        let code = match &slot.code {
            Code::Expr(e) | Code::Stmt(e) => format!("{} {e} {}", slot.pre, self.prelude),
        };
        let mut parts = Vec::new();
        for (i, name) in ["a", "b", "c"].iter().enumerate() {
            if !uses(&code, name) && !uses(&code, &format!("g{name}")) {
                continue;
            }
            let stride = if self.width == 3 { 3 } else { self.width };
            let value = |j: usize| self.input.format(self.inputs[i][j]);
            if slot.lanes == self.width && !code.contains(".s") {
                parts.push(format!("{name}={}", value(item * stride + lane)));
            } else {
                let all: Vec<String> = (0..self.width).map(|l| value(item * stride + l)).collect();
                parts.push(format!("{name}=({})", all.join(", ")));
            }
        }
        parts.join(" ")
    }
}

/// Whether `code` uses the identifier `name`.
fn uses(code: &str, name: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    code.match_indices(name).any(|(i, _)| {
        !code[..i].ends_with(ident) && !code[i + name.len()..].starts_with(ident) && !code[..i].ends_with('.')
    })
}

/// Whether `key` matches `pattern`, where `*` matches any run of characters.
fn glob(pattern: &str, key: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == key,
        Some((head, tail)) => {
            key.starts_with(head) && (0..=key.len() - head.len()).any(|i| glob(tail, &key[head.len() + i..]))
        }
    }
}

fn known(key: &str) -> bool {
    KNOWN.iter().any(|p| glob(p, key))
}

/// The differences of one slot between pocl (`want`) and the emulator (`got`), as lines.
fn compare_slot(k: &Kernel, slot: &Slot, want: &[u8], got: &[u8]) -> Vec<String> {
    let size = slot.out.size();
    let mut lines = Vec::new();
    let mut count = 0;
    for (e, (w, g)) in want.chunks(size).zip(got.chunks(size)).enumerate() {
        let (wv, gv) = (from_bytes(slot.out, w), from_bytes(slot.out, g));
        let far = match slot.cmp {
            Cmp::UlpAnyZero(_) if slot.out.to_f64(wv) == 0.0 && slot.out.to_f64(gv) == 0.0 => continue,
            Cmp::Ulp(n) | Cmp::UlpAnyZero(n) if slot.out.is_float() => match ulp_apart(wv, gv, slot.out.bits()) {
                Some(d) if d <= n => continue,
                Some(d) => format!(" ({d} ulp apart, allowed {n})"),
                None => " (NaN vs number)".to_string(),
            },
            Cmp::Half if wv & 0x7fff > 0x7c00 && gv & 0x7fff > 0x7c00 => continue,
            _ if wv == gv => continue,
            _ => String::new(),
        };
        count += 1;
        if lines.len() < SHOWN {
            let (item, lane) = (e / slot.lanes, e % slot.lanes);
            lines.push(format!(
                "work-item {item} lane {lane}: {}: pocl {}, emulator {}{far}",
                k.describe_inputs(slot, item, lane),
                slot.out.format(wv),
                slot.out.format(gv)
            ));
        }
    }
    if count > lines.len() {
        lines.push(format!("... {count} differing elements in all"));
    }
    lines
}

/// Builds `kernels` as one program (with `options`) on both sides, runs each and returns one
/// line per failure not in [`KNOWN`]. Panics listing them, if any.
fn sweep(group: &str, options: &str, kernels: Vec<Kernel>) {
    let start = Instant::now();
    let source: String = kernels.iter().map(|k| k.source()).collect::<Vec<_>>().join("\n");
    let path = Path::new("builtins.cl");
    let batch = Program::from_source(&source, path, options);
    let pocl = PoclProgram::build(&source, options);
    let mut failures = Vec::new();
    let mut known_hits = Vec::new();
    for k in &kernels {
        let report = |failures: &mut Vec<String>, known_hits: &mut Vec<String>, slot: Option<&Slot>, msg: String| {
            let keys: Vec<String> = match slot {
                Some(s) => vec![k.key(s)],
                None => k.slots.iter().map(|s| k.key(s)).collect(),
            };
            if keys.iter().all(|key| known(key)) {
                known_hits.push(keys.join(", "));
            } else {
                failures.push(format!("{} [{}]: {msg}", k.name, keys.join(", ")));
            }
        };
        // Pocl first: its failure is the test's setup problem, not the emulator's.
        let own_pocl;
        let pocl = match &pocl {
            Ok(p) => p,
            Err(_) => {
                own_pocl = PoclProgram::build(&k.source(), options);
                match &own_pocl {
                    Ok(p) => p,
                    Err(e) => {
                        failures.push(format!("{}: pocl cannot build it: {e}\n{}", k.name, k.source()));
                        continue;
                    }
                }
            }
        };
        let launch = k.launch();
        let buffers = k.buffers();
        let want = match pocl.run(&launch, &buffers) {
            Ok(w) => w,
            Err(e) => {
                failures.push(format!("{}: pocl cannot run it: {e}", k.name));
                continue;
            }
        };
        let own;
        let program = match &batch {
            Ok(p) => p,
            Err(_) => {
                own = Program::from_source(&k.source(), path, options);
                match &own {
                    Ok(p) => p,
                    Err(e) => {
                        report(&mut failures, &mut known_hits, None, format!("emulator build failed: {e}"));
                        continue;
                    }
                }
            }
        };
        let mut got = buffers.clone();
        if let Err(e) = clrace::run(program, &launch, &mut got) {
            report(&mut failures, &mut known_hits, None, format!("emulator run failed: {e}"));
            continue;
        }
        let sizes: Vec<usize> = k.outputs().iter().map(|t| t.size()).collect();
        for (slot, (buf, at)) in k.slots.iter().zip(k.layout()) {
            let range = at * sizes[buf]..(at + k.items() * slot.lanes) * sizes[buf];
            let lines = compare_slot(k, slot, &want[3 + buf][range.clone()], &got[3 + buf][range]);
            if !lines.is_empty() {
                report(
                    &mut failures,
                    &mut known_hits,
                    Some(slot),
                    format!("differs from pocl:\n    {}", lines.join("\n    ")),
                );
            }
        }
    }
    eprintln!(
        "{group}: {} kernels, {} slots, {} known differences, {} failures, {:.1?}",
        kernels.len(),
        kernels.iter().map(|k| k.slots.len()).sum::<usize>(),
        known_hits.len(),
        failures.len(),
        start.elapsed()
    );
    for hit in &known_hits {
        eprintln!("  known difference: {hit}");
    }
    if !failures.is_empty() {
        panic!("{group}: {} failures:\n{}", failures.len(), failures.join("\n"));
    }
}

const WIDTHS: [usize; 6] = [1, 2, 3, 4, 8, 16];

/// Integer builtins: per type and width, one kernel of arithmetic and one of bit builtins.
fn integer_kernels() -> Vec<Kernel> {
    let mut kernels = Vec::new();
    for t in INTS {
        for w in WIDTHS {
            let u = t.unsigned();
            let uv = u.vec(w);
            let mut k = Kernel::new(format!("int_arith_{}", t.vec(w)), t, w);
            let binary = ["abs_diff", "add_sat", "sub_sat", "hadd", "rhadd", "max", "min", "mul_hi"];
            k.slot("abs", format!("as_{uv}(abs(a))"), u, Cmp::Exact);
            for f in binary {
                k.slot(f, format!("as_{uv}({f}(a, b))"), u, Cmp::Exact);
            }
            k.slot("clamp", format!("as_{uv}(clamp(a, min(b, c), max(b, c)))"), u, Cmp::Exact);
            k.slot("mad_hi", format!("as_{uv}(mad_hi(a, b, c))"), u, Cmp::Exact);
            k.slot("mad_sat", format!("as_{uv}(mad_sat(a, b, c))"), u, Cmp::Exact);
            if w > 1 {
                let s = t.name();
                k.slot("max_scalar", format!("as_{uv}(max(a, ({s})b.s0))"), u, Cmp::Exact);
                k.slot("min_scalar", format!("as_{uv}(min(a, ({s})b.s1))"), u, Cmp::Exact);
                let lo = format!("min(({s})b.s0, ({s})c.s0)");
                let hi = format!("max(({s})b.s0, ({s})c.s0)");
                k.slot("clamp_scalar", format!("as_{uv}(clamp(a, {lo}, {hi}))"), u, Cmp::Exact);
                if t.signed() {
                    k.slot("any", format!("({uv})(any(a))"), u, Cmp::Exact);
                    k.slot("all", format!("({uv})(all(a))"), u, Cmp::Exact);
                }
            }
            kernels.push(k);

            let mut k = Kernel::new(format!("int_bits_{}", t.vec(w)), t, w);
            k.slot("clz", format!("as_{uv}(clz(a))"), u, Cmp::Exact);
            k.slot("popcount", format!("as_{uv}(popcount(a))"), u, Cmp::Exact);
            k.slot("rotate", format!("as_{uv}(rotate(a, b))"), u, Cmp::Exact);
            k.slot("bitselect", format!("as_{uv}(bitselect(a, b, c))"), u, Cmp::Exact);
            if t.signed() {
                k.slot("select", format!("as_{uv}(select(a, b, c))"), u, Cmp::Exact);
            } else {
                k.slot("select", format!("as_{uv}(select(a, b, as_{}(c)))", t.int_of_size().vec(w)), u, Cmp::Exact);
            }
            if matches!(t, Int | UInt) {
                // mul24 and mad24 are defined for 24-bit operands only.
                let v = t.vec(w);
                let a24 = if t == Int { format!("as_{v}(as_{uv}(a) << 8) >> 8") } else { "a & 0xffffffu".into() };
                let b24 = if t == Int { format!("as_{v}(as_{uv}(b) << 8) >> 8") } else { "b & 0xffffffu".into() };
                let _ = writeln!(k.prelude, "    {v} a24 = {a24}, b24 = {b24};");
                k.slot("mul24", format!("as_{uv}(mul24(a24, b24))"), u, Cmp::Exact);
                k.slot("mad24", format!("as_{uv}(mad24(a24, b24, c))"), u, Cmp::Exact);
            }
            if t.size() < 8 {
                // upsample(hi, lo): hi of the type, lo of its unsigned type, result twice as wide.
                let wide = match t {
                    Char => Short,
                    UChar => UShort,
                    Short => Int,
                    UShort => UInt,
                    Int => Long,
                    _ => ULong,
                };
                k.slot("upsample", format!("upsample(a, as_{uv}(b))"), wide, Cmp::Exact);
            }
            kernels.push(k);
        }
    }
    kernels
}

/// `ctz` (OpenCL C 2.0, built with -cl-std=CL3.0).
fn ctz_kernels() -> Vec<Kernel> {
    let mut kernels = Vec::new();
    for t in INTS {
        for w in WIDTHS {
            let mut k = Kernel::new(format!("int_ctz_{}", t.vec(w)), t, w);
            k.slot("ctz", format!("as_{}(ctz(a))", t.unsigned().vec(w)), t.unsigned(), Cmp::Exact);
            kernels.push(k);
        }
    }
    kernels
}

#[test]
fn integer() {
    sweep("integer", "", integer_kernels());
}

#[test]
fn integer_ctz() {
    sweep("ctz", "-cl-std=CL3.0", ctz_kernels());
}

/// Relational builtins on float and double: comparisons (with any and all) and classification
/// (with bitselect and select), results as int.
fn relational_kernels() -> Vec<Kernel> {
    let mut kernels = Vec::new();
    for t in [Float, Double] {
        for w in WIDTHS {
            let iv = Int.vec(w);
            let mut k = Kernel::new(format!("rel_cmp_{}", t.vec(w)), t, w);
            let compare =
                ["isequal", "isnotequal", "isgreater", "isgreaterequal", "isless", "islessequal", "islessgreater"];
            for f in compare.into_iter().chain(["isordered", "isunordered"]) {
                k.slot(f, format!("convert_{iv}({f}(a, b))"), Int, Cmp::Exact);
            }
            if w > 1 {
                k.slot("any", format!("({iv})(any(isless(a, b)))"), Int, Cmp::Exact);
                k.slot("all", format!("({iv})(all(isless(a, b)))"), Int, Cmp::Exact);
            }
            kernels.push(k);

            let mut k = Kernel::new(format!("rel_class_{}", t.vec(w)), t, w);
            for f in ["isfinite", "isinf", "isnan", "isnormal", "signbit"] {
                k.slot(f, format!("convert_{iv}({f}(a))"), Int, Cmp::Exact);
            }
            k.slot("bitselect", "bitselect(a, b, c)".into(), t, Cmp::Exact);
            k.slot("select", format!("select(a, b, as_{}(c))", t.int_of_size().vec(w)), t, Cmp::Exact);
            k.slot("select_unsigned", format!("select(a, b, as_{}(c))", t.unsigned().vec(w)), t, Cmp::Exact);
            kernels.push(k);
        }
    }
    kernels
}

/// `value` if converting it to `to` with any rounding stays in range, else a small stand-in:
/// conversions without `_sat` are undefined out of range.
fn in_range(from: Ty, to: Ty, value: u64, j: usize) -> u64 {
    let x = from.to_f64(value);
    let (lo, hi) = if to.signed() {
        (-(2f64.powi(to.bits() as i32 - 1)), 2f64.powi(to.bits() as i32 - 1))
    } else {
        (0.0, 2f64.powi(to.bits() as i32))
    };
    if x.is_finite() && x.floor() >= lo && x.ceil() < hi { value } else { from.bits_of(1.5 + (j % 7) as f64) }
}

/// `convert_T[_sat][_rte|_rtz|_rtp|_rtn]` between every pair of types at widths 1 and 4, and
/// `as_T` between types of the same size. Input `b` holds `a`'s values made safe for the
/// conversions without `_sat`.
fn conversion_kernels() -> Vec<Kernel> {
    let mut kernels = Vec::new();
    for from in ALL {
        for w in [1, 4] {
            for to in ALL {
                let mut k = Kernel::new(format!("conv_{}_to_{}", from.vec(w), to.name()), from, w);
                k.inputs[1] = k.inputs[0].iter().enumerate().map(|(j, &v)| in_range(from, to, v, j)).collect();
                for sat in if to.is_float() { &[""][..] } else { &["", "_sat"][..] } {
                    for round in ["", "_rte", "_rtz", "_rtp", "_rtn"] {
                        let f = format!("convert_{}{sat}{round}", to.vec(w));
                        let x = if from.is_float() && !to.is_float() && sat.is_empty() { "b" } else { "a" };
                        let builtin = format!("convert_{}{sat}{round}", to.name());
                        k.slot(&builtin, format!("{f}({x})"), to, Cmp::Exact);
                    }
                }
                kernels.push(k);
            }
            let mut k = Kernel::new(format!("as_from_{}", from.vec(w)), from, w);
            for to in ALL.into_iter().filter(|t| t.size() == from.size()) {
                k.slot(&format!("as_{}", to.name()), format!("as_{}(a)", to.vec(w)), to, Cmp::Exact);
            }
            kernels.push(k);
        }
    }
    kernels
}

#[test]
fn relational() {
    sweep("relational", "", relational_kernels());
}

#[test]
fn conversions() {
    sweep("conversions", "", conversion_kernels());
}

/// Math functions of one floating argument: name, ulp bound for float, for double (OpenCL 1.2,
/// tables 7.1 and 7.2).
const UNARY: &[(&str, u64, u64)] = &[
    ("sqrt", 3, 0),
    ("rsqrt", 2, 2),
    ("cbrt", 2, 2),
    ("exp", 3, 3),
    ("exp2", 3, 3),
    ("exp10", 3, 3),
    ("expm1", 3, 3),
    ("log", 3, 3),
    ("log2", 3, 3),
    ("log10", 3, 3),
    ("log1p", 2, 2),
    ("logb", 0, 0),
    ("sin", 4, 4),
    ("cos", 4, 4),
    ("tan", 5, 5),
    ("asin", 4, 4),
    ("acos", 4, 4),
    ("atan", 5, 5),
    ("sinh", 4, 4),
    ("cosh", 4, 4),
    ("tanh", 5, 5),
    ("asinh", 4, 4),
    ("acosh", 4, 4),
    ("atanh", 5, 5),
    ("sinpi", 4, 4),
    ("cospi", 4, 4),
    ("tanpi", 6, 6),
    ("asinpi", 5, 5),
    ("acospi", 5, 5),
    ("atanpi", 5, 5),
    ("erf", 16, 16),
    ("erfc", 16, 16),
    ("tgamma", 16, 16),
    ("floor", 0, 0),
    ("ceil", 0, 0),
    ("round", 0, 0),
    ("trunc", 0, 0),
    ("rint", 0, 0),
    ("fabs", 0, 0),
];

/// Math functions of two floating arguments, as [`UNARY`].
const BINARY: &[(&str, u64, u64)] = &[
    ("pow", 16, 16),
    ("powr", 16, 16),
    ("fmod", 0, 0),
    ("remainder", 0, 0),
    ("hypot", 4, 4),
    ("atan2", 6, 6),
    ("atan2pi", 6, 6),
    ("fmin", 0, 0),
    ("fmax", 0, 0),
    ("fdim", 0, 0),
    ("copysign", 0, 0),
    ("nextafter", 0, 0),
    ("maxmag", 0, 0),
    ("minmag", 0, 0),
];

/// Math functions with an int argument `n = convert_intN_sat(b)`, as [`UNARY`].
const WITH_INT: &[(&str, u64, u64)] = &[("ldexp", 0, 0), ("pown", 16, 16), ("rootn", 16, 16)];

/// The math function kernels: one per function, for float at widths 1 and 4 and double.
fn math_kernels() -> Vec<Kernel> {
    let mut kernels = Vec::new();
    for (t, w) in [(Float, 1), (Float, 4), (Double, 1)] {
        let v = t.vec(w);
        let iv = Int.vec(w);
        let ulp = |f: u64, d: u64| Cmp::Ulp(if t == Float { f } else { d });
        let one = |f: &str, expr: String, cmp: Cmp| {
            let mut k = Kernel::new(format!("math_{f}_{v}"), t, w);
            k.slot(f, expr, t, cmp);
            k
        };
        for &(f, fu, du) in UNARY {
            let mut k = one(f, format!("{f}(a)"), ulp(fu, du));
            if w == 4 && matches!(f, "sin" | "cos" | "tan") {
                k.inputs[0] = k.inputs[0].iter().enumerate().map(|(j, &v)| not_tiny(v, j)).collect();
            }
            kernels.push(k);
        }
        for &(f, fu, du) in BINARY {
            // pocl's fmax(+0, -0) is -0 and fmin(-0, +0) is +0 (the spec's "x unless x < y"
            // would give x, as the emulator does): either sign of a zero result is accepted.
            let cmp = if f.contains("max") || f.contains("min") { Cmp::UlpAnyZero(0) } else { ulp(fu, du) };
            kernels.push(one(f, format!("{f}(a, b)"), cmp));
        }
        kernels.push(one("fma", "fma(a, b, c)".into(), Cmp::Ulp(0)));
        for &(f, fu, du) in WITH_INT {
            let mut k = one(f, format!("{f}(a, n)"), ulp(fu, du));
            k.prelude = format!("    {iv} n = convert_{iv}_sat(b);\n");
            kernels.push(k);
        }
        kernels.push(one("ilogb", format!("as_{}(ilogb(a))", iv), Cmp::Exact));
        for (f, second, ty, cmp) in [
            ("frexp", "e", Int, Cmp::Exact),
            ("modf", "ip", t, Cmp::Ulp(0)),
            ("fract", "fl", t, Cmp::Ulp(0)),
            ("sincos", "cv", t, ulp(4, 4)),
        ] {
            let mut k = Kernel::new(format!("math_{f}_{v}"), t, w);
            k.prelude = format!("    {} {second};\n", ty.vec(w));
            if f == "sincos" && w == 4 {
                k.inputs[0] = k.inputs[0].iter().enumerate().map(|(j, &v)| not_tiny(v, j)).collect();
            }
            // fract(-0) and fract(-inf) are +0 (x - floor(x)) in pocl and here: the sign counts.
            let first = if f == "sincos" { cmp } else { Cmp::Ulp(0) };
            k.slot(f, format!("{f}(a, &{second})"), t, first);
            k.slot(&format!("{f}_out"), second.into(), ty, cmp);
            kernels.push(k);
        }
        // remquo: only the sign and the 3 low bits of the quotient are specified.
        let mut k = Kernel::new(format!("math_remquo_{v}"), t, w);
        k.prelude = format!("    {iv} q;\n");
        k.slot("remquo", "remquo(a, b, &q)".into(), t, Cmp::Ulp(0));
        k.slot("remquo_quo", "select(q & 7, -(-q & 7), q < 0)".into(), Int, Cmp::Exact);
        kernels.push(k);
    }
    kernels
}

/// A float `value` unless it is below 2^-6 in magnitude but not zero, else a stand-in: pocl's
/// float4 sin, cos and tan are wrong there (sin(float4)(-1e-10) gives -0.0134).
fn not_tiny(value: u64, j: usize) -> u64 {
    let x = f32::from_bits(value as u32);
    if x != 0.0 && x.abs() < 1.0 / 64.0 { (0.25 + j as f32 * 0.01).to_bits() as u64 } else { value }
}

/// `value` when finite and at most 1e6 in magnitude, else a small stand-in: common functions
/// are undefined for NaN and infinite operands.
fn moderate(t: Ty, value: u64, j: usize) -> u64 {
    let x = t.to_f64(value);
    if x.is_finite() && x.abs() <= 1e6 { value } else { t.bits_of((j % 13) as f64 * 0.75 - 4.0) }
}

/// Common functions for float at every width and double at widths 1 and 4: those defined for
/// any operand, then those given moderate finite operands.
fn common_kernels() -> Vec<Kernel> {
    let mut kernels = Vec::new();
    for (t, w) in WIDTHS.map(|w| (Float, w)).into_iter().chain([(Double, 1), (Double, 4)]) {
        let s = t.name();
        let mut k = Kernel::new(format!("common_{}", t.vec(w)), t, w);
        k.slot("degrees", "degrees(a)".into(), t, Cmp::Ulp(2));
        k.slot("radians", "radians(a)".into(), t, Cmp::Ulp(2));
        k.slot("sign", "sign(a)".into(), t, Cmp::Ulp(0));
        k.slot("step", "step(a, b)".into(), t, Cmp::Ulp(0));
        // Every input, infinities included, against fixed edges: 0 or 1 past them.
        k.slot("smoothstep_edges", format!("smoothstep(({s})-2, ({s})3, a)"), t, Cmp::Ulp(4));
        if w > 1 {
            k.slot("step_scalar", format!("step(({s})b.s0, a)"), t, Cmp::Ulp(0));
        }
        kernels.push(k);

        let mut k = Kernel::new(format!("common_finite_{}", t.vec(w)), t, w);
        for input in &mut k.inputs {
            *input = input.iter().enumerate().map(|(j, &v)| moderate(t, v, j)).collect();
        }
        // mix's weight in [0, 1]; smoothstep's edges in order.
        let _ = writeln!(k.prelude, "    {} wt = fabs(c) / (fabs(c) + ({s})1);", t.vec(w));
        let _ = writeln!(k.prelude, "    {} lo = fmin(b, c), hi = fmax(b, c) + ({s})1;", t.vec(w));
        // pocl's max(+0, -0) is -0 and min(-0, +0) is +0 (the spec's "x unless x < y" gives x):
        // either sign of a zero result is accepted.
        let zero = Cmp::UlpAnyZero(0);
        k.slot("clamp", "clamp(a, lo, hi)".into(), t, zero);
        k.slot("max", "max(a, b)".into(), t, zero);
        k.slot("min", "min(a, b)".into(), t, zero);
        k.slot("mix", "mix(a, b, wt)".into(), t, Cmp::Ulp(4));
        k.slot("smoothstep", "smoothstep(lo, hi, a)".into(), t, Cmp::Ulp(4));
        if w > 1 {
            k.slot("clamp_scalar", format!("clamp(a, ({s})lo.s0, ({s})hi.s0)"), t, zero);
            k.slot("max_scalar", format!("max(a, ({s})b.s0)"), t, zero);
            k.slot("min_scalar", format!("min(a, ({s})b.s0)"), t, zero);
            k.slot("mix_scalar", format!("mix(a, b, ({s})wt.s0)"), t, Cmp::Ulp(4));
            k.slot("smoothstep_scalar", format!("smoothstep(({s})lo.s0, ({s})hi.s0, a)"), t, Cmp::Ulp(4));
        }
        kernels.push(k);
    }
    kernels
}

#[test]
fn math() {
    sweep("math", "", math_kernels());
}

#[test]
fn common_functions() {
    sweep("common", "", common_kernels());
}

/// Half edge values (bits): zeros, one, denormals, the smallest normal, the largest finite,
/// infinities, a quiet and a signalling NaN.
const HALF_EDGES: [u64; 12] =
    [0, 0x8000, 0x3c00, 0xbc00, 0x0001, 0x03ff, 0x0400, 0x7bff, 0x7c00, 0xfc00, 0x7e00, 0x7c01];

/// Floats around half's rounding boundaries: ties, overflow thresholds, denormal ties.
const FLOATS_FOR_HALF: [f64; 12] = [
    65504.0,
    65519.99,
    65520.0,
    -65520.0,
    1.0 + 1.0 / 2048.0,
    1.0 + 3.0 / 2048.0,
    -(1.0 + 1.0 / 4096.0),
    2.9802322387695312e-8,
    8.940696716308594e-8,
    -5.960464477539063e-8,
    1e-5,
    70000.0,
];

/// vloadN/vstoreN at unaligned offsets and from private memory, vload_half/vstore_half with
/// every rounding mode, shuffle and shuffle2.
fn vector_data_kernels() -> Vec<Kernel> {
    let mut kernels = Vec::new();
    for t in ALL {
        for n in [2, 3, 4, 8, 16] {
            let mut k = Kernel::new(format!("vls_{}", t.vec(n)), t, n);
            let stride = if n == 3 { 3 } else { n };
            let _ = writeln!(k.prelude, "    {} p[{}];", t.name(), n + 2);
            let _ = writeln!(k.prelude, "    for (int i = 0; i < {}; i++) p[i] = gb[gid * {stride} + i];", n + 2);
            k.slot("vload_offset", format!("vload{n}(gid, ga + 1)"), t, Cmp::Exact);
            k.slot("vload_unaligned", format!("vload{n}(0, ga + gid * {stride} + 3)"), t, Cmp::Exact);
            k.slot("vload_private", format!("vload{n}(0, p + 1)"), t, Cmp::Exact);
            k.slots.push(Slot {
                builtin: "vstore_offset".into(),
                pre: String::new(),
                code: Code::Stmt(format!("if (gid + 1 < get_global_size(0)) vstore{n}(a, gid, {{out}} + 1)")),
                out: t,
                lanes: n,
                cmp: Cmp::Exact,
            });
            k.slots.push(Slot {
                builtin: "vstore_private".into(),
                pre: format!("    {{ {} q[{n}]; vstore{n}(c, 0, q);", t.name()),
                code: Code::Stmt(format!("vstore{n}(vload{n}(0, q), gid, {{out}}); }}")),
                out: t,
                lanes: n,
                cmp: Cmp::Exact,
            });
            kernels.push(k);
        }
    }
    for w in WIDTHS {
        let n = if w == 1 { String::new() } else { w.to_string() };
        let mut k = Kernel::new(format!("half_load{n}"), UShort, w);
        k.inputs = [0, 1, 2].map(|i| inputs(UShort, i, &HALF_EDGES));
        k.input_decl = Some("half");
        // Compared as floats (NaN equals NaN): pocl quiets a signalling NaN, the emulator keeps it.
        k.slot("vload_half", format!("vload_half{n}(gid, ga)"), Float, Cmp::Ulp(0));
        // pocl has no scalar vloada_half / vstorea_half (only vector widths).
        if w != 3 && w != 1 {
            k.slot("vloada_half", format!("vloada_half{n}(gid, gb)"), Float, Cmp::Ulp(0));
        }
        kernels.push(k);
        for t in [Float, Double] {
            if t == Double && !matches!(w, 1 | 4) {
                continue;
            }
            let mut k = Kernel::new(format!("half_store{n}_{}", t.name()), t, w);
            let extra: Vec<u64> = FLOATS_FOR_HALF.iter().map(|&x| t.bits_of(x)).collect();
            k.inputs = [0, 1, 2].map(|i| inputs(t, i, &extra));
            for mode in ["", "_rte", "_rtz", "_rtp", "_rtn"] {
                for aligned in if w == 3 || w == 1 { &[""][..] } else { &["", "a"][..] } {
                    k.slots.push(Slot {
                        builtin: format!("vstore{aligned}_half{mode}"),
                        pre: String::new(),
                        code: Code::Stmt(format!("vstore{aligned}_half{n}{mode}(a, gid, (global half *){{out}})")),
                        out: UShort,
                        lanes: w,
                        cmp: Cmp::Half,
                    });
                }
            }
            kernels.push(k);
        }
    }
    for t in [Char, UShort, Int, Float, Long, Double] {
        for m in [2, 4, 8, 16] {
            let mut k = Kernel::new(format!("shuffle_{}", t.vec(m)), t, m);
            for n in [2, 4, 8, 16] {
                // Mask elements vary per work-item; only their low bits may count.
                let mul: Vec<String> = (0..n).map(|i| (2 * i + 1 + 6 * (i % 3)).to_string()).collect();
                let add: Vec<String> = (0..n).map(|i| (i * 5 + 3).to_string()).collect();
                let mask = format!(
                    "convert_{}((uint{n})(gid) * (uint{n})({}) + (uint{n})({}))",
                    t.unsigned().vec(n),
                    mul.join(", "),
                    add.join(", ")
                );
                let _ = writeln!(k.prelude, "    {} mask{n} = {mask};", t.unsigned().vec(n));
                for (f, args) in [("shuffle", "a"), ("shuffle2", "a, b")] {
                    k.slots.push(Slot {
                        builtin: format!("{f}_to_{n}"),
                        pre: String::new(),
                        code: Code::Expr(format!("{f}({args}, mask{n})")),
                        out: t,
                        lanes: n,
                        cmp: Cmp::Exact,
                    });
                }
            }
            kernels.push(k);
        }
    }
    kernels
}

#[test]
fn vector_data() {
    sweep("vector data", "", vector_data_kernels());
}

/// The pattern syntax of [`KNOWN`].
#[test]
fn known_patterns() {
    assert!(glob("add_sat(char*)", "add_sat(char4)"));
    assert!(glob("*(double)", "sqrt(double)"));
    assert!(!glob("add_sat(char)", "add_sat(char4)"));
    assert!(!glob("sin(*)", "sinh(float)"));
}
