/* A plain C OpenCL host program for testing the clrace layer: the racy reduction of
 * examples/racy_reduction.rs. Four work-groups of 64 work-items sum their slice of 0, 1, 2, ...
 * in local memory, but the kernel forgets the barrier inside its loop, so clrace should report a
 * data race on `scratch` (the kernel has the barrier only where cl_khr_fp16 is defined, which
 * the clang defaults define and pocl's CPU device does not: the layer must see what the device
 * sees). It runs on the first GPU or CPU device of the first platform, prints
 * one partial sum per group and exits with status 0 when every OpenCL call succeeded.
 *
 * Build: gcc -O2 -o host tests/layer/host.c -lOpenCL
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

#define HOST_NAME "host"
#include "common.h"
#include <string.h>

#define GROUPS 4
#define GROUP_SIZE 64

static const char *source =
    "kernel void racy_reduce(global const float *in, global float *partial, local float *scratch)\n"
    "{\n"
    "    size_t lid = get_local_id(0);\n"
    "    scratch[lid] = in[get_global_id(0)];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (size_t s = get_local_size(0) / 2; s > 0; s >>= 1) {\n"
    "        if (lid < s)\n"
    "            scratch[lid] += scratch[lid + s];\n"
    "        /* BUG: a barrier(CLK_LOCAL_MEM_FENCE) belongs here. It is there only on devices with */\n"
    "        /* half precision, which pocl's CPU device lacks: the layer must compile for the device. */\n"
    "#ifdef cl_khr_fp16\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "#endif\n"
    "    }\n"
    "    if (lid == 0)\n"
    "        partial[get_group_id(0)] = scratch[0];\n"
    "}\n";

int main(int argc, char **argv)
{
    cl_int err;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    open_device(&device, &context, &queue);

    cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
    check(err, "clCreateProgramWithSource");
    err = clBuildProgram(program, 1, &device, "", NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[8192] = "";
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        fprintf(stderr, "host: clBuildProgram failed with error %d:\n%s\n", err, log);
        return 1;
    }
    cl_kernel kernel = clCreateKernel(program, "racy_reduce", &err);
    check(err, "clCreateKernel");

    float input[GROUPS * GROUP_SIZE], partial[GROUPS];
    for (int i = 0; i < GROUPS * GROUP_SIZE; i++)
        input[i] = (float)i;
    /* `host ... no-host-access`: the input buffer may not be read by the host (clrace copies it). */
    cl_mem_flags no_access = argc > 1 && strcmp(argv[1], "no-host-access") == 0 ? CL_MEM_HOST_NO_ACCESS : 0;
    cl_mem in_buf =
        clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR | no_access, sizeof input, input, &err);
    check(err, "clCreateBuffer(in)");
    cl_mem out_buf = clCreateBuffer(context, CL_MEM_WRITE_ONLY, sizeof partial, NULL, &err);
    check(err, "clCreateBuffer(partial)");

    check(clSetKernelArg(kernel, 0, sizeof(cl_mem), &in_buf), "clSetKernelArg(0)");
    check(clSetKernelArg(kernel, 1, sizeof(cl_mem), &out_buf), "clSetKernelArg(1)");
    check(clSetKernelArg(kernel, 2, sizeof(float) * GROUP_SIZE, NULL), "clSetKernelArg(2)");

    size_t global = GROUPS * GROUP_SIZE, local = GROUP_SIZE;
    check(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL), "clEnqueueNDRangeKernel");
    check(clEnqueueReadBuffer(queue, out_buf, CL_TRUE, 0, sizeof partial, partial, 0, NULL, NULL),
          "clEnqueueReadBuffer");

    for (int g = 0; g < GROUPS; g++) {
        float expected = 0.0f;
        for (int i = 0; i < GROUP_SIZE; i++)
            expected += input[g * GROUP_SIZE + i];
        printf("group %d: partial sum %g (a correct reduction gives %g)\n", g, partial[g], expected);
    }

    check(clReleaseMemObject(in_buf), "clReleaseMemObject");
    check(clReleaseMemObject(out_buf), "clReleaseMemObject");
    check(clReleaseKernel(kernel), "clReleaseKernel");
    check(clReleaseProgram(program), "clReleaseProgram");
    check(clReleaseCommandQueue(queue), "clReleaseCommandQueue");
    check(clReleaseContext(context), "clReleaseContext");
    return 0;
}
