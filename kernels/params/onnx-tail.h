/*
 * onnx-tail.h — the parameters of _hy_onnx_tail: the part of an ONNX
 * graph whose values have shapes only the data decides (NonZero's and
 * NonMaxSuppression's outputs and everything computed from them), run as
 * one op that keeps ONNX's semantics and works its shapes out at each
 * forward (docs/ONNX.md, "Shapes that depend on the data").
 *
 * The program is a list of steps over numbered values: values
 * [0, n_inputs) are the op's inputs (float data the static graph gives),
 * value n_inputs + s is step s's output.  A step is one ONNX node, or a
 * constant (the integers of shape arithmetic live in the program, since
 * int64 does not fit a float tensor).  Every value is held as doubles,
 * which hold both ONNX's float32 and its int64 indices exactly; `is_int`
 * says which arithmetic a step does on them (integer division truncates).
 *
 * The op's outputs are values whose shapes the ONNX file declares: they
 * are what the plan sees.  The importer writes the program as text
 * (attribute `program`, core/io/onnx-tail.c), the op definition parses it
 * into this struct (core/ops/onnx-tail.c), and the CPU kernel runs it
 * (kernels/cpu/onnx-tail.c).  The sizes below bound what one program may
 * hold, so the params stay one flat struct.
 */
#ifndef HY_PARAMS_ONNX_TAIL_H
#define HY_PARAMS_ONNX_TAIL_H

#include <stdbool.h>
#include <stdint.h>

#include "hybrid-tensor.h"
#include "kernels/hy-ops.h"

#define HY_TAIL_MAX_INPUTS 16   /* the op's inputs */
#define HY_TAIL_MAX_OUTPUTS 8
#define HY_TAIL_MAX_STEPS 112
#define HY_TAIL_MAX_VALUES (HY_TAIL_MAX_INPUTS + HY_TAIL_MAX_STEPS)
#define HY_TAIL_MAX_STEP_IN 8   /* a step's inputs (Concat's, Slice's 5) */
#define HY_TAIL_MAX_ATTR 8      /* a step's integer attributes */
#define HY_TAIL_POOL 1024       /* the constants' values, all together */
#define HY_TAIL_NAMES 6144      /* the ONNX node names, for errors */

/* The steps a program may hold, by their ONNX names (Const: a constant
 * of the program's own). */
#define HY_TAIL_KINDS(X) \
  X (CONST, "Const") \
  X (NONZERO, "NonZero") \
  X (NMS, "NonMaxSuppression") \
  X (TRANSPOSE, "Transpose") \
  X (GATHER, "Gather") \
  X (GATHER_ND, "GatherND") \
  X (SLICE, "Slice") \
  X (SQUEEZE, "Squeeze") \
  X (UNSQUEEZE, "Unsqueeze") \
  X (RESHAPE, "Reshape") \
  X (SHAPE, "Shape") \
  X (CONCAT, "Concat") \
  X (WHERE, "Where") \
  X (EXPAND, "Expand") \
  X (CAST, "Cast") \
  X (ADD, "Add") \
  X (SUB, "Sub") \
  X (MUL, "Mul") \
  X (DIV, "Div") \
  X (PAD, "Pad") \
  X (SCATTER_ND, "ScatterND") \
  X (IDENTITY, "Identity")

typedef enum hy_tail_kind {
#define HY_TAIL_KIND_ENUM(id, name) HY_TAIL_##id,
  HY_TAIL_KINDS (HY_TAIL_KIND_ENUM)
#undef HY_TAIL_KIND_ENUM
  HY_TAIL_N_KINDS
} hy_tail_kind;

typedef struct hy_tail_step {
  int kind;                     /* hy_tail_kind */
  bool is_int;                  /* the output's values are integers */
  int n_in;
  int in[HY_TAIL_MAX_STEP_IN];  /* values; -1: an optional input left out */
  /* Attributes, by kind: Transpose the perm (n_attr of them, none: the
   * reverse), Gather and Concat the axis, GatherND batch_dims, Cast
   * whether to an integer type (1) or bool (2), NonMaxSuppression
   * center_point_box, Reshape allowzero, Const the shape's dims. */
  int n_attr;
  int64_t attr[HY_TAIL_MAX_ATTR];
  int pool_at;                  /* Const: where its values start in pool */
  int name_at;                  /* the ONNX node's name in names */
} hy_tail_step;

typedef struct hy_onnx_tail_params {
  hy_op_id op;
  int n_inputs;
  int n_steps;
  hy_tail_step steps[HY_TAIL_MAX_STEPS];
  int n_outputs;
  int out_value[HY_TAIL_MAX_OUTPUTS];
  hy_shape out_shape[HY_TAIL_MAX_OUTPUTS];  /* what the file declares */
  int n_pool;
  double pool[HY_TAIL_POOL];
  char names[HY_TAIL_NAMES];
} hy_onnx_tail_params;

/* The value a step writes. */
static inline int
hy_tail_step_value (const hy_onnx_tail_params *p, int step)
{
  return p->n_inputs + step;
}

#endif /* HY_PARAMS_ONNX_TAIL_H */
