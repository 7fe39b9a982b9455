/*
 * decode.h — what an output kind is (GstHybridDecoder: one per
 * decode-NICK.c, listed in decoders.def), what its decoder reads besides
 * the outputs, and a frame's result: its tensors copied, the frame's
 * fields, then the decoder's, in a block of a result pool (result-pool.h)
 * so that a frame allocates nothing.
 */
#ifndef GST_HYBRID_DECODE_H
#define GST_HYBRID_DECODE_H

#include <gst/gst.h>

#include "gsthybridresult.h"
#include "hybrid.h"
#include "hybrid-frame.h"
#include "hybrid-sidecar.h"
#include "property-parse.h"

G_BEGIN_DECLS

#define GST_HYBRID_MAX_TOP_K 1000

/* What turns a classification's scores into the ones reported. */
typedef enum {
  GST_HYBRID_ACTIVATION_AUTO,   /* softmax unless the model applies one */
  GST_HYBRID_ACTIVATION_NONE,   /* the model's own values */
  GST_HYBRID_ACTIVATION_SOFTMAX,
  GST_HYBRID_ACTIVATION_SIGMOID,
} GstHybridActivation;

typedef struct _GstHybridDecoder GstHybridDecoder;

/* What the interpretation needs besides the outputs. */
typedef struct _GstHybridResultSpec {
  const GstHybridDecoder *decoder;      /* the kind resolved: never auto */
  GstHybridActivation activation;       /* resolved: never AUTO */
  guint top_k;
  gfloat threshold;
  gfloat iou_threshold;         /* NMS of the heads that need one */
  /* class-thresholds: a class's own threshold instead of `threshold`
   * (detection), or one its top-k score must reach (classification);
   * NULL: none */
  const hyg_class_thresholds *class_thresholds;
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

/* An output kind: what `output=NICK` reads the heads as.  A row of the
 * table (decoders.def: its place there is its `output` value), defined in
 * its own decode-NICK.c; the rest of the element reads only this.  The
 * session asks fits and claims, once per plan (infer-session.c); a pool
 * asks block, once per model output shapes; a frame asks decode. */
struct _GstHybridDecoder {
  /* `output`'s nick, and the "type" of the results; gst-inspect's line */
  const gchar *nick;
  const gchar *description;
  /* The sidecar's "output" value that names this kind; AUTO (left out):
   * no sidecar names it. */
  hy_sidecar_output sidecar;

  /* Whether heads of these shapes (the first dimension the batch, B) can
   * be read as this kind when `output` asks for it; NULL: any heads.
   * fits_needs says what fits wants, for the error when they do not. */
  gboolean (*fits) (const hy_shape * shapes, guint n_heads, gint64 batch);
  const gchar *fits_needs;
  /* output=auto: whether these heads are this kind's (the kinds that
   * claim are disjoint; the first in the table wins); NULL: auto picks it
   * only as the fallback, when no kind claims the heads. */
  gboolean (*claims) (const hy_shape * shapes, guint n_heads, gint64 batch);
  gboolean fallback;
  /* The first head is one score per class: output-activation=auto makes
   * them probabilities (a softmax unless the model applies one; any other
   * kind: the model's own values), and a labels file of another length is
   * warned about. */
  gboolean class_scores;
  /* How many classes the heads score, which is how many labels the
   * labels file should have (a file of another length is warned about);
   * -1 when these heads say nothing of it.  NULL: the kind's class count
   * is not in its heads' shapes (a detector's class ids are values). */
  gint64 (*classes_of) (const hy_shape * shapes, guint n_heads,
      gint64 batch);
  /* When the heads' shapes do not say it (classes_of NULL): the class
   * count read from the graph that makes the heads, for the executor's
   * input shapes (`running`); -1 when the graph does not show it.  NULL:
   * not looked for. */
  gint64 (*classes_in_graph) (const hy_model * model,
      const hy_shapes * running);

  /* Once per process, before any result: makes the names of the fields
   * only this kind writes (result-fields.h has the shared ones). */
  void (*fields) (void);
  /* Once per result pool: the room each block needs beyond the heads
   * (result-pool.h: tensors it derives, boxes, counts, label slots) and
   * the kind's own data for decode, from the heads' layout.  NULL: none. */
  void (*block) (GstHybridResultPool * pool, const hy_model * model);
  /* A frame's result: the heads are copied into r->tensors, the frame's
   * fields and "type" set; the kind's fields follow. */
  void (*decode) (GstHybridResult * r, const GstHybridResultSpec * spec);
};

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

/* A pool of result blocks for `decoder`'s results of the executor's
 * current outputs (batch `batch`), labelled with `labels` (copied).  The
 * caller owns it until gst_hybrid_result_pool_close(). */
GstHybridResultPool *gst_hybrid_decoder_pool_new (const GstHybridDecoder *
    decoder, const hy_executor * exec, const hy_model * model, gint64 batch,
    const gchar * const *labels, guint n_labels);

/* The result of batch slot `slot` from the executor's current outputs, in
 * a block from `pool` (made for spec->decoder; a new block only when none
 * is free).  Allocates nothing when a block is free and holds the same
 * kind of result as before (the same number of top-k classes or boxes;
 * GStreamer cannot shrink an array in place, so fewer boxes than the
 * block's last result rebuild its arrays). */
GstHybridResult *gst_hybrid_result_new (GstHybridResultPool * pool,
    const hy_executor * exec, gint64 slot, const GstHybridResultFrame * frame,
    const GstHybridResultSpec * spec);

G_END_DECLS
#endif /* GST_HYBRID_DECODE_H */
