// Every work-item stores its own id to one element in the same instruction.
kernel void same_slot(global int *A) {
    A[0] = get_local_id(0);
}
