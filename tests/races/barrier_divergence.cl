// a barrier inside a branch taken only by work-items 0 and 1: the others finish without reaching it
kernel void barrier_divergence(global int *out)
{
    local int tmp[8];
    size_t l = get_local_id(0);
    if (l < 2) {
        tmp[l] = (int)l + 10;
        barrier(CLK_LOCAL_MEM_FENCE);
        out[l] = tmp[1 - l];
    }
}
