/*
 * detection.h — params of the detection ops (ops.def: box_nms, box_decode),
 * shared by their definitions (core/ops/detection.c) and their CPU kernels
 * (kernels/cpu/box-nms.c, box-decode.c).
 *
 * Box encodings are MXNet's: "corner" is (xmin, ymin, xmax, ymax),
 * "center" is (x, y, width, height).
 */
#ifndef HY_PARAMS_DETECTION_H
#define HY_PARAMS_DETECTION_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/hy-ops.h"

typedef enum hy_box_format {
  HY_BOX_CORNER = 0,
  HY_BOX_CENTER = 1,
} hy_box_format;

/* _contrib_box_nms over rows of width `width` (the input's last axis):
 * per batch (all leading axes but the last two), rows with score >
 * valid_thresh (and, with id_index >= 0, class id != background_id) are
 * ordered by descending score, ties kept in input order; the first topk
 * of them suppress later ones of IoU > overlap_thresh (same class only,
 * unless force_suppress or id_index < 0).  Survivors are written first,
 * the rest of the rows are -1.  The indices were checked against the
 * input's width by shape inference. */
typedef struct hy_box_nms_params {
  hy_op_id op;
  float overlap_thresh;
  float valid_thresh;
  int topk;                     /* < 0: every row */
  int coord_start;
  int score_index;
  int id_index;                 /* < 0: no class ids */
  int background_id;
  bool force_suppress;
  hy_box_format in_format;
  hy_box_format out_format;
} hy_box_nms_params;

/* _contrib_box_decode: data (B, N, 4) of encoded offsets, anchors
 * (1, N, 4) in `format`; out (B, N, 4) corner boxes:
 *   x = dx·std0·aw + ax, w = exp(min(dw·std2, clip))·aw (clip > 0 only),
 * and likewise for y and h. */
typedef struct hy_box_decode_params {
  hy_op_id op;
  float std[4];
  float clip;                   /* <= 0: no clipping */
  hy_box_format format;         /* of the anchors */
} hy_box_decode_params;

#endif /* HY_PARAMS_DETECTION_H */
