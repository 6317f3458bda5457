#!/usr/bin/env python3
"""Measures the spool on third-party test suites: every launch checked, at what cost to the
application, and how soon the last report comes, against checking every launch inline.

For each workload (PyOpenCL's test_algorithm.py and test_array.py under Debian's
python3-pyopencl on the system loader; CLBlast's clblast_test_xgemm and clblast_test_xtrsm), on
pocl alone (OCL_ICD_VENDORS names a directory holding only pocl.icd):
  - alone: the application without the layer (wall time; its own output kept);
  - spooled: `clrace run --spool SPOOL --format json` as a user runs it: the application's own
    time (taken by a wrapper inside), and the time to the last report (the whole `clrace run`,
    whose checks start while the application runs, at the lowest priority, and end after it);
  - inline: today's check-every-launch mode (`clrace run --no-spool` with CLRACE_ON_BACKLOG=wait
    and waits long enough never to skip): its time to the last report.
It prints per workload: launches (from the layer's ledger), launches spooled and checked,
the application's time under the layer against alone (goal: at most 1.3x), the time to the last
report against inline (goal: less), the spool's size before and after deduplication and
compression (the bytes every launch's snapshot holds, against the bytes on disk), and whether
the findings (kind, kernel, file, line) are the same as inline. Whether the application's own
result is the same (its exit status, and pytest's pass/fail line) is checked too.

It owns the measuring and the table only; it trusts the tools' reports for the findings.

Usage: spool.py --clrace PATH --layer PATH --pyopencl-tests DIR [--only NAME...] [--skip-inline]
"""

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


class Timing:
    """Wall seconds and CPU seconds (user + system, every process the command waited for)."""

    def __init__(self, wall, cpu):
        self.wall, self.cpu = wall, cpu

    def __add__(self, other):
        return Timing(self.wall + other.wall, self.cpu + other.cpu)


# Runs a command, then writes its wall and CPU seconds (user + system) to the file argv[1].
TIMER = (
    "import resource, subprocess, sys, time\n"
    "started = time.monotonic()\n"
    "status = subprocess.run(sys.argv[2:]).returncode\n"
    "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "open(sys.argv[1], 'w').write(f'{time.monotonic() - started} {usage.ru_utime + usage.ru_stime}')\n"
    "sys.exit(status)\n"
)


def workloads(tests):
    pytest = ["/usr/bin/python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    return {
        "pyopencl-algorithm": (pytest + ["test_algorithm.py"], tests),
        "pyopencl-array": (pytest + ["test_array.py"], tests),
        "clblast-xgemm": (["clblast_test_xgemm"], None),
        "clblast-xtrsm": (["clblast_test_xtrsm"], None),
    }


def run(cmd, env, cwd, log):
    # Every run starts from empty caches (PyOpenCL's binaries, pocl's kernels, clrace's builds),
    # so that each mode pays the same compilations.
    env = dict(env, XDG_CACHE_HOME=tempfile.mkdtemp(prefix="cache-", dir=env["BENCH_WORK"]))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    with open(log, "wb") as out:
        status = subprocess.run(cmd, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT).returncode
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Timing(wall, cpu), status


