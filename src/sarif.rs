//! SARIF 2.1.0 output: one log with one run per invocation, one result per finding, built with
//! the `serde-sarif` model from the findings' typed records ([`Finding`]).
//!
//! It owns the rules (a stable id per finding kind), the mapping of a finding to a result (level,
//! message, primary and related locations with their source lines, properties) and the
//! fingerprint code scanning tracks a finding by. It does not see the detector or the emulator:
//! the rule, level and occurrences come from the record's typed fields; the message, the
//! places with their source lines and the properties from the fields of its JSON report object,
//! which the result lists as they are, so it does not change when the detector does.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use serde_sarif::sarif::{
    Artifact, ArtifactContent, ArtifactLocation, Location, Message, MultiformatMessageString, PhysicalLocation,
    PropertyBag, Region, ReportingConfiguration, ReportingDescriptor, Result as SarifResult, ResultLevel, Run, Sarif,
    Tool, ToolComponent,
};
use sha2::{Digest, Sha256};

use crate::finding::Finding;

/// The schema the log names.
const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// The key of our entry in `partialFingerprints`; the suffix changes if the hash ever does.
pub const FINGERPRINT_KEY: &str = "clraceFinding/v1";

/// The rules every log lists, with their short descriptions. A finding of a kind not listed
/// here gets a rule named after its kind.
const RULES: [(&str, &str); 5] = [
    (
        "race/read-write",
        "A read and a write of the same bytes by different work-items or work-groups, with no barrier or atomic ordering them.",
    ),
    (
        "race/write-write",
        "Two writes of the same bytes by different work-items or work-groups, with nothing ordering them.",
    ),
    ("out-of-bounds", "A load or store outside the buffer, __local or __private allocation it points into."),
    ("image-out-of-bounds", "An image read or write at a coordinate outside the image, with no sampler to clamp it."),
    ("barrier-divergence", "Work-items of one work-group reached different barriers, or some reached none."),
];

/// The places of a finding: the primary one first, then the related ones, each with what
/// happened there.
fn places(finding: &Value) -> Vec<(&Value, String)> {
    match finding["kind"].as_str() {
        Some("race") => {
            let accesses = finding["accesses"].as_array().map(Vec::as_slice).unwrap_or_default();
            let side = ["First", "Second"];
            accesses.iter().zip(side).map(|(a, side)| (a, format!("{side} access: {}", who(a)))).collect()
        }
        Some("barrier-divergence") => {
            let mut places =
                vec![(finding, format!("Local{} waits at this barrier", ids(&finding["waiting_local_id"])))];
            if finding["other_barrier"].is_object() {
                let other = format!("Local{} reached this barrier instead", ids(&finding["other_local_id"]));
                places.push((&finding["other_barrier"], other));
            }
            places
        }
        Some("async-copy") => {
            vec![(finding, format!("{} in work-group Group{}", s_of(finding, "function"), ids(&finding["group_id"])))]
        }
        Some("assertion-failed") => {
            vec![(finding, format!("the assertion of work-item Global{}", ids(&finding["global_id"])))]
        }
        Some("uninitialized") => {
            let used = format!("the {} use by work-item Global{}", s_of(finding, "use"), ids(&finding["global_id"]));
            vec![(finding, used)]
        }
        _ => vec![(finding, format!("{} by work-item Global{}", access(finding), ids(&finding["global_id"])))],
    }
}

fn s_of<'v>(v: &'v Value, key: &str) -> &'v str {
    v[key].as_str().unwrap_or("?")
}

fn ids(v: &Value) -> String {
    let parts: Vec<String> = v.as_array().into_iter().flatten().map(Value::to_string).collect();
    format!("({})", parts.join(","))
}

fn access(v: &Value) -> &str {
    v["access"].as_str().unwrap_or("access")
}

/// Who made an access of a race, as the text report says it.
fn who(a: &Value) -> String {
    match a["entity"].as_str() {
        Some("work-group") => format!("{} by work-group Group{}", access(a), ids(&a["group_id"])),
        _ => format!(
            "{} by Global{} Local{} Group{}",
            access(a),
            ids(&a["global_id"]),
            ids(&a["local_id"]),
            ids(&a["group_id"])
        ),
    }
}

