//! Code specialised to a launch's by-value arguments (`--specialise`, `Program::specialise`):
//! every launch of `tests/specialise/` (kernels whose branches, switch, loop bound, divisions,
//! races and out-of-bounds writes are decided by their scalar and struct arguments, with a
//! helper bound at its one call site across a barrier and another called from several places)
//! reports and computes exactly the same with and without it, at one and two threads; the race
//! and the out-of-bounds write are found and their race-free twins are clean; the specialised
//! code has lost the branches its arguments decide. `tests/races.rs` runs the whole race corpus
//! specialised too.

use std::path::{Path, PathBuf};
use std::process::Command;

use clrace::Program;
use clrace::ir::{self, Inst};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("specialise")
}

/// `clrace check --format json --threads T --specialise MODE SIM`: exit status, stdout (the
/// dumps), stderr (the report).
fn check(sim: &str, mode: &str, threads: usize) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_clrace"))
        .args(["check", "--format", "json", "--threads", &threads.to_string(), "--specialise", mode, sim])
        .current_dir(dir())
        .output()
        .expect("clrace runs");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

fn launches() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir())
        .expect("tests/specialise")
        .filter_map(|e| {
            let path = e.ok()?.path();
            (path.extension()? == "sim").then(|| path.file_name().unwrap().to_string_lossy().into_owned())
        })
        .collect();
    names.sort();
    names
}

#[test]
fn every_launch_reports_and_computes_the_same_specialised_or_not() {
    let names = launches();
    assert!(names.len() >= 7, "{names:?}");
    for name in &names {
        for threads in [1, 2] {
            let plain = check(name, "off", threads);
            let special = check(name, "always", threads);
            assert_eq!(plain, special, "{name} at {threads} thread(s): specialised differs from plain");
            let (status, dumps, report) = plain;
            assert!(dumps.contains("Argument 'out'"), "{name}: no dump\n{dumps}\n{report}");
            let findings: Vec<serde_json::Value> = report
                .lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .filter(|v| v["kind"] != "summary")
                .collect();
            let kinds: Vec<String> = findings.iter().map(|f| f["kind"].as_str().unwrap_or("").to_string()).collect();
            match name.as_str() {
                "strided.sim" => assert!(status == 1 && kinds.iter().any(|k| k == "race"), "{name}: {report}"),
                "bounded.sim" => {
                    assert!(status == 1 && kinds.iter().any(|k| k == "out-of-bounds"), "{name}: {report}")
                }
                _ => assert!(status == 0 && findings.is_empty(), "{name}: expected no finding, got {report}"),
            }
        }
    }
}

/// The values `mixed` leaves in `out`, computed here from its source.
fn mixed_expected(width: i32, transpose: bool, mode: i32, steps: i32) -> Vec<i32> {
    let input: Vec<i32> = (0..64).collect();
    let pick = |mode: i32, x: i32| match mode {
        0 => x + 1,
        1 => x * 3,
        _ => x / mode,
    };
    (0..64)
        .map(|g: usize| {
            let group = g / 16 * 16;
            let tile = |l: usize| input[if transpose { (group + l) ^ 1 } else { group + l }] * 2;
            let l = g % 16;
            let mut acc: i32 = (0..steps).map(|s| tile((l + s as usize) % width as usize)).sum();
            acc = match mode {
                0 => acc + 100,
                1 => acc - 7,
                _ => acc ^ mode,
            };
            pick(mode, acc) + pick(2, acc) / (width / 4) + acc
        })
        .collect()
}

#[test]
fn specialised_launches_compute_what_the_source_says() {
    for (sim, expected) in
        [("mixed.sim", mixed_expected(16, true, 2, 5)), ("mixed_plain.sim", mixed_expected(16, false, 0, 3))]
    {
        let (status, dumps, report) = check(sim, "always", 1);
        assert_eq!(status, 0, "{report}");
        let got: Vec<i32> = dumps
            .lines()
            .filter_map(|l| l.trim().strip_prefix("out[")?.split_once("] = ").map(|(_, v)| v.parse().unwrap()))
            .collect();
        assert_eq!(got, expected, "{sim}");
    }
}

