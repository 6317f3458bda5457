// The race-free twin of block_sum_racy.cl: a barrier ends every step of the tree.
kernel void block_sum(global const float *in, global float *out)
{
  local float tile[64];
  uint lid = get_local_id(0);
  tile[lid] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = 32; s > 0; s >>= 1) {
    if (lid < s)
      tile[lid] += tile[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0)
    out[get_group_id(0)] = tile[0];
}
