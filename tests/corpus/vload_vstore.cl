// vloadn/vstoren for n = 2, 3, 4, 8, 16 at element offsets (unaligned to the vector size), plus float3 arithmetic.
kernel void vload_vstore(global const int *in, global int *out, global const float *fin, global float *fout)
{
    size_t i = get_global_id(0);
    const global int *p = in + 1;                  // only int-aligned
    int2 v2 = vload2(i, p);
    int3 v3 = vload3(i, p + 2);
    int4 v4 = vload4(i, p + 1);
    int8 v8 = vload8(0, p + i);
    int16 v16 = vload16(0, in + i * 3);
    vstore2(v2 + 1, i, out);
    vstore3(v3 * 2, i, out + 16);                  // 3-vectors are packed: 3 ints each
    vstore4(v4.wzyx, i, out + 40);
    vstore8(v8 ^ (int8)(i), i, out + 72);
    int16 t = v16.sfedcba9876543210;
    vstore16(t + (int16)(v8, v8.s76543210), i, out + 136);
    float3 f = vload3(i, fin);
    float3 g = f * 2.0f + (float3)(1.0f, -1.0f, 0.5f);
    vstore3(g.zxy, i, fout);
    vstore2(f.xz, i, fout + 24);
}
