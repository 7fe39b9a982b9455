/*
 * executor.c — runs a model's graph on a backend.
 *
 * Imperative mode is Gluon before hybridize(): every node runs in order and
 * every output is freshly allocated for that forward, so each layer's value
 * can be looked at on its own.
 *
 * Hybrid mode is hybridize(static_alloc=True, static_shape=True): the first
 * forward with an input shape builds a compiled plan (plan.h: optimised
 * graph, one arena), and every later forward with that shape runs it
 * without allocating.  Plans are cached per input shape, so alternating
 * between a few shapes re-plans each only once.
 *
 * Both run on a backend (backend.h).  On a device, imperative mode keeps
 * the model's weights uploaded for the executor's life, uploads the
 * inputs and allocates every output on the device per forward, and
 * copies back to the host what is looked at: the graph outputs, and each
 * node's outputs when a node hook (a dump) is set.
 */
#include <string.h>
#include <time.h>

#include "core/model-impl.h"
#include "core/backend.h"
#include "core/plan.h"
#include "core/passes/graph-edit.h"

/* How many input shapes keep a plan; the least recently used goes first.
 * Each plan holds an arena and its own optimised graph, so this bounds
 * memory for callers that feed ever-new shapes. */
#define HY_PLAN_CACHE_SIZE 8

typedef struct cached_plan {
  hy_plan *plan;
  hy_shape *input_shapes;       /* the shapes it was built for */
  guint64 serial;               /* which plan this is: never reused, unlike
                                 * an address after a free */
} cached_plan;

struct hy_executor {
  const hy_model *model;        /* shared, read-only */
  hy_shapes *shapes;            /* ours: input shapes, node shapes */
  hy_device device;
  hy_mode mode;
  hy_backend *backend;
  gboolean on_host;             /* the backend's memory is host memory */
  /* Per node: whether a graph output depends on it.  Imperative mode runs
   * only those, as MXNet (whose graph holds only what its outputs reach)
   * and hybrid mode (whose plan prunes the rest) do: a node whose kernel
   * can fail on its values (gather_nd) then fails the forward in both
   * modes or in neither. */
  gboolean *live;
  hy_tensor ***values;          /* imperative: per node, per output */
  /* Imperative mode on a device: */
  hy_tensor ***host_values;     /*   host copies of what is looked at */
  hy_tensor **device_vars;      /*   per variable node, its uploaded value */
  hy_tensor **device_inputs;    /*   per model input, this forward's copy */
  hy_tensor **input_heads;      /* imperative: per graph output that is a
                                 * data input, this forward's copy of it */
  cached_plan plans[HY_PLAN_CACHE_SIZE];  /* hybrid: most recent first */
  int n_plans;
  guint64 plans_made;
  const hy_plan *last_run;      /* hybrid: the plan the outputs are in */
  const hy_tensor **in_buf;     /* scratch for kernel argument lists */
  hy_tensor **out_buf;
  guint max_args;
  hy_node_hook hook;
  void *hook_data;
};

/* A tensor in the backend's memory (zeroed on the host); `what` names it
 * when the memory cannot be had. */
static hy_tensor *
backend_tensor_new (hy_executor *exec, const hy_shape *shape,
    const char *what, GError **error)
{
  hy_backend *be = exec->backend;
  if (exec->on_host) {
    be->stats.allocations++;    /* counted as the backend's would be */
    return hy_tensor_try_new (shape, what, error);
  }
  float *data = be->iface->alloc (be, MAX (hy_shape_numel (shape), 1)
      * sizeof (float), error);
  return data ? hy_tensor_new_view (shape, data) : NULL;
}

static void
backend_tensor_free (hy_executor *exec, hy_tensor *t)
{
  if (t && !exec->on_host)
    exec->backend->iface->dealloc (exec->backend, t->data);
  hy_tensor_free (t);
}

/* Frees a per-node table of tensor lists, in the backend's memory when
 * `backend`, else host tensors. */
static void
free_node_tensors (hy_executor *exec, hy_tensor ***table, gboolean backend)
{
  hy_graph *g = hy_shapes_graph (exec->shapes);
  for (guint i = 0; table && i < hy_graph_n_nodes (g); i++) {
    hy_node *n = hy_graph_node (g, i);
    if (!table[i])
      continue;
    for (guint k = 0; k < n->n_outputs; k++) {
      if (backend)
        backend_tensor_free (exec, table[i][k]);
      else
        hy_tensor_free (table[i][k]);
    }
    g_free (table[i]);
    table[i] = NULL;
  }
}

