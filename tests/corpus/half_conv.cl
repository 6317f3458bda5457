// half <-> float through vload_half/vload_half4 and vstore_half/vstore_half2 with every rounding mode (denormals, overflow, ties, inf).
kernel void half_conv(global const half *h, global const uint *fbits, global float *widened, global half *narrowed)
{
    size_t i = get_global_id(0);
    widened[i] = vload_half(i, h);
    float4 w = vload_half4(i / 4, h);
    widened[16 + i] = (i & 1) ? w.x + w.w : w.y - w.z;
    float x = as_float(fbits[i]);                              // NaN is left out: its half payload is unspecified
    vstore_half(x, i, narrowed);
    vstore_half_rtz(x, i, narrowed + 16);
    vstore_half_rtp(x, i, narrowed + 32);
    vstore_half_rtn(x, i, narrowed + 48);
    vstore_half_rte(x * -1.0f, i, narrowed + 64);
    vstore_half2((float2)(x, x * 0.5f), i, narrowed + 80);
}
