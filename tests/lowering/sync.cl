// Barriers, fences, local memory, OpenCL 1.x and 2.0 atomics.
// clrace-build: -cl-std=CL2.0
kernel void sync(global int *out, global atomic_int *flags, local int *scratch, global volatile int *counter) {
    int l = get_local_id(0);
    local int tile[64];
    tile[l] = l;
    scratch[l] = atomic_add(counter, 1);
    barrier(CLK_LOCAL_MEM_FENCE);
    int v = tile[63 - l] + scratch[(l + 1) & 63];
    atomic_min(counter + 1, v);
    atomic_cmpxchg(counter + 2, 0, v);
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    atomic_store_explicit(flags + l, v, memory_order_release, memory_scope_work_group);
    int seen = atomic_load_explicit(flags, memory_order_acquire, memory_scope_device);
    work_group_barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = seen + work_group_reduce_add(v);
}
