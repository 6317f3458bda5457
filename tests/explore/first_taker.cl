// Races and out-of-bounds accesses that only another order of the atomics shows: the work-item
// that takes the flag first writes data[0] and mark[2 * i], the others data[i]. Canonically
// work-item 0 takes it, and nothing is wrong; when work-item 1 takes it first, its mark is past
// the end of the buffer and work-item 0 then writes data[0] too, racing with it.
kernel void first_taker(global int *flag, global int *data, global int *mark) {
    int i = get_global_id(0);
    if (atomic_xchg(flag, 1) == 0) {
        data[0] = 1;
        mark[2 * i] = 1;
    } else {
        data[i] = 2;
    }
}
