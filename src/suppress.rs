//! Suppression files in the sanitizers' style: one `KIND:PATTERN` rule a line, `#` comments.
//! A rule silences findings of its kind whose kernel, file, or `FILE:LINE` (either access of a
//! race) matches the pattern, with `*` and `?` wildcards; `kernel:NAME` rules skip a kernel
//! altogether. Each rule counts how often it matched, for `--print-suppressions`.
//!
//! It also holds the default of the print limit (`--print-limit`, `CLRACE_PRINT_LIMIT`), the
//! other thing that decides which findings are shown.
//!
//! It sees findings only as their typed records ([`Finding`]: kind, kernel, places), never the
//! detector's or the emulator's types, so it does not change when they do.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use crate::finding::{Finding, Kind};

/// Findings shown per kernel unless `--print-limit`/`CLRACE_PRINT_LIMIT` says otherwise; the
/// rest are counted in the summary.
pub const DEFAULT_PRINT_LIMIT: u64 = 100;

/// The longest suppression file read, in bytes: a rule file is written by hand.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// The kinds a rule may name: the finding kinds of the reports, then `kernel`.
fn kinds() -> impl Iterator<Item = &'static str> {
    Kind::ALL.iter().map(|k| k.name()).chain(["kernel"])
}

/// One rule of the file.
#[derive(Debug)]
pub struct Rule {
    /// The 1-based line of the file it is on.
    pub line: usize,
    pub kind: String,
    pub pattern: String,
    /// How many findings (or, for `kernel:` rules, kernel launches) it matched.
    hits: AtomicU64,
}

impl Rule {
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    /// Whether the rule's pattern names this finding: its kernel, a file of it (relative
    /// patterns match by suffix), or `FILE:LINE` of one of its places.
    fn matches(&self, finding: &Finding) -> bool {
        if glob(&self.pattern, &finding.kernel) {
            return true;
        }
        let places = places(finding);
        if places.iter().any(|(file, _)| file_matches(&self.pattern, file)) {
            return true;
        }
        match self.pattern.rsplit_once(':') {
            Some((file, line)) if !file.is_empty() && !line.is_empty() => {
                places.iter().any(|(f, l)| file_matches(file, f) && glob(line, &l.to_string()))
            }
            _ => false,
        }
    }
}

/// The file and line of every access of a finding: both sides of a race, else its own place
/// (none when its file is unknown).
fn places(finding: &Finding) -> Vec<(&str, u32)> {
    let places =
        if finding.kind == Kind::Race { &finding.places[..] } else { &finding.places[..finding.places.len().min(1)] };
    places.iter().filter(|p| !p.file.is_empty()).map(|p| (p.file.as_str(), p.line)).collect()
}

/// A file pattern matches a file named by it, or, when relative, any file whose path ends with
/// it after a `/` (the layer names its programs `program-N.cl`; `check` names them as found).
fn file_matches(pattern: &str, file: &str) -> bool {
    if glob(pattern, file) {
        return true;
    }
    !pattern.starts_with('/')
        && file.char_indices().filter(|&(_, c)| c == '/').any(|(i, _)| glob(pattern, &file[i + 1..]))
}

/// Whether `text` matches `pattern` whole, `*` standing for any run of characters and `?` for
/// one. Iterative with one backtrack point: linear in practice, never recursive.
pub fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || (p[pi] != '*' && p[pi] == t[ti])) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// The rules of one suppression file.
#[derive(Debug, Default)]
pub struct Suppressions {
    pub rules: Vec<Rule>,
}

impl Suppressions {
    /// Reads and parses a suppression file; errors name the file (and the line).
    pub fn load(path: &std::path::Path) -> Result<Suppressions, String> {
        let name = path.display();
        let size = std::fs::metadata(path).map_err(|e| format!("cannot read suppression file {name}: {e}"))?.len();
        if size > MAX_FILE_BYTES {
            return Err(format!("suppression file {name} is {size} bytes; the limit is {MAX_FILE_BYTES}"));
        }
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read suppression file {name}: {e}"))?;
        Suppressions::parse(&text).map_err(|e| format!("suppression file {name}: {e}"))
    }

