/*
 * im2col-panel.h — a 2-D convolution's column matrix (im2col: one row per
 * (channel, kernel tap), one column per output position) never stored
 * whole: the packed GEMM (hy_packed_gemm_panels) asks for it a panel at a
 * time — K-block × 48 output positions, or × 8 for its narrow tiles —
 * and gets it built from the NCHW
 * input into a per-thread buffer that stays in L1 while every row tile of
 * the weights passes over it.
 *
 * Lowering a whole block first wrote megabytes that the GEMM then read
 * back from beyond L2: on ResNet's 56×56 maps the 3×3 layers ran at ~215
 * GFLOP/s in the network against 267 for their GEMM alone.  Here each
 * 16-lane vector of a panel row is one to three masked loads straight
 * from the input rows it spans (the masks are the padding and the row
 * ends, worked out once per panel for every tap), or at column stride 2
 * two loads and a permute per row.  The values are the im2col matrix's,
 * so the products' sums are too, bit for bit.
 */
#ifndef HY_CPU_IM2COL_PANEL_H
#define HY_CPU_IM2COL_PANEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One convolution's input, as the panels read it. */
typedef struct hy_im2col_panel {
  const float *x;               /* the group's first input channel */
  int64_t in_h, in_w, out_w;
  int64_t first_pos;            /* output position (oh·out_w + ow) of B's
                                 * column 0 */
  int64_t k_h, k_w, stride_h, stride_w, dilate_h, dilate_w, pad_h, pad_w;
  /* Thread t's buffer: scratch + t · scratch_stride bytes, 64-byte
   * aligned, hy_im2col_panel_scratch_bytes long. */
  char *scratch;
  size_t scratch_stride;
} hy_im2col_panel;

/* Whether panels up to panel_cols wide (48 for the packed kernel's wide
 * tiles, 8 for its narrow ones) can be built here (AVX-512F, and the
 * packed GEMM on) for this column stride (1 or 2) and output row width (a
 * 16-lane vector spans at most three output rows: rows of at least 8, or
 * of 4 for 8-wide panels), with the input plane's offsets in 31 bits.
 * HYBRIDINFER_IMPLICIT_IM2COL=0 says no (for comparisons). */
bool hy_im2col_panel_supported (int64_t stride_w, int64_t out_w,
    int64_t in_plane, int64_t panel_cols);

/* Bytes of scratch one thread needs for a k_h × k_w kernel. */
size_t hy_im2col_panel_scratch_bytes (int64_t k_h, int64_t k_w);

/* The hy_packed_b_panel_fn: arg is a hy_im2col_panel. */
const float *hy_im2col_panel_get (void *arg, int thread, int64_t k0,
    int64_t kc, int64_t col, int64_t width, int64_t *ldb);

#endif /* HY_CPU_IM2COL_PANEL_H */
