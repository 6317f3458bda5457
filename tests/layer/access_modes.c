/* A C host program for the access-mode check through the layer. `scale` doubles `data` in
 * place and copies it to `result`; the host creates the buffers as the first argument says:
 *   ro      data CL_MEM_READ_ONLY: the store to it is an access-mode finding (read-only)
 *   sub-ro  data a sub-buffer made CL_MEM_READ_ONLY of a read-write buffer: the same finding
 *   wo      result CL_MEM_WRITE_ONLY, and `scale` also reads it back: a finding (write-only)
 *   clean   data CL_MEM_READ_ONLY, result CL_MEM_WRITE_ONLY, and the kernel `copy` that only
 *           reads the one and writes the other: nothing to report
 * It prints result[0..3] and exits with status 0 when every OpenCL call succeeded.
 *
 * Build: gcc -O2 -o access_modes tests/layer/access_modes.c -lOpenCL
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <string.h>

#define HOST_NAME "access_modes"
#include "common.h"

static const char *source =
    "kernel void scale(global int *data, global int *result, int read_result)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    data[i] = data[i] * 2;\n"
    "    result[i] = data[i] + (read_result ? result[i] : 0);\n"
    "}\n"
    "kernel void copy(global const int *data, global int *result, int unused)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    result[i] = data[i] * 2;\n"
    "}\n";

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "ro";
    cl_int err;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    open_device(&device, &context, &queue);
    cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
    check(err, "clCreateProgramWithSource");
    check(clBuildProgram(program, 1, &device, "", NULL, NULL), "clBuildProgram");
    int clean = strcmp(mode, "clean") == 0;
    cl_kernel kernel = clCreateKernel(program, clean ? "copy" : "scale", &err);
    check(err, "clCreateKernel");
    cl_int input[64], output[16] = {0};
    for (int i = 0; i < 64; i++)
        input[i] = i;
    cl_mem_flags data_flags = strcmp(mode, "ro") == 0 || clean ? CL_MEM_READ_ONLY : CL_MEM_READ_WRITE;
    cl_mem_flags result_flags = strcmp(mode, "wo") == 0 || clean ? CL_MEM_WRITE_ONLY : CL_MEM_READ_WRITE;
    cl_mem parent = clCreateBuffer(context, data_flags | CL_MEM_COPY_HOST_PTR, sizeof input, input, &err);
    check(err, "clCreateBuffer");
    cl_mem data = parent;
    if (strcmp(mode, "sub-ro") == 0) {
        cl_buffer_region region = {128, 16 * sizeof(cl_int)}; /* aligned for pocl: 1024 bits */
        data = clCreateSubBuffer(parent, CL_MEM_READ_ONLY, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
        check(err, "clCreateSubBuffer");
    }
    cl_mem result = clCreateBuffer(context, result_flags | CL_MEM_COPY_HOST_PTR, sizeof output, output, &err);
    check(err, "clCreateBuffer");
    cl_int read_result = strcmp(mode, "wo") == 0;
    check(clSetKernelArg(kernel, 0, sizeof data, &data), "clSetKernelArg");
    check(clSetKernelArg(kernel, 1, sizeof result, &result), "clSetKernelArg");
    check(clSetKernelArg(kernel, 2, sizeof read_result, &read_result), "clSetKernelArg");
    size_t global = 16, local = 8;
    check(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL), "clEnqueueNDRangeKernel");
    check(clEnqueueReadBuffer(queue, result, CL_TRUE, 0, sizeof output, output, 0, NULL, NULL),
          "clEnqueueReadBuffer");
    printf("%s: result[0..3] = %d %d %d %d\n", mode, output[0], output[1], output[2], output[3]);
    if (data != parent)
        clReleaseMemObject(data);
    clReleaseMemObject(parent);
    clReleaseMemObject(result);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return 0;
}
