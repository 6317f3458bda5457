// The CD paper's aMin, ported to float: a minimum kept with a compare-exchange loop that loses
// atomicity. The loop tests the value it read, then reads again and compares-and-swaps against
// that second read: a smaller value stored in between passes the swap, which then writes the
// larger one. One delay (work-item 0 between its test and its re-read) shows it.
kernel void amin(global const float *in, global int *minimum) {
    float v = in[get_global_id(0)];
    for (;;) {
        int seen = atomic_add(minimum, 0);
        if (as_float(seen) <= v)
            break;
        int now = atomic_add(minimum, 0);
        if (atomic_cmpxchg(minimum, now, as_int(v)) == now)
            break;
    }
}
