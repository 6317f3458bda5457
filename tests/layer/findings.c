/* A C host program for the layer's print limit: one launch of a kernel in which all eight
 * work-items store their id to out[0], out[1] and out[2], three write-write races at three
 * lines. It prints out[3] (never written: 7) and exits with status 0 when every OpenCL call
 * succeeded.
 *
 * Build: gcc -O2 -o findings tests/layer/findings.c -lOpenCL
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#define HOST_NAME "findings"
#include "common.h"

static const char *source =
    "kernel void three_races(global int *out)\n"
    "{\n"
    "    int i = (int)get_global_id(0);\n"
    "    out[0] = i;\n"
    "    out[1] = i;\n"
    "    out[2] = i;\n"
    "}\n";

int main(void)
{
    cl_int err;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    open_device(&device, &context, &queue);
    cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
    check(err, "clCreateProgramWithSource");
    check(clBuildProgram(program, 1, &device, "", NULL, NULL), "clBuildProgram");
    cl_kernel kernel = clCreateKernel(program, "three_races", &err);
    check(err, "clCreateKernel");
    cl_int data[4] = {7, 7, 7, 7};
    cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof data, data, &err);
    check(err, "clCreateBuffer");
    check(clSetKernelArg(kernel, 0, sizeof out, &out), "clSetKernelArg");
    size_t global = 8, local = 8;
    check(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL), "clEnqueueNDRangeKernel");
    check(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof data, data, 0, NULL, NULL), "clEnqueueReadBuffer");
    printf("out[3] = %d\n", data[3]);
    clReleaseMemObject(out);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return 0;
}
