//! Launch files (`.sim`): the format of Oclgrind's `oclgrind-kernel`, which `clrace check`
//! reads, and the printing of their `dump` arguments after a run.
//!
//! A launch file names a program, a kernel, the NDRange and work-group size, then describes
//! each kernel argument in order: a header `<size=N type fill=V range=A:B:C noinit null dump
//! hex ro wo>` on one line, followed by inline values for buffers and by-value arguments that
//! have no `fill`/`range`/`noinit`. `#` starts a comment. The whole format, with clrace's
//! extensions (`# clrace: offset`, `# clrace: dim`, `alias=K`, image and sampler arguments), is
//! described in `docs/launch-files.md`.
//!
//! Reading happens in two steps because the kernel's signature is needed for the arguments:
//! [`parse_header`] gives the program and kernel names (and the NDRange), the caller builds the
//! program, then [`parse_args`] reads the arguments against the kernel's [`KernelInfo`].
//! [`format_dumps`] prints the dumps exactly as `oclgrind-kernel` prints them on stdout.
//!
//! Files: `reader` walks the text, `scalar` reads numbers, `header` and `args` read the two
//! parts of a file (`objects` the image and sampler arguments), `dump` prints.

/// Runs `$body` with the type alias `$t` bound to the Rust type that stores `$elem`.
macro_rules! with_elem {
    ($elem:expr, $t:ident => $body:expr) => {
        match $elem {
            ElemType::Char => {
                type $t = i8;
                $body
            }
            ElemType::UChar => {
                type $t = u8;
                $body
            }
            ElemType::Short => {
                type $t = i16;
                $body
            }
            ElemType::UShort => {
                type $t = u16;
                $body
            }
            ElemType::Int => {
                type $t = i32;
                $body
            }
            ElemType::UInt => {
                type $t = u32;
                $body
            }
            ElemType::Long => {
                type $t = i64;
                $body
            }
            ElemType::ULong => {
                type $t = u64;
                $body
            }
            ElemType::Float => {
                type $t = f32;
                $body
            }
            ElemType::Double => {
                type $t = f64;
                $body
            }
        }
    };
}

mod args;
mod contents;
mod descriptor;
mod dump;
mod header;
mod objects;
mod reader;
mod scalar;

use std::fmt;

pub use contents::MAX_BUFFER_BYTES;
pub use dump::format_dumps;

use crate::exec::Launch;
use crate::program::KernelInfo;

/// Everything before the argument descriptors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimHeader {
    /// The program file as written (relative to the launch file's directory for the CLI).
    pub program: String,
    pub kernel: String,
    pub global_size: [u64; 3],
    pub local_size: [u64; 3],
    /// 0 unless set by `# clrace: offset X Y Z`.
    pub global_offset: [u64; 3],
    /// 3 (as `oclgrind-kernel` passes) unless set by `# clrace: dim N`.
    pub work_dim: u32,
    /// `--build-options X` of a first line `# ARGS: ...`.
    pub build_options: Option<String>,
}

/// A launch ready to run: the launch itself, the initial contents of its buffers (indexed by
/// [`crate::exec::ArgValue::Buffer`]) and what to print afterwards.
#[derive(Debug, Clone)]
pub struct LaunchFile {
    pub launch: Launch,
    pub buffers: Vec<Vec<u8>>,
    /// In argument order.
    pub dumps: Vec<Dump>,
    /// The access mode of each buffer (`ro`, `wo`; by index, missing ones are read-write), for
    /// [`crate::exec::RunOptions::buffer_modes`].
    pub modes: Vec<crate::exec::memory::BufferMode>,
    /// Which buffers were marked `noinit` (by index; missing ones were not), for
    /// [`crate::exec::RunOptions::noinit`].
    pub noinit: Vec<bool>,
}

/// An argument marked `dump`: print buffer `buffer` after the run as elements of `elem`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dump {
    pub arg_index: usize,
    /// The argument's name, as printed.
    pub name: String,
    pub buffer: usize,
    pub elem: ElemType,
    /// Print as `0x` + two hex digits per byte of the type.
    pub hex: bool,
}

/// The element types a launch file can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElemType {
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

impl ElemType {
    const ALL: [ElemType; 10] = [
        ElemType::Char,
        ElemType::UChar,
        ElemType::Short,
        ElemType::UShort,
        ElemType::Int,
        ElemType::UInt,
        ElemType::Long,
        ElemType::ULong,
        ElemType::Float,
        ElemType::Double,
    ];

    /// Size in bytes.
    pub fn size(self) -> usize {
        match self {
            ElemType::Char | ElemType::UChar => 1,
            ElemType::Short | ElemType::UShort => 2,
            ElemType::Int | ElemType::UInt | ElemType::Float => 4,
            ElemType::Long | ElemType::ULong | ElemType::Double => 8,
        }
    }

