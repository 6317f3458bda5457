// Integer and float arithmetic on scalars and vectors, conversions, selects and swizzles.
kernel void arith_vectors(global float4 *f, global int4 *i, global uchar *c, float k) {
    size_t g = get_global_id(0);
    float4 a = f[g];
    int4 b = i[g];
    float4 s = a * k + (float4)(1.0f, 2.0f, 3.0f, 4.0f);
    int4 m = (b << 2) ^ (b >> 1) | (b % 7);
    int4 lt = isless(a, s);
    f[g] = select(s, a.wzyx, lt);
    i[g] = m + convert_int4_sat(s) - b.xxyy;
    c[g] = convert_uchar_sat(b.x) + (uchar)(a.y > 0.5f ? 3 : 4);
}
