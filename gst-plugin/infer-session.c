/*
 * infer-session.c — model, executor, input tensor, frame plan, results.
 *
 * Frames reach the input one of two ways.  On the CPU, and in imperative
 * mode anywhere, the frame plan converts them into the host tensor
 * `input`, which the forward uploads when the device needs it.  On a CUDA
 * device in hybrid mode, a frame stage (hybrid-frame.h) uploads the
 * frame's bytes and converts them on the GPU, straight into the plan's
 * device input, and the forward uploads nothing.  The executor changes
 * mode only in gst_hybrid_session_forward, so a batch is loaded in one
 * mode but may run in the other: `staged` says which slots are on the
 * device only, and they are copied back to `input` when the forward reads
 * that.  A stage writes into one plan's input: it is made again when the
 * frame plan or the mode changes.
 *
 * An int8 model whose input only a calibrated quantize_v2 reads (MXNet's
 * int8 exports), on the CPU in hybrid mode, takes its frames as bytes:
 * the frame plan rounds each value as that node would, straight into
 * the plan's int8 input (hy_executor_input_quantization), and the
 * forward skips the node; `input` is not written.  A batch is loaded one
 * way or the other from its first frame on (`batch_input`), and runs the
 * way it was loaded: a batch quantized runs in hybrid mode even when the
 * mode changed while it filled (the switch takes the next batch).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "infer-session.h"
#include "property-parse.h"
#include "result-pool.h"

#define DEFAULT_SIDE 224

struct _GstHybridSession {
  hy_model *model;
  hy_executor *exec;
  hy_device device;
  char **labels;
  guint n_labels;
  char *input_name;
  gboolean follow_frame;
  gboolean channels_known;
  hy_shape shape;               /* (B, C, H, W); ndim -1 until planned */
  hy_tensor *input;
  GstHybridOutput requested;
  const GstHybridDecoder *decoder;      /* the kind resolved; NULL: not
                                         * planned */
  GstHybridActivation requested_activation, model_activation, activation;
  guint sidecar_scores, sidecar_top_k;
  gfloat sidecar_threshold;
  gfloat iou_threshold;
  gint64 n_classes;             /* the decoder's classes_of; -1: not
                                 * planned, or the heads do not say */
  hy_frame_plan *plan;
  /* The GPU frame path (NULL: frames go through plan on the CPU), per
   * frame plan and executor plan. */
  hy_frame_stage *stage;
  gboolean stage_failed;        /* for this frame plan: do not retry */
  gboolean *staged;             /* per batch slot: its frame is on the
                                 * device only */
  GError *load_error;           /* a staged load's failure, for the forward */
  char *qdq_note;               /* what a QDQ file became, or NULL */
  char *note;                   /* a fallback, for
                                 * gst_hybrid_session_take_note */
  gboolean noted;               /* one fallback note per session */
  /* How the batch being filled reaches the model: undecided until its
   * first frame, then as floats in `input` (or staged), or quantized by
   * the frame plan into `quantized.data`. */
  enum { BATCH_UNDECIDED, BATCH_FLOAT, BATCH_QUANTIZED } batch_input;
  hy_input_quantization quantized;
  GstHybridPrep prep;
  /* results */
  GstHybridResultPool *pool;    /* for the current output shapes */
};

static char *
input_names (const hy_model *model)
{
  GString *s = g_string_new (NULL);
  for (int i = 0; i < hy_model_n_inputs (model); i++)
    g_string_append_printf (s, "%s'%s'", i ? ", " : "",
        hy_model_input_name (model, i));
  return g_string_free (s, FALSE);
}

/* The one input hybridinfer feeds, checked against input-name. */
static gboolean
choose_input (GstHybridSession *s, const char *wanted, GError **error)
{
  int n = hy_model_n_inputs (s->model);
  if (wanted && hy_model_input_index (s->model, wanted) < 0) {
    char *names = input_names (s->model);
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "input-name '%s': the model has no such input (its inputs: %s)",
        wanted, n ? names : "none");
    g_free (names);
    return FALSE;
  }
  if (n != 1) {
    char *names = input_names (s->model);
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "the model has %d data inputs (%s): hybridinfer feeds exactly one "
        "image input", n, n ? names : "none");
    g_free (names);
    return FALSE;
  }
  s->input_name = g_strdup (hy_model_input_name (s->model, 0));
  return TRUE;
}

