// The demo kernel: each work-group sums its slice of the input in local memory
// (a tree reduction with a barrier per step) and writes one partial sum.
kernel void reduce_sum(global const float *in, global float *partial,
                       local float *scratch)
{
  size_t lid = get_local_id(0);
  scratch[lid] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (lid < s)
      scratch[lid] += scratch[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0)
    partial[get_group_id(0)] = scratch[0];
}
