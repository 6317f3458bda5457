// Sums each block of 64 floats in a kernel-declared __local tile, but forgot the barrier inside
// the tree loop: a work-item reads a partial sum another is still writing (a race in __local
// memory within a group, as clrace check reports it).
kernel void block_sum(global const float *in, global float *out)
{
  local float tile[64];
  uint lid = get_local_id(0);
  tile[lid] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = 32; s > 0; s >>= 1) {
    if (lid < s)
      tile[lid] += tile[lid + s];
  }
  if (lid == 0)
    out[get_group_id(0)] = tile[0];
}
