/* Hosts that launch kernels many times, for the layer's spool and its admission order: each mode
 * prints only what the device computed, so that a run under the layer must print exactly what a
 * run without it prints.
 *
 *   many N          N launches of one kernel, each adding its launch number to a buffer
 *   kernels K N MB MS  K kernels (clpeak's pattern), each launched once (a warm-up, then MS ms
 *                   of pause) and N times in a row, 64 work-items on a buffer of MB MiB of its own
 *   mixed N MB      N launches of one kernel on a small buffer, then N of another on MB MiB
 *   abort N         N launches of one kernel, waited for; then abort() after a short sleep
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <string.h>
#include <unistd.h>

#define HOST_NAME "spool"
#include "common.h"

static const char *source =
    "kernel void bump(global int *x, int by) { x[get_global_id(0)] += by; }\n"
    "kernel void fill0(global int *x) { x[get_global_id(0)] += 1; }\n"
    "kernel void fill1(global int *x) { x[get_global_id(0)] += 2; }\n"
    "kernel void fill2(global int *x) { x[get_global_id(0)] += 3; }\n"
    "kernel void fill3(global int *x) { x[get_global_id(0)] += 4; }\n";

static cl_context context;
static cl_command_queue queue;
static cl_program program;

static cl_mem zeroed(size_t size)
{
    cl_int err;
    cl_mem b = clCreateBuffer(context, CL_MEM_READ_WRITE, size, NULL, &err);
    check(err, "clCreateBuffer");
    int zero = 0;
    check(clEnqueueFillBuffer(queue, b, &zero, sizeof zero, 0, size, 0, NULL, NULL), "clEnqueueFillBuffer");
    return b;
}

static int read_first(cl_mem b)
{
    int v = 0;
    check(clEnqueueReadBuffer(queue, b, CL_TRUE, 0, sizeof v, &v, 0, NULL, NULL), "clEnqueueReadBuffer");
    return v;
}

/* N launches of `bump` on 64 ints, the i-th adding i; returns the first int. */
static int bumps(int n)
{
    cl_int err;
    cl_kernel k = clCreateKernel(program, "bump", &err);
    check(err, "clCreateKernel");
    cl_mem x = zeroed(64 * sizeof(int));
    check(clSetKernelArg(k, 0, sizeof x, &x), "arg");
    size_t items = 64;
    for (int i = 1; i <= n; i++) {
        check(clSetKernelArg(k, 1, sizeof i, &i), "arg");
        check(clEnqueueNDRangeKernel(queue, k, 1, NULL, &items, NULL, 0, NULL, NULL), "launch");
    }
    check(clFinish(queue), "clFinish");
    return read_first(x);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    cl_device_id device;
    cl_int err;
    open_device(&device, &context, &queue);
    program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
    check(err, "clCreateProgramWithSource");
    check(clBuildProgram(program, 1, &device, "", NULL, NULL), "clBuildProgram");
    if (strcmp(mode, "many") == 0 && argc > 2) {
        printf("x[0] = %d\n", bumps(atoi(argv[2])));
    } else if ((strcmp(mode, "kernels") == 0 && argc > 5) || (strcmp(mode, "mixed") == 0 && argc > 3)) {
        int mixed = mode[0] == 'm';
        int kernels = mixed ? 1 : atoi(argv[2]), n = atoi(argv[mixed ? 2 : 3]);
        size_t size = (size_t)atoi(argv[mixed ? 3 : 4]) * 1024 * 1024, items = mixed ? size / sizeof(int) : 64;
        if (mixed)
            printf("x[0] = %d\n", bumps(n));
        for (int j = 0; j < kernels && j < 4; j++) {
            char name[8];
            snprintf(name, sizeof name, "fill%d", j);
            cl_kernel k = clCreateKernel(program, name, &err);
            check(err, name);
            cl_mem x = zeroed(size);
            check(clSetKernelArg(k, 0, sizeof x, &x), "arg");
            if (!mixed) {
                check(clEnqueueNDRangeKernel(queue, k, 1, NULL, &items, NULL, 0, NULL, NULL), "launch");
                check(clFinish(queue), "clFinish");
                usleep(atoi(argv[5]) * 1000);
            }
            for (int i = 0; i < n; i++)
                check(clEnqueueNDRangeKernel(queue, k, 1, NULL, &items, NULL, 0, NULL, NULL), "launch");
            check(clFinish(queue), "clFinish");
            printf("%s: x[0] = %d\n", name, read_first(x));
            clReleaseMemObject(x);
            clReleaseKernel(k);
        }
    } else if (strcmp(mode, "abort") == 0 && argc > 2) {
        printf("x[0] = %d\n", bumps(atoi(argv[2])));
        fflush(stdout);
        usleep(500 * 1000);
        abort();
    } else {
        fprintf(stderr, "usage: spool many N | kernels K N MB MS | mixed N MB | abort N\n");
        return 2;
    }
    return 0;
}
