/*
 * block-layers.c — Gluon's built-in layers as blocks, built on F like any
 * block of your own.
 *
 * Each writes the attributes and node names Gluon 1.9.1's layers write
 * (an export must look like Gluon's), and fills its deferred parameter
 * dimensions from its input (Dense learns in_units, Conv2D in_channels,
 * BatchNorm its channels) the first time it runs.
 */
#include <stdio.h>
#include <string.h>

#include "core/block-impl.h"

#define ATTR_LEN 64

static const char *
py_bool (gboolean b)
{
  return b ? "True" : "False";
}

static void
format_int (int64_t v, char *buf)
{
  snprintf (buf, ATTR_LEN, "%" G_GINT64_FORMAT, (gint64) v);
}

static void
format_pair (int v, char *buf)
{
  snprintf (buf, ATTR_LEN, "(%d, %d)", v, v);
}

/* Dense and Conv2D apply their activation as a child block named after it
 * ("dense0_relu_"), as Gluon does. */
static void
add_activation (hy_block *layer, const char *activation)
{
  if (!activation)
    return;
  g_autofree char *prefix = g_strconcat (activation, "_", NULL);
  hy_block_register_child_prefixed (layer, "act",
      hy_activation_new (activation), prefix);
}

static hy_value *
apply_activation (hy_F *F, hy_block *self, hy_value *x)
{
  hy_block *act = hy_block_child (self, "act");
  return act ? hy_F_call (F, act, x) : x;
}

/* ---- Dense -------------------------------------------------------------- */

typedef struct dense_cfg {
  int64_t units;
  gboolean use_bias;
  gboolean flatten;
} dense_cfg;

static hy_value *
dense_forward (hy_block *self, hy_F *F, hy_value *const *inputs, int n,
    hy_value *const *params)
{
  const dense_cfg *cfg = hy_block_get_user_data (self);
  hy_value *in[3] = { inputs[0], params[0], cfg->use_bias ? params[1] : NULL };
  char units[ATTR_LEN];
  format_int (cfg->units, units);
  hy_value *y = hy_F_op (F, "FullyConnected", in, cfg->use_bias ? 3 : 2,
      "flatten", py_bool (cfg->flatten), "no_bias", py_bool (!cfg->use_bias),
      "num_hidden", units, "name", "fwd", NULL);
  return apply_activation (F, self, y);
}

static void
dense_infer (hy_block *self, const hy_shape *inputs, int n)
{
  const dense_cfg *cfg = hy_block_get_user_data (self);
  const hy_shape *x = &inputs[0];
  if (x->ndim < 1)
    return;
  int64_t in_units = x->dims[x->ndim - 1];
  if (cfg->flatten) {
    in_units = 1;
    for (int i = 1; i < x->ndim; i++)
      in_units *= x->dims[i];
  }
  int64_t dims[2] = { cfg->units, in_units };
  hy_parameter_complete_shape (hy_block_param (self, 0), 2, dims);
}

hy_block *
hy_dense_new (int64_t units, const hy_dense_opts *opts)
{
  static const hy_dense_opts defaults = { 0 };
  if (!opts)
    opts = &defaults;
  g_return_val_if_fail (units > 0, NULL);
  hy_block *b = hy_block_new_full ("dense", dense_forward, dense_infer, TRUE);
  dense_cfg *cfg = g_new0 (dense_cfg, 1);
  cfg->units = units;
  cfg->use_bias = !opts->no_bias;
  cfg->flatten = !opts->no_flatten;
  hy_block_set_user_data (b, cfg, g_free);
  hy_block_add_param (b, "weight", HY_DIMS (units, opts->in_units),
      opts->weight_init);
  if (cfg->use_bias)
    hy_block_add_param (b, "bias", HY_DIMS (units),
        opts->bias_init.kind ? opts->bias_init : hy_init_zeros ());
  add_activation (b, opts->activation);
  return b;
}

/* ---- Conv2D ------------------------------------------------------------- */

