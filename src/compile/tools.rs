//! The external tools and where they run: finding `clang-15`, `llvm-spirv-15` and `llvm-link-15`
//! (an override variable, else `PATH`), identifying a tool build for the cache key, running a
//! tool as a subprocess (never through a shell), and the temporary directories a build works in.
//!
//! It knows how to run a tool, not what to ask of it: the arguments come from [`super::build`].

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::{self, ErrorKind};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use super::error::BuildError;

pub(super) const INSTALL_HINT: &str = "install them with `apt-get install clang-15 llvm-spirv-15` \
     (or run ci/setup), or point CLRACE_CLANG / CLRACE_LLVM_SPIRV at them";

/// The hint for llvm-link, which only linked builds need.
pub(super) const LINK_HINT: &str = "install it with `apt-get install llvm-15`, which provides llvm-link-15 \
     (or run ci/setup), or point CLRACE_LLVM_LINK at it";

/// Where the tools and the cache are; `compile` derives it from the environment.
#[derive(Debug, Clone)]
pub(super) struct Config {
    pub(super) cache_dir: Option<PathBuf>,
    pub(super) clang: PathBuf,
    pub(super) llvm_spirv: PathBuf,
}

impl Config {
    pub(super) fn from_env() -> Result<Config, BuildError> {
        let path_var = std::env::var_os("PATH");
        let clang = find_tool(
            "CLRACE_CLANG",
            std::env::var_os("CLRACE_CLANG"),
            &["clang-15", "clang"],
            path_var.as_deref(),
            INSTALL_HINT,
        )?;
        let llvm_spirv = find_tool(
            "CLRACE_LLVM_SPIRV",
            std::env::var_os("CLRACE_LLVM_SPIRV"),
            &["llvm-spirv-15", "llvm-spirv"],
            path_var.as_deref(),
            INSTALL_HINT,
        )?;
        Ok(Config { cache_dir: default_cache_dir(), clang, llvm_spirv })
    }
}

/// clrace's cache directory: `CLRACE_CACHE_DIR`, else `$XDG_CACHE_HOME/clrace`, else
/// `~/.cache/clrace`; None when none of them is set.
pub fn default_cache_dir() -> Option<PathBuf> {
    let non_empty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = non_empty("CLRACE_CACHE_DIR") {
        return Some(PathBuf::from(dir));
    }
    if let Some(xdg) = non_empty("XDG_CACHE_HOME") {
        return Some(Path::new(&xdg).join("clrace"));
    }
    non_empty("HOME").map(|home| Path::new(&home).join(".cache").join("clrace"))
}

/// Finds a tool: the override variable's value (a path, or a name looked up on `PATH`), else
/// the first of `names` found on `PATH`. `hint` ends the error message.
pub(super) fn find_tool(
    var: &str,
    override_value: Option<OsString>,
    names: &[&str],
    path_var: Option<&OsStr>,
    hint: &str,
) -> Result<PathBuf, BuildError> {
    if let Some(value) = override_value.filter(|v| !v.is_empty()) {
        return locate(Path::new(&value), path_var).ok_or_else(|| {
            BuildError::ToolsMissing(format!(
                "{var}={} does not name an executable; {hint}",
                Path::new(&value).display()
            ))
        });
    }
    names
        .iter()
        .find_map(|name| locate(Path::new(name), path_var))
        .ok_or_else(|| BuildError::ToolsMissing(format!("{} not found on PATH; {hint}", names.join(" or "))))
}

/// `tool` itself when it has a directory part, else the first match on `PATH`.
fn locate(tool: &Path, path_var: Option<&OsStr>) -> Option<PathBuf> {
    if tool.components().count() > 1 {
        return is_executable(tool).then(|| tool.to_path_buf());
    }
    std::env::split_paths(path_var?).map(|dir| dir.join(tool)).find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// What identifies a tool build for the cache key: its resolved path, size and modification
/// time (the check ccache makes by default). It costs two `stat`s where asking the tool for
/// `--version` would cost a process start (about 20 ms each) on every run.
pub(super) fn tool_identity(tool: &Path, hint: &str) -> Result<String, BuildError> {
    let missing = |e: std::io::Error| BuildError::ToolsMissing(format!("{}: {e}; {hint}", tool.display()));
    let real = fs::canonicalize(tool).map_err(missing)?;
    let meta = fs::metadata(&real).map_err(missing)?;
    let mtime =
        meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos());
    Ok(format!("{} {} {mtime}", real.display(), meta.len()))
}

pub(super) fn run_tool(tool: &Path, args: &[OsString], hint: &str) -> Result<Output, BuildError> {
    Command::new(tool).args(args).output().map_err(|e| match e.kind() {
        ErrorKind::NotFound | ErrorKind::PermissionDenied => {
            BuildError::ToolsMissing(format!("cannot run {}: {e}; {hint}", tool.display()))
        }
        _ => BuildError::Internal(format!("cannot run {}: {e}", tool.display())),
    })
}

pub(super) const SPIRV_MAGIC: [u8; 4] = 0x0723_0203u32.to_le_bytes();

/// A private temporary directory, removed with everything in it when dropped.
pub(super) struct WorkDir(PathBuf);

impl WorkDir {
    fn create() -> io::Result<WorkDir> {
        let base = std::env::temp_dir();
        loop {
            let dir = base.join(format!("clrace-{}", unique_suffix()));
            match fs::create_dir(&dir) {
                Ok(()) => return Ok(WorkDir(dir)),
                Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    pub(super) fn create_for_build() -> Result<WorkDir, BuildError> {
        WorkDir::create().map_err(|e| BuildError::Internal(format!("cannot create a temporary directory: {e}")))
    }

    pub(super) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Process id, a per-process counter and the clock: distinct across threads and processes.
pub(super) fn unique_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    format!("{}-{n}-{nanos}", std::process::id())
}
