// The kernel scales its input in place, but the host created that buffer CL_MEM_READ_ONLY
// (`ro`): every work-item's store to `data` is an access-mode finding (one, counted 8 times).
kernel void scale(global int *data, global int *result)
{
    size_t i = get_global_id(0);
    data[i] = data[i] * 2;
    result[i] = data[i];
}
