// printf with integers, floats, vectors, strings and pointers.
kernel void print(global int *p, float x) {
    int g = get_global_id(0);
    if (g == 0) {
        printf("g=%d x=%f hex=%#x\n", g, x, (uint)g);
        printf("%s %c %v4d %p\n", "text", 'c', (int4)(1, 2, 3, 4), p);
        printf("%5.2e|%-4ld|\n", (double)x, (long)g);
    }
}
