/*
 * shape.h — params of the data-movement and shape ops (ops.def: identity
 * … arange), shared by their definitions (core/ops/shape.c, slice.c,
 * tile.c) and their CPU kernels (kernels/cpu/shape.c, slice.c, tile.c).
 *
 * Attributes that depend on the input's rank (negative axes, slice
 * bounds) are stored as written; both halves resolve them against the
 * actual shape with the inline helpers below, so the rule lives in one
 * place.
 */
#ifndef HY_PARAMS_SHAPE_H
#define HY_PARAMS_SHAPE_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/hy-ops.h"

/* The longest tuple attribute these ops accept (Reshape codes, slice
 * bounds, tile reps); matches the attribute parser's limit. */
#define HY_SHAPE_PARAM_MAX 16

/* _copy, Dropout, BlockGrad: the output is the input. */
typedef struct hy_identity_params {
  hy_op_id op;
} hy_identity_params;

/* Flatten: (d0, d1 * … * dn). */
typedef struct hy_flatten_params {
  hy_op_id op;
} hy_flatten_params;

/* Reshape.  `codes` is MXNet's `shape` (0 copy, -1 infer, -2 copy the
 * rest, -3 merge two, -4 split one), or the deprecated `target_shape`
 * (0 = infer) when `legacy_target` is set. */
typedef struct hy_reshape_params {
  hy_op_id op;
  int n_codes;
  int64_t codes[HY_SHAPE_PARAM_MAX];
  bool reverse;
  bool legacy_target;
  bool keep_highest;            /* legacy_target only */
  /* reshape_like: lhs's axes [begin[0], end[0]) replaced by rhs's
   * [begin[1], end[1]), as written (may be negative); a bound left None
   * is 0 for a begin and the rank for an end. */
  int64_t like_begin[2], like_end[2];
  bool like_begin_none[2], like_end_none[2];
} hy_reshape_params;

typedef struct hy_expand_dims_params {
  hy_op_id op;
  int axis;                     /* in [-ndim-1, ndim] */
} hy_expand_dims_params;

/* squeeze: n_axes -1 drops every axis of length 1. */
typedef struct hy_squeeze_params {
  hy_op_id op;
  int n_axes;
  int axes[HY_SHAPE_PARAM_MAX];
} hy_squeeze_params;

/* transpose: output axis i is input axis axes[i]; n_axes 0 reverses.
 * SwapAxis keeps its dim1 and dim2 in axes[0] and axes[1] as written
 * (negative: from the end), since its permutation depends on the rank. */
typedef struct hy_transpose_params {
  hy_op_id op;
  int n_axes;
  int axes[HY_SHAPE_PARAM_MAX];
} hy_transpose_params;

/* The permutation for an input of `ndim` axes: output axis i is input axis
 * axes[i].  SwapAxis's dims are known to be in [-ndim, ndim) (checked by
 * its shape inference). */
static inline void
hy_transpose_axes (const hy_transpose_params *p, int ndim, int *axes)
{
  for (int i = 0; i < ndim; i++)
    axes[i] = p->n_axes ? p->axes[i] : ndim - 1 - i;
  if (p->op == HY_OP_SWAP_AXIS) {
    const int a = p->axes[0] < 0 ? p->axes[0] + ndim : p->axes[0];
    const int b = p->axes[1] < 0 ? p->axes[1] + ndim : p->axes[1];
    for (int i = 0; i < ndim; i++)
      axes[i] = i;
    axes[a] = b;
    axes[b] = a;
  }
}

/* slice: per leading axis, begin/end/step with None entries (bit i of a
 * mask set).  n_step 0: every step is 1. */
typedef struct hy_slice_params {
  hy_op_id op;
  int n;
  int n_step;
  int64_t begin[HY_SHAPE_PARAM_MAX];
  int64_t end[HY_SHAPE_PARAM_MAX];
  int64_t step[HY_SHAPE_PARAM_MAX];
  uint32_t begin_none, end_none, step_none;
} hy_slice_params;

typedef struct hy_slice_axis_params {
  hy_op_id op;
  int axis;
  int64_t begin;
  int64_t end;
  bool end_none;                /* to the end of the axis */
} hy_slice_axis_params;

