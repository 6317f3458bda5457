// two work-items store different values to each char (index i / 2)
kernel void chars_adjacent(global uchar *out)
{
    size_t i = get_global_id(0);
    out[i / 2] = (uchar)(i * 3 + 1);
}
