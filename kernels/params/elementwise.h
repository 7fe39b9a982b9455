/*
 * elementwise.h — parameters of the elementwise, softmax and reduction op
 * families (see ops.def): unary, scalar, binary, add_n, clip,
 * hard_sigmoid, where, cast, fill_like, softmax, reduce, arg_reduce.
 *
 * core/ops/{elementwise,softmax,reduce}.c fill these from MXNet attributes
 * with MXNet 1.9.1's defaults applied; kernels/cpu/ read them.  Where an op
 * is a variant of a shared computation (_rdiv_scalar is a division with
 * the operands swapped, broadcast_add an addition) parse() records the
 * computation itself, so kernels switch on what to compute, not on names.
 *
 * Values are float32 whatever their dtype.  `int_dtype` is set at load
 * time (core/dtype-infer.c) when the data holds an integer dtype: MXNet
 * then computes in that type, so kernels truncate and wrap every result
 * to it as Cast does (hy_cast_value), and divide as integers do
 * (hy_int_div).  HY_DTYPE_FLOAT32 (0, the default) means float data.
 */
#ifndef HY_PARAMS_ELEMENTWISE_H
#define HY_PARAMS_ELEMENTWISE_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/hy-ops.h"
#include "hybrid-tensor.h"

/* Unary math (relu, exp, round, …) and zeros_like/ones_like: the op id says
 * it all. */
typedef struct hy_unary_params {
  hy_op_id op;
  hy_dtype int_dtype;
} hy_unary_params;

typedef struct hy_fill_like_params {
  hy_op_id op;
  float value;                  /* 0 for zeros_like, 1 for ones_like */
} hy_fill_like_params;

/* What a binary or scalar op computes of (x, y). */
typedef enum hy_binary_fn {
  HY_BINARY_ADD,
  HY_BINARY_SUB,
  HY_BINARY_MUL,
  HY_BINARY_DIV,
  HY_BINARY_MOD,                /* sign of the divisor, like Python; x % 0 = 0 */
  HY_BINARY_POWER,
  HY_BINARY_MAXIMUM,            /* NaN from either side wins */
  HY_BINARY_MINIMUM,
  HY_BINARY_EQUAL,              /* comparisons give 1.0 or 0.0 */
  HY_BINARY_NOT_EQUAL,
  HY_BINARY_GREATER,
  HY_BINARY_GREATER_EQUAL,
  HY_BINARY_LESSER,
  HY_BINARY_LESSER_EQUAL,
  HY_BINARY_FN_COUNT
} hy_binary_fn;

typedef struct hy_binary_params {
  hy_op_id op;
  hy_binary_fn fn;
  bool broadcast;               /* broadcast_*: numpy rules; else same shape */
  hy_dtype int_dtype;
} hy_binary_params;

/* _plus_scalar, _rdiv_scalar, _greater_scalar, … */
typedef struct hy_scalar_params {
  hy_op_id op;
  hy_binary_fn fn;
  bool scalar_first;            /* the r-ops: fn (scalar, x) */
  float scalar;                 /* on integer data, kernels convert it to
                                 * int_dtype first, as MXNet does */
  bool is_int;                  /* false on integer data: MXNet computes in
                                 * floats and gives float64 */
  hy_dtype int_dtype;
} hy_scalar_params;

typedef struct hy_add_n_params {
  hy_op_id op;
  int num_args;
  hy_dtype int_dtype;
} hy_add_n_params;

typedef struct hy_clip_params {
  hy_op_id op;
  float a_min;
  float a_max;
  hy_dtype int_dtype;
} hy_clip_params;

typedef struct hy_hard_sigmoid_params {
  hy_op_id op;
  float alpha;
  float beta;
} hy_hard_sigmoid_params;

typedef struct hy_where_params {
  hy_op_id op;
} hy_where_params;

typedef struct hy_cast_params {
  hy_op_id op;
  hy_dtype dtype;               /* values are rounded/wrapped as if stored
                                 * in it, then kept as float32 */
} hy_cast_params;

/* softmax, log_softmax, SoftmaxActivation, SoftmaxOutput. */
typedef struct hy_softmax_params {
  hy_op_id op;
  int axis;                     /* may be negative; ignored when flat */
  bool flat;                    /* over all axes after the first as one
                                 * (SoftmaxOutput's default) */
  bool log;                     /* log_softmax */
  float temperature;            /* 1 when absent */
} hy_softmax_params;

/* sum, mean, max, min, prod. */
typedef struct hy_reduce_params {
  hy_op_id op;
  bool all;                     /* axis absent: every axis */
  int n_axes;
  int axes[HY_MAX_DIMS];        /* as written; may be negative */
  bool keepdims;
  bool exclude;                 /* reduce the axes NOT listed */
  hy_dtype int_dtype;           /* mean truncates, sums wrap */
} hy_reduce_params;

/* argmax, argmin: the index as float32. */
typedef struct hy_arg_reduce_params {
  hy_op_id op;
  bool flatten;                 /* axis None: over the flattened array */
  int axis;
  bool keepdims;
} hy_arg_reduce_params;

typedef enum hy_reduce_axes_status {
  HY_REDUCE_AXES_OK,
  HY_REDUCE_AXES_OUT_OF_RANGE,
  HY_REDUCE_AXES_DUPLICATE,
} hy_reduce_axes_status;

/* The axes a reduction folds for an input of `ndim` dimensions, as a bit
 * mask.  Shared so that shape inference and the kernel cannot disagree.
 * MXNet 1.9.1: no axis or an empty tuple means every axis, even with
 * exclude (whose oneDNN build disagrees; its reference kernels do not). */
static inline hy_reduce_axes_status
hy_reduce_axes_mask (const hy_reduce_params *p, int ndim, uint32_t *mask)
{
  const uint32_t every = ndim > 0 ? (1u << ndim) - 1 : 0;
  if (p->all || p->n_axes == 0) {
    *mask = every;
    return HY_REDUCE_AXES_OK;
  }
  uint32_t listed = 0;
  for (int i = 0; i < p->n_axes; i++) {
    int a = p->axes[i];
    if (a < -ndim || a >= ndim)
      return HY_REDUCE_AXES_OUT_OF_RANGE;
    if (a < 0)
      a += ndim;
    if (listed & (1u << a))
      return HY_REDUCE_AXES_DUPLICATE;
    listed |= 1u << a;
  }
  *mask = p->exclude ? every & ~listed : listed;
  return HY_REDUCE_AXES_OK;
}

#endif /* HY_PARAMS_ELEMENTWISE_H */
