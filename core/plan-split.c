/*
 * plan-split.c — hy_plan_new, hy_plan_run and hy_plan_profile: a plan
 * for the whole batch (plan.c), or, on the CPU, where each image's outputs
 * depend on that image's inputs only, a batch run image by image, all of
 * it or its first calls.
 *
 * A plan for a batch runs each layer over every image before the next
 * layer: on a network of thin layers (MobileNet's inverted residuals,
 * ResNet-50's first stages) a layer's output for 8 images is tens of
 * megabytes, written to memory and read back by the next layer.  Run
 * image by image, the same layers' outputs for one image stay in the
 * caches between layers.  It costs what the batch shared: each layer's
 * weights are read once per image instead of once per batch, and each
 * kernel has an image's worth of work to share among its threads.  So
 * where a network's first layers move much and weigh little and its last
 * the other way round, only the first calls run image by image, up to a
 * cut, and the rest on the whole batch (the rules below).
 *
 * The per-image plan is an ordinary plan built for a batch of 1, its
 * arena a batch-1 arena; a forward points its inputs at each image of
 * the caller's batch in turn and copies its outputs into the batch's
 * output tensors (allocated once, with the plan), or, cut, the values
 * that cross the cut into the batch plan's own tensors for them.
 * Outputs are the same sums as the batch plan's (every kernel sums an
 * image's outputs alone), though a kernel may pick another blocking for
 * one image.
 *
 * Which plans: on a host-memory backend, batch > 1, every call (before
 * the cut) an op that works image by image (below), reading the batch's
 * image b only for its own image b (every input not a weight has the
 * batch as its first axis, as every output), and the per-image shapes
 * inferable.  HYBRIDINFER_BATCH_SPLIT=0 never splits, =1 splits the whole
 * batch whatever the rule says, HYBRIDINFER_BATCH_SPLIT_CALLS=k cuts
 * after call k (tests, comparisons).
 */
#include <string.h>

#include "core/plan-impl.h"
#include "core/backend.h"
#include "kernels/params/shape.h"

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
    case HY_OP_SYNC_BATCH_NORM:
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

static gboolean
is_weight (const hy_call *call, int k)
{
  return hy_call_input_const (call, k);
}

/* A slice that keeps the batch axis whole (a strided slice of the
 * spatial axes, pass-early-stride.c). */
static gboolean
slice_keeps_batch (const hy_call *call, int64_t batch)
{
  int64_t first, step, count;
  hy_slice_resolve (call->params, 0, batch, &first, &step, &count);
  return first == 0 && step == 1 && count == batch;
}

/* Whether `call` reads image b of its batched inputs for image b of its
 * outputs only. */
static gboolean
call_works_per_image (hy_backend *be, const hy_call *call, int64_t batch)
{
  if (!op_works_per_image (call->op) && !(call->op == HY_OP_SLICE
          && slice_keeps_batch (call, batch)))
    return FALSE;
  /* oneDNN's convolutions are set up for the batch they were made for. */
  const char *kernel = be->iface->call_kernel_name
      ? be->iface->call_kernel_name (be, call) : NULL;
  if (kernel && !strcmp (kernel, "onednn"))
    return FALSE;
  for (int k = 0; k < call->n_out; k++)
    if (call->out[k]->shape.ndim < 1 || call->out[k]->shape.dims[0] != batch)
      return FALSE;
  for (int k = 0; k < call->n_in; k++) {
    const hy_tensor *t = call->in[k];
    if (t && !is_weight (call, k)
        && (t->shape.ndim < 1 || t->shape.dims[0] != batch))
      return FALSE;
  }
  return TRUE;
}

static gboolean
works_per_image (const hy_plan *plan, int64_t batch)
{
  for (int c = 0; c < plan->n_calls; c++)
    if (!call_works_per_image (plan->backend, &plan->calls[c], batch))
      return FALSE;
  return TRUE;
}

