// Check 9, partial vectors: f is written in lanes x and z only; lane y is used (and stored to
// global memory) when `y` is not 0, lane z otherwise (uninit_vector_ok).
kernel void uninit_vector(global float *out, int y)
{
  float4 f;
  f.xz = (float2)(get_global_id(0), 2.0f);
  out[get_global_id(0)] = f.x + (y ? f.y : f.z);
}
