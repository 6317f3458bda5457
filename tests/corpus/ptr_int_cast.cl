// pointer <-> integer casts: uintptr_t/size_t arithmetic on addresses, round trips, alignment tests, pointer differences (no absolute addresses stored).
kernel void ptr_int_cast(global const int *in, global long *out)
{
    size_t i = get_global_id(0);
    global const int *p = in + i;
    uintptr_t base = (uintptr_t)in, addr = (uintptr_t)p;
    global long *o = out + i * 6;
    o[0] = (long)(addr - base);                               // byte offset: 4 * i
    global const int *back = (global const int *)(addr + 2 * sizeof(int));
    o[1] = *back;                                             // in[i + 2] through an integer round trip
    o[2] = (long)(((uintptr_t)p & 3) == 0) + (long)(((ulong)(uintptr_t)in & 3) == 0) * 2;
    global const char *bytes = (global const char *)in;
    o[3] = (long)((global const char *)p - bytes);
    ptrdiff_t d = &in[7] - p;
    o[4] = d;
    int local_var = (int)i;
    int *pv = &local_var;
    uintptr_t pvi = (uintptr_t)pv;
    *(int *)pvi += 40;                                        // private pointer round trip
    o[5] = local_var + (long)(p == (global const int *)(base + i * 4));
}
