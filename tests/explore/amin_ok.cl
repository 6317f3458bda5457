// The correct twin of amin: the compare-exchange expects exactly the value the test saw, and a
// failed one retries with what it found.
kernel void amin_ok(global const float *in, global int *minimum) {
    float v = in[get_global_id(0)];
    int seen = atomic_add(minimum, 0);
    while (as_float(seen) > v) {
        int found = atomic_cmpxchg(minimum, seen, as_int(v));
        if (found == seen)
            break;
        seen = found;
    }
}
