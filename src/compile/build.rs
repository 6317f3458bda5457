//! The build itself: clang to LLVM bitcode (with the workaround header force-included), llvm-link
//! for separately compiled units, llvm-spirv to SPIR-V, each failure sorted into the app's fault
//! or ours, and the cache asked first. Key 1 of the cache, everything known before compiling, is
//! made here ([`request_key`], [`units_key`]).
//!
//! It sees files, arguments and bytes: nothing of what the SPIR-V it returns holds.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::process::Output;

use super::cache::{Built, Key, KeyHasher, cached_or_built};
use super::error::BuildError;
use super::options::{BuildOptions, filter_link_options, filter_options, tokenize_options};
use super::tools::{Config, INSTALL_HINT, LINK_HINT, SPIRV_MAGIC, WorkDir, run_tool, tool_identity};

/// Force-included before every source: rewrites of calls that llvm-spirv-15 aborts on (fence
/// flags that are not constants, compare-exchange on atomic_float and atomic_double).
const WORKAROUNDS: &str = include_str!("../workarounds.h");
/// The name the workaround header goes by in build logs.
const WORKAROUNDS_NAME: &str = "<clrace workarounds>";

/// A successful build.
pub struct Compiled {
    /// The SPIR-V module, as little-endian bytes.
    pub spirv: Vec<u8>,
    /// Our own warnings (ignored options) followed by clang's warnings; empty on a clean build.
    pub log: String,
    /// The options asked for `-cl-denorms-are-zero`: the interpreter should flush denormals.
    pub flush_denormals: bool,
}

/// One separately compiled source, as `clCompileProgram` receives it.
#[derive(Debug, Clone, Default)]
pub struct Unit {
    /// The OpenCL C source.
    pub source: String,
    /// Its name in diagnostics and debug info, as for [`compile`](super::compile).
    pub path: PathBuf,
    /// The application's compile options for this unit.
    pub options: String,
    /// In-memory headers as (include name, text): `#include "name"` in the unit finds `text`.
    /// Names are relative paths and may have directories (`util/helper.h`).
    pub headers: Vec<(String, String)>,
    /// A SPIR-V module (`clCreateProgramWithIL`) to link instead of compiling `source`: it is
    /// translated back to LLVM bitcode with `llvm-spirv -r` and linked like a compiled unit.
    pub spirv: Option<Vec<u8>>,
}

/// Where the source comes from, as the user named it.
struct SourceName {
    /// The path exactly as given: diagnostics and the build log show this.
    display: PathBuf,
    /// The absolute directory of that path: `-I` for relative includes, and the debug-info
    /// directory when we compile a temporary copy.
    dir: PathBuf,
    /// The file name, reused for the temporary copy.
    file_name: OsString,
}

impl SourceName {
    fn new(path: &Path) -> SourceName {
        let cwd = std::env::current_dir().unwrap_or_default();
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
        let dir = parent.map_or_else(|| cwd.clone(), |p| cwd.join(p));
        let file_name = path.file_name().map_or_else(|| "program.cl".into(), OsStr::to_owned);
        let display = if path.as_os_str().is_empty() { file_name.clone().into() } else { path.into() };
        SourceName { display, dir, file_name }
    }
}

pub(super) fn compile_with(config: &Config, source: &str, path: &Path, options: &str) -> Result<Compiled, BuildError> {
    let tokens = tokenize_options(options).map_err(|e| BuildError::Compile(format!("error: {e}\n")))?;
    let options = filter_options(&tokens);
    let name = SourceName::new(path);
    let args = clang_args(&options, &name, None);
    let versions = [tool_identity(&config.clang, INSTALL_HINT)?, tool_identity(&config.llvm_spirv, INSTALL_HINT)?];
    let key1 = request_key(source, &name, &args, &versions);
    let (spirv, tools_log) = cached_or_built(config, &key1, || build(config, source, &name, &args))?;
    let mut log: String = options.warnings.iter().map(|w| format!("{w}\n")).collect();
    log.push_str(&tools_log);
    Ok(Compiled { spirv, log, flush_denormals: options.flush_denormals })
}

/// A unit of [`compile_units`](super::compile_units) with its options filtered.
struct PreparedUnit<'a> {
    unit: &'a Unit,
    name: SourceName,
    options: BuildOptions,
}

/// Stands for a unit's temporary header directory in its cache key.
const HEADERS_PLACEHOLDER: &str = "<input headers>";

impl PreparedUnit<'_> {
    fn new(unit: &Unit) -> Result<PreparedUnit<'_>, BuildError> {
        let name = SourceName::new(&unit.path);
        let tokens = tokenize_options(&unit.options)
            .map_err(|e| BuildError::Compile(format!("{}: error: {e}\n", name.display.display())))?;
        if let Some((bad, _)) = unit.headers.iter().find(|(include, _)| header_path(include).is_none()) {
            return Err(BuildError::Compile(format!(
                "{}: error: input header name '{bad}' is not a relative path\n",
                name.display.display()
            )));
        }
        Ok(PreparedUnit { unit, options: filter_options(&tokens), name })
    }

    /// The unit's clang arguments for the cache key: the include directory of its in-memory
    /// headers, a temporary one in each build, is replaced by a fixed placeholder.
    fn key_args(&self) -> Vec<OsString> {
        let placeholder = (!self.unit.headers.is_empty()).then_some(Path::new(HEADERS_PLACEHOLDER));
        clang_args(&self.options, &self.name, placeholder)
    }
}

