/*
 * window.h — where a sliding window meets the image, for the kernels that
 * slide one along a row (convolution's im2col, pooling).
 */
#ifndef HY_CPU_WINDOW_H
#define HY_CPU_WINDOW_H

#include <stdint.h>

/* The output positions o in [0, n_out) whose input o·stride − pad + off
 * falls inside [0, size): [*lo, *hi). */
static inline void
hy_window_valid_range (int64_t n_out, int64_t stride, int64_t pad,
    int64_t off, int64_t size, int64_t *lo, int64_t *hi)
{
  /* o·stride ≥ pad − off  and  o·stride < size + pad − off */
  const int64_t a = pad - off, b = size + pad - off;
  int64_t l = a > 0 ? (a + stride - 1) / stride : 0;
  int64_t h = b > 0 ? (b + stride - 1) / stride : 0;
  if (h > n_out)
    h = n_out;
  if (l > h)
    l = h;
  *lo = l;
  *hi = h;
}

#endif /* HY_CPU_WINDOW_H */
