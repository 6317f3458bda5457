kernel void wg(global int *a)
{
  int x = a[get_global_id(0)];
  a[get_global_id(0)] = work_group_reduce_add(x);
}
