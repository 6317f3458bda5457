// Escape-time rendering of the Mandelbrot set, one pixel per work-item, as fractal viewers
// and GPU demos do it: the iteration count depends on the pixel, so work-items of one group
// leave the loop at very different times (heavy divergence), and the work goes through helper
// functions kept out of line (a call per iteration).
//
// No contraction into fused multiply-adds: every device then computes the same bits, so the
// counts can be compared with a native run exactly.
#pragma OPENCL FP_CONTRACT OFF

typedef struct {
  float re, im;
} complex_t;

// z * z + c
__attribute__((noinline)) complex_t square_add(complex_t z, complex_t c) {
  complex_t r;
  r.re = z.re * z.re - z.im * z.im + c.re;
  r.im = 2.0f * z.re * z.im + c.im;
  return r;
}

__attribute__((noinline)) float norm2(complex_t z) { return z.re * z.re + z.im * z.im; }

// Points in the main cardioid or the period-2 bulb never escape: renderers test for them first
// and skip their loop.
__attribute__((noinline)) bool in_main_bulbs(complex_t c) {
  float x = c.re - 0.25f;
  float q = x * x + c.im * c.im;
  if (q * (q + x) <= 0.25f * c.im * c.im)
    return true;
  float y = c.re + 1.0f;
  return y * y + c.im * c.im <= 0.0625f;
}

// Iterations until |z| > 2, at most max_iter.
__attribute__((noinline)) uint escape_time(complex_t c, uint max_iter) {
  if (in_main_bulbs(c))
    return max_iter;
  complex_t z = c;
  uint n = 0;
  while (n < max_iter && norm2(z) <= 4.0f) {
    z = square_add(z, c);
    n++;
  }
  return n;
}

// The colour of an iteration count: a palette of three ramps, black inside the set.
__attribute__((noinline)) uint shade(uint n, uint max_iter) {
  if (n >= max_iter)
    return 0xff000000u;
  uint t = n % 48, r, g, b;
  if (t < 16) {
    r = t * 16;
    g = 255 - t * 16;
    b = 64;
  } else if (t < 32) {
    r = 255 - (t - 16) * 16;
    g = 64;
    b = (t - 16) * 16;
  } else {
    r = 64;
    g = (t - 32) * 16;
    b = 255 - (t - 32) * 16;
  }
  return 0xff000000u | (r << 16) | (g << 8) | b;
}

// Pixel (x, y) is the point (x0 + x * step, y0 + y * step).
kernel void mandelbrot(const uint width, const uint max_iter, const float x0, const float y0,
                       const float step, global uint *counts, global uint *rgba) {
  uint x = get_global_id(0), y = get_global_id(1);
  complex_t c;
  c.re = x0 + (float)x * step;
  c.im = y0 + (float)y * step;
  uint n = escape_time(c, max_iter);
  counts[y * width + x] = n;
  rgba[y * width + x] = shade(n, max_iter);
}
