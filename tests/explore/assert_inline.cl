// Assertions checked through the layer: clrace.h written out, so that the device's compiler
// needs no include path. Inputs 0..7: the first assertion fails for five work-items, the second
// for one.
#ifdef __CLRACE__
void __clrace_assert(int cond, __constant char *msg);
#define CLRACE_ASSERT(c) __clrace_assert((c), #c)
#else
#define CLRACE_ASSERT(c) ((void)0)
#endif

kernel void asserted(global const int *in, global int *out) {
    int i = get_global_id(0);
    CLRACE_ASSERT(in[i] < 3);
    CLRACE_ASSERT(in[i] != 3);
    out[i] = in[i] * 2;
}
