/* A C host that builds its program in pieces, as some applications do: a header program, a
 * helper compiled on its own, a kernel compiled with the header, then clLinkProgram. The kernel
 * races (two work-items write one element through the helper), so clrace must follow the
 * separate compilation to report it with the right file and line.
 *
 * Build: gcc -O2 -o link tests/layer/link.c -lOpenCL
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

#define HOST_NAME "link"
#include "common.h"

static const char *header = "#define SLOT(i) ((i) / 2)\n";
static const char *helper =
    "void put(global int *out, size_t i, int v)\n"
    "{\n"
    "    out[i] = v;\n"
    "}\n";
static const char *kernel_source =
    "#include \"slots.h\"\n"
    "void put(global int *out, size_t i, int v);\n"
    "kernel void pairs(global int *out)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    put(out, SLOT(i), (int)i);\n"
    "}\n";

int main(void)
{
    cl_int err;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    open_device(&device, &context, &queue);

    cl_program h = clCreateProgramWithSource(context, 1, &header, NULL, &err);
    check(err, "clCreateProgramWithSource(header)");
    cl_program a = clCreateProgramWithSource(context, 1, &helper, NULL, &err);
    check(err, "clCreateProgramWithSource(helper)");
    cl_program b = clCreateProgramWithSource(context, 1, &kernel_source, NULL, &err);
    check(err, "clCreateProgramWithSource(kernel)");
    check(clCompileProgram(a, 1, &device, "", 0, NULL, NULL, NULL, NULL), "clCompileProgram(helper)");
    const char *names[] = {"slots.h"};
    check(clCompileProgram(b, 1, &device, "", 1, &h, names, NULL, NULL), "clCompileProgram(kernel)");
    cl_program inputs[] = {a, b};
    cl_program linked = clLinkProgram(context, 1, &device, "", 2, inputs, NULL, NULL, &err);
    check(err, "clLinkProgram");

    cl_kernel kernel = clCreateKernel(linked, "pairs", &err);
    check(err, "clCreateKernel");
    cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, 8 * sizeof(cl_int), NULL, &err);
    check(err, "clCreateBuffer");
    check(clSetKernelArg(kernel, 0, sizeof out, &out), "clSetKernelArg");
    size_t global = 16, local = 8;
    check(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL), "clEnqueueNDRangeKernel");
    cl_int result[8];
    check(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof result, result, 0, NULL, NULL), "clEnqueueReadBuffer");
    printf("linked program ran: %d slots written\n", 8);

    clReleaseMemObject(out);
    clReleaseKernel(kernel);
    clReleaseProgram(linked);
    clReleaseProgram(a);
    clReleaseProgram(b);
    clReleaseProgram(h);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return 0;
}
