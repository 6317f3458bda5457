//! `clrace export`: one spooled launch (`DIR/launches/N.json`) written as a launch file of
//! Oclgrind's format (`docs/launch-files.md`), `OUTDIR/NAME.sim` beside its program
//! `OUTDIR/NAME.cl`, so that a launch an application made can be run again without the
//! application: by `clrace check`, by `oclgrind-kernel`, natively by `examples/native_sim`.
//!
//! The file says exactly what the spooled launch holds: every buffer's bytes inline as hex
//! `uchar` values (a buffer of one repeated byte as `fill`), by-value arguments the same way,
//! `__local` sizes, the NDRange, work-group size, offset and `work_dim`, the buffers' access
//! modes, two arguments on one buffer as `alias=K`, and the build options (the application's,
//! then the device's extension options the layer adds). What the format cannot say is refused
//! with the reason: programs from SPIR-V or linked from separate units, headers of
//! `clCompileProgram`, sub-buffers, images, samplers, options on more than one line.
//!
//! It reads the spool through [`super::reader`] and turns the manifest into the emulator's
//! launch with [`SpooledLaunch::to_launch`], as `clrace check` of the manifest does; it knows
//! nothing of the command line, and it runs nothing.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::format::SpooledLaunch;
use super::program::ProgramKind;
use super::reader::open_manifest;
use crate::exec::ArgValue;
use crate::exec::memory::BufferMode;
use crate::program::{AddressSpace, KernelArg};

/// Bytes written per line of a buffer's values.
const PER_LINE: usize = 32;

/// What to write besides the launch itself.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The files' name (`NAME.sim`, `NAME.cl`); by default the program's name in the spool
    /// (`NAME.cl` as reports call it), so that reports of the file name the same source file
    /// when it is checked from OUTDIR.
    pub name: Option<String>,
    /// Mark every buffer argument the kernel may write (not read-only, not `__constant`)
    /// `dump`, so that checking the file prints its contents afterwards.
    pub dump: bool,
    /// Leave out the device's extension options (`-Xclang -cl-ext=...`), which OpenCL drivers
    /// reject as build options, so that the file runs natively too; clrace then builds the
    /// program with its compiler's default extensions instead of the device's.
    pub portable: bool,
}

/// What was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exported {
    pub sim: PathBuf,
    pub program: PathBuf,
    /// Things the caller should tell the user (a local size the application did not give...).
    pub notes: Vec<String>,
}

/// Why a launch was not exported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExportError {
    /// The launch cannot be said in a launch file, or cannot be read.
    Refused(String),
    /// Its program does not build.
    Build(String),
}

