//! The spool (issue 28): launches the layer snapshotted, written to a directory to be checked
//! after the application exits, on every core or on many machines.
//!
//! Layout (format 1): `DIR/spool.json` (format and clrace version), `DIR/blobs/XX/HASH.zst`
//! (content-addressed, zstd-compressed: [`blobs`]), `DIR/launches/SEQ.json` (one manifest per
//! launch, [`format::SpooledLaunch`], renamed into place only after its blobs are written) and
//! `DIR/runs/R/layer.json` (the ledger at exit of the layer in the R-th process that wrote the
//! spool; absent after a crash). [`program`] is the
//! program record a manifest references, [`writer`] writes a spool off the application's
//! threads and [`reader`] reads one back; [`export`] writes one launch as a launch file.
//!
//! It owns the files of a spool and nothing else: it does not check or report launches, and it
//! knows nothing of the layer's OpenCL objects (the layer hands it plain data).

pub mod blobs;
pub mod check;
pub mod early;
pub mod export;
pub mod format;
pub mod hex;
pub mod merge;
pub mod program;
pub mod reader;
pub mod writer;

#[cfg(test)]
mod tests;

pub use format::{BlobRef, InputError, LaunchInputs, LaunchRecord, SpooledArg, SpooledLaunch, assumed_local_size};
pub use program::{ProgramKind, ProgramSpec, UnitSpec};
pub use reader::{LaunchEntry, Spool, copy_launches, load_manifest, open_manifest};
pub use writer::{Done, RUN_STRIDE, SpoolWriter, manifest_path};
