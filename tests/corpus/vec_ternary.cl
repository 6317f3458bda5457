// ternary ?: on vectors (vector condition picks per component by MSB; scalar condition picks whole vectors), nested, with swizzles.
kernel void vec_ternary(global const int4 *in, global int4 *out, global float4 *fout)
{
    size_t i = get_global_id(0);
    int4 a = in[i], b = in[(i + 3) % get_global_size(0)];
    int4 r0 = a < b ? a : b;                                  // per-component minimum
    int4 r1 = a > (int4)(0) ? a * 2 : (a == (int4)(0) ? (int4)(100) : -a);
    int4 r2 = (i & 1) ? a.wzyx : b;                           // scalar condition
    int4 r3 = as_int4(as_uint4(a) & (uint4)(0x80000000u)) ? (int4)(1) : (int4)(2); // MSB as condition
    out[i * 4] = r0;
    out[i * 4 + 1] = r1;
    out[i * 4 + 2] = r2;
    out[i * 4 + 3] = r3;
    float4 fa = convert_float4(a), fb = convert_float4(b);
    fout[i] = fa >= fb ? fa - fb : (fa * 0.5f).yxwz;
}
