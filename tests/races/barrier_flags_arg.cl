// barrier flags from a kernel argument (not a compile-time constant): here CLK_LOCAL_MEM_FENCE, which leaves the global neighbour read unordered
kernel void barrier_flags_arg(global int *p, int flags)
{
    p[get_global_id(0)] = (int)get_global_id(0);
    barrier(flags);
    int next = p[(get_local_id(0) + 1) % get_local_size(0) + get_group_id(0) * get_local_size(0)];
    mem_fence(flags);
    barrier(CLK_GLOBAL_MEM_FENCE);
    p[get_global_id(0)] = next;
}
