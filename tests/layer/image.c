/* A C host whose kernel reads an image through a constant sampler and a host-made linear
 * sampler and writes another image, two work-items to each pixel: a race the layer must report
 * at the write's line. The images come from both creation APIs (clCreateImage and the
 * OpenCL 1.1 clCreateImage2D); the input image is one the host may not read, so the layer
 * copies it through a scratch buffer. The work-item that reads 15 (the last pixel) also writes
 * sums[0]: a second race, which only a faithful copy of the image shows.
 *
 * Build: gcc -O2 -o image tests/layer/image.c -lOpenCL
 */
#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

#define HOST_NAME "image"
#include "common.h"

static const char *source =
    "constant sampler_t nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;\n"
    "kernel void brighten(read_only image2d_t in, sampler_t linear, write_only image2d_t half_width,\n"
    "                     global float *sums)\n"
    "{\n"
    "    int x = get_global_id(0), y = get_global_id(1);\n"
    "    float a = read_imagef(in, nearest, (int2)(x, y)).x;\n"
    "    float b = read_imagef(in, linear, (float2)(x + 1.0f, y + 0.5f)).x;\n"
    "    write_imagef(half_width, (int2)(x / 2, y), (float4)(a / 16.0f, b / 16.0f, 0.0f, 1.0f));\n"
    "    sums[y * 4 + x] = a + b;\n"
    "    if (a == 15.0f) sums[0] = b;\n"
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
    cl_kernel kernel = clCreateKernel(program, "brighten", &err);
    check(err, "clCreateKernel");

    float pixels[16];
    for (int i = 0; i < 16; i++)
        pixels[i] = (float)i;
    cl_image_format gray = {CL_R, CL_FLOAT};
    cl_image_desc desc = {0};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = 4;
    desc.image_height = 4;
    cl_mem_flags in_flags = CL_MEM_READ_ONLY | CL_MEM_HOST_NO_ACCESS | CL_MEM_COPY_HOST_PTR;
    cl_mem in = clCreateImage(context, in_flags, &gray, &desc, pixels, &err);
    check(err, "clCreateImage");
    cl_image_format rgba = {CL_RGBA, CL_UNORM_INT8};
    cl_mem half_width = clCreateImage2D(context, CL_MEM_WRITE_ONLY, &rgba, 2, 4, 0, NULL, &err);
    check(err, "clCreateImage2D");
    cl_sampler linear = clCreateSampler(context, CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_LINEAR, &err);
    check(err, "clCreateSampler");
    cl_mem sums = clCreateBuffer(context, CL_MEM_WRITE_ONLY, sizeof pixels, NULL, &err);
    check(err, "clCreateBuffer");
    check(clSetKernelArg(kernel, 0, sizeof in, &in), "clSetKernelArg(0)");
    check(clSetKernelArg(kernel, 1, sizeof linear, &linear), "clSetKernelArg(1)");
    check(clSetKernelArg(kernel, 2, sizeof half_width, &half_width), "clSetKernelArg(2)");
    check(clSetKernelArg(kernel, 3, sizeof sums, &sums), "clSetKernelArg(3)");
    size_t global[2] = {4, 4}, local[2] = {4, 1};
    float result[16];
    for (int launch = 0; launch < 2; launch++) {
        check(clEnqueueNDRangeKernel(queue, kernel, 2, NULL, global, local, 0, NULL, NULL), "clEnqueueNDRangeKernel");
        check(clEnqueueReadBuffer(queue, sums, CL_TRUE, 0, sizeof result, result, 0, NULL, NULL), "clEnqueueReadBuffer");
    }
    printf("image: sums[5] = %g, sums[15] = %g\n", result[5], result[15]);

    clReleaseMemObject(sums);
    clReleaseSampler(linear);
    clReleaseMemObject(half_width);
    clReleaseMemObject(in);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return 0;
}
