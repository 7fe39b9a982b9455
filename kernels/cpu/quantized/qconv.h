/*
 * qconv.h — the quantized convolution's arithmetic around its integer
 * products, shared by the reference kernel (conv.c) and the oneDNN one
 * (conv-dnnl-int8.c) so that the two compute the same bits.
 */
#ifndef HY_CPU_QUANTIZED_QCONV_H
#define HY_CPU_QUANTIZED_QCONV_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "hybrid-tensor.h"
#include "kernels/cpu/quantized/quantized-common.h"
#include "kernels/params/quantized.h"

/* The BatchNorm folded into the weight and bias (α = γ / sqrt(var + eps)
 * in double, then float; W' = W·α, b' = β + α·(b − mean)), W' quantized
 * per output channel: wq (OC × K int8), s_w (OC), the folded bias (OC,
 * zeros without one).  s_d: the data's scale where it is known (then the
 * weight scales are capped as hy_qconv_weight_scale says), 0 at set-up,
 * where it is not (hy_qconv_needs_cap tells a forward whether that
 * mattered). */
void hy_qconv_quantize_weights (const hy_quantized_conv_params *p,
    const hy_tensor *const *in, float s_d, int8_t *wq, float *s_w,
    float *bias);

/* MXNet's GetWeightScales: a channel's weight scale (127 / max|W'|),
 * capped so that its int32 bias, bias · s_w · s_d, stays within ±2^30
 * ("avoid overflow on bias"; oneDNN mishandles INT32_MAX there).  Only a
 * data range of [0, 0] (s_d = 2^31) or a huge bias reaches the cap. */
static inline float
hy_qconv_weight_scale (float scale, float bias, float s_d)
{
  if (bias == 0.0f || s_d == 0.0f)
    return scale;
  float scale_max = (bias > 0 ? 2147483648.0f : -2147483648.0f) / 2
      / bias / s_d;
  return scale < scale_max ? scale : scale_max;
}

/* Whether weights quantized at set-up (s_d unknown) would have been
 * capped for data of scale s_d: then the forward quantizes them again
 * (the reference, hy_cpu_quantized_conv). */
static inline bool
hy_qconv_needs_cap (const float *s_w, const float *bias, int64_t OC,
    float s_d)
{
  for (int64_t oc = 0; oc < OC; oc++)
    if (hy_qconv_weight_scale (s_w[oc], bias[oc], s_d) != s_w[oc])
      return true;
  return false;
}

/* The weights quantized once, for a call whose weights are constant. */
typedef struct hy_qconv_prepared {
  hy_quantized_conv_params p;
  int8_t *wq;                   /* OC × K */
  float *s_w, *bias;            /* OC each */
} hy_qconv_prepared;

hy_qconv_prepared *hy_qconv_prepared_new (const hy_quantized_conv_params *p,
    const hy_tensor *const *in);
void hy_qconv_prepared_free (hy_qconv_prepared *pre);

/* The residual's scale into the output's steps: MXNet picks the
 * residual's range by the sign of its min, not by its dtype. */
static inline float
hy_qconv_sum_scale (const hy_quantized_conv_params *p,
    const hy_tensor *const *in, float s_out)
{
  hy_quantized_conv_inputs at = hy_quantized_conv_inputs_of (p);
  float sum_min = in[at.min_sum]->data[0];
  return s_out / hy_q_scale (!(sum_min < 0), sum_min,
      in[at.max_sum]->data[0]);
}

/* The result rounded into the output's dtype.  With a residual, MXNet
 * runs the convolution in place on the residual's buffer, so oneDNN
 * saturates to the residual's dtype; the output keeps its own dtype and
 * reads those bytes as it (an int8 residual under a ReLU output caps it at
 * 127; a uint8 one under an int8 output wraps above 127). */
static inline float
hy_qconv_store (float v, const hy_quantized_conv_params *p)
{
  if (!p->with_sum || p->sum_uint8 == p->out_uint8)
    return hy_q_store (v, p->out_uint8);
  float stored = hy_q_store (v, p->sum_uint8);
  if (p->out_uint8)
    return stored < 0 ? stored + 256.0f : stored;
  return stored > 127 ? stored - 256.0f : stored;
}

/* One output from its scaled product v (bias included): ReLU, the
 * residual, ReLU, rounded into the output's dtype. */
static inline float
hy_qconv_finish (float v, float sum, float sum_scale,
    const hy_quantized_conv_params *p)
{
  if (p->with_act)
    v = fmaxf (v, 0.0f);
  if (p->with_sum)
    v += sum_scale * sum;
  if (p->with_postsum_act)
    v = fmaxf (v, 0.0f);
  return hy_qconv_store (v, p);
}

#endif /* HY_CPU_QUANTIZED_QCONV_H */
