/*
 * gsthybridresult.h — what one inferred frame produced: the heads
 * (copied), the interpretation asked for by `output` (top-k classes or
 * detection boxes; decode.h) and the "hybridinfer" structure that the bus
 * message and the meta carry.
 *
 * A result is immutable while anyone holds it and shared by reference: by
 * the tensor meta of every buffer that carries it and by the element (for
 * interval).  Results live in blocks of a GstHybridResultPool
 * (result-pool.h), to which the last reference returns them.
 */
#ifndef GST_HYBRID_RESULT_H
#define GST_HYBRID_RESULT_H

#include <gst/gst.h>

#include "gsthybridmeta.h"

G_BEGIN_DECLS

/* A detection box in frame pixels (clamped to the frame). */
typedef struct _GstHybridDetection {
  gint class_id;
  gfloat score;
  gfloat x, y, w, h;
  const gchar *label;           /* the pool's or the block's: lives as long
                                 * as the result (copy it to keep it) */
  guint row;                    /* the model's row it came from */
  /* Instance segmentation (decode-masks.c): the object's mask pasted into
   * the frame, mask_w x mask_h bytes (1 inside, 0 outside) at
   * result->masks + mask_at, whose top-left is frame pixel (mask_x,
   * mask_y); mask_w = mask_h = 0 when there is none. */
  gint mask_x, mask_y, mask_w, mask_h;
  gsize mask_at;
} GstHybridDetection;

typedef struct _GstHybridResultPool GstHybridResultPool;

/* "class-" and a gint, and the NUL */
#define GST_HYBRID_LABEL_SLOT 24

struct _GstHybridResult {
  guint64 frame_number;
  guint n_tensors;
  GstHybridTensor *tensors;
  GstStructure *results;
  guint n_detections;
  GstHybridDetection *detections;
  guint32 *class_pixels;        /* segmentation: pixels per class */
  gchar (*label_slots)[GST_HYBRID_LABEL_SLOT];  /* result-pool.h */
  guint8 *masks;                /* instance masks' bytes (GstHybridDetection) */
  gsize masks_size, masks_capacity;     /* grown, never shrunk: a refill
                                         * allocates nothing once big enough */
  gpointer mask_scratch;        /* resampling tables, grown the same way */
  gsize mask_scratch_capacity;

  /*< private >*/
  gint refcount;                /* atomic */
  GstHybridResultPool *pool;    /* holds a reference on it */
  GstHybridResult *next_free;   /* in the pool's free list */
};

GstHybridResult *gst_hybrid_result_ref (GstHybridResult * result);
void gst_hybrid_result_unref (GstHybridResult * result);

/* Detection i's parameter structure for its GstVideoRegionOfInterestMeta
 * ("detection", label, class-id, confidence): a new structure, one
 * allocation (a copy of a template with its fields in place). */
GstStructure *gst_hybrid_result_detection_param (const GstHybridResult *
    result, guint i);

/* Detection i's "mask" parameter (decode-masks.c: x, y, width, height in
 * frame pixels, data: width x height bytes), or NULL when it has none. */
GstStructure *gst_hybrid_result_mask_param (const GstHybridResult * result,
    guint i);

G_END_DECLS
#endif /* GST_HYBRID_RESULT_H */
