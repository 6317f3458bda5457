// Check 9: copies only carry the uninitialised state. Work-items 0..7 write src; every one
// copies its element of src into dst (local to local: not a finding), then stores dst[lid % k]
// to global memory: with k = 8 only written elements are stored (uninit_copy_ok), with k = 16
// work-items 8..15 store what nothing wrote.
kernel void uninit_copy(global int *out, int k)
{
  local int src[16];
  local int dst[16];
  size_t lid = get_local_id(0);
  if (lid < 8)
    src[lid] = (int)lid + 1;
  barrier(CLK_LOCAL_MEM_FENCE);
  dst[lid] = src[lid];
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_global_id(0)] = dst[lid % k];
}
