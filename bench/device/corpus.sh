#!/bin/sh
# Dry run of the on-device prototype over the golden race corpus (tests/races): for each launch
# file, whether the instrumenter refuses it (and why), else whether the instrumented run on the
# first OpenCL device gives the race kinds and line pairs of `clrace check` (SAME or DIFF).
# Usage: bench/device/corpus.sh  (after cargo build --release --examples); a summary at the end.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root/tests/races" || exit 1
gate="$root/target/release/examples/on_device_gate"
races_of_json='
import sys, json
found = set()
for line in sys.stdin:
    try:
        f = json.loads(line)
    except ValueError:
        continue
    if f.get("kind") == "race":
        lines = [a["line"] for a in f["accesses"]]
        found.add("%s %d %d" % (f["race_type"], min(lines), max(lines)))
print(";".join(sorted(found)))'
for sim in *.sim; do
    out=$(timeout 120 "$gate" --reps 1 "$sim" 2>&1)
    if [ $? -eq 2 ]; then
        echo "REFUSED $sim: $(echo "$out" | grep -o 'cannot instrument: .* at' | head -1 | sed 's/ at$//')"
        continue
    fi
    device=$(echo "$out" | sed -n 's/^finding: \([a-z-]*\) race on .*\[lines \([0-9]*\) \([0-9]*\)\]/\1 \2 \3/p' | sort -u | paste -sd ';' -)
    emulator=$("$root/target/release/clrace" check --format json "$sim" 2>&1 >/dev/null | python3 -c "$races_of_json")
    if [ "$device" = "$emulator" ]; then echo "SAME $sim"; else echo "DIFF $sim device=[$device] emulator=[$emulator]"; fi
done | tee /tmp/clrace-corpus-dry-run.txt
echo "--- summary"
cut -d' ' -f1 /tmp/clrace-corpus-dry-run.txt | sort | uniq -c
grep '^REFUSED' /tmp/clrace-corpus-dry-run.txt | sed 's/^REFUSED [^:]*: //' | sort | uniq -c | sort -rn
