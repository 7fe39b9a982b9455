/*
 * activation.cuh — the element functions of the CUDA Activation and
 * LeakyReLU kernels (activation.cu), apart so that
 * tests/cuda/emulate-activation.cu can run them on the host.
 *
 * The formulas and constants are kernels/cpu/activation.c's (MXNet
 * 1.9.1's).  Each element reads only its own input before writing, so the
 * output may be the input.
 */
#ifndef HY_CUDA_ACTIVATION_CUH
#define HY_CUDA_ACTIVATION_CUH

#include <math.h>
#include <stdint.h>

#include "kernels/cuda/launch.cuh"
#include "kernels/params/nn.h"
#include "hybrid-tensor.h"

/* SELU's constants (Klambauer et al.), as MXNet uses them. */
#define HY_CUDA_SELU_LAMBDA 1.0507009873554804934193349852946f
#define HY_CUDA_SELU_ALPHA  1.6732632423543772848170429916717f

/* softrelu is the identity above 20, where log1p(exp x) == x in float32
 * anyway and exp would soon overflow. */
#define HY_CUDA_SOFTRELU_LINEAR_ABOVE 20.0f

/* M_SQRT1_2 as the CPU spells it, a double rounded to float. */
#define HY_CUDA_SQRT1_2 ((float) 0.70710678118654752440)

HY_CUDA_HD float
hy_cuda_activation_op (int act_type, float x)
{
  switch (act_type) {
    /* MXNet: isnan(x) || x > 0 ? x : 0 — NaN passes, −0 becomes +0. */
    case HY_ACT_RELU: return !(x <= 0.0f) ? x : 0.0f;
    case HY_ACT_SIGMOID: return 1.0f / (1.0f + expf (-x));
    case HY_ACT_TANH: return tanhf (x);
    case HY_ACT_SOFTRELU:
      return x > HY_CUDA_SOFTRELU_LINEAR_ABOVE ? x : log1pf (expf (x));
    case HY_ACT_SOFTSIGN: return x / (1.0f + fabsf (x));
    default: return x;
  }
}

/* LeakyReLU's elementwise forms (prelu is apart). */
HY_CUDA_HD float
hy_cuda_leaky_op (int act_type, float slope, float x)
{
  switch (act_type) {
    case HY_LEAKY_LEAKY:
    case HY_LEAKY_RRELU:        /* parse() stored the inference slope */
      return x > 0.0f ? x : x * slope;
    case HY_LEAKY_ELU:
      return x > 0.0f ? x : slope * expm1f (x);
    case HY_LEAKY_SELU:
      return HY_CUDA_SELU_LAMBDA
          * (x > 0.0f ? x : HY_CUDA_SELU_ALPHA * expm1f (x));
    case HY_LEAKY_GELU:
      return 0.5f * x * (1.0f + erff (x * HY_CUDA_SQRT1_2));
    default:
      return x;
  }
}

/* Activation, or (leaky) LeakyReLU's act_type with `slope`. */
typedef struct hy_cuda_act_args {
  const float *x;
  float *o;
  int act_type;
  bool leaky;
  float slope;
} hy_cuda_act_args;

static inline hy_cuda_act_args
hy_cuda_activation_plan (const hy_activation_params *p, const hy_tensor *x,
    hy_tensor *o)
{
  hy_cuda_act_args a = { x->data, o->data, (int) p->act_type, false, 0.0f };
  return a;
}

static inline hy_cuda_act_args
hy_cuda_leaky_plan (const hy_leaky_relu_params *p, const hy_tensor *x,
    hy_tensor *o)
{
  hy_cuda_act_args a = { x->data, o->data, (int) p->act_type, true,
    p->slope };
  return a;
}

HY_CUDA_HD float
hy_cuda_act_at (const hy_cuda_act_args *a, int64_t i)
{
  return a->leaky ? hy_cuda_leaky_op (a->act_type, a->slope, a->x[i])
      : hy_cuda_activation_op (a->act_type, a->x[i]);
}

/* prelu: element i's slope is g[(i / inner) mod ng] — one shared slope
 * (ng = inner = 1) or one per channel of the axis gamma matches — or
 * g[i] when gamma has the data's shape (per_element). */
typedef struct hy_cuda_prelu_args {
  const float *x, *g;
  float *o;
  int64_t inner, ng;
  bool per_element;
} hy_cuda_prelu_args;

/* The CPU's reading of gamma's shape (see core/ops/nn-act.c). */
static inline hy_cuda_prelu_args
hy_cuda_prelu_plan (const hy_tensor *data, const hy_tensor *gamma,
    hy_tensor *o)
{
  const hy_shape *ds = &data->shape;
  const int64_t n = hy_shape_numel (ds), ng = hy_shape_numel (&gamma->shape);
  hy_cuda_prelu_args a = {
    data->data, gamma->data, o->data, 1, 1,
    ng == n && hy_shape_equal (ds, &gamma->shape),
  };
  if (!a.per_element && ng != 1) {
    const int axis = ds->ndim >= 2 && ds->dims[1] == ng ? 1 : 0;
    for (int i = axis + 1; i < ds->ndim; i++)
      a.inner *= ds->dims[i];
    a.ng = ng;
  }
  return a;
}

HY_CUDA_HD float
hy_cuda_prelu_at (const hy_cuda_prelu_args *a, int64_t i)
{
  const float v = a->x[i];
  const float s = a->g[a->per_element ? i
      : a->ng == 1 ? 0 : (i / a->inner) % a->ng];
  return v > 0.0f ? v : v * s;
}

#endif /* HY_CUDA_ACTIVATION_CUH */