static void
release_values (hy_executor *exec)
{
  free_node_tensors (exec, exec->values, TRUE);
  free_node_tensors (exec, exec->host_values, FALSE);
  for (guint h = 0; exec->input_heads
      && h < hy_shapes_graph (exec->shapes)->n_heads; h++)
    g_clear_pointer (&exec->input_heads[h], hy_tensor_free);
  for (int i = 0; exec->device_inputs && i < hy_model_n_inputs (exec->model);
      i++) {
    backend_tensor_free (exec, exec->device_inputs[i]);
    exec->device_inputs[i] = NULL;
  }
}

static void
release_plans (hy_executor *exec)
{
  for (int i = 0; i < exec->n_plans; i++) {
    hy_plan_free (exec->plans[i].plan);
    g_free (exec->plans[i].input_shapes);
  }
  exec->n_plans = 0;
  exec->last_run = NULL;
}

/* The cached plan for the model's current input shapes, or -1. */
static int
find_plan (const hy_executor *exec)
{
  const hy_model *m = exec->model;
  for (int i = 0; i < exec->n_plans; i++) {
    gboolean same = TRUE;
    for (int k = 0; k < hy_model_n_inputs (m) && same; k++) {
      hy_shape now = hy_shapes_input (exec->shapes, k);
      same = hy_shape_equal (&exec->plans[i].input_shapes[k], &now);
    }
    if (same)
      return i;
  }
  return -1;
}

/* The plan for the current input shapes, built on a miss, and moved to
 * the front of the cache.  A hit only moves a few structs. */
static hy_plan *
use_plan (hy_executor *exec, GError **error)
{
  int hit = find_plan (exec);
  cached_plan entry;
  if (hit >= 0) {
    entry = exec->plans[hit];
  } else {
    entry.plan = hy_plan_new (exec->shapes, exec->backend, error);
    if (!entry.plan)
      return NULL;
    entry.serial = ++exec->plans_made;
    int n = hy_model_n_inputs (exec->model);
    /* A model of constants (_arange) has no inputs. */
    entry.input_shapes = g_new0 (hy_shape, MAX (n, 1));
    for (int k = 0; k < n; k++)
      entry.input_shapes[k] = hy_shapes_input (exec->shapes, k);
    if (exec->n_plans == HY_PLAN_CACHE_SIZE) {
      cached_plan *old = &exec->plans[--exec->n_plans];
      if (exec->last_run == old->plan)
        exec->last_run = NULL;
      hy_plan_free (old->plan);
      g_free (old->input_shapes);
    }
    hit = exec->n_plans++;
  }
  memmove (&exec->plans[1], &exec->plans[0], (size_t) hit * sizeof entry);
  exec->plans[0] = entry;
  return entry.plan;
}

hy_executor *
hy_executor_new_with_options (const hy_model *model,
    const hy_executor_options *options, GError **error)
{
  const hy_executor_options defaults = { 0 };
  const hy_executor_options *o = options ? options : &defaults;
  /* The backend's set-up (threads, a device context) happens here, once,
   * never per forward. */
  hy_backend *backend = hy_backend_new (o->device, o->threads, error);
  if (!backend)
    return NULL;
  hy_executor *exec = hy_executor_new_on (model, backend, o->mode, error);
  if (exec && o->precision != HY_PRECISION_FP32
      && !hy_executor_set_precision (exec, o->precision, error)) {
    hy_executor_free (exec);
    return NULL;
  }
  return exec;
}

hy_executor *
hy_executor_new (const hy_model *model, hy_device device, hy_mode mode,
    GError **error)
{
  hy_executor_options o = { .device = device, .mode = mode };
  return hy_executor_new_with_options (model, &o, error);
}