def outcome(log):
    """The application's own verdict: CLBlast's per-routine counts, or pytest's closing line."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", Path(log).read_text(errors="replace"))
    clblast = [l.strip() for l in text.splitlines() if re.search(r"\d+ test\(s\) (passed|failed)", l)]
    if clblast:
        return "; ".join(clblast)
    pytest = [l for l in text.splitlines() if re.search(r"\d+ (passed|failed)", l)]
    return re.sub(r" in [\d.]+s.*", "", pytest[-1]).strip("= ") if pytest else "(no verdict line)"


def findings(report):
    """The findings as (kind, kernel, line, source line) with their counts: not by program name,
    which hashes the program's text, and generated programs (PyOpenCL's scans) differ from run
    to run in ways that do not move their lines."""
    found = {}
    for line in Path(report).read_text().splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("kind") in (None, "summary", "layer-summary", "note", "build-log", "error"):
            continue
        place = (r.get("accesses") or [{}])[0] if r.get("kind") == "race" else r
        key = (r["kind"], r.get("kernel"), place.get("line"), place.get("source"))
        found[key] = found.get(key, 0) + 1
    return found


def summary(report):
    for line in Path(report).read_text().splitlines():
        if '"layer-summary"' in line:
            return json.loads(line)
    return {}


def spool_sizes(spool):
    stored = sum(p.stat().st_size for p in Path(spool).rglob("*") if p.is_file())
    logical = 0
    for manifest in (Path(spool) / "launches").glob("*.json"):
        launch = json.loads(manifest.read_text())
        logical += sum(b["size"] for b in launch.get("buffers", []))
    return logical, stored


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clrace", required=True)
    ap.add_argument("--layer", required=True)
    ap.add_argument("--pyopencl-tests", required=True)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--skip-inline", action="store_true")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="clrace-spool-bench-"))
    vendors = work / "vendors"
    vendors.mkdir()
    (vendors / "pocl.icd").write_text("libpocl.so.2\n")
    base = dict(os.environ, OCL_ICD_VENDORS=str(vendors), BENCH_WORK=str(work))
    base.pop("PYOPENCL_NO_CACHE", None)
    base.pop("CLRACE_CACHE_DIR", None)
    base.pop("OPENCL_LAYERS", None)
    rows = []
    for name, (cmd, cwd) in workloads(args.pyopencl_tests).items():
        if args.only and name not in args.only:
            continue
        print(f"spool-bench: {name}", file=sys.stderr, flush=True)
        alone, status = run(cmd, base, cwd, work / f"{name}.alone.log")
        spool = work / f"{name}.spool"
        report = work / f"{name}.spool.json"
        # `clrace run` as a user runs it (its early checks included); the application's own time
        # is taken by a wrapper inside it, the check's is the rest.
        timing = work / f"{name}.app.time"
        wrapper = [sys.executable, "-c", TIMER, str(timing)]
        total, app_status = run([args.clrace, "run", "--spool", str(spool), "--no-fail", "--layer", args.layer,
                                 "--format", "json", "--output", str(report), "--"] + wrapper + cmd,
                                base, cwd, work / f"{name}.app.log")
        app_wall, app_cpu = (float(x) for x in timing.read_text().split())
        app = Timing(app_wall, app_cpu)
        check = Timing(total.wall - app_wall, total.cpu - app_cpu)
        kernels = [k for state in spool.glob("runs/*/layer.json") for k in json.loads(state.read_text())["kernels"]]
        launches = sum(k.get("launches", 0) for k in kernels)
        spooled = sum(k.get("spooled", 0) for k in kernels)
        s = summary(report)
        logical, stored = spool_sizes(spool)
        row = {
            "workload": name,
            "launches": launches,
            "spooled": spooled,
            "checked": s.get("launches_checked"),
            "not_checked": s.get("launches_skipped", 0) + s.get("launches_failed", 0),
            "alone_s": alone.wall,
            "alone_cpu_s": alone.cpu,
            "app_s": app.wall,
            "app_cpu_s": app.cpu,
            "check_s": check.wall,
            "check_cpu_s": check.cpu,
            "app_ratio": app.wall / alone.wall,
            "app_cpu_ratio": app.cpu / alone.cpu,
            "same_result": (status, outcome(work / f"{name}.alone.log")) == (app_status, outcome(work / f"{name}.app.log")),
            "verdict": outcome(work / f"{name}.alone.log"),
            "spool_logical_mb": logical / 2**20,
            "spool_stored_mb": stored / 2**20,
            "findings": sum(findings(report).values()),
        }
        if not args.skip_inline:
            inline_report = work / f"{name}.inline.json"
            inline_env = dict(base, CLRACE_ON_BACKLOG="wait", CLRACE_WAIT_MS="100000000", CLRACE_EXIT_WAIT_MS="100000000",
                              CLRACE_CHECK_TIMEOUT="100000")
            inline, _ = run([args.clrace, "run", "--no-spool", "--no-fail", "--layer", args.layer, "--format", "json",
                             "--output", str(inline_report), "--"] + cmd, inline_env, cwd, work / f"{name}.inline.log")
            row["inline_s"] = inline.wall
            row["inline_cpu_s"] = inline.cpu
            row["inline_checked"] = summary(inline_report).get("launches_checked")
            row["same_findings"] = findings(inline_report) == findings(report)
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    print("Times in wall seconds; app/alone also in CPU seconds (user + system), which a loaded machine moves less.")
    print(f"{'workload':<20} {'launches':>8} {'spooled':>8} {'checked':>8} {'alone_s':>8} {'app_s':>8} {'app/alone':>9} "
          f"{'cpu':>6} {'check_s':>8} {'last_s':>8} {'inline_s':>9} {'spool_MB':>9} {'disk_MB':>8} {'found':>5} {'same':>5}")
    for r in rows:
        last = r["app_s"] + r["check_s"]
        same = "-" if "same_findings" not in r else ("yes" if r["same_findings"] else "NO")
        print(f"{r['workload']:<20} {r['launches']:>8} {r['spooled']:>8} {r['checked'] or 0:>8} {r['alone_s']:>8.1f} "
              f"{r['app_s']:>8.1f} {r['app_ratio']:>8.2f}x {r['app_cpu_ratio']:>5.2f}x {r['check_s']:>8.1f} {last:>8.1f} "
              f"{r.get('inline_s', float('nan')):>9.1f} {r['spool_logical_mb']:>9.1f} {r['spool_stored_mb']:>8.1f} "
              f"{r['findings']:>5} {same:>5}")
        if not r["same_result"]:
            print(f"  {r['workload']}: the application's result changed under the layer", file=sys.stderr)
    print(f"(work files: {work})")


if __name__ == "__main__":
    main()
