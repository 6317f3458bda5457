// data-driven while loops: Collatz step counts, gcd by Euclid, digit sums, a linked list walked through indices.
kernel void while_data(global const uint *in, global const int *next, global uint *out)
{
    size_t i = get_global_id(0);
    uint n = in[i];
    uint steps = 0, c = n;
    while (c > 1) {
        c = (c & 1) ? 3 * c + 1 : c / 2;
        steps++;
    }
    uint a = n + 12, b = 18 + (uint)i * 7;
    while (b != 0) {
        uint t = a % b;
        a = b;
        b = t;
    }
    uint digits = 0, m = n * 2654435761u;
    while (m) {
        digits += m % 10;
        m /= 10;
    }
    int node = (int)(i % 16), hops = 0;
    while (node >= 0 && hops < 100) {
        node = next[node];
        hops++;
    }
    out[i * 4] = steps;
    out[i * 4 + 1] = a;
    out[i * 4 + 2] = digits;
    out[i * 4 + 3] = (uint)hops;
}