/// An input header's path below the header directory: relative, without `..`.
fn header_path(include: &str) -> Option<PathBuf> {
    let path = Path::new(include);
    let normal = path.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    (normal && path.components().any(|c| matches!(c, Component::Normal(_)))).then(|| path.to_path_buf())
}

pub(super) fn compile_units_with(
    config: &Config,
    llvm_link: &Path,
    units: &[Unit],
    link_options: &str,
) -> Result<Compiled, BuildError> {
    if units.is_empty() {
        return Err(BuildError::Compile("error: no compiled programs to link\n".into()));
    }
    let link_tokens =
        tokenize_options(link_options).map_err(|e| BuildError::Compile(format!("error: link options: {e}\n")))?;
    let link = filter_link_options(&link_tokens);
    let prepared = units.iter().map(PreparedUnit::new).collect::<Result<Vec<_>, _>>()?;
    let versions = [
        tool_identity(&config.clang, INSTALL_HINT)?,
        tool_identity(&config.llvm_spirv, INSTALL_HINT)?,
        tool_identity(llvm_link, LINK_HINT)?,
    ];
    let key1 = units_key(&prepared, link_options, &versions);
    let (spirv, tools_log) = cached_or_built(config, &key1, || build_units(config, llvm_link, &prepared))?;

    let mut log = String::new();
    for unit in &prepared {
        for warning in &unit.options.warnings {
            log.push_str(&format!("{}: {warning}\n", unit.name.display.display()));
        }
    }
    for warning in &link.warnings {
        log.push_str(&format!("{warning}\n"));
    }
    log.push_str(&tools_log);
    let flush_denormals = link.flush_denormals || prepared.iter().any(|u| u.options.flush_denormals);
    Ok(Compiled { spirv, log, flush_denormals })
}

/// The clang arguments that decide the output, minus file names of our temporaries.
/// `headers` is the directory of in-memory headers; it comes before the other `-I` directories.
fn clang_args(options: &BuildOptions, name: &SourceName, headers: Option<&Path>) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec!["-x".into(), "cl".into()];
    if !options.has_std {
        args.push("-cl-std=CL1.2".into());
    }
    for fixed in ["--target=spir64", "-O0", "-g", "-emit-llvm", "-c", "-fno-color-diagnostics"] {
        args.push(fixed.into());
    }
    args.push("-cl-kernel-arg-info".into());
    // Kernels may test for the emulator: `clrace.h` makes `CLRACE_ASSERT` a call only here, and
    // the real driver never sees the macro.
    args.push("-D__CLRACE__=1".into());
    // At -O0, clang emits no body for a C99 `inline` function (an inline definition is not an
    // external one), so every call to it would reach a declaration. GNU inline semantics give it
    // one. (`extern inline` then means "no out-of-line body", as in GNU C.)
    if !options.cpp {
        args.push("-fgnu89-inline".into());
    }
    if let Some(headers) = headers {
        args.push("-I".into());
        args.push(headers.into());
    }
    args.push("-I".into());
    args.push(name.dir.clone().into());
    args.extend(options.clang_args.iter().map(OsString::from));
    args
}

fn build(config: &Config, source: &str, name: &SourceName, args: &[OsString]) -> Result<Built, BuildError> {
    let work = WorkDir::create_for_build()?;
    let bitcode = work.path().join("program.bc");
    let unit = to_bitcode(config, source, name, args, None, work.path(), &bitcode)?;
    let spirv = translate(config, &bitcode, work.path())?;
    Ok(Built { spirv, log: unit.log, headers: unit.headers })
}

fn build_units(config: &Config, llvm_link: &Path, units: &[PreparedUnit]) -> Result<Built, BuildError> {
    let work = WorkDir::create_for_build()?;
    let mut log = String::new();
    let mut headers: Vec<PathBuf> = Vec::new();
    let mut bitcodes = Vec::new();
    for (i, unit) in units.iter().enumerate() {
        let scratch = work.path().join(format!("unit{i}"));
        fs::create_dir(&scratch).map_err(|e| internal_write(&scratch, e))?;
        let include_dir = write_headers(&scratch, unit)?;
        let args = clang_args(&unit.options, &unit.name, include_dir.as_deref());
        let bitcode = work.path().join(format!("unit{i}.bc"));
        if let Some(spirv) = &unit.unit.spirv {
            from_spirv(config, spirv, &unit.name, &scratch, &bitcode)?;
            bitcodes.push(bitcode);
            continue;
        }
        let source = &unit.unit.source;
        match to_bitcode(config, source, &unit.name, &args, include_dir.as_deref(), &scratch, &bitcode) {
            Ok(compiled) => {
                log.push_str(&compiled.log);
                for header in compiled.headers {
                    if !headers.contains(&header) {
                        headers.push(header);
                    }
                }
            }
            Err(BuildError::Compile(unit_log)) => {
                // clang names the file in its diagnostics, but not in every error (a bad option).
                let display = unit.name.display.to_string_lossy();
                if !unit_log.contains(&*display) {
                    log.push_str(&format!("{display}: error: the unit does not compile:\n"));
                }
                log.push_str(&unit_log);
                return Err(BuildError::Compile(log));
            }
            Err(other) => return Err(other),
        }
        bitcodes.push(bitcode);
    }
    let linked = work.path().join("linked.bc");
    log.push_str(&link(llvm_link, &bitcodes, units, &linked)?);
    let spirv = translate(config, &linked, work.path())?;
    Ok(Built { spirv, log, headers })
}

