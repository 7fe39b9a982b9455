/*
 * onnx-tail.h — what the steps of _hy_onnx_tail's interpreter share
 * (kernels/cpu/onnx-tail.c runs the program, onnx-tail-step.c is what a
 * step reads and writes; onnx-tail-select.c holds
 * NonZero and NonMaxSuppression, onnx-tail-ops.c the steps on shapes and
 * elements).
 *
 * A program runs three times per forward: twice "dry", where only shapes
 * are worked out (with the data-dependent counts at none and at their
 * bound) and only the small integer values of shape arithmetic are
 * computed, which gives every value's capacity; then for real, each value
 * in its slice of the workspace.  The capacities depend on the inputs'
 * shapes only, so from the second forward of a plan on the workspace is
 * never grown: nothing is allocated.
 */
#ifndef HY_CPU_ONNX_TAIL_H
#define HY_CPU_ONNX_TAIL_H

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/params/onnx-tail.h"

/* How many values a dry run computes for a value it can (shape
 * arithmetic: a Shape, the dims gathered from it, the pads made of them). */
#define TAIL_SMALL 16

typedef struct tail_value {
  bool is_int;
  bool known;                   /* data holds the values (always when real) */
  hy_shape shape;
  double *data;
  int64_t cap;                  /* elements the real run may write */
  double small[TAIL_SMALL];     /* a dry run's values */
} tail_value;

typedef enum tail_mode {
  TAIL_REAL,
  TAIL_DRY_NONE,                /* data-dependent counts at 0 */
  TAIL_DRY_MOST,                /* at their bounds */
} tail_mode;

typedef struct tail_run {
  hy_cpu_ctx *ctx;
  const hy_onnx_tail_params *p;
  tail_mode mode;
  int step;                     /* being run, for errors */
  int64_t *scratch;             /* NonMaxSuppression's, when real */
  int64_t scratch_len;
  tail_value v[HY_TAIL_MAX_VALUES];
} tail_run;

/* Fails the forward naming the step's ONNX node (hy_cpu_refuse). */
void tail_refuse (tail_run *r, const char *format, ...)
    G_GNUC_PRINTF (2, 3) G_GNUC_NORETURN;

/* Input k of the step being run (NULL when left out, or refused when
 * required). */
tail_value *tail_in (tail_run *r, int k);
/* The step's output, its shape set: TRUE when its values are to be
 * computed (always when real; in a dry run only when every input's values
 * are known and there are few), with out->data pointing where. */
bool tail_out (tail_run *r, tail_value *out, const hy_shape *shape);
/* An input's values, which a step needs for its output's shape: refused
 * in a dry run when the tail computes them from the data. */
const double *tail_need (tail_run *r, int k, int64_t *n);
/* A double as an int64, saturated (NaN as x86 converts it: INT64_MIN). */
int64_t tail_i64 (double v);

/* Each step: sets its output's shape and, when tail_out says so, its
 * values. */
void tail_nonzero (tail_run *r, tail_value *out);
void tail_nms (tail_run *r, tail_value *out);
void tail_nms_bound (tail_run *r, int64_t *boxes);
void tail_shape_step (tail_run *r, tail_value *out);

#endif /* HY_CPU_ONNX_TAIL_H */
