// the second copy into the same words of dst starts only after the first has been waited for
kernel void async_overlapping_copies_ok(global int *dst, global const int *a, global const int *b)
{
    local int ta[8], tb[8];
    size_t l = get_local_id(0), base = get_group_id(0) * 8;
    ta[l] = a[base + l];
    tb[l] = b[base + l];
    barrier(CLK_LOCAL_MEM_FENCE);
    event_t e1 = async_work_group_copy(dst + base, ta, 8, 0);
    wait_group_events(1, &e1);
    event_t e2 = async_work_group_copy(dst + base, tb, 8, 0);
    wait_group_events(1, &e2);
}
