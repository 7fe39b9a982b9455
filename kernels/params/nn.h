/*
 * nn.h — parameters of the neural-network layer families (Convolution,
 * FullyConnected, dot/batch_dot, Pooling, BatchNorm, L2Normalization,
 * Activation, LeakyReLU).
 *
 * core/ops/nn-*.c fill these from MXNet attributes (with MXNet 1.9.1's
 * defaults already applied); kernels/cpu/ read them.  Spatial tuples are
 * stored for up to three dimensions, always as many entries as the kernel
 * has: a 2-D convolution uses kernel[0..1] = (kh, kw).
 */
#ifndef HY_PARAMS_NN_H
#define HY_PARAMS_NN_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/hy-ops.h"

#define HY_NN_MAX_SPATIAL 3

/* An activation a fusion pass may fold into the Convolution or
 * FullyConnected that feeds it (see hy_fused_epilogue). */
typedef enum hy_fused_act {
  HY_FUSED_ACT_NONE = 0,
  HY_FUSED_ACT_RELU,            /* max(x, 0) */
  HY_FUSED_ACT_CLIP,            /* x clamped to [alpha, beta] (relu6: 0, 6) */
  HY_FUSED_ACT_LEAKY,           /* x > 0 ? x : alpha·x */
  HY_FUSED_ACT_SIGMOID,
  HY_FUSED_ACT_TANH,
  /* MobileNetV3's, as GluonCV exports them: _plus_scalar 3, clip [0, 6],
   * _div_scalar 6, and for hard swish an elemwise_mul by x itself. */
  HY_FUSED_ACT_HARD_SIGMOID,    /* clip (x + 3, 0, 6) / 6 */
  HY_FUSED_ACT_HARD_SWISH,      /* x · (clip (x + 3, 0, 6) / 6) */
} hy_fused_act;

/* What the fusion passes moved into a Convolution or FullyConnected:
 *   y = act (bn (W·x + bias) + residual)
 * with bn (v) = (v − mean)·scale + shift per output channel, BatchNorm's
 * own arithmetic.  Each present part is one more input, in this order
 * after data, weight and bias: the BatchNorm as a (3, channels) tensor of
 * rows mean, scale, shift; the residual, shaped like the output (a fused
 * elemwise_add).  parse() leaves it all off. */
typedef struct hy_fused_epilogue {
  hy_fused_act act;
  float alpha;                  /* CLIP: lower bound; LEAKY: slope */
  float beta;                   /* CLIP: upper bound */
  bool batch_norm;
  bool residual;
} hy_fused_epilogue;

/* Where a Convolution's or FullyConnected's inputs are, in the order
 * above: data 0, weight 1, then the bias unless no_bias, the BatchNorm's
 * rows and the residual where fused; -1 for one the call does not have.
 * n: how many inputs it takes. */
typedef struct hy_fused_inputs {
  int bias, bn, residual;
  int n;
} hy_fused_inputs;

static inline hy_fused_inputs
hy_fused_inputs_of (bool no_bias, const hy_fused_epilogue *e)
{
  hy_fused_inputs f;
  f.n = 2;
  f.bias = no_bias ? -1 : f.n++;
  f.bn = e->batch_norm ? f.n++ : -1;
  f.residual = e->residual ? f.n++ : -1;
  return f;
}

typedef struct hy_conv_params {
  hy_op_id op;
  int n_spatial;                /* 1 (NCW), 2 (NCHW) or 3 (NCDHW) */
  int64_t kernel[HY_NN_MAX_SPATIAL];
  int64_t stride[HY_NN_MAX_SPATIAL];
  int64_t dilate[HY_NN_MAX_SPATIAL];
  int64_t pad[HY_NN_MAX_SPATIAL];
  int64_t num_filter;
  int64_t num_group;
  bool no_bias;
  hy_fused_epilogue fused;
} hy_conv_params;

/* Deconvolution (a transposed convolution), 1-D or 2-D: weight
 * (C, num_filter / num_group, k...), bias (num_filter,) unless no_bias
 * (MXNet's default).  Output size per axis:
 *   stride·(in − 1) + dilate·(k − 1) + 1 − 2·pad + adj,
 * where pad and adj come from target_shape when it has a non-zero entry
 * (hy_deconv_pads). */
typedef struct hy_deconv_params {
  hy_op_id op;
  int n_spatial;                /* 1 (NCW) or 2 (NCHW) */
  int64_t kernel[HY_NN_MAX_SPATIAL];
  int64_t stride[HY_NN_MAX_SPATIAL];
  int64_t dilate[HY_NN_MAX_SPATIAL];
  int64_t pad[HY_NN_MAX_SPATIAL];
  int64_t adj[HY_NN_MAX_SPATIAL];
  int64_t target[HY_NN_MAX_SPATIAL];
  bool has_target;              /* some entry of target_shape is not 0 */
  int64_t num_filter;
  int64_t num_group;
  bool no_bias;
} hy_deconv_params;