hy_executor *
hy_executor_new_on (const hy_model *model, hy_backend *backend,
    hy_mode mode, GError **error)
{
  if (model->weightless) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "%s was loaded without its weights (graph only): it can be "
        "inspected, not run", model->symbol_path);
    return NULL;
  }
  hy_device device = backend->device;
  hy_graph *g = model->graph;
  guint n = hy_graph_n_nodes (g);
  hy_executor *exec = g_new0 (hy_executor, 1);
  exec->model = model;
  exec->shapes = hy_shapes_new (model);
  exec->device = device;
  exec->mode = mode;
  exec->backend = backend;
  exec->on_host = backend->iface->host_memory;
  exec->live = hy_graph_live_mask (g);
  exec->values = g_new0 (hy_tensor **, n);
  if (!exec->on_host) {
    exec->host_values = g_new0 (hy_tensor **, n);
    exec->device_vars = g_new0 (hy_tensor *, n);
    exec->device_inputs = g_new0 (hy_tensor *,
        MAX (hy_model_n_inputs (model), 1));
  }
  for (guint i = 0; i < n; i++) {
    hy_node *node = hy_graph_node (g, i);
    if (!node->op)
      continue;
    /* Every op node needs a kernel: refuse the model now rather than at
     * its first forward. */
    if (!backend->iface->kernel_for (node->op->id)) {
      g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
          "node '%s' (op %s): the %s backend has no kernel for this op",
          node->name, node->op->name, backend->iface->name);
      hy_executor_free (exec);
      return NULL;
    }
    exec->max_args = MAX (exec->max_args, MAX (node->n_inputs,
            node->n_outputs));
  }
  exec->in_buf = g_new0 (const hy_tensor *, exec->max_args + 1);
  exec->out_buf = g_new0 (hy_tensor *, exec->max_args + 1);
  return exec;
}

void
hy_executor_free (hy_executor *exec)
{
  if (!exec)
    return;
  release_values (exec);
  release_plans (exec);
  for (guint i = 0; exec->device_vars
      && i < hy_graph_n_nodes (hy_shapes_graph (exec->shapes)); i++)
    backend_tensor_free (exec, exec->device_vars[i]);
  hy_shapes_free (exec->shapes);
  g_free (exec->device_vars);
  g_free (exec->device_inputs);
  g_free (exec->input_heads);
  g_free (exec->host_values);
  g_free (exec->values);
  g_free (exec->live);
  g_free (exec->in_buf);
  g_free (exec->out_buf);
  hy_backend_free (exec->backend);
  g_free (exec);
}

hy_mode
hy_executor_mode (const hy_executor *exec)
{
  return exec->mode;
}

gboolean
hy_executor_set_precision (hy_executor *exec, hy_precision precision,
    GError **error)
{
  hy_backend *be = exec->backend;
  if (precision == HY_PRECISION_BF16 && be->device.kind != HY_DEVICE_CPU) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "precision bf16 runs on the CPU only; the %s backend computes in "
        "fp32 or fp16", be->iface->name);
    return FALSE;
  }
  if (!be->iface->set_precision) {
    if (precision == HY_PRECISION_FP32)
      return TRUE;
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "precision fp16 needs a CUDA device; the %s backend computes in "
        "fp32", be->iface->name);
    return FALSE;
  }
  if (!be->iface->set_precision (be, precision, error))
    return FALSE;
  /* Plans prepared their calls for the old precision. */
  release_values (exec);
  release_plans (exec);
  return TRUE;
}

gboolean
hy_executor_set_mode (hy_executor *exec, hy_mode mode, GError **error)
{
  /* The mode left behind keeps no memory. */
  if (mode != exec->mode) {
    release_values (exec);
    release_plans (exec);
    exec->mode = mode;
  }
  return TRUE;
}

/* Sets the input shapes from the given tensors; re-infers only on change. */
static gboolean
bind_inputs (hy_executor *exec, const hy_tensor *const *inputs, int n_inputs,
    GError **error)
{
  const hy_model *m = exec->model;
  if (n_inputs != hy_model_n_inputs (m)) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "the model takes %d input(s), %d given", hy_model_n_inputs (m),
        n_inputs);
    return FALSE;
  }
  for (int i = 0; i < n_inputs; i++) {
    if (!hy_shapes_set_input (exec->shapes, hy_model_input_name (m, i),
            &inputs[i]->shape, error))
      return FALSE;
  }
  return hy_shapes_infer (exec->shapes, error);
}

/* Gives every op node fresh output tensors sized by the inferred shapes,
 * in the backend's memory. */
static gboolean
allocate_outputs (hy_executor *exec, GError **error)
{
  hy_graph *g = hy_shapes_graph (exec->shapes);
  for (guint i = 0; i < hy_graph_n_nodes (g); i++) {
    hy_node *node = hy_graph_node (g, i);
    if (!node->op || !exec->live[i])
      continue;
    exec->values[i] = g_new0 (hy_tensor *, node->n_outputs);
    for (guint k = 0; k < node->n_outputs; k++) {
      g_autofree char *what = g_strdup_printf ("node '%s' (op %s) output %u "
          "(imperative mode)", node->name, node->op->name, k);
      if (!(exec->values[i][k] = backend_tensor_new (exec, &node->shapes[k],
                  what, error)))
        return FALSE;
    }
  }
  return TRUE;
}

