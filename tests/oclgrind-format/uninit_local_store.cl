// Work-items 0..3 fill a __local table; each of the eight stores table[lid % k] to global
// memory. With k = 8 (this test) work-items 4..7 store elements nothing wrote.
kernel void uninit_local_store(global int *out, int k)
{
  local int table[8];
  size_t lid = get_local_id(0);
  if (lid < 4)
    table[lid] = (int)lid + 10;
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_global_id(0)] = table[lid % k];
}
