// Every way of reading a buffer the kernel never writes (the emulator reads it without atomics):
// a run of consecutive elements of each width, rows of a two-dimensional group, a strided
// gather, one address for all, an unaligned start, an atomic load, a copy into __local memory.
kernel void sealed_reads(global const uchar *b, global const ushort *s, global const int *w,
                         global const long *q, global atomic_int *flags, global long *out)
{
    local int tile[64];
    size_t x = get_global_id(0), y = get_global_id(1);
    size_t lx = get_local_id(0), ly = get_local_id(1);
    size_t width = get_global_size(0), i = y * width + x;
    size_t li = ly * get_local_size(0) + lx;
    tile[li] = w[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    long r = b[i];
    r = r * 7 + s[i];
    r = r * 7 + w[i];
    r = r * 7 + q[i];
    r = r * 7 + w[(i * 13) % (width * get_global_size(1))];
    r = r * 7 + w[5];
    r = r * 7 + s[i + 1];
    r = r * 7 + atomic_load_explicit(&flags[i % 16], memory_order_relaxed, memory_scope_device);
    r = r * 7 + tile[63 - li];
    out[i] = r;
}
