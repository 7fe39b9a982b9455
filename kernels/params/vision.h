/*
 * vision.h — params of the resampling ops of GluonCV's segmentation and
 * two-stage detection models (ops.def: bilinear_resize,
 * adaptive_avg_pool, roi_align), shared by their definitions
 * (core/ops/vision.c) and their CPU kernels (kernels/cpu/
 * bilinear-resize.c, adaptive-pool.c, roi-align.c).
 * Both act on NCHW data.
 */
#ifndef HY_PARAMS_VISION_H
#define HY_PARAMS_VISION_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/hy-ops.h"

/* _contrib_BilinearResize2D's `mode`, in MXNet's order. */
typedef enum hy_resize_mode {
  HY_RESIZE_SIZE,               /* height/width, or input · scale */
  HY_RESIZE_ODD_SCALE,
  HY_RESIZE_LIKE,               /* the height and width of input 1 */
  HY_RESIZE_TO_EVEN_DOWN,
  HY_RESIZE_TO_EVEN_UP,
  HY_RESIZE_TO_ODD_DOWN,
  HY_RESIZE_TO_ODD_UP,
} hy_resize_mode;

/* _contrib_BilinearResize2D: the output size comes from the mode (shape
 * inference); the kernel reads only align_corners.  With align_corners,
 * output pixel i samples input (in - 1) / (out - 1) · i; without,
 * in / out · (i + 0.5) - 0.5, clamped at 0.  Equal sizes copy. */
typedef struct hy_bilinear_resize_params {
  hy_op_id op;
  hy_resize_mode mode;
  int height, width;
  bool has_scale_height, has_scale_width;
  float scale_height, scale_width;
  bool align_corners;
} hy_bilinear_resize_params;

/* _contrib_AdaptiveAvgPooling2D: output (oh, ow); output cell i averages
 * input rows [floor(i·H / oh), ceil((i + 1)·H / oh)), and likewise for
 * columns, as MXNet computes them (in float). */
typedef struct hy_adaptive_avg_pool_params {
  hy_op_id op;
  int64_t out_h, out_w;
} hy_adaptive_avg_pool_params;

/* _contrib_ROIAlign: data (N, C, H, W), rois (R, 5) rows (batch index,
 * x1, y1, x2, y2) in input-image coordinates; output (R, C', ph, pw),
 * C' = C, or C / (ph·pw) when position_sensitive (output channel c of
 * bin (i, j) reads input channel (c·ph + i)·pw + j).  Each bin averages
 * a grid of bilinear samples: sample_ratio per axis, or (<= 0) the
 * ceiling of the bin's size.  aligned shifts coordinates by half a
 * pixel; without it, ROIs are at least 1 pixel wide and high.  A ROI
 * whose batch index is negative or past N gives zeros. */
typedef struct hy_roi_align_params {
  hy_op_id op;
  int64_t pooled_h, pooled_w;
  float spatial_scale;
  int sample_ratio;
  bool position_sensitive;
  bool aligned;
} hy_roi_align_params;

#endif /* HY_PARAMS_VISION_H */
