/*
 * conv.c — CPU reference kernel of the quantized _sg_mkldnn_conv, with
 * the arithmetic of MXNet 1.9.1's SgMKLDNNConvOperator:
 *
 *   1. BatchNorm folded into the fp32 weight and bias, per output channel
 *      c: α = gamma / sqrt(var + eps) (double, then float), W' = W·α,
 *      b' = beta + α·(b − mean);
 *   2. W' quantized per output channel: s_w[c] = 127.5 / max|W'[c]|,
 *      Wq = round(W'·s_w[c]) saturated to [-128, 127]; the bias to int32
 *      at the product's scale, bq = round(b'·s_d·s_w[c]), s_d the data's
 *      scale (127.5 / range for int8 data, 255.5 / range for uint8:
 *      MXNet's kInt8Range and kUint8Range), rounding to nearest even;
 *   3. the int32 sum Σ Wq·xq + bq, scaled to the output's calibrated range
 *      (s_out / s_d / s_w[c]), then ReLU, the residual (its integers times
 *      s_out / s_sum), ReLU, rounded to nearest even and saturated to
 *      int8 or uint8 (oneDNN's output scales and post-ops).
 *
 * Steps 1 and 2 are done once per plan call when the weights are
 * constant (hy_qconv_prepared_new, from the backend's prepare_call), as
 * MXNet does them once and caches them, else on every call.  The
 * products are exact in int32 whatever the order.
 */
#include <math.h>
#include <string.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/cpu/quantized/qconv.h"
#include "kernels/cpu/quantized/quantized-common.h"
#include "kernels/params/quantized.h"