static gboolean
check_values (const char *what, int n, int channels, GError **error)
{
  if (n == 0 || n == 1 || n == channels)
    return TRUE;
  g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
      "%s has %d values: give one, or one per input channel (%d)", what, n,
      channels);
  return FALSE;
}

/* Sets the input shape and plans for it; an unknown channel count is tried
 * as 3 (colour), then 1 (gray). */
static gboolean
try_plan (GstHybridSession *s, int channels, int width, int height,
    GError **error)
{
  hy_shape shape = {.ndim = 4,.dims = {s->shape.dims[0], channels, height,
          width}
  };
  if (!hy_executor_set_input_shape (s->exec, s->input_name, &shape, error)
      || !hy_executor_prepare (s->exec, error))
    return FALSE;
  s->shape = shape;
  return TRUE;
}

/* TRUE when output 0 comes straight from a softmax or a sigmoid: the
 * model's scores are probabilities already.  A QDQ file's quantize-
 * dequantize pair after it (run in float) only rounds them. */
static gboolean
head_normalised (const hy_model *model)
{
  const char *head = hy_model_output_name (model, 0);
  hy_node_desc node;
  for (int i = hy_model_n_nodes (model) - 1; head && i >= 0; i--) {
    if (!hy_model_node (model, i, &node) || strcmp (node.name, head))
      continue;
    if (!strcmp (node.op, "_hy_quantize_dequantize")) {
      head = hy_model_node_input (model, i, 0, NULL);
      continue;                 /* producers come before: on down */
    }
    return !strcmp (node.op, "softmax")
        || !strcmp (node.op, "SoftmaxActivation")
        || !strcmp (node.op, "SoftmaxOutput")
        || !strcmp (node.op, "sigmoid");
  }
  return FALSE;
}

/* output-activation=auto: classification scores become probabilities —
 * a softmax, unless the model (its sidecar, else its head) applies one. */
static GstHybridActivation
resolve_activation (const GstHybridSession *s)
{
  if (s->requested_activation != GST_HYBRID_ACTIVATION_AUTO)
    return s->requested_activation;
  if (!s->decoder || !s->decoder->class_scores)
    return GST_HYBRID_ACTIVATION_NONE;
  if (s->model_activation != GST_HYBRID_ACTIVATION_AUTO)
    return s->model_activation == GST_HYBRID_ACTIVATION_NONE
        ? GST_HYBRID_ACTIVATION_SOFTMAX : GST_HYBRID_ACTIVATION_NONE;
  return head_normalised (s->model) ? GST_HYBRID_ACTIVATION_NONE
      : GST_HYBRID_ACTIVATION_SOFTMAX;
}

static gchar *
format_shapes (const hy_shape *shapes, guint n)
{
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < n; i++) {
    char buf[HY_SHAPE_STRLEN];
    g_string_append_printf (s, "%s%s", i ? ", " : "",
        hy_shape_format (&shapes[i], buf, sizeof buf));
  }
  return g_string_free (s, FALSE);
}

/* output=auto: the first kind that claims the heads, else the fallback. */
static const GstHybridDecoder *
claimed (const hy_shape *shapes, guint n_heads, gint64 batch)
{
  const GstHybridDecoder *fallback = NULL;
  for (guint i = 0; i < gst_hybrid_n_decoders; i++) {
    const GstHybridDecoder *d = gst_hybrid_decoders[i];
    if (d->claims && d->claims (shapes, n_heads, batch))
      return d;
    if (d->fallback && !fallback)
      fallback = d;
  }
  g_assert (fallback);
  return fallback;
}

/* Which kind reads heads of these shapes (batch `batch`): the one
 * `requested` names, when they fit it (else an error naming the shapes),
 * or for output=auto the one that claims them. */
