// Assertions in a plain check: every work-item asserts that its input is below 3, and GPUVerify's
// spelling asserts the same. Inputs 0..3: work-item 3 fails both; the run goes on and writes out.
#include "../../include/clrace.h"
void __assert(bool);

kernel void checked(global const int *in, global int *out) {
    int i = get_global_id(0);
    CLRACE_ASSERT(in[i] < 3);
    __assert(in[i] < 3);
    out[i] = in[i] * 2;
}
