//! `clrace merge`: the reports of the shards of a spool's check (`clrace check DIR --shard I/N
//! --format json|sarif`) joined into the report one unsharded check gives, byte for byte.
//!
//! A shard reports its launches as if they were the only ones, without the print limit, and
//! every line of a launch names it (`spooled`). The merge takes the launches in SEQ order and
//! replays what one check would have kept across them: a finding reported for an earlier
//! launch of its kernel (in any shard) is dropped and counted as repeated, the print limit is
//! applied per kernel, a note is given once per kernel and kind, and the closing summary is
//! made again from the shards' ledgers and the findings kept. It reads reports only: it cannot
//! see the spool, nor check anything.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::{Map, Value, json};

use crate::report::Tally;
use crate::series::{self, KernelKey, KernelRecord, Ledger, Totals};

/// A merged report.
#[derive(Debug)]
pub struct Merged {
    pub text: String,
    /// It has findings no rule suppresses (the exit status 1).
    pub found: bool,
}

/// What one kernel's launches reported so far, as a series keeps it.
#[derive(Default)]
struct Seen {
    reported: HashSet<String>,
    shown: u64,
}

/// The lines of the shards, sorted out.
#[derive(Default)]
struct Shards {
    /// Lines of no launch (the note on a missing `layer.json`), once each, in order.
    prelude: Vec<String>,
    /// Each launch's lines, by SEQ.
    launches: BTreeMap<u64, Vec<Value>>,
    summaries: Vec<Value>,
    listings: Vec<Value>,
}

/// Merges the shards' JSON Lines reports (`(name, text)` each), applying `print_limit` (by
/// default the one the shards name: that of the command line or of the layer).
pub fn merge_json(files: &[(String, String)], print_limit: Option<u64>) -> Result<Merged, String> {
    let shards = sort_lines(files)?;
    check_shards(&shards.summaries)?;
    let print_limit = print_limit
        .or_else(|| shards.summaries[0]["print_limit"].as_u64())
        .unwrap_or(crate::suppress::DEFAULT_PRINT_LIMIT);
    let mut out = String::new();
    for line in &shards.prelude {
        out.push_str(line);
        out.push('\n');
    }
    let mut seen: HashMap<KernelKey, Seen> = HashMap::new();
    let mut said: HashSet<(String, String, String)> = HashSet::new();
    let mut repeated: HashMap<KernelKey, u64> = HashMap::new();
    let (mut tally, mut suppressed, mut not_printed) = (Tally::default(), 0u64, 0u64);
    for (seq, lines) in &shards.launches {
        let summary = lines.iter().find(|l| l["kind"] == "summary" && l.get("findings").is_some());
        // Which of the launch's findings one check prints, and its counts.
        let mut printed: HashSet<&str> = HashSet::new();
        let mut counts = (0u64, 0u64);
        if let Some(summary) = summary {
            let key = KernelKey { program: text(&summary["program"]), name: text(&summary["kernel"]) };
            let records: HashMap<&str, &Value> =
                lines.iter().filter_map(|l| Some((l.get("identity")?.as_str()?, l))).collect();
            let suppressed_here: HashSet<&str> = strings(&summary["suppressed_findings"]).collect();
            let seen = seen.entry(key.clone()).or_default();
            for id in strings(&summary["findings"]) {
                let new = seen.reported.insert(id.to_string());
                if suppressed_here.contains(id) {
                    suppressed += u64::from(new);
                    continue;
                }
                if !new {
                    counts.0 += 1;
                    continue;
                }
                let record = records
                    .get(id)
                    .ok_or_else(|| format!("launch {seq}: finding {id} is counted but not reported in its shard"))?;
                tally.count_record(record);
                if print_limit == 0 || seen.shown < print_limit {
                    seen.shown += 1;
                    printed.insert(id);
                } else {
                    counts.1 += 1;
                }
            }
            *repeated.entry(key).or_default() += counts.0;
            not_printed += counts.1;
        }
        for line in lines {
            if line["kind"] == "note" {
                let note = (text(&line["kernel"]), text(&line["program"]), text(&line["note"]));
                if said.insert(note) {
                    out.push_str(&format!("{line}\n"));
                }
            } else if let Some(id) = line.get("identity").and_then(Value::as_str) {
                if printed.remove(id) {
                    out.push_str(&format!("{line}\n"));
                }
            } else if line["kind"] == "summary" && line.get("findings").is_some() {
                out.push_str(&format!("{}\n", recounted(line, counts.0, counts.1)));
            } else {
                out.push_str(&format!("{line}\n"));
            }
        }
    }
    let ledger = merged_ledger(&shards.summaries, &repeated)?;
    let mut totals = Totals { found: tally, suppressed, not_printed, ..Totals::default() };
    totals.unfinished = ledger.kernels().map(|(_, r)| r.unfinished.values().sum::<u64>()).sum();
    let kernels = totals.count_ledger(&ledger);
    let first = &shards.summaries[0];
    let style = series::Style {
        format: crate::report::Format::Json,
        suppressions: first.get("suppressed").is_some(),
        print_limit,
        print_limit_name: "--print-limit ",
        lockstep: first["sub_group_lockstep"].as_u64().map(|w| w as u32),
    };
    let mut summary = series::summary_json(&totals, &kernels, &style);
    if let Some(spool) = first.get("spool") {
        summary["spool"] = spool.clone();
    }
    out.push_str(&format!("{summary}\n"));
    if let Some(listing) = merged_listing(&shards.listings) {
        out.push_str(&format!("{listing}\n"));
    }
    Ok(Merged { text: out, found: totals.found() })
}

