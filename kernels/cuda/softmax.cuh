/*
 * softmax.cuh — softmax, log_softmax, SoftmaxActivation and SoftmaxOutput
 * on the GPU (softmax.cu), one thread per softmax row; shared with
 * tests/cuda/emulate-softmax.cu.
 *
 * The input is (outer, n, inner) with the softmax over n; row r is
 * (r / inner, ·, r % inner), its elements inner apart, so neighbouring
 * threads read neighbouring addresses when inner > 1.  The arithmetic is
 * the CPU's (kernels/cpu/softmax.c) step for step, in float:
 * e = exp((x − max) / t), out = e / Σe in order; log_softmax =
 * (x − max) / t − log Σe.  Each element is read before its own index is
 * written, so the output may be the input.
 */
#ifndef HY_CUDA_SOFTMAX_CUH
#define HY_CUDA_SOFTMAX_CUH

#include <math.h>

#include "kernels/cuda/launch.cuh"
#include "hybrid-tensor.h"
#include "kernels/params/elementwise.h"

typedef struct hy_cuda_softmax_args {
  int64_t n, inner;
  float t;                      /* temperature */
  bool log;
} hy_cuda_softmax_args;

/* The rows (outer · inner) go to *rows. */
static inline hy_cuda_softmax_args
hy_cuda_softmax_plan (const hy_softmax_params *p, const hy_shape *s,
    int64_t *rows)
{
  hy_cuda_softmax_args m = { 0, 1, p->temperature, p->log };
  int64_t outer = 1;
  if (p->flat) {
    /* SoftmaxOutput's default: everything after the first axis. */
    outer = s->dims[0];
    m.n = outer > 0 ? hy_shape_numel (s) / outer : 0;
  } else {
    const int axis = p->axis < 0 ? p->axis + s->ndim : p->axis;
    for (int i = 0; i < axis; i++)
      outer *= s->dims[i];
    m.n = s->dims[axis];
    for (int i = axis + 1; i < s->ndim; i++)
      m.inner *= s->dims[i];
  }
  *rows = outer * m.inner;
  return m;
}

/* Row r of x into y. */
HY_CUDA_HD void
hy_cuda_softmax_row (const hy_cuda_softmax_args *m, const float *x, float *y,
    int64_t r)
{
  const int64_t ld = m->inner, first = r / ld * m->n * ld + r % ld;
  const int64_t end = first + m->n * ld;
  const float t = m->t;
  float mx = x[first];
  for (int64_t i = first + ld; i < end; i += ld)
    mx = x[i] > mx ? x[i] : mx;

  float sum = 0.0f;
  if (!m->log) {
    for (int64_t i = first; i < end; i += ld) {
      const float e = expf ((x[i] - mx) / t);
      y[i] = e;
      sum += e;
    }
    for (int64_t i = first; i < end; i += ld)
      y[i] /= sum;
  } else {
    for (int64_t i = first; i < end; i += ld)
      sum += expf ((x[i] - mx) / t);
    const float log_sum = logf (sum);
    for (int64_t i = first; i < end; i += ld)
      y[i] = (x[i] - mx) / t - log_sum;
  }
}

#endif /* HY_CUDA_SOFTMAX_CUH */
