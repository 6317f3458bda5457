// tiled 8x8 matrix multiply with a barrier after loading the tiles and another after using them
kernel void matmul_tiled_ok(global const int *A, global const int *B, global int *C, int n)
{
    local int As[4][4];
    local int Bs[4][4];
    size_t lx = get_local_id(0), ly = get_local_id(1);
    size_t col = get_global_id(0), row = get_global_id(1);
    int acc = 0;
    for (int t = 0; t < n; t += 4) {
        As[ly][lx] = A[row * n + t + lx];
        Bs[ly][lx] = B[(t + ly) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < 4; k++) {
            int a = As[ly][k];
            int b = Bs[k][lx];
            acc += a * b;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    C[row * n + col] = acc;
}