/// The conditional branches and switches of the functions `kernel`'s function reaches.
fn decisions(module: &ir::Module, kernel: usize) -> usize {
    let mut seen = vec![false; module.functions.len()];
    let mut stack = vec![module.kernels[kernel].function as usize];
    let mut count = 0;
    while let Some(f) = stack.pop() {
        if std::mem::replace(&mut seen[f], true) {
            continue;
        }
        for inst in &module.functions[f].code {
            match *inst {
                Inst::BranchIf { .. } | Inst::Switch { .. } => count += 1,
                Inst::Call { func, .. } => stack.push(func as usize),
                _ => {}
            }
        }
    }
    count
}

#[test]
fn specialised_code_has_lost_the_branches_its_arguments_decide() {
    let path = dir().join("args.cl");
    let source = std::fs::read_to_string(&path).expect("args.cl");
    let program = Program::from_source(&source, &path, "").expect("builds");
    let module = program.module();
    let mixed = module.kernels.iter().position(|k| k.info.name == "mixed").expect("kernel mixed");
    // in, out, tile: handles; width 16, transpose 1, mode 2, steps 5.
    let values = [None, None, None, Some(vec![16]), Some(vec![1]), Some(vec![2]), Some(vec![5])];
    let special = program.specialise(mixed, &values).expect("mixed is specialised");
    let (before, after) = (decisions(module, mixed), decisions(&special, mixed));
    // Left: the loop's exit test (its bound is known, its counter is not) and whatever the
    // build kept of `pick`'s tests, which has several callers and is never bound.
    assert!(after < before, "conditional branches and switches: {before} as built, {after} specialised");
    let entry = &special.functions[special.kernels[mixed].function as usize];
    assert!(!entry.code.iter().any(|i| matches!(i, Inst::Switch { .. })), "the switch on `mode` is folded");
    assert!(entry.params.iter().skip(3).all(|&(_, slots)| slots == 0), "the scalars are bound: {:?}", entry.params);

    // A launch repeated with the same values gets the same module again; other values another.
    let again = program.specialise(mixed, &values).expect("mixed is specialised");
    assert!(std::sync::Arc::ptr_eq(&special, &again), "the latest specialisations are kept");
    let mut other = values.clone();
    other[5] = Some(vec![0]);
    let mode0 = program.specialise(mixed, &other).expect("mixed is specialised");
    assert!(!std::sync::Arc::ptr_eq(&special, &mode0));

    // A launch with nothing to bind is not specialised.
    let strided = module.kernels.iter().position(|k| k.info.name == "strided").expect("kernel strided");
    assert!(program.specialise(strided, &[None, None, None]).is_none());
}

/// A launch that alone would not repay specialising runs the code as built; the next launch with
/// the same values is specialised, and the one after it gets that module again. `repays` is
/// asked once per new kernel and values, with the instructions the kernel reaches.
#[test]
fn a_launch_too_small_to_repay_specialising_is_specialised_when_repeated() {
    let path = dir().join("args.cl");
    let source = std::fs::read_to_string(&path).expect("args.cl");
    let program = Program::from_source(&source, &path, "").expect("builds");
    let mixed = program.module().kernels.iter().position(|k| k.info.name == "mixed").expect("kernel mixed");
    let values = [None, None, None, Some(vec![16]), Some(vec![1]), Some(vec![2]), Some(vec![5])];
    let mut asked = Vec::new();
    let mut too_small = |code: usize| {
        asked.push(code);
        false
    };
    assert!(program.specialise_if_repaid(mixed, &values, &mut too_small).is_none(), "the first launch runs as built");
    let second = program.specialise_if_repaid(mixed, &values, &mut too_small).expect("the second is specialised");
    let third = program.specialise_if_repaid(mixed, &values, &mut too_small).expect("kept");
    assert!(std::sync::Arc::ptr_eq(&second, &third), "the specialisation is kept");
    assert_eq!(asked.len(), 1, "asked for the first launch only: {asked:?}");
    assert!(asked[0] > 10, "the kernel's code reached: {asked:?}");

    // Other values start over; a launch that repays alone is specialised at once.
    let mut other = values.clone();
    other[5] = Some(vec![0]);
    assert!(program.specialise_if_repaid(mixed, &other, |_| false).is_none());
    other[5] = Some(vec![1]);
    assert!(program.specialise_if_repaid(mixed, &other, |_| true).is_some());
}
