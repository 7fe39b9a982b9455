/*
 * hybrid-block.h — Gluon's hybrid programming model in C: write a network
 * once, run it imperatively while developing it, hybridize it for speed,
 * export it for deployment.
 *
 * A block owns named parameters, child blocks, and a forward function
 * written against the op namespace F.  The same function runs two ways:
 *
 *   imperative  F computes every op at once on tensors (each op allocates
 *               its output, as Gluon's NDArray path does): values can be
 *               printed and inspected, and a printf in the forward runs on
 *               every call.
 *   hybridized  after hy_block_hybridize(), the next forward calls the
 *               function once with symbolic values, tracing it into a
 *               graph that is compiled into a plan (optimised graph, one
 *               memory arena); every later forward runs the plan without
 *               calling the function again.
 *
 * Values belong to the forward that made them: they are freed when the
 * outermost forward returns, so a forward never frees anything and must
 * not keep values across calls.
 *
 * Errors inside a forward are sticky: the first failing F call records a
 * GError on F, every later F call returns NULL at once, and
 * hy_block_forward() reports it.  A forward therefore needs no error
 * checks of its own, except around calls that return data it wants to
 * read (hy_value_data, hy_value_shape), which fail while tracing.
 *
 * Blocks are not thread-safe: use one block from one thread at a time.
 */
#ifndef HYBRID_BLOCK_H
#define HYBRID_BLOCK_H

#include <glib.h>

#include "hybrid.h"

G_BEGIN_DECLS

typedef struct hy_block hy_block;
typedef struct hy_parameter hy_parameter;
typedef struct hy_F hy_F;
typedef struct hy_value hy_value;

/* A dimension list for calls taking (ndim, dims):
 *   hy_block_add_param (net, "w", HY_DIMS (10, 84), hy_init_inherit ())
 *   hy_F_reshape (F, x, HY_DIMS (0, -1))                                   */
#define HY_DIMS(...) \
  (int) (sizeof ((const int64_t[]) { __VA_ARGS__ }) / sizeof (int64_t)), \
  (const int64_t[]) { __VA_ARGS__ }

/* ---- initialisers (core/init.c) ----------------------------------------- */

typedef enum hy_init_kind {
  HY_INIT_INHERIT = 0,          /* the one given to hy_block_initialize() */
  HY_INIT_ZEROS,
  HY_INIT_ONES,
  HY_INIT_CONSTANT,             /* value */
  HY_INIT_UNIFORM,              /* U(-value, value) */
  HY_INIT_NORMAL,               /* N(0, value²) */
  HY_INIT_XAVIER,               /* value = magnitude */
} hy_init_kind;

typedef enum hy_xavier_rnd {
  HY_XAVIER_UNIFORM,
  HY_XAVIER_GAUSSIAN,
} hy_xavier_rnd;

typedef enum hy_xavier_factor {
  HY_XAVIER_AVG,                /* (fan_in + fan_out) / 2 */
  HY_XAVIER_IN,
  HY_XAVIER_OUT,
} hy_xavier_factor;

/* A small value: pass and store it by value. */
typedef struct hy_init {
  hy_init_kind kind;
  float value;
  hy_xavier_rnd rnd_type;
  hy_xavier_factor factor_type;
} hy_init;

hy_init hy_init_inherit (void);
hy_init hy_init_zeros (void);
hy_init hy_init_ones (void);
hy_init hy_init_constant (float value);
hy_init hy_init_uniform (float scale);
hy_init hy_init_normal (float sigma);
/* MXNet's defaults: uniform, factor "avg", magnitude 3. */
hy_init hy_init_xavier (void);
hy_init hy_init_xavier_full (hy_xavier_rnd rnd_type,
    hy_xavier_factor factor_type, float magnitude);
/* What hy_block_initialize() uses when given hy_init_inherit(): MXNet's
 * default, uniform in [-0.07, 0.07]. */
hy_init hy_init_default (void);

/* Seeds the generator every random initialiser draws from (as
 * mx.random.seed).  The sequence is hybridinfer's own, not MXNet's: the
 * same seed gives the same weights here, not the weights MXNet would. */
