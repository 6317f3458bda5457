// An integer sum with atomic_add: the same in every order.
kernel void sum(global const int *in, global int *total, global int *count) {
    atomic_add(total, in[get_global_id(0)]);
    atomic_inc(count);
}
