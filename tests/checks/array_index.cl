// Indexing past a char[2] inside a struct (check 13): for work-items 2 and 3 the element is
// still inside the struct, so only the array's own extent can tell.
struct S { int a; char b[2]; };
kernel void static_array_index(global char *out)
{
    volatile struct S s = {-1, {42, 7}};
    int i = get_global_id(0);
    out[i] = s.b[i];
}