void hy_cpu_quantized_conv (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cpu_quantized_conv_prepared (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

typedef struct qconv_job {
  const hy_quantized_conv_params *p;
  int64_t C, H, W, OC, OH, OW, K;
  const int16_t *x;             /* the data's integers */
  const int8_t *wq;             /* OC × K */
  const int32_t *bq;            /* OC (zeros without a bias) */
  const float *requant;         /* OC: s_out / s_d / s_w[c] */
  const float *sum;             /* the residual's integers, or NULL */
  float sum_scale;
  float *y;
  char *acc_base;
  size_t acc_stride;
} qconv_job;

/* One (image, output channel) plane: the products summed into int32 one
 * weight at a time over the whole plane, so the inner loop is a plain
 * multiply-add over a row that vectorises. */
static void
qconv_planes (void *arg, int64_t begin, int64_t end, int thread)
{
  const qconv_job *j = arg;
  const hy_conv_params *cp = &j->p->conv;
  int32_t *acc = (int32_t *) (j->acc_base + (size_t) thread * j->acc_stride);
  int64_t groups = cp->num_group, icg = j->C / groups, ocg = j->OC / groups;
  int64_t kh_n = cp->kernel[0], kw_n = cp->kernel[1];
  int64_t plane = j->OH * j->OW;
  for (int64_t item = begin; item < end; item++) {
    int64_t n = item / j->OC, oc = item % j->OC, g = oc / ocg;
    memset (acc, 0, (size_t) plane * sizeof *acc);
    const int8_t *w = j->wq + oc * j->K;
    for (int64_t ic = 0; ic < icg; ic++) {
      const int16_t *xc = j->x + (n * j->C + g * icg + ic) * j->H * j->W;
      for (int64_t kh = 0; kh < kh_n; kh++) {
        for (int64_t kw = 0; kw < kw_n; kw++) {
          int32_t wv = w[(ic * kh_n + kh) * kw_n + kw];
          if (wv == 0)
            continue;
          for (int64_t oh = 0; oh < j->OH; oh++) {
            int64_t ih = oh * cp->stride[0] - cp->pad[0] + kh * cp->dilate[0];
            if (ih < 0 || ih >= j->H)
              continue;
            const int16_t *xr = xc + ih * j->W;
            int32_t *ar = acc + oh * j->OW;
            int64_t iw0 = kw * cp->dilate[1] - cp->pad[1];
            int64_t s = cp->stride[1];
            for (int64_t ow = 0; ow < j->OW; ow++) {
              int64_t iw = ow * s + iw0;
              if (iw >= 0 && iw < j->W)
                ar[ow] += wv * xr[iw];
            }
          }
        }
      }
    }
    float bias = (float) j->bq[oc];
    float rs = j->requant[oc];
    float *y = j->y + item * plane;
    const float *sum = j->sum ? j->sum + item * plane : NULL;
    for (int64_t i = 0; i < plane; i++)
      y[i] = hy_qconv_finish (((float) acc[i] + bias) * rs,
          sum ? sum[i] : 0.0f, j->sum_scale, j->p);
  }
}

/* The convolution with its weights quantized already (`pre`, set up once
 * per plan call) or, when pre is NULL, quantized here into the
 * workspace. */
static void
run_reference (hy_cpu_ctx *ctx, const hy_quantized_conv_params *p,
    const hy_qconv_prepared *pre, const hy_tensor *const *in,
    hy_tensor *const *out)
{
  hy_quantized_conv_inputs at = hy_quantized_conv_inputs_of (p);
  const hy_shape *ds = &in[0]->shape, *os = &out[0]->shape;
  qconv_job j = {
    .p = p, .C = ds->dims[1], .H = ds->dims[2], .W = ds->dims[3],
    .OC = os->dims[1], .OH = os->dims[2], .OW = os->dims[3],
  };
  int64_t N = ds->dims[0];
  j.K = hy_shape_numel (&in[1]->shape) / j.OC;
  int64_t x_n = N * j.C * j.H * j.W, plane = j.OH * j.OW;

  /* one workspace: the data's integers, the weights, per-channel values,
   * then each thread's accumulator plane */
  size_t x_bytes = ((size_t) x_n * sizeof (int16_t) + 63) & ~(size_t) 63;
  size_t w_bytes = pre ? 0 : ((size_t) (j.OC * j.K) + 63) & ~(size_t) 63;
  size_t c_bytes = ((size_t) j.OC * 16 + 63) & ~(size_t) 63;
  size_t acc_stride = ((size_t) plane * sizeof (int32_t) + 63) & ~(size_t) 63;
  int threads = hy_cpu_n_threads (ctx);
  char *ws = hy_cpu_workspace (ctx, x_bytes + w_bytes + c_bytes
      + acc_stride * (size_t) threads);
  int16_t *x = (int16_t *) ws;
  int8_t *wq = (int8_t *) (ws + x_bytes);
  float *requant = (float *) (ws + x_bytes + w_bytes);
  int32_t *bq = (int32_t *) (requant + j.OC);
  float *wrow_scale = (float *) (bq + j.OC);
  float *bias_f = wrow_scale + j.OC;

  const float *xf = in[0]->data;
  for (int64_t i = 0; i < x_n; i++)
    x[i] = (int16_t) xf[i];

  float s_d = hy_q_scale (p->data_uint8, in[at.min_data]->data[0],
      in[at.max_data]->data[0]);
  float s_out = hy_q_scale (p->out_uint8, p->min_calib, p->max_calib);
  if (pre) {
    wq = pre->wq;
    wrow_scale = pre->s_w;
    bias_f = pre->bias;
  } else {
    hy_qconv_quantize_weights (p, in, s_d, wq, wrow_scale, bias_f);
  }
  for (int64_t oc = 0; oc < j.OC; oc++) {
    bq[oc] = hy_q_round_int32 (wrow_scale[oc] * s_d * bias_f[oc]);
    requant[oc] = s_out / s_d / wrow_scale[oc];
  }
  j.x = x;
  j.wq = wq;
  j.bq = bq;
  j.requant = requant;
  if (p->with_sum) {
    j.sum = in[at.sum]->data;
    j.sum_scale = hy_qconv_sum_scale (p, in, s_out);
  }
  j.y = out[0]->data;
  j.acc_base = ws + x_bytes + w_bytes + c_bytes;
  j.acc_stride = acc_stride;
  hy_cpu_parallel_for (ctx, N * j.OC, hy_cpu_grain (j.K * plane),
      qconv_planes, &j);
  out[1]->data[0] = p->min_calib;
  out[2]->data[0] = p->max_calib;
}

void
hy_cpu_quantized_conv (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  run_reference (ctx, params, NULL, in, out);
}

void
hy_cpu_quantized_conv_prepared (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_qconv_prepared *pre = params;
  hy_quantized_conv_inputs at = hy_quantized_conv_inputs_of (&pre->p);
  float s_d = hy_q_scale (pre->p.data_uint8, in[at.min_data]->data[0],
      in[at.max_data]->data[0]);
  /* weights MXNet would have quantized with a capped scale for this
   * data (a range of [0, 0]): quantized again here, as it does */
  bool capped = hy_qconv_needs_cap (pre->s_w, pre->bias,
      in[1]->shape.dims[0], s_d);
  run_reference (ctx, &pre->p, capped ? NULL : pre, in, out);
}

hy_qconv_prepared *
hy_qconv_prepared_new (const hy_quantized_conv_params *p,
    const hy_tensor *const *in)
{
  hy_qconv_prepared *pre = g_new0 (hy_qconv_prepared, 1);
  int64_t OC = in[1]->shape.dims[0];
  pre->p = *p;
  pre->wq = g_new (int8_t, hy_shape_numel (&in[1]->shape));
  pre->s_w = g_new (float, OC);
  pre->bias = g_new (float, OC);
  hy_qconv_quantize_weights (p, in, 0.0f, pre->wq, pre->s_w, pre->bias);
  return pre;
}

void
hy_qconv_prepared_free (hy_qconv_prepared *pre)
{
  if (!pre)
    return;
  g_free (pre->wq);
  g_free (pre->s_w);
  g_free (pre->bias);
  g_free (pre);
}

void
hy_qconv_quantize_weights (const hy_quantized_conv_params *p,
    const hy_tensor *const *in, float s_d, int8_t *wq, float *s_w,
    float *bias_out)
{
  hy_quantized_conv_inputs at = hy_quantized_conv_inputs_of (p);
  int64_t OC = in[1]->shape.dims[0];
  int64_t K = hy_shape_numel (&in[1]->shape) / OC;
  const float *w = in[1]->data;
  for (int64_t oc = 0; oc < OC; oc++) {
    float alpha = 1.0f, bias = at.bias >= 0 ? in[at.bias]->data[oc] : 0.0f;
    if (p->with_bn) {
      const float *gamma = in[at.bn]->data, *beta = in[at.bn + 1]->data;
      const float *mean = in[at.bn + 2]->data, *var = in[at.bn + 3]->data;
      alpha = (float) ((p->bn_fix_gamma ? 1.0 : (double) gamma[oc])
          / sqrt ((double) var[oc] + p->bn_eps));
      bias = at.bias >= 0 ? beta[oc] + alpha * (bias - mean[oc])
          : beta[oc] - alpha * mean[oc];
    }
    float wmax = 0.0f;
    for (int64_t k = 0; k < K; k++)
      wmax = fmaxf (wmax, fabsf (w[oc * K + k] * alpha));
    float scale = hy_qconv_weight_scale (HY_INT8_RANGE / wmax, bias, s_d);
    /* Rounded to nearest even and saturated (oneDNN's reorder, as
     * MXNet's results show: a product of exactly 34.5 gives 34).
     * scale·max|W'| is 127.5, which rounds to ±128: -128 is an int8 and
     * stays, +128 saturates to 127. */
    for (int64_t k = 0; k < K; k++)
      wq[oc * K + k] = (int8_t) hy_q_saturate (
          rintf (scale * (w[oc * K + k] * alpha)), -128.0f, 127.0f);
    s_w[oc] = scale;
    bias_out[oc] = bias;
  }
}
