kernel void unpack(global char *bytes, global int *out)
{
    size_t i = get_global_id(0);
    out[i] = *(global int *)(bytes + 4 * i + 1); /* not aligned to 4 bytes */
}
