// float4/float2/float8 vectors: literals, swizzles (.xyzw .s0123 .lo .hi .even .odd), component writes, arithmetic, dot, relational results.
#pragma OPENCL FP_CONTRACT OFF
kernel void vec_float4(global const float4 *in, global float4 *out, global int4 *masks)
{
    size_t i = get_global_id(0);
    float4 a = in[i];
    float4 b = (float4)(1.0f, -2.0f, a.xy);   // vector literal from scalars and a swizzle
    float2 h = (float2)(0.5f);                // splat
    float8 w = (float8)(a, b.wzyx);
    float4 c = a * b + (float4)(h, h.yx) - a.wzyx / 2.0f;
    c.yw = c.xz * 3.0f;                       // write a swizzle
    c.s0 += w.s7;
    global float4 *o = out + i * 6;
    o[0] = c;
    o[1] = (float4)(w.lo.odd, w.hi.even);
    o[2] = w.s6543 - w.s0127;
    o[3] = (float4)(dot(a, b), dot(a.xy, b.zw), length(a.xy * 0.0f), fabs(a.x - b.w));
    o[4] = min(a, b) + max(a, 3.0f) + clamp(a, -1.0f, 1.0f);
    o[5] = a.xxyy * b.zwzw + (float4)(a.s3, a.s2, a.z, a.w);
    masks[i * 2] = a < b;                      // -1 where true
    masks[i * 2 + 1] = isgreaterequal(a, b.yxwz) + (a == a.wzyx);
}
