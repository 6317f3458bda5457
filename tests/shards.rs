//! A spool checked in shards (`clrace check DIR --shard I/N`), each shard a separate process run
//! by GNU parallel as a job array would run them, and the shards' reports joined by `clrace
//! merge`: the merged report is byte for byte that of one unsharded check with the same options,
//! in JSON Lines and in SARIF, with findings repeated across shards, more findings than the
//! print limit, suppressions, and notes given once.

mod spooling;

use std::path::Path;
use std::process::Command;

use spooling::{clrace, scratch, standard_spool, text};

/// Runs the `n` shards of `spool` with GNU parallel, each writing `DIR/shard-I.EXT`; returns
/// their files in shard order.
fn shards(spool: &Path, dir: &Path, n: usize, options: &[&str], ext: &str) -> Vec<String> {
    let exe = env!("CARGO_BIN_EXE_clrace");
    let out = format!("{}/shard-{{}}.{ext}", dir.display());
    let status = Command::new("parallel")
        .args([
            "--will-cite",
            "--halt",
            "never",
            exe,
            "check",
            spool.to_str().unwrap(),
            "--shard",
            &format!("{{}}/{n}"),
        ])
        .args(options)
        .args(["--output", &out, ":::"])
        .args((0..n).map(|i| i.to_string()))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("GNU parallel runs (ci/setup installs it)");
    // Each shard with findings exits 1; parallel counts them.
    assert!(status.code().is_some_and(|c| (0..=n as i32).contains(&c)), "{status:?}");
    (0..n).map(|i| format!("{}/shard-{i}.{ext}", dir.display())).collect()
}

/// `clrace merge` of `files`, and one unsharded check, with the same options.
fn merged_and_whole(spool: &Path, files: &[String], options: &[&str], merge_options: &[&str]) -> (String, String) {
    let mut args = vec!["merge"];
    args.extend(merge_options);
    args.extend(files.iter().map(String::as_str));
    let merged = clrace(&args);
    assert_eq!(merged.status.code(), Some(1), "{}", text(&merged.stderr));
    let mut args = vec!["check", spool.to_str().unwrap()];
    args.extend(options);
    let whole = clrace(&args);
    assert_eq!(whole.status.code(), Some(1), "{}", text(&whole.stderr));
    (text(&merged.stdout), whole_report(&whole))
}

/// An unsharded check's report: the JSON Lines on stderr, or the SARIF log on stdout.
fn whole_report(out: &std::process::Output) -> String {
    if out.stdout.is_empty() { text(&out.stderr) } else { text(&out.stdout) }
}

#[test]
fn merged_json_shards_are_one_unsharded_check() {
    let dir = scratch("shards-json");
    let spool = dir.join("spool");
    standard_spool(&spool, true);
    let rules = dir.join("rules.txt");
    std::fs::write(&rules, "race:double_buffer.cl:12\n").unwrap();
    for (n, options) in [
        (3, vec!["--format", "json", "--print-limit", "1"]),
        (2, vec!["--format", "json"]),
        (
            4,
            vec![
                "--format",
                "json",
                "--print-limit",
                "1",
                "--suppressions",
                rules.to_str().unwrap(),
                "--print-suppressions",
            ],
        ),
    ] {
        // A shard leaves the print limit to the merge.
        let files = shards(&spool, &dir, n, &options, "jsonl");
        // The merge applies the print limit the shards name: given to them, else the layer's.
        let limit = if options.contains(&"--print-limit") { "1" } else { "100" };
        let (merged, whole) = merged_and_whole(&spool, &files, &options, &["--format", "json"]);
        assert_eq!(merged, whole, "{n} shards with {options:?}");
        // What the comparison covers: repeats across shards, a print limit that bites.
        let summary: serde_json::Value =
            serde_json::from_str(whole.lines().rev().find(|l| l.contains("layer-summary")).unwrap()).unwrap();
        assert!(summary["repeated_findings"].as_u64().unwrap() > 0);
        if limit == "1" {
            assert!(summary["not_printed"].as_u64().unwrap() > 0, "{summary}");
        }
        let first_shard = std::fs::read_to_string(&files[1]).unwrap();
        assert!(first_shard.lines().any(|l| l.contains(r#""kind":"race""#)), "shard 1 reports races too");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn merged_sarif_shards_are_one_unsharded_check() {
    let dir = scratch("shards-sarif");
    let spool = dir.join("spool");
    standard_spool(&spool, true);
    let files = shards(&spool, &dir, 3, &["--format", "sarif"], "sarif");
    let (merged, whole) = merged_and_whole(&spool, &files, &["--format", "sarif"], &["--format", "sarif"]);
    assert_eq!(merged, whole);
    let log: serde_json::Value = serde_json::from_str(&whole).unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 7);
    // A shard's results name their launch and identity, for the merge only.
    let shard: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    let shard_results = shard["runs"][0]["results"].as_array().unwrap();
    assert!(!shard_results.is_empty());
    assert!(shard_results.iter().all(|r| r["properties"]["spooled"].as_u64().is_some()));
    assert!(results.iter().all(|r| r["properties"].get("spooled").is_none()));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn text_and_incomplete_shards_do_not_merge() {
    let dir = scratch("shards-refused");
    let spool = dir.join("spool");
    standard_spool(&spool, false);
    let files = shards(&spool, &dir, 3, &["--format", "json"], "jsonl");
    let out = clrace(&["merge", &files[0], &files[2]]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("shard 1/3 is missing"), "{}", text(&out.stderr));
    let out = clrace(&["merge", "--format", "text", &files[0]]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("text reports cannot be merged"), "{}", text(&out.stderr));
    // Without layer.json every shard says so; the merge says it once.
    let out = clrace(&["merge", &files[0], &files[1], &files[2]]);
    assert_eq!(text(&out.stdout).matches("has no layer.json").count(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}
