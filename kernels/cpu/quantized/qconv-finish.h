/*
 * qconv-finish.h — a quantized convolution's epilogue over a run of
 * output channels held as bytes: oneDNN's int32 sums plus the quantized
 * bias, times the per-channel scale, ReLU, the residual, ReLU, rounded
 * into int8 or uint8.  Each element gets exactly hy_qconv_finish's float
 * operations in its order (no fused multiply-add), so the bytes are the
 * scalar epilogue's, and MXNet's.
 *
 * Why a run: with the output held as bytes NHWC, one pixel's channels of
 * one filter slice lie together in the sums, the residual and the output,
 * so the whole pass is contiguous and takes 16 channels a step with
 * AVX-512; the scalar loop it replaces was a quarter of an int8 ResNet-18
 * forward (perf, 2026-12-02, Xeon).
 */
#ifndef HY_CPU_QUANTIZED_QCONV_FINISH_H
#define HY_CPU_QUANTIZED_QCONV_FINISH_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/params/quantized.h"

/* What is the same for every run of one forward of one convolution. */
typedef struct hy_qconv_epilogue {
  const int32_t *bias_q;        /* per output channel */
  const float *scales;          /* per output channel */
  float sum_scale;              /* the residual's steps into the output's */
  bool act, sum, postsum_act;
  bool sum_uint8, out_uint8;
} hy_qconv_epilogue;

/* Whether runs can take this convolution: not where the residual's dtype
 * differs from the output's (hy_qconv_store's wrap, left to the scalar
 * epilogue) or the CPU lacks AVX-512. */
bool hy_qconv_epilogue_init (hy_qconv_epilogue *e,
    const hy_quantized_conv_params *p, const int32_t *bias_q,
    const float *scales, float sum_scale);

/* Channels oc0 .. oc0 + n of one pixel: acc[0 .. n) are their sums, sum
 * (NULL without a residual) and y their bytes, already offset to oc0. */
void hy_qconv_finish_run (const hy_qconv_epilogue *e, int64_t oc0,
    const int32_t *acc, const void *sum, void *y, int64_t n);

#endif /* HY_CPU_QUANTIZED_QCONV_FINISH_H */
