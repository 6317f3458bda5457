// The cost benchmark: every work-item makes two atomics on shared counters.
kernel void cost(global const int *in, global int *total, global int *count) {
    atomic_add(total, in[get_global_id(0)]);
    atomic_inc(count);
}
