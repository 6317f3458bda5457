/* A C host that caches its program's binary, as PyOpenCL and many applications do:
 *   binary source FILE   builds the program from source, saves its binary to FILE, runs it;
 *   binary binary FILE   creates the program from the binary in FILE, builds it, runs it;
 *   binary loop          builds a program whose kernel 'run' loops (for a check that runs out
 *                        of CLRACE_BUDGET and is named in a note).
 * The program's kernel is declared through a macro (as PyOpenCL's scan templates do) and races:
 * every work-item writes a[0].
 *
 * Build: gcc -O2 -o binary tests/layer/binary.c -lOpenCL
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOST_NAME "binary"
#include "common.h"

static const char *racy_source =
    "#define KERNEL __kernel\n"
    "#define REQD_WG_SIZE(X, Y, Z) __attribute__((reqd_work_group_size(X, Y, Z)))\n"
    "KERNEL\n"
    "REQD_WG_SIZE(4, 1, 1)\n"
    "void racy(__global int *a)\n"
    "{\n"
    "    a[0] = (int)get_global_id(0);\n"
    "}\n";

static const char *loop_source =
    "kernel void run(global int *a)\n"
    "{\n"
    "    int sum = 0;\n"
    "    for (int i = 0; i < a[1]; i++)\n"
    "        sum += i;\n"
    "    a[get_global_id(0) + 2] = sum;\n"
    "}\n";

static void save_binary(cl_program program, const char *path)
{
    size_t size;
    check(clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL), "CL_PROGRAM_BINARY_SIZES");
    unsigned char *bytes = malloc(size);
    check(clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof bytes, &bytes, NULL), "CL_PROGRAM_BINARIES");
    FILE *file = fopen(path, "wb");
    if (!file || fwrite(bytes, 1, size, file) != size || fclose(file) != 0) {
        fprintf(stderr, HOST_NAME ": cannot write %s\n", path);
        exit(1);
    }
    free(bytes);
}

static cl_program load_binary(cl_context context, cl_device_id device, const char *path)
{
    FILE *file = fopen(path, "rb");
    if (!file) {
        fprintf(stderr, HOST_NAME ": cannot read %s\n", path);
        exit(1);
    }
    fseek(file, 0, SEEK_END);
    size_t size = (size_t)ftell(file);
    fseek(file, 0, SEEK_SET);
    unsigned char *bytes = malloc(size);
    if (fread(bytes, 1, size, file) != size) {
        fprintf(stderr, HOST_NAME ": cannot read %s\n", path);
        exit(1);
    }
    fclose(file);
    cl_int err, status;
    const unsigned char *binaries[] = {bytes};
    cl_program program = clCreateProgramWithBinary(context, 1, &device, &size, binaries, &status, &err);
    check(err, "clCreateProgramWithBinary");
    check(status, "the binary's status");
    free(bytes);
    return program;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: binary source FILE | binary FILE | loop\n");
        return 2;
    }
    cl_int err;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    open_device(&device, &context, &queue);

    int loop = strcmp(argv[1], "loop") == 0;
    cl_program program;
    if (strcmp(argv[1], "binary") == 0 && argc > 2) {
        program = load_binary(context, device, argv[2]);
    } else {
        const char *source = loop ? loop_source : racy_source;
        program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
        check(err, "clCreateProgramWithSource");
    }
    check(clBuildProgram(program, 1, &device, "", NULL, NULL), "clBuildProgram");
    if (strcmp(argv[1], "source") == 0 && argc > 2)
        save_binary(program, argv[2]);

    cl_kernel kernel = clCreateKernel(program, loop ? "run" : "racy", &err);
    check(err, "clCreateKernel");
    cl_int data[6] = {0, 1000, 0, 0, 0, 0};
    cl_mem a = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof data, data, &err);
    check(err, "clCreateBuffer");
    check(clSetKernelArg(kernel, 0, sizeof a, &a), "clSetKernelArg");
    size_t global = 4, local = 4;
    /* Waiting for the launch's own event: rusticl may otherwise still call it submitted at
     * exit, and its check would be lost (issue 27, item 2). */
    cl_event done;
    check(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, &done), "clEnqueueNDRangeKernel");
    check(clEnqueueReadBuffer(queue, a, CL_TRUE, 0, sizeof data, data, 0, NULL, NULL), "clEnqueueReadBuffer");
    check(clWaitForEvents(1, &done), "clWaitForEvents");
    clReleaseEvent(done);
    printf("%s ran\n", loop ? "run" : "racy");

    clReleaseMemObject(a);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return 0;
}
