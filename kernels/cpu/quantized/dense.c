/*
 * dense.c — CPU reference kernel of the quantized
 * _sg_mkldnn_fully_connected with float output, as MXNet 1.9.1's
 * SgMKLDNNFCOp computes it: the int8 weight and bias come quantized per
 * tensor from the params file with their ranges; the bias is rescaled to
 * int32 at the product's scale (round(bq · s_d·s_w / s_b)), added to the
 * int32 sum of products, and the total scaled back to float by
 * 1 / s_d / s_w.
 */
#include <math.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/cpu/quantized/quantized-common.h"
#include "kernels/params/quantized.h"

void hy_cpu_quantized_fc (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

void
hy_cpu_quantized_fc (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_quantized_fc_params *p = params;
  int r = p->no_bias ? 2 : 3;   /* where the ranges start */
  int64_t batch = in[0]->shape.dims[0], hidden = p->num_hidden;
  int64_t features = hy_shape_numel (&in[0]->shape) / batch;
  float s_d = hy_q_scale (p->data_uint8, in[r]->data[0], in[r + 1]->data[0]);
  float s_w = hy_q_scale (false, in[r + 2]->data[0], in[r + 3]->data[0]);
  float bias_rescale = 0.0f;
  if (!p->no_bias) {
    float s_b = hy_q_scale (false, in[r + 4]->data[0], in[r + 5]->data[0]);
    bias_rescale = s_d * s_w / s_b;
  }
  float out_scale = (float) (1.0 / s_d / s_w);
  const float *x = in[0]->data, *w = in[1]->data;
  float *y = out[0]->data;
  for (int64_t n = 0; n < batch; n++) {
    for (int64_t o = 0; o < hidden; o++) {
      int32_t acc = 0;
      const float *xr = x + n * features, *wr = w + o * features;
      for (int64_t k = 0; k < features; k++)
        acc += (int32_t) xr[k] * (int32_t) wr[k];
      if (!p->no_bias)
        acc += hy_q_round_int32 (in[2]->data[o] * bias_rescale);
      y[n * hidden + o] = (float) acc * out_scale;
    }
  }
}
