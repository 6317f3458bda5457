/* A C host program for schedule exploration in the layer (CLRACE_EXPLORE): a work queue, whose
 * slots each work-item takes with atomic_inc and fills with its id, launched twice on 8
 * work-items in two groups. The slots' order depends on the order of the atomics (a
 * schedule-dependent result); their contents, as a multiset, do not. It prints the sum of the
 * slots (28 whatever the order) and exits with status 0 when every OpenCL call succeeded.
 *
 * Build: gcc -O2 -o explore tests/layer/explore.c -lOpenCL
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#define HOST_NAME "explore"
#include "common.h"

static const char *source =
    "kernel void queue(global int *head, global int *out)\n"
    "{\n"
    "    int slot = atomic_inc(head);\n"
    "    out[slot] = (int)get_global_id(0);\n"
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
    cl_kernel kernel = clCreateKernel(program, "queue", &err);
    check(err, "clCreateKernel");
    cl_mem head = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(cl_int), NULL, &err);
    check(err, "clCreateBuffer");
    cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, 8 * sizeof(cl_int), NULL, &err);
    check(err, "clCreateBuffer");
    check(clSetKernelArg(kernel, 0, sizeof head, &head), "clSetKernelArg");
    check(clSetKernelArg(kernel, 1, sizeof out, &out), "clSetKernelArg");
    int sum = 0;
    for (int launch = 0; launch < 2; launch++) {
        cl_int zero = 0, slots[8];
        check(clEnqueueWriteBuffer(queue, head, CL_TRUE, 0, sizeof zero, &zero, 0, NULL, NULL), "clEnqueueWriteBuffer");
        size_t global = 8, local = 4;
        check(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL), "clEnqueueNDRangeKernel");
        check(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof slots, slots, 0, NULL, NULL), "clEnqueueReadBuffer");
        for (int i = 0; i < 8; i++)
            sum += slots[i];
    }
    printf("sum = %d\n", sum);
    clReleaseMemObject(head);
    clReleaseMemObject(out);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return 0;
}