impl std::fmt::Display for ExportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExportError::Refused(why) | ExportError::Build(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for ExportError {}

/// Writes the spooled launch `manifest` (`DIR/launches/N.json`) as `OUTDIR/NAME.sim` and
/// `OUTDIR/NAME.cl`, making OUTDIR if needed.
pub fn export(manifest: &Path, outdir: &Path, options: &Options) -> Result<Exported, ExportError> {
    let refused = |why: String| ExportError::Refused(format!("{}: {why}", manifest.display()));
    let (spool, launch) = open_manifest(manifest).map_err(ExportError::Refused)?;
    let spec = spool.program(&launch).map_err(ExportError::Refused)?;
    let (text, app_options, device_options) = match &spec.kind {
        ProgramKind::Source { text, options, device_options, headers } => {
            if let Some((name, _)) = headers.first() {
                return Err(refused(format!(
                    "its program was compiled with headers (clCompileProgram: '{name}'...); a launch file names one source file"
                )));
            }
            (text, options, device_options)
        }
        ProgramKind::Il { .. } => {
            return Err(refused(
                "its program was created from SPIR-V (clCreateProgramWithIL); a launch file for Oclgrind takes OpenCL C source"
                    .into(),
            ));
        }
        ProgramKind::Linked { units, .. } => {
            return Err(refused(format!(
                "its program was linked from {} separately compiled unit(s) (clLinkProgram); a launch file takes one source built at once",
                units.len()
            )));
        }
    };
    let name = match &options.name {
        Some(name) => valid_name(name).map_err(refused)?,
        None => default_name(&spec.name),
    };
    let program = spec.build().map_err(|e| ExportError::Build(format!("{}: {e}", spec.name)))?;
    let kernel = program
        .kernel(&launch.kernel)
        .ok_or_else(|| refused(format!("no kernel named '{}' in {}", launch.kernel, spec.name)))?;
    let inputs = launch.to_launch(kernel).map_err(|e| refused(e.to_string()))?;
    let l = &inputs.launch;
    let trivial = |d: usize| l.global_size[d] == 1 && l.local_size[d] == 1 && l.global_offset[d] == 0;
    if !(1..=3).contains(&l.work_dim) || !(l.work_dim as usize..3).all(trivial) {
        return Err(refused(format!(
            "its NDRange ({:?} from {:?} in groups of {:?}, work_dim {}) uses dimensions past work_dim",
            l.global_size, l.global_offset, l.local_size, l.work_dim
        )));
    }
    let buffers = spool.buffers(&launch).map_err(ExportError::Refused)?;
    let mut notes = Vec::new();
    if let Some(local) = inputs.assumed_local {
        notes.push(format!(
            "the application gave no local size: the file gives the one clrace assumes for the launch, {}x{}x{}",
            local[0], local[1], local[2]
        ));
    }
    let build_options = build_options(app_options, device_options, options.portable).map_err(refused)?;
    if options.portable && !device_options.trim().is_empty() {
        notes.push(format!(
            "left out the device's extension options ({}): clrace builds the file with its compiler's default extensions",
            device_options.trim()
        ));
    }
    let head = Head {
        manifest,
        launch: &launch,
        program_file: format!("{name}.cl"),
        build_options,
        device_options: if options.portable { device_options.trim() } else { "" },
    };
    let args = arguments(&inputs.launch.args, &kernel.args, &buffers, &inputs.modes, options.dump, &mut notes)
        .map_err(refused)?;
    std::fs::create_dir_all(outdir)
        .map_err(|e| ExportError::Refused(format!("cannot make {}: {e}", outdir.display())))?;
    let program_path = outdir.join(&head.program_file);
    std::fs::write(&program_path, text)
        .map_err(|e| ExportError::Refused(format!("cannot write {}: {e}", program_path.display())))?;
    let sim_path = outdir.join(format!("{name}.sim"));
    write_sim(&sim_path, &head, &inputs.launch, &args, &buffers)
        .map_err(|e| ExportError::Refused(format!("cannot write {}: {e}", sim_path.display())))?;
    Ok(Exported { sim: sim_path, program: program_path, notes })
}

/// The file name the user gave, if it is one word of letters, digits, `.`, `_`, `-` and `+`.
fn valid_name(name: &str) -> Result<String, String> {
    let fine = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-+".contains(&b));
    if fine {
        Ok(name.to_string())
    } else {
        Err(format!("--name '{name}': a name is letters, digits, '.', '_', '-' and '+'"))
    }
}

/// The program's name in the spool without its extension, with any character a launch file
/// cannot hold in a name replaced by `_`.
fn default_name(program: &str) -> String {
    let stem = program.strip_suffix(".cl").unwrap_or(program);
    let name: String =
        stem.chars().map(|c| if c.is_ascii_alphanumeric() || "._-+".contains(c) { c } else { '_' }).collect();
    if name.is_empty() { "launch".into() } else { name }
}

/// The build options as the spool's check builds them (`{options} {device_options}`, which
/// are split into words as a shell would), or the application's alone when `portable`.
fn build_options(app: &str, device: &str, portable: bool) -> Result<String, String> {
    let options = if portable { app.trim().to_string() } else { format!("{} {}", app.trim(), device.trim()) };
    if options.contains(['\n', '\r']) {
        return Err("its build options span several lines; a launch file holds them on one".into());
    }
    Ok(options.trim().to_string())
}

/// What the file says before its arguments.
struct Head<'a> {
    manifest: &'a Path,
    launch: &'a SpooledLaunch,
    program_file: String,
    build_options: String,
    /// The device options left out (portable), to name in a comment.
    device_options: &'a str,
}

