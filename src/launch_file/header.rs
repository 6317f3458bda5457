//! The part of a launch file before the arguments: the `# ARGS:` line, the `# clrace:`
//! directives (`offset`, `dim`, `build-options`), and the program, kernel, NDRange and
//! work-group size; plus the checks of the NDRange against the work-group size.

use super::reader::Reader;
use super::scalar::Elem;
use super::{LaunchError, SimHeader};

/// The header and a reader positioned at the first argument descriptor.
pub(super) struct HeaderRead<'a> {
    pub(super) header: SimHeader,
    pub(super) reader: Reader<'a>,
    /// The line holding the last number of the work-group size.
    pub(super) local_size_line: usize,
}

pub(super) fn read_header(text: &str) -> Result<HeaderRead<'_>, LaunchError> {
    let directives = Directives::scan(text)?;
    let from_args_line = build_options(text.lines().next().unwrap_or(""))?;
    let build_options = match (from_args_line, directives.build_options.clone()) {
        (Some(first), Some(second)) => Some(format!("{first} {second}")),
        (first, second) => first.or(second),
    };
    let mut reader = Reader::new(text);
    let program = word(&mut reader, "program file")?.to_string();
    let kernel = word(&mut reader, "kernel")?.to_string();
    let global_size = size3(&mut reader, "NDRange")?;
    let local_size = size3(&mut reader, "work-group size")?;
    let local_size_line = reader.line_no();
    let header = SimHeader {
        program,
        kernel,
        global_size,
        local_size,
        global_offset: directives.offset.map_or([0; 3], |(offset, _)| offset),
        work_dim: directives.dim.map_or(3, |(dim, _)| dim),
        build_options,
    };
    check_local_size(&header, local_size_line)?;
    directives.check_unused_dimensions(&header)?;
    Ok(HeaderRead { header, reader, local_size_line })
}

/// `--build-options X` from a first line `# ARGS: ...`. As the reference test runner does, the
/// text after `# ARGS: ` is split on single spaces, so `X` is one word.
fn build_options(first_line: &str) -> Result<Option<String>, LaunchError> {
    if !first_line.starts_with("# ARGS:") {
        return Ok(None);
    }
    let mut options = None;
    let mut words = first_line.get(8..).unwrap_or("").split(' ');
    while let Some(word) = words.next() {
        if word == "--build-options" {
            let value = words.next().ok_or_else(|| LaunchError::at(1, "'--build-options' needs a value"))?;
            options = Some(value.to_string());
        }
    }
    Ok(options)
}

/// What the `# clrace:` comments set, with the line of each.
#[derive(Default)]
struct Directives {
    offset: Option<([u64; 3], usize)>,
    dim: Option<(u32, usize)>,
    build_options: Option<String>,
}

impl Directives {
    fn scan(text: &str) -> Result<Directives, LaunchError> {
        let mut found = Directives::default();
        for (index, line) in text.lines().enumerate() {
            let Some(hash) = line.find('#') else { continue };
            let comment = line[hash + 1..].trim_start();
            if let Some(directive) = comment.strip_prefix("clrace:") {
                found.add(directive, index + 1)?;
            }
        }
        Ok(found)
    }

    fn add(&mut self, directive: &str, line: usize) -> Result<(), LaunchError> {
        let directive = directive.trim();
        let (name, rest) = directive.split_once(char::is_whitespace).unwrap_or((directive, ""));
        let rest = rest.trim();
        let duplicate = match name {
            "offset" => self.offset.is_some(),
            "dim" => self.dim.is_some(),
            "build-options" => self.build_options.is_some(),
            _ => {
                let message = format!("Unknown directive 'clrace: {name}' (expected offset, dim or build-options)");
                return Err(LaunchError::at(line, message));
            }
        };
        if duplicate {
            return Err(LaunchError::at(line, format!("Duplicate 'clrace: {name}' directive")));
        }
        match name {
            "offset" => self.offset = Some((offset(rest, line)?, line)),
            "dim" => self.dim = Some((dim(rest, line)?, line)),
            _ if rest.is_empty() => return Err(LaunchError::at(line, "'clrace: build-options' needs options")),
            _ => self.build_options = Some(rest.to_string()),
        }
        Ok(())
    }

    /// With `dim N`, the dimensions from N on must be trivial: size 1, offset 0.
    fn check_unused_dimensions(&self, header: &SimHeader) -> Result<(), LaunchError> {
        let Some((dim, line)) = self.dim else { return Ok(()) };
        for d in dim as usize..3 {
            let trivial = header.global_size[d] == 1 && header.local_size[d] == 1 && header.global_offset[d] == 0;
            if !trivial {
                let message = format!(
                    "With 'clrace: dim {dim}', dimension {d} must have NDRange 1, work-group size 1 and offset 0"
                );
                return Err(LaunchError::at(line, message));
            }
        }
        Ok(())
    }
}

