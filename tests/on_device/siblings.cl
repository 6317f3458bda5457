// Work-item 0 writes a __local word that the others read in the same barrier interval: a
// read-write race, though neither access can reach the other in the kernel's code (they sit on
// the two sides of one branch).
kernel void siblings(global int *out)
{
  local int word;
  if (get_local_id(0) == 0)
    word = 1;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (get_local_id(0) == 0)
    word = 7;
  else
    out[get_global_id(0)] = word;
}
