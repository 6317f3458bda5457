// Shifts by counts the work-item computes (OpenCL takes them modulo the width, so 33 on a uint
// shifts by 1 and 70 on a ulong by 6), and every integer and float comparison on values that
// differ in sign, width and NaN-ness: the interpreter has a fast path for each.
float special(size_t i, int x)
{
    return i == 0 ? -INFINITY : i == 13 ? INFINITY : i >= 14 ? NAN : i == 4 ? -0.0f : (float)x * 0.25f;
}

kernel void shift_compare(global const int *in, global uint *out)
{
    size_t i = get_global_id(0);
    int x = in[i], y = in[15 - i];
    uint ux = (uint)x, count = (uint)(i * 5);
    ulong lx = (ulong)ux << 20 | (ulong)(uint)y;
    uint shifts = (ux << count) ^ (ux >> count) ^ (uint)(x >> (count & 31));
    ulong lshifts = (lx << (count * 3)) ^ (lx >> (count * 3));
    uint ints = (x < y) | (x <= y) << 1 | (x > y) << 2 | (x >= y) << 3
              | (ux < (uint)y) << 4 | (ux <= (uint)y) << 5 | (ux > (uint)y) << 6 | (ux >= (uint)y) << 7
              | (x == y) << 8 | (x != y) << 9;
    float a = special(i, x), b = special(15 - i, y);
    uint floats = (a < b) | (a <= b) << 1 | (a > b) << 2 | (a >= b) << 3 | (a == b) << 4 | (a != b) << 5
                | isless(a, b) << 6 | isgreaterequal(a, b) << 7 | isunordered(a, b) << 8;
    out[i * 4] = shifts;
    out[i * 4 + 1] = (uint)lshifts ^ (uint)(lshifts >> 32);
    out[i * 4 + 2] = ints;
    out[i * 4 + 3] = floats;
}
