/*
 * infer-session.h — hybridinfer's runtime state, from start() to stop():
 * the model, its executor, the preallocated input tensor, the frame plan
 * (hybrid-frame.h), the GPU frame stage, and the results: which output
 * kind reads the heads (decoders.h: the session looks at the heads, once
 * per plan) and the pool they are read into (result-pool.h).
 *
 * The element owns settings and GStreamer plumbing; the session owns
 * everything that costs memory or time to make, so that the per-frame
 * path only fills a batch slot, runs a forward and takes a decoded result.
 * Errors are HY_ERROR GErrors carrying the core's message (the element
 * maps their codes onto GStreamer error domains).
 */
#ifndef GST_HYBRID_INFER_SESSION_H
#define GST_HYBRID_INFER_SESSION_H

#include "decoders.h"
#include "hybrid.h"
#include "hybrid-frame.h"
#include "hybrid-quantize.h"

G_BEGIN_DECLS

/* input_width/height: a size, or one of these. */
#define GST_HYBRID_SESSION_SIZE_FROM_MODEL 0    /* __shape__, else 224x224 */
#define GST_HYBRID_SESSION_SIZE_FROM_FRAME (-1) /* follow the caps: re-plan
                                                 * on change */

typedef struct {
  const char *model_path;
  const char *params_path;      /* NULL: newest beside the model */
  const char *labels_path;      /* NULL: labels, else none */
  const char *const *labels;    /* inline (a sidecar's), NULL-terminated */
  const char *device;           /* auto, cpu, cuda, cuda:N */
  hy_precision precision;
  hy_qdq_mode qdq;              /* a QDQ ONNX file: int8 or float */
  hy_mode mode;
  const char *input_name;       /* NULL: the model's only input */
  int input_width, input_height;
  int batch;
  GstHybridOutput output;
  gfloat iou_threshold;         /* NMS, for the decoders that run one */
  GstHybridActivation activation;       /* AUTO: see model_activation */
  /* What the model's last layer applies, as its sidecar says; AUTO when
   * no sidecar says (the graph's head is looked at). */
  GstHybridActivation model_activation;
  /* top_k and threshold from the sidecar: GST_HYBRID_SET_TOP_K and
   * _THRESHOLD bits of the ones it gives */
  guint sidecar_scores;
  guint sidecar_top_k;
  gfloat sidecar_threshold;
  /* pre-processing: the rest of hy_frame_config comes from caps */
  bool bgr;
  hy_resize_mode resize;
  hy_interpolation interpolation;
  float scale;
  const double *mean, *std;     /* n_mean / n_std values: 1 or channels */
  int n_mean, n_std;            /* 0: mean 0, std 1 */
} GstHybridSessionConfig;

typedef struct _GstHybridSession GstHybridSession;

/* How frames become the input: the pre-processing half of the
 * configuration.  A session has its own; an element on a shared engine
 * (infer-engine.h) brings its own to the engine's session. */
typedef struct {
  bool bgr;
  hy_resize_mode resize;
  hy_interpolation interpolation;
  float scale;
  double mean[3], std[3];
  int n_mean, n_std;            /* 0: mean 0, std 1 */
} GstHybridPrep;

/* The pre-processing of `config`, checked: mean and std take 1 or 3
 * values, and every std is a usable divisor. */
gboolean gst_hybrid_prep_from_config (const GstHybridSessionConfig * config,
    GstHybridPrep * prep, GError ** error);

/* Loads the model and labels, opens the device and, unless the input size
 * follows the frame, plans for the input.  *device_note (free it) says
 * which device "auto" chose and why, when it did. */
GstHybridSession *gst_hybrid_session_new (const GstHybridSessionConfig *
    config, char **device_note, GError ** error);
void gst_hybrid_session_free (GstHybridSession * session);

/* The frame format: builds the frame plan and, when the input follows the
 * frame, re-plans the model (once per new size: plans are cached).  On a
 * CUDA device the GPU frame path is made for it too (see
 * gst_hybrid_session_load). */
gboolean gst_hybrid_session_set_frame (GstHybridSession * session,
    hy_pixel_layout layout, int width, int height, float yuv_kr,
    float yuv_kb, bool yuv_full_range, GError ** error);
gboolean gst_hybrid_session_has_frame (const GstHybridSession * session);

/* A frame plan for frames of this format into the session's input, with
 * pre-processing `prep` (an element on a shared engine owns it; NULL: the
 * session's).  FALSE
 * when the input size follows the frame: such a session has no one
 * input size to plan for. */
hy_frame_plan *gst_hybrid_session_plan_frames (const GstHybridSession *
    session, const GstHybridPrep * prep, hy_pixel_layout layout, int width,
    int height, float yuv_kr, float yuv_kb, bool yuv_full_range,
    GError ** error);