static gboolean
resolve_decoder (GstHybridOutput requested, const hy_shape *shapes,
    guint n_heads, gint64 batch, const GstHybridDecoder **resolved,
    GError **error)
{
  const GstHybridDecoder *d = gst_hybrid_decoder_for (requested);
  if (!d) {
    *resolved = claimed (shapes, n_heads, batch);
    return TRUE;
  }
  if (d->fits && !d->fits (shapes, n_heads, batch)) {
    gchar *got = format_shapes (shapes, n_heads);
    /* Which kind the heads are is the likely fix: a classifier given
     * output=detection. */
    const GstHybridDecoder *read_as = claimed (shapes, n_heads, batch);
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "output=%s needs %s (B = batch-size = %" G_GINT64_FORMAT
        "); the model's heads are %s, which output=%s reads (output=auto "
        "picks it)", d->nick, d->fits_needs, batch, got, read_as->nick);
    g_free (got);
    return FALSE;
  }
  *resolved = d;
  return TRUE;
}

/* The heads, looked at once per plan: which kind reads them, with which
 * activation, and how many values the first has per frame. */
static gboolean
resolve_output (GstHybridSession *s, GError **error)
{
  int n = hy_model_n_outputs (s->model);
  hy_shape *shapes = g_new (hy_shape, MAX (n, 1));
  for (int i = 0; i < n; i++)
    shapes[i] = hy_executor_output_shape (s->exec, i, NULL);
  gboolean ok = resolve_decoder (s->requested, shapes, (guint) n,
      s->shape.dims[0], &s->decoder, error);
  s->activation = resolve_activation (s);
  s->n_classes = ok && s->decoder->classes_of
      ? s->decoder->classes_of (shapes, (guint) n, s->shape.dims[0]) : -1;
  if (ok && !s->decoder->classes_of && s->decoder->classes_in_graph)
    s->n_classes = s->decoder->classes_in_graph (s->model,
        hy_executor_shapes (s->exec));
  g_free (shapes);
  return ok;
}

/* Plans for a width x height input, 3 or 1 channels when the model does
 * not say. */
static gboolean
plan_shape (GstHybridSession *s, int width, int height, GError **error)
{
  if (s->channels_known) {
    if (!try_plan (s, (int) s->shape.dims[1], width, height, error))
      return FALSE;
  } else {
    GError *colour_error = NULL;
    if (try_plan (s, 3, width, height, &colour_error)) {
      s->channels_known = TRUE;
    } else if (try_plan (s, 1, width, height, NULL)) {
      s->channels_known = TRUE;
      g_clear_error (&colour_error);
    } else {
      g_propagate_error (error, colour_error);
      return FALSE;
    }
  }
  return TRUE;
}

/* A shape the model refuses is said to come from input-size, the property
 * that picks it. */
static gboolean
plan_shape_from_input_size (GstHybridSession *s, int width, int height,
    GError **error)
{
  GError *local = NULL;
  if (plan_shape (s, width, height, &local))
    return TRUE;
  if (g_error_matches (local, HY_ERROR, HY_ERROR_SHAPE)) {
    if (s->follow_frame)
      g_prefix_error (&local, "input-size=frame: the model cannot take "
          "%dx%d frames as its input (set input-size to a size it takes): ",
          width, height);
    else
      g_prefix_error (&local, "input-size %dx%d: the model cannot take "
          "this input size (set input-size to one it takes): ", width,
          height);
  }
  g_propagate_error (error, local);
  return FALSE;
}

/* Plans for a width x height input.  Heads that do not fit the output
 * kind are the output property's error, not input-size's: only the
 * planning itself is blamed on the size. */
static gboolean
plan_input (GstHybridSession *s, int width, int height, GError **error)
{
  gint64 before = hy_shape_numel (&s->shape);
  if (!plan_shape_from_input_size (s, width, height, error))
    return FALSE;
  if (!check_values ("mean", s->prep.n_mean, (int) s->shape.dims[1], error)
      || !check_values ("std", s->prep.n_std, (int) s->shape.dims[1], error)
      || !resolve_output (s, error))
    return FALSE;
  if (!s->input || hy_shape_numel (&s->shape) != before) {
    /* Sized by input-size and batch-size (up to 16384 x 16384 x 256):
     * memory that cannot be had is an error, not an abort. */
    g_clear_pointer (&s->input, hy_tensor_free);
    s->input = hy_tensor_try_new (&s->shape, "the input tensor", error);
    if (!s->input)
      return FALSE;
  } else {
    s->input->shape = s->shape;
  }
  return TRUE;
}

