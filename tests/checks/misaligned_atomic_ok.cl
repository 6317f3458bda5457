// The twin of misaligned_atomic: the atomic is on an aligned int the plain stores never touch.
kernel void k(local int *A)
{
    A[get_local_id(0) + 1] = 42;
    atomic_add(A, 1);
}
