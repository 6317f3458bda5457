// Reads an int through a char pointer one byte past an int boundary: every load is
// misaligned (OpenCL requires an int to be 4-byte aligned), though inside the buffer.
kernel void unpack(global char *bytes, global int *out)
{
    size_t i = get_global_id(0);
    out[i] = *(global int *)(bytes + 4 * i + 1);
}
