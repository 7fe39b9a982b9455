/*
 * gsthybridresult.h — what one inferred frame produced, read out of the
 * executor's outputs: the heads (copied), the interpretation asked for by
 * `output` (top-k classes or detection boxes) and the "hybridinfer"
 * structure that the bus message and the meta carry.
 *
 * A result is immutable once built and shared by reference: by the tensor
 * meta of every buffer that carries it and by the element (for interval).
 */
#ifndef GST_HYBRID_RESULT_H
#define GST_HYBRID_RESULT_H

#include <gst/gst.h>

#include "gsthybridmeta.h"
#include "hybrid.h"
#include "preprocess.h"

G_BEGIN_DECLS

typedef enum {
  GST_HYBRID_OUTPUT_AUTO,
  GST_HYBRID_OUTPUT_CLASSIFICATION,
  GST_HYBRID_OUTPUT_DETECTION,
  GST_HYBRID_OUTPUT_RAW,
} GstHybridOutput;

/* A detection box in frame pixels (clamped to the frame). */
typedef struct _GstHybridDetection {
  gint class_id;
  gfloat score;
  gfloat x, y, w, h;
  const gchar *label;           /* interned: lives as long as the process */
} GstHybridDetection;

struct _GstHybridResult {
  guint64 frame_number;
  guint n_tensors;
  GstHybridTensor *tensors;
  GstStructure *results;
  guint n_detections;
  GstHybridDetection *detections;
};

/* What the interpretation needs besides the outputs. */
typedef struct _GstHybridResultSpec {
  GstHybridOutput output;       /* resolved: never AUTO */
  guint top_k;
  gfloat threshold;
  const gchar *const *labels;   /* may be NULL */
  guint n_labels;
  const hy_preprocess *pp;      /* maps boxes back to the frame */
} GstHybridResultSpec;

/* Which interpretation `requested` means for heads of these shapes (batch
 * `batch`): AUTO picks detection for one (B, K, 6) head or three heads
 * (B, K, 1), (B, K, 1), (B, K, 4), classification for one (B, K[, 1, 1])
 * head, raw otherwise.  An explicit kind the heads do not fit is an error
 * naming the shapes. */
gboolean gst_hybrid_output_resolve (GstHybridOutput requested,
    const hy_shape * shapes, guint n_heads, gint64 batch,
    GstHybridOutput * resolved, GError ** error);

const gchar *gst_hybrid_output_name (GstHybridOutput output);

/* Builds the result of batch slot `slot` (of `batch`) from the executor's
 * current outputs.  `results` (taken) already holds the frame's details;
 * the interpretation is appended to it. */
GstHybridResult *gst_hybrid_result_new (const hy_executor * exec,
    const hy_model * model, gint64 batch, gint64 slot, guint64 frame_number,
    const GstHybridResultSpec * spec, GstStructure * results);

GstHybridResult *gst_hybrid_result_ref (GstHybridResult * result);
void gst_hybrid_result_unref (GstHybridResult * result);

G_END_DECLS
#endif /* GST_HYBRID_RESULT_H */
