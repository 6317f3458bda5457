"""A PyOpenCL application for the layer's tests: PyOpenCL's own elementwise and reduction kernels
(race-free), then a kernel of ours that forgets a barrier. Prints only what the device computed,
so a run under clrace must print exactly what a run without it prints."""

import numpy as np
import pyopencl as cl
import pyopencl.array as cl_array
from pyopencl.elementwise import ElementwiseKernel
from pyopencl.reduction import ReductionKernel

context = cl.create_some_context(interactive=False)
queue = cl.CommandQueue(context)

a = cl_array.to_device(queue, np.arange(4096, dtype=np.float32))
b = cl_array.to_device(queue, np.full(4096, 2.0, dtype=np.float32))

axpb = ElementwiseKernel(context, "float *x, float *y, float *z", "z[i] = 3.0f * x[i] + y[i]", "axpb")
z = cl_array.empty_like(a)
axpb(a, b, z)
print("elementwise:", z.get()[:4].tolist(), z.get()[-1])

dot = ReductionKernel(context, np.float32, neutral="0", reduce_expr="a+b", map_expr="x[i]*y[i]",
                      arguments="__global const float *x, __global const float *y")
print("reduction:", dot(a, b).get())
print("sum:", cl_array.sum(a).get())

racy = cl.Program(context, """
kernel void block_sum(global const float *in, global float *out, local float *scratch)
{
    size_t l = get_local_id(0);
    scratch[l] = in[get_global_id(0)];
    /* missing barrier(CLK_LOCAL_MEM_FENCE) */
    if (l == 0) {
        float s = 0;
        for (size_t i = 0; i < get_local_size(0); i++)
            s += scratch[i];
        out[get_group_id(0)] = s;
    }
}
""").build()
out = cl_array.empty(queue, 4096 // 64, np.float32)
racy.block_sum(queue, (4096,), (64,), a.data, out.data, cl.LocalMemory(64 * 4))
queue.finish()
print("launched block_sum over", out.shape[0], "groups")
