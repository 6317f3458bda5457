// int8/uint4/long2/short16 vectors: arithmetic, comparisons (-1/0 masks), any/all, swizzles incl. .s8 .sf .hi.hi, literals mixing sub-vectors.
kernel void vec_int8(global const int8 *in, global int8 *out, global int *scalars)
{
    size_t i = get_global_id(0);
    int8 a = in[i];
    int8 b = (int8)((int4)(1, -2, 3, -4), (int2)(a.s0, 7), a.s7, -1);
    int8 s = as_int8(as_uint8(a) + as_uint8(b));      // wrap-around through uint8
    int8 m = a > b;
    global int8 *o = out + i * 5;
    o[0] = s;
    o[1] = m ^ ((a <= b) & 2);
    o[2] = (int8)(a.s76543210);
    o[3] = as_int8(as_uint8(a) >> (uint8)(1, 2, 3, 31, 32, 33, 0, 7)); // amounts taken mod 32
    o[4] = select(a, b, m) ^ (int8)(a.hi.hi, a.lo.lo, a.odd);
    short16 w = (short16)(convert_short8(a), convert_short8(b));
    long2 l = (long2)((long)a.s0 * a.s1, (long)a.s2 - a.s3);
    uint4 u = (uint4)(as_uint(a.s0), 5u, 0xffffffffu, 0u) / (uint4)(3u, 2u, 7u, 1u);
    global int *r = scalars + i * 8;
    r[0] = any(a < 0) | all(a > -100) << 1 | any(m.lo) << 2 | all(m.hi) << 3;
    r[1] = w.s0 + w.s8 + w.sf * 3 + w.s9;
    r[2] = (int)(l.x ^ l.y);
    r[3] = (int)(l.x >> 32) + (int)(l.y >> 32);
    r[4] = as_int(u.x + u.y + u.z + u.w);
    r[5] = (a.s0 == b.s0) + (a.s01 == b.s10).y;
    r[6] = a.s4 * 2 + a.s5 - a.s6;
    r[7] = any(w > (short16)(100)) + all((int2)(-1, 0));
}
