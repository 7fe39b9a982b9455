/*
 * decode-masks.h — Mask R-CNN's masks, for the detection decoder: a
 * fourth head (B, K, M, M), a mask per detection row, pasted into the
 * frame after the boxes are read (decode-masks.c).
 */
#ifndef GST_HYBRID_DECODE_MASKS_H
#define GST_HYBRID_DECODE_MASKS_H

#include "decode.h"

G_BEGIN_DECLS

/* Whether heads 0-2 are a detection's and head 3 is (B, K, M, M). */
gboolean gst_hybrid_masks_head_fits (const hy_shape * shapes, guint n_heads,
    gint64 batch);

/* The name of the field the masks go in; with the detection's. */
void gst_hybrid_masks_fields (void);

/* Each kept detection's mask from head `mask_head` pasted into the frame,
 * after the detection's boxes. */
void gst_hybrid_decode_masks (GstHybridResult * r,
    const GstHybridResultSpec * spec, guint mask_head);

G_END_DECLS
#endif /* GST_HYBRID_DECODE_MASKS_H */
