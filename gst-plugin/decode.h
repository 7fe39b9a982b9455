/*
 * decode.h — reading a forward's outputs into a result: which
 * interpretation `output` asks for, the result of one batch slot (its
 * tensors copied, the frame's fields, then the interpretation: top-k
 * classes, detection boxes, or the raw heads), written into a block of a
 * result pool (result-pool.h) so that a frame allocates nothing.
 */
#ifndef GST_HYBRID_DECODE_H
#define GST_HYBRID_DECODE_H

#include <gst/gst.h>

#include "gsthybridresult.h"
#include "hybrid.h"
#include "hybrid-frame.h"
#include "property-parse.h"

G_BEGIN_DECLS

typedef enum {
  GST_HYBRID_OUTPUT_AUTO,
  GST_HYBRID_OUTPUT_CLASSIFICATION,
  GST_HYBRID_OUTPUT_DETECTION,
  GST_HYBRID_OUTPUT_RAW,
  GST_HYBRID_OUTPUT_SEGMENTATION,
  GST_HYBRID_OUTPUT_POSE,
} GstHybridOutput;

/* The derived tensor a segmentation result adds after the heads: the
 * class of every pixel of the first head's map, (1, H, W), as floats (ids
 * as MXNet gives them). */
#define GST_HYBRID_CLASS_MAP_NAME "class-map"

#define GST_HYBRID_MAX_TOP_K 1000

/* What turns a classification's scores into the ones reported. */
typedef enum {
  GST_HYBRID_ACTIVATION_AUTO,   /* softmax unless the model applies one */
  GST_HYBRID_ACTIVATION_NONE,   /* the model's own values */
  GST_HYBRID_ACTIVATION_SOFTMAX,
  GST_HYBRID_ACTIVATION_SIGMOID,
} GstHybridActivation;

/* What the interpretation needs besides the outputs. */
typedef struct _GstHybridResultSpec {
  GstHybridOutput output;       /* resolved: never AUTO */
  GstHybridActivation activation;       /* resolved: never AUTO */
  guint top_k;
  gfloat threshold;
  /* class-thresholds: a class's own threshold instead of `threshold`
   * (detection), or one its top-k score must reach (classification);
   * NULL: none */
  const hyg_class_thresholds *class_thresholds;
  const gchar *const *labels;   /* may be NULL */
  guint n_labels;
  const hy_frame_plan *plan;    /* maps boxes back to the frame */
  gfloat origin_x, origin_y;    /* where the plan's picture lies in the
                                 * buffer's frame (a region's corner) */
} GstHybridResultSpec;

/* A point in model-input pixels, in the buffer's frame: through the plan,
 * then to the picture's place in the frame. */
static inline void
gst_hybrid_spec_to_frame (const GstHybridResultSpec * spec, gfloat x,
    gfloat y, gfloat * frame_x, gfloat * frame_y)
{
  hy_frame_plan_to_frame (spec->plan, x, y, frame_x, frame_y);
  *frame_x += spec->origin_x;
  *frame_y += spec->origin_y;
}

/* The frame's details, the first fields of the "hybridinfer" structure. */
typedef struct _GstHybridResultFrame {
  guint64 frame_number;
  GstClockTime timestamp;
  GstClockTime running_time;
  gdouble latency_us;
  hy_mode mode;
  /* where the converted picture lies in the buffer's frame: 0, 0 for the
   * whole frame, a region's corner for inference-region=roi */
  gfloat origin_x, origin_y;
} GstHybridResultFrame;

/* Which interpretation `requested` means for heads of these shapes (batch
 * `batch`): AUTO picks detection for one (B, K, 6) head or three heads
 * (B, K, 1) or (B, K), (B, K, 1) or (B, K), (B, K, 4) (and a fourth of masks),
 * classification for one (B, K[, 1, 1])
 * head, raw otherwise.  An explicit kind the heads do not fit is an error
 * naming the shapes. */
gboolean gst_hybrid_output_resolve (GstHybridOutput requested,
    const hy_shape * shapes, guint n_heads, gint64 batch,
    GstHybridOutput * resolved, GError ** error);

const gchar *gst_hybrid_output_name (GstHybridOutput output);

/* The result of batch slot `slot` from the executor's current outputs, in
 * a block from `pool` (a new one only when none is free).  Allocates
 * nothing when a block is free and holds the same kind of result as
 * before (the same number of top-k classes or boxes; GStreamer cannot
 * shrink an array in place, so fewer boxes than the block's last result
 * rebuild its arrays). */
GstHybridResult *gst_hybrid_result_new (GstHybridResultPool * pool,
    const hy_executor * exec, gint64 slot, const GstHybridResultFrame * frame,
    const GstHybridResultSpec * spec);

/* ---- the interpretations, for decode.c ---------------------------------- */

/* Whether the first head comes straight from a _contrib_MultiBoxDetection
 * (MXNet's symbol-API SSD): its rows are [class_id, score, x1, y1, x2, y2]
 * as in the one-head layout, but the corners are fractions of the model
 * input, not input pixels.  Asked once per result pool. */
gboolean gst_hybrid_detection_boxes_normalized (const hy_model * model);

void gst_hybrid_decode_classification (GstHybridResult * r,
    const GstHybridResultSpec * spec);
void gst_hybrid_decode_detection (GstHybridResult * r,
    const GstHybridResultSpec * spec);
void gst_hybrid_decode_raw (GstHybridResult * r);
void gst_hybrid_decode_segmentation (GstHybridResult * r,
    const GstHybridResultSpec * spec);
void gst_hybrid_decode_pose (GstHybridResult * r,
    const GstHybridResultSpec * spec);

/* Mask R-CNN (decode-masks.c): whether heads 0-2 are a detection's and
 * head 3 is (B, K, M, M), a mask per row; then each kept detection's mask
 * pasted into the frame, after gst_hybrid_decode_detection. */
gboolean gst_hybrid_masks_head_fits (const hy_shape * shapes, guint n_heads,
    gint64 batch);
void gst_hybrid_decode_masks (GstHybridResult * r,
    const GstHybridResultSpec * spec);

G_END_DECLS
#endif /* GST_HYBRID_DECODE_H */
