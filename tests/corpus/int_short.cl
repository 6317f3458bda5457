// short/ushort: division, remainder, shifts (short8 shifts mod 16), comparisons, truncation of promoted results.
kernel void int_short(global const short *a, global const short *b, global short *out, global ushort *uout)
{
    size_t i = get_global_id(0), j = get_global_id(1);
    short x = a[i], y = b[j];
    ushort ux = as_ushort(x), uy = as_ushort(y);
    size_t k = (j * get_global_size(0) + i) * 8;
    out[k + 0] = y ? (short)(x / y) : 0;
    out[k + 1] = y ? (short)(x % y) : 0;
    out[k + 2] = (short)(x * y); // product fits in int, truncated to 16 bits
    out[k + 3] = (short)(x - y);
    out[k + 4] = (short)(x >> (y & 15));
    out[k + 5] = (short)(ux << (uy & 15));
    out[k + 6] = (x < y) | (x >= y) << 1 | (x != y) << 2 | (ux < uy) << 3 | (ux <= uy) << 4;
    out[k + 7] = (short)(~x & y) | (x ^ y);
    uout[k + 0] = uy ? ux / uy : 0;
    uout[k + 1] = uy ? ux % uy : 0;
    uout[k + 2] = (uint)ux * uy; // ushort * ushort would overflow int
    uout[k + 3] = ux - uy;
    short8 v = (short8)(x, y, -x, -y, (short)(x | y), 1, -32768, 32767);
    ushort8 s = (ushort8)(uy, (ushort)(uy + 1), 16, 17, 31, 100, 15, 65535);
    short8 r = v >> as_short8(s); // amounts taken modulo 16
    ushort8 l = as_ushort8(v) << s;
    uout[k + 4] = as_ushort(r.s0) + as_ushort(r.s1) * 3 + as_ushort(r.s2) * 5 + as_ushort(r.s3) * 7;
    uout[k + 5] = as_ushort(r.s4) ^ as_ushort(r.s5) ^ as_ushort(r.s6) ^ as_ushort(r.s7);
    uout[k + 6] = l.s0 + l.s1 * 3 + l.s2 * 5 + l.s3 * 7;
    uout[k + 7] = l.s4 ^ l.s5 ^ l.s6 ^ l.s7;
}