typedef struct conv_cfg {
  int64_t channels;
  int kernel, stride, pad, dilation, groups;
  gboolean use_bias;
} conv_cfg;

static hy_value *
conv_forward (hy_block *self, hy_F *F, hy_value *const *inputs, int n,
    hy_value *const *params)
{
  const conv_cfg *cfg = hy_block_get_user_data (self);
  hy_value *in[3] = { inputs[0], params[0], cfg->use_bias ? params[1] : NULL };
  char dilate[ATTR_LEN], kernel[ATTR_LEN], pad[ATTR_LEN], stride[ATTR_LEN];
  char filters[ATTR_LEN], groups[ATTR_LEN];
  format_pair (cfg->dilation, dilate);
  format_pair (cfg->kernel, kernel);
  format_pair (cfg->pad, pad);
  format_pair (cfg->stride, stride);
  format_int (cfg->channels, filters);
  format_int (cfg->groups, groups);
  hy_value *y = hy_F_op (F, "Convolution", in, cfg->use_bias ? 3 : 2,
      "dilate", dilate, "kernel", kernel, "layout", "NCHW",
      "no_bias", py_bool (!cfg->use_bias), "num_filter", filters,
      "num_group", groups, "pad", pad, "stride", stride, "name", "fwd", NULL);
  return apply_activation (F, self, y);
}

static void
conv_infer (hy_block *self, const hy_shape *inputs, int n)
{
  const conv_cfg *cfg = hy_block_get_user_data (self);
  if (inputs[0].ndim < 2)
    return;
  int64_t dims[4] = { cfg->channels, inputs[0].dims[1] / cfg->groups,
    cfg->kernel, cfg->kernel };
  hy_parameter_complete_shape (hy_block_param (self, 0), 4, dims);
}

hy_block *
hy_conv2d_new (int64_t channels, int kernel_size, const hy_conv2d_opts *opts)
{
  static const hy_conv2d_opts defaults = { 0 };
  if (!opts)
    opts = &defaults;
  g_return_val_if_fail (channels > 0 && kernel_size > 0, NULL);
  hy_block *b = hy_block_new_full ("conv", conv_forward, conv_infer, TRUE);
  conv_cfg *cfg = g_new0 (conv_cfg, 1);
  cfg->channels = channels;
  cfg->kernel = kernel_size;
  cfg->stride = opts->stride > 0 ? opts->stride : 1;
  cfg->pad = opts->pad;
  cfg->dilation = opts->dilation > 0 ? opts->dilation : 1;
  cfg->groups = opts->groups > 0 ? opts->groups : 1;
  cfg->use_bias = !opts->no_bias;
  hy_block_set_user_data (b, cfg, g_free);
  int64_t in_per_group = opts->in_channels / cfg->groups;
  hy_block_add_param (b, "weight",
      HY_DIMS (channels, in_per_group, kernel_size, kernel_size),
      opts->weight_init);
  if (cfg->use_bias)
    hy_block_add_param (b, "bias", HY_DIMS (channels),
        opts->bias_init.kind ? opts->bias_init : hy_init_zeros ());
  add_activation (b, opts->activation);
  return b;
}

/* ---- pooling ------------------------------------------------------------ */

typedef struct pool_cfg {
  const char *type;             /* "max", "avg" */
  int size, stride, pad;
  gboolean global;
} pool_cfg;

static hy_value *
pool_forward (hy_block *self, hy_F *F, hy_value *const *inputs, int n,
    hy_value *const *params)
{
  const pool_cfg *cfg = hy_block_get_user_data (self);
  char kernel[ATTR_LEN], pad[ATTR_LEN], stride[ATTR_LEN];
  format_pair (cfg->size, kernel);
  format_pair (cfg->pad, pad);
  format_pair (cfg->stride, stride);
  /* Gluon's global pools are built with ceil_mode; its average pools
   * state count_include_pad (the global ones leave it unset). */
  const char *attrs[] = {
    "global_pool", py_bool (cfg->global), "kernel", kernel,
    "layout", "NCHW", "pad", pad, "pool_type", cfg->type,
    "pooling_convention", cfg->global ? "full" : "valid",
    "stride", stride, "name", "fwd",
    !cfg->global && !strcmp (cfg->type, "avg") ? "count_include_pad" : NULL,
    "True", NULL,
  };
  return hy_F_op_array (F, "Pooling", inputs, 1, attrs);
}

