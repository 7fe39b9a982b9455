/*
 * decode-yolov8.h — YOLOv8's detection heads for the detection decoder:
 * one head (B, 4 + classes, N), per anchor a box (cx, cy, w, h) in
 * model-input pixels and a score per class, with no objectness and no
 * NMS in the graph (decode-yolov8.c runs it); or, exported with NMS in
 * the graph (`nms=True`), one head `output0` (B, N, 6) of rows
 * [x1, y1, x2, y2, score, class].
 */
#ifndef GST_HYBRID_DECODE_YOLOV8_H
#define GST_HYBRID_DECODE_YOLOV8_H

#include "decode.h"

G_BEGIN_DECLS

/* Whether the heads are one (B, 4 + classes, N) with at least one class,
 * and not the (B, K, 6) rows the detection decoder reads first. */
gboolean gst_hybrid_yolov8_head_fits (const hy_shape * shapes,
    guint n_heads, gint64 batch);

/* The anchors of one frame's head (4 + n_classes rows of n_anchors) kept
 * by the score threshold (class-thresholds or threshold) and by NMS per
 * class at spec->iou_threshold, best first, written to `out` (room for
 * n_anchors): class_id, score, row (the anchor), and the box's corners in
 * model-input pixels as x, y (top left) and w, h (bottom right).
 * Returns how many. */
guint gst_hybrid_yolov8_decode (const gfloat * head, gint64 n_classes,
    gint64 n_anchors, const GstHybridResultSpec * spec,
    GstHybridDetection * out);

/* Whether the model's one head is Ultralytics' `output0` of rows
 * (B, N, 6) [x1, y1, x2, y2, score, class]: the NMS export's, named so by
 * Ultralytics, where the (B, K, 6) rows of other models are
 * [class, score, x1, y1, x2, y2]. */
gboolean gst_hybrid_yolov8_rows_fit (const hy_model * model,
    const hy_shape * shapes, guint n_heads, gint64 batch);

G_END_DECLS
#endif /* GST_HYBRID_DECODE_YOLOV8_H */
