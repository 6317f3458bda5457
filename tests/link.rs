//! Separately compiled units linked into one program, as `clCompileProgram` plus
//! `clLinkProgram` build it.

use std::process::Command;

use clrace::compile::Unit;
use clrace::{ArgValue, BuildError, Launch, Program};

fn unit(path: &str, source: &str) -> Unit {
    Unit { source: source.into(), path: path.into(), ..Unit::default() }
}

fn launch(kernel: &str, global: u64, args: Vec<ArgValue>) -> Launch {
    Launch {
        kernel: kernel.into(),
        work_dim: 1,
        global_offset: [0; 3],
        global_size: [global, 1, 1],
        local_size: [global, 1, 1],
        args,
    }
}

/// Every source location of the program, rendered as `file:line:column`.
fn locations(program: &Program) -> Vec<String> {
    let module = program.module();
    (0..module.locations.len()).map(|i| module.location(i as u32)).collect()
}

fn ints(bytes: &[u8]) -> Vec<i32> {
    bytes.chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect()
}

/// Runs `kernel` over 16 work-items with one 16-int output buffer and returns the buffer.
fn run_16(program: &Program, kernel: &str) -> Vec<i32> {
    let mut buffers = vec![vec![0u8; 64]];
    let outcome = clrace::run(program, &launch(kernel, 16, vec![ArgValue::Buffer(0)]), &mut buffers)
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert!(outcome.findings.is_empty());
    ints(&buffers[0])
}

#[test]
fn a_kernel_calls_a_helper_from_another_unit() {
    let helper = unit("lib/twice.cl", "int twice(int x) { return 2 * x; }\n");
    let kernel = unit(
        "main.cl",
        "extern int twice(int x);\n\
         kernel void doubled(global int *out) {\n\
           int i = (int)get_global_id(0);\n\
           out[i] = twice(i) + 1;\n\
         }\n",
    );
    let program = Program::from_units(&[helper, kernel], "").unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = program.kernels().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["doubled"]);
    assert!(program.build_log.is_empty(), "{}", program.build_log);
    assert!(!program.flush_denormals);
    assert_eq!(run_16(&program, "doubled"), (0..16).map(|i| 2 * i + 1).collect::<Vec<_>>());
    // Debug info of both units survives the link.
    let locations = locations(&program);
    assert!(locations.iter().any(|l| l.contains("lib/twice.cl:1:")), "{locations:?}");
    assert!(locations.iter().any(|l| l.contains("main.cl:4:")), "{locations:?}");
}

/// A SPIR-V module as an application would ship it: one unit compiled offline, unresolved
/// functions left as imports.
fn spirv_unit(path: &str, source: &str) -> Unit {
    let compiled = clrace::compile::compile(source, path.as_ref(), "").unwrap_or_else(|e| panic!("{e}"));
    Unit { path: format!("{path}.spv").into(), spirv: Some(compiled.spirv), ..Unit::default() }
}

#[test]
fn spirv_modules_link_with_each_other_and_with_source() {
    // The kernel module imports `twice`, which a second module exports; a source unit adds `plus`.
    let kernel = spirv_unit(
        "main.cl",
        "extern int twice(int x);\n\
         extern int plus(int x, int y);\n\
         kernel void doubled(global int *out) {\n\
           int i = (int)get_global_id(0);\n\
           out[i] = plus(twice(i), 5);\n\
         }\n",
    );
    let helper = spirv_unit("twice.cl", "int twice(int x) { return 2 * x; }\n");
    let source = unit("plus.cl", "int plus(int x, int y) { return x + y; }\n");
    let program = Program::from_units(&[kernel, helper, source], "").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(run_16(&program, "doubled"), (0..16).map(|i| 2 * i + 5).collect::<Vec<_>>());
    // The modules' debug lines survive the round trip through LLVM.
    let locations = locations(&program);
    assert!(locations.iter().any(|l| l.contains("main.cl:5:")), "{locations:?}");
}

#[test]
fn a_malformed_spirv_unit_is_named() {
    let broken =
        Unit { path: "program-3.spv".into(), spirv: Some(vec![0x03, 0x02, 0x23, 0x07, 1, 2]), ..Unit::default() };
    let helper = unit("twice.cl", "int twice(int x) { return 2 * x; }\n");
    match Program::from_units(&[helper, broken], "") {
        Err(BuildError::Spirv(message)) => assert!(message.contains("program-3.spv"), "{message}"),
        other => panic!("expected a SPIR-V error, got {other:?}"),
    }
}

#[test]
fn a_header_given_by_include_name_is_found() {
    let mut kernel = unit(
        "scaled.cl",
        "#include \"util/helper.h\"\n\
         kernel void scaled(global int *out) {\n\
           int i = (int)get_global_id(0);\n\
           out[i] = scale(i);\n\
         }\n",
    );
    kernel.headers.push((
        "util/helper.h".into(),
        "#include \"util/factor.h\"\nstatic int scale(int x) { return FACTOR * x; }\n".into(),
    ));
    kernel.headers.push(("util/factor.h".into(), "#define FACTOR 3\n".into()));
    let program = Program::from_units(&[kernel], "-cl-denorms-are-zero").unwrap_or_else(|e| panic!("{e}"));
    assert!(program.flush_denormals);
    assert_eq!(run_16(&program, "scaled"), (0..16).map(|i| 3 * i).collect::<Vec<_>>());
    // Code from a header is located under its include name, not a temporary directory.
    let locations = locations(&program);
    assert!(locations.iter().any(|l| l.contains("util/helper.h:2:")), "{locations:?}");
    assert!(!locations.iter().any(|l| l.contains("clrace-")), "{locations:?}");
}

#[test]
fn a_compile_error_names_its_unit() {
    let good = unit("units/good.cl", "int twice(int x) { return 2 * x; }\n");
    let bad = unit("units/bad.cl", "kernel void k(global int *a) {\n  a[0] = twice(no_such_var);\n}\n");
    match Program::from_units(&[good, bad], "") {
        Err(BuildError::Compile(log)) => {
            assert!(log.contains("units/bad.cl:2:16: error:"), "{log}");
            assert!(log.contains("no_such_var"), "{log}");
            assert!(!log.contains("good.cl"), "{log}");
        }
        other => panic!("expected a compile error, got {:?}", other.err()),
    }
}

/// Runs itself again in a child process with `CLRACE_LLVM_LINK=/nonexistent`, so that no other
/// test of this binary sees the variable.
#[test]
fn a_missing_llvm_link_says_how_to_install_it() {
    const CHILD: &str = "CLRACE_LINK_TEST_CHILD";
    if std::env::var_os(CHILD).is_none() {
        let output = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "a_missing_llvm_link_says_how_to_install_it", "--test-threads=1"])
            .env(CHILD, "1")
            .env("CLRACE_LLVM_LINK", "/nonexistent")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success() && stdout.contains("1 passed"), "{stdout}\n{stderr}");
        return;
    }
    let units = [unit("k.cl", "kernel void k(global int *a) { a[0] = 1; }\n")];
    match Program::from_units(&units, "") {
        Err(BuildError::ToolsMissing(message)) => {
            assert!(message.contains("CLRACE_LLVM_LINK=/nonexistent"), "{message}");
            assert!(message.contains("apt-get install llvm-15") && message.contains("llvm-link-15"), "{message}");
        }
        other => panic!("expected missing tools, got {:?}", other.err()),
    }
}
