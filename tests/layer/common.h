/* What the C hosts of the layer tests share: exiting with a message when an OpenCL call failed,
 * and the first GPU or CPU device of the first platform with a context and an in-order queue.
 * A host defines HOST_NAME (its messages' prefix) and includes <CL/cl.h> first.
 */
#include <stdio.h>
#include <stdlib.h>

/* Exits with a message when an OpenCL call failed. */
static void check(cl_int err, const char *what)
{
    if (err != CL_SUCCESS) {
        fprintf(stderr, HOST_NAME ": %s failed with error %d\n", what, err);
        exit(1);
    }
}

/* The first GPU or CPU device of the first platform, a context on it and an in-order queue. */
static void open_device(cl_device_id *device, cl_context *context, cl_command_queue *queue)
{
    cl_int err;
    cl_platform_id platform;
    check(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_CPU, 1, device, NULL), "clGetDeviceIDs");
    *context = clCreateContext(NULL, 1, device, NULL, NULL, &err);
    check(err, "clCreateContext");
    *queue = clCreateCommandQueue(*context, *device, 0, &err);
    check(err, "clCreateCommandQueue");
}
