#!/usr/bin/env bash
# Captures a kernel of a real library for the benchmark: CLBlast's single-precision GEMM, as
# the installed CLBlast (Debian's libclblast1) runs it, written as a launch file of our own
# making. A small host (below, ours) calls CLBlastSgemm once on 64x64x64 row-major matrices of
# small integers under the clrace layer with a spool; at that size CLBlast runs one kernel,
# XgemmDirectTN (its direct GEMM: no copy or transpose kernels around it), whose launch
# `clrace export` writes as OUTDIR/xgemm.sim beside CLBlast's program source OUTDIR/xgemm.cl.
# Nothing of CLBlast is in this repository: its source is taken from the library at capture.
#
# The file is exported --portable (without the device's extension options, which OpenCL
# drivers reject as build options) so that native_sim runs it too; the script checks that
# clrace finds the spooled launch and the file alike, and race-free.
# Usage: bench/capture.sh OUTDIR   (needs target/release/clrace and libclrace.so: cargo build
# --release; CLRACE=PATH for another clrace, whose libclrace.so is beside it)
set -euo pipefail
if [ $# -ne 1 ]; then
    echo "usage: bench/capture.sh OUTDIR" >&2
    exit 2
fi
out=$(realpath -m "$1")
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."
clrace=$(readlink -f "${CLRACE:-target/release/clrace}")
layer=$(dirname "$clrace")/libclrace.so
kernel=XgemmDirectTN
size=64

library=$(/sbin/ldconfig -p 2>/dev/null | awk '/libclblast\.so\.1 /{print $NF; exit}')
if [ -z "$library" ]; then
    for dir in /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64 /usr/lib /usr/local/lib; do
        [ -e "$dir/libclblast.so.1" ] && library=$dir/libclblast.so.1 && break
    done
fi
if [ -z "$library" ]; then
    echo "bench/capture.sh: CLBlast is not installed (no libclblast.so.1): apt-get install libclblast1" >&2
    exit 1
fi
for tool in "$clrace" "$layer"; do
    if [ ! -e "$tool" ]; then
        echo "bench/capture.sh: $tool is missing: cargo build --release first" >&2
        exit 1
    fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/sgemm.c" <<'EOF'
/* One CLBlastSgemm call, C = A B + C (row-major, M x N x K), on the first device of the first
 * platform that has one. Inputs are small integers, so every result is exact. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

/* CLBlast's C API, declared here: Debian's libclblast1 comes without its header. */
int CLBlastSgemm(int layout, int a_transpose, int b_transpose, size_t m, size_t n, size_t k, float alpha,
                 cl_mem a, size_t a_offset, size_t a_ld, cl_mem b, size_t b_offset, size_t b_ld, float beta,
                 cl_mem c, size_t c_offset, size_t c_ld, cl_command_queue *queue, cl_event *event);
enum { ROW_MAJOR = 101, NO_TRANSPOSE = 111 };

static void check(cl_int err, const char *what)
{
    if (err != CL_SUCCESS) {
        fprintf(stderr, "sgemm: %s failed (%d)\n", what, err);
        exit(1);
    }
}

static cl_mem buffer(cl_context context, cl_mem_flags flags, size_t count, float *data)
{
    cl_int err;
    cl_mem b = clCreateBuffer(context, flags | CL_MEM_COPY_HOST_PTR, count * sizeof *data, data, &err);
    check(err, "clCreateBuffer");
    return b;
}

int main(int argc, char **argv)
{
    size_t m = argc > 1 ? strtoul(argv[1], 0, 10) : 64, n = m, k = m;
    cl_platform_id platforms[8];
    cl_uint count = 0;
    cl_device_id device = 0;
    check(clGetPlatformIDs(8, platforms, &count), "clGetPlatformIDs");
    for (cl_uint i = 0; i < count && !device; i++)
        if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 1, &device, NULL) != CL_SUCCESS)
            device = 0;
    if (!device) {
        fprintf(stderr, "sgemm: no OpenCL device\n");
        return 1;
    }
    cl_int err;
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    check(err, "clCreateContext");
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
    check(err, "clCreateCommandQueue");
    float *a = malloc(m * k * sizeof *a), *b = malloc(k * n * sizeof *b), *c = malloc(m * n * sizeof *c);
    for (size_t i = 0; i < m * k; i++) a[i] = (float)((int)(i % 7) - 3);
    for (size_t i = 0; i < k * n; i++) b[i] = (float)((int)(i % 5) - 2);
    for (size_t i = 0; i < m * n; i++) c[i] = (float)(i % 3);
    cl_mem da = buffer(context, CL_MEM_READ_ONLY, m * k, a), db = buffer(context, CL_MEM_READ_ONLY, k * n, b);
    cl_mem dc = buffer(context, CL_MEM_READ_WRITE, m * n, c);
    int status = CLBlastSgemm(ROW_MAJOR, NO_TRANSPOSE, NO_TRANSPOSE, m, n, k, 1.0f, da, 0, k, db, 0, n, 1.0f, dc, 0,
                              n, &queue, NULL);
    if (status != 0) {
        fprintf(stderr, "sgemm: CLBlastSgemm failed (%d)\n", status);
        return 1;
    }
    check(clEnqueueReadBuffer(queue, dc, CL_TRUE, 0, m * n * sizeof *c, c, 0, NULL, NULL), "clEnqueueReadBuffer");
    double sum = 0;
    for (size_t i = 0; i < m * n; i++) sum += c[i];
    printf("sgemm %zux%zux%zu: sum of C = %.0f\n", m, n, k, sum);
    return 0;
}
EOF
gcc -O2 -o "$work/sgemm" "$work/sgemm.c" "$library" -lOpenCL
OPENCL_LAYERS=$layer CLRACE_SPOOL=$work/spool CLRACE_SPOOL_QUIET=1 "$work/sgemm" "$size" >/dev/null

mapfile -t found < <(grep -l "\"kernel\": *\"$kernel\"" "$work"/spool/launches/*.json 2>/dev/null || true)
if [ "${#found[@]}" -ne 1 ]; then
    echo "bench/capture.sh: expected one launch of $kernel in CLBlast's ${size}^3 SGEMM, found ${#found[@]}; its launches:" >&2
    grep -ho '"kernel": *"[^"]*"' "$work"/spool/launches/*.json >&2 || true
    exit 1
fi
mkdir -p "$out"
"$clrace" export --portable --name xgemm "${found[0]}" "$out" 2>"$work/export.log" || {
    cat "$work/export.log" >&2
    exit 1
}
# The spooled launch and the file check alike (a clean kernel's report is its summary).
spooled=$("$clrace" check --format json --threads 1 "${found[0]}" 2>&1 >/dev/null) || {
    echo "bench/capture.sh: clrace check of the spooled $kernel found something:" >&2
    echo "$spooled" >&2
    exit 1
}
exported=$(cd "$out" && "$clrace" check --format json --threads 1 xgemm.sim 2>&1 >/dev/null) || true
if [ "$spooled" != "$exported" ]; then
    printf 'bench/capture.sh: %s/xgemm.sim checks otherwise than the spooled launch:\n%s\n%s\n' \
        "$out" "$spooled" "$exported" >&2
    exit 1
fi
echo "bench/capture.sh: CLBlast's $kernel (SGEMM ${size}x${size}x${size}) in $out/xgemm.sim and $out/xgemm.cl"