/* Whether running image by image pays: where the activations the
 * batch's calls write (a fused chain's inner values are never written)
 * outweigh the weights they read several times over.  Measured at batch
 * 8 on the hybridinfer bench models, two threads (docs/PERFORMANCE.md,
 * "Image by image", and "Expansion, depthwise and projection as one"):
 * before MobileNet's blocks ran as one call, MobileNetV2 (activations 15
 * times its weights, as every value's bytes) was 1.42-1.47× faster so,
 * MobileNetV3-Large (7 times) 1.08×, ResNet-50 (3.2) 0.97-1.05×,
 * ResNet-18 (1.7) 0.87×.  With the blocks as one call, MobileNetV2 writes
 * 3.3 times its weights and MobileNetV3-Large 4.5 times, and both run
 * faster as a batch: 26.1-27.0 against 28.9-29.7 ms, and 21.6 against
 * 25.1. */
#define SPLIT_MIN_ACTIVATIONS_PER_WEIGHT 5

/* Nor where the batch's activations fit the caches anyway. */
#define SPLIT_MIN_ACTIVATION_BYTES (4 << 20)

static gint64
call_weight_bytes (const hy_call *call)
{
  gint64 bytes = 0;
  for (int k = 0; k < call->n_in; k++)
    if (call->in[k] && is_weight (call, k))
      bytes += (gint64) hy_tensor_nbytes (call->in[k]);
  return bytes;
}

static gint64
call_output_bytes (const hy_call *call)
{
  gint64 bytes = 0;
  for (int k = 0; k < call->n_out; k++)
    bytes += (gint64) hy_tensor_nbytes (call->out[k]);
  return bytes;
}

static gboolean
split_pays (const hy_plan *plan)
{
  gint64 weights = 0, written = 0;
  for (int c = 0; c < plan->n_calls; c++) {
    weights += call_weight_bytes (&plan->calls[c]);
    written += call_output_bytes (&plan->calls[c]);
  }
  return written >= SPLIT_MIN_ACTIVATION_BYTES
      && written > SPLIT_MIN_ACTIVATIONS_PER_WEIGHT * weights;
}

/* The arrays a forward passes one image of each input in, made with
 * the split (a forward allocates nothing). */
static void
make_image_inputs (hy_plan *plan, int n_inputs)
{
  plan->n_image_inputs = n_inputs;
  plan->image_slices = g_new0 (hy_tensor, MAX (n_inputs, 1));
  plan->image_inputs = g_new0 (const hy_tensor *, MAX (n_inputs, 1));
}

static int
split_wanted (void)
{
  const char *env = g_getenv ("HYBRIDINFER_BATCH_SPLIT");
  return env && !strcmp (env, "0") ? 0 : env && !strcmp (env, "1") ? 1 : 2;
}

/* HYBRIDINFER_BATCH_SPLIT_CALLS=k: the first k calls image by image,
 * whatever the rule says, where that is a cut (tests, comparisons); 0
 * when unset. */
static int
prefix_wanted (void)
{
  const char *env = g_getenv ("HYBRIDINFER_BATCH_SPLIT_CALLS");
  return env ? (int) CLAMP (g_ascii_strtoll (env, NULL, 10), 0, G_MAXINT)
      : 0;
}

/* The plan of the same model for one image of `shapes`' batch, or NULL
 * where the model's shapes do not follow (a Reshape to a fixed batch). */
static hy_plan *
plan_for_one_image (const hy_plan *whole, const hy_shapes *shapes)
{
  const hy_model *model = hy_shapes_model (shapes);
  hy_shapes *one = hy_shapes_new (model);
  gboolean ok = TRUE;
  for (int i = 0; i < hy_model_n_inputs (model) && ok; i++) {
    hy_shape s = hy_shapes_input (shapes, i);
    s.dims[0] = 1;
    ok = hy_shapes_set_input (one, hy_model_input_name (model, i), &s, NULL);
  }
  ok = ok && hy_shapes_infer (one, NULL);
  hy_plan *image = ok ? hy_plan_build (one, whole->backend, NULL) : NULL;
  hy_shapes_free (one);
  return image;
}

/* The same plan run image by image: returns the plan that does, having
 * taken `whole`'s place (freed), or NULL (`whole` untouched). */
