/*
 * qconv.h — the quantized convolution's arithmetic around its integer
 * products, shared by the reference kernel (conv.c) and the oneDNN one
 * (conv-dnnl-int8.c) so that the two compute the same bits.
 */
#ifndef HY_CPU_QUANTIZED_QCONV_H
#define HY_CPU_QUANTIZED_QCONV_H

#include <math.h>
#include <stdint.h>

#include "hybrid-tensor.h"
#include "kernels/cpu/quantized/quantized-common.h"
#include "kernels/params/quantized.h"

/* The BatchNorm folded into the weight and bias (α = γ / sqrt(var + eps)
 * in double, then float; W' = W·α, b' = β + α·(b − mean)), W' quantized
 * per output channel: wq (OC × K int8), s_w (OC), the folded bias (OC,
 * zeros without one). */
void hy_qconv_quantize_weights (const hy_quantized_conv_params *p,
    const hy_tensor *const *in, int8_t *wq, float *s_w, float *bias);

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
