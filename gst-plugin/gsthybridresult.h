/*
 * gsthybridresult.h — what one inferred frame produced, read out of the
 * executor's outputs: the heads (copied), the interpretation asked for by
 * `output` (top-k classes or detection boxes) and the "hybridinfer"
 * structure that the bus message and the meta carry.
 *
 * A result is immutable while anyone holds it and shared by reference: by
 * the tensor meta of every buffer that carries it and by the element (for
 * interval).  Results come from a GstHybridResultPool: blocks sized once
 * for the model's outputs, each holding its tensors, detections and
 * results structure.  When the last reference goes, the block returns to
 * the pool and the next frame refills it in place, so that the steady
 * state allocates nothing for a result; the pool grows only while more
 * results are held (downstream queues, interval) than it has blocks.
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

typedef struct _GstHybridResultPool GstHybridResultPool;

struct _GstHybridResult {
  guint64 frame_number;
  guint n_tensors;
  GstHybridTensor *tensors;
  GstStructure *results;
  guint n_detections;
  GstHybridDetection *detections;

  /*< private >*/
  gint refcount;                /* atomic */
  GstHybridResultPool *pool;    /* holds a reference on it */
  GstHybridResult *next_free;   /* in the pool's free list */
};

#define GST_HYBRID_MAX_TOP_K 1000

/* What the interpretation needs besides the outputs. */
typedef struct _GstHybridResultSpec {
  GstHybridOutput output;       /* resolved: never AUTO */
  guint top_k;
  gfloat threshold;
  const gchar *const *labels;   /* may be NULL */
  guint n_labels;
  const hy_preprocess *pp;      /* maps boxes back to the frame */
} GstHybridResultSpec;

/* The frame's details, the first fields of the "hybridinfer" structure. */
typedef struct _GstHybridResultFrame {
  guint64 frame_number;
  GstClockTime timestamp;
  GstClockTime running_time;
  gdouble latency_us;
  hy_mode mode;
} GstHybridResultFrame;

/* Which interpretation `requested` means for heads of these shapes (batch
 * `batch`): AUTO picks detection for one (B, K, 6) head or three heads
 * (B, K, 1), (B, K, 1), (B, K, 4), classification for one (B, K[, 1, 1])
 * head, raw otherwise.  An explicit kind the heads do not fit is an error
 * naming the shapes. */
gboolean gst_hybrid_output_resolve (GstHybridOutput requested,
    const hy_shape * shapes, guint n_heads, gint64 batch,
    GstHybridOutput * resolved, GError ** error);

const gchar *gst_hybrid_output_name (GstHybridOutput output);

/* A pool of result blocks for the executor's current output shapes (batch
 * `batch`) read as `spec->output`, labelled with `spec->labels` (copied:
 * interned).  The caller owns it until gst_hybrid_result_pool_close(). */
GstHybridResultPool *gst_hybrid_result_pool_new (const hy_executor * exec,
    const hy_model * model, gint64 batch, const GstHybridResultSpec * spec);

/* Whether the pool's blocks fit the executor's current outputs (a re-plan
 * for a new input size may change them: then make a new pool). */
gboolean gst_hybrid_result_pool_fits (const GstHybridResultPool * pool,
    const hy_executor * exec, gint64 batch);

/* Blocks made so far: those in use and those free. */
guint gst_hybrid_result_pool_n_blocks (GstHybridResultPool * pool);

/* The owner lets go: free blocks are freed now, blocks in use when their
 * last reference goes (results stay valid as long as they are held). */
void gst_hybrid_result_pool_close (GstHybridResultPool * pool);

/* The result of batch slot `slot` from the executor's current outputs, in
 * a block from `pool` (a new one only when none is free).  Allocates
 * nothing when a block is free and holds the same kind of result as
 * before (the same number of top-k classes or boxes; GStreamer cannot
 * shrink an array in place, so fewer boxes than the block's last result
 * rebuild its arrays). */
GstHybridResult *gst_hybrid_result_new (GstHybridResultPool * pool,
    const hy_executor * exec, gint64 slot, const GstHybridResultFrame * frame,
    const GstHybridResultSpec * spec);

GstHybridResult *gst_hybrid_result_ref (GstHybridResult * result);
void gst_hybrid_result_unref (GstHybridResult * result);

/* Detection i's parameter structure for its GstVideoRegionOfInterestMeta
 * ("detection", label, class-id, confidence): a new structure, one
 * allocation (a copy of a template with its fields in place). */
GstStructure *gst_hybrid_result_detection_param (const GstHybridResult *
    result, guint i);

G_END_DECLS
#endif /* GST_HYBRID_RESULT_H */