/// A JSON string's text ("" for anything else).
fn text(value: &Value) -> String {
    value.as_str().unwrap_or("").to_string()
}

/// The strings of a JSON array.
fn strings(value: &Value) -> impl Iterator<Item = &str> {
    value.as_array().into_iter().flatten().filter_map(Value::as_str)
}

/// Reads every line and sorts it: prelude, a launch's, a closing summary, a rules' listing.
fn sort_lines(files: &[(String, String)]) -> Result<Shards, String> {
    let mut shards = Shards::default();
    for (name, contents) in files {
        for (n, line) in contents.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let value: Value = serde_json::from_str(line).map_err(|_| {
                format!(
                    "{name} line {}: not JSON; only the JSON Lines (--format json) or SARIF reports of shards merge",
                    n + 1
                )
            })?;
            match (value["kind"].as_str(), value.get("spooled").and_then(Value::as_u64)) {
                (Some("layer-summary"), _) => shards.summaries.push(value),
                (Some("suppressions"), _) => shards.listings.push(value),
                (_, Some(seq)) => shards.launches.entry(seq).or_default().push(value),
                _ => {
                    if !shards.prelude.iter().any(|l| l == line) {
                        shards.prelude.push(line.to_string());
                    }
                }
            }
        }
    }
    Ok(shards)
}

/// Every shard of one split, once, each with its closing summary.
fn check_shards(summaries: &[Value]) -> Result<(), String> {
    if summaries.is_empty() {
        return Err("no shard's closing summary (a layer-summary line): not the reports of `clrace check DIR --shard I/N --format json`".into());
    }
    let mut count = None;
    let mut have = HashSet::new();
    for summary in summaries {
        let shard = summary["shard"].as_str().ok_or(
            "a closing summary names no shard: merge the reports of `clrace check DIR --shard I/N`, not of an unsharded check",
        )?;
        let (i, n) = crate::spool::check::parse_shard(shard)?;
        if *count.get_or_insert(n) != n {
            return Err(format!("shard {shard} is of another split than shard 0/{}", count.unwrap_or(n)));
        }
        if !have.insert(i) {
            return Err(format!("shard {shard} is given twice"));
        }
    }
    let n = count.unwrap_or(0);
    if let Some(missing) = (0..n).find(|i| !have.contains(i)) {
        return Err(format!("shard {missing}/{n} is missing"));
    }
    Ok(())
}