/* The pad and adj of spatial axis i for an input of `size` along it: as
 * given, or what makes the output target[i] long (MXNet's InferPad; the
 * total may come out negative for a target that is too long, which shape
 * inference refuses). */
static inline void
hy_deconv_pads (const hy_deconv_params *p, int i, int64_t size,
    int64_t *pad, int64_t *adj)
{
  if (!p->has_target) {
    *pad = p->pad[i];
    *adj = p->adj[i];
    return;
  }
  int64_t total = p->stride[i] * (size - 1)
      + p->dilate[i] * (p->kernel[i] - 1) + 1 - p->target[i];
  *adj = total % 2;
  *pad = (total + 1) / 2;
}

/* UpSampling (MXNet 1.9.1's: NCHW, one integer scale).  Nearest: each of
 * num_args inputs repeated to the output's H×W, by its own factor (the
 * output's size over the input's, the same on both axes), and then
 * concatenated along the channels or summed.  Bilinear: data and a
 * (C, 1, k, k) weight through `deconv`, the Deconvolution MXNet runs for
 * it (kernel 2s − s mod 2, stride s, pad ⌈(s − 1)/2⌉, one group per
 * channel, no bias). */
typedef enum hy_upsampling_type {
  HY_UPSAMPLING_NEAREST,
  HY_UPSAMPLING_BILINEAR,
} hy_upsampling_type;

typedef struct hy_upsampling_params {
  hy_op_id op;
  hy_upsampling_type sample_type;
  int64_t scale;
  int64_t num_filter;           /* bilinear: must be the channel count */
  int num_args;
  bool sum;                     /* multi_input_mode: sum, else concat */
  hy_deconv_params deconv;      /* bilinear */
} hy_upsampling_params;

typedef struct hy_fc_params {
  hy_op_id op;
  int64_t num_hidden;
  bool no_bias;
  bool flatten;                 /* data as (d0, rest) instead of (..., K) */
  hy_fused_epilogue fused;
} hy_fc_params;

/* dot and batch_dot. */
typedef struct hy_dot_params {
  hy_op_id op;
  bool transpose_a;
  bool transpose_b;
} hy_dot_params;

typedef enum hy_pool_type {
  HY_POOL_MAX,
  HY_POOL_AVG,
  HY_POOL_SUM,
  HY_POOL_LP,
} hy_pool_type;

typedef enum hy_pool_convention {
  HY_POOL_VALID,                /* floor: windows end inside the padding */
  HY_POOL_FULL,                 /* ceil: a last partial window is kept */
  HY_POOL_SAME,                 /* ceil(in / stride), no explicit pad */
} hy_pool_convention;

typedef struct hy_pool_params {
  hy_op_id op;
  hy_pool_type pool_type;
  hy_pool_convention convention;
  bool global_pool;             /* kernel = whole map, stride 1, no pad */
  bool count_include_pad;       /* avg: divide by the padded window */
  int p_value;                  /* lp: 1, 2 or 3 */
  int n_spatial;                /* 0 only for global_pool without kernel */
  int64_t kernel[HY_NN_MAX_SPATIAL];
  int64_t stride[HY_NN_MAX_SPATIAL];
  int64_t pad[HY_NN_MAX_SPATIAL];
} hy_pool_params;

typedef struct hy_batch_norm_params {
  hy_op_id op;
  float eps;
  bool fix_gamma;               /* gamma read as 1 */
  bool output_mean_var;         /* also output mean and 1/sqrt(var + eps) */
  int axis;                     /* channel axis; may be negative */
} hy_batch_norm_params;

/* L2Normalization: x / sqrt(sum(x²) + eps), the sum taken per sample
 * over everything (instance), over axis 1 (channel) or over the axes
 * after 1 (spatial). */
typedef enum hy_l2_norm_mode {
  HY_L2_NORM_INSTANCE,
  HY_L2_NORM_CHANNEL,
  HY_L2_NORM_SPATIAL,
} hy_l2_norm_mode;

typedef struct hy_l2_normalization_params {
  hy_op_id op;
  float eps;
  hy_l2_norm_mode mode;
} hy_l2_normalization_params;

typedef enum hy_act_type {
  HY_ACT_RELU,
  HY_ACT_SIGMOID,
  HY_ACT_TANH,
  HY_ACT_SOFTRELU,
  HY_ACT_SOFTSIGN,
} hy_act_type;

typedef struct hy_activation_params {
  hy_op_id op;
  hy_act_type act_type;
} hy_activation_params;

typedef enum hy_leaky_type {
  HY_LEAKY_LEAKY,
  HY_LEAKY_PRELU,
  HY_LEAKY_RRELU,
  HY_LEAKY_ELU,
  HY_LEAKY_SELU,
  HY_LEAKY_GELU,
} hy_leaky_type;

typedef struct hy_leaky_relu_params {
  hy_op_id op;
  hy_leaky_type act_type;
  float slope;                  /* leaky, elu; rrelu: the inference slope */
  float lower_bound;            /* rrelu */
  float upper_bound;            /* rrelu */
} hy_leaky_relu_params;

#endif /* HY_PARAMS_NN_H */
