// Structs passed by value to helper functions: each callee changes its own copy, which must not
// reach the caller's struct (clang passes a pointer marked byval; the callee copies).
struct P { int x; int y; float f; };

int bump(struct P v)
{
    v.x += 100;
    v.f *= 2.0f;
    return v.x + v.y + (int)v.f;
}

int twice(struct P v)
{
    int first = bump(v);
    v.y -= 7;
    return first + bump(v) + v.y;
}

kernel void struct_byval_call(global int *out)
{
    size_t i = get_global_id(0);
    struct P s = {(int)i, 2 * (int)i, 1.5f};
    out[4 * i] = bump(s);
    out[4 * i + 1] = twice(s);
    out[4 * i + 2] = s.x;
    out[4 * i + 3] = s.y;
}
