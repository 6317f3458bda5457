//! What a spool holds, as types: `spool.json` ([`SpoolInfo`]), one launch's manifest
//! ([`SpooledLaunch`], `launches/SEQ.json`) with its arguments ([`SpooledArg`]) and references
//! to content-addressed blobs ([`BlobRef`]), and the in-memory launch the writer takes
//! ([`LaunchRecord`]). [`SpooledLaunch::to_launch`] turns a manifest back into the emulator's
//! [`Launch`], exactly as the layer turns a snapshot into one for an inline check.
//!
//! It reads and writes no file: the writer and the reader do.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::hex;
use super::program::ProgramSpec;
use crate::exec::image::ImageDesc;
use crate::exec::memory::BufferMode;
use crate::exec::{ArgValue, Launch};
use crate::program::{AddressSpace, KernelInfo};

/// The spool format this clrace writes and the newest it reads.
pub const FORMAT: u32 = 1;

/// `DIR/spool.json`: which format the spool has and which clrace wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpoolInfo {
    pub format: u32,
    pub clrace: String,
}

impl SpoolInfo {
    /// This clrace's.
    pub fn current() -> SpoolInfo {
        SpoolInfo { format: FORMAT, clrace: env!("CARGO_PKG_VERSION").to_string() }
    }
}

/// A blob of the spool: the blake3 hash (hex) of its uncompressed bytes and their number.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BlobRef {
    pub hash: String,
    pub size: u64,
}

/// One argument of a spooled launch, as the application set it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum SpooledArg {
    /// A buffer: index into the launch's buffers, and the byte offset of a sub-buffer.
    Buffer { index: usize, offset: u64 },
    /// A NULL pointer (or an argument set to NULL).
    Null,
    /// A `__local` allocation of `size` bytes.
    Local { size: usize },
    /// A by-value argument: its bytes in hex, as the host passed them.
    Value { hex: String },
    /// An image: index into the launch's buffers of its packed pixels.
    Image { index: usize, desc: ImageDesc },
    /// A sampler's `CLK_*` bits.
    Sampler { bits: u32 },
}

impl SpooledArg {
    /// A by-value argument of these bytes.
    pub fn value(bytes: &[u8]) -> SpooledArg {
        SpooledArg::Value { hex: hex::encode(bytes) }
    }
}

impl From<&ArgValue> for SpooledArg {
    /// An argument of an emulator launch (a launch file's) as a spool stores it.
    fn from(arg: &ArgValue) -> SpooledArg {
        match arg {
            ArgValue::Buffer(index) => SpooledArg::Buffer { index: *index, offset: 0 },
            ArgValue::SubBuffer { buffer, offset } => SpooledArg::Buffer { index: *buffer, offset: *offset },
            ArgValue::Null => SpooledArg::Null,
            ArgValue::Local(size) => SpooledArg::Local { size: *size },
            ArgValue::Value(bytes) => SpooledArg::value(bytes),
            ArgValue::Image { buffer, desc } => SpooledArg::Image { index: *buffer, desc: *desc },
            ArgValue::Sampler(bits) => SpooledArg::Sampler { bits: *bits },
        }
    }
}

/// `DIR/launches/SEQ.json`: one launch, self-contained with the blobs it names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpooledLaunch {
    pub format: u32,
    /// The layer's admission order (gaps allowed).
    pub seq: u64,
    pub kernel: String,
    /// Which launch of this kernel it is (1 = first).
    pub number: u64,
    /// The program record ([`ProgramSpec`] as JSON).
    pub program: BlobRef,
    pub work_dim: u32,
    pub offset: [u64; 3],
    pub global: [u64; 3],
    /// None when the application gave no local size.
    pub local: Option<[u64; 3]>,
    pub args: Vec<SpooledArg>,
    /// The contents of each buffer or image the arguments index.
    pub buffers: Vec<BlobRef>,
    /// The host's access mode of each buffer (by index; missing ones are read-write).
    pub modes: Vec<BufferMode>,
}

/// A launch for the writer, in memory: a manifest whose program and buffers are not stored yet.
/// The buffers are moved in, and freed once written.
#[derive(Debug, Clone)]
pub struct LaunchRecord {
    pub seq: u64,
    pub kernel: String,
    pub number: u64,
    /// Shared by the launches of one program: the writer stores it once per program object.
    pub program: Arc<ProgramSpec>,
    pub work_dim: u32,
    pub offset: [u64; 3],
    pub global: [u64; 3],
    pub local: Option<[u64; 3]>,
    pub args: Vec<SpooledArg>,
    pub buffers: Vec<Vec<u8>>,
    pub modes: Vec<BufferMode>,
}

