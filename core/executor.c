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
 */
#include <string.h>
#include <time.h>

#include "model-impl.h"
#include "cpu-kernel.h"
#include "plan.h"

/* How many input shapes keep a plan; the least recently used goes first.
 * Each plan holds an arena and its own optimised graph, so this bounds
 * memory for callers that feed ever-new shapes. */
#define HY_PLAN_CACHE_SIZE 8

typedef struct cached_plan {
  hy_plan *plan;
  hy_shape *input_shapes;       /* the shapes it was built for */
} cached_plan;

struct hy_executor {
  hy_model *model;
  hy_device device;
  hy_mode mode;
  hy_cpu_ctx cpu;
  hy_cpu_kernel_fn *kernels;    /* per node; NULL for variables */
  hy_tensor ***values;          /* imperative: per node, per output */
  cached_plan plans[HY_PLAN_CACHE_SIZE];  /* hybrid: most recent first */
  int n_plans;
  const hy_plan *last_run;      /* hybrid: the plan the outputs are in */
  const hy_tensor **in_buf;     /* scratch for kernel argument lists */
  hy_tensor **out_buf;
  guint max_args;
  hy_node_hook hook;
  void *hook_data;
};

static void
release_values (hy_executor *exec)
{
  hy_graph *g = exec->model->graph;
  if (!exec->values)
    return;
  for (guint i = 0; i < hy_graph_n_nodes (g); i++) {
    hy_node *n = hy_graph_node (g, i);
    if (!exec->values[i])
      continue;
    if (n->op)
      for (guint k = 0; k < n->n_outputs; k++)
        hy_tensor_free (exec->values[i][k]);
    g_free (exec->values[i]);
    exec->values[i] = NULL;
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
    for (int k = 0; k < hy_model_n_inputs (m) && same; k++)
      same = hy_shape_equal (&exec->plans[i].input_shapes[k],
          &m->input_shapes[k]);
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
    entry.plan = hy_plan_new (exec->model, error);
    if (!entry.plan)
      return NULL;
    int n = hy_model_n_inputs (exec->model);
    entry.input_shapes = g_new0 (hy_shape, MAX (n, 1));
    if (n > 0)              /* a model of constants (_arange) has none */
      memcpy (entry.input_shapes, exec->model->input_shapes,
          (size_t) n * sizeof (hy_shape));
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
hy_executor_new (hy_model *model, hy_device device, hy_mode mode,
    GError **error)
{
  if (device.kind != HY_DEVICE_CPU) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "device cuda:%d: this build has no CUDA backend", device.index);
    return NULL;
  }
  hy_graph *g = model->graph;
  guint n = hy_graph_n_nodes (g);
  hy_executor *exec = g_new0 (hy_executor, 1);
  exec->model = model;
  exec->device = device;
  exec->mode = mode;
  exec->kernels = g_new0 (hy_cpu_kernel_fn, n);
  exec->values = g_new0 (hy_tensor **, n);
  for (guint i = 0; i < n; i++) {
    hy_node *node = hy_graph_node (g, i);
    if (!node->op)
      continue;
    exec->kernels[i] = hy_cpu_kernel_for (node->op->id);
    if (!exec->kernels[i]) {
      g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
          "node '%s' (op %s): the CPU backend has no kernel for this op",
          node->name, node->op->name);
      hy_executor_free (exec);
      return NULL;
    }
    exec->max_args = MAX (exec->max_args, MAX (node->n_inputs,
            node->n_outputs));
  }
  exec->in_buf = g_new0 (const hy_tensor *, exec->max_args + 1);
  exec->out_buf = g_new0 (hy_tensor *, exec->max_args + 1);
  /* The kernels' threads start here, once, never per forward
   * (HYBRIDINFER_THREADS overrides the CPU count). */
  hy_cpu_ctx_set_threads (&exec->cpu, 0);
  return exec;
}

void
hy_executor_free (hy_executor *exec)
{
  if (!exec)
    return;
  release_values (exec);
  release_plans (exec);
  g_free (exec->values);
  g_free (exec->kernels);
  g_free (exec->in_buf);
  g_free (exec->out_buf);
  hy_cpu_ctx_clear (&exec->cpu);
  g_free (exec);
}