/* Device imperative mode: the weights (once per executor) and this
 * forward's inputs, uploaded. */
static gboolean
upload_variables (hy_executor *exec, const hy_tensor *const *inputs,
    GError **error)
{
  hy_backend *be = exec->backend;
  hy_graph *g = hy_shapes_graph (exec->shapes);
  for (guint i = 0; i < hy_graph_n_nodes (g); i++) {
    hy_node *node = hy_graph_node (g, i);
    if (node->op || !node->value || exec->device_vars[i])
      continue;
    hy_tensor *t = backend_tensor_new (exec, &node->value->shape,
        node->name, error);
    if (!t || !be->iface->upload (be, t->data, node->value->data,
            hy_tensor_nbytes (t), error)) {
      backend_tensor_free (exec, t);
      return FALSE;
    }
    exec->device_vars[i] = t;
  }
  for (int i = 0; i < hy_model_n_inputs (exec->model); i++) {
    hy_tensor *t = backend_tensor_new (exec, &inputs[i]->shape,
        hy_model_input_name (exec->model, i), error);
    exec->device_inputs[i] = t;
    if (!t || !be->iface->upload (be, t->data, inputs[i]->data,
            hy_tensor_nbytes (t), error))
      return FALSE;
  }
  return TRUE;
}

/* Device imperative mode: host copies of node i's outputs. */
static gboolean
download_node (hy_executor *exec, guint i, GError **error)
{
  hy_backend *be = exec->backend;
  hy_node *node = hy_graph_node (hy_shapes_graph (exec->shapes), i);
  if (!exec->host_values[i])
    exec->host_values[i] = g_new0 (hy_tensor *, node->n_outputs);
  for (guint k = 0; k < node->n_outputs; k++) {
    hy_tensor *host = exec->host_values[i][k];
    if (!host) {
      g_autofree char *what = g_strdup_printf ("the host copy of node '%s' "
          "output %u", node->name, k);
      host = exec->host_values[i][k] = hy_tensor_try_new (&node->shapes[k],
          what, error);
      if (!host)
        return FALSE;
    }
    if (!be->iface->download (be, host->data, exec->values[i][k]->data,
            hy_tensor_nbytes (host), error))
      return FALSE;
  }
  return TRUE;
}

static const hy_tensor *
value_of (hy_executor *exec, const hy_entry *e,
    const hy_tensor *const *inputs)
{
  hy_node *src = hy_graph_node (hy_shapes_graph (exec->shapes), e->node);
  if (src->op)
    return exec->values[e->node][e->index];
  if (src->value)
    return exec->on_host ? src->value : exec->device_vars[e->node];
  if (src->var_kind == HY_VAR_INPUT) {
    for (int i = 0; i < hy_model_n_inputs (exec->model); i++)
      if (g_array_index (exec->model->inputs, guint, i) == e->node)
        return exec->on_host ? inputs[i] : exec->device_inputs[i];
  }
  return NULL;                  /* an unused input (SoftmaxOutput label) */
}

static double
now_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static void
call_hook (hy_executor *exec, guint i, double elapsed_us)
{
  hy_node_desc desc;
  hy_model_node (exec->model, (int) i, &desc);
  desc.shapes = hy_shapes_node (exec->shapes, (int) i);
  hy_tensor **outputs = exec->on_host ? exec->values[i]
      : exec->host_values[i];
  hy_node_event ev = {
    .index = (int) i,
    .node = &desc,
    .outputs = (const hy_tensor *const *) outputs,
    .n_outputs = desc.n_outputs,
    .elapsed_us = elapsed_us,
  };
  exec->hook (exec->model, &ev, exec->hook_data);
}

/* Node i as one call: prepared, run, released (imperative mode keeps
 * nothing from one forward to the next).  On a device the time includes
 * waiting for the node to finish, so a dump's timings are per node. */
