//! The command line's side of a spool: where `clrace check DIR` (and `clrace run` after the
//! application) writes the reports, the SARIF log and the progress bar, and which exit status
//! it leaves with; `clrace merge`'s files; what `clrace export` says. The checking, the merging
//! and the exporting are the library's (`clrace::spool::check`, `merge`, `export`): this sees
//! only their text and outcome.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use clrace::report::Format;
use clrace::spool::check::EarlyResults;
use clrace::spool::check::{Outcome, Overrides, SpoolCheck};

use crate::progress::Progress;
use crate::{EXIT_FINDINGS, EXIT_USAGE, FormatArg};

/// Who checks the spool, which decides where things go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sink {
    /// `clrace check DIR`: the reports replace `--output` (else go to stderr), the SARIF log
    /// replaces `--output` (else goes to stdout).
    Check,
    /// `clrace run`: the reports are appended to `--output` after what the layer wrote there
    /// (else go to stderr), and the SARIF log replaces `--output` (else goes to stderr), as the
    /// layer writes them.
    Run,
}

/// `clrace check DIR`: the exit status.
pub fn check_spool(dir: &Path, given: &Overrides, output: Option<&Path>, sink: Sink) -> u8 {
    match check(dir, given, output, sink, None) {
        Ok(outcome) if outcome.found => EXIT_FINDINGS,
        Ok(_) => 0,
        Err(message) => {
            eprintln!("clrace: {message}");
            EXIT_USAGE
        }
    }
}

/// Checks the spool `dir`, writing as `sink` says.
pub fn check(
    dir: &Path,
    given: &Overrides,
    output: Option<&Path>,
    sink: Sink,
    early: Option<EarlyResults>,
) -> Result<Outcome, String> {
    let mut spool = SpoolCheck::open(dir, given)?;
    if let Some(early) = early {
        spool.adopt(early);
    }
    let settings = spool.settings.clone();
    let open = |path: &Path, append: bool| {
        std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .append(append)
            .truncate(!append)
            .open(path)
            .map_err(|e| format!("cannot write --output {}: {e}", path.display()))
    };
    let target: Box<dyn Write> = match output {
        Some(path) if !settings.sarif => Box::new(open(path, sink == Sink::Run)?),
        _ => Box::new(std::io::stderr()),
    };
    let on_stderr = settings.sarif || output.is_none();
    let done = Arc::new(AtomicU64::new(0));
    // The bar is for people at a terminal, never beside JSON or SARIF.
    let progress = (settings.format == Format::Text && !settings.sarif && std::io::stderr().is_terminal())
        .then(|| Progress::start_launches(done.clone(), spool.len() as u64));
    let mut out = Through { progress: progress.as_ref().filter(|_| on_stderr), inner: target };
    let outcome = spool.run(&mut out, &done);
    if let Some(progress) = progress {
        progress.finish();
    }
    let outcome = outcome?;
    if let Some(log) = &outcome.sarif {
        match (output, sink) {
            (Some(path), _) => std::fs::write(path, log)
                .map_err(|e| format!("cannot write the SARIF log to {}: {e}", path.display()))?,
            (None, Sink::Check) => {
                let _ = std::io::stdout().write_all(log.as_bytes());
            }
            (None, Sink::Run) => {
                let _ = std::io::stderr().write_all(log.as_bytes());
            }
        }
    }
    Ok(outcome)
}

/// Writes through the progress bar's [`Progress::suspend`] when there is one on the same stream.
struct Through<'a> {
    progress: Option<&'a Progress>,
    inner: Box<dyn Write>,
}

impl Write for Through<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.progress {
            Some(progress) => progress.suspend(|| self.inner.write_all(buf)).map(|()| buf.len()),
            None => self.inner.write_all(buf).map(|()| buf.len()),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// `clrace merge`: the exit status (1 when the merged report has findings).
pub fn merge(
    format: FormatArg,
    print_limit: Option<u64>,
    output: Option<&Path>,
    files: &[PathBuf],
) -> std::process::ExitCode {
    let fail = |message: String| {
        eprintln!("clrace: {message}");
        std::process::ExitCode::from(EXIT_USAGE)
    };
    let mut texts = Vec::with_capacity(files.len());
    for file in files {
        match std::fs::read_to_string(file) {
            Ok(text) => texts.push((file.display().to_string(), text)),
            Err(e) => return fail(format!("cannot read {}: {e}", file.display())),
        }
    }
    let merged = match format {
        FormatArg::Text => {
            return fail(
                "text reports cannot be merged: check the shards with --format json (or sarif) and merge those".into(),
            );
        }
        FormatArg::Json => clrace::spool::merge::merge_json(&texts, print_limit),
        FormatArg::Sarif => clrace::spool::merge::merge_sarif(&texts),
    };
    let merged = match merged {
        Ok(merged) => merged,
        Err(message) => return fail(message),
    };
    let written = match output {
        Some(path) => std::fs::write(path, &merged.text).map_err(|e| format!("cannot write {}: {e}", path.display())),
        None => {
            let _ = std::io::stdout().write_all(merged.text.as_bytes());
            Ok(())
        }
    };
    if let Err(message) = written {
        return fail(message);
    }
    std::process::ExitCode::from(if merged.found { EXIT_FINDINGS } else { 0 })
}

/// `clrace export`: the exit status (usage for a launch a launch file cannot say, build when its
/// program does not build); the notes and the files written go to stderr.
pub fn export(launch: &Path, outdir: &Path, options: &clrace::spool::export::Options) -> std::process::ExitCode {
    use clrace::spool::export::ExportError;
    match clrace::spool::export::export(launch, outdir, options) {
        Ok(exported) => {
            for note in &exported.notes {
                eprintln!("clrace: note: {note}");
            }
            eprintln!("clrace: wrote {} and {}", exported.sim.display(), exported.program.display());
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("clrace: cannot export: {e}");
            let code = match e {
                ExportError::Refused(_) => EXIT_USAGE,
                ExportError::Build(_) => crate::EXIT_BUILD,
            };
            std::process::ExitCode::from(code)
        }
    }
}
