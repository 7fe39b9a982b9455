/*
 * plan-split.c — hy_plan_new, hy_plan_run and hy_plan_profile: a plan
 * for the whole batch (plan.c), or, on the CPU, where each image's outputs
 * depend on that image's inputs only, a batch run image by image.
 *
 * A plan for a batch runs each layer over every image before the next
 * layer: on a network of thin layers (MobileNet's inverted residuals) a
 * layer's output for 8 images is tens of megabytes, written to memory and
 * read back by the next layer.  Run image by image, the same layers'
 * outputs for one image stay in the caches between layers.  It costs
 * what the batch shared: each layer's weights are read once per image
 * instead of once per batch, and each kernel has an image's worth of work
 * to share among its threads, so it pays only on networks whose
 * activations outweigh their weights (the rule below).
 *
 * The per-image plan is an ordinary plan built for a batch of 1, its
 * arena a batch-1 arena; a forward points its inputs at each image of
 * the caller's batch in turn and copies its outputs into the batch's
 * output tensors (allocated once, with the plan).  Outputs are the same
 * sums as the batch plan's (every kernel sums an image's outputs
 * alone), though a kernel may pick another blocking for one image.
 *
 * Which plans: on a host-memory backend, batch > 1, every call an op
 * that works image by image (below), reading the batch's image b only
 * for its own image b (every input not a weight has the batch as its
 * first axis, as every output), and the per-image shapes inferable.
 * HYBRIDINFER_BATCH_SPLIT=0 never splits, =1 splits whatever the rule
 * says (tests, comparisons).
 */
#include <string.h>

#include "plan-impl.h"
#include "backend.h"

/* Ops whose output for image b reads their batched inputs' image b only,
 * whatever their attributes.  (Reshape, Flatten and the other views are
 * no calls: a view that mixes images shows as a call input whose first
 * axis is not the batch.) */
static gboolean
op_works_per_image (hy_op_id op)
{
  switch (op) {
    case HY_OP_CONVOLUTION:
    case HY_OP_DECONVOLUTION:
    case HY_OP_FULLY_CONNECTED:
    case HY_OP_POOLING:
    case HY_OP_BATCH_NORM:
    case HY_OP_ACTIVATION:
    case HY_OP_LEAKY_RELU:
    case HY_OP_RELU:
    case HY_OP_SIGMOID:
    case HY_OP_TANH:
    case HY_OP_CLIP:
    case HY_OP_HARD_SIGMOID:
    case HY_OP_PLUS_SCALAR:
    case HY_OP_MINUS_SCALAR:
    case HY_OP_RMINUS_SCALAR:
    case HY_OP_MUL_SCALAR:
    case HY_OP_DIV_SCALAR:
    case HY_OP_RDIV_SCALAR:
    case HY_OP_ELEMWISE_ADD:
    case HY_OP_ELEMWISE_SUB:
    case HY_OP_ELEMWISE_MUL:
    case HY_OP_ELEMWISE_DIV:
    case HY_OP_BROADCAST_ADD:
    case HY_OP_BROADCAST_SUB:
    case HY_OP_BROADCAST_MUL:
    case HY_OP_BROADCAST_DIV:
    case HY_OP_ADD_N:
    case HY_OP_COUNT:           /* an output copy */
      return TRUE;
    default:
      return FALSE;
  }
}

/* Whether every call of `plan` reads image b of its batched inputs for
 * image b of its outputs only. */
static gboolean
works_per_image (const hy_plan *plan, int64_t batch)
{
  hy_backend *be = plan->backend;
  for (int c = 0; c < plan->n_calls; c++) {
    const hy_call *call = &plan->calls[c];
    if (!op_works_per_image (call->op))
      return FALSE;
    /* oneDNN's convolutions are set up for the batch they were made for. */
    const char *kernel = be->iface->call_kernel_name
        ? be->iface->call_kernel_name (be, call) : NULL;
    if (kernel && !strcmp (kernel, "onednn"))
      return FALSE;
    for (int k = 0; k < call->n_out; k++)
      if (call->out[k]->shape.ndim < 1
          || call->out[k]->shape.dims[0] != batch)
        return FALSE;
    for (int k = 0; k < call->n_in; k++) {
      const hy_tensor *t = call->in[k];
      const gboolean weight = k < 32 && (call->const_inputs >> k & 1u);
      if (t && !weight && (t->shape.ndim < 1 || t->shape.dims[0] != batch))
        return FALSE;
    }
  }
  return TRUE;
}

