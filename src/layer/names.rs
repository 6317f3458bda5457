//! The names reports give the application's programs. An application hands the driver source
//! text, not files, so a program is named after what it holds: its kernels and a short hash of
//! its text (`axpb+scale-1a2b3c4d.cl`), the same on every run, so that a report, a suppression
//! rule or a code-scanning fingerprint stays valid across runs. When `CLRACE_SOURCE_DIR` names
//! the application's source directory and a file there holds exactly the program's text, the
//! program is named by that file's path instead, and reports point at the real file.
//!
//! It sees program text only, never a handle.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use sha2::{Digest, Sha256};

/// Files of `CLRACE_SOURCE_DIR` read at most, and their size at most: the index is built once,
/// on the application's thread, at its first program.
const MAX_FILES: usize = 20_000;
const MAX_FILE_BYTES: u64 = 4 << 20;
const MAX_DEPTH: usize = 8;

/// The name of a program made from OpenCL C `source`, before it is built: its kernels as the
/// text shows them.
pub fn of_source(source: &str, source_dir: Option<&Path>) -> String {
    of_built_source(source, source_dir, &[])
}

/// The name of a program made from OpenCL C `source` once built, with the kernels the driver
/// found in it (`CL_PROGRAM_KERNEL_NAMES`; none: the text's). The driver sees kernels a scan of
/// the text misses (declared through a macro, `#define KERNEL __kernel`); its names are put in
/// the order the text first mentions them, so the name is the same on every driver.
pub fn of_built_source(source: &str, source_dir: Option<&Path>, driver_kernels: &[String]) -> String {
    let digest = digest(source);
    if let Some(path) = source_dir.and_then(|dir| index(dir).get(&digest)) {
        return path.display().to_string();
    }
    let kernels = ordered_kernels(source, driver_kernels);
    let stem = match kernels.len() {
        0 => "program".to_string(),
        1..=3 => kernels.join("+"),
        n => format!("{}+{}-more", kernels[..2].join("+"), n - 2),
    };
    let stem: String = stem.chars().take(60).collect();
    format!("{stem}-{}.cl", hex8(&digest))
}

/// The name of a program made from a SPIR-V module.
pub fn of_il(module: &[u8]) -> String {
    format!("spirv-{}.spv", hex8(&Sha256::digest(module).into()))
}

/// The name of a program linked from units of these names.
pub fn of_linked(units: &[&str]) -> String {
    format!("linked-{}", hex8(&Sha256::digest(units.join("\n").as_bytes()).into()))
}

fn hex8(digest: &[u8; 32]) -> String {
    digest[..4].iter().map(|b| format!("{b:02x}")).collect()
}

/// The hash of a text, ignoring line-ending style and trailing white space at its end.
fn digest(text: &str) -> [u8; 32] {
    let normal = text.replace("\r\n", "\n");
    Sha256::digest(normal.trim_end().as_bytes()).into()
}

/// The index of `dir`: the digest of every readable text file below it, and its path.
fn index(dir: &Path) -> &'static HashMap<[u8; 32], PathBuf> {
    static INDEX: OnceLock<HashMap<[u8; 32], PathBuf>> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut index = HashMap::new();
        let mut pending = vec![(dir.to_path_buf(), 0)];
        let mut seen = 0;
        while let Some((dir, depth)) = pending.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for entry in entries.flatten() {
                let path = entry.path();
                let Ok(kind) = entry.file_type() else { continue };
                if kind.is_dir() && depth < MAX_DEPTH {
                    pending.push((path, depth + 1));
                } else if kind.is_file() && seen < MAX_FILES {
                    seen += 1;
                    let small = entry.metadata().is_ok_and(|m| m.len() <= MAX_FILE_BYTES);
                    if let Some(text) = small.then(|| std::fs::read_to_string(&path).ok()).flatten() {
                        let path = path.canonicalize().unwrap_or(path);
                        index.entry(digest(&text)).or_insert(path);
                    }
                }
            }
        }
        index
    })
}

