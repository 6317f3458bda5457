#pragma OPENCL EXTENSION cl_khr_fp16 : enable
// The geometric functions on half are not supported yet: a dot product of half2 values.
kernel void hd(global half2 *a, global half *out)
{
  out[get_global_id(0)] = dot(a[get_global_id(0)], a[get_global_id(0)]);
}