/* slice_like: the data cut to the second input's length on `axes` (on
 * every axis when n_axes is 0), each cut starting at index 0.  Axes may
 * be negative, counted from the data's rank. */
typedef struct hy_slice_like_params {
  hy_op_id op;
  int n_axes;
  int axes[HY_SHAPE_PARAM_MAX];
} hy_slice_like_params;

/* Concat: num_args inputs joined along dim. */
typedef struct hy_concat_params {
  hy_op_id op;
  int num_args;
  int dim;
} hy_concat_params;

/* SliceChannel: num_outputs equal parts along axis. */
typedef struct hy_split_params {
  hy_op_id op;
  int num_outputs;
  int axis;
  bool squeeze_axis;
} hy_split_params;

/* tile: reps shorter than the rank are padded with leading 1s; longer
 * reps prepend axes of length 1 to the input. */
typedef struct hy_tile_params {
  hy_op_id op;
  int n_reps;
  int64_t reps[HY_SHAPE_PARAM_MAX];
} hy_tile_params;

/* repeat: each element `repeats` times along axis (none: flattened). */
typedef struct hy_repeat_params {
  hy_op_id op;
  int64_t repeats;
  int axis;
  bool axis_none;
} hy_repeat_params;

/* _arange: start, start+step, … below stop, each value `repeat` times.
 * `stop` is always set (an omitted stop is resolved as range(0, start)).
 * integral: the dtype is an integer type, so MXNet truncates start and
 * step before computing the values.
 * _contrib_arange_like: the same values, as many as its data has
 * (stop unused), or as its data's `axis` is long; the dtype is the
 * data's, recorded at load. */
typedef struct hy_arange_params {
  hy_op_id op;
  double start;
  double stop;
  double step;
  int64_t repeat;
  int dtype;
  bool integral;
  bool has_axis;                /* arange_like */
  int axis;                     /* arange_like: as written, may be < 0 */
} hy_arange_params;

/* Python's slice rule for one axis of length len: the first index, the
 * step and how many elements it selects (possibly 0).  MXNet 1.9.1's
 * slice follows it exactly, clamping out-of-range bounds. */
static inline void
hy_slice_resolve (const hy_slice_params *p, int axis, int64_t len,
    int64_t *first, int64_t *step, int64_t *count)
{
  int64_t s = 1;
  if (axis >= p->n) {
    *first = 0;
    *step = 1;
    *count = len;
    return;
  }
  if (axis < p->n_step && !(p->step_none & (1u << axis)))
    s = p->step[axis];
  bool has_b = !(p->begin_none & (1u << axis));
  bool has_e = !(p->end_none & (1u << axis));
  int64_t b, e;
  if (s > 0) {
    b = has_b ? p->begin[axis] : 0;
    e = has_e ? p->end[axis] : len;
    if (b < 0)
      b = b + len < 0 ? 0 : b + len;
    else if (b > len)
      b = len;
    if (e < 0)
      e = e + len < 0 ? 0 : e + len;
    else if (e > len)
      e = len;
    *count = b < e ? (e - b - 1) / s + 1 : 0;
  } else {
    /* Walking down, -1 stands for "before index 0". */
    b = has_b ? p->begin[axis] : len - 1;
    e = has_e ? p->end[axis] : -1;
    if (has_b && b < 0)
      b = b + len < 0 ? -1 : b + len;
    else if (b >= len)
      b = len - 1;
    if (has_e && e < 0)
      e = e + len < 0 ? -1 : e + len;
    else if (e >= len)
      e = len - 1;
    *count = e < b ? (b - e - 1) / (-s) + 1 : 0;
  }
  *first = b;
  *step = s;
}

/* slice_axis's bounds on an axis of length len, negative ones counted from
 * the end.  Unlike slice, MXNet does not clamp these: the core rejects
 * bounds outside [0, len] or begin >= end before any kernel runs. */
static inline void
hy_slice_axis_bounds (const hy_slice_axis_params *p, int64_t len,
    int64_t *begin, int64_t *end)
{
  *begin = p->begin < 0 ? p->begin + len : p->begin;
  *end = p->end_none ? len : p->end < 0 ? p->end + len : p->end;
}

