// char/uchar: division, remainder, shifts (scalar promotes to int, char4 shifts mod 8), comparisons, wrap-around.
kernel void int_char(global const char *a, global const char *b, global char *out, global uchar *uout)
{
    size_t i = get_global_id(0), j = get_global_id(1);
    char x = a[i], y = b[j];
    uchar ux = as_uchar(x), uy = as_uchar(y);
    size_t k = (j * get_global_size(0) + i) * 8;
    out[k + 0] = y ? (char)(x / y) : 0; // -128 / -1 is 128 in int, truncated back to char
    out[k + 1] = y ? (char)(x % y) : 0;
    out[k + 2] = (char)(x + y);
    out[k + 3] = (char)(x * y);
    out[k + 4] = (char)(x >> (y & 7));
    out[k + 5] = (char)(ux << (uy & 7));
    out[k + 6] = (x < y) | (x <= y) << 1 | (x == y) << 2 | (ux > uy) << 3 | (ux >= uy) << 4 | (!x) << 5;
    out[k + 7] = (char)(ux >> (y & 15)); // promoted: amounts 8..15 shift everything out
    uout[k + 0] = uy ? ux / uy : 0;
    uout[k + 1] = uy ? ux % uy : 0;
    uout[k + 2] = ux + uy;
    uout[k + 3] = ux * uy;
    char4 v = (char4)(x, y, (char)(x ^ y), -1);
    uchar4 s = (uchar4)(uy, (uchar)(uy + 3), 9, 15);
    char4 r = v >> as_char4(s); // vector shift: amount taken modulo 8
    uchar4 l = as_uchar4(v) << s;
    uout[k + 4] = as_uchar(r.x) ^ as_uchar(r.y);
    uout[k + 5] = as_uchar(r.z) + as_uchar(r.w);
    uout[k + 6] = l.x ^ l.y;
    uout[k + 7] = l.z + l.w;
}
