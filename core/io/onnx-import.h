/*
 * onnx-import.h — turning an ONNX graph into the core's graph.
 *
 * Every ONNX node becomes zero or more of the core's (MXNet-named) ops
 * with ONNX semantics: the attributes are rewritten into MXNet's, so the
 * passes, the planner and both executors see nothing new.  What ONNX
 * computes from shapes (Shape -> Gather -> Concat -> Reshape, the way
 * exporters write "flatten") is folded here, at load, from the shapes the
 * graph's inputs declare: a plan stays static.
 *
 * Internal to core/io/onnx-*.c.
 */
#ifndef HY_ONNX_IMPORT_H
#define HY_ONNX_IMPORT_H

#include <glib.h>

#include "hybrid.h"
#include "core/graph.h"
#include "core/io/params-io.h"

#ifdef HY_HAVE_ONNX
#include "core/onnx.pb-c.h"

/* A QuantizeLinear's output before anything reads it: integers the core
 * holds nowhere, since only the DequantizeLinear after it may read them
 * (onnx-qdq.c), which becomes one quantize-dequantize op in float. */
typedef struct hy_onnx_quantized {
  char *node;                   /* the QuantizeLinear, for errors (owned) */
  hy_entry data;                /* the float data it quantizes */
  int dtype;                    /* ONNX_UINT8 or ONNX_INT8 */
  int axis, ndim;               /* of the data, when per axis */
  gint64 n;                     /* scales: 1 (the tensor) or per axis */
  float *scale, *zero_point;    /* n each (owned) */
  gboolean has_fake;            /* the pair's op, made once */
  hy_entry fake;
} hy_onnx_quantized;

/* What an ONNX value name stands for at this point of the import.  A
 * value is a graph entry, a constant, or both (a constant that some op
 * reads as data is made a weight variable the first time one does), or
 * a QuantizeLinear's integers (`quantized`, neither). */
typedef struct hy_onnx_value {
  gboolean has_entry;
  hy_entry entry;
  gboolean is_const;
  gboolean is_int;              /* int64/int32/bool data: `ints` is exact */
  int dtype;                    /* ONNX element type of a constant read
                                 * from a tensor or folded by
                                 * QuantizeLinear; 0 for others */
  hy_shape shape;               /* the constant's */
  float *f;                     /* numel floats (owned) */
  gint64 *ints;                 /* numel ints when is_int (owned) */
  hy_onnx_quantized *quantized; /* (owned) */
  /* A value of the data-dependent tail (onnx-tail.c): computed by its
   * step `tail_step`, inside the one op the tail becomes, so it is no
   * graph entry until that op is made (and then only if it is a graph
   * output). */
  gboolean in_tail;
  int tail_step;
} hy_onnx_value;

typedef struct hy_onnx_tail hy_onnx_tail;

typedef struct hy_onnx_importer {
  const char *source;           /* the file, for errors */
  const char *dir;              /* its folder (external data), or NULL */
  int opset;                    /* of the default domain */
  hy_graph *graph;
  GArray *params;               /* hy_param, handed to the model */
  GHashTable *values;           /* ONNX name -> hy_onnx_value * */
  const Onnx__NodeProto *node;  /* being imported, for errors */
  guint n_made;                 /* nodes made, for unique names */
  hy_onnx_tail *tail;           /* NULL until a node needs one (owned) */
} hy_onnx_importer;

/* Attributes of the node being imported. */
const Onnx__AttributeProto *hy_onnx_attr (const Onnx__NodeProto *node,
    const char *name);
gint64 hy_onnx_attr_int (const Onnx__NodeProto *node, const char *name,
    gint64 def);
double hy_onnx_attr_float (const Onnx__NodeProto *node, const char *name,
    double def);
/* A string attribute of up to 63 bytes, copied into `buf`; `def` when
 * absent, longer or not text. */
typedef char hy_onnx_word[64];
const char *hy_onnx_attr_string (const Onnx__NodeProto *node,
    const char *name, const char *def, hy_onnx_word buf);
/* The ints of a list attribute; *n = -1 when absent. */
const gint64 *hy_onnx_attr_ints (const Onnx__NodeProto *node,
    const char *name, int *n);

/* Input k of the node being imported, or NULL when absent or empty
 * (ONNX's "" for a left-out optional input). */
const char *hy_onnx_input_name (hy_onnx_importer *imp, guint k);
/* The value input k names; NULL with an error naming the node when it is
 * not produced by anything before. */
hy_onnx_value *hy_onnx_input (hy_onnx_importer *imp, guint k,
    GError **error);
/* The constant at input k, or NULL with an error saying that the input
 * must be a constant (an initializer or a Constant node's). */
hy_onnx_value *hy_onnx_input_const (hy_onnx_importer *imp, guint k,
    GError **error);
