//! The application's build and link options: the option string split into words as a shell
//! would ([`tokenize_options`]), then each option mapped to what clang should see or dropped with
//! a line for the build log (the "App build options" table of the frontend notes).
//!
//! It sees strings only: no tool, no file, no cache.

/// Splits a build-option string the way a POSIX shell would split words: whitespace separates,
/// `'...'` is literal, `"..."` allows `\"`, `\\`, `\$` and `` \` ``, and a bare backslash quotes
/// the next character. Nothing is expanded.
pub fn tokenize_options(options: &str) -> Result<Vec<String>, String> {
    let mut tokens = Vec::new();
    let mut current = String::new();
    let mut in_token = false;
    let mut chars = options.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_token {
                    tokens.push(std::mem::take(&mut current));
                    in_token = false;
                }
            }
            '\'' => {
                in_token = true;
                read_single_quoted(&mut chars, &mut current)?;
            }
            '"' => {
                in_token = true;
                read_double_quoted(&mut chars, &mut current)?;
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(next) => {
                    in_token = true;
                    current.push(next);
                }
                None => return Err("build options end with a dangling backslash".into()),
            },
            c => {
                in_token = true;
                current.push(c);
            }
        }
    }
    if in_token {
        tokens.push(current);
    }
    Ok(tokens)
}

fn read_single_quoted(chars: &mut std::str::Chars, out: &mut String) -> Result<(), String> {
    for c in chars.by_ref() {
        if c == '\'' {
            return Ok(());
        }
        out.push(c);
    }
    Err("unterminated ' in build options".into())
}

fn read_double_quoted(chars: &mut std::str::Chars, out: &mut String) -> Result<(), String> {
    while let Some(c) = chars.next() {
        match c {
            '"' => return Ok(()),
            '\\' => match chars.next() {
                Some(next @ ('"' | '\\' | '$' | '`')) => out.push(next),
                Some('\n') => {}
                Some(next) => {
                    out.push('\\');
                    out.push(next);
                }
                None => break,
            },
            c => out.push(c),
        }
    }
    Err("unterminated \" in build options".into())
}

/// The application's options after filtering, ready to append to our clang command line.
#[derive(Debug, Default, PartialEq)]
pub(super) struct BuildOptions {
    pub(super) clang_args: Vec<String>,
    pub(super) flush_denormals: bool,
    /// The options chose a language version; otherwise we add `-cl-std=CL1.2`.
    pub(super) has_std: bool,
    /// That version is C++ for OpenCL, where `-fgnu89-inline` does not apply.
    pub(super) cpp: bool,
    /// Lines for the build log about options we dropped.
    pub(super) warnings: Vec<String>,
}

/// Options whose value is the next token; the pair passes through untouched.
const TAKES_VALUE: &[&str] =
    &["-D", "-U", "-I", "-include", "-imacros", "-isystem", "-iquote", "-idirafter", "-Xclang"];

pub(super) fn filter_options(tokens: &[String]) -> BuildOptions {
    let mut out = BuildOptions::default();
    let mut i = 0;
    while i < tokens.len() {
        let token = tokens[i].as_str();
        i += 1;
        if TAKES_VALUE.contains(&token) {
            out.clang_args.push(token.to_owned());
            if let Some(value) = tokens.get(i) {
                out.clang_args.push(value.clone());
                i += 1;
            }
        } else if token == "-cl-denorms-are-zero" {
            out.flush_denormals = true;
        } else if token == "-cl-opt-disable" || token == "-cl-kernel-arg-info" {
            // We always build at -O0 with argument info.
        } else if is_opt_level(token) || is_debug_flag(token) {
            // We always use our own -O0 -g pipeline.
        } else if is_vendor_option(token) {
            let mut dropped = token.to_owned();
            // `-cl-nv-maxrregcount 32` style: a bare value belongs to the vendor option.
            if let Some(value) = tokens.get(i).filter(|v| !v.starts_with('-')) {
                dropped = format!("{dropped} {value}");
                i += 1;
            }
            out.warnings.push(format!("warning: ignoring vendor-specific build option '{dropped}'"));
        } else {
            if let Some(std) = token.strip_prefix("-cl-std=") {
                out.has_std = true;
                out.cpp = std.to_ascii_lowercase().starts_with("clc++");
            }
            out.clang_args.push(token.to_owned());
        }
    }
    out
}

fn is_opt_level(token: &str) -> bool {
    token.strip_prefix("-O").is_some_and(|level| {
        matches!(level, "" | "s" | "z" | "g" | "fast") || level.bytes().all(|b| b.is_ascii_digit())
    })
}

