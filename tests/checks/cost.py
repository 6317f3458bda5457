#!/usr/bin/env python3
"""The cost of a change on the bench kernels: the user time of `clrace check --threads 1 K.sim`
for two builds, run alternately, the median of RUNS runs each.

Usage: python3 tests/checks/cost.py BEFORE_CLRACE AFTER_CLRACE [RUNS] [KERNEL,...]
"""
import os
import resource
import statistics
import subprocess
import sys

KERNELS = ["matmul128", "reduce", "histogram", "stencil", "vecadd", "mandelbrot", "bitonic"]


def user_time(clrace, sim):
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    p = subprocess.run([clrace, "check", "--threads", "1", sim], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if p.returncode != 0:
        sys.exit("%s %s: exit %d: %s" % (clrace, sim, p.returncode, p.stderr.decode()[-300:]))
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    builds = [os.path.abspath(b) for b in sys.argv[1:3]]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 11
    kernels = sys.argv[4].split(",") if len(sys.argv) > 4 else KERNELS
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
    for kernel in kernels:
        times = [[], []]
        for _ in range(runs):
            for i, build in enumerate(builds):
                times[i].append(user_time(build, kernel + ".sim"))
        before, after = (statistics.median(t) for t in times)
        print("%-12s %.3f s -> %.3f s  (%+.0f%%)" % (kernel, before, after, 100 * (after / before - 1)), flush=True)


if __name__ == "__main__":
    main()
