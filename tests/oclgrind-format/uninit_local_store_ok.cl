// Work-items 0..3 fill a __local table; each of the eight stores table[lid % k] to global
// memory. With k = 4 (this test) only written elements are stored.
kernel void uninit_local_store_ok(global int *out, int k)
{
  local int table[8];
  size_t lid = get_local_id(0);
  if (lid < 4)
    table[lid] = (int)lid + 10;
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_global_id(0)] = table[lid % k];
}
