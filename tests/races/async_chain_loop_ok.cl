// two copies chained on one event, waited once; then one copy per loop step into a reused tile, waited each step
kernel void async_chain_loop_ok(global const int *a, global const int *b, global int *out)
{
    local int ta[8], tb[8];
    size_t l = get_local_id(0), base = get_group_id(0) * 8;
    event_t e = async_work_group_copy(ta, a + base, 8, 0);
    e = async_work_group_copy(tb, b + base, 8, e);
    wait_group_events(1, &e);
    int sum = ta[l] + tb[l];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int t = 0; t < 3; t++) {
        event_t step = async_work_group_copy(ta, b + base, 8, 0);
        wait_group_events(1, &step);
        sum += ta[(l + t) % 8];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[get_global_id(0)] = sum;
}