static hy_plan *
split_whole (hy_plan *whole, const hy_shapes *shapes, int64_t batch)
{
  for (int h = 0; h < whole->n_outputs; h++)
    if (whole->outputs[h]->shape.ndim < 1
        || whole->outputs[h]->shape.dims[0] != batch)
      return NULL;
  hy_plan *image = plan_for_one_image (whole, shapes);
  if (!image)
    return NULL;
  for (int h = 0; h < image->n_outputs; h++) {
    hy_shape s = image->outputs[h]->shape;
    s.dims[0] = batch;
    if (!hy_shape_equal (&s, &whole->outputs[h]->shape)) {
      hy_plan_free (image);
      return NULL;
    }
  }

  hy_plan *plan = g_new0 (hy_plan, 1);
  plan->backend = whole->backend;
  plan->per_image = image;
  plan->batch = batch;
  plan->pass_stats = image->pass_stats;
  plan->memory = image->memory;
  plan->memory.images_per_run = 1;
  plan->memory.per_image_calls = image->n_calls;
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

/* Image by image up to a cut: where a network's first layers work on
 * large maps with few weights and its last on small maps with many
 * (ResNet: 25 MB a layer's output at batch 8 on 56×56 maps, 64 KB of
 * weights; 2.4 MB of weights on 14×14), its first layers run image by
 * image, their outputs in the caches, and the rest on the whole batch,
 * each weight read once.  The values that cross the cut (a residual
 * network's block output) are copied, an image at a time, from the
 * per-image plan into the batch plan's. */

/* At most this many values cross a cut. */
#define MAX_CUT_VALUES 8

static gboolean
is_bound_input (const hy_plan *plan, const hy_tensor *t)
{
  for (int i = 0; i < plan->n_bindings; i++)
    if (plan->bindings[i].tensor == t)
      return TRUE;
  return FALSE;
}

/* The output of the call that wrote what `t` holds when call `reader`
 * reads it: t itself, or the output a view (Reshape, Flatten: the same
 * bytes under another shape) was taken of, the latest written there
 * before `reader`.  NULL when no call wrote it. */
static const hy_tensor *
written_by (const hy_plan *plan, GHashTable *producer, const hy_tensor *t,
    int reader, int *call)
{
  *call = GPOINTER_TO_INT (g_hash_table_lookup (producer, t)) - 1;
  if (*call >= 0)
    return t;
  for (int c = reader - 1; c >= 0; c--)
    for (int j = 0; j < plan->calls[c].n_out; j++)
      if (plan->calls[c].out[j]->data == t->data) {
        *call = c;
        return plan->calls[c].out[j];
      }
  return NULL;
}

/* Collects into cut[] the outputs of calls before k that calls from k on
 * read (or views of them), or that are graph outputs; returns how many, or
 * -1 where a call from k on reads something no call wrote that is neither
 * a weight nor an input, or more than MAX_CUT_VALUES cross.  producer
 * maps each call output to its call + 1. */
static int
values_across (const hy_plan *plan, GHashTable *producer, int k,
    const hy_tensor **cut)
{
  int n = 0;
  for (int c = k; c <= plan->n_calls; c++) {
    const hy_call *call = c < plan->n_calls ? &plan->calls[c] : NULL;
    const int n_read = call ? call->n_in : plan->n_outputs;
    for (int j = 0; j < n_read; j++) {
      const hy_tensor *t = call ? call->in[j] : plan->outputs[j];
      if (!t || (call && is_weight (call, j)) || is_bound_input (plan, t))
        continue;
      int from;
      const hy_tensor *value = written_by (plan, producer, t, c, &from);
      if (!value)
        return -1;
      if (from >= k)
        continue;
      int i = 0;
      while (i < n && cut[i] != value)
        i++;
      if (i == n && n == MAX_CUT_VALUES)
        return -1;
      if (i == n)
        cut[n++] = value;
    }
  }
  return n;
}

/* Each call output of `plan`, to its call + 1. */
static GHashTable *
producers (const hy_plan *plan)
{
  GHashTable *producer = g_hash_table_new (NULL, NULL);
  for (int c = 0; c < plan->n_calls; c++)
    for (int j = 0; j < plan->calls[c].n_out; j++)
      g_hash_table_insert (producer, plan->calls[c].out[j],
          GINT_TO_POINTER (c + 1));
  return producer;
}

/* The rule.  A call gains from running image by image where it is bound
 * by moving its activations, not by its arithmetic: below
 * PREFIX_MAX_FLOP_PER_FLOAT multiply-adds and adds per float of input and
 * output it reads and writes (ResNet's and MobileNet's pointwise layers,
 * 27-274, depthwise ones 9, pooling; not 3×3 convolutions, 576 and up),
 * its batch output, if it is too large to stay in the caches from one
 * layer to the next (PREFIX_MIN_OUTPUT_BYTES, an eighth of the L3), counts
 * for the cut.
 * Against that count the weights of every call before the cut, read once
 * per image instead of once per batch, and the values across the cut,
 * copied once more; a cut is taken where that leaves PREFIX_MIN_GAIN_BYTES
 * (the 32 MiB L3 this was measured on).  hybridinfer bench -t 2, batch 8,
 * against the batch plan and the whole batch image by image
 * (docs/PERFORMANCE.md, "First calls image by image"): ResNet-50 cut after
 * stage 2 1.09-1.11×, after stage 1 1.05×; ResNet-18, whose stage outputs
 * feed 3×3 layers, level or 0.95× wherever cut; MobileNetV2 and V3 cut in
 * their 28×28 or 14×14 stage 1.05× and 1.10-1.13× over the whole batch
 * image by image. */
#define PREFIX_MAX_FLOP_PER_FLOAT 256
#define PREFIX_MIN_OUTPUT_BYTES (4 << 20)
#define PREFIX_MIN_GAIN_BYTES (32 << 20)

static gint64
call_input_bytes (const hy_call *call)
{
  gint64 bytes = 0;
  for (int k = 0; k < call->n_in; k++)
    if (call->in[k] && !is_weight (call, k))
      bytes += (gint64) hy_tensor_nbytes (call->in[k]);
  return bytes;
}

/* What running call c image by image gains, in bytes: its batch output
 * if it is large and moves more than it computes, less its weights read again for
 * every image but one. */
static gint64
call_gain (const hy_plan *plan, int c, int64_t batch)
{
  const hy_call *call = &plan->calls[c];
  const gint64 out = call_output_bytes (call);
  const double floats = (double) (call_input_bytes (call) + out)
      / sizeof (float);
  const gboolean moves = out >= PREFIX_MIN_OUTPUT_BYTES
      && hy_plan_call_flops (plan, c) < PREFIX_MAX_FLOP_PER_FLOAT * floats;
  return (moves ? out : 0) - (batch - 1) * call_weight_bytes (call);
}

static gint64
cut_bytes (const hy_tensor *const *cut, int n)
{
  gint64 bytes = 0;
  for (int i = 0; i < n; i++)
    bytes += (gint64) hy_tensor_nbytes (cut[i]);
  return bytes;
}

/* The call at which to cut `whole` (its first calls image by image), or
 * 0: by the rule, where the first calls gain the most, or where `forced`
 * says. */
static int
choose_cut (const hy_plan *whole, int64_t batch, int forced)
{
  GHashTable *producer = producers (whole);
  const hy_tensor *cut[MAX_CUT_VALUES];
  gint64 gain = 0, best_gain = PREFIX_MIN_GAIN_BYTES - 1;
  int best = 0;
  for (int k = 1; k < whole->n_calls; k++) {
    const hy_call *call = &whole->calls[k - 1];
    if (!call_works_per_image (whole->backend, call, batch))
      break;
    gain += call_gain (whole, k - 1, batch);
    if (forced ? k != forced : gain <= best_gain)
      continue;
    const int n_cut = values_across (whole, producer, k, cut);
    if (n_cut >= 0 && (forced || gain - cut_bytes (cut, n_cut) > best_gain)) {
      best = k;
      best_gain = gain - cut_bytes (cut, n_cut);
    }
  }
  g_hash_table_unref (producer);
  return best;
}

/* Whether two plans of one model make the same calls of the same nodes. */
static gboolean
same_calls (const hy_plan *a, const hy_plan *b)
{
  if (a->n_calls != b->n_calls)
    return FALSE;
  for (int c = 0; c < a->n_calls; c++)
    if (a->call_nodes[c] != b->call_nodes[c] || a->calls[c].op != b->calls[c].op
        || a->calls[c].n_out != b->calls[c].n_out)
      return FALSE;
  return TRUE;
}

/* `whole` with its first calls image by image, where the rule (or
 * HYBRIDINFER_BATCH_SPLIT_CALLS) says so: TRUE if it was set up. */
static gboolean
split_prefix (hy_plan *whole, const hy_shapes *shapes, int64_t batch,
    int forced)
{
  const int k = choose_cut (whole, batch, forced);
  if (k <= 0)
    return FALSE;
  hy_plan *image = plan_for_one_image (whole, shapes);
  if (!image || !same_calls (image, whole)) {
    hy_plan_free (image);
    return FALSE;
  }
  /* The values across the cut, and where each plan holds them: the
   * output of the same call in both. */
  GHashTable *producer = producers (whole);
  const hy_tensor *cut[MAX_CUT_VALUES];
  const int n_cut = values_across (whole, producer, k, cut);
  g_hash_table_unref (producer);
  whole->cut_from = g_new0 (const hy_tensor *, MAX (n_cut, 1));
  whole->cut_to = g_new0 (hy_tensor *, MAX (n_cut, 1));
  gboolean ok = n_cut >= 0;
  for (int i = 0; ok && i < n_cut; i++) {
    ok = FALSE;
    for (int c = 0; c < k && !ok; c++)
      for (int j = 0; j < whole->calls[c].n_out && !ok; j++) {
        if (whole->calls[c].out[j] != cut[i])
          continue;
        hy_shape s = image->calls[c].out[j]->shape;
        s.dims[0] = batch;
        /* A value in the backend's own layout is not copied as
         * planes: no cut across a segment. */
        ok = s.ndim >= 1 && hy_shape_equal (&s, &cut[i]->shape)
            && !hy_plan_tensor_private (whole, cut[i])
            && !hy_plan_tensor_private (image, image->calls[c].out[j]);
        whole->cut_from[i] = image->calls[c].out[j];
        whole->cut_to[i] = whole->calls[c].out[j];
      }
  }
  if (!ok) {
    g_clear_pointer (&whole->cut_from, g_free);
    g_clear_pointer (&whole->cut_to, g_free);
    hy_plan_free (image);
    return FALSE;
  }

  hy_plan_drop_calls (image, k, image->n_calls);
  hy_plan_drop_calls (whole, 0, k);
  whole->per_image = image;
  whole->batch = batch;
  whole->prefix_calls = k;
  whole->n_cut = n_cut;
  whole->memory.arena_bytes += image->memory.arena_bytes;
  whole->memory.lower_bound_bytes += image->memory.lower_bound_bytes;
  whole->memory.per_image_calls = k;
  return TRUE;
}

/* The plan for the batch run image by image, or its first calls so,
 * where that pays: returns the plan that does (`whole` itself, or one
 * that has taken its place and freed it). */
static hy_plan *
split_batch (hy_plan *whole, const hy_shapes *shapes)
{
  const hy_model *model = hy_shapes_model (shapes);
  const int n_inputs = hy_model_n_inputs (model);
  const int wanted = split_wanted (), forced = prefix_wanted ();
  if (!wanted || !whole->backend->iface->host_memory || n_inputs < 1
      || whole->n_outputs < 1)
    return whole;
  const hy_shape first = hy_shapes_input (shapes, 0);
  const int64_t batch = first.ndim >= 1 ? first.dims[0] : 0;
  if (batch <= 1)
    return whole;
  for (int i = 0; i < n_inputs; i++) {
    const hy_shape s = hy_shapes_input (shapes, i);
    if (s.ndim < 1 || s.dims[0] != batch)
      return whole;
  }
  /* A cut where one pays (its last calls keep the batch's weight
   * reuse), else the whole batch image by image where that pays. */
  hy_plan *split = NULL;
  if (wanted == 1 && works_per_image (whole, batch))
    split = split_whole (whole, shapes, batch);
  else if (split_prefix (whole, shapes, batch, forced))
    split = whole;
  else if (!forced && works_per_image (whole, batch) && split_pays (whole))
    split = split_whole (whole, shapes, batch);
  if (!split)
    return whole;
  make_image_inputs (split, n_inputs);
  return split;
}

/* The split was made for the model's inputs: more is a caller's mistake
 * (fewer, the per-image plan reports). */
static gboolean
inputs_fit (const hy_plan *plan, int n_inputs, GError **error)
{
  if (n_inputs <= plan->n_image_inputs)
    return TRUE;
  g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
      "%d inputs given to a plan of %d", n_inputs, plan->n_image_inputs);
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
  hy_tensor *slices = plan->image_slices;
  const hy_tensor **ptrs = plan->image_inputs;
  if (!inputs_fit (plan, n_inputs, error))
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
  hy_tensor *slices = plan->image_slices;
  const hy_tensor **ptrs = plan->image_inputs;
  if (!inputs_fit (plan, n_inputs, error))
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

/* Image b of the values across the cut into the batch plan's. */
static void
carry_across (hy_plan *plan, int64_t b)
{
  for (int i = 0; i < plan->n_cut; i++) {
    const size_t bytes = hy_tensor_nbytes (plan->cut_from[i]);
    memcpy ((char *) plan->cut_to[i]->data + b * bytes,
        plan->cut_from[i]->data, bytes);
  }
}

static gboolean
prefix_run (hy_plan *plan, const hy_tensor *const *inputs, int n_inputs,
    GError **error)
{
  hy_tensor *slices = plan->image_slices;
  const hy_tensor **ptrs = plan->image_inputs;
  if (!inputs_fit (plan, n_inputs, error))
    return FALSE;
  for (int64_t b = 0; b < plan->batch; b++) {
    image_inputs (inputs, n_inputs, b, plan->batch, slices, ptrs);
    if (!hy_plan_run_calls (plan->per_image, ptrs, n_inputs, 0,
            plan->prefix_calls, error))
      return FALSE;
    carry_across (plan, b);
  }
  return hy_plan_run_calls (plan, inputs, n_inputs, plan->prefix_calls,
      plan->n_calls, error);
}

/* Every call's time per forward, the first calls' summed over the
 * images.  Forward by forward: a call from the cut on may write over a
 * value across the cut in place, so the calls after it only run again
 * once the first calls have. */
static gboolean
prefix_profile (hy_plan *plan, const hy_tensor *const *inputs, int n_inputs,
    int iterations, const hy_layer_profile **layers, int *n_layers,
    GError **error)
{
  hy_tensor *slices = plan->image_slices;
  const hy_tensor **ptrs = plan->image_inputs;
  const int k = plan->prefix_calls, n = plan->n_calls;
  if (!inputs_fit (plan, n_inputs, error)
      || !hy_plan_profile_calls (plan, inputs, n_inputs, 0, k, n, layers,
          n_layers, error))   /* describes the calls, times none */
    return FALSE;
  double *ms = g_new0 (double, 2 * n), *cpu_ms = ms + n;
  gboolean ok = TRUE;
  for (int it = 0; it < MAX (iterations, 1) && ok; it++) {
    for (int64_t b = 0; b < plan->batch && ok; b++) {
      const hy_layer_profile *one;
      int n_one;
      image_inputs (inputs, n_inputs, b, plan->batch, slices, ptrs);
      ok = hy_plan_profile_calls (plan->per_image, ptrs, n_inputs, 1, 0, k,
          &one, &n_one, error);
      if (!ok)
        break;
      carry_across (plan, b);
      for (int c = 0; c < k; c++) {
        hy_layer_profile *l = &plan->profile[c];
        *l = one[c];
        l->flop = one[c].flop * plan->batch;
        ms[c] += one[c].ms;
        cpu_ms[c] += one[c].cpu_ms;
      }
    }
    ok = ok && hy_plan_profile_calls (plan, inputs, n_inputs, 1, k, n,
        layers, n_layers, error);
    for (int c = k; ok && c < n; c++) {
      ms[c] += plan->profile[c].ms;
      cpu_ms[c] += plan->profile[c].cpu_ms;
    }
  }
  for (int c = 0; ok && c < n; c++) {
    plan->profile[c].ms = ms[c] / MAX (iterations, 1);
    plan->profile[c].cpu_ms = cpu_ms[c] / MAX (iterations, 1);
  }
  g_free (ms);
  return ok;
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
  if (plan->prefix_calls)
    return prefix_run (plan, inputs, n_inputs, error);
  return plan->per_image ? split_run (plan, inputs, n_inputs, error)
      : hy_plan_run_whole (plan, inputs, n_inputs, error);
}

gboolean
hy_plan_profile (hy_plan *plan, const hy_tensor *const *inputs,
    int n_inputs, int iterations, const hy_layer_profile **layers,
    int *n_layers, GError **error)
{
  if (plan->prefix_calls)
    return prefix_profile (plan, inputs, n_inputs, iterations, layers,
        n_layers, error);
  return plan->per_image
      ? split_profile (plan, inputs, n_inputs, iterations, layers, n_layers,
          error)
      : hy_plan_profile_whole (plan, inputs, n_inputs, iterations, layers,
          n_layers, error);
}
