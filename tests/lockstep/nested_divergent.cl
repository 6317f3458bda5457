// The two sides of a divergent branch, one with a nested if, touch A[0]: lockstep runs one side
// after the other, in an order nothing specifies.
kernel void nested_divergent(global int *A) {
    int lid = get_local_id(0);
    if (lid < 16) {
        if (lid == 3)
            A[0] = lid;
    } else {
        A[1 + lid] = A[0];
    }
}