static gboolean
run_node (hy_executor *exec, guint i, const hy_tensor *const *inputs,
    GError **error)
{
  hy_backend *be = exec->backend;
  hy_node *node = hy_graph_node (hy_shapes_graph (exec->shapes), i);
  for (guint k = 0; k < node->n_inputs; k++)
    exec->in_buf[k] = value_of (exec, &node->inputs[k], inputs);
  for (guint k = 0; k < node->n_outputs; k++)
    exec->out_buf[k] = exec->values[i][k];
  if (!hy_backend_run_op (be, node->op->id, node->params, exec->in_buf,
          (int) node->n_inputs, exec->out_buf, (int) node->n_outputs,
          error)) {
    g_prefix_error (error, "node '%s' (op %s): ", node->name,
        node->op->name);
    return FALSE;
  }
  return TRUE;
}

/* A graph output that is a data input itself (a pass-through head) is
 * copied: outputs belong to the executor and outlive the caller's inputs,
 * as a plan's own output slot does in hybrid mode. */
static gboolean
copy_input_heads (hy_executor *exec, const hy_tensor *const *inputs,
    GError **error)
{
  hy_graph *g = hy_shapes_graph (exec->shapes);
  for (guint h = 0; h < g->n_heads; h++) {
    guint node = g->heads[h].node;
    if (hy_graph_node (g, node)->var_kind != HY_VAR_INPUT)
      continue;
    int k = 0;
    while (g_array_index (exec->model->inputs, guint, k) != node)
      k++;
    if (!exec->input_heads)
      exec->input_heads = g_new0 (hy_tensor *, g->n_heads);
    g_autofree char *what = g_strdup_printf ("output %u (input '%s')", h,
        hy_model_input_name (exec->model, k));
    hy_tensor *t = hy_tensor_try_new (&inputs[k]->shape, what, error);
    if (!t)
      return FALSE;
    memcpy (t->data, inputs[k]->data, hy_tensor_nbytes (t));
    exec->input_heads[h] = t;
  }
  return TRUE;
}

gboolean
hy_executor_forward (hy_executor *exec, const hy_tensor *const *inputs,
    int n_inputs, GError **error)
{
  hy_graph *g = hy_shapes_graph (exec->shapes);
  if (!bind_inputs (exec, inputs, n_inputs, error))
    return FALSE;

  if (exec->mode == HY_MODE_HYBRID) {
    exec->last_run = NULL;
    hy_plan *plan = use_plan (exec, error);
    if (!plan || !hy_plan_run (plan, inputs, n_inputs, error))
      return FALSE;
    exec->last_run = plan;
    return TRUE;
  }

  release_values (exec);
  if (!allocate_outputs (exec, error)
      || (!exec->on_host && !upload_variables (exec, inputs, error)))
    return FALSE;
  gboolean hooked = exec->hook != NULL;
  for (guint i = 0; i < hy_graph_n_nodes (g); i++) {
    hy_node *node = hy_graph_node (g, i);
    if (!node->op || !exec->live[i])
      continue;
    double t0 = hooked ? now_us () : 0;
    if (!run_node (exec, i, inputs, error))
      return FALSE;
    if (hooked && !exec->on_host && !download_node (exec, i, error))
      return FALSE;
    if (hooked)
      call_hook (exec, i, now_us () - t0);
  }
  /* The graph outputs, on the host. */
  for (guint h = 0; !exec->on_host && h < g->n_heads; h++) {
    guint i = g->heads[h].node;
    if (hy_graph_node (g, i)->op && !download_node (exec, i, error))
      return FALSE;
  }
  return copy_input_heads (exec, inputs, error);
}

gboolean
hy_executor_input_quantization (hy_executor *exec, int input,
    hy_input_quantization *out, GError **error)
{
  if (!exec->on_host || exec->mode != HY_MODE_HYBRID)
    return FALSE;
  hy_plan *plan;
  if (!hy_shapes_infer (exec->shapes, error)
      || !(plan = use_plan (exec, error)))
    return FALSE;
  return hy_plan_input_quantization (plan, input, out);
}

gboolean
hy_executor_forward_quantized (hy_executor *exec,
    const hy_tensor *const *inputs, int n_inputs, GError **error)
{
  exec->last_run = NULL;
  if (!exec->on_host || exec->mode != HY_MODE_HYBRID) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED, "an input is "
        "quantized by the caller only in hybrid mode on the CPU");
    return FALSE;
  }
  hy_plan *plan;
  if (!hy_shapes_infer (exec->shapes, error)
      || !(plan = use_plan (exec, error))
      || !hy_plan_run_quantized (plan, inputs, n_inputs, error))
    return FALSE;
  exec->last_run = plan;
  return TRUE;
}

