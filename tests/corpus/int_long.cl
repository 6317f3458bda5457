// long/ulong: wrapping +,-,* (through ulong), /, %, shifts mod 64, comparisons, mul_hi, 64-bit constants.
kernel void int_long(global const long *a, global const long *b, global long *out)
{
    size_t i = get_global_id(0), j = get_global_id(1);
    long x = a[i], y = b[j];
    ulong ux = as_ulong(x), uy = as_ulong(y);
    global long *o = out + (j * get_global_size(0) + i) * 12;
    bool ok = y != 0 && !(x == LONG_MIN && y == -1);
    o[0] = as_long(ux + uy);
    o[1] = as_long(ux - uy);
    o[2] = as_long(ux * uy);
    o[3] = ok ? x / y : 0;
    o[4] = ok ? x % y : 0;
    o[5] = y ? as_long(ux / uy) : 0;
    o[6] = y ? as_long(ux % uy) : 0;
    o[7] = x >> y; // amount taken modulo 64
    o[8] = as_long(ux >> uy);
    o[9] = as_long(ux << uy);
    o[10] = (x < y) | (x <= y) << 1 | (x == y) << 2 | (ux < uy) << 3 | (ux >= uy) << 4 | (long)(x > 0x7fffffffL) << 5;
    o[11] = as_long(mul_hi(ux, uy)) ^ mul_hi(x, y) ^ (long)(ux >> 32) ^ 0x0123456789abcdefL;
}
