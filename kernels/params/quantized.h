/*
 * quantized.h — parameters of MXNet's int8 ops as its oneDNN build runs
 * them (what quantize_net_v2 exports): _contrib_quantize_v2,
 * _contrib_dequantize, _contrib_quantized_pooling, _flatten, _concat, and
 * the quantized
 * _sg_mkldnn_conv / _sg_mkldnn_fully_connected; and the GPU graph's
 * unfused _contrib_quantized_conv and _contrib_requantize (what
 * quantize_net writes with ctx=gpu).
 *
 * Quantized values are held as float32 like every value here (exact: they
 * are integers of 8 bits), with the real range they stand for beside them
 * as two one-element tensors, min and max, which every quantized op takes
 * and gives.  A value q of dtype int8 stands for q · max(|min|, |max|) / 127,
 * of dtype uint8 for q · max(|min|, |max|) / 255.  The dtypes are known at
 * load time (core/dtype-infer.c) and recorded here.
 */
#ifndef HY_PARAMS_QUANTIZED_H
#define HY_PARAMS_QUANTIZED_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/hy-ops.h"
#include "kernels/params/nn.h"
#include "kernels/params/shape.h"

/* What a quantized dtype's values reach: 127 for int8, 255 for uint8. */
#define HY_INT8_RANGE 127.5f
#define HY_UINT8_RANGE 255.5f

/* _contrib_quantize_v2: float32 data to int8 or uint8 (out_type auto:
 * uint8 when min_calib_range >= 0, else int8), scaled by the calibrated
 * range, or without one by the data's own min and max. */
typedef struct hy_quantize_params {
  hy_op_id op;
  bool out_uint8;               /* resolved out_type */
  bool calibrated;
  float min_calib;
  float max_calib;
} hy_quantize_params;

/* _contrib_requantize: int32 data (a quantized convolution's or fully
 * connected layer's sum, of real range [min_range, max_range] at 2^31
 * steps) to int8 or uint8 (out_type: int8 by default, auto is uint8 when
 * min_calib_range >= 0) at the calibrated range, or without one at the
 * range the data's own largest magnitude stands for.  The int32 values are
 * held as floats, rounded as MXNet's oneDNN reorder converts them itself
 * before scaling, so the result is the same. */
typedef struct hy_requantize_params {
  hy_op_id op;
  bool out_uint8;               /* resolved out_type */
  bool calibrated;
  float min_calib;
  float max_calib;
} hy_requantize_params;

/* What an int32 quantized value's range stands for: MinAbs (INT32_MIN,
 * INT32_MAX) as MXNet computes it in float, 2^31. */
#define HY_INT32_RANGE 2147483648.0f

/* _contrib_quantized_conv, MXNet's unfused quantized convolution (what
 * quantize_net writes for ctx=gpu, then a requantize): int8 data (uint8
 * on MXNet's CPU) and int8 weights, 2-D NCHW, to their int32 sums, exact
 * (wrapping as the hardware's int32 accumulators do).  Its range is the
 * product of the two inputs' int8 steps times 2^31:
 *   max = (max(|min_data|, |max_data|) / 127) · (max(|min_w|, |max_w|)
 *         / 127) · 2^31,  min = −max
 * (MXNet's QuantizationRangeForS8S8Multiplication, which counts uint8
 * data as int8 too).  Without a bias (no_bias): inputs data, weight,
 * min_data, max_data, min_weight, max_weight; outputs: out, min, max. */
typedef struct hy_quantized_conv_plain_params {
  hy_op_id op;
  hy_conv_params conv;          /* conv.op is HY_OP_CONVOLUTION */
  bool data_uint8;              /* from dtype inference */
} hy_quantized_conv_plain_params;

/* _contrib_dequantize: the input's dtype, from dtype inference. */
typedef struct hy_dequantize_params {
  hy_op_id op;
  bool in_uint8;
} hy_dequantize_params;

/* _contrib_quantized_pooling: Pooling on quantized data; min and max
 * pass through. */
typedef struct hy_quantized_pool_params {
  hy_op_id op;
  hy_pool_params pool;          /* pool.op is HY_OP_POOLING */
  bool in_uint8;                /* from dtype inference */
} hy_quantized_pool_params;

/* _contrib_quantized_flatten: Flatten on quantized data; min and max pass
 * through.  Inputs: data, min_data, max_data. */
typedef struct hy_quantized_flatten_params {
  hy_op_id op;
} hy_quantized_flatten_params;

/* _contrib_quantized_act: ReLU (the only one MXNet quantizes) on int8
 * data; min and max pass through.  Inputs: data, min_data, max_data. */
typedef struct hy_quantized_act_params {
  hy_op_id op;
} hy_quantized_act_params;

/* _contrib_quantized_batch_norm (ResNet v2's pre-activation BatchNorm):
 * BatchNorm folded into one scale and shift per channel that map the
 * input's int8 steps to the calibrated output's, rounded to int8 (always
 * int8, whatever comes in).  Inputs: data, gamma, beta, moving_mean,
 * moving_var, min_data, max_data; outputs: out, min, max. */
typedef struct hy_quantized_batch_norm_params {
  hy_op_id op;
  hy_batch_norm_params bn;      /* bn.op is HY_OP_BATCH_NORM */
  double eps;                   /* MXNet folds with the double it parsed */
  float min_calib;
  float max_calib;
  bool in_uint8;                /* from dtype inference */
} hy_quantized_batch_norm_params;

