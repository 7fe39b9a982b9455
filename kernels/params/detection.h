/*
 * detection.h — params of the detection ops (ops.def: box_nms, box_decode,
 * multibox_prior, multibox_detection), shared by their definitions
 * (core/ops/detection.c, multibox.c) and their CPU kernels
 * (kernels/cpu/box-nms.c, box-decode.c, multibox-prior.c,
 * multibox-detection.c).
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

/* Longest sizes/ratios list taken (MXNet's has no limit; SSDs use 2-6). */
#define HY_MULTIBOX_MAX_LIST 16

/* _contrib_MultiBoxPrior: for data (N, C, H, W, ...), out (1, H·W·A, 4)
 * corner anchors, A = n_sizes + n_ratios - 1 per position, row-major over
 * (y, x): first every size at ratios[0], then sizes[0] at every other
 * ratio.  Centre ((x + offsets[1])·steps[1], (y + offsets[0])·steps[0]),
 * half width size·H/W·√ratio/2, half height size/√ratio/2; clip: every
 * coordinate into [0, 1].  Steps <= 0 (either one) are 1/H and 1/W. */
typedef struct hy_multibox_prior_params {
  hy_op_id op;
  int n_sizes;
  int n_ratios;
  float sizes[HY_MULTIBOX_MAX_LIST];
  float ratios[HY_MULTIBOX_MAX_LIST];
  float steps[2];               /* y, x */
  float offsets[2];             /* y, x, in [0, 1] */
  bool clip;
} hy_multibox_prior_params;

/* _contrib_MultiBoxDetection: cls_prob (N, C, A) with class 0 the
 * background, loc_pred (N, A·4) of SSD's centre offsets, anchor (1, A, 4)
 * corners; out (N, A, 6) rows [class id, score, xmin, ymin, xmax, ymax].
 * See kernels/cpu/multibox-detection.c for the order of the rows. */
typedef struct hy_multibox_detection_params {
  hy_op_id op;
  bool clip;                    /* decoded corners into [0, 1] */
  float threshold;              /* a best score below it: background */
  int background_id;            /* read, unused: MXNet's kernel ignores it */
  float nms_threshold;          /* outside (0, 1]: no sorting, no NMS */
  bool force_suppress;          /* suppress across classes */
  float variances[4];
  int nms_topk;                 /* > 0: only the best nms_topk take part */
} hy_multibox_detection_params;

#endif /* HY_PARAMS_DETECTION_H */