void
gst_hybrid_session_default_input_size (const GstHybridSession *s, int *width,
    int *height)
{
  hy_shape declared = hy_model_input_shape (s->model, 0);
  *width = *height = DEFAULT_SIDE;
  if (declared.ndim == 4) {
    *width = (int) declared.dims[3];
    *height = (int) declared.dims[2];
  }
}

/* A declared (N, H, W, C) image: the last dimension a colour count (1
 * grey, 3 RGB, 4 RGBA) where the second is none.  Read as NCHW its rows
 * would become channels and the pixels garbage, and the planner's error
 * (a weight shape that does not fit an input size of C x W) would point
 * at input-size rather than at the layout. */
static gboolean
looks_channels_last (const hy_shape *declared)
{
  gint64 second = declared->dims[1], last = declared->dims[3];
  gboolean last_is_colour = last == 1 || last == 3 || last == 4;
  gboolean second_is_colour = second == 1 || second == 3 || second == 4;
  return last_is_colour && !second_is_colour;
}

/* Where the input's size and channel count come from. */
static gboolean
initial_shape (GstHybridSession *s, const GstHybridSessionConfig *c, int *width,
    int *height, GError **error)
{
  hy_shape declared = hy_model_input_shape (s->model, 0);
  s->shape = (hy_shape) {.ndim = -1,.dims = {c->batch, 3} };
  gst_hybrid_session_default_input_size (s, width, height);
  if (declared.ndim >= 0 && declared.ndim != 4) {
    char buf[HY_SHAPE_STRLEN];
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "input '%s' is declared %s: hybridinfer feeds images as "
        "(N, C, H, W)", s->input_name,
        hy_shape_format (&declared, buf, sizeof buf));
    return FALSE;
  }
  if (declared.ndim == 4 && looks_channels_last (&declared)) {
    char buf[HY_SHAPE_STRLEN];
    g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
        "input '%s' is declared %s: its last dimension looks like the "
        "colour channels (NHWC, channels last) and its second like the "
        "height; hybridinfer feeds images as (N, C, H, W) (NCHW, MXNet's "
        "layout) and would give this model its rows as channels: export the "
        "model NCHW, or give it a transpose (axes 0, 3, 1, 2) in front of "
        "its first layer and declare the input NCHW", s->input_name,
        hy_shape_format (&declared, buf, sizeof buf));
    return FALSE;
  }
  if (declared.ndim == 4) {
    s->shape.dims[1] = declared.dims[1];
    s->channels_known = TRUE;
  }
  if (c->input_width > 0) {
    *width = c->input_width;
    *height = c->input_height;
  }
  s->follow_frame = c->input_width == GST_HYBRID_SESSION_SIZE_FROM_FRAME;
  return TRUE;
}

/* The executor on s->device, planned for the input when its size does
 * not wait for the frame.  May be called again (another device). */
static gboolean
open_executor (GstHybridSession *s, const GstHybridSessionConfig *c,
    GError **error)
{
  int width, height;
  hy_executor_free (s->exec);
  g_clear_pointer (&s->input_name, g_free);
  g_clear_pointer (&s->staged, g_free);
  s->channels_known = FALSE;
  s->exec = hy_executor_new (s->model, s->device, c->mode, error);
  if (!s->exec || !hy_executor_set_precision (s->exec, c->precision, error)
      || !choose_input (s, c->input_name, error)
      || !initial_shape (s, c, &width, &height, error))
    return FALSE;
  s->staged = g_new0 (gboolean, s->shape.dims[0]);
  return s->follow_frame || plan_input (s, width, height, error);
}

gboolean
gst_hybrid_prep_from_config (const GstHybridSessionConfig *c,
    GstHybridPrep *p, GError **error)
{
  memset (p, 0, sizeof *p);
  p->bgr = c->bgr;
  p->resize = c->resize;
  p->interpolation = c->interpolation;
  p->scale = c->scale;
  p->n_mean = c->n_mean;
  p->n_std = c->n_std;
  if (!check_values ("mean", c->n_mean, 3, error)
      || !check_values ("std", c->n_std, 3, error))
    return FALSE;
  for (int i = 0; i < c->n_mean; i++)
    p->mean[i] = c->mean[i];
  for (int i = 0; i < c->n_std; i++)
    p->std[i] = c->std[i];
  /* Pre-processing divides by std as a float: a value that is 0 as a
   * float (1e-300), subnormal (its reciprocal overflows) or not finite
   * would pass here and fail at caps time instead. */
  for (int i = 0; i < c->n_std; i++) {
    float f = (float) p->std[i];
    if (fpclassify (f) != FP_NORMAL) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "std value %d is %g: every std must be a non-zero, finite float "
          "that is not subnormal (|std| %g to %g)", i, p->std[i],
          (double) FLT_MIN, (double) FLT_MAX);
      return FALSE;
    }
  }
  return TRUE;
}

