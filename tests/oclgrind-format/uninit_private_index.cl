// An element of a private array that the loop (limit 2) left unwritten is used as an index.
kernel void uninit_private_index(global const int *data, global int *out, int limit)
{
  int idx[3];
  for (int i = 0; i < limit; i++)
    idx[i] = i;
  out[get_global_id(0)] = data[idx[2]];
}
