// A 20 MB private array: more than the 16 MiB a work-item may have.
__kernel void k(__global int *out, int n)
{
    int big[5000000];
    big[n] = 1;
    out[get_global_id(0)] = big[get_global_id(0)];
}