GstHybridSession *
gst_hybrid_session_new (const GstHybridSessionConfig *c, char **device_note,
    GError **error)
{
  GstHybridSession *s = g_new0 (GstHybridSession, 1);
  gboolean auto_gpu;
  GError *gpu_error = NULL;
  *device_note = NULL;
  gst_hybrid_decoders_init ();
  s->shape.ndim = -1;
  s->n_classes = -1;
  s->requested = c->output;
  s->requested_activation = c->activation;
  s->model_activation = c->model_activation;
  s->sidecar_scores = c->sidecar_scores;
  s->sidecar_top_k = c->sidecar_top_k;
  s->sidecar_threshold = c->sidecar_threshold;
  s->iou_threshold = c->iou_threshold;
  if (!gst_hybrid_prep_from_config (c, &s->prep, error))
    goto fail;

  s->model = hy_model_load_qdq (c->model_path, c->params_path, c->qdq,
      &s->qdq_note, error);
  if (!s->model)
    goto fail;
  if (c->labels_path) {
    s->labels = hyg_labels_load (c->labels_path, &s->n_labels, error);
    if (!s->labels)
      goto fail;
  } else if (c->labels) {
    s->labels = hyg_strv_pack (c->labels, -1);
    s->n_labels = g_strv_length (s->labels);
  }
  if (!hy_device_resolve_auto (c->device ? c->device : "auto", &s->device,
          device_note, error))
    goto fail;
  /* A GPU that "auto" picked but that cannot run this model (a cuDNN
   * call refused at plan time, say) leaves the CPU, which can: auto
   * promises a working device.  An explicit device=cuda fails instead. */
  auto_gpu = (!c->device || !strcmp (c->device, "auto"))
      && s->device.kind == HY_DEVICE_CUDA;
  if (!open_executor (s, c, auto_gpu ? &gpu_error : error)) {
    if (!auto_gpu)
      goto fail;
    g_free (*device_note);
    *device_note = g_strdup_printf ("device auto: cuda:%d cannot run this "
        "model (%s), using the CPU", s->device.index, gpu_error->message);
    g_clear_error (&gpu_error);
    s->device = (hy_device) { HY_DEVICE_CPU, 0 };
    if (!open_executor (s, c, error))
      goto fail;
  }
  return s;

fail:
  gst_hybrid_session_free (s);
  return NULL;
}

void
gst_hybrid_session_free (GstHybridSession *s)
{
  if (!s)
    return;
  if (s->pool)
    gst_hybrid_result_pool_close (s->pool);
  /* before the executor, whose stream it uses */
  hy_frame_stage_free (s->stage);
  g_free (s->staged);
  g_clear_error (&s->load_error);
  g_free (s->note);
  g_free (s->qdq_note);
  hy_frame_plan_free (s->plan);
  hy_tensor_free (s->input);
  hy_executor_free (s->exec);
  hy_model_free (s->model);
  g_free (s->labels);           /* packed: hyg_strv_pack */
  g_free (s->input_name);
  g_free (s);
}

/* One value per channel from what the property gave (none, one, each). */
static float
channel_value (const double *values, int n, int channel, float fallback)
{
  if (n == 0)
    return fallback;
  return (float) values[n == 1 ? 0 : channel];
}

/* Makes the frame stage when it can be used (a CUDA device in hybrid
 * mode) and is not there yet: at a new frame plan, or once the executor
 * enters hybrid mode.  When it cannot be made, frames take the CPU path
 * and the reason is noted, once per session. */