void hy_random_seed (guint64 seed);

/* Fills `tensor` as `init` says.  Xavier needs at least 2 dimensions. */
gboolean hy_init_fill (const hy_init *init, hy_tensor *tensor,
    GError **error);

/* ---- blocks (core/block.c, core/block-io.c) ------------------------------ */

/* inputs: the block's n_inputs inputs; params: its own parameters (not its
 * children's), in the order hy_block_add_param() added them.  Returns the
 * output: a value made by F, one of the inputs, or a group (hy_F_group)
 * for several outputs.  NULL only after an error recorded on F. */
typedef hy_value *(*hy_forward_fn) (hy_block *self, hy_F *F,
    hy_value *const *inputs, int n_inputs, hy_value *const *params);

/* A hybrid block (Gluon's HybridBlock): may be hybridized, and every block
 * it calls while being traced must be hybrid too.  `hint` names it:
 * parameters and nodes get the prefix hint + a counter ("net0_"). */
hy_block *hy_hybrid_block_new (const char *hint, hy_forward_fn forward);
/* A plain block (Gluon's Block): always runs imperatively; hybridizing it
 * hybridizes its hybrid children instead. */
hy_block *hy_block_new (const char *hint, hy_forward_fn forward);
/* Frees the block and its children.  Only for blocks without a parent. */
void hy_block_free (hy_block *block);

gboolean hy_block_is_hybrid (const hy_block *block);
void hy_block_set_user_data (hy_block *block, gpointer data,
    GDestroyNotify destroy);
gpointer hy_block_get_user_data (const hy_block *block);

/* The name prefix ("net0_", "net0_dense1_").  A block without a parent
 * takes the next free number for its hint the first time it is asked
 * (Gluon's global counter); a child gets its parent's prefix plus the next
 * number for its hint among that parent's children. */
const char *hy_block_prefix (hy_block *block);
/* Sets a block's own prefix ("model_"), before anything used it. */
void hy_block_set_prefix (hy_block *block, const char *prefix);

/* Adds a parameter named prefix + name ("fc3_weight" → "net0_fc3_weight").
 * Dimensions given as 0 are deferred: a layer fills them from its input at
 * the first forward.  Blocks of your own must give complete shapes. */
hy_parameter *hy_block_add_param (hy_block *block, const char *name,
    int ndim, const int64_t *dims, hy_init init);
int hy_block_n_params (const hy_block *block);
hy_parameter *hy_block_param (const hy_block *block, int i);
/* This block's own parameter called `name` ("weight"), or NULL. */
hy_parameter *hy_block_find_param (const hy_block *block, const char *name);
/* Every parameter of the block and its children, depth first, own ones
 * first; *n gets the count.  Free the array (not the parameters) with
 * g_free. */
hy_parameter **hy_block_collect_params (hy_block *block, int *n);

/* Adds `child` under the structural name `name` ("conv1"), taking
 * ownership; returns it, borrowed. */
hy_block *hy_block_register_child (hy_block *parent, const char *name,
    hy_block *child);
hy_block *hy_block_child (const hy_block *block, const char *name);
int hy_block_n_children (const hy_block *block);
hy_block *hy_block_nth_child (const hy_block *block, int i);

/* Initialises every parameter of the block and its children: each with
 * its own initialiser, or `init` where that is hy_init_inherit (and `init`
 * itself inherits hy_init_default).  Biases, betas and running means get
 * zeros, gammas and running variances ones, whatever `init` is, as MXNet
 * does.  Parameters with deferred dimensions are initialised at the first
 * forward.  Calling it again re-initialises. */
gboolean hy_block_initialize (hy_block *block, hy_init init, GError **error);

/* Gluon's hybridize(static_alloc, static_shape) flags.  The compiled plan
 * always allocates statically (one arena per input shape), so both flags
 * are accepted and recorded; with or without them, a new input shape
 * re-plans (up to 8 plans are cached) without calling the forward
 * function again, as Gluon's cached graph does. */
typedef enum hy_hybrid_flags {
  HY_HYBRID_DEFAULT = 0,
  HY_HYBRID_STATIC_ALLOC = 1 << 0,
  HY_HYBRID_STATIC_SHAPE = 1 << 1,
} hy_hybrid_flags;

