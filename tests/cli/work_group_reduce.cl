#pragma OPENCL EXTENSION cl_khr_fp16 : enable
// Half-precision arithmetic is not supported yet: a work-group reduction of halves.
kernel void wg(global half *a)
{
  a[get_global_id(0)] = work_group_reduce_add(a[get_global_id(0)]);
}
