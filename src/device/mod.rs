//! On-device checking, the gate prototype (issue 30): writes one kernel of a lowered [`Module`]
//! back out as OpenCL C with race and bounds hooks inserted, so that the vendor's driver runs the
//! launch instrumented, and reads back the findings that run leaves. `docs/on-device.md` is the
//! design note: the route (our IR, not the source), the shadow layout and state machine, the
//! findings buffer, and the gate's numbers.
//!
//! It owns the instrumented program's text ([`instrument`]), the extra kernel arguments and their
//! sizes for one launch ([`Instrumented::plan`]) and the decoding of the findings buffer
//! ([`Instrumented::findings`]). It covers the constructs of the gate's kernels (scalar loads and
//! stores through buffer, `__local` argument and kernel-declared `__local` pointers, work-group
//! barriers, integer and float arithmetic, branches) and refuses any other with a
//! [`Refusal`] naming it: atomics, calls, vectors in memory, images, printf, sub-groups,
//! program-scope variables, private arrays. A `__local` read that no store of its barrier
//! intervals can meet gets no hook ([`crate::ir::intervals`]).
//!
//! What it cannot see: anything the emulator learns by running every schedule of a group
//! (exploration, lockstep analysis, uninitialised values); races the device's own schedule hides
//! from the shadow (two work-items whose shadow updates interleave between our read and our
//! exchange of a record can lose one); races between bytes of one 4-byte word written by
//! different work-items (the shadow is word-granular, so those are reported though they are no
//! race); more than 65,535 barriers in one work-item (the epoch wraps).

mod emit;

use std::fmt::Write as _;

use crate::ir::{Module, ParamKind};

/// The OpenCL C runtime every instrumented program starts with.
const PRELUDE: &str = include_str!("prelude.cl");

/// How many finding records the findings buffer holds; more are counted as dropped.
pub const FINDINGS_CAP: u32 = 1024;
/// Words (`u32`) per finding record.
const RECORD_WORDS: usize = 8;
/// Finding kinds the buffer distinguishes (the first-seen table has a plane for each).
const KINDS: usize = 3;
/// The most sites one program may have (13 bits in a shadow record; 0 means none).
const MAX_SITES: usize = (1 << 13) - 1;

/// Why a kernel cannot be instrumented: the construct and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(pub String);

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot instrument: {}", self.0)
    }
}

impl std::error::Error for Refusal {}

/// What the instrumented kernel is given beyond the application's arguments, in this order
/// after them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extra {
    /// `__global ulong *`: the shadow of every buffer argument that the kernel writes.
    Shadow,
    /// `__global uint *`: the findings buffer.
    Findings,
    /// `__constant ulong *`: per argument, its size in bytes and its shadow's first word.
    Meta,
    /// `__local ulong *`: the shadow of `__local` argument `arg`.
    LocalShadow { arg: usize },
}

/// One kernel written back out, with or without hooks.
#[derive(Debug, Clone)]
pub struct Instrumented {
    /// The OpenCL C program: the kernel under its own name.
    pub source: String,
    pub kernel: String,
    /// The extra arguments (none without hooks).
    pub extras: Vec<Extra>,
    /// Per site id (from 1), the module location of the access.
    pub sites: Vec<u32>,
    /// Per argument, whether the kernel writes through it (only those get a shadow).
    pub written: Vec<bool>,
    /// Per argument, the shadow's 8-byte records per 4-byte word: 0 for memory never written,
    /// 1 (the last write) for memory only written, 2 (and a read summary) for memory both.
    pub shadow_stride: Vec<u32>,
    /// The argument kinds, as the module lowered them.
    pub params: Vec<ParamKind>,
}

/// The sizes of one launch's extra arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Bytes of the global shadow (at least 8: OpenCL has no empty buffers).
    pub shadow_bytes: usize,
    /// The findings buffer's words, its header already set (cap and sites).
    pub findings: Vec<u32>,
    /// The meta words.
    pub meta: Vec<u64>,
    /// Bytes of `__local` shadow per [`Extra::LocalShadow`], in order.
    pub local_shadow_bytes: Vec<usize>,
}

impl Plan {
    /// Device memory charged for checking beyond the application's own: the global shadow, the
    /// findings and meta buffers (the `__local` shadow lives in each group's local memory).
    pub fn device_bytes(&self) -> usize {
        self.shadow_bytes + self.findings.len() * 4 + self.meta.len() * 8
    }
}

