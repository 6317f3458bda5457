// each group stores a partial sum and the group that bumps the counter last adds them up; a relaxed counter orders nothing
#define COUNTER(p) ((volatile global atomic_int *)(p))

kernel void lastgroup_reduce(global const int *in, global int *partial, global int *counter, global int *total, local int *s)
{
    size_t l = get_local_id(0), n = get_local_size(0), g = get_group_id(0), groups = get_num_groups(0);
    s[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t h = n / 2; h > 0; h /= 2) {
        if (l < h)
            s[l] += s[l + h];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) {
        partial[g] = s[0];
        int done = atomic_fetch_add_explicit(COUNTER(counter), 1, memory_order_relaxed, memory_scope_device);
        if (done == (int)groups - 1) {
            int sum = 0;
            for (size_t k = 0; k < groups; k++)
                sum += partial[k];
            *total = sum;
        }
    }
}