static void
ensure_stage (GstHybridSession *s)
{
  if (s->stage || s->stage_failed || !s->plan
      || s->device.kind != HY_DEVICE_CUDA
      || hy_executor_mode (s->exec) != HY_MODE_HYBRID)
    return;
  GError *error = NULL;
  s->stage = hy_executor_frame_stage_new (s->exec, s->plan,
      (int) s->shape.dims[0], &error);
  if (s->stage)
    return;
  s->stage_failed = TRUE;
  if (!s->noted) {
    s->noted = TRUE;
    s->note = g_strdup_printf ("frames are converted on the CPU and "
        "uploaded as floats: the GPU frame path cannot be used (%s)",
        error->message);
  }
  g_error_free (error);
}

static hy_frame_plan *
plan_frames (const GstHybridSession *s, const GstHybridPrep *p,
    hy_pixel_layout layout, int width, int height, float yuv_kr,
    float yuv_kb, bool yuv_full_range, GError **error)
{
  int channels = (int) s->shape.dims[1];
  hy_frame_config pc = {
    .layout = layout,
    .src_width = width,
    .src_height = height,
    .dst_width = (int) s->shape.dims[3],
    .dst_height = (int) s->shape.dims[2],
    .dst_channels = channels,
    .bgr = p->bgr,
    .resize = p->resize,
    .interpolation = p->interpolation,
    .scale = p->scale,
    .yuv_kr = yuv_kr,
    .yuv_kb = yuv_kb,
    .yuv_full_range = yuv_full_range,
  };
  if (!check_values ("mean", p->n_mean, channels, error)
      || !check_values ("std", p->n_std, channels, error))
    return NULL;
  for (int i = 0; i < 3; i++) {
    pc.mean[i] = channel_value (p->mean, p->n_mean, MIN (i, channels - 1),
        0.0f);
    pc.std[i] = channel_value (p->std, p->n_std, MIN (i, channels - 1),
        1.0f);
  }
  return hy_frame_plan_new (&pc, error);
}

hy_frame_plan *
gst_hybrid_session_plan_frames (const GstHybridSession *s,
    const GstHybridPrep *prep, hy_pixel_layout layout, int width, int height,
    float yuv_kr, float yuv_kb, bool yuv_full_range, GError **error)
{
  if (s->follow_frame || s->shape.ndim != 4) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID, "input-size=frame: "
        "the input follows the frames; it has no one size for other "
        "pictures");
    return NULL;
  }
  return plan_frames (s, prep ? prep : &s->prep, layout, width, height,
      yuv_kr, yuv_kb, yuv_full_range, error);
}


gboolean
gst_hybrid_session_set_frame (GstHybridSession *s, hy_pixel_layout layout,
    int width, int height, float yuv_kr, float yuv_kb, bool yuv_full_range,
    GError **error)
{
  if (s->follow_frame && !plan_input (s, width, height, error))
    return FALSE;
  hy_frame_plan *plan = plan_frames (s, &s->prep, layout, width, height,
      yuv_kr, yuv_kb, yuv_full_range, error);
  if (!plan)
    return FALSE;
  hy_frame_plan_free (s->plan);
  s->plan = plan;
  /* A new frame plan: the stage is made again for it, and what slots
   * held belongs to the old one. */
  g_clear_pointer (&s->stage, hy_frame_stage_free);
  s->stage_failed = FALSE;
  memset (s->staged, 0, (size_t) s->shape.dims[0] * sizeof *s->staged);
  s->batch_input = BATCH_UNDECIDED;
  ensure_stage (s);
  return TRUE;
}

gboolean
gst_hybrid_session_has_frame (const GstHybridSession *s)
{
  return s->plan != NULL && s->input != NULL;
}

const char *
gst_hybrid_session_qdq_note (const GstHybridSession *s)
{
  return s->qdq_note;
}

char *
gst_hybrid_session_take_note (GstHybridSession *s)
{
  char *note = s->note;
  s->note = NULL;
  return note;
}

/* Whether the batch starting now goes to the model quantized: hybrid
 * mode asked for and in force (no switch pending, which would free the
 * plan), on the CPU, and a model input that a calibrated quantize_v2
 * alone reads as bytes.  Anything else, including a plan that cannot be
 * made yet (the forward reports that), takes floats. */
