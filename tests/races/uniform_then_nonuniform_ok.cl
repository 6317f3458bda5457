// work-item 0 resets the group's word, and after a barrier stores the final value
kernel void uniform_then_nonuniform_ok(global int *words)
{
    size_t g = get_group_id(0);
    if (get_local_id(0) == 0)
        words[g] = 0;
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (get_local_id(0) == 0)
        words[g] = -1;
}
