// The correct twin of bintree: the empty child is taken with one compare-exchange, and a
// work-item that loses it walks on from the node that won. Every schedule gives the same keys
// in order (the tree's shape varies; it stays in __local memory, which is not compared).
#define EMPTY (-1)
#define NODES 4

kernel void bintree_ok(global const int *keys, global int *out) {
    local int key[NODES], left[NODES], right[NODES];
    int me = get_local_id(0) + 1;
    key[me] = keys[me - 1];
    left[me] = EMPTY;
    right[me] = EMPTY;
    if (me == 1) {
        key[0] = 50;
        left[0] = EMPTY;
        right[0] = EMPTY;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int at = 0;
    for (;;) {
        volatile local int *child = key[me] < key[at] ? &left[at] : &right[at];
        int next = atomic_cmpxchg(child, EMPTY, me);
        if (next == EMPTY)
            break;
        at = next;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (me == 1) {
        // In-order walk with an explicit stack; out[NODES] counts the nodes reached.
        int stack[NODES], depth = 0, n = 0, node = 0;
        while (node != EMPTY || depth > 0) {
            while (node != EMPTY) {
                stack[depth++] = node;
                node = left[node];
            }
            node = stack[--depth];
            out[n++] = key[node];
            node = right[node];
        }
        out[NODES] = n;
    }
}
