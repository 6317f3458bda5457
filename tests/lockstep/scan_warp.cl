// An inclusive scan within each run of 32 work-items, with no barrier: correct only when the 32
// run in lockstep (GPUVerify's warp-synchronous scan).
kernel void scan_warp(global int *A) {
    int tid = get_global_id(0);
    int lane = get_local_id(0) % 32;
    if (lane >= 1)
        A[tid] = A[tid - 1] + A[tid];
    if (lane >= 2)
        A[tid] = A[tid - 2] + A[tid];
    if (lane >= 4)
        A[tid] = A[tid - 4] + A[tid];
    if (lane >= 8)
        A[tid] = A[tid - 8] + A[tid];
    if (lane >= 16)
        A[tid] = A[tid - 16] + A[tid];
}
