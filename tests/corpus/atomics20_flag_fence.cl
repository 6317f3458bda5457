// atomic_flag test_and_set/clear (plain and _explicit) as "first one wins" elections, atomic_work_item_fence, mem_fence/read_mem_fence/write_mem_fence, work_group_barrier with a scope.
#define AF(p) ((volatile global atomic_flag *)(p))
#define AI(p) ((volatile global atomic_int *)(p))

kernel void atomics20_flag_fence(global int *flags, global int *wins, global int *data, global int *out)
{
    local atomic_flag group_flag;
    local int ring[64];
    size_t i = get_global_id(0), l = get_local_id(0), g = get_group_id(0), n = get_local_size(0);

    if (l == 0)
        atomic_flag_clear_explicit(&group_flag, memory_order_relaxed, memory_scope_work_group);
    work_group_barrier(CLK_LOCAL_MEM_FENCE, memory_scope_work_group);

    // One winner per group (local flag), one per group through a global flag, one over the NDRange.
    bool lost = atomic_flag_test_and_set_explicit(&group_flag, memory_order_acq_rel, memory_scope_work_group);
    atomic_fetch_add_explicit(AI(&wins[0]), !lost, memory_order_relaxed, memory_scope_device); // number of groups
    atomic_fetch_add(AI(&wins[1]), lost);                                                     // everyone else
    if (!atomic_flag_test_and_set_explicit(AF(&flags[1 + g]), memory_order_seq_cst, memory_scope_device))
        atomic_fetch_add(AI(&wins[4 + g]), 1);
    if (!atomic_flag_test_and_set(AF(&flags[0])))
        atomic_fetch_add(AI(&wins[2]), 1);
    // The last work-item to arrive clears the NDRange flag, so the buffer ends deterministic.
    if (atomic_fetch_add(AI(&wins[3]), 1) == (int)get_global_size(0) - 1)
        atomic_flag_clear(AF(&flags[0]));

    // This work-item's own flag: set, set again, clear, with every legal order.
    volatile global atomic_flag *f = AF(&flags[8 + i]);
    int r = atomic_flag_test_and_set_explicit(f, memory_order_relaxed);                           // 0
    r = r * 2 + atomic_flag_test_and_set_explicit(f, memory_order_acquire, memory_scope_work_group); // 1
    atomic_flag_clear_explicit(f, memory_order_release, memory_scope_device);
    r = r * 2 + atomic_flag_test_and_set_explicit(f, memory_order_release, memory_scope_device);     // 0
    r = r * 2 + atomic_flag_test_and_set_explicit(f, memory_order_acq_rel);                          // 1
    atomic_flag_clear_explicit(f, memory_order_seq_cst);
    r = r * 2 + atomic_flag_test_and_set_explicit(f, memory_order_seq_cst, memory_scope_work_group); // 0
    atomic_flag_clear_explicit(f, memory_order_relaxed, memory_scope_work_group);
    r = r * 2 + atomic_flag_test_and_set(f);                                                        // 0
    r = r * 2 + atomic_flag_test_and_set(f);                                                        // 1
    atomic_flag_clear(f);

    // Fences: they only have to execute; the barriers make the exchanges below deterministic.
    ring[l] = (int)i * 3 + r;
    write_mem_fence(CLK_LOCAL_MEM_FENCE);
    atomic_work_item_fence(CLK_LOCAL_MEM_FENCE, memory_order_release, memory_scope_work_group);
    work_group_barrier(CLK_LOCAL_MEM_FENCE, memory_scope_work_group);
    atomic_work_item_fence(CLK_LOCAL_MEM_FENCE, memory_order_acquire, memory_scope_work_group);
    read_mem_fence(CLK_LOCAL_MEM_FENCE);
    data[i] = ring[(l + 1) % n] - (int)l;
    mem_fence(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_acq_rel, memory_scope_device);
    atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE, memory_order_seq_cst, memory_scope_work_group);
    atomic_work_item_fence(CLK_IMAGE_MEM_FENCE, memory_order_acq_rel, memory_scope_work_item);
    work_group_barrier(CLK_GLOBAL_MEM_FENCE, memory_scope_device);
    out[i] = data[g * n + (l + 2) % n] * 2;
    work_group_barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE, memory_scope_work_group);
    work_group_barrier(CLK_GLOBAL_MEM_FENCE);

    // The group's global election flag is cleared once everyone has tried it.
    if (l == 0)
        atomic_flag_clear_explicit(AF(&flags[1 + g]), memory_order_release, memory_scope_device);
}