void
hy_executor_device_stats (const hy_executor *exec, hy_device_stats *out)
{
  *out = exec->backend->stats;
}

hy_backend *
hy_executor_backend (hy_executor *exec)
{
  return exec->backend;
}

hy_tensor *
hy_executor_device_input (hy_executor *exec, int i, GError **error)
{
  if (exec->on_host || exec->mode != HY_MODE_HYBRID) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "inputs are staged on the device only in hybrid mode on a device");
    return NULL;
  }
  hy_plan *plan;
  if (!hy_shapes_infer (exec->shapes, error)
      || !(plan = use_plan (exec, error)))
    return NULL;
  hy_tensor *t = hy_plan_device_input (plan, i);
  if (!t)
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "model input %d is not read by the plan", i);
  return t;
}

gboolean
hy_executor_forward_staged (hy_executor *exec, GError **error)
{
  exec->last_run = NULL;
  if (exec->on_host || exec->mode != HY_MODE_HYBRID) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "inputs are staged on the device only in hybrid mode on a device");
    return FALSE;
  }
  hy_plan *plan;
  if (!hy_shapes_infer (exec->shapes, error)
      || !(plan = use_plan (exec, error)))
    return FALSE;
  if (!hy_plan_run (plan, NULL, 0, error))
    return FALSE;
  exec->last_run = plan;
  return TRUE;
}

/* ---- frame stages (hybrid-frame.h) ---------------------------------------
 * The backend converts; the core finds the plan's device input once, when
 * the stage is made, and checks what a backend should not have to. */

struct hy_frame_stage {
  hy_executor *exec;
  guint64 plan_serial;          /* the plan whose input it writes */
  hy_tensor *input;             /* that plan's device input 0 */
  int batch;
  void *impl;                   /* the backend's */
};

/* The plan's input must be what the stage writes: (batch, C, H, W). */
static gboolean
stage_input_fits (const hy_tensor *input, const hy_frame_config *c,
    int batch, GError **error)
{
  const hy_shape *s = &input->shape;
  if (s->ndim == 4 && s->dims[0] == batch && s->dims[1] == c->dst_channels
      && s->dims[2] == c->dst_height && s->dims[3] == c->dst_width)
    return TRUE;
  char buf[HY_SHAPE_STRLEN];
  g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
      "the frame stage writes (%d, %d, %d, %d) but the planned input is %s",
      batch, c->dst_channels, c->dst_height, c->dst_width,
      hy_shape_format (s, buf, sizeof buf));
  return FALSE;
}

hy_frame_stage *
hy_executor_frame_stage_new (hy_executor *exec, const hy_frame_plan *plan,
    int batch, GError **error)
{
  hy_backend *be = exec->backend;
  if (!be->iface->frame_stage_new || exec->mode != HY_MODE_HYBRID) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "frames are staged only in hybrid mode on a backend that converts "
        "them on its device (here: the %s backend, %s mode)",
        be->iface->name, exec->mode == HY_MODE_HYBRID ? "hybrid"
        : "imperative");
    return NULL;
  }
  if (batch < 1) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "batch %d: a frame stage needs at least one slot", batch);
    return NULL;
  }
  /* Once per plan: loads write here without asking again. */
  hy_tensor *input = hy_executor_device_input (exec, 0, error);
  if (!input
      || !stage_input_fits (input, hy_frame_plan_config (plan), batch, error))
    return NULL;
  void *impl = be->iface->frame_stage_new (be, plan, input, batch, error);
  if (!impl)
    return NULL;
  hy_frame_stage *st = g_new0 (hy_frame_stage, 1);
  st->exec = exec;
  st->plan_serial = exec->plans[0].serial;      /* use_plan put it first */
  st->input = input;
  st->batch = batch;
  st->impl = impl;
  return st;
}

void
hy_frame_stage_free (hy_frame_stage *st)
{
  if (!st)
    return;
  hy_backend *be = st->exec->backend;
  be->iface->frame_stage_free (be, st->impl);
  g_free (st);
}

/* A slot in range, and the plan the stage was made for still the
 * executor's current one (a cheap guard: a new mode, precision or input
 * shape re-plans, and the stage's input would be another plan's). */
