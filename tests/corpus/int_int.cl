// int/uint: wrapping +,-,* (through uint), /, % (avoiding INT_MIN / -1), shifts with amounts taken mod 32, comparisons.
kernel void int_int(global const int *a, global const int *b, global int *out)
{
    size_t i = get_global_id(0), j = get_global_id(1);
    int x = a[i], y = b[j];
    uint ux = as_uint(x), uy = as_uint(y);
    global int *o = out + (j * get_global_size(0) + i) * 12;
    bool ok = y != 0 && !(x == INT_MIN && y == -1);
    o[0] = as_int(ux + uy);
    o[1] = as_int(ux - uy);
    o[2] = as_int(ux * uy);
    o[3] = ok ? x / y : 0;
    o[4] = ok ? x % y : 0;
    o[5] = y ? as_int(ux / uy) : 0;
    o[6] = y ? as_int(ux % uy) : 0;
    o[7] = x >> y; // OpenCL: the shift amount is taken modulo 32, also when negative
    o[8] = as_int(ux >> uy);
    o[9] = as_int(ux << uy);
    o[10] = (x < y) | (x <= y) << 1 | (x == y) << 2 | (x != y) << 3 | (x > y) << 4 | (x >= y) << 5
          | (ux < uy) << 6 | (ux >= uy) << 7 | (ux > uy) << 8;
    o[11] = (~x & y) | (x ^ y) | (int)(ux >> 31);
}