/// One argument's descriptor: its header, and the buffer whose bytes follow it.
struct Descriptor {
    header: String,
    values: Option<Values>,
    comment: String,
}

/// The values after a header.
enum Values {
    Buffer(usize),
    Bytes(Vec<u8>),
}

/// The descriptor of each argument, or why one cannot be written.
fn arguments(
    args: &[ArgValue],
    infos: &[KernelArg],
    buffers: &[Vec<u8>],
    modes: &[BufferMode],
    dump: bool,
    notes: &mut Vec<String>,
) -> Result<Vec<Descriptor>, String> {
    let mut first_use: Vec<Option<usize>> = vec![None; buffers.len()];
    let mut out = Vec::with_capacity(args.len());
    for (index, (arg, info)) in args.iter().zip(infos).enumerate() {
        let comment = format!("{index}: {} {}", info.type_name, info.name);
        let what = || format!("argument {index} ('{}')", info.name);
        let descriptor = match arg {
            ArgValue::Buffer(buffer) => {
                let bytes =
                    buffers.get(*buffer).ok_or_else(|| format!("{} names a buffer it does not hold", what()))?;
                if let Some(earlier) = first_use[*buffer] {
                    notes.push(format!(
                        "{} is the buffer of argument {earlier}: written as alias={earlier}, which oclgrind-kernel does not read",
                        what()
                    ));
                    Descriptor { header: format!("alias={earlier}"), values: None, comment }
                } else {
                    first_use[*buffer] = Some(index);
                    let mode = modes.get(*buffer).copied().unwrap_or_default();
                    let global = info.space == AddressSpace::Global;
                    let fill = repeated(bytes);
                    let mut header = format!("size={} uchar hex", bytes.len());
                    if let Some(byte) = fill {
                        header.push_str(&format!(" fill={byte:02x}"));
                    }
                    match mode {
                        BufferMode::ReadOnly if global => header.push_str(" ro"),
                        BufferMode::WriteOnly if global => header.push_str(" wo"),
                        _ => {}
                    }
                    if dump && global && mode != BufferMode::ReadOnly {
                        header.push_str(" dump");
                    }
                    let values = fill.is_none().then_some(Values::Buffer(*buffer));
                    Descriptor { header, values, comment }
                }
            }
            ArgValue::SubBuffer { offset, .. } => {
                return Err(format!(
                    "{} is a sub-buffer (at byte {offset} of its buffer); a launch file has no sub-buffers",
                    what()
                ));
            }
            ArgValue::Null => Descriptor { header: "null".into(), values: None, comment },
            ArgValue::Local(size) if info.space == AddressSpace::Local => {
                Descriptor { header: format!("size={size}"), values: None, comment }
            }
            ArgValue::Local(_) => return Err(format!("{} is a __local size given to a non-local argument", what())),
            ArgValue::Value(bytes) => match repeated(bytes) {
                Some(byte) => Descriptor {
                    header: format!("size={} uchar hex fill={byte:02x}", bytes.len()),
                    values: None,
                    comment,
                },
                None => Descriptor {
                    header: format!("size={} uchar hex", bytes.len()),
                    values: Some(Values::Bytes(bytes.clone())),
                    comment,
                },
            },
            ArgValue::Image { .. } => {
                return Err(format!("{} is an image; launch files for Oclgrind have no images", what()));
            }
            ArgValue::Sampler(_) => {
                return Err(format!("{} is a sampler; launch files for Oclgrind have no samplers", what()));
            }
        };
        out.push(descriptor);
    }
    Ok(out)
}

/// The byte every byte of `bytes` is, when they are all one (and there are some).
fn repeated(bytes: &[u8]) -> Option<u8> {
    let (&first, rest) = bytes.split_first()?;
    rest.iter().all(|&b| b == first).then_some(first)
}