/* Input k as a graph entry, a constant made a weight variable first. */
gboolean hy_onnx_input_entry (hy_onnx_importer *imp, guint k, hy_entry *out,
    GError **error);
/* The static shape of input k: a constant's, or inferred through the
 * graph built so far from the inputs' declared shapes. */
gboolean hy_onnx_input_shape (hy_onnx_importer *imp, guint k, hy_shape *out,
    GError **error);

/* Output k of the node being imported becomes `entry`, or a constant
 * (taking the arrays; `ints` may be NULL for a float constant). */
void hy_onnx_set_output (hy_onnx_importer *imp, guint k, hy_entry entry);
void hy_onnx_set_const (hy_onnx_importer *imp, guint k, const hy_shape *shape,
    float *f, gint64 *ints);

/* Adds one resolved op node reading `inputs`; the attributes are
 * key, value string pairs ending with NULL.  Returns its output 0, or
 * (G_MAXUINT, 0) with an error naming the ONNX node and the op. */
hy_entry hy_onnx_add_op (hy_onnx_importer *imp, const char *op,
    const hy_entry *inputs, guint n_inputs, GError **error, ...)
    G_GNUC_NULL_TERMINATED;
#define HY_ONNX_BAD_ENTRY ((hy_entry) { G_MAXUINT, 0 })

/* A weight variable holding `f` (taken), for a tensor made at load. */
hy_entry hy_onnx_add_weight (hy_onnx_importer *imp, const char *name,
    const hy_shape *shape, float *f);

/* Formats "(a, b, c)" for a tuple attribute. */
char *hy_onnx_tuple (const gint64 *v, int n);

/* How errors name a node: its name, or its first output when unnamed. */
#define HY_ONNX_NODE_NAME(imp) ((imp)->node->name && (imp)->node->name[0] \
    ? (imp)->node->name : (imp)->node->output[0])

/* Sets `FILE: node 'NAME' (OP): what` as an unsupported-model error and
 * returns FALSE, for `return hy_onnx_refuse (...)`. */
gboolean hy_onnx_refuse (hy_onnx_importer *imp, GError **error,
    const char *fmt, ...) G_GNUC_PRINTF (3, 4);

/* QuantizeLinear and DequantizeLinear (onnx-qdq.c), which the op table
 * in onnx-ops.c names. */
gboolean hy_onnx_import_quantize_linear (hy_onnx_importer *imp,
    GError **error);
gboolean hy_onnx_import_dequantize_linear (hy_onnx_importer *imp,
    GError **error);

/* ArgMax/ArgMin, Where, Expand, GatherND and ScatterND
 * (core/io/onnx-select.c): `onnx` is the node's op type, `core` the core
 * op its row in onnx-ops.c names, where the row names one. */
gboolean hy_onnx_import_select (hy_onnx_importer *imp, const char *onnx,
    const char *core, GError **error);

/* The data-dependent tail (core/io/onnx-tail.c): whether the node being
 * imported belongs to it (a NonZero or NonMaxSuppression, or a reader of
 * a tail value), adding it as the next step of the tail's program; once
 * every node is read, the tail becomes one _hy_onnx_tail op whose outputs
 * are the graph outputs among its values (shapes as the file declares
 * them); then freeing it. */
gboolean hy_onnx_tail_takes (hy_onnx_importer *imp);
gboolean hy_onnx_tail_add (hy_onnx_importer *imp, GError **error);
gboolean hy_onnx_tail_finish (hy_onnx_importer *imp,
    const Onnx__GraphProto *graph, GError **error);
void hy_onnx_tail_free (hy_onnx_tail *tail);

/* Imports the node being imported (imp->node). */
gboolean hy_onnx_import_node (hy_onnx_importer *imp, GError **error);
/* Folds an op whose inputs are all integer constants (shape arithmetic);
 * *folded says whether it could. */
gboolean hy_onnx_fold_ints (hy_onnx_importer *imp, gboolean *folded,
    GError **error);
/* The ONNX op types hy_onnx_import_node takes, ", "-separated (g_free). */
char *hy_onnx_supported_ops (void);
#endif

/* Reads `path` (an ONNX ModelProto) into a resolved graph and its
 * weights.  Symbolic dimensions of the graph's inputs are 1.  Without
 * protobuf-c at build time, refuses with HY_ERROR_UNSUPPORTED. */
gboolean hy_onnx_load (const char *path, hy_graph **graph,
    hy_param_list **params, GError **error);
/* The same from bytes in memory (the fuzz target); `dir` is where
 * external data files are looked for (NULL: refuse them). */
gboolean hy_onnx_parse (const guint8 *data, gsize size, const char *source,
    const char *dir, hy_graph **graph, hy_param_list **params,
    GError **error);

#endif /* HY_ONNX_IMPORT_H */