/* Hybridizes the block and its children (dropping any traced graph): the
 * next forward traces. */
void hy_block_hybridize (hy_block *block, hy_hybrid_flags flags);
/* The same, with every compiled graph running on `device` (weights
 * uploaded once per plan; inputs and outputs stay host tensors). */
void hy_block_hybridize_on (hy_block *block, hy_hybrid_flags flags,
    hy_device device);
/* Back to imperative execution. */
void hy_block_dehybridize (hy_block *block);
gboolean hy_block_is_hybridized (const hy_block *block);

/* Runs the block on one or more inputs.  The result is owned by the
 * block and lives until its next forward or its free. */
const hy_tensor *hy_block_forward (hy_block *block, const hy_tensor *input,
    GError **error);
const hy_tensor *hy_block_forward_n (hy_block *block,
    const hy_tensor *const *inputs, int n_inputs, GError **error);
/* Outputs of the last forward (several when the forward returned a
 * group). */
int hy_block_n_outputs (const hy_block *block);
const hy_tensor *hy_block_output (const hy_block *block, int i);

/* Writes `prefix-symbol.json` and `prefix-%04d.params` (arg:/aux: keys)
 * as Gluon's export does, so that MXNet's SymbolBlock.imports (and
 * hy_block_imports, and the hybridinfer element) load them.  The block
 * must be hybridized and have run a forward.  To give the element its
 * preprocessing and labels too, write the sidecar beside the export:
 * hy_sidecar_save_for_prefix (hybrid-sidecar.h) with the same prefix. */
gboolean hy_block_export (hy_block *block, const char *prefix, int epoch,
    GError **error);

/* Gluon's SymbolBlock.imports: an exported model as a hybrid block whose
 * inputs are the model's data inputs, in graph order.  params_path NULL
 * takes the newest `prefix-NNNN.params` beside the symbol file.  Its node
 * and parameter names are kept as written. */
hy_block *hy_block_imports (const char *symbol_path, const char *params_path,
    GError **error);

/* Gluon's save_parameters / load_parameters: MXNet's .params format with
 * structural names ("conv1.weight", "0.bias", "fc3_weight").  Loading also
 * accepts an export's params file (full names, arg:/aux:).  Every
 * parameter must be in the file and every array in the file must be
 * used; deferred shapes are taken from the file. */
gboolean hy_block_save_parameters (hy_block *block, const char *path,
    GError **error);
gboolean hy_block_load_parameters (hy_block *block, const char *path,
    GError **error);

/* ---- parameters --------------------------------------------------------- */

/* prefix + name, e.g. "net0_dense0_weight". */
const char *hy_parameter_name (hy_parameter *param);
/* Dimensions still deferred are 0. */
hy_shape hy_parameter_shape (const hy_parameter *param);
/* NULL until initialised. */
const hy_tensor *hy_parameter_data (const hy_parameter *param);
/* Copies `data` in; its shape must match (deferred dimensions take
 * it). */
gboolean hy_parameter_set_data (hy_parameter *param, const hy_tensor *data,
    GError **error);

/* ---- the op namespace F (core/block-f.c, core/block-f-ops.c) ------------ */

/* "ndarray" while running imperatively, "symbol" while tracing: what
 * Gluon's F.__name__ would end in. */
const char *hy_F_name (const hy_F *F);
gboolean hy_F_is_symbolic (const hy_F *F);
/* The error recorded by this forward so far, or NULL. */
const GError *hy_F_error (const hy_F *F);

/* Calls a block (a child, usually) on x, in F's mode. */
hy_value *hy_F_call (hy_F *F, hy_block *block, hy_value *x);
hy_value *hy_F_call_n (hy_F *F, hy_block *block, hy_value *const *inputs,
    int n_inputs);
/* self's child `child` on x: Gluon's self.child(x). */
hy_value *hy_F_call_child (hy_F *F, hy_block *self, const char *child,
    hy_value *x);

