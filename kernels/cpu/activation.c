/*
 * activation.c — Activation and LeakyReLU on the CPU, elementwise with
 * MXNet 1.9.1's formulas.  The output may be the input (the ops are
 * inplace), so the loops take no restrict pointers: gcc still vectorises
 * them, checking at run time that the arrays are equal or apart.  Large
 * tensors are split into ranges over the context's threads.
 */
#include <math.h>
#include <string.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/cpu/cpu-features.h"
#include "kernels/params/nn.h"

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

/* MXNet's relu is `isnan(x) || x > 0 ? x : 0`: NaN passes through, −0
 * becomes +0.  !(x <= 0) says the same in one comparison (unordered is
 * true), so the loop still vectorises to a compare and a mask. */
HY_CPU_VECTOR_CLONES static void
relu (float *y, const float *x, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    y[i] = !(x[i] <= 0.0f) ? x[i] : 0.0f;
}

HY_CPU_VECTOR_CLONES static void
leaky (float *y, const float *x, int64_t n, float slope)
{
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0.0f ? x[i] : x[i] * slope;
}

/* One activation over a range of values: Activation's act_type, or for
 * LeakyReLU (leaky = true) its act_type with `slope`. */
typedef struct act_job {
  bool leaky;
  int act_type;
  float slope;
  const float *x;
  float *y;
} act_job;

static void
activation_span (int act_type, const float *x, float *y, int64_t n)
{
  switch (act_type) {
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

/* LeakyReLU's elementwise forms (prelu is apart). */
static void
leaky_span (int act_type, float slope, const float *x, float *y, int64_t n)
{
  switch (act_type) {
    case HY_LEAKY_LEAKY:
    case HY_LEAKY_RRELU:        /* parse() stored the inference slope */
      leaky (y, x, n, slope);
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
    default:
      break;
  }
}

static void
act_range (void *arg, int64_t begin, int64_t end, int thread)
{
  const act_job *j = arg;
  if (j->leaky)
    leaky_span (j->act_type, j->slope, j->x + begin, j->y + begin,
        end - begin);
  else
    activation_span (j->act_type, j->x + begin, j->y + begin, end - begin);
}

void
hy_cpu_activation (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_activation_params *p = params;
  const act_job j = {
    false, p->act_type, 0.0f, in[0]->data, out[0]->data,
  };
  hy_cpu_parallel_for (ctx, hy_shape_numel (&in[0]->shape),
      HY_CPU_MIN_THREAD_FLOATS, act_range, (void *) &j);
}

/* prelu over runs [begin, end) of `inner` values: run r's slope is
 * g[r mod ng], or each value has its own (per_element). */
typedef struct prelu_job {
  const float *x, *g;
  float *y;
  int64_t ng, inner;
  bool per_element;
} prelu_job;

static void
prelu_runs (void *arg, int64_t begin, int64_t end, int thread)
{
  const prelu_job *j = arg;
  for (int64_t r = begin; r < end; r++) {
    const int64_t base = r * j->inner;
    const float *x = j->x + base;
    float *y = j->y + base;
    if (j->per_element) {
      const float *g = j->g + base;
      for (int64_t i = 0; i < j->inner; i++)
        y[i] = x[i] > 0.0f ? x[i] : x[i] * g[i];
    } else {
      const float s = j->g[r % j->ng];
      for (int64_t i = 0; i < j->inner; i++)
        y[i] = x[i] > 0.0f ? x[i] : x[i] * s;
    }
  }
}

/* prelu: gamma is one slope, one per element, or one per channel of the
 * axis it matches (1 when it fits there, else 0; see core/ops/nn-act.c). */
static void
prelu (hy_cpu_ctx *ctx, const hy_tensor *data, const hy_tensor *gamma,
    hy_tensor *out)
{
  const hy_shape *ds = &data->shape;
  const int64_t n = hy_shape_numel (ds), ng = hy_shape_numel (&gamma->shape);
  /* One slope, or one per element: a single run split anywhere. */
  prelu_job j = {
    data->data, gamma->data, out->data, 1, 1,
    ng == n && hy_shape_equal (ds, &gamma->shape),
  };
  int64_t runs = n;
  if (!j.per_element && ng != 1) {
    const int axis = ds->ndim >= 2 && ds->dims[1] == ng ? 1 : 0;
    int64_t outer = 1;
    for (int i = 0; i < axis; i++)
      outer *= ds->dims[i];
    for (int i = axis + 1; i < ds->ndim; i++)
      j.inner *= ds->dims[i];
    j.ng = ng;
    runs = outer * ng;
  }
  hy_cpu_parallel_for (ctx, runs, hy_cpu_grain (j.inner), prelu_runs, &j);
}

void
hy_cpu_leaky_relu (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_leaky_relu_params *p = params;
  const int64_t n = hy_shape_numel (&in[0]->shape);

  if (p->act_type == HY_LEAKY_PRELU) {
    prelu (ctx, in[0], in[1], out[0]);
    return;
  }
  const act_job j = {
    true, p->act_type, p->slope, in[0]->data, out[0]->data,
  };
  hy_cpu_parallel_for (ctx, n, HY_CPU_MIN_THREAD_FLOATS, act_range,
      (void *) &j);
  if ((p->act_type == HY_LEAKY_LEAKY || p->act_type == HY_LEAKY_RRELU)
      && n_out > 1)             /* the training-only mask */
    memset (out[1]->data, 0, (size_t) n * sizeof (float));
}