/// A launch's summary with its counts as one check makes them: `repeated_findings`, and
/// `not_printed` (before `spooled`, where the report puts it) when some were not printed.
fn recounted(summary: &Value, repeated: u64, not_printed: u64) -> Value {
    let Some(object) = summary.as_object() else { return summary.clone() };
    let mut out = Map::new();
    for (key, value) in object {
        match key.as_str() {
            "not_printed" => {}
            "repeated_findings" => {
                out.insert(key.clone(), repeated.into());
            }
            "spooled" => {
                if not_printed > 0 {
                    out.insert("not_printed".into(), not_printed.into());
                }
                out.insert(key.clone(), value.clone());
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    Value::Object(out)
}

/// The shards' ledgers added up, in the order one check has them: the layer's kernels first,
/// then the others by their first spooled launch; repeated findings as recounted.
fn merged_ledger(summaries: &[Value], repeated: &HashMap<KernelKey, u64>) -> Result<Ledger, String> {
    let mut layer_order: Vec<KernelKey> = Vec::new();
    let mut first: HashMap<KernelKey, u64> = HashMap::new();
    let mut sum = Ledger::default();
    for summary in summaries {
        let entries = summary["ledger"].as_array().ok_or("a shard's closing summary has no ledger")?;
        let ledger = Ledger::from_json(&summary["ledger"])?;
        for ((key, _), entry) in ledger.kernels().zip(entries) {
            match entry["first_spooled"].as_u64() {
                Some(seq) => {
                    let at = first.entry(key.clone()).or_insert(seq);
                    *at = (*at).min(seq);
                }
                None if !layer_order.contains(key) => layer_order.push(key.clone()),
                None => {}
            }
        }
        sum.absorb(&ledger);
    }
    let mut records: HashMap<KernelKey, KernelRecord> = sum.kernels().map(|(k, r)| (k.clone(), r.clone())).collect();
    let mut later: Vec<(u64, KernelKey)> =
        first.into_iter().filter(|(k, _)| !layer_order.contains(k)).map(|(k, seq)| (seq, k)).collect();
    later.sort();
    let mut ledger = Ledger::default();
    for key in layer_order.into_iter().chain(later.into_iter().map(|(_, k)| k)) {
        let mut record = records.remove(&key).unwrap_or_default();
        record.repeated_findings = repeated.get(&key).copied().unwrap_or(0);
        *ledger.record(&key) = record;
    }
    Ok(ledger)
}

/// The rules' listings (`--print-suppressions`) added up: each rule's matches over the shards.
fn merged_listing(listings: &[Value]) -> Option<Value> {
    let mut merged = listings.first()?.clone();
    if let Some(rules) = merged["rules"].as_array_mut() {
        for (i, rule) in rules.iter_mut().enumerate() {
            let matched: u64 = listings.iter().map(|l| l["rules"][i]["matched"].as_u64().unwrap_or(0)).sum();
            rule["matched"] = matched.into();
        }
    }
    Some(merged)
}

/// Merges the shards' SARIF logs: each result once (that of the lowest `spooled` launch), in
/// SEQ order, with the rules they cite and the artifacts of every shard, as one run. A shard's
/// results carry `spooled` and `identity` properties for this; the merged ones do not, as
/// those of one unsharded check do not.
pub fn merge_sarif(files: &[(String, String)]) -> Result<Merged, String> {
    let mut logs = Vec::with_capacity(files.len());
    for (name, contents) in files {
        let log: Value =
            serde_json::from_str(contents).map_err(|e| format!("{name} is not a SARIF log of a shard: {e}"))?;
        if log["runs"][0]["results"].as_array().is_none() {
            return Err(format!("{name} is not a SARIF log of a shard (it has no run with results)"));
        }
        logs.push(log);
    }
    // Every result with its place: launch, file, position.
    let mut all: Vec<(u64, usize, usize, &Value)> = Vec::new();
    let mut artifacts: BTreeMap<String, Value> = BTreeMap::new();
    let mut known_rules: HashMap<String, Value> = HashMap::new();
    for (f, log) in logs.iter().enumerate() {
        let run = &log["runs"][0];
        for (p, result) in run["results"].as_array().into_iter().flatten().enumerate() {
            let seq = result["properties"]["spooled"].as_u64().ok_or_else(|| {
                format!("{}: a result names no spooled launch: not the log of `clrace check DIR --shard`", files[f].0)
            })?;
            all.push((seq, f, p, result));
        }
        for artifact in run["artifacts"].as_array().into_iter().flatten() {
            let uri = text(&artifact["location"]["uri"]);
            artifacts.entry(uri).or_insert_with(|| artifact.clone());
        }
        for rule in run["tool"]["driver"]["rules"].as_array().into_iter().flatten() {
            known_rules.entry(text(&rule["id"])).or_insert_with(|| rule.clone());
        }
    }
    all.sort_by_key(|&(seq, f, p, _)| (seq, f, p));
    let mut kept = HashSet::new();
    let base: Value = serde_json::from_str(&crate::sarif::Log::new().render()).map_err(|e| e.to_string())?;
    let mut rules: Vec<Value> = base["runs"][0]["tool"]["driver"]["rules"].as_array().cloned().unwrap_or_default();
    let mut results = Vec::new();
    for (_, _, _, result) in all {
        let identity = text(&result["properties"]["identity"]);
        if !kept.insert(identity) {
            continue;
        }
        let id = text(&result["ruleId"]);
        let index = match rules.iter().position(|r| r["id"] == id.as_str()) {
            Some(i) => i,
            None => {
                rules.push(known_rules.get(&id).cloned().unwrap_or_else(|| json!({"id": id})));
                rules.len() - 1
            }
        };
        let mut result = result.clone();
        result["ruleIndex"] = index.into();
        // What only the merge needed: one check's log has neither.
        if let Some(properties) = result["properties"].as_object_mut() {
            properties.shift_remove("spooled");
            properties.shift_remove("identity");
        }
        results.push(result);
    }
    let found = results.iter().any(|r| r["level"] == "error");
    // The log of a shard with artifacts (if any has them) keeps every field in its place.
    let template = logs.iter().find(|l| l["runs"][0].get("artifacts").is_some()).unwrap_or(&logs[0]);
    let mut merged = template.clone();
    let run = &mut merged["runs"][0];
    run["results"] = Value::Array(results);
    run["tool"]["driver"]["rules"] = Value::Array(rules);
    if !artifacts.is_empty() {
        run["artifacts"] = Value::Array(artifacts.into_values().collect());
    }
    let mut text = serde_json::to_string_pretty(&merged).map_err(|e| e.to_string())?;
    text.push('\n');
    Ok(Merged { text, found })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recounted_summary_keeps_its_fields_in_report_order() {
        let shard = json!({"kind": "summary", "launch": 3, "repeated_findings": 0, "spooled": 9, "findings": ["a"]});
        let merged = recounted(&shard, 2, 1).to_string();
        assert_eq!(
            merged,
            r#"{"kind":"summary","launch":3,"repeated_findings":2,"not_printed":1,"spooled":9,"findings":["a"]}"#
        );
        assert_eq!(recounted(&shard, 0, 0), shard);
    }

    #[test]
    fn the_shards_must_be_one_whole_split() {
        let summary = |shard: &str| json!({"kind": "layer-summary", "shard": shard});
        assert!(check_shards(&[summary("0/2"), summary("1/2")]).is_ok());
        assert_eq!(check_shards(&[summary("0/2")]), Err("shard 1/2 is missing".to_string()));
        assert!(check_shards(&[summary("0/2"), summary("0/2")]).unwrap_err().contains("twice"));
        assert!(check_shards(&[summary("0/2"), summary("1/3")]).is_err());
        assert!(check_shards(&[json!({"kind": "layer-summary"})]).unwrap_err().contains("names no shard"));
    }

    #[test]
    fn shard_ledgers_add_up_in_the_order_of_one_check() {
        let entry = |name: &str, launches: u64, first: Option<u64>| json!({"program": "p.cl", "name": name, "launches": launches, "checked": launches, "first_spooled": first});
        let shards = [
            json!({"ledger": [entry("layer", 3, None), entry("late", 1, Some(8))]}),
            json!({"ledger": [entry("layer", 2, None), entry("early", 1, Some(3)), entry("late", 2, Some(5))]}),
        ];
        let ledger = merged_ledger(&shards, &HashMap::new()).unwrap();
        let kernels: Vec<(String, u64)> = ledger.kernels().map(|(k, r)| (k.name.clone(), r.launches)).collect();
        assert_eq!(kernels, [("layer".to_string(), 5), ("early".to_string(), 1), ("late".to_string(), 3)]);
    }
}