/* Any op of kernels/ops.def by its MXNet name, with attributes as
 * key/value strings ending in NULL, as MXNet would write them:
 *   hy_F_op (F, "Pooling", &x, 1, "kernel", "(2, 2)", "pool_type", "max",
 *       NULL)
 * The key "name" names the node (under the block's prefix); without it
 * the node is named prefix + op + counter ("net0_relu0").  Returns the
 * first output. */
hy_value *hy_F_op (hy_F *F, const char *op, hy_value *const *inputs,
    int n_inputs, ...) G_GNUC_NULL_TERMINATED;
/* The same with the attributes as a NULL-terminated key, value array. */
hy_value *hy_F_op_array (hy_F *F, const char *op, hy_value *const *inputs,
    int n_inputs, const char *const *attrs);
/* All outputs: writes up to max_outputs values and returns how many the
 * op has (0 after an error). */
int hy_F_op_outputs (hy_F *F, const char *op, hy_value *const *inputs,
    int n_inputs, const char *const *attrs, hy_value **outputs,
    int max_outputs);
/* Several values as one, for a forward with several outputs.  Its
 * members come back with hy_value_index. */
hy_value *hy_F_group (hy_F *F, hy_value *const *values, int n);

/* Typed wrappers over hy_F_op for the common ops. */
hy_value *hy_F_relu (hy_F *F, hy_value *x);
hy_value *hy_F_sigmoid (hy_F *F, hy_value *x);
hy_value *hy_F_tanh (hy_F *F, hy_value *x);
hy_value *hy_F_exp (hy_F *F, hy_value *x);
hy_value *hy_F_activation (hy_F *F, hy_value *x, const char *act_type);
hy_value *hy_F_softmax (hy_F *F, hy_value *x, int axis);
hy_value *hy_F_identity (hy_F *F, hy_value *x);

/* Elementwise: equal shapes only (a restriction of MXNet's symbols and of
 * elemwise_* itself); broadcast_* broadcast. */
hy_value *hy_F_elemwise_add (hy_F *F, hy_value *a, hy_value *b);
hy_value *hy_F_elemwise_sub (hy_F *F, hy_value *a, hy_value *b);
hy_value *hy_F_elemwise_mul (hy_F *F, hy_value *a, hy_value *b);
hy_value *hy_F_elemwise_div (hy_F *F, hy_value *a, hy_value *b);
hy_value *hy_F_broadcast_add (hy_F *F, hy_value *a, hy_value *b);
hy_value *hy_F_broadcast_sub (hy_F *F, hy_value *a, hy_value *b);
hy_value *hy_F_broadcast_mul (hy_F *F, hy_value *a, hy_value *b);
hy_value *hy_F_broadcast_div (hy_F *F, hy_value *a, hy_value *b);
hy_value *hy_F_plus_scalar (hy_F *F, hy_value *x, double scalar);
hy_value *hy_F_mul_scalar (hy_F *F, hy_value *x, double scalar);

hy_value *hy_F_dot (hy_F *F, hy_value *a, hy_value *b,
    gboolean transpose_a, gboolean transpose_b);
/* MXNet's reshape codes: 0 copies a dimension, -1 infers one. */
hy_value *hy_F_reshape (hy_F *F, hy_value *x, int ndim, const int64_t *dims);
hy_value *hy_F_flatten (hy_F *F, hy_value *x);
hy_value *hy_F_slice_axis (hy_F *F, hy_value *x, int axis, int64_t begin,
    int64_t end);
hy_value *hy_F_concat (hy_F *F, hy_value *const *values, int n, int dim);
/* bias NULL: no bias. */
hy_value *hy_F_fully_connected (hy_F *F, hy_value *x, hy_value *weight,
    hy_value *bias, int64_t num_hidden, gboolean flatten);
/* Square 2-D kernels; bias NULL: no bias. */
hy_value *hy_F_convolution (hy_F *F, hy_value *x, hy_value *weight,
    hy_value *bias, int64_t num_filter, int kernel, int stride, int pad);
/* pool_type "max" or "avg"; global ignores kernel, stride and pad. */
hy_value *hy_F_pooling (hy_F *F, hy_value *x, const char *pool_type,
    int kernel, int stride, int pad, gboolean global);
