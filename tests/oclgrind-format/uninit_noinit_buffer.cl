// `in` is a noinit buffer: its values, nothing having written them, are stored to `out`.
kernel void uninit_noinit_buffer(global const int *in, global int *out)
{
  size_t i = get_global_id(0);
  out[i] = in[i] + 1;
}
