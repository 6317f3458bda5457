// Declares a function that is never defined but calls it only where no work-item goes: the
// kernel runs (a call is an error only when it is reached).
void external_hook(int v);
__kernel void k(__global int *out)
{
    int i = get_global_id(0);
    if (i > 100)
        external_hook(i);
    out[i] = i + 1;
}