    /// The OpenCL C name, which is also the header token.
    pub fn keyword(self) -> &'static str {
        match self {
            ElemType::Char => "char",
            ElemType::UChar => "uchar",
            ElemType::Short => "short",
            ElemType::UShort => "ushort",
            ElemType::Int => "int",
            ElemType::UInt => "uint",
            ElemType::Long => "long",
            ElemType::ULong => "ulong",
            ElemType::Float => "float",
            ElemType::Double => "double",
        }
    }

    fn from_keyword(token: &str) -> Option<ElemType> {
        ElemType::ALL.into_iter().find(|elem| elem.keyword() == token)
    }

    /// The default for an argument of type `type_name`, chosen by prefix as the reference tool
    /// does: `float4*` -> float, `uint` -> uint, `void*` -> uchar; `None` for anything else
    /// (structs, `half`, `size_t`, ...).
    fn default_for(type_name: &str) -> Option<ElemType> {
        let name = type_name.trim();
        if name.starts_with("void*") {
            return Some(ElemType::UChar);
        }
        ElemType::ALL.into_iter().find(|elem| name.starts_with(elem.keyword()))
    }
}

/// A launch file that cannot be read: where, why, and for which argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchError {
    /// 1-based line number.
    pub line: usize,
    pub message: String,
    /// Index and name of the argument being read, if any.
    pub arg: Option<(usize, String)>,
}

impl LaunchError {
    fn at(line: usize, message: impl Into<String>) -> LaunchError {
        LaunchError { line, message: message.into(), arg: None }
    }
}

impl fmt::Display for LaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Line {}: {}", self.line, self.message)?;
        if let Some((index, name)) = &self.arg {
            write!(f, " (argument {index}: {name})")?;
        }
        Ok(())
    }
}

impl std::error::Error for LaunchError {}

/// A launch file's bytes as text. The reference tool reads bytes, so a file that is not UTF-8
/// (a Latin-1 `é` in a comment) is read too: each invalid sequence becomes U+FFFD, which matters
/// only inside a name (which then matches nothing) and never in comments or numbers.
pub fn decode(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The program a launch file names, as `clrace check` finds it: the path as written (relative to
/// the current directory), else beside the launch file; `None` when neither is a file.
pub fn resolve_program(program: &str, launch_file: &std::path::Path) -> Option<std::path::PathBuf> {
    let direct = std::path::PathBuf::from(program);
    if direct.is_file() {
        return Some(direct);
    }
    let beside = launch_file.parent()?.join(program);
    beside.is_file().then_some(beside)
}

/// Reads a launch file (or a program source) from disk, as [`decode`] reads its bytes.
pub fn read_file(path: &std::path::Path) -> std::io::Result<String> {
    std::fs::read(path).map(|bytes| decode(&bytes))
}

/// Reads the header of a launch file: program, kernel, NDRange, work-group size, and the
/// `# ARGS:` and `# clrace:` comments.
pub fn parse_header(text: &str) -> Result<SimHeader, LaunchError> {
    header::read_header(text).map(|read| read.header)
}

/// Reads the argument descriptors of `text` (whose header is skipped) for `kernel`, and builds
/// the launch from `header` (normally [`parse_header`] of the same text, perhaps with build
/// options added by the caller: they decide whether work-groups must be uniform). Large `fill`
/// buffers are filled on up to `fill_threads` threads.
pub fn parse_args(
    text: &str,
    header: &SimHeader,
    kernel: &KernelInfo,
    fill_threads: usize,
) -> Result<LaunchFile, LaunchError> {
    let mut read = header::read_header(text)?;
    header::check_work_groups(header, read.local_size_line)?;
    let mut out = descriptor::ArgsSoFar::default();
    for (index, arg) in kernel.args.iter().enumerate() {
        args::read_arg(&mut read.reader, index, arg, &mut out)?;
    }
    if let Some(token) = read.reader.word() {
        let message = format!("Unexpected token '{token}' (expected EOF)");
        return Err(LaunchError::at(read.reader.line_no(), message));
    }
    let launch = Launch {
        kernel: header.kernel.clone(),
        work_dim: header.work_dim,
        global_offset: header.global_offset,
        global_size: header.global_size,
        local_size: header.local_size,
        args: out.args,
    };
    let buffers = contents::make_all(&out.buffers, fill_threads)?;
    Ok(LaunchFile { launch, buffers, dumps: out.dumps, modes: out.modes, noinit: out.noinit })
}

#[cfg(test)]
mod tests;
