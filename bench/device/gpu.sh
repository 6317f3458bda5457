#!/bin/bash
# Runs on a GPU machine what bench/device/bundle.sh prepared (no clang or Rust needed there):
# 1. the on-device gate (examples/on_device_gate) on each kernel of gpu-kernels.txt, three times;
# 2. the layer's examples with and without the layer over the GPU's driver (stdout compared),
#    their launches spooled, through the layer and through the fallback ICD;
# 3. each libOpenCL.so.1 installed there, asked to load the layer through OPENCL_LAYERS.
# Writes OUT/log.txt and OUT/spools.tgz; check the spools on a machine with clang-15:
# `tar xzf spools.tgz && clrace check spool/NAME`.
# Usage: bench/device/gpu.sh BUNDLE OUT [DRIVER]   (DRIVER: the vendor's ICD library; default
# NVIDIA's libnvidia-opencl.so.1 as ldconfig knows it)
set -u
[ $# -ge 2 ] || { echo "usage: bench/device/gpu.sh BUNDLE OUT [DRIVER]" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
bundle=$(cd "$1" && pwd); mkdir -p "$2"; out=$(cd "$2" && pwd)
exec > >(tee "$out/log.txt") 2>&1
driver=${3:-$(ldconfig -p | awk '/libnvidia-opencl.so.1 .*x86-64/ {print $NF; exit}')}
[ -n "$driver" ] || { echo "gpu.sh: no driver library (give it as the third argument)"; exit 2; }
echo "== $(date -u) driver $driver"
nvidia-smi -L 2>/dev/null
icd=$(mktemp -d); echo "$driver" > "$icd/driver.icd"
export OCL_ICD_VENDORS=$icd LD_LIBRARY_PATH=$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
bin=$bundle/bin

echo "== gate (bundle's ocl-icd loader)"
for run in 1 2 3; do
    for sim in $(cat "$root/bench/device/gpu-kernels.txt"); do
        spv=$bundle/spv/$(echo "$sim" | tr / _ | sed 's/\.sim$/.spv/')
        (cd "$root/$(dirname "$sim")" && timeout 120 "$bin/on_device_gate" --reps 50 --spirv "$spv" "$(basename "$sim")")
        echo "rc=$? run=$run $sim"
    done
done

echo "== layer examples (stdout with and without the layer; launches spooled)"
spools=$(mktemp -d)
for e in racy_reduction tiled_matmul histogram two_threads user_event; do
    timeout 60 "$bin/$e" >"$spools/$e.plain" 2>&1; plain=$?
    OPENCL_LAYERS=$bin/libclrace.so CLRACE_SPOOL=$spools/spool/$e timeout 120 "$bin/$e" >"$spools/$e.layer" 2>"$spools/$e.err"
    layer=$?
    cmp -s "$spools/$e.plain" "$spools/$e.layer" && same=same || same=DIFFER
    echo "$e: status $plain without the layer, $layer with it; stdout $same; $(ls "$spools/spool/$e/launches" 2>/dev/null | wc -l) spooled"
    head -4 "$spools/$e.layer"; cat "$spools/$e.err"
done
echo "== fallback ICD (OCL_ICD_VENDORS=libclrace_icd.so, CLRACE_ICD_VENDOR=the driver)"
OCL_ICD_VENDORS=$bin/libclrace_icd.so CLRACE_ICD_VENDOR=$driver CLRACE_SPOOL=$spools/spool/fallback_icd \
    timeout 120 "$bin/racy_reduction" 2>&1 | head -6
echo "status $?; $(ls "$spools/spool/fallback_icd/launches" 2>/dev/null | wc -l) spooled"
for loader in $(ldconfig -p | awk '/libOpenCL.so.1 .*x86-64/ {print $NF}'); do
    echo "== system loader $loader with OPENCL_LAYERS"
    one=$(mktemp -d); cp -L "$loader" "$one/libOpenCL.so.1"
    name=loader_$(basename "$one")
    LD_LIBRARY_PATH=$one OCL_ICD_FILENAMES=$driver OPENCL_LAYERS=$bin/libclrace.so CLRACE_SPOOL=$spools/spool/$name \
        timeout 120 "$bin/racy_reduction" >/dev/null 2>&1
    echo "status $?; $(ls "$spools/spool/$name/launches" 2>/dev/null | wc -l) spooled"
done
tar czf "$out/spools.tgz" -C "$spools" spool
echo "== done $(date -u)"
