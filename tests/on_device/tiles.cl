// A tile written, a barrier, then only read until the kernel ends: race-free, and no write of
// the reads' barrier interval can meet them.
kernel void tiles(global const int *in, global int *out)
{
  local int tile[64];
  size_t lid = get_local_id(0);
  tile[lid] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  int sum = 0;
  for (int k = 0; k < 64; k++)
    sum += tile[(lid + k) % 64];
  out[get_global_id(0)] = sum;
}