/// Translates a SPIR-V unit back to LLVM bitcode. A module the translator rejects is the
/// application's error, named by the unit.
fn from_spirv(
    config: &Config,
    spirv: &[u8],
    name: &SourceName,
    scratch: &Path,
    bitcode: &Path,
) -> Result<(), BuildError> {
    let input = scratch.join("module.spv");
    fs::write(&input, spirv).map_err(|e| internal_write(&input, e))?;
    let args: Vec<OsString> = vec!["-r".into(), input.into(), "-o".into(), bitcode.into()];
    let output = run_tool(&config.llvm_spirv, &args, INSTALL_HINT)?;
    if output.status.success() {
        return Ok(());
    }
    Err(BuildError::Spirv(format!(
        "{}: the SPIR-V module cannot be linked: {}",
        name.display.display(),
        trim_crash_dump(&String::from_utf8_lossy(&output.stderr)).trim()
    )))
}

/// Writes a unit's in-memory headers under `scratch/include` by their include names; the
/// directory, or `None` when the unit has no headers.
fn write_headers(scratch: &Path, unit: &PreparedUnit) -> Result<Option<PathBuf>, BuildError> {
    if unit.unit.headers.is_empty() {
        return Ok(None);
    }
    let dir = scratch.join("include");
    for (include, text) in &unit.unit.headers {
        let relative = header_path(include).expect("checked by PreparedUnit::new");
        let file = dir.join(relative);
        let parent = file.parent().unwrap_or(&dir);
        fs::create_dir_all(parent).and_then(|()| fs::write(&file, text)).map_err(|e| {
            BuildError::Compile(format!(
                "{}: error: cannot write input header '{include}': {e}\n",
                unit.name.display.display()
            ))
        })?;
    }
    Ok(Some(dir))
}

/// What clang produced for one source besides its bitcode.
struct UnitBuilt {
    /// clang's stderr (warnings), with temporary paths replaced by the user's.
    log: String,
    /// Absolute paths of every file on disk the source included.
    headers: Vec<PathBuf>,
}

/// Runs clang on one source, writing `bitcode`. `scratch` is an empty directory for the
/// source's copy and the dependency file; `header_dir` holds in-memory headers (it is shown
/// under the include names in diagnostics, and is not a dependency).
fn to_bitcode(
    config: &Config,
    source: &str,
    name: &SourceName,
    args: &[OsString],
    header_dir: Option<&Path>,
    scratch: &Path,
    bitcode: &Path,
) -> Result<UnitBuilt, BuildError> {
    let (input, copy) = input_file(source, name, scratch)?;
    let depfile = scratch.join("deps.d");
    let workarounds = scratch.join("clrace-workarounds.h");
    fs::write(&workarounds, WORKAROUNDS).map_err(|e| internal_write(&workarounds, e))?;

    let mut clang_cmd = args.to_vec();
    clang_cmd.push("-include".into());
    clang_cmd.push(workarounds.clone().into());
    let copy_dir = copy.as_ref().and_then(|c| c.parent());
    for dir in copy_dir.into_iter().chain(header_dir) {
        let mut map = OsString::from("-ffile-prefix-map=");
        map.push(dir);
        map.push("=");
        map.push(&name.dir);
        clang_cmd.push(map);
    }
    clang_cmd.extend(["-MD", "-MF"].map(OsString::from));
    clang_cmd.push(depfile.clone().into());
    clang_cmd.extend(["-MT", "dep", "-o"].map(OsString::from));
    clang_cmd.push(bitcode.into());
    clang_cmd.push("--".into());
    clang_cmd.push(input.clone().into());

    let output = run_tool(&config.clang, &clang_cmd, INSTALL_HINT)?;
    let mut log = String::from_utf8_lossy(&output.stderr).into_owned();
    if let Some(copy) = &copy {
        log = log.replace(&*copy.to_string_lossy(), &name.display.to_string_lossy());
    }
    if let Some(dir) = header_dir {
        log = log.replace(&*dir.join("").to_string_lossy(), "");
    }
    log = log.replace(&*workarounds.to_string_lossy(), WORKAROUNDS_NAME);
    check_clang(&output, &log)?;
    let headers = read_headers(&depfile, &[&input, &workarounds], header_dir);
    Ok(UnitBuilt { log, headers })
}

/// Links `bitcodes` (one per unit) into `linked`; llvm-link's warnings on success. A failed link
/// (a symbol defined twice) is the app's error.
fn link(llvm_link: &Path, bitcodes: &[PathBuf], units: &[PreparedUnit], linked: &Path) -> Result<String, BuildError> {
    let mut args: Vec<OsString> = vec!["-o".into(), linked.into()];
    args.extend(bitcodes.iter().map(OsString::from));
    let output = run_tool(llvm_link, &args, LINK_HINT)?;
    let mut log = String::from_utf8_lossy(&output.stderr).into_owned();
    for (bitcode, unit) in bitcodes.iter().zip(units) {
        log = log.replace(&*bitcode.to_string_lossy(), &unit.name.display.to_string_lossy());
    }
    if output.status.success() {
        return Ok(log);
    }
    if output.status.code().is_none() || log.contains("Stack dump:") {
        return Err(BuildError::Internal(format!(
            "llvm-link crashed ({}):\n{}",
            describe_status(&output),
            trim_crash_dump(&log)
        )));
    }
    Err(BuildError::Compile(log))
}