/// The result's message: one sentence on what was found, then why.
fn message(finding: &Value) -> String {
    let kernel = finding["kernel"].as_str().unwrap_or("?");
    let s = |k: &str| finding[k].as_str().map_or_else(|| finding[k].to_string(), str::to_string);
    match finding["kind"].as_str() {
        Some("race") => {
            let title = if s("race_type") == "write-write" { "Write-write" } else { "Read-write" };
            let place = match finding["pixel"].as_array() {
                Some(_) => format!("image '{}' at pixel {}", s("buffer"), ids(&finding["pixel"])),
                None => format!("{} memory '{}' at byte offset {}", s("address_space"), s("buffer"), s("offset")),
            };
            let uniform =
                if finding["uniform"].as_bool() == Some(true) { " Both sides stored the same bytes." } else { "" };
            let lockstep = match finding["lockstep"].as_str() {
                Some(class) => format!(" Sub-group lockstep of {}: {class}.", s("sub_group_size")),
                None => String::new(),
            };
            format!(
                "{title} data race in {place} in kernel '{kernel}': {} ({}).{uniform}{lockstep}",
                s("reason"),
                s("scope")
            )
        }
        Some("out-of-bounds") if finding["object"] == "array" => format!(
            "Index {} exceeds the static array size ({}) in {} memory '{}' in kernel '{kernel}'.",
            s("index"),
            s("array_size"),
            s("address_space"),
            s("buffer")
        ),
        Some("access-mode") => format!(
            "Invalid {} {} buffer '{}' at offset {} in kernel '{kernel}'.",
            if access(finding) == "store" { "write to" } else { "read from" },
            s("mode"),
            s("buffer"),
            s("offset")
        ),
        Some("misaligned") => format!(
            "Misaligned {} of size {} at {} memory '{}', offset {}, not aligned to {} bytes, in kernel '{kernel}'.",
            access(finding),
            s("size"),
            s("address_space"),
            s("buffer"),
            s("offset"),
            s("alignment")
        ),
        Some("out-of-bounds") => format!(
            "Invalid {} of size {} at {} memory '{}' ({} bytes), offset {}, in kernel '{kernel}'.",
            if access(finding) == "store" { "write" } else { "read" },
            s("size"),
            s("address_space"),
            s("buffer"),
            s("buffer_size"),
            s("offset")
        ),
        Some("image-out-of-bounds") => format!(
            "Invalid {} of image '{}' (size {}) at coordinate {} in kernel '{kernel}'.",
            if access(finding) == "store" { "write" } else { "read" },
            s("image"),
            ids(&finding["image_size"]),
            ids(&finding["coordinate"])
        ),
        Some("barrier-divergence") => format!(
            "Barrier divergence in work-group {} of kernel '{kernel}': Local{} waits at a barrier, Local{} reached {}.",
            ids(&finding["group_id"]),
            ids(&finding["waiting_local_id"]),
            ids(&finding["other_local_id"]),
            if finding["other_barrier"].is_object() { "a different barrier" } else { "the end of the kernel" }
        ),
        Some("sub-group-livelock") => format!(
            "Sub-group livelock in work-group {} of kernel '{kernel}': lanes {} of sub-group {} (of {}) spin while \
             lockstep has masked off lanes {} of their own sub-group.",
            ids(&finding["group_id"]),
            ids(&finding["spinning_lanes"]),
            s("sub_group"),
            s("sub_group_size"),
            ids(&finding["masked_lanes"])
        ),
        Some("async-copy") => {
            let what = match s("problem").as_str() {
                "non-uniform" if finding["argument"].is_string() => format!(
                    "Local{} passes a different {} than Local{}",
                    ids(&finding["other_local_id"]),
                    s("argument"),
                    ids(&finding["first_local_id"])
                ),
                "non-uniform" => format!("only {} of its {} work-items reached it", s("reached"), s("work_group_size")),
                "unwaited" => "no wait_group_events named its event before the work-group finished".to_string(),
                _ => format!("it waits for event {}, which no copy of the work-group has in flight", s("event")),
            };
            let title = match s("problem").as_str() {
                "non-uniform" => "Non-uniform",
                "unwaited" => "Never waited for:",
                _ => "Invalid event in",
            };
            format!(
                "{title} {} in work-group {} of kernel '{kernel}': {what}.",
                s("function"),
                ids(&finding["group_id"])
            )
        }
        Some("assertion-failed") => format!(
            "Assertion failed in kernel '{kernel}' by work-item Global{}: {}.",
            ids(&finding["global_id"]),
            finding["message"].as_str().unwrap_or("__assert")
        ),
        Some("uninitialized") => format!(
            "Uninitialized value used as {} in kernel '{kernel}': it was read from {} memory '{}' before anything wrote it.",
            match s("use").as_str() {
                "address" => "an address",
                "branch" => "a branch condition",
                _ => "a value stored to global memory",
            },
            s("address_space"),
            s("buffer")
        ),
        Some(kind) => format!("{kind} in kernel '{kernel}'."),
        None => format!("A finding in kernel '{kernel}'."),
    }
}

