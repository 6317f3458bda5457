#!/usr/bin/env python3
"""Times every benchmark kernel of this directory with every tool, side by side, in one run.

For each launch file (`NAME.sim`, in the order of KERNELS, then any other `*.sim` here):
  - natively on the OpenCL driver: `native_sim`, best kernel time of its profiling events;
  - `clrace check --no-races` and `oclgrind-kernel` (the emulators alone);
  - `clrace check` (detector on) and `oclgrind-kernel --data-races`;
  - `clrace check` with `--threads 1` and with `--threads T` (T: this machine's cores), detector
    off and on;
and the peak resident memory of each command. The commands run round-robin (one run of each,
RUNS times), so a slow spell of a shared machine spreads over all of them. Times are wall
times of whole processes (start, compile from the warm cache, input set-up, kernel, exit), the
mean of the runs; memory is the largest peak RSS of the runs. Every kernel must be race-free:
a first `clrace check` warms the compile cache and must find nothing, and the `--data-races`
runs of Oclgrind must print nothing on stderr; the `clean` column says which of them did not.
A last line gives the start-up floor: the tools on one work-item of an empty kernel
(`floor/noop.sim`).

The timed clrace runs pass `--timings`, which prints the time of the kernel run itself (with its
checks) apart from reading the launch, building and reporting: `off/pocl` and `on/pocl` divide
that by pocl's kernel time, kernel against kernel; `on/pocl proc` divides clrace's whole process.
Those ratios use the mean of clrace's runs against the best of pocl's repetitions (in one
process); a summary line also gives clrace's best run against it. Threads are compared both ways: whole processes (the table's `2T/1T` columns), whose serial
start-up bounds the ratio, and kernel times (the summary's `kernel time` lines: the mean of the
runs, and the best run at each thread count).
Launch files from elsewhere (a kernel captured from a library at benchmark time) join with
`--extra PATH.sim`. With `--ceiling PATH` (`examples/core_ceiling`), a line gives what two
threads of plain arithmetic give over one on this machine before and after the kernels: the
ceiling of clrace's own two threads against one, which on a shared virtual machine moves from
run to run (two virtual CPUs may share a core, or other tenants take one).

It owns only the measuring and the table: it cannot see inside Oclgrind (its times are whole
processes), and it trusts the tools' exit status and stderr for findings.

Usage: run.py --clrace PATH --native PATH [--runs N] [--threads T] [--json FILE] [--ceiling PATH] [--extra SIM]...
              [KERNEL...]
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

# The five kernels of the first benchmark, then the two from real applications.
KERNELS = ["matmul128", "reduce", "histogram", "stencil", "vecadd", "mandelbrot", "bitonic"]
HERE = Path(__file__).resolve().parent


def measure(command, cwd):
    """Runs `command` once; returns (seconds, peak RSS in MiB, exit status, stderr text)."""
    start = time.perf_counter()
    child = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    return seconds, usage.ru_maxrss / 1024, child.returncode, stderr.decode(errors="replace")


def native_ms(native, sim, reps):
    out = subprocess.run([native, "--reps", str(reps), sim.name], cwd=sim.parent, capture_output=True, text=True)
    found = re.search(r"best_ms=([0-9.]+)", out.stderr)
    if out.returncode != 0 or not found:
        sys.exit(f"native run of {sim.name} failed:\n{out.stderr}")
    return float(found.group(1))


def kernel_seconds(stderr, command):
    """The kernel time that `clrace check --timings` printed, in seconds."""
    found = re.search(r"clrace: timings: .*kernel ([0-9.]+) ms", stderr)
    if not found:
        sys.exit(f"{' '.join(command)} printed no timings:\n{stderr[:2000]}")
    return float(found.group(1)) / 1e3


def geometric_mean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs))


def bench_kernel(sim, args):
    clrace, threads = args.clrace, str(args.threads)
    commands = {
        "off": [clrace, "check", "--timings", "--no-races", "--threads", threads, sim.name],
        "off_1": [clrace, "check", "--timings", "--no-races", "--threads", "1", sim.name],
        "on": [clrace, "check", "--timings", "--threads", threads, sim.name],
        "on_1": [clrace, "check", "--timings", "--threads", "1", sim.name],
        "ogr_off": ["oclgrind-kernel", sim.name],
        "ogr_on": ["oclgrind-kernel", "--data-races", sim.name],
    }
    # Warms the compile cache, and checks that clrace finds nothing.
    warm = [c for c in commands["on"] if c != "--timings"]
    _, _, status, stderr = measure(warm, sim.parent)
    clean = [] if status == 0 and not stderr.strip() else ["clrace"]
    times = {name: [] for name in commands}
    kernel = {name: [] for name in commands if not name.startswith("ogr")}
    rss = dict.fromkeys(commands, 0.0)
    ogr_noise = ""
    for _ in range(args.runs):
        # The first run after an Oclgrind run finds the caches cold (Oclgrind's gigabytes
        # evicted them): 4 to 5 ms more on a 20 ms run. One untimed run first, so that the
        # round's first timed command is not the only one to pay it.
        measure(commands["off"], sim.parent)
        for name, command in commands.items():
            seconds, mib, status, stderr = measure(command, sim.parent)
            if status != 0 and name.startswith("ogr"):
                sys.exit(f"{' '.join(command)} failed ({status}):\n{stderr}")
            times[name].append(seconds)
            rss[name] = max(rss[name], mib)
            if name in kernel:
                kernel[name].append(kernel_seconds(stderr, command))
            if name == "ogr_on" and stderr.strip():
                ogr_noise = stderr
    if ogr_noise:
        clean.append("oclgrind")
        print(f"oclgrind-kernel --data-races {sim.name} printed:\n{ogr_noise[:2000]}", file=sys.stderr)
    row = {name: sum(ts) / len(ts) for name, ts in times.items()}
    row.update({f"{name}_min": min(ts) for name, ts in times.items()})
    row.update({f"{name}_mb": mib for name, mib in rss.items()})
    row.update({f"{name}_kernel": sum(ts) / len(ts) for name, ts in kernel.items()})
    row.update({f"{name}_kernel_min": min(ts) for name, ts in kernel.items()})
    row["pocl_ms"] = native_ms(args.native, sim, max(5, args.runs))
    row["clean"] = "yes" if not clean else "NO: " + "+".join(clean)
    return row


def floor(args):
    """Mean wall times of the tools on one work-item of an empty kernel: start-up, compile from
    the warm cache, exit. What every row's time holds before any kernel work."""
    sim = HERE / "floor" / "noop.sim"
    commands = {
        "on": [args.clrace, "check", "--threads", str(args.threads), sim.name],
        "off": [args.clrace, "check", "--no-races", "--threads", str(args.threads), sim.name],
        "ogr_on": ["oclgrind-kernel", "--data-races", sim.name],
    }
    measure(commands["on"], sim.parent)
    times = {name: [] for name in commands}
    for _ in range(max(3, args.runs)):
        for name, command in commands.items():
            seconds, _, status, stderr = measure(command, sim.parent)
            if status != 0:
                sys.exit(f"{' '.join(command)} failed ({status}):\n{stderr}")
            times[name].append(seconds)
    return {name: sum(ts) / len(ts) for name, ts in times.items()}


