/* A C host program for the spool: a racy kernel (every work-item stores to x[0]) and a clean
 * one (each stores its own element), launched 25 times each in turn with another scalar
 * argument every time. It prints the clean kernel's last result and exits with status 0 when
 * every OpenCL call succeeded.
 *
 * Build: gcc -O2 -o launches tests/layer/launches.c -lOpenCL
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#define HOST_NAME "launches"
#include "common.h"

static const char *source =
    "kernel void racy(global int *x, int n)\n"
    "{\n"
    "    x[0] = (int)get_global_id(0) + n;\n"
    "}\n"
    "kernel void clean(global int *x, int n)\n"
    "{\n"
    "    x[get_global_id(0)] = (int)get_global_id(0) + n;\n"
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
    cl_kernel kernels[2];
    kernels[0] = clCreateKernel(program, "racy", &err);
    check(err, "clCreateKernel");
    kernels[1] = clCreateKernel(program, "clean", &err);
    check(err, "clCreateKernel");
    cl_int data[16] = {0};
    cl_mem x = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof data, data, &err);
    check(err, "clCreateBuffer");
    for (cl_int n = 0; n < 25; n++) {
        for (int k = 0; k < 2; k++) {
            check(clSetKernelArg(kernels[k], 0, sizeof x, &x), "clSetKernelArg");
            check(clSetKernelArg(kernels[k], 1, sizeof n, &n), "clSetKernelArg");
            size_t global = 16, local = 8;
            check(clEnqueueNDRangeKernel(queue, kernels[k], 1, NULL, &global, &local, 0, NULL, NULL),
                  "clEnqueueNDRangeKernel");
        }
    }
    check(clEnqueueReadBuffer(queue, x, CL_TRUE, 0, sizeof data, data, 0, NULL, NULL), "clEnqueueReadBuffer");
    printf("x[15] = %d\n", data[15]);
    clReleaseMemObject(x);
    clReleaseKernel(kernels[0]);
    clReleaseKernel(kernels[1]);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return 0;
}
