/*
 * sgemm-packed.h — a single-precision GEMM whose A (a convolution's
 * weights, constant for a plan's life) is packed once, at set-up, into
 * the panels its AVX-512 microkernel streams; B (im2col columns, or a
 * pointwise convolution's input planes as they lie) and C (the output
 * planes) stay plain row-major matrices, so nothing is repacked per call.
 *
 * OpenBLAS has no pre-packed GEMM: it copies A into its own panels on
 * every call (a tenth of a ResNet's time in the profile), and its
 * blocking is tuned for large square products, not for a convolution's
 * thin ones (N = 49 output positions on a 7×7 map).
 *
 * Built for any x86-64 (the AVX-512 code has its own target attribute)
 * and for other machines (where hy_packed_gemm_supported is false);
 * callers fall back to OpenBLAS when it is.
 */
#ifndef HY_CPU_SGEMM_PACKED_H
#define HY_CPU_SGEMM_PACKED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/params/nn.h"

/* Whether this CPU runs the packed kernel (AVX-512F), and this process
 * wants it (HYBRIDINFER_PACKED_GEMM=0 turns it off, for comparisons).
 * Read once. */
bool hy_packed_gemm_supported (void);

/* How A is packed, and so which microkernel runs:
 *  - WIDE: 8-row panels; a tile is 8 rows × 48 columns of C, its vectors
 *    along C's rows (B's values loaded, A's broadcast).  For products
 *    with many columns.
 *  - NARROW: 16-row panels; a tile is 48 rows × up to 8 columns, its
 *    vectors down C's columns (A's values loaded, B's broadcast) and
 *    transposed into C at the end.  For a few columns (49 on a 7×7 map:
 *    the wide tiles would compute 64).
 * Either way the sums run over k in order. */
typedef enum hy_packed_layout {
  HY_PACKED_WIDE,
  HY_PACKED_NARROW,
} hy_packed_layout;

/* Row blocks handed to hy_packed_gemm start at multiples of this (whole
 * panels of either layout). */
#define HY_PACKED_ROW_ALIGN 16

/* Floats the packed form of an (m, k) matrix takes. */
size_t hy_packed_a_floats (hy_packed_layout layout, int64_t m, int64_t k);

/* Packs the (m, k) matrix a (rows lda floats apart) into dst
 * (hy_packed_a_floats floats, 64-byte aligned). */
void hy_packed_a_pack (hy_packed_layout layout, float *dst, int64_t m,
    int64_t k, const float *a, int64_t lda);

/* Runs on each block of C once every k of it is summed, while it is still
 * in cache (a fused epilogue): rows [row0, row0 + rows) and columns
 * [col0, col0 + cols) of the whole C. */
typedef void (*hy_packed_then_fn) (void *arg, int64_t row0, int64_t rows,
    int64_t col0, int64_t cols);

/* A convolution's fused epilogue (epilogue.h: y = act (bn (y + bias) +
 * res), one output channel per row of C), which the wide tiles apply in
 * registers before their last store instead of `then` reading each block
 * back: on MobileNetV2, whose expansions sum over 16 to 160 channels,
 * that pass was 7 % of the forward (docs/PERFORMANCE.md, "The epilogue
 * in registers").  The same arithmetic in the same order: the same
 * results bit for bit.  Operands of row r of the whole C: bias[r], BN's
 * mean, scale and shift bn[r], bn[r + bn_stride], bn[r + 2·bn_stride];
 * res laid out as the whole C (ldc).  Each may be NULL. */
typedef struct hy_packed_epilogue {
  hy_fused_act act;
  float alpha, beta;
  const float *bias;
  const float *bn;
  int64_t bn_stride;
  const float *res;
} hy_packed_epilogue;

/* Whether the tiles can apply activation `act` themselves (the rest run
 * through `then`). */
bool hy_packed_epilogue_fits (hy_fused_act act);

/* C = A[row0 : row0 + rows] · B (+ C when accumulate), with A packed from
 * an (m, k) matrix, B (k, cols) rows ldb floats apart, C (rows, cols)
 * rows ldc floats apart (c points at row row0's first column).  row0 is
 * a multiple of HY_PACKED_ROW_ALIGN; layout is the one A was packed in.  Each output's sum runs over k in order,
 * whatever the block: results do not depend on how a caller splits C.
 * `then` (may be NULL) gets C's blocks as they are finished, in C's own
 * coordinates offset by (row0, col0).  `epi` (may be NULL; its act one
 * that hy_packed_epilogue_fits) is the same epilogue for the wide
 * layout's tiles to apply themselves: where they do, `then` is not
 * called. */
void hy_packed_gemm (hy_packed_layout layout, const float *packed, int64_t m,
    int64_t k, int64_t row0, int64_t rows, const float *b, int64_t ldb,
    int64_t cols, float *c, int64_t ldc, bool accumulate, int64_t col0,
    hy_packed_then_fn then, void *then_arg, const hy_packed_epilogue *epi);

/* B given a panel at a time instead of as a stored matrix (a convolution's
 * column matrix built from its input as the product asks for it: an
 * implicit im2col, im2col-panel.h): rows [k0, k0 + kc) × columns [col,
 * col + width) of B, rows *ldb floats apart, valid until the next call on
 * the same thread.  The wide layout asks for up to 128 rows × 48 columns,
 * the narrow one up to 256 × 8; a panel of width w (rounded up to 16) ×
 * kc fits in HY_PACKED_PANEL_FLOATS.  `thread` is the caller's thread in
 * its parallel loop (0 outside one), for per-thread scratch. */
typedef const float *(*hy_packed_b_panel_fn) (void *arg, int thread,
    int64_t k0, int64_t kc, int64_t col, int64_t width, int64_t *ldb);

/* hy_packed_gemm with B's panels from `panel` (columns col0 … col0 +
 * cols of the whole B, as `then` sees them): the same tiles over the same
 * values, so the same sums bit for bit. */
void hy_packed_gemm_panels (hy_packed_layout layout, const float *packed,
    int64_t m, int64_t k, int64_t row0, int64_t rows,
    hy_packed_b_panel_fn panel, void *panel_arg, int thread, int64_t cols,
    float *c, int64_t ldc, bool accumulate, int64_t col0,
    hy_packed_then_fn then, void *then_arg, const hy_packed_epilogue *epi);

/* The most columns a panel is asked for, and the floats a panel buffer
 * needs (128 × 48 wide, 256 × 16 narrow). */
#define HY_PACKED_PANEL_COLS 48
#define HY_PACKED_PANEL_FLOATS (128 * 48)

#endif /* HY_CPU_SGEMM_PACKED_H */