hy_mode
hy_executor_mode (const hy_executor *exec)
{
  return exec->mode;
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
  hy_model *m = exec->model;
  if (n_inputs != hy_model_n_inputs (m)) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "the model takes %d input(s), %d given", hy_model_n_inputs (m),
        n_inputs);
    return FALSE;
  }
  for (int i = 0; i < n_inputs; i++) {
    if (!hy_model_set_input_shape (m, hy_model_input_name (m, i),
            &inputs[i]->shape, error))
      return FALSE;
  }
  return hy_model_infer_shapes (m, error);
}

/* Gives every op node fresh output tensors sized by the inferred shapes. */
static void
allocate_outputs (hy_executor *exec)
{
  hy_graph *g = exec->model->graph;
  for (guint i = 0; i < hy_graph_n_nodes (g); i++) {
    hy_node *node = hy_graph_node (g, i);
    if (!node->op)
      continue;
    exec->values[i] = g_new0 (hy_tensor *, node->n_outputs);
    for (guint k = 0; k < node->n_outputs; k++)
      exec->values[i][k] = hy_tensor_new (&node->shapes[k]);
  }
}

static const hy_tensor *
value_of (hy_executor *exec, const hy_entry *e,
    const hy_tensor *const *inputs)
{
  hy_node *src = hy_graph_node (exec->model->graph, e->node);
  if (src->op)
    return exec->values[e->node][e->index];
  if (src->value)
    return src->value;
  if (src->var_kind == HY_VAR_INPUT) {
    for (int i = 0; i < hy_model_n_inputs (exec->model); i++)
      if (g_array_index (exec->model->inputs, guint, i) == e->node)
        return inputs[i];
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
  hy_node_event ev = {
    .index = (int) i,
    .node = &desc,
    .outputs = (const hy_tensor *const *) exec->values[i],
    .n_outputs = desc.n_outputs,
    .elapsed_us = elapsed_us,
  };
  exec->hook (exec->model, &ev, exec->hook_data);
}

gboolean
hy_executor_forward (hy_executor *exec, const hy_tensor *const *inputs,
    int n_inputs, GError **error)
{
  hy_graph *g = exec->model->graph;
  if (!bind_inputs (exec, inputs, n_inputs, error))
    return FALSE;

  if (exec->mode == HY_MODE_HYBRID) {
    hy_plan *plan = use_plan (exec, error);
    if (!plan)
      return FALSE;
    hy_plan_run (plan, &exec->cpu, inputs, n_inputs);
    exec->last_run = plan;
    return TRUE;
  }

  release_values (exec);
  allocate_outputs (exec);
  gboolean hooked = exec->hook != NULL;
  for (guint i = 0; i < hy_graph_n_nodes (g); i++) {
    hy_node *node = hy_graph_node (g, i);
    if (!node->op)
      continue;
    for (guint k = 0; k < node->n_inputs; k++)
      exec->in_buf[k] = value_of (exec, &node->inputs[k], inputs);
    for (guint k = 0; k < node->n_outputs; k++)
      exec->out_buf[k] = exec->values[i][k];
    double t0 = hooked ? now_us () : 0;
    exec->kernels[i] (&exec->cpu, node->params, exec->in_buf,
        (int) node->n_inputs, exec->out_buf, (int) node->n_outputs);
    if (hooked)
      call_hook (exec, i, now_us () - t0);
  }
  return TRUE;
}

void
hy_executor_set_node_hook (hy_executor *exec, hy_node_hook hook,
    void *user_data)
{
  exec->hook = hook;
  exec->hook_data = user_data;
}

gboolean
hy_executor_prepare (hy_executor *exec, GError **error)
{
  if (!hy_model_infer_shapes (exec->model, error))
    return FALSE;
  if (exec->mode != HY_MODE_HYBRID)
    return TRUE;                /* imperative allocates per forward */
  return use_plan (exec, error) != NULL;
}

gboolean
hy_executor_memory (const hy_executor *exec, hy_memory_stats *out)
{
  int i = exec->mode == HY_MODE_HYBRID && exec->model->shapes_valid
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
  hy_graph *g = exec->model->graph;
  if (i < 0 || i >= (int) g->n_heads)
    return NULL;
  if (exec->mode == HY_MODE_HYBRID)
    return exec->last_run ? hy_plan_output (exec->last_run, i) : NULL;
  const hy_entry *e = &g->heads[i];
  hy_node *src = hy_graph_node (g, e->node);
  if (!src->op)
    return src->value;          /* a head that is a variable: rare */
  return exec->values[e->node] ? exec->values[e->node][e->index] : NULL;
}