/// `offset X [Y [Z]]`: missing coordinates are 0.
fn offset(values: &str, line: usize) -> Result<[u64; 3], LaunchError> {
    let numbers = directive_numbers("offset", values, line)?;
    if !(1..=3).contains(&numbers.len()) {
        return Err(LaunchError::at(line, "'clrace: offset' takes 1 to 3 numbers"));
    }
    let mut offset = [0; 3];
    offset[..numbers.len()].copy_from_slice(&numbers);
    Ok(offset)
}

/// `dim N`, N in 1..=3.
fn dim(values: &str, line: usize) -> Result<u32, LaunchError> {
    match directive_numbers("dim", values, line)?.as_slice() {
        &[dim @ 1..=3] => Ok(dim as u32),
        _ => Err(LaunchError::at(line, "'clrace: dim' takes one number: 1, 2 or 3")),
    }
}

fn directive_numbers(name: &str, values: &str, line: usize) -> Result<Vec<u64>, LaunchError> {
    let number = |word: &str| {
        let message = || LaunchError::at(line, format!("Invalid number '{word}' in 'clrace: {name}'"));
        word.parse::<u64>().map_err(|_| message())
    };
    values.split_whitespace().map(number).collect()
}

/// A work-group size of 0 in any dimension is meaningless.
fn check_local_size(header: &SimHeader, line: usize) -> Result<(), LaunchError> {
    if header.local_size.contains(&0) {
        return Err(LaunchError::at(line, "Work-group size must not be 0"));
    }
    Ok(())
}

/// OpenCL 1.x requires the work-group size to divide the NDRange; OpenCL 2.0 and later allow a
/// smaller last group, unless `-cl-uniform-work-group-size` asks for the old rule.
pub(super) fn check_work_groups(header: &SimHeader, line: usize) -> Result<(), LaunchError> {
    check_local_size(header, line)?;
    let options = header.build_options.as_deref().unwrap_or("");
    if !requires_uniform_work_groups(options) {
        return Ok(());
    }
    let divides = (0..3).all(|d| header.global_size[d].is_multiple_of(header.local_size[d]));
    if !divides {
        return Err(LaunchError::at(line, "Work group size must divide NDRange exactly."));
    }
    Ok(())
}

fn requires_uniform_work_groups(options: &str) -> bool {
    let mut uniform = true;
    for option in options.split_whitespace() {
        if option == "-cl-uniform-work-group-size" {
            return true;
        }
        if let Some(std) = option.strip_prefix("-cl-std=") {
            let std = std.to_ascii_lowercase();
            uniform = !(std == "cl2.0" || std == "cl3.0" || std.starts_with("clc++"));
        }
    }
    uniform
}

fn word<'a>(reader: &mut Reader<'a>, what: &str) -> Result<&'a str, LaunchError> {
    reader.word().ok_or_else(|| LaunchError::at(reader.line_no(), format!("Unexpected EOF when parsing {what}")))
}

