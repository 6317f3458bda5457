// A classic off-by-one: the last work-item reads one element past the end.
kernel void shift_left(global const int *in, global int *out)
{
  size_t i = get_global_id(0);
  out[i] = in[i + 1];
}
