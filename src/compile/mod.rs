//! The OpenCL C front end: turns kernel source plus an application's build options into SPIR-V.
//!
//! This module owns everything between `clBuildProgram`'s arguments (or `clCompileProgram`'s
//! and `clLinkProgram`'s) and a SPIR-V binary:
//! - splitting the option string with shell-like quoting and mapping each option to what clang
//!   should see (the "App build options" table of the frontend notes, spirv-frontend.md);
//! - finding the external tools (`clang-15`, `llvm-spirv-15`, and `llvm-link-15` for linked
//!   programs) and running them as subprocesses, never through a shell, so a crash in any of
//!   them cannot take the host down;
//! - sorting failures into the app's fault (clang diagnostics, or llvm-link's for a bad link,
//!   become the build log) and ours (a translator failure is an internal error);
//! - an on-disk cache keyed by the source, the clang arguments, the tool versions and the
//!   contents of every header the source included.
//!
//! [`compile`] builds one source: clang writes LLVM bitcode, llvm-spirv translates it. Every
//! source is compiled with `workarounds.h` force-included: macros that rewrite calls clang
//! accepts but llvm-spirv-15 aborts on (fence flags that are not constants, compare-exchange on
//! `atomic_float`/`atomic_double`) into ones it translates, keeping the caller's source line. A
//! barrier with flags that are not constants stays one barrier (so work-items whose flags differ
//! do not diverge): each work-item names its flags with a marker the race detector reads.
//! [`compile_units`] is separate compilation: each [`Unit`] goes through clang exactly as in
//! [`compile`] (its in-memory headers written to a temporary include directory), llvm-link joins
//! the bitcode, and llvm-spirv translates the result once.
//!
//! The cache has two levels. `key1` hashes what we know before compiling (source, arguments,
//! tool versions, working directory; for linked builds every unit's, its in-memory headers and
//! the link options); its record lists the on-disk headers clang reported through `-MD`. `key2`
//! adds the current contents of those headers and names the stored SPIR-V. A header that is
//! newly created earlier on the include path, shadowing the recorded one, is not detected (the
//! same limitation as ccache's direct mode).
//!
//! The parts, each above those it names: `error` says why a build failed, `options` reads the
//! option strings, `tools` finds and runs the tools, `cache` stores what a build made, and
//! `build` puts them together. This file takes the configuration from the environment and
//! hands each call to `build`. None of it sees SPIR-V's contents or the IR: its output is
//! bytes, which [`crate::spirv`] reads.

mod build;
mod cache;
mod error;
mod options;
mod tools;

use std::path::Path;

pub use build::{Compiled, Unit};
use build::{compile_units_with, compile_with};
pub(crate) use cache::{make_room, write_atomically};
pub use error::BuildError;
pub use options::tokenize_options;
pub use tools::default_cache_dir;
use tools::{Config, LINK_HINT, find_tool};

/// Compiles OpenCL C `source`, named `path` in diagnostics and debug info, with the
/// application's build `options`.
///
/// Tools come from `CLRACE_CLANG` / `CLRACE_LLVM_SPIRV` or `PATH`; the cache lives in
/// `CLRACE_CACHE_DIR`, `$XDG_CACHE_HOME/clrace` or `$HOME/.cache/clrace`.
pub fn compile(source: &str, path: &Path, options: &str) -> Result<Compiled, BuildError> {
    let config = Config::from_env()?;
    compile_with(&config, source, path, options)
}

/// Compiles every unit to LLVM bitcode as [`compile`] would, links them with llvm-link and
/// translates the linked module to SPIR-V.
///
/// `link_options` are `clLinkProgram`'s: `-create-library` and `-enable-link-options` are
/// accepted and have no effect, `-cl-denorms-are-zero` sets
/// [`flush_denormals`](Compiled::flush_denormals) (as it does in any unit's options), and
/// anything else is dropped with a warning in the log. llvm-link comes from `CLRACE_LLVM_LINK`
/// or `PATH`; the other tools and the cache as for [`compile`].
pub fn compile_units(units: &[Unit], link_options: &str) -> Result<Compiled, BuildError> {
    let config = Config::from_env()?;
    let path_var = std::env::var_os("PATH");
    let llvm_link = find_tool(
        "CLRACE_LLVM_LINK",
        std::env::var_os("CLRACE_LLVM_LINK"),
        &["llvm-link-15", "llvm-link"],
        path_var.as_deref(),
        LINK_HINT,
    )?;
    compile_units_with(&config, &llvm_link, units, link_options)
}
