/* Force-included by clrace's compile step (src/compile/build.rs) before every OpenCL C source.
 *
 * It rewrites calls that clang accepts but llvm-spirv-15 aborts on, into equivalent calls it
 * translates. Every rewrite is a macro, so that the calls it makes keep the source line of the
 * call they replace (reports name the user's line, never this file).
 */

/* Fence flags that are not a compile-time constant (a kernel argument, say): llvm-spirv-15
 * wants a constant. For a fence, `call(flags, rest...)` becomes a branch over the eight values
 * of the three flag bits (local, global, image), each with a constant; constant flags are left
 * alone. Barriers are below. */
#define __CLRACE_FENCE_FLAGS(call, flags, ...)                                                    \
    __builtin_choose_expr(__builtin_constant_p(flags), call((flags)__VA_ARGS__), ({              \
        uint __clrace_flags = (uint)(flags) & 7u;                                                 \
        if (__clrace_flags == 0u)                                                                 \
            call(0 __VA_ARGS__);                                                                  \
        else if (__clrace_flags == 1u)                                                            \
            call(1 __VA_ARGS__);                                                                  \
        else if (__clrace_flags == 2u)                                                            \
            call(2 __VA_ARGS__);                                                                  \
        else if (__clrace_flags == 3u)                                                            \
            call(3 __VA_ARGS__);                                                                  \
        else if (__clrace_flags == 4u)                                                            \
            call(4 __VA_ARGS__);                                                                  \
        else if (__clrace_flags == 5u)                                                            \
            call(5 __VA_ARGS__);                                                                  \
        else if (__clrace_flags == 6u)                                                            \
            call(6 __VA_ARGS__);                                                                  \
        else                                                                                      \
            call(7 __VA_ARGS__);                                                                  \
    }))

/* A barrier with such flags must stay ONE barrier: a branch would give work-items whose flags
 * differ different barriers, a divergence they did not write. So each work-item first names the
 * spaces its flags hold with a marker (a relaxed fence at work-item scope, which orders nothing
 * by itself; OpenCL C allows memory_scope_work_item for image fences only, and only a marker at
 * the barrier's own source location counts), then all call the barrier with no flags. At the
 * barrier, clrace's race detector fences the union of the spaces the work-items marked at that
 * call: see BarrierMark in src/detect/group.rs. */
void __attribute__((overloadable)) __spirv_MemoryBarrier(uint scope, uint semantics);
#define __CLRACE_BARRIER_FLAGS(call, flags, ...)                                                  \
    __builtin_choose_expr(__builtin_constant_p(flags), call((flags)__VA_ARGS__), ({              \
        uint __clrace_flags = (uint)(flags);                                                      \
        if (__clrace_flags & 1u) /* CLK_LOCAL_MEM_FENCE: Invocation scope, WorkgroupMemory */    \
            __spirv_MemoryBarrier(4u, 0x100u);                                                    \
        if (__clrace_flags & 2u) /* CLK_GLOBAL_MEM_FENCE: CrossWorkgroupMemory */                 \
            __spirv_MemoryBarrier(4u, 0x200u);                                                    \
        if (__clrace_flags & 4u) /* CLK_IMAGE_MEM_FENCE: ImageMemory */                           \
            __spirv_MemoryBarrier(4u, 0x800u);                                                    \
        call(0 __VA_ARGS__);                                                                      \
    }))

#define barrier(flags) __CLRACE_BARRIER_FLAGS(barrier, flags)
#define mem_fence(flags) __CLRACE_FENCE_FLAGS(mem_fence, flags)
#define read_mem_fence(flags) __CLRACE_FENCE_FLAGS(read_mem_fence, flags)
#define write_mem_fence(flags) __CLRACE_FENCE_FLAGS(write_mem_fence, flags)

#if defined(__OPENCL_C_VERSION__) && __OPENCL_C_VERSION__ >= 200
/* work_group_barrier(flags) and work_group_barrier(flags, scope): the first argument only. */
#define work_group_barrier(flags, ...) __CLRACE_BARRIER_FLAGS(work_group_barrier, flags, , ##__VA_ARGS__)
#define atomic_work_item_fence(flags, ...) __CLRACE_FENCE_FLAGS(atomic_work_item_fence, flags, , __VA_ARGS__)
#if defined(cl_khr_subgroups)
#define sub_group_barrier(flags, ...) __CLRACE_BARRIER_FLAGS(sub_group_barrier, flags, , ##__VA_ARGS__)
#endif

/* Compare-exchange on atomic_float and atomic_double: llvm-spirv-15 aborts on them. They become
 * the compare-exchange of the integer of the same size on the same bits (compare-exchange
 * compares object representations, so the result is the same). */
#define __CLRACE_POINTERS(T, ...)                                                                 \
    volatile __global T * : __VA_ARGS__, __global T * : __VA_ARGS__,                              \
    volatile __local T * : __VA_ARGS__, __local T * : __VA_ARGS__,                                \
    volatile T * : __VA_ARGS__, T * : __VA_ARGS__
#define __CLRACE_CAS_FLOAT(call, obj, expected, desired, ...)                                     \
    __CLRACE_POINTERS(atomic_float, call((volatile atomic_int *)(obj), (int *)(expected),        \
                                         as_int((float)(desired))__VA_ARGS__))
#if defined(cl_khr_fp64) && defined(cl_khr_int64_base_atomics) && defined(cl_khr_int64_extended_atomics)
#define __CLRACE_CAS_DOUBLE(call, obj, expected, desired, ...)                                    \
    __CLRACE_POINTERS(atomic_double, call((volatile atomic_long *)(obj), (long *)(expected),     \
                                          as_long((double)(desired))__VA_ARGS__)),
#else
#define __CLRACE_CAS_DOUBLE(call, obj, expected, desired, ...)
#endif
#define __CLRACE_CAS(call, obj, expected, desired, ...)                                           \
    _Generic((obj),                                                                               \
        __CLRACE_CAS_FLOAT(call, obj, expected, desired, __VA_ARGS__),                            \
        __CLRACE_CAS_DOUBLE(call, obj, expected, desired, __VA_ARGS__)                            \
        default: call((obj), (expected), (desired)__VA_ARGS__))

#define atomic_compare_exchange_strong(obj, expected, desired)                                    \
    __CLRACE_CAS(atomic_compare_exchange_strong, obj, expected, desired, )
#define atomic_compare_exchange_weak(obj, expected, desired)                                      \
    __CLRACE_CAS(atomic_compare_exchange_weak, obj, expected, desired, )
#define atomic_compare_exchange_strong_explicit(obj, expected, desired, ...)                      \
    __CLRACE_CAS(atomic_compare_exchange_strong_explicit, obj, expected, desired, , __VA_ARGS__)
#define atomic_compare_exchange_weak_explicit(obj, expected, desired, ...)                        \
    __CLRACE_CAS(atomic_compare_exchange_weak_explicit, obj, expected, desired, , __VA_ARGS__)
#endif
