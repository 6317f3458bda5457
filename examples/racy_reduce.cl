// A tree reduction that forgot the barrier inside its loop: work-items read partial sums that
// others are still writing.
kernel void racy_reduce(global const float *in, global float *partial, local float *scratch)
{
    size_t lid = get_local_id(0);
    scratch[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = get_local_size(0) / 2; s > 0; s >>= 1) {
        if (lid < s)
            scratch[lid] += scratch[lid + s];
    }
    if (lid == 0)
        partial[get_group_id(0)] = scratch[0];
}
