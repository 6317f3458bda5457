// two arguments bound to one buffer (launch-file alias=K) and a NULL buffer argument tested inside the kernel.
kernel void alias_null(global const int *src, global int *dst, global const int *maybe, global int *stats)
{
    size_t i = get_global_id(0);
    int v = src[i];                              // src and dst are the same buffer: each item touches only its element
    int extra = maybe ? maybe[i] : 1000;         // maybe is NULL
    dst[i] = v * 3 + extra;
    if (i == 0)
        stats[0] = (maybe == 0) + 2 * ((global const int *)dst == src);
}
