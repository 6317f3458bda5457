/* Hosts that stress the layer inside its application: each mode is a way an application can
 * make a checking layer crash it, stall it or grow it, and prints only what the device computed,
 * so that a run under the layer must print exactly what a run without it prints.
 *
 *   spin-then-many  a launch whose check never ends (it spins on a host-set flag that its
 *                   snapshot holds at 0), then 40 launches of another kernel, each waited for
 *   gated-many      20 launches gated on one user event, set after they are all enqueued
 *   gated-exit      exit with a launch gated on a user event that is never set
 *   fork-exit       fork after a launch; the child exits at once, the parent waits for it
 *   many N ITEMS    N launches of one kernel of ITEMS work-items
 *   no-buffers      a kernel with only a __local argument and a scalar (a __local race)
 *   huge-global     a launch of 2^40 work-items the driver accepts, then exit(0) while it runs
 *   huge-global-2d  2^20 x 2^20 work-items with no local size, then exit(0) while it runs
 *   repeat N        N launches of one racy kernel
 *   busy-exit       exit(0) with 10 launches still queued on the device
 *   oob N           one launch of N work-items, every one reading just past the end of a buffer
 *   crash           one launch, then a segmentation fault
 *   print-source    prints the program's source (for a copy in a source directory)
 *   async-unwaited  one launch whose async_work_group_copy is never waited for
 *   big MB          a buffer of MB MiB, every int of it written by one launch (`number`: each its
 *                   own index, so no two words stored are alike); the peak resident memory is
 *                   printed on stderr (`maxrss_kb N`)
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdint.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HOST_NAME "hostile"
#include "common.h"

static const char *source =
    "kernel void wait_flag(volatile global int *flag, global int *out)\n"
    "{ while (flag[0] == 0) ; out[0] = flag[0]; }\n"
    "kernel void bump(global int *x) { x[get_global_id(0)] += 1; }\n"
    "kernel void number(global int *x) { x[get_global_id(0)] += get_global_id(0); }\n"
    "kernel void only_local(local int *tmp, int n)\n"
    "{ tmp[0] = get_local_id(0) + n; barrier(CLK_LOCAL_MEM_FENCE); }\n"
    "kernel void racy(global int *x) { x[0] = get_global_id(0); }\n"
    "kernel void nothing(global int *x) { if (get_global_id(0) == 0 && get_global_id(1) == 0) x[0] = 1; }\n"
    "kernel void past_end(global const int *in, global int *out)\n"
    "{ if (in[16 + get_global_id(0) % 16] == 12345) out[0] = 1; }\n"
    "kernel void unwaited_copy(global const int *in, global int *out)\n"
    "{ local int tile[64]; event_t e = async_work_group_copy(tile, in, 64, 0);\n"
    "  out[get_global_id(0)] = in[get_global_id(0)] + 1; }\n";

static cl_context context;
static cl_command_queue queue;
static cl_program program;

static cl_kernel kernel(const char *name)
{
    cl_int err;
    cl_kernel k = clCreateKernel(program, name, &err);
    check(err, name);
    return k;
}

static cl_mem buffer(cl_mem_flags flags, size_t size, void *host)
{
    cl_int err;
    cl_mem b = clCreateBuffer(context, flags, size, host, &err);
    check(err, "clCreateBuffer");
    return b;
}

static void launch(cl_kernel k, size_t items, cl_uint waits, const cl_event *list)
{
    check(clEnqueueNDRangeKernel(queue, k, 1, NULL, &items, NULL, waits, list, NULL), "clEnqueueNDRangeKernel");
}

static int read_first(cl_mem b)
{
    int v = 0;
    check(clEnqueueReadBuffer(queue, b, CL_TRUE, 0, sizeof v, &v, 0, NULL, NULL), "clEnqueueReadBuffer");
    return v;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "print-source") == 0) {
        fputs(source, stdout);
        return 0;
    }
    cl_device_id device;
    cl_int err;
    open_device(&device, &context, &queue);
    program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
    check(err, "clCreateProgramWithSource");
    check(clBuildProgram(program, 1, &device, "", NULL, NULL), "clBuildProgram");
    int zeros[1024] = {0};
    cl_mem out = buffer(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zeros, zeros);

    if (strcmp(mode, "spin-then-many") == 0) {
        static int flag[1024] __attribute__((aligned(4096)));
        cl_mem shared = buffer(CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, sizeof flag, flag);
        cl_kernel k = kernel("wait_flag");
        check(clSetKernelArg(k, 0, sizeof shared, &shared), "arg");
        check(clSetKernelArg(k, 1, sizeof out, &out), "arg");
        launch(k, 1, 0, NULL);
        check(clFlush(queue), "clFlush");
        usleep(300 * 1000);
        ((volatile int *)flag)[0] = 7; /* the device kernel spins on this very memory */
        check(clFinish(queue), "clFinish");
        cl_kernel b = kernel("bump");
        check(clSetKernelArg(b, 0, sizeof out, &out), "arg");
        for (int i = 0; i < 40; i++) {
            launch(b, 4, 0, NULL);
            check(clFinish(queue), "clFinish");
        }
        printf("out[0] = %d\n", read_first(out));
    } else if (strcmp(mode, "gated-many") == 0) {
        cl_event gate = clCreateUserEvent(context, &err);
        check(err, "clCreateUserEvent");
        cl_kernel b = kernel("bump");
        check(clSetKernelArg(b, 0, sizeof out, &out), "arg");
        for (int i = 0; i < 20; i++)
            launch(b, 64, 1, &gate);
        check(clSetUserEventStatus(gate, CL_COMPLETE), "clSetUserEventStatus");
        check(clFinish(queue), "clFinish");
        printf("out[0] = %d\n", read_first(out));
    } else if (strcmp(mode, "gated-exit") == 0) {
        cl_event gate = clCreateUserEvent(context, &err);
        check(err, "clCreateUserEvent");
        cl_kernel b = kernel("bump");
        check(clSetKernelArg(b, 0, sizeof out, &out), "arg");
        launch(b, 64, 1, &gate);
        check(clFlush(queue), "clFlush");
        printf("leaving with a gated launch\n");
        fflush(stdout);
        exit(0);
    } else if (strcmp(mode, "fork-exit") == 0) {
        cl_kernel b = kernel("bump");
        check(clSetKernelArg(b, 0, sizeof out, &out), "arg");
        launch(b, 1024, 0, NULL);
        check(clFinish(queue), "clFinish");
        fflush(stdout);
        pid_t child = fork();
        if (child == 0)
            exit(0);
        int status = 0;
        waitpid(child, &status, 0);
        printf("child exited %d; out[0] = %d\n", WEXITSTATUS(status), read_first(out));
    } else if (strcmp(mode, "many") == 0 && argc > 3) {
        int n = atoi(argv[2]);
        size_t items = (size_t)atol(argv[3]);
        cl_mem big = buffer(CL_MEM_READ_WRITE, items * sizeof(int), NULL);
        int zero = 0;
        check(clEnqueueFillBuffer(queue, big, &zero, sizeof zero, 0, items * sizeof(int), 0, NULL, NULL), "fill");
        cl_kernel b = kernel("bump");
        check(clSetKernelArg(b, 0, sizeof big, &big), "arg");
        for (int i = 0; i < n; i++)
            launch(b, items, 0, NULL);
        check(clFinish(queue), "clFinish");
        printf("big[0] = %d\n", read_first(big));
    } else if (strcmp(mode, "no-buffers") == 0) {
        int n = 5;
        cl_kernel k = kernel("only_local");
        check(clSetKernelArg(k, 0, 64 * sizeof(int), NULL), "arg");
        check(clSetKernelArg(k, 1, sizeof n, &n), "arg");
        size_t items = 64, local = 64;
        check(clEnqueueNDRangeKernel(queue, k, 1, NULL, &items, &local, 0, NULL, NULL), "launch");
        check(clFinish(queue), "clFinish");
        printf("done\n");
    } else if (strcmp(mode, "huge-global") == 0 || strcmp(mode, "huge-global-2d") == 0) {
        cl_kernel k = kernel("nothing");
        check(clSetKernelArg(k, 0, sizeof out, &out), "arg");
        int two = mode[11] == '-';
        size_t global[2] = {two ? (size_t)1 << 20 : (size_t)1 << 40, (size_t)1 << 20};
        size_t local[2] = {1024, 1};
        err = clEnqueueNDRangeKernel(queue, k, two ? 2 : 1, NULL, global, two ? NULL : local, 0, NULL, NULL);
        printf("enqueue: %d\n", err);
        fflush(stdout);
        /* Exit while the device runs it, once the driver has compiled it: pocl still compiling
         * when the process exits crashes now and then, with or without a layer. */
        check(clFlush(queue), "clFlush");
        usleep(500 * 1000);
        exit(0);
    } else if (strcmp(mode, "repeat") == 0 && argc > 2) {
        int n = atoi(argv[2]);
        cl_kernel k = kernel("racy");
        check(clSetKernelArg(k, 0, sizeof out, &out), "arg");
        for (int i = 0; i < n; i++)
            launch(k, 64, 0, NULL);
        check(clFinish(queue), "clFinish");
        printf("launched %d\n", n);
    } else if (strcmp(mode, "busy-exit") == 0) {
        cl_mem big = buffer(CL_MEM_READ_WRITE, (1 << 22) * sizeof(int), NULL);
        cl_kernel b = kernel("bump");
        check(clSetKernelArg(b, 0, sizeof big, &big), "arg");
        for (int i = 0; i < 10; i++)
            launch(b, 1 << 22, 0, NULL);
        check(clFlush(queue), "clFlush");
        printf("leaving with launches queued\n");
        fflush(stdout);
        exit(0);
    } else if (strcmp(mode, "oob") == 0 && argc > 2) {
        cl_kernel k = kernel("past_end");
        cl_mem small = buffer(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, 16 * sizeof(int), zeros);
        check(clSetKernelArg(k, 0, sizeof small, &small), "arg");
        check(clSetKernelArg(k, 1, sizeof out, &out), "arg");
        launch(k, (size_t)atol(argv[2]), 0, NULL);
        check(clFinish(queue), "clFinish");
        printf("out[0] = %d\n", read_first(out));
    } else if (strcmp(mode, "async-unwaited") == 0) {
        cl_kernel k = kernel("unwaited_copy");
        cl_mem in = buffer(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, 64 * sizeof(int), zeros);
        check(clSetKernelArg(k, 0, sizeof in, &in), "arg");
        check(clSetKernelArg(k, 1, sizeof out, &out), "arg");
        size_t items = 64, local = 64;
        check(clEnqueueNDRangeKernel(queue, k, 1, NULL, &items, &local, 0, NULL, NULL), "launch");
        check(clFinish(queue), "clFinish");
        printf("out[0] = %d\n", read_first(out));
    } else if (strcmp(mode, "crash") == 0) {
        cl_kernel b = kernel("bump");
        check(clSetKernelArg(b, 0, sizeof out, &out), "arg");
        launch(b, 64, 0, NULL);
        check(clFinish(queue), "clFinish");
        signal(SIGSEGV, SIG_DFL); /* the driver may have its own handler */
        raise(SIGSEGV);
    } else if (strcmp(mode, "big") == 0 && argc > 2) {
        size_t items = (size_t)atol(argv[2]) << 18;
        cl_mem big = buffer(CL_MEM_READ_WRITE, items * sizeof(int), NULL);
        int zero = 0;
        check(clEnqueueFillBuffer(queue, big, &zero, sizeof zero, 0, items * sizeof(int), 0, NULL, NULL), "fill");
        cl_kernel b = kernel("number");
        check(clSetKernelArg(b, 0, sizeof big, &big), "arg");
        launch(b, items, 0, NULL);
        check(clFinish(queue), "clFinish");
        printf("big[0] = %d\n", read_first(big));
    } else {
        fprintf(stderr, "usage: hostile MODE [ARGS]\n");
        return 2;
    }
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    fprintf(stderr, "maxrss_kb %ld\n", usage.ru_maxrss);
    return 0;
}