static hy_block *
pool_new (const char *type, int size, int stride, int pad, gboolean global)
{
  g_return_val_if_fail (size > 0 && stride >= 0 && pad >= 0, NULL);
  hy_block *b = hy_block_new_full ("pool", pool_forward, NULL, TRUE);
  pool_cfg *cfg = g_new0 (pool_cfg, 1);
  cfg->type = type;
  cfg->size = size;
  cfg->stride = stride > 0 ? stride : size;
  cfg->pad = pad;
  cfg->global = global;
  hy_block_set_user_data (b, cfg, g_free);
  return b;
}

hy_block *
hy_max_pool2d_new (int pool_size, int stride, int pad)
{
  return pool_new ("max", pool_size, stride, pad, FALSE);
}

hy_block *
hy_avg_pool2d_new (int pool_size, int stride, int pad)
{
  return pool_new ("avg", pool_size, stride, pad, FALSE);
}

hy_block *
hy_global_avg_pool2d_new (void)
{
  return pool_new ("avg", 1, 1, 0, TRUE);
}

hy_block *
hy_global_max_pool2d_new (void)
{
  return pool_new ("max", 1, 1, 0, TRUE);
}

/* ---- BatchNorm ---------------------------------------------------------- */

typedef struct batch_norm_cfg {
  int axis;
  double epsilon;
  gboolean scale;
} batch_norm_cfg;

static hy_value *
batch_norm_forward (hy_block *self, hy_F *F, hy_value *const *inputs, int n,
    hy_value *const *params)
{
  const batch_norm_cfg *cfg = hy_block_get_user_data (self);
  hy_value *in[5] = { inputs[0], params[0], params[1], params[2], params[3] };
  char axis[ATTR_LEN], eps[ATTR_LEN];
  format_int (cfg->axis, axis);
  hy_F_format_double (cfg->epsilon, eps, sizeof eps);
  /* Outside autograd.record() BatchNorm uses the running statistics,
   * whatever use_global_stats says; Gluon writes it False. */
  return hy_F_op (F, "BatchNorm", in, 5, "axis", axis, "eps", eps,
      "fix_gamma", py_bool (!cfg->scale), "momentum", "0.9",
      "use_global_stats", "False", "name", "fwd", NULL);
}

static void
batch_norm_infer (hy_block *self, const hy_shape *inputs, int n)
{
  const batch_norm_cfg *cfg = hy_block_get_user_data (self);
  int axis = cfg->axis < 0 ? cfg->axis + inputs[0].ndim : cfg->axis;
  if (axis < 0 || axis >= inputs[0].ndim)
    return;                     /* the op reports the bad axis */
  int64_t channels = inputs[0].dims[axis];
  for (int i = 0; i < 4; i++)
    hy_parameter_complete_shape (hy_block_param (self, i), 1, &channels);
}

hy_block *
hy_batch_norm_new_full (int axis, double epsilon, gboolean center,
    gboolean scale)
{
  hy_block *b = hy_block_new_full ("batchnorm", batch_norm_forward,
      batch_norm_infer, TRUE);
  batch_norm_cfg *cfg = g_new0 (batch_norm_cfg, 1);
  cfg->axis = axis;
  cfg->epsilon = epsilon;
  cfg->scale = scale;
  hy_block_set_user_data (b, cfg, g_free);
  /* Gluon keeps gamma and beta when they are switched off (frozen at 1
   * and 0), so the parameter set never depends on the options. */
  (void) center;
  hy_block_add_param (b, "gamma", HY_DIMS (0), hy_init_ones ());
  hy_block_add_param (b, "beta", HY_DIMS (0), hy_init_zeros ());
  hy_block_add_param (b, "running_mean", HY_DIMS (0), hy_init_zeros ());
  hy_block_add_param (b, "running_var", HY_DIMS (0), hy_init_ones ());
  return b;
}

