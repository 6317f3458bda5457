#!/bin/sh
# Prepares what bench/device/gpu.sh runs on a GPU machine that has an OpenCL driver but neither
# clang-15 nor Rust: stripped release builds of clrace, the layer, the fallback ICD, the on-device
# gate and the layer's examples; ocl-icd's loader (it honours OPENCL_LAYERS; the one CUDA ships
# does not); and clrace's compiled form (SPIR-V) of each gate kernel, written by one run of the
# gate on this machine's first OpenCL device (pocl), which also checks that each one runs.
# Usage: bench/device/bundle.sh DIR   (DIR inside the checkout and ignored by git, to travel with it)
set -eu
[ $# -eq 1 ] || { echo "usage: bench/device/bundle.sh DIR" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$1/bin" "$1/lib" "$1/spv"
dir=$(cd "$1" && pwd)
cd "$root"
cargo build --release --quiet --workspace --examples
for f in clrace libclrace.so libclrace_icd.so; do cp "target/release/$f" "$dir/bin/"; done
for e in on_device_gate racy_reduction tiled_matmul histogram two_threads user_event; do
    cp "target/release/examples/$e" "$dir/bin/"
done
strip "$dir"/bin/*
cp -L "$(ldconfig -p | awk '/libOpenCL.so.1 .*x86-64/ {print $NF; exit}')" "$dir/lib/libOpenCL.so.1"
for sim in $(cat bench/device/gpu-kernels.txt); do
    spv="$dir/spv/$(echo "$sim" | tr / _ | sed 's/\.sim$/.spv/')"
    rm -f "$spv"
    (cd "$(dirname "$sim")" && "$root/target/release/examples/on_device_gate" --reps 1 --spirv "$spv" "$(basename "$sim")" >/dev/null) ||
        [ $? -eq 1 ] || { echo "bundle: the gate failed on $sim" >&2; exit 1; }
done
echo "bundle: $dir ($(du -sh "$dir" | cut -f1)); on the GPU machine: bench/device/gpu.sh $1 OUTDIR"
