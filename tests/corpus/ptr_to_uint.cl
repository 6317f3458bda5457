// A buffer pointer converted to an integer is not NULL's value, in 64 bits or truncated to 32,
// and integer arithmetic on it moves as pointer arithmetic does.
kernel void ptr_to_uint(global int *A, global int *out)
{
    global int *z = 0;
    out[0] = ((size_t)A == (size_t)z);
    out[1] = ((uint)(size_t)A == 0u);
    out[2] = ((size_t)(A + 1) - (size_t)A == sizeof(int));
    out[3] = (A == z);
    out[4] = ((uint)A == 0u);
    out[5] = (global int *)(size_t)(A + 2) == A + 2;
    out[6] = *(global int *)((size_t)A + 3 * sizeof(int));
}