/// Translates `bitcode` to SPIR-V (written next to it in `work`).
fn translate(config: &Config, bitcode: &Path, work: &Path) -> Result<Vec<u8>, BuildError> {
    let spirv = work.join("program.spv");
    let translate: Vec<OsString> = vec![
        "--spirv-mem2reg".into(),
        "--spirv-max-version=1.2".into(),
        "--preserve-ocl-kernel-arg-type-metadata-through-string".into(),
        bitcode.into(),
        "-o".into(),
        spirv.clone().into(),
    ];
    let output = run_tool(&config.llvm_spirv, &translate, INSTALL_HINT)?;
    if !output.status.success() {
        return Err(BuildError::Internal(format!(
            "llvm-spirv failed ({}) on code clang accepted:\n{}",
            describe_status(&output),
            trim_crash_dump(&String::from_utf8_lossy(&output.stderr))
        )));
    }
    let spirv = fs::read(&spirv).map_err(|e| BuildError::Internal(format!("llvm-spirv wrote no module: {e}")))?;
    if spirv.len() < 20 || spirv[..4] != SPIRV_MAGIC {
        return Err(BuildError::Internal("llvm-spirv wrote something that is not SPIR-V".into()));
    }
    Ok(spirv)
}

fn internal_write(path: &Path, e: io::Error) -> BuildError {
    BuildError::Internal(format!("cannot write {}: {e}", path.display()))
}

/// The file clang should compile: the user's own file when it holds exactly `source`, else a
/// copy under the same file name in `scratch/src` (returned twice: as input and copy).
fn input_file(source: &str, name: &SourceName, scratch: &Path) -> Result<(PathBuf, Option<PathBuf>), BuildError> {
    if fs::read(&name.display).is_ok_and(|on_disk| on_disk == source.as_bytes()) {
        return Ok((name.display.clone(), None));
    }
    let dir = scratch.join("src");
    let copy = dir.join(&name.file_name);
    fs::create_dir(&dir).and_then(|()| fs::write(&copy, source)).map_err(|e| internal_write(&copy, e))?;
    Ok((copy.clone(), Some(copy)))
}

/// Sorts a finished clang run: success, the app's error, or a clang crash.
fn check_clang(output: &Output, log: &str) -> Result<(), BuildError> {
    if output.status.success() {
        return Ok(());
    }
    let crashed = output.status.code().is_none() || log.contains("command failed due to signal");
    if crashed {
        return Err(BuildError::Internal(format!(
            "clang crashed ({}):\n{}",
            describe_status(output),
            trim_crash_dump(log)
        )));
    }
    Err(BuildError::Compile(log.to_owned()))
}

fn describe_status(output: &Output) -> String {
    match output.status.code() {
        Some(code) => format!("exit code {code}"),
        None => format!("killed: {}", output.status),
    }
}

/// Keeps a crash message but drops LLVM's stack dump, which only helps with a debugger.
fn trim_crash_dump(stderr: &str) -> String {
    let end = ["PLEASE submit a bug report", "Stack dump:"]
        .iter()
        .filter_map(|marker| stderr.find(marker))
        .min()
        .unwrap_or(stderr.len());
    stderr[..end].trim_end().to_owned()
}

/// The headers named in clang's dependency file, as absolute paths, without the input itself
/// and without anything under `header_dir` (in-memory headers, which the cache key covers).
fn read_headers(depfile: &Path, ours: &[&Path], header_dir: Option<&Path>) -> Vec<PathBuf> {
    let Ok(text) = fs::read_to_string(depfile) else {
        return Vec::new();
    };
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut headers = Vec::new();
    for dep in parse_depfile(&text) {
        let dep = PathBuf::from(dep);
        if ours.contains(&dep.as_path()) || header_dir.is_some_and(|dir| dep.starts_with(dir)) {
            continue;
        }
        let absolute = cwd.join(dep);
        if !headers.contains(&absolute) {
            headers.push(absolute);
        }
    }
    headers
}

