// Check 9, use "address": idx[3] is read before anything wrote it (limit 3) and used as an index.
kernel void uninit_address(global const int *data, global int *out, int limit)
{
  int idx[4];
  for (int i = 0; i < limit; i++)
    idx[i] = i;
  out[get_global_id(0)] = data[idx[3]];
}
