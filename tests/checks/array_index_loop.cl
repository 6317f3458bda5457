// Index checks in a loop: `t[lid]` is checked once before the loop and again inside (a repeated
// check the lowering drops), while `t[k]` with the loop counter running one past the end must
// still be reported, and so must `u[lid]` past its end inside the loop.
kernel void sweep(global int *out)
{
    int t[4] = {1, 2, 3, 4};
    int u[2] = {5, 6};
    int lid = get_local_id(0);
    int sum = t[lid];
    for (int k = 0; k <= 4; k++)
        sum += t[k] + t[lid] + u[lid];
    out[lid] = sum;
}