/* _contrib_quantized_elemwise_mul (MobileNetV3's hard swish): the product
 * of two int8 values of the same shape, either scaled to the calibrated
 * output range and truncated to int8, or (enable_float_output) scaled to
 * float32.  Inputs: lhs, rhs, lhs_min, lhs_max, rhs_min, rhs_max;
 * outputs: out[, min, max]. */
typedef struct hy_quantized_elemwise_mul_params {
  hy_op_id op;
  bool float_output;
  float min_calib;
  float max_calib;
} hy_quantized_elemwise_mul_params;

/* _contrib_quantized_elemwise_add (YOLOv3's residual adds that no
 * convolution absorbs): two quantized values of the same shape, each
 * scaled to the calibrated output range and summed as oneDNN's sum does.
 * The output is uint8 when both inputs are, int8 otherwise.  Inputs: lhs,
 * rhs, lhs_min, lhs_max, rhs_min, rhs_max; outputs: out, min, max. */
typedef struct hy_quantized_elemwise_add_params {
  hy_op_id op;
  float min_calib;
  float max_calib;
  bool lhs_uint8;               /* from dtype inference */
  bool rhs_uint8;
} hy_quantized_elemwise_add_params;

/* At most this many inputs to a quantized concat: their dtypes are one
 * bit each of a mask. */
#define HY_QUANTIZED_CONCAT_MAX_ARGS 64

/* _contrib_quantized_concat: Concat of quantized values of different
 * ranges.  The output's range is [min(0, mins), max(0, maxes)]; an input
 * whose scale differs from the output's is rescaled to it and rounded
 * (MXNet's oneDNN reorder).  The output is int8 if any input is, else
 * uint8.  Inputs: arg0 … argN-1, then arg0's min and max, arg1's, … */
typedef struct hy_quantized_concat_params {
  hy_op_id op;
  hy_concat_params concat;      /* concat.op is HY_OP_CONCAT */
  uint64_t in_uint8;            /* bit i: input i is uint8 */
  bool out_uint8;
} hy_quantized_concat_params;

/* A quantized _sg_mkldnn_conv:
 *   out = postsum_act (act (conv (data, W') + b') + sum)
 * with W', b' the weight and bias after folding the BatchNorm, W'
 * quantized per output channel, requantized to the calibrated output
 * range.  Inputs: data, weight, [bias], [gamma, beta, mean, var], [sum],
 * min_data, max_data, [min_sum, max_sum]; outputs: out, min, max. */
typedef struct hy_quantized_conv_params {
  hy_op_id op;
  hy_conv_params conv;          /* the subgraph's Convolution */
  bool with_bn;
  bool with_act;                /* ReLU before the sum */
  bool with_sum;
  bool with_postsum_act;        /* ReLU after it */
  double bn_eps;
  bool bn_fix_gamma;
  float min_calib;
  float max_calib;
  bool out_uint8;               /* MXNet's IsOutputUInt8 */
  bool data_uint8;              /* from dtype inference */
  bool sum_uint8;
} hy_quantized_conv_params;

/* Where the quantized convolution's optional inputs are (-1: absent). */
typedef struct hy_quantized_conv_inputs {
  int bias, bn, sum, min_data, max_data, min_sum, max_sum, count;
} hy_quantized_conv_inputs;

static inline hy_quantized_conv_inputs
hy_quantized_conv_inputs_of (const hy_quantized_conv_params *p)
{
  hy_quantized_conv_inputs in = { -1, -1, -1, -1, -1, -1, -1, 0 };
  int k = 2;
  if (!p->conv.no_bias)
    in.bias = k++;
  if (p->with_bn) {
    in.bn = k;
    k += 4;
  }
  if (p->with_sum)
    in.sum = k++;
  in.min_data = k++;
  in.max_data = k++;
  if (p->with_sum) {
    in.min_sum = k++;
    in.max_sum = k++;
  }
  in.count = k;
  return in;
}

/* A quantized _sg_mkldnn_fully_connected with enable_float_output: int8
 * weight and bias as the params file holds them (quantized per tensor by
 * quantize_net_v2, their ranges as inputs), float32 out.  Inputs: data,
 * weight, [bias], min_data, max_data, min_weight, max_weight, [min_bias,
 * max_bias]. */
typedef struct hy_quantized_fc_params {
  hy_op_id op;
  int64_t num_hidden;
  bool no_bias;
  bool flatten;
  bool data_uint8;
} hy_quantized_fc_params;

/* _hy_quantize_dequantize: ONNX's QuantizeLinear and the DequantizeLinear
 * that reads it, as one float op ("fake quantization"): each value is
 * divided by its scale, rounded half to even, saturated to the integer
 * type's range less the zero point, and multiplied back, which is what
 * ONNX Runtime computes for the pair step by step.  Inputs: data, scale,
 * zero_point (one value each, or one per index of `axis`); the zero point
 * holds integers of the type, as floats. */
typedef struct hy_quantize_dequantize_params {
  hy_op_id op;
  int64_t axis;                 /* as given; may be negative */
  bool out_uint8;               /* uint8 [0, 255], else int8 [-128, 127] */
} hy_quantize_dequantize_params;

#endif /* HY_PARAMS_QUANTIZED_H */
