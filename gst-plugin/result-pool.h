/*
 * result-pool.h — where results live: blocks sized once for the model's
 * outputs, each holding a result, its tensors, its detections and its
 * results structure (gsthybridresult.h).  When a result's last reference
 * goes, its block returns to the pool and a later frame refills it in
 * place, so that the steady state allocates nothing for a result; the
 * pool grows only while more results are held (downstream queues,
 * interval) than it has blocks.
 */
#ifndef GST_HYBRID_RESULT_POOL_H
#define GST_HYBRID_RESULT_POOL_H

#include "gsthybridresult.h"
#include "hybrid.h"

G_BEGIN_DECLS

struct _GstHybridResultPool {
  gint refcount;                /* atomic: the owner and every block */
  GMutex lock;                  /* free, closed */
  GstHybridResult *free;
  gboolean closed;
  gint n_blocks;                /* atomic */

  /* what every block looks like */
  gint64 batch;
  const gchar *type;            /* the results' "type" (interned) */
  guint n_heads;                /* the model's outputs */
  guint n_tensors;              /* the heads, then those the kind derives */
  hy_shape *shapes;             /* the executor's outputs (batched) */
  GstHybridTensor *layout;      /* per frame: names, dims, sizes; no data */
  gchar **names;
  gsize n_floats;
  gsize block_size, tensors_at, detections_at, counts_at, slots_at, data_at;

  /* The room the kind's decoder asks for (decode.h, its block), 0 unless
   * it does: */
  guint max_detections;         /* boxes (result->detections) */
  guint n_counts;               /* counters (result->class_pixels) */
  /* "class-N" for a class past the labels: written into each block's
   * slots, one per label a result can hold (its boxes, top classes or
   * keypoints), so that no class id, however large, costs memory that
   * lasts */
  guint n_label_slots;
  /* what its decode reads, made once for the pool, freed with it */
  gpointer decoder_data;
  GDestroyNotify decoder_data_free;

  /* The pool's own strings, freed with it (so with the last result that
   * holds it): set in the results by pointer (hyg_set_pooled), copied by
   * whatever copies a result's structure. */
  gchar **labels;               /* packed (hyg_strv_pack) */
  guint n_labels;
  GstStructure *detection_param;        /* the ROI parameter's template */
};

/* A pool of result blocks for the executor's current output shapes (batch
 * `batch`), whose results say `type` (interned), labelled with `labels`
 * (copied into one block of the pool's).  Then the kind asks for its room
 * (gst_hybrid_result_pool_add_tensor, the room fields above), and
 * gst_hybrid_result_pool_seal lays the blocks out: decode.h's
 * gst_hybrid_decoder_pool_new does all three.  The caller owns it until
 * gst_hybrid_result_pool_close(). */
GstHybridResultPool *gst_hybrid_result_pool_new (const hy_executor * exec,
    const hy_model * model, gint64 batch, const gchar * type,
    const gchar * const *labels, guint n_labels);

/* One more tensor per result, after the heads and those added before it:
 * the caller names it (a string that outlives the pool) and sets its
 * ndim, dims and n_elements (the pointer holds until the next tensor is
 * added).  Before gst_hybrid_result_pool_seal. */
GstHybridTensor *gst_hybrid_result_pool_add_tensor (GstHybridResultPool *
    pool, const gchar * name);

/* Label slots for results that label up to `n` classes at once, of ids
 * below `ids`: none when the pool's labels name every one. */
guint gst_hybrid_result_pool_label_room (const GstHybridResultPool * pool,
    guint64 ids, guint n);

/* The blocks' layout, from the heads and the room asked for: once, before
 * the first block. */
void gst_hybrid_result_pool_seal (GstHybridResultPool * pool);

/* Whether the pool's blocks fit the executor's current outputs (a re-plan
 * for a new input size may change them: then make a new pool). */
gboolean gst_hybrid_result_pool_fits (const GstHybridResultPool * pool,
    const hy_executor * exec, gint64 batch);

/* Blocks made so far: those in use and those free. */
guint gst_hybrid_result_pool_n_blocks (GstHybridResultPool * pool);

/* The owner lets go: free blocks are freed now, blocks in use when their
 * last reference goes (results stay valid as long as they are held). */
void gst_hybrid_result_pool_close (GstHybridResultPool * pool);

/* A free block (a new one only when none is free), with one reference. */
GstHybridResult *gst_hybrid_result_pool_acquire (GstHybridResultPool * pool);
/* Class `id`'s label as the `slot`-th label of result `r` (slot < the
 * pool's n_label_slots: the box, top class or keypoint it labels): the
 * pool's label, or "class-N" past the labels, written into the slot.  It
 * lives as long as the result is not refilled (while it is held). */
const gchar *gst_hybrid_result_label (GstHybridResult * r, guint slot,
    gint id);

G_END_DECLS
#endif /* GST_HYBRID_RESULT_POOL_H */
