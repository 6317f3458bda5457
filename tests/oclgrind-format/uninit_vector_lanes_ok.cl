// A vector written in lanes x and w only; only those lanes are used.
kernel void uninit_vector_lanes_ok(global float *out)
{
  float4 f;
  f.xw = (float2)(get_global_id(0), 0.5f);
  out[get_global_id(0)] = f.x + f.w;
}
