// A work queue: each work-item takes the next slot and writes its id there. The order of the
// slots depends on the order of the atomic_inc calls; the multiset of ids does not.
kernel void queue(global int *head, global int *out) {
    int slot = atomic_inc(head);
    out[slot] = get_global_id(0);
}
