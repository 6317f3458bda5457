// Check 9, use "branch": the loop bound n is a __local variable that only work-item 0 writes,
// and only when `set` is not 0; the others read it after the barrier as a loop condition.
kernel void uninit_branch(global int *out, int set)
{
  local int n;
  if (get_local_id(0) == 0 && set)
    n = 2;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int i = 0; i < n; i++)
    out[get_global_id(0) * 2 + i] = i + 1;
}
