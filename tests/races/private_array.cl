// a per-work-item scratch array declared local: every work-item of the group writes and reads the same four bytes
kernel void private_array(global const uchar *in, global uchar *out)
{
    local uchar scratch[4];
    size_t i = get_global_id(0);
    for (int k = 0; k < 4; k++)
        scratch[k] = (uchar)(in[i] + k);
    uchar acc = 0;
    for (int k = 0; k < 4; k++)
        acc ^= scratch[3 - k];
    out[i] = acc;
}
