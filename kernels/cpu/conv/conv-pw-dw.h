/*
 * conv-pw-dw.h — a pointwise convolution and the depthwise one that reads
 * its output, run as one kernel: MobileNet's expansion (1×1, C → tC
 * channels, BatchNorm, ReLU6 or hard swish) and the 3×3 or 5×5 depthwise
 * layer after it.
 *
 * Run one after the other, the expansion writes tC planes (4.8 MB for
 * MobileNetV2's 96 × 112 × 112) that the depthwise layer reads back: both
 * layers wait on memory, at a fraction of the FMA ceiling.  Here each
 * thread takes a run of the depthwise layer's output rows of one image
 * and goes down it a band at a time: the expansion's rows that the band
 * reads, all tC channels, go into a buffer of the thread's that stays in
 * its cache (sgemm-packed.h's product on those columns only), and the
 * depthwise kernel (depthwise-avx512.h) reads them from there.  The rows
 * two bands share (K − stride of them) are kept, not computed again; only
 * where a thread's run starts are they computed twice.
 *
 * The same bands run a depthwise layer and the pointwise one after it
 * (MobileNetV1's pairs, MobileNetV3's first block): the depthwise layer
 * then reads the call's input rows where they lie.
 *
 * Each output is the sum the two calls compute, bit for bit: the product
 * sums every output over the input channels in order whatever columns it
 * is given, and the depthwise kernel sums each output alone.
 */
#ifndef HY_CPU_CONV_PW_DW_H
#define HY_CPU_CONV_PW_DW_H

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/backend-impl.h"
#include "kernels/params/nn.h"

typedef struct hy_conv_pw_dw hy_conv_pw_dw;

/* The two calls as one, or NULL where they cannot run so: `first` a
 * Convolution the packed kernel runs as a pointwise product (1×1, stride
 * 1, no padding, one group, no residual, constant weights, on an AVX-512
 * CPU), `second` a depthwise Convolution the AVX-512 depthwise kernel
 * runs with its epilogue in registers, reading first's output as its
 * data.  Or `first` such a depthwise Convolution and `second` a
 * pointwise one reading its output, as hy_conv_pw_dw_take_projection
 * takes one (a chain without an expansion).  Whether it pays is
 * hy_conv_pw_dw_may_fuse's question, which the planner asks first (only
 * pairs it said yes to are offered).  `in` is the fused call's argument
 * list: first's, then second's less its data; the kernel reads only that
 * and writes second's output.
 * HYBRIDINFER_PW_DW=0 never fuses (for comparisons), =1 fuses wherever
 * it can, whatever the rules say (for tests). */
hy_conv_pw_dw *hy_conv_pw_dw_new (const hy_call *first,
    const hy_call *second);

/* Whether such a pair pays fused, from the calls' params and shapes alone
 * (x first's data, mid its output, y second's output; `next` the
 * convolution that alone reads y as its data, or NULL), before their
 * tensors exist: where first's output is at least HY_PW_DW_MIN_BYTES an
 * image, the size from which its planes no longer stay in a core's cache
 * between the two calls, or where `next` is a projection that the pair
 * would take in as well and that pays (hy_conv_pw_dw_take_projection).
 * A depthwise layer and its projection pay where that projection would.
 * The planner keeps first's inputs live through second for such pairs
 * (the backend's may_fuse): MobileNetV2's arena grew from 5.74 to 6.51
 * MiB with the pairs alone. */
bool hy_conv_pw_dw_may_fuse (const hy_conv_params *first, const hy_shape *x,
    const hy_shape *mid, const hy_conv_params *second, const hy_shape *y,
    const hy_conv_params *next);

void hy_conv_pw_dw_free (hy_conv_pw_dw *conv);

/* The pair's call (`first`, made by hy_conv_pw_dw_new) takes the next
 * call in too: `second`, a pointwise convolution (as `first` of the pair,
 * but a residual allowed) reading the depthwise layer's output, the
 * block's projection.  Each band's depthwise output then goes to a
 * buffer of the thread's instead of memory, and the projection's product
 * reads it from there and writes those columns of its output; the fused
 * call's `in` is first's, then second's less its data.  Returns false,
 * changing nothing, where it cannot; the pair still runs as it was. */
bool hy_conv_pw_dw_take_projection (hy_conv_pw_dw *conv,
    const hy_call *first, const hy_call *second);

/* Whether hy_conv_pw_dw_take_projection may take `proj` after the
 * depthwise layer `dw` of a fusable pair, x its data and mid its output
 * (the planner's question, before the tensors exist): where the band's
 * product has PROJ_MIN_BAND_COLS columns or more (conv-pw-dw.c). */
bool hy_conv_pw_dw_may_take (const hy_conv_params *dw, const hy_shape *x,
    const hy_shape *mid, const hy_conv_params *proj);

/* "pointwise+depthwise", "pointwise+depthwise+pointwise" with a
 * projection, or "depthwise+pointwise", for profiles. */
const char *hy_conv_pw_dw_kernel_name (const hy_conv_pw_dw *conv);

/* Measured pair by pair on MobileNetV2's profile (docs/PERFORMANCE.md,
 * "Pointwise + depthwise"; Xeon): fused, the expansions of 1.6 and 4.8 MB
 * an image ran 1.07-1.17× (one thread) and 1.32-1.33× (two) faster than
 * apart, those of 1.8 MB 0.96-0.97× and 0.98-1.11×, every smaller one
 * 0.84-1.02× (one thread). */
#define HY_PW_DW_MIN_BYTES (3 << 19)

/* The kernel (hy_cpu_kernel_fn) for the fused call: params is the
 * hy_conv_pw_dw, `in` as hy_conv_pw_dw_new says, out second's output. */
void hy_cpu_convolution_pw_dw (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

#endif /* HY_CPU_CONV_PW_DW_H */
