/*
 * ordering.h — params of topk, sort and argsort (ops.def family
 * `ordering`), shared by their definition (core/ops/ordering.c) and their
 * CPU kernel (kernels/cpu/ordering.c).
 */
#ifndef HY_PARAMS_ORDERING_H
#define HY_PARAMS_ORDERING_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/hy-ops.h"

/* topk's `ret_typ`, in MXNet's order. */
typedef enum hy_topk_ret {
  HY_TOPK_RET_VALUE,            /* the k values */
  HY_TOPK_RET_INDICES,          /* their positions along the axis */
  HY_TOPK_RET_MASK,             /* input-shaped, 1 at the k positions */
  HY_TOPK_RET_BOTH,             /* values, then indices (two outputs) */
} hy_topk_ret;

/* One op of the family: sort is topk with k = 0 (every element) and
 * ret_typ value, argsort the same with ret_typ indices.  With `flatten`
 * (axis None) the input is read as one row of all its elements; k <= 0
 * means the whole axis.  Indices are written as floats, as MXNet does for
 * dtype float32; the definition refuses index dtypes that would not hold
 * the same values. */
typedef struct hy_ordering_params {
  hy_op_id op;
  bool flatten;
  int axis;
  int64_t k;
  hy_topk_ret ret_typ;
  bool is_ascend;
  int dtype;
} hy_ordering_params;

#endif /* HY_PARAMS_ORDERING_H */