/// The kernels of a program: the text's, unless the driver found others; then the driver's, in
/// the order the text first names them (those it never names last, alphabetically).
fn ordered_kernels(source: &str, driver_kernels: &[String]) -> Vec<String> {
    let scanned = kernel_names(source);
    let same = scanned.len() == driver_kernels.len() && driver_kernels.iter().all(|k| scanned.contains(k));
    if driver_kernels.is_empty() || same {
        return scanned;
    }
    let code = without_comments(source);
    let words = words(&code);
    let mut kernels: Vec<(usize, &String)> =
        driver_kernels.iter().map(|k| (words.iter().position(|w| w == k).unwrap_or(usize::MAX), k)).collect();
    kernels.sort();
    kernels.dedup_by(|a, b| a.1 == b.1);
    kernels.into_iter().map(|(_, k)| k.clone()).collect()
}

/// The kernels a source defines, in order: every `kernel` or `__kernel` (outside comments)
/// followed by attributes, `void` and a name.
pub fn kernel_names(source: &str) -> Vec<String> {
    let code = without_comments(source);
    let words = words(&code);
    let mut names = Vec::new();
    let mut i = 0;
    while i < words.len() {
        if matches!(words[i], "kernel" | "__kernel") {
            let mut j = i + 1;
            while j < words.len() && words[j] != "void" && j < i + 12 {
                j += 1; // attributes: __attribute__((reqd_work_group_size(...)))
            }
            if let Some(name) = words.get(j + 1).filter(|_| words.get(j) == Some(&"void")) {
                if !names.iter().any(|n| n == name) {
                    names.push(name.to_string());
                }
                i = j + 1;
            }
        }
        i += 1;
    }
    names
}

/// The identifiers and keywords of `code`, in order.
fn words(code: &str) -> Vec<&str> {
    code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|w| !w.is_empty()).collect()
}

/// `source` with `//` and `/* */` comments blanked (strings are not special: OpenCL C kernels
/// rarely hold comment markers in strings, and a wrong guess only changes a name).
fn without_comments(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("//") {
            rest = after.find('\n').map_or("", |i| &after[i..]);
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.find("*/").map_or("", |i| &after[i + 2..]);
            out.push(' ');
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_is_named_after_its_kernels_and_its_text() {
        let source = "/* kernel void not_this(void) */\n__kernel __attribute__((reqd_work_group_size(64,1,1))) void axpb(global float *x)\n{ }\nkernel void scale(global float *x) { } // kernel void nor_this()\n";
        assert_eq!(kernel_names(source), ["axpb", "scale"]);
        let name = of_source(source, None);
        assert!(name.starts_with("axpb+scale-") && name.ends_with(".cl") && name.len() == "axpb+scale-".len() + 11);
        assert_eq!(name, of_source(&source.replace('\n', "\r\n"), None), "the same across line endings");
        assert_ne!(name, of_source(&format!("{source}kernel void more(void) {{}}"), None));
        assert!(of_source("int helper(int x) { return x; }", None).starts_with("program-"));
        let many = "kernel void a(){} kernel void b(){} kernel void c(){} kernel void d(){}";
        assert!(of_source(many, None).starts_with("a+b+2-more-"));
        assert!(of_il(&[3, 2, 0x23, 7]).starts_with("spirv-"));
    }

    #[test]
    fn the_driver_names_kernels_a_macro_hides() {
        let source = "#define KERNEL __kernel\n#define REQD_WG_SIZE(X, Y, Z) __attribute__((reqd_work_group_size(X, Y, Z)))\nKERNEL REQD_WG_SIZE(2, 1, 1) void racy(global int *a) { }\nKERNEL void after(void) { }\n";
        assert!(of_source(source, None).starts_with("program-"));
        let driver = ["after".to_string(), "racy".to_string()];
        let name = of_built_source(source, None, &driver);
        assert!(name.starts_with("racy+after-"), "{name}");
        assert_eq!(name[name.len() - 11..], of_source(source, None)[of_source(source, None).len() - 11..]);
        let plain = "kernel void b(void) {} kernel void a(void) {}";
        let driver = ["a".to_string(), "b".to_string()];
        assert_eq!(of_built_source(plain, None, &driver), of_source(plain, None), "a scan that agrees is kept");
    }

    #[test]
    fn a_file_of_the_source_directory_with_the_same_text_names_the_program() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("kernels")).unwrap();
        let file = dir.path().join("kernels/sum.cl");
        std::fs::write(&file, "kernel void sum(global int *a) { a[0] = 1; }\n").unwrap();
        let name = of_source("kernel void sum(global int *a) { a[0] = 1; }", Some(dir.path()));
        assert_eq!(name, file.canonicalize().unwrap().display().to_string());
        assert!(of_source("kernel void other(void) {}", Some(dir.path())).starts_with("other-"));
    }
}
