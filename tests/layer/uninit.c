/* A C host program for the uninitialised-value check through the layer. The kernel `gather`
 * fills a __local table in work-items 0..7 only, then each work-item stores table[lid % k] to
 * `result`; the first argument says k:
 *   uninit  k = 16: work-items 8..15 store elements nothing wrote (an `uninitialized` finding,
 *           use "store")
 *   clean   k = 8: only written elements are stored
 * It prints result[0..3] and exits with status 0 when every OpenCL call succeeded.
 *
 * Build: gcc -O2 -o uninit tests/layer/uninit.c -lOpenCL
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <string.h>

#define HOST_NAME "uninit"
#include "common.h"

static const char *source =
    "kernel void gather(global int *result, int k)\n"
    "{\n"
    "    local int table[16];\n"
    "    size_t lid = get_local_id(0);\n"
    "    if (lid < 8)\n"
    "        table[lid] = (int)lid * 3;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    result[get_global_id(0)] = table[lid % k];\n"
    "}\n";

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "uninit";
    cl_int err;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    open_device(&device, &context, &queue);
    cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
    check(err, "clCreateProgramWithSource");
    check(clBuildProgram(program, 1, &device, "", NULL, NULL), "clBuildProgram");
    cl_kernel kernel = clCreateKernel(program, "gather", &err);
    check(err, "clCreateKernel");
    cl_int output[32] = {0};
    cl_mem result = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof output, output, &err);
    check(err, "clCreateBuffer");
    cl_int k = strcmp(mode, "clean") == 0 ? 8 : 16;
    check(clSetKernelArg(kernel, 0, sizeof result, &result), "clSetKernelArg");
    check(clSetKernelArg(kernel, 1, sizeof k, &k), "clSetKernelArg");
    size_t global = 32, local = 16;
    check(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL), "clEnqueueNDRangeKernel");
    check(clEnqueueReadBuffer(queue, result, CL_TRUE, 0, sizeof output, output, 0, NULL, NULL),
          "clEnqueueReadBuffer");
    printf("%s: result[0..3] = %d %d %d %d\n", mode, output[0], output[1], output[2], output[3]);
    clReleaseMemObject(result);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return 0;
}