static gboolean
stage_usable (const hy_frame_stage *st, int slot, GError **error)
{
  const hy_executor *exec = st->exec;
  if (slot < 0 || slot >= st->batch) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "batch slot %d: the frame stage has %d", slot, st->batch);
    return FALSE;
  }
  if (exec->mode != HY_MODE_HYBRID || exec->n_plans == 0
      || exec->plans[0].serial != st->plan_serial) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "the executor re-planned since the frame stage was made (its "
        "mode, precision or input shape changed): make a new stage");
    return FALSE;
  }
  return TRUE;
}

gboolean
hy_frame_stage_load (hy_frame_stage *st, int slot,
    const uint8_t *const planes[3], const int strides[3], GError **error)
{
  hy_backend *be = st->exec->backend;
  return stage_usable (st, slot, error)
      && be->iface->frame_stage_load (be, st->impl, slot, planes, strides,
      error);
}

gboolean
hy_frame_stage_download (hy_frame_stage *st, int slot, float *dst,
    GError **error)
{
  hy_backend *be = st->exec->backend;
  const int64_t per_slot = hy_shape_numel (&st->input->shape) / st->batch;
  if (!stage_usable (st, slot, error))
    return FALSE;
  /* Waits for the stream, and so for the slot's conversion. */
  return be->iface->download (be, dst, st->input->data + slot * per_slot,
      (size_t) per_slot * sizeof (float), error);
}

void
hy_executor_set_node_hook (hy_executor *exec, hy_node_hook hook,
    void *user_data)
{
  exec->hook = hook;
  exec->hook_data = user_data;
}

gboolean
hy_executor_profile (hy_executor *exec, const hy_tensor *const *inputs,
    int n_inputs, int iterations, const hy_layer_profile **layers,
    int *n_layers, GError **error)
{
  if (exec->mode != HY_MODE_HYBRID) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "a per-layer profile is of the hybridized plan: the executor is in "
        "imperative mode (its node hook times each node instead)");
    return FALSE;
  }
  if (!bind_inputs (exec, inputs, n_inputs, error))
    return FALSE;
  exec->last_run = NULL;
  hy_plan *plan = use_plan (exec, error);
  if (!plan || !hy_plan_profile (plan, inputs, n_inputs, iterations, layers,
          n_layers, error))
    return FALSE;
  exec->last_run = plan;
  return TRUE;
}

gboolean
hy_executor_prepare (hy_executor *exec, GError **error)
{
  if (!hy_shapes_infer (exec->shapes, error))
    return FALSE;
  if (exec->mode != HY_MODE_HYBRID)
    return TRUE;                /* imperative allocates per forward */
  return use_plan (exec, error) != NULL;
}

gboolean
hy_executor_memory (const hy_executor *exec, hy_memory_stats *out)
{
  int i = exec->mode == HY_MODE_HYBRID && hy_shapes_inferred (exec->shapes)
      ? find_plan (exec) : -1;
  if (i < 0)
    return FALSE;
  hy_plan_memory (exec->plans[i].plan, out);
  return TRUE;
}

int
hy_executor_n_outputs (const hy_executor *exec)
{
  return hy_model_n_outputs (exec->model);
}

const hy_tensor *
hy_executor_output (const hy_executor *exec, int i)
{
  hy_graph *g = hy_shapes_graph (exec->shapes);
  if (i < 0 || i >= (int) g->n_heads)
    return NULL;
  if (exec->mode == HY_MODE_HYBRID)
    return exec->last_run ? hy_plan_output (exec->last_run, i) : NULL;
  const hy_entry *e = &g->heads[i];
  hy_node *src = hy_graph_node (g, e->node);
  if (!src->op)                 /* a head that is a variable: rare */
    return src->value ? src->value
        : exec->input_heads ? exec->input_heads[i] : NULL;
  hy_tensor ***values = exec->on_host ? exec->values : exec->host_values;
  return values[e->node] ? values[e->node][e->index] : NULL;
}

gboolean
hy_executor_set_input_shape (hy_executor *exec, const char *name,
    const hy_shape *shape, GError **error)
{
  return hy_shapes_set_input (exec->shapes, name, shape, error);
}

const hy_shapes *
hy_executor_shapes (const hy_executor *exec)
{
  return exec->shapes;
}

hy_shape
hy_executor_output_shape (hy_executor *exec, int i, GError **error)
{
  hy_shape none = { .ndim = -1 };
  if (!hy_shapes_infer (exec->shapes, error))
    return none;
  return hy_shapes_output (exec->shapes, i);
}
