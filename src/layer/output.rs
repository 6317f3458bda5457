//! Where everything the layer says goes: reports, notes and its own log, all to the one place
//! the user configured (`CLRACE_OUTPUT`, else stderr), never to the application's stdout.
//!
//! It also owns the panic hook of the layer's copy of the Rust runtime, so that an internal
//! failure is one line in that place (no backtrace, whatever `RUST_BACKTRACE` says) and never
//! text on the host's stderr when the user sent the reports elsewhere. It knows nothing of
//! launches: callers hand it finished lines.

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::report::Format;

/// The sink, shared by the checker, the hooks, the log and the panic hook.
pub struct Output {
    format: Format,
    /// The sink is stderr on a terminal (colour in the log).
    terminal: bool,
    sink: Mutex<Box<dyn Write + Send>>,
    /// Keys of messages already given once.
    said: Mutex<HashSet<String>>,
}

impl Output {
    /// Opens `path` for appending, or stderr. A file that cannot be opened falls back to stderr
    /// with one line saying so (stderr is where reports go unless configured).
    pub fn open(path: Option<&Path>, format: Format) -> Arc<Output> {
        let terminal = path.is_none() && std::io::IsTerminal::is_terminal(&std::io::stderr());
        let sink: Box<dyn Write + Send> = match path {
            Some(path) => match std::fs::OpenOptions::new().create(true).append(true).open(path) {
                Ok(file) => Box::new(file),
                Err(e) => {
                    let _ = writeln!(
                        std::io::stderr(),
                        "clrace: cannot open CLRACE_OUTPUT={}: {e}; reporting on stderr",
                        path.display()
                    );
                    Box::new(std::io::stderr())
                }
            },
            None => Box::new(std::io::stderr()),
        };
        Arc::new(Output { format, terminal, sink: Mutex::new(sink), said: Mutex::new(HashSet::new()) })
    }

    pub fn format(&self) -> Format {
        self.format
    }

    pub fn is_terminal(&self) -> bool {
        self.terminal
    }

    /// Writes `text` (whole lines) and flushes.
    pub fn write(&self, text: &str) {
        let mut sink = self.sink.lock();
        let _ = sink.write_all(text.as_bytes());
        let _ = sink.flush();
    }

    /// Writes a note: `clrace: MESSAGE`, or a JSON `note` object.
    pub fn note(&self, message: &str) {
        tracing::info!("{message}");
        self.write(&self.note_line(message));
    }

    /// A note as written: `clrace: MESSAGE`, or a JSON `note` object, with its newline.
    fn note_line(&self, message: &str) -> String {
        match self.format {
            Format::Text => format!("clrace: {message}\n"),
            Format::Json => format!("{}\n", serde_json::json!({"kind": "note", "message": message})),
        }
    }

    /// Writes a note once per `key`. Returns whether it was written.
    pub fn note_once(&self, key: &str, message: &str) -> bool {
        let first = self.said.lock().insert(key.to_string());
        if first {
            self.note(message);
        }
        first
    }

    /// Makes the layer's panics a note in this output (once per place), never text on stderr.
    pub fn catch_panics(self: &Arc<Self>) {
        let output = Arc::downgrade(self);
        std::panic::set_hook(Box::new(move |info| {
            let Some(output) = output.upgrade() else { return };
            let place =
                info.location().map_or_else(|| "unknown place".to_string(), |l| format!("{}:{}", l.file(), l.line()));
            let message = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_default();
            // `try_lock`: a panic while the sink is held (inside `write`) must not deadlock.
            if output.said.try_lock().is_some_and(|mut said| said.insert(format!("panic at {place}"))) {
                let line = output.note_line(&format!("internal error at {place}: {message}"));
                if let Some(mut sink) = output.sink.try_lock() {
                    let _ = sink.write_all(line.as_bytes());
                    let _ = sink.flush();
                }
            }
        }));
    }
}

/// A writer for the `tracing` log that appends to the same place as the reports.
pub struct LogWriter(pub Arc<Output>);

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut sink = self.0.sink.lock();
        sink.write_all(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.sink.lock().flush()
    }
}