/* Inference: normalises with the running statistics. */
hy_value *hy_F_batch_norm (hy_F *F, hy_value *x, hy_value *gamma,
    hy_value *beta, hy_value *running_mean, hy_value *running_var,
    double eps, int axis);

/* ---- values ------------------------------------------------------------- */

gboolean hy_value_is_symbolic (const hy_value *value);
/* The value's shape.  While tracing there is none to read (a symbol is a
 * placeholder for every shape the graph will run with): FALSE, and the
 * hybridize restriction is recorded on F. */
gboolean hy_value_shape (const hy_value *value, hy_shape *out);
/* HY_DTYPE_FLOAT32; -1 while tracing, with the restriction recorded. */
int hy_value_dtype (const hy_value *value);
/* The tensor (Gluon's asnumpy()); NULL while tracing, with the
 * restriction recorded. */
const hy_tensor *hy_value_data (const hy_value *value);
/* For printing, in both modes: the numbers and "<NDArray 1x4 @cpu(0)>",
 * or "<Symbol net0_relu0>".  Free with g_free. */
char *hy_value_to_string (const hy_value *value);
/* Gluon's x[i]: on a tensor, the i-th slice along axis 0; on a group, its
 * i-th member.  On a symbol that is not a group, [] would pick an output,
 * not a slice, so tracing records an error (use hy_F_slice_axis). */
hy_value *hy_value_index (hy_value *value, int i);
/* Gluon's x[i] = v: sets the i-th slice along axis 0.  Symbols cannot be
 * assigned to, so tracing records an error (build the value with ops). */
gboolean hy_value_set_item (hy_value *value, int i, float v);

/* ---- layers (core/block-layers.c) ---------------------------------------
 *
 * Gluon's built-in layers, with its names: Dense is "dense0_" with
 * parameters "weight" and "bias", and so on.  Zero-filled option structs
 * (or NULL) give Gluon's defaults. */

typedef struct hy_dense_opts {
  const char *activation;       /* NULL: none; "relu", "sigmoid", … */
  gboolean no_bias;
  gboolean no_flatten;          /* map the last axis only */
  int64_t in_units;             /* 0: from the first input */
  hy_init weight_init;
  hy_init bias_init;            /* inherit means zeros */
} hy_dense_opts;
hy_block *hy_dense_new (int64_t units, const hy_dense_opts *opts);

typedef struct hy_conv2d_opts {
  int stride;                   /* 0: 1 */
  int pad;
  int dilation;                 /* 0: 1 */
  int groups;                   /* 0: 1 */
  const char *activation;
  gboolean no_bias;
  int64_t in_channels;          /* 0: from the first input */
  hy_init weight_init;
  hy_init bias_init;            /* inherit means zeros */
} hy_conv2d_opts;
hy_block *hy_conv2d_new (int64_t channels, int kernel_size,
    const hy_conv2d_opts *opts);

/* stride 0: pool_size. */
hy_block *hy_max_pool2d_new (int pool_size, int stride, int pad);
hy_block *hy_avg_pool2d_new (int pool_size, int stride, int pad);
hy_block *hy_global_avg_pool2d_new (void);
hy_block *hy_global_max_pool2d_new (void);

/* Inference batch normalisation over `axis` (Gluon: 1) with epsilon
 * (Gluon: 1e-5); center/scale FALSE drop beta/gamma as Gluon does. */
hy_block *hy_batch_norm_new (void);
hy_block *hy_batch_norm_new_full (int axis, double epsilon, gboolean center,
    gboolean scale);

hy_block *hy_activation_new (const char *act_type);
hy_block *hy_flatten_new (void);
/* Identity at inference, as in MXNet outside autograd.record(). */
hy_block *hy_dropout_new (double rate);

/* Containers calling their children in order.  The hybrid one is traced
 * as a whole; the plain one hybridizes its children one by one. */
hy_block *hy_hybrid_sequential_new (void);
hy_block *hy_sequential_new (void);
/* Adds a child named "0", "1", …; returns it. */
hy_block *hy_sequential_add (hy_block *sequential, hy_block *child);

G_END_DECLS
#endif /* HYBRID_BLOCK_H */
