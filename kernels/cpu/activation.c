/*
 * activation.c — Activation and LeakyReLU on the CPU, elementwise with
 * MXNet 1.9.1's formulas.  The output may be the input (the ops are
 * inplace), so the loops take no restrict pointers: gcc still vectorises
 * them, checking at run time that the arrays are equal or apart.
 */
#include <math.h>
#include <string.h>

#include "cpu-kernel.h"
#include "blas.h"
#include "nn.h"

void hy_cpu_activation (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cpu_leaky_relu (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

/* SELU's constants (Klambauer et al.), as MXNet uses them. */
#define SELU_LAMBDA 1.0507009873554804934193349852946f
#define SELU_ALPHA  1.6732632423543772848170429916717f

/* softrelu switches to the identity above 20, where log1p(exp x) == x in
 * float32 anyway and exp would soon overflow. */
#define SOFTRELU_LINEAR_ABOVE 20.0f

HY_CPU_VECTOR_CLONES static void
relu (float *y, const float *x, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

HY_CPU_VECTOR_CLONES static void
leaky (float *y, const float *x, int64_t n, float slope)
{
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0.0f ? x[i] : x[i] * slope;
}

void
hy_cpu_activation (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_activation_params *p = params;
  const float *x = in[0]->data;
  float *y = out[0]->data;
  const int64_t n = hy_shape_numel (&in[0]->shape);

  switch (p->act_type) {
    case HY_ACT_RELU:
      relu (y, x, n);
      break;
    case HY_ACT_SIGMOID:
      for (int64_t i = 0; i < n; i++)
        y[i] = 1.0f / (1.0f + expf (-x[i]));
      break;
    case HY_ACT_TANH:
      for (int64_t i = 0; i < n; i++)
        y[i] = tanhf (x[i]);
      break;
    case HY_ACT_SOFTRELU:
      for (int64_t i = 0; i < n; i++)
        y[i] = x[i] > SOFTRELU_LINEAR_ABOVE ? x[i] : log1pf (expf (x[i]));
      break;
    case HY_ACT_SOFTSIGN:
      for (int64_t i = 0; i < n; i++)
        y[i] = x[i] / (1.0f + fabsf (x[i]));
      break;
  }
}

/* prelu: gamma is one slope, one per element, or one per channel of the
 * axis it matches (1 when it fits there, else 0; see core/ops/nn-act.c). */
static void
prelu (const hy_tensor *data, const hy_tensor *gamma, hy_tensor *out)
{
  const hy_shape *ds = &data->shape;
  const int64_t n = hy_shape_numel (ds), ng = hy_shape_numel (&gamma->shape);
  const float *x = data->data, *g = gamma->data;
  float *y = out->data;

  if (ng == n && hy_shape_equal (ds, &gamma->shape)) {
    for (int64_t i = 0; i < n; i++)
      y[i] = x[i] > 0.0f ? x[i] : x[i] * g[i];
    return;
  }
  if (ng == 1) {
    const float s = g[0];
    for (int64_t i = 0; i < n; i++)
      y[i] = x[i] > 0.0f ? x[i] : x[i] * s;
    return;
  }
  const int axis = ds->ndim >= 2 && ds->dims[1] == ng ? 1 : 0;
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; i++)
    outer *= ds->dims[i];
  for (int i = axis + 1; i < ds->ndim; i++)
    inner *= ds->dims[i];
  for (int64_t o = 0; o < outer; o++) {
    for (int64_t c = 0; c < ng; c++) {
      const int64_t base = (o * ng + c) * inner;
      const float s = g[c];
      for (int64_t i = 0; i < inner; i++)
        y[base + i] = x[base + i] > 0.0f ? x[base + i] : x[base + i] * s;
    }
  }
}

void
hy_cpu_leaky_relu (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_leaky_relu_params *p = params;
  const float *x = in[0]->data;
  float *y = out[0]->data;
  const int64_t n = hy_shape_numel (&in[0]->shape);
  const float slope = p->slope;

  switch (p->act_type) {
    case HY_LEAKY_LEAKY:
    case HY_LEAKY_RRELU:        /* parse() stored the inference slope */
      leaky (y, x, n, slope);
      if (n_out > 1)            /* the training-only mask */
        memset (out[1]->data, 0, (size_t) n * sizeof (float));
      break;
    case HY_LEAKY_PRELU:
      prelu (in[0], in[1], out[0]);
      break;
    case HY_LEAKY_ELU:
      for (int64_t i = 0; i < n; i++)
        y[i] = x[i] > 0.0f ? x[i] : slope * expm1f (x[i]);
      break;
    case HY_LEAKY_SELU:
      for (int64_t i = 0; i < n; i++)
        y[i] = SELU_LAMBDA * (x[i] > 0.0f ? x[i] : SELU_ALPHA * expm1f (x[i]));
      break;
    case HY_LEAKY_GELU:
      for (int64_t i = 0; i < n; i++)
        y[i] = 0.5f * x[i] * (1.0f + erff (x[i] * (float) M_SQRT1_2));
      break;
  }
}
