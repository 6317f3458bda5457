/* A C host whose kernel takes an image, which the emulator does not run yet: the layer must let
 * every launch through untouched and say once that the kernel is not checked.
 *
 * Build: gcc -O2 -o image tests/layer/image.c -lOpenCL
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

static const char *source =
    "kernel void brighten(read_only image2d_t in, global float *out)\n"
    "{\n"
    "    int x = get_global_id(0), y = get_global_id(1);\n"
    "    out[y * 4 + x] = read_imagef(in, (int2)(x, y)).x * 2.0f;\n"
    "}\n";

static void check(cl_int err, const char *what)
{
    if (err != CL_SUCCESS) {
        fprintf(stderr, "image: %s failed with error %d\n", what, err);
        exit(1);
    }
}

int main(void)
{
    cl_int err;
    cl_platform_id platform;
    cl_device_id device;
    check(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_CPU, 1, &device, NULL), "clGetDeviceIDs");
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    check(err, "clCreateContext");
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
    check(err, "clCreateCommandQueue");
    cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
    check(err, "clCreateProgramWithSource");
    check(clBuildProgram(program, 1, &device, "", NULL, NULL), "clBuildProgram");
    cl_kernel kernel = clCreateKernel(program, "brighten", &err);
    check(err, "clCreateKernel");

    float pixels[16];
    for (int i = 0; i < 16; i++)
        pixels[i] = (float)i;
    cl_image_format format = {CL_R, CL_FLOAT};
    cl_image_desc desc = {0};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = 4;
    desc.image_height = 4;
    cl_mem image = clCreateImage(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &format, &desc, pixels, &err);
    check(err, "clCreateImage");
    cl_mem out = clCreateBuffer(context, CL_MEM_WRITE_ONLY, sizeof pixels, NULL, &err);
    check(err, "clCreateBuffer");
    check(clSetKernelArg(kernel, 0, sizeof image, &image), "clSetKernelArg(0)");
    check(clSetKernelArg(kernel, 1, sizeof out, &out), "clSetKernelArg(1)");
    size_t global[2] = {4, 4};
    float result[16];
    for (int launch = 0; launch < 2; launch++) {
        check(clEnqueueNDRangeKernel(queue, kernel, 2, NULL, global, NULL, 0, NULL, NULL), "clEnqueueNDRangeKernel");
        check(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof result, result, 0, NULL, NULL), "clEnqueueReadBuffer");
    }
    printf("image: out[5] = %g, out[15] = %g\n", result[5], result[15]);

    clReleaseMemObject(out);
    clReleaseMemObject(image);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return 0;
}