static gboolean
quantizes_batch (GstHybridSession *s, hy_mode mode)
{
  if (mode != HY_MODE_HYBRID || s->stage
      || hy_executor_mode (s->exec) != HY_MODE_HYBRID)
    return FALSE;
  GError *error = NULL;
  gboolean ok = hy_executor_input_quantization (s->exec, 0, &s->quantized,
      &error);
  g_clear_error (&error);
  return ok;
}

void
gst_hybrid_session_begin_batch (GstHybridSession *s, hy_mode mode)
{
  s->batch_input = quantizes_batch (s, mode) ? BATCH_QUANTIZED
      : BATCH_FLOAT;
}

void
gst_hybrid_session_load_with (GstHybridSession *s, const hy_frame_plan *plan,
    int slot, const uint8_t *const planes[3], const int strides[3])
{
  gint64 per_slot = hy_shape_numel (&s->shape) / s->shape.dims[0];
  s->staged[slot] = FALSE;
  if (s->batch_input == BATCH_QUANTIZED)
    hy_frame_plan_convert_quantized (plan, planes, strides, &s->quantized,
        (uint8_t *) s->quantized.data + slot * per_slot);
  else
    hy_frame_plan_convert (plan, planes, strides,
        s->input->data + (gint64) slot * per_slot);
}

gboolean
gst_hybrid_session_load (GstHybridSession *s, int slot, hy_mode mode,
    const uint8_t *const planes[3], const int strides[3])
{
  gint64 per_slot = hy_shape_numel (&s->shape) / s->shape.dims[0];
  ensure_stage (s);
  s->staged[slot] = FALSE;
  if (s->batch_input == BATCH_UNDECIDED)
    gst_hybrid_session_begin_batch (s, mode);
  if (s->batch_input == BATCH_QUANTIZED) {
    hy_frame_plan_convert_quantized (s->plan, planes, strides, &s->quantized,
        (uint8_t *) s->quantized.data + slot * per_slot);
    return TRUE;
  }
  if (s->stage && hy_executor_mode (s->exec) == HY_MODE_HYBRID) {
    GError *error = NULL;
    if (hy_frame_stage_load (s->stage, slot, planes, strides, &error))
      s->staged[slot] = TRUE;
    else if (!s->load_error)
      s->load_error = error;    /* the forward fails with it */
    else
      g_error_free (error);
    return FALSE;
  }
  hy_frame_plan_convert (s->plan, planes, strides,
      s->input->data + (gint64) slot * per_slot);
  return FALSE;
}

/* TRUE when the forward can read the device input as the stage left it:
 * every slot was staged (partial batches included: a slot not loaded this
 * time holds a frame whose result nobody reads). */
static gboolean
all_staged (const GstHybridSession *s)
{
  if (!s->stage)
    return FALSE;
  for (int i = 0; i < s->shape.dims[0]; i++)
    if (!s->staged[i])
      return FALSE;
  return TRUE;
}

/* Copies the staged slots back into the host input, for a forward that
 * reads it: imperative mode, or a batch loaded partly on the CPU.  Runs
 * while the executor is still in hybrid mode, whose plan holds the device
 * input (leaving the mode frees it).  Only on a mode switch: steady
 * states never come here. */
static gboolean
unstage (GstHybridSession *s, GError **error)
{
  gint64 per_slot = hy_shape_numel (&s->shape) / s->shape.dims[0];
  for (int i = 0; i < s->shape.dims[0]; i++) {
    if (!s->staged[i])
      continue;
    s->staged[i] = FALSE;
    if (!hy_frame_stage_download (s->stage, i, s->input->data + i * per_slot,
            error))
      return FALSE;
  }
  return TRUE;
}

