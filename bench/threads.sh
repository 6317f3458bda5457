#!/usr/bin/env bash
# Two threads against one, for each benchmark kernel, measured two ways:
#  - wall: the best of RUNS wall times of `clrace check K.sim --threads 1` and `--threads 2`
#    (what ci/bench reports; only meaningful on a machine with two idle cores);
#  - cpu: where the CPU time of a `--threads 2` run goes, from perf task-clock samples per
#    thread (every 0.25 ms of CPU): `serial` is the main thread (reading the launch file and
#    filling its buffers, compiling, reporting, freeing), `workers` the two worker threads; the
#    ratio `est` = CPU of a --threads 1 run / (serial + workers / 2) is what two idle cores would
#    give if the workers never waited for each other (their CPU time, compared with the 1-thread
#    run, shows whether the parallel part does extra work). It does not depend on how loaded the
#    machine is, which the wall ratio does.
# Usage: bench/threads.sh [RUNS] [CLRACE] [-- EXTRA CHECK OPTIONS]   (default 5 runs, target/release/clrace)
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")"
runs=${1:-5}
clrace=$(readlink -f "${2:-../target/release/clrace}")
shift $(($# < 2 ? $# : 2))
[ "${1:-}" = "--" ] && shift
extra=("$@")
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
printf '%-11s %9s %9s %6s %10s %14s %10s %6s\n' kernel wall_1T wall_2T ratio serial_ms workers_ms cpu_1T_ms est
for sim in matmul128 reduce histogram stencil vecadd mandelbrot bitonic; do
    best1=999 best2=999 serial=0 w1=0 w2=0 cpu1=0
    for _ in $(seq "$runs"); do
        for t in 1 2; do
            /usr/bin/time -f %e -o "$data/time" "$clrace" check "$sim.sim" --threads $t "${extra[@]}" >/dev/null 2>&1 || true
            e=$(tail -1 "$data/time")
            if [ $t = 1 ]; then best1=$(echo "if ($e < $best1) $e else $best1" | bc); else best2=$(echo "if ($e < $best2) $e else $best2" | bc); fi
        done
        perf record -q -e task-clock -c 250000 -o "$data/two" "$clrace" check "$sim.sim" --threads 2 "${extra[@]}" >/dev/null 2>&1 || true
        read -r s a b < <(perf script -i "$data/two" -F pid,tid 2>/dev/null | tr '/' ' ' | awk '
            { n[$2]++; if ($1 == $2) main = $1 }
            END { for (t in n) if (t != main) { if (n[t] > x) { y = x; x = n[t] } else if (n[t] > y) y = n[t] }
                  print n[main] + 0, x + 0, y + 0 }')
        perf record -q -e task-clock -c 250000 -o "$data/one" "$clrace" check "$sim.sim" --threads 1 "${extra[@]}" >/dev/null 2>&1 || true
        one=$(perf script -i "$data/one" -F tid 2>/dev/null | wc -l)
        serial=$((serial + s)) w1=$((w1 + a)) w2=$((w2 + b)) cpu1=$((cpu1 + one))
    done
    awk -v k="$sim" -v n="$runs" -v b1="$best1" -v b2="$best2" -v s="$serial" -v a="$w1" -v b="$w2" -v c="$cpu1" 'BEGIN {
        printf "%-11s %9.3f %9.3f %6.2f %10.1f %6.1f+%-7.1f %10.1f %6.2f\n",
            k, b1, b2, b1 / b2, s / n / 4, a / n / 4, b / n / 4, c / n / 4, c / (s + (a + b) / 2) }'
done
