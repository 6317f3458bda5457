/* A host for CLRACE_ORDER=before: a racy kernel writes its output, and the host looks at what the
 * layer wrote (the file named in CLRACE_OUTPUT) once the launch's event is complete, and at the
 * event itself: its status, its profiling times and its callback.
 *
 *   report-first  one racy launch; after clFinish, says whether the report is already written
 *   app-event     the racy launch also waits on a user event of the application, set later
 *   two-queues    the racy launch on queue 1, a second kernel on queue 2 waiting on its event
 *   out-of-order  the racy launch and a clean one on an out-of-order queue, joined by events
 *   spin          a launch whose check cannot end (it spins on a flag the host sets), so only
 *                 the check's time limit opens its gate
 * Every mode prints the output buffer's first words and the launch event's status.
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <string.h>
#include <unistd.h>

#define HOST_NAME "before"
#include "common.h"

static const char *source =
    "kernel void racy(global int *out) { out[0] = get_global_id(0); out[1 + get_global_id(0)] = 7; }\n"
    "kernel void plus(global int *out) { out[2 + get_global_id(0)] += 100; }\n"
    "kernel void wait_flag(volatile global int *flag, global int *out)\n"
    "{ while (flag[0] == 0) ; out[1] = flag[0]; }\n";

static int called;

static void CL_CALLBACK on_complete(cl_event e, cl_int status, void *data)
{
    (void)e;
    (void)data;
    called = status == CL_COMPLETE ? 1 : 2;
}

/* Whether the file the layer reports to already holds a race report. */
static const char *reported(void)
{
    const char *path = getenv("CLRACE_OUTPUT");
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f)
        return "no file";
    char line[4096];
    int found = 0;
    while (fgets(line, sizeof line, f))
        found |= strstr(line, "\"kind\":\"race\"") != NULL;
    fclose(f);
    return found ? "yes" : "no";
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    cl_int err;
    open_device(&device, &context, &queue);
    cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
    check(err, "clCreateProgramWithSource");
    check(clBuildProgram(program, 1, &device, "", NULL, NULL), "clBuildProgram");
    cl_kernel racy = clCreateKernel(program, "racy", &err);
    check(err, "racy");
    cl_kernel plus = clCreateKernel(program, "plus", &err);
    check(err, "plus");
    int init[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof init, init, &err);
    check(err, "clCreateBuffer");
    check(clSetKernelArg(racy, 0, sizeof out, &out), "arg");
    check(clSetKernelArg(plus, 0, sizeof out, &out), "arg");
    size_t four = 4, one = 1;
    cl_event done;
    cl_command_queue reader = queue;

    if (strcmp(mode, "report-first") == 0) {
        clReleaseCommandQueue(queue);
        queue = clCreateCommandQueue(context, device, CL_QUEUE_PROFILING_ENABLE, &err);
        check(err, "profiling queue");
        reader = queue;
        check(clEnqueueNDRangeKernel(queue, racy, 1, NULL, &four, &four, 0, NULL, &done), "launch");
        check(clSetEventCallback(done, CL_COMPLETE, on_complete, NULL), "clSetEventCallback");
        check(clFinish(queue), "clFinish");
    } else if (strcmp(mode, "app-event") == 0) {
        cl_event gate = clCreateUserEvent(context, &err);
        check(err, "clCreateUserEvent");
        check(clEnqueueNDRangeKernel(queue, racy, 1, NULL, &four, &four, 1, &gate, &done), "launch");
        check(clFlush(queue), "clFlush");
        usleep(200 * 1000);
        cl_int status;
        check(clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL), "info");
        fprintf(stderr, "before the application's event: %s\n", status == CL_COMPLETE ? "complete" : "pending");
        check(clSetUserEventStatus(gate, CL_COMPLETE), "clSetUserEventStatus");
        check(clWaitForEvents(1, &done), "clWaitForEvents");
    } else if (strcmp(mode, "two-queues") == 0) {
        cl_command_queue second = clCreateCommandQueue(context, device, 0, &err);
        check(err, "second queue");
        check(clEnqueueNDRangeKernel(queue, racy, 1, NULL, &four, &four, 0, NULL, &done), "launch");
        check(clFlush(queue), "clFlush");
        check(clEnqueueNDRangeKernel(second, plus, 1, NULL, &one, &one, 1, &done, NULL), "launch 2");
        check(clFinish(second), "clFinish");
        reader = second;
    } else if (strcmp(mode, "out-of-order") == 0) {
        cl_command_queue ooo =
            clCreateCommandQueue(context, device, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
        check(err, "out-of-order queue");
        cl_event second;
        check(clEnqueueNDRangeKernel(ooo, racy, 1, NULL, &four, &four, 0, NULL, &done), "launch");
        check(clEnqueueNDRangeKernel(ooo, plus, 1, NULL, &one, &one, 1, &done, &second), "launch 2");
        check(clWaitForEvents(1, &second), "clWaitForEvents");
        reader = ooo;
    } else if (strcmp(mode, "spin") == 0) {
        static int flag[1024] __attribute__((aligned(4096)));
        cl_mem shared = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, sizeof flag, flag, &err);
        check(err, "shared");
        cl_kernel k = clCreateKernel(program, "wait_flag", &err);
        check(err, "wait_flag");
        check(clSetKernelArg(k, 0, sizeof shared, &shared), "arg");
        check(clSetKernelArg(k, 1, sizeof out, &out), "arg");
        check(clEnqueueNDRangeKernel(queue, k, 1, NULL, &one, &one, 0, NULL, &done), "launch");
        check(clFlush(queue), "clFlush");
        usleep(300 * 1000);
        ((volatile int *)flag)[0] = 7;
        check(clFinish(queue), "clFinish");
    } else {
        fprintf(stderr, "usage: before MODE\n");
        return 2;
    }
    cl_int status;
    check(clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL), "info");
    fprintf(stderr, "report before the host saw the launch end: %s\n", reported());
    int result[8];
    check(clEnqueueReadBuffer(reader, out, CL_TRUE, 0, sizeof result, result, 0, NULL, NULL), "read");
    printf("status %s; out = %d %d %d\n", status == CL_COMPLETE ? "complete" : status < 0 ? "error" : "pending",
           result[1], result[2], result[3]);
    if (status == CL_COMPLETE && strcmp(mode, "report-first") == 0) {
        cl_ulong queued = 0, start = 0, end = 0;
        check(clGetEventProfilingInfo(done, CL_PROFILING_COMMAND_QUEUED, sizeof queued, &queued, NULL), "queued");
        check(clGetEventProfilingInfo(done, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL), "start");
        check(clGetEventProfilingInfo(done, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL), "end");
        fprintf(stderr, "profiling: %s, waited %.1f ms\n", queued <= start && start <= end ? "ordered" : "disordered",
                (start - queued) / 1e6);
    }
    for (int i = 0; i < 100 && strcmp(mode, "report-first") == 0 && !called; i++)
        usleep(10 * 1000);
    if (strcmp(mode, "report-first") == 0)
        fprintf(stderr, "callback: %s\n", called == 1 ? "complete" : called ? "error" : "not called");
    return 0;
}