/// A file name as a URI reference: relative names stay relative, absolute ones become
/// `file://` URIs; bytes outside the unreserved set and `/` are percent-encoded.
pub fn file_uri(file: &str) -> String {
    let mut out = String::with_capacity(file.len() + 8);
    if file.starts_with('/') {
        out.push_str("file://");
    }
    for b in file.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// A SARIF location for one place of a finding (`file`, `line`, `column`, `source`).
fn location(place: &Value, what: String, id: Option<i64>) -> Location {
    let line = place["line"].as_i64().filter(|&l| l > 0);
    let file = place["file"].as_str().filter(|f| !f.is_empty());
    let physical = match (file, line) {
        (Some(file), Some(line)) => Some(PhysicalLocation {
            artifact_location: Some(ArtifactLocation { uri: Some(file_uri(file)), ..Default::default() }),
            region: Some(Region {
                start_line: Some(line),
                start_column: place["column"].as_i64().filter(|&c| c > 0),
                snippet: place["source"]
                    .as_str()
                    .map(|text| ArtifactContent { text: Some(text.to_string()), ..Default::default() }),
                ..Default::default()
            }),
            ..Default::default()
        }),
        _ => None,
    };
    Location {
        id,
        physical_location: physical,
        message: Some(Message { text: Some(what), ..Default::default() }),
        ..Default::default()
    }
}

/// What tracks a finding over commits: its rule, kernel and the file name, line and column of
/// every place (not the work-items or offsets, which vary with the data, nor the directory,
/// which varies with the checkout).
pub fn fingerprint(finding: &Finding) -> String {
    let mut key = format!("{}|{}", finding.rule_id(), finding.kernel);
    for (place, _) in places(&finding.json) {
        let file = place["file"].as_str().unwrap_or("");
        let name = file.rsplit('/').next().unwrap_or(file);
        key.push_str(&format!("|{name}:{}:{}", place["line"], place["column"]));
    }
    Sha256::digest(key.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// What else a result carries: the finding's fields other than its places, and for a race the
/// work-items of both accesses.
fn properties(finding: &Value) -> PropertyBag {
    let mut bag = BTreeMap::new();
    let Some(object) = finding.as_object() else { return PropertyBag::default() };
    let place_keys = ["kind", "file", "line", "column", "source", "accesses", "other_barrier"];
    for (key, value) in object.iter().filter(|(k, _)| !place_keys.contains(&k.as_str())) {
        bag.insert(key.clone(), value.clone());
    }
    if let Some(accesses) = finding["accesses"].as_array() {
        let keep = ["access", "entity", "global_id", "local_id", "group_id"];
        let work_items: Vec<Value> = accesses
            .iter()
            .map(|a| {
                let fields = keep.iter().filter_map(|&k| Some((k.to_string(), a.get(k)?.clone())));
                Value::Object(fields.collect::<Map<String, Value>>())
            })
            .collect();
        bag.insert("work_items".into(), json!(work_items));
    }
    PropertyBag { additional_properties: bag, ..Default::default() }
}

/// The SARIF result of one finding.
pub fn result(finding: &Finding) -> SarifResult {
    let json = &finding.json;
    let mut places = places(json).into_iter();
    let primary = places.next().map(|(p, what)| location(p, what, None));
    let related: Vec<Location> = places.enumerate().map(|(i, (p, what))| location(p, what, Some(i as i64))).collect();
    let level = if finding.is_warning() { ResultLevel::Warning } else { ResultLevel::Error };
    let mut result = SarifResult::builder()
        .rule_id(finding.rule_id())
        .level(level)
        .message(Message { text: Some(message(json)), ..Default::default() })
        .partial_fingerprints(BTreeMap::from([(FINGERPRINT_KEY.to_string(), fingerprint(finding))]))
        .properties(properties(json))
        .build();
    result.locations = primary.map(|l| vec![l]);
    result.related_locations = (!related.is_empty()).then_some(related);
    result.occurrence_count = (finding.count > 1).then_some(finding.count as i64);
    result
}

/// The results of one invocation, written out as a whole log at its end.
#[derive(Debug, Default)]
pub struct Log {
    results: Vec<SarifResult>,
    /// The text of files the results cite that exist in memory only (the programs an
    /// application built from generated source), by URI: the run's `artifacts`.
    artifacts: BTreeMap<String, String>,
}

impl Log {
    pub fn new() -> Log {
        Log::default()
    }

    /// Adds the result of a finding.
    pub fn add(&mut self, finding: &Finding) {
        self.results.push(result(finding));
    }

    /// Adds the result of a finding, and as artifacts with their contents the files it cites
    /// whose text `text_of` gives (programs no file holds), so that a viewer can show the place.
    pub fn add_with_text(&mut self, finding: &Finding, text_of: impl Fn(&str) -> Option<String>) {
        self.add(finding);
        for (place, _) in places(&finding.json) {
            let Some(file) = place["file"].as_str().filter(|f| !f.is_empty()) else { continue };
            let uri = file_uri(file);
            if let std::collections::btree_map::Entry::Vacant(entry) = self.artifacts.entry(uri)
                && let Some(text) = text_of(file)
            {
                entry.insert(text);
            }
        }
    }

    pub fn len(&self) -> usize {
        self.results.len()
    }

    pub fn is_empty(&self) -> bool {
        self.results.is_empty()
    }

    /// The log: one run, the driver with every rule, the results with their rule indices.
    pub fn render(&self) -> String {
        let mut rules: Vec<ReportingDescriptor> = RULES.iter().map(|&(id, text)| rule(id, text)).collect();
        let mut results = self.results.clone();
        for result in &mut results {
            let id = result.rule_id.clone().unwrap_or_default();
            let index = match rules.iter().position(|r| r.id == id) {
                Some(i) => i,
                None => {
                    let text = match id.as_str() {
                        "uninitialized" => {
                            "A value nothing wrote, used as an address, a branch condition or stored to global memory."
                                .to_string()
                        }
                        _ => format!("A clrace finding of kind {id}."),
                    };
                    rules.push(rule(&id, &text));
                    rules.len() - 1
                }
            };
            result.rule_index = Some(index as i64);
        }
        let driver = ToolComponent::builder()
            .name("clrace")
            .version(env!("CARGO_PKG_VERSION"))
            .semantic_version(env!("CARGO_PKG_VERSION"))
            // The documentation the Debian package installs (the project has no public page yet).
            .information_uri("file:///usr/share/doc/clrace/README.md")
            .rules(rules)
            .build();
        let mut run = Run::builder()
            .tool(Tool::builder().driver(driver).build())
            .results(results)
            .column_kind(json!("unicodeCodePoints"))
            .build();
        let artifacts: Vec<Artifact> = self
            .artifacts
            .iter()
            .map(|(uri, text)| Artifact {
                location: Some(ArtifactLocation { uri: Some(uri.clone()), ..Default::default() }),
                contents: Some(ArtifactContent { text: Some(text.clone()), ..Default::default() }),
                source_language: Some("opencl".into()),
                ..Default::default()
            })
            .collect();
        run.artifacts = (!artifacts.is_empty()).then_some(artifacts);
        let log = Sarif::builder().schema(SCHEMA).version(json!("2.1.0")).runs(vec![run]).build();
        let mut text = serde_json::to_string_pretty(&log).unwrap_or_default();
        text.push('\n');
        text
    }
}

fn rule(id: &str, text: &str) -> ReportingDescriptor {
    let level = if id.starts_with("race/")
        || id.contains("out-of-bounds")
        || id == "barrier-divergence"
        || id == "sub-group-livelock"
        || id == "async-copy"
        || id == "uninitialized"
    {
        "error"
    } else {
        "warning"
    };
    ReportingDescriptor::builder()
        .id(id)
        .short_description(MultiformatMessageString::builder().text(text).build())
        .default_configuration(ReportingConfiguration { level: Some(json!(level)), ..Default::default() })
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Kind;

    /// A record with the JSON object `json`, of a kind and weight as it says.
    fn record(json: Value) -> Finding {
        let kind = Kind::ALL.into_iter().find(|k| json["kind"] == k.name()).expect("a known kind");
        Finding {
            kind,
            kernel: json["kernel"].as_str().unwrap_or("").to_string(),
            write_write: json["race_type"] == "write-write",
            uniform: json["uniform"] == true,
            hidden: json["level"] == "warning",
            count: json["count"].as_u64().unwrap_or(1),
            places: Vec::new(),
            key: String::new(),
            json,
        }
    }

    fn race(gid: u64, offset: u64, line: u64) -> Finding {
        record(
            json!({"kind": "race", "kernel": "k", "race_type": "read-write", "address_space": "global", "buffer": "out",
            "offset": offset, "pixel": null, "hazards": 4, "uniform": false, "scope": "intra-group", "reason": "r",
            "accesses": [
                {"access": "store", "entity": "work-item", "global_id": [gid, 0, 0], "local_id": [gid, 0, 0],
                 "group_id": [0, 0, 0], "file": "/a/k.cl", "line": line, "column": 5, "source": "out[i] = 1;"},
                {"access": "load", "entity": "work-item", "global_id": [gid + 1, 0, 0], "local_id": [gid + 1, 0, 0],
                 "group_id": [0, 0, 0], "file": "/a/k.cl", "line": 7, "column": 9, "source": null}]}),
        )
    }

    #[test]
    fn fingerprints_ignore_work_items_offsets_and_directories() {
        let mut moved = race(0, 0, 3);
        moved.json["accesses"][0]["file"] = json!("/elsewhere/k.cl");
        assert_eq!(fingerprint(&race(0, 0, 3)), fingerprint(&race(5, 64, 3)));
        assert_eq!(fingerprint(&race(0, 0, 3)), fingerprint(&moved));
        assert_ne!(fingerprint(&race(0, 0, 3)), fingerprint(&race(0, 0, 4)));
    }

    #[test]
    fn a_race_has_both_accesses_as_locations() {
        let r = serde_json::to_value(result(&race(0, 0, 3))).unwrap();
        assert_eq!(r["ruleId"], "race/read-write");
        assert_eq!(r["level"], "error");
        assert_eq!(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "file:///a/k.cl");
        assert_eq!(r["locations"][0]["physicalLocation"]["region"]["snippet"]["text"], "out[i] = 1;");
        assert_eq!(r["relatedLocations"][0]["physicalLocation"]["region"]["startLine"], 7);
        assert_eq!(r["properties"]["work_items"][1]["global_id"], json!([1, 0, 0]));
        assert_eq!(r["properties"]["buffer"], "out");
    }

    #[test]
    fn a_later_kind_gets_a_rule_of_its_own() {
        let mut log = Log::new();
        log.add(&record(json!({"kind": "misaligned", "kernel": "k", "file": "k.cl", "line": 3, "column": 1})));
        log.add(&race(0, 0, 3));
        let log: Value = serde_json::from_str(&log.render()).unwrap();
        let rules = &log["runs"][0]["tool"]["driver"]["rules"];
        assert_eq!(rules[5]["id"], "misaligned");
        assert_eq!(log["runs"][0]["results"][0]["ruleIndex"], 5);
        assert_eq!(log["runs"][0]["results"][1]["ruleIndex"], 0);
    }

    #[test]
    fn uris_are_encoded() {
        assert_eq!(file_uri("dir/my kernel.cl"), "dir/my%20kernel.cl");
        assert_eq!(file_uri("/x/a#b.cl"), "file:///x/a%23b.cl");
    }
}
