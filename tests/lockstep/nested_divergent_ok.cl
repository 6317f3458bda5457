// The same branches, each side with elements of its own.
kernel void nested_divergent_ok(global int *A) {
    int lid = get_local_id(0);
    if (lid < 16) {
        if (lid == 3)
            A[lid] = lid;
    } else {
        A[lid] = A[lid + 16];
    }
}
