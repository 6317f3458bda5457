// Check 9, use "store": `in` is a noinit buffer (uninit_store.sim), read and stored to `out`.
kernel void uninit_store(global const float *in, global float *out)
{
  size_t i = get_global_id(0);
  out[i] = in[i] * 2.0f;
}