fn is_debug_flag(token: &str) -> bool {
    token.strip_prefix("-g").is_some_and(|rest| {
        rest.is_empty()
            || rest.starts_with(|c: char| c.is_ascii_digit())
            || ["gdb", "dwarf", "line-", "no-", "full"].iter().any(|p| rest.starts_with(p))
    })
}

fn is_vendor_option(token: &str) -> bool {
    token == "-cl-no-subgroup-ifp" || ["-cl-nv-", "-cl-intel-", "-cl-amd-"].iter().any(|p| token.starts_with(p))
}

/// `clLinkProgram`'s options after filtering: none reaches a tool.
#[derive(Debug, Default, PartialEq)]
pub(super) struct LinkOptions {
    pub(super) flush_denormals: bool,
    /// Lines for the build log about options we dropped.
    pub(super) warnings: Vec<String>,
}

pub(super) fn filter_link_options(tokens: &[String]) -> LinkOptions {
    let mut out = LinkOptions::default();
    for token in tokens {
        match token.as_str() {
            // A library and an executable are the same module to us; link options of the
            // compiled units are never re-applied.
            "-create-library" | "-enable-link-options" => {}
            "-cl-denorms-are-zero" => out.flush_denormals = true,
            other => out.warnings.push(format!("warning: ignoring link option '{other}'")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn tokenizer_splits_like_a_shell() {
        assert_eq!(tokenize_options("").unwrap(), Vec::<String>::new());
        assert_eq!(tokenize_options("  -DA=1\t -w ").unwrap(), strings(&["-DA=1", "-w"]));
        assert_eq!(
            tokenize_options(r#"-I "dir with space" -D'X=a b' -DY=\"q\""#).unwrap(),
            strings(&["-I", "dir with space", "-DX=a b", "-DY=\"q\""])
        );
        assert_eq!(tokenize_options(r#""a\"b\\c\d""#).unwrap(), strings(&[r#"a"b\c\d"#]));
        assert_eq!(tokenize_options(r"'a\b' x\ y").unwrap(), strings(&[r"a\b", "x y"]));
        assert_eq!(tokenize_options("'' \"\"").unwrap(), strings(&["", ""]));
        assert_eq!(tokenize_options("-DA \\\n-DB").unwrap(), strings(&["-DA", "-DB"]));
        assert!(tokenize_options("-D'X").is_err());
        assert!(tokenize_options("-D\"X").is_err());
        assert!(tokenize_options("-DX\\").is_err());
    }

    #[test]
    fn options_are_filtered_per_the_table() {
        let tokens = strings(&[
            "-D",
            "N=4",
            "-I",
            "inc dir",
            "-w",
            "-Werror",
            "-cl-std=CL2.0",
            "-cl-fast-relaxed-math",
            "-cl-mad-enable",
            "-O3",
            "-cl-opt-disable",
            "-g",
            "-cl-kernel-arg-info",
            "-cl-denorms-are-zero",
            "-cl-nv-verbose",
            "-cl-nv-maxrregcount",
            "32",
            "-cl-intel-greater-than-4GB-buffer-required",
            "-cl-amd-x",
            "-cl-no-subgroup-ifp",
            "-fsome-unknown",
            "-D",
            "-O2",
        ]);
        let filtered = filter_options(&tokens);
        assert_eq!(
            filtered.clang_args,
            strings(&[
                "-D",
                "N=4",
                "-I",
                "inc dir",
                "-w",
                "-Werror",
                "-cl-std=CL2.0",
                "-cl-fast-relaxed-math",
                "-cl-mad-enable",
                "-fsome-unknown",
                "-D",
                "-O2",
            ])
        );
        assert!(filtered.flush_denormals);
        assert!(filtered.has_std);
        assert_eq!(filtered.warnings.len(), 5);
        assert!(filtered.warnings[1].contains("'-cl-nv-maxrregcount 32'"));
        assert!(!filter_options(&strings(&["-DX", "-ObjC"])).has_std);
        assert_eq!(filter_options(&strings(&["-ObjC"])).clang_args, strings(&["-ObjC"]));
    }

    #[test]
    fn link_options_are_filtered() {
        let filtered =
            filter_link_options(&strings(&["-create-library", "-enable-link-options", "-cl-fast-relaxed-math"]));
        assert!(!filtered.flush_denormals);
        assert_eq!(filtered.warnings, strings(&["warning: ignoring link option '-cl-fast-relaxed-math'"]));
        let filtered = filter_link_options(&strings(&["-cl-denorms-are-zero"]));
        assert_eq!(filtered, LinkOptions { flush_denormals: true, warnings: vec![] });
    }
}