/// Three sizes, read as C++ reads `size_t`.
fn size3(reader: &mut Reader, what: &str) -> Result<[u64; 3], LaunchError> {
    let mut sizes = [0; 3];
    for size in &mut sizes {
        if !reader.skip_space() {
            return Err(LaunchError::at(reader.line_no(), format!("Unexpected EOF when parsing {what}")));
        }
        let (value, len) = u64::scan(reader.rest(), false)
            .map_err(|_| LaunchError::at(reader.line_no(), format!("Failed to parse {what}")))?;
        reader.advance(len);
        *size = value;
    }
    Ok(sizes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(text: &str) -> SimHeader {
        read_header(text).map(|read| read.header).unwrap_or_else(|e| panic!("{e}"))
    }

    fn error(text: &str) -> String {
        match read_header(text) {
            Ok(_) => panic!("accepted: {text}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn reads_the_header_across_lines_and_comments() {
        let h = header("# a comment\nprog.cl # the program\n  kern\n16 8\n 1\n4 2 1\n<size=4>\n1");
        assert_eq!(h.program, "prog.cl");
        assert_eq!(h.kernel, "kern");
        assert_eq!(h.global_size, [16, 8, 1]);
        assert_eq!(h.local_size, [4, 2, 1]);
        assert_eq!(h.global_offset, [0; 3]);
        assert_eq!(h.work_dim, 3);
        assert_eq!(h.build_options, None);
    }

    #[test]
    fn args_line_gives_build_options() {
        let h = header("# ARGS: --build-options -cl-std=CL2.0\na.cl k 3 3 3 2 2 2");
        assert_eq!(h.build_options.as_deref(), Some("-cl-std=CL2.0"));
        let h = header("# ARGS: -i --build-options -DX=1 --data-races\na.cl k 1 1 1 1 1 1");
        assert_eq!(h.build_options.as_deref(), Some("-DX=1"));
        let h = header("# ARGS: -i\na.cl k 1 1 1 1 1 1");
        assert_eq!(h.build_options, None);
        assert_eq!(error("# ARGS: --build-options\na.cl k 1 1 1 1 1 1"), "Line 1: '--build-options' needs a value");
    }

    #[test]
    fn directives_set_offset_and_dim() {
        let h = header("a.cl k # clrace: offset 4 8\n# clrace: dim 2\n16 16 1\n4 4 1");
        assert_eq!(h.global_offset, [4, 8, 0]);
        assert_eq!(h.work_dim, 2);
        let h = header("#clrace: offset 1 2 3\na.cl k 1 1 1 1 1 1");
        assert_eq!(h.global_offset, [1, 2, 3]);
        assert_eq!(h.build_options, None);
    }

    #[test]
    fn build_options_directive_adds_to_the_args_line() {
        let h = header("# clrace: build-options -cl-fast-relaxed-math  -DN=4\na.cl k 1 1 1 1 1 1");
        assert_eq!(h.build_options.as_deref(), Some("-cl-fast-relaxed-math  -DN=4"));
        let h = header("# ARGS: --build-options -cl-std=CL2.0\n# clrace: build-options -DX\na.cl k 1 1 1 1 1 1");
        assert_eq!(h.build_options.as_deref(), Some("-cl-std=CL2.0 -DX"));
        assert_eq!(
            error("# clrace: build-options\na.cl k 1 1 1 1 1 1"),
            "Line 1: 'clrace: build-options' needs options"
        );
    }

    #[test]
    fn directive_errors_name_their_line() {
        assert_eq!(
            error("a.cl k\n# clrace: dim 1\n16 2 1\n4 1 1"),
            "Line 2: With 'clrace: dim 1', dimension 1 must have NDRange 1, work-group size 1 and offset 0"
        );
        assert_eq!(
            error("a.cl k\n\n# clrace: frob\n1 1 1 1 1 1"),
            "Line 3: Unknown directive 'clrace: frob' (expected offset, dim or build-options)"
        );
        assert_eq!(error("# clrace: dim 4\na.cl k 1 1 1 1 1 1"), "Line 1: 'clrace: dim' takes one number: 1, 2 or 3");
        assert_eq!(error("# clrace: offset 1 x\na.cl k 1 1 1 1 1 1"), "Line 1: Invalid number 'x' in 'clrace: offset'");
        assert_eq!(
            error("# clrace: offset 1 2 3 4\na.cl k 1 1 1 1 1 1"),
            "Line 1: 'clrace: offset' takes 1 to 3 numbers"
        );
        assert_eq!(
            error("# clrace: dim 1\n# clrace: dim 1\na.cl k 1 1 1 1 1 1"),
            "Line 2: Duplicate 'clrace: dim' directive"
        );
    }

    #[test]
    fn header_errors() {
        assert_eq!(error(""), "Line 1: Unexpected EOF when parsing program file");
        assert_eq!(error("a.cl\n# nothing"), "Line 2: Unexpected EOF when parsing kernel");
        assert_eq!(error("a.cl\nk\n3 x 1\n1 1 1"), "Line 3: Failed to parse NDRange");
        assert_eq!(error("a.cl\nk\n3 1 1\n1 1"), "Line 4: Unexpected EOF when parsing work-group size");
        assert_eq!(error("a.cl\nk\n3 1 1\n0 1 1"), "Line 4: Work-group size must not be 0");
    }

    #[test]
    fn uniform_work_groups_unless_opencl_2() {
        let mut h = header("a.cl k 3 3 3 2 2 2");
        assert_eq!(
            check_work_groups(&h, 4).unwrap_err().to_string(),
            "Line 4: Work group size must divide NDRange exactly."
        );
        for options in ["-cl-std=CL2.0", "-O2 -cl-std=CL3.0", "-cl-std=cl2.0", "-cl-std=CLC++"] {
            h.build_options = Some(options.into());
            assert!(check_work_groups(&h, 4).is_ok(), "{options}");
        }
        h.build_options = Some("-cl-std=CL2.0 -cl-uniform-work-group-size".into());
        assert!(check_work_groups(&h, 4).is_err());
        h.build_options = Some("-cl-std=CL1.2".into());
        assert!(check_work_groups(&h, 4).is_err());
        h.local_size = [1, 1, 1];
        assert!(check_work_groups(&h, 4).is_ok());
    }
}
