// small tiled matrix multiply: 2D NDRange, two local tiles, two barriers per tile step (exact small-integer floats).
#define TILE 4
kernel void matmul_tiled(int n, global const float *a, global const float *b, global float *c)
{
    local float ta[TILE][TILE], tb[TILE][TILE];
    int col = get_global_id(0), row = get_global_id(1);
    int lx = get_local_id(0), ly = get_local_id(1);
    float acc = 0.0f;
    for (int t = 0; t < n / TILE; t++) {
        ta[ly][lx] = a[row * n + t * TILE + lx];
        tb[ly][lx] = b[(t * TILE + ly) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TILE; k++)
            acc += ta[ly][k] * tb[k][lx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    c[row * n + col] = acc;
}