/// Bytes of shadow per 4-byte word of memory both read and written: a write record and a read
/// summary of 8 bytes each (memory only written has the first; memory never written none).
pub const SHADOW_BYTES_PER_WORD: usize = 16;

/// One finding read back from the device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceFinding {
    pub kind: FindingKind,
    /// The earlier access's site location (module location index; `None` for a bounds finding).
    pub first: Option<u32>,
    /// The later access's location.
    pub second: u32,
    /// Work-item ids (group linear id times group size plus local linear id).
    pub first_item: u32,
    pub second_item: u32,
    /// What was accessed: an argument, or a kernel-declared `__local` variable.
    pub target: Target,
    pub offset: u64,
}

/// What a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FindingKind {
    /// A read and a write of two work-items, unordered.
    ReadWriteRace,
    WriteWriteRace,
    OutOfBounds,
}

/// The memory a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Kernel argument `n` (a buffer or a `__local` pointer).
    Arg(usize),
    /// Kernel-declared `__local` variable `n` of [`Module::locals`].
    Local(usize),
}

/// What the findings buffer says beyond its records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Findings {
    pub records: Vec<DeviceFinding>,
    /// Records past [`FINDINGS_CAP`], counted and not kept.
    pub dropped: u32,
}

/// The buffer numbers the hooks report: arguments as themselves, kernel `__local` variables
/// from here up.
const LOCAL_VARIABLE_BASE: u32 = 0x1_0000;

/// Writes kernel `name` of `module` as OpenCL C; with `hooks`, instrumented (every global and
/// `__local` access checked against the shadow), else as it is (to measure what writing it back
/// out costs by itself).
pub fn instrument(module: &Module, name: &str, hooks: bool) -> Result<Instrumented, Refusal> {
    let kernel = module
        .kernels
        .iter()
        .find(|k| k.info.name == name)
        .ok_or_else(|| Refusal(format!("no kernel named '{name}'")))?;
    emit::emit(module, kernel, hooks)
}

impl Instrumented {
    /// The extra arguments' sizes for a launch whose arguments have `arg_bytes` bytes each
    /// (buffers: their size; `__local`: the size asked for; values: ignored).
    pub fn plan(&self, arg_bytes: &[usize]) -> Plan {
        let mut meta = Vec::with_capacity(self.params.len() * 2);
        let mut shadow_words = 0usize;
        for (i, kind) in self.params.iter().enumerate() {
            let bytes = arg_bytes.get(i).copied().unwrap_or(0);
            meta.push(bytes as u64);
            meta.push(shadow_words as u64);
            if *kind == ParamKind::Buffer {
                shadow_words += bytes.div_ceil(4) * self.shadow_stride.get(i).copied().unwrap_or(0) as usize;
            }
        }
        let local_shadow_bytes = self
            .extras
            .iter()
            .filter_map(|e| match e {
                Extra::LocalShadow { arg } => {
                    let stride = self.shadow_stride.get(*arg).copied().unwrap_or(0) as usize;
                    Some(arg_bytes.get(*arg).copied().unwrap_or(0).div_ceil(4) * stride * 8)
                }
                _ => None,
            })
            .collect();
        let sites = self.sites.len() + 1;
        let mut findings = vec![0u32; 4 + KINDS * sites * sites + FINDINGS_CAP as usize * RECORD_WORDS];
        findings[2] = FINDINGS_CAP;
        findings[3] = sites as u32;
        if meta.is_empty() {
            meta.push(0);
        }
        Plan { shadow_bytes: (shadow_words * 8).max(8), findings, meta, local_shadow_bytes }
    }

    /// Decodes a findings buffer the kernel filled.
    pub fn findings(&self, words: &[u32]) -> Findings {
        let sites = self.sites.len() + 1;
        let claimed = words.first().copied().unwrap_or(0).min(FINDINGS_CAP) as usize;
        let start = 4 + KINDS * sites * sites;
        let site = |s: u32| self.sites.get((s as usize).wrapping_sub(1)).copied();
        let records = words
            .get(start..)
            .unwrap_or(&[])
            .chunks_exact(RECORD_WORDS)
            .take(claimed)
            .filter_map(|r| {
                let kind = match r[0] {
                    0 => FindingKind::ReadWriteRace,
                    1 => FindingKind::WriteWriteRace,
                    2 => FindingKind::OutOfBounds,
                    _ => return None,
                };
                let target = if r[5] >= LOCAL_VARIABLE_BASE {
                    Target::Local((r[5] - LOCAL_VARIABLE_BASE) as usize)
                } else {
                    Target::Arg(r[5] as usize)
                };
                Some(DeviceFinding {
                    kind,
                    first: site(r[1]),
                    second: site(r[2])?,
                    first_item: r[3],
                    second_item: r[4],
                    target,
                    offset: r[6] as u64 | (r[7] as u64) << 32,
                })
            })
            .collect();
        Findings { records, dropped: words.get(1).copied().unwrap_or(0) }
    }
}

