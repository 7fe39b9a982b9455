/*
 * infer-session.h — hybridinfer's runtime state, from start() to stop():
 * the model, its executor, the preallocated input tensor, the frame plan
 * (preprocess.h) and how outputs are read (gsthybridresult.h).
 *
 * The element owns settings and GStreamer plumbing; the session owns
 * everything that costs memory or time to make, so that the per-frame
 * path only fills a batch slot and runs a forward.  Errors are HY_ERROR
 * GErrors carrying the core's message (the element maps their codes onto
 * GStreamer error domains).
 */
#ifndef HY_INFER_SESSION_H
#define HY_INFER_SESSION_H

#include "gsthybridresult.h"
#include "hybrid.h"
#include "preprocess.h"

G_BEGIN_DECLS

/* input_width/height: a size, or one of these. */
#define HY_SESSION_SIZE_FROM_MODEL 0    /* __shape__, else 224x224 */
#define HY_SESSION_SIZE_FROM_FRAME (-1) /* follow the caps: re-plan on change */

typedef struct hy_session_config {
  const char *model_path;
  const char *params_path;      /* NULL: newest beside the model */
  const char *labels_path;      /* NULL: none */
  const char *device;           /* auto, cpu, cuda, cuda:N */
  hy_precision precision;
  hy_mode mode;
  const char *input_name;       /* NULL: the model's only input */
  int input_width, input_height;
  int batch;
  GstHybridOutput output;
  /* pre-processing: the rest of hy_preprocess_config comes from caps */
  bool bgr;
  hy_resize_mode resize;
  hy_interpolation interpolation;
  float scale;
  const double *mean, *std;     /* n_mean / n_std values: 1 or channels */
  int n_mean, n_std;            /* 0: mean 0, std 1 */
} hy_session_config;

typedef struct hy_session hy_session;

/* Loads the model and labels, opens the device and, unless the input size
 * follows the frame, plans for the input.  *device_note (free it) says
 * which device "auto" chose and why, when it did. */
hy_session *hy_session_new (const hy_session_config *config,
    char **device_note, GError **error);
void hy_session_free (hy_session *session);

/* The frame format: builds the frame plan and, when the input follows the
 * frame, re-plans the model (once per new size: plans are cached).  On a
 * CUDA device the GPU frame path is made for it too (see
 * hy_session_load). */
gboolean hy_session_set_frame (hy_session *session, hy_pixel_layout layout,
    int width, int height, float yuv_kr, float yuv_kb, bool yuv_full_range,
    GError **error);
gboolean hy_session_has_frame (const hy_session *session);

/* Writes a frame into batch slot `slot`.  Allocates nothing.  On a CUDA
 * device in hybrid mode the frame's bytes are uploaded and converted on
 * the GPU (kernels/cuda/frame-stage.h), asynchronously: a failure there
 * is returned by the next hy_session_forward.  Elsewhere, or when that
 * path could not be made, the frame is converted on the CPU. */
void hy_session_load (hy_session *session, int slot,
    const uint8_t *const planes[3], const int strides[3]);

/* A slower path the session fell back to (the GPU frame path could not be
 * made), for the log, or NULL; free it.  Said once per session; ask after
 * hy_session_set_frame and hy_session_load. */
char *hy_session_take_note (hy_session *session);

/* Runs one forward over the whole batch in `mode` (switching the executor
 * if needed); a batch staged on the GPU in hybrid mode runs without an
 * upload.  dump_dir non-NULL (imperative mode): every layer's output
 * is written there; a dump that fails is reported in *dump_error and does
 * not fail the forward. */
gboolean hy_session_forward (hy_session *session, hy_mode mode,
    const char *dump_dir, GError **dump_error, GError **error);

/* Everything needed to read the outputs of the last forward. */
const hy_executor *hy_session_executor (const hy_session *session);
const hy_model *hy_session_model (const hy_session *session);
GstHybridOutput hy_session_output (const hy_session *session);
const hy_preprocess *hy_session_preprocess (const hy_session *session);
const char *const *hy_session_labels (const hy_session *session,
    guint *n_labels);
int hy_session_batch (const hy_session *session);
/* The device the session runs on ("auto" resolved). */
hy_device hy_session_device (const hy_session *session);
/* The input shape (B, C, H, W); ndim -1 before the frame size is known
 * when it follows the frame. */
hy_shape hy_session_input_shape (const hy_session *session);
/* Arena of the hybrid plan for the current shape; 0 in imperative mode. */
gint64 hy_session_arena_bytes (const hy_session *session);

G_END_DECLS
#endif /* HY_INFER_SESSION_H */