def table(rows, threads):
    t = f"{threads}T"
    head = [
        "kernel", "pocl ms", "clrace `--no-races` s", "oclgrind s", "x", "clrace s", "oclgrind `--data-races` s", "x",
        f"1T off s", f"{t}/1T off", f"1T on s", f"{t}/1T on", "clrace MB", "oclgrind MB", "off/pocl", "on/pocl",
        "on/pocl proc", "clean",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for k, r in rows.items():
        cells = [
            k, f"{r['pocl_ms']:.2f}", f"{r['off']:.3f}", f"{r['ogr_off']:.3f}", f"{r['ogr_off'] / r['off']:.1f}",
            f"{r['on']:.3f}", f"{r['ogr_on']:.3f}", f"{r['ogr_on'] / r['on']:.1f}",
            f"{r['off_1']:.3f}", f"{r['off_1'] / r['off']:.2f}", f"{r['on_1']:.3f}", f"{r['on_1'] / r['on']:.2f}",
            f"{r['on_mb']:.0f}", f"{r['ogr_on_mb']:.0f}",
            f"{r['off_kernel'] * 1e3 / r['pocl_ms']:.1f}", f"{r['on_kernel'] * 1e3 / r['pocl_ms']:.1f}",
            f"{r['on'] * 1e3 / r['pocl_ms']:.0f}", r["clean"],
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def summary(rows, threads):
    def line(what, ratio, better="x"):
        values = {k: ratio(r) for k, r in rows.items()}
        worst = min(values, key=values.get)
        return (f"{what}: geometric mean {geometric_mean(values.values()):.2f}{better}, "
                f"worst {values[worst]:.2f}{better} ({worst})")

    out = [
        line("clrace vs oclgrind-kernel --data-races", lambda r: r["ogr_on"] / r["on"]),
        line("clrace --no-races vs oclgrind-kernel", lambda r: r["ogr_off"] / r["off"]),
        line(f"clrace {threads} threads vs 1, detector on", lambda r: r["on_1"] / r["on"]),
        line(f"clrace {threads} threads vs 1, detector off", lambda r: r["off_1"] / r["off"]),
        # The whole process holds a serial start (the floor below, the build from the cache, the
        # launch file's buffers): the kernel time is what the threads share.
        line(f"clrace {threads} threads vs 1, kernel time, detector on", lambda r: r["on_1_kernel"] / r["on_kernel"]),
        line(f"clrace {threads} threads vs 1, kernel time, detector off",
             lambda r: r["off_1_kernel"] / r["off_kernel"]),
        # Best run against best run: on a virtual machine whose scheduler packs a process's new
        # threads onto a busy core before it spreads them, a short kernel's two workers
        # sometimes run one after the other; the mean counts those runs, the best does not.
        line(f"clrace {threads} threads vs 1, best kernel time, detector on",
             lambda r: r["on_1_kernel_min"] / r["on_kernel_min"]),
        line(f"clrace {threads} threads vs 1, best kernel time, detector off",
             lambda r: r["off_1_kernel_min"] / r["off_kernel_min"]),
    ]
    def against_pocl(what, key):
        slow = {k: r[key("on")] * 1e3 / r["pocl_ms"] for k, r in rows.items()}
        slow_off = {k: r[key("off")] * 1e3 / r["pocl_ms"] for k, r in rows.items()}
        out.append(f"clrace vs native pocl, {what}: {geometric_mean(slow.values()):.1f}x slower with the detector "
                   f"(worst {max(slow.values()):.1f}x, {max(slow, key=slow.get)}), "
                   f"{geometric_mean(slow_off.values()):.1f}x without (worst {max(slow_off.values()):.1f}x, "
                   f"{max(slow_off, key=slow_off.get)})")

    against_pocl("kernel time against kernel time", lambda n: f"{n}_kernel")
    # pocl's figure is the best of its repetitions: clrace's best of its runs, like for like.
    against_pocl("best kernel time against pocl's best", lambda n: f"{n}_kernel_min")
    against_pocl("clrace's whole process against pocl's kernel time", lambda n: n)
    big = max(rows, key=lambda k: rows[k]["on_mb"])
    out.append(f"peak RSS with the detector: clrace at most {rows[big]['on_mb']:.0f} MB ({big}), "
               f"oclgrind-kernel --data-races at most {max(r['ogr_on_mb'] for r in rows.values()):.0f} MB")
    dirty = [k for k, r in rows.items() if r["clean"] != "yes"]
    out.append("every kernel race-free under both tools" if not dirty else f"FINDINGS in: {', '.join(dirty)}")
    return "\n".join(out)


def core_ceiling(probe):
    """What `examples/core_ceiling` measured (median, lowest and highest of its pairs), or None
    without the probe."""
    if not probe:
        return None
    run = subprocess.run([probe], capture_output=True, text=True, check=True)
    return json.loads(run.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clrace", required=True)
    parser.add_argument("--native", required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--json", help="also write every measurement here")
    parser.add_argument("--extra", action="append", default=[], metavar="SIM",
                        help="also time this launch file (any directory), after the kernels here")
    parser.add_argument("--ceiling", help="examples/core_ceiling: what two threads give over one on this machine, "
                        "measured before and after the kernels")
    parser.add_argument("kernels", nargs="*", help="launch files' names without .sim (default: all)")
    args = parser.parse_args()
    if args.runs < 1:
        sys.exit("--runs must be at least 1")
    args.clrace, args.native = (str(Path(p).resolve()) for p in (args.clrace, args.native))
    found = sorted(p.stem for p in HERE.glob("*.sim"))
    names = args.kernels or [k for k in KERNELS if k in found] + [k for k in found if k not in KERNELS]
    sims = [(name, HERE / f"{name}.sim") for name in names]
    sims += [(Path(p).stem, Path(p).resolve()) for p in args.extra]
    base = floor(args)
    ceiling = {"before": core_ceiling(args.ceiling)}
    rows = {}
    for name, sim in sims:
        if not sim.is_file():
            sys.exit(f"no launch file {sim}")
        rows[name] = bench_kernel(sim, args)
        r = rows[name]
        print(f"{name}: pocl {r['pocl_ms']:.2f} ms, clrace {r['on']:.3f} s (oclgrind {r['ogr_on']:.3f} s)",
              file=sys.stderr, flush=True)
    ceiling["after"] = core_ceiling(args.ceiling)
    print(f"{args.runs} run(s) of each, {args.threads} threads; seconds are means of wall time, "
          f"memory is peak RSS with the detector on; off/pocl and on/pocl are clrace's kernel time "
          f"(--timings) over pocl's, on/pocl proc clrace's whole process over pocl's kernel time\n")
    print(table(rows, args.threads))
    print()
    print(summary(rows, args.threads))
    print(f"start-up floor (one work-item of an empty kernel, in every time above): clrace {base['on']:.3f} s "
          f"({base['off']:.3f} s with --no-races), oclgrind-kernel --data-races {base['ogr_on']:.3f} s")
    if args.ceiling:
        b, a = ceiling["before"], ceiling["after"]
        print(f"this machine, two threads against one on work that shares nothing (examples/core_ceiling, "
              f"median of {b['pairs']} pairs): {b['median']:.2f}x before the kernels (lowest pair {b['min']:.2f}x), "
              f"{a['median']:.2f}x after ({a['min']:.2f}x): the ceiling of clrace's two threads against one")
    if args.json:
        every = {"runs": args.runs, "threads": args.threads, "floor": base, "ceiling": ceiling, "kernels": rows}
        Path(args.json).write_text(json.dumps(every, indent=1))


if __name__ == "__main__":
    main()
