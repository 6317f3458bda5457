// Pointer arithmetic: signed and unsigned indices, multi-dimensional arrays, pointer differences.
kernel void pointers(global int *out, global const int *in, int stride, uint u, global int2 *pairs) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    global const int *row = in + y * stride;
    out[x + y * stride] = row[x] + in[u] + pairs[x].y;
    global int *end = out + stride;
    out[0] = (int)(end - out);
    global int (*grid)[4] = (global int (*)[4])out;
    grid[y][x & 3] += 1;
}
