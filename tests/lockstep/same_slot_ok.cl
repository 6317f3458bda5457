// Each work-item stores its id to an element of its own.
kernel void same_slot_ok(global int *A) {
    A[get_local_id(0)] = get_local_id(0);
}
