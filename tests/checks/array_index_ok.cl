// The twin of array_index: every index names an element of the array.
struct S { int a; char b[2]; };
kernel void static_array_index(global char *out)
{
    volatile struct S s = {-1, {42, 7}};
    int i = get_global_id(0);
    out[i] = s.b[i % 2];
}
