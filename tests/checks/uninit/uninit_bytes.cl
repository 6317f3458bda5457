// Check 9, byte by byte: v is written in lanes x and y only; as one uint its two high bytes are
// uninitialised. Masked with 0xffff (uninit_bytes_ok) only written bytes reach global memory;
// with 0xffffff (this test) the third byte does.
kernel void uninit_bytes(global uint *out, uint keep)
{
  uchar4 v;
  v.x = (uchar)get_global_id(0);
  v.y = 2;
  out[get_global_id(0)] = as_uint(v) & keep;
}
