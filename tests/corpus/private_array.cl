// private arrays: initialisers (full, partial, 2D, char string), data-dependent indexing, in-place sort, array passed to a function.
int sum_first(const int *a, int n)
{
    int s = 0;
    for (int k = 0; k < n; k++)
        s += a[k];
    return s;
}

kernel void private_array(global const int *in, global int *out)
{
    size_t i = get_global_id(0);
    int table[8] = { 3, 1, 4, 1, 5, 9, 2, 6 };
    int partial[6] = { 7, -7 };                // the rest is zero
    float grid[2][3] = { { 0.5f, 1.5f, 2.5f }, { -1.0f, -2.0f, -3.0f } };
    char word[] = "race";                       // 5 bytes with the terminating NUL
    int v[8];
    for (int k = 0; k < 8; k++)
        v[k] = in[(i * 8 + k) % 64] ^ table[(k + i) & 7];
    for (int a = 1; a < 8; a++) {              // insertion sort
        int x = v[a], b = a - 1;
        while (b >= 0 && v[b] > x) {
            v[b + 1] = v[b];
            b--;
        }
        v[b + 1] = x;
    }
    int idx = in[i] & 7;
    partial[idx % 6] += table[idx];
    global int *o = out + i * 12;
    for (int k = 0; k < 8; k++)
        o[k] = v[k];
    o[8] = sum_first(partial, 6) + sum_first(table, idx);
    o[9] = (int)(grid[idx & 1][idx % 3] * 4.0f);
    o[10] = word[idx % 5] + sizeof(word);
    o[11] = table[7 - idx] * partial[1];
}
