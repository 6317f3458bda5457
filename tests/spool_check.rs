//! `clrace check DIR` on spools made from launch files: the reports name each spooled launch,
//! do not depend on `--jobs`, count every launch of the layer's ledger, and a spool without the
//! layer's `layer.json` (a crashed application) is still checked; one spooled launch checks
//! alone with every option of `clrace check`.

mod spooling;

use spooling::{clrace, scratch, standard_spool, text};

fn lines(text: &str) -> Vec<serde_json::Value> {
    text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

#[test]
fn reports_are_the_same_whatever_the_jobs() {
    let dir = scratch("spool-jobs");
    let spool = dir.join("spool");
    standard_spool(&spool, true);
    for format in ["text", "json"] {
        let run = |jobs: &str| {
            let out = clrace(&["check", spool.to_str().unwrap(), "--format", format, "--jobs", jobs]);
            assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
            text(&out.stderr)
        };
        let one = run("1");
        assert_eq!(one, run("4"), "--jobs 1 and --jobs 4 differ in {format}");
        assert_eq!(one, run("3"), "--jobs 1 and --jobs 3 differ in {format}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_spool_is_reported_as_the_layer_would_with_every_launch_counted() {
    let dir = scratch("spool-json");
    let spool = dir.join("spool");
    standard_spool(&spool, true);
    let out = clrace(&["check", spool.to_str().unwrap(), "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let values = lines(&text(&out.stderr));
    let races: Vec<&serde_json::Value> = values.iter().filter(|v| v["kind"] == "race").collect();
    // Seven distinct races, each reported once, by its kernel's first launch.
    assert_eq!(races.len(), 7, "{values:#?}");
    for race in &races {
        let seq = race["spooled"].as_u64().unwrap();
        assert!(seq <= 9, "a race is reported by its kernel's first launch, not launch {seq}");
        assert_eq!(race["fingerprint"].as_str().unwrap().len(), 64);
    }
    // Every launch has its summary, with its findings, the repeated ones counted.
    let summaries: Vec<&serde_json::Value> = values.iter().filter(|v| v["kind"] == "summary").collect();
    assert_eq!(summaries.len(), 15);
    let later = summaries.iter().find(|s| s["spooled"] == 23 && s["kernel"] == "matmul_tiled").unwrap();
    assert_eq!((later["launch"].as_u64(), later["repeated_findings"].as_u64()), (Some(3), Some(2)));
    assert_eq!(later["findings"].as_array().unwrap().len(), 2);
    // The clean kernel launched without a local size: one note, at its first launch.
    let notes: Vec<&serde_json::Value> = values.iter().filter(|v| v["kind"] == "note").collect();
    assert_eq!(notes.len(), 1, "{notes:#?}");
    assert_eq!((notes[0]["note"].as_str(), notes[0]["spooled"].as_u64()), (Some("local"), Some(9)));
    let summary = values.last().unwrap();
    assert_eq!(summary["kind"], "layer-summary");
    assert_eq!(summary["launches_checked"], 15);
    assert_eq!(summary["launches_skipped"], 10);
    assert_eq!(summary["races"], 7);
    assert_eq!(summary["spool"], spool.to_str().unwrap());
    let kernels = summary["kernels"].as_array().unwrap();
    assert_eq!(kernels.len(), 5, "every kernel has skipped launches");
    assert!(kernels.iter().all(|k| k["launches"] == 5 && k["checked"] == 3), "{kernels:#?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn text_reports_name_the_spooled_launch_to_check_alone() {
    let dir = scratch("spool-text");
    let spool = dir.join("spool");
    standard_spool(&spool, true);
    let out = clrace(&["check", spool.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    let manifest = spool.join("launches/00000001.json");
    let hint = format!("spooled launch 1: clrace check {}", manifest.display());
    assert!(stderr.contains(&format!("\t{hint}\n")), "{stderr}");
    assert!(stderr.contains(&format!("in 4 work-group(s) of 32 work-item(s) ({hint})\n")), "{stderr}");
    assert!(stderr.contains("clrace: 15 launch(es) checked: 7 race(s)"), "{stderr}");
    // The launch named checks alone, as a launch file does.
    let alone = clrace(&["check", manifest.to_str().unwrap(), "--format", "json"]);
    assert_eq!(alone.status.code(), Some(1), "{}", text(&alone.stderr));
    let sim = clrace(&["check", "tests/races/intergroup_ww.sim", "--format", "json"]);
    // The spool names the program as the application did (here its file name alone).
    assert_eq!(text(&alone.stderr), text(&sim.stderr).replace("tests/races/", ""));
    // With the options of one launch: the schedules explored, lockstep.
    for option in ["--explore", "--sub-group-lockstep", "--check-uninitialized"] {
        let out = clrace(&["check", manifest.to_str().unwrap(), option]);
        assert_eq!(out.status.code(), Some(1), "{option}: {}", text(&out.stderr));
    }
    let explored = clrace(&["check", manifest.to_str().unwrap(), "--explore"]);
    assert!(text(&explored.stderr).contains("schedule"), "{}", text(&explored.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_spool_without_the_layers_summary_is_checked_with_a_note() {
    let dir = scratch("spool-crashed");
    let spool = dir.join("spool");
    standard_spool(&spool, false);
    let out = clrace(&["check", spool.to_str().unwrap(), "--format", "json", "--jobs", "2"]);
    assert_eq!(out.status.code(), Some(1));
    let values = lines(&text(&out.stderr));
    assert_eq!(values[0]["kind"], "note");
    let note = values[0]["message"].as_str().unwrap();
    assert!(note.contains("has no layer.json") && note.contains("only the spooled launches are counted"), "{note}");
    let summary = values.last().unwrap();
    assert_eq!((summary["launches_checked"].as_u64(), summary["launches_skipped"].as_u64()), (Some(15), Some(0)));
    assert_eq!(summary["races"], 7);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_launches_with_findings_are_kept_in_a_spool_of_their_own() {
    let dir = scratch("spool-findings");
    let (spool, kept) = (dir.join("spool"), dir.join("kept"));
    standard_spool(&spool, true);
    let out = clrace(&["check", spool.to_str().unwrap(), "--spool-findings", kept.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let mut names: Vec<String> = std::fs::read_dir(kept.join("launches"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    // The first launch of each racy kernel: those with new findings.
    assert_eq!(names, ["00000001.json", "00000003.json", "00000005.json", "00000007.json"]);
    let again = clrace(&["check", kept.to_str().unwrap(), "--format", "json"]);
    let values = lines(&text(&again.stderr));
    assert_eq!(values.iter().filter(|v| v["kind"] == "race").count(), 7);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn options_for_one_launch_are_refused_for_a_spool() {
    let dir = scratch("spool-usage");
    let spool = dir.join("spool");
    standard_spool(&spool, false);
    let out = clrace(&["check", spool.to_str().unwrap(), "--explore"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("launches/N.json --explore"), "{}", text(&out.stderr));
    let out = clrace(&["check", "tests/races/intergroup_ww.sim", "--shard", "0/2"]);
    assert_eq!(out.status.code(), Some(2));
    let out = clrace(&["check", spool.to_str().unwrap(), "--shard", "2/2"]);
    assert_eq!(out.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_terminal_gets_a_progress_line_and_a_check_past_its_cpu_time_fails_with_a_note() {
    let dir = scratch("spool-progress");
    let spool = dir.join("spool");
    let endless = spooling::sim("tests/limits/infinite_loop.sim");
    let clean = spooling::sim("tests/races/intergroup_ww_ok.sim");
    let launches = [
        spooling::Spooled { sim: &endless, seq: 1, number: 1, local: true },
        spooling::Spooled { sim: &clean, seq: 2, number: 1, local: true },
    ];
    spooling::write_spool(&spool, &launches);
    // `script` gives clrace a terminal; the endless launch lasts past the two quiet seconds,
    // until its 3 s of CPU time are spent (no budget stops it first).
    let command = format!(
        "{} check {} --timeout 3 --budget 1000000000000 --jobs 1",
        env!("CARGO_BIN_EXE_clrace"),
        spool.display()
    );
    let out = std::process::Command::new("script").args(["-qec", &command, "/dev/null"]).output().unwrap();
    let seen = text(&out.stdout);
    assert!(seen.contains("clrace: 0 of 2 spooled launch(es) checked, 2s ["), "{seen:?}");
    // The line is lifted out of the way of the note, which names the launch and the limit.
    assert!(
        seen.contains("\r\x1b[2Kclrace: kernel 'infinite_loop' (infinite_loop.cl) could not be checked (launch 1): "),
        "{seen:?}"
    );
    assert!(seen.contains("1 not checked: its check used more than 3 s of CPU time"), "{seen:?}");
    assert!(seen.contains("clrace: 1 launch(es) checked"), "{seen:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_process_of_the_application_that_left_no_layer_json_is_named() {
    let dir = scratch("spool-runs");
    let spool = dir.join("spool");
    // Run 0 exits normally (it has its layer.json); run 1, another process, crashes.
    standard_spool(&spool, true);
    let racy = spooling::sim("tests/races/intergroup_ww.sim");
    spooling::write_spool(&spool, &[spooling::Spooled { sim: &racy, seq: 1, number: 1, local: true }]);
    let out = clrace(&["check", spool.to_str().unwrap(), "--format", "json"]);
    let values = lines(&text(&out.stderr));
    let note = values[0]["message"].as_str().unwrap();
    assert!(note.starts_with("run(s) 1 of ") && note.contains("have no layer.json"), "{note}");
    let summary = values.last().unwrap();
    assert_eq!(summary["launches_checked"], 16, "{summary}");
    let kernel = summary["kernels"].as_array().unwrap().iter().find(|k| k["kernel"] == "intergroup_ww").unwrap();
    assert_eq!((kernel["launches"].as_u64(), kernel["checked"].as_u64()), (Some(6), Some(4)), "{kernel}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Launches checked while the application still ran (`clrace run`'s early checks) are reported
/// byte for byte as if checked after; with settings that check otherwise, they are not used.
#[test]
fn launches_checked_early_are_reported_as_if_checked_after() {
    use clrace::spool::check::{Overrides, SpoolCheck};
    use clrace::spool::early::Early;
    let dir = scratch("spool-early");
    let spool = dir.join("spool");
    standard_spool(&spool, true);
    // What the layer writes when it begins: its settings (here the defaults).
    std::fs::write(spool.join("runs/0/settings.json"), "{}").unwrap();
    let report = |given: &Overrides, early: Option<clrace::spool::check::EarlyResults>| {
        let mut check = SpoolCheck::open(&spool, given).unwrap();
        if let Some(early) = early {
            check.adopt(early);
        }
        let mut out = Vec::new();
        check.run(&mut out, &std::sync::atomic::AtomicU64::new(0)).unwrap();
        String::from_utf8(out).unwrap()
    };
    let early_checks = |given: &Overrides| {
        let early = Early::start(&spool, given, 2);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while early.finished() < 15 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let checked = early.stop();
        assert_eq!(checked.len(), 15, "every launch checked early");
        checked
    };
    for format in ["text", "json"] {
        let given = Overrides { format: Some(format.into()), ..Overrides::default() };
        assert_eq!(report(&given, Some(early_checks(&given))), report(&given, None), "{format}");
    }
    // Checked early with the defaults, then asked to call uniform writes benign: checked again.
    let json = Overrides { format: Some("json".into()), ..Overrides::default() };
    let benign = Overrides { uniform_writes_benign: true, ..json.clone() };
    let plain = report(&benign, None);
    assert_ne!(plain, report(&json, None), "the setting changes what is found");
    assert_eq!(report(&benign, Some(early_checks(&json))), plain);
    std::fs::remove_dir_all(&dir).unwrap();
}
