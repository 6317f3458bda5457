// usual arithmetic conversions: char/short promotion to int, int vs uint comparisons, size_t arithmetic, unsigned wrap, casts between widths.
kernel void int_promotions(global const int *in, global int *out)
{
    size_t i = get_global_id(0);
    int x = in[i];
    uchar uc = (uchar)x;
    char c = (char)x;
    ushort us = (ushort)x;
    uint u = (uint)x;
    global int *o = out + i * 10;
    o[0] = uc + c;                     // both promote to int
    o[1] = (x < 0u);                   // x converts to uint: negative values compare large
    o[2] = (c < uc) + 2 * (us > x) + 4 * ((long)x < u);
    o[3] = (int)(u / 3u) ^ x / 3;
    o[4] = (int)((size_t)i - 3 > i);   // size_t wraps for i < 3
    o[5] = (uchar)(uc + 200) + (ushort)(us * 3u);
    o[6] = (short)(us << 4) >> 4;      // arithmetic shift after sign change
    o[7] = (int)(uint)(-x > 0) + (int)sizeof(uc + c) * 10 + (int)sizeof(x + 1L) * 100;
    o[8] = (int)((ulong)u * 3ul >> 32) + (int)((long)x * 3l >> 32);
    o[9] = ~uc + ~c + (int)(~u >> 28);
}
