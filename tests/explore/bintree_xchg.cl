// A variant of the CD paper's bintree (see bintree.cl) with both steps atomic: finding an empty
// child is an atomic read and linking the new node there an unconditional exchange, where one
// compare-exchange belongs. When two work-items find the same empty child, the later exchange
// unlinks the earlier one's node. One delay (work-item 0 between its read and its exchange)
// shows it with keys 30, 20, 70 on three work-items; unlike the plain store of bintree.cl, it is
// no data race, so only the schedule shows it. Work-item 0 then writes the keys in order: only
// the tree's contents reach global memory, so trees of another shape with the same keys
// compare equal.
#define EMPTY (-1)
#define NODES 4

kernel void bintree_xchg(global const int *keys, global int *out) {
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
        int next = atomic_add(child, 0);
        if (next == EMPTY) {
            atomic_xchg(child, me);
            break;
        }
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
