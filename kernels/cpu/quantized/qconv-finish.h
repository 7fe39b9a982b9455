/*
 * qconv-finish.h — a quantized convolution's epilogue, vectorised:
 * oneDNN's int32 sums plus the quantized bias, times the per-channel
 * scale, ReLU, the residual, ReLU, rounded into int8 or uint8.  Each
 * element gets exactly hy_qconv_finish's float operations in its order
 * (no fused multiply-add), so the results are the scalar epilogue's,
 * and MXNet's.
 *
 * Why: the scalar epilogue, every flag tested per element, was a quarter
 * of an int8 ResNet-18 forward (perf, 2026-12-02, Xeon).  With the
 * output held as bytes NHWC, one pixel's channels of one filter slice lie
 * together in the sums, the residual and the output, so a run of them is
 * contiguous; written to float planes, a channel's pixels are gathered
 * from the sums 16 at a time.
 */
#ifndef HY_CPU_QUANTIZED_QCONV_FINISH_H
#define HY_CPU_QUANTIZED_QCONV_FINISH_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/params/quantized.h"

/* What is the same for every run of one forward of one convolution. */
typedef struct hy_qconv_epilogue {
  const hy_quantized_conv_params *p;    /* ReLUs, residual, dtypes */
  const int32_t *bias_q;        /* per output channel */
  const float *scales;          /* per output channel */
  float sum_scale;              /* the residual's steps into the output's */
} hy_qconv_epilogue;

/* Fills e; whether the CPU has the AVX-512 the functions below need. */
bool hy_qconv_epilogue_init (hy_qconv_epilogue *e,
    const hy_quantized_conv_params *p, const int32_t *bias_q,
    const float *scales, float sum_scale);

/* Output held as bytes: channels oc0 .. oc0 + n of one pixel.  acc[0 ..
 * n) are their sums; sum (NULL without a residual) and y their bytes,
 * already offset to oc0. */
void hy_qconv_finish_run (const hy_qconv_epilogue *e, int64_t oc0,
    const int32_t *acc, const void *sum, void *y, int64_t n);

/* Output as float planes: n consecutive pixels of channel oc into y.
 * Their sums are acc[i * acc_stride]; the residual, if any, is floats
 * (sum_f[i]) or bytes (sum_b[i * sum_stride]). */
void hy_qconv_finish_plane (const hy_qconv_epilogue *e, int64_t oc,
    const int32_t *acc, int64_t acc_stride, const float *sum_f,
    const void *sum_b, int64_t sum_stride, float *y, int64_t n);

#endif /* HY_CPU_QUANTIZED_QCONV_FINISH_H */
