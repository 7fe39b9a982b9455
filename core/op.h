/*
 * op.h — what the core knows about an op: how to read its attributes and how
 * to infer its output shapes.  Running it is the backends' business
 * (kernels/); knowing it is ours.
 *
 * Each op family (see kernels/ops.def) defines one `const hy_op_def
 * hy_opdef_<family>` in core/ops/<family>.c.  The registry (registry.c)
 * pairs it with the op ids, names and aliases from ops.def.
 */
#ifndef HY_OP_H
#define HY_OP_H

#include <glib.h>

#include "hybrid-tensor.h"
#include "kernels/hy-ops.h"
#include "core/attrs.h"

typedef struct hy_op_def {
  /* sizeof the family's params struct (kernels/params/); its first
   * member is `hy_op_id op`, set by the registry before parse(). */
  size_t params_size;

  /* Fills *params from attrs (already holding the op id, the rest zeroed),
   * applying MXNet 1.9.1's defaults for absent keys.  Rejects bad values
   * with a message naming the attribute. */
  gboolean (*parse) (GHashTable *attrs, void *params, GError **error);

  /* Inputs the op reads in order; NULL-terminated.  NULL for variadic ops
   * (Concat, add_n) whose count comes from num_inputs(). */
  const char *const *input_names;
  /* Input count given the params; NULL means the length of input_names. */
  int (*num_inputs) (const void *params);
  /* Optional: the name of input i given the params, for ops whose inputs
   * come and go with their attributes (the quantized fused layers); NULL
   * for a name input_names does not give. */
  const char *(*input_name) (const void *params, int i);
  /* Output count given the params; NULL means 1. */
  int (*num_outputs) (const void *params);
  /* How many trailing inputs are auxiliary states (BatchNorm: 2).  Pre-0.9
   * files omit them; the loader creates them as variables. */
  int n_aux;
  /* Bit i set: input i is not read at inference (SoftmaxOutput's label), so
   * it may stay unbound and shapeless. */
  guint32 unused_inputs;

  /* Computes out[0..n_out) from in[0..n_in); checks that the inputs fit
   * (ranks, matching dims, weight shapes) and says what was expected. */
  gboolean (*infer_shape) (const void *params, const hy_shape *in, int n_in,
      hy_shape *out, int n_out, GError **error);

  /* Optional: the output dtypes given the inputs' (MXNet 1.9.1's type
   * inference).  Values are held as float32 whatever the dtype, so what
   * matters is which values are integers: an op that computes differently
   * on integer data (division truncates, results wrap) records that in its
   * params here, at load time.  Floating dtypes (float16/32/64, bfloat16)
   * all compute as float32 and mix freely.  NULL: the op takes
   * floating-point data only (an integer input is an error naming it) and
   * gives float32.  Helpers below cover the common rules. */
  gboolean (*infer_dtype) (void *params, const hy_dtype *in, int n_in,
      hy_dtype *out, int n_out, GError **error);

  /* The output may overwrite input 0 (same size, elementwise). */
  gboolean inplace;

  /* Optional: floating-point operations of one run (a multiply-add counts
   * 2), for profiles; NULL for ops whose time is memory, not arithmetic. */
  double (*flops) (const void *params, const hy_shape *in, int n_in,
      const hy_shape *out, int n_out);
} hy_op_def;

typedef struct hy_op_info {
  hy_op_id id;
  const char *name;             /* canonical MXNet name */
  const char *aliases;          /* comma-separated */
  const char *family;
  const hy_op_def *def;         /* NULL: known but not implemented */
} hy_op_info;

/* Looks an op up by canonical name or alias; NULL if unknown. */
const hy_op_info *hy_op_lookup (const char *name);
const hy_op_info *hy_op_info_get (hy_op_id id);

/* Inputs of an op instance (params already parsed). */
int hy_op_num_inputs (const hy_op_info *op, const void *params);
int hy_op_num_outputs (const hy_op_info *op, const void *params);
/* Name of input i ("data", "weight", …; "arg3" for variadic ops). The
 * returned string is static or owned by buf. */
const char *hy_op_input_name (const hy_op_info *op, const void *params,
    int i, char *buf, size_t size);

/* Allocates and parses params for an op instance; NULL + error on failure. */
void *hy_op_params_new (const hy_op_info *op, GHashTable *attrs,
    GError **error);

/* Shape-inference helpers shared by op families. */
gboolean hy_shape_expect_rank (const hy_shape *s, int ndim, const char *what,
    GError **error);
gboolean hy_broadcast_shapes (const hy_shape *a, const hy_shape *b,
    hy_shape *out, GError **error);
/* Dtype-inference helpers shared by op families (core/dtype-infer.c). */
/* int8…uint64 and bool: the dtypes whose arithmetic MXNet does in integers. */
gboolean hy_dtype_is_integer (int dtype);
/* Every output has input 0's dtype; the other inputs (indices, shapes,
 * conditions) may be of any dtype.  For data movement. */
gboolean hy_dtype_like_data (void *params, const hy_dtype *in, int n_in,
    hy_dtype *out, int n_out, GError **error);
/* MXNet's ElemwiseType: every input of one dtype (floating ones count as
 * one), which every output takes.  For Concat, stack, add_n and the like. */
gboolean hy_dtype_all_alike (void *params, const hy_dtype *in, int n_in,
    hy_dtype *out, int n_out, GError **error);
/* Checks inputs [first, first + n) against each other as
 * hy_dtype_all_alike does; the error names the inputs by the op's input
 * names (params start with the op id). */
gboolean hy_dtype_check_alike (const void *params, const hy_dtype *in,
    int first, int n, GError **error);

/* Normalises a possibly negative axis against ndim; FALSE if out of range. */
gboolean hy_axis_normalize (int64_t axis, int ndim, int *out);

/* Ops whose output is their input's bytes under another shape: the
 * planner gives it the input's storage (plan.c), and a value read through
 * one is read as planes, so no bf16 segment holds it (plan-segment.c). */
static inline gboolean
hy_op_is_view (hy_op_id id)
{
  switch (id) {
    case HY_OP_RESHAPE:
    case HY_OP_RESHAPE_LIKE:
    case HY_OP_FLATTEN:
    case HY_OP_EXPAND_DIMS:
    case HY_OP_SQUEEZE:
    case HY_OP_IDENTITY:
    case HY_OP_DROPOUT:
    case HY_OP_BLOCK_GRAD:
      return TRUE;
    default:
      return FALSE;
  }
}

#endif /* HY_OP_H */
