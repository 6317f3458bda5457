// bench/reduce.cl with its __local argument declared as bytes and read as floats, as the
// instrumenter's output declared __local arguments until the NVIDIA run (docs/on-device.md): if
// this fails on a driver where reduce.cl runs, the driver places __local arguments by their
// pointee's alignment.
kernel void reduce_bytes(global const float *in, global float *partial, local uchar *bytes)
{
  local float *scratch = (local float *)bytes;
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
