// constant memory: program-scope __constant tables (int, float, struct, 2D), a __constant kernel argument, and a constant pointer helper.
typedef struct { int key; float weight; } Entry;

constant int primes[8] = { 2, 3, 5, 7, 11, 13, 17, 19 };
constant float weights[4] = { 0.5f, 0.25f, -1.0f, 8.0f };
constant Entry entries[3] = { { 10, 1.5f }, { -20, 2.0f }, { 30, -0.5f } };
constant short grid[2][4] = { { 1, -2, 3, -4 }, { 100, 200, 300, 400 } };
constant char message[] = "constant";

int lookup(constant int *table, int n, int key)
{
    for (int k = 0; k < n; k++)
        if (table[k] == key)
            return k;
    return -1;
}

kernel void constant_mem(global const int *in, constant int *lut, global int *out, global float *fout)
{
    size_t i = get_global_id(0);
    int x = in[i];
    int idx = x & 7;
    out[i * 4] = primes[idx] * lut[(idx + 1) & 7];
    out[i * 4 + 1] = lookup(lut, 8, x) + lookup(primes, 8, x) * 100;
    out[i * 4 + 2] = grid[idx & 1][idx >> 1] + entries[idx % 3].key;
    out[i * 4 + 3] = message[idx] + (int)sizeof(message);
    fout[i] = weights[idx & 3] * (float)x + entries[idx % 3].weight;
}