gboolean
gst_hybrid_session_forward (GstHybridSession *s, hy_mode mode,
    const char *dump_dir, GError **dump_error, GError **error)
{
  const hy_tensor *inputs[1] = { s->input };
  const gboolean quantized = s->batch_input == BATCH_QUANTIZED;
  s->batch_input = BATCH_UNDECIDED;
  if (quantized)
    return hy_executor_forward_quantized (s->exec, inputs, 1, error);
  if (s->load_error) {
    memset (s->staged, 0, (size_t) s->shape.dims[0] * sizeof *s->staged);
    g_propagate_error (error, s->load_error);
    s->load_error = NULL;
    return FALSE;
  }
  gboolean staged = mode == HY_MODE_HYBRID && all_staged (s);
  if (!staged && !unstage (s, error))
    return FALSE;
  if (hy_executor_mode (s->exec) != mode) {
    /* The stage writes into the plan the mode switch frees: it is made
     * again when the executor is back in hybrid mode. */
    g_clear_pointer (&s->stage, hy_frame_stage_free);
    if (!hy_executor_set_mode (s->exec, mode, error))
      return FALSE;
  }
  hy_dump *dump = NULL;
  if (dump_dir && mode == HY_MODE_IMPERATIVE) {
    dump = hy_dump_new (dump_dir, dump_error);
    if (dump)
      hy_dump_attach (dump, s->exec);
  }
  gboolean ok = staged ? hy_executor_forward_staged (s->exec, error)
      : hy_executor_forward (s->exec, inputs, 1, error);
  if (dump) {
    hy_executor_set_node_hook (s->exec, NULL, NULL);
    if (ok)
      hy_dump_finish (dump, dump_error);
    hy_dump_free (dump);
  }
  return ok;
}

/* The pool results come from: made for the first frame and again when a
 * re-plan (new input size) changed the output shapes. */
static GstHybridResultPool *
result_pool (GstHybridSession *s)
{
  gint64 batch = s->shape.dims[0];
  if (s->pool && gst_hybrid_result_pool_fits (s->pool, s->exec, batch))
    return s->pool;
  if (s->pool)
    gst_hybrid_result_pool_close (s->pool);
  s->pool = gst_hybrid_decoder_pool_new (s->decoder, s->exec, s->model,
      batch, (const gchar * const *) s->labels, s->n_labels);
  return s->pool;
}

GstHybridResult *
gst_hybrid_session_result (GstHybridSession *s, int slot,
    const hy_frame_plan *plan, const GstHybridResultFrame *frame,
    guint top_k, gfloat threshold, const hyg_class_thresholds *class_thresholds,
    gboolean *grew)
{
  GstHybridResultSpec spec = {
    .decoder = s->decoder,
    .activation = s->activation,
    .top_k = top_k,
    .threshold = threshold,
    .iou_threshold = s->iou_threshold,
    .class_thresholds = class_thresholds,
    .plan = plan ? plan : s->plan,
    .origin_x = frame->origin_x,
    .origin_y = frame->origin_y,
  };
  GstHybridResultFrame details = *frame;
  details.mode = hy_executor_mode (s->exec);
  GstHybridResultPool *pool = result_pool (s);
  guint blocks = gst_hybrid_result_pool_n_blocks (pool);
  GstHybridResult *result = gst_hybrid_result_new (pool, s->exec, slot,
      &details, &spec);
  *grew = gst_hybrid_result_pool_n_blocks (pool) != blocks;
  return result;
}

const char *const *
gst_hybrid_session_labels (const GstHybridSession *s, guint *n_labels)
{
  *n_labels = s->labels ? s->n_labels : 0;
  return (const char *const *) s->labels;
}

gboolean
gst_hybrid_session_labels_mismatch (const GstHybridSession *s,
    guint *n_labels, gint64 *n_classes)
{
  if (!s->labels || !s->decoder || s->n_classes < 0)
    return FALSE;
  *n_labels = s->n_labels;
  *n_classes = s->n_classes;
  return *n_classes != (gint64) *n_labels;
}

hy_device
gst_hybrid_session_device (const GstHybridSession *s)
{
  return s->device;
}

guint
gst_hybrid_session_sidecar_scores (const GstHybridSession *s, guint *top_k,
    gfloat *threshold)
{
  *top_k = s->sidecar_top_k;
  *threshold = s->sidecar_threshold;
  return s->sidecar_scores;
}

gboolean
gst_hybrid_session_follows_frame (const GstHybridSession *s)
{
  return s->follow_frame;
}

int
gst_hybrid_session_batch (const GstHybridSession *s)
{
  return (int) s->shape.dims[0];
}

gint64
gst_hybrid_session_arena_bytes (const GstHybridSession *s)
{
  hy_memory_stats m;
  if (!hy_executor_memory (s->exec, &m))
    return 0;
  return m.arena_bytes;
}
