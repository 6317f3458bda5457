// Assertions: clrace.h's CLRACE_ASSERT (an int condition and a message in constant memory) and
// GPUVerify's __assert (a bool) become one assert instruction each.
#include "../../include/clrace.h"
void __assert(bool);

kernel void assertions(global const int *in, global int *out) {
    int i = get_global_id(0);
    CLRACE_ASSERT(in[i] > 0);
    __assert(i < 64);
    out[i] = in[i];
}