/// Writes the launch file.
fn write_sim(
    path: &Path,
    head: &Head,
    launch: &crate::exec::Launch,
    args: &[Descriptor],
    buffers: &[Vec<u8>],
) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    let options = &head.build_options;
    // Oclgrind's test runner and clrace read one word of options from the first line; more
    // go in a directive that only clrace reads.
    let one_word = !options.is_empty() && !options.contains(char::is_whitespace);
    if one_word {
        writeln!(out, "# ARGS: --build-options {options}")?;
    }
    let l = head.launch;
    writeln!(
        out,
        "# launch {} of kernel '{}' (spool sequence {}), exported by clrace export from {}",
        l.number,
        l.kernel,
        l.seq,
        head.manifest.display()
    )?;
    if !head.device_options.is_empty() {
        writeln!(out, "# the layer also built it with the device's options: {}", head.device_options)?;
    }
    if !one_word && !options.is_empty() {
        writeln!(out, "# clrace: build-options {options}")?;
    }
    if launch.work_dim != 3 {
        writeln!(out, "# clrace: dim {}", launch.work_dim)?;
    }
    if launch.global_offset != [0; 3] {
        let [x, y, z] = launch.global_offset;
        writeln!(out, "# clrace: offset {x} {y} {z}")?;
    }
    writeln!(out, "{}", head.program_file)?;
    writeln!(out, "{}", launch.kernel)?;
    let [gx, gy, gz] = launch.global_size;
    writeln!(out, "{gx} {gy} {gz}")?;
    let [lx, ly, lz] = launch.local_size;
    writeln!(out, "{lx} {ly} {lz}")?;
    for arg in args {
        writeln!(out)?;
        writeln!(out, "<{}>    # {}", arg.header, arg.comment)?;
        let bytes = match &arg.values {
            None => continue,
            Some(Values::Buffer(index)) => &buffers[*index],
            Some(Values::Bytes(bytes)) => bytes,
        };
        write_bytes(&mut out, bytes)?;
    }
    out.flush()
}

/// `bytes` as hex pairs, [`PER_LINE`] to a line.
fn write_bytes(out: &mut impl Write, bytes: &[u8]) -> std::io::Result<()> {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut line = Vec::with_capacity(PER_LINE * 3);
    for chunk in bytes.chunks(PER_LINE) {
        line.clear();
        for (i, &b) in chunk.iter().enumerate() {
            if i > 0 {
                line.push(b' ');
            }
            line.push(DIGITS[usize::from(b >> 4)]);
            line.push(DIGITS[usize::from(b & 15)]);
        }
        line.push(b'\n');
        out.write_all(&line)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_one_word_of_safe_characters() {
        assert_eq!(default_name("axpb-1a2b3c4d.cl"), "axpb-1a2b3c4d");
        assert_eq!(default_name("my prog#1.cl"), "my_prog_1");
        assert_eq!(default_name("scale+copy-838ad24f.cl"), "scale+copy-838ad24f");
        assert_eq!(default_name(".cl"), "launch");
        assert!(valid_name("xgemm").is_ok());
        assert!(valid_name("a b").is_err());
        assert!(valid_name("").is_err());
    }

    #[test]
    fn build_options_are_the_checks_unless_portable() {
        let device = "-Xclang -cl-ext=-all,+cl_khr_fp64";
        assert_eq!(build_options("-DN=4 ", device, false).unwrap(), "-DN=4 -Xclang -cl-ext=-all,+cl_khr_fp64");
        assert_eq!(build_options("", device, false).unwrap(), device);
        assert_eq!(build_options(" -DN=4", device, true).unwrap(), "-DN=4");
        assert!(build_options("-DA=1\n-DB=2", "", true).is_err());
    }

    #[test]
    fn bytes_are_hex_pairs_in_lines_and_runs_are_fills() {
        let mut out = Vec::new();
        write_bytes(&mut out, &(0..34u8).collect::<Vec<_>>()).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with("00 01 02 ") && lines[0].ends_with(" 1f"));
        assert_eq!(lines[1], "20 21");
        assert_eq!(repeated(&[7, 7, 7]), Some(7));
        assert_eq!(repeated(&[7, 8]), None);
        assert_eq!(repeated(&[]), None);
    }
}
