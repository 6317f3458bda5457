// Private structs initialised with a mix of constants and addresses: clang keeps the constant part
// in a module-scope constant (Function storage class in SPIR-V) that each work-item copies from.
struct S { int a[8]; int *p; };
struct T { float w[6]; local int *q; };

kernel void private_constinit(global int *out, global float *fout)
{
    local int shared_value;
    int x = 100 + (int)get_global_id(0);
    struct S s = {{1, 2, 3, 4, 5, 6, 7, 8}, &x};
    struct T t = {{0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f}, &shared_value};
    size_t i = get_global_id(0), l = get_local_id(0);
    if (l == 0)
        shared_value = 7;
    barrier(CLK_LOCAL_MEM_FENCE);
    s.a[i % 8] += (int)i;   // each work-item changes its own copy only
    out[2 * i] = s.a[i % 8] + *s.p;
    out[2 * i + 1] = s.a[(i + 1) % 8] + *t.q;
    fout[i] = t.w[i % 6] * 2.0f;
}
