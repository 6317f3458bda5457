// -D build options: object-like and function-like macros, a flag macro tested with #ifdef, a macro used as an array size.
#ifndef N
#error "N must be defined with -D"
#endif

kernel void build_defines(global const int *in, global int *out)
{
    size_t i = get_global_id(0);
    int window[N];
    for (int k = 0; k < N; k++)
        window[k] = in[(i + k) % get_global_size(0)];
    int acc = 0;
    for (int k = 0; k < N; k++)
        acc += SCALE * window[k];
#ifdef FLAG
    acc = -acc;
#endif
#ifdef UNSET_FLAG
    acc = 0;
#endif
    out[i] = acc + OFFSET(i);
}
