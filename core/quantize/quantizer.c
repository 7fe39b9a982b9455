/*
 * quantizer.c — the public side of quantization: plan, calibrate on the
 * fp32 model (an imperative forward whose node hook sees every tensor the
 * int8 graph quantizes), save.
 */
#include <math.h>
#include <string.h>

#include "core/model-impl.h"
#include "core/quantize/quantize-impl.h"

gboolean
hy_calib_mode_parse (const char *text, hy_calib_mode *out, GError **error)
{
  if (text && !strcmp (text, "naive"))
    *out = HY_CALIB_NAIVE;
  else if (text && !strcmp (text, "entropy"))
    *out = HY_CALIB_ENTROPY;
  else {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "calibration mode '%s': expected naive or entropy",
        text ? text : "(none)");
    return FALSE;
  }
  return TRUE;
}

gboolean
hy_quantized_dtype_parse (const char *text, hy_quantized_dtype *out,
    GError **error)
{
  if (text && !strcmp (text, "auto"))
    *out = HY_QUANTIZED_AUTO;
  else if (text && !strcmp (text, "int8"))
    *out = HY_QUANTIZED_INT8;
  else if (text && !strcmp (text, "uint8"))
    *out = HY_QUANTIZED_UINT8;
  else {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "quantized dtype '%s': expected auto, int8 or uint8",
        text ? text : "(none)");
    return FALSE;
  }
  return TRUE;
}

/* The tensors a group needs a range of: what is quantized from fp32 (its
 * data or residual, when their producer is no int8 layer) and a
 * convolution's output (its requantization). */
guint
hy_qgroup_needed_ranges (const hy_graph *g, const hy_qgroup *grp,
    guint needed[3])
{
  guint n = 0;
  needed[n++] = hy_graph_node (g, grp->members[0])->inputs[0].node;
  if (grp->with_sum) {
    const hy_node *add = hy_graph_node (g, grp->members[grp->n_members
            - 1 - (grp->with_postsum_act ? 1 : 0)]);
    needed[n++] = add->inputs[grp->sum_input].node;
  }
  if (grp->kind == HY_Q_CONV)
    needed[n++] = grp->last;
  return n;
}

static void
mark_needed (hy_quantizer *q)
{
  guint n = hy_graph_n_nodes (q->graph);
  q->needs_range = g_new0 (gboolean, n);
  q->stats = g_new0 (hy_calib_stats, n);
  for (guint k = 0; k < q->groups->len; k++) {
    guint needed[3];
    guint n_needed = hy_qgroup_needed_ranges (q->graph, q->groups->pdata[k],
        needed);
    for (guint j = 0; j < n_needed; j++)
      q->needs_range[needed[j]] = TRUE;
  }
}

hy_quantizer *
hy_quantizer_new (const hy_model *model, const hy_quantize_options *options,
    GError **error)
{
  hy_quantizer *q = g_new0 (hy_quantizer, 1);
  q->model = model;
  q->graph = model->graph;
  if (options)
    q->options = *options;
  if (!hy_quantize_plan (q, error)) {
    hy_quantizer_free (q);
    return NULL;
  }
  mark_needed (q);
  return q;
}

void
hy_quantizer_free (hy_quantizer *q)
{
  if (!q)
    return;
  if (q->stats)
    for (guint i = 0; i < hy_graph_n_nodes (q->graph); i++)
      hy_calib_stats_clear (&q->stats[i]);
  g_free (q->stats);
  g_free (q->needs_range);
  g_free (q->group_of);
  if (q->groups)
    g_ptr_array_unref (q->groups);
  g_free (q);
}

int
hy_quantizer_n_batches (const hy_quantizer *q)
{
  return q->n_batches;
}

int
hy_quantizer_n_quantized (const hy_quantizer *q)
{
  return (int) q->groups->len;
}

static void
collect (hy_quantizer *q, guint node, const hy_tensor *t)
{
  if (!q->needs_range[node] || !t || t->shape.ndim < 0)
    return;
  hy_calib_stats_add (&q->stats[node], t->data, hy_shape_numel (&t->shape),
      q->options.calib_mode == HY_CALIB_ENTROPY);
}

static void
on_node (const hy_model *model, const hy_node_event *event, void *user_data)
{
  (void) model;
  if (event->n_outputs > 0)
    collect (user_data, (guint) event->index, event->outputs[0]);
}

gboolean
hy_quantizer_calibrate (hy_quantizer *q, const hy_tensor *const *inputs,
    GError **error)
{
  hy_executor_options opts = { .mode = HY_MODE_IMPERATIVE };
  hy_executor *exec = hy_executor_new_with_options (q->model, &opts, error);
  if (!exec)
    return FALSE;
  int n_in = hy_model_n_inputs (q->model);
  hy_executor_set_node_hook (exec, on_node, q);
  gboolean ok = hy_executor_forward (exec, inputs, n_in, error);
  hy_executor_free (exec);
  if (!ok) {
    g_prefix_error (error, "calibration batch %d: ", q->n_batches + 1);
    return FALSE;
  }
  /* the inputs are variables: no node event for them */
  for (int i = 0; i < n_in; i++)
    collect (q, (guint) g_array_index (q->model->inputs, guint, i),
        inputs[i]);
  q->n_batches++;
  return TRUE;
}

gboolean
hy_quantizer_save (hy_quantizer *q, const char *prefix, GError **error)
{
  if (q->n_batches == 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_MISSING,
        "%s: no calibration data: the int8 layers need the ranges of "
        "their data", hy_model_symbol_path (q->model));
    return FALSE;
  }
  return hy_quantize_write (q, prefix, error);
}
