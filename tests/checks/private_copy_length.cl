// A copy between two private arrays with a length read from a buffer: a length near 2^64 makes
// the end of either range wrap around, which must be a reported out-of-bounds read, not a crash
// of the emulator. Both arrays lie after a third, so neither range starts at offset 0.
kernel void private_copy_length(global const ulong *n, global int *out)
{
    int pad[4] = {5, 6, 7, 8};
    int a[4] = {1, 2, 3, 4};
    int b[4];
    __builtin_memcpy(b, a, n[0]);
    out[get_global_id(0)] = b[get_global_id(0) & 3] + pad[get_global_id(0) & 3];
}
