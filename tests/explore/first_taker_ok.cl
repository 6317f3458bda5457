// The correct twin of first_taker: each work-item writes only its own elements, whoever takes
// the flag first (which shows in data, compared as a multiset).
kernel void first_taker_ok(global int *flag, global int *data, global int *mark) {
    int i = get_global_id(0);
    data[i] = atomic_xchg(flag, 1) == 0 ? 1 : 2;
    mark[i] = 1;
}
