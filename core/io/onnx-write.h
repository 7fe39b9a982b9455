/*
 * onnx-write.h — writing the core's graph as an ONNX model, the inverse of
 * onnx-ops.c: each of the core's ops becomes the ONNX nodes that compute
 * the same thing (opset 13), its weights float32 initializers.
 *
 * Shapes are static: the writer works on a graph whose shapes are inferred
 * (the declared input shapes, or those the caller gives), and writes a
 * Reshape's target, the inputs' and the outputs' shapes as those numbers,
 * because the core's Reshape holds its target as an attribute (MXNet's
 * codes, resolved against the input's shape) and an ONNX reader would
 * otherwise be given a batch the target does not follow.
 *
 * Internal to core/io/onnx-write*.c.
 */
#ifndef HY_ONNX_WRITE_H
#define HY_ONNX_WRITE_H

#include <glib.h>

#include "hybrid.h"
#include "core/graph.h"

#ifdef HY_HAVE_ONNX
#include "core/onnx.pb-c.h"

#define HY_ONNX_WRITE_OPSET 13

typedef struct hy_onnx_writer {
  const char *source;           /* the model's file, for errors */
  const hy_graph *graph;        /* shapes inferred */
  GPtrArray *owned;             /* every block the protos point into */
  GPtrArray *nodes;             /* Onnx__NodeProto * in topological order */
  GPtrArray *inits;             /* Onnx__TensorProto * */
  GHashTable *init_done;        /* weight variables written (index + 1) */
  char ***names;                /* per graph node, per output: its value */
  gboolean *later_outputs_read; /* per graph node: an output past 0 is read */
  guint node;                   /* the graph node being written */
  guint n_made;                 /* values made for it, for unique names */
} hy_onnx_writer;

/* A copy of `s` that lives as long as the writer. */
char *hy_onnx_w_strdup (hy_onnx_writer *w, const char *s);
/* `size` zeroed bytes that live as long as the writer. */
gpointer hy_onnx_w_alloc (hy_onnx_writer *w, gsize size);

/* The ONNX value that input k of the node being written reads; a weight's
 * initializer is written the first time one reads it. */
/* Weight variable `i` of the graph as an initializer, the first time a
 * node reads it (later reads find it written). */
void hy_onnx_w_weight (hy_onnx_writer *w, guint i);

const char *hy_onnx_w_input (hy_onnx_writer *w, guint k);
/* The static shape of input k of the node being written. */
const hy_shape *hy_onnx_w_input_shape (hy_onnx_writer *w, guint k);
/* The values of input k when it is a weight (a variable with a value),
 * else NULL; nothing is written for it. */
const hy_tensor *hy_onnx_w_input_value (hy_onnx_writer *w, guint k);
/* A new value name for an intermediate result of the node being written. */
const char *hy_onnx_w_temp (hy_onnx_writer *w, const char *what);
/* The name output k of the node being written gets. */
const char *hy_onnx_w_output (hy_onnx_writer *w, guint k);

/* Appends an ONNX node reading `inputs` and writing `output`. */
Onnx__NodeProto *hy_onnx_w_node (hy_onnx_writer *w, const char *op_type,
    const char *const *inputs, guint n_inputs, const char *output);
void hy_onnx_w_attr_int (hy_onnx_writer *w, Onnx__NodeProto *n,
    const char *name, gint64 v);
void hy_onnx_w_attr_float (hy_onnx_writer *w, Onnx__NodeProto *n,
    const char *name, float v);
void hy_onnx_w_attr_ints (hy_onnx_writer *w, Onnx__NodeProto *n,
    const char *name, const gint64 *v, int count);
void hy_onnx_w_attr_string (hy_onnx_writer *w, Onnx__NodeProto *n,
    const char *name, const char *v);

/* A constant initializer made for the node being written (a scalar
 * operand, a Reshape's target, a weight rearranged); returns its name. */
const char *hy_onnx_w_const_floats (hy_onnx_writer *w, const char *what,
    const hy_shape *shape, const float *values);
const char *hy_onnx_w_const_ints (hy_onnx_writer *w, const char *what,
    const gint64 *values, int count);
/* 8-bit integers (ONNX_INT8 or ONNX_UINT8, values already in the type's
 * range), as QuantizeLinear's zero point takes them. */
const char *hy_onnx_w_const_bytes (hy_onnx_writer *w, const char *what,
    const hy_shape *shape, int data_type, const gint64 *values);

/* Writes `x`, a bool value, as the float 0/1 the core's comparisons give,
 * under `output`. */
void hy_onnx_w_bool_to_float (hy_onnx_writer *w, const char *x,
    const char *output);

/* The node being written: its parsed params as `type`, and its first
 * output's inferred (static) shape. */
#define HY_ONNX_W_PARAMS(w, type) ((const type *) hy_graph_node ((w)->graph, \
        (w)->node)->params)
const hy_shape *hy_onnx_w_out_shape (hy_onnx_writer *w);

/* `op_type` (Reshape or Expand) of `x` to the node's output shape, into
 * the node's output: how ops whose shape MXNet resolved are written. */
void hy_onnx_w_to_out_shape (hy_onnx_writer *w, const char *op_type,
    const char *x);

/* Refuses an op on integer data (`int_dtype` not float32): only float32
 * models are written. */
gboolean hy_onnx_w_float_data (hy_onnx_writer *w, hy_dtype int_dtype,
    GError **error);

/* FALSE with "SOURCE: node 'NAME' (OP): what" (HY_ERROR_UNSUPPORTED). */
gboolean hy_onnx_w_refuse (hy_onnx_writer *w, GError **error,
    const char *fmt, ...) G_GNUC_PRINTF (3, 4);

/* An op of the core and the function that writes it; `onnx` names the
 * ONNX op it becomes where one writer serves several. */
typedef struct hy_onnx_write_op hy_onnx_write_op;
struct hy_onnx_write_op {
  hy_op_id id;
  gboolean (*write) (hy_onnx_writer *w, const hy_onnx_write_op *op,
      GError **error);
  const char *onnx;
};
/* The comparisons, argmax/argmin, where, the broadcasts and the
 * quantize-dequantize pair (onnx-write-select.c). */
extern const hy_onnx_write_op hy_onnx_write_select_ops[];
extern const gsize hy_onnx_write_n_select_ops;

/* Writes the graph node w->node as ONNX nodes (onnx-write-ops.c); an op
 * without an ONNX form is refused naming the node and the op. */
gboolean hy_onnx_write_node (hy_onnx_writer *w, GError **error);
/* The core's ops the writer takes, ", "-separated (g_free). */
char *hy_onnx_write_supported_ops (void);
#endif

#endif /* HY_ONNX_WRITE_H */