/* Whether running image by image pays: where the batch's activations
 * (every value's bytes, as if none shared memory) outweigh the weights
 * the calls read several times over.  Measured at batch 8 on the
 * hybridinfer bench models (docs/PERFORMANCE.md, "Image by image"):
 * MobileNetV2, activations 15 times its weights, 1.42-1.47× faster;
 * MobileNetV3-Large, 7 times, 1.08×; ResNet-50, 3.2 times, 0.97-1.05×;
 * ResNet-18, 1.7 times, 0.87×. */
#define SPLIT_MIN_ACTIVATIONS_PER_WEIGHT 4

/* Nor where the batch's activations fit the caches anyway. */
#define SPLIT_MIN_ACTIVATION_BYTES (4 << 20)

static gboolean
split_pays (const hy_plan *plan)
{
  gint64 weights = 0;
  for (int c = 0; c < plan->n_calls; c++) {
    const hy_call *call = &plan->calls[c];
    for (int k = 0; k < call->n_in && k < 32; k++)
      if (call->in[k] && (call->const_inputs >> k & 1u))
        weights += (gint64) hy_tensor_nbytes (call->in[k]);
  }
  return plan->memory.naive_bytes >= SPLIT_MIN_ACTIVATION_BYTES
      && plan->memory.naive_bytes > SPLIT_MIN_ACTIVATIONS_PER_WEIGHT * weights;
}

/* Inputs beyond this many cannot be split (the structs live on the
 * stack: a forward allocates nothing). */
#define MAX_SPLIT_INPUTS 16

static int
split_wanted (void)
{
  const char *env = g_getenv ("HYBRIDINFER_BATCH_SPLIT");
  return env && !strcmp (env, "0") ? 0 : env && !strcmp (env, "1") ? 1 : 2;
}

/* The same plan run image by image where that pays: returns the plan
 * that does, having taken `whole`'s place (freed), or `whole` itself. */
static hy_plan *
split_batch (hy_plan *whole, const hy_shapes *shapes)
{
  const hy_model *model = hy_shapes_model (shapes);
  const int n_inputs = hy_model_n_inputs (model);
  const int wanted = split_wanted ();
  if (!wanted || !whole->backend->iface->host_memory || n_inputs < 1
      || n_inputs > MAX_SPLIT_INPUTS || whole->n_outputs < 1)
    return whole;
  const hy_shape first = hy_shapes_input (shapes, 0);
  const int64_t batch = first.ndim >= 1 ? first.dims[0] : 0;
  if (batch <= 1 || !works_per_image (whole, batch)
      || (wanted == 2 && !split_pays (whole)))
    return whole;
  for (int i = 0; i < n_inputs; i++) {
    const hy_shape s = hy_shapes_input (shapes, i);
    if (s.ndim < 1 || s.dims[0] != batch)
      return whole;
  }
  for (int h = 0; h < whole->n_outputs; h++)
    if (whole->outputs[h]->shape.ndim < 1
        || whole->outputs[h]->shape.dims[0] != batch)
      return whole;

  /* The same inputs, one image each.  A model whose shapes do not follow
   * (a Reshape to a fixed batch) keeps the batch plan. */
  hy_shapes *one = hy_shapes_new (model);
  gboolean ok = TRUE;
  for (int i = 0; i < n_inputs && ok; i++) {
    hy_shape s = hy_shapes_input (shapes, i);
    s.dims[0] = 1;
    ok = hy_shapes_set_input (one, hy_model_input_name (model, i), &s, NULL);
  }
  ok = ok && hy_shapes_infer (one, NULL);
  hy_plan *image = ok ? hy_plan_build (one, whole->backend, NULL) : NULL;
  hy_shapes_free (one);
  if (!image)
    return whole;
  for (int h = 0; h < image->n_outputs; h++) {
    hy_shape s = image->outputs[h]->shape;
    s.dims[0] = batch;
    if (!hy_shape_equal (&s, &whole->outputs[h]->shape)) {
      hy_plan_free (image);
      return whole;
    }
  }

  hy_plan *plan = g_new0 (hy_plan, 1);
  plan->backend = whole->backend;
  plan->per_image = image;
  plan->batch = batch;
  plan->pass_stats = image->pass_stats;
  plan->memory = image->memory;
  plan->memory.images_per_run = 1;
  plan->n_calls = image->n_calls;
  plan->n_outputs = whole->n_outputs;
  plan->batch_outputs = g_new0 (hy_tensor *, plan->n_outputs);
  plan->outputs = g_new0 (const hy_tensor *, plan->n_outputs + 1);
  for (int h = 0; h < plan->n_outputs; h++) {
    plan->batch_outputs[h] = hy_tensor_new (&whole->outputs[h]->shape);
    plan->outputs[h] = plan->batch_outputs[h];
  }
  hy_plan_free (whole);
  return plan;
}

