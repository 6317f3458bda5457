//! Reports: the findings of a checked launch turned into text for people, JSON Lines for tools
//! (one object per line, schema in the README) and SARIF results, with suppressions applied and
//! the closing summary counted. Reports name buffers by kernel argument or `__local` variable
//! with a byte offset, give every work-item's global, local and group ids, and show the source
//! line of each access.
//!
//! [`report()`] is the one way a checked launch is reported, for `clrace check` and the
//! layer alike; it takes plain data (the check's outcome, the names, the options). [`Reporter`]
//! words one finding; [`Reporter::record`] makes its typed record ([`crate::finding::Finding`]),
//! which suppressions, SARIF and the summaries read. It cannot see where the launch came from
//! nor where the reports go: the caller writes them.

mod launch;
mod race;
mod record;
mod render;
mod summary;

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub use launch::{LaunchFindings, Occasion, Options, Reported, Seen, Spooled, Tally, identity, report, shown_note};
pub use record::Subject;
pub use render::{Rendered, Reporter};
pub use summary::{Summary, counts_of_exploration};

/// How reports are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Text,
    Json,
}

/// Source text by file name, read on first use.
pub struct Sources {
    /// Program files and their text, which may not be readable by their recorded names.
    programs: Vec<(PathBuf, String)>,
    files: RefCell<HashMap<String, Option<Vec<String>>>>,
}

impl Sources {
    pub fn new(programs: Vec<(PathBuf, String)>) -> Sources {
        Sources { programs, files: RefCell::new(HashMap::new()) }
    }

    /// The text of the program `file` names, when it is one of those given (a program made in
    /// memory, which no file may hold).
    pub fn program_text(&self, file: &str) -> Option<String> {
        let name = Path::new(file).file_name()?;
        self.programs.iter().find(|(path, _)| path.file_name() == Some(name)).map(|(_, text)| text.clone())
    }

    /// Line `line` (1-based) of `file`, trimmed, if the file can be read.
    pub fn line(&self, file: &str, line: u32) -> Option<String> {
        let mut files = self.files.borrow_mut();
        let lines = files.entry(file.to_string()).or_insert_with(|| {
            let same_name = |p: &Path| p.file_name().is_some_and(|n| Path::new(file).file_name() == Some(n));
            let known = self.programs.iter().find(|(path, _)| same_name(path));
            let text = match known {
                Some((_, text)) => Some(text.clone()),
                None => std::fs::read_to_string(file).ok(),
            };
            text.map(|t| t.lines().map(str::to_string).collect())
        });
        let text = lines.as_ref()?.get(line.checked_sub(1)? as usize)?;
        Some(text.trim().to_string())
    }
}

/// A source path as people want to read it: relative to the current directory when inside it.
fn shown_path(file: &str) -> String {
    let relative =
        std::env::current_dir().ok().and_then(|cwd| Path::new(file).strip_prefix(cwd).ok().map(Path::to_path_buf));
    relative.map_or_else(|| file.to_string(), |p| p.display().to_string())
}

/// Work-item or group ids as reports write them: `(x,y,z)`.
fn ids(v: [u64; 3]) -> String {
    format!("({},{},{})", v[0], v[1], v[2])
}
