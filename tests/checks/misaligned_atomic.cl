// An atomic on a misaligned address (defect 8c): named as misaligned, still performed (it
// is inside A), and its race with the plain store to the bytes it overlaps is kept.
kernel void k(local int *A)
{
    A[get_local_id(0) + 1] = 42;
    local char *C = (local char *)A;
    atomic_add((local int *)(C + 1), 1);
}