impl DeviceFinding {
    /// One line for people: kind, memory, offset, and both sites as `file:line:column`.
    pub fn describe(&self, module: &Module, arg_names: &[String]) -> String {
        let what = match self.kind {
            FindingKind::ReadWriteRace => "read-write race",
            FindingKind::WriteWriteRace => "write-write race",
            FindingKind::OutOfBounds => "out-of-bounds access",
        };
        let target = match self.target {
            Target::Arg(i) => arg_names.get(i).cloned().unwrap_or_else(|| format!("argument {i}")),
            Target::Local(i) => module.locals.get(i).map_or_else(|| format!("local {i}"), |v| v.name.clone()),
        };
        let mut line = format!("{what} on '{target}' at byte offset {}: ", self.offset);
        if let Some(first) = self.first {
            let _ = write!(line, "{} (work-item {}) and ", module.location(first), self.first_item);
        }
        let _ = write!(line, "{} (work-item {})", module.location(self.second), self.second_item);
        line
    }

    /// The source lines of both accesses, smaller first (for comparing with `clrace check`,
    /// which may see the pair in the other order).
    pub fn line_pair(&self, module: &Module) -> (u32, u32) {
        let line = |loc: u32| module.locations.get(loc as usize).map_or(0, |l| l.line);
        let (a, b) = (self.first.map_or(0, line), line(self.second));
        (a.min(b), a.max(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel of a buffer only read, a buffer only written, a `__local` argument read and
    /// written, and a value, with two sites.
    fn instrumented() -> Instrumented {
        Instrumented {
            source: String::new(),
            kernel: "k".into(),
            extras: vec![Extra::Shadow, Extra::Findings, Extra::Meta, Extra::LocalShadow { arg: 2 }],
            sites: vec![7, 9],
            written: vec![false, true, true, false],
            shadow_stride: vec![0, 1, 2, 0],
            params: vec![ParamKind::Buffer, ParamKind::Buffer, ParamKind::Local, ParamKind::Value { layout: 0 }],
        }
    }

    #[test]
    fn the_plan_shadows_written_words_only() {
        let plan = instrumented().plan(&[4096, 1000, 256, 0]);
        // 250 words written: one record each; the read-only buffer none.
        assert_eq!(plan.shadow_bytes, 250 * 8);
        assert_eq!(plan.meta, vec![4096, 0, 1000, 0, 256, 250, 0, 250]);
        // The __local argument's 64 words, read and written: two records each.
        assert_eq!(plan.local_shadow_bytes, vec![64 * 16]);
        assert_eq!(&plan.findings[..4], &[0, 0, FINDINGS_CAP, 3]);
        assert_eq!(plan.findings.len(), 4 + KINDS * 9 + FINDINGS_CAP as usize * RECORD_WORDS);
    }

    #[test]
    fn findings_decode_with_their_sites_and_dropped_count() {
        let checked = instrumented();
        let mut words = checked.plan(&[4, 4, 4, 0]).findings;
        let start = 4 + KINDS * 9;
        words[0] = 2;
        words[1] = 5;
        words[start..start + 8].copy_from_slice(&[0, 2, 1, 17, 3, 2, 8, 0]);
        words[start + 8..start + 16].copy_from_slice(&[2, 0, 2, 4, 4, LOCAL_VARIABLE_BASE + 1, 0, 1]);
        let found = checked.findings(&words);
        assert_eq!(found.dropped, 5);
        assert_eq!(
            found.records,
            vec![
                DeviceFinding {
                    kind: FindingKind::ReadWriteRace,
                    first: Some(9),
                    second: 7,
                    first_item: 17,
                    second_item: 3,
                    target: Target::Arg(2),
                    offset: 8,
                },
                DeviceFinding {
                    kind: FindingKind::OutOfBounds,
                    first: None,
                    second: 9,
                    first_item: 4,
                    second_item: 4,
                    target: Target::Local(1),
                    offset: 1 << 32,
                },
            ]
        );
    }
}
