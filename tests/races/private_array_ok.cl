// a per-work-item scratch array in private memory: the same indices in every work-item never race
kernel void private_array_ok(global const uchar *in, global uchar *out)
{
    uchar scratch[4];
    size_t i = get_global_id(0);
    for (int k = 0; k < 4; k++)
        scratch[k] = (uchar)(in[i] + k);
    uchar acc = 0;
    for (int k = 0; k < 4; k++)
        acc ^= scratch[3 - k];
    out[i] = acc;
}