hy_block *
hy_batch_norm_new (void)
{
  return hy_batch_norm_new_full (1, 1e-5, TRUE, TRUE);
}

/* ---- Activation, Flatten, Dropout --------------------------------------- */

static hy_value *
activation_forward (hy_block *self, hy_F *F, hy_value *const *inputs, int n,
    hy_value *const *params)
{
  return hy_F_op (F, "Activation", inputs, 1, "act_type",
      (const char *) hy_block_get_user_data (self), "name", "fwd", NULL);
}

hy_block *
hy_activation_new (const char *act_type)
{
  g_return_val_if_fail (act_type != NULL, NULL);
  /* Gluon names an activation block after its type: "relu0_". */
  hy_block *b = hy_block_new_full (act_type, activation_forward, NULL, TRUE);
  hy_block_set_user_data (b, g_strdup (act_type), g_free);
  return b;
}

static hy_value *
flatten_forward (hy_block *self, hy_F *F, hy_value *const *inputs, int n,
    hy_value *const *params)
{
  return hy_F_op (F, "Flatten", inputs, 1, NULL);
}

hy_block *
hy_flatten_new (void)
{
  return hy_block_new_full ("flatten", flatten_forward, NULL, TRUE);
}

static hy_value *
dropout_forward (hy_block *self, hy_F *F, hy_value *const *inputs, int n,
    hy_value *const *params)
{
  const double *rate = hy_block_get_user_data (self);
  if (*rate <= 0)
    return hy_F_identity (F, inputs[0]);
  char p[ATTR_LEN];
  hy_F_format_double (*rate, p, sizeof p);
  return hy_F_op (F, "Dropout", inputs, 1, "axes", "()", "cudnn_off",
      "False", "p", p, "name", "fwd", NULL);
}

hy_block *
hy_dropout_new (double rate)
{
  g_return_val_if_fail (rate >= 0.0 && rate < 1.0, NULL);
  hy_block *b = hy_block_new_full ("dropout", dropout_forward, NULL, TRUE);
  double *cfg = g_new (double, 1);
  *cfg = rate;
  hy_block_set_user_data (b, cfg, g_free);
  return b;
}

/* ---- Sequential containers ---------------------------------------------- */

/* Each child gets the previous one's output; a group becomes the next
 * child's inputs, as Gluon passes a tuple on as *args. */
static hy_value *
sequential_forward (hy_block *self, hy_F *F, hy_value *const *inputs, int n,
    hy_value *const *params)
{
  if (hy_block_n_children (self) == 0)
    return n == 1 ? inputs[0] : hy_F_group (F, inputs, n);
  hy_value *x = hy_F_call_n (F, hy_block_nth_child (self, 0), inputs, n);
  for (int i = 1; x && i < hy_block_n_children (self); i++) {
    int m = hy_value_n_members (x);
    hy_value **args = g_newa (hy_value *, m);
    for (int k = 0; k < m; k++)
      args[k] = hy_value_member (x, k);
    x = hy_F_call_n (F, hy_block_nth_child (self, i), args, m);
  }
  return x;
}

hy_block *
hy_hybrid_sequential_new (void)
{
  return hy_block_new_full ("hybridsequential", sequential_forward, NULL,
      TRUE);
}

hy_block *
hy_sequential_new (void)
{
  return hy_block_new_full ("sequential", sequential_forward, NULL, FALSE);
}

hy_block *
hy_sequential_add (hy_block *sequential, hy_block *child)
{
  char name[16];
  snprintf (name, sizeof name, "%d", hy_block_n_children (sequential));
  return hy_block_register_child (sequential, name, child);
}