/* Decides how the batch starting now reaches the model, for a forward in
 * `mode`: quantized straight into an int8 model's input where it can
 * (see gst_hybrid_session_load), else as floats.  For callers that load
 * slots from several threads (an engine): call it before the first slot
 * is loaded, with nothing else using the session.  The decision lasts
 * until the batch's forward. */
void gst_hybrid_session_begin_batch (GstHybridSession * session,
    hy_mode mode);

/* Converts a frame with `plan` (from gst_hybrid_session_plan_frames) into
 * batch slot `slot`, on the CPU, as the batch was begun
 * (gst_hybrid_session_begin_batch; floats when it was not).  Allocates
 * nothing. */
void gst_hybrid_session_load_with (GstHybridSession * session,
    const hy_frame_plan * plan, int slot, const uint8_t * const planes[3],
    const int strides[3]);

/* Writes a frame into batch slot `slot`, for a forward in `mode`.
 * Allocates nothing.  On a CUDA device in hybrid mode the frame's bytes
 * are uploaded and converted on the GPU (a hy_frame_stage),
 * asynchronously: a failure there is returned by the next
 * gst_hybrid_session_forward.  On the CPU in hybrid mode, an int8 model
 * whose input a quantize_v2 alone reads gets the frame quantized straight
 * into its int8 input, and TRUE is returned: no float input was written
 * (the whole batch goes so, and runs in hybrid mode).  Elsewhere, or when
 * those paths could not be made, the frame is converted on the CPU. */
gboolean gst_hybrid_session_load (GstHybridSession * session, int slot,
    hy_mode mode, const uint8_t * const planes[3], const int strides[3]);

/* A slower path the session fell back to (the GPU frame path could not be
 * made), for the log, or NULL; free it.  Said once per session; ask after
 * gst_hybrid_session_set_frame and gst_hybrid_session_load. */
char *gst_hybrid_session_take_note (GstHybridSession * session);

/* What became of a QDQ ONNX file (its int8 layers, or why it runs in
 * float), or NULL for any other model. */
const char *gst_hybrid_session_qdq_note (const GstHybridSession *
    session);

/* Runs one forward over the whole batch in `mode` (switching the executor
 * if needed); a batch staged on the GPU in hybrid mode runs without an
 * upload; a batch loaded quantized runs in hybrid mode, its quantize node
 * skipped.  dump_dir non-NULL (imperative mode): every layer's output
 * is written there; a dump that fails is reported in *dump_error and does
 * not fail the forward. */
gboolean gst_hybrid_session_forward (GstHybridSession * session, hy_mode mode,
    const char *dump_dir, GError ** dump_error, GError ** error);

/* The decoded result of batch slot `slot` of the last forward (frame:
 * everything but the mode, which the session fills in), in a block of the
 * session's result pool: made at the first result, and again when a
 * re-plan changed the output shapes.  plan: the frame plan the slot's
 * frame went through (boxes are mapped back with it); NULL: the
 * session's.  class_thresholds: NULL for none.  *grew: the pool needed
 * one more block (every block held).  Allocates nothing in the steady state. */
GstHybridResult *gst_hybrid_session_result (GstHybridSession * session,
    int slot, const hy_frame_plan * plan, const GstHybridResultFrame * frame,
    guint top_k, gfloat threshold,
    const hyg_class_thresholds * class_thresholds, gboolean * grew);

/* The labels (NULL: none) the results are labelled with, *n_labels of
 * them: what class-thresholds looks class names up in. */
const char *const *gst_hybrid_session_labels (const GstHybridSession *
    session, guint * n_labels);

/* TRUE when a labels file was given, the output kind's heads say how
 * many classes they score (a classification's scores, a segmentation's
 * channels: GstHybridDecoder.classes_of) and the label count (*n_labels)
 * is not that class count (*n_classes). */
gboolean gst_hybrid_session_labels_mismatch (const GstHybridSession *
    session,
    guint * n_labels, gint64 * n_classes);

int gst_hybrid_session_batch (const GstHybridSession * session);
/* The device the session runs on ("auto" resolved). */
hy_device gst_hybrid_session_device (const GstHybridSession * session);
/* The input size input-size's default (GST_HYBRID_SESSION_SIZE_FROM_MODEL)
 * picks on this session's model: its __shape__, else 224x224. */
void gst_hybrid_session_default_input_size (const GstHybridSession *
    session, int *width, int *height);
/* TRUE when the input size follows the frame (input-size=frame). */
gboolean gst_hybrid_session_follows_frame (const GstHybridSession * session);
/* The top_k and threshold the model's sidecar gives: the
 * GstHybridSessionConfig.sidecar_scores bits of those it gives. */
guint gst_hybrid_session_sidecar_scores (const GstHybridSession * session,
    guint * top_k, gfloat * threshold);
/* Arena of the hybrid plan for the current shape; 0 in imperative mode. */
gint64 gst_hybrid_session_arena_bytes (const GstHybridSession * session);

G_END_DECLS
#endif /* GST_HYBRID_INFER_SESSION_H */
