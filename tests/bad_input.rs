//! `clrace check` on inputs that used to panic, abort or be refused wrongly (`tests/bad_input/`):
//! each exits with its documented status and a message, never 101 (a panic) or a signal.

use std::path::PathBuf;
use std::process::{Command, Output};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/bad_input")
}

fn check(sim: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clrace")).args(["check", sim]).current_dir(dir()).output().unwrap()
}

/// `clrace check SIM` with its address space limited to `kib` KiB (`ulimit -v`).
fn check_limited(sim: &str, kib: u64) -> Output {
    let script = format!("ulimit -v {kib} && exec \"$0\" check {sim}");
    Command::new("sh").args(["-c", &script, env!("CARGO_BIN_EXE_clrace")]).current_dir(dir()).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn dump(name: &str, values: &[i64]) -> String {
    let lines: String = values.iter().enumerate().map(|(i, v)| format!("  {name}[{i}] = {v}\n")).collect();
    format!("\nArgument '{name}': {} bytes\n{lines}\n", values.len() * 4)
}

#[test]
fn a_c99_inline_function_gets_its_body() {
    let out = check("inline.sim");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), dump("out", &[0, 2, 4, 6]));
}

#[test]
fn a_call_to_an_undefined_function_exits_4_naming_it() {
    let out = check("extern_call.sim");
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains(
            "unsupported: call to 'external_hook', which has no body in the program (it is declared but never \
             defined) at "
        ) && err.contains("extern_call.cl:6:"),
        "{err}"
    );
}

#[test]
fn an_undefined_function_that_is_never_called_does_not_fail_the_run() {
    let out = check("uncalled_extern.sim");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), dump("out", &[1, 2, 3, 4]));
}

/// Built by `/work/shared/repro/make_bad_spirv.sh`: vec.cl's `int4` claiming other component
/// counts, shuf.cl's shuffle selecting a component past the two vectors.
#[test]
fn malformed_spirv_is_refused_with_a_message() {
    let cases = [
        (
            "vec5.sim",
            "vec5.spv: invalid or unsupported SPIR-V: OpTypeVector %9 of 5 components (OpenCL has 2, 3, 4, 8 and 16)",
        ),
        ("vec4294967295.sim", "OpTypeVector %9 of 4294967295 components"),
        (
            "shuf8.sim",
            "shuf8.spv: invalid or unsupported SPIR-V: in function 'shuf': OpVectorShuffle selects component 8 of two \
             vectors of 4 and 4 components",
        ),
        ("shuf1000000.sim", "OpVectorShuffle selects component 1000000 of two vectors of 4 and 4 components"),
    ];
    for (sim, expected) in cases {
        // The 2^32-1 component vector used to ask for 32 GiB at once.
        let out = check_limited(sim, 1 << 20);
        assert_eq!(out.status.code(), Some(3), "{sim}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(expected), "{sim}: {}", text(&out.stderr));
    }
}

#[test]
fn a_launch_file_that_is_not_utf8_is_read() {
    let out = check("latin1.sim");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn a_program_source_that_is_not_utf8_is_read() {
    let out = check("latin1_source.sim");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), dump("out", &[7, 7]));
}

/// The file's 4 GiB `noinit` buffer is followed by an argument too many: the parse error comes
/// first, within 1 GiB of address space (the buffer used to be zero-filled before the error).
#[test]
fn a_launch_file_error_is_reported_before_buffers_are_made() {
    let out = check_limited("noinit_then_error.sim", 1 << 20);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        "clrace: noinit_then_error.sim: Line 7: Unexpected token '<size=4>' (expected EOF)\n"
    );
}

#[test]
fn a_buffer_over_the_limit_is_refused_as_it_is_read() {
    let out = check_limited("huge_buffer.sim", 1 << 20);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        "clrace: huge_buffer.sim: Line 6: size=2199023255552 is more than the 1099511627776 bytes (1 TiB) a buffer \
         may have (argument 0: out)\n"
    );
}

#[test]
fn a_private_variable_over_the_limit_is_refused() {
    let out = check("huge_private.sim");
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("a private variable of 20000000 bytes (a work-item may have 16777216 bytes)"), "{err}");
}
