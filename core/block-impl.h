/*
 * block-impl.h — the insides of blocks, parameters and F, shared by
 * block.c (blocks, calls, hybridize), block-io.c (export, imports,
 * parameter files), block-f.c (F and values), block-f-ops.c (F's typed
 * wrappers) and block-layers.c (the built-in layers).  Not public.
 */
#ifndef HY_BLOCK_IMPL_H
#define HY_BLOCK_IMPL_H

#include "hybrid-block.h"
#include "core/backend.h"
#include "core/graph.h"

struct hy_parameter {
  hy_block *owner;
  char *name;                   /* under its block: "weight" */
  char *full_name;              /* prefix + name, rebuilt on request */
  hy_shape shape;               /* 0 dims: deferred */
  hy_init init;                 /* its own; INHERIT takes the block's */
  gboolean init_pending;        /* initialize() ran, the shape was not
                                 * complete yet: fill it when it is */
  hy_init pending;              /* the initialiser to fill it with */
  hy_tensor *data;              /* NULL until initialised */
};

/* Fills a layer's deferred parameter dimensions from its input shapes
 * before it runs (Gluon 2's infer_shape; Gluon 1 gets the same from
 * symbolic shape inference). */
typedef void (*hy_infer_params_fn) (hy_block *self, const hy_shape *inputs,
    int n_inputs);

/* A hybridized block's traced graph, compiled. */
typedef struct hy_cached_graph {
  hy_model *model;              /* owns the traced graph */
  hy_executor *exec;
  guint64 param_generation;     /* parameters the plan was built from */
  int n_inputs;                 /* the block's inputs when traced */
  int *feed_slot;               /* model input i ← block input feed_slot[i] */
  const hy_tensor **feed;       /* scratch: inputs in model order */
} hy_cached_graph;

struct hy_block {
  char *hint;                   /* "dense", "conv", "net" */
  char *own_prefix;             /* "dense0_": from the parent or global */
  char *prefix;                 /* full, rebuilt when names change */
  guint prefix_generation;
  gboolean keeps_names;         /* imported: names are kept as written */
  gboolean hybrid;
  gboolean hybridized;
  hy_hybrid_flags flags;
  hy_forward_fn forward;
  hy_infer_params_fn infer_params;
  hy_block *parent;
  char *child_name;             /* structural name under the parent */
  GPtrArray *params;            /* hy_parameter *, owned, in add order */
  GPtrArray *children;          /* hy_block *, owned, in add order */
  GHashTable *hint_counts;      /* hint → children numbered so far */
  gpointer user_data;
  GDestroyNotify user_destroy;
  hy_cached_graph *cache;
  /* Where hybridized forwards run: a device, or (tests) a maker of
   * backends, called for each executor the block builds. */
  hy_device device;
  hy_backend_maker make_backend;
  void *make_backend_data;
  /* Imperative forwards' ops run here: host memory, made at the first
   * imperative forward (F hands its tensors straight to the caller). */
  hy_backend *imperative;
  GPtrArray *outputs;           /* const hy_tensor *, of the last forward */
  GPtrArray *owned_outputs;     /* hy_tensor *, those of them we own */
};

/* ---- block.c, for the layers and block-io.c ------------------------------ */

/* Hybridizes like hy_block_hybridize_on, but every executor the block (or
 * a child) builds runs on a backend `make` returns (the tests' pretend
 * device); the executor takes it. */
void hy_block_hybridize_with (hy_block *block, hy_hybrid_flags flags,
    hy_backend_maker make, void *data);

hy_block *hy_block_new_full (const char *hint, hy_forward_fn forward,
    hy_infer_params_fn infer_params, gboolean hybrid);
/* Registers a child with the prefix `own_prefix` instead of the next
 * number for its hint (Gluon: Dense's activation is "relu_"). */
hy_block *hy_block_register_child_prefixed (hy_block *parent,
    const char *name, hy_block *child, const char *own_prefix);
/* Fills the deferred (0) dimensions of a parameter; a known dimension
 * is kept, and a mismatch is left for the op's shape check to report. */
void hy_parameter_complete_shape (hy_parameter *param, int ndim,
    const int64_t *dims);
/* Runs a block on values in F's mode: Gluon's block(x). */
hy_value *hy_block_call (hy_F *F, hy_block *block, hy_value *const *inputs,
    int n_inputs);
/* Bumped whenever any parameter's data changes: compiled plans fold
 * parameters in, so a plan built before must be rebuilt. */
void hy_parameters_changed (void);

/* ---- block-f.c, for the other block files -------------------------------- */

/* `backend` must have host memory: F's values are host tensors. */
hy_F *hy_F_new_imperative (hy_backend *backend);
hy_F *hy_F_new_symbolic (void);
void hy_F_free (hy_F *F);
/* Records an error (the first one wins); takes `error`. */
void hy_F_fail (hy_F *F, GError *error);
void hy_F_failf (hy_F *F, int code, const char *format, ...)
    G_GNUC_PRINTF (3, 4);
gboolean hy_F_failed (const hy_F *F);
/* Moves the recorded error into *error. */
void hy_F_take_error (hy_F *F, GError **error);

/* Node names: ops are named under the innermost block being called. */
char *hy_F_push_scope (hy_F *F, const char *prefix);
void hy_F_pop_scope (hy_F *F, char *saved);

/* An imperative value viewing `tensor` (not owned). */
hy_value *hy_F_wrap (hy_F *F, const hy_tensor *tensor);
/* An imperative value owning `tensor`. */
hy_value *hy_F_adopt (hy_F *F, hy_tensor *tensor);
/* Tracing: a data input variable of the given (hidden) shape. */
hy_value *hy_F_input (hy_F *F, const char *name, const hy_shape *shape);
/* A parameter as a value: its data, or (tracing) its variable named
 * `full_name`, one per parameter per trace.  The caller names it, so F
 * needs nothing of the blocks that own parameters. */
hy_value *hy_F_param (hy_F *F, hy_parameter *param, const char *full_name);
/* A value an op reads nothing from (an unused label input). */
hy_value *hy_F_placeholder (hy_F *F, const char *name);
/* The generic op call behind hy_F_op: `name` names the node (NULL: the
 * op name and a counter) under the current scope. */
int hy_F_invoke (hy_F *F, const char *op, hy_value *const *inputs,
    int n_inputs, const char *const *attrs, const char *name,
    hy_value **outputs, int max_outputs);

/* Python's repr of a float, as MXNet attributes spell numbers. */
void hy_F_format_double (double v, char *buf, size_t size);

/* The shape F knows, in both modes (tracing infers it as it goes). */
const hy_shape *hy_value_known_shape (const hy_value *value);
/* A group's members (a plain value is its own only member). */
int hy_value_n_members (const hy_value *value);
hy_value *hy_value_member (const hy_value *value, int i);
/* Imperative: the value's tensor, owned by the caller from now on (a
 * copy when the value does not own it). */
hy_tensor *hy_value_take_tensor (hy_value *value);

/* Ends a trace: the graph with `output`'s members as heads, pruned to
 * what they need (data inputs are always kept), and the parameters it
 * reads (*params, hy_parameter *, graph order).  The graph is the
 * caller's. */
hy_graph *hy_F_finish_trace (hy_F *F, hy_value *output, GPtrArray **params,
    GError **error);

#endif /* HY_BLOCK_IMPL_H */