/// The emulator's inputs for a spooled launch: the launch, the access mode of each buffer (for
/// [`crate::exec::RunOptions::buffer_modes`]), and the local size assumed for it when the
/// application gave none and the kernel requires none (the caller says so once per kernel).
#[derive(Debug, Clone)]
pub struct LaunchInputs {
    pub launch: Launch,
    pub modes: Vec<BufferMode>,
    pub assumed_local: Option<[u64; 3]>,
}

/// Why a spooled launch cannot become an emulator launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputError {
    /// Argument `index` (`name`) is of a kind the emulator does not take (pipes, queues, or
    /// not set): the launch is not checked, as inline.
    Unsupported { index: usize, name: String },
    /// The manifest is damaged: a by-value argument that is not hex.
    Corrupt(String),
}

impl InputError {
    /// Why a launch of `kernel` (in `program`) was not checked, in the words of every check.
    pub fn failure(&self, kernel: &str, program: &str) -> crate::failure::Failure {
        crate::failure::Failure::input(
            kernel,
            program,
            &self.to_string(),
            matches!(self, InputError::Unsupported { .. }),
        )
    }
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InputError::Unsupported { index, name } => {
                write!(f, "argument {index} ('{name}') is of a kind not supported yet")
            }
            InputError::Corrupt(why) => write!(f, "the spooled launch is damaged: {why}"),
        }
    }
}

impl std::error::Error for InputError {}

impl SpooledLaunch {
    /// The emulator's launch of kernel `info` with these arguments and this NDRange: each
    /// argument becomes the [`ArgValue`] the layer makes of it for an inline check, and a launch
    /// without a local size runs with the kernel's required one or [`assumed_local_size`].
    pub fn to_launch(&self, info: &KernelInfo) -> Result<LaunchInputs, InputError> {
        let mut args = Vec::with_capacity(info.args.len());
        for (i, arg) in info.args.iter().enumerate() {
            let value = match (self.args.get(i), arg.is_pointer && arg.space != AddressSpace::Local) {
                (Some(SpooledArg::Buffer { index, offset: 0 }), true) => ArgValue::Buffer(*index),
                (Some(SpooledArg::Buffer { index, offset }), true) => {
                    ArgValue::SubBuffer { buffer: *index, offset: *offset }
                }
                (Some(SpooledArg::Null), true) => ArgValue::Null,
                (Some(SpooledArg::Local { size }), _) => ArgValue::Local(*size),
                (Some(SpooledArg::Image { index, desc }), _) => ArgValue::Image { buffer: *index, desc: *desc },
                (Some(SpooledArg::Sampler { bits }), _) => ArgValue::Sampler(*bits),
                (Some(SpooledArg::Value { hex: digits }), false) => ArgValue::Value(
                    hex::decode(digits)
                        .map_err(|why| InputError::Corrupt(format!("argument {i} ('{}'): {why}", arg.name)))?,
                ),
                (Some(SpooledArg::Null), false) => ArgValue::Value(vec![0; size_of::<usize>()]),
                _ => return Err(InputError::Unsupported { index: i, name: arg.name.clone() }),
            };
            args.push(value);
        }
        let (local, assumed_local) = match self.local.or(info.required_local_size) {
            Some(local) => (local, None),
            None => {
                let assumed = assumed_local_size(self.global, self.work_dim);
                (assumed, Some(assumed))
            }
        };
        let launch = Launch {
            kernel: self.kernel.clone(),
            work_dim: self.work_dim,
            global_offset: self.offset,
            global_size: self.global,
            local_size: local,
            args,
        };
        Ok(LaunchInputs { launch, modes: self.modes.clone(), assumed_local })
    }
}

/// A local size for a launch that gave none: the largest divisor of the global size up to 64 in
/// the first dimension, 1 in the others.
pub fn assumed_local_size(global: [u64; 3], work_dim: u32) -> [u64; 3] {
    let first = (1..=64.min(global[0])).rev().find(|d| global[0].is_multiple_of(*d)).unwrap_or(1);
    let _ = work_dim;
    [first, 1, 1]
}