/* shape_array: the input's dims as a 1-D tensor (MXNet: int64; here
 * float32, exact up to 2^24). */
typedef struct hy_shape_array_params {
  hy_op_id op;
} hy_shape_array_params;

/* reverse (flip): the listed axes run backwards. */
typedef struct hy_reverse_params {
  hy_op_id op;
  int n_axes;
  int axes[HY_SHAPE_PARAM_MAX];   /* >= 0, as MXNet requires */
} hy_reverse_params;

/* gather_nd: no attributes; indices (M, Y...) pick data's first M axes. */
typedef struct hy_gather_nd_params {
  hy_op_id op;
} hy_gather_nd_params;

/* stack: num_args inputs of one shape, joined along a new axis. */
typedef struct hy_stack_params {
  hy_op_id op;
  int num_args;
  int axis;                       /* in [-(ndim + 1), ndim] */
} hy_stack_params;

/* broadcast_axis: axes of length 1 repeated to size[i].
 * broadcast_like: lhs (input 0) broadcast to rhs's shape, or, given
 * lhs_axes and rhs_axes, lhs's axis lhs_axes[i] (of length 1) repeated to
 * rhs's axis rhs_axes[i] (n_axes pairs; axes as written, may be
 * negative).  Either way the kernels repeat every input axis of length
 * 1 to the output's length: the shape says which. */
typedef struct hy_broadcast_axis_params {
  hy_op_id op;
  int n_axes;
  int axes[HY_SHAPE_PARAM_MAX];   /* >= 0, as MXNet requires */
  int64_t size[HY_SHAPE_PARAM_MAX];
  int rhs_axes[HY_SHAPE_PARAM_MAX];     /* broadcast_like */
} hy_broadcast_axis_params;

/* The axis bits of a reverse or broadcast_axis for an input of rank ndim
 * (axes checked by shape inference). */
static inline uint32_t
hy_axes_mask (const int *axes, int n_axes, int ndim)
{
  uint32_t mask = 0;
  for (int i = 0; i < n_axes; i++)
    mask |= 1u << (axes[i] < 0 ? axes[i] + ndim : axes[i]);
  return mask;
}

/* Pad (MXNet 1.9.1's: 4-D or 5-D data, no padding of the batch and
 * channel axes).  Along each axis output position o reads input position
 * o − before: outside the input that is `value` (constant), the nearest
 * edge (edge), or the position mirrored about the edge without repeating
 * it (reflect, which MXNet allows for pads shorter than the axis).  A
 * negative pad crops, as it does in MXNet. */
typedef enum hy_pad_mode {
  HY_PAD_CONSTANT,
  HY_PAD_EDGE,
  HY_PAD_REFLECT,
} hy_pad_mode;

typedef struct hy_pad_params {
  hy_op_id op;
  hy_pad_mode mode;
  int n_widths;                 /* pad_width's entries: 2 per data axis */
  int64_t before[HY_SHAPE_PARAM_MAX / 2];
  int64_t after[HY_SHAPE_PARAM_MAX / 2];
  float value;
} hy_pad_params;

/* The input position output position o of an axis of `size` reads, or
 * -1 for the constant.  The CUDA kernel runs it too (kernels/cuda/pad.cuh). */
#ifdef __CUDACC__
#define HY_PAD_HD __host__ __device__ __forceinline__
#else
#define HY_PAD_HD static inline
#endif
HY_PAD_HD int64_t
hy_pad_source (hy_pad_mode mode, int64_t o, int64_t before, int64_t size)
{
  int64_t i = o - before;
  if (i >= 0 && i < size)
    return i;
  if (mode == HY_PAD_CONSTANT)
    return -1;
  if (mode == HY_PAD_REFLECT)
    i = i < 0 ? -i : 2 * (size - 1) - i;
  /* Edge; and reflect's pads are shorter than the axis, so this only
   * keeps a one-element axis in range. */
  return i < 0 ? 0 : i >= size ? size - 1 : i;
}

#endif /* HY_PARAMS_SHAPE_H */
