#!/usr/bin/env python3
"""Kernel times of two (or more) clrace binaries side by side, at one and two threads.

For each benchmark kernel, runs `BIN check --timings --threads T [--no-races] K.sim` for every
binary, thread count and mode in turn, round after round, and keeps the best `kernel N ms` that
`--timings` printed for each. Interleaving the binaries spreads a noisy spell of a shared
machine over all of them, and the best of many rounds is what the code can do when the machine
leaves it alone: the before/after table of the README's "Memory and speed" comes from it.

Usage: bench/ab.py [--rounds N] [--off] [--extra DIR/K.sim]... BIN [BIN ...]
(run from anywhere; the kernels are bench/'s seven plus any --extra launch file, such as
the CLBlast capture of `bench/capture.sh DIR`, DIR/xgemm.sim).
"""

import argparse
import pathlib
import re
import subprocess
import sys

KERNELS = ["matmul128", "reduce", "histogram", "stencil", "vecadd", "mandelbrot", "bitonic"]


def kernel_ms(binary, sim, threads, off):
    """The kernel time `--timings` printed, in ms, or None when the run printed none."""
    command = [binary, "check", "--timings", "--threads", str(threads)] + (["--no-races"] if off else []) + [sim.name]
    run = subprocess.run(command, cwd=sim.parent, capture_output=True, text=True)
    found = re.search(r"clrace: timings: .*kernel ([0-9.]+) ms", run.stderr)
    return float(found.group(1)) if found else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--off", action="store_true", help="also time each binary with --no-races")
    parser.add_argument("--extra", action="append", default=[], help="another launch file (repeatable)")
    parser.add_argument("binaries", nargs="+")
    args = parser.parse_args()
    here = pathlib.Path(__file__).resolve().parent
    sims = [here / f"{k}.sim" for k in KERNELS] + [pathlib.Path(e).resolve() for e in args.extra]
    binaries = [str(pathlib.Path(b).resolve()) for b in args.binaries]
    modes = [False, True] if args.off else [False]
    best = {}
    for _ in range(args.rounds):
        for sim in sims:
            for off in modes:
                for threads in (1, 2):
                    for binary in binaries:
                        ms = kernel_ms(binary, sim, threads, off)
                        key = (binary, sim, off, threads)
                        if ms is not None and ms < best.get(key, float("inf")):
                            best[key] = ms
    print(f"best of {args.rounds} interleaved rounds: kernel ms at 1 thread / 2 threads = ratio")
    for sim in sims:
        cells = []
        for binary in binaries:
            for off in modes:
                one, two = best.get((binary, sim, off, 1)), best.get((binary, sim, off, 2))
                tag = f"{pathlib.Path(binary).name}{' --no-races' if off else ''}"
                if one is None or two is None:
                    cells.append(f"{tag}: no timings")
                else:
                    cells.append(f"{tag}: {one:.1f} / {two:.1f} = {one / two:.2f}x")
        print(f"{sim.stem:<11} " + " | ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
