// 64-bit atomics (cl_khr_int64_base_atomics and extended): atom_add sub inc dec xchg cmpxchg min max and or xor on long/ulong.
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
kernel void atom64(global const long *in, global long *acc, global ulong *uacc)
{
    size_t i = get_global_id(0);
    long x = in[i] * 1000000007L;
    atom_add(&acc[0], x);
    atom_sub(&acc[1], x);
    atom_add(&acc[3], atom_inc(&acc[2]));                   // sum of 0..n-1
    atom_dec(&acc[4]);
    atom_add(&acc[5], atom_xchg(&acc[6], 9L) == -9L);       // exactly one sees the initial value
    atom_add(&acc[7], atom_cmpxchg(&acc[8], 0L, 5L) == 0L); // exactly one wins
    atom_min(&acc[9], x);
    atom_max(&acc[10], x);
    atom_and(&acc[11], x | 0x00ff00ff00ff00ffL);
    atom_or(&acc[12], x & 0x0f0f0f0f0f0f0f0fL);
    atom_xor(&acc[13], x);
    atom_add(&uacc[0], 0x100000001UL);
    atom_min(&uacc[1], as_ulong(x));
    atom_max(&uacc[2], as_ulong(x));
}
