// Members read out of vectors that a loop carries (their registers are written on every edge
// into the loop), inside the loop, on the way out of it and after it, and out of values defined
// once: the lowering names a member inside its composite only when nothing but the composite's
// definition writes it.
kernel void extract_phi(global const float4 *in, global float *out)
{
    size_t i = get_global_id(0);
    float4 acc = in[i];
    float first = 0.0f, seen = 0.0f;
    int4 steps = (int4)(0, 1, 2, 3);
    for (int k = 0;; k++) {
        float t = acc.x;
        int s = steps.z;
        acc = acc.yzwx * 0.5f + in[(i + k) % 8];
        steps = steps.wxyz + 1;
        if (k == 0)
            first = t;
        if (k >= (int)(i % 5) + 1) {
            seen = t + (float)s;
            break;
        }
    }
    float4 once = in[7 - i];
    out[i * 4] = first;
    out[i * 4 + 1] = seen;
    out[i * 4 + 2] = acc.y + (float)steps.x;
    out[i * 4 + 3] = once.z * once.x;
}
