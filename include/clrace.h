/* clrace.h: assertions that only clrace checks.
 *
 * clrace compiles every program for its emulator with -D__CLRACE__=1; the real OpenCL driver
 * never sees that macro, so there CLRACE_ASSERT compiles to nothing and costs nothing. In the
 * emulator a CLRACE_ASSERT that does not hold is an "assertion-failed" finding naming the
 * expression, the work-item and the line (and, under `clrace check --explore`, the schedule);
 * the kernel carries on. Copy this file next to your kernels, or add -I for the directory the
 * clrace package installs it in (/usr/share/clrace/include).
 */
#ifndef CLRACE_H
#define CLRACE_H

#ifdef __CLRACE__
void __clrace_assert(int cond, __constant char *msg);
#define CLRACE_ASSERT(c) __clrace_assert((c), #c)
#else
#define CLRACE_ASSERT(c) ((void)0)
#endif

#endif