/// The prerequisites of a Make rule as clang writes it (`target: a b \` + newline + `c`), undoing
/// clang's escapes for spaces (`\ `), `#` (`\#`) and `$` (`$$`).
fn parse_depfile(text: &str) -> Vec<String> {
    let body = text.split_once(": ").map_or("", |(_, rest)| rest);
    let mut deps = Vec::new();
    let mut current = String::new();
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if matches!(chars.peek(), Some(' ' | '#')) => current.push(chars.next().unwrap()),
            '\\' if matches!(chars.peek(), Some('\n' | '\r')) => {}
            '$' if chars.peek() == Some(&'$') => current.push(chars.next().unwrap()),
            c if c.is_whitespace() => {
                if !current.is_empty() {
                    deps.push(std::mem::take(&mut current));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        deps.push(current);
    }
    deps
}

/// Key 1: everything known before compiling.
fn request_key(source: &str, name: &SourceName, args: &[OsString], versions: &[String]) -> Key {
    let mut hasher = KeyHasher::new("clrace-compile-request-v2");
    for version in versions {
        hasher.field(version.as_bytes());
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    hasher.field(cwd.as_os_str().as_encoded_bytes());
    hasher.field(name.display.as_os_str().as_encoded_bytes());
    hasher.field(&(args.len() as u64).to_le_bytes());
    for arg in args {
        hasher.field(arg.as_encoded_bytes());
    }
    hasher.field(source.as_bytes());
    hasher.field(WORKAROUNDS.as_bytes());
    hasher.finish()
}

/// Key 1 of a linked build: each unit's request (as [`request_key`] without the tools, and
/// with its header directory as a placeholder) and its in-memory headers, the link options and
/// the three tools.
fn units_key(units: &[PreparedUnit], link_options: &str, versions: &[String]) -> Key {
    let mut hasher = KeyHasher::new("clrace-link-request-v2");
    hasher.field(&(versions.len() as u64).to_le_bytes());
    for version in versions {
        hasher.field(version.as_bytes());
    }
    hasher.field(link_options.as_bytes());
    hasher.field(&(units.len() as u64).to_le_bytes());
    for unit in units {
        if let Some(spirv) = &unit.unit.spirv {
            hasher.field(b"spirv");
            hasher.field(spirv);
            continue;
        }
        let args = unit.key_args();
        hasher.field(&request_key(&unit.unit.source, &unit.name, &args, &[]));
        hasher.field(&(unit.unit.headers.len() as u64).to_le_bytes());
        for (include, text) in &unit.unit.headers {
            hasher.field(include.as_bytes());
            hasher.field(text.as_bytes());
        }
    }
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::tools::find_tool;
    const VADD: &str = "kernel void vadd(global const float *a, global const float *b,\n\
                        global float *c) {\n  size_t i = get_global_id(0);\n  c[i] = a[i] + b[i];\n}\n";

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    /// The real tools from PATH, with a cache in `cache_dir` (or none).
    fn real_config(cache_dir: Option<&Path>) -> Config {
        let path_var = std::env::var_os("PATH");
        let clang = find_tool("CLANG", None, &["clang-15", "clang"], path_var.as_deref(), INSTALL_HINT);
        let spirv = find_tool("SPIRV", None, &["llvm-spirv-15", "llvm-spirv"], path_var.as_deref(), INSTALL_HINT);
        Config {
            cache_dir: cache_dir.map(Path::to_path_buf),
            clang: clang.expect("clang-15 is installed (run ci/setup)"),
            llvm_spirv: spirv.expect("llvm-spirv-15 is installed (run ci/setup)"),
        }
    }

    /// A wrapper around the real clang that logs every compile (not `--version`) to a file.
    #[cfg(unix)]
    fn counting_clang(dir: &Path, real: &Path) -> (PathBuf, PathBuf) {
        use std::os::unix::fs::PermissionsExt;
        let calls = dir.join("calls.txt");
        let script = dir.join("counting-clang");
        let text = format!(
            "#!/bin/sh\n[ \"$1\" = --version ] || echo call >> '{}'\nexec '{}' \"$@\"\n",
            calls.display(),
            real.display()
        );
        fs::write(&script, text).unwrap();
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
        (script, calls)
    }

    fn call_count(calls: &Path) -> usize {
        fs::read_to_string(calls).map_or(0, |t| t.lines().count())
    }

    fn is_spirv(bytes: &[u8]) -> bool {
        bytes.len() >= 20 && u32::from_le_bytes(bytes[..4].try_into().unwrap()) == 0x0723_0203
    }

    #[test]
    fn default_std_is_added_only_without_one() {
        let name = SourceName::new(Path::new("k.cl"));
        let args = clang_args(&filter_options(&[]), &name, None);
        assert!(args.iter().any(|a| a == "-cl-std=CL1.2"));
        let args = clang_args(&filter_options(&strings(&["-cl-std=CL3.0"])), &name, None);
        assert_eq!(args.iter().filter(|a| a.to_string_lossy().starts_with("-cl-std=")).count(), 1);
    }

    #[test]
    fn gnu_inline_semantics_except_for_cpp() {
        let name = SourceName::new(Path::new("k.cl"));
        let has = |options: &[&str]| {
            clang_args(&filter_options(&strings(options)), &name, None).iter().any(|a| a == "-fgnu89-inline")
        };
        assert!(has(&[]) && has(&["-cl-std=CL2.0"]));
        assert!(!has(&["-cl-std=CLC++"]) && !has(&["-cl-std=clc++2021"]));
    }

    #[test]
    fn depfile_escapes_are_undone() {
        let text = "dep: /a/k.cl /usr/x.h \\\n  /b/with\\ space.h /c/\\#h$$.h\n";
        assert_eq!(parse_depfile(text), strings(&["/a/k.cl", "/usr/x.h", "/b/with space.h", "/c/#h$.h"]));
    }

    #[test]
    fn compiles_a_kernel_to_spirv() {
        let config = real_config(None);
        let built =
            compile_with(&config, VADD, Path::new("vadd.cl"), "-cl-denorms-are-zero").unwrap_or_else(|e| panic!("{e}"));
        assert!(is_spirv(&built.spirv));
        assert!(built.flush_denormals);
        assert!(built.log.is_empty(), "unexpected log: {}", built.log);
    }

    #[test]
    fn debug_info_names_the_real_file() {
        let config = real_config(None);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("named.cl");
        let copied = compile_with(&config, VADD, &path, "").unwrap_or_else(|e| panic!("{e}"));
        let needle = path.to_string_lossy().into_owned();
        let found = copied.spirv.windows(needle.len()).any(|w| w == needle.as_bytes());
        assert!(found, "OpString with {needle} missing");

        // Compiling the file in place must give the same module as compiling a copy.
        fs::write(&path, VADD).unwrap();
        let in_place = compile_with(&config, VADD, &path, "").unwrap();
        assert!(in_place.spirv == copied.spirv);
    }

    #[test]
    fn compile_error_is_the_build_log() {
        let config = real_config(None);
        let source = "kernel void k(global int *a) {\n  a[0] = undefined_var;\n}\n";
        match compile_with(&config, source, Path::new("dir/bad.cl"), "") {
            Err(BuildError::Compile(log)) => {
                assert!(log.contains("dir/bad.cl:2:10: error:"), "{log}");
                assert!(!log.contains("clrace-"), "temporary path leaked: {log}");
            }
            other => panic!("expected a compile error, got {:?}", other.err()),
        }
    }

    #[test]
    fn warnings_are_kept_and_werror_fails() {
        let config = real_config(None);
        let source = "#warning check me\nkernel void k(global int *a) { a[0] = 1; }\n";
        let built = compile_with(&config, source, Path::new("w.cl"), "-cl-nv-verbose").unwrap();
        assert!(built.log.starts_with("warning: ignoring vendor-specific"), "{}", built.log);
        assert!(built.log.contains("w.cl:1:2: warning: check me"), "{}", built.log);
        let failed = compile_with(&config, source, Path::new("w.cl"), "-Werror");
        assert!(matches!(failed, Err(BuildError::Compile(log)) if log.contains("-Werror")));
    }

    #[test]
    fn unknown_and_malformed_options_are_compile_errors() {
        let config = real_config(None);
        let unknown = compile_with(&config, VADD, Path::new("v.cl"), "-no-such-option");
        assert!(matches!(unknown, Err(BuildError::Compile(log)) if log.contains("-no-such-option")));
        let malformed = compile_with(&config, VADD, Path::new("v.cl"), "-D'X");
        assert!(matches!(malformed, Err(BuildError::Compile(_))));
    }

    #[test]
    fn fence_flags_that_are_not_constants_build() {
        let config = real_config(None);
        let source = "kernel void k(global int *p, int flags) {\n\
                      barrier(flags); mem_fence(flags); read_mem_fence(flags); write_mem_fence(flags);\n\
                      work_group_barrier(flags); work_group_barrier(flags, memory_scope_work_group);\n\
                      atomic_work_item_fence(flags, memory_order_seq_cst, memory_scope_device);\n\
                      sub_group_barrier(flags); p[0] = 1; }\n";
        let built = compile_with(&config, source, Path::new("f.cl"), "-cl-std=CL2.0");
        assert!(built.is_ok(), "{:?}", built.err());
    }

    /// How many instructions with `opcode` a SPIR-V module (little-endian bytes) holds.
    fn count_opcode(spirv: &[u8], opcode: u32) -> usize {
        let words: Vec<u32> = spirv.chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect();
        let (mut at, mut count) = (5, 0);
        while at < words.len() {
            count += usize::from(words[at] & 0xffff == opcode);
            at += (words[at] >> 16).max(1) as usize;
        }
        count
    }

    #[test]
    fn a_barrier_with_flags_that_are_not_constants_stays_one_barrier() {
        // Work-items whose flags differ must reach the same barrier: one OpControlBarrier per
        // call, with no flags, after one relaxed OpMemoryBarrier at work-item scope per space.
        const CONTROL_BARRIER: u32 = 224;
        const MEMORY_BARRIER: u32 = 225;
        let config = real_config(None);
        for (call, std) in [
            ("barrier(flags)", ""),
            ("work_group_barrier(flags, memory_scope_work_group)", "-cl-std=CL2.0"),
            ("sub_group_barrier(flags)", "-cl-std=CL2.0"),
        ] {
            let source = format!("kernel void k(global int *p, int flags) {{ {call}; p[0] = 1; }}\n");
            let built =
                compile_with(&config, &source, Path::new("b.cl"), std).unwrap_or_else(|e| panic!("{call}: {e:?}"));
            assert_eq!(count_opcode(&built.spirv, CONTROL_BARRIER), 1, "{call}");
            assert_eq!(count_opcode(&built.spirv, MEMORY_BARRIER), 3, "{call}: a marker per space");
        }
    }

    #[test]
    fn workaround_header_is_named_not_its_temporary_path() {
        let config = real_config(None);
        let failed = compile_with(&config, "kernel void k() { barrier(); }\n", Path::new("e.cl"), "");
        match failed {
            Err(BuildError::Compile(log)) => {
                assert!(log.contains("e.cl:1:"), "{log}");
                assert!(!log.contains("clrace-workarounds.h"), "{log}");
            }
            other => panic!("expected a compile error, got {:?}", other.err()),
        }
    }

    #[test]
    fn translator_crash_is_internal() {
        let config = real_config(None);
        // Non-constant barrier flags abort llvm-spirv-15 once the workaround header is undone.
        let source = "#undef barrier\nkernel void k(int flags) { barrier(flags); }\n";
        match compile_with(&config, source, Path::new("b.cl"), "") {
            Err(BuildError::Internal(message)) => {
                assert!(message.contains("llvm-spirv"), "{message}");
                assert!(!message.contains("Stack dump"), "{message}");
            }
            other => panic!("expected an internal error, got {:?}", other.err()),
        }
    }

    #[test]
    fn relative_include_and_header_change_invalidate_the_cache() {
        let real = real_config(None);
        let dir = tempfile::tempdir().unwrap();
        let (clang, calls) = counting_clang(dir.path(), &real.clang);
        let config = Config { cache_dir: Some(dir.path().join("cache")), clang, ..real };
        let source = "#include \"vals.h\"\nkernel void k(global int *a) { a[0] = V; }\n";
        let kernel = dir.path().join("src").join("k.cl");
        let header = dir.path().join("src").join("vals.h");
        fs::create_dir(kernel.parent().unwrap()).unwrap();
        fs::write(&header, "#define V 3\n").unwrap();

        let first = compile_with(&config, source, &kernel, "").unwrap_or_else(|e| panic!("{e}"));
        let second = compile_with(&config, source, &kernel, "").unwrap();
        assert_eq!(call_count(&calls), 1, "the second build should come from the cache");
        assert_eq!(first.spirv, second.spirv);

        fs::write(&header, "#define V 4\n").unwrap();
        let third = compile_with(&config, source, &kernel, "").unwrap();
        assert_eq!(call_count(&calls), 2, "a changed header must invalidate the entry");
        assert_ne!(first.spirv, third.spirv);

        let options_changed = compile_with(&config, source, &kernel, "-DUNUSED").unwrap();
        assert_eq!(call_count(&calls), 3);
        assert!(is_spirv(&options_changed.spirv));
    }

    #[test]
    fn cached_builds_keep_their_log() {
        let real = real_config(None);
        let dir = tempfile::tempdir().unwrap();
        let (clang, calls) = counting_clang(dir.path(), &real.clang);
        let config = Config { cache_dir: Some(dir.path().to_path_buf()), clang, ..real };
        let source = "#warning check me\nkernel void k(global int *a) { a[0] = 1; }\n";
        let first = compile_with(&config, source, Path::new("w.cl"), "-cl-amd-foo").unwrap();
        let second = compile_with(&config, source, Path::new("w.cl"), "-cl-amd-foo").unwrap();
        assert_eq!(call_count(&calls), 1);
        assert_eq!(first.log, second.log);
        assert!(second.log.contains("warning: ignoring vendor-specific"));
        assert!(second.log.contains("w.cl:1:2: warning: check me"), "{}", second.log);
    }

    #[test]
    fn unwritable_cache_does_not_fail_the_build() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        fs::write(&blocker, "not a directory").unwrap();
        let config = real_config(Some(&blocker.join("cache")));
        let built = compile_with(&config, VADD, Path::new("v.cl"), "").unwrap();
        assert!(is_spirv(&built.spirv));
    }

    fn unit(path: &str, source: &str) -> Unit {
        Unit { source: source.into(), path: path.into(), ..Unit::default() }
    }

    fn llvm_link() -> PathBuf {
        let path_var = std::env::var_os("PATH");
        find_tool("LINK", None, &["llvm-link-15", "llvm-link"], path_var.as_deref(), LINK_HINT)
            .expect("llvm-link-15 is installed (run ci/setup)")
    }

    #[test]
    fn header_names_must_stay_inside_the_directory() {
        assert_eq!(header_path("util/helper.h"), Some(PathBuf::from("util/helper.h")));
        assert_eq!(header_path("./h.h"), Some(PathBuf::from("./h.h")));
        for bad in ["", ".", "/etc/passwd", "../h.h", "a/../../h.h"] {
            assert_eq!(header_path(bad), None, "{bad}");
        }
        let mut bad = unit("k.cl", VADD);
        bad.headers.push(("../h.h".into(), String::new()));
        let result = compile_units_with(&real_config(None), &llvm_link(), &[bad], "");
        assert!(matches!(result, Err(BuildError::Compile(log)) if log.contains("'../h.h'")));
    }

    #[test]
    fn one_unit_links_to_the_same_module_as_compile() {
        let config = real_config(None);
        let source = "int helper(int x) { return x + 1; }\n\
                      kernel void k(global int *a) { a[get_global_id(0)] = helper(3); }\n";
        let single = compile_with(&config, source, Path::new("k.cl"), "-DX=1").unwrap_or_else(|e| panic!("{e}"));
        let mut one = unit("k.cl", source);
        one.options = "-DX=1".into();
        let linked = compile_units_with(&config, &llvm_link(), &[one], "").unwrap_or_else(|e| panic!("{e}"));
        assert!(single.spirv == linked.spirv, "linking one unit changed the module");
        assert_eq!(single.log, linked.log);
    }

    #[test]
    fn unit_and_link_options_reach_the_result() {
        let config = real_config(None);
        let mut a = unit("a.cl", "int twice(int x) { return 2 * x; }\n");
        a.options = "-cl-nv-verbose".into();
        let b = unit("b.cl", "int twice(int x);\nkernel void k(global int *o) { o[0] = twice(4); }\n");
        let built = compile_units_with(&config, &llvm_link(), &[a.clone(), b.clone()], "-create-library -foo")
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(is_spirv(&built.spirv));
        assert!(!built.flush_denormals);
        assert_eq!(
            built.log,
            "a.cl: warning: ignoring vendor-specific build option '-cl-nv-verbose'\n\
             warning: ignoring link option '-foo'\n"
        );
        let flushed = compile_units_with(&config, &llvm_link(), &[a, b], "-cl-denorms-are-zero").unwrap();
        assert!(flushed.flush_denormals);
        assert!(compile_units_with(&config, &llvm_link(), &[], "").is_err());
    }

    #[test]
    fn a_symbol_defined_twice_is_a_link_error() {
        let config = real_config(None);
        let a = unit("a.cl", "int twice(int x) { return 2 * x; }\n");
        let b = unit("b.cl", "int twice(int x) { return x + x; }\nkernel void k(global int *o) { o[0] = twice(4); }\n");
        match compile_units_with(&config, &llvm_link(), &[a, b], "") {
            Err(BuildError::Compile(log)) => assert!(log.contains("twice"), "{log}"),
            other => panic!("expected a link error, got {:?}", other.err()),
        }
    }

    #[test]
    fn in_memory_headers_are_not_on_disk_dependencies_but_key_the_cache() {
        let real = real_config(None);
        let dir = tempfile::tempdir().unwrap();
        let (clang, calls) = counting_clang(dir.path(), &real.clang);
        let config = Config { cache_dir: Some(dir.path().join("cache")), clang, ..real };
        let link = llvm_link();
        let mut a = unit("a.cl", "#include \"util/vals.h\"\nkernel void k(global int *o) { o[0] = V; }\n");
        a.headers.push(("util/vals.h".into(), "#define V 3\n".into()));
        let b = unit("b.cl", "int twice(int x) { return 2 * x; }\n");

        let first = compile_units_with(&config, &link, &[a.clone(), b.clone()], "").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(call_count(&calls), 2);
        let again = compile_units_with(&config, &link, &[a.clone(), b.clone()], "").unwrap();
        assert_eq!(call_count(&calls), 2, "the second link should come from the cache");
        assert!(first.spirv == again.spirv);
        let records: Vec<_> = fs::read_dir(dir.path().join("cache"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "deps"))
            .collect();
        assert_eq!(records.len(), 1);
        let record = fs::read_to_string(&records[0]).unwrap();
        assert!(!record.contains("vals.h") && !record.contains("clrace-"), "in-memory header recorded: {record}");

        a.headers[0].1 = "#define V 4\n".into();
        let changed = compile_units_with(&config, &link, &[a.clone(), b.clone()], "").unwrap();
        assert_eq!(call_count(&calls), 4, "a changed in-memory header must miss the cache");
        assert!(first.spirv != changed.spirv);
        compile_units_with(&config, &link, &[b, a], "").unwrap();
        assert_eq!(call_count(&calls), 6, "the unit order is part of the key");
    }

    #[test]
    fn unit_diagnostics_name_the_unit_and_its_headers() {
        let config = real_config(None);
        let good = unit("dir/good.cl", "#warning fine\nint twice(int x) { return 2 * x; }\n");
        let mut bad = unit("dir/bad.cl", "#include \"inc/h.h\"\nkernel void k(global int *a) { a[0] = 1; }\n");
        bad.headers.push(("inc/h.h".into(), "int f(void) { return undefined_var; }\n".into()));
        match compile_units_with(&config, &llvm_link(), &[good.clone(), bad], "") {
            Err(BuildError::Compile(log)) => {
                assert!(log.contains("dir/good.cl:1:2: warning: fine"), "{log}");
                assert!(log.contains("In file included from dir/bad.cl:1:"), "{log}");
                assert!(log.contains("inc/h.h:1:22: error:"), "{log}");
                assert!(!log.contains("clrace-"), "temporary path leaked: {log}");
            }
            other => panic!("expected a compile error, got {:?}", other.err()),
        }
        let mut bad_option = unit("dir/opt.cl", VADD);
        bad_option.options = "-no-such-option".into();
        match compile_units_with(&config, &llvm_link(), &[good, bad_option], "") {
            Err(BuildError::Compile(log)) => {
                assert!(log.contains("dir/opt.cl: error:") && log.contains("-no-such-option"), "{log}")
            }
            other => panic!("expected a compile error, got {:?}", other.err()),
        }
    }

    #[test]
    fn missing_llvm_link_is_reported() {
        let missing = find_tool("CLRACE_LLVM_LINK", Some("/nonexistent".into()), &["llvm-link"], None, LINK_HINT);
        assert!(
            matches!(missing, Err(BuildError::ToolsMissing(m)) if m.contains("CLRACE_LLVM_LINK") && m.contains("llvm-15"))
        );
        let result =
            compile_units_with(&real_config(None), Path::new("/no/such/llvm-link-15"), &[unit("k.cl", VADD)], "");
        assert!(matches!(result, Err(BuildError::ToolsMissing(m)) if m.contains("llvm-link-15")));
    }

    #[test]
    fn missing_tools_are_reported() {
        let missing = find_tool("CLRACE_CLANG", Some("/no/such/clang".into()), &["clang"], None, INSTALL_HINT);
        assert!(matches!(missing, Err(BuildError::ToolsMissing(m)) if m.contains("CLRACE_CLANG")));
        let empty_path = find_tool("X", None, &["clang-15", "clang"], Some(OsStr::new("")), INSTALL_HINT);
        assert!(matches!(empty_path, Err(BuildError::ToolsMissing(m)) if m.contains("apt-get")));

        let config = Config { clang: "/no/such/clang-15".into(), ..real_config(None) };
        let result = compile_with(&config, VADD, Path::new("v.cl"), "");
        assert!(matches!(result, Err(BuildError::ToolsMissing(_))));
    }
}