    /// Parses the text of a suppression file. A malformed rule is an error naming its line.
    pub fn parse(text: &str) -> Result<Suppressions, String> {
        let mut rules = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let rule = raw.split_once('#').map_or(raw, |(before, _)| before).trim();
            if rule.is_empty() {
                continue;
            }
            let Some((kind, pattern)) = rule.split_once(':') else {
                return Err(format!("line {line}: '{rule}' is not KIND:PATTERN"));
            };
            let (kind, pattern) = (kind.trim(), pattern.trim());
            if !kinds().any(|k| k == kind) {
                return Err(format!(
                    "line {line}: unknown kind '{kind}' (expected one of {})",
                    kinds().collect::<Vec<_>>().join(", ")
                ));
            }
            if pattern.is_empty() {
                return Err(format!("line {line}: rule '{rule}' has no pattern"));
            }
            if pattern.chars().any(char::is_whitespace) {
                return Err(format!("line {line}: pattern '{pattern}' contains white space"));
            }
            rules.push(Rule { line, kind: kind.to_string(), pattern: pattern.to_string(), hits: AtomicU64::new(0) });
        }
        Ok(Suppressions { rules })
    }

    /// The first rule that suppresses `finding`, counted `weight` times (a finding's
    /// occurrences, or once). None if no rule does.
    pub fn suppress(&self, finding: &Finding, weight: u64) -> Option<&Rule> {
        let kind = finding.kind.name();
        let rule = self.rules.iter().find(|r| r.kind == kind && r.matches(finding))?;
        rule.hits.fetch_add(weight, Ordering::Relaxed);
        Some(rule)
    }

    /// The first `kernel:` rule naming `kernel`, counted once. None if the kernel is checked.
    pub fn skips_kernel(&self, kernel: &str) -> Option<&Rule> {
        let rule = self.rules.iter().find(|r| r.kind == "kernel" && glob(&r.pattern, kernel))?;
        rule.hits.fetch_add(1, Ordering::Relaxed);
        Some(rule)
    }

    /// The rules and how often each matched (`--print-suppressions`), those that matched
    /// nothing too: text lines, or one JSON `suppressions` object.
    pub fn listing(&self, json: bool) -> String {
        if json {
            let rules: Vec<Value> = self
                .rules
                .iter()
                .map(|r| json!({"line": r.line, "rule": format!("{}:{}", r.kind, r.pattern), "matched": r.hits()}))
                .collect();
            return format!("{}\n", json!({"kind": "suppressions", "rules": rules}));
        }
        let mut out = format!("clrace: {} suppression rule(s):\n", self.rules.len());
        for r in &self.rules {
            let note = if r.hits() == 0 { " (matched nothing)" } else { "" };
            out.push_str(&format!("clrace:   {:>6} {}:{} (line {}){note}\n", r.hits(), r.kind, r.pattern, r.line));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_names() {
        assert!(glob("reduce*", "reduce_sum"));
        assert!(glob("*sum", "reduce_sum"));
        assert!(glob("r?duce", "reduce"));
        assert!(glob("*", ""));
        assert!(!glob("reduce", "reduce_sum"));
        assert!(!glob("r?duce", "rduce"));
        assert!(glob("a*b*c", "axxbyyc"));
        assert!(!glob("a*b*c", "axxbyy"));
    }

    fn race() -> Finding {
        let place = |line| crate::finding::Place {
            access: Some("store"),
            file: "/src/kernels/reduce.cl".into(),
            line,
            column: 5,
        };
        Finding {
            kind: Kind::Race,
            kernel: "reduce".into(),
            write_write: true,
            uniform: false,
            hidden: false,
            count: 1,
            places: vec![place(12), place(20)],
            key: String::new(),
            json: Value::Null,
        }
    }

    #[test]
    fn rules_match_kernel_file_suffix_and_either_line_of_a_race() {
        for pattern in ["reduce", "red*", "reduce.cl", "kernels/reduce.cl", "reduce.cl:12", "reduce.cl:20", "*.cl:2?"] {
            let s = Suppressions::parse(&format!("race:{pattern}")).unwrap();
            assert!(s.suppress(&race(), 1).is_some(), "{pattern}");
        }
        for pattern in ["reduc", "duce.cl", "reduce.cl:13", "other.cl:12", "/kernels/reduce.cl"] {
            let s = Suppressions::parse(&format!("race:{pattern}")).unwrap();
            assert!(s.suppress(&race(), 1).is_none(), "{pattern}");
        }
        let s = Suppressions::parse("out-of-bounds:reduce").unwrap();
        assert!(s.suppress(&race(), 1).is_none(), "another kind");
    }

    #[test]
    fn comments_blank_lines_and_counts() {
        let s = Suppressions::parse("# header\n\nrace:reduce # the known one\nkernel:init*\n").unwrap();
        assert_eq!(s.rules.len(), 2);
        assert_eq!(s.rules[0].line, 3);
        s.suppress(&race(), 4);
        assert!(s.skips_kernel("init_buffers").is_some());
        assert!(s.skips_kernel("reduce").is_none());
        assert_eq!((s.rules[0].hits(), s.rules[1].hits()), (4, 1));
    }

    #[test]
    fn malformed_rules_name_their_line() {
        assert_eq!(Suppressions::parse("race:a\nrace\n").unwrap_err(), "line 2: 'race' is not KIND:PATTERN");
        assert!(Suppressions::parse("# c\nraces:a").unwrap_err().starts_with("line 2: unknown kind 'races'"));
        assert_eq!(Suppressions::parse("kernel:").unwrap_err(), "line 1: rule 'kernel:' has no pattern");
    }
}
