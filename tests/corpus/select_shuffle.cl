// select (scalar and vector, MSB rule), bitselect (int and float), shuffle and shuffle2 (mask bits beyond the range are ignored).
kernel void select_shuffle(global const int4 *in, global const uint4 *masks, global int4 *out, global float4 *fout)
{
    size_t i = get_global_id(0);
    int4 a = in[i], b = in[(i + 1) % get_global_size(0)];
    uint4 m = masks[i];
    global int4 *o = out + i * 6;
    o[0] = select(a, b, as_int4(m));                 // per component: MSB of the mask picks b
    o[1] = select(a, b, m > (uint4)(100));
    o[2] = bitselect(a, b, as_int4(m));
    o[3] = shuffle(a, m);                           // only the low 2 bits of each mask element count
    int8 wide = shuffle2(a, b, (uint8)(m, m.wzyx + (uint4)(5)));
    o[4] = wide.lo ^ wide.hi;
    o[5] = (int4)(select(7, -7, a.x < b.x), select(1, 2, (int)m.x), shuffle(b, (uint4)(3, 3, 0, 1)).xy);
    float4 fa = convert_float4(a) * 0.5f, fb = convert_float4(b);
    fout[i * 2] = select(fa, fb, as_int4(m));
    fout[i * 2 + 1] = bitselect(fa, fb, as_float4((uint4)(0x80000000u, 0x7f800000u, 0x007fffffu, 0u)));
}
