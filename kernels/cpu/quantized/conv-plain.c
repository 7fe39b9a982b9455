/*
 * conv-plain.c — CPU kernel of MXNet's unfused _contrib_quantized_conv:
 * int8 (or uint8) data and int8 weights, 2-D NCHW, to the exact int32
 * sums of their products and the range those sums stand for
 * (kernels/params/quantized.h).  What quantize_net writes for the GPU;
 * the CUDA kernel (cuDNN's int8 convolution) computes the same integers.
 *
 * The integers are summed in 64 bits and wrapped to int32 at the end, as
 * the int32 accumulators of oneDNN and cuDNN wrap (a sum that large needs
 * more than 2^17 products of the extremes, which no real layer has), so a
 * hostile weight never overflows a signed int.  Values are held as
 * floats: the data's are its dtype's integers already (a quantized op's
 * output); the weights' are saturated to int8 and rounded, NaN as 0, so
 * that a params file with other values cannot reach undefined behaviour.
 */
#include <math.h>
#include <stdint.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/params/quantized.h"

void hy_cpu_quantized_conv_plain (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

/* A held value as the integer MXNet would hold, saturated to [lo, hi]. */
static int32_t
to_int (float v, float lo, float hi)
{
  if (v != v)
    return 0;
  float r = rintf (v);
  return (int32_t) (r < lo ? lo : r > hi ? hi : r);
}

typedef struct qconv_plain_job {
  const hy_conv_params *cp;
  int64_t C, H, W, OC, OH, OW;
  const int16_t *x;             /* the data's integers, N × C × H × W */
  const int8_t *w;              /* OC × C × KH × KW (one group) */
  float *y;
} qconv_plain_job;

/* One (image, output channel) plane. */
static void
qconv_plain_planes (void *arg, int64_t begin, int64_t end, int thread)
{
  const qconv_plain_job *j = arg;
  const hy_conv_params *cp = j->cp;
  const int64_t C = j->C, KH = cp->kernel[0], KW = cp->kernel[1];
  for (int64_t plane = begin; plane < end; plane++) {
    const int64_t n = plane / j->OC, oc = plane % j->OC;
    const int8_t *w = j->w + oc * C * KH * KW;
    float *y = j->y + plane * j->OH * j->OW;
    for (int64_t oh = 0; oh < j->OH; oh++)
      for (int64_t ow = 0; ow < j->OW; ow++) {
        int64_t acc = 0;
        for (int64_t ic = 0; ic < C; ic++) {
          const int16_t *x = j->x + (n * C + ic) * j->H * j->W;
          for (int64_t kh = 0; kh < KH; kh++) {
            const int64_t ih = oh * cp->stride[0] - cp->pad[0]
                + kh * cp->dilate[0];
            if (ih < 0 || ih >= j->H)
              continue;
            for (int64_t kw = 0; kw < KW; kw++) {
              const int64_t iw = ow * cp->stride[1] - cp->pad[1]
                  + kw * cp->dilate[1];
              if (iw >= 0 && iw < j->W)
                acc += (int64_t) x[ih * j->W + iw]
                    * w[(ic * KH + kh) * KW + kw];
            }
          }
        }
        /* two's complement wrap, as an int32 accumulator does */
        y[oh * j->OW + ow] = (float) (int32_t) (uint32_t) acc;
      }
  }
}

void
hy_cpu_quantized_conv_plain (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_quantized_conv_plain_params *p = params;
  const hy_shape *xs = &in[0]->shape, *ys = &out[0]->shape;
  const int64_t nx = hy_shape_numel (xs), nw = hy_shape_numel (&in[1]->shape);

  /* MXNet's QuantizationRangeForS8S8Multiplication, in its float steps */
  const float data_step = fmaxf (fabsf (in[2]->data[0]),
      fabsf (in[3]->data[0])) / 127.0f;
  const float weight_step = fmaxf (fabsf (in[4]->data[0]),
      fabsf (in[5]->data[0])) / 127.0f;
  const float range = data_step * weight_step * HY_INT32_RANGE;
  out[1]->data[0] = -range;
  out[2]->data[0] = range;

  const int64_t planes = ys->dims[0] * ys->dims[1];
  if (planes == 0 || ys->dims[2] * ys->dims[3] == 0)
    return;
  int16_t *x = hy_cpu_workspace (ctx, (size_t) nx * sizeof *x
      + (size_t) nw * sizeof (int8_t));
  int8_t *w = (int8_t *) (x + nx);
  const float lo = p->data_uint8 ? 0.0f : -128.0f;
  const float hi = p->data_uint8 ? 255.0f : 127.0f;
  for (int64_t i = 0; i < nx; i++)
    x[i] = (int16_t) to_int (in[0]->data[i], lo, hi);
  for (int64_t i = 0; i < nw; i++)
    w[i] = (int8_t) to_int (in[1]->data[i], -128.0f, 127.0f);

  qconv_plain_job j = {
    .cp = &p->conv, .C = xs->dims[1], .H = xs->dims[2], .W = xs->dims[3],
    .OC = ys->dims[1], .OH = ys->dims[2], .OW = ys->dims[3],
    .x = x, .w = w, .y = out[0]->data,
  };
  hy_cpu_parallel_for (ctx, planes, 1, qconv_plain_planes, &j);
}