/* split_batch splits no plan of more inputs: a caller's mistake. */
static gboolean
inputs_fit (int n_inputs, GError **error)
{
  if (n_inputs <= MAX_SPLIT_INPUTS)
    return TRUE;
  g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
      "%d inputs given to a plan of at most %d", n_inputs, MAX_SPLIT_INPUTS);
  return FALSE;
}

/* Image b of each input: structs of the caller's, one image each. */
static void
image_inputs (const hy_tensor *const *inputs, int n_inputs, int64_t b,
    int64_t batch, hy_tensor *slices, const hy_tensor **ptrs)
{
  for (int i = 0; i < n_inputs; i++) {
    const hy_tensor *t = inputs[i];
    slices[i] = *t;
    slices[i].owns_data = false;
    slices[i].shape.dims[0] = 1;
    slices[i].data = t->data + b * (hy_shape_numel (&t->shape) / batch);
    ptrs[i] = &slices[i];
  }
}

/* Image b of the per-image plan's outputs into the batch's. */
static void
gather_outputs (hy_plan *plan, int64_t b)
{
  for (int h = 0; h < plan->n_outputs; h++) {
    const hy_tensor *one = hy_plan_output (plan->per_image, h);
    const size_t bytes = hy_tensor_nbytes (one);
    memcpy ((char *) plan->batch_outputs[h]->data + b * bytes, one->data,
        bytes);
  }
}

static gboolean
split_run (hy_plan *plan, const hy_tensor *const *inputs, int n_inputs,
    GError **error)
{
  hy_tensor slices[MAX_SPLIT_INPUTS];
  const hy_tensor *ptrs[MAX_SPLIT_INPUTS];
  if (!inputs_fit (n_inputs, error))
    return FALSE;
  for (int64_t b = 0; b < plan->batch; b++) {
    image_inputs (inputs, n_inputs, b, plan->batch, slices, ptrs);
    if (!hy_plan_run_whole (plan->per_image, ptrs, n_inputs, error))
      return FALSE;
    gather_outputs (plan, b);
  }
  return TRUE;
}

static gboolean
split_profile (hy_plan *plan, const hy_tensor *const *inputs, int n_inputs,
    int iterations, const hy_layer_profile **layers, int *n_layers,
    GError **error)
{
  hy_tensor slices[MAX_SPLIT_INPUTS];
  const hy_tensor *ptrs[MAX_SPLIT_INPUTS];
  if (!inputs_fit (n_inputs, error))
    return FALSE;
  /* Each layer's time per forward: its time on every image, summed. */
  if (!plan->profile)
    plan->profile = g_new0 (hy_layer_profile, MAX (plan->n_calls, 1));
  for (int c = 0; c < plan->n_calls; c++)
    plan->profile[c].ms = plan->profile[c].cpu_ms = 0;
  for (int64_t b = 0; b < plan->batch; b++) {
    const hy_layer_profile *one;
    int n;
    image_inputs (inputs, n_inputs, b, plan->batch, slices, ptrs);
    if (!hy_plan_profile_whole (plan->per_image, ptrs, n_inputs, iterations,
            &one, &n, error))
      return FALSE;
    gather_outputs (plan, b);
    for (int c = 0; c < n && c < plan->n_calls; c++) {
      hy_layer_profile *l = &plan->profile[c];
      const double ms = l->ms, cpu_ms = l->cpu_ms;
      *l = one[c];
      l->ms = ms + one[c].ms;
      l->cpu_ms = cpu_ms + one[c].cpu_ms;
      l->flop = one[c].flop * plan->batch;
    }
  }
  *layers = plan->profile;
  *n_layers = plan->n_calls;
  return TRUE;
}

hy_plan *
hy_plan_new (const hy_shapes *shapes, hy_backend *backend, GError **error)
{
  hy_plan *plan = hy_plan_build (shapes, backend, error);
  return plan ? split_batch (plan, shapes) : NULL;
}

gboolean
hy_plan_run (hy_plan *plan, const hy_tensor *const *inputs, int n_inputs,
    GError **error)
{
  return plan->per_image ? split_run (plan, inputs, n_inputs, error)
      : hy_plan_run_whole (plan, inputs, n_inputs, error);
}

gboolean
hy_plan_profile (hy_plan *plan, const hy_tensor *const *inputs,
    int n_inputs, int iterations, const hy_layer_profile **layers,
    int *n_layers, GError **error)
{
  return plan->per_image
      ? split_profile (plan, inputs, n_inputs, iterations, layers, n_layers,
          error)
      : hy_plan_profile_whole (plan, inputs, n_inputs, iterations, layers,
          n_layers, error);
}
